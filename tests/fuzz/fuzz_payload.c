/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: JSON payloads, in every encoding, through the whole public
 * path a request takes: tsr_payload_parse for one endpoint of the contract
 * test plugin, tsr_payload_bind, tsr_call_run (the plugin traps if the
 * host breaks its promises) and tsr_payload_format_results in both
 * encodings; and the same text as a single array (tsr_array_from_json),
 * which must survive a round trip through base64 unchanged, and one
 * through json too (the numbers printed and read back to the bit).
 *
 * Input: one selector byte, then the JSON text.
 *   selector % 6          the endpoint (TSR_EP_COUNT of them; 5 is hvp)
 *   selector / 5 % 2      the response encoding (json, base64)
 *   selector / 10 % 16    the dtype asked of the single array (0: its own)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/payload.h>
#include <tessera/tessera.h>

#include "fuzz_component.h"
#include "fuzz_target.h"

static void request(tsr_component *c, tsr_endpoint ep, tsr_encoding enc, const char *text,
                    size_t len) {
    tsr_payload *p = NULL;
    tsr_error err = TSR_ERROR_INIT;
    if (tsr_payload_parse(c, ep, text, len, &p, &err) != 0) {
        if (p != NULL || err.code == 0 || err.message[0] == '\0') __builtin_trap();
        return;
    }
    tsr_call *call = tsr_call_new(c, ep);
    if (call && tsr_payload_bind(p, call, &err) == 0 && tsr_call_run(call) == 0) {
        char *out = NULL;
        if (tsr_payload_format_results(p, call, enc, &out, &err) == 0 && out == NULL)
            __builtin_trap();
        tsr_json_free(out);
    }
    tsr_call_free(call);
    tsr_payload_free(p);
}

/* Decoded, encoded as base64 and decoded again: the same bytes. */
static void single_array(tsr_dtype want, const char *text, size_t len) {
    tsr_array a, b;
    void *buf = NULL, *buf2 = NULL;
    char *json = NULL;
    tsr_error err = TSR_ERROR_INIT;
    if (tsr_array_from_json(text, len, want, &a, &buf, &err) != 0) return;
    if (tsr_array_to_json(&a, TSR_ENCODING_BASE64, &json, &err) == 0) {
        if (tsr_array_from_json(json, strlen(json), a.dtype, &b, &buf2, &err) != 0)
            __builtin_trap();
        size_t bytes = tsr_dtype_size(a.dtype);
        for (int32_t d = 0; d < a.rank; d++) bytes *= (size_t)a.shape[d];
        if (b.dtype != a.dtype || b.rank != a.rank ||
            memcmp(a.shape, b.shape, (size_t)a.rank * sizeof a.shape[0]) != 0 ||
            (bytes && memcmp(a.data, b.data, bytes) != 0))
            __builtin_trap();
        tsr_array_buffer_free(buf2);
        tsr_json_free(json);
        json = NULL;
    }
    if (tsr_array_to_json(&a, TSR_ENCODING_JSON, &json, &err) == 0) {
        size_t bytes = tsr_dtype_size(a.dtype);
        for (int32_t d = 0; d < a.rank; d++) bytes *= (size_t)a.shape[d];
        /* uint64 beyond int64 has no JSON reading (jansson's limit); an
         * empty array's inner dims live in its shape only. */
        if (a.dtype != TSR_UINT64 && bytes > 0) {
            if (tsr_array_from_json(json, strlen(json), a.dtype, &b, &buf2, &err) != 0 ||
                b.rank != a.rank || memcmp(a.data, b.data, bytes) != 0)
                __builtin_trap();
            tsr_array_buffer_free(buf2);
        }
        tsr_json_free(json);
    }
    tsr_array_buffer_free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    tsr_component *c = fuzz_component("fuzz_payload");
    unsigned sel = data[0];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    request(c, (tsr_endpoint)(sel % TSR_EP_COUNT), (tsr_encoding)(sel / 5 % 2), text, len);
    single_array((tsr_dtype)(sel / 10 % 16 % TSR_DTYPE_COUNT), text, len);
    return 0;
}
