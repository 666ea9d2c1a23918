/* SPDX-License-Identifier: MIT */
/*
 * A small streaming writer of compact JSON into a growing buffer. Used for
 * every response so that large arrays are written without building a tree
 * of JSON values, and so that each number gets its own exact form (uint64
 * beyond int64, floats with the fewest digits that read back exactly).
 * After an allocation failure every call is a no-op and
 * tsr_jw_finish() returns NULL.
 */
#ifndef TESSERA_CODECS_JSON_WRITER_H
#define TESSERA_CODECS_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TSR_JW_MAX_DEPTH 128

typedef struct tsr_jw {
    char *buf;
    size_t len;
    size_t cap;
    int depth;
    bool needs_comma[TSR_JW_MAX_DEPTH]; /* per open container: a value was written */
    bool after_key;                     /* the next value completes a "key": pair */
    bool failed;
} tsr_jw;

void tsr_jw_init(tsr_jw *w);
/* The text, NUL-terminated, owned by the caller (free()); NULL if any
 * step failed. The writer is reset either way. */
char *tsr_jw_finish(tsr_jw *w);
void tsr_jw_discard(tsr_jw *w);

void tsr_jw_begin_object(tsr_jw *w);
void tsr_jw_end_object(tsr_jw *w);
void tsr_jw_begin_array(tsr_jw *w);
void tsr_jw_end_array(tsr_jw *w);
void tsr_jw_key(tsr_jw *w, const char *key);
/* A key of len bytes (need not be NUL-terminated). */
void tsr_jw_key_n(tsr_jw *w, const char *key, size_t len);
void tsr_jw_string(tsr_jw *w, const char *s);
void tsr_jw_null(tsr_jw *w);
void tsr_jw_bool(tsr_jw *w, bool b);
void tsr_jw_int(tsr_jw *w, int64_t v);
void tsr_jw_uint(tsr_jw *w, uint64_t v);
/* A finite double, shortest round-trip form, always with a '.' or an
 * exponent so that it reads back as a float. */
void tsr_jw_double(tsr_jw *w, double v);
/* Raw text appended as one value (already valid JSON). */
void tsr_jw_raw_value(tsr_jw *w, const char *text, size_t len);
/* The same, written in place: room for len bytes of one value (NULL when
 * out of memory), then tsr_jw_raw_end with the same len. */
char *tsr_jw_raw_begin(tsr_jw *w, size_t len);
void tsr_jw_raw_end(tsr_jw *w, size_t len);

#endif /* TESSERA_CODECS_JSON_WRITER_H */
