/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the schema a worker sends at start (JSON in the channel),
 * as the host reads it: schema_import, then the same descriptor checks an
 * in-process plugin gets (descriptor_load), then the queries and the
 * schema's JSON form. A broken or hostile worker must be refused with a
 * message, never corrupt the host.
 *
 * Input: the schema text (made NUL-terminated, as the channel's is).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/payload.h>

#include "core/internal.h"
#include "fuzz_target.h"
#include "backends/worker/pool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char why[512] = "";
    imported_schema *s = NULL;
    if (schema_import(text, &s, why, sizeof why) != 0) {
        if (s != NULL || why[0] == '\0') __builtin_trap();
        free(text);
        return 0;
    }
    tsr_component c;
    memset(&c, 0, sizeof c);
    c.path = "fuzz";
    tsr_error err = TSR_ERROR_INIT;
    if (descriptor_load(&c, schema_import_descriptor(s), &err) == 0) {
        char *json = NULL;
        if (tsr_schema_to_json(&c, &json, &err) == 0) tsr_json_free(json);
        for (int e = 0; e < TSR_EP_COUNT; e++) tsr_component_has_endpoint(&c, (tsr_endpoint)e);
        for (int32_t i = 0; i < c.n_in; i++) tsr_component_find_input(&c, c.in[i].field.name);
    } else if (err.message[0] == '\0') {
        __builtin_trap();
    }
    descriptor_free(&c);
    schema_import_free(s);
    free(text);
    return 0;
}
