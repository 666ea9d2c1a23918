/* SPDX-License-Identifier: MIT */
/* A worker process seen from the host: start, round trips, stop. The
 * worker is watched through its pidfd only, and reaped with waitid on that
 * pidfd: no SIGCHLD handler, no waitpid(-1), no other child touched. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/backend.h"
#include "worker/leak_check.h"
#include "worker_spawn.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* How long an idle worker may take to leave after CHAN_EXIT. In a
 * sanitizer build it runs LeakSanitizer's check (and symbolizes what it
 * finds) on the way out: killing it mid-check would hide its leaks. */
#ifdef WORKER_HAVE_LSAN
#define WORKER_EXIT_GRACE_MS 5000
#else
#define WORKER_EXIT_GRACE_MS 200
#endif

/* Bytes of output read at one go while waiting for the worker, before the
 * wait (and its deadline) is looked at again: a plugin that prints without
 * pause cannot keep a call past its timeout. After an answer, a death or
 * a stop: what the pipe holds (64 KiB), with room to spare. */
#define DRAIN_WHILE_WAITING ((size_t)64 << 10)
#define DRAIN_AFTER ((size_t)1 << 20)

static int sys_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

static int sys_pidfd_kill(int pidfd, int sig) {
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int process_thread_count(void) {
    FILE *f = fopen("/proc/self/status", "re");
    if (!f) return -1;
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1) break;
    fclose(f);
    return n;
}

/* code and status are siginfo's si_code and si_status (names that
 * glibc takes for macros). */
const char *worker_describe_exit(int code, int status, char *buf, size_t n) {
    if (code == CLD_EXITED)
        snprintf(buf, n, "exited with status %d", status);
    else if (code == CLD_KILLED || code == CLD_DUMPED)
        snprintf(buf, n, "killed by signal %d (%s)%s", status, strsignal(status),
                 code == CLD_DUMPED ? ", core dumped" : "");
    else
        snprintf(buf, n, "ended with code %d, status %d", code, status);
    return buf;
}

/* ---- output ---------------------------------------------------------------- */

static void emit_line(worker_proc *w) {
    w->line[w->line_len] = '\0';
    if (w->output) {
        w->output(w->output_user, w->line);
    } else {
        char prefix[48];
        snprintf(prefix, sizeof prefix, "tessera-worker[%ld]", (long)w->pid);
        stderr_line(prefix, w->line); /* never blocks */
    }
    w->line_len = 0;
}

/* Forward the complete lines waiting in the pipe, up to about `budget`
 * bytes; at EOF also the last, unterminated one, and stop watching the
 * pipe. Never blocks (unless the output function does). */
static void drain_output(worker_proc *w, size_t budget) {
    char buf[4096];
    for (size_t taken = 0; w->out_fd >= 0 && taken < budget;) {
        ssize_t got = read(w->out_fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0 && errno == EAGAIN) return;
        if (got <= 0) { /* EOF, or an error that will not go away */
            if (w->line_len) emit_line(w);
            close(w->out_fd);
            w->out_fd = -1;
            return;
        }
        taken += (size_t)got;
        for (ssize_t i = 0; i < got; i++) {
            if (buf[i] == '\n') {
                emit_line(w);
                continue;
            }
            w->line[w->line_len++] = buf[i];
            if (w->line_len == sizeof w->line - 1) emit_line(w); /* an overlong line, in pieces */
        }
    }
}

/* ---- death ------------------------------------------------------------------- */

/* waitid for the worker with these options; EINTR retried. */
static int wait_worker(const worker_proc *w, siginfo_t *si, int options) {
    int r;
    while ((r = waitid((idtype_t)P_PIDFD, (id_t)w->pidfd, si, options)) != 0 && errno == EINTR) {
    }
    /* Linux 5.3 has pidfds but not P_PIDFD: the same child, by its pid. */
    if (r != 0 && errno == EINVAL)
        while ((r = waitid(P_PID, (id_t)w->pid, si, options)) != 0 && errno == EINTR) {
        }
    return r;
}

/* SIGKILL the worker's process group: it and what it forked that stayed in
 * the group. Only while the worker is not reaped: its pid, which is the
 * group's id, cannot have been reused then. */
static void kill_group(const worker_proc *w) {
    (void)kill(-w->pid, SIGKILL); /* ESRCH: none left */
}

/* Reap the worker (it has exited or been killed) and describe how it
 * ended; its process group is killed once it is gone, before the reaping
 * frees its pid. */
