/* SPDX-License-Identifier: MIT */
/* The host<->worker channel: the control segment, its request layout and
 * the eventfd doorbells. Waiting is in chan_wait.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena_internal.h"
#include "channel.h"

/* The header and small requests live in the first pages; they are
 * allocated and faulted in at once so that no call ever waits on them. */
#define CHAN_EAGER_BYTES ((size_t)64 << 10)

static size_t data_offset(void) { return (sizeof(chan_block) + 63) & ~(size_t)63; }

static uint64_t align8(uint64_t x) { return (x + 7) & ~(uint64_t)7; }

/* Offsets of the parts of a request, or -1 when a count is negative or
 * the whole does not fit the data area. */
static int request_offsets(int32_t n_inputs, int32_t n_wrt_in, int32_t n_wrt_out, int32_t n_seeds,
                           int32_t n_results, uint64_t off[5], uint64_t *total) {
    if (n_inputs < 0 || n_wrt_in < 0 || n_wrt_out < 0 || n_seeds < 0 || n_results < 0) return -1;
    /* Counts are below 2^31, so no sum below can overflow 64 bits. */
    uint64_t at = 0;
    off[0] = at;
    at += align8((uint64_t)n_wrt_in * sizeof(int32_t));
    off[1] = at;
    at += align8((uint64_t)n_wrt_out * sizeof(int32_t));
    off[2] = at;
    at += (uint64_t)n_inputs * sizeof(wire_array);
    off[3] = at;
    at += (uint64_t)n_seeds * sizeof(wire_array);
    off[4] = at;
    at += (uint64_t)n_results * sizeof(wire_array);
    if (at > CHAN_SEGMENT_BYTES - data_offset()) return -1;
    *total = at;
    return 0;
}

size_t chan_request_bytes(int32_t n_inputs, int32_t n_wrt_in, int32_t n_wrt_out, int32_t n_seeds,
                          int32_t n_results) {
    uint64_t off[5], total;
    if (request_offsets(n_inputs, n_wrt_in, n_wrt_out, n_seeds, n_results, off, &total) != 0)
        return 0;
    return (size_t)total;
}

int chan_request_layout(chan_block *b, chan_request_view *v) {
    /* Each count is read once: what is checked is what is used. */
    int32_t n_in = b->n_inputs, n_wi = b->n_wrt_in, n_wo = b->n_wrt_out;
    int32_t n_s = b->n_seeds, n_r = b->n_results;
    return chan_request_layout_of(b, n_in, n_wi, n_wo, n_s, n_r, v);
}

int chan_request_layout_of(chan_block *b, int32_t n_in, int32_t n_wi, int32_t n_wo, int32_t n_s,
                           int32_t n_r, chan_request_view *v) {
    uint64_t off[5], total;
    if (request_offsets(n_in, n_wi, n_wo, n_s, n_r, off, &total) != 0) return -1;
    char *d = chan_data(b);
    v->wrt_in = (int32_t *)(d + off[0]);
    v->wrt_out = (int32_t *)(d + off[1]);
    v->inputs = (wire_array *)(d + off[2]);
    v->seeds = (wire_array *)(d + off[3]);
    v->results = (wire_array *)(d + off[4]);
    return 0;
}

/* Fault the first pages in without changing them; older kernels lack
 * MADV_POPULATE_WRITE, and reading each page does the same there. */
static void prefault(void *p, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
    if (madvise(p, bytes, MADV_POPULATE_WRITE) == 0) return;
#endif
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) page = 4096;
    for (size_t at = 0; at < bytes; at += (size_t)page) (void)*(volatile char *)((char *)p + at);
}

