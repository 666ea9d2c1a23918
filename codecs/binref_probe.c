/* SPDX-License-Identifier: MIT */
/* Whether io_uring works in this process: probed once (kernel switch,
 * ring setup, the opcodes binref files need, one round trip), then cached. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <liburing.h>

#include "binref_io.h"

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static binref_io probed = BINREF_IO_POSIX;
static char probe_why[200];

/* /proc/sys/kernel/io_uring_disabled: 0 allowed, 1 only for a group (or
 * privileged), 2 off; -1 when the kernel has no such switch. */
static int disabled_switch(void) {
    FILE *f = fopen("/proc/sys/kernel/io_uring_disabled", "re");
    if (f == NULL) return -1;
    int v = -1;
    if (fscanf(f, "%d", &v) != 1) v = -1;
    fclose(f);
    return v;
}

static void setup_failed(int err, int sw) {
    switch (err) {
    case ENOSYS:
        snprintf(probe_why, sizeof probe_why, "the kernel has no io_uring (io_uring_setup: ENOSYS)");
        break;
    case EPERM:
        snprintf(probe_why, sizeof probe_why,
                 "io_uring_setup refused (EPERM): %s",
                 sw == 1 ? "/proc/sys/kernel/io_uring_disabled is 1 and this process is not allowed"
                         : "a seccomp filter or a security policy forbids it");
        break;
    case ENOMEM:
        snprintf(probe_why, sizeof probe_why,
                 "io_uring_setup: out of memory (ENOMEM; RLIMIT_MEMLOCK too low?)");
        break;
    default:
        snprintf(probe_why, sizeof probe_why, "io_uring_setup failed: %s", strerror(err));
        break;
    }
}

/* One NOP through the ring: setup can succeed where io_uring_enter is
 * filtered. */
static int round_trip(struct io_uring *ring) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    if (sqe == NULL) return -EBUSY;
    io_uring_prep_nop(sqe);
    int rc;
    do rc = io_uring_submit_and_wait(ring, 1);
    while (rc == -EINTR);
    if (rc < 0) return rc;
    struct io_uring_cqe *cqe;
    do rc = io_uring_wait_cqe(ring, &cqe);
    while (rc == -EINTR);
    if (rc < 0) return rc;
    rc = cqe->res;
    io_uring_cqe_seen(ring, cqe);
    return rc;
}

static void probe(void) {
    int sw = disabled_switch();
    if (sw == 2) {
        snprintf(probe_why, sizeof probe_why, "io_uring is disabled (/proc/sys/kernel/io_uring_disabled is 2)");
        return;
    }
    struct io_uring ring;
    int rc = io_uring_queue_init(4, &ring, 0);
    if (rc < 0) {
        setup_failed(-rc, sw);
        return;
    }
    struct io_uring_probe *p = io_uring_get_probe_ring(&ring);
    if (p == NULL) {
        snprintf(probe_why, sizeof probe_why, "the kernel's io_uring is too old (no opcode probe)");
    } else if (!io_uring_opcode_supported(p, IORING_OP_READ) ||
               !io_uring_opcode_supported(p, IORING_OP_WRITE)) {
        snprintf(probe_why, sizeof probe_why,
                 "the kernel's io_uring lacks IORING_OP_READ/WRITE (Linux 5.6 or later needed)");
    } else if ((rc = round_trip(&ring)) < 0) {
        snprintf(probe_why, sizeof probe_why, "io_uring_enter failed: %s", strerror(-rc));
    } else {
        probed = BINREF_IO_URING;
        probe_why[0] = '\0';
    }
    if (p != NULL) io_uring_free_probe(p);
    io_uring_queue_exit(&ring);
}

binref_io binref_io_probe(const char **why_not_uring) {
    (void)pthread_once(&probe_once, probe);
    if (why_not_uring != NULL) *why_not_uring = probed == BINREF_IO_URING ? NULL : probe_why;
    return probed;
}

const char *binref_io_name(binref_io io) {
    switch (io) {
    case BINREF_IO_AUTO: return "auto";
    case BINREF_IO_URING: return "io_uring";
    case BINREF_IO_POSIX: return "pread/pwrite";
    }
    return "unknown";
}

int binref_io_resolve(binref_io asked, binref_io *used, char *why, size_t why_size) {
    const char *not_uring = NULL;
    switch (asked) {
    case BINREF_IO_POSIX:
        *used = BINREF_IO_POSIX;
        return 0;
    case BINREF_IO_AUTO:
        *used = binref_io_probe(NULL);
        return 0;
    case BINREF_IO_URING:
        if (binref_io_probe(&not_uring) == BINREF_IO_URING) {
            *used = BINREF_IO_URING;
            return 0;
        }
        snprintf(why, why_size, "io_uring was asked for but does not work here: %s", not_uring);
        return TSR_E_IO;
    }
    snprintf(why, why_size, "unknown file I/O choice %d", (int)asked);
    return TSR_E_ARGUMENT;
}

int binref_io_run(binref_io asked, binref_io used, const binref_op *ops, int n_ops, bool write,
                  char *why, size_t why_size) {
    if (used == BINREF_IO_URING && asked == BINREF_IO_AUTO) {
        size_t total = 0;
        for (int i = 0; i < n_ops && total < BINREF_AUTO_URING_MIN; i++) total += ops[i].len;
        if (total < BINREF_AUTO_URING_MIN) used = BINREF_IO_POSIX;
    }
    if (used == BINREF_IO_URING) {
        int rc = binref_uring_run(ops, n_ops, write, why, why_size);
        if (rc != BINREF_NO_RING) return rc;
        /* No ring for this thread: AUTO carries on without; forced
         * io_uring reports why. */
        if (asked != BINREF_IO_AUTO) return TSR_E_IO;
    }
    return binref_posix_run(ops, n_ops, write, why, why_size);
}
