/* SPDX-License-Identifier: MIT */
/* One argument of a routine in a manifest, e.g. {"in": "u"}, {"dim": "a",
 * "axis": 1}, {"workspace": "n*n"}, {"char": "T"}: its kind, the field it
 * refers to, and its modifiers, checked against the schema. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_internal.h"

const char *const mf_kind_names[MF_KIND_COUNT] = {
    [MF_IN] = "in",           [MF_OUT] = "out",         [MF_TANGENT] = "tangent",
    [MF_COTANGENT] = "cotangent", [MF_RESULT] = "result", [MF_JACOBIAN] = "jacobian",
    [MF_DIM] = "dim",         [MF_INT] = "int",         [MF_CONST] = "const",
    [MF_WORKSPACE] = "workspace", [MF_CHAR] = "char",   [MF_INFO] = "info",
    [MF_LENGTH] = "length",
};

/* Modifiers, and which kinds take them. */
enum { M_TYPE, M_PASS, M_AXIS, M_COPY, M_READONLY, M_ORDER, M_INIT, M_ZERO, M_HIDDEN, M_NAME,
       M_QUERY, M_DOC, M_COUNT };
static const char *const modifier_names[M_COUNT] = {
    "type", "pass", "axis", "copy", "readonly", "order", "init", "zero", "hidden_length", "name",
    "query", "doc"};
#define BIT(m) (1u << (m))
static const unsigned kind_modifiers[MF_KIND_COUNT] = {
    [MF_IN] = BIT(M_TYPE) | BIT(M_PASS) | BIT(M_COPY) | BIT(M_READONLY) | BIT(M_ORDER),
    [MF_OUT] = BIT(M_TYPE) | BIT(M_ORDER) | BIT(M_INIT) | BIT(M_ZERO),
    [MF_TANGENT] = BIT(M_TYPE) | BIT(M_PASS) | BIT(M_COPY) | BIT(M_READONLY) | BIT(M_ORDER),
    [MF_COTANGENT] = BIT(M_TYPE) | BIT(M_PASS) | BIT(M_COPY) | BIT(M_READONLY) | BIT(M_ORDER),
    [MF_RESULT] = BIT(M_TYPE) | BIT(M_ORDER) | BIT(M_ZERO) | BIT(M_INIT),
    [MF_JACOBIAN] = BIT(M_TYPE) | BIT(M_ORDER) | BIT(M_ZERO),
    [MF_DIM] = BIT(M_TYPE) | BIT(M_PASS) | BIT(M_AXIS),
    [MF_INT] = BIT(M_TYPE) | BIT(M_PASS),
    [MF_CONST] = BIT(M_TYPE) | BIT(M_PASS),
    [MF_WORKSPACE] = BIT(M_TYPE) | BIT(M_ZERO) | BIT(M_NAME) | BIT(M_QUERY),
    [MF_CHAR] = BIT(M_HIDDEN),
    [MF_INFO] = BIT(M_TYPE),
    [MF_LENGTH] = BIT(M_TYPE) | BIT(M_PASS),
};

/* Which endpoints take which kinds. */
static int kind_allowed(mf_kind k, tsr_endpoint ep) {
    switch (k) {
    case MF_TANGENT: return ep == TSR_EP_JVP || ep == TSR_EP_HVP;
    case MF_COTANGENT: return ep == TSR_EP_VJP || ep == TSR_EP_HVP;
    case MF_RESULT: return ep == TSR_EP_JVP || ep == TSR_EP_VJP || ep == TSR_EP_HVP;
    case MF_JACOBIAN: return ep == TSR_EP_JACOBIAN;
    default: return 1;
    }
}

typedef struct arg_parse {
    mf_parse *p;
    const mf_endpoint *e;
    json_t *obj;
    json_t *kind_value;
    const char *entry;
    mf_arg *a;
} arg_parse;

