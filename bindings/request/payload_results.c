/* SPDX-License-Identifier: MIT */
/* Writing a call's results in Tesseract's output form. */
#include <stdlib.h>
#include <string.h>

#include "codecs/array_encode.h"
#include "payload_internal.h"
#include "codecs/payload_options.h"

typedef struct writer {
    json_writer jw;
    const array_out *out;
    bool abstract;
    const payload_ctx *ctx;
    kept_buffers keep;
} writer;

static int write_array(writer *w, const tsr_array *a, const char *path) {
    if (a == NULL)
        return payload_fail(w->ctx, TSR_E_ARGUMENT, path,
                                "the call has no such result; was it run successfully?");
    if (w->abstract) return write_shape_dtype(&w->jw, a, w->ctx, path);
    return write_encoded_array(&w->jw, a, w->out, w->ctx, path);
}

/* Length of the first dotted segment of s. */
static size_t segment_length(const char *s) {
    return strcspn(s, ".");
}

/* Write, as members of the open object, the outputs whose names start with
 * prefix (plen bytes, ending in '.' unless empty), grouped by their next
 * segment in the order the schema first mentions it: "mesh.nodes" and
 * "mesh.cells" become {"mesh": {"nodes": ..., "cells": ...}}. */
static int write_group(writer *w, const tsr_call *call, const tsr_component *c, const char *prefix,
                       size_t plen) {
    int32_t n = tsr_component_n_outputs(c);
    for (int32_t i = 0; i < n; i++) {
        const char *name = tsr_component_output(c, i)->name;
        if (strncmp(name, prefix, plen) != 0) continue;
        const char *rest = name + plen;
        size_t seg = segment_length(rest);
        bool leaf = rest[seg] == '\0';

        bool seen = false;
        for (int32_t j = 0; j < i && !seen; j++) {
            const char *other = tsr_component_output(c, j)->name;
            if (strncmp(other, prefix, plen) != 0) continue;
            const char *orest = other + plen;
            if (segment_length(orest) != seg || strncmp(orest, rest, seg) != 0) continue;
            if (leaf || orest[seg] == '\0')
                return payload_fail(w->ctx, TSR_E_DESCRIPTOR, name,
                                        "output names \"%s\" and \"%s\" cannot both be written",
                                        other, name);
            seen = true;
        }
        if (seen) continue;

        jw_key_n(&w->jw, rest, seg);
        if (leaf) {
            const tsr_field *field = tsr_component_output(c, i);
            const tsr_array *a = tsr_call_result(call, i);
            if (field->kind != TSR_KIND_ARRAY && a != NULL && !w->abstract) {
                int rc = payload_write_kind_result(&w->jw, field, a, w->out, &w->keep, w->ctx,
                                                   name);
                if (rc != 0) return rc;
                continue;
            }
            int rc = write_array(w, a, name);
            if (rc != 0) return rc;
            continue;
        }
        char *sub = malloc(plen + seg + 2);
        if (sub == NULL) return payload_fail(w->ctx, TSR_E_NOMEM, name, "out of memory");
        memcpy(sub, name, plen + seg);
        sub[plen + seg] = '.';
        sub[plen + seg + 1] = '\0';
        jw_begin_object(&w->jw);
        int rc = write_group(w, call, c, sub, plen + seg + 1);
        free(sub);
        if (rc != 0) return rc;
        jw_end_object(&w->jw);
    }
    return 0;
}

static int expect_results(const tsr_call *call, int32_t expected, const payload_ctx *ctx) {
    int32_t n = tsr_call_n_results(call);
    if (n == expected) return 0;
    return payload_fail(ctx, TSR_E_ARGUMENT, NULL,
                            "the call holds %d results where the payload expects %d; "
                            "was it bound from this payload and run successfully?",
                            (int)n, (int)expected);
}

