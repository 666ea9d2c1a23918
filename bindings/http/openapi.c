/* SPDX-License-Identifier: MIT */
/* The OpenAPI document of a served component, shaped as tesseract-core
 * writes it, for what its clients read: `paths` (which endpoints exist),
 * `Apply_InputSchema` / `Apply_OutputSchema` (every field: an array is an
 * object whose object_type is the constant "array", with its shape and
 * dtype, any rank as tesseract-core writes Array[..., X]; nested models
 * are nested objects; TEXT fields strings, with their choices as "enum";
 * JSON fields a schema any JSON value meets, since Tessera knows no more
 * of them), and `ApplyInputSchema` / `ApplyOutputSchema` with
 * `differentiable_arrays` and `field_order` (tesseract-jax). A component
 * without outputs has an empty Apply_OutputSchema. */
#include <string.h>

#include "serve_internal.h"

#include <tessera/payload.h>

#define OPENAPI_MAX_FIELD_TITLE 256

static const char *const array_dtypes[] = {"float16", "float32", "float64", "int8",
                                           "int16", "int32", "int64", "bool",
                                           "uint8", "uint16", "uint32", "uint64",
                                           "complex64", "complex128"};

const char *serve_endpoint_route(tsr_endpoint ep) {
    switch (ep) {
    case TSR_EP_APPLY: return "apply";
    case TSR_EP_JVP: return "jacobian_vector_product";
    case TSR_EP_VJP: return "vector_jacobian_product";
    case TSR_EP_HVP: return "hvp";
    case TSR_EP_JACOBIAN: return "jacobian";
    case TSR_EP_ABSTRACT_EVAL: return "abstract_eval";
    default: return "";
    }
}

/* The dtypes a field takes; complex ones only where the field is complex
 * (as tesseract-core lists those castable to the field's). */
static json_t *dtype_enum(tsr_dtype dtype) {
    int complex_field = dtype == TSR_COMPLEX64 || dtype == TSR_COMPLEX128;
    json_t *e = json_array();
    for (size_t i = 0; i < sizeof array_dtypes / sizeof array_dtypes[0]; i++)
        if (complex_field || strncmp(array_dtypes[i], "complex", 7) != 0)
            json_array_append_new(e, json_string(array_dtypes[i]));
    return e;
}

/* tesseract-core's model title: EncodedArrayModel__<shape>__<dtype>__<flags>,
 * the shape "anyrank", "scalar" or its axes joined by '_' ("any" for a
 * free one). */
static void array_title(const tsr_field *f, int diff, char *title, size_t cap) {
    int used = snprintf(title, cap, "EncodedArrayModel__");
    if (f->rank == TSR_RANK_ANY) used += snprintf(title + used, cap - (size_t)used, "anyrank");
    else if (f->rank == 0) used += snprintf(title + used, cap - (size_t)used, "scalar");
    for (int32_t k = 0; k < f->rank && used > 0 && (size_t)used < cap; k++) {
        const tsr_dim *d = &f->dims[k];
        if (d->symbol || d->size < 0)
            used += snprintf(title + used, cap - (size_t)used, "%sany", k ? "_" : "");
        else
            used += snprintf(title + used, cap - (size_t)used, "%s%lld", k ? "_" : "",
                             (long long)d->size);
    }
    if (used > 0 && (size_t)used < cap)
        snprintf(title + used, cap - (size_t)used, "__%s__%s", tsr_dtype_name(f->dtype),
                 diff ? "DIFFERENTIABLE" : "noflags");
}

/* [3, null] for a shape of a fixed and a free axis (symbols are free);
 * null for any rank. */
static json_t *shape_list(const tsr_field *f) {
    if (f->rank == TSR_RANK_ANY) return json_null();
    json_t *s = json_array();
    for (int32_t k = 0; k < f->rank; k++)
        json_array_append_new(s, f->dims[k].symbol || f->dims[k].size < 0
                                     ? json_null()
                                     : json_integer(f->dims[k].size));
    return s;
}

static json_t *shape_schema(const tsr_field *f) {
    if (f->rank == TSR_RANK_ANY)
        return json_pack("{s:{s:s}, s:s, s:s, s:s}", "items", "type", "integer", "type", "array",
                         "title", "Shape", "description", "Shape of the array");
    json_t *items = json_array();
    for (int32_t k = 0; k < f->rank; k++) {
        const tsr_dim *d = &f->dims[k];
        json_array_append_new(items, d->symbol || d->size < 0
                                         ? json_pack("{s:s, s:f}", "type", "integer",
                                                     "minimum", 0.0)
                                         : json_pack("{s:s, s:[I]}", "type", "integer", "enum",
                                                     (json_int_t)d->size));
    }
    json_t *s = json_pack("{s:s, s:i, s:i, s:s}", "type", "array", "minItems", f->rank,
                          "maxItems", f->rank, "title", "Shape");
    json_object_set_new(s, "prefixItems", items);
    return s;
}

