/* SPDX-License-Identifier: MIT */
/* A call as requests to a UM-Bridge model (umbridge.h). UM-Bridge
 * differentiates one output vector by one input vector per request, so
 * an endpoint over several is a sum of requests:
 *   apply  Evaluate, once
 *   vjp    result k = sum over outputs o of Gradient(outWrt=o, inWrt=k, sens=w_o)
 *   jvp    result k = sum over inputs j of ApplyJacobian(outWrt=k, inWrt=j, vec=v_j)
 *   hvp    result k = sum over o, j of ApplyHessian(outWrt=o, inWrt1=k, inWrt2=j,
 *                                                   sens=w_o, vec=v_j)
 * A seed that is all zeros adds nothing (each product is linear in it):
 * its requests are not sent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umbridge.h"

static int all_zero(const double *v, int64_t len) {
    for (int64_t i = 0; i < len; i++)
        if (v[i] != 0.0) return 0;
    return 1;
}

static int64_t in_size(const umb_model *m, int32_t i) { return m->sizes[i]; }
static int64_t out_size(const umb_model *m, int32_t o) { return m->sizes[m->n_in + o]; }

static int evaluate(umb_model *m, const tsr_args *a, json_t *input, const http_cancel *cx,
                    char *why, size_t n) {
    json_t *body = json_object(), *ans = NULL;
    int rc = body && json_object_set(body, "input", input) == 0 ? 0 : TSR_E_NOMEM;
    if (!rc) rc = umb_exchange(m, UMB_EVALUATE, body, cx, m->timeout_ms, &ans, why, n);
    json_decref(body);
    if (rc) return rc;
    json_t *out = json_object_get(ans, "output");
    char cause[TSR_ERRMSG_MAX - 256];
    if (!json_is_array(out) || (int32_t)json_array_size(out) != m->n_out) {
        snprintf(cause, sizeof cause, "\"output\" is not a list of %d vectors", (int)m->n_out);
        rc = TSR_E_PLUGIN_RESULT;
    }
    for (int32_t o = 0; !rc && o < m->n_out; o++) {
        char what[64];
        snprintf(what, sizeof what, "output[%d] (out%d)", (int)o, (int)o);
        rc = umb_vector_read(json_array_get(out, (size_t)o), out_size(m, o), what,
                             a->results[o].data, cause, sizeof cause);
    }
    if (rc) snprintf(why, n, "POST %s: %s", m->shown[UMB_EVALUATE], cause);
    json_decref(ans);
    return rc;
}

/* One derivative request: its answer's "output", of len values, added to acc. */
static int product(umb_model *m, umb_route r, json_t *body, int64_t len, double *acc,
                   double *scratch, const http_cancel *cx, char *why, size_t n) {
    json_t *ans = NULL;
    int rc = umb_exchange(m, r, body, cx, m->timeout_ms, &ans, why, n);
    if (rc) return rc;
    char cause[TSR_ERRMSG_MAX - 256];
    rc = umb_vector_read(json_object_get(ans, "output"), len, "\"output\"", scratch, cause,
                         sizeof cause);
    json_decref(ans);
    if (rc) {
        snprintf(why, n, "POST %s: %s", m->shown[r], cause);
        return rc;
    }
    for (int64_t i = 0; i < len; i++) acc[i] += scratch[i];
    return 0;
}

/* A body with the input and the given indices and vectors. */
static json_t *derivative_body(json_t *input, const char *k1, int32_t v1, const char *k2,
                               int32_t v2, const char *k3, int32_t v3, const char *vk1,
                               json_t *vec1, const char *vk2, json_t *vec2) {
    json_t *b = json_object();
    int bad = !b || json_object_set(b, "input", input) != 0 ||
              json_object_set_new(b, k1, json_integer(v1)) != 0 ||
              json_object_set_new(b, k2, json_integer(v2)) != 0 ||
              (k3 && json_object_set_new(b, k3, json_integer(v3)) != 0) ||
              json_object_set(b, vk1, vec1) != 0 || (vk2 && json_object_set(b, vk2, vec2) != 0);
    if (bad) {
        json_decref(b);
        return NULL;
    }
    return b;
}

/* The seeds as JSON lists (NULL where a seed is all zeros). */
static int seeds_json(const umb_model *m, const tsr_args *a, json_t **out, char *why, size_t n) {
    for (int32_t s = 0; s < a->n_seeds; s++) {
        int is_cotangent = a->endpoint == TSR_EP_VJP ||
                           (a->endpoint == TSR_EP_HVP && s < a->n_wrt_out);
        int32_t field = is_cotangent ? m->n_in + a->wrt_out[s]
                                     : a->wrt_in[a->endpoint == TSR_EP_HVP ? s - a->n_wrt_out : s];
        int64_t len = m->sizes[field];
        const double *v = a->seeds[s].data;
        char what[64];
        snprintf(what, sizeof what, "the %s of %s", is_cotangent ? "cotangent" : "tangent",
                 m->fields[field].name);
        int rc = all_zero(v, len) ? 0 : umb_vector_json(v, len, what, &out[s], why, n);
        if (rc) return rc;
    }
    return 0;
}

