/* SPDX-License-Identifier: MIT */
/*
 * Tessera plugin ABI, version 1.
 *
 * This is the only header a plugin needs. A plugin is a shared object that
 * exports one function, TSR_PLUGIN_ENTRY_SYMBOL, returning a static
 * descriptor. The same binary is loaded in every mode (inproc, isolated,
 * worker); nothing here depends on which.
 *
 * Rules of the ABI
 *  - Every struct that may grow starts with its own size (struct_size) and
 *    only ever grows by appending members. The host reads a member only when
 *    struct_size says the plugin knows it.
 *  - The host owns every buffer it hands out (inputs, outputs, the context)
 *    and the plugin owns its descriptor and its state. Neither frees the
 *    other's memory. Output buffers come from the host through the context,
 *    which is what lets the host place them in shared memory for zero-copy
 *    worker calls.
 *  - Arrays are C-contiguous: a data pointer, a dtype, a rank and a shape.
 *    Buffers handed out by the host are aligned to at least TSR_ALIGNMENT
 *    (64) bytes.
 *  - Endpoints return 0 on success or a non-zero value on failure, after
 *    describing the failure with tsr_ctx_error(). An endpoint that stopped
 *    because it was interrupted (a Python component's KeyboardInterrupt)
 *    returns TSR_E_CANCELLED: the call fails with that code, as when the
 *    host cancels it.
 */
#ifndef TESSERA_PLUGIN_H
#define TESSERA_PLUGIN_H

#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TSR_PLUGIN_ABI_VERSION 1u

/* Name of the exported entry function; see TSR_PLUGIN_DEFINE below. */
#define TSR_PLUGIN_ENTRY_SYMBOL "tsr_plugin_entry"

/* Largest rank a schema field may declare. Arrays may be twice as deep,
 * so that a Jacobian block of shape (*out_shape, *in_shape) always fits. */
#define TSR_MAX_FIELD_RANK 8
#define TSR_MAX_RANK (2 * TSR_MAX_FIELD_RANK)

/* Alignment of every buffer the host hands out: enough for AVX-512, and
 * what JAX needs to view a buffer instead of copying it. */
#define TSR_ALIGNMENT 64

/* Element types: Tesseract's set. Values are part of the ABI. */
typedef enum tsr_dtype {
    TSR_DTYPE_INVALID = 0,
    TSR_BOOL = 1,
    TSR_INT8 = 2,
    TSR_INT16 = 3,
    TSR_INT32 = 4,
    TSR_INT64 = 5,
    TSR_UINT8 = 6,
    TSR_UINT16 = 7,
    TSR_UINT32 = 8,
    TSR_UINT64 = 9,
    TSR_FLOAT16 = 10,
    TSR_FLOAT32 = 11,
    TSR_FLOAT64 = 12,
    TSR_COMPLEX64 = 13,
    TSR_COMPLEX128 = 14,
    TSR_DTYPE_COUNT = 15
} tsr_dtype;

/* One dimension of a field's declared shape:
 *   fixed     size >= 0, symbol NULL       e.g. 3
 *   symbolic  symbol non-NULL              e.g. "n": every field using "n"
 *             must agree on its size within one call
 *   wildcard  size == TSR_DIM_ANY, symbol NULL: any size */
typedef struct tsr_dim {
    const char *symbol;
    int64_t size;
} tsr_dim;

#define TSR_DIM_ANY ((int64_t)-1)
#define TSR_FIXED(n) {NULL, (int64_t)(n)}
#define TSR_SYM(name) {(name), TSR_DIM_ANY}
#define TSR_ANY {NULL, TSR_DIM_ANY}

