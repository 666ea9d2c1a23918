/* SPDX-License-Identifier: MIT */
/* The host<->worker channel: request layout, ping-pong across processes on
 * the spin and the sleep path, no lost wake-ups, timeouts, and a dead
 * peer's pidfd waking the waiter. Internal functions: linked against the
 * objects. */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shm/arena.h"
#include "shm/channel.h"

#include "dir_entries.h"

static char why[512];

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void no_leftovers(void) {
    cr_expect_eq(memfds_held(getpid()), 0, "channel segments of this process are still held");
    cr_expect_eq(shm_entries_of(getpid()), 0, "entries of this process in /dev/shm");
}

TestSuite(channel, .fini = no_leftovers);

static void create(chan_end *host, int *fd) {
    int rc = chan_create(host, fd, why, sizeof why);
    cr_assert_eq(rc, 0, "chan_create: %s", why);
}

/* ---- request layout ------------------------------------------------------ */

Test(channel, request_bytes_align_each_part_to_8_bytes) {
    size_t w = sizeof(wire_array);
    cr_expect_eq(chan_request_bytes(1, 0, 0, 0, 1), 2 * w);
    /* 3 int32 wrt_in take 16 bytes, 1 int32 wrt_out takes 8 */
    cr_expect_eq(chan_request_bytes(2, 3, 1, 3, 3), 16 + 8 + 8 * w);
    cr_expect_eq(chan_request_bytes(0, 0, 0, 0, 0), 0);
}

Test(channel, request_bytes_refuse_negative_and_oversized_counts) {
    cr_expect_eq(chan_request_bytes(-1, 0, 0, 0, 1), 0);
    cr_expect_eq(chan_request_bytes(1, 0, -5, 0, 1), 0);
    cr_expect_eq(chan_request_bytes(INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX), 0);
    /* just above what the data area holds */
    int32_t too_many = (int32_t)(CHAN_SEGMENT_BYTES / sizeof(wire_array));
    cr_expect_eq(chan_request_bytes(0, 0, 0, 0, too_many), 0);
    cr_expect_gt(chan_request_bytes(0, 0, 0, 0, too_many - 200), 0);
}

Test(channel, layout_places_parts_in_order_inside_the_data_area) {
    chan_end h;
    int fd;
    create(&h, &fd);
    chan_block *b = h.blk;
    b->n_inputs = 2;
    b->n_wrt_in = 1;
    b->n_wrt_out = 2;
    b->n_seeds = 1;
    b->n_results = 2;
    chan_request_view v;
    cr_assert_eq(chan_request_layout(b, &v), 0);
    char *d = chan_data(b);
    cr_expect_eq((char *)v.wrt_in, d);
    cr_expect_eq((char *)v.wrt_out, d + 8);
    cr_expect_eq((char *)v.inputs, d + 16);
    cr_expect_eq(v.seeds, v.inputs + 2);
    cr_expect_eq(v.results, v.seeds + 1);
    cr_expect_eq((uintptr_t)chan_data(b) % 64, 0);
    b->n_results = -1;
    cr_expect_eq(chan_request_layout(b, &v), -1);
    b->n_results = INT32_MAX;
    cr_expect_eq(chan_request_layout(b, &v), -1);
    chan_close(&h);
}

Test(channel, data_capacity_ignores_a_corrupted_size_field) {
    chan_end h;
    int fd;
    create(&h, &fd);
    size_t cap = chan_data_capacity(h.blk);
    h.blk->size = UINT64_MAX;
    cr_expect_eq(chan_data_capacity(h.blk), cap);
    cr_expect_lt(cap, CHAN_SEGMENT_BYTES);
    chan_close(&h);
}

Test(channel, reserve_allocates_beyond_the_first_pages_and_refuses_too_much) {
    chan_end h;
    int fd;
    create(&h, &fd);
    cr_expect_eq(chan_reserve(&h, 1000, why, sizeof why), 0);
    cr_expect_eq(chan_reserve(&h, 4u << 20, why, sizeof why), 0, "%s", why);
    memset(chan_data(h.blk), 1, 4u << 20); /* allocated: no SIGBUS */
    cr_expect_eq(chan_reserve(&h, CHAN_SEGMENT_BYTES, why, sizeof why), TSR_E_ARGUMENT);
    chan_close(&h);
}