static const char *at_key(const arg_parse *ap, const char *key, char *buf, size_t n) {
    return mf_entry(buf, n, ap->entry, key);
}

__attribute__((format(printf, 3, 4))) static int fail_key(arg_parse *ap, const char *key,
                                                           const char *fmt, ...) {
    char at[288], cause[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(cause, sizeof cause, fmt, args);
    va_end(args);
    return mf_fail(ap->p, TSR_E_DESCRIPTOR, at_key(ap, key, at, sizeof at), "%s", cause);
}

static void field_list(const field_info *fs, int32_t n, char *buf, size_t cap) {
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < n; i++) {
        int w = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", fs[i].field.name);
        if (w < 0 || (size_t)w >= cap - used) break;
        used += (size_t)w;
    }
    if (!used) snprintf(buf, cap, "none");
}

/* The field a kind refers to: an input or an output, by name. */
static int lookup_field(arg_parse *ap, const char *name, int want_input, int need_diff,
                        int32_t *index) {
    const tsr_component *c = ap->p->c;
    const char *kind = mf_kind_names[ap->a->kind];
    const field_info *fs = want_input ? backend_schema(c).in : backend_schema(c).out;
    int32_t n = want_input ? backend_schema(c).n_in : backend_schema(c).n_out;
    *index = find_field(fs, n, name);
    if (*index < 0) {
        char list[512];
        field_list(fs, n, list, sizeof list);
        int other = want_input ? find_field(backend_schema(c).out, backend_schema(c).n_out, name) >= 0
                               : find_field(backend_schema(c).in, backend_schema(c).n_in, name) >= 0;
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry,
                       "'%s' names unknown %s '%s'%s (%ss: %s)", kind,
                       want_input ? "input" : "output", name,
                       other ? (want_input ? ", which is an output" : ", which is an input") : "",
                       want_input ? "input" : "output", list);
    }
    if (need_diff && !(fs[*index].field.flags & TSR_FIELD_DIFFERENTIABLE))
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry,
                       "'%s' names %s '%s', which the schema does not mark differentiable",
                       kind, want_input ? "input" : "output", name);
    return 0;
}

static int parse_type(arg_parse *ap, tsr_dtype *out) {
    json_t *v = json_object_get(ap->obj, "type");
    if (!v) return 0;
    const char *name = json_string_value(v);
    int d = tsr_dtype_from_name(name);
    if (d < 0) return fail_key(ap, "type", "unknown type '%s'", name ? name : "(not a string)");
    *out = (tsr_dtype)d;
    return 0;
}

static int is_int_dtype(tsr_dtype d) { return d == TSR_INT32 || d == TSR_INT64; }

/* Scalars that libffi passes by value here. */
static int passable_by_value(tsr_dtype d) {
    return d != TSR_FLOAT16 && d != TSR_COMPLEX64 && d != TSR_COMPLEX128 &&
           d != TSR_DTYPE_INVALID;
}

/* "pass": "value" | "reference"; the convention decides when absent. */
static int parse_pass(arg_parse *ap, int scalar) {
    mf_arg *a = ap->a;
    json_t *v = json_object_get(ap->obj, "pass");
    const char *pass = json_string_value(v);
    if (v && (!pass || (strcmp(pass, "value") != 0 && strcmp(pass, "reference") != 0)))
        return fail_key(ap, "pass", "expected \"value\" or \"reference\"");
    a->pass_given = v != NULL;
    if (!scalar) {
        if (pass && strcmp(pass, "value") == 0)
            return fail_key(ap, "pass",
                            "an array is passed by reference (its address), never by value");
        a->by_value = 0;
        return 0;
    }
    a->by_value = pass ? strcmp(pass, "value") == 0 : !ap->p->m->fortran;
    if (a->by_value && !passable_by_value(a->dtype))
        return fail_key(ap, "pass", "a %s scalar can only be passed by reference",
                        tsr_dtype_name(a->dtype));
    return 0;
}

