/* SPDX-License-Identifier: MIT */
/* The dtypes' names and sizes in bytes: what an array's bytes mean, known
 * below the component model (the encodings need them). */
#include <stddef.h>
#include <string.h>

#include <tessera/tessera.h>

static const struct {
    const char *name;
    size_t size;
} dtypes[TSR_DTYPE_COUNT] = {
    [TSR_BOOL] = {"bool", 1},        [TSR_INT8] = {"int8", 1},
    [TSR_INT16] = {"int16", 2},      [TSR_INT32] = {"int32", 4},
    [TSR_INT64] = {"int64", 8},      [TSR_UINT8] = {"uint8", 1},
    [TSR_UINT16] = {"uint16", 2},    [TSR_UINT32] = {"uint32", 4},
    [TSR_UINT64] = {"uint64", 8},    [TSR_FLOAT16] = {"float16", 2},
    [TSR_FLOAT32] = {"float32", 4},  [TSR_FLOAT64] = {"float64", 8},
    [TSR_COMPLEX64] = {"complex64", 8}, [TSR_COMPLEX128] = {"complex128", 16},
};

TSR_API const char *tsr_dtype_name(tsr_dtype dtype) {
    if ((int)dtype <= TSR_DTYPE_INVALID || (int)dtype >= TSR_DTYPE_COUNT) return NULL;
    return dtypes[dtype].name;
}

TSR_API int tsr_dtype_from_name(const char *name) {
    if (!name) return -1;
    for (int d = TSR_BOOL; d < TSR_DTYPE_COUNT; d++)
        if (strcmp(dtypes[d].name, name) == 0) return d;
    return -1;
}

TSR_API size_t tsr_dtype_size(tsr_dtype dtype) {
    if ((int)dtype <= TSR_DTYPE_INVALID || (int)dtype >= TSR_DTYPE_COUNT) return 0;
    return dtypes[dtype].size;
}
