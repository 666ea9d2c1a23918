/* SPDX-License-Identifier: MIT */
/* A component's fields as UM-Bridge sees them: each float array field, in
 * schema order, is one float64 vector (flattened C order, a scalar of
 * length 1); every other field is set from the `config` key of its name
 * or takes its default. Symbolic dims get their sizes from the call's
 * vectors, then from `config` keys named after the symbol, then from the
 * serve option (--umbridge-size). A UM-Bridge call becomes one tsr_call:
 * Evaluate apply, Gradient vjp, ApplyJacobian jvp, ApplyHessian hvp;
 * everything the client sent is checked before the component runs. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/payload.h"
#include "umbridge.h"

/* Sizes a symbol may have: far above any array that fits in memory, low
 * enough that a product of TSR_MAX_FIELD_RANK of them is checked exactly. */
#define UM_MAX_SIZE ((int64_t)1 << 40)
#define UM_MAX_SYMBOLS 64

int um_fail(um_err *e, const char *type, int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    e->type = type;
    e->status = status;
    return -1;
}

int um_is_vector(const tsr_field *f) {
    return f->kind == TSR_KIND_ARRAY && f->rank != TSR_RANK_ANY &&
           (f->dtype == TSR_FLOAT64 || f->dtype == TSR_FLOAT32 || f->dtype == TSR_FLOAT16);
}

static int32_t vectors_of(const tsr_component *c, int outputs, int32_t *idx, int32_t max) {
    int32_t n = outputs ? tsr_component_n_outputs(c) : tsr_component_n_inputs(c), k = 0;
    for (int32_t i = 0; i < n; i++) {
        const tsr_field *f = outputs ? tsr_component_output(c, i) : tsr_component_input(c, i);
        if (f && um_is_vector(f) && k < max) idx[k++] = i;
    }
    return k;
}

int32_t um_vector_inputs(const tsr_component *c, int32_t *idx, int32_t max) {
    return vectors_of(c, 0, idx, max);
}
int32_t um_vector_outputs(const tsr_component *c, int32_t *idx, int32_t max) {
    return vectors_of(c, 1, idx, max);
}

/* ---- sizes of symbols ---------------------------------------------------- */

typedef struct sym_table {
    int n;
    const char *name[UM_MAX_SYMBOLS];
    int64_t size[UM_MAX_SYMBOLS];
} sym_table;

static const int64_t *sym_find(const sym_table *t, const char *name) {
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->name[i], name) == 0) return &t->size[i];
    return NULL;
}

static void sym_set(sym_table *t, const char *name, int64_t size) {
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->name[i], name) == 0) {
            t->size[i] = size;
            return;
        }
    if (t->n < UM_MAX_SYMBOLS) {
        t->name[t->n] = name;
        t->size[t->n++] = size;
    }
}

/* The size the option list gives sym: 1, or 0 when it names none. */
static int option_size(const char *list, const char *sym, int64_t *out) {
    size_t sl = strlen(sym);
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        if (eq && (size_t)(eq - p) == sl && strncmp(p, sym, sl) == 0) {
            *out = strtoll(eq + 1, NULL, 10);
            return 1;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}

int um_sizes_check(const char *list, char *why, size_t why_len) {
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        char *end = NULL;
        long long v = eq ? strtoll(eq + 1, &end, 10) : -1;
        if (!eq || eq == p || end != p + len || end == eq + 1 || v < 0 || v > UM_MAX_SIZE) {
            snprintf(why, why_len,
                     "an UM-Bridge size is SYMBOL=N with N from 0 to %lld, got '%.*s'",
                     (long long)UM_MAX_SIZE, (int)len, p);
            return -1;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}

/* A symbol's size from config or the option, when the table has none:
 * 1 found, 0 none, -1 a config value that is not a size. */
static int declared_size(const json_t *config, const char *option_sizes, const char *sym,
                         int64_t *out, um_err *e) {
    json_t *v = config ? json_object_get(config, sym) : NULL;
    if (v) {
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) > UM_MAX_SIZE)
            return um_fail(e, "InvalidInput", 400,
                           "config key \"%s\" (the size of symbol '%s') must be an integer from 0 "
                           "to %lld", sym, sym, (long long)UM_MAX_SIZE);
        *out = (int64_t)json_integer_value(v);
        return 1;
    }
    return option_size(option_sizes, sym, out);
}

