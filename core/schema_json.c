/* SPDX-License-Identifier: MIT */
/* A component's schema as JSON, for `tessera schema` and for tools. */
#include <jansson.h>
#include <math.h>

#include "codecs/array_encode.h"
#include "codecs/json_writer.h"
#include "codecs/numeric.h"
#include "codecs/payload_error.h"
#include "schema_json.h"

#include <tessera/payload.h>

static void write_optional_string(json_writer *w, const char *s) {
    if (s != NULL) jw_string(w, s);
    else jw_null(w);
}

/* Fixed dims as ints, symbolic dims by their symbol, wildcards as null
 * (Tesseract's None). */
static void write_dims(json_writer *w, const tsr_field *f) {
    jw_begin_array(w);
    for (int32_t d = 0; d < f->rank; d++) {
        const tsr_dim *dim = &f->dims[d];
        if (dim->symbol != NULL) jw_string(w, dim->symbol);
        else if (dim->size == TSR_DIM_ANY) jw_null(w);
        else jw_int(w, dim->size);
    }
    jw_end_array(w);
}

/* Whether every value has a plain JSON form (no complex, NaN or inf). */
static bool plain_json_fits(const tsr_array *a) {
    int64_t count = 1;
    for (int32_t d = 0; d < a->rank; d++) count *= a->shape[d];
    size_t size = tsr_dtype_size(a->dtype);
    for (int64_t k = 0; k < count; k++) {
        num_value v;
        num_load(a->dtype, (const char *)a->data + (size_t)k * size, &v);
        if (v.kind == NUM_COMPLEX || (v.kind == NUM_REAL && !isfinite(v.v.r)))
            return false;
    }
    return true;
}

/* A default as a plain value (number, bool, nested list) where it has
 * one, else as a base64 encoded array; tsr_array_from_json reads both. */
static int write_default(json_writer *w, const tsr_array *d) {
    payload_ctx ctx = {0};
    if (plain_json_fits(d)) return write_plain_values(w, d, &ctx, "default");
    array_out o = {.enc = TSR_ENCODING_BASE64};
    return write_encoded_array(w, d, &o, &ctx, "default");
}

static const char *kind_name(uint32_t kind) {
    return kind == TSR_KIND_TEXT ? "text" : kind == TSR_KIND_JSON ? "json" : "array";
}

/* A TEXT default as its string; a JSON default as its JSON value (as a
 * string when it does not parse: the component checks its own values). */
static void write_text_default(json_writer *w, const tsr_field *f) {
    const tsr_array *d = f->default_value;
    size_t len = (size_t)d->shape[0];
    const char *text = d->data;   /* NUL-terminated (defaults.c) */
    if (f->kind == TSR_KIND_JSON) {
        json_error_t jerr;
        json_t *v = json_loadb(text, len, JSON_DECODE_ANY, &jerr);
        if (v) {
            json_decref(v);
            jw_raw_value(w, text, len);
            return;
        }
    }
    jw_string(w, text);
}