Test(channel, the_segment_has_no_name_is_private_and_cannot_be_resized) {
    mode_t old = umask(0);
    chan_end h;
    int fd;
    create(&h, &fd);
    umask(old);
    cr_expect_eq(shm_entries_of(getpid()), 0, "the channel has a name in /dev/shm");
    cr_expect_eq(memfd_fds_of(getpid(), "chan"), 1);
    struct stat st;
    cr_assert_eq(fstat(fd, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
    cr_expect_eq(st.st_nlink, 0);
    cr_expect_eq((uint64_t)st.st_size, CHAN_SEGMENT_BYTES);
    /* what a worker, which holds it too, could try against the host */
    cr_expect_eq(ftruncate(fd, 4096), -1);
    cr_expect_eq(errno, EPERM);
    cr_expect_eq(ftruncate(fd, 2 * CHAN_SEGMENT_BYTES), -1);
    cr_expect_eq(chan_reserve(&h, 8u << 20, why, sizeof why), 0, "%s", why);
    chan_close(&h);
}

Test(channel, attach_refuses_what_is_not_a_channel) {
    int p[2];
    cr_assert_eq(pipe(p), 0);
    chan_end w;
    cr_expect_neq(chan_attach(&w, p[0], -1, -1, why, sizeof why), 0);
    close(p[0]);
    close(p[1]);
    /* a segment of the right size with no magic */
    chan_end h;
    int fd;
    create(&h, &fd);
    h.blk->magic = 0;
    cr_expect_eq(chan_attach(&w, fd, -1, -1, why, sizeof why), TSR_E_WORKER);
    cr_expect(strstr(why, "not a version") != NULL, "%s", why);
    chan_close(&h);
}

Test(channel, close_releases_the_segment) {
    chan_end h;
    int fd;
    create(&h, &fd);
    cr_expect_eq(memfd_fds_of(getpid(), "chan"), 1);
    cr_expect_eq(memfd_maps_of(getpid(), "chan"), 1);
    chan_close(&h);
    cr_expect_eq(memfds_held(getpid()), 0);
    chan_close(&h); /* twice: harmless */
}

/* ---- ping-pong across processes ------------------------------------------- */

/* Busy for a pseudo-random 0 to max_ns, so that posts land before, during
 * and after the peer's spin. */
static void jitter(unsigned i, uint64_t max_ns) {
    if (!max_ns) return;
    uint64_t ns = ((i * 2654435761u) >> 8) % max_ns;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do clock_gettime(CLOCK_MONOTONIC, &t);
    while ((uint64_t)((t.tv_sec - t0.tv_sec) * 1000000000 + (t.tv_nsec - t0.tv_nsec)) < ns);
}

/* The peer: answers each request with status = endpoint + 1, until
 * CHAN_EXIT, then leaves in status how many requests it answered. Exits 0,
 * or 1 when a wait failed. */
static void echo_peer(int fd, int my_bell, int peer_bell, uint64_t spin_ns, uint64_t jitter_ns) {
    chan_end w;
    if (chan_attach(&w, fd, my_bell, peer_bell, why, sizeof why) != 0) _exit(2);
    w.spin_ns = spin_ns;
    for (unsigned i = 0;; i++) {
        int s = chan_wait(&w, CHAN_BIT(CHAN_REQUEST) | CHAN_BIT(CHAN_EXIT), NULL, 0, 10000, NULL);
        if (s == CHAN_EXIT) {
            w.blk->status = (int32_t)i;
            _exit(0);
        }
        if (s != CHAN_REQUEST) _exit(1);
        jitter(i + 7, jitter_ns);
        w.blk->status = w.blk->endpoint + 1;
        chan_post(&w, CHAN_DONE);
    }
}

/* n round trips against a forked peer; each wait may take 5 s, far more
 * than a lost wake-up would ever be forgiven. Every answer must be the
 * one to its request, and the peer must have answered exactly n. Returns
 * how many of the host's waits slept: how the scheduler ran the two
 * processes decides that, so it is information, never a verdict. */
static int ping_pong(uint64_t host_spin, uint64_t peer_spin, int n, uint64_t jitter_ns) {
    chan_end h;
    int fd, slept = 0;
    create(&h, &fd);
    h.spin_ns = host_spin;
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) echo_peer(fd, h.peer_bell, h.my_bell, peer_spin, jitter_ns);
    for (int i = 0; i < n; i++) {
        jitter((unsigned)i, jitter_ns);
        h.blk->endpoint = i & 0xffff;
        chan_post(&h, CHAN_REQUEST);
        int s = chan_wait(&h, CHAN_BIT(CHAN_DONE), NULL, 0, 5000, NULL);
        slept += h.slept;
        if (s != CHAN_DONE) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            chan_close(&h);
            cr_assert_fail("round trip %d: chan_wait returned %d", i, s);
        }
        cr_assert_eq(h.blk->status, (i & 0xffff) + 1, "round trip %d", i);
    }
    chan_post(&h, CHAN_EXIT);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "peer status %#x", status);
    cr_expect_eq(h.blk->status, n, "the peer answered %d of %d requests", h.blk->status, n);
    chan_close(&h);
    cr_log_info("spin %llu/%llu ns: the host slept in %d of %d waits",
                (unsigned long long)host_spin, (unsigned long long)peer_spin, slept, n);
    return slept;
}