/* The caller's arrays are protected by default: an argument that reads one
 * (in, tangent, cotangent) gets a private copy unless the manifest states
 * that the routine does not write it ("readonly": true). A routine that
 * overwrites an argument it was trusted with would otherwise change the
 * caller's array in-process, and silently (a worker hides it). */
static int parse_protection(arg_parse *ap) {
    mf_arg *a = ap->a;
    int copy = -1, readonly = -1;
    int rc = mf_get_bool(ap->p, ap->obj, "copy", ap->entry, &copy);
    if (!rc) rc = mf_get_bool(ap->p, ap->obj, "readonly", ap->entry, &readonly);
    if (rc) return rc;
    if (copy == 0)
        return fail_key(ap, "copy",
                        "inputs are copied unless the routine is declared not to write them: "
                        "say \"readonly\": true instead of \"copy\": false");
    if (copy == 1 && readonly == 1)
        return fail_key(ap, "readonly",
                        "\"copy\": true and \"readonly\": true contradict each other");
    a->copy = readonly != 1 && !a->by_value;   /* a value passed by value is a copy already */
    return 0;
}

static int parse_flags(arg_parse *ap) {
    mf_arg *a = ap->a;
    int zero = 0;
    int rc = mf_get_bool(ap->p, ap->obj, "zero", ap->entry, &zero);
    if (rc) return rc;
    a->zero = (uint8_t)zero;
    json_t *order = json_object_get(ap->obj, "order");
    if (order) {
        const char *o = json_string_value(order);
        if (!o || (strcmp(o, "C") != 0 && strcmp(o, "F") != 0))
            return fail_key(ap, "order", "expected \"C\" (row-major) or \"F\" (column-major)");
        a->order_f = strcmp(o, "F") == 0;
    }
    return 0;
}

/* in, out, tangent, cotangent, result: a field's array. */
static int parse_field_arg(arg_parse *ap) {
    mf_arg *a = ap->a;
    tsr_component *c = ap->p->c;
    const char *name = json_string_value(ap->kind_value);
    if (!name)
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry, "'%s' expects a field name",
                       mf_kind_names[a->kind]);
    /* vjp's and hvp's results are shaped like their inputs */
    int input = a->kind == MF_IN || a->kind == MF_TANGENT ||
                (a->kind == MF_RESULT && ap->e->ep != TSR_EP_JVP);
    int need_diff = a->kind != MF_IN && a->kind != MF_OUT;
    int rc = lookup_field(ap, name, input, need_diff, &a->field);
    if (rc) return rc;
    const field_info *f = input ? &backend_schema(c).in[a->field] : &backend_schema(c).out[a->field];
    a->dtype = f->field.dtype;
    tsr_dtype declared = a->dtype;
    if ((rc = parse_type(ap, &declared))) return rc;
    if (declared != a->dtype) {
        char at[288];
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, at_key(ap, "type", at, sizeof at),
                       "type %s disagrees with the schema: %s '%s' is %s",
                       tsr_dtype_name(declared), input ? "input" : "output", name,
                       tsr_dtype_name(a->dtype));
    }
    int by_value_possible = a->kind == MF_IN || a->kind == MF_TANGENT || a->kind == MF_COTANGENT;
    if ((rc = parse_pass(ap, by_value_possible && f->field.rank == 0))) return rc;
    if ((rc = parse_flags(ap))) return rc;
    if (by_value_possible && (rc = parse_protection(ap))) return rc;
    a->field2 = -1;
    json_t *init = json_object_get(ap->obj, "init");
    if (init) {
        /* out: an input copied in; result: a seed copied in (vjp: the
         * cotangent of an output, jvp and hvp: the tangent of an input) */
        const char *from = json_string_value(init);
        int from_out = a->kind == MF_RESULT && ap->e->ep == TSR_EP_VJP;
        const field_info *side = from_out ? backend_schema(c).out : backend_schema(c).in;
        int32_t n_side = from_out ? backend_schema(c).n_out : backend_schema(c).n_in;
        int32_t k = from ? find_field(side, n_side, from) : -1;
        char at[288];
        at_key(ap, "init", at, sizeof at);
        const char *what = a->kind == MF_OUT ? "an input"
                           : from_out       ? "a differentiable output, whose cotangent is "
                                              "copied in"
                                            : "a differentiable input, whose tangent is copied in";
        if (k < 0 || (a->kind == MF_RESULT && !(side[k].field.flags & TSR_FIELD_DIFFERENTIABLE)))
            return mf_fail(ap->p, TSR_E_DESCRIPTOR, at, "expects the name of %s, got %s", what,
                           from ? from : "no string");
        const field_info *src = &side[k];
        char a_shape[160], b_shape[160];
        int same = src->field.dtype == f->field.dtype && src->field.rank == f->field.rank;
        for (int32_t d = 0; same && d < f->field.rank; d++)
            same = src->kind[d] == f->kind[d] &&
                   (f->kind[d] == DIM_SYMBOL ? src->sym[d] == f->sym[d]
                                             : src->dims[d].size == f->dims[d].size);
        if (!same)
            return mf_fail(ap->p, TSR_E_DESCRIPTOR, at,
                           "%s '%s' (%s %s) cannot initialise %s '%s' (%s %s): dtype and "
                           "declared shape must be the same",
                           from_out ? "output" : "input", from, tsr_dtype_name(src->field.dtype),
                           field_shape_str(src, a_shape, sizeof a_shape),
                           input ? "the gradient of" : "output", name,
                           tsr_dtype_name(f->field.dtype),
                           field_shape_str(f, b_shape, sizeof b_shape));
        a->field2 = k;
    }
    return 0;
}