static int write_results(writer *w, const tsr_payload *p, const tsr_call *call) {
    const tsr_component *c = p->component;
    int rc;
    switch (p->endpoint) {
    case TSR_EP_APPLY:
    case TSR_EP_ABSTRACT_EVAL:
        if ((rc = expect_results(call, tsr_component_n_outputs(c), w->ctx)) != 0) return rc;
        jw_begin_object(&w->jw);
        if ((rc = write_group(w, call, c, "", 0)) != 0) return rc;
        jw_end_object(&w->jw);
        return 0;
    case TSR_EP_JVP:
    case TSR_EP_VJP:
    case TSR_EP_HVP: {
        /* jvp: one result per jvp_output; vjp and hvp: one per input of
         * their list, shaped like it. */
        char **names = p->endpoint == TSR_EP_JVP ? p->wrt_out : p->wrt_in;
        int32_t n = p->endpoint == TSR_EP_JVP ? p->n_wrt_out : p->n_wrt_in;
        if ((rc = expect_results(call, n, w->ctx)) != 0) return rc;
        jw_begin_object(&w->jw);
        for (int32_t k = 0; k < n; k++) {
            jw_key(&w->jw, names[k]);
            if ((rc = write_array(w, tsr_call_result(call, k), names[k])) != 0) return rc;
        }
        jw_end_object(&w->jw);
        return 0;
    }
    case TSR_EP_JACOBIAN:
        if ((rc = expect_results(call, p->n_wrt_out * p->n_wrt_in, w->ctx)) != 0) return rc;
        jw_begin_object(&w->jw);
        for (int32_t o = 0; o < p->n_wrt_out; o++) {
            jw_key(&w->jw, p->wrt_out[o]);
            jw_begin_object(&w->jw);
            for (int32_t i = 0; i < p->n_wrt_in; i++) {
                char path[PAYLOAD_PATH_MAX];
                path_join(path, p->wrt_out[o], p->wrt_in[i]);
                jw_key(&w->jw, p->wrt_in[i]);
                rc = write_array(w, tsr_call_result(call, o * p->n_wrt_in + i), path);
                if (rc != 0) return rc;
            }
            jw_end_object(&w->jw);
        }
        jw_end_object(&w->jw);
        return 0;
    default:
        return payload_fail(w->ctx, TSR_E_ARGUMENT, NULL, "unknown endpoint");
    }
}

TSR_API int tsr_payload_format_results_ex(const tsr_payload *p, const tsr_call *call,
                                          const tsr_output_options *opts, char **out,
                                          tsr_error *err) {
    payload_ctx ctx = {.err = err};
    if (out != NULL) *out = NULL;
    if (p == NULL || call == NULL || out == NULL)
        return payload_fail(&ctx, TSR_E_ARGUMENT, NULL,
                                "tsr_payload_format_results: payload, call and out are required");
    ctx.component = tsr_component_name(p->component);
    ctx.endpoint = tsr_endpoint_name(p->endpoint);
    array_out settings;
    binref_sink sink;
    int rc = output_settings(opts, &settings, &sink, &ctx);
    if (rc != 0) return rc;

    writer w = {.out = &settings, .abstract = p->abstract, .ctx = &ctx};
    jw_init(&w.jw);
    rc = write_results(&w, p, call);
    /* The bytes go to the files only once the whole text is made. */
    int files = binref_sink_finish(&sink, rc == 0, &ctx);
    kept_buffers_free(&w.keep);
    if (rc == 0) rc = files;
    if (rc != 0) {
        jw_discard(&w.jw);
        return rc;
    }
    *out = jw_finish(&w.jw);
    if (*out == NULL) return payload_fail(&ctx, TSR_E_NOMEM, NULL, "out of memory writing the results");
    payload_ok(&ctx);
    return 0;
}

TSR_API int tsr_payload_format_results(const tsr_payload *p, const tsr_call *call, tsr_encoding enc,
                                       char **out, tsr_error *err) {
    tsr_output_options o = {.struct_size = sizeof o, .encoding = enc};
    return tsr_payload_format_results_ex(p, call, &o, out, err);
}
