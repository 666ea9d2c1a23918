/* SPDX-License-Identifier: MIT */
/* Single arrays to and from JSON text, and releasing what this part of
 * the library hands out. (Encoding names: encoding_name.c.) */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "array_decode.h"
#include "array_encode.h"
#include "binref_batch.h"
#include "json_hoist.h"
#include "payload_options.h"

TSR_API int tsr_array_to_json_ex(const tsr_array *a, const tsr_output_options *opts, char **out,
                                 tsr_error *err) {
    payload_ctx ctx = {.err = err};
    if (out != NULL) *out = NULL;
    if (a == NULL || out == NULL)
        return payload_fail(&ctx, TSR_E_ARGUMENT, NULL, "tsr_array_to_json: array and out are required");
    array_out settings;
    binref_sink sink;
    int rc = output_settings(opts, &settings, &sink, &ctx);
    if (rc != 0) return rc;
    json_writer w;
    jw_init(&w);
    rc = write_encoded_array(&w, a, &settings, &ctx, NULL);
    int files = binref_sink_finish(&sink, rc == 0, &ctx);
    if (rc == 0) rc = files;
    if (rc != 0) {
        jw_discard(&w);
        return rc;
    }
    *out = jw_finish(&w);
    if (*out == NULL) return payload_fail(&ctx, TSR_E_NOMEM, NULL, "out of memory writing an array");
    payload_ok(&ctx);
    return 0;
}

TSR_API int tsr_array_to_json(const tsr_array *a, tsr_encoding enc, char **out, tsr_error *err) {
    tsr_output_options o = {.struct_size = sizeof o, .encoding = enc};
    return tsr_array_to_json_ex(a, &o, out, err);
}

TSR_API int tsr_array_from_json_ex(const char *text, size_t len, tsr_dtype dtype,
                                   const tsr_input_options *opts, tsr_array *out, void **buffer,
                                   tsr_error *err) {
    payload_ctx ctx = {.err = err};
    if (buffer != NULL) *buffer = NULL;
    if ((text == NULL && len > 0) || out == NULL || buffer == NULL)
        return payload_fail(&ctx, TSR_E_ARGUMENT, NULL,
                                "tsr_array_from_json: text, out and buffer are required");
    if (dtype != TSR_DTYPE_INVALID && tsr_dtype_name(dtype) == NULL)
        return payload_fail(&ctx, TSR_E_ARGUMENT, NULL, "invalid dtype %d", (int)dtype);
    tsr_input_options in;
    int rc = input_settings(opts, &in, &ctx);
    if (rc != 0) return rc;
    json_error_t jerr;
    hoist_doc hoist;
    json_t *root = hoist_parse(text != NULL ? text : "", len,
                                   JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &hoist, &jerr);
    if (root == NULL)
        return payload_fail(&ctx, TSR_E_PAYLOAD, NULL, "malformed JSON at line %d, column %d: %s",
                                jerr.line, jerr.column, jerr.text);
    ctx.hoist = &hoist;
    /* No batch: a binref array is then refused (array_decode.c). */
    ctx.binrefs = in.refuse_files ? NULL
                                  : binref_batch_new(in.base_dir, in.allow_escape != 0,
                                                         binref_io_of(in.io));
    decoded_array decoded = {0};
    rc = ctx.binrefs == NULL && !in.refuse_files
             ? payload_fail(&ctx, TSR_E_NOMEM, NULL, "out of memory")
             : decode_array_value(root, dtype, false, &ctx, "", &decoded);
    json_decref(root);
    hoist_free(&hoist);
    ctx.hoist = NULL;
    if (rc == 0) rc = binref_batch_run(ctx.binrefs, &ctx);
    binref_batch_free(ctx.binrefs);
    if (rc != 0) {
        free(decoded.buffer);
        return rc;
    }
    *out = decoded.array;
    *buffer = decoded.buffer;
    payload_ok(&ctx);
    return 0;
}

TSR_API int tsr_array_from_json(const char *text, size_t len, tsr_dtype dtype, tsr_array *out,
                                void **buffer, tsr_error *err) {
    return tsr_array_from_json_ex(text, len, dtype, NULL, out, buffer, err);
}

TSR_API void tsr_json_free(char *text) { free(text); }

TSR_API void tsr_array_buffer_free(void *buffer) { free(buffer); }
