/* SPDX-License-Identifier: MIT */
/*
 * What a worker process is given and does with it, shared by the host that
 * starts it (backends/worker) and the worker's side (worker/): its
 * arguments, its resource limits, how it keeps its descendants, and its
 * serving loop. A worker is tessera-worker, or a fork of the host.
 */
#ifndef TESSERA_WORKER_ARGS_H
#define TESSERA_WORKER_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A worker's own diagnostics (tsr_ctx_log, library messages) are written to
 * stderr as WORKER_LOG_MARKER "<level> <message>": the host routes them to
 * its log function instead of treating them as plugin output. The marker
 * starts with an ASCII record separator, which plugin text does not. */
#define WORKER_LOG_MARKER "\036tessera-log "

/* Resource limits of a worker; 0 leaves one as inherited. */
typedef struct worker_rlimits {
    uint64_t as_bytes;          /* RLIMIT_AS */
    uint64_t cpu_seconds;       /* RLIMIT_CPU: SIGXCPU then, SIGKILL a second later */
    uint64_t nofile;            /* RLIMIT_NOFILE */
} worker_rlimits;

/* What tessera-worker (or a forked child) is given. */
typedef struct worker_args {
    const char *plugin_path;
    int arena_fd;               /* the socket arena segments arrive on; -1 with files */
    int chan_fd, my_bell, peer_bell;
    pid_t host_pid;
    uint64_t spin_ns;
    int spin_adaptive;
    worker_rlimits limits;
    const char *spool_dir;      /* files transport (arena_fd -1), as in worker_spawn_opts */
    const char *spool_tag;
    int file_io;
} worker_args;

/* Apply a worker's resource limits to this process (worker_limits.c).
 * 0, or -1 with a cause in why ("cannot set RLIMIT_AS to 1000: ..."). */
int worker_apply_rlimits(const worker_rlimits *l, char *why, size_t n);

/* Make this worker a child subreaper (worker_kin.c), before the plugin is
 * loaded: what the plugin forks stays in its tree. 0, or TSR_E_WORKER with
 * a cause in why. */
int worker_contain_kin(char *why, size_t n);
/* Kill every descendant still alive; for the worker's own exit paths,
 * after the plugin's fini. */
void worker_end_kin(void);

/* Load the plugin, answer CHAN_READY, serve requests until CHAN_EXIT or
 * the host's death (the plugin's fini runs in both cases). Returns the
 * process exit status to use: 0 after serving (or when the host was gone
 * at start), 1 when the plugin could not be loaded (CHAN_READY carried
 * why), 3 when the channel could not be attached (said on stderr). */
int worker_serve(const worker_args *a);

#endif
