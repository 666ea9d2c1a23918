/* SPDX-License-Identifier: MIT */
/* check-manifest's arrays: element access in any dtype, the inputs in the
 * component's memory (so that a routine writing one is seen), made from
 * the schema or read from the payload. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_manifest.h"

/* ---- element access ------------------------------------------------------- */

/* float16 as a double, bit by bit (the command does not link libm). */
static double half_value(uint16_t h) {
    unsigned e = (h >> 10) & 31u, m = h & 1023u;
    double v;
    if (e == 0) {
        v = m / 16777216.0;   /* subnormal: m 2^-24 */
    } else if (e == 31) {
        v = m ? NAN : INFINITY;
    } else {
        uint64_t bits = (uint64_t)(e - 15 + 1023) << 52 | (uint64_t)m << 42;
        memcpy(&v, &bits, sizeof v);
    }
    return (h & 0x8000) ? -v : v;
}

static double magnitude(double x) { return x < 0 ? -x : x; }

/* Element i as real and imaginary parts. */
void cm_get(const void *p, tsr_dtype d, int64_t i, double v[2]) {
    v[1] = 0;
    switch (d) {
    case TSR_BOOL: v[0] = ((const uint8_t *)p)[i] != 0; break;
    case TSR_INT8: v[0] = ((const int8_t *)p)[i]; break;
    case TSR_INT16: v[0] = ((const int16_t *)p)[i]; break;
    case TSR_INT32: v[0] = ((const int32_t *)p)[i]; break;
    case TSR_INT64: v[0] = (double)((const int64_t *)p)[i]; break;
    case TSR_UINT8: v[0] = ((const uint8_t *)p)[i]; break;
    case TSR_UINT16: v[0] = ((const uint16_t *)p)[i]; break;
    case TSR_UINT32: v[0] = ((const uint32_t *)p)[i]; break;
    case TSR_UINT64: v[0] = (double)((const uint64_t *)p)[i]; break;
    case TSR_FLOAT16: v[0] = half_value(((const uint16_t *)p)[i]); break;
    case TSR_FLOAT32: v[0] = ((const float *)p)[i]; break;
    case TSR_COMPLEX64:
        v[0] = ((const float *)p)[2 * i];
        v[1] = ((const float *)p)[2 * i + 1];
        break;
    case TSR_COMPLEX128:
        v[0] = ((const double *)p)[2 * i];
        v[1] = ((const double *)p)[2 * i + 1];
        break;
    default: v[0] = ((const double *)p)[i]; break;
    }
}

static void put(void *p, tsr_dtype d, int64_t i, double v) {
    switch (d) {
    case TSR_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case TSR_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case TSR_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case TSR_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case TSR_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    case TSR_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case TSR_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case TSR_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case TSR_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case TSR_FLOAT16: ((uint16_t *)p)[i] = 0x3C00; break;   /* 1.0: small values only */
    case TSR_FLOAT32: ((float *)p)[i] = (float)v; break;
    case TSR_COMPLEX64:
        ((float *)p)[2 * i] = (float)v;
        ((float *)p)[2 * i + 1] = 0;
        break;
    case TSR_COMPLEX128:
        ((double *)p)[2 * i] = v;
        ((double *)p)[2 * i + 1] = 0;
        break;
    default: ((double *)p)[i] = v; break;
    }
}

int cm_is_float(tsr_dtype d) {
    return d == TSR_FLOAT16 || d == TSR_FLOAT32 || d == TSR_FLOAT64 || d == TSR_COMPLEX64 ||
           d == TSR_COMPLEX128;
}

int64_t cm_count(const tsr_array *a) {
    int64_t n = 1;
    for (int32_t k = 0; k < a->rank; k++) n *= a->shape[k];
    return n;
}

/* The same value: equal bits, both NaN, or floats within rounding (a
 * threaded BLAS may sum in another order). */
int cm_same(const void *x, const void *y, tsr_dtype d, int64_t i) {
    size_t es = tsr_dtype_size(d);
    if (memcmp((const char *)x + (size_t)i * es, (const char *)y + (size_t)i * es, es) == 0)
        return 1;
    if (!cm_is_float(d)) return 0;
    double a[2], b[2];
    cm_get(x, d, i, a);
    cm_get(y, d, i, b);
    for (int k = 0; k < 2; k++)
        if (!(isnan(a[k]) && isnan(b[k])) &&
            !(magnitude(a[k] - b[k]) <= 1e-12 * (magnitude(a[k]) > magnitude(b[k])
                                                     ? magnitude(a[k])
                                                     : magnitude(b[k]))))
            return 0;
    return 1;
}

/* ---- the inputs ------------------------------------------------------------ */

