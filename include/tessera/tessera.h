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
 * Thread-safe. */
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

/* Short, static description of a code ("dtype mismatch"). Thread-safe. */
TSR_API const char *tsr_strerror(int code);
/* The machine name of a code, in pydantic's vocabulary where one fits, as
 * the "type" of Tesseract's 422 errors: "missing", "extra_forbidden",
 * "dtype_error", "shape_error", "value_error" (a malformed request), ...
 * Static; "value_error" for a code it does not know. Thread-safe. */
TSR_API const char *tsr_error_type(int code);

/* ---- element types ----------------------------------------------------- */

/* All thread-safe, no allocation. */
TSR_API const char *tsr_dtype_name(tsr_dtype dtype);          /* "float64"; NULL if invalid */
/* The *_from_name functions of this library all answer alike: the value
 * named, or -1 when the name is unknown or NULL. */
TSR_API int tsr_dtype_from_name(const char *name);            /* a tsr_dtype, or -1 */
TSR_API size_t tsr_dtype_size(tsr_dtype dtype);               /* bytes per element; 0 if invalid */
TSR_API const char *tsr_endpoint_name(tsr_endpoint ep);       /* "apply", "abstract_eval", ... */
/* Accepts "abstract_eval" and "abstract-eval". Returns -1 if unknown. */
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

/* Options are plain data: build them in one thread, then pass them to any
 * number of tsr_open calls (tsr_open only reads them). */
