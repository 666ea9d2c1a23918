/* SPDX-License-Identifier: MIT */
/*
 * Tessera host API.
 *
 * Load a component (a plugin .so) and call its endpoints with named arrays.
 *
 *     tsr_error err = TSR_ERROR_INIT;
 *     tsr_component *c;
 *     if (tsr_open("plugins/rosenbrock.so", NULL, &c, &err) != 0) {
 *         fprintf(stderr, "%s\n", err.message);
 *         ...
 *     }
 *     tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
 *     tsr_array x = {.data = xs, .dtype = TSR_FLOAT64, .rank = 1, .shape = {n}};
 *     tsr_call_set_input(call, "x", &x);
 *     if (tsr_call_run(call) != 0) fprintf(stderr, "%s\n", tsr_call_errmsg(call));
 *     const tsr_array *y = tsr_call_output(call, "y");   // a view, no copy
 *     tsr_call_free(call);
 *     tsr_close(c);
 *
 * Conventions: functions return 0 or a negative TSR_E_* code; the message
 * is kept by the handle concerned (tsr_error for tsr_open, the call for
 * calls). Free functions accept NULL. Nothing here writes to stdout, installs
 * signal handlers or exits the process.
 *
 * Thread safety, function by function, is stated below. In short: a
 * component may be shared by any number of threads, each using its own
 * tsr_call; a tsr_call is used by one thread at a time.
 */
#ifndef TESSERA_TESSERA_H
#define TESSERA_TESSERA_H

#include <stddef.h>
#include <stdint.h>

#include "plugin.h"
#include "tessera/export.h"
#include "tessera/version.h"