static json_t *array_schema(const tsr_field *f) {
    int diff = (f->flags & TSR_FIELD_DIFFERENTIABLE) != 0;
    char title[OPENAPI_MAX_FIELD_TITLE];
    array_title(f, diff, title, sizeof title);
    json_t *dtype = json_pack("{s:s, s:o, s:[s], s:s, s:s}", "type", "string", "enum",
                              dtype_enum(f->dtype), "examples", tsr_dtype_name(f->dtype), "title",
                              "Dtype", "description", "Data type of the array");
    json_t *props = json_pack("{s:{s:s, s:s, s:s, s:s, s:s}, s:o, s:o, s:{s:s}}", "object_type",
                              "type", "string", "const", "array", "default", "array", "title",
                              "Object Type", "description",
                              "Indicates that this dict can be parsed to an array.", "shape",
                              shape_schema(f), "dtype", dtype, "data", "title", "Data");
    json_t *a = json_pack("{s:o, s:b, s:s, s:[s,s,s], s:s}", "properties", props,
                          "additionalProperties", 0, "type", "object", "required", "shape",
                          "dtype", "data", "title", title);
    if (f->doc) json_object_set_new(a, "description", json_string(f->doc));
    json_object_set_new(a, "array_flags", diff ? json_pack("[s]", "DIFFERENTIABLE") : json_array());
    return a;
}

/* A field's default as pydantic writes it: the plain value (number, bool,
 * nested list); NULL where it has none (complex, NaN: pydantic too leaves
 * out a default it cannot serialize). */
static json_t *default_value(const tsr_array *d) {
    char *text = NULL;
    tsr_error err = TSR_ERROR_INIT;
    if (tsr_array_to_json(d, TSR_ENCODING_JSON, &text, &err) != 0) return NULL;
    json_t *encoded = json_loads(text, 0, NULL);
    tsr_json_free(text);
    json_t *plain = json_object_get(json_object_get(encoded, "data"), "buffer");
    json_incref(plain);
    json_decref(encoded);
    return plain;
}

