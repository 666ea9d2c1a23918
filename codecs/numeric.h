/* SPDX-License-Identifier: MIT */
/*
 * One array element as a value, independent of its dtype, so that JSON
 * decoding, JSON encoding and dtype conversion share a single set of
 * range rules.
 */
#ifndef TESSERA_CODECS_NUMERIC_H
#define TESSERA_CODECS_NUMERIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tessera/plugin.h>

typedef enum num_kind {
    NUM_BOOL,
    NUM_INT,
    NUM_UINT,
    NUM_REAL,
    NUM_COMPLEX
} num_kind;

typedef struct num_value {
    num_kind kind;
    union {
        bool b;
        int64_t i;
        uint64_t u;
        double r;
        double c[2]; /* real, imaginary */
    } v;
} num_value;

/* Read the element at src, stored as dtype (native byte order). */
void num_load(tsr_dtype dtype, const void *src, num_value *out);

/* Store v at dst as dtype. Returns 0, or -1 with the cause in why when the
 * value does not fit (out of range, not an integer, complex into a real
 * type, ...). Mirrors Tesseract's checked casts: nothing wraps or saturates. */
int num_store(tsr_dtype dtype, void *dst, const num_value *v, char *why, size_t why_size);

/* The value as text for messages. */
void num_describe(const num_value *v, char *buf, size_t size);

/* numpy's "same_kind" casting between our dtypes: bool < integers (signed
 * and unsigned alike) < floats < complex. */
bool dtype_casts_same_kind(tsr_dtype from, tsr_dtype to);

/* Convert count elements from src (dtype from) to dst (dtype to), the
 * one implementation of Tesseract's casting rule for payloads and calls:
 * the dtypes must cast same_kind (not checked here), and each value must
 * fit (num_store). Returns 0 (*bad = -1), or -1 with *bad the index
 * of the first element that does not fit and why "element <index>:
 * <value> is out of range for <dtype>" (or another cause). */
int num_convert(const void *src, tsr_dtype from, void *dst, tsr_dtype to, int64_t count,
                    int64_t *bad, char *why, size_t why_size);

bool dtype_is_complex(tsr_dtype dtype);

#endif /* TESSERA_CODECS_NUMERIC_H */