#ifdef __cplusplus
extern "C" {
#endif

/* TSR_VERSION_MAJOR, _MINOR, _PATCH, TSR_VERSION_STRING and
 * TSR_VERSION_NUMBER (generated <tessera/version.h>) give the version this
 * program was compiled against; tsr_version() and tsr_version_number() the
 * version of the library it runs with, which differs when libtessera.so was
 * replaced by another release of the same soname. The number is
 * TSR_MAKE_VERSION(major, minor, patch), major * 10000 + minor * 100 +
 * patch, to compare: tsr_version_number() >= TSR_MAKE_VERSION(0, 2, 1).
 * Thread: any thread.
 * Ownership: the string is static.
 * Returns: "0.2.0" and 200 for release 0.2.0. */
TSR_API const char *tsr_version(void);
TSR_API int tsr_version_number(void);

/* Error codes. Values are stable. */
typedef enum tsr_status {
    TSR_OK = 0,
    TSR_E_ARGUMENT = -1,         /* bad argument to an API function */
    TSR_E_NOMEM = -2,            /* out of memory */
    TSR_E_LOAD = -3,             /* file missing, not a shared object, no entry symbol */
    TSR_E_ABI = -4,              /* plugin built for an incompatible ABI */
    TSR_E_DESCRIPTOR = -5,       /* malformed plugin descriptor */
    TSR_E_UNSUPPORTED = -6,      /* mode or endpoint not available */
    TSR_E_UNKNOWN_FIELD = -7,    /* a name that is not in the schema */
    TSR_E_MISSING = -8,          /* a required input, tangent or cotangent not given */
    TSR_E_DTYPE = -9,            /* wrong element type */
    TSR_E_SHAPE = -10,           /* wrong rank or dimension, symbolic dims disagree */
    TSR_E_NOT_DIFFERENTIABLE = -11, /* a derivative asked of a non-differentiable field */
    TSR_E_PLUGIN = -12,          /* the endpoint reported a failure */
    TSR_E_PLUGIN_RESULT = -13,   /* the endpoint returned something the schema forbids */
    TSR_E_INIT = -14,            /* the plugin's init failed */
    TSR_E_PAYLOAD = -15,         /* malformed payload or encoded array */
    TSR_E_IO = -16,              /* reading or writing a file failed */
    TSR_E_WORKER = -17,          /* the worker process died or could not start */
    TSR_E_TIMEOUT = -18,         /* the call exceeded its timeout; the worker was killed */
    TSR_E_SHM = -19,             /* shared memory unavailable or full */
    TSR_E_LIMIT = -20,           /* refused by a limit (max_*_bytes options) */
    TSR_E_CANCELLED = -21,       /* the call was cancelled (tsr_call_cancel) */
    TSR_E_VALUE = -22            /* a value not allowed: text outside its field's choices, or
                                    not UTF-8 */
} tsr_status;

/* A short description of a code ("dtype mismatch").
 * Thread: any thread.
 * Ownership: the string is static.
 * Returns: the description; a generic one for a code it does not know. */
TSR_API const char *tsr_strerror(int code);
/* The machine name of a code, in pydantic's vocabulary where one fits, as
 * the "type" of Tesseract's 422 errors: "missing", "extra_forbidden",
 * "dtype_error", "shape_error", "value_error" (a malformed request), ...
 * Thread: any thread.
 * Ownership: the string is static.
 * Returns: the name; "value_error" for a code it does not know. */
TSR_API const char *tsr_error_type(int code);

/* ---- element types ----------------------------------------------------- */

/* The name of an element type ("float64").
 * Thread: any thread; no allocation.
 * Ownership: the string is static.
 * Returns: the name; NULL if invalid. */
TSR_API const char *tsr_dtype_name(tsr_dtype dtype);
/* The element type a name stands for. The *_from_name functions of this
 * library all answer alike: the value named, or -1 when the name is
 * unknown or NULL.
 * Thread: any thread; no allocation.
 * Returns: a tsr_dtype, or -1. */
TSR_API int tsr_dtype_from_name(const char *name);
/* Bytes per element of a dtype.
 * Thread: any thread; no allocation.
 * Returns: the size; 0 if invalid. */
TSR_API size_t tsr_dtype_size(tsr_dtype dtype);
/* The name of an endpoint ("apply", "abstract_eval", ...).
 * Thread: any thread; no allocation.
 * Ownership: the string is static.
 * Returns: the name; NULL if invalid. */
TSR_API const char *tsr_endpoint_name(tsr_endpoint ep);
/* The endpoint a name stands for; accepts "abstract_eval" and "abstract-eval".
 * Thread: any thread; no allocation.
 * Returns: a tsr_endpoint, or -1 if unknown. */
TSR_API int tsr_endpoint_from_name(const char *name);

/* ---- options ------------------------------------------------------------- */

#define TSR_ERRMSG_MAX 1024
#define TSR_ERRLOC_MAX 256

/* Where tsr_open (and the functions of payload.h) report a failure: the
 * code, a message naming the component and the cause, and where in a
 * request the fault lies (see tsr_call_errloc; "" for tsr_open).
 *
 * struct_size first, so that members can be appended in later releases:
 * the caller sets it to sizeof(tsr_error) as its header has it,
 *     tsr_error err = TSR_ERROR_INIT;
 * and the library writes only the members that lie within it. 0 (a
 * zeroed struct, tsr_error err = {0}) stands for this layout: code,
 * message and loc, which every later release keeps where they are and
 * always writes. The library never changes struct_size, so one tsr_error
 * may be reused across calls. */
typedef struct tsr_error {
    uint32_t struct_size;   /* set by the caller: sizeof(tsr_error), or 0 */
    int code;
    char message[TSR_ERRMSG_MAX];
    char loc[TSR_ERRLOC_MAX];
} tsr_error;
#define TSR_ERROR_INIT {.struct_size = sizeof(tsr_error)}

typedef enum tsr_mode {
    TSR_MODE_INPROC = 0,   /* dlopen in this process */
    TSR_MODE_ISOLATED = 1, /* dlmopen in a new link-map namespace */
    TSR_MODE_WORKER = 2    /* a separate worker process */
} tsr_mode;

/* Called with the plugin's diagnostics (tsr_ctx_log) and the library's own.
 * May be called from any thread that calls the component. */
typedef void (*tsr_log_fn)(void *user, tsr_log_level level, const char *component,
                           const char *message);

typedef struct tsr_options tsr_options;

/* A set of options with every default (docs/reference/options.md). Options
 * are plain data: build them in one thread, then pass them to any number
 * of tsr_open calls (tsr_open only reads them).
 * Thread: any thread; one thread builds a set at a time.
 * Ownership: the caller owns the set until tsr_options_free, which may
 *   follow tsr_open at once (components keep what they need).
 * Returns: the set, or NULL when out of memory. */
TSR_API tsr_options *tsr_options_new(void);
/* Free a set of options. Accepts NULL.
 * Thread: no tsr_open may be reading opts meanwhile. */
TSR_API void tsr_options_free(tsr_options *opts);
/* Set one library option, key to value (both copied). The keys, their
 * values, defaults and the modes they apply to are one table
 * (tessera/option_table.h, tsr_option_info_at): see
 * docs/reference/options.md or `tessera help options`.
 * Thread: the thread building opts, not while a tsr_open reads it.
 * Ownership: key and value are read during the call only.
 * Returns: 0, or TSR_E_ARGUMENT for an unknown key or value (err says which). */
TSR_API int tsr_options_set(tsr_options *opts, const char *key, const char *value, tsr_error *err);
/* Configuration for the plugin's init (read with tsr_ctx_config), e.g.
 * ("matrix", "/data/A.txt"); a key set twice keeps the last value.
 * Thread: as tsr_options_set.
 * Ownership: both strings are copied.
 * Returns: 0, TSR_E_ARGUMENT or TSR_E_NOMEM. */
TSR_API int tsr_options_set_config(tsr_options *opts, const char *key, const char *value);
/* Where diagnostics go. Default: levels >= log_level are written to stderr
 * as "tessera[component] LEVEL: message". fn NULL restores the default.
 * fn may be called from any thread that calls the component.
 * Thread: as tsr_options_set.
 * Ownership: user is passed to fn as it is; it must outlive every
 *   component opened with opts. */
TSR_API void tsr_options_set_log(tsr_options *opts, tsr_log_fn fn, void *user);
/* Worker mode: an environment variable for the worker (e.g.
 * LD_LIBRARY_PATH), added to or replacing the inherited one.
 * Thread: as tsr_options_set.
 * Ownership: both strings are copied.
 * Returns: 0, TSR_E_ARGUMENT or TSR_E_NOMEM. */
TSR_API int tsr_options_set_env(tsr_options *opts, const char *name, const char *value);
/* Worker mode: where the lines a plugin prints on stdout or stderr go.
 * Default: the host's stderr, as "component: line", written without ever
 * blocking a call: what stderr does not take at once waits in a bounded
 * buffer (1 MiB), and beyond it lines are dropped, counted in a WARN log
 * message and noted in the stream once stderr takes lines again (the
 * default log function writes to stderr the same way). fn is called by the
 * host thread that is waiting on the worker that printed: the thread
 * running a call there, or the one opening, restarting or closing the
 * component; never by a thread of the library's own. A worker's lines
 * arrive in order, each whole and without its newline. fn must not block:
 * the call waits for it, past its timeout_ms. */
typedef void (*tsr_output_fn)(void *user, const char *component, const char *line);
/* Set the output callback above; fn NULL restores the default.
 * Thread: as tsr_options_set.
 * Ownership: user is passed to fn as it is; it must outlive every
 *   component opened with opts. The line passed to fn lives for that
 *   call of fn only. */
TSR_API void tsr_options_set_output(tsr_options *opts, tsr_output_fn fn, void *user);

/* ---- components ----------------------------------------------------------- */

typedef struct tsr_component tsr_component;

/* Load the plugin at path (a path with a '/' is used as is; otherwise the
 * dynamic loader's search rules apply), check its ABI version and
 * descriptor, and run its init. opts may be NULL for defaults. On failure
 * *out is NULL and err (if not NULL) has the code and message.
 * Thread: any thread; several tsr_open may run at once.
 * Ownership: path and opts are read during the call only; *out belongs to
 *   the caller until tsr_close.
 * Returns: 0, or TSR_E_LOAD, _ABI, _DESCRIPTOR, _INIT, _WORKER, _SHM,
 *   _UNSUPPORTED, _NOMEM, ... with err set. */
TSR_API int tsr_open(const char *path, const tsr_options *opts, tsr_component **out,
                     tsr_error *err);

/* Run the plugin's fini and unload it. Every tsr_call of the component must
 * have been freed, and no other thread may be using it. Accepts NULL.
 * Thread: one thread, once every other has stopped using c. */
TSR_API void tsr_close(tsr_component *c);

/* Schema queries: the component's name, version, description, the path it
 * was opened from, its mode, and its numbers of inputs and outputs.
 * Thread: any number of threads.
 * Ownership: the strings belong to c and live as long as it.
 * Returns: the value; NULL (strings) or 0 for c NULL. */
TSR_API const char *tsr_component_name(const tsr_component *c);
TSR_API const char *tsr_component_version(const tsr_component *c);
TSR_API const char *tsr_component_description(const tsr_component *c);
TSR_API const char *tsr_component_path(const tsr_component *c);
TSR_API tsr_mode tsr_component_mode(const tsr_component *c);
TSR_API int32_t tsr_component_n_inputs(const tsr_component *c);
TSR_API int32_t tsr_component_n_outputs(const tsr_component *c);
/* Fields in schema order. The returned fields are the host's validated
 * copy (field_size already accounted for).
 * Thread: any number of threads.
 * Ownership: the field belongs to c and lives as long as it.
 * Returns: the field; NULL when index is out of range. */
TSR_API const tsr_field *tsr_component_input(const tsr_component *c, int32_t index);
TSR_API const tsr_field *tsr_component_output(const tsr_component *c, int32_t index);
/* Whether a call must give input field f, one tsr_component_input
 * returned: 1 unless it has a default or is optional (only the host's copy
 * always has default_value, whatever the plugin's layout).
 * Thread: any thread.
 * Returns: 1 or 0. */
static inline int tsr_field_required(const tsr_field *f) {
    return !f->default_value && !(f->flags & TSR_FIELD_OPTIONAL);
}
/* Index of a field by name.
 * Thread: any number of threads.
 * Ownership: name is read during the call only.
 * Returns: the index, or -1 when there is none. */
TSR_API int32_t tsr_component_find_input(const tsr_component *c, const char *name);
TSR_API int32_t tsr_component_find_output(const tsr_component *c, const char *name);
/* 1 if the endpoint can be called, else 0. abstract_eval is available
 * also when the plugin lacks it but every output's shape follows from the
 * inputs' dims (fixed sizes and symbols that inputs carry); jvp, vjp and
 * jacobian also when the plugin declares an fd_method, the host then
 * serving them by finite differences of apply (see plugin.h).
 * Thread: any number of threads.
 * Returns: 1 or 0. */
TSR_API int tsr_component_has_endpoint(const tsr_component *c, tsr_endpoint ep);
/* Whether the plugin implements the endpoint itself.
 * Thread: any number of threads.
 * Returns: 1 or 0. */
TSR_API int tsr_component_has_native_endpoint(const tsr_component *c, tsr_endpoint ep);
/* The finite-difference method serving missing derivatives.
 * Thread: any number of threads.
 * Returns: the method; TSR_FD_NONE when there is none. */
TSR_API tsr_fd_method tsr_component_fd_method(const tsr_component *c);

/* Where a component's hvp comes from. */
typedef enum tsr_hvp_source {
    TSR_HVP_NONE = 0,       /* hvp cannot be called */
    TSR_HVP_NATIVE = 1,     /* the component's own hvp endpoint */
    TSR_HVP_FD_VJP = 2,     /* central differences of its vjp (exact, or from its jacobian) */
    TSR_HVP_FD_APPLY = 3    /* second differences of apply (fd_method declared, no vjp) */
} tsr_hvp_source;
/* How hvp is served: natively, or by the host's finite differences (cost
 * and error in docs/guides/second-derivatives.md). The option
 * hvp_fallback=off makes a component without a native hvp report
 * TSR_HVP_NONE.
 * Thread: any number of threads.
 * Returns: the source; TSR_HVP_NONE for c NULL. */
TSR_API tsr_hvp_source tsr_component_hvp_source(const tsr_component *c);

/* Worker mode: start again every worker that died, also an idle one whose
 * death no call has seen yet (and, with no worker dead, do nothing).
 * Thread: one thread, while no call of c runs.
 * Returns: 0, or the code of the first start that failed (TSR_E_WORKER, ...). */
TSR_API int tsr_component_restart(tsr_component *c);

/* ---- memory for zero-copy inputs ---------------------------------------- */

/* A 64-byte aligned buffer that reaches the plugin without a copy: in worker
 * mode it lies in the shared-memory arena (inputs elsewhere are copied into
 * the arena at each call); in-process, and with the files transport, it is
 * ordinary memory. NULL when out of
 * memory (or shared memory).
 * Thread: any thread.
 * Ownership: the caller owns the buffer until tsr_component_free_buffer,
 *   which must come before tsr_close.
 * Returns: the buffer, or NULL. */
TSR_API void *tsr_component_alloc(tsr_component *c, size_t bytes);
/* Free a buffer of tsr_component_alloc, or one taken with
 * tsr_call_take_result. Accepts NULL.
 * Thread: any thread, once no call reads p.
 * Ownership: p must come from c. */
TSR_API void tsr_component_free_buffer(tsr_component *c, void *p);

/* Counters of a component since it was opened. Thread-safe.
 * The caller sets struct_size to sizeof(tsr_stats) (TSR_STATS_INIT does),
 * so that counters can be appended in later releases: the library fills
 * what both sides know and zeroes the counters of a newer header that it
 * does not have. 0, or TSR_E_ARGUMENT when out is NULL, struct_size is too
 * small (not set) or c is NULL (then the counters are zeroed). */
#define TSR_STATS_ENDPOINTS 8
typedef struct tsr_stats {
    size_t struct_size;       /* set by the caller: sizeof(tsr_stats) */
    uint64_t calls;           /* runs that reached the plugin */
    uint64_t bytes_copied;    /* input bytes copied into the arena (or spool files) */
    uint64_t bytes_by_ref;    /* input bytes passed by reference (no copy) */
    uint64_t worker_starts;   /* workers started, restarts included */
    uint64_t worker_deaths;   /* workers that died or were killed */
    /* Appended: what calls cost, per endpoint (indexed by tsr_endpoint; slots past
     * TSR_EP_COUNT stay zero, room for endpoints added later). A call is
     * counted at its endpoint when tsr_call_run returns, failed calls included;
     * its time is the wall time from entry to return, in nanoseconds (0 with
     * option call_timing=off). Each item of tsr_call_run_batch is one call,
     * timed alone (lanes run at once: their times add up to more than the
     * batch's wall time); a batch refused before its items run counts none.
     * Figures are read one by one, not as one snapshot. */
    uint64_t endpoint_calls[TSR_STATS_ENDPOINTS];
    uint64_t endpoint_ns[TSR_STATS_ENDPOINTS];
    uint64_t endpoint_errors[TSR_STATS_ENDPOINTS]; /* calls that returned < 0 */
    /* Worker mode (zero otherwise): nanoseconds the host spent waiting for a
     * worker's answer, and copying inputs into the arena and results out of it
     * (part of endpoint_ns). */
    uint64_t worker_wait_ns;
    uint64_t copy_ns;
} tsr_stats;
#define TSR_STATS_INIT {.struct_size = sizeof(tsr_stats)}
/* Fill *out with c's counters (tsr_stats above): calls and bytes, and per
 * endpoint (out->endpoint_calls[TSR_EP_APPLY], ...) the calls, their total
 * wall time in ns (the mean is endpoint_ns / endpoint_calls) and the calls
 * that failed; in worker mode also the time spent waiting for workers and
 * copying through the arena.
 * Thread: any thread, also while calls of c run.
 * Ownership: out is the caller's; the library writes its first struct_size bytes.
 * Returns: 0, or TSR_E_ARGUMENT when out is NULL, out->struct_size is too
 *   small or c is NULL (the counters then zeroed). */
TSR_API int tsr_component_stats(const tsr_component *c, tsr_stats *out);

/* ---- calls ------------------------------------------------------------------ */

/*
 * A call object holds the arguments of one endpoint, runs it, and owns its
 * results. It is reusable: set inputs, run, read results, set new inputs,
 * run again. Result buffers are kept and reused while their size fits, so a
 * loop of calls allocates nothing after the first.
 *
 * A call object must be used by one thread at a time. Different call
 * objects of the same component may run concurrently from different
 * threads; the library serialises them unless the plugin declares
 * TSR_PLUGIN_THREAD_SAFE.
 */
typedef struct tsr_call tsr_call;

/* A call object for endpoint ep of c. An endpoint the plugin lacks is
 * reported by tsr_call_run with TSR_E_UNSUPPORTED.
 * Thread: any thread; the call is then used by one thread at a time.
 * Ownership: the caller owns the call until tsr_call_free, before tsr_close(c).
 * Returns: the call; NULL only when out of memory (or c is NULL). */
TSR_API tsr_call *tsr_call_new(tsr_component *c, tsr_endpoint ep);
/* Free a call and its result buffers (not the results taken with
 * tsr_call_take_result). Accepts NULL.
 * Thread: the thread using call, not while it runs. */
TSR_API void tsr_call_free(tsr_call *call);

/* Bind an input field to an array. The tsr_array struct is copied; its data
 * is borrowed and must stay valid until tsr_call_run returns. Passing
 * a = NULL unbinds the input. Every input must be bound before a run
 * (abstract_eval reads only dtype, rank and shape). _at binds by index in
 * schema order.
 * Thread: the thread using call, not while it runs.
 * Ownership: name is read now; *a is copied, a->data borrowed until
 *   tsr_call_run returns.
 * Returns: 0, or TSR_E_UNKNOWN_FIELD (no such input), TSR_E_SHAPE (a rank
 *   below 0 or above TSR_MAX_RANK), TSR_E_ARGUMENT (name NULL, call NULL).
 *   The array's dtype and shape against the schema are checked by the run. */
TSR_API int tsr_call_set_input(tsr_call *call, const char *name, const tsr_array *a);
TSR_API int tsr_call_set_input_at(tsr_call *call, int32_t index, const tsr_array *a);
/* Bind a TEXT or JSON input (tsr_field.kind) to a NUL-terminated UTF-8
 * string: the text itself, or a JSON document for a JSON field. Borrowed
 * like an array's data, until tsr_call_run returns. TSR_E_DTYPE when the
 * field is an array. tsr_call_set_input also binds such a field, to a
 * uint8 rank-1 array of its bytes (copied at each run to add the NUL).
 * Text that is not UTF-8, or a TEXT value outside the field's choices,
 * fails the run with TSR_E_VALUE (tsr_error_type "literal_error") naming
 * the allowed values, before the endpoint runs; tsr_call_errloc is the
 * field's path ("inputs.method").
 * Thread: the thread using call, not while it runs.
 * Ownership: utf8 is borrowed until tsr_call_run returns.
 * Returns: 0, or TSR_E_UNKNOWN_FIELD, TSR_E_DTYPE, TSR_E_ARGUMENT (name
 *   NULL). */
TSR_API int tsr_call_set_text(tsr_call *call, const char *name, const char *utf8);

/* The fields to differentiate: jac_inputs/jac_outputs, jvp_inputs/
 * jvp_outputs, vjp_inputs/vjp_outputs, hvp_inputs/hvp_outputs. Names are checked now: each must be
 * a differentiable field of the schema, named once. Clears any seeds set
 * before and the results of the previous run, whose layout they define.
 * Only for jvp, vjp, jacobian and hvp, and needed by them: a run before it
 * fails with TSR_E_MISSING.
 * A name may also be a path inside a differentiable JSON field (plugin.h,
 * "Derivatives inside JSON values"): the field's name followed by parts
 * ".{key}" (a dict key: any characters but '}'), ".[N]" (a list index) or
 * ".name" (a model's field), e.g. "weights.{a}", "layers.[0].k". Several
 * paths may name the same field; a list holds at most
 * max(fields, 1024) entries, a jacobian max(inputs * outputs, 1024)
 * blocks (TSR_E_ARGUMENT beyond). A malformed path, or one inside an
 * array field, is TSR_E_UNKNOWN_FIELD naming the path and the cause; one
 * inside a TEXT or a non-differentiable JSON field TSR_E_NOT_DIFFERENTIABLE.
 * Seeds and results at such a path (and at a whole JSON field) are float
 * arrays whose shapes the component decides: tsr_call_set_seed,
 * tsr_call_output and tsr_call_jacobian take the path as the name. Finite
 * differences (fd_method) and batches refuse them (TSR_E_UNSUPPORTED).
 * Thread: the thread using call, not while it runs.
 * Ownership: the names are copied.
 * Returns: 0, or TSR_E_UNKNOWN_FIELD, _NOT_DIFFERENTIABLE, _ARGUMENT (a
 *   NULL list or entry, a count below 0, a field named twice, another
 *   endpoint), _UNSUPPORTED naming the entry. */
TSR_API int tsr_call_set_wrt(tsr_call *call, const char *const *in_names, int32_t n_in,
                             const char *const *out_names, int32_t n_out);

/* jvp: tangent_vector[name], name one of the jvp_inputs, shaped like that
 * input. vjp: cotangent_vector[name], name one of the vjp_outputs, shaped
 * like that output. Data is borrowed as for inputs. At a path inside a
 * JSON field: a float16, float32 or float64 array of any shape, which the
 * component checks (another dtype fails the run with TSR_E_DTYPE).
 * Thread: the thread using call, not while it runs.
 * Ownership: name is read now; *a is copied, a->data borrowed until
 *   tsr_call_run returns.
 * Returns: 0, or TSR_E_UNKNOWN_FIELD (not in the wrt list), TSR_E_SHAPE (a
 *   rank out of range), TSR_E_ARGUMENT (name NULL, another endpoint, no
 *   wrt set yet). */
TSR_API int tsr_call_set_seed(tsr_call *call, const char *name, const tsr_array *a);

/* hvp: tangent_vector[name], name one of the hvp_inputs, shaped like that
 * input (tsr_call_set_seed gives hvp's cotangent_vector, by output name).
 * Every hvp_input needs a tangent and every hvp_output a cotangent; a run
 * without one fails with TSR_E_MISSING naming it.
 * Thread: the thread using call, not while it runs.
 * Ownership: as tsr_call_set_seed.
 * Returns: as tsr_call_set_seed; TSR_E_ARGUMENT for an endpoint other
 *   than hvp. */
TSR_API int tsr_call_set_tangent(tsr_call *call, const char *name, const tsr_array *a);

/* Validate every argument against the schema, run the endpoint and check
 * what it returned. Returns 0 or a TSR_E_* code; the message names the
 * component, the endpoint, the field and the cause (tsr_call_errmsg).
 * Results from a previous run are invalidated.
 * Thread: the thread using call; other calls of the component may run at
 *   once (serialised unless the plugin is TSR_PLUGIN_THREAD_SAFE). The
 *   plugin's endpoint runs in this thread in-process, and its tsr_ctx_*
 *   callbacks come from it.
 * Returns: 0 or a negative TSR_E_* code. */
TSR_API int tsr_call_run(tsr_call *call);

/* Run the endpoint once per item of a leading batch axis: every input (and
 * tangent or cotangent) is bound with one extra leading dimension of size
 * `batch` in front of its schema shape, and every result comes back with
 * that leading dimension. In worker mode with a pool, the items are split
 * into contiguous chunks that the workers run concurrently; otherwise they
 * run one after the other. Results must have shapes the host can compute
 * (no value-dependent shapes, so no TEXT or JSON outputs); not for
 * abstract_eval. TEXT and JSON inputs are not batched: each item gets the
 * one value bound. Paths inside JSON fields are refused (TSR_E_UNSUPPORTED).
 * Thread: as tsr_call_run.
 * Returns: 0 or a negative TSR_E_* code. */
TSR_API int tsr_call_run_batch(tsr_call *call, int64_t batch);

/* Results of the last successful run: views into buffers the call owns,
 * valid until the next tsr_call_run or tsr_call_free.
 *   apply, abstract_eval  one per output field, schema order
 *   jvp                   one per jvp_output, in the order given
 *   vjp                   one per vjp_input, in the order given
 *   jacobian              n_out * n_in blocks, index o * n_in + i
 *   hvp                   one per hvp_input, in the order given
 * For abstract_eval the results have data NULL.
 * Thread: the thread using call (or any, while none runs it).
 * Ownership: the arrays belong to the call (see tsr_call_take_result to keep one).
 * Returns: the number of results (0 before a successful run), or result k
 *   (NULL for k out of range). */
TSR_API int32_t tsr_call_n_results(const tsr_call *call);
TSR_API const tsr_array *tsr_call_result(const tsr_call *call, int32_t k);
/* The result for a field by name: for apply, abstract_eval and jvp an output
 * name; for vjp and hvp an input name; a path as given to tsr_call_set_wrt for an
 * entry inside a JSON field.
 * Thread: as tsr_call_result.
 * Ownership: as tsr_call_result; name is read during the call.
 * Returns: the array, or NULL if there is none. */
TSR_API const tsr_array *tsr_call_output(const tsr_call *call, const char *name);
/* A TEXT or JSON output of the last successful run as a NUL-terminated
 * string (its length in *len when len is not NULL), or NULL when name is
 * not such an output.
 * Thread: as tsr_call_result.
 * Ownership: the text belongs to the call and lives as long as its results.
 * Returns: the text, or NULL. */
TSR_API const char *tsr_call_output_text(const tsr_call *call, const char *name, size_t *len);
/* A Jacobian block d out_name / d in_name (names or paths as given to
 * tsr_call_set_wrt).
 * Thread: as tsr_call_result.
 * Ownership: as tsr_call_result.
 * Returns: the block, or NULL. */
TSR_API const tsr_array *tsr_call_jacobian(const tsr_call *call, const char *out_name,
                                           const char *in_name);
/* Take over the buffer of result k of the last successful run, to keep
 * the result after later runs without pinning the whole call: returns its
 * data pointer (tsr_call_result(call, k)->data, which stays valid), and the
 * call lets go of the buffer; its next run allocates another. Free it with
 * tsr_component_free_buffer, before tsr_close (in worker mode it lies in
 * the shared-memory arena). NULL when there is no such result, it was
 * taken already, or the call is an abstract_eval.
 * Thread: the thread using call, not while it runs.
 * Ownership: the caller owns the buffer from now on.
 * Returns: the data pointer, or NULL. */
TSR_API void *tsr_call_take_result(tsr_call *call, int32_t k);

/* Have result k (numbered as for tsr_call_result) of the following runs
 * written into memory the caller owns: an XLA output buffer, a tensor the
 * host allocated. `bytes` must hold the result; a run whose result needs
 * more fails with TSR_E_ARGUMENT before the plugin is called. In-process
 * the plugin writes there directly and nothing is copied; in worker mode
 * the result is written into shared memory and copied there once the run
 * succeeded. After a successful run tsr_call_result(call, k)->data is
 * `data`. The buffer stays set until replaced, or cleared with data NULL;
 * handing a new buffer before each run of the same shapes keeps the
 * call's fast path. Such a result cannot be taken (tsr_call_take_result
 * returns NULL). A TEXT or JSON output (apply) needs its length + 1
 * bytes: the text is written there followed by a NUL, in every mode; a
 * derivative at a path inside a JSON field needs what the shape the
 * endpoint sets takes.
 * Thread: the thread using call, not while it runs.
 * Ownership: data stays the caller's; the call writes into it until the
 *   buffer is replaced or cleared.
 * Returns: 0, or TSR_E_ARGUMENT for a k out of range. */
TSR_API int tsr_call_set_result_buffer(tsr_call *call, int32_t k, void *data, size_t bytes);

/* ---- cancelling a call ------------------------------------------------- */

/*
 * Ask a call to stop: the run in progress, or else the next run of the
 * call, fails with TSR_E_CANCELLED (a run that starts with a request
 * pending fails before it reaches the plugin). That run consumes the
 * request; its results are not available. Callable from any thread, and
 * from a signal handler of the host's own: it is an atomic store, plus in
 * worker mode a write(2) to an eventfd that wakes the waiting call (errno
 * is preserved). The call must not be freed meanwhile.
 * Thread: any thread, and async-signal-safe.
 * Returns: 0, or TSR_E_ARGUMENT when call is NULL.
 *
 * What stops, by mode:
 *   worker    the waiting host notices at once. The worker is asked to
 *             stop (its plugin sees tsr_ctx_cancelled, a request it has
 *             not taken yet is refused) and given the option
 *             cancel_grace_ms (default TSR_CANCEL_GRACE_MS) to answer;
 *             then it is reused. One that does not answer in time
 *             is killed, counted in worker_deaths, and started again at the
 *             next call that needs it, whatever the restart option says.
 *   inproc, isolated
 *             a running C function cannot be stopped safely from outside.
 *             A plugin that polls tsr_ctx_cancelled (plugin.h) stops at its
 *             next poll; one that does not runs to its end, and the run then
 *             fails with TSR_E_CANCELLED all the same.
 * A batch (tsr_call_run_batch) stops every item in flight, and finite
 * differences (fd_method) stop between evaluations.
 */
TSR_API int tsr_call_cancel(tsr_call *call);
#define TSR_CANCEL_GRACE_MS 25

/* What tsr_call_set_cancel_check calls: nonzero to cancel. */
typedef int (*tsr_cancel_check_fn)(void *user);
/*
 * For a host that learns of an interruption only by asking (Python: a
 * signal handler runs only when the interpreter checks for it): while a
 * run of this call waits for a worker, and while its in-process plugin
 * polls tsr_ctx_cancelled, check(user) is called about every interval_ms
 * (0: 50), always by the thread that called tsr_call_run or
 * tsr_call_run_batch, never by another, and never during a run shorter
 * than interval_ms. A nonzero return cancels the call as tsr_call_cancel
 * does. check NULL removes it.
 * Thread: the thread using call, not while it runs.
 * Ownership: user is passed to check as it is, and must outlive its use.
 * Returns: 0, or TSR_E_ARGUMENT.
 */
TSR_API int tsr_call_set_cancel_check(tsr_call *call, tsr_cancel_check_fn check, void *user,
                                      int32_t interval_ms);

/* Code and message of the last failure of this call.
 * Thread: as tsr_call_result.
 * Ownership: the message belongs to the call, until its next run.
 * Returns: the code and message; 0 and "" after a success. */
TSR_API int tsr_call_errcode(const tsr_call *call);
TSR_API const char *tsr_call_errmsg(const tsr_call *call);
/* Where in the request the last failure lies, as dot-separated parts with
 * the request's section first, as Tesseract's "loc" lists it:
 * "inputs.mesh.nodes", "tangent_vector.x", "cotangent_vector.y",
 * "jvp_inputs.1" (a number is an index into that list), "inputs" alone
 * for the whole object; "" when the failure is not about one place (the
 * plugin failed, a worker died) and after a success.
 * Thread: as tsr_call_result.
 * Ownership: the text belongs to the call, until its next run.
 * Returns: the location. */
TSR_API const char *tsr_call_errloc(const tsr_call *call);
/* The type of the last failure as Tesseract's 422 errors name it: the one
 * the endpoint gave when it refused an input value (tsr_ctx_invalid:
 * "greater_than_equal", "literal_error", "missing"), else
 * tsr_error_type(tsr_call_errcode(call)).
 * Thread: as tsr_call_result.
 * Ownership: the text belongs to the call, until its next run.
 * Returns: the type; "" after a success. */
TSR_API const char *tsr_call_errtype(const tsr_call *call);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TESSERA_H */
