/* SPDX-License-Identifier: MIT */
/* A UM-Bridge model's schema (umbridge.h): the server's protocol and
 * models (GET /Info), the model's support (POST /ModelInfo) and the sizes
 * of its vectors under the config (POST /InputSizes, /OutputSizes), read
 * into a descriptor: inputs in0..inN, outputs out0..outM, float64 rank-1
 * fields of fixed sizes, differentiable when the model has a derivative. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umbridge.h"

/* GET /Info: protocol 1.0, and the model: the one named, or the only one. */
static int read_info(umb_model *m, char *why, size_t n) {
    json_t *a;
    int rc = umb_exchange(m, UMB_INFO, NULL, NULL, m->connect_ms, &a, why, n);
    if (rc) return rc == TSR_E_PLUGIN_RESULT || rc == TSR_E_UNSUPPORTED ? TSR_E_LOAD : rc;
    json_t *version = json_object_get(a, "protocolVersion"), *models = json_object_get(a, "models");
    rc = TSR_E_LOAD;
    if (!json_is_number(version) || !json_is_array(models))
        snprintf(why, n, "GET %s: not a UM-Bridge server (no protocolVersion and models)",
                 m->shown[UMB_INFO]);
    else if (json_number_value(version) != 1.0)
        snprintf(why, n, "GET %s: UM-Bridge protocol %g, Tessera speaks 1.0", m->shown[UMB_INFO],
                 json_number_value(version));
    else {
        size_t count = json_array_size(models), found = count;
        char list[512] = "";
        size_t used = 0;
        for (size_t i = 0; i < count; i++) {
            const char *s = json_string_value(json_array_get(models, i));
            if (!s) continue;
            if (m->name && strcmp(s, m->name) == 0) found = i;
            int w = snprintf(list + used, sizeof list - used, "%s'%s'", used ? ", " : "", s);
            if (w > 0 && (size_t)w < sizeof list - used) used += (size_t)w;
        }
        if (m->name && found == count)
            snprintf(why, n, "the server has no model '%s' (its models: %s)", m->name,
                     used ? list : "none");
        else if (!m->name && count != 1)
            snprintf(why, n,
                     "the server has %zu models (%s): name one in the URL's fragment "
                     "(%s#name) or with the option umbridge_model",
                     count, used ? list : "none", m->base_shown);
        else if (!m->name && !json_is_string(json_array_get(models, 0)))
            snprintf(why, n, "GET %s: the model's name is not a string", m->shown[UMB_INFO]);
        else if (!m->name && !(m->name = strdup(json_string_value(json_array_get(models, 0))))) {
            snprintf(why, n, "out of memory");
            rc = TSR_E_NOMEM;
        } else
            rc = 0;
    }
    json_decref(a);
    return rc;
}

static int read_support(umb_model *m, char *why, size_t n) {
    json_t *a, *body = json_object();
    if (!body) return TSR_E_NOMEM;
    int rc = umb_exchange(m, UMB_MODEL_INFO, body, NULL, m->connect_ms, &a, why, n);
    json_decref(body);
    if (rc) return rc;
    static const char *const keys[4] = {"Evaluate", "Gradient", "ApplyJacobian", "ApplyHessian"};
    json_t *support = json_object_get(a, "support");
    for (int k = 0; k < 4; k++) m->supports[k] = json_is_true(json_object_get(support, keys[k]));
    if (!json_is_object(support)) {
        snprintf(why, n, "POST %s: the answer has no \"support\" object", m->shown[UMB_MODEL_INFO]);
        rc = TSR_E_LOAD;
    }
    json_decref(a);
    return rc;
}

