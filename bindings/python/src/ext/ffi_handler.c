/* SPDX-License-Identifier: MIT */
/*
 * The XLA FFI handler behind tessera.jax under jit: XLA calls it with its
 * buffers, it runs the component's endpoint through the library and writes
 * the results into XLA's output buffers. No Python runs on this path.
 *
 * Operands: the given inputs in schema order (the op says which; the
 * others stay unbound, so the library applies their defaults or marks
 * them absent), then the seeds (tangents for jvp, cotangents for vjp,
 * cotangents then tangents for hvp).
 * Attribute "handle" (uint64) names the FFI op.
 *
 * Where bytes move: in-process, the plugin reads XLA's operand buffers in
 * place and writes its results into XLA's output buffers
 * (tsr_call_set_result_buffer): nothing is copied. In worker mode,
 * operands are copied into the shared-memory arena (XLA's buffers are not
 * in it) and results copied out of it.
 */
#include "ffi_handler.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <xla/ffi/api/c_api.h>

#include "errors.h"
#include "ffi_table.h"

static XLA_FFI_Error *ffi_error(const XLA_FFI_Api *api, XLA_FFI_Error_Code code,
                                const char *message) {
    XLA_FFI_Error_Create_Args args = {
        .struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE,
        .extension_start = NULL,
        .message = message,
        .errc = code,
    };
    return api->XLA_FFI_Error_Create(&args);
}

/* XLA asks a handler for its metadata when it is registered. */
static XLA_FFI_Error *metadata(XLA_FFI_CallFrame *frame) {
    XLA_FFI_Metadata_Extension *ext = (XLA_FFI_Metadata_Extension *)frame->extension_start;
    if (ext->extension_base.struct_size < XLA_FFI_Metadata_Extension_STRUCT_SIZE ||
        ext->metadata->struct_size < XLA_FFI_Metadata_STRUCT_SIZE)
        return ffi_error(frame->api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "tessera: XLA's FFI metadata structs are older than the handler's");
    ext->metadata->api_version = (XLA_FFI_Api_Version){
        .struct_size = XLA_FFI_Api_Version_STRUCT_SIZE,
        .extension_start = NULL,
        .major_version = XLA_FFI_API_MAJOR,
        .minor_version = XLA_FFI_API_MINOR,
    };
    ext->metadata->traits = 0;
    return NULL;
}

static tsr_dtype dtype_from_xla(XLA_FFI_DataType t) {
    switch (t) {
    case XLA_FFI_DataType_PRED: return TSR_BOOL;
    case XLA_FFI_DataType_S8: return TSR_INT8;
    case XLA_FFI_DataType_S16: return TSR_INT16;
    case XLA_FFI_DataType_S32: return TSR_INT32;
    case XLA_FFI_DataType_S64: return TSR_INT64;
    case XLA_FFI_DataType_U8: return TSR_UINT8;
    case XLA_FFI_DataType_U16: return TSR_UINT16;
    case XLA_FFI_DataType_U32: return TSR_UINT32;
    case XLA_FFI_DataType_U64: return TSR_UINT64;
    case XLA_FFI_DataType_F16: return TSR_FLOAT16;
    case XLA_FFI_DataType_F32: return TSR_FLOAT32;
    case XLA_FFI_DataType_F64: return TSR_FLOAT64;
    case XLA_FFI_DataType_C64: return TSR_COMPLEX64;
    case XLA_FFI_DataType_C128: return TSR_COMPLEX128;
    default: return TSR_DTYPE_INVALID;
    }
}

static int handle_attr(const XLA_FFI_Attrs *attrs, uint64_t *handle) {
    for (int64_t i = 0; i < attrs->size; i++) {
        const XLA_FFI_ByteSpan *name = attrs->names[i];
        if (attrs->types[i] != XLA_FFI_AttrType_SCALAR || name->len != 6 ||
            memcmp(name->ptr, "handle", 6) != 0)
            continue;
        const XLA_FFI_Scalar *s = attrs->attrs[i];
        if (s->dtype != XLA_FFI_DataType_U64 && s->dtype != XLA_FFI_DataType_S64) return -1;
        memcpy(handle, s->value, sizeof *handle);
        return 0;
    }
    return -1;
}

