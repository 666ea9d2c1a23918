/* SPDX-License-Identifier: MIT */
/* The shared-memory arena: allocator, memfd segments (no names, sealed,
 * owner only), handing them to a view over a socket, the worker's view,
 * running out of memory, process tags. Internal functions: linked against
 * the objects. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* F_GET_SEALS */
#endif
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/socket.h>

#include "shm/arena_internal.h"
#include "tessera/tessera.h"

#include "child_verdict.h"
#include "dir_entries.h"
#include "memcg_util.h"

#define MIB ((size_t)1 << 20)

static char why[512];

static arena *make(size_t first) {
    arena *a = NULL;
    int rc = arena_create(&a, first, why, sizeof why);
    cr_assert_eq(rc, 0, "arena_create: %s", why);
    cr_assert_not_null(a);
    return a;
}

/* Every test leaves no segment of this process behind: no fd, no
 * mapping, and nothing in /dev/shm. */
static void no_leftovers(void) {
    cr_expect_eq(memfds_held(getpid()), 0, "segments of this process are still open or mapped");
    cr_expect_eq(shm_entries_of(getpid()), 0, "entries of this process in /dev/shm");
}

/* A socket pair: [0] for the host's arena_send_segments, [1] for a view. */
static void pair(int sv[2]) {
    cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0, "%s",
                 strerror(errno));
}

/* A view of a's segments as a worker gets them: sent over a socket. */
static arena_view *view_of(arena *a, int *host_end, uint32_t *sent) {
    int sv[2];
    pair(sv);
    *sent = 0;
    cr_assert_eq(arena_send_segments(a, sv[0], sent, why, sizeof why), 0, "%s", why);
    arena_view *v = NULL;
    cr_assert_eq(arena_view_open(&v, sv[1], why, sizeof why), 0, "%s", why);
    *host_end = sv[0];
    return v;
}

TestSuite(arena, .fini = no_leftovers);

Test(arena, first_segment_is_at_least_1mib_and_page_rounded) {
    arena *a = make(10);
    cr_expect_eq(arena_capacity(a), MIB);
    arena_destroy(a);
    a = make(3 * MIB + 1);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    cr_expect_eq(arena_capacity(a), (3 * MIB + 1 + page - 1) / page * page);
    arena_destroy(a);
}

Test(arena, blocks_are_64_byte_aligned_and_disjoint) {
    arena *a = make(MIB);
    char *p[50];
    for (int i = 0; i < 50; i++) {
        size_t bytes = (size_t)i * 37 + 1;
        p[i] = arena_alloc(a, bytes, why, sizeof why);
        cr_assert_not_null(p[i], "%s", why);
        cr_expect_eq((uintptr_t)p[i] % TSR_ALIGNMENT, 0);
        memset(p[i], i, bytes);
    }
    for (int i = 0; i < 50; i++)
        for (size_t j = 0; j < (size_t)i * 37 + 1; j++) cr_assert_eq((unsigned char)p[i][j], i);
    for (int i = 0; i < 50; i++) arena_free(a, p[i]);
    arena_destroy(a);
}

Test(arena, zero_byte_requests_give_unique_valid_pointers) {
    arena *a = make(MIB);
    void *p = arena_alloc(a, 0, why, sizeof why);
    void *q = arena_alloc(a, 0, why, sizeof why);
    cr_assert_not_null(p);
    cr_assert_not_null(q);
    cr_expect_neq(p, q);
    cr_expect_eq((uintptr_t)p % TSR_ALIGNMENT, 0);
    binref r;
    cr_expect_eq(arena_locate(a, p, 0, &r), 0);
    arena_free(a, p);
    arena_free(a, q);
    arena_destroy(a);
}

Test(arena, freed_space_is_reused) {
    arena *a = make(MIB);
    void *p = arena_alloc(a, 4096, why, sizeof why);
    arena_free(a, p);
    void *q = arena_alloc(a, 4096, why, sizeof why);
    cr_expect_eq(p, q, "first fit returns the freed block");
    /* Repeated alloc/free of the whole segment never grows the arena. */
    for (int i = 0; i < 100; i++) {
        void *big = arena_alloc(a, MIB - 8192, why, sizeof why);
        cr_assert_not_null(big, "%s", why);
        arena_free(a, big);
    }
    cr_expect_eq(arena_capacity(a), MIB);
    arena_free(a, q);
    arena_destroy(a);
}