/* Fill in every symbol of the fields that the table lacks, from config
 * and the option. */
static int fill_declared(const tsr_component *c, const json_t *config, const char *option_sizes,
                         sym_table *t, um_err *e) {
    for (int outputs = 0; outputs < 2; outputs++) {
        int32_t n = outputs ? tsr_component_n_outputs(c) : tsr_component_n_inputs(c);
        for (int32_t i = 0; i < n; i++) {
            const tsr_field *f = outputs ? tsr_component_output(c, i) : tsr_component_input(c, i);
            if (!um_is_vector(f)) continue;
            for (int32_t d = 0; d < f->rank; d++) {
                const char *sym = f->dims[d].symbol;
                int64_t v = 0;
                if (!sym || sym_find(t, sym)) continue;
                int rc = declared_size(config, option_sizes, sym, &v, e);
                if (rc < 0) return -1;
                if (rc) sym_set(t, sym, v);
            }
        }
    }
    return 0;
}

static const char *role(int outputs) { return outputs ? "output" : "input"; }

/* The shape of vector field f (k-th of its role) from the table; len >= 0
 * is the length a call gave, which settles one wildcard dim. */
static int field_shape(const tsr_field *f, int outputs, int32_t k, const sym_table *t,
                       int64_t len, int64_t *shape, int64_t *count, um_err *e) {
    int64_t known = 1;
    int32_t wild = -1;
    for (int32_t d = 0; d < f->rank; d++) {
        const tsr_dim *dim = &f->dims[d];
        int64_t s = -1;
        if (dim->symbol) {
            const int64_t *v = sym_find(t, dim->symbol);
            if (!v)
                return um_fail(e, "InvalidInput", 400,
                               "%s %d (%s): the size of symbol '%s' is unknown; give it as config "
                               "key \"%s\" or serve with --umbridge-size %s=N",
                               role(outputs), (int)k, f->name, dim->symbol, dim->symbol,
                               dim->symbol);
            s = *v;
        } else if (dim->size >= 0) {
            s = dim->size;
        } else if (len >= 0 && wild < 0) {
            wild = d;
            continue;
        } else {
            return um_fail(e, "InvalidInput", 400,
                           "%s %d (%s): dimension %d has no declared size, so UM-Bridge cannot "
                           "tell it before a call",
                           role(outputs), (int)k, f->name, (int)d);
        }
        shape[d] = s;
        if (s && known > INT64_MAX / s)
            return um_fail(e, "InvalidInput", 400, "%s %d (%s): its sizes overflow",
                           role(outputs), (int)k, f->name);
        known *= s;
    }
    if (wild >= 0) {
        if (known == 0 || len % known)
            return um_fail(e, "InvalidInput", 400,
                           "%s %d (%s) has invalid length: %lld values are not a multiple of %lld",
                           role(outputs), (int)k, f->name, (long long)len, (long long)known);
        shape[wild] = len / known;
        known = len;
    }
    *count = known;
    return 0;
}

int um_sizes(const tsr_component *c, const char *option_sizes, const json_t *config, int outputs,
             int64_t **sizes, int32_t *n, um_err *e) {
    int32_t idx[UM_MAX_VECTORS];
    int32_t k = vectors_of(c, outputs, idx, UM_MAX_VECTORS);
    sym_table t = {0};
    *sizes = NULL;
    *n = 0;
    if (fill_declared(c, config, option_sizes, &t, e)) return -1;
    int64_t *out = calloc(k ? (size_t)k : 1, sizeof *out);
    if (!out) return um_fail(e, "InvalidOutput", 500, "out of memory");
    for (int32_t i = 0; i < k; i++) {
        const tsr_field *f = outputs ? tsr_component_output(c, idx[i]) : tsr_component_input(c, idx[i]);
        int64_t shape[TSR_MAX_RANK];
        if (field_shape(f, outputs, i, &t, -1, shape, &out[i], e)) {
            free(out);
            return -1;
        }
    }
    *sizes = out;
    *n = k;
    return 0;
}