TSR_API tsr_options *tsr_options_new(void);   /* NULL when out of memory */
TSR_API void tsr_options_free(tsr_options *opts);
/* Recognised keys:
 *   "mode"        "inproc" (default), "isolated", "worker"
 *   "log_level"   "debug", "info", "warn" (default), "error", "off": the
 *                 lowest level passed to the log function
 * Worker mode only:
 *   "workers"     pool size, 1 (default) to 256: concurrent calls from
 *                 several threads spread across the pool
 *   "spawn"       "exec" (default: posix_spawn of tessera-worker) or "fork"
 *                 (plain fork, faster to start; refused at tsr_open when the
 *                 host has more than one thread)
 *   "worker_exe"  path of tessera-worker (default: $TESSERA_WORKER, else
 *                 found relative to libtessera.so, or to the executable of
 *                 a host linked with libtessera.a installed in the prefix's
 *                 bin/, else under the prefix configured at build time)
 *   "cwd"         the worker's working directory
 *   "clear_env"   "1": the worker starts with an empty environment (plus
 *                 what tsr_options_set_env adds)
 *   "timeout_ms"  per-call limit; a call running longer fails with
 *                 TSR_E_TIMEOUT and its worker is killed (default 0: none)
 *   "start_timeout_ms"  limit for a worker to load the plugin (default 30000)
 *   "restart"     "auto": a worker that died is started again at the next
 *                 call that needs it; "never" (default): a dead worker is
 *                 skipped, the others of the pool serve, and once none is
 *                 left calls fail with TSR_E_WORKER until
 *                 tsr_component_restart. Either way each death is counted
 *                 (worker_deaths) and logged once (WARN); a call that was
 *                 running in the worker fails, a request the worker never
 *                 took goes to another.
 *   "spin_ns"     how long a waiting side spins before it sleeps: given, it
 *                 is used as it is (0 sleeps at once); by default the spin
 *                 adapts to about twice the recent waits (20 to 200 us)
 *                 and yields the CPU past its first 20 us (bench_worker)
 *   "rlimit_as", "rlimit_cpu", "rlimit_nofile"
 *                 resource limits the worker sets on itself before it loads
 *                 the plugin: address space in bytes (it must leave room for
 *                 the arena, which the worker maps), CPU seconds (a plugin
 *                 past them is killed by SIGXCPU: TSR_E_WORKER naming the
 *                 signal) and open files (default 0: inherited)
 *   "transport"   how arrays cross between host and worker: "auto" (default:
 *                 shared memory, or files when it cannot be had at
 *                 tsr_open: memfd_create refused, or too little memory for
 *                 the arena; logged at INFO), "shm"
 *                 (shared memory or TSR_E_SHM) or "files" (binref files in a
 *                 spool directory, no shared memory at all: the worker reads
 *                 inputs into its own memory and writes results back, one
 *                 copy each way through the page cache; results are still
 *                 views the call owns, tsr_component_alloc gives ordinary memory)
 *   "spool_dir"   files: where each component makes its spool, a private
 *                 directory (mode 0700, unguessable name) emptied after every
 *                 call, also after a crash or timeout, and removed at
 *                 tsr_close (default $TMPDIR, else /tmp)
 *   "file_io"     files: "auto" (default: io_uring where it works), "io_uring"
 *                 (TSR_E_IO at tsr_open where it does not) or "posix"
 *                 (pread/pwrite)
 * Calls:
 *   "casting"     an input, tangent or cotangent whose dtype is not the
 *                 field's: "exact" (default) refuses it with TSR_E_DTYPE;
 *                 "same_kind" converts it at each run by numpy's same_kind
 *                 rule, as Tesseract does (bool < integers, signed and
 *                 unsigned alike < floats < complex; narrowing within a
 *                 kind allowed), into a buffer the call keeps for its next
 *                 runs. An element that does not fit (an integer out of
 *                 the target's range, a finite float that would become
 *                 infinite; NaN and infinities carry over) is refused with
 *                 TSR_E_DTYPE naming the field, its index and its value.
 *                 Arrays of the field's dtype are passed on as with
 *                 "exact", without a copy.
 *   "unwritten"   what a result holds before the endpoint writes it. Result
 *                 buffers are reused from call to call (in a worker's arena,
 *                 from caller to caller), so by default ("zero") every
 *                 result is cleared before each run: a plugin that returns
 *                 0 without writing one hands back zeros, never another
 *                 call's bytes. "check" fills results with a marker (a
 *                 signalling NaN for floats, 0xA5 bytes otherwise) and fails
 *                 a run that leaves any element of one unwritten with
 *                 TSR_E_PLUGIN_RESULT naming it ("output 'y': 3 of 3
 *                 elements left unwritten"): for testing a plugin. "keep"
 *                 clears nothing, for a host that trusts its plugin to
 *                 write every result (clearing costs a memset of each
 *                 result per call: about 75 ns for 8 KB, 80 us for 8 MB,
 *                 bench_inproc).
 *   "call_timing" "on" (default): every tsr_call_run reads the clock on
 *                 entry and return, for tsr_stats' endpoint_ns (two
 *                 CLOCK_MONOTONIC reads, some 20-30 ns each). "off": calls
 *                 and errors are still counted, endpoint_ns stays 0, for a
 *                 host whose calls are a few tens of nanoseconds. At
 *                 log_level debug calls are timed whatever it says.
 * Python components (a folder with tesseract_api.py, or the file itself):
 *   "python"      the interpreter to run the component under: a venv's
 *                 python runs it with that venv's packages (default:
 *                 $TESSERA_PYTHON, else an environment built from the
 *                 folder's tesseract_requirements.txt, else the Python
 *                 Tessera was built with). In-process in a host that
 *                 already runs Python, the host's interpreter is used.
 *   "python_env"  "auto" (default): build an environment from the
 *                 requirements file at first use, cached by its hash under
 *                 $TESSERA_ENV_DIR (default ~/.cache/tessera/envs);
 *                 "none": never build one
 * Limits, refused with TSR_E_LIMIT and a message naming the option, before
 * anything is allocated (0: no limit):
 *   "max_array_bytes"    bytes of one array: an input, a tangent or
 *                        cotangent, a result (default 64 GiB)
 *   "max_call_bytes"     bytes of all arrays of one call together
 *                        (default 64 GiB)
 *   "max_payload_bytes"  length of a JSON payload given to
 *                        tsr_payload_parse (default 1 GiB)
 *   "max_payload_values" JSON values of one payload held as a parsed tree:
 *                        every key, string, number, list and object counts,
 *                        except that a list of numbers (or true/false,
 *                        nested or not) of 64 values or more, read straight
 *                        from the text into its array, counts as one
 *                        (default 1M = 1048576; the tree costs up to ~150
 *                        bytes a value). Counted before parsing. The arrays
 *                        a payload decodes are held to max_array_bytes and
 *                        max_call_bytes before each is allocated
 *   "max_arena_bytes"    worker mode: the shared-memory arena does not grow
 *                        past this (default 64 GiB); beyond it allocations
 *                        fail with TSR_E_SHM naming the option
 * Byte counts take a K, M, G or T suffix (powers of 1024): "512M".
 * Returns TSR_E_ARGUMENT for an unknown key or value; the message is in err
 * when err is not NULL. */
