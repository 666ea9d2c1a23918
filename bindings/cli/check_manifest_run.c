/* SPDX-License-Identifier: MIT */
/* check-manifest's run of one endpoint: bound with every differentiable
 * field, run twice in the worker, its outcome classified (ran, failed,
 * crashed, ended the worker, hung) and its results checked (finite,
 * inputs unchanged, the same twice). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "check_manifest.h"

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
    /* hvp has a cotangent per output and a tangent per input */
    r->seeds = calloc((size_t)ck->n_in + (size_t)n_out + 1, sizeof *r->seeds);
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
            if (cm_own(ck, s, r->wrt_in[k], &ck->in[i].a) != 0) return -1;
            cm_fill(s, k + 1, &ints);
            if (tsr_call_set_seed(r->call, s->name, &s->a) != 0) return -1;
        }
    } else if (r->ep == TSR_EP_VJP || r->ep == TSR_EP_HVP) {
        for (int32_t k = 0; k < r->n_wrt_out; k++) {
            owned *s = &r->seeds[r->n_seeds++];
            int32_t o = tsr_component_find_output(c, r->wrt_out[k]);
            if (cm_own(ck, s, r->wrt_out[k], &ck->out_shape[o]) != 0) return -1;
            cm_fill(s, k + 1, &ints);
            if (tsr_call_set_seed(r->call, s->name, &s->a) != 0) return -1;
        }
    }
    if (r->ep == TSR_EP_HVP) {
        for (int32_t k = 0; k < r->n_wrt_in; k++) {
            owned *s = &r->seeds[r->n_seeds++];
            int32_t i = tsr_component_find_input(c, r->wrt_in[k]);
            if (cm_own(ck, s, r->wrt_in[k], &ck->in[i].a) != 0) return -1;
            cm_fill(s, r->n_wrt_out + k + 1, &ints);
            if (tsr_call_set_tangent(r->call, s->name, &s->a) != 0) return -1;
        }
    }
    return 0;
}

static void run_free(check *ck, run *r) {
    tsr_call_free(r->call);
    for (int32_t k = 0; k < r->n_seeds; k++) cm_release(ck, &r->seeds[k]);
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
    case TSR_EP_HVP: snprintf(buf, n, "the hvp of '%s'", r->wrt_in[k]); break;
    default:
        snprintf(buf, n, "the block d %s / d %s", r->wrt_out[k / n_in], r->wrt_in[k % n_in]);
        break;
    }
    return buf;
}

static void check_finite(check *ck, run *r) {
    for (int32_t k = 0; k < tsr_call_n_results(r->call); k++) {
        const tsr_array *a = tsr_call_result(r->call, k);
        if (!cm_is_float(a->dtype)) continue;
        for (int64_t i = 0; i < cm_count(a); i++) {
            double v[2];
            cm_get(a->data, a->dtype, i, v);
            if (isfinite(v[0]) && isfinite(v[1])) continue;
            char name[192];
            problem(ck, r, 0, "gave results that are not finite",
                    "gave results that are NOT finite (%s, element %lld, is %g)",
                    result_name(ck, r, k, name, sizeof name), (long long)i, v[0]);
            return;
        }
    }
}

/* What seed k is: jvp's are tangents; vjp's cotangents; hvp's
 * cotangents, then tangents. */
static const char *seed_kind(const run *r, int32_t k) {
    int tangent = r->ep == TSR_EP_JVP || (r->ep == TSR_EP_HVP && k >= r->n_wrt_out);
    return tangent ? "tangent of" : "cotangent of";
}

/* The inputs and seeds as they were, or the first element written. */
static void check_unchanged(check *ck, run *r) {
    for (int32_t k = 0; k < ck->n_in + r->n_seeds; k++) {
        owned *o = k < ck->n_in ? &ck->in[k] : &r->seeds[k - ck->n_in];
        const char *what = k < ck->n_in ? "input" : seed_kind(r, k - ck->n_in);
        for (int64_t i = 0; i < cm_count(&o->a); i++) {
            if (cm_same(o->a.data, o->first, o->a.dtype, i)) continue;
            double was[2], now[2];
            cm_get(o->first, o->a.dtype, i, was);
            cm_get(o->a.data, o->a.dtype, i, now);
            char gist[256];
            snprintf(gist, sizeof gist, "wrote its %s '%s', declared \"readonly\"", what, o->name);
            problem(ck, r, 1, gist,
                    "WROTE its %s '%s' (element %lld was %g, is %g): the routine writes an "
                    "argument declared \"readonly\"; in-process that is the caller's array",
                    what, o->name, (long long)i, was[0], now[0]);
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
        size_t bytes = (size_t)cm_count(a) * tsr_dtype_size(a->dtype);
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
        for (int64_t i = 0; i < cm_count(a) && i < cm_count(&kept[k]); i++) {
            if (cm_same(a->data, kept[k].data, a->dtype, i)) continue;
            double first[2], again[2];
            cm_get(kept[k].data, a->dtype, i, first);
            cm_get(a->data, a->dtype, i, again);
            char name[192];
            problem(ck, r, 0, "gave another answer when run again",
                    "gave NOT the same answer twice (%s, element %lld: %.17g, then %.17g): the "
                    "routine keeps state between calls that changes its results",
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

void cm_print_notes(FILE *f, const notes *ns, const char *prefix) {
    for (int k = 0; k < ns->n; k++) fprintf(f, "%s%s\n", prefix, ns->line[k]);
    if (ns->dropped) fprintf(f, "%s(%d more lines)\n", prefix, ns->dropped);
}

void cm_check_endpoint(check *ck, tsr_endpoint ep) {
    run r = {.ep = ep};
    tsr_array *kept = NULL;
    int32_t n_kept = 0;
    ck->printed.n = ck->printed.dropped = 0;
    if ((ep == TSR_EP_VJP || ep == TSR_EP_HVP) && !ck->have_shapes) {
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
    cm_print_notes(ck->out, &ck->printed, "  | ");
    for (int32_t k = 0; k < n_kept; k++) free(kept[k].data);
    free(kept);
    run_free(ck, &r);
}
