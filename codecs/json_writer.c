/* SPDX-License-Identifier: MIT */
#include "json_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array_buffer.h"
#include "number_text.h"

void jw_init(json_writer *w) {
    memset(w, 0, sizeof *w);
}

void jw_discard(json_writer *w) {
    free(w->buf);
    jw_init(w);
}

char *jw_finish(json_writer *w) {
    char *text = NULL;
    if (!w->failed && w->depth == 0 && w->buf != NULL) {
        text = w->buf;
        w->buf = NULL;
    }
    jw_discard(w);
    return text;
}

/* Make room for n more bytes plus a NUL. */
static bool reserve(json_writer *w, size_t n) {
    if (w->failed) return false;
    if (n > SIZE_MAX - w->len - 1) {
        w->failed = true;
        return false;
    }
    size_t need = w->len + n + 1;
    if (need <= w->cap) return true;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(w->buf, cap);
    if (p == NULL) {
        w->failed = true;
        return false;
    }
    w->buf = p;
    w->cap = cap;
    /* Large texts (base64 buffers) are written into fresh pages. */
    if (cap >= HUGE_PAGE_MIN) advise_huge_pages(p, cap);
    return true;
}

static void append(json_writer *w, const char *s, size_t n) {
    if (!reserve(w, n)) return;
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

/* Separator before a value or a key in the current container. */
static void begin_item(json_writer *w) {
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth > 0) {
        if (w->needs_comma[w->depth - 1]) append(w, ",", 1);
        w->needs_comma[w->depth - 1] = true;
    }
}

static void open_container(json_writer *w, char c) {
    begin_item(w);
    if (w->depth >= JW_MAX_DEPTH) {
        w->failed = true;
        return;
    }
    append(w, &c, 1);
    w->needs_comma[w->depth++] = false;
}

static void close_container(json_writer *w, char c) {
    if (w->depth == 0) {
        w->failed = true;
        return;
    }
    w->depth--;
    append(w, &c, 1);
}

void jw_begin_object(json_writer *w) { open_container(w, '{'); }
void jw_end_object(json_writer *w) { close_container(w, '}'); }
void jw_begin_array(json_writer *w) { open_container(w, '['); }
void jw_end_array(json_writer *w) { close_container(w, ']'); }

static void quoted(json_writer *w, const char *s, size_t n) {
    append(w, "\"", 1);
    size_t run = 0; /* bytes copied verbatim in one go */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        append(w, s + run, i - run);
        run = i + 1;
        char esc[8];
        switch (c) {
        case '"': append(w, "\\\"", 2); break;
        case '\\': append(w, "\\\\", 2); break;
        case '\n': append(w, "\\n", 2); break;
        case '\r': append(w, "\\r", 2); break;
        case '\t': append(w, "\\t", 2); break;
        default:
            snprintf(esc, sizeof esc, "\\u%04x", c);
            append(w, esc, 6);
            break;
        }
    }
    append(w, s + run, n - run);
    append(w, "\"", 1);
}

void jw_key_n(json_writer *w, const char *key, size_t len) {
    begin_item(w);
    quoted(w, key, len);
    append(w, ":", 1);
    w->after_key = true;
}

void jw_key(json_writer *w, const char *key) { jw_key_n(w, key, strlen(key)); }

void jw_string(json_writer *w, const char *s) {
    begin_item(w);
    quoted(w, s, strlen(s));
}

void jw_raw_value(json_writer *w, const char *text, size_t len) {
    begin_item(w);
    append(w, text, len);
}

char *jw_raw_begin(json_writer *w, size_t len) {
    begin_item(w);
    if (!reserve(w, len)) return NULL;
    return w->buf + w->len;
}

char *jw_raw_more(json_writer *w, size_t len) {
    if (!reserve(w, len)) return NULL;
    return w->buf + w->len;
}

void jw_raw_end(json_writer *w, size_t len) {
    if (w->failed) return;
    w->len += len;
    w->buf[w->len] = '\0';
}

void jw_null(json_writer *w) { jw_raw_value(w, "null", 4); }

void jw_bool(json_writer *w, bool b) {
    if (b) jw_raw_value(w, "true", 4);
    else jw_raw_value(w, "false", 5);
}

void jw_int(json_writer *w, int64_t v) {
    char text[NUMTEXT_MAX];
    jw_raw_value(w, text, numtext_int(v, text));
}

void jw_uint(json_writer *w, uint64_t v) {
    char text[NUMTEXT_MAX];
    jw_raw_value(w, text, numtext_uint(v, text));
}

void jw_double(json_writer *w, double v) {
    char text[NUMTEXT_MAX];
    jw_raw_value(w, text, numtext_double(v, text));
}