/* Symbols that a call's vectors settle: a field whose only unknown dim is
 * a symbol gives it length / (the product of the others), repeated while
 * that settles more. */
static void infer_symbols(const tsr_component *c, const int32_t *idx, const um_vec *in,
                          int32_t n_in, sym_table *t) {
    for (int progress = 1; progress;) {
        progress = 0;
        for (int32_t k = 0; k < n_in; k++) {
            const tsr_field *f = tsr_component_input(c, idx[k]);
            int64_t known = 1;
            const char *unknown = NULL;
            int n_unknown = 0;
            for (int32_t d = 0; d < f->rank; d++) {
                const tsr_dim *dim = &f->dims[d];
                const int64_t *v = dim->symbol ? sym_find(t, dim->symbol) : NULL;
                if (dim->symbol && !v) {
                    if (!unknown || strcmp(unknown, dim->symbol)) n_unknown++;
                    unknown = dim->symbol;
                } else if (!dim->symbol && dim->size < 0) {
                    n_unknown += 2;   /* a wildcard: nothing to settle from this field */
                } else {
                    int64_t s = v ? *v : dim->size;
                    known = s && known <= INT64_MAX / s ? known * s : 0;
                }
            }
            if (n_unknown == 1 && known > 0 && in[k].len % known == 0) {
                sym_set(t, unknown, in[k].len / known);
                progress = 1;
            }
        }
    }
}

/* ---- conversions ------------------------------------------------------ */

static double half_to_double(uint16_t h) {
    int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v = exp == 0 ? ldexp(mant, -24)
               : exp == 31 ? (mant ? NAN : INFINITY)
                           : ldexp(mant + 1024, exp - 25);
    return (h & 0x8000) ? -v : v;
}

/* Buffers a call borrows, freed after it. */
typedef struct keep_list {
    void *p[2 * UM_MAX_VECTORS + 64];
    void *array[2 * UM_MAX_VECTORS + 64];   /* tsr_array_from_json buffers */
    int n, n_array;
} keep_list;

static void keep_free(keep_list *k) {
    for (int i = 0; i < k->n; i++) free(k->p[i]);
    for (int i = 0; i < k->n_array; i++) tsr_array_buffer_free(k->array[i]);
}

/* v as an array of f's dtype and shape: float64 borrows v's data, float32
 * converts, float16 goes through the library's JSON decoder (which rounds
 * as Tesseract's does). */
static int as_array(const tsr_field *f, const char *what, const um_vec *v, const int64_t *shape,
                    tsr_array *a, keep_list *keep, um_err *e) {
    memset(a, 0, sizeof *a);
    a->dtype = f->dtype;
    a->rank = f->rank;
    for (int32_t d = 0; d < f->rank; d++) a->shape[d] = shape[d];
    static double zero;
    if (f->dtype == TSR_FLOAT64) {
        a->data = v->data ? v->data : &zero;
        return 0;
    }
    if (f->dtype == TSR_FLOAT32) {
        float *p = malloc(v->len ? (size_t)v->len * sizeof *p : 1);
        if (!p) return um_fail(e, "InvalidOutput", 500, "out of memory");
        keep->p[keep->n++] = p;
        for (int64_t i = 0; i < v->len; i++) p[i] = (float)v->data[i];
        a->data = p;
        return 0;
    }
    json_t *list = json_array();
    for (int64_t i = 0; list && i < v->len; i++)
        if (json_array_append_new(list, json_real(v->data[i]))) {
            json_decref(list);
            list = NULL;
        }
    char *text = list ? json_dumps(list, JSON_COMPACT) : NULL;
    json_decref(list);
    if (!text) return um_fail(e, "InvalidInput", 400, "%s: not finite values", what);
    tsr_array got;
    void *buf = NULL;
    tsr_error err = TSR_ERROR_INIT;
    int rc = tsr_array_from_json(text, strlen(text), f->dtype, &got, &buf, &err);
    free(text);
    if (rc) return um_fail(e, "InvalidInput", 400, "%s: %s", what, err.message);
    keep->array[keep->n_array++] = buf;
    a->data = got.data;
    return 0;
}

