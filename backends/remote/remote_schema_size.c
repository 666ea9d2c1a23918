/* SPDX-License-Identifier: MIT */
/* Counting the JSON values of a served /openapi.json in its text, before
 * jansson parses it: parsing builds every value (about 200 bytes each), so
 * a hostile document of a million values would cost its memory and time
 * before the reader could refuse its fields. Malformed text is left to
 * the parser; this only counts. */
#include <stddef.h>

#include "remote_schema.h"

/* A value starts at '{', '[', a string that is not a key, or the first
 * character of a number or literal. Keys are the strings followed by ':';
 * rather than look ahead, count every string and every ':' and subtract
 * one per ':' (each key is one string and one ':'). */
int remote_doc_values_over(const char *text, size_t len, size_t max) {
    size_t strings = 0, colons = 0, others = 0;
    int in_scalar = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (ch == '"') {
            strings++;
            in_scalar = 0;
            for (i++; i < len && text[i] != '"'; i++)
                if (text[i] == '\\') i++;   /* an escaped character, a quote included */
        } else if (ch == ':') {
            colons++;
            in_scalar = 0;
        } else if (ch == '{' || ch == '[') {
            others++;
            in_scalar = 0;
        } else if (ch == ',' || ch == '}' || ch == ']' || ch == ' ' || ch == '\n' ||
                   ch == '\r' || ch == '\t') {
            in_scalar = 0;
        } else if (!in_scalar) {   /* a number, true, false or null begins */
            others++;
            in_scalar = 1;
        }
        size_t keys = colons < strings ? colons : strings;
        if (strings - keys + others > max) return 1;
    }
    return 0;
}