/* {"jacobian": ["y", "x"]}: the block d y / d x. */
static int parse_jacobian_arg(arg_parse *ap) {
    mf_arg *a = ap->a;
    const tsr_component *c = ap->p->c;
    json_t *v = ap->kind_value;
    if (!json_is_array(v) || json_array_size(v) != 2 || !json_is_string(json_array_get(v, 0)) ||
        !json_is_string(json_array_get(v, 1)))
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry,
                       "'jacobian' expects [output, input], two field names");
    int rc = lookup_field(ap, json_string_value(json_array_get(v, 0)), 0, 1, &a->field);
    if (!rc) rc = lookup_field(ap, json_string_value(json_array_get(v, 1)), 1, 1, &a->field2);
    if (rc) return rc;
    a->dtype = backend_schema(c).out[a->field].field.dtype;
    tsr_dtype declared = a->dtype;
    if ((rc = parse_type(ap, &declared))) return rc;
    if (declared != a->dtype)
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry,
                       "type %s disagrees with the schema: a block of output '%s' is %s",
                       tsr_dtype_name(declared), backend_schema(c).out[a->field].field.name,
                       tsr_dtype_name(a->dtype));
    if ((rc = parse_pass(ap, 0))) return rc;
    return parse_flags(ap);
}

/* An integer argument's type: int32 (Fortran's default INTEGER, C's int)
 * unless the manifest says int64. */
static int parse_int_type(arg_parse *ap) {
    ap->a->dtype = TSR_INT32;
    int rc = parse_type(ap, &ap->a->dtype);
    if (rc) return rc;
    if (!is_int_dtype(ap->a->dtype))
        return fail_key(ap, "type", "an integer argument is int32 or int64, not %s",
                        tsr_dtype_name(ap->a->dtype));
    return 0;
}

