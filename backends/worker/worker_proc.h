/* SPDX-License-Identifier: MIT */
/*
 * A worker process, seen from the host: start it (posix_spawn of
 * tessera-worker, or plain fork), exchange requests with it over its
 * channel, forward what it prints, notice its death, stop or kill it.
 *
 * The host watches the worker through a pidfd only: no SIGCHLD handler, no
 * waitpid(-1); it reaps exactly the child it started (waitid P_PIDFD).
 * The worker watches its host through a pidfd too and exits when the host
 * is gone, so no worker outlives its host. What a worker's plugin forks
 * ends with the worker: the host kills the worker's process group before
 * it reaps the worker, and the worker (a child subreaper) kills its
 * descendants when it ends by itself (worker_kin.c).
 */
#ifndef TESSERA_BACKENDS_WORKER_PROC_H
#define TESSERA_BACKENDS_WORKER_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shm/channel.h"
#include "worker/worker_args.h"

/* Lines the worker writes to stdout or stderr, without the newline. */
typedef void (*worker_output_fn)(void *user, const char *line);

typedef struct worker_spawn_opts {
    const char *worker_exe;     /* tessera-worker, for exec mode */
    int use_fork;               /* plain fork without exec (single-threaded hosts only) */
    const char *plugin_path;
    arena *arena;               /* shared memory: its segments go to the worker; NULL with files */
    const char *config_json;    /* {"KEY": "VALUE", ...}; NULL for none */
    const char *const *env_set; /* "NAME=VALUE" entries added to (or replacing in) the environment; NULL-terminated or NULL */
    int clear_env;              /* start from an empty environment */
    const char *cwd;            /* working directory, or NULL */
    uint64_t spin_ns;           /* both sides spin this long before sleeping */
    int spin_adaptive;          /* ... at most, about twice their recent waits */
    worker_rlimits limits;      /* set by the worker on itself before loading the plugin */
    /* Files transport (spool.h): arrays move through files in spool_dir
     * named after spool_tag, read and written as file_io (a binref_io)
     * says; the channel lives in a file there; arena is NULL. */
    const char *spool_dir;
    const char *spool_tag;
    int file_io;
    int start_timeout_ms;       /* <= 0: no limit */
    worker_output_fn output;    /* NULL: lines go to stderr as "tessera-worker[PID]: line" */
    void *output_user;
} worker_spawn_opts;

typedef struct worker_proc {
    pid_t pid;
    int pidfd;
    int out_fd;                 /* read end of the worker's stdout+stderr pipe */
    int chan_fd;
    int seg_sock;               /* the host's end of the socket arena segments go through, or -1 */
    uint32_t segs_sent;         /* segments 0 .. segs_sent - 1 are the worker's already */
    arena *arena;               /* whose segments (NULL with files) */
    chan_end end;               /* the host's end */
    worker_output_fn output;
    void *output_user;
    char line[4096];            /* an incomplete output line */
    size_t line_len;
    int alive;                  /* running, as far as the host knows */
    int reaped;                 /* its exit status has been collected */
    int open;                   /* holds resources that worker_stop releases */
} worker_proc;

/*
 * Start a worker for the plugin and wait for CHAN_READY. w need not be
 * initialised (but must not hold a running worker); after a failure it
 * holds nothing (worker_stop is a no-op). The control segment is a memfd
 * (with spool_dir: a file without a name in the spool). The child gets the
 * segment at fd 3, its doorbell at 4, the host's at 5, with shared memory
 * at 6 its end of a Unix socket (SOCK_SEQPACKET) on which the host hands
 * it the arena's segments (arena_send_segments), /dev/null as stdin,
 * the output pipe as stdout and stderr, no other fd, default signal
 * dispositions, an empty signal mask and a process group of its own. On success the
 * component's schema (JSON text, malloc'd, caller frees) is in *schema_json.
 * On failure: a TSR_E_* code and a cause in why: TSR_E_LOAD or TSR_E_INIT
 * with the worker's own message when the plugin could not be loaded or
 * initialised, TSR_E_WORKER when the worker could not start or died ("killed
 * by signal 11 (Segmentation fault)", "exited with status 3"),
 * TSR_E_TIMEOUT when it did not answer within start_timeout_ms, or
 * TSR_E_ARGUMENT when fork mode is asked of a multi-threaded host. Nothing
 * is left behind on failure.
 */
int worker_start(worker_proc *w, const worker_spawn_opts *o, char **schema_json, char *why,
                 size_t n);

/*
 * Hand the worker the arena segments it does not have yet (none: one
 * atomic load, no system call), post `state` (CHAN_REQUEST or
 * CHAN_ALLOC_DONE) and wait for CHAN_DONE or CHAN_ALLOC, forwarding output
 * meanwhile (all of it before returning when
 * the answer took longer than the spin; after a quicker answer, lines still
 * in the pipe wait for a later round trip or worker_stop, since reading
 * them would double the cost of a cheap call). Returns the state reached, or:
 * TSR_E_TIMEOUT after timeout_ms (> 0; <= 0 means none; counted per round
 * trip), the worker having been killed; TSR_E_WORKER when it died, with
 * the cause in why ("the worker (pid 42) died: killed by signal 11
 * (Segmentation fault)"). After either error the worker is gone and reaped
 * (w->alive == 0); worker_stop still releases the channel.
 */
int worker_roundtrip(worker_proc *w, uint32_t state, int timeout_ms, char *why, size_t n);

/* What ends a wait for the worker early: a cancel of the call it runs
 * (core/backend.h, call_cancel_*). */
typedef struct worker_cancel {
    const _Atomic uint32_t *flag;   /* nonzero: stop waiting */
    int fd;                         /* readable after a request (an eventfd), or -1 */
    int check_ms;                   /* > 0: run check after each check_ms asleep */
    int (*check)(void *user);       /* nonzero: stop (the flag is set then) */
    void *user;
} worker_cancel;
/* worker_roundtrip that also ends, with TSR_E_CANCELLED and why saying
 * so, when cx says stop; the worker is then left as it is: alive, the
 * request maybe still running. The caller asks it to stop (chan_block's
 * cancel) and waits with worker_await. */
int worker_roundtrip_cancel(worker_proc *w, uint32_t state, int timeout_ms,
                            const worker_cancel *cx, char *why, size_t n);
/* worker_roundtrip with state 0 posting nothing (only waiting), and
 * timeout_what saying in why what the worker did not do in time ("did
 * not stop" within N ms; the worker (pid 42) was killed). */
int worker_await(worker_proc *w, uint32_t state, int timeout_ms, const char *timeout_what,
                 char *why, size_t n);

/* Whether the worker has ended (its pidfd is readable), without waiting
 * or reaping: a cheap probe of an idle worker (one poll). */
int worker_exited(const worker_proc *w);
/* 0 while the worker runs; once it has ended, forward its last output,
 * reap it and return TSR_E_WORKER with the cause in why ("the worker (pid
 * 42) died between calls: killed by signal 9 (Killed)"). For an idle
 * worker; worker_stop still releases the channel. */
int worker_check(worker_proc *w, char *why, size_t n);

/* Ask the worker to exit, give it a moment, kill it if it lingers, reap
 * it, forward its last output and close everything (nothing has a name to
 * remove). Accepts a worker that is already dead. */
void worker_stop(worker_proc *w);

/* "exited with status 3", "killed by signal 9 (Killed)": describes a
 * waitid() result. */
const char *worker_describe_exit(int code, int status, char *buf, size_t n);

/* Number of threads of this process (from /proc/self/status), or -1. */
int process_thread_count(void);

#endif
