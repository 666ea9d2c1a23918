/* SPDX-License-Identifier: MIT */
/* Parsing a request: the JSON text, its top-level keys, the payload's
 * lifetime and accessors. */
#include <stdlib.h>
#include <string.h>

#include "codecs/binref_batch.h"
#include "codecs/json_hoist.h"
#include "payload_internal.h"
#include "codecs/payload_options.h"

static const char *const apply_keys[] = {"inputs", NULL};
static const char *const jacobian_keys[] = {"inputs", "jac_inputs", "jac_outputs", NULL};
static const char *const jvp_keys[] = {"inputs", "jvp_inputs", "jvp_outputs", "tangent_vector", NULL};
static const char *const vjp_keys[] = {"inputs", "vjp_inputs", "vjp_outputs", "cotangent_vector", NULL};
static const char *const hvp_keys[] = {"inputs", "hvp_inputs", "hvp_outputs", "cotangent_vector",
                                       "tangent_vector", NULL};

const char *const *payload_keys(tsr_endpoint ep) {
    switch (ep) {
    case TSR_EP_JVP: return jvp_keys;
    case TSR_EP_VJP: return vjp_keys;
    case TSR_EP_HVP: return hvp_keys;
    case TSR_EP_JACOBIAN: return jacobian_keys;
    default: return apply_keys;
    }
}

static bool is_known_key(const char *const *keys, const char *key) {
    for (; *keys != NULL; keys++)
        if (strcmp(*keys, key) == 0) return true;
    return false;
}

static int check_top_level(json_t *root, tsr_endpoint ep, const payload_ctx *ctx) {
    if (!json_is_object(root))
        return payload_fail(ctx, TSR_E_PAYLOAD, NULL, "the payload must be a JSON object");
    const char *const *keys = payload_keys(ep);
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value) {
        if (is_known_key(keys, key)) continue;
        char expected[256] = "";
        size_t used = 0;
        for (const char *const *k = keys; *k != NULL && used < sizeof expected; k++)
            used += (size_t)snprintf(expected + used, sizeof expected - used, "%s\"%s\"",
                                     k == keys ? "" : ", ", *k);
        return payload_fail(ctx, TSR_E_PAYLOAD, key,
                                "unknown key \"%s\" in the payload (this endpoint takes %s)",
                                key, expected);
    }
    for (const char *const *k = keys; *k != NULL; k++) {
        if (json_object_get(root, *k) == NULL)
            return payload_fail(ctx, TSR_E_PAYLOAD, *k, "the payload lacks \"%s\"", *k);
    }
    return 0;
}

static tsr_payload *payload_new(const tsr_component *c, tsr_endpoint ep) {
    tsr_payload *p = calloc(1, sizeof *p);
    if (p == NULL) return NULL;
    p->component = c;
    p->endpoint = ep;
    p->abstract = ep == TSR_EP_ABSTRACT_EVAL;
    p->n_inputs = tsr_component_n_inputs(c);
    size_t n = p->n_inputs > 0 ? (size_t)p->n_inputs : 1;
    p->inputs = calloc(n, sizeof *p->inputs);
    p->given = calloc(n, sizeof *p->given);
    p->kinds = calloc(n, sizeof *p->kinds);
    if (p->inputs == NULL || p->given == NULL || p->kinds == NULL) {
        tsr_payload_free(p);
        return NULL;
    }
    return p;
}

TSR_API int tsr_payload_parse_ex(const tsr_component *c, tsr_endpoint ep, const char *text,
                                 size_t len, const tsr_input_options *opts, tsr_payload **out,
                                 tsr_error *err) {
    if (out != NULL) *out = NULL;
    payload_ctx ctx = {.err = err};
    if (c == NULL || out == NULL || (text == NULL && len > 0))
        return payload_fail(&ctx, TSR_E_ARGUMENT, NULL,
                                "tsr_payload_parse: component, text and out are required");
    ctx.component = tsr_component_name(c);
    ctx.endpoint = tsr_endpoint_name(ep);
    if (ctx.endpoint == NULL || (int)ep < 0 || ep >= TSR_EP_COUNT)
        return payload_fail(&ctx, TSR_E_ARGUMENT, NULL, "unknown endpoint %d", (int)ep);
    tsr_input_options in;
    int rc = input_settings(opts, &in, &ctx);
    if (rc != 0) return rc;
    uint64_t limit = component_payload_limit(c);
    if (limit != 0 && len > limit)
        return payload_fail(&ctx, TSR_E_LIMIT, NULL,
                                "the payload is %zu bytes, more than max_payload_bytes (%llu); "
                                "raise the option max_payload_bytes to allow it",
                                len, (unsigned long long)limit);

    json_error_t jerr;
    hoist_doc hoist;
    hoist_status status;
    uint64_t max_values = component_payload_values(c);
    json_t *root = hoist_parse_limited(text != NULL ? text : "", len, JSON_REJECT_DUPLICATES,
                                           max_values, &hoist, &jerr, &status);
    if (root == NULL && status == HOIST_TOO_MANY)
        return payload_fail(&ctx, TSR_E_LIMIT, NULL,
                                "the payload holds more than max_payload_values (%llu) JSON "
                                "values (a list of %d numbers or more counts as one); raise the "
                                "option max_payload_values to allow it",
                                (unsigned long long)max_values, HOIST_MIN_LEAVES);
    if (root == NULL && status == HOIST_NOMEM)
        return payload_fail(&ctx, TSR_E_NOMEM, NULL, "out of memory");
    if (root == NULL)
        return payload_fail(&ctx, TSR_E_PAYLOAD, NULL,
                                "malformed JSON at line %d, column %d: %s",
                                jerr.line, jerr.column, jerr.text);
    ctx.hoist = &hoist;
    payload_limits limits = {0};
    component_array_limits(c, &limits.max_array_bytes, &limits.max_call_bytes);
    ctx.limits = &limits;
    /* No batch: a binref array is then refused (array_decode.c). */
    ctx.binrefs = in.refuse_files ? NULL
                                  : binref_batch_new(in.base_dir, in.allow_escape != 0,
                                                         binref_io_of(in.io));
    rc = ctx.binrefs == NULL && !in.refuse_files
             ? payload_fail(&ctx, TSR_E_NOMEM, NULL, "out of memory")
             : 0;
    if (rc == 0) rc = check_top_level(root, ep, &ctx);
    tsr_payload *p = NULL;
    if (rc == 0) {
        p = payload_new(c, ep);
        if (p == NULL) rc = payload_fail(&ctx, TSR_E_NOMEM, NULL, "out of memory");
    }
    if (rc == 0) rc = payload_read_inputs(p, json_object_get(root, "inputs"), &ctx);
    if (rc == 0) rc = payload_read_wrt(p, root, &ctx);
    /* Binref arrays are read together, once every one is known. */
    if (rc == 0) rc = binref_batch_run(ctx.binrefs, &ctx);
    binref_batch_free(ctx.binrefs);
    ctx.binrefs = NULL;
    /* JSON values are written once their arrays are read; they may still
     * point into the text through the hoist. */
    if (rc == 0) rc = payload_finish_json(p, &ctx);
    json_decref(root);
    hoist_free(&hoist);
    ctx.hoist = NULL;
    if (rc != 0) {
        tsr_payload_free(p);
        return rc;
    }
    payload_ok(&ctx);
    *out = p;
    return 0;
}

