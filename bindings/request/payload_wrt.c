/* SPDX-License-Identifier: MIT */
/* The differentiation arguments of a request: the wrt lists
 * (jac_inputs, jvp_outputs, ...) and the tangent or cotangent vector
 * (hvp: both). */
#include <stdlib.h>
#include <string.h>

#include "payload_internal.h"

typedef struct wrt_keys {
    const char *inputs;  /* "jvp_inputs" */
    const char *outputs; /* "jvp_outputs" */
    const char *seeds;   /* "tangent_vector"; NULL for jacobian */
    const char *tangents; /* hvp: "tangent_vector" besides its cotangents; else NULL */
} wrt_keys;

static bool wrt_keys_of(tsr_endpoint ep, wrt_keys *k) {
    switch (ep) {
    case TSR_EP_JACOBIAN: *k = (wrt_keys){"jac_inputs", "jac_outputs", NULL, NULL}; return true;
    case TSR_EP_JVP: *k = (wrt_keys){"jvp_inputs", "jvp_outputs", "tangent_vector", NULL}; return true;
    case TSR_EP_VJP:
        *k = (wrt_keys){"vjp_inputs", "vjp_outputs", "cotangent_vector", NULL};
        return true;
    case TSR_EP_HVP:
        *k = (wrt_keys){"hvp_inputs", "hvp_outputs", "cotangent_vector", "tangent_vector"};
        return true;
    default: return false;
    }
}

static bool dtype_is_float(tsr_dtype d) {
    return d == TSR_FLOAT32 || d == TSR_FLOAT64 || d == TSR_FLOAT16;
}

static bool listed(char **names, int32_t n, const char *name) {
    for (int32_t k = 0; k < n; k++)
        if (strcmp(names[k], name) == 0) return true;
    return false;
}

/* The field a wrt name stands for: the field of that name, or the JSON
 * field a path inside it ("weights.{a}", "layers.[0].k") starts with. */
static int32_t wrt_field(const tsr_component *c, const char *name, bool of_inputs) {
    int32_t index = of_inputs ? tsr_component_find_input(c, name) : tsr_component_find_output(c, name);
    if (index >= 0) return index;
    char prefix[PAYLOAD_PATH_MAX];
    for (const char *dot = strchr(name, '.'); dot != NULL; dot = strchr(dot + 1, '.')) {
        size_t n = (size_t)(dot - name);
        if (n >= sizeof prefix) break;
        memcpy(prefix, name, n);
        prefix[n] = '\0';
        index = of_inputs ? tsr_component_find_input(c, prefix) : tsr_component_find_output(c, prefix);
        if (index < 0) continue;
        const tsr_field *f = of_inputs ? tsr_component_input(c, index) : tsr_component_output(c, index);
        return f->kind == TSR_KIND_JSON && dot[1] != '\0' ? index : -1;
    }
    return -1;
}

/* A list of differentiable field names, each named once (Tesseract
 * refuses a list that names a field twice, as tsr_call_set_wrt does). */
static int read_names(const tsr_component *c, json_t *list, const char *key, bool of_inputs,
                      char ***out, int32_t *n_out, const payload_ctx *ctx) {
    if (!json_is_array(list))
        return payload_fail(ctx, TSR_E_PAYLOAD, key, "\"%s\" must be a list of field names", key);
    size_t n = json_array_size(list);
    if (n == 0)
        return payload_fail(ctx, TSR_E_PAYLOAD, key, "\"%s\" must name at least one field", key);
    if (n > INT32_MAX) return payload_fail(ctx, TSR_E_PAYLOAD, key, "\"%s\" is too long", key);
    char **names = calloc(n, sizeof *names);
    if (names == NULL) return payload_fail(ctx, TSR_E_NOMEM, key, "out of memory");
    *out = names;
    *n_out = 0;
    for (size_t k = 0; k < n; k++) {
        char path[PAYLOAD_PATH_MAX];
        path_index(path, key, k);
        json_t *item = json_array_get(list, k);
        if (!json_is_string(item))
            return payload_fail(ctx, TSR_E_PAYLOAD, path, "a field name must be a string");
        const char *name = json_string_value(item);
        int32_t index = wrt_field(c, name, of_inputs);
        if (index < 0)
            return payload_fail(ctx, TSR_E_UNKNOWN_FIELD, path, "\"%s\" is not an %s field",
                                    name, of_inputs ? "input" : "output");
        const tsr_field *field = of_inputs ? tsr_component_input(c, index) : tsr_component_output(c, index);
        if (!(field->flags & TSR_FIELD_DIFFERENTIABLE))
            return payload_fail(ctx, TSR_E_NOT_DIFFERENTIABLE, path,
                                    "\"%s\" is not differentiable", name);
        if (listed(names, *n_out, name))
            return payload_fail(ctx, TSR_E_PAYLOAD, path, "\"%s\" is named twice in \"%s\"",
                                    name, key);
        names[*n_out] = strdup(name);
        if (names[*n_out] == NULL) return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory");
        (*n_out)++;
    }
    return 0;
}

