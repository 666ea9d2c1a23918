/* SPDX-License-Identifier: MIT */
#include "checksum.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <xxhash.h>

#define PREFIX "xxh3:"

uint64_t checksum_xxh3(const void *data, size_t bytes) {
    return XXH3_64bits(data, bytes);
}

void checksum_format(uint64_t sum, char text[CHECKSUM_TEXT_MAX]) {
    snprintf(text, CHECKSUM_TEXT_MAX, PREFIX "%016" PRIx64, sum);
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int checksum_parse(const char *text, uint64_t *sum, char *why, size_t why_size) {
    size_t plen = strlen(PREFIX);
    if (strncmp(text, PREFIX, plen) != 0) {
        const char *colon = strchr(text, ':');
        if (colon != NULL)
            snprintf(why, why_size, "unknown checksum algorithm \"%.*s\" (only xxh3)",
                     (int)(colon - text > 32 ? 32 : colon - text), text);
        else
            snprintf(why, why_size, "a checksum reads \"xxh3:<16 hex digits>\", not \"%.40s\"", text);
        return -1;
    }
    const char *hex = text + plen;
    uint64_t v = 0;
    size_t n = strlen(hex);
    for (size_t i = 0; i < n; i++) {
        int d = hex_digit(hex[i]);
        if (d < 0 || n != 16) {
            snprintf(why, why_size, "a checksum reads \"xxh3:<16 hex digits>\", not \"%.40s\"", text);
            return -1;
        }
        v = v << 4 | (uint64_t)d;
    }
    if (n != 16) {
        snprintf(why, why_size, "a checksum reads \"xxh3:<16 hex digits>\", not \"%.40s\"", text);
        return -1;
    }
    *sum = v;
    return 0;
}
