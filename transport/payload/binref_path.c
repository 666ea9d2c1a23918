/* SPDX-License-Identifier: MIT */
#include "binref_path.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/tessera.h>

/* The start of a trailing ":<digits>" group of s[0..len), or NULL. Digits
 * only, at least one, and something must stay before the colon. */
static const char *digit_group(const char *s, size_t len) {
    size_t i = len;
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') i--;
    if (i == len || i < 2 || s[i - 1] != ':') return NULL;
    return s + i - 1;
}

static int parse_number(const char *digits, size_t len, uint64_t *out) {
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned d = (unsigned)(digits[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int tsr_binref_ref_parse(const char *text, tsr_binref_ref *out, char *why, size_t why_size) {
    memset(out, 0, sizeof *out);
    size_t len = strlen(text);
    const char *g2 = digit_group(text, len);
    const char *g1 = g2 ? digit_group(text, (size_t)(g2 - text)) : NULL;
    size_t path_len = g1 ? (size_t)(g1 - text) : g2 ? (size_t)(g2 - text) : len;
    if (path_len == 0) {
        snprintf(why, why_size, "binref buffer \"%.64s\" names no file (\"<path>[:<offset>[:<size>]]\")",
                 text);
        return TSR_E_PAYLOAD;
    }
    const char *off = g1 ? g1 : g2;
    if (off != NULL) {
        const char *end = g1 ? g2 : text + len;
        if (parse_number(off + 1, (size_t)(end - off - 1), &out->offset) != 0) {
            snprintf(why, why_size, "binref offset in \"%.64s\" is too large", text);
            return TSR_E_PAYLOAD;
        }
    }
    if (g1 != NULL) {
        out->has_size = true;
        if (parse_number(g2 + 1, len - (size_t)(g2 - text) - 1, &out->size) != 0) {
            snprintf(why, why_size, "binref size in \"%.64s\" is too large", text);
            return TSR_E_PAYLOAD;
        }
    }
    out->path = strndup(text, path_len);
    if (out->path == NULL) {
        snprintf(why, why_size, "out of memory");
        return TSR_E_NOMEM;
    }
    return 0;
}

int tsr_binref_base(const char *base_dir, char **out, char *why, size_t why_size) {
    const char *dir = base_dir != NULL && base_dir[0] != '\0' ? base_dir : ".";
    *out = realpath(dir, NULL);
    if (*out == NULL) {
        int e = errno;
        snprintf(why, why_size, "input directory '%s': %s", dir, strerror(e));
        return e == ENOMEM ? TSR_E_NOMEM : TSR_E_IO;
    }
    return 0;
}

/* Is path (absolute, normalised) base itself or below it? */
static bool inside(const char *base, const char *path) {
    size_t n = strlen(base);
    if (n == 1 && base[0] == '/') return path[0] == '/';
    return strncmp(path, base, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Lexical normal form of an absolute path: no ".", "..", "//". */
static void normalise(const char *in, char *out) {
    size_t o = 0;
    out[o++] = '/';
    for (const char *p = in; *p;) {
        while (*p == '/') p++;
        const char *end = strchrnul(p, '/');
        size_t n = (size_t)(end - p);
        if (n == 0 || (n == 1 && p[0] == '.')) {
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (o > 1) {
                o--;
                while (o > 1 && out[o - 1] != '/') o--;
            }
        } else {
            if (o > 1 && out[o - 1] != '/') out[o++] = '/';
            memcpy(out + o, p, n);
            o += n;
            out[o++] = '/';
        }
        p = end;
    }
    if (o > 1 && out[o - 1] == '/') o--;
    out[o] = '\0';
}

int tsr_binref_resolve(const char *base_real, const char *path, bool allow_escape, char **out,
                       char *why, size_t why_size) {
    *out = NULL;
    bool absolute = path[0] == '/';
    char *joined = NULL;
    if (absolute ? (joined = strdup(path)) == NULL
                 : asprintf(&joined, "%s/%s", base_real, path) < 0) {
        snprintf(why, why_size, "out of memory");
        return TSR_E_NOMEM;
    }
    if (allow_escape) {
        *out = joined;
        return 0;
    }
    char *lexical = malloc(strlen(joined) + 2);
    if (lexical == NULL) {
        free(joined);
        snprintf(why, why_size, "out of memory");
        return TSR_E_NOMEM;
    }
    normalise(joined, lexical);
    bool lexically_inside = inside(base_real, lexical);
    free(lexical);
    if (!lexically_inside) {
        free(joined);
        snprintf(why, why_size,
                 absolute ? "binref path '%s' is absolute and lies outside the input directory "
                            "'%s' (reading outside it is not allowed)"
                          : "binref path '%s' leads outside the input directory '%s' through "
                            "'..' (reading outside it is not allowed)",
                 path, base_real);
        return TSR_E_PAYLOAD;
    }
    char *real = realpath(joined, NULL);
    int e = errno;
    free(joined);
    if (real == NULL) {
        snprintf(why, why_size, "cannot open binref file '%s' (in '%s'): %s", path, base_real,
                 strerror(e));
        return e == ENOMEM ? TSR_E_NOMEM : TSR_E_IO;
    }
    if (!inside(base_real, real)) {
        snprintf(why, why_size,
                 "binref path '%s' leads outside the input directory '%s' through a symlink "
                 "(to '%s'; reading outside it is not allowed)",
                 path, base_real, real);
        free(real);
        return TSR_E_PAYLOAD;
    }
    *out = real;
    return 0;
}