Test(arena, free_coalesces_neighbours) {
    arena *a = make(MIB);
    size_t third = MIB / 4;
    char *x = arena_alloc(a, third, why, sizeof why);
    char *y = arena_alloc(a, third, why, sizeof why);
    char *z = arena_alloc(a, third, why, sizeof why);
    cr_assert(x && y && z);
    cr_expect_eq(y, x + third);
    cr_expect_eq(z, y + third);
    /* Free in an order that needs both forward and backward merges. */
    arena_free(a, x);
    arena_free(a, z);
    arena_free(a, y);
    char *all = arena_alloc(a, MIB, why, sizeof why);
    cr_assert_not_null(all, "%s", why);
    cr_expect_eq(all, x, "the whole segment is one free block again");
    cr_expect_eq(arena_capacity(a), MIB);
    arena_destroy(a);
}

Test(arena, bad_frees_are_ignored) {
    arena *a = make(MIB);
    char *p = arena_alloc(a, 256, why, sizeof why);
    int local;
    arena_free(a, &local);        /* not from the arena */
    arena_free(a, p + 64);        /* inside a block */
    arena_free(a, NULL);
    arena_free(NULL, p);
    arena_free(a, p);
    arena_free(a, p);             /* twice */
    char *q = arena_alloc(a, 256, why, sizeof why);
    char *r = arena_alloc(a, 256, why, sizeof why);
    cr_expect_eq(q, p);
    cr_expect_neq(r, q, "a double free did not hand out one block twice");
    arena_destroy(a);
    arena_destroy(NULL);
}

Test(arena, grows_by_doubling_or_by_the_request) {
    arena *a = make(MIB);
    void *p = arena_alloc(a, MIB, why, sizeof why);
    cr_assert_not_null(p, "%s", why);
    cr_expect_eq(arena_capacity(a), MIB);
    void *q = arena_alloc(a, 100, why, sizeof why);   /* second segment: 2 MiB */
    cr_assert_not_null(q, "%s", why);
    cr_expect_eq(arena_capacity(a), 3 * MIB);
    void *r = arena_alloc(a, 9 * MIB, why, sizeof why);   /* third: the request, 9 MiB > 4 MiB */
    cr_assert_not_null(r, "%s", why);
    cr_expect_eq(arena_capacity(a), 12 * MIB);
    binref br;
    cr_assert_eq(arena_locate(a, r, 9 * MIB, &br), 0);
    cr_expect_eq(br.seg, 2);
    cr_expect_eq(br.offset, 0);
    cr_expect_eq(arena_address(a, &br), r);
    cr_assert_eq(arena_locate(a, q, 100, &br), 0);
    cr_expect_eq(br.seg, 1);
    memset(r, 0xab, 9 * MIB);
    arena_destroy(a);
}

Test(arena, locate_inside_outside_and_straddling) {
    arena *a = make(MIB);
    char *p = arena_alloc(a, 1000, why, sizeof why);
    binref r;
    cr_assert_eq(arena_locate(a, p + 10, 500, &r), 0);
    cr_expect_eq(r.seg, 0);
    cr_expect_eq(r.reserved, 0);
    cr_expect_eq(r.bytes, 500);
    cr_expect_eq(arena_address(a, &r), p + 10);
    double stack[4];
    cr_expect_eq(arena_locate(a, stack, sizeof stack, &r), -1);
    void *heap = malloc(64);
    cr_expect_eq(arena_locate(a, heap, 64, &r), -1);
    free(heap);
    /* The segment's last byte is inside; one more is not. */
    binref first;
    cr_assert_eq(arena_locate(a, p, 1, &first), 0);
    char *base = p - first.offset;
    cr_expect_eq(arena_locate(a, base + MIB - 1, 1, &r), 0);
    cr_expect_eq(arena_locate(a, base + MIB - 1, 2, &r), -1);
    cr_expect_eq(arena_locate(a, base + MIB, 0, &r), -1);
    cr_expect_eq(arena_locate(a, base - 1, 2, &r), -1);
    cr_expect_eq(arena_locate(a, p, SIZE_MAX, &r), -1);
    cr_expect_eq(arena_locate(a, NULL, 0, &r), -1);
    /* arena_address refuses what lies outside. */
    binref bad = {.seg = 0, .offset = MIB - 8, .bytes = 16};
    cr_expect_null(arena_address(a, &bad));
    bad = (binref){.seg = 1, .offset = 0, .bytes = 1};
    cr_expect_null(arena_address(a, &bad));
    bad = (binref){.seg = 0, .offset = UINT64_MAX - 4, .bytes = 8};
    cr_expect_null(arena_address(a, &bad));
    arena_destroy(a);
}