/* {"dim": "a", "axis": 1}: the size of axis 1 of field a at the call. */
static int parse_dim_arg(arg_parse *ap) {
    mf_arg *a = ap->a;
    const tsr_component *c = ap->p->c;
    const char *name = json_string_value(ap->kind_value);
    int rc = parse_int_type(ap);
    if (!rc) rc = parse_pass(ap, 1);
    if (rc) return rc;
    if (!name)
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry, "'dim' expects a field name");
    int32_t in = find_field(backend_schema(c).in, backend_schema(c).n_in, name), out = find_field(backend_schema(c).out, backend_schema(c).n_out, name);
    if (in < 0 && out < 0) {
        char ins[256], outs[256];
        field_list(backend_schema(c).in, backend_schema(c).n_in, ins, sizeof ins);
        field_list(backend_schema(c).out, backend_schema(c).n_out, outs, sizeof outs);
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry,
                       "dimension of unknown field '%s' (inputs: %s; outputs: %s)", name, ins,
                       outs);
    }
    const field_info *f = in >= 0 ? &backend_schema(c).in[in] : &backend_schema(c).out[out];
    json_t *axis = json_object_get(ap->obj, "axis");
    if (axis && !json_is_integer(axis)) return fail_key(ap, "axis", "expected an integer");
    int64_t ax = axis ? json_integer_value(axis) : 0;
    if (f->field.rank == 0)
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry,
                       "field '%s' is a scalar: it has no dimension to pass", name);
    if (ax < 0 || ax >= f->field.rank) {
        char at[288];
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, at_key(ap, "axis", at, sizeof at),
                       "axis %lld is out of range for '%s', which has rank %d", (long long)ax,
                       name, (int)f->field.rank);
    }
    if (in >= 0)
        a->dim = (mf_dim_src){in, (int32_t)ax, 0, NULL};
    else
        a->dim = ap->p->m->out_dims[out * TSR_MAX_FIELD_RANK + ax];
    return 0;
}

/* "int" and "workspace": a size expression, or a plain integer. */
static int parse_expr_value(arg_parse *ap) {
    mf_arg *a = ap->a;
    char text[64];
    const char *src = json_string_value(ap->kind_value);
    if (json_is_integer(ap->kind_value)) {
        snprintf(text, sizeof text, "%lld", (long long)json_integer_value(ap->kind_value));
        src = text;
    }
    if (!src)
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry,
                       "'%s' expects a size expression (a string such as \"n*n\") or an integer",
                       mf_kind_names[a->kind]);
    a->expr = malloc(sizeof *a->expr);
    if (!a->expr) return mf_fail(ap->p, TSR_E_NOMEM, ap->entry, "out of memory");
    return mf_expr_compile(ap->p, src, ap->entry, a->expr);
}

/* A name a {"length": NAME} argument refers to. */
static int parse_name_key(arg_parse *ap, json_t *v, const char *key) {
    const char *name = json_string_value(v);
    int ok = name && *name;
    for (const char *c = name; ok && *c; c++) ok = *c == '_' || (*c >= '0' && *c <= '9') ||
                                                  (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z');
    if (!ok) {
        if (key) return fail_key(ap, key, "expected a name (letters, digits and '_')");
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry,
                       "'length' expects the name of a workspace of this routine");
    }
    ap->a->name = name;
    return 0;
}

/* {"workspace": "max(1, 3*n-1)", "name": "work", "query": true}: scratch
 * memory; with "query" the expression is the least size and the routine is
 * asked for its own (LAPACK's LWORK = -1) once per shape. */
