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

static bool is_ws(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int push_cut(hoist_doc *h, size_t *cap, const char *text, size_t len, int32_t list) {
    if (h->n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        hoisted_text *s = realloc(h->cuts, c * sizeof *s);
        if (s == NULL) return -1;
        h->cuts = s;
        *cap = c;
    }
    h->cuts[h->n++] = (hoisted_text){.text = text, .len = len, .list = list};
    return 0;
}

static int push_list(hoist_doc *h, size_t *cap, size_t *list_cap, const char *text,
                     const list_info *info) {
    if (h->n_lists == *list_cap) {
        size_t c = *list_cap ? *list_cap * 2 : 8;
        hoisted_list *l = realloc(h->lists, c * sizeof *l);
        if (l == NULL) return -1;
        h->lists = l;
        *list_cap = c;
    }
    h->lists[h->n_lists] = (hoisted_list){.text = text, .info = *info};
    if (push_cut(h, cap, text, info->len, (int32_t)h->n_lists) != 0) return -1;
    h->n_lists++;
    return 0;
}

/* A list that is not JSON: where it starts and where it stops. */
typedef struct bad_list {
    size_t at;
    list_stop stop;
} bad_list;

enum { FOUND = 0, FOUND_NOMEM = -1, FOUND_TOO_MANY = 1, FOUND_BAD_LIST = 2 };

/* Find what to cut and count the values left (h->values) and those inside
 * the cut lists (*list_values). */
static int find(const char *text, size_t len, uint64_t max_values, hoist_doc *h,
                uint64_t *list_values, bad_list *bad) {
    const char *p = text, *end = text + len;
    size_t cap = 0, list_cap = 0;
    char prev = '\0';       /* the last character outside strings and blanks */
    bool in_scalar = false; /* inside a number, true, false, null or junk */
    while (p < end) {
        if (max_values != 0 && h->values > max_values) return FOUND_TOO_MANY;
        char c = *p;
        if (c == '"') {
            h->values++;
            in_scalar = false;
            prev = c;
            const char *close = string_end(p + 1, end);
            if (close == NULL) break; /* jansson will say what is wrong */
            size_t n = (size_t)(close - p - 1);
            if (n >= HOIST_MIN && !is_key(close + 1, end) && plain(p + 1, n) &&
                push_cut(h, &cap, p + 1, n, -1) != 0)
                return FOUND_NOMEM;
            p = close + 1;
            continue;
        }
        if (c == '[' && prev == ':') {
            list_info info;
            list_stop stop;
            list_verdict v = list_scan(p, end, &info, &stop);
            if (v == LIST_BAD) {
                bad->at = (size_t)(p - text);
                bad->stop = stop;
                return FOUND_BAD_LIST;
            }
            if (v == LIST_NUMERIC && info.leaves >= HOIST_MIN_LEAVES) {
                if (push_list(h, &cap, &list_cap, p, &info) != 0) return FOUND_NOMEM;
                h->values++;
                *list_values += (uint64_t)info.nodes - 1;
                in_scalar = false;
                prev = ']';
                p += info.len;
                continue;
            }
        }
        p++;
        if (is_ws(c)) {
            in_scalar = false;
            continue;
        }
        prev = c;
        if (c == '[' || c == '{') h->values++;
        if (c == '[' || c == ']' || c == '{' || c == '}' || c == ',' || c == ':') {
            in_scalar = false;
        } else if (!in_scalar) {
            in_scalar = true;
            h->values++;
        }
    }
    return max_values != 0 && h->values > max_values ? FOUND_TOO_MANY : FOUND;
}

/* The text with every cut string replaced by "\u0000<index>" and every cut
 * list by "\"\u0000[<index>\"". */
static int build_skeleton(const char *text, size_t len, hoist_doc *h) {
    size_t cut = 0;
    for (size_t k = 0; k < h->n; k++) cut += h->cuts[k].len;
    size_t cap = len - cut + h->n * 32 + 1;
    char *s = malloc(cap);
    if (s == NULL) return -1;
    size_t o = 0;
    const char *p = text;
    for (size_t k = 0; k < h->n; k++) {
        size_t keep = (size_t)(h->cuts[k].text - p);
        memcpy(s + o, p, keep);
        o += keep;
        o += (size_t)snprintf(s + o, cap - o, h->cuts[k].list < 0 ? "\\u0000%zu" : "\"\\u0000[%zu\"",
                              k);
        p = h->cuts[k].text + h->cuts[k].len;
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

/* Does the text outside the cuts hold "\u0000" (which would look like a
 * placeholder)? The cuts hold no backslash. */
static bool has_nul_escape(const char *text, size_t len, const hoist_doc *h) {
    const char *p = text;
    for (size_t k = 0; k <= h->n; k++) {
        const char *end = k < h->n ? h->cuts[k].text : text + len;
        if (memmem(p, (size_t)(end - p), "\\u0000", 6) != NULL) return true;
        if (k < h->n) p = h->cuts[k].text + h->cuts[k].len;
    }
    return false;
}

/* Spaces for s[from..to), its newlines kept: jansson's lines and columns
 * stay those of the text. */
static void blank(char *s, size_t from, size_t to) {
    for (size_t i = from; i < to; i++)
        if (s[i] != '\n') s[i] = ' ';
}

/* A list element replaced by the value 0 and blanks. */
static void blank_value(char *s, size_t from, size_t to) {
    s[from] = '0';
    blank(s, from + 1, to);
}

/*
 * jansson's refusal of the text, read from a copy in which the cut lists
 * are "0" and blanks and, for a list that is not JSON (bad), everything
 * before its last complete element: jansson then stops where it would
 * have stopped in the text, with the same message, holding none of the
 * lists' values.
 */
static void refusal(const char *text, size_t len, size_t flags, const hoist_doc *h,
                    const bad_list *bad, json_error_t *jerr) {
    char *e = malloc(len > 0 ? len : 1);
    if (e == NULL) {
        out_of_memory(jerr);
        return;
    }
    memcpy(e, text, len);
    for (size_t k = 0; k < h->n; k++)
        if (h->cuts[k].list >= 0) {
            size_t at = (size_t)(h->cuts[k].text - text);
            blank_value(e, at, at + h->cuts[k].len);
        }
    if (bad != NULL) {
        const list_stop *st = &bad->stop;
        for (int32_t d = 0; d + 1 < st->depth; d++)
            blank(e, bad->at + st->open[d] + 1, bad->at + st->open[d + 1]);
        size_t inner = bad->at + st->open[st->depth - 1];
        if (st->last_end != 0) {
            blank(e, inner + 1, bad->at + st->last_start);
            if (text[bad->at + st->last_start] == '[')
                blank_value(e, bad->at + st->last_start, bad->at + st->last_end);
        }
    }
    json_t *again = json_loadb(e, len, flags, jerr);
    free(e);
    if (again != NULL) { /* cannot happen: both texts hold the same JSON */
        json_decref(again);
        snprintf(jerr->text, sizeof jerr->text, "malformed JSON");
    }
}

json_t *hoist_parse_limited(const char *text, size_t len, size_t flags, uint64_t max_values,
                                hoist_doc *h, json_error_t *jerr, hoist_status *status) {
    memset(h, 0, sizeof *h);
    uint64_t list_values = 0;
    bad_list bad;
    int found = find(text, len, max_values, h, &list_values, &bad);
    if (found == FOUND_NOMEM) {
        hoist_free(h);
        out_of_memory(jerr);
        *status = HOIST_NOMEM;
        return NULL;
    }
    uint64_t values = h->values;
    if (found == FOUND && h->n > 0 && has_nul_escape(text, len, h)) {
        /* Nothing is cut: jansson reads the lists too. */
        values += list_values;
        hoist_free(h);
        h->values = values;
        if (max_values != 0 && values > max_values) found = FOUND_TOO_MANY;
    }
    if (found == FOUND_TOO_MANY) {
        hoist_free(h);
        h->values = values;
        memset(jerr, 0, sizeof *jerr);
        snprintf(jerr->text, sizeof jerr->text, "too many values");
        *status = HOIST_TOO_MANY;
        return NULL;
    }
    if (found == FOUND_BAD_LIST) {
        refusal(text, len, flags, h, &bad, jerr);
        hoist_free(h);
        *status = HOIST_MALFORMED;
        return NULL;
    }
    *status = HOIST_OK;
    if (h->n == 0) {
        hoist_free(h);
        h->values = values;
        json_t *root = json_loadb(text, len, flags, jerr);
        if (root == NULL) *status = HOIST_MALFORMED;
        return root;
    }
    if (build_skeleton(text, len, h) != 0) {
        hoist_free(h);
        out_of_memory(jerr);
        *status = HOIST_NOMEM;
        return NULL;
    }
    json_t *root = json_loadb(h->skeleton, h->skeleton_len, flags | JSON_ALLOW_NUL, jerr);
    /* The skeleton's line and column are not the text's. */
    if (root == NULL) {
        refusal(text, len, flags, h, NULL, jerr);
        hoist_free(h);
        *status = HOIST_MALFORMED;
        return NULL;
    }
    /* Only the placeholders are needed now. */
    free(h->skeleton);
    h->skeleton = NULL;
    return root;
}

json_t *hoist_parse(const char *text, size_t len, size_t flags, hoist_doc *h,
                        json_error_t *jerr) {
    hoist_status status;
    return hoist_parse_limited(text, len, flags, 0, h, jerr, &status);
}

void hoist_free(hoist_doc *h) {
    free(h->skeleton);
    free(h->cuts);
    free(h->lists);
    memset(h, 0, sizeof *h);
}

/* The index k of placeholder s ("\0" + prefix + digits), or -1. */
static long placeholder(const hoist_doc *h, const json_t *s, bool list) {
    if (h == NULL || h->n == 0 || !json_is_string(s)) return -1;
    const char *v = json_string_value(s);
    size_t n = json_string_length(s), i = list ? 2 : 1;
    if (n <= i || v[0] != '\0' || (list && v[1] != '[')) return -1;
    size_t k = 0;
    for (; i < n; i++) {
        if (v[i] < '0' || v[i] > '9' || k >= h->n) return -1;
        k = k * 10 + (size_t)(v[i] - '0');
    }
    if (k >= h->n || (h->cuts[k].list >= 0) != list) return -1;
    return (long)k;
}

void hoist_string(const hoist_doc *h, const json_t *s, const char **text, size_t *len) {
    long k = placeholder(h, s, false);
    if (k >= 0) {
        *text = h->cuts[k].text;
        *len = h->cuts[k].len;
        return;
    }
    *text = json_string_value(s);
    *len = json_string_length(s);
}

const hoisted_list *hoist_list(const hoist_doc *h, const json_t *s) {
    long k = placeholder(h, s, true);
    return k >= 0 ? &h->lists[h->cuts[k].list] : NULL;
}

bool hoist_is_list(const json_t *s) {
    return json_is_string(s) && json_string_length(s) >= 2 && json_string_value(s)[0] == '\0' &&
           json_string_value(s)[1] == '[';
}