/* Result k to the sink as float64: a float64 result as it lies in the
 * call's buffer (no copy: a shared-memory answer is one pwrite from it),
 * another dtype converted first. */
static int hand_over(const tsr_array *a, int32_t k, um_sink sink, void *user, um_err *e) {
    int64_t n = 1;
    for (int32_t d = 0; d < a->rank; d++) n *= a->shape[d];
    if (n && !a->data) return um_fail(e, "InvalidOutput", 500, "the model returned no data");
    if (a->dtype == TSR_FLOAT64 || !n) return sink(user, k, a->data, n, e);
    double *v = malloc((size_t)n * sizeof *v);
    if (!v) return um_fail(e, "InvalidOutput", 500, "out of memory");
    for (int64_t i = 0; i < n; i++)
        v[i] = a->dtype == TSR_FLOAT32 ? ((const float *)a->data)[i]
                                       : half_to_double(((const uint16_t *)a->data)[i]);
    int rc = sink(user, k, v, n, e);
    free(v);
    return rc;
}

void um_free_vecs(um_vec *v, int32_t n) {
    for (int32_t i = 0; v && i < n; i++) free(v[i].data);
    free(v);
}

/* ---- one call ---------------------------------------------------------- */

/* The fields UM-Bridge does not carry, from config (or their defaults). */
static int bind_config_fields(tsr_call *call, const tsr_component *c, const json_t *config,
                              keep_list *keep, um_err *e) {
    for (int32_t i = 0; i < tsr_component_n_inputs(c); i++) {
        const tsr_field *f = tsr_component_input(c, i);
        if (um_is_vector(f)) continue;
        json_t *v = config ? json_object_get(config, f->name) : NULL;
        if (!v) {
            if (tsr_field_required(f))
                return um_fail(e, "InvalidInput", 400,
                               "input '%s' (%s) is not a UM-Bridge vector and has no default; "
                               "give it as config key \"%s\"",
                               f->name,
                               f->kind == TSR_KIND_TEXT   ? "text"
                               : f->kind == TSR_KIND_JSON ? "JSON"
                                                          : tsr_dtype_name(f->dtype),
                               f->name);
            continue;
        }
        if (f->kind == TSR_KIND_TEXT && !json_is_string(v))
            return um_fail(e, "InvalidInput", 400, "config key \"%s\" must be a string (text input)",
                           f->name);
        char *text = f->kind == TSR_KIND_TEXT ? strdup(json_string_value(v))
                                              : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!text) return um_fail(e, "InvalidOutput", 500, "out of memory");
        keep->p[keep->n++] = text;
        int rc;
        if (f->kind != TSR_KIND_ARRAY) {
            rc = tsr_call_set_text(call, f->name, text);
        } else {
            tsr_array a;
            void *buf = NULL;
            tsr_error err = TSR_ERROR_INIT;
            if (tsr_array_from_json(text, strlen(text), f->dtype, &a, &buf, &err))
                return um_fail(e, "InvalidInput", 400, "config key \"%s\" (input '%s'): %s",
                               f->name, f->name, err.message);
            keep->array[keep->n_array++] = buf;
            rc = tsr_call_set_input(call, f->name, &a);
        }
        if (rc)
            return um_fail(e, "InvalidInput", 400, "config key \"%s\": %s", f->name,
                           tsr_strerror(rc));
    }
    return 0;
}

/* A failed run, in UM-Bridge's terms. */
static int run_failed(tsr_call *call, int rc, um_err *e) {
    switch (rc) {
    case TSR_E_UNSUPPORTED:
        return um_fail(e, "UnsupportedFeature", 400, "%s", tsr_call_errmsg(call));
    case TSR_E_ARGUMENT:
    case TSR_E_UNKNOWN_FIELD:
    case TSR_E_MISSING:
    case TSR_E_DTYPE:
    case TSR_E_SHAPE:
    case TSR_E_NOT_DIFFERENTIABLE:
    case TSR_E_PAYLOAD:
    case TSR_E_LIMIT:
    case TSR_E_VALUE:
        return um_fail(e, "InvalidInput", 400, "%s", tsr_call_errmsg(call));
    default:
        return um_fail(e, "InvalidOutput", 500, "the model failed (%s): %s", tsr_strerror(rc),
                       tsr_call_errmsg(call));
    }
}