/* Field flags. */
#define TSR_FIELD_DIFFERENTIABLE 0x1u
/* Inputs only: the caller may leave the input out. The plugin then sees it
 * as an absent array (tsr_input_absent): data NULL, dtype
 * TSR_DTYPE_INVALID, rank 0. An absent input binds no symbolic dim and
 * cannot be differentiated: a call naming it in jvp_inputs, vjp_inputs or
 * jac_inputs fails with TSR_E_MISSING. Honoured only in fields whose
 * layout has default_value (tsr_plugin.field_size covers it); a field may
 * not be both optional and have a default. */
#define TSR_FIELD_OPTIONAL 0x2u

/* Largest default value a field may declare, in bytes of data. */
#define TSR_MAX_DEFAULT_BYTES ((size_t)1 << 20)

typedef struct tsr_array tsr_array;

/* An input or output field. Names use dots for nesting, as Tesseract's
 * paths do ("mesh.nodes"). Arrays of fields are walked with the stride
 * tsr_plugin.field_size, so this struct can grow too. */
typedef struct tsr_field {
    const char *name;
    tsr_dtype dtype;
    int32_t rank;          /* 0 = scalar */
    const tsr_dim *dims;   /* rank entries; may be NULL when rank == 0 */
    uint32_t flags;        /* TSR_FIELD_* */
    const char *doc;       /* may be NULL */
    /* Appended to the first layout: read only when tsr_plugin.field_size
     * covers it, so plugins built with the older layout keep loading. */
    const tsr_array *default_value;  /* inputs only: the value a left-out input takes; NULL: none */
    /* Appended to the second layout (ABI 1.1): zero in older plugins,
     * which is an array field as before. */
    uint32_t kind;                   /* tsr_kind */
    const char *const *choices;      /* TSR_KIND_TEXT: the allowed values (Literal, enum); NULL: any */
    int32_t n_choices;
} tsr_field;

/*
 * Field kinds (tsr_field.kind). A component's inputs and outputs form a
 * tree, as Tesseract's pydantic schemas do: nested models are dotted names
 * ("mesh.points"); their leaves are of one of these kinds.
 *
 *   TSR_KIND_ARRAY  an array of dtype, rank and dims; the fast path (by
 *                   reference in worker mode, zero-copy everywhere).
 *                   rank TSR_RANK_ANY (dims NULL): any rank up to
 *                   TSR_MAX_FIELD_RANK (Array[..., Float64]).
 *   TSR_KIND_TEXT   UTF-8 text (str, Literal[...], a str enum). When
 *                   choices is set, the host refuses any other value
 *                   before the endpoint runs, naming the allowed ones.
 *   TSR_KIND_JSON   one JSON value: a Python-native number or bool, null,
 *                   a list or dict of any kind, nested models inside them,
 *                   anything else a schema declares. Arrays inside are
 *                   Tesseract's encoded array objects ({"object_type":
 *                   "array", "shape", "dtype", "data": {"buffer",
 *                   "encoding": "base64"}}); the host re-encodes them to the
 *                   encoding a caller asks for. The component validates
 *                   what is inside.
 *
 * A TEXT or JSON value reaches an endpoint as a tsr_array of dtype
 * TSR_UINT8, rank 1, shape[0] its length in bytes, whose data is followed
 * by a NUL the host adds (not counted): (const char *)a->data is a C
 * string, in every mode. The descriptor's dtype, rank and dims of such a
 * field are ignored. A TEXT or JSON result has a shape that depends on
 * values: the endpoint sets shape[0] (rank 1) and calls tsr_ctx_alloc(),
 * which hands out shape[0] + 1 bytes (the last one NUL) and writes the
 * bytes. Defaults (default_value) of such fields are uint8 rank-1 arrays
 * of the text. abstract_eval is given the bytes of TEXT and JSON inputs
 * (a component's shapes may depend on its options), while array inputs
 * carry only dtype, rank and shape there. The host checks TEXT values as
 * UTF-8 and against choices before any endpoint runs (TSR_E_VALUE).
 *
 * Derivatives inside JSON values. A JSON field flagged
 * TSR_FIELD_DIFFERENTIABLE holds differentiable array leaves. A caller may
 * then name, in jvp/vjp/jac inputs and outputs, a path inside it in
 * Tesseract's syntax: "weights.{a}" (dict key), "layers.[0].k" (list
 * item, then a model's field). Such an entry's wrt_in / wrt_out index is
 * the JSON field's, and its full path is in tsr_args.wrt_in_paths /
 * wrt_out_paths (both always set when struct_size covers them; a whole
 * field's path is its name). A seed for such a path is a float array
 * whose shape the component checks; a result for such a path has data
 * NULL: the endpoint sets its dtype, rank and shape and calls
 * tsr_ctx_alloc().
 */