static void set_end(chan_end *e, chan_block *b, int fd, int my_bell, int peer_bell, int host) {
    e->blk = b;
    e->fd = fd;
    e->reserved = CHAN_EAGER_BYTES;
    e->my_bell = my_bell;
    e->peer_bell = peer_bell;
    e->my_sleeping = host ? &b->host_sleeping : &b->worker_sleeping;
    e->peer_sleeping = host ? &b->worker_sleeping : &b->host_sleeping;
    e->my_cpu = host ? &b->host_cpu : &b->worker_cpu;
    e->peer_cpu = host ? &b->worker_cpu : &b->host_cpu;
    e->my_rang_ns = host ? &b->host_rang_ns : &b->worker_rang_ns;
    e->peer_rang_ns = host ? &b->worker_rang_ns : &b->host_rang_ns;
    e->spin_ns = 0;
}

/* Size, reserve the first pages of, map and initialise the control block
 * open as fd (a memfd, or for the files transport a file without a name,
 * file = 1). On failure fd is closed. */
static int chan_setup(chan_end *host, int *chan_fd, int fd, const char *label, int file,
                      char *why, size_t n) {
    int code = file ? TSR_E_IO : TSR_E_SHM;
    const char *step = NULL;
    int err = 0;
    /* Sparse at full size; only the first pages are reserved, so that
     * running out is an error here rather than a SIGBUS later. A memfd is
     * then sealed at that size: the worker, which holds it too, cannot
     * shrink it under the host. */
    if (ftruncate(fd, CHAN_SEGMENT_BYTES) != 0) {
        step = "size";
        err = errno;
    } else if ((err = posix_fallocate(fd, 0, CHAN_EAGER_BYTES)) != 0) {
        step = "reserve the first pages of";
    } else if (!file && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        step = "seal";
        err = errno;
    }
    void *p = MAP_FAILED;
    if (!step) {
        p = mmap(NULL, CHAN_SEGMENT_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            step = "map";
            err = errno;
        }
    }
    int bells[2] = {-1, -1};
    if (!step) {
        bells[0] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        bells[1] = bells[0] < 0 ? -1 : eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (bells[1] < 0) {
            err = errno;
            snprintf(why, n, "cannot create the channel's eventfds: %s", strerror(err));
            if (bells[0] >= 0) close(bells[0]);
            munmap(p, CHAN_SEGMENT_BYTES);
            close(fd);
            return TSR_E_WORKER;
        }
    }
    if (step) {
        snprintf(why, n, "cannot %s the channel %s (%u bytes): %s%s", step, label,
                 CHAN_SEGMENT_BYTES, strerror(err),
                 err == ENOSPC ? (file ? " (is the disk full?)" : " (out of memory?)") : "");
        if (p != MAP_FAILED) munmap(p, CHAN_SEGMENT_BYTES);
        close(fd);
        return code;
    }
    prefault(p, CHAN_EAGER_BYTES);
    chan_block *b = p;
    b->magic = CHAN_MAGIC;
    b->version = CHAN_VERSION;
    b->size = CHAN_SEGMENT_BYTES;
    atomic_store(&b->state, CHAN_IDLE);
    atomic_store(&b->host_cpu, -1);
    atomic_store(&b->worker_cpu, -1);
    set_end(host, b, fd, bells[0], bells[1], 1);
    host->in_file = file;
    *chan_fd = fd;
    return 0;
}

static void reset_end(chan_end *host, int *chan_fd) {
    memset(host, 0, sizeof *host);
    host->fd = host->my_bell = host->peer_bell = -1;
    *chan_fd = -1;
}

int chan_create(chan_end *host, int *chan_fd, char *why, size_t n) {
    reset_end(host, chan_fd);
    int fd = shm_memfd(SHM_CHAN_LABEL);
    if (fd < 0) {
        snprintf(why, n, "cannot create the channel's shared memory (memfd_create): %s",
                 strerror(errno));
        return TSR_E_SHM;
    }
    return chan_setup(host, chan_fd, fd, "segment", 0, why, n);
}

/* A file in dir that has no name: O_TMPFILE, or where the filesystem
 * lacks it a fresh file unlinked at once. Nothing to remove, ever. */
static int unnamed_file(const char *dir) {
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/chan-XXXXXX", dir) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0) unlink(path);
    return fd;
}

