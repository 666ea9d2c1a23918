/* SPDX-License-Identifier: MIT */
/* UM-Bridge (protocol 1.0) beside Tesseract's routes in `tessera serve`:
 * the routes (umbridge_route.c), the mapping of a component's fields to
 * UM-Bridge's float64 vectors and back (umbridge_map.c), and the
 * shared-memory segments of the *ShMem routes (umbridge_shm.c). */
#ifndef TESSERA_SERVE_UMBRIDGE_H
#define TESSERA_SERVE_UMBRIDGE_H

#include <jansson.h>
#include <stdint.h>

#include "serve_internal.h"

/* A UM-Bridge error: its type ("InvalidInput", ...), HTTP status, message. */
typedef struct um_err {
    const char *type;
    int status;
    char message[768];
} um_err;

/* Set e and return -1. */
int um_fail(um_err *e, const char *type, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* One UM-Bridge vector; data malloc'd (NULL when len is 0). */
typedef struct um_vec {
    double *data;
    int64_t len;
} um_vec;

/* ---- umbridge_map.c ---------------------------------------------------- */

/* Whether a field is a UM-Bridge vector: an array of float16, float32 or
 * float64 of a declared rank. Every other field (integers, bool, complex,
 * text, JSON, any-rank arrays) is set from config or takes its default. */
int um_is_vector(const tsr_field *f);

/* The schema indices of the vector inputs (outputs) in schema order, into
 * idx (at most max); their count. */
int32_t um_vector_inputs(const tsr_component *c, int32_t *idx, int32_t max);
int32_t um_vector_outputs(const tsr_component *c, int32_t *idx, int32_t max);

/* The most vector fields a component may have to be served over UM-Bridge. */
#define UM_MAX_VECTORS 256

/* Whether a --umbridge-size list ("n=2,m=3"; NULL or "": none) is well
 * formed; 0, or -1 with the cause in why. */
int um_sizes_check(const char *list, char *why, size_t why_len);

/* /InputSizes (outputs 0) or /OutputSizes (outputs 1): one size per vector
 * field, symbols from config keys then the serve option. *sizes malloc'd. */
int um_sizes(const tsr_component *c, const char *option_sizes, const json_t *config, int outputs,
             int64_t **sizes, int32_t *n, um_err *e);

typedef enum um_op { UM_EVALUATE, UM_GRADIENT, UM_APPLY_JACOBIAN, UM_APPLY_HESSIAN } um_op;

typedef struct um_args {
    um_op op;
    const json_t *config;     /* NULL: {} */
    const um_vec *in;          /* n_in vectors */
    int32_t n_in;
    int64_t out_wrt, in_wrt, in_wrt2;
    um_vec sens, vec;          /* Gradient, ApplyHessian: sens; ApplyJacobian, ApplyHessian: vec */
} um_args;

/* Where um_run hands result k (len values, valid during the call only):
 * 0, or -1 with e set. */
typedef int (*um_sink)(void *user, int32_t k, const double *data, int64_t len, um_err *e);

/* Check everything a client sent, run the call, and hand each result
 * vector to sink in order: one per vector output for Evaluate, one
 * otherwise. 0, or -1 with e set. */
int um_run(tsr_component *c, const char *option_sizes, const um_args *a, um_sink sink,
           void *user, um_err *e);
/* Free n vectors' data and the array. Accepts NULL. */
void um_free_vecs(um_vec *v, int32_t n);

/* ---- umbridge_shm.c ---------------------------------------------------- */

/* The segment name prefix + "_" + role + "_" + tid (+ "_" + index when
 * index >= 0), checked: prefix '/' and 1..64 of [A-Za-z0-9_.-], tid 1..32
 * of [A-Za-z0-9_-]. 0, or -1 with an InvalidInput error. */
int um_shm_name(char *out, size_t n, const char *prefix, const char *role, const char *tid,
                int64_t index, um_err *e);
/* Read count float64 from the segment (which must be a regular segment of
 * at least that size, checked with fstat before reading) with pread, never
 * mapping it: a segment truncated meanwhile is a short read, an error. */
int um_shm_read(const char *name, double *dst, int64_t count, um_err *e);
/* Write count float64 into an existing segment of at least that size. */
int um_shm_write(const char *name, const double *src, int64_t count, um_err *e);

/* ---- umbridge_route.c -------------------------------------------------- */

/* Answer rq when its path is a UM-Bridge route: 1; else 0 (rs untouched). */
int umbridge_handle(const serve_config *cfg, const serve_request *rq, serve_response *rs);

#endif