TSR_API int tsr_payload_parse(const tsr_component *c, tsr_endpoint ep, const char *text,
                              size_t len, tsr_payload **out, tsr_error *err) {
    return tsr_payload_parse_ex(c, ep, text, len, NULL, out, err);
}

static void free_names(char **names, int32_t n) {
    if (names == NULL) return;
    for (int32_t k = 0; k < n; k++) free(names[k]);
    free(names);
}

TSR_API void tsr_payload_free(tsr_payload *p) {
    if (p == NULL) return;
    if (p->inputs != NULL)
        for (int32_t i = 0; i < p->n_inputs; i++) free(p->inputs[i].buffer);
    if (p->kinds != NULL)
        for (int32_t i = 0; i < p->n_inputs; i++) {
            kind_value_release_tree(&p->kinds[i]);
            free(p->kinds[i].text);
        }
    free(p->kinds);
    if (p->seeds != NULL)
        for (int32_t k = 0; k < p->n_seeds; k++) free(p->seeds[k].buffer);
    if (p->tangents != NULL)
        for (int32_t k = 0; k < p->n_tangents; k++) free(p->tangents[k].buffer);
    free(p->inputs);
    free(p->given);
    free(p->seeds);
    free(p->tangents);
    free_names(p->wrt_in, p->n_wrt_in);
    free_names(p->wrt_out, p->n_wrt_out);
    free(p);
}

TSR_API tsr_endpoint tsr_payload_endpoint(const tsr_payload *p) {
    return p != NULL ? p->endpoint : TSR_EP_APPLY;
}

TSR_API const tsr_array *tsr_payload_input(const tsr_payload *p, const char *name) {
    if (p == NULL || name == NULL) return NULL;
    int32_t i = tsr_component_find_input(p->component, name);
    if (i < 0 || i >= p->n_inputs || !p->given[i]) return NULL;
    return &p->inputs[i].array;
}

TSR_API const tsr_array *tsr_payload_seed(const tsr_payload *p, const char *name) {
    if (p == NULL || name == NULL || p->seeds == NULL) return NULL;
    char **names = p->endpoint == TSR_EP_JVP ? p->wrt_in : p->wrt_out;
    for (int32_t k = 0; k < p->n_seeds; k++)
        if (strcmp(names[k], name) == 0) return &p->seeds[k].array;
    return NULL;
}

TSR_API const tsr_array *tsr_payload_tangent(const tsr_payload *p, const char *name) {
    if (p == NULL || name == NULL || p->tangents == NULL) return NULL;
    for (int32_t k = 0; k < p->n_tangents; k++)
        if (strcmp(p->wrt_in[k], name) == 0) return &p->tangents[k].array;
    return NULL;
}

TSR_API int32_t tsr_payload_n_wrt_inputs(const tsr_payload *p) {
    return p != NULL ? p->n_wrt_in : 0;
}

TSR_API const char *tsr_payload_wrt_input(const tsr_payload *p, int32_t k) {
    return p != NULL && k >= 0 && k < p->n_wrt_in ? p->wrt_in[k] : NULL;
}

TSR_API int32_t tsr_payload_n_wrt_outputs(const tsr_payload *p) {
    return p != NULL ? p->n_wrt_out : 0;
}

TSR_API const char *tsr_payload_wrt_output(const tsr_payload *p, int32_t k) {
    return p != NULL && k >= 0 && k < p->n_wrt_out ? p->wrt_out[k] : NULL;
}