static void reap(worker_proc *w, char *desc, size_t n) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    /* ECHILD: the host ignores SIGCHLD and the kernel has reaped it; its
     * pid may name another process by now, so the group is left alone. */
    if (wait_worker(w, &si, WEXITED | WNOWAIT) == 0) kill_group(w);
    memset(&si, 0, sizeof si);
    int r = wait_worker(w, &si, WEXITED);
    if (r != 0 && errno == ECHILD)
        snprintf(desc, n, "exit status unknown (this process ignores SIGCHLD or reaps its "
                          "children itself)");
    else if (r != 0)
        snprintf(desc, n, "exit status unknown (waitid: %s)", strerror(errno));
    else
        worker_describe_exit(si.si_code, si.si_status, desc, n);
    w->reaped = 1;
    w->alive = 0;
}

static void kill_and_reap(worker_proc *w, char *desc, size_t n) {
    /* ESRCH: it is already dead, and reaping tells how. */
    if (sys_pidfd_kill(w->pidfd, SIGKILL) == 0)
        kill_group(w); /* alive a moment ago, so not reaped: the group is still its own */
    else if (errno != ESRCH)
        kill(w->pid, SIGKILL);
    reap(w, desc, n);
}

static int cancelled(const worker_proc *w, char *why, size_t n) {
    snprintf(why, n, "cancelled while the worker (pid %ld) had the call", (long)w->pid);
    return TSR_E_CANCELLED;
}

/* The cancel eventfd is readable. The request is the truth: with it clear
 * (a request merged into a run that has ended) the eventfd is drained, and
 * rung again if a request came meanwhile, for the other sleepers on it. */
static void cancel_fd_ready(const worker_cancel *cx) {
    if (atomic_load(cx->flag)) return;
    uint64_t v;
    while (read(cx->fd, &v, sizeof v) < 0 && errno == EINTR) {
    }
    if (atomic_load(cx->flag)) {
        uint64_t one = 1;
        while (write(cx->fd, &one, sizeof one) < 0 && errno == EINTR) {
        }
    }
}

/* Wait for a state in mask, forwarding output; the worker's death or a
 * timeout (timeout_ms < 0: none) ends it, reaped, with a message. With cx,
 * a cancel ends it too (TSR_E_CANCELLED), the worker left as it is; the
 * host's check runs after every cx->check_ms asleep. */
static int wait_state(worker_proc *w, uint32_t mask, int timeout_ms, const worker_cancel *cx,
                      const char *during, const char *timeout_what, char *why, size_t n) {
    uint64_t deadline = timeout_ms < 0 ? 0 : now_ms() + (uint64_t)timeout_ms;
    for (;;) {
        if (cx && atomic_load_explicit(cx->flag, memory_order_relaxed)) return cancelled(w, why, n);
        int left = -1;
        if (timeout_ms >= 0) {
            uint64_t t = now_ms();
            left = t >= deadline ? 0 : (int)(deadline - t);
        }
        /* Asleep for the host's check at most, unless the deadline is nearer. */
        int checking = cx && cx->check_ms > 0 && (left < 0 || left > cx->check_ms);
        struct pollfd extra[3] = {{.fd = w->pidfd, .events = POLLIN},
                                  {.fd = w->out_fd, .events = POLLIN},
                                  {.fd = cx ? cx->fd : -1, .events = POLLIN}};
        int ready = -1;
        /* A signal handler that runs in this thread (Ctrl-C in Python) is
         * checked for at once, not at the end of the interval. */
        w->end.return_on_signal = checking;
        int s = chan_wait(&w->end, mask, extra, 3, checking ? cx->check_ms : left, &ready);
        w->end.return_on_signal = 0;
        if (s >= 0) {
            /* Output of the call goes out before its answer, unless the
             * answer came within the spin: a read() would then cost as much
             * as the round trip itself, and the lines wait for a later
             * wait or for worker_stop. */
            if (w->end.slept) drain_output(w, DRAIN_AFTER);
            return s;
        }
        if (s == CHAN_WAIT_FD && ready == 1) {
            drain_output(w, DRAIN_WHILE_WAITING);
            continue;
        }
        if (s == CHAN_WAIT_FD && ready == 2) {
            cancel_fd_ready(cx);
            continue; /* the loop's first test decides */
        }
        if ((s == CHAN_WAIT_TIMEOUT || s == CHAN_WAIT_SIGNAL) && checking) {
            if (cx->check(cx->user)) return cancelled(w, why, n);
            continue;
        }
        char desc[200];
        int saved = errno;
        if (s == CHAN_WAIT_FD) { /* ready == 0: the pidfd, so the worker is gone */
            drain_output(w, DRAIN_AFTER);
            reap(w, desc, sizeof desc);
            snprintf(why, n, "the worker (pid %ld) died%s: %s", (long)w->pid, during, desc);
            return TSR_E_WORKER;
        }
        kill_and_reap(w, desc, sizeof desc);
        drain_output(w, DRAIN_AFTER);
        if (s == CHAN_WAIT_TIMEOUT) {
            snprintf(why, n, "%s within %d ms; the worker (pid %ld) was killed", timeout_what,
                     timeout_ms, (long)w->pid);
            return TSR_E_TIMEOUT;
        }
        snprintf(why, n, "waiting for the worker (pid %ld) failed: %s; it was killed",
                 (long)w->pid, strerror(saved));
        return TSR_E_WORKER;
    }
}

