/* Internal structures of the core: the loaded component, the call object,
 * options. Not part of the public API. */
#ifndef TESSERA_CORE_INTERNAL_H
#define TESSERA_CORE_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>

#include "tessera/tessera.h"

#ifndef TSR_API
#define TSR_API __attribute__((visibility("default")))
#endif

/* Buffers handed to plugins are aligned for AVX-512 and for JAX, which
 * copies misaligned buffers instead of viewing them. */
#define TSR_ALIGN 64

/* Sanity bounds on a descriptor, to refuse garbage rather than walk it. */
#define TSR_MAX_FIELDS 4096
#define TSR_MAX_NAME 256
#define TSR_MAX_SYMBOLS 1024   /* distinct symbolic dims (ids are int16) */

/* Kind of one declared dimension, resolved once at load. */
enum dim_kind { DIM_FIXED, DIM_ANY, DIM_SYMBOL };

/* The host's validated copy of one schema field. The public part (field)
 * points at `dims`; strings still point into the plugin's static data,
 * which lives as long as the plugin stays loaded. */
typedef struct field_info {
    tsr_field field;
    tsr_dim dims[TSR_MAX_FIELD_RANK];
    uint8_t kind[TSR_MAX_FIELD_RANK];  /* enum dim_kind */
    int16_t sym[TSR_MAX_FIELD_RANK];   /* symbol id for DIM_SYMBOL, else -1 */
    /* Outputs only: every dimension is fixed or a symbol that some input
     * binds, so the host can compute the shape before the call. */
    uint8_t shape_static;
} field_info;

typedef struct imported_schema imported_schema;
struct manifest;
struct arena;
struct spool;
struct worker_pool;

typedef struct config_entry {
    char *key;
    char *value;
} config_entry;

struct tsr_options {
    tsr_mode mode;
    tsr_log_level log_level;
    int log_off;
    tsr_log_fn log_fn;
    void *log_user;
    config_entry *config;            /* for the plugin's init */
    int32_t n_config;
    /* worker mode */
    int32_t workers;
    int use_fork;
    char *worker_exe;
    char *cwd;
    int clear_env;
    int timeout_ms;
    int start_timeout_ms;
    int auto_restart;
    int64_t spin_ns;                 /* -1: the default */
    config_entry *env;               /* NAME, VALUE for the worker */
    int32_t n_env;
    tsr_output_fn output_fn;
    void *output_user;
    /* limits (limits.c); 0 = none */
    uint64_t max_array_bytes;
    uint64_t max_call_bytes;
    uint64_t max_arena_bytes;
    uint64_t max_payload_bytes;
    /* the worker's resource limits; 0 = inherited */
    uint64_t rlimit_as, rlimit_cpu, rlimit_nofile;
    /* how worker calls move arrays */
    int transport;                   /* TSR_TRANSPORT_* */
    char *spool_dir;                 /* files: the spool's parent; NULL: $TMPDIR or /tmp */
    int file_io;                     /* files: a tsr_file_io */
};

/* Option "transport": shared memory, falling back to files where it
 * cannot be used (auto); shared memory only; files only. */
enum { TSR_TRANSPORT_AUTO = 0, TSR_TRANSPORT_SHM = 1, TSR_TRANSPORT_FILES = 2 };

/* Defaults of the limits: far above what a call on one machine needs, far
 * below what a hostile shape claims (2^62 elements). */
#define TSR_DEFAULT_MAX_ARRAY_BYTES ((uint64_t)64 << 30)
#define TSR_DEFAULT_MAX_CALL_BYTES ((uint64_t)64 << 30)
#define TSR_DEFAULT_MAX_ARENA_BYTES ((uint64_t)64 << 30)
#define TSR_DEFAULT_MAX_PAYLOAD_BYTES ((uint64_t)1 << 30)

/* Default spin before sleeping, from bench_worker's sweep on a 2-core VM:
 * 200 us kept back-to-back calls at 0.4-0.7 us in every run, and covers
 * host work of up to ~100 us between calls; shorter spins (10-50 us) fell
 * into a mode where host and worker share a CPU and each spin delays the
 * other. The price is up to 200 us of CPU after each call. */
