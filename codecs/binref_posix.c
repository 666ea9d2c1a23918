/* SPDX-License-Identifier: MIT */
/* Binref transfers with pread/pwrite: the path where io_uring is
 * unavailable or not wanted. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "binref_io.h"

/* Linux moves at most this much per call; asking for less keeps the
 * count within ssize_t everywhere. */
#define MAX_CALL ((size_t)1 << 30)

static int one(const binref_op *op, bool write, char *why, size_t why_size) {
    size_t done = 0;
    while (done < op->len) {
        size_t want = op->len - done < MAX_CALL ? op->len - done : MAX_CALL;
        off_t at = (off_t)(op->off + done);
        ssize_t n = write ? pwrite(op->fd, op->src + done, want, at)
                          : pread(op->fd, op->dst + done, want, at);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        char what[160];
        binref_what_prefix(what, sizeof what, op->what);
        if (n < 0) {
            snprintf(why, why_size, "%scannot %s '%s' at offset %llu: %s", what,
                     write ? "write" : "read", op->file, (unsigned long long)at, strerror(errno));
            return TSR_E_IO;
        }
        if (n == 0) {
            if (write)
                snprintf(why, why_size, "%scannot write '%s' at offset %llu: nothing was written",
                         what, op->file, (unsigned long long)at);
            else
                snprintf(why, why_size,
                         "%s'%s' is truncated: it ended at byte %llu, before the %zu bytes at "
                         "offset %llu",
                         what, op->file, (unsigned long long)at, op->len,
                         (unsigned long long)op->off);
            return TSR_E_IO;
        }
        done += (size_t)n;
    }
    return 0;
}

int binref_posix_run(const binref_op *ops, int n_ops, bool write, char *why, size_t why_size) {
    for (int i = 0; i < n_ops; i++) {
        int rc = one(&ops[i], write, why, why_size);
        if (rc != 0) return rc;
    }
    return 0;
}