static int check_index(int64_t v, int32_t n, const char *key, const char *what, um_err *e) {
    if (v < 0 || v >= n)
        return um_fail(e, "InvalidInput", 400,
                       "Invalid %s index! Expected between 0 and number of %s minus one (%d), but "
                       "got %lld", key, what, (int)n - 1, (long long)v);
    return 0;
}

static const tsr_endpoint endpoint_of[] = {TSR_EP_APPLY, TSR_EP_VJP, TSR_EP_JVP, TSR_EP_HVP};
static const char *const op_name[] = {"Evaluate", "Gradient", "ApplyJacobian", "ApplyHessian"};

int um_run(tsr_component *c, const char *option_sizes, const um_args *a, um_sink sink,
           void *user, um_err *e) {
    int32_t vin[UM_MAX_VECTORS], vout[UM_MAX_VECTORS];
    int32_t n_vin = um_vector_inputs(c, vin, UM_MAX_VECTORS);
    int32_t n_vout = um_vector_outputs(c, vout, UM_MAX_VECTORS);
    if (!tsr_component_has_endpoint(c, endpoint_of[a->op]))
        return um_fail(e, "UnsupportedFeature", 400, "%s not supported by model!",
                       op_name[a->op]);
    if (a->n_in != n_vin)
        return um_fail(e, "InvalidInput", 400,
                       "Number of input parameters does not match model number of model inputs! "
                       "Expected %d but got %d", (int)n_vin, (int)a->n_in);
    if (a->op != UM_EVALUATE) {
        if (check_index(a->out_wrt, n_vout, "outWrt", "outputs", e) ||
            check_index(a->in_wrt, n_vin, a->op == UM_APPLY_HESSIAN ? "inWrt1" : "inWrt",
                        "inputs", e) ||
            (a->op == UM_APPLY_HESSIAN && check_index(a->in_wrt2, n_vin, "inWrt2", "inputs", e)))
            return -1;
    }
    sym_table t = {0};
    infer_symbols(c, vin, a->in, n_vin, &t);
    if (fill_declared(c, a->config, option_sizes, &t, e)) return -1;

    keep_list *keep = calloc(1, sizeof *keep);
    tsr_call *call = keep ? tsr_call_new(c, endpoint_of[a->op]) : NULL;
    if (!call) {
        free(keep);
        return um_fail(e, "InvalidOutput", 500, "out of memory");
    }
    int rc = 0;
    int64_t (*shapes)[TSR_MAX_RANK] = calloc((size_t)(n_vin ? n_vin : 1), sizeof *shapes);
    if (!shapes) rc = um_fail(e, "InvalidOutput", 500, "out of memory");
    for (int32_t k = 0; !rc && k < n_vin; k++) {
        const tsr_field *f = tsr_component_input(c, vin[k]);
        int64_t count;
        char what[160];
        snprintf(what, sizeof what, "input %d (%s)", (int)k, f->name);
        rc = field_shape(f, 0, k, &t, a->in[k].len, shapes[k], &count, e);
        if (!rc && count != a->in[k].len)
            rc = um_fail(e, "InvalidInput", 400,
                         "Input parameter %d (%s) has invalid length! Expected %lld but got %lld.",
                         (int)k, f->name, (long long)count, (long long)a->in[k].len);
        tsr_array arr;
        if (!rc) rc = as_array(f, what, &a->in[k], shapes[k], &arr, keep, e);
        if (!rc && tsr_call_set_input_at(call, vin[k], &arr))
            rc = um_fail(e, "InvalidInput", 400, "%s: %s", what, tsr_call_errmsg(call));
    }
    if (!rc) rc = bind_config_fields(call, c, a->config, keep, e);
    const tsr_field *fin = NULL, *fin2 = NULL, *fout = NULL;
    if (!rc && a->op != UM_EVALUATE) {
        fin = tsr_component_input(c, vin[a->in_wrt]);
        fin2 = a->op == UM_APPLY_HESSIAN ? tsr_component_input(c, vin[a->in_wrt2]) : NULL;
        fout = tsr_component_output(c, vout[a->out_wrt]);
        const char *ins[2] = {fin->name, fin2 ? fin2->name : NULL};
        int32_t n_ins = fin2 && fin2 != fin ? 2 : 1;
        if (tsr_call_set_wrt(call, ins, n_ins, &fout->name, 1))
            rc = um_fail(e, "InvalidInput", 400, "%s", tsr_call_errmsg(call));
    }
    int64_t out_shape[TSR_MAX_RANK];
    if (!rc && (a->op == UM_GRADIENT || a->op == UM_APPLY_HESSIAN)) {
        int64_t count;
        rc = field_shape(fout, 1, (int32_t)a->out_wrt, &t, -1, out_shape, &count, e);
        if (!rc && a->sens.len != count)
            rc = um_fail(e, "InvalidInput", 400,
                         "Vector sens has invalid length! Expected %lld but got %lld.",
                         (long long)count, (long long)a->sens.len);
        tsr_array s;
        if (!rc) rc = as_array(fout, "sens", &a->sens, out_shape, &s, keep, e);
        if (!rc && tsr_call_set_seed(call, fout->name, &s))
            rc = um_fail(e, "InvalidInput", 400, "sens: %s", tsr_call_errmsg(call));
    }
    if (!rc && (a->op == UM_APPLY_JACOBIAN || a->op == UM_APPLY_HESSIAN)) {
        int64_t k = a->op == UM_APPLY_HESSIAN ? a->in_wrt2 : a->in_wrt;
        const tsr_field *ft = tsr_component_input(c, vin[k]);
        if (a->vec.len != a->in[k].len)
            rc = um_fail(e, "InvalidInput", 400,
                         "Vector vec has invalid length! Expected %lld but got %lld.",
                         (long long)a->in[k].len, (long long)a->vec.len);
        tsr_array v;
        if (!rc) rc = as_array(ft, "vec", &a->vec, shapes[k], &v, keep, e);
        if (!rc && (a->op == UM_APPLY_HESSIAN ? tsr_call_set_tangent(call, ft->name, &v)
                                              : tsr_call_set_seed(call, ft->name, &v)))
            rc = um_fail(e, "InvalidInput", 400, "vec: %s", tsr_call_errmsg(call));
        if (!rc && a->op == UM_APPLY_HESSIAN && fin2 != fin) {
            /* The tangent on inWrt1 is zero: the product along inWrt2 only. */
            um_vec zeros = {calloc((size_t)(a->in[a->in_wrt].len ? a->in[a->in_wrt].len : 1),
                                   sizeof(double)),
                            a->in[a->in_wrt].len};
            if (!zeros.data) rc = um_fail(e, "InvalidOutput", 500, "out of memory");
            else keep->p[keep->n++] = zeros.data;
            if (!rc) rc = as_array(fin, "tangent", &zeros, shapes[a->in_wrt], &v, keep, e);
            if (!rc && tsr_call_set_tangent(call, fin->name, &v))
                rc = um_fail(e, "InvalidInput", 400, "%s", tsr_call_errmsg(call));
        }
    }
    if (!rc) {
        int run = tsr_call_run(call);
        if (run) rc = run_failed(call, run, e);
    }
    if (!rc) {
        int32_t n = a->op == UM_EVALUATE ? n_vout : 1;
        for (int32_t i = 0; !rc && i < n; i++) {
            const tsr_array *r = tsr_call_result(call, a->op == UM_EVALUATE ? vout[i] : 0);
            if (!r || r->dtype != (a->op == UM_EVALUATE
                                                    ? tsr_component_output(c, vout[i])->dtype
                                                    : a->op == UM_APPLY_JACOBIAN ? fout->dtype
                                                                                 : fin->dtype))
                rc = um_fail(e, "InvalidOutput", 500, "the model returned no float result %d",
                             (int)i);
            else rc = hand_over(r, i, sink, user, e);
        }
    }
    free(shapes);
    tsr_call_free(call);
    keep_free(keep);
    free(keep);
    return rc ? -1 : 0;
}
