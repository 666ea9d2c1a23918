/* SPDX-License-Identifier: MIT */
/*
 * A small streaming writer of compact JSON into a growing buffer. Used for
 * every response so that large arrays are written without building a tree
 * of JSON values, and so that each number gets its own exact form (uint64
 * beyond int64, floats with the fewest digits that read back exactly).
 * After an allocation failure every call is a no-op and
 * jw_finish() returns NULL.
 */
#ifndef TESSERA_CODECS_JSON_WRITER_H
#define TESSERA_CODECS_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JW_MAX_DEPTH 128

typedef struct json_writer {
    char *buf;
    size_t len;
    size_t cap;
    int depth;
    bool needs_comma[JW_MAX_DEPTH]; /* per open container: a value was written */
    bool after_key;                     /* the next value completes a "key": pair */
    bool failed;
} json_writer;

void jw_init(json_writer *w);
/* The text, NUL-terminated, owned by the caller (free()); NULL if any
 * step failed. The writer is reset either way. */
char *jw_finish(json_writer *w);
void jw_discard(json_writer *w);

void jw_begin_object(json_writer *w);
void jw_end_object(json_writer *w);
void jw_begin_array(json_writer *w);
void jw_end_array(json_writer *w);
void jw_key(json_writer *w, const char *key);
/* A key of len bytes (need not be NUL-terminated). */
void jw_key_n(json_writer *w, const char *key, size_t len);
void jw_string(json_writer *w, const char *s);
void jw_null(json_writer *w);
void jw_bool(json_writer *w, bool b);
void jw_int(json_writer *w, int64_t v);
void jw_uint(json_writer *w, uint64_t v);
/* A finite double, shortest round-trip form, always with a '.' or an
 * exponent so that it reads back as a float. */
void jw_double(json_writer *w, double v);
/* Raw text appended as one value (already valid JSON). */
void jw_raw_value(json_writer *w, const char *text, size_t len);
/* The same, written in place: room for len bytes of one value (NULL when
 * out of memory), then jw_raw_end with the same len. */
char *jw_raw_begin(json_writer *w, size_t len);
void jw_raw_end(json_writer *w, size_t len);
/* Room for len more bytes of the value being written (no separator before
 * them), then jw_raw_end with the bytes used: a long value in pieces. */
char *jw_raw_more(json_writer *w, size_t len);

#endif /* TESSERA_CODECS_JSON_WRITER_H */
