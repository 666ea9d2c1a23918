/* SPDX-License-Identifier: MIT */
/* The library's lines on the host's stderr: log messages by default, and
 * what a worker's plugin prints. A thread of the host writes them while it
 * runs a call, so writing must never block: a line goes out only as far as
 * fd 2 takes it now (poll says writable, then at most what a writable fd
 * takes without blocking); the rest waits in a bounded buffer that later
 * lines and stderr_flush try again. When the buffer is full, lines are
 * dropped until it has drained, and a note in the stream then says how
 * many. The host's file description is never changed (no O_NONBLOCK on a
 * stderr shared with the host and its other children). */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* Bytes that wait for a host that does not read its stderr. */
#define SINK_CAPACITY ((size_t)1 << 20)
/* What one write may hand a writable tty or other device: a pipe or socket
 * that poll calls writable takes PIPE_BUF bytes, a terminal only promises
 * some room. */
#define SINK_DEVICE_CHUNK 512

static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static char *sink_buf;              /* SINK_CAPACITY bytes, made at the first line */
static size_t sink_head, sink_len;  /* waiting: sink_buf[sink_head, sink_head + sink_len) */
static uint64_t sink_dropped;       /* lines dropped since the last note */
static uint64_t sink_stuck_ms;      /* when fd 2 last took nothing (0: it did) */
static atomic_int sink_waiting;     /* sink_len or sink_dropped: something to flush */

static uint64_t coarse_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u + 1; /* never 0 */
}

/* Write what fd 2 takes now of [p, p + n): the bytes written, or -1 when
 * it cannot be written at all (closed, no reader, an error), so that what
 * waits is given up rather than retried forever. */
static ssize_t write_now(const char *p, size_t n) {
    struct stat st;
    if (fstat(STDERR_FILENO, &st) != 0) return -1;
    /* Files and block devices do not make a writer wait for a reader. */
    int direct = S_ISREG(st.st_mode) || S_ISBLK(st.st_mode);
    size_t most = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ? PIPE_BUF : SINK_DEVICE_CHUNK;
    size_t done = 0;
    while (done < n) {
        size_t chunk = n - done;
        if (!direct) {
            struct pollfd fd = {.fd = STDERR_FILENO, .events = POLLOUT};
            int r = poll(&fd, 1, 0);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0 || (fd.revents & (POLLERR | POLLNVAL))) return -1;
            if (r == 0 || !(fd.revents & POLLOUT)) break;
            if (chunk > most) chunk = most;
        }
        ssize_t w = write(STDERR_FILENO, p + done, chunk);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (w <= 0) return -1;
        done += (size_t)w;
    }
    return (ssize_t)done;
}

static void set_waiting(void) {
    atomic_store_explicit(&sink_waiting, sink_len > 0 || sink_dropped > 0, memory_order_relaxed);
}

/* Append text to what waits; 0, or -1 when it does not fit. */
static int append(const char *text, size_t n) {
    if (!sink_buf && !(sink_buf = malloc(SINK_CAPACITY))) return -1;
    if (sink_len + n > SINK_CAPACITY) return -1;
    if (sink_head + sink_len + n > SINK_CAPACITY) {
        memmove(sink_buf, sink_buf + sink_head, sink_len);
        sink_head = 0;
    }
    memcpy(sink_buf + sink_head + sink_len, text, n);
    sink_len += n;
    return 0;
}

/* Write what waits as far as fd 2 takes it now; once all of it is out,
 * the note on dropped lines follows. With the lock held. */
static void flush_locked(void) {
    for (;;) {
        if (sink_len > 0) {
            ssize_t w = write_now(sink_buf + sink_head, sink_len);
            if (w < 0) { /* nobody will read it: give it up */
                sink_head = sink_len = 0;
                sink_dropped = 0;
                break;
            }
            sink_head += (size_t)w;
            sink_len -= (size_t)w;
            if (sink_len == 0) sink_head = 0;
            sink_stuck_ms = sink_len > 0 && w == 0 ? coarse_ms() : 0;
            if (sink_len > 0) break;
        }
        if (sink_dropped == 0) break;
        char note[160];
        int len = snprintf(note, sizeof note,
                           "tessera: %llu lines of output were dropped here: stderr did not "
                           "take them (is it read?)\n",
                           (unsigned long long)sink_dropped);
        sink_dropped = 0;
        if (append(note, (size_t)len) != 0) break;
    }
    set_waiting();
}

int stderr_line(const char *prefix, const char *line) {
    size_t lp = prefix ? strlen(prefix) : 0, ll = strlen(line);
    pthread_mutex_lock(&sink_lock);
    /* While fd 2 takes nothing, try again at most once a millisecond or so:
     * a flood of lines costs no system call each. */
    if ((sink_len > 0 || sink_dropped > 0) &&
        (sink_stuck_ms == 0 || coarse_ms() != sink_stuck_ms))
        flush_locked();
    int dropped = 1;
    if (sink_dropped == 0) { /* after a drop, nothing until the gap is noted */
        size_t need = lp + (prefix ? 2 : 0) + ll + 1;
        if (!sink_buf && !(sink_buf = malloc(SINK_CAPACITY))) {
            /* no buffer: what cannot be written at once is lost */
            char text[TSR_ERRMSG_MAX + 256];
            int len = prefix ? snprintf(text, sizeof text, "%s: %s\n", prefix, line)
                             : snprintf(text, sizeof text, "%s\n", line);
            size_t n = len < 0 ? 0 : (size_t)len < sizeof text ? (size_t)len : sizeof text - 1;
            ssize_t w = write_now(text, n);
            dropped = w >= 0 && (size_t)w < n;
        } else if (sink_len + need <= SINK_CAPACITY) {
            if (prefix) {
                append(prefix, lp);
                append(": ", 2);
            }
            append(line, ll);
            append("\n", 1);
            dropped = 0;
            if (sink_stuck_ms == 0) flush_locked();
        }
    }
    if (dropped) sink_dropped++;
    set_waiting();
    pthread_mutex_unlock(&sink_lock);
    return dropped;
}

void stderr_flush(int wait_ms) {
    if (!atomic_load_explicit(&sink_waiting, memory_order_relaxed)) return;
    int polled = 0;
    for (;;) {
        pthread_mutex_lock(&sink_lock);
        size_t len = sink_len;
        uint64_t dropped = sink_dropped;
        flush_locked();
        int more = sink_len > 0 || sink_dropped > 0;
        int progress = sink_len != len || sink_dropped != dropped;
        pthread_mutex_unlock(&sink_lock);
        if (!more || wait_ms <= 0) return;
        if (progress) {
            polled = 0;
            continue;
        }
        /* Writable, and still nothing went out: give up. */
        if (polled) return;
        /* Wait, without the lock, for fd 2 to take more. */
        struct pollfd fd = {.fd = STDERR_FILENO, .events = POLLOUT};
        int r;
        while ((r = poll(&fd, 1, wait_ms)) < 0 && errno == EINTR) {
        }
        if (r <= 0 || !(fd.revents & POLLOUT)) return;
        polled = 1;
    }
}
