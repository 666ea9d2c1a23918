/* SPDX-License-Identifier: MIT */
/* The libffi call interface of each endpoint's routine, prepared once at
 * load: addresses for arrays and by-reference scalars, the scalar's own
 * type for by-value ones, then one size_t per hidden character length
 * (gfortran's convention since GCC 8: after all declared arguments). */
#include <stdlib.h>

#include "manifest_internal.h"

ffi_type *mf_ffi_scalar_type(tsr_dtype d) {
    switch (d) {
    case TSR_BOOL:
    case TSR_UINT8: return &ffi_type_uint8;
    case TSR_INT8: return &ffi_type_sint8;
    case TSR_INT16: return &ffi_type_sint16;
    case TSR_UINT16: return &ffi_type_uint16;
    case TSR_INT32: return &ffi_type_sint32;
    case TSR_UINT32: return &ffi_type_uint32;
    case TSR_INT64: return &ffi_type_sint64;
    case TSR_UINT64: return &ffi_type_uint64;
    case TSR_FLOAT32: return &ffi_type_float;
    case TSR_FLOAT64: return &ffi_type_double;
    default: return NULL;
    }
}

static ffi_type *size_type(void) {
    return sizeof(size_t) == 8 ? &ffi_type_uint64 : &ffi_type_uint32;
}

int mf_cif_prepare(mf_parse *p, mf_endpoint *e, const char *entry) {
    int32_t n = e->n_args + e->n_hidden;
    e->types = calloc((size_t)n + 1, sizeof *e->types);
    if (!e->types) return mf_fail(p, TSR_E_NOMEM, entry, "out of memory");
    int32_t h = e->n_args;
    for (int32_t i = 0; i < e->n_args; i++) {
        const mf_arg *a = &e->args[i];
        ffi_type *t = a->by_value ? mf_ffi_scalar_type(a->dtype) : &ffi_type_pointer;
        if (!t)
            return mf_fail(p, TSR_E_DESCRIPTOR, entry,
                           "internal error: args[%d] has no libffi type", (int)i);
        e->types[i] = t;
        if (a->kind == MF_CHAR && a->hidden_len) e->types[h++] = size_type();
    }
    ffi_type *rtype = e->result                 ? mf_ffi_scalar_type(e->result->dtype)
                      : e->returns == TSR_INT32 ? &ffi_type_sint32
                      : e->returns == TSR_INT64 ? &ffi_type_sint64
                                                : &ffi_type_void;
    ffi_status st = ffi_prep_cif(&e->cif, FFI_DEFAULT_ABI, (unsigned)n, rtype, e->types);
    if (st != FFI_OK)
        return mf_fail(p, TSR_E_DESCRIPTOR, entry, "libffi cannot prepare this call (status %d)",
                       (int)st);
    return 0;
}

void mf_cif_free(mf_endpoint *e) {
    free(e->types);
    e->types = NULL;
}