TSR_API int tsr_options_set(tsr_options *opts, const char *key, const char *value, tsr_error *err);
/* Configuration for the plugin's init (read with tsr_ctx_config), e.g.
 * ("matrix", "/data/A.txt"). Copies both strings; a key set twice keeps the
 * last value. */
TSR_API int tsr_options_set_config(tsr_options *opts, const char *key, const char *value);
/* Where diagnostics go. Default: levels >= log_level are written to stderr
 * as "tessera[component] LEVEL: message". fn NULL restores the default. */
TSR_API void tsr_options_set_log(tsr_options *opts, tsr_log_fn fn, void *user);
/* Worker mode: an environment variable for the worker (e.g.
 * LD_LIBRARY_PATH), added to or replacing the inherited one. */
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
TSR_API void tsr_options_set_output(tsr_options *opts, tsr_output_fn fn, void *user);

/* ---- components ----------------------------------------------------------- */

typedef struct tsr_component tsr_component;

/* Load the plugin at path (a path with a '/' is used as is; otherwise the
 * dynamic loader's search rules apply), check its ABI version and
 * descriptor, and run its init. opts may be NULL for defaults. On failure
 * *out is NULL and err (if not NULL) has the code and message.
 * Thread-safe. */
TSR_API int tsr_open(const char *path, const tsr_options *opts, tsr_component **out,
                     tsr_error *err);

/* Run the plugin's fini and unload it. Every tsr_call of the component must
 * have been freed, and no other thread may be using it. Accepts NULL. */
TSR_API void tsr_close(tsr_component *c);

/* Schema queries. Thread-safe; the returned pointers live as long as c. */
TSR_API const char *tsr_component_name(const tsr_component *c);
TSR_API const char *tsr_component_version(const tsr_component *c);
TSR_API const char *tsr_component_description(const tsr_component *c);
TSR_API const char *tsr_component_path(const tsr_component *c);
TSR_API tsr_mode tsr_component_mode(const tsr_component *c);
TSR_API int32_t tsr_component_n_inputs(const tsr_component *c);
TSR_API int32_t tsr_component_n_outputs(const tsr_component *c);
/* Fields in schema order; NULL when index is out of range. The returned
 * fields are the host's validated copy (field_size already accounted for). */
TSR_API const tsr_field *tsr_component_input(const tsr_component *c, int32_t index);
TSR_API const tsr_field *tsr_component_output(const tsr_component *c, int32_t index);
/* Whether a call must give input field f, one tsr_component_input
 * returned: 1 unless it has a default or is optional (only the host's copy
 * always has default_value, whatever the plugin's layout). */
static inline int tsr_field_required(const tsr_field *f) {
    return !f->default_value && !(f->flags & TSR_FIELD_OPTIONAL);
}
/* Index of a field by name, or -1. */
TSR_API int32_t tsr_component_find_input(const tsr_component *c, const char *name);
TSR_API int32_t tsr_component_find_output(const tsr_component *c, const char *name);
/* 1 if the endpoint can be called, else 0. abstract_eval is available
 * also when the plugin lacks it but every output's shape follows from the
 * inputs' dims (fixed sizes and symbols that inputs carry); jvp, vjp and
 * jacobian also when the plugin declares an fd_method, the host then
 * serving them by finite differences of apply (see plugin.h). */
TSR_API int tsr_component_has_endpoint(const tsr_component *c, tsr_endpoint ep);
/* 1 if the plugin implements the endpoint itself, else 0. */
TSR_API int tsr_component_has_native_endpoint(const tsr_component *c, tsr_endpoint ep);
/* The finite-difference method serving missing derivatives (TSR_FD_NONE
 * when there is none). */
TSR_API tsr_fd_method tsr_component_fd_method(const tsr_component *c);

