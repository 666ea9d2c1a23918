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
 *
 * Numeric lists (list_text.h) that are an object member's value and hold
 * at least HOIST_MIN_LEAVES values are cut too, placeholder
 * "\u0000[<index>": jansson would spend some 50-100 bytes on each value.
 * The values left for jansson are counted first and refused past a limit.
 * A text jansson refuses is refused with jansson's own message and place:
 * it is parsed again with the cut lists blanked out (same length, same
 * lines), which leaves jansson nothing of them to hold.
 */
#ifndef TESSERA_CODECS_JSON_HOIST_H
#define TESSERA_CODECS_JSON_HOIST_H

#include <stdbool.h>
#include <stddef.h>

#include <stdint.h>

#include <jansson.h>

#include "list_text.h"

/* Strings shorter than this stay in the text. */
#define HOIST_MIN 1024
/* Numeric lists of fewer values stay (a "shape" always does). */
#define HOIST_MIN_LEAVES 64

typedef struct hoisted_text {
    const char *text; /* into the original text: a string's characters, or
                         a list from '[' to ']' */
    size_t len;
    int32_t list;     /* -1: a string; else its index in lists */
} hoisted_text;

typedef struct hoisted_list {
    const char *text; /* '[' ... ']' in the original text */
    list_info info;
} hoisted_list;

typedef struct hoist_doc {
    char *skeleton; /* NULL when nothing was cut */
    size_t skeleton_len;
    hoisted_text *cuts; /* in the text's order; placeholders name their index */
    size_t n;
    hoisted_list *lists;
    size_t n_lists;
    uint64_t values; /* the JSON values left to jansson (keys included) */
} hoist_doc;

typedef enum hoist_status {
    HOIST_OK = 0,
    HOIST_MALFORMED, /* jerr says where and why */
    HOIST_NOMEM,
    HOIST_TOO_MANY   /* more than max_values values; h->values: how many
                            were counted when it stopped */
} hoist_status;

/*
 * Parse text like json_loadb(text, len, flags, jerr), cutting long strings
 * and numeric lists out first; h keeps what lookups need (pointers into
 * text, which must outlive h). Errors are reported at their place in the
 * original text. max_values (0: none) bounds the values jansson is given,
 * counted before it is called. Returns the root, or NULL with *status and
 * jerr filled (out of memory: jerr->text says so too) and h empty but for
 * h->values. Release h with hoist_free.
 */
json_t *hoist_parse_limited(const char *text, size_t len, size_t flags, uint64_t max_values,
                                hoist_doc *h, json_error_t *jerr, hoist_status *status);
/* The same without a limit on values. */
json_t *hoist_parse(const char *text, size_t len, size_t flags, hoist_doc *h,
                        json_error_t *jerr);
void hoist_free(hoist_doc *h);

/* The numeric list that the string value s stands for, or NULL. h may be
 * NULL. */
const hoisted_list *hoist_list(const hoist_doc *h, const json_t *s);

/* Is s the placeholder of a numeric list (for messages: "a list")? */
bool hoist_is_list(const json_t *s);

/* The characters of string value s: from the original text when it was
 * cut out, else its own. h may be NULL. */
void hoist_string(const hoist_doc *h, const json_t *s, const char **text, size_t *len);

#endif /* TESSERA_CODECS_JSON_HOIST_H */