typedef enum tsr_kind {
    TSR_KIND_ARRAY = 0,
    TSR_KIND_TEXT = 1,
    TSR_KIND_JSON = 2
} tsr_kind;

/* tsr_field.rank of an array field that accepts any rank. */
#define TSR_RANK_ANY (-1)

/* Defaults (tsr_field.default_value). A caller may leave out an input that
 * has one; the host then passes the default in every mode, before
 * validation, exactly as if the caller had given it: it binds the field's
 * symbolic dims like a given input, so its shape must agree with the
 * other inputs that share them. At load the host copies the default and
 * refuses (TSR_E_DESCRIPTOR) one whose dtype or rank differs from the
 * field's, whose fixed dims disagree with the field's, whose data is
 * larger than TSR_MAX_DEFAULT_BYTES or NULL while it has elements, one on
 * an output, and one on a field that is also TSR_FIELD_OPTIONAL. The host
 * only reads the values, so they may be plain static data (tsr_array.data
 * is not const: declare them without const rather than cast it away):
 *     static double scale = 2.0;
 *     static const tsr_array scale_default = {.data = &scale, .dtype = TSR_FLOAT64};
 *     ... {.name = "scale", .dtype = TSR_FLOAT64, .default_value = &scale_default} */

/* A C-contiguous array. For inputs the plugin must not write through data. */
struct tsr_array {
    void *data;
    tsr_dtype dtype;
    int32_t rank;
    int64_t shape[TSR_MAX_RANK];
};

/* Which endpoint is being called; values are part of the ABI. */
typedef enum tsr_endpoint {
    TSR_EP_APPLY = 0,
    TSR_EP_JVP = 1,
    TSR_EP_VJP = 2,
    TSR_EP_JACOBIAN = 3,
    TSR_EP_ABSTRACT_EVAL = 4,
    TSR_EP_HVP = 5,             /* appended (ABI 1.2) */
    TSR_EP_COUNT = 6
} tsr_endpoint;

/*
 * The arguments of one endpoint call. Field indices refer to the order of
 * tsr_plugin.inputs / tsr_plugin.outputs.
 *
 *   inputs      always every input field, in schema order (for
 *               abstract_eval only dtype, rank and shape are set; data is NULL);
 *               a left-out input with a default holds the default, a
 *               left-out optional one is absent (tsr_input_absent)
 *
 *   apply       results[j] is output field j (n_results == n_outputs)
 *   jvp         wrt_in  = jvp_inputs,  seeds[k] = tangent of wrt_in[k]
 *               wrt_out = jvp_outputs, results[k] = JVP for wrt_out[k],
 *               shaped like that output
 *   vjp         wrt_in  = vjp_inputs,  results[k] = VJP for wrt_in[k],
 *               shaped like that input
 *               wrt_out = vjp_outputs, seeds[k] = cotangent of wrt_out[k]
 *   jacobian    wrt_in  = jac_inputs, wrt_out = jac_outputs,
 *               results[o * n_wrt_in + i] = d out[wrt_out[o]] / d in[wrt_in[i]]
 *               of shape (*out_shape, *in_shape)
 *   hvp         wrt_in  = hvp_inputs, wrt_out = hvp_outputs,
 *               n_seeds = n_wrt_out + n_wrt_in:
 *               seeds[o] = cotangent w_o of wrt_out[o], shaped like that output,
 *               seeds[n_wrt_out + k] = tangent v_k of wrt_in[k], shaped like
 *               that input;
 *               results[k], shaped like in[wrt_in[k]], is the derivative of
 *               the vjp along the tangent (a Hessian-vector product):
 *                 sum_j  d/d in[wrt_in[j]] ( sum_o w_o . d out[wrt_out[o]]
 *                                            / d in[wrt_in[k]] ) . v_j
 *               For one scalar output and w = 1 that is H v, H the Hessian of
 *               that output over the hvp_inputs. A tangent that is all zeros
 *               leaves its input fixed, so a mixed block (the result for one
 *               input along another) is one call.
 *   abstract_eval  results[j]: the plugin sets dtype, rank and shape of
 *               output j; data stays NULL
 *
 * Before the call the host sets dtype, rank and shape of every result whose
 * shape it can work out from the schema and allocates its data (never NULL,
 * even for an empty array). A result
 * whose data is NULL has a shape that depends on values: the plugin sets its
 * rank and shape and calls tsr_ctx_alloc() to get the buffer.
 */
