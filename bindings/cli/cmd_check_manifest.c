/* SPDX-License-Identifier: MIT */
/* `tessera check-manifest MANIFEST [PAYLOAD]`: before a new manifest is
 * trusted in-process, run each endpoint it has once in a worker, where a
 * crash, an exit or a hang ends only the worker, with small inputs (the
 * payload's, or made from the schema), and report for each: ran, failed
 * (the cause), crashed the worker (a signal), ended it (exit) or hung
 * (timeout); whether the results are finite, the inputs came back
 * unchanged, and a second run gives the same answer. The inputs lie in the
 * worker's shared memory, so that a routine writing one it was trusted
 * not to write is seen. Status 0 only when every endpoint ran cleanly. */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define COMMAND "check-manifest"
#define DEFAULT_TIMEOUT_MS 5000
#define NOTE_MAX 8        /* lines kept of what a phase logged or printed */
#define NOTE_BYTES 400

enum { OPT_TIMEOUT = 256, OPT_OPTION, OPT_CONFIG };

typedef enum outcome { RAN, FAILED, CRASHED, EXITED, HUNG } outcome;

/* A few lines, the rest counted. */
typedef struct notes {
    int n, dropped;
    char line[NOTE_MAX][NOTE_BYTES];
} notes;

/* An array of the check: in the component's memory (the worker's shared
 * memory), with a copy of what it held first. */
typedef struct owned {
    const char *name;
    tsr_array a;
    size_t bytes;
    void *first;
} owned;

typedef struct check {
    tsr_component *c;
    const char *path;
    FILE *out;              /* the report's body, printed once the worker is gone */
    int64_t timeout_ms;
    int loading;            /* logs now are load warnings */
    notes load, printed;
    owned *in;              /* one per input, schema order */
    int32_t n_in;
    tsr_array *out_shape;   /* apply's results (shapes only), for cotangents */
    int have_shapes;
    int n_bad;
    int unsafe;             /* the first problem endangers an in-process host */
    char first[TSR_ERRMSG_MAX];   /* the first problem in short, for the verdict */
} check;

static void note(notes *ns, const char *text) {
    if (ns->n == NOTE_MAX) {
        ns->dropped++;
        return;
    }
    snprintf(ns->line[ns->n++], NOTE_BYTES, "%s", text);
}

/* Warnings of the load go into the report: those logged while it opens,
 * and those naming the manifest (a worker's lines may arrive only at a
 * later wait). Other warnings repeat what the report says (a worker that
 * died or was killed), so errors alone pass. */
static void on_log(void *user, tsr_log_level level, const char *component, const char *message) {
    check *ck = user;
    size_t n = strlen(ck->path);
    int manifest = strncmp(message, ck->path, n) == 0 && strncmp(message + n, ": ", 2) == 0;
    if (level >= TSR_LOG_WARN && (ck->loading || manifest)) note(&ck->load, message);
    else if (level >= TSR_LOG_ERROR) fprintf(stderr, "tessera[%s] ERROR: %s\n", component, message);
}

static void on_output(void *user, const char *component, const char *line) {
    (void)component;
    note(&((check *)user)->printed, line);
}

