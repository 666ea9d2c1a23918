/* SPDX-License-Identifier: MIT */
/* Shape arithmetic and the check of an array against a field's declared
 * dims, shared by inputs, seeds and results. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "codecs/array_buffer.h"

int64_t shape_count(const int64_t *shape, int32_t rank) { return array_shape_count(shape, rank); }

int shape_bytes(const tsr_array *a, size_t *bytes) {
    int64_t count;
    return array_shape_bytes(a->shape, a->rank, a->dtype, &count, bytes);
}

const char *shape_str(const int64_t *shape, int32_t rank, char *buf, size_t n) {
    size_t used = 0;
    int w = snprintf(buf, n, "(");
    used = w > 0 ? (size_t)w : 0;
    for (int32_t i = 0; i < rank && used < n; i++) {
        w = snprintf(buf + used, n - used, "%s%lld", i ? ", " : "", (long long)shape[i]);
        if (w > 0) used += (size_t)w;
    }
    if (used < n) snprintf(buf + used, n - used, rank == 1 ? ",)" : ")");
    return buf;
}

const char *field_shape_str(const field_info *f, char *buf, size_t n) {
    if (f->field.rank == TSR_RANK_ANY) {
        snprintf(buf, n, "(any rank)");
        return buf;
    }
    size_t used = 0;
    int w = snprintf(buf, n, "(");
    used = w > 0 ? (size_t)w : 0;
    for (int32_t i = 0; i < f->field.rank && used < n; i++) {
        const char *sep = i ? ", " : "";
        if (f->kind[i] == DIM_SYMBOL)
            w = snprintf(buf + used, n - used, "%s%s", sep, f->dims[i].symbol);
        else if (f->kind[i] == DIM_ANY)
            w = snprintf(buf + used, n - used, "%s*", sep);
        else
            w = snprintf(buf + used, n - used, "%s%lld", sep, (long long)f->dims[i].size);
        if (w > 0) used += (size_t)w;
    }
    if (used < n) snprintf(buf + used, n - used, f->field.rank == 1 ? ",)" : ")");
    return buf;
}

int shape_match(const field_info *f, const int64_t *shape, int32_t rank, int64_t *symval,
                const char **sym_from, const char *const *sym_names, char *why, size_t n) {
    if (f->field.rank == TSR_RANK_ANY) {
        /* Any rank a field may have; its dims carry no constraint. */
        if (rank < 0 || rank > TSR_MAX_FIELD_RANK) {
            snprintf(why, n, "rank %d given, any rank from 0 to %d expected", (int)rank,
                     TSR_MAX_FIELD_RANK);
            return -1;
        }
        for (int32_t i = 0; i < rank; i++)
            if (shape[i] < 0) {
                snprintf(why, n, "dimension %d is negative (%lld)", (int)i, (long long)shape[i]);
                return -1;
            }
        return 0;
    }
    if (rank != f->field.rank) {
        char decl[128];
        snprintf(why, n, "rank %d given, rank %d expected %s", (int)rank, (int)f->field.rank,
                 field_shape_str(f, decl, sizeof decl));
        return -1;
    }
    for (int32_t i = 0; i < rank; i++) {
        int64_t d = shape[i];
        if (d < 0) {
            snprintf(why, n, "dimension %d is negative (%lld)", (int)i, (long long)d);
            return -1;
        }
        switch (f->kind[i]) {
        case DIM_FIXED:
            if (d != f->dims[i].size) {
                snprintf(why, n, "dimension %d is %lld, %lld expected", (int)i, (long long)d,
                         (long long)f->dims[i].size);
                return -1;
            }
            break;
        case DIM_SYMBOL: {
            int16_t s = f->sym[i];
            if (symval[s] < 0) {
                symval[s] = d;
                sym_from[s] = f->field.name;
            } else if (symval[s] != d) {
                snprintf(why, n,
                         "dimension %d is %lld, but symbolic dim '%s' is %lld from field '%s'",
                         (int)i, (long long)d, sym_names[s], (long long)symval[s],
                         sym_from[s] ? sym_from[s] : "?");
                return -1;
            }
            break;
        }
        default:
            break;
        }
    }
    return 0;
}

int shape_from_symbols(const field_info *f, const int64_t *symval, int64_t *shape) {
    if (f->field.rank == TSR_RANK_ANY) return -1;   /* the endpoint decides */
    for (int32_t i = 0; i < f->field.rank; i++) {
        switch (f->kind[i]) {
        case DIM_FIXED: shape[i] = f->dims[i].size; break;
        case DIM_SYMBOL:
            if (symval[f->sym[i]] < 0) return -1;
            shape[i] = symval[f->sym[i]];
            break;
        default: return -1;
        }
    }
    return 0;
}