/* Which path each wait takes (spin or sleep) is the scheduler's choice;
 * these check that either way every request gets its own answer. That a
 * spin finds a reached state without sleeping, and that a spin of 0 sleeps
 * at once, are checked where the order is fixed
 * (state_already_reached_returns_at_once, sleeping_waiter_uses_no_spin). */
Test(channel, ping_pong_with_a_long_spin_answers_every_request) {
    ping_pong(10 * 1000 * 1000, 10 * 1000 * 1000, 2000, 0);
}

Test(channel, ping_pong_without_a_spin_answers_every_request) {
    ping_pong(0, 0, 2000, 0);
}

/* Spins as long as the jitter of the answers make posts race with the end
 * of the peer's spin, its flag and its poll(): a lost wake-up would leave
 * a wait to its 5 s limit and fail the round trip. */
Test(channel, no_lost_wake_up_in_100k_round_trips, .timeout = 300) {
    ping_pong(1500, 1500, 100000, 3000);
}

/* A waiter with spin_ns 0 sleeps at once, and a post made while it
 * sleeps wakes it. The peer posts only once the waiter's flag says it
 * sleeps, so the post is late whatever the scheduling. */
Test(channel, sleeping_waiter_uses_no_spin) {
    chan_end h;
    int fd;
    create(&h, &fd);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        chan_end w;
        if (chan_attach(&w, fd, h.peer_bell, h.my_bell, why, sizeof why) != 0) _exit(2);
        /* 10 s only so that a waiter that never sleeps does not hang the test */
        for (int i = 0; !atomic_load(w.peer_sleeping); i++) {
            if (i == 10000) _exit(3);
            usleep(1000);
        }
        chan_post(&w, CHAN_DONE);
        _exit(0);
    }
    int s = chan_wait(&h, CHAN_BIT(CHAN_DONE), NULL, 0, 20000, NULL);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "peer status %#x", status);
    cr_expect_eq(s, CHAN_DONE, "the post did not wake the waiter (%d)", s);
    cr_expect_eq(h.slept, 1, "the waiter did not sleep");
    cr_expect_eq(atomic_load(&h.blk->host_sleeping), 0, "the flag is cleared after waking");
    chan_close(&h);
}

/* ---- timeouts and extra fds ------------------------------------------------- */

/* With nothing posted, a wait ends in CHAN_WAIT_TIMEOUT, not before its
 * timeout; timeout 0 returns without sleeping. */