int chan_create_file(chan_end *host, int *chan_fd, const char *dir, char *why, size_t n) {
    reset_end(host, chan_fd);
    int fd = unnamed_file(dir);
    if (fd < 0) {
        snprintf(why, n, "cannot create the channel's file in %s: %s", dir, strerror(errno));
        return TSR_E_IO;
    }
    char label[4200];
    snprintf(label, sizeof label, "file in %s", dir);
    return chan_setup(host, chan_fd, fd, label, 1, why, n);
}

int chan_attach(chan_end *worker, int chan_fd, int my_bell, int peer_bell, char *why, size_t n) {
    memset(worker, 0, sizeof *worker);
    worker->fd = worker->my_bell = worker->peer_bell = -1;
    struct stat st;
    if (fstat(chan_fd, &st) != 0) {
        snprintf(why, n, "channel fd %d: %s", chan_fd, strerror(errno));
        return TSR_E_WORKER;
    }
    if ((uint64_t)st.st_size != CHAN_SEGMENT_BYTES) {
        snprintf(why, n, "channel fd %d is not a channel (%lld bytes, %u expected)", chan_fd,
                 (long long)st.st_size, CHAN_SEGMENT_BYTES);
        return TSR_E_WORKER;
    }
    void *p = mmap(NULL, CHAN_SEGMENT_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, chan_fd, 0);
    if (p == MAP_FAILED) {
        snprintf(why, n, "cannot map the channel (fd %d): %s", chan_fd, strerror(errno));
        return TSR_E_WORKER;
    }
    /* Not for what the worker's plugin forks: a child left behind must not
     * write into the channel. */
    if (madvise(p, CHAN_SEGMENT_BYTES, MADV_DONTFORK) != 0) {
        snprintf(why, n, "cannot keep the channel (fd %d) from forked children: %s", chan_fd,
                 strerror(errno));
        munmap(p, CHAN_SEGMENT_BYTES);
        return TSR_E_WORKER;
    }
    chan_block *b = p;
    if (b->magic != CHAN_MAGIC || b->version != CHAN_VERSION || b->size != CHAN_SEGMENT_BYTES) {
        snprintf(why, n, "channel fd %d has magic %#x version %u: not a version %u channel",
                 chan_fd, b->magic, b->version, CHAN_VERSION);
        munmap(p, CHAN_SEGMENT_BYTES);
        return TSR_E_WORKER;
    }
    prefault(p, CHAN_EAGER_BYTES);
    set_end(worker, b, chan_fd, my_bell, peer_bell, 0);
    return 0;
}

int chan_reserve(chan_end *e, size_t data_bytes, char *why, size_t n) {
    size_t cap = CHAN_SEGMENT_BYTES - data_offset();
    if (data_bytes > cap) {
        snprintf(why, n, "%zu bytes do not fit the channel's data area (%zu bytes)", data_bytes,
                 cap);
        return TSR_E_ARGUMENT;
    }
    size_t want = data_offset() + data_bytes;
    if (want <= e->reserved) return 0;
    int err = posix_fallocate(e->fd, 0, (off_t)want);
    if (err) {
        snprintf(why, n, "cannot reserve %zu bytes of the channel %s: %s%s", want,
                 e->in_file ? "file" : "segment", strerror(err),
                 err != ENOSPC && err != ENOMEM ? ""
                 : e->in_file                   ? " (is the disk full?)"
                                                : " (out of memory?)");
        return e->in_file ? TSR_E_IO : TSR_E_SHM;
    }
    e->reserved = want;
    return 0;
}

void chan_close(chan_end *e) {
    if (!e) return;
    if (e->blk) munmap(e->blk, CHAN_SEGMENT_BYTES);
    if (e->fd >= 0) close(e->fd);
    if (e->my_bell >= 0) close(e->my_bell);
    if (e->peer_bell >= 0) close(e->peer_bell);
    e->blk = NULL;
    e->fd = e->my_bell = e->peer_bell = -1;
    e->my_sleeping = e->peer_sleeping = NULL;
}