typedef struct tsr_args {
    uint32_t struct_size;
    tsr_endpoint endpoint;
    const tsr_array *inputs;
    int32_t n_inputs;
    const int32_t *wrt_in;
    int32_t n_wrt_in;
    const int32_t *wrt_out;
    int32_t n_wrt_out;
    const tsr_array *seeds;
    int32_t n_seeds;
    tsr_array *results;
    int32_t n_results;
    /* Appended (ABI 1.1): the path of each wrt entry, n_wrt_in and
     * n_wrt_out of them; the field's name for a whole field, a path inside
     * a JSON field otherwise (see TSR_KIND_JSON). Read them only when
     * struct_size covers them. */
    const char *const *wrt_in_paths;
    const char *const *wrt_out_paths;
} tsr_args;

typedef struct tsr_ctx tsr_ctx;

/* Log levels for tsr_ctx_log(). */
typedef enum tsr_log_level {
    TSR_LOG_DEBUG = 0,
    TSR_LOG_INFO = 1,
    TSR_LOG_WARN = 2,
    TSR_LOG_ERROR = 3
} tsr_log_level;

/* Services the host offers to a running endpoint. Appended to, never
 * reordered; check struct_size before using a member added after v1. */
typedef struct tsr_host_api {
    uint32_t struct_size;
    /* Record why the endpoint failed; the host adds component, endpoint and
     * call context. The last message set wins. */
    void (*set_error)(tsr_ctx *ctx, const char *message);
    /* Allocate the buffer of result `index` from the shape the plugin set
     * in it (dtype is the host's). Returns NULL, with an error already
     * recorded, if the shape is invalid or memory is exhausted. */
    void *(*alloc_result)(tsr_ctx *ctx, int32_t index);
    /* Diagnostics; the host decides where they go (never stdout). */
    void (*log)(tsr_ctx *ctx, tsr_log_level level, const char *message);
    /* Configuration value given by the host when it opened the component
     * (tsr_options_set_config), or NULL when absent. */
    const char *(*config)(tsr_ctx *ctx, const char *key);
    /* Appended: read through tsr_ctx_cancelled(), which checks struct_size.
     * 1 when the host has asked the call to stop (tsr_call_cancel, or a
     * host's check such as Python's Ctrl-C), else 0. Cheap (an atomic load;
     * now and then the host's own check): poll it every few milliseconds in
     * a long loop, and when it says 1 release what the call took, report
     * tsr_ctx_error(ctx, "cancelled") and return non-zero; the call fails
     * with TSR_E_CANCELLED. Results need not be written then. */
    int (*cancelled)(tsr_ctx *ctx);
} tsr_host_api;

/* The context handed to every endpoint; owned by the host. */
struct tsr_ctx {
    uint32_t struct_size;
    const tsr_host_api *host;
    void *state;           /* what init stored; NULL if there is no init */
};