#define TSR_DEFAULT_SPIN_NS 200000

struct tsr_component {
    char *path;
    tsr_mode mode;
    void *dl;                        /* dlopen handle */
    const tsr_plugin *desc;
    tsr_endpoint_fn ep[TSR_EP_COUNT];
    tsr_fini_fn fini;
    void *state;                     /* what the plugin's init returned */
    int32_t n_in, n_out;
    field_info *in, *out;
    int32_t n_sym;
    const char **sym_names;          /* n_sym symbol names, in id order */
    int thread_safe;
    tsr_fd_method fd_method;         /* how missing derivatives are served */
    uint32_t fd_samples;
    double fd_step;
    pthread_mutex_t lock;            /* serialises non-thread-safe plugins */
    struct tsr_options opts;         /* a private copy (config strings owned) */
    /* worker mode */
    struct arena *arena;             /* inputs, results and staging live here */
    struct spool *spool;             /* or, with the files transport, arrays cross here */
    struct worker_pool *pool;
    imported_schema *schema;         /* owns the descriptor (desc) */
    struct manifest *manifest;       /* a legacy routine's manifest: owns desc and state */
    _Atomic uint64_t stat_calls, stat_copied, stat_by_ref, stat_starts, stat_deaths;
};

/* What a tsr_ctx really points to: the public part first, then the
 * host's bookkeeping. One per call object, plus a temporary one for
 * init and fini. */
typedef struct host_ctx {
    tsr_ctx pub;
    tsr_component *comp;
    struct tsr_call *call;           /* NULL during init */
    int plugin_msg_set;
    int alloc_code;                  /* 0, or why tsr_ctx_alloc refused */
    char plugin_msg[TSR_ERRMSG_MAX];
    char alloc_msg[TSR_ERRMSG_MAX];
} host_ctx;

/* A result buffer owned by a call, kept across runs. */
typedef struct result_buf {
    void *ptr;
    size_t cap;
} result_buf;

struct tsr_call {
    host_ctx ctx;                    /* first: (tsr_call *) == (host_ctx *) */
    tsr_component *comp;
    tsr_endpoint ep;
    /* inputs */
    tsr_array *inputs;               /* n_in */
    uint8_t *input_bound;            /* n_in */
    int32_t n_bound;
    /* differentiation targets and their seeds */
    int32_t *wrt_in, *wrt_out;       /* capacity n_in / n_out */
    int32_t n_wrt_in, n_wrt_out;
    int wrt_set;
    tsr_array *seeds;                /* n_in (jvp) or n_out (vjp) */
    uint8_t *seed_set;
    /* results */
    tsr_array *results;              /* capacity max(n_out, n_wrt_in, n_out*n_in) */
    tsr_array *expect;               /* what the host set before the call */
    result_buf *bufs;
    int32_t n_results, cap_results;
    result_buf *staging;             /* worker mode: copies of inputs, then seeds */
    int last_worker;                 /* worker mode: the pool slot used last */
    /* batches (batch.c): a batch runs its items through sub-calls, one per
     * concurrent lane, whose results are slices of the batch's results */
    struct tsr_call *parent;
    int64_t item;
    struct tsr_call **subs;
    int32_t n_subs;
    struct tsr_call *fd_apply;       /* fd_fallback.c: evaluates apply */
    result_buf scratch;              /* manifest_call.c: a legacy routine's staged arguments */
    int results_valid;
    /* The last run succeeded, every result was sized by the host, and no
     * dtype, rank or shape has changed since: the next run may skip shape
     * validation and result sizing (only data pointers moved). */
    int validated;
    tsr_args args;                   /* kept from the last validated run */
    /* symbol values during one run; -1 = unbound */
    int64_t *symval;
    const char **sym_from;           /* field that bound each symbol */
    uint64_t limit_used;             /* limits.c: bytes of this run's arrays so far */
    int errcode;
    size_t cause_at;                 /* where the cause starts in errmsg */
    char errmsg[TSR_ERRMSG_MAX];
};