/* Hand the worker the arena's segments it does not have yet, before the
 * request (or the answer to CHAN_ALLOC) that may name them. Segments are
 * only appended, so a count says which it has; when it has them all this
 * is one atomic load. A worker found gone goes on to the wait, which
 * reports its death; any other failure kills it (it could not serve). */
static int send_segments(worker_proc *w, char *why, size_t n) {
    if (!w->arena || arena_segments(w->arena) == w->segs_sent) return 0;
    char cause[256];
    if (arena_send_segments(w->arena, w->seg_sock, &w->segs_sent, cause, sizeof cause) == 0 ||
        errno == EPIPE || errno == ECONNRESET)
        return 0;
    char desc[200];
    kill_and_reap(w, desc, sizeof desc);
    drain_output(w, DRAIN_AFTER);
    snprintf(why, n, "%s; the worker (pid %ld) was killed", cause, (long)w->pid);
    return TSR_E_WORKER;
}

static int roundtrip(worker_proc *w, uint32_t state, int timeout_ms, const worker_cancel *cx,
                     const char *timeout_what, char *why, size_t n) {
    if (!w->alive) {
        snprintf(why, n, "the worker is not running");
        return TSR_E_WORKER;
    }
    if (state != 0) {
        int rc = send_segments(w, why, n);
        if (rc) return rc;
        chan_post(&w->end, state);
    }
    return wait_state(w, CHAN_BIT(CHAN_DONE) | CHAN_BIT(CHAN_ALLOC),
                      timeout_ms > 0 ? timeout_ms : -1, cx, "", timeout_what, why, n);
}

int worker_roundtrip(worker_proc *w, uint32_t state, int timeout_ms, char *why, size_t n) {
    return roundtrip(w, state, timeout_ms, NULL, "did not answer", why, n);
}

int worker_roundtrip_cancel(worker_proc *w, uint32_t state, int timeout_ms,
                            const worker_cancel *cx, char *why, size_t n) {
    return roundtrip(w, state, timeout_ms, cx, "did not answer", why, n);
}

int worker_await(worker_proc *w, uint32_t state, int timeout_ms, const char *timeout_what,
                 char *why, size_t n) {
    return roundtrip(w, state, timeout_ms, NULL, timeout_what, why, n);
}

int worker_exited(const worker_proc *w) {
    if (!w->alive) return 1;
    struct pollfd fd = {.fd = w->pidfd, .events = POLLIN};
    int r;
    while ((r = poll(&fd, 1, 0)) < 0 && errno == EINTR) {
    }
    return r == 1;
}

int worker_check(worker_proc *w, char *why, size_t n) {
    if (!w->alive) {
        snprintf(why, n, "the worker is not running");
        return TSR_E_WORKER;
    }
    if (!worker_exited(w)) return 0;
    char desc[200];
    drain_output(w, DRAIN_AFTER);
    reap(w, desc, sizeof desc);
    snprintf(why, n, "the worker (pid %ld) died between calls: %s", (long)w->pid, desc);
    return TSR_E_WORKER;
}

/* ---- stop ---------------------------------------------------------------- */