typedef int (*tsr_endpoint_fn)(tsr_ctx *ctx, const tsr_args *args);
/* init: read configuration (tsr_ctx_config), build persistent state and
 * store it in *state. Called once per load, before any endpoint. */
typedef int (*tsr_init_fn)(tsr_ctx *ctx, void **state);
/* fini: release the state; called once at close. */
typedef void (*tsr_fini_fn)(void *state);

/* Plugin flags. */
/* Endpoints may run concurrently on the same state; without this flag the
 * host serialises calls to one loaded component. */
#define TSR_PLUGIN_THREAD_SAFE 0x1u

/* How the host serves jvp, vjp and jacobian that a plugin leaves out
 * (tsr_plugin.fd_method), by finite differences of apply. With n the
 * number of input elements differentiated and S = fd_samples, a call costs
 * this many apply evaluations:
 *
 *                   jvp      vjp        jacobian
 *   TSR_FD_FORWARD  2        1 + n      1 + n
 *   TSR_FD_CENTRAL  2        2n         2n
 *   TSR_FD_SPSA     2        2S         2S
 *
 * FORWARD has O(h) error, CENTRAL O(h^2). SPSA (simultaneous perturbation)
 * perturbs every element at once along random +-1 directions and averages
 * S estimates: its cost does not grow with n, but the result is a
 * stochastic estimate (error ~ 1/sqrt(S)), seeded so that it repeats. jvp
 * is always one directional difference (central, or forward for FORWARD).
 * Only float32 and float64 fields can be differentiated this way. */
typedef enum tsr_fd_method {
    TSR_FD_NONE = 0,      /* missing derivative endpoints stay missing */
    TSR_FD_FORWARD = 1,
    TSR_FD_CENTRAL = 2,
    TSR_FD_SPSA = 3
} tsr_fd_method;

/* The descriptor returned by the entry function. Static storage, owned by
 * the plugin, valid until the plugin is unloaded. */
typedef struct tsr_plugin {
    uint32_t abi_version;   /* TSR_PLUGIN_ABI_VERSION the plugin was built for */
    uint32_t struct_size;   /* sizeof(tsr_plugin) as the plugin knows it */
    uint32_t field_size;    /* sizeof(tsr_field) as the plugin knows it */
    uint32_t flags;         /* TSR_PLUGIN_* */
    const char *name;
    const char *version;
    const char *description;
    const tsr_field *inputs;
    int32_t n_inputs;
    const tsr_field *outputs;
    int32_t n_outputs;
    tsr_init_fn init;               /* optional */
    tsr_fini_fn fini;               /* optional */
    tsr_endpoint_fn apply;          /* required */
    tsr_endpoint_fn jvp;            /* optional */
    tsr_endpoint_fn vjp;            /* optional */
    tsr_endpoint_fn jacobian;       /* optional */
    tsr_endpoint_fn abstract_eval;  /* optional */
    /* Appended to the first layout: the host reads them only when
     * struct_size covers them, so older plugins keep working. */
    tsr_fd_method fd_method;        /* serve missing derivatives by finite differences */
    uint32_t fd_samples;            /* SPSA estimates averaged; 0 = 32 */
    double fd_step;                 /* relative step h = fd_step * max(|x|, 1); 0 = the
                                       method's default: cbrt(eps) central, sqrt(eps) forward */
    /* Appended (ABI 1.2): the Hessian-vector product (tsr_args, hvp).
     * Optional: without it the host serves hvp by central differences of
     * the vjp when the plugin has a vjp or a jacobian, and of apply when
     * it has an fd_method (tsr_component_hvp_source). */
    tsr_endpoint_fn hvp;
} tsr_plugin;

/* Signature of the entry function. host_abi_version lets a plugin built
 * for a newer ABI refuse (return NULL) or adapt to an older host. */