/* pydantic's title of a field: str.title() of its name, '_' as spaces. */
static json_t *field_title(const char *name) {
    char t[OPENAPI_MAX_FIELD_TITLE];
    size_t k = 0;
    int after_letter = 0;
    for (; name[k] && k + 1 < sizeof t; k++) {
        char ch = name[k];
        int letter = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
        if (letter && !after_letter && ch >= 'a') ch = (char)(ch - 'a' + 'A');
        else if (letter && after_letter && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
        t[k] = ch == '_' ? ' ' : ch;
        after_letter = letter;
    }
    t[k] = '\0';
    return json_string(t);
}

static int is_value(const tsr_field *f) {
    return f->kind == TSR_KIND_TEXT || f->kind == TSR_KIND_JSON;
}

/* A TEXT field as pydantic writes str (Literal[...] and str enums with
 * "enum"), a JSON field as any JSON value ({}, tesseract-core's
 * JsonValue): titled, described, with its default (the text of a TEXT
 * field, the value of a JSON one). */
static json_t *value_schema(const tsr_field *f, const char *leaf) {
    json_t *v = f->kind == TSR_KIND_TEXT ? json_pack("{s:s}", "type", "string") : json_object();
    if (f->kind == TSR_KIND_TEXT && f->choices && f->n_choices > 0) {
        json_t *e = json_array();
        for (int32_t k = 0; k < f->n_choices; k++)
            json_array_append_new(e, json_string(f->choices[k]));
        json_object_set_new(v, "enum", e);
    }
    json_object_set_new(v, "title", field_title(leaf));
    if (f->doc) json_object_set_new(v, "description", json_string(f->doc));
    const tsr_array *d = f->default_value;
    if (d && d->data && d->dtype == TSR_UINT8 && d->rank == 1) {
        json_t *dv = f->kind == TSR_KIND_TEXT
                         ? json_stringn((const char *)d->data, (size_t)d->shape[0])
                         : json_loadb((const char *)d->data, (size_t)d->shape[0],
                                      JSON_DECODE_ANY, NULL);
        /* Optional[...] = None: pydantic as tesseract-core serves it writes no default */
        if (dv && json_is_null(dv)) json_decref(dv);
        else if (dv) json_object_set_new(v, "default", dv);
    }
    return v;
}

/* An input's property: its array schema, with its default where it has
 * one, or for an optional input, as pydantic writes Optional[...] = None:
 * the array or null, titled and described outside. */
static json_t *input_schema(const tsr_field *f, const char *leaf) {
    json_t *a = is_value(f) ? value_schema(f, leaf) : array_schema(f);
    if (is_value(f) && (f->default_value || !(f->flags & TSR_FIELD_OPTIONAL))) return a;
    if (f->default_value) {
        json_t *d = default_value(f->default_value);
        if (d) json_object_set_new(a, "default", d);
        return a;
    }
    if (!(f->flags & TSR_FIELD_OPTIONAL)) return a;
    json_object_del(a, "description");
    json_t *opt = json_pack("{s:[o,{s:s}], s:o}", "anyOf", a, "type", "null", "title",
                            field_title(leaf));
    if (f->doc) json_object_set_new(opt, "description", json_string(f->doc));
    return opt;
}

static json_t *new_model(const char *title) {
    return json_pack("{s:{}, s:b, s:s, s:[], s:s}", "properties", "additionalProperties", 0,
                     "type", "object", "required", "title", title);
}

/* The object for the dotted prefix of name in model, made when missing;
 * the last part of the name in *leaf. field_order lists each object's
 * members in order under its dotted path ("" for the top). */
static json_t *parent_of(json_t *model, json_t *order, const char *name, const char **leaf) {
    json_t *obj = model;
    const char *part = name, *dot;
    char path[512] = "";
    while ((dot = strchr(part, '.')) != NULL) {
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(dot - part), part);
        json_t *props = json_object_get(obj, "properties");
        json_t *child = json_object_get(props, key);
        if (!child) {
            child = new_model(key);
            json_object_set_new(props, key, child);
            json_array_append_new(json_object_get(obj, "required"), json_string(key));
            json_t *list = json_object_get(order, path);
            if (!list) json_object_set_new(order, path, list = json_array());
            json_array_append_new(list, json_string(key));
        }
        size_t used = strlen(path);
        snprintf(path + used, sizeof path - used, "%s%s", used ? "." : "", key);
        obj = child;
        part = dot + 1;
    }
    json_t *list = json_object_get(order, path);
    if (!list) json_object_set_new(order, path, list = json_array());
    json_array_append_new(list, json_string(part));
    *leaf = part;
    return obj;
}

/* Apply_InputSchema or Apply_OutputSchema, with its differentiable arrays
 * and field order. */
static json_t *fields_model(const tsr_component *c, int outputs, const char *title,
                            json_t *diff, json_t *order) {
    json_t *model = new_model(title);
    int32_t n = outputs ? tsr_component_n_outputs(c) : tsr_component_n_inputs(c);
    for (int32_t i = 0; i < n; i++) {
        const tsr_field *f = outputs ? tsr_component_output(c, i) : tsr_component_input(c, i);
        const char *leaf;
        json_t *parent = parent_of(model, order, f->name, &leaf);
        json_t *prop = !outputs ? input_schema(f, leaf)
                       : is_value(f) ? value_schema(f, leaf) : array_schema(f);
        json_object_set_new(json_object_get(parent, "properties"), leaf, prop);
        /* One that may be left out is not required, as in pydantic. */
        if (outputs || tsr_field_required(f))
            json_array_append_new(json_object_get(parent, "required"), json_string(leaf));
        /* A JSON field's differentiable arrays are inside it, at paths
         * Tessera does not know. */
        if ((f->flags & TSR_FIELD_DIFFERENTIABLE) && !is_value(f))
            json_object_set_new(diff, f->name,
                                json_pack("{s:s, s:o}", "dtype", tsr_dtype_name(f->dtype),
                                          "shape", shape_list(f)));
    }
    /* pydantic leaves out an empty "required" (a model without fields). */
    if (json_array_size(json_object_get(model, "required")) == 0) json_object_del(model, "required");
    return model;
}

static json_t *ref(const char *name) {
    char text[128];
    snprintf(text, sizeof text, "#/components/schemas/%s", name);
    return json_pack("{s:s}", "$ref", text);
}

