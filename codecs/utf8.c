/* SPDX-License-Identifier: MIT */
/* The check of UTF-8 text (TEXT fields' values and choices). */
#include "utf8.h"

/* Whether s (n bytes) is well-formed UTF-8: no overlong forms, no
 * surrogates, nothing past U+10FFFF. */
int utf8_valid(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned char b = s[i];
        if (b < 0x80) {
            i++;
            continue;
        }
        size_t len;
        uint32_t cp;
        if (b >= 0xC2 && b <= 0xDF) len = 2, cp = b & 0x1Fu;
        else if (b >= 0xE0 && b <= 0xEF) len = 3, cp = b & 0x0Fu;
        else if (b >= 0xF0 && b <= 0xF4) len = 4, cp = b & 0x07u;
        else return 0;
        if (n - i < len) return 0;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + k] & 0x3Fu);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}