struct worker_arg {
    arena *a;
    int id;
    int bad;
};

static void *hammer(void *p) {
    struct worker_arg *w = p;
    char buf[128];
    for (int round = 0; round < 2000; round++) {
        size_t bytes = (size_t)(round % 13) * 97;
        unsigned char *q = arena_alloc(w->a, bytes, buf, sizeof buf);
        if (q == NULL || (uintptr_t)q % TSR_ALIGNMENT != 0) {
            w->bad++;
            continue;
        }
        memset(q, w->id, bytes);
        for (size_t j = 0; j < bytes; j++)
            if (q[j] != w->id) w->bad++;
        arena_free(w->a, q);
    }
    return NULL;
}

Test(arena, threads_share_one_arena) {
    arena *a = make(MIB);
    pthread_t t[4];
    struct worker_arg w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (struct worker_arg){.a = a, .id = i + 1};
        cr_assert_eq(pthread_create(&t[i], NULL, hammer, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        cr_expect_eq(w[i].bad, 0, "thread %d saw an overlap or a failure", i);
    }
    void *all = arena_alloc(a, MIB, why, sizeof why);
    cr_expect_not_null(all, "everything merged back: %s", why);
    arena_destroy(a);
}

/* ---- the worker's view ---------------------------------------------------- */

Test(arena, forked_child_sees_and_writes_the_same_pages) {
    arena *a = make(MIB);
    unsigned char *p = arena_alloc(a, 1000, why, sizeof why);
    unsigned char *big = arena_alloc(a, 2 * MIB, why, sizeof why);   /* segment 1 */
    cr_assert(p && big, "%s", why);
    for (int i = 0; i < 1000; i++) p[i] = (unsigned char)i;
    big[2 * MIB - 1] = 7;
    binref r1, r2;
    cr_assert_eq(arena_locate(a, p, 1000, &r1), 0);
    cr_assert_eq(arena_locate(a, big, 2 * MIB, &r2), 0);
    cr_assert_eq(r2.seg, 1);
    int sv[2];
    pair(sv);
    uint32_t sent = 0;
    cr_assert_eq(arena_send_segments(a, sv[0], &sent, why, sizeof why), 0, "%s", why);
    cr_expect_eq(sent, 2);

    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        /* The child maps only what it received, as a worker does. */
        arena_view *v;
        char w[256];
        close(sv[0]);
        if (arena_view_open(&v, sv[1], w, sizeof w) != 0) _exit(10);
        unsigned char *q = arena_view_resolve(v, &r1, w, sizeof w);
        unsigned char *b = arena_view_resolve(v, &r2, w, sizeof w);
        if (q == NULL || b == NULL) _exit(11);
        if (q == p || b == big) _exit(12);   /* its own mapping, not the inherited one */
        for (int i = 0; i < 1000; i++)
            if (q[i] != (unsigned char)i) _exit(13);
        if (b[2 * MIB - 1] != 7) _exit(14);
        memset(q, 0xc5, 1000);
        b[0] = 9;
        arena_view_close(v);
        _exit(0);
    }
    close(sv[1]);
    close(sv[0]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed with status %d",
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    for (int i = 0; i < 1000; i++) cr_assert_eq(p[i], 0xc5);
    cr_expect_eq(big[0], 9);
    arena_destroy(a);
}

Test(arena, segments_reach_a_view_once_each_and_later_ones_when_sent) {
    arena *a = make(MIB);
    void *first = arena_alloc(a, 64, why, sizeof why);
    int host_end;
    uint32_t sent;
    arena_view *v = view_of(a, &host_end, &sent);
    cr_expect_eq(sent, 1);
    cr_expect_eq(arena_segments(a), 1);
    /* Nothing new: nothing is sent. */
    cr_expect_eq(arena_send_segments(a, host_end, &sent, why, sizeof why), 0, "%s", why);
    cr_expect_eq(sent, 1);
    binref r0;
    cr_assert_eq(arena_locate(a, first, 64, &r0), 0);
    unsigned char *q0 = arena_view_resolve(v, &r0, why, sizeof why);
    cr_assert_not_null(q0, "%s", why);
    /* The arena grows: the view knows nothing of segment 1 until it is
     * sent, and then maps it at first use. */
    unsigned char *big = arena_alloc(a, 2 * MIB, why, sizeof why);
    cr_assert_not_null(big, "%s", why);
    big[5] = 42;
    binref r1;
    cr_assert_eq(arena_locate(a, big, 2 * MIB, &r1), 0);
    cr_assert_eq(r1.seg, 1);
    cr_expect_null(arena_view_resolve(v, &r1, why, sizeof why));
    cr_expect(strstr(why, "no such segment 1") != NULL, "%s", why);
    cr_expect_eq(arena_send_segments(a, host_end, &sent, why, sizeof why), 0, "%s", why);
    cr_expect_eq(sent, 2);
    unsigned char *q1 = arena_view_resolve(v, &r1, why, sizeof why);
    cr_assert_not_null(q1, "%s", why);
    cr_expect_eq(q1[5], 42);
    cr_expect_eq(arena_view_resolve(v, &r1, why, sizeof why), q1, "mapped once");
    /* A peer gone is EPIPE, never a SIGPIPE. */
    arena_view_close(v);
    cr_assert_not_null(arena_alloc(a, 8 * MIB, why, sizeof why));
    errno = 0;
    cr_expect_eq(arena_send_segments(a, host_end, &sent, why, sizeof why), -1);
    cr_expect(errno == EPIPE || errno == ECONNRESET, "errno %d", errno);
    cr_expect_eq(sent, 2);
    close(host_end);
    arena_destroy(a);
}

Test(arena, hostile_binrefs_end_in_errors) {
    arena *a = make(MIB);
    void *p = arena_alloc(a, 128, why, sizeof why);
    binref good;
    cr_assert_eq(arena_locate(a, p, 128, &good), 0);
    int host_end;
    uint32_t sent;
    arena_view *v = view_of(a, &host_end, &sent);

    binref r = good;
    r.seg = ARENA_MAX_SEGMENTS;
    cr_expect_null(arena_view_resolve(v, &r, why, sizeof why));
    cr_expect(strstr(why, "segment") != NULL, "%s", why);
    r.seg = UINT32_MAX;
    cr_expect_null(arena_view_resolve(v, &r, why, sizeof why));
    r.seg = 3;   /* within bounds, but the arena has one segment */
    cr_expect_null(arena_view_resolve(v, &r, why, sizeof why));
    cr_expect(strstr(why, "no such segment") != NULL, "%s", why);
    r = good;
    r.offset = MIB;
    r.bytes = 0;
    cr_expect_null(arena_view_resolve(v, &r, why, sizeof why));
    cr_expect(strstr(why, "out of bounds") != NULL, "%s", why);
    r.offset = MIB - 64;
    r.bytes = 65;
    cr_expect_null(arena_view_resolve(v, &r, why, sizeof why));
    r.offset = 64;
    r.bytes = UINT64_MAX - 10;   /* offset + bytes wraps around */
    cr_expect_null(arena_view_resolve(v, &r, why, sizeof why));
    r.offset = UINT64_MAX;
    r.bytes = 2;
    cr_expect_null(arena_view_resolve(v, &r, why, sizeof why));
    r = good;
    r.reserved = 1;
    cr_expect_null(arena_view_resolve(v, &r, why, sizeof why));
    cr_expect_null(arena_view_resolve(v, NULL, why, sizeof why));
    cr_expect_null(arena_view_resolve(NULL, &good, why, sizeof why));
    /* After all that, a good binref still resolves, and the last byte. */
    cr_expect_not_null(arena_view_resolve(v, &good, why, sizeof why), "%s", why);
    r = (binref){.seg = 0, .offset = MIB - 1, .bytes = 1};
    cr_expect_not_null(arena_view_resolve(v, &r, why, sizeof why), "%s", why);
    arena_view_close(v);
    arena_view_close(NULL);

    close(host_end);

    /* A view that was sent nothing fails at first use, also once the host
     * has closed its end; junk on the socket is refused. */
    int sv[2];
    pair(sv);
    cr_assert_eq(arena_view_open(&v, sv[1], why, sizeof why), 0);
    cr_expect_null(arena_view_resolve(v, &good, why, sizeof why));
    cr_expect(strstr(why, "no such segment") != NULL, "%s", why);
    cr_assert_eq(write(sv[0], "junk", 4), 4);
    cr_expect_null(arena_view_resolve(v, &good, why, sizeof why));
    cr_expect(strstr(why, "malformed") != NULL, "%s", why);
    close(sv[0]);
    cr_expect_null(arena_view_resolve(v, &good, why, sizeof why));
    arena_view_close(v);
    cr_expect_eq(arena_view_open(&v, -1, why, sizeof why), TSR_E_ARGUMENT);
    cr_expect_eq(arena_view_open(NULL, -1, why, sizeof why), TSR_E_ARGUMENT);
    arena_destroy(a);
}

/* ---- no names, permissions, seals, release ------------------------------ */

/* The fds of this process that are arena segments, up to max. */
static int segment_fds(int *out, int max) {
    DIR *d = opendir("/proc/self/fd");
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < max) {
        char path[300], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len <= 0) continue;
        target[len] = '\0';
        if (strncmp(target, MEMFD_STEM "arena", strlen(MEMFD_STEM "arena")) == 0)
            out[n++] = atoi(e->d_name);
    }
    closedir(d);
    return n;
}