/* Wait up to ms for the worker to exit, forwarding its output; 1 if it did. */
static int await_exit(worker_proc *w, int ms) {
    uint64_t deadline = now_ms() + (uint64_t)ms;
    for (;;) {
        uint64_t t = now_ms();
        int left = t >= deadline ? 0 : (int)(deadline - t);
        struct pollfd fds[2] = {{.fd = w->pidfd, .events = POLLIN},
                                {.fd = w->out_fd, .events = POLLIN}};
        int r = poll(fds, 2, left);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return 0;
        if (fds[0].revents) return 1;
        if (fds[1].revents) {
            drain_output(w, DRAIN_WHILE_WAITING);
            continue;
        }
        if (r == 0) return 0;
    }
}

void worker_stop(worker_proc *w) {
    if (!w || !w->open) return;
    if (w->pid > 0 && !w->reaped) {
        char desc[200];
        if (w->alive && w->end.blk) chan_post(&w->end, CHAN_EXIT);
        if (w->pidfd >= 0 && !await_exit(w, WORKER_EXIT_GRACE_MS)) {
            kill_and_reap(w, desc, sizeof desc);
        } else if (w->pidfd >= 0) {
            reap(w, desc, sizeof desc);
        }
    }
    drain_output(w, DRAIN_AFTER);
    if (w->line_len) emit_line(w);
    chan_close(&w->end);
    if (w->pidfd >= 0) close(w->pidfd);
    if (w->out_fd >= 0) close(w->out_fd);
    if (w->seg_sock >= 0) close(w->seg_sock);
    w->pidfd = w->out_fd = w->chan_fd = w->seg_sock = -1;
    w->alive = 0;
    w->open = 0;
}

/* ---- start ---------------------------------------------------------------- */

static void proc_reset(worker_proc *w, const worker_spawn_opts *o) {
    memset(w, 0, sizeof *w);
    w->pid = -1;
    w->pidfd = w->out_fd = w->chan_fd = w->seg_sock = -1;
    w->end.fd = w->end.my_bell = w->end.peer_bell = -1;
    w->arena = o->arena;
    w->output = o->output;
    w->output_user = o->output_user;
}

static int check_opts(const worker_spawn_opts *o, char *why, size_t n) {
    if (!o->plugin_path || (!o->arena == !o->spool_dir) ||
        (o->spool_dir && !o->spool_tag) || (!o->use_fork && !o->worker_exe)) {
        snprintf(why, n, "worker_start: plugin path, arena or spool, and worker "
                         "executable are required");
        return TSR_E_ARGUMENT;
    }
    if (o->use_fork) {
        int threads = process_thread_count();
        if (threads != 1) {
            if (threads < 0)
                snprintf(why, n, "spawn=fork needs a single-threaded host, and the threads of "
                                 "this process cannot be counted (/proc/self/status); use "
                                 "spawn=exec");
            else
                snprintf(why, n, "spawn=fork needs a single-threaded host, but this process has "
                                 "%d threads (a forked copy would inherit locks held by the "
                                 "others); use spawn=exec",
                         threads);
            return TSR_E_ARGUMENT;
        }
    }
    struct stat st;
    const char *bad = NULL;
    if (o->cwd && stat(o->cwd, &st) != 0) bad = strerror(errno);
    else if (o->cwd && !S_ISDIR(st.st_mode)) bad = "not a directory";
    if (bad) {
        snprintf(why, n, "the worker's working directory '%s': %s", o->cwd, bad);
        return TSR_E_ARGUMENT;
    }
    return 0;
}

static int write_config(worker_proc *w, const worker_spawn_opts *o, char *why, size_t n) {
    const char *text = o->config_json ? o->config_json : "{}";
    size_t len = strlen(text);
    int rc = chan_reserve(&w->end, len + 1, why, n);
    if (rc) return rc;
    memcpy(chan_data(w->end.blk), text, len + 1);
    return 0;
}

/* Copies of the fds the child inherits, above the fixed numbers it gets
 * them at, so that placing one never overwrites another (segs_w may be -1:
 * no arena). */
static int high_copies(const worker_proc *w, int out_w, int segs_w, spawn_fds *f, char *why,
                       size_t n) {
    int src[5] = {w->chan_fd, w->end.peer_bell, w->end.my_bell, out_w, segs_w};
    int *dst[5] = {&f->chan, &f->bell, &f->host_bell, &f->out, &f->segs};
    for (int i = 0; i < 5; i++) *dst[i] = -1;
    for (int i = 0; i < 5; i++)
        if (src[i] >= 0 && (*dst[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 10)) < 0) {
            snprintf(why, n, "cannot pass fds to the worker: %s", strerror(errno));
            for (int j = 0; j < i; j++) close(*dst[j]);
            return TSR_E_WORKER;
        }
    return 0;
}