static int derivatives(umb_model *m, const tsr_args *a, json_t *input, const http_cancel *cx,
                       char *why, size_t n) {
    json_t **seed = calloc((size_t)a->n_seeds + 1, sizeof *seed);
    int64_t most = 1;
    for (int32_t k = 0; k < m->n_in + m->n_out; k++)
        if (m->sizes[k] > most) most = m->sizes[k];
    double *scratch = malloc((size_t)most * sizeof *scratch);
    int rc = seed && scratch ? 0 : TSR_E_NOMEM;
    if (rc) snprintf(why, n, "out of memory");
    if (!rc) rc = seeds_json(m, a, seed, why, n);
    for (int32_t k = 0; !rc && k < a->n_results; k++) {
        double *acc = a->results[k].data;
        int64_t len = a->endpoint == TSR_EP_JVP ? out_size(m, a->wrt_out[k]) : in_size(m, a->wrt_in[k]);
        memset(acc, 0, (size_t)len * sizeof *acc);
        if (a->endpoint == TSR_EP_VJP) {
            for (int32_t o = 0; !rc && o < a->n_wrt_out; o++) {
                if (!seed[o]) continue;
                json_t *b = derivative_body(input, "outWrt", a->wrt_out[o], "inWrt", a->wrt_in[k],
                                            NULL, 0, "sens", seed[o], NULL, NULL);
                rc = b ? product(m, UMB_GRADIENT, b, len, acc, scratch, cx, why, n) : TSR_E_NOMEM;
                json_decref(b);
            }
        } else if (a->endpoint == TSR_EP_JVP) {
            for (int32_t j = 0; !rc && j < a->n_wrt_in; j++) {
                if (!seed[j]) continue;
                json_t *b = derivative_body(input, "outWrt", a->wrt_out[k], "inWrt", a->wrt_in[j],
                                            NULL, 0, "vec", seed[j], NULL, NULL);
                rc = b ? product(m, UMB_APPLY_JACOBIAN, b, len, acc, scratch, cx, why, n)
                       : TSR_E_NOMEM;
                json_decref(b);
            }
        } else {
            for (int32_t o = 0; !rc && o < a->n_wrt_out; o++)
                for (int32_t j = 0; !rc && j < a->n_wrt_in; j++) {
                    json_t *w = seed[o], *v = seed[a->n_wrt_out + j];
                    if (!w || !v) continue;
                    json_t *b = derivative_body(input, "outWrt", a->wrt_out[o], "inWrt1",
                                                a->wrt_in[k], "inWrt2", a->wrt_in[j], "sens", w,
                                                "vec", v);
                    rc = b ? product(m, UMB_APPLY_HESSIAN, b, len, acc, scratch, cx, why, n)
                           : TSR_E_NOMEM;
                    json_decref(b);
                }
        }
        if (rc == TSR_E_NOMEM && !why[0]) snprintf(why, n, "out of memory for a request");
    }
    for (int32_t s = 0; seed && s < a->n_seeds; s++) json_decref(seed[s]);
    free(seed);
    free(scratch);
    return rc;
}

int umb_run(umb_model *m, const tsr_args *a, const http_cancel *cx, char *why, size_t n) {
    static const int route_of[TSR_EP_COUNT] = {
        [TSR_EP_APPLY] = 0, [TSR_EP_VJP] = 1, [TSR_EP_JVP] = 2, [TSR_EP_HVP] = 3,
        [TSR_EP_JACOBIAN] = -1, [TSR_EP_ABSTRACT_EVAL] = -1};
    int which = a->endpoint < TSR_EP_COUNT ? route_of[a->endpoint] : -1;
    static const char *const names[4] = {"Evaluate", "Gradient", "ApplyJacobian", "ApplyHessian"};
    why[0] = '\0';
    if (which < 0) {
        snprintf(why, n, "a UM-Bridge model has no such endpoint");
        return TSR_E_UNSUPPORTED;
    }
    if (!m->supports[which]) {
        snprintf(why, n, "the model '%s' does not support %s (its /ModelInfo)", m->name,
                 names[which]);
        return TSR_E_UNSUPPORTED;
    }
    json_t *input;
    int rc = umb_inputs_json(m, a, &input, why, n);
    if (rc) return rc;
    rc = a->endpoint == TSR_EP_APPLY ? evaluate(m, a, input, cx, why, n)
                                     : derivatives(m, a, input, cx, why, n);
    json_decref(input);
    return rc;
}