typedef const tsr_plugin *(*tsr_plugin_entry_fn)(uint32_t host_abi_version);

#if defined(__GNUC__)
#define TSR_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define TSR_PLUGIN_EXPORT
#endif

/* Define the entry function of a plugin from a tsr_plugin object:
 *     static const tsr_plugin plugin = { TSR_PLUGIN_HEADER, .name = ... };
 *     TSR_PLUGIN_DEFINE(plugin)
 */
#define TSR_PLUGIN_HEADER \
    .abi_version = TSR_PLUGIN_ABI_VERSION, .struct_size = sizeof(tsr_plugin), \
    .field_size = sizeof(tsr_field)

#ifdef __cplusplus
#define TSR_PLUGIN_LINKAGE extern "C"
#else
#define TSR_PLUGIN_LINKAGE
#endif

#define TSR_PLUGIN_DEFINE(descriptor)                                          \
    TSR_PLUGIN_LINKAGE TSR_PLUGIN_EXPORT const tsr_plugin *tsr_plugin_entry(  \
        uint32_t host_abi_version);                                            \
    TSR_PLUGIN_LINKAGE TSR_PLUGIN_EXPORT const tsr_plugin *tsr_plugin_entry(  \
        uint32_t host_abi_version) {                                           \
        (void)host_abi_version;                                                \
        return &(descriptor);                                                  \
    }

/* ---- helpers for plugin authors -------------------------------------- */

/* The number of elements of an array: the product of its shape (1 for rank 0).
 * Thread: any thread; a pure function of *a.
 * Ownership: a is read only.
 * Returns: the count. */
static inline int64_t tsr_array_count(const tsr_array *a) {
    int64_t n = 1;
    for (int32_t i = 0; i < a->rank; i++) n *= a->shape[i];
    return n;
}

/* The text of a TEXT or JSON input (NUL-terminated by the host).
 * Thread: the thread the endpoint runs in.
 * Ownership: the text belongs to the host; valid until the endpoint returns.
 * Returns: the text. */
static inline const char *tsr_input_text(const tsr_array *a) {
    return (const char *)a->data;
}

/* Index of a TEXT input among choices (n of them).
 * Thread: any thread; a pure function of its arguments.
 * Ownership: a and choices are read only.
 * Returns: the index, or -1 when the text is none of them. */
static inline int32_t tsr_text_choice(const tsr_array *a, const char *const *choices, int32_t n) {
    for (int32_t i = 0; i < n; i++) {
        const char *c = choices[i];
        int64_t len = 0;
        while (c[len]) len++;
        if (a->rank == 1 && a->shape[0] == len) {
            int64_t k = 0;
            while (k < len && ((const char *)a->data)[k] == c[k]) k++;
            if (k == len) return i;
        }
    }
    return -1;
}

/* Whether an input is a TSR_FIELD_OPTIONAL one that the caller left out
 * (also in abstract_eval, where no input has data).
 * Thread: any thread; a pure function of *a.
 * Returns: 1 or 0. */
static inline int tsr_input_absent(const tsr_array *a) {
    return a->dtype == TSR_DTYPE_INVALID && a->data == NULL;
}

/* Record why the endpoint failed (tsr_host_api.set_error); the host adds
 * the component, endpoint and call context, and the last message set wins.
 * The endpoint then returns non-zero.
 * Thread: only the thread that entered the endpoint (or init) with ctx, and
 *   only until that endpoint returns; never from a thread the plugin starts.
 * Ownership: message is copied by the host. */
static inline void tsr_ctx_error(tsr_ctx *ctx, const char *message) {
    ctx->host->set_error(ctx, message);
}

