/* SPDX-License-Identifier: MIT */
/* The array encodings' names, both ways: used by the encoder, the options
 * and the text functions alike, so they depend on this file and not on
 * each other. */
#include <string.h>

#include <tessera/payload.h>

TSR_API const char *tsr_encoding_name(tsr_encoding enc) {
    switch (enc) {
    case TSR_ENCODING_JSON: return "json";
    case TSR_ENCODING_BASE64: return "base64";
    case TSR_ENCODING_BINREF: return "binref";
    }
    return NULL;
}

TSR_API int tsr_encoding_from_name(const char *name) {
    if (name == NULL) return -1;
    if (strcmp(name, "json") == 0) return TSR_ENCODING_JSON;
    if (strcmp(name, "base64") == 0 || strcmp(name, "json+base64") == 0) return TSR_ENCODING_BASE64;
    if (strcmp(name, "binref") == 0 || strcmp(name, "json+binref") == 0) return TSR_ENCODING_BINREF;
    return -1;
}