/* Worker mode: start again every worker that died, also an idle one whose
 * death no call has seen yet (and, with no worker dead, do nothing).
 * Returns 0 or the code of the first start that failed. Not concurrent
 * with calls of the same component. */
TSR_API int tsr_component_restart(tsr_component *c);

/* ---- memory for zero-copy inputs ---------------------------------------- */

/* A 64-byte aligned buffer that reaches the plugin without a copy: in worker
 * mode it lies in the shared-memory arena (inputs elsewhere are copied into
 * the arena at each call); in-process, and with the files transport, it is
 * ordinary memory. NULL when out of
 * memory (or shared memory). Thread-safe. Free with tsr_component_free_buffer before
 * tsr_close. */
TSR_API void *tsr_component_alloc(tsr_component *c, size_t bytes);
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

/* NULL only when out of memory (or c is NULL). An endpoint the plugin lacks
 * is reported by tsr_call_run with TSR_E_UNSUPPORTED. */
TSR_API tsr_call *tsr_call_new(tsr_component *c, tsr_endpoint ep);
TSR_API void tsr_call_free(tsr_call *call);

/* Bind an input field to an array. The tsr_array struct is copied; its data
 * is borrowed and must stay valid until tsr_call_run returns. Passing
 * a = NULL unbinds the input. Every input must be bound before a run
 * (abstract_eval reads only dtype, rank and shape). */
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
 * field's path ("inputs.method"). */
TSR_API int tsr_call_set_text(tsr_call *call, const char *name, const char *utf8);

/* The fields to differentiate: jac_inputs/jac_outputs, jvp_inputs/
 * jvp_outputs, vjp_inputs/vjp_outputs. Names are checked now: each must be
 * a differentiable field of the schema, named once. Clears any seeds set
 * before and the results of the previous run, whose layout they define.
 * Only for jvp, vjp and jacobian.
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
 * differences (fd_method) and batches refuse them (TSR_E_UNSUPPORTED). */
TSR_API int tsr_call_set_wrt(tsr_call *call, const char *const *in_names, int32_t n_in,
                             const char *const *out_names, int32_t n_out);

/* jvp: tangent_vector[name], name one of the jvp_inputs, shaped like that
 * input. vjp: cotangent_vector[name], name one of the vjp_outputs, shaped
 * like that output. Data is borrowed as for inputs. At a path inside a
 * JSON field: a float16, float32 or float64 array of any shape, which the
 * component checks (another dtype fails the run with TSR_E_DTYPE). */
TSR_API int tsr_call_set_seed(tsr_call *call, const char *name, const tsr_array *a);

/* Validate every argument against the schema, run the endpoint and check
 * what it returned. Returns 0 or a TSR_E_* code; the message names the
 * component, the endpoint, the field and the cause. Results from a
 * previous run are invalidated. */
TSR_API int tsr_call_run(tsr_call *call);

/* Run the endpoint once per item of a leading batch axis: every input (and
 * tangent or cotangent) is bound with one extra leading dimension of size
 * `batch` in front of its schema shape, and every result comes back with
 * that leading dimension. In worker mode with a pool, the items are split
 * into contiguous chunks that the workers run concurrently; otherwise they
 * run one after the other. Results must have shapes the host can compute
 * (no value-dependent shapes, so no TEXT or JSON outputs); not for
 * abstract_eval. TEXT and JSON inputs are not batched: each item gets the
 * one value bound. Paths inside JSON fields are refused (TSR_E_UNSUPPORTED). */
TSR_API int tsr_call_run_batch(tsr_call *call, int64_t batch);

/* Results of the last successful run: views into buffers the call owns,
 * valid until the next tsr_call_run or tsr_call_free.
 *   apply, abstract_eval  one per output field, schema order
 *   jvp                   one per jvp_output, in the order given
 *   vjp                   one per vjp_input, in the order given
 *   jacobian              n_out * n_in blocks, index o * n_in + i
 * For abstract_eval the results have data NULL. */
TSR_API int32_t tsr_call_n_results(const tsr_call *call);
TSR_API const tsr_array *tsr_call_result(const tsr_call *call, int32_t k);
/* The result for a field by name: for apply, abstract_eval and jvp an output
 * name; for vjp an input name; a path as given to tsr_call_set_wrt for an
 * entry inside a JSON field. NULL if there is none. */
