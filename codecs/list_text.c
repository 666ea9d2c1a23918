/* SPDX-License-Identifier: MIT */
#include "list_text.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "double_conv.h"
#include "number_text.h"
#include "numeric.h"

static inline bool is_ws(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static inline bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

/* Past the digits at q, eight at a time while eight remain. A byte is a
 * digit when its high nibble is 3 and stays 3 with 6 added; a carry can
 * only come from a byte that is not a digit, and runs towards the later
 * bytes, so on a little-endian machine the lowest flagged byte is the
 * first that is not a digit. */
static inline const char *skip_digits(const char *q, const char *end) {
    const uint64_t hi = UINT64_C(0xF0F0F0F0F0F0F0F0), threes = UINT64_C(0x3030303030303030);
    while (end - q >= 8) {
        uint64_t x;
        memcpy(&x, q, sizeof x);
        uint64_t bad = ((x & hi) ^ threes) | (((x + UINT64_C(0x0606060606060606)) & hi) ^ threes);
        if (bad == 0) {
            q += 8;
            continue;
        }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        return q + (__builtin_ctzll(bad) >> 3);
#else
        break;
#endif
    }
    while (q < end && is_digit(*q)) q++;
    return q;
}

/* What may follow a leaf inside a list. */
static inline bool ends_leaf(const char *q, const char *end) {
    return q < end && (is_ws(*q) || *q == ',' || *q == ']');
}

/* Length of the JSON number at p (0: none); *real when it has a fraction
 * or an exponent, *digits its integer digits, *exp its exponent (capped).
 * Inlined into the scan, whose hottest step it is: the outputs then stay
 * in registers. */
static inline __attribute__((always_inline)) size_t number_len(const char *p, const char *end,
                                                               bool *real, size_t *digits,
                                                               long *exp) {
    const char *q = p;
    *real = false;
    *exp = 0;
    if (q < end && *q == '-') q++;
    if (q >= end) return 0;
    const char *first = q;
    if (*q == '0') q++;
    else if (*q >= '1' && *q <= '9') q = skip_digits(q, end);
    else return 0;
    *digits = *first == '0' ? 0 : (size_t)(q - first);
    if (q < end && *q == '.') {
        if (++q >= end || !is_digit(*q)) return 0;
        q = skip_digits(q, end);
        *real = true;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        q++;
        bool neg = q < end && *q == '-';
        if (q < end && (*q == '+' || *q == '-')) q++;
        if (q >= end || !is_digit(*q)) return 0;
        for (; q < end && is_digit(*q); q++)
            if (*exp < 100000) *exp = *exp * 10 + (*q - '0');
        if (neg) *exp = -*exp;
        *real = true;
    }
    return (size_t)(q - p);
}

/* The integer p[0..n) (a JSON integer); false when it does not fit int64. */
static bool int_value(const char *p, size_t n, int64_t *out) {
    bool neg = *p == '-';
    size_t i = neg ? 1 : 0;
    uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        uint64_t d = (uint64_t)(p[i] - '0');
        if (v > (limit - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* The real p[0..n), correctly rounded (number_text.h), whatever the
 * locale. 0, -1: it overflows a double. */
static int real_value(const char *p, size_t n, double *out) {
    return numtext_real(p, n, out);
}

/* Is the leaf at p..q (a number) one jansson accepts: an integer within
 * int64, a real within a double? */
static list_verdict leaf_fits(const char *p, size_t n, bool real, size_t digits, long exp) {
    if (!real) {
        int64_t v;
        return digits < 19 || int_value(p, n, &v) ? LIST_NUMERIC : LIST_BAD;
    }
    if ((long)digits + exp <= 300) return LIST_NUMERIC; /* far from DBL_MAX */
    double v;
    return real_value(p, n, &v) == 0 ? LIST_NUMERIC : LIST_BAD;
}

list_verdict list_scan(const char *s, const char *end, list_info *info,
                               list_stop *stop) {
    memset(info, 0, sizeof *info);
    int64_t count[TSR_MAX_RANK];
    bool dim_known[TSR_MAX_RANK] = {false};
    size_t open[TSR_MAX_RANK];
    size_t last_start = 0, last_end = 0;
    int32_t depth = 0;
    bool rank_set = false, after_value = false, after_comma = false;
    const char *p = s;
    for (;;) {
        while (p < end && is_ws(*p)) p++;
        if (p >= end) break;
        char c = *p;
        if (after_value) {
            if (c == ',') {
                after_value = false;
                after_comma = true;
                p++;
                continue;
            }
            if (c != ']') break;
        }
        if (c == ']') {
            if (after_comma) break; /* a trailing comma */
            int32_t d = depth - 1;
            int64_t n = count[d];
            if (n == 0) info->has_empty = true;
            if (!rank_set) {
                rank_set = true;
                info->rank = depth;
            }
            if (d >= info->rank) info->ragged = true; /* a list where a leaf belongs */
            else if (!dim_known[d]) {
                dim_known[d] = true;
                info->dims[d] = n;
            } else if (info->dims[d] != n) info->ragged = true;
            depth--;
            p++;
            if (depth == 0) {
                info->len = (size_t)(p - s);
                return LIST_NUMERIC;
            }
            count[depth - 1]++;
            last_start = open[d];
            last_end = (size_t)(p - s);
            after_value = true;
            after_comma = false;
            continue;
        }
        if (c == '[') {
            if (depth == TSR_MAX_RANK) return LIST_OTHER; /* the decoder's to refuse */
            open[depth] = (size_t)(p - s);
            count[depth++] = 0;
            info->nodes++;
            last_end = 0;
            after_comma = false;
            p++;
            continue;
        }
        if (depth == 0) break; /* not a list at all */
        if (c == '"' || c == '{' || c == 'n') return LIST_OTHER;
        const char *q;
        bool real = false, boolean = false;
        if (c == 't' || c == 'f') {
            const char *word = c == 't' ? "true" : "false";
            size_t n = strlen(word);
            if ((size_t)(end - p) < n || memcmp(p, word, n) != 0) break;
            q = p + n;
            boolean = true;
        } else {
            size_t digits = 0;
            long exp = 0;
            size_t n = number_len(p, end, &real, &digits, &exp);
            if (n == 0) break;
            q = p + n;
            list_verdict v = leaf_fits(p, n, real, digits, exp);
            if (v != LIST_NUMERIC) {
                if (v == LIST_OTHER) return v;
                break;
            }
        }
        if (!ends_leaf(q, end)) break; /* "0x1", "truex", "1.5.3" */
        if (real) info->has_real = true;
        else if (!boolean) info->has_int = true;
        if (!rank_set) {
            rank_set = true;
            info->rank = depth;
        }
        if (depth != info->rank) info->ragged = true;
        count[depth - 1]++;
        info->leaves++;
        info->nodes++;
        last_start = (size_t)(p - s);
        last_end = (size_t)(q - s);
        after_value = true;
        after_comma = false;
        p = q;
    }
    stop->depth = depth;
    memcpy(stop->open, open, (size_t)depth * sizeof open[0]);
    stop->last_start = last_start;
    stop->last_end = last_end;
    return depth == 0 ? LIST_OTHER : LIST_BAD;
}

tsr_dtype list_natural_dtype(const list_info *info) {
    if (info->has_real || info->has_empty) return TSR_FLOAT64;
    return info->has_int ? TSR_INT64 : TSR_BOOL;
}

/* The (scanned) leaf at p as a number; *next after it. */
static void read_leaf(const char *p, const char *end, num_value *num, const char **next) {
    if (*p == 't' || *p == 'f') {
        num->kind = NUM_BOOL;
        num->v.b = *p == 't';
        *next = p + (*p == 't' ? 4 : 5);
        return;
    }
    bool real;
    size_t digits;
    long exp;
    size_t n = number_len(p, end, &real, &digits, &exp);
    *next = p + n;
    if (!real) {
        num->kind = NUM_INT;
        int_value(p, n, &num->v.i); /* fits: scanned */
        return;
    }
    num->kind = NUM_REAL;
    real_value(p, n, &num->v.r); /* fits: scanned */
}

/* ---- the refusal of a ragged list ------------------------------------------------- */

/* What a leaf is checked against on the way, as the filling of a parsed
 * list checks it: its value must fit the dtype. */
typedef struct leaf_check {
    tsr_dtype dtype;
    int misfit_code;
    const char *end;
} leaf_check;

/* Within a valid list, which always ends with ']'. */
static const char *skip_ws(const char *p) {
    while (is_ws(*p)) p++;
    return p;
}

static const char *skip_element(const char *p) {
    if (*p != '[') {
        while (*p != ',' && *p != ']' && !is_ws(*p)) p++;
        return p;
    }
    int depth = 0;
    do {
        if (*p == '[') depth++;
        else if (*p == ']') depth--;
        p++;
    } while (depth > 0);
    return p;
}

/* The next element after the one ending at p, or NULL after the last. */
static const char *next_element(const char *p) {
    p = skip_ws(p);
    return *p == ',' ? skip_ws(p + 1) : NULL;
}

static int64_t entries(const char *p) {
    p = skip_ws(p + 1);
    if (*p == ']') return 0;
    int64_t n = 1;
    while ((p = next_element(skip_element(p))) != NULL) n++;
    return n;
}

static const char *leaf_kind(const char *p) {
    if (*p == 't' || *p == 'f') return "a boolean";
    for (; *p != ',' && *p != ']' && !is_ws(*p); p++)
        if (*p == '.' || *p == 'e' || *p == 'E') return "a number";
    return "an integer";
}

/* The checks of a parsed list's filling, in the same order: 1 when this
 * element breaks the shape (refused), else 0. */
static int check_element(const char *p, int32_t depth, const list_info *info,
                         const leaf_check *lc, const payload_ctx *ctx, const char *path,
                         int *rc) {
    if (depth == info->rank) {
        if (*p == '[') {
            *rc = payload_fail(ctx, TSR_E_PAYLOAD, path,
                                   "ragged nested list: a list where a number belongs");
            return 1;
        }
        num_value num;
        const char *next;
        read_leaf(p, lc->end, &num, &next);
        union { double d[2]; int64_t i[2]; } scratch; /* room for any dtype's element */
        char why[160];
        if (num_store(lc->dtype, &scratch, &num, why, sizeof why) == 0) return 0;
        *rc = payload_fail(ctx, lc->misfit_code, path, "%s", why);
        return 1;
    }
    if (*p != '[') {
        *rc = payload_fail(ctx, TSR_E_PAYLOAD, path,
                               "ragged nested list: %s where a list of %" PRId64 " belongs",
                               leaf_kind(p), info->dims[depth]);
        return 1;
    }
    int64_t n = entries(p);
    if (n != info->dims[depth]) {
        *rc = payload_fail(ctx, TSR_E_PAYLOAD, path,
                               "ragged nested list: %" PRId64 " entries where %" PRId64 " belong",
                               n, info->dims[depth]);
        return 1;
    }
    const char *e = n > 0 ? skip_ws(p + 1) : NULL;
    for (size_t k = 0; e != NULL; k++, e = next_element(skip_element(e))) {
        char child[PAYLOAD_PATH_MAX];
        path_index(child, path, k);
        if (check_element(e, depth + 1, info, lc, ctx, child, rc)) return 1;
    }
    return 0;
}

int list_refuse(const char *s, const list_info *info, tsr_dtype dtype, int misfit_code,
                    const payload_ctx *ctx, const char *path) {
    leaf_check lc = {.dtype = dtype, .misfit_code = misfit_code,
                     .end = s + info->len};
    int rc = 0;
    if (check_element(s, 0, info, &lc, ctx, path, &rc)) return rc;
    return payload_fail(ctx, TSR_E_PAYLOAD, path, "ragged nested list");
}

/* ---- filling ---------------------------------------------------------------------- */

/* path + "[i][j]..." of the element at flat index i (C order). */
static void element_path(char dst[PAYLOAD_PATH_MAX], const char *path, const list_info *info,
                         int64_t i) {
    int64_t idx[TSR_MAX_RANK];
    for (int32_t d = info->rank - 1; d >= 0; d--) {
        idx[d] = info->dims[d] > 0 ? i % info->dims[d] : 0;
        i = info->dims[d] > 0 ? i / info->dims[d] : 0;
    }
    char a[PAYLOAD_PATH_MAX], b[PAYLOAD_PATH_MAX];
    snprintf(a, sizeof a, "%s", path);
    for (int32_t d = 0; d < info->rank; d++) {
        path_index(b, a, (size_t)idx[d]);
        memcpy(a, b, sizeof a);
    }
    memcpy(dst, a, PAYLOAD_PATH_MAX);
}

/* A JSON integer's text (no fraction, no exponent) between p and q. */
static bool integer_text(const char *p, const char *q) {
    for (; p < q; p++)
        if (*p == '.' || *p == 'e' || *p == 'E') return false;
    return true;
}

/* list_fill for float64, the dtype of most json-encoded arrays: each leaf
 * read in one pass, stored as num_store stores it (an integer as the
 * nearest double, which is the nearest double to its text: -0 is +0.0; a
 * boolean as 0.0 or 1.0). 1 when a leaf does not read (cannot happen:
 * scanned), for the general loop to say why. */
static int fill_float64(const char *s, const list_info *info, char *out) {
    const char *p = s, *end = s + info->len;
    int64_t next = 0;
    while (p < end && next < info->leaves) {
        char c = *p;
        if (c == '[' || c == ']' || c == ',' || is_ws(c)) {
            p++;
            continue;
        }
        double v;
        if (c == 't' || c == 'f') {
            v = c == 't' ? 1.0 : 0.0;
            p += c == 't' ? 4 : 5;
        } else {
            const char *q = dconv_read(p, end, &v);
            if (q == NULL || !isfinite(v)) return 1;
            if (v == 0.0 && integer_text(p, q)) v = 0.0;
            p = q;
        }
        memcpy(out + (size_t)next++ * sizeof v, &v, sizeof v);
    }
    return 0;
}

int list_fill(const char *s, const list_info *info, tsr_dtype dtype, void *dst,
                  int misfit_code, const payload_ctx *ctx, const char *path) {
    if (dtype == TSR_FLOAT64 && fill_float64(s, info, dst) == 0) return 0;
    const char *p = s, *end = s + info->len;
    char *out = dst;
    size_t item = tsr_dtype_size(dtype);
    int64_t next = 0;
    while (p < end) {
        char c = *p;
        if (c == '[' || c == ']' || c == ',' || is_ws(c)) {
            p++;
            continue;
        }
        num_value num;
        read_leaf(p, end, &num, &p);
        if (next == info->leaves) break; /* cannot happen: counted */
        /* The common cases stored directly, as num_store would store them. */
        if (dtype == TSR_FLOAT64 && num.kind == NUM_REAL) {
            memcpy(out + (size_t)next++ * item, &num.v.r, sizeof num.v.r);
            continue;
        }
        if (dtype == TSR_INT64 && num.kind == NUM_INT) {
            memcpy(out + (size_t)next++ * item, &num.v.i, sizeof num.v.i);
            continue;
        }
        char why[160];
        if (num_store(dtype, out + (size_t)next * item, &num, why, sizeof why) != 0) {
            char where[PAYLOAD_PATH_MAX];
            element_path(where, path, info, next);
            return payload_fail(ctx, misfit_code, where, "%s", why);
        }
        next++;
    }
    return 0;
}
