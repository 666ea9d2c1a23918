/* SPDX-License-Identifier: MIT */
/*
 * Numeric lists read from the JSON text itself: nested lists whose leaves
 * are JSON numbers, true or false. jansson holds each value in a node of
 * some 50-100 bytes, so a list of one-digit numbers costs it ~40 times its
 * text; these lists are cut out before jansson parses the rest
 * (json_hoist.c), measured first (count, shape, kinds of values), and
 * written straight into the array's buffer once the limits allow it.
 *
 * The grammar is JSON's, strictly: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?
 * [0-9]+)?, true, false, whitespace " \t\n\r". Integers must fit int64
 * and reals a double, as jansson requires.
 */
#ifndef TESSERA_CODECS_LIST_TEXT_H
#define TESSERA_CODECS_LIST_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tessera/plugin.h>

#include "array_decode.h"
#include "payload_error.h"

typedef enum list_verdict {
    LIST_NUMERIC, /* a valid numeric list */
    LIST_OTHER,   /* valid or not, it holds a string, an object, null or
                         lists nested past TSR_MAX_RANK: jansson's to read */
    LIST_BAD      /* not JSON: see list_stop */
} list_verdict;

typedef struct list_info {
    size_t len;                   /* '[' to ']' included */
    int64_t leaves;
    int64_t nodes;                /* lists and leaves: what jansson would hold */
    int32_t rank;                 /* along the first elements, as for a parsed list */
    int64_t dims[TSR_MAX_RANK];
    bool has_real, has_int, has_empty;
    bool ragged;                  /* not rectangular: list_refuse says where */
} list_info;

/* Where a BAD list stops being JSON: the lists open there and, in the
 * innermost, its last complete element. What lies before these can be
 * blanked out without changing what jansson says of the text. */
typedef struct list_stop {
    int32_t depth;                /* lists open (1 or more) */
    size_t open[TSR_MAX_RANK];    /* offset of each open '[' from the list's start */
    size_t last_start, last_end;  /* the innermost's last element; last_end 0: none */
} list_stop;

/* Read the list starting at s ('['), which ends by end at the latest. */
list_verdict list_scan(const char *s, const char *end, list_info *info,
                               list_stop *stop);

/* The dtype plain values take: numpy's (any real or an empty list: float64,
 * else any integer: int64, else bool). */
tsr_dtype list_natural_dtype(const list_info *info);

/* A ragged list's refusal, in the order a parsed list is filled: the first
 * element that breaks the shape read along the first elements, or before
 * it a value dtype cannot hold (misfit_code), named by its path. */
int list_refuse(const char *s, const list_info *info, tsr_dtype dtype, int misfit_code,
                    const payload_ctx *ctx, const char *path);

/* Store the leaves of the (valid, rectangular) list s in C order into dst
 * as dtype; a value the dtype cannot hold fails with misfit_code at its
 * element's path. */
int list_fill(const char *s, const list_info *info, tsr_dtype dtype, void *dst,
                  int misfit_code, const payload_ctx *ctx, const char *path);

#endif /* TESSERA_CODECS_LIST_TEXT_H */