Test(channel, wait_times_out, .timeout = 60) {
    chan_end h;
    int fd;
    create(&h, &fd);
    h.spin_ns = 1000 * 1000;
    double t0 = now_ms();
    int s = chan_wait(&h, CHAN_BIT(CHAN_DONE), NULL, 0, 100, NULL);
    double took = now_ms() - t0;
    cr_expect_eq(s, CHAN_WAIT_TIMEOUT);
    /* A lower bound only: never giving up early is the behaviour; load can
     * only lengthen a wait. How late it returns: bench_waits. */
    cr_expect_geq(took, 100.0, "gave up after %.1f ms of 100", took);
    /* timeout 0 only looks (a wait that blocked would hit the test's timeout) */
    cr_expect_eq(chan_wait(&h, CHAN_BIT(CHAN_DONE), NULL, 0, 0, NULL), CHAN_WAIT_TIMEOUT);
    chan_close(&h);
}

Test(channel, state_already_reached_returns_at_once) {
    chan_end h;
    int fd;
    create(&h, &fd);
    atomic_store(&h.blk->state, CHAN_DONE);
    cr_expect_eq(chan_wait(&h, CHAN_BIT(CHAN_DONE) | CHAN_BIT(CHAN_ALLOC), NULL, 0, 0, NULL),
                 CHAN_DONE);
    /* a spinning waiter finds it on the spin path, without sleeping */
    h.spin_ns = 10 * 1000 * 1000;
    cr_expect_eq(chan_wait(&h, CHAN_BIT(CHAN_DONE), NULL, 0, 5000, NULL), CHAN_DONE);
    cr_expect_eq(h.slept, 0, "the state was there, yet the waiter slept");
    chan_close(&h);
}

/* A peer's death, seen through its pidfd among the extra fds, ends the
 * wait with CHAN_WAIT_FD. */
Test(channel, dead_peer_pidfd_wakes_the_waiter) {
    chan_end h;
    int fd;
    create(&h, &fd);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        usleep(50 * 1000);
        _exit(0);
    }
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    cr_assert_geq(pidfd, 0, "pidfd_open: %s", strerror(errno));
    struct pollfd extra[2] = {{.fd = -1}, {.fd = pidfd, .events = POLLIN}};
    int ready = -1;
    /* a timeout instead of CHAN_WAIT_FD would mean the death did not wake it */
    int s = chan_wait(&h, CHAN_BIT(CHAN_DONE), extra, 2, 20000, &ready);
    cr_expect_eq(s, CHAN_WAIT_FD);
    cr_expect_eq(ready, 1, "the negative fd is ignored; the pidfd is index 1");
    cr_expect(extra[1].revents & POLLIN);
    cr_expect_eq(waitpid(pid, NULL, 0), pid);
    close(pidfd);
    chan_close(&h);
}

Test(channel, reached_state_wins_over_a_readable_fd) {
    chan_end h;
    int fd;
    create(&h, &fd);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    cr_assert_eq(write(p[1], "x", 1), 1);
    atomic_store(&h.blk->state, CHAN_DONE);
    struct pollfd extra = {.fd = p[0], .events = POLLIN};
    int ready = -1;
    cr_expect_eq(chan_wait(&h, CHAN_BIT(CHAN_DONE), &extra, 1, 1000, &ready), CHAN_DONE);
    /* and with the state not reached, the fd is reported */
    atomic_store(&h.blk->state, CHAN_IDLE);
    cr_expect_eq(chan_wait(&h, CHAN_BIT(CHAN_DONE), &extra, 1, 1000, &ready), CHAN_WAIT_FD);
    cr_expect_eq(ready, 0);
    close(p[0]);
    close(p[1]);
    chan_close(&h);
}

Test(channel, post_rings_only_a_sleeping_peer) {
    chan_end h;
    int fd;
    create(&h, &fd);
    uint64_t v;
    chan_post(&h, CHAN_REQUEST);
    cr_expect_eq(read(h.peer_bell, &v, sizeof v), -1, "nobody sleeps: no ring");
    cr_expect_eq(errno, EAGAIN);
    atomic_store(&h.blk->worker_sleeping, 1);
    chan_post(&h, CHAN_REQUEST);
    cr_expect_eq(read(h.peer_bell, &v, sizeof v), (ssize_t)sizeof v);
    cr_expect_eq(v, 1);
    chan_close(&h);
}