TSR_API const tsr_array *tsr_call_output(const tsr_call *call, const char *name);
/* A TEXT or JSON output of the last successful run as a NUL-terminated
 * string (its length in *len when len is not NULL), or NULL when name is
 * not such an output. Lives as long as the call's results. */
TSR_API const char *tsr_call_output_text(const tsr_call *call, const char *name, size_t *len);
/* A Jacobian block d out_name / d in_name (names or paths as given to
 * tsr_call_set_wrt), or NULL. */
TSR_API const tsr_array *tsr_call_jacobian(const tsr_call *call, const char *out_name,
                                           const char *in_name);
/* Take over the buffer of result k of the last successful run, to keep
 * the result after later runs without pinning the whole call: returns its
 * data pointer (tsr_call_result(call, k)->data, which stays valid), and the
 * call lets go of the buffer; its next run allocates another. Free it with
 * tsr_component_free_buffer, before tsr_close (in worker mode it lies in
 * the shared-memory arena). NULL when there is no such result, it was
 * taken already, or the call is an abstract_eval. */
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
 * endpoint sets takes. 0, or TSR_E_ARGUMENT for a k out of range. */
TSR_API int tsr_call_set_result_buffer(tsr_call *call, int32_t k, void *data, size_t bytes);

/* ---- cancelling a call ------------------------------------------------- */

/*
 * Ask a call to stop: the run in progress, or else the next run of the
 * call, fails with TSR_E_CANCELLED (a run that starts with a request
 * pending fails before it reaches the plugin). That run consumes the
 * request; its results are not available. Callable from any thread, and
 * from a signal handler of the host's own: it is an atomic store, plus in
 * worker mode a write(2) to an eventfd that wakes the waiting call (errno
 * is preserved). The call must not be freed meanwhile. 0, or
 * TSR_E_ARGUMENT when call is NULL.
 *
 * What stops, by mode:
 *   worker    the waiting host notices at once. The worker is asked to
 *             stop (its plugin sees tsr_ctx_cancelled, a request it has
 *             not taken yet is refused) and given TSR_CANCEL_GRACE_MS to
 *             answer; then it is reused. One that does not answer in time
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

/*
 * For a host that learns of an interruption only by asking (Python: a
 * signal handler runs only when the interpreter checks for it): while a
 * run of this call waits for a worker, and while its in-process plugin
 * polls tsr_ctx_cancelled, check(user) is called about every interval_ms
 * (0: 50), always by the thread that called tsr_call_run or
 * tsr_call_run_batch, never by another, and never during a run shorter
 * than interval_ms. A nonzero return cancels the call as tsr_call_cancel
 * does. check NULL removes it. Not while the call runs. 0, or
 * TSR_E_ARGUMENT.
 */
typedef int (*tsr_cancel_check_fn)(void *user);
TSR_API int tsr_call_set_cancel_check(tsr_call *call, tsr_cancel_check_fn check, void *user,
                                      int32_t interval_ms);

/* Code and message of the last failure of this call ("" and 0 after a
 * success). */
TSR_API int tsr_call_errcode(const tsr_call *call);
TSR_API const char *tsr_call_errmsg(const tsr_call *call);
/* Where in the request the last failure lies, as dot-separated parts with
 * the request's section first, as Tesseract's "loc" lists it:
 * "inputs.mesh.nodes", "tangent_vector.x", "cotangent_vector.y",
 * "jvp_inputs.1" (a number is an index into that list), "inputs" alone
 * for the whole object; "" when the failure is not about one place (the
 * plugin failed, a worker died) and after a success. */
TSR_API const char *tsr_call_errloc(const tsr_call *call);
/* The type of the last failure as Tesseract's 422 errors name it: the one
 * the endpoint gave when it refused an input value (tsr_ctx_invalid:
 * "greater_than_equal", "literal_error", "missing"), else
 * tsr_error_type(tsr_call_errcode(call)); "" after a success. */
TSR_API const char *tsr_call_errtype(const tsr_call *call);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TESSERA_H */
