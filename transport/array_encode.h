/*
 * Writing one array as Tesseract writes it: an encoded array
 * {"object_type": "array", "shape", "dtype", "data": {"buffer", "encoding"}}
 * with the values as nested lists (json) or little-endian bytes (base64),
 * or, for abstract evaluation, {"shape", "dtype"}.
 */
#ifndef TESSERA_TRANSPORT_ARRAY_ENCODE_H
#define TESSERA_TRANSPORT_ARRAY_ENCODE_H

#include <tessera/payload.h>

#include "json_writer.h"
#include "payload_error.h"

/* Returns 0 or a TSR_E_* code with the message in ctx (path names the
 * array). On failure the writer's content is unusable. */
int tsr_write_encoded_array(tsr_jw *w, const tsr_array *a, tsr_encoding enc,
                            const tsr_payload_ctx *ctx, const char *path);

int tsr_write_shape_dtype(tsr_jw *w, const tsr_array *a, const tsr_payload_ctx *ctx,
                          const char *path);

#endif /* TESSERA_TRANSPORT_ARRAY_ENCODE_H */