/* POST /InputSizes or /OutputSizes: a list of sizes, each 0 or more. */
static int read_sizes(umb_model *m, umb_route r, const char *key, int64_t **sizes, int32_t *count,
                      char *why, size_t n) {
    json_t *a, *body = json_object();
    if (!body) return TSR_E_NOMEM;
    int rc = umb_exchange(m, r, body, NULL, m->connect_ms, &a, why, n);
    json_decref(body);
    if (rc) return rc;
    json_t *list = json_object_get(a, key);
    size_t k = json_is_array(list) ? json_array_size(list) : 0;
    rc = TSR_E_LOAD;
    if (!json_is_array(list))
        snprintf(why, n, "POST %s: the answer has no list \"%s\"", m->shown[r], key);
    else if (k > UMB_MAX_VECTORS)
        snprintf(why, n, "POST %s: %zu vectors, more than Tessera takes (%d)", m->shown[r], k,
                 UMB_MAX_VECTORS);
    else if (!(*sizes = calloc(k ? k : 1, sizeof **sizes))) {
        snprintf(why, n, "out of memory");
        rc = TSR_E_NOMEM;
    } else {
        rc = 0;
        for (size_t i = 0; !rc && i < k; i++) {
            json_t *s = json_array_get(list, i);
            if (!json_is_integer(s) || json_integer_value(s) < 0 ||
                json_integer_value(s) > UMB_MAX_VECTOR_LEN) {
                snprintf(why, n, "POST %s: %s[%zu] is not a size (an integer from 0 to 2^40)",
                         m->shown[r], key, i);
                rc = TSR_E_LOAD;
            } else
                (*sizes)[i] = json_integer_value(s);
        }
        *count = (int32_t)k;
    }
    json_decref(a);
    return rc;
}

static int build_descriptor(umb_model *m, int64_t *in, int64_t *out, tsr_endpoint_fn fn, char *why,
                            size_t n) {
    int32_t total = m->n_in + m->n_out;
    m->sizes = calloc((size_t)total + 1, sizeof *m->sizes);
    m->fields = calloc((size_t)total + 1, sizeof *m->fields);
    m->dims = calloc((size_t)total + 1, sizeof *m->dims);
    m->names = malloc((size_t)total * 12 + 1);
    if (!m->sizes || !m->fields || !m->dims || !m->names) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    int differentiable = m->supports[1] || m->supports[2] || m->supports[3];
    char *name = m->names;
    for (int32_t k = 0; k < total; k++) {
        int is_in = k < m->n_in;
        int32_t idx = is_in ? k : k - m->n_in;
        m->sizes[k] = is_in ? in[idx] : out[idx];
        m->dims[k] = (tsr_dim){NULL, m->sizes[k]};
        int w = snprintf(name, 12, "%s%d", is_in ? "in" : "out", (int)idx);
        m->fields[k] = (tsr_field){.name = name, .dtype = TSR_FLOAT64, .rank = 1, .dims = &m->dims[k],
                                   .flags = differentiable ? TSR_FIELD_DIFFERENTIABLE : 0u};
        name += w + 1;
    }
    tsr_plugin *d = &m->desc;
    *d = (tsr_plugin){TSR_PLUGIN_HEADER, .name = m->name, .version = "UM-Bridge 1.0",
                      .description = "a UM-Bridge model", .inputs = m->fields,
                      .n_inputs = m->n_in, .outputs = m->fields + m->n_in,
                      .n_outputs = m->n_out, .apply = fn};
    if (m->supports[1]) d->vjp = fn;
    if (m->supports[2]) d->jvp = fn;
    if (m->supports[3]) d->hvp = fn;
    return 0;
}

int umb_discover(umb_model *m, tsr_endpoint_fn endpoint_fn, char *why, size_t n) {
    int64_t *in = NULL, *out = NULL;
    int rc = read_info(m, why, n);
    if (!rc) rc = read_support(m, why, n);
    if (!rc) rc = read_sizes(m, UMB_INPUT_SIZES, "inputSizes", &in, &m->n_in, why, n);
    if (!rc) rc = read_sizes(m, UMB_OUTPUT_SIZES, "outputSizes", &out, &m->n_out, why, n);
    if (!rc) rc = build_descriptor(m, in, out, endpoint_fn, why, n);
    free(in);
    free(out);
    return rc;
}