/* The list of differentiable names a wrt argument may hold. */
static json_t *wrt_schema(const tsr_component *c, int outputs) {
    json_t *names = json_array();
    int32_t n = outputs ? tsr_component_n_outputs(c) : tsr_component_n_inputs(c);
    for (int32_t i = 0; i < n; i++) {
        const tsr_field *f = outputs ? tsr_component_output(c, i) : tsr_component_input(c, i);
        if (!(f->flags & TSR_FIELD_DIFFERENTIABLE)) continue;
        if (f->kind == TSR_KIND_JSON) { /* a path inside it: "weights.{a}", "layers.[0].k" */
            char pattern[600] = "^";
            size_t used = 1;
            for (const char *ch = f->name; *ch && used + 4 < sizeof pattern; ch++) {
                if (*ch == '.') pattern[used++] = '\\'; /* a dot of the name, not any character */
                pattern[used++] = *ch;
            }
            memcpy(pattern + used, "\\.", 3);
            json_array_append_new(names, json_pack("{s:s, s:s}", "type", "string", "pattern",
                                                   pattern));
            continue;
        }
        json_array_append_new(names, json_pack("{s:s, s:s}", "type", "string", "const",
                                               f->name));
    }
    return json_pack("{s:{s:o}, s:s, s:i, s:b}", "items", "anyOf", names, "type", "array",
                     "minItems", 1, "uniqueItems", 1);
}

static json_t *operation(const char *summary, const char *in, const char *out) {
    json_t *ok = json_pack("{s:s, s:{s:{s:o}}}", "description", "Successful Response", "content",
                           "application/json", "schema", ref(out));
    json_t *bad = json_pack("{s:s, s:{s:{s:o}}}", "description", "Validation Error", "content",
                            "application/json", "schema", ref("HTTPValidationError"));
    return json_pack("{s:{s:s, s:{s:b, s:{s:{s:o}}}, s:{s:o, s:o}}}", "post", "summary", summary,
                     "requestBody", "required", 1, "content", "application/json", "schema",
                     ref(in), "responses", "200", ok, "422", bad);
}

/* The request model of a derivative endpoint: inputs, its wrt lists and
 * (jvp, vjp) its seeds, as arrays keyed by name; hvp has cotangents of
 * its outputs and tangents of its inputs. */
static json_t *derivative_model(const tsr_component *c, tsr_endpoint ep, const char *title) {
    static const char *const keys[][4] = {[TSR_EP_JVP] = {"jvp_inputs", "jvp_outputs",
                                                          "tangent_vector"},
                                          [TSR_EP_VJP] = {"vjp_inputs", "vjp_outputs",
                                                          "cotangent_vector"},
                                          [TSR_EP_JACOBIAN] = {"jac_inputs", "jac_outputs",
                                                               NULL},
                                          [TSR_EP_HVP] = {"hvp_inputs", "hvp_outputs",
                                                          "cotangent_vector", "tangent_vector"}};
    json_t *m = new_model(title);
    json_t *props = json_object_get(m, "properties");
    json_object_set_new(props, "inputs", ref("Apply_InputSchema"));
    json_object_set_new(props, keys[ep][0], wrt_schema(c, 0));
    json_object_set_new(props, keys[ep][1], wrt_schema(c, 1));
    json_t *req = json_object_get(m, "required");
    json_array_append_new(req, json_string("inputs"));
    json_array_append_new(req, json_string(keys[ep][0]));
    json_array_append_new(req, json_string(keys[ep][1]));
    for (int k = 2; k < 4; k++) {
        if (!keys[ep][k]) continue;
        json_object_set_new(props, keys[ep][k],
                            json_pack("{s:s, s:{s:s}}", "type", "object", "additionalProperties",
                                      "title", "EncodedArrayModel"));
        json_array_append_new(req, json_string(keys[ep][k]));
    }
    return m;
}