static int parse_workspace_arg(arg_parse *ap) {
    mf_arg *a = ap->a;
    a->dtype = TSR_FLOAT64;
    int query = 0;
    int rc = parse_type(ap, &a->dtype);
    if (!rc) rc = parse_flags(ap);
    if (!rc) rc = parse_expr_value(ap);
    if (!rc) rc = mf_get_bool(ap->p, ap->obj, "query", ap->entry, &query);
    json_t *name = json_object_get(ap->obj, "name");
    if (!rc && name) rc = parse_name_key(ap, name, "name");
    a->field = a->field2 = -1;
    a->query = (uint8_t)query;
    if (!rc && query && a->dtype != TSR_FLOAT64 && a->dtype != TSR_FLOAT32 &&
        a->dtype != TSR_INT32 && a->dtype != TSR_INT64 && a->dtype != TSR_COMPLEX64 &&
        a->dtype != TSR_COMPLEX128)
        rc = fail_key(ap, "query",
                      "a queried workspace is float32, float64, complex64, complex128, int32 "
                      "or int64 (the routine writes the size it wants into its first element), "
                      "not %s",
                      tsr_dtype_name(a->dtype));
    if (!rc && query && !name)
        rc = fail_key(ap, "query",
                      "a queried workspace needs a \"name\", so that its length argument can "
                      "say {\"length\": NAME}");
    return rc;
}

/* {"length": "work"}: the length of workspace "work" (linked by
 * mf_workspaces_link once every argument is read). */
static int parse_length_arg(arg_parse *ap) {
    int rc = parse_int_type(ap);
    if (!rc) rc = parse_pass(ap, 1);
    return rc ? rc : parse_name_key(ap, ap->kind_value, NULL);
}

static int store_const(arg_parse *ap, json_t *v) {
    mf_arg *a = ap->a;
    int is_int = json_is_integer(v);
    if (!is_int && !json_is_real(v))
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry, "'const' expects a number");
    double d = json_number_value(v);
    long long i = is_int ? json_integer_value(v) : 0;
    if (!json_object_get(ap->obj, "type")) a->dtype = is_int ? TSR_INT32 : TSR_FLOAT64;
    int in_range = 1;
    switch (a->dtype) {
    case TSR_FLOAT32: a->value.f32 = (float)d; return 0;
    case TSR_FLOAT64: a->value.f64 = d; return 0;
    case TSR_BOOL:
    case TSR_INT8: in_range = i >= INT8_MIN && i <= INT8_MAX; a->value.i8 = (int8_t)i; break;
    case TSR_INT16: in_range = i >= INT16_MIN && i <= INT16_MAX; a->value.i16 = (int16_t)i; break;
    case TSR_INT32: in_range = i >= INT32_MIN && i <= INT32_MAX; a->value.i32 = (int32_t)i; break;
    case TSR_INT64: a->value.i64 = i; break;
    case TSR_UINT8: in_range = i >= 0 && i <= UINT8_MAX; a->value.u8 = (uint8_t)i; break;
    case TSR_UINT16: in_range = i >= 0 && i <= UINT16_MAX; a->value.u16 = (uint16_t)i; break;
    case TSR_UINT32: in_range = i >= 0 && i <= UINT32_MAX; a->value.u32 = (uint32_t)i; break;
    case TSR_UINT64: in_range = i >= 0; a->value.u64 = (uint64_t)i; break;
    default:
        return fail_key(ap, "type", "a constant cannot be of type %s",
                        tsr_dtype_name(a->dtype));
    }
    if (!is_int)
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry,
                       "'const' %g is not an integer, but its type is %s", d,
                       tsr_dtype_name(a->dtype));
    if (!in_range)
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry, "'const' %lld does not fit %s", i,
                       tsr_dtype_name(a->dtype));
    return 0;
}

static int parse_const_arg(arg_parse *ap) {
    ap->a->dtype = TSR_INT32;
    int rc = parse_type(ap, &ap->a->dtype);
    if (!rc) rc = store_const(ap, ap->kind_value);
    if (!rc) rc = parse_pass(ap, 1);
    return rc;
}