static int launch(worker_proc *w, const worker_spawn_opts *o, char *why, size_t n) {
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) {
        snprintf(why, n, "cannot create the worker's output pipe: %s", strerror(errno));
        return TSR_E_WORKER;
    }
    w->out_fd = out[0];
    if (fcntl(out[0], F_SETFL, O_NONBLOCK) != 0) {
        snprintf(why, n, "cannot make the worker's output pipe non-blocking: %s", strerror(errno));
        close(out[1]);
        return TSR_E_WORKER;
    }
    /* With shared memory, the socket on which the arena's segments go to
     * the worker. The host only sends: a worker cannot push anything
     * (fds, bytes) back into the host through it. */
    int segs[2] = {-1, -1};
    if (o->arena) {
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, segs) != 0) {
            snprintf(why, n, "cannot create the socket for the worker's shared memory: %s",
                     strerror(errno));
            close(out[1]);
            return TSR_E_WORKER;
        }
        w->seg_sock = segs[0];
        (void)shutdown(segs[0], SHUT_RD); /* only a refusal of the worker's writes is lost */
    }
    spawn_fds f;
    int rc = high_copies(w, out[1], segs[1], &f, why, n);
    close(out[1]);
    if (segs[1] >= 0) close(segs[1]);
    if (rc) return rc;
    rc = worker_spawn(o, &f, &w->pid, why, n);
    close(f.chan);
    close(f.bell);
    close(f.host_bell);
    close(f.out);
    if (f.segs >= 0) close(f.segs);
    if (rc) {
        w->pid = -1;
        return rc;
    }
    w->pidfd = sys_pidfd_open(w->pid);
    if (w->pidfd < 0) {
        int err = errno;
        /* Without a pidfd it can be neither watched nor reaped politely:
         * take this one child back by its pid. */
        kill(w->pid, SIGKILL);
        while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR) {
        }
        w->reaped = 1;
        snprintf(why, n, "pidfd_open of the worker failed: %s (Linux 5.3 or later is needed)",
                 strerror(err));
        return TSR_E_WORKER;
    }
    w->alive = 1;
    return 0;
}

/* The worker's answer at start: its schema, or why it could not load. */
static int read_ready(worker_proc *w, char **schema_json, char *why, size_t n) {
    chan_block *b = w->end.blk;
    int32_t status = b->status;
    if (status != 0) {
        char msg[TSR_ERRMSG_MAX];
        memcpy(msg, b->message, sizeof msg);
        msg[sizeof msg - 1] = '\0';
        snprintf(why, n, "%s", msg);
        /* Only a real code is passed on; anything else means a broken worker. */
        return (status < 0 && status >= CHAN_STATUS_MIN) ? status : TSR_E_WORKER;
    }
    const char *text = chan_data(b);
    size_t len = strnlen(text, chan_data_capacity(b));
    if (len == chan_data_capacity(b)) {
        snprintf(why, n, "the worker's schema is not NUL-terminated");
        return TSR_E_WORKER;
    }
    if (!(*schema_json = malloc(len + 1))) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    memcpy(*schema_json, text, len);
    (*schema_json)[len] = '\0'; /* the worker could have moved the NUL meanwhile */
    return 0;
}

int worker_start(worker_proc *w, const worker_spawn_opts *o, char **schema_json, char *why,
                 size_t n) {
    proc_reset(w, o);
    *schema_json = NULL;
    int rc = check_opts(o, why, n);
    if (rc) return rc;
    if (o->spool_dir) {
        rc = chan_create_file(&w->end, &w->chan_fd, o->spool_dir, why, n);
    } else {
        rc = chan_create(&w->end, &w->chan_fd, why, n);
    }
    if (rc) return rc;
    w->open = 1;
    w->end.spin_ns = o->spin_ns;
    w->end.spin_adaptive = o->spin_adaptive;
    rc = write_config(w, o, why, n);
    if (!rc) rc = launch(w, o, why, n);
    if (!rc) {
        int limit = o->start_timeout_ms > 0 ? o->start_timeout_ms : -1;
        int s = wait_state(w, CHAN_BIT(CHAN_READY), limit, NULL, " before it was ready",
                           "did not load the plugin", why, n);
        rc = s < 0 ? s : read_ready(w, schema_json, why, n);
    }
    if (rc) worker_stop(w);
    return rc;
}
