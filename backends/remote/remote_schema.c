/* SPDX-License-Identifier: MIT */
/* A served Tesseract's OpenAPI document as a descriptor: where its input
 * and output models are, which endpoints it lists, its name. The fields
 * themselves are read by remote_fields.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote_schema_read.h"
#include "tessera/tessera.h"

void remote_schema_free(remote_schema *s) {
    if (!s) return;
    remote_defaults_free(s);
    for (size_t i = 0; i < s->n_strings; i++) free(s->strings[i]);
    free(s->strings);
    free(s->fields);
    free(s->dims);
    free(s->extra);
    free(s);
}

const remote_field *remote_input(const remote_schema *s, int32_t i) { return &s->extra[i]; }

const remote_field *remote_output(const remote_schema *s, int32_t o) {
    return &s->extra[s->desc.n_inputs + o];
}

static json_t *path_get(json_t *v, const char *const *keys) {
    for (; *keys && json_is_object(v); keys++) v = json_object_get(v, *keys);
    return *keys ? NULL : v;
}

/* One side's model: tesseract-core names it Apply_InputSchema or
 * Apply_OutputSchema; else it is found through the request and response
 * models of /apply (ApplyInputSchema.properties.inputs, ApplyOutputSchema). */
static int read_side(field_reader *r, const char *name, const char *wrapper) {
    json_t *model = json_object_get(r->schemas, name);
    json_t *outer = json_object_get(r->schemas, wrapper);
    r->diff = json_object_get(outer, "differentiable_arrays");
    if (!model && outer) {
        const char *inputs[] = {"properties", "inputs", NULL};
        json_t *via = strcmp(r->side, "input") == 0 ? path_get(outer, inputs) : outer;
        model = via ? remote_resolve(r, via, wrapper, NULL, NULL) : NULL;
        if (!model && via) return TSR_E_LOAD;
    }
    if (!json_is_object(json_object_get(model, "properties"))) {
        snprintf(r->why, r->n,
                 "its /openapi.json has no %s model (components.schemas.%s): not a Tesseract's "
                 "API document",
                 r->side, name);
        return TSR_E_LOAD;
    }
    return remote_read_fields(r, model, "", 0);
}

static const char *const endpoint_paths[TSR_EP_COUNT] = {
    [TSR_EP_APPLY] = "/apply",
    [TSR_EP_JVP] = "/jacobian_vector_product",
    [TSR_EP_VJP] = "/vector_jacobian_product",
    [TSR_EP_JACOBIAN] = "/jacobian",
    [TSR_EP_ABSTRACT_EVAL] = "/abstract_eval",
    [TSR_EP_HVP] = "/hvp",
};

const char *remote_endpoint_path(tsr_endpoint ep) {
    return (int)ep >= 0 && ep < TSR_EP_COUNT ? endpoint_paths[ep] : NULL;
}

static int read_endpoints(json_t *paths, tsr_plugin *d, tsr_endpoint_fn fn, char *why, size_t n) {
    tsr_endpoint_fn *slot[TSR_EP_COUNT] = {&d->apply, &d->jvp, &d->vjp, &d->jacobian,
                                           &d->abstract_eval, &d->hvp};
    for (int e = 0; e < TSR_EP_COUNT; e++)
        if (json_is_object(json_object_get(paths, endpoint_paths[e]))) *slot[e] = fn;
    if (d->apply) return 0;
    snprintf(why, n, "its /openapi.json lists no /apply: not a Tesseract's API document");
    return TSR_E_LOAD;
}

/* name, version and description from "info"; kept copies. */
static int read_info(remote_schema *s, json_t *root, char *why, size_t n) {
    const char *title[] = {"info", "title", NULL}, *version[] = {"info", "version", NULL},
               *about[] = {"info", "description", NULL};
    json_t *t = path_get(root, title), *v = path_get(root, version), *a = path_get(root, about);
    tsr_plugin *d = &s->desc;
    d->name = remote_keep(s, json_is_string(t) && *json_string_value(t) ? json_string_value(t)
                                                                         : "remote");
    d->version = remote_keep(s, json_is_string(v) ? json_string_value(v) : "");
    d->description = remote_keep(s, json_is_string(a) ? json_string_value(a) : "");
    if (d->name && d->version && d->description) return 0;
    snprintf(why, n, "out of memory");
    return TSR_E_NOMEM;
}

static int read_document(remote_schema *s, json_t *root, tsr_endpoint_fn fn, char *why,
                         size_t n) {
    const char *at[] = {"components", "schemas", NULL};
    json_t *schemas = path_get(root, at);
    if (!json_is_object(schemas)) {
        snprintf(why, n,
                 "its /openapi.json has no components.schemas: not a Tesseract's API document");
        return TSR_E_LOAD;
    }
    size_t visits = 0;
    field_reader r = {.s = s, .schemas = schemas, .side = "input", .visits = &visits, .why = why,
                      .n = n};
    int rc = read_side(&r, "Apply_InputSchema", "ApplyInputSchema");
    int32_t n_in = s->n_fields;
    r.side = "output";
    if (!rc) rc = read_side(&r, "Apply_OutputSchema", "ApplyOutputSchema");
    if (!rc) rc = read_endpoints(json_object_get(root, "paths"), &s->desc, fn, why, n);
    if (!rc) rc = read_info(s, root, why, n);
    if (rc) return rc;
    for (int32_t k = 0; k < s->n_fields; k++)
        s->fields[k].dims = s->fields[k].rank ? s->dims + (size_t)k * TSR_MAX_FIELD_RANK : NULL;
    remote_defaults_link(s, n_in);
    tsr_plugin *d = &s->desc;
    d->abi_version = TSR_PLUGIN_ABI_VERSION;
    d->struct_size = sizeof *d;
    d->field_size = sizeof(tsr_field);
    /* Calls go out on a pool of connections under a lock (remote_backend.c). */
    d->flags = TSR_PLUGIN_THREAD_SAFE;
    d->inputs = s->fields;
    d->n_inputs = n_in;
    d->outputs = s->fields + n_in;
    d->n_outputs = s->n_fields - n_in;
    return 0;
}

int remote_schema_read(const char *text, size_t len, tsr_endpoint_fn fn, remote_schema **out,
                       char *why, size_t n) {
    *out = NULL;
    if (remote_doc_values_over(text, len, REMOTE_MAX_DOC_VALUES)) {
        snprintf(why, n,
                 "its /openapi.json holds more than %zu JSON values, more than a Tesseract's "
                 "document of the most fields Tessera reads would; refused before parsing it",
                 REMOTE_MAX_DOC_VALUES);
        return TSR_E_LIMIT;
    }
    json_error_t jerr;
    json_t *root = json_loadb(text, len, 0, &jerr);
    if (!json_is_object(root)) {
        if (root) snprintf(why, n, "its /openapi.json is not a JSON object");
        else
            snprintf(why, n, "its /openapi.json is not JSON (line %d, column %d: %s)", jerr.line,
                     jerr.column, jerr.text);
        json_decref(root);
        return TSR_E_LOAD;
    }
    remote_schema *s = calloc(1, sizeof *s);
    int rc = s ? read_document(s, root, fn, why, n) : TSR_E_NOMEM;
    if (!s) snprintf(why, n, "out of memory");
    json_decref(root);
    if (rc) {
        remote_schema_free(s);
        return rc;
    }
    *out = s;
    return 0;
}
