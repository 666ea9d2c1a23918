/* SPDX-License-Identifier: MIT */
/*
 * Long strings cut out of JSON text before it is parsed. jansson reads a
 * string about 15 times slower than base64 decodes it (~66 MB/s), so the
 * base64 buffers of a payload are replaced by short placeholders
 * ("\u0000<index>"), the skeleton is parsed, and the decoder takes each
 * buffer's characters straight from the original text.
 *
 * Only string values (not keys) of printable ASCII without escapes are
 * cut, so what jansson would have accepted or refused is unchanged; a text
 * that already contains "\u0000" is parsed as it is.
 */
#ifndef TESSERA_TRANSPORT_JSON_HOIST_H
#define TESSERA_TRANSPORT_JSON_HOIST_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* Strings shorter than this stay in the text. */
#define TSR_HOIST_MIN 1024

typedef struct tsr_hoisted {
    const char *text; /* into the original text */
    size_t len;
} tsr_hoisted;

typedef struct tsr_hoist {
    char *skeleton; /* NULL when nothing was cut */
    size_t skeleton_len;
    tsr_hoisted *strings;
    size_t n;
} tsr_hoist;

/*
 * Parse text like json_loadb(text, len, flags, jerr), cutting long strings
 * out first; h keeps what lookups need (pointers into text, which must
 * outlive h). Errors are reported at their place in the original text.
 * Returns the root, or NULL with jerr filled (out of memory: jerr->text
 * says so) and h empty. Release h with tsr_hoist_free.
 */
json_t *tsr_hoist_parse(const char *text, size_t len, size_t flags, tsr_hoist *h,
                        json_error_t *jerr);
void tsr_hoist_free(tsr_hoist *h);

/* The characters of string value s: from the original text when it was
 * cut out, else its own. h may be NULL. */
void tsr_hoist_string(const tsr_hoist *h, const json_t *s, const char **text, size_t *len);

#endif /* TESSERA_TRANSPORT_JSON_HOIST_H */