/* tangent_vector / cotangent_vector: exactly one array per listed field,
 * shaped and typed like that field. vector_key names the object;
 * tangents says whether it is keyed by the inputs' list (else the
 * outputs'). The arrays go to *out, *n_out counting those decoded. */
static int read_vector(tsr_payload *p, json_t *vector, const char *vector_key, bool tangents,
                       const char *list_key, decoded_array **out, int32_t *n_out,
                       const payload_ctx *ctx) {
    char **names = tangents ? p->wrt_in : p->wrt_out;
    int32_t n = tangents ? p->n_wrt_in : p->n_wrt_out;
    if (!json_is_object(vector))
        return payload_fail(ctx, TSR_E_PAYLOAD, vector_key,
                                "\"%s\" must be an object keyed by the fields of \"%s\"",
                                vector_key, list_key);
    const char *key;
    json_t *value;
    json_object_foreach(vector, key, value) {
        if (!listed(names, n, key)) {
            char path[PAYLOAD_PATH_MAX];
            path_join(path, vector_key, key);
            return payload_fail(ctx, TSR_E_UNKNOWN_FIELD, path,
                                    "\"%s\" is not among \"%s\"", key, list_key);
        }
    }
    *out = calloc(n > 0 ? (size_t)n : 1, sizeof **out);
    if (*out == NULL) return payload_fail(ctx, TSR_E_NOMEM, vector_key, "out of memory");
    for (int32_t k = 0; k < n; k++) {
        char path[PAYLOAD_PATH_MAX];
        path_join(path, vector_key, names[k]);
        json_t *item = json_object_get(vector, names[k]);
        if (item == NULL)
            return payload_fail(ctx, TSR_E_MISSING, path,
                                    "missing; every field of \"%s\" needs one", list_key);
        const tsr_component *c = p->component;
        int32_t index = wrt_field(c, names[k], tangents);
        const tsr_field *field = tangents ? tsr_component_input(c, index) : tsr_component_output(c, index);
        /* A path inside a JSON value: a float array whose shape the
         * component checks. */
        bool inside = field->kind == TSR_KIND_JSON;
        int rc = decode_array_value(item, inside ? TSR_DTYPE_INVALID : field->dtype, false, ctx,
                                    path, &(*out)[k]);
        if (rc == 0 && inside && !dtype_is_float((*out)[k].array.dtype))
            rc = decoded_convert(&(*out)[k], TSR_FLOAT64, ctx, path);
        *n_out = k + 1;   /* a failed one's buffer is freed with the others */
        if (rc != 0) return rc;
    }
    return 0;
}

int payload_read_wrt(tsr_payload *p, json_t *request, const payload_ctx *ctx) {
    wrt_keys keys;
    if (!wrt_keys_of(p->endpoint, &keys)) return 0;
    int rc = read_names(p->component, json_object_get(request, keys.inputs), keys.inputs, true,
                        &p->wrt_in, &p->n_wrt_in, ctx);
    if (rc == 0)
        rc = read_names(p->component, json_object_get(request, keys.outputs), keys.outputs, false,
                        &p->wrt_out, &p->n_wrt_out, ctx);
    /* jvp's seeds are tangents of its inputs; vjp's and hvp's cotangents
     * of its outputs. */
    bool jvp = p->endpoint == TSR_EP_JVP;
    if (rc == 0 && keys.seeds != NULL)
        rc = read_vector(p, json_object_get(request, keys.seeds), keys.seeds, jvp,
                         jvp ? keys.inputs : keys.outputs, &p->seeds, &p->n_seeds, ctx);
    if (rc == 0 && keys.tangents != NULL)
        rc = read_vector(p, json_object_get(request, keys.tangents), keys.tangents, true,
                         keys.inputs, &p->tangents, &p->n_tangents, ctx);
    return rc;
}
