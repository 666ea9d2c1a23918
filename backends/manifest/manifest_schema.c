/* SPDX-License-Identifier: MIT */
/* A manifest's schema: its "inputs" and "outputs" become tsr_field structs (the
 * same form as a worker's schema JSON), which core then checks
 * like any plugin's. Then: where each dimension comes from at a call.
 *
 * An output's dimension may be a size expression ("n+1", "min(m, n)",
 * "nmax - nmin + 1"): core sees a dimension of any size, and the manifest
 * sizes the result at each call (manifest_sizes.c). An input declared
 * "size": true (a rank-0 integer) lends its value to size expressions. */
#include <stdlib.h>
#include <string.h>

#include "manifest_internal.h"
#include "core/schema_json.h"

static const char *const field_keys[] = {"name", "dtype", "shape", "differentiable", "doc", NULL};
static const char *const input_keys[] = {"name", "dtype", "shape", "differentiable", "size", "doc",
                                         NULL};

static int is_identifier(const char *s) {
    if (!*s || (*s >= '0' && *s <= '9')) return 0;
    for (; *s; s++)
        if (!(*s == '_' || (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') ||
              (*s >= 'A' && *s <= 'Z')))
            return 0;
    return 1;
}

/* Whether a symbol name is carried by one of the inputs read so far. */
static int input_symbol(const struct manifest *m, size_t n_in, const char *name) {
    for (size_t i = 0; i < n_in; i++)
        for (int32_t d = 0; d < m->fields[i].rank; d++)
            if (m->fields[i].dims[d].symbol && strcmp(m->fields[i].dims[d].symbol, name) == 0)
                return 1;
    return 0;
}

static int is_int_dtype(tsr_dtype d) {
    return d == TSR_INT8 || d == TSR_INT16 || d == TSR_INT32 || d == TSR_INT64 ||
           d == TSR_UINT8 || d == TSR_UINT16 || d == TSR_UINT32 || d == TSR_UINT64;
}

/* "size": true on an input: its value is a size (GSL's nmin, nmax). */
static int parse_size_input(mf_parse *p, json_t *obj, const char *entry, int32_t index) {
    struct manifest *m = p->m;
    const tsr_field *f = &m->fields[index];
    int size = 0;
    char at[256];
    int rc = mf_get_bool(p, obj, "size", entry, &size);
    if (rc || !size) return rc;
    mf_entry(at, sizeof at, entry, "size");
    if (f->rank != 0 || !is_int_dtype(f->dtype) || (f->flags & TSR_FIELD_DIFFERENTIABLE))
        return mf_fail(p, TSR_E_DESCRIPTOR, at,
                       "an input whose value is a size is a rank-0 integer that is not "
                       "differentiable; '%s' is %s of rank %d",
                       f->name, tsr_dtype_name(f->dtype), (int)f->rank);
    if (m->n_value_syms == MF_MAX_VALUE_SYMS)
        return mf_fail(p, TSR_E_DESCRIPTOR, at, "more than %d inputs are sizes",
                       MF_MAX_VALUE_SYMS);
    m->value_syms[m->n_value_syms++] = index;
    return 0;
}

/* Field i of m->fields (inputs first: n_in of them). */
static int parse_field(mf_parse *p, json_t *obj, const char *entry, size_t i, size_t n_in,
                       tsr_dim **next_dim) {
    char at[256];
    tsr_field *f = &p->m->fields[i];
    if (!json_is_object(obj))
        return mf_fail(p, TSR_E_DESCRIPTOR, entry,
                       "expected an object with name, dtype and shape");
    int rc = mf_check_keys(p, obj, entry, i < n_in ? input_keys : field_keys);
    const char *dtype = NULL;
    if (!rc) rc = mf_get_string(p, obj, "name", entry, 1, &f->name);
    if (!rc) rc = mf_get_string(p, obj, "dtype", entry, 1, &dtype);
    if (!rc) rc = mf_get_string(p, obj, "doc", entry, 0, &f->doc);
    int differentiable = 0;
    if (!rc) rc = mf_get_bool(p, obj, "differentiable", entry, &differentiable);
    if (rc) return rc;
    int code = tsr_dtype_from_name(dtype);
    f->dtype = code < 0 ? TSR_DTYPE_INVALID : (tsr_dtype)code;
    if (code < 0)
        return mf_fail(p, TSR_E_DESCRIPTOR, mf_entry(at, sizeof at, entry, "dtype"),
                       "unknown dtype '%s'", dtype);
    f->flags = differentiable ? TSR_FIELD_DIFFERENTIABLE : 0;
    json_t *shape = json_object_get(obj, "shape");
    mf_entry(at, sizeof at, entry, "shape");
    if (!json_is_array(shape))
        return mf_fail(p, TSR_E_DESCRIPTOR, at,
                       "expected a list of dims (integers, symbol names or null; [] for a "
                       "scalar)");
    if (json_array_size(shape) > TSR_MAX_FIELD_RANK)
        return mf_fail(p, TSR_E_DESCRIPTOR, at, "rank %zu is above the limit of %d",
                       json_array_size(shape), TSR_MAX_FIELD_RANK);
    f->rank = (int32_t)json_array_size(shape);
    f->dims = *next_dim;
    size_t d;
    json_t *dim;
    json_array_foreach(shape, d, dim) {
        tsr_dim *td = (*next_dim)++;
        char dat[288];
        if (json_is_integer(dim) && json_integer_value(dim) >= 0)
            *td = (tsr_dim){NULL, json_integer_value(dim)};
        else if (json_is_string(dim) && i >= n_in &&
                 !(is_identifier(json_string_value(dim)) &&
                   input_symbol(p->m, n_in, json_string_value(dim)))) {
            /* an expression (or a name no input carries): sized by the manifest */
            *td = (tsr_dim){NULL, TSR_DIM_ANY};
            p->m->out_text[(i - n_in) * TSR_MAX_FIELD_RANK + d] = json_string_value(dim);
        } else if (json_is_string(dim))
            *td = (tsr_dim){json_string_value(dim), TSR_DIM_ANY};
        else if (json_is_null(dim))
            *td = (tsr_dim){NULL, TSR_DIM_ANY};
        else
            return mf_fail(p, TSR_E_DESCRIPTOR, mf_entry_at(dat, sizeof dat, at, d),
                           "expected a size >= 0, a symbol name or null");
    }
    return 0;
}

int mf_schema_parse(mf_parse *p) {
    struct manifest *m = p->m;
    json_t *ins = json_object_get(m->root, "inputs"), *outs = json_object_get(m->root, "outputs");
    if (!json_is_array(ins))
        return mf_fail(p, TSR_E_DESCRIPTOR, "inputs", "%s (expected a list of fields)",
                       ins ? "not a list" : "missing");
    if (!json_is_array(outs))
        return mf_fail(p, TSR_E_DESCRIPTOR, "outputs", "%s (expected a list of fields)",
                       outs ? "not a list" : "missing");
    size_t n_in = json_array_size(ins), n_out = json_array_size(outs);
    if (n_in > SCHEMA_MAX_FIELDS || n_out > SCHEMA_MAX_FIELDS)
        return mf_fail(p, TSR_E_DESCRIPTOR, n_in > SCHEMA_MAX_FIELDS ? "inputs" : "outputs",
                       "more than %d fields", SCHEMA_MAX_FIELDS);
    m->fields = calloc(n_in + n_out + 1, sizeof *m->fields);
    m->dims = calloc(schema_count_dims(ins) + schema_count_dims(outs) + 1, sizeof *m->dims);
    m->out_text = calloc(n_out * TSR_MAX_FIELD_RANK + 1, sizeof *m->out_text);
    if (!m->fields || !m->dims || !m->out_text)
        return mf_fail(p, TSR_E_NOMEM, "", "out of memory");
    tsr_dim *next_dim = m->dims;
    for (size_t i = 0; i < n_in + n_out; i++) {
        int input = i < n_in;
        size_t k = input ? i : i - n_in;
        char at[64];
        mf_entry_at(at, sizeof at, input ? "inputs" : "outputs", k);
        int rc = parse_field(p, json_array_get(input ? ins : outs, k), at, i, n_in, &next_dim);
        if (!rc && input) rc = parse_size_input(p, json_array_get(ins, k), at, (int32_t)i);
        if (rc) return rc;
    }
    m->desc.inputs = m->fields;
    m->desc.n_inputs = (int32_t)n_in;
    m->desc.outputs = m->fields + n_in;
    m->desc.n_outputs = (int32_t)n_out;
    return 0;
}

/* An output dimension given as an expression: compiled now that the
 * schema's symbols are known. A bare name that is neither a symbol an
 * input carries nor a size input is the classic mistake, said so. */
static int output_expr(mf_parse *p, int32_t o, int32_t d, const char *at, mf_dim_src *src) {
    struct manifest *m = p->m;
    const char *text = m->out_text[o * TSR_MAX_FIELD_RANK + d];
    const tsr_field *f = &m->desc.outputs[o];
    if (is_identifier(text)) {
        int value = 0;
        for (int32_t s = 0; s < m->n_value_syms; s++)
            value |= strcmp(m->desc.inputs[m->value_syms[s]].name, text) == 0;
        if (!value)
            return mf_fail(p, TSR_E_DESCRIPTOR, at,
                           "missing dimension: symbol '%s' of output '%s' is carried by no "
                           "input, so the host cannot size '%s' before the call (a size may "
                           "be an expression of the inputs' dimensions, such as \"n+1\", or of "
                           "an input declared \"size\": true)",
                           text, f->name, f->name);
    }
    mf_expr *x = &m->out_exprs[o * TSR_MAX_FIELD_RANK + d];
    int rc = mf_expr_compile(p, text, at, x);
    if (rc) return rc;
    *src = (mf_dim_src){MF_DIM_EXPR, d, 0, x};
    m->sized_outputs = 1;
    return 0;
}

/* Every output dimension is fixed, carried by an input, or an expression
 * of those and of size inputs, so that it is known before the call. */
int mf_schema_sources(mf_parse *p) {
    tsr_component *c = p->c;
    struct manifest *m = p->m;
    m->sym_src = calloc(backend_schema(c).n_sym > 0 ? (size_t)backend_schema(c).n_sym : 1, sizeof *m->sym_src);
    m->out_dims = calloc((size_t)backend_schema(c).n_out * TSR_MAX_FIELD_RANK + 1, sizeof *m->out_dims);
    m->out_exprs = calloc((size_t)backend_schema(c).n_out * TSR_MAX_FIELD_RANK + 1,
                          sizeof *m->out_exprs);
    if (!m->sym_src || !m->out_dims || !m->out_exprs)
        return mf_fail(p, TSR_E_NOMEM, "", "out of memory");
    for (int32_t s = 0; s < m->n_value_syms; s++)
        if (mf_symbol_id(c, m->desc.inputs[m->value_syms[s]].name) >= 0) {
            char at[64];
            snprintf(at, sizeof at, "inputs[%d].size", (int)m->value_syms[s]);
            return mf_fail(p, TSR_E_DESCRIPTOR, at,
                           "'%s' is also a symbolic dimension of the schema: a size expression "
                           "could not say which it means",
                           m->desc.inputs[m->value_syms[s]].name);
        }
    for (int32_t s = 0; s < backend_schema(c).n_sym; s++) m->sym_src[s] = (mf_dim_src){-1, 0, 0, NULL};
    for (int32_t i = backend_schema(c).n_in - 1; i >= 0; i--)   /* the first input carrying a symbol wins */
        for (int32_t d = backend_schema(c).in[i].field.rank - 1; d >= 0; d--)
            if (backend_schema(c).in[i].kind[d] == DIM_SYMBOL) m->sym_src[backend_schema(c).in[i].sym[d]] = (mf_dim_src){i, d, 0, NULL};
    for (int32_t o = 0; o < backend_schema(c).n_out; o++) {
        const field_info *f = &backend_schema(c).out[o];
        for (int32_t d = 0; d < f->field.rank; d++) {
            mf_dim_src *src = &m->out_dims[o * TSR_MAX_FIELD_RANK + d];
            char at[64];
            snprintf(at, sizeof at, "outputs[%d].shape[%d]", (int)o, (int)d);
            if (f->kind[d] == DIM_FIXED) {
                *src = (mf_dim_src){-1, d, f->dims[d].size, NULL};
            } else if (m->out_text[o * TSR_MAX_FIELD_RANK + d]) {
                int rc = output_expr(p, o, d, at, src);
                if (rc) return rc;
            } else if (f->kind[d] == DIM_ANY) {
                return mf_fail(p, TSR_E_DESCRIPTOR, at,
                               "output '%s' has a dimension of any size (null); a manifest's "
                               "outputs must have fixed dims or symbols that an input carries",
                               f->field.name);
            } else if (m->sym_src[f->sym[d]].field < 0) {
                return mf_fail(p, TSR_E_DESCRIPTOR, at,
                               "missing dimension: symbol '%s' of output '%s' is carried by no "
                               "input, so the host cannot size '%s' before the call",
                               f->dims[d].symbol, f->field.name, f->field.name);
            } else {
                *src = m->sym_src[f->sym[d]];
            }
        }
    }
    return 0;
}