static void write_fields(json_writer *w, const tsr_component *c, bool inputs) {
    int32_t n = inputs ? tsr_component_n_inputs(c) : tsr_component_n_outputs(c);
    jw_begin_array(w);
    for (int32_t i = 0; i < n; i++) {
        const tsr_field *f = inputs ? tsr_component_input(c, i) : tsr_component_output(c, i);
        jw_begin_object(w);
        jw_key(w, "name");
        jw_string(w, f->name);
        /* Text and JSON keep dtype uint8 and shape [null], their form on
         * the plugin ABI, for readers that know arrays only; "kind" and
         * "choices" come last. */
        jw_key(w, "dtype");
        write_optional_string(w, tsr_dtype_name(f->dtype));
        jw_key(w, "shape");
        if (f->rank == TSR_RANK_ANY) jw_null(w);   /* any rank */
        else write_dims(w, f);
        jw_key(w, "differentiable");
        jw_bool(w, (f->flags & TSR_FIELD_DIFFERENTIABLE) != 0);
        jw_key(w, "doc");
        write_optional_string(w, f->doc);
        if (inputs) {
            jw_key(w, "required");
            jw_bool(w, tsr_field_required(f));
            if (f->default_value) {
                jw_key(w, "default");
                if (f->kind != TSR_KIND_ARRAY) write_text_default(w, f);
                else (void)write_default(w, f->default_value);   /* fails only out of memory */
            }
        }
        jw_key(w, "kind");
        jw_string(w, kind_name(f->kind));
        if (f->kind == TSR_KIND_TEXT && f->n_choices > 0) {
            jw_key(w, "choices");
            jw_begin_array(w);
            for (int32_t k = 0; k < f->n_choices; k++) jw_string(w, f->choices[k]);
            jw_end_array(w);
        }
        jw_end_object(w);
    }
    jw_end_array(w);
}

static void write_endpoint_list(json_writer *w, unsigned mask) {
    jw_begin_array(w);
    for (int ep = 0; ep < TSR_EP_COUNT; ep++)
        if (mask & (1u << ep)) jw_string(w, tsr_endpoint_name((tsr_endpoint)ep));
    jw_end_array(w);
}

/* The schema; with extra != NULL also what a worker tells its host. */
static char *write_schema(const tsr_component *c, const schema_worker_extra *extra) {
    json_writer w;
    jw_init(&w);
    jw_begin_object(&w);
    jw_key(&w, "name");
    write_optional_string(&w, tsr_component_name(c));
    jw_key(&w, "version");
    write_optional_string(&w, tsr_component_version(c));
    jw_key(&w, "description");
    write_optional_string(&w, tsr_component_description(c));
    jw_key(&w, "inputs");
    write_fields(&w, c, true);
    jw_key(&w, "outputs");
    write_fields(&w, c, false);
    unsigned available = 0;
    for (int ep = 0; ep < TSR_EP_COUNT; ep++)
        if (tsr_component_has_endpoint(c, (tsr_endpoint)ep)) available |= 1u << ep;
    jw_key(&w, "endpoints");
    write_endpoint_list(&w, available);
    if (extra != NULL) {
        jw_key(&w, "implemented");
        write_endpoint_list(&w, extra->implemented);
        jw_key(&w, "thread_safe");
        jw_bool(&w, extra->thread_safe);
        jw_key(&w, "fd");
        jw_begin_object(&w);
        jw_key(&w, "method");
        jw_int(&w, extra->fd_method);
        jw_key(&w, "samples");
        jw_int(&w, extra->fd_samples);
        jw_key(&w, "step");
        jw_double(&w, extra->fd_step);
        jw_end_object(&w);
    }
    jw_end_object(&w);
    return jw_finish(&w);
}

char *schema_json_for_worker(const tsr_component *c, const schema_worker_extra *extra) {
    return write_schema(c, extra);
}

TSR_API int tsr_schema_to_json(const tsr_component *c, char **out, tsr_error *err) {
    payload_ctx ctx = {.err = err};
    if (out != NULL) *out = NULL;
    if (c == NULL || out == NULL)
        return payload_fail(&ctx, TSR_E_ARGUMENT, NULL, "tsr_schema_to_json: component and out are required");
    *out = write_schema(c, NULL);
    if (*out == NULL) return payload_fail(&ctx, TSR_E_NOMEM, NULL, "out of memory writing the schema");
    payload_ok(&ctx);
    return 0;
}

/* Dims of every field of a JSON field list: the schema a worker sends and a
 * manifest's fields have the same form. */
size_t schema_count_dims(struct json_t *list) {
    size_t total = 0, i;
    json_t *f;
    json_array_foreach(list, i, f) {
        json_t *shape = json_object_get(f, "shape");
        if (json_is_array(shape)) total += json_array_size(shape);
    }
    return total;
}
