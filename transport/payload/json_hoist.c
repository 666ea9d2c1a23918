/* SPDX-License-Identifier: MIT */
#include "json_hoist.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* Does any byte of the 8 in x need jansson's attention: a control
 * character, a backslash, DEL or anything beyond ASCII? */
static inline bool word_is_plain(uint64_t x) {
    uint64_t below_space = (x - ONES * 0x20) & ~x & HIGHS;
    uint64_t bs = x ^ (ONES * '\\'), del = x ^ (ONES * 0x7f);
    uint64_t zero_bs = (bs - ONES) & ~bs & HIGHS, zero_del = (del - ONES) & ~del & HIGHS;
    return ((x & HIGHS) | below_space | zero_bs | zero_del) == 0;
}

static inline bool byte_is_plain(unsigned char c) {
    return c >= 0x20 && c < 0x7f && c != '\\';
}

/* Are s[0..n) all plain characters? */
static bool plain(const char *s, size_t n) {
    size_t i = 0;
#ifdef __SSE2__
    /* Signed bytes: below 0x20 catches control characters and everything
     * from 0x80; then backslash and DEL. */
    const __m128i space = _mm_set1_epi8(0x20), bs = _mm_set1_epi8('\\'), del = _mm_set1_epi8(0x7f);
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i bad = _mm_or_si128(_mm_cmplt_epi8(v, space),
                                   _mm_or_si128(_mm_cmpeq_epi8(v, bs), _mm_cmpeq_epi8(v, del)));
        if (_mm_movemask_epi8(bad) != 0) return false;
    }
#endif
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        if (!word_is_plain(x)) return false;
    }
    for (; i < n; i++)
        if (!byte_is_plain((unsigned char)s[i])) return false;
    return true;
}

/* The closing quote of the string whose first character is at s (escapes
 * followed), or NULL when the text ends first. */
static const char *string_end(const char *s, const char *end) {
    for (;;) {
        const char *q = memchr(s, '"', (size_t)(end - s));
        if (q == NULL) return NULL;
        /* An odd run of backslashes before q escapes it. */
        size_t run = 0;
        while (q - run > s && q[-1 - (ptrdiff_t)run] == '\\') run++;
        if (run % 2 == 0) return q;
        s = q + 1;
    }
}

static bool is_key(const char *after, const char *end) {
    while (after < end && (*after == ' ' || *after == '\t' || *after == '\n' || *after == '\r'))
        after++;
    return after < end && *after == ':';
}

/* Find the strings to cut. Returns -1 when out of memory. */
static int find(const char *text, size_t len, tsr_hoist *h) {
    const char *p = text, *end = text + len;
    size_t cap = 0;
    while (p < end) {
        const char *open = memchr(p, '"', (size_t)(end - p));
        if (open == NULL) break;
        const char *close = string_end(open + 1, end);
        if (close == NULL) break; /* jansson will say what is wrong */
        size_t n = (size_t)(close - open - 1);
        if (n >= TSR_HOIST_MIN && !is_key(close + 1, end) && plain(open + 1, n)) {
            if (h->n == cap) {
                size_t c = cap ? cap * 2 : 16;
                tsr_hoisted *s = realloc(h->strings, c * sizeof *s);
                if (s == NULL) return -1;
                h->strings = s;
                cap = c;
            }
            h->strings[h->n++] = (tsr_hoisted){.text = open + 1, .len = n};
        }
        p = close + 1;
    }
    return 0;
}

/* The text with every cut string replaced by "\u0000<index>". */
static int build_skeleton(const char *text, size_t len, tsr_hoist *h) {
    size_t cut = 0;
    for (size_t k = 0; k < h->n; k++) cut += h->strings[k].len;
    size_t cap = len - cut + h->n * 32 + 1;
    char *s = malloc(cap);
    if (s == NULL) return -1;
    size_t o = 0;
    const char *p = text;
    for (size_t k = 0; k < h->n; k++) {
        size_t keep = (size_t)(h->strings[k].text - p);
        memcpy(s + o, p, keep);
        o += keep;
        o += (size_t)snprintf(s + o, cap - o, "\\u0000%zu", k);
        p = h->strings[k].text + h->strings[k].len;
    }
    size_t rest = (size_t)(text + len - p);
    memcpy(s + o, p, rest);
    o += rest;
    s[o] = '\0';
    h->skeleton = s;
    h->skeleton_len = o;
    return 0;
}

static void out_of_memory(json_error_t *jerr) {
    memset(jerr, 0, sizeof *jerr);
    snprintf(jerr->text, sizeof jerr->text, "out of memory");
}

/* Does the text outside the cut strings hold "\u0000" (which would look
 * like a placeholder)? The cut strings hold no backslash. */
static bool has_nul_escape(const char *text, size_t len, const tsr_hoist *h) {
    const char *p = text;
    for (size_t k = 0; k <= h->n; k++) {
        const char *end = k < h->n ? h->strings[k].text : text + len;
        if (memmem(p, (size_t)(end - p), "\\u0000", 6) != NULL) return true;
        if (k < h->n) p = h->strings[k].text + h->strings[k].len;
    }
    return false;
}

json_t *tsr_hoist_parse(const char *text, size_t len, size_t flags, tsr_hoist *h,
                        json_error_t *jerr) {
    memset(h, 0, sizeof *h);
    if (len >= TSR_HOIST_MIN) {
        if (find(text, len, h) != 0) {
            tsr_hoist_free(h);
            out_of_memory(jerr);
            return NULL;
        }
        if (h->n > 0 && has_nul_escape(text, len, h)) tsr_hoist_free(h);
        if (h->n > 0 && build_skeleton(text, len, h) != 0) {
            tsr_hoist_free(h);
            out_of_memory(jerr);
            return NULL;
        }
    }
    if (h->skeleton == NULL) return json_loadb(text, len, flags, jerr);
    json_t *root = json_loadb(h->skeleton, h->skeleton_len, flags | JSON_ALLOW_NUL, jerr);
    /* The skeleton's line and column are not the text's: parse the text
     * itself to report the error where it is. */
    if (root == NULL) {
        tsr_hoist_free(h);
        json_t *again = json_loadb(text, len, flags, jerr);
        if (again != NULL) { /* cannot happen: both texts hold the same JSON */
            json_decref(again);
            snprintf(jerr->text, sizeof jerr->text, "malformed JSON");
        }
    }
    return root;
}

void tsr_hoist_free(tsr_hoist *h) {
    free(h->skeleton);
    free(h->strings);
    memset(h, 0, sizeof *h);
}

void tsr_hoist_string(const tsr_hoist *h, const json_t *s, const char **text, size_t *len) {
    const char *v = json_string_value(s);
    size_t n = json_string_length(s);
    if (h != NULL && h->n > 0 && n >= 2 && v[0] == '\0') {
        size_t k = 0;
        bool digits = true;
        for (size_t i = 1; i < n && digits; i++) {
            digits = v[i] >= '0' && v[i] <= '9' && k < h->n;
            k = k * 10 + (size_t)(v[i] - '0');
        }
        if (digits && k < h->n) {
            *text = h->strings[k].text;
            *len = h->strings[k].len;
            return;
        }
    }
    *text = v;
    *len = n;
}