/* A tsr_array over an XLA buffer, or -1 (with a cause) if it cannot be. */
static int view_buffer(const XLA_FFI_Buffer *b, tsr_array *a, char *why, size_t n) {
    a->dtype = dtype_from_xla(b->dtype);
    if (a->dtype == TSR_DTYPE_INVALID) {
        snprintf(why, n, "XLA element type %d has no Tessera dtype", (int)b->dtype);
        return -1;
    }
    if (b->rank > TSR_MAX_RANK) {
        snprintf(why, n, "rank %lld is beyond Tessera's %d", (long long)b->rank, TSR_MAX_RANK);
        return -1;
    }
    a->data = b->data;
    a->rank = (int32_t)b->rank;
    for (int64_t d = 0; d < b->rank; d++) a->shape[d] = b->dims[d];
    return 0;
}

static size_t buffer_bytes(const XLA_FFI_Buffer *b) {
    size_t count = 1;
    for (int64_t d = 0; d < b->rank; d++) count *= (size_t)b->dims[d];
    return count * tsr_dtype_size(dtype_from_xla(b->dtype));
}

static size_t array_bytes(const tsr_array *a) {
    size_t count = 1;
    for (int32_t d = 0; d < a->rank; d++) count *= (size_t)a->shape[d];
    return count * tsr_dtype_size(a->dtype);
}

/* The tangent of an output the component cannot differentiate: NaN, as
 * Tesseract-JAX gives (a cotangent for it is refused at transpose). */
static int fill_nan(XLA_FFI_Buffer *b) {
    size_t bytes = buffer_bytes(b);
    switch (b->dtype) {
    case XLA_FFI_DataType_F32:
    case XLA_FFI_DataType_C64:
        for (size_t i = 0; i < bytes / sizeof(float); i++) ((float *)b->data)[i] = NAN;
        return 0;
    case XLA_FFI_DataType_F64:
    case XLA_FFI_DataType_C128:
        for (size_t i = 0; i < bytes / sizeof(double); i++) ((double *)b->data)[i] = NAN;
        return 0;
    case XLA_FFI_DataType_F16:
        for (size_t i = 0; i < bytes / 2; i++) ((uint16_t *)b->data)[i] = 0x7e00;
        return 0;
    default: return -1;
    }
}

/* Bind the operands and XLA's result buffers, run. 0, or a TSR_E_* code with
 * the message (a mismatch with XLA: TSR_E_ARGUMENT for operands,
 * TSR_E_PLUGIN_RESULT for results). */
