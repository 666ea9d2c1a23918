/* SPDX-License-Identifier: MIT */
/* What the user asked for when opening a component: the private copy of
 * tsr_options that a component keeps (options.c fills it). Part of the
 * backend interface: backends read the options that concern them. */
#ifndef TESSERA_CORE_OPTIONS_H
#define TESSERA_CORE_OPTIONS_H

#include <stdint.h>

#include "tessera/tessera.h"

typedef struct config_entry {
    char *key;
    char *value;
} config_entry;

struct tsr_options {
    tsr_mode mode;
    int mode_set;                    /* "mode" was given: the host insists on it */
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
    int cancel_grace_ms;             /* a cancelled call's worker has this to stop */
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
    uint64_t max_payload_values;     /* JSON values jansson holds for one payload */
    /* the worker's resource limits; 0 = inherited */
    uint64_t rlimit_as, rlimit_cpu, rlimit_nofile;
    /* how worker calls move arrays */
    int transport;                   /* TRANSPORT_* */
    char *spool_dir;                 /* files: the spool's parent; NULL: $TMPDIR or /tmp */
    int file_io;                     /* files: a tsr_file_io */
    /* calls: convert inputs and seeds of another dtype (casting.c) */
    int casting;                     /* CASTING_* */
    int unwritten;                   /* UNWRITTEN_* (result_fill.c) */
    int timing_off;                  /* call_timing=off: no clock reads per call */
    int hvp_fallback_off;            /* hvp_fallback=off: hvp only where it is native */
    /* the host's finite differences (component.c: fd_options_apply) */
    int fd_method;                   /* 0: declared; else a tsr_fd_method */
    double fd_step;                  /* 0: declared or the method's default */
    int fd_all;                      /* fd_endpoints=all: replace the native ones */
    int fd_absolute;                 /* fd_step_rule=absolute: h = fd_step */
    /* Python components (backends/python) */
    char *python;                    /* the interpreter; NULL: see python_env.c */
    int python_env_off;              /* python_env=none: never build an environment */
    /* UM-Bridge models (backends/umbridge) */
    char *umbridge_model;            /* the model at a URL; NULL: the URL's fragment */
};

/* Option "transport": shared memory, falling back to files where it
 * cannot be used (auto); shared memory only; files only. */
enum { TRANSPORT_AUTO = 0, TRANSPORT_SHM = 1, TRANSPORT_FILES = 2 };

/* Option "casting": a dtype other than the field's is refused (exact)
 * or converted by numpy's same_kind rule (same_kind). */
enum { CASTING_EXACT = 0, CASTING_SAME_KIND = 1 };

/* Option "unwritten": results are cleared before each run (zero), filled
 * with a marker that a run must overwrite (check), or left as they are
 * (keep: the host trusts its plugin to write every result). */
enum { UNWRITTEN_ZERO = 0, UNWRITTEN_CHECK = 1, UNWRITTEN_KEEP = 2 };

/* Defaults of the limits: far above what a call on one machine needs, far
 * below what a hostile shape claims (2^62 elements). */
#define DEFAULT_MAX_ARRAY_BYTES ((uint64_t)64 << 30)
#define DEFAULT_MAX_CALL_BYTES ((uint64_t)64 << 30)
#define DEFAULT_MAX_ARENA_BYTES ((uint64_t)64 << 30)
#define DEFAULT_MAX_PAYLOAD_BYTES ((uint64_t)1 << 30)
/* jansson spends some 50-150 bytes on a value: ~100 MiB at most. Numeric
 * lists of 64 values or more count as one (codecs/json_hoist.h). */
#define DEFAULT_MAX_PAYLOAD_VALUES ((uint64_t)1 << 20)

/* Default spin before sleeping, from bench_worker's sweep on a 2-core VM:
 * 200 us kept back-to-back calls at 0.4-0.7 us in every run, and covers
 * host work of up to ~100 us between calls; shorter spins (10-50 us) fell
 * into a mode where host and worker share a CPU and each spin delays the
 * other. The price is up to 200 us of CPU after each call. */
#define DEFAULT_SPIN_NS 200000

/* options.c */
int options_copy(struct tsr_options *dst, const struct tsr_options *src);
void options_clear(struct tsr_options *o);
void options_defaults(struct tsr_options *o);
/* log_env.c: no warning about TESSERA_LOG from this process: one whose
 * options all set log_level (a worker, whose host applies its own). */
void log_env_quiet(void);

#endif