int cm_own(check *ck, owned *o, const char *name, const tsr_array *shape) {
    o->name = name;
    o->a = *shape;
    o->bytes = (size_t)cm_count(shape) * tsr_dtype_size(shape->dtype);
    o->a.data = tsr_component_alloc(ck->c, o->bytes ? o->bytes : 1);
    o->first = malloc(o->bytes ? o->bytes : 1);
    return o->a.data && o->first ? 0 : -1;
}

void cm_release(check *ck, owned *o) {
    if (o->a.data) tsr_component_free_buffer(ck->c, o->a.data);
    free(o->first);
    o->a.data = o->first = NULL;
}

/* Deterministic values: a square float matrix is symmetric and strictly
 * diagonally dominant (so positive definite: LAPACK's solvers and
 * eigensolvers accept it), other floats lie in [0.25, 0.875], integers
 * count 1, 2, 3 (a scalar integer, often a size or index, is its rank
 * among them). */
void cm_fill(owned *o, int32_t k, int32_t *int_scalars) {
    const tsr_array *a = &o->a;
    int64_t n = cm_count(a);
    if (a->rank == 0 && !cm_is_float(a->dtype)) {
        put(a->data, a->dtype, 0, ++*int_scalars);
    } else if (a->rank == 2 && a->shape[0] == a->shape[1] && cm_is_float(a->dtype)) {
        for (int64_t i = 0; i < n; i++) {
            int64_t r = i / a->shape[1], c = i % a->shape[1];
            put(a->data, a->dtype, i,
                r == c ? (double)a->shape[0] + 1 : 1.0 / (double)(1 + (r > c ? r - c : c - r)));
        }
    } else {
        for (int64_t i = 0; i < n; i++)
            put(a->data, a->dtype, i,
                cm_is_float(a->dtype) ? 0.25 + 0.125 * (double)((i + k) % 6) : (double)(i % 3 + 1));
    }
    memcpy(o->first, a->data, o->bytes);
}

/* A symbolic dimension's size: 3 for the first symbol, 4 for the next, ...
 * shared by every field that names it; an unconstrained one is 3. */
static int64_t symbol_size(const char **syms, int *n_syms, const tsr_dim *d) {
    if (d->symbol == NULL) return d->size >= 0 ? d->size : 3;
    for (int k = 0; k < *n_syms; k++)
        if (strcmp(syms[k], d->symbol) == 0) return 3 + k;
    syms[*n_syms] = d->symbol;
    return 3 + (*n_syms)++;
}

int cm_generate_inputs(check *ck) {
    size_t dims = 1;
    for (int32_t k = 0; k < ck->n_in; k++) dims += (size_t)tsr_component_input(ck->c, k)->rank;
    const char **syms = calloc(dims, sizeof *syms);
    if (!syms) return -1;
    int n_syms = 0, rc = 0;
    int32_t ints = 0;
    for (int32_t k = 0; k < ck->n_in && rc == 0; k++) {
        const tsr_field *f = tsr_component_input(ck->c, k);
        tsr_array shape = {.dtype = f->dtype, .rank = f->rank};
        for (int32_t d = 0; d < f->rank; d++)
            shape.shape[d] = symbol_size(syms, &n_syms, &f->dims[d]);
        rc = cm_own(ck, &ck->in[k], f->name, &shape);
        if (rc == 0) cm_fill(&ck->in[k], k, &ints);
    }
    free(syms);
    return rc;
}

int cm_payload_inputs(check *ck, const char *arg) {
    char *text = NULL;
    size_t len = 0;
    int rc = cli_read_payload(arg, &text, &len);
    if (rc != CLI_OK) return rc;
    tsr_payload *p = NULL;
    tsr_error err = TSR_ERROR_INIT;
    if (tsr_payload_parse(ck->c, TSR_EP_APPLY, text, len, &p, &err) != 0) {
        cli_error(NULL, "%s", err.message);
        free(text);
        return CLI_PAYLOAD;
    }
    for (int32_t k = 0; k < ck->n_in && rc == CLI_OK; k++) {
        const char *name = tsr_component_input(ck->c, k)->name;
        const tsr_array *a = tsr_payload_input(p, name);
        if (!a) {
            cli_error(NULL, "the payload lacks input '%s'", name);
            rc = CLI_PAYLOAD;
        } else if (cm_own(ck, &ck->in[k], name, a) != 0) {
            cli_error(NULL, "out of memory");
            rc = CLI_CALL_FAILED;
        } else {
            memcpy(ck->in[k].a.data, a->data, ck->in[k].bytes);
            memcpy(ck->in[k].first, a->data, ck->in[k].bytes);
        }
    }
    tsr_payload_free(p);
    free(text);
    return rc;
}

void cm_print_array(FILE *f, const owned *o) {
    fprintf(f, "%s %s(", o->name, tsr_dtype_name(o->a.dtype));
    for (int32_t d = 0; d < o->a.rank; d++)
        fprintf(f, "%s%lld", d ? ", " : "", (long long)o->a.shape[d]);
    fputs(")", f);
}