/* printf-style tsr_ctx_error (the text cut at 511 bytes).
 * Thread: only the thread that entered the endpoint (or init) with ctx, and
 *   only until that endpoint returns; never from a thread the plugin starts.
 * Ownership: fmt and its arguments are read during the call only.
 * Returns: -1, so that `return tsr_ctx_errorf(...)` reads well. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline int tsr_ctx_errorf(tsr_ctx *ctx, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    (void)n;
    ctx->host->set_error(ctx, buf);
    return -1;
}

/* Refuse an input value the schema's types let through but the component
 * does not accept (a number out of range, a dict key that must exist, a
 * Python component's pydantic validation): the call fails with
 * TSR_E_VALUE, tsr_call_errloc is `path` (a Tesseract path such as
 * "inputs.mesh.n_points"), and error details (422 bodies) carry `type`
 * (pydantic's vocabulary: "greater_than_equal", "missing", "value_error";
 * NULL: "value_error"). The convention on the wire is the message's last
 * line, "invalid: <type> <path>", which the host strips from the message
 * it reports; it works under every host that has TSR_E_VALUE.
 * Thread: only the thread that entered the endpoint (or init) with ctx, and
 *   only until that endpoint returns; never from a thread the plugin starts.
 * Ownership: path, type and message are read during the call only.
 * Returns: -1, for `return tsr_ctx_invalid(...)`. */
static inline int tsr_ctx_invalid(tsr_ctx *ctx, const char *path, const char *type,
                                  const char *message) {
    char buf[768];
    /* The message is cut, never the line: the host must find it whole. */
    int keep = (int)sizeof buf - 2 - 64 - 256 - (int)sizeof "invalid: ";
    (void)snprintf(buf, sizeof buf, "%.*s\ninvalid: %s %s", keep, message,
                   type ? type : "value_error", path);
    ctx->host->set_error(ctx, buf);
    return -1;
}

/* Allocate the buffer of result `index` from the shape the plugin set in
 * args->results[index] (tsr_host_api.alloc_result), for a result whose
 * size the plugin decides.
 * Thread: only the thread that entered the endpoint (or init) with ctx, and
 *   only until that endpoint returns; never from a thread the plugin starts.
 * Ownership: the buffer belongs to the host (it becomes the call's
 *   result); the plugin writes it and never frees it.
 * Returns: the buffer; NULL, with the error already recorded, when the shape is invalid or memory is
 *   exhausted. */
static inline void *tsr_ctx_alloc(tsr_ctx *ctx, int32_t index) {
    return ctx->host->alloc_result(ctx, index);
}

/* A diagnostic; the host decides where it goes (never stdout).
 * Thread: only the thread that entered the endpoint (or init) with ctx, and
 *   only until that endpoint returns; never from a thread the plugin starts.
 * Ownership: message is read during the call only. */
static inline void tsr_ctx_log(tsr_ctx *ctx, tsr_log_level level, const char *message) {
    ctx->host->log(ctx, level, message);
}

/* A configuration value the host gave when it opened the component
 * (tsr_options_set_config, `--config KEY=VALUE`); usually read in init.
 * Thread: only the thread that entered the endpoint (or init) with ctx, and
 *   only until that endpoint returns; never from a thread the plugin starts.
 * Ownership: the value belongs to the host and lives as long as the
 *   component is open; key is read during the call only.
 * Returns: the value, or NULL when absent. */
static inline const char *tsr_ctx_config(tsr_ctx *ctx, const char *key) {
    return ctx->host->config(ctx, key);
}

/* Whether the host asked this call to stop (tsr_host_api.cancelled); 0
 * under a host too old to offer it, which never cancels. An atomic load:
 * poll it every few milliseconds in a long loop.
 * Thread: only the thread that entered the endpoint (or init) with ctx, and
 *   only until that endpoint returns; never from a thread the plugin starts.
 * Returns: 1 when the call should stop, else 0. */
static inline int tsr_ctx_cancelled(tsr_ctx *ctx) {
    const tsr_host_api *h = ctx->host;
    if (h->struct_size < offsetof(tsr_host_api, cancelled) + sizeof h->cancelled ||
        !h->cancelled)
        return 0;
    return h->cancelled(ctx);
}

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGIN_H */