Test(arena, segments_have_no_name_are_private_and_cannot_be_shrunk) {
    mode_t old = umask(0);   /* a permissive umask must not widen them */
    arena *a = make(MIB);
    umask(old);
    cr_expect_eq(shm_entries_of(getpid()), 0, "a segment has a name in /dev/shm");
    int fds[4];
    cr_assert_eq(segment_fds(fds, 4), 1, "one segment, one memfd");
    cr_expect_eq(memfd_maps_of(getpid(), "arena"), 1, "mapped once");
    struct stat st;
    cr_assert_eq(fstat(fds[0], &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
    cr_expect_eq(st.st_uid, geteuid());
    cr_expect_eq(st.st_nlink, 0, "a memfd has no link in any directory");
    cr_expect_eq((size_t)st.st_size, MIB);
    int seals = fcntl(fds[0], F_GET_SEALS);
    cr_expect_eq(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
                 F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL, "seals %#x", seals);
    cr_expect_eq(fcntl(fds[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC, "inherited by exec");
    /* What a worker holding the segment could try against the host. */
    cr_expect_eq(ftruncate(fds[0], 4096), -1);
    cr_expect_eq(errno, EPERM);
    cr_expect_eq(ftruncate(fds[0], 2 * MIB), -1);
    cr_expect_eq(fcntl(fds[0], F_ADD_SEALS, F_SEAL_WRITE), -1, "the seals are sealed");
    void *p = arena_alloc(a, MIB, why, sizeof why);
    cr_assert_not_null(p, "%s", why);
    memset(p, 1, MIB);   /* all of it still there */
    arena_destroy(a);
}

Test(arena, process_tag_is_pid_and_start_time_and_follows_fork) {
    unsigned long long start = 0;
    char stat_line[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(stat_line, sizeof stat_line, f));
    fclose(f);
    char *p = strrchr(stat_line, ')') + 2;
    for (int field = 3; field < 22; field++) p = strchr(p, ' ') + 1;
    start = strtoull(p, NULL, 10);
    char expect[64];
    snprintf(expect, sizeof expect, "%ld-%llu", (long)getpid(), start);
    cr_expect_str_eq(arena_process_tag(), expect);
    cr_expect_eq(arena_process_tag(), arena_process_tag(), "cached");

    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        char mine[32];
        snprintf(mine, sizeof mine, "%ld-", (long)getpid());
        _exit(strncmp(arena_process_tag(), mine, strlen(mine)) == 0 ? 0 : 1);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child kept its parent's tag");
}

Test(arena, destroy_releases_every_segment) {
    arena *a = make(MIB);
    cr_assert_not_null(arena_alloc(a, MIB, why, sizeof why));
    cr_assert_not_null(arena_alloc(a, 2 * MIB, why, sizeof why));
    cr_assert_not_null(arena_alloc(a, 3 * MIB, why, sizeof why));
    cr_expect_eq(arena_segments(a), 3);
    cr_expect_eq(memfd_fds_of(getpid(), "arena"), 3);
    cr_expect_eq(memfd_maps_of(getpid(), "arena"), 3);
    arena_destroy(a);
    cr_expect_eq(memfds_held(getpid()), 0);
}

Test(arena, failed_creation_leaves_nothing) {
    arena *a = NULL;
    /* Far more than any machine holds: refused before anything is
     * reserved (fallocate would not fail, it would call the OOM killer). */
    int rc = arena_create(&a, (size_t)1 << 60, why, sizeof why);
    cr_expect_eq(rc, TSR_E_SHM);
    cr_expect_null(a);
    cr_expect(strstr(why, "not enough memory for arena segment 0") != NULL, "%s", why);
    cr_expect(strstr(why, "1152921504606846976") != NULL, "%s", why);
    cr_expect_eq(memfds_held(getpid()), 0, "the failed arena left a segment");
    cr_expect_eq(arena_create(NULL, MIB, why, sizeof why), TSR_E_ARGUMENT);
    cr_expect_null(arena_alloc(NULL, 1, why, sizeof why));
    /* A request too large to round stays an error, not a wrap-around. */
    a = make(MIB);
    cr_expect_null(arena_alloc(a, SIZE_MAX - 3, why, sizeof why));
    cr_expect_null(arena_alloc(a, (size_t)1 << 60, why, sizeof why));
    cr_expect_eq(arena_capacity(a), MIB);
    arena_destroy(a);
}

/* In a child moved into a memory cgroup of its own, limited to what it
 * uses plus 6 MiB: what does not fit is refused before anything is
 * reserved, saying so (and the child is not OOM-killed, which is what
 * fallocate of a memfd past a cgroup's limit would bring), and leaves
 * nothing. */
static memcg cg;

static const char *limited_child(void) {
    CHECK(memcg_enter(&cg) == 0, "cannot enter the cgroup: %s", strerror(errno));
    long long used = memcg_usage(&cg);
    CHECK(used >= 0, "cannot read the cgroup's usage");
    CHECK(memcg_set_limit(&cg, (uint64_t)used + 6 * MIB) == 0, "cannot set the limit");
    char w[512] = "";
    arena *a = NULL;
    int rc = arena_create(&a, 16 * MIB, w, sizeof w);
    CHECK(rc == TSR_E_SHM && a == NULL, "a 16 MiB arena under a 6 MiB limit: %d %s", rc, w);
    CHECK(strstr(w, "not enough memory for arena segment 0 (16777216 bytes): memory cgroup"),
          "message: %s", w);
    CHECK(memfds_held(getpid()) == 0, "the failed arena left a segment");
    CHECK(arena_create(&a, MIB, w, sizeof w) == 0, "a 1 MiB arena: %s", w);
    CHECK(arena_alloc(a, MIB, w, sizeof w) != NULL, "the first MiB: %s", w);
    CHECK(arena_alloc(a, 100, w, sizeof w) != NULL, "a page beyond: %s", w);
    size_t cap = arena_capacity(a);
    CHECK(arena_alloc(a, 8 * MIB, w, sizeof w) == NULL, "8 MiB more fit under the limit");
    CHECK(strstr(w, "not enough memory for arena segment") && strstr(w, "memory cgroup"),
          "message: %s", w);
    CHECK(arena_capacity(a) == cap, "the arena grew");
    CHECK(memfd_fds_of(getpid(), "arena") == 2, "the failed segment is not gone");
    CHECK(arena_alloc(a, MIB, w, sizeof w) != NULL, "a smaller allocation after it: %s", w);
    arena_destroy(a);
    CHECK(memfds_held(getpid()) == 0, "arena_destroy left segments");
    return "ok";
}

Test(arena, a_memory_limit_is_a_clear_error_at_allocation) {
    if (memcg_create(&cg, "arena") != 0) cr_skip_test("no memory cgroup of our own can be made");
    run_in_child(limited_child, NULL);
    memcg_remove(&cg);
}