json_t *serve_openapi_doc(const tsr_component *c, const http_serve_options *opts) {
    json_t *schemas = json_object(), *paths = json_object();
    json_t *in_diff = json_object(), *in_order = json_object();
    json_t *out_diff = json_object(), *out_order = json_object();
    json_object_set_new(schemas, "Apply_InputSchema",
                        fields_model(c, 0, "Apply_InputSchema", in_diff, in_order));
    json_object_set_new(schemas, "Apply_OutputSchema",
                        fields_model(c, 1, "Apply_OutputSchema", out_diff, out_order));
    json_t *apply_in = new_model("ApplyInputSchema");
    json_t *inputs_ref = ref("Apply_InputSchema");
    json_object_set_new(inputs_ref, "description",
                        json_string("The input data to apply the Tesseract to."));
    json_object_set_new(json_object_get(apply_in, "properties"), "inputs", inputs_ref);
    json_array_append_new(json_object_get(apply_in, "required"), json_string("inputs"));
    json_object_set_new(apply_in, "differentiable_arrays", in_diff);
    json_object_set_new(apply_in, "field_order", in_order);
    json_object_set_new(schemas, "ApplyInputSchema", apply_in);
    json_t *apply_out = ref("Apply_OutputSchema");
    json_object_set_new(apply_out, "title", json_string("ApplyOutputSchema"));
    json_object_set_new(apply_out, "description",
                        json_string("The output data from applying the Tesseract."));
    json_object_set_new(apply_out, "differentiable_arrays", out_diff);
    json_object_set_new(apply_out, "field_order", out_order);
    json_object_set_new(schemas, "ApplyOutputSchema", apply_out);
    json_object_set_new(paths, "/apply", operation("Apply", "ApplyInputSchema",
                                                   "ApplyOutputSchema"));
    static const struct {
        tsr_endpoint ep;
        const char *in, *summary;
    } derivatives[] = {{TSR_EP_JACOBIAN, "JacobianInputSchema", "Jacobian"},
                       {TSR_EP_JVP, "JVPInputSchema", "Jacobian Vector Product"},
                       {TSR_EP_VJP, "VJPInputSchema", "Vector Jacobian Product"},
                       {TSR_EP_HVP, "HVPInputSchema", "Hessian Vector Product"}};
    for (size_t i = 0; i < sizeof derivatives / sizeof derivatives[0]; i++) {
        if (!tsr_component_has_endpoint(c, derivatives[i].ep)) continue;
        char path[64];
        snprintf(path, sizeof path, "/%s", serve_endpoint_route(derivatives[i].ep));
        json_object_set_new(schemas, derivatives[i].in,
                            derivative_model(c, derivatives[i].ep, derivatives[i].in));
        json_object_set_new(paths, path, operation(derivatives[i].summary, derivatives[i].in,
                                                   "ApplyOutputSchema"));
    }
    if (tsr_component_has_endpoint(c, TSR_EP_ABSTRACT_EVAL)) {
        json_t *m = new_model("AbstractInputSchema");
        json_object_set_new(json_object_get(m, "properties"), "inputs",
                            json_pack("{s:s}", "type", "object"));
        json_array_append_new(json_object_get(m, "required"), json_string("inputs"));
        json_object_set_new(schemas, "AbstractInputSchema", m);
        json_object_set_new(schemas, "AbstractOutputSchema", json_pack("{s:s}", "type", "object"));
        json_object_set_new(paths, "/abstract_eval",
                            operation("Abstract Eval", "AbstractInputSchema",
                                      "AbstractOutputSchema"));
    }
    json_object_set_new(paths, "/health",
                        json_pack("{s:{s:s, s:{s:{s:s}}}}", "get", "summary", "Health",
                                  "responses", "200", "description", "Successful Response"));
    /* the page `tessera docs` writes (FastAPI serves Swagger UI there,
     * left out of its document; listed here, as /health is) */
    json_object_set_new(paths, "/docs",
                        json_pack("{s:{s:s, s:{s:{s:s, s:{s:{s:{s:s}}}}}}}", "get", "summary",
                                  "Docs", "responses", "200", "description",
                                  "The component's documentation as one HTML page", "content",
                                  "text/html", "schema", "type", "string"));
    json_object_set_new(schemas, "ValidationError",
                        json_pack("{s:s, s:[s,s,s], s:s}", "type", "object", "required", "loc",
                                  "msg", "type", "title", "ValidationError"));
    json_object_set_new(schemas, "HTTPValidationError",
                        json_pack("{s:{s:{s:o, s:s}}, s:s, s:s}", "properties", "detail", "items",
                                  ref("ValidationError"), "type", "array", "type", "object",
                                  "title", "HTTPValidationError"));
    const char *name = tsr_component_name(c);
    json_t *formats = json_pack("[s,s]", "json", "json+base64");
    if (opts->output_dir) json_array_append_new(formats, json_string("json+binref"));
    json_t *compressions = opts->lz4 ? json_pack("[s]", "lz4") : json_pack("[s]", "none");
    return json_pack("{s:s, s:{s:s, s:s}, s:o, s:{s:o}, s:o, s:o}", "openapi", "3.1.0", "info",
                     "title", name ? name : "Tessera component", "version", tsr_version(),
                     "paths", paths, "components", "schemas", schemas,
                     "x-supported-output-formats", formats, "x-supported-compressions",
                     compressions);
}