static int run_op(ffi_op *op, tsr_call *call, XLA_FFI_CallFrame *frame, char *msg, size_t n) {
    char why[TSR_ERRMSG_MAX];
    if (frame->args.size != op->n_inputs + op->n_seeds || frame->rets.size != op->n_rets) {
        snprintf(msg, n, "%lld operands and %lld results given, %d and %d expected",
                 (long long)frame->args.size, (long long)frame->rets.size,
                 (int)(op->n_inputs + op->n_seeds), (int)op->n_rets);
        return TSR_E_ARGUMENT;
    }
    for (int64_t i = 0; i < frame->args.size; i++) {
        tsr_array a;
        if (frame->args.types[i] != XLA_FFI_ArgType_BUFFER ||
            view_buffer(frame->args.args[i], &a, why, sizeof why) != 0) {
            snprintf(msg, n, "operand %lld: %s", (long long)i,
                     frame->args.types[i] != XLA_FFI_ArgType_BUFFER ? "not a buffer" : why);
            return TSR_E_ARGUMENT;
        }
        /* hvp's seeds: the cotangents of wrt_out, then the tangents of wrt_in. */
        int64_t s = i - op->n_inputs;
        int rc = s < 0 ? tsr_call_set_input_at(call, op->input_at[i], &a)
                 : op->ep == TSR_EP_HVP && s >= op->n_wrt_out
                     ? tsr_call_set_tangent(call, op->seed_names[s], &a)
                     : tsr_call_set_seed(call, op->seed_names[s], &a);
        if (rc != 0) {
            snprintf(msg, n, "%s", tsr_call_errmsg(call));
            return rc;
        }
    }
    /* The plugin writes straight into XLA's output buffers (in worker mode
     * the library copies them there from shared memory). */
    for (int32_t k = 0; k < op->n_rets; k++) {
        if (op->ret_map[k] < 0) continue;
        XLA_FFI_Buffer *out = frame->rets.rets[k];
        int rc = tsr_call_set_result_buffer(call, op->ret_map[k], out->data, buffer_bytes(out));
        if (rc != 0) {
            snprintf(msg, n, "%s", tsr_call_errmsg(call));
            return rc;
        }
    }
    int rc = op->batch > 0 ? tsr_call_run_batch(call, op->batch) : tsr_call_run(call);
    if (rc != 0) {
        snprintf(msg, n, "%s", tsr_call_errmsg(call));
        return rc;
    }
    /* The results lie in XLA's buffers already: fill the tangents the
     * component has none for, and check that each result fills its buffer
     * (a value-dependent shape may come out smaller). */
    for (int32_t k = 0; k < op->n_rets; k++) {
        XLA_FFI_Buffer *out = frame->rets.rets[k];
        if (op->ret_map[k] < 0) {
            if (fill_nan(out) != 0) {
                snprintf(msg, n, "result %d: no NaN for XLA element type %d", (int)k,
                         (int)out->dtype);
                return TSR_E_DTYPE;
            }
            continue;
        }
        const tsr_array *r = tsr_call_result(call, op->ret_map[k]);
        size_t bytes = r ? array_bytes(r) : 0;
        if (!r || r->dtype != dtype_from_xla(out->dtype) || bytes != buffer_bytes(out)) {
            snprintf(msg, n,
                     "result %d does not have the shape or dtype abstract evaluation gave "
                     "(%zu bytes produced, %zu expected)",
                     (int)k, bytes, buffer_bytes(out));
            return TSR_E_PLUGIN_RESULT;
        }
    }
    return 0;
}

/* The XLA error code for a library code: argument trouble, time, the rest. */
static XLA_FFI_Error_Code xla_code(int rc) {
    switch (rc) {
    case TSR_E_ARGUMENT: case TSR_E_UNKNOWN_FIELD: case TSR_E_MISSING: case TSR_E_DTYPE:
    case TSR_E_SHAPE: case TSR_E_NOT_DIFFERENTIABLE:
        return XLA_FFI_Error_Code_INVALID_ARGUMENT;
    case TSR_E_TIMEOUT: return XLA_FFI_Error_Code_DEADLINE_EXCEEDED;
    case TSR_E_UNSUPPORTED: return XLA_FFI_Error_Code_UNIMPLEMENTED;
    default: return XLA_FFI_Error_Code_INTERNAL;
    }
}

static XLA_FFI_Error *tessera_call(XLA_FFI_CallFrame *frame) {
    if (frame->extension_start && frame->extension_start->type == XLA_FFI_Extension_Metadata)
        return metadata(frame);
    if (frame->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
    uint64_t handle;
    if (handle_attr(&frame->attrs, &handle) != 0)
        return ffi_error(frame->api, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         "tessera_call: no uint64 attribute 'handle'");
    /* Failures read "tessera.<Class>: <message> [TSR_E_...]": XLA raises
     * them as JaxRuntimeError, and tessera.jax turns that text back into
     * the class (tessera.jax.tessera_error). */
    char text[2 * (TSR_ERRMSG_MAX + 64)];
    ffi_op *op = ffi_op_enter(handle);
    if (!op) {
        tessera_message(text, sizeof text, TSR_E_ARGUMENT,
                        "the component this computation calls has been closed");
        return ffi_error(frame->api, XLA_FFI_Error_Code_FAILED_PRECONDITION, text);
    }
    char msg[TSR_ERRMSG_MAX + 64];
    tsr_call *call = ffi_op_take_call(op, msg, sizeof msg);
    int rc = call ? run_op(op, call, frame, msg, sizeof msg) : TSR_E_NOT_DIFFERENTIABLE;
    if (call) ffi_op_give_call(op, call);
    ffi_op_leave(op);
    if (rc == 0) return NULL;
    tessera_message(text, sizeof text, rc, msg);
    return ffi_error(frame->api, xla_code(rc), text);
}

PyObject *ffi_handler_capsule(void) {
    return PyCapsule_New((void *)tessera_call, NULL, NULL);
}
