/* SPDX-License-Identifier: MIT */
/* The POSIX shared-memory segments of UM-Bridge's *ShMem routes, which the
 * client creates, names and removes. A client may be hostile: names are
 * checked (no '/', bounded), a segment must be a regular one of at least
 * the size the request declares (fstat), and it is read and written with
 * pread/pwrite on its descriptor, never mapped, so that a segment
 * truncated during the call gives a short read (an error) and never a
 * SIGBUS. Opened without O_CREAT (the server creates nothing) and with
 * O_NONBLOCK (a FIFO in its place does not hang a request thread). */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "umbridge.h"

static int name_ok(const char *s, size_t max, const char *extra) {
    size_t n = strlen(s);
    if (!n || n > max) return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              strchr(extra, ch)))
            return 0;
    }
    return 1;
}

int um_shm_name(char *out, size_t n, const char *prefix, const char *role, const char *tid,
                int64_t index, um_err *e) {
    if (!prefix || prefix[0] != '/' || !name_ok(prefix + 1, 64, "_.-"))
        return um_fail(e, "InvalidInput", 400,
                       "shmem_name must be '/' followed by 1 to 64 of A-Z a-z 0-9 _ . -");
    if (!tid || !name_ok(tid, 32, "_-"))
        return um_fail(e, "InvalidInput", 400, "tid must be 1 to 32 of A-Z a-z 0-9 _ -");
    int len = index >= 0 ? snprintf(out, n, "%s_%s_%s_%lld", prefix, role, tid, (long long)index)
                         : snprintf(out, n, "%s_%s_%s", prefix, role, tid);
    if (len < 0 || (size_t)len >= n)
        return um_fail(e, "InvalidInput", 400, "the segment name is too long");
    return 0;
}

/* The segment open and checked: a descriptor, or -1 with e set. */
static int open_segment(const char *name, int flags, int64_t count, um_err *e) {
    int fd = shm_open(name, flags | O_NONBLOCK, 0);
    if (fd < 0)
        return um_fail(e, "InvalidInput", 400, "cannot open shared-memory segment %s: %s", name,
                       strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return um_fail(e, "InvalidInput", 400, "%s is not a shared-memory segment", name);
    }
    if ((uint64_t)st.st_size / sizeof(double) < (uint64_t)count) {
        close(fd);
        return um_fail(e, "InvalidInput", 400,
                       "shared-memory segment %s holds %lld bytes, fewer than the %lld its "
                       "vector needs", name, (long long)st.st_size,
                       (long long)count * (long long)sizeof(double));
    }
    return fd;
}

/* Move count doubles between buf and segment `name` with pread/pwrite
 * (never a mapping: a client that truncates the segment meanwhile makes a
 * short transfer, which is an error, not a SIGBUS). */
static int transfer(const char *name, char *buf, int64_t count, int writing, um_err *e) {
    if (count <= 0) return 0;
    int fd = open_segment(name, writing ? O_RDWR : O_RDONLY, count, e);
    if (fd < 0) return -1;
    size_t want = (size_t)count * sizeof(double), done = 0;
    while (done < want) {
        ssize_t r = writing ? pwrite(fd, buf + done, want - done, (off_t)done)
                            : pread(fd, buf + done, want - done, (off_t)done);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            int err = r < 0 ? errno : 0;
            close(fd);
            return um_fail(e, "InvalidInput", 400,
                           "shared-memory segment %s: %s after %zu of %zu bytes", name,
                           err ? strerror(err)
                               : writing ? "short write" : "it was truncated while read",
                           done, want);
        }
        done += (size_t)r;
    }
    close(fd);
    return 0;
}

int um_shm_read(const char *name, double *dst, int64_t count, um_err *e) {
    return transfer(name, (char *)dst, count, 0, e);
}

int um_shm_write(const char *name, const double *src, int64_t count, um_err *e) {
    /* pwrite only reads the buffer; the cast serves the shared loop. */
    return transfer(name, (char *)(uintptr_t)src, count, 1, e);
}