/* errors.c */
void error_set(tsr_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int call_fail(struct tsr_call *call, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *comp_label(const tsr_component *c);
const char *call_cause(const struct tsr_call *call);

/* descriptor.c: validate a plugin's descriptor and copy its schema. */
int descriptor_load(tsr_component *c, const tsr_plugin *d, tsr_error *err);
void descriptor_free(tsr_component *c);

/* host_api.c: services offered to plugins through tsr_ctx. */
extern const tsr_host_api tsr_host_api_v1;
void host_ctx_init(host_ctx *hc, tsr_component *c, struct tsr_call *call);
void comp_log(const tsr_component *c, tsr_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* options.c */
int options_copy(struct tsr_options *dst, const struct tsr_options *src);
void options_clear(struct tsr_options *o);
void options_defaults(struct tsr_options *o);

/* shape.c: checks shared by validation of inputs, seeds and results. */
int64_t shape_count(const int64_t *shape, int32_t rank);   /* -1 on overflow */
int shape_bytes(const tsr_array *a, size_t *bytes);          /* -1 on overflow */
const char *shape_str(const int64_t *shape, int32_t rank, char *buf, size_t n);
const char *field_shape_str(const field_info *f, char *buf, size_t n);
/* Check an array's dims against a field's declared dims, binding symbols in
 * symval (and noting in sym_from which field bound each). On mismatch
 * writes a cause into why and returns -1. */
int shape_match(const field_info *f, const int64_t *shape, int32_t rank, int64_t *symval,
                const char **sym_from, const char *const *sym_names, char *why, size_t n);
/* Shape of a field from bound symbols; 0 if every dim is known, else -1. */
int shape_from_symbols(const field_info *f, const int64_t *symval, int64_t *shape);

/* buffer.c: call-owned buffers, in the arena in worker mode. */
void *result_reserve(tsr_component *c, result_buf *b, size_t bytes, char *why, size_t n);
void result_release(tsr_component *c, result_buf *b);

/* schema_import.c: a worker's schema (JSON) as a descriptor. */
int schema_import(const char *text, imported_schema **out, char *why, size_t n);
const tsr_plugin *schema_import_descriptor(const imported_schema *s);
void schema_import_free(imported_schema *s);
struct json_t;
size_t schema_count_dims(struct json_t *fields);

/* component.c */
int32_t find_field(const field_info *fs, int32_t n, const char *name);
int schema_gives_shapes(const tsr_component *c);

/* call.c */
int call_validate(struct tsr_call *call);

/* fd_fallback.c: jvp, vjp, jacobian by finite differences of apply. */
int fd_invoke(struct tsr_call *call);

/* batch.c */
void batch_point_results(struct tsr_call *sub);

/* limits.c: max_array_bytes and max_call_bytes. limit_check counts an
 * array of `bytes` toward this run's total (call->limit_used, reset when a
 * run's validation starts) or refuses it with TSR_E_LIMIT and a message
 * naming the array ("input 'x'" for what "input", "what['name']", or what
 * alone when name is NULL), the limit and the option that raises it.
 * limit_take does the same and fails the call. */
uint64_t limit_array_bytes(const tsr_array *a);   /* UINT64_MAX on overflow */
int limit_check(struct tsr_call *call, uint64_t bytes, const char *what, const char *name,
                char *why, size_t n);
int limit_take(struct tsr_call *call, uint64_t bytes, const char *what, const char *name);
/* max_payload_bytes, for transport/payload_parse.c (0: none). */
uint64_t tsr_component_payload_limit(const tsr_component *c);

/* results.c */
int32_t results_count(const struct tsr_call *call);
int results_prepare(struct tsr_call *call);
int results_check(struct tsr_call *call);
void *result_alloc(struct tsr_call *call, int32_t k, int *code, char *why, size_t n);
const char *result_name(const struct tsr_call *call, int32_t k, char *buf, size_t n);

#endif