static int parse_char_arg(arg_parse *ap) {
    mf_arg *a = ap->a;
    json_t *v = ap->kind_value;
    if (!json_is_string(v))
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry, "'char' expects a string");
    a->text_len = json_string_length(v);
    if (a->text_len > MF_MAX_TEXT)
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry,
                       "the character constant has %zu bytes, more than %d", a->text_len,
                       MF_MAX_TEXT);
    a->text = malloc(a->text_len + 1);
    if (!a->text) return mf_fail(ap->p, TSR_E_NOMEM, ap->entry, "out of memory");
    memcpy(a->text, json_string_value(v), a->text_len + 1);
    int hidden = ap->p->m->fortran;
    int rc = mf_get_bool(ap->p, ap->obj, "hidden_length", ap->entry, &hidden);
    a->hidden_len = (uint8_t)hidden;
    a->pass_given = json_object_get(ap->obj, "hidden_length") != NULL;
    return rc;
}

static int parse_info_arg(arg_parse *ap) {
    if (!json_is_true(ap->kind_value))
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry,
                       "'info' expects true (the routine sets it; nonzero is a failure)");
    return parse_int_type(ap);
}

/* Exactly one kind key, and only the modifiers that kind takes. */
static int find_kind(arg_parse *ap) {
    int found = -1;
    for (int k = 0; k < MF_KIND_COUNT; k++) {
        if (!json_object_get(ap->obj, mf_kind_names[k])) continue;
        if (found >= 0)
            return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry,
                           "both '%s' and '%s': an argument has exactly one kind",
                           mf_kind_names[found], mf_kind_names[k]);
        found = k;
    }
    if (found < 0)
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry,
                       "no kind: expected one of in, out, tangent, cotangent, result, "
                       "jacobian, dim, int, const, workspace, length, char, info");
    ap->a->kind = (mf_kind)found;
    ap->kind_value = json_object_get(ap->obj, mf_kind_names[found]);
    const char *key;
    json_t *value;
    json_object_foreach(ap->obj, key, value) {
        if (strcmp(key, mf_kind_names[found]) == 0) continue;
        int m = 0;
        while (m < M_COUNT && strcmp(modifier_names[m], key) != 0) m++;
        if (m == M_DOC) continue;
        if (m == M_COUNT)
            return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry, "unknown key '%s'", key);
        if (!(kind_modifiers[found] & BIT(m)))
            return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry,
                           "'%s' does not apply to a '%s' argument", key, mf_kind_names[found]);
    }
    if (!kind_allowed(ap->a->kind, ap->e->ep))
        return mf_fail(ap->p, TSR_E_DESCRIPTOR, ap->entry,
                       "a '%s' argument has no meaning in %s", mf_kind_names[found],
                       tsr_endpoint_name(ap->e->ep));
    return 0;
}

int mf_arg_parse(mf_parse *p, mf_endpoint *e, json_t *obj, const char *entry, mf_arg *out) {
    memset(out, 0, sizeof *out);
    out->field = out->field2 = out->partner = -1;
    arg_parse ap = {.p = p, .e = e, .obj = obj, .entry = entry, .a = out};
    if (!json_is_object(obj))
        return mf_fail(p, TSR_E_DESCRIPTOR, entry, "expected an object such as {\"in\": \"x\"}");
    int rc = find_kind(&ap);
    if (rc) return rc;
    switch (out->kind) {
    case MF_IN:
    case MF_OUT:
    case MF_TANGENT:
    case MF_COTANGENT:
    case MF_RESULT: return parse_field_arg(&ap);
    case MF_JACOBIAN: return parse_jacobian_arg(&ap);
    case MF_DIM: return parse_dim_arg(&ap);
    case MF_INT:
        rc = parse_int_type(&ap);
        if (!rc) rc = parse_pass(&ap, 1);
        return rc ? rc : parse_expr_value(&ap);
    case MF_CONST: return parse_const_arg(&ap);
    case MF_WORKSPACE: return parse_workspace_arg(&ap);
    case MF_CHAR: return parse_char_arg(&ap);
    case MF_INFO: return parse_info_arg(&ap);
    case MF_LENGTH: return parse_length_arg(&ap);
    default: return mf_fail(p, TSR_E_DESCRIPTOR, entry, "internal error: unknown kind");
    }
}
