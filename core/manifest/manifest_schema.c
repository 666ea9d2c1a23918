/* SPDX-License-Identifier: MIT */
/* A manifest's schema: its "inputs" and "outputs" become tsr_fields (the
 * same form as a worker's schema JSON), which core then checks
 * like any plugin's. Then: where each dimension comes from at a call. */
#include <stdlib.h>
#include <string.h>

#include "manifest_internal.h"
#include "transport/payload/schema_json.h"

static const char *const field_keys[] = {"name", "dtype", "shape", "differentiable", "doc", NULL};

static int parse_field(mf_parse *p, json_t *obj, const char *entry, tsr_field *f,
                       tsr_dim **next_dim) {
    char at[256];
    if (!json_is_object(obj))
        return mf_fail(p, TSR_E_DESCRIPTOR, entry,
                       "expected an object with name, dtype and shape");
    int rc = mf_check_keys(p, obj, entry, field_keys);
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
        else if (json_is_string(dim))
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
    if (n_in > TSR_MAX_FIELDS || n_out > TSR_MAX_FIELDS)
        return mf_fail(p, TSR_E_DESCRIPTOR, n_in > TSR_MAX_FIELDS ? "inputs" : "outputs",
                       "more than %d fields", TSR_MAX_FIELDS);
    m->fields = calloc(n_in + n_out + 1, sizeof *m->fields);
    m->dims = calloc(schema_count_dims(ins) + schema_count_dims(outs) + 1, sizeof *m->dims);
    if (!m->fields || !m->dims) return mf_fail(p, TSR_E_NOMEM, "", "out of memory");
    tsr_dim *next_dim = m->dims;
    for (size_t i = 0; i < n_in + n_out; i++) {
        int input = i < n_in;
        size_t k = input ? i : i - n_in;
        char at[64];
        mf_entry_at(at, sizeof at, input ? "inputs" : "outputs", k);
        int rc = parse_field(p, json_array_get(input ? ins : outs, k), at, &m->fields[i],
                             &next_dim);
        if (rc) return rc;
    }
    m->desc.inputs = m->fields;
    m->desc.n_inputs = (int32_t)n_in;
    m->desc.outputs = m->fields + n_in;
    m->desc.n_outputs = (int32_t)n_out;
    return 0;
}

/* A manifest has no way to size an output from values, so every output
 * dimension must be fixed or carried by an input. */
int mf_schema_sources(mf_parse *p) {
    tsr_component *c = p->c;
    struct manifest *m = p->m;
    m->sym_src = calloc(backend_schema(c).n_sym > 0 ? (size_t)backend_schema(c).n_sym : 1, sizeof *m->sym_src);
    m->out_dims = calloc((size_t)backend_schema(c).n_out * TSR_MAX_FIELD_RANK, sizeof *m->out_dims);
    if (!m->sym_src || !m->out_dims) return mf_fail(p, TSR_E_NOMEM, "", "out of memory");
    for (int32_t s = 0; s < backend_schema(c).n_sym; s++) m->sym_src[s] = (mf_dim_src){-1, 0, 0};
    for (int32_t i = backend_schema(c).n_in - 1; i >= 0; i--)   /* the first input carrying a symbol wins */
        for (int32_t d = backend_schema(c).in[i].field.rank - 1; d >= 0; d--)
            if (backend_schema(c).in[i].kind[d] == DIM_SYMBOL) m->sym_src[backend_schema(c).in[i].sym[d]] = (mf_dim_src){i, d, 0};
    for (int32_t o = 0; o < backend_schema(c).n_out; o++) {
        const field_info *f = &backend_schema(c).out[o];
        for (int32_t d = 0; d < f->field.rank; d++) {
            mf_dim_src *src = &m->out_dims[o * TSR_MAX_FIELD_RANK + d];
            char at[64];
            snprintf(at, sizeof at, "outputs[%d].shape[%d]", (int)o, (int)d);
            if (f->kind[d] == DIM_FIXED) {
                *src = (mf_dim_src){-1, d, f->dims[d].size};
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