static void print_notes(FILE *f, const notes *ns, const char *prefix) {
    for (int k = 0; k < ns->n; k++) fprintf(f, "%s%s\n", prefix, ns->line[k]);
    if (ns->dropped) fprintf(f, "%s(%d more lines)\n", prefix, ns->dropped);
}

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
static void get(const void *p, tsr_dtype d, int64_t i, double v[2]) {
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

static int is_float(tsr_dtype d) {
    return d == TSR_FLOAT16 || d == TSR_FLOAT32 || d == TSR_FLOAT64 || d == TSR_COMPLEX64 ||
           d == TSR_COMPLEX128;
}

static int64_t count(const tsr_array *a) {
    int64_t n = 1;
    for (int32_t k = 0; k < a->rank; k++) n *= a->shape[k];
    return n;
}

/* The same value: equal bits, both NaN, or floats within rounding (a
 * threaded BLAS may sum in another order). */
static int same(const void *x, const void *y, tsr_dtype d, int64_t i) {
    size_t es = tsr_dtype_size(d);
    if (memcmp((const char *)x + (size_t)i * es, (const char *)y + (size_t)i * es, es) == 0)
        return 1;
    if (!is_float(d)) return 0;
    double a[2], b[2];
    get(x, d, i, a);
    get(y, d, i, b);
    for (int k = 0; k < 2; k++)
        if (!(isnan(a[k]) && isnan(b[k])) &&
            !(magnitude(a[k] - b[k]) <= 1e-12 * (magnitude(a[k]) > magnitude(b[k])
                                                     ? magnitude(a[k])
                                                     : magnitude(b[k]))))
            return 0;
    return 1;
}

/* ---- the inputs ------------------------------------------------------------ */

static int own(check *ck, owned *o, const char *name, const tsr_array *shape) {
    o->name = name;
    o->a = *shape;
    o->bytes = (size_t)count(shape) * tsr_dtype_size(shape->dtype);
    o->a.data = tsr_component_alloc(ck->c, o->bytes ? o->bytes : 1);
    o->first = malloc(o->bytes ? o->bytes : 1);
    return o->a.data && o->first ? 0 : -1;
}

static void release(check *ck, owned *o) {
    if (o->a.data) tsr_component_free_buffer(ck->c, o->a.data);
    free(o->first);
    o->a.data = o->first = NULL;
}

/* Deterministic values: a square float matrix is symmetric and strictly
 * diagonally dominant (so positive definite: LAPACK's solvers and
 * eigensolvers accept it), other floats lie in [0.25, 0.875], integers
 * count 1, 2, 3 (a scalar integer, often a size or index, is its rank
 * among them). */
static void fill(owned *o, int32_t k, int32_t *int_scalars) {
    const tsr_array *a = &o->a;
    int64_t n = count(a);
    if (a->rank == 0 && !is_float(a->dtype)) {
        put(a->data, a->dtype, 0, ++*int_scalars);
    } else if (a->rank == 2 && a->shape[0] == a->shape[1] && is_float(a->dtype)) {
        for (int64_t i = 0; i < n; i++) {
            int64_t r = i / a->shape[1], c = i % a->shape[1];
            put(a->data, a->dtype, i,
                r == c ? (double)a->shape[0] + 1 : 1.0 / (double)(1 + (r > c ? r - c : c - r)));
        }
    } else {
        for (int64_t i = 0; i < n; i++)
            put(a->data, a->dtype, i,
                is_float(a->dtype) ? 0.25 + 0.125 * (double)((i + k) % 6) : (double)(i % 3 + 1));
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

static int generate_inputs(check *ck) {
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
        rc = own(ck, &ck->in[k], f->name, &shape);
        if (rc == 0) fill(&ck->in[k], k, &ints);
    }
    free(syms);
    return rc;
}

static int payload_inputs(check *ck, const char *arg) {
    char *text = NULL;
    size_t len = 0;
    int rc = cli_read_payload(arg, &text, &len);
    if (rc != CLI_OK) return rc;
    tsr_payload *p = NULL;
    tsr_error err;
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
        } else if (own(ck, &ck->in[k], name, a) != 0) {
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

static void print_array(FILE *f, const owned *o) {
    fprintf(f, "%s %s(", o->name, tsr_dtype_name(o->a.dtype));
    for (int32_t d = 0; d < o->a.rank; d++)
        fprintf(f, "%s%lld", d ? ", " : "", (long long)o->a.shape[d]);
    fputs(")", f);
}

/* ---- one endpoint ------------------------------------------------------------ */

/* One endpoint's call with everything bound, and the seeds it owns. */
typedef struct run {
    tsr_endpoint ep;
    tsr_call *call;
    owned *seeds;
    int32_t n_seeds;
    const char **wrt_in, **wrt_out;
    int32_t n_wrt_in, n_wrt_out;
    char problems[2 * TSR_ERRMSG_MAX];
} run;

/* A problem of this run: the report's text, and in short (gist) for the
 * verdict, which names the first problem, or the first that endangers an
 * in-process host. */
static void problem(check *ck, run *r, int unsafe, const char *gist, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void problem(check *ck, run *r, int unsafe, const char *gist, const char *fmt, ...) {
    char text[TSR_ERRMSG_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    size_t used = strlen(r->problems);
    snprintf(r->problems + used, sizeof r->problems - used, "; %s", text);
    if (ck->n_bad++ == 0 || (unsafe && !ck->unsafe)) {
        snprintf(ck->first, sizeof ck->first, "%s %s", tsr_endpoint_name(r->ep), gist);
        ck->unsafe = unsafe;
    }
}

/* Every differentiable field named, each seed made like its field. */
static int prepare(check *ck, run *r) {
    tsr_component *c = ck->c;
    int32_t n_out = tsr_component_n_outputs(c);
    r->wrt_in = calloc((size_t)ck->n_in + 1, sizeof *r->wrt_in);
    r->wrt_out = calloc((size_t)n_out + 1, sizeof *r->wrt_out);
    r->seeds = calloc((size_t)(ck->n_in > n_out ? ck->n_in : n_out) + 1, sizeof *r->seeds);
    r->call = tsr_call_new(c, r->ep);
    if (!r->wrt_in || !r->wrt_out || !r->seeds || !r->call) return -1;
    for (int32_t k = 0; k < ck->n_in; k++) {
        if (tsr_call_set_input_at(r->call, k, &ck->in[k].a) != 0) return -1;
        if (tsr_component_input(c, k)->flags & TSR_FIELD_DIFFERENTIABLE)
            r->wrt_in[r->n_wrt_in++] = ck->in[k].name;
    }
    if (r->ep == TSR_EP_APPLY) return 0;
    for (int32_t o = 0; o < n_out; o++)
        if (tsr_component_output(c, o)->flags & TSR_FIELD_DIFFERENTIABLE)
            r->wrt_out[r->n_wrt_out++] = tsr_component_output(c, o)->name;
    if (tsr_call_set_wrt(r->call, r->wrt_in, r->n_wrt_in, r->wrt_out, r->n_wrt_out) != 0) return -1;
    int32_t ints = 0;
    if (r->ep == TSR_EP_JVP) {
        for (int32_t k = 0; k < r->n_wrt_in; k++) {
            owned *s = &r->seeds[r->n_seeds++];
            int32_t i = tsr_component_find_input(c, r->wrt_in[k]);
            if (own(ck, s, r->wrt_in[k], &ck->in[i].a) != 0) return -1;
            fill(s, k + 1, &ints);
            if (tsr_call_set_seed(r->call, s->name, &s->a) != 0) return -1;
        }
    } else if (r->ep == TSR_EP_VJP) {
        for (int32_t k = 0; k < r->n_wrt_out; k++) {
            owned *s = &r->seeds[r->n_seeds++];
            int32_t o = tsr_component_find_output(c, r->wrt_out[k]);
            if (own(ck, s, r->wrt_out[k], &ck->out_shape[o]) != 0) return -1;
            fill(s, k + 1, &ints);
            if (tsr_call_set_seed(r->call, s->name, &s->a) != 0) return -1;
        }
    }
    return 0;
}

static void run_free(check *ck, run *r) {
    tsr_call_free(r->call);
    for (int32_t k = 0; k < r->n_seeds; k++) release(ck, &r->seeds[k]);
    free(r->seeds);
    free(r->wrt_in);
    free(r->wrt_out);
}

/* What a failed run means. The worker's own words say how it died
 * ("killed by signal 11 (...)", "exited with status 0"). */
static outcome classify(int rc, const char *msg) {
    if (rc == TSR_E_TIMEOUT) return HUNG;
    if (rc == TSR_E_WORKER && strstr(msg, "killed by signal")) return CRASHED;
    if (rc == TSR_E_WORKER && strstr(msg, "exited with status")) return EXITED;
    return FAILED;
}

static const char *result_name(const check *ck, const run *r, int32_t k, char *buf, size_t n) {
    int32_t n_in = r->n_wrt_in ? r->n_wrt_in : 1;
    switch (r->ep) {
    case TSR_EP_APPLY: snprintf(buf, n, "output '%s'", tsr_component_output(ck->c, k)->name); break;
    case TSR_EP_JVP: snprintf(buf, n, "the tangent of '%s'", r->wrt_out[k]); break;
    case TSR_EP_VJP: snprintf(buf, n, "the gradient of '%s'", r->wrt_in[k]); break;
    default:
        snprintf(buf, n, "the block d %s / d %s", r->wrt_out[k / n_in], r->wrt_in[k % n_in]);
        break;
    }
    return buf;
}

static void check_finite(check *ck, run *r) {
    for (int32_t k = 0; k < tsr_call_n_results(r->call); k++) {
        const tsr_array *a = tsr_call_result(r->call, k);
        if (!is_float(a->dtype)) continue;
        for (int64_t i = 0; i < count(a); i++) {
            double v[2];
            get(a->data, a->dtype, i, v);
            if (isfinite(v[0]) && isfinite(v[1])) continue;
            char name[192];
            problem(ck, r, 0, "gave results that are not finite",
                    "gave results that are NOT finite (%s, element %lld, is %g)",
                    result_name(ck, r, k, name, sizeof name), (long long)i, v[0]);
            return;
        }
    }
}

/* The inputs and seeds as they were, or the first element written. */
static void check_unchanged(check *ck, run *r) {
    for (int32_t k = 0; k < ck->n_in + r->n_seeds; k++) {
        owned *o = k < ck->n_in ? &ck->in[k] : &r->seeds[k - ck->n_in];
        for (int64_t i = 0; i < count(&o->a); i++) {
            if (same(o->a.data, o->first, o->a.dtype, i)) continue;
            double was[2], now[2];
            get(o->first, o->a.dtype, i, was);
            get(o->a.data, o->a.dtype, i, now);
            char gist[256];
            snprintf(gist, sizeof gist, "wrote its %s '%s', declared \"readonly\"",
                     k < ck->n_in ? "input" : r->ep == TSR_EP_JVP ? "tangent of" : "cotangent of",
                     o->name);
            problem(ck, r, 1, gist,
                    "WROTE its %s '%s' (element %lld was %g, is %g): the routine writes an "
                    "argument declared \"readonly\"; in-process that is the caller's array",
                    k < ck->n_in ? "input" : r->ep == TSR_EP_JVP ? "tangent of" : "cotangent of",
                    o->name, (long long)i, was[0], now[0]);
            memcpy(o->a.data, o->first, o->bytes);   /* the second run gets the same inputs */
            return;
        }
    }
}

/* A private copy of each result of the first run. */
static int keep_results(const run *r, tsr_array **kept, int32_t *n) {
    *n = tsr_call_n_results(r->call);
    *kept = calloc((size_t)*n + 1, sizeof **kept);
    if (!*kept) return -1;
    for (int32_t k = 0; k < *n; k++) {
        const tsr_array *a = tsr_call_result(r->call, k);
        size_t bytes = (size_t)count(a) * tsr_dtype_size(a->dtype);
        (*kept)[k] = *a;
        (*kept)[k].data = malloc(bytes ? bytes : 1);
        if (!(*kept)[k].data) return -1;
        memcpy((*kept)[k].data, a->data, bytes);
    }
    return 0;
}

static void check_repeat(check *ck, run *r, const tsr_array *kept, int32_t n) {
    for (int32_t k = 0; k < n && k < tsr_call_n_results(r->call); k++) {
        const tsr_array *a = tsr_call_result(r->call, k);
        for (int64_t i = 0; i < count(a) && i < count(&kept[k]); i++) {
            if (same(a->data, kept[k].data, a->dtype, i)) continue;
            double first[2], again[2];
            get(kept[k].data, a->dtype, i, first);
            get(a->data, a->dtype, i, again);
            char name[192];
            problem(ck, r, 0, "gave another answer when run again",
                    "gave NOT the same answer twice (%s, element %lld: %.17g, then %.17g); a "
                    "routine that adds to its results needs them zeroed (\"zero\": true)",
                    result_name(ck, r, k, name, sizeof name), (long long)i, first[0], again[0]);
            return;
        }
    }
}

static const char *const outcome_words[] = {
    [FAILED] = "FAILED", [CRASHED] = "CRASHED the worker", [EXITED] = "ENDED the worker process",
    [HUNG] = "HUNG"};

/* A run that did not return. */
static void report_failure(check *ck, run *r, outcome o) {
    const char *msg = tsr_call_errmsg(r->call);
    char gist[256];
    if (o == HUNG) {
        snprintf(gist, sizeof gist, "hung (no answer within %lld ms)", (long long)ck->timeout_ms);
        problem(ck, r, 1, gist,
                "HUNG: no answer within %lld ms (--timeout-ms), the worker was killed",
                (long long)ck->timeout_ms);
    } else if (o == FAILED) {
        problem(ck, r, 0, "failed with these inputs", "FAILED: %s", msg);
    } else {
        /* the worker's words: "killed by signal 11 (...)", "exited with status 0" */
        const char *how = strstr(msg, o == CRASHED ? "killed by signal" : "exited with status");
        snprintf(gist, sizeof gist, "%s the worker (%s)",
                 o == CRASHED ? "crashed" : "ended", how);
        problem(ck, r, 1, gist, "%s: %s%s", outcome_words[o], msg,
                o == EXITED ? " (a Fortran STOP, LAPACK's XERBLA or exit: in-process it ends the "
                              "host)"
                            : " (in-process it ends the host)");
    }
}

static void check_endpoint(check *ck, tsr_endpoint ep) {
    run r = {.ep = ep};
    tsr_array *kept = NULL;
    int32_t n_kept = 0;
    ck->printed.n = ck->printed.dropped = 0;
    if (ep == TSR_EP_VJP && !ck->have_shapes) {
        problem(ck, &r, 0, "was not run",
                "was NOT RUN: apply gave no results, whose shapes its cotangents take");
    } else if (prepare(ck, &r) != 0) {
        problem(ck, &r, 0, "could not be prepared", "FAILED: could not be prepared: %s",
                r.call ? tsr_call_errmsg(r.call) : "out of memory");
    } else if (tsr_call_run(r.call) != 0) {
        report_failure(ck, &r, classify(tsr_call_errcode(r.call), tsr_call_errmsg(r.call)));
    } else {
        if (ep == TSR_EP_APPLY)
            for (int32_t k = 0; k < tsr_call_n_results(r.call); k++) {
                ck->out_shape[k] = *tsr_call_result(r.call, k);
                ck->have_shapes = 1;
            }
        check_finite(ck, &r);
        check_unchanged(ck, &r);
        if (keep_results(&r, &kept, &n_kept) != 0)
            problem(ck, &r, 0, "failed", "FAILED: out of memory");
        else if (tsr_call_run(r.call) != 0)
            report_failure(ck, &r, classify(tsr_call_errcode(r.call), tsr_call_errmsg(r.call)));
        else check_repeat(ck, &r, kept, n_kept);
    }
    if (r.problems[0]) fprintf(ck->out, "%s: %s\n", tsr_endpoint_name(ep), r.problems + 2);
    else fprintf(ck->out, "%s: ran; results finite; inputs unchanged; the same answer twice\n",
                 tsr_endpoint_name(ep));
    print_notes(ck->out, &ck->printed, "  | ");
    for (int32_t k = 0; k < n_kept; k++) free(kept[k].data);
    free(kept);
    run_free(ck, &r);
}

/* ---- the command ----------------------------------------------------------- */

typedef struct check_args {
    tsr_options *lib;
    int64_t timeout_ms;
    int help;
    char **positional;
    int n_positional;
} check_args;

static int parse(int argc, char **argv, check_args *a) {
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"timeout-ms", required_argument, NULL, OPT_TIMEOUT},
        {"option", required_argument, NULL, OPT_OPTION},
        {"config", required_argument, NULL, OPT_CONFIG},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    a->timeout_ms = DEFAULT_TIMEOUT_MS;
    a->lib = tsr_options_new();
    if (!a->lib) {
        cli_error(COMMAND, "out of memory");
        return CLI_USAGE;
    }
    opterr = 0;
    int opt, rc = CLI_OK;
    while (rc == CLI_OK && (opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (opt) {
        case 'h': a->help = 1; break;
        case OPT_TIMEOUT:
            a->timeout_ms = strtoll(optarg, &end, 10);
            if (end == optarg || *end || a->timeout_ms <= 0 || a->timeout_ms > INT32_MAX)
                rc = cli_usage_error(COMMAND, "--timeout-ms takes a positive number of "
                                              "milliseconds, got '%s'", optarg);
            break;
        case OPT_OPTION:
            if (strncmp(optarg, "mode=", 5) == 0)
                rc = cli_usage_error(COMMAND, "check-manifest always runs the component in a "
                                              "worker; --option mode is not taken");
            else if (strncmp(optarg, "timeout_ms=", 11) == 0)
                rc = cli_usage_error(COMMAND, "say --timeout-ms %s", optarg + 11);
            else rc = cli_set_option(COMMAND, a->lib, optarg);
            break;
        case OPT_CONFIG: rc = cli_set_config(COMMAND, a->lib, optarg); break;
        case ':':
            rc = cli_usage_error(COMMAND, "option '%s' needs a value", argv[optind - 1]);
            break;
        default: rc = cli_usage_error(COMMAND, "unknown option '%s'", argv[optind - 1]); break;
        }
    }
    a->positional = argv + optind;
    a->n_positional = argc - optind;
    return rc;
}

/* Worker mode whatever else was asked, the timeout, a dead worker replaced
 * at the next endpoint, and the logs and output collected for the report. */
static int worker_options(check_args *a, check *ck) {
    char ms[32];
    snprintf(ms, sizeof ms, "%lld", (long long)a->timeout_ms);
    tsr_error err;
    if (tsr_options_set(a->lib, "mode", "worker", &err) != 0 ||
        tsr_options_set(a->lib, "timeout_ms", ms, &err) != 0 ||
        tsr_options_set(a->lib, "restart", "auto", &err) != 0) {
        cli_error(COMMAND, "%s", err.message);
        return CLI_USAGE;
    }
    tsr_options_set_log(a->lib, on_log, ck);
    tsr_options_set_output(a->lib, on_output, ck);
    return CLI_OK;
}

static void print_verdict(const check *ck) {
    if (ck->n_bad == 0)
        printf("verdict: safe to run in-process: every endpoint ran cleanly in a worker%s\n",
               ck->load.n ? " (but read the load warnings above)" : "");
    else if (ck->unsafe)
        printf("verdict: NOT safe to run in-process: %s; run it in --mode worker until the "
               "manifest is fixed\n", ck->first);
    else
        printf("verdict: NOT shown safe to run in-process: %s; fix the manifest, or give a "
               "PAYLOAD the routine accepts, and check again\n", ck->first);
}

/* Give back the arrays and the worker; its last lines (load warnings
 * among them) arrive by then. */
static void finish(check *ck) {
    for (int32_t k = 0; ck->in && k < ck->n_in; k++) release(ck, &ck->in[k]);
    free(ck->in);
    free(ck->out_shape);
    ck->in = NULL;
    ck->out_shape = NULL;
    tsr_close(ck->c);
    ck->c = NULL;
}

/* The endpoints' lines into ck->out; 0, or -1 when out of memory. */
static int check_all(check *ck, int from_payload) {
    fprintf(ck->out, "inputs (%s):", from_payload ? "from the payload" : "generated");
    for (int32_t k = 0; k < ck->n_in; k++) {
        fputs(k ? ", " : " ", ck->out);
        print_array(ck->out, &ck->in[k]);
    }
    fputs(ck->n_in ? "\n" : " none\n", ck->out);
    for (int ep = TSR_EP_APPLY; ep <= TSR_EP_JACOBIAN; ep++)
        if (tsr_component_has_native_endpoint(ck->c, (tsr_endpoint)ep))
            check_endpoint(ck, (tsr_endpoint)ep);
    return ferror(ck->out) ? -1 : 0;
}

static int run_checks(check_args *a, check *ck) {
    int rc = worker_options(a, ck);
    if (rc != CLI_OK) return rc;
    char path_buf[PATH_MAX];
    ck->path = cli_plugin_path(a->positional[0], path_buf, sizeof path_buf);
    tsr_error err;
    ck->loading = 1;
    int open_rc = tsr_open(ck->path, a->lib, &ck->c, &err);
    ck->loading = 0;
    if (open_rc != 0) {
        for (int k = 0; k < ck->load.n; k++)
            fprintf(stderr, "tessera: warning: %s\n", ck->load.line[k]);
        cli_error(NULL, "%s", err.message);
        return CLI_LOAD_FAILED;
    }
    char name[256];
    snprintf(name, sizeof name, "%s", tsr_component_name(ck->c));
    ck->n_in = tsr_component_n_inputs(ck->c);
    ck->in = calloc((size_t)ck->n_in + 1, sizeof *ck->in);
    ck->out_shape = calloc((size_t)tsr_component_n_outputs(ck->c) + 1, sizeof *ck->out_shape);
    if (!ck->in || !ck->out_shape) {
        cli_error(NULL, "out of memory");
        return CLI_CALL_FAILED;
    }
    if (a->n_positional == 2) rc = payload_inputs(ck, a->positional[1]);
    else if (generate_inputs(ck) != 0) {
        cli_error(NULL, "out of memory");
        rc = CLI_CALL_FAILED;
    }
    if (rc != CLI_OK) return rc;

    char *body = NULL;
    size_t body_len = 0;
    ck->out = open_memstream(&body, &body_len);
    int failed = !ck->out || check_all(ck, a->n_positional == 2) != 0;
    finish(ck);
    if (ck->out && fclose(ck->out) != 0) failed = 1;
    if (failed) {
        free(body);
        cli_error(NULL, "out of memory");
        return CLI_CALL_FAILED;
    }
    printf("check-manifest: %s (component '%s'), in a worker, timeout %lld ms\n", ck->path, name,
           (long long)ck->timeout_ms);
    print_notes(stdout, &ck->load, "load: warning: ");
    fputs(body, stdout);
    free(body);
    print_verdict(ck);
    if (fflush(stdout) != 0) {
        cli_error(NULL, "cannot write the report to stdout");
        return CLI_OUTPUT;
    }
    return ck->n_bad ? CLI_CALL_FAILED : CLI_OK;
}

int cli_cmd_check_manifest(int argc, char **argv) {
    check_args a;
    int rc = parse(argc, argv, &a);
    if (rc == CLI_OK && a.help) {
        cli_print_check_manifest_help();
    } else if (rc == CLI_OK && (a.n_positional < 1 || a.n_positional > 2)) {
        rc = cli_usage_error(COMMAND,
                             a.n_positional == 0 ? "missing MANIFEST" : "too many arguments");
    } else if (rc == CLI_OK) {
        check ck = {.timeout_ms = a.timeout_ms};
        rc = run_checks(&a, &ck);
        finish(&ck);
    }
    tsr_options_free(a.lib);
    return rc;
}
