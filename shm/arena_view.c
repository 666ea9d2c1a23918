/* SPDX-License-Identifier: MIT */
/* The worker's side of the arena: segments arrive as fds on a Unix socket
 * and are mapped on first use, every binref checked against the real
 * segment size. */
#include "arena_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tessera/tessera.h"

struct arena_view {
    int sock;         /* where the host sends segments */
    uint32_t known;   /* segments received so far (their indices are below it) */
    struct {
        char *base;   /* NULL until first mapped */
        size_t size;
        int fd;       /* received and not mapped yet, or -1 */
    } seg[ARENA_MAX_SEGMENTS];
};

int arena_view_open(arena_view **out, int sock, char *why, size_t n) {
    if (out == NULL || sock < 0) {
        if (sock >= 0) close(sock);
        return arena_fail(why, n, TSR_E_ARGUMENT, "arena_view_open: out is NULL or no socket");
    }
    *out = NULL;
    arena_view *v = calloc(1, sizeof *v);
    if (v == NULL) {
        close(sock);
        return arena_fail(why, n, TSR_E_NOMEM, "out of memory for an arena view");
    }
    /* Inherited at a fixed number: not for the plugin's own children. */
    int flags = fcntl(sock, F_GETFD);
    if (flags >= 0) (void)fcntl(sock, F_SETFD, flags | FD_CLOEXEC);
    v->sock = sock;
    for (int k = 0; k < ARENA_MAX_SEGMENTS; k++) v->seg[k].fd = -1;
    *out = v;
    return 0;
}

void arena_view_close(arena_view *v) {
    if (v == NULL) return;
    for (int k = 0; k < ARENA_MAX_SEGMENTS; k++) {   /* nothing to do on failure */
        if (v->seg[k].base != NULL) munmap(v->seg[k].base, v->seg[k].size);
        if (v->seg[k].fd >= 0) close(v->seg[k].fd);
    }
    close(v->sock);
    free(v);
}

/* The fds an SCM_RIGHTS message carried: the first in *fd, any others
 * closed (a host sends one). */
static void take_fds(struct msghdr *msg, int *fd) {
    *fd = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c != NULL; c = CMSG_NXTHDR(msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int one;
            memcpy(&one, CMSG_DATA(c) + i * sizeof(int), sizeof one);
            if (*fd < 0) *fd = one;
            else close(one);
        }
    }
}

/* Take every segment message waiting on the socket, without waiting: the
 * host sends a segment before it posts the request that may name it. 0, or
 * -1 with a cause in why. */
static int receive_pending(arena_view *v, char *why, size_t n) {
    for (;;) {
        shm_seg_msg m;
        struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
        union {
            char buf[CMSG_SPACE(4 * sizeof(int))];
            struct cmsghdr align;
        } ctl;
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                             .msg_controllen = sizeof ctl.buf};
        ssize_t r = recvmsg(v->sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        if (r < 0) {
            arena_fail(why, n, TSR_E_SHM, "cannot receive arena segments from the host: %s",
                       strerror(errno));
            return -1;
        }
        if (r == 0) return 0;   /* the host has closed its end: nothing more comes */
        int fd;
        take_fds(&msg, &fd);
        if (msg.msg_flags & MSG_CTRUNC) {
            if (fd >= 0) close(fd);
            arena_fail(why, n, TSR_E_SHM,
                       "an arena segment from the host did not arrive: this worker has too "
                       "many open files (see rlimit_nofile)");
            return -1;
        }
        if (r != (ssize_t)sizeof m || m.magic != SHM_SEG_MAGIC || m.index >= ARENA_MAX_SEGMENTS ||
            fd < 0) {
            if (fd >= 0) close(fd);
            arena_fail(why, n, TSR_E_SHM, "a malformed arena segment message from the host");
            return -1;
        }
        if (v->seg[m.index].base != NULL || v->seg[m.index].fd >= 0) {
            close(fd);   /* sent twice: the first one stands */
            continue;
        }
        v->seg[m.index].fd = fd;
        if (m.index >= v->known) v->known = m.index + 1;
    }
}

void *arena_view_resolve(arena_view *v, const binref *ref, char *why, size_t n) {
    if (v == NULL || ref == NULL) {
        arena_fail(why, n, TSR_E_ARGUMENT, "arena_view_resolve: no view or no binref");
        return NULL;
    }
    if (ref->seg >= ARENA_MAX_SEGMENTS || ref->reserved != 0) {
        arena_fail(why, n, TSR_E_PAYLOAD, "invalid binref: segment %u (at most %d), reserved %u",
                   ref->seg, ARENA_MAX_SEGMENTS - 1, ref->reserved);
        return NULL;
    }
    uint32_t k = ref->seg;
    if (v->seg[k].base == NULL) {
        if (v->seg[k].fd < 0 && receive_pending(v, why, n) != 0) return NULL;
        if (v->seg[k].fd < 0) {
            arena_fail(why, n, TSR_E_PAYLOAD,
                       "no such segment %u: the host has handed over %u segments", k, v->known);
            return NULL;
        }
        void *base;
        size_t size;
        if (shm_segment_map(k, v->seg[k].fd, &base, &size, why, n) != 0) return NULL;
        close(v->seg[k].fd);   /* the mapping keeps the segment */
        v->seg[k].fd = -1;
        v->seg[k].base = base;
        v->seg[k].size = size;
    }
    size_t size = v->seg[k].size;
    if (ref->offset >= size || ref->bytes > size - ref->offset) {
        arena_fail(why, n, TSR_E_PAYLOAD,
                   "binref out of bounds: offset %llu + %llu bytes exceeds segment %u of %zu bytes",
                   (unsigned long long)ref->offset, (unsigned long long)ref->bytes, k, size);
        return NULL;
    }
    return v->seg[k].base + ref->offset;
}
