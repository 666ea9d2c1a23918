/* SPDX-License-Identifier: MIT */
/* The shared-memory arena: allocator, segments, the worker's view, names
 * and orphan removal. Internal functions: linked against the objects. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* unshare, CLONE_NEWNS (private_tmpfs.h) */
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

#include "transport/shm/arena.h"
#include "tessera/tessera.h"

#include "dir_entries.h"
#include "private_tmpfs.h"

#define MIB ((size_t)1 << 20)

static char why[512];

static arena *make(size_t first) {
    arena *a = NULL;
    int rc = arena_create(&a, first, why, sizeof why);
    cr_assert_eq(rc, 0, "arena_create: %s", why);
    cr_assert_not_null(a);
    return a;
}

/* Every test leaves no segment of this process behind. */
static void no_leftovers(void) {
    cr_expect_eq(shm_entries_of(getpid()), 0, "segments of this process remain in /dev/shm");
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

    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        /* The child maps by name only, as a worker does. */
        arena_view *v;
        char w[256];
        if (arena_view_open(&v, arena_prefix(a), w, sizeof w) != 0) _exit(10);
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
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed with status %d",
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    for (int i = 0; i < 1000; i++) cr_assert_eq(p[i], 0xc5);
    cr_expect_eq(big[0], 9);
    arena_destroy(a);
}

Test(arena, hostile_binrefs_end_in_errors) {
    arena *a = make(MIB);
    void *p = arena_alloc(a, 128, why, sizeof why);
    binref good;
    cr_assert_eq(arena_locate(a, p, 128, &good), 0);
    arena_view *v;
    cr_assert_eq(arena_view_open(&v, arena_prefix(a), why, sizeof why), 0, "%s", why);

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

    /* A view of an arena that does not exist fails at first use. */
    cr_assert_eq(arena_view_open(&v, "/tessera-1-1-0000000000000000", why, sizeof why), 0);
    cr_expect_null(arena_view_resolve(v, &good, why, sizeof why));
    arena_view_close(v);
    cr_expect_eq(arena_view_open(&v, "no-slash", why, sizeof why), TSR_E_ARGUMENT);
    cr_expect_eq(arena_view_open(&v, "/a/b", why, sizeof why), TSR_E_ARGUMENT);
    cr_expect_eq(arena_view_open(&v, "", why, sizeof why), TSR_E_ARGUMENT);
    cr_expect_eq(arena_view_open(&v, NULL, why, sizeof why), TSR_E_ARGUMENT);
    arena_destroy(a);
}

/* ---- names, permissions, cleanup ----------------------------------------- */

static int is_hex(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

Test(arena, names_are_private_tagged_and_unguessable) {
    mode_t old = umask(0277);   /* would strip the owner's write bit */
    arena *a = make(MIB);
    arena *b = make(MIB);
    umask(old);
    char expect[64];
    snprintf(expect, sizeof expect, "/tessera-%s-", arena_process_tag());
    const char *pa = arena_prefix(a), *pb = arena_prefix(b);
    cr_assert_eq(strncmp(pa, expect, strlen(expect)), 0, "%s", pa);
    cr_assert_eq(strlen(pa), strlen(expect) + 16, "%s", pa);
    cr_expect(is_hex(pa + strlen(expect), 16), "%s", pa);
    cr_expect_str_neq(pa, pb);
    char path[128];
    snprintf(path, sizeof path, "/dev/shm%s-0", pa);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "%s: %s", path, strerror(errno));
    cr_expect_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
    cr_expect_eq(st.st_uid, geteuid());
    arena_destroy(a);
    arena_destroy(b);
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

Test(arena, destroy_removes_every_segment) {
    arena *a = make(MIB);
    cr_assert_not_null(arena_alloc(a, MIB, why, sizeof why));
    cr_assert_not_null(arena_alloc(a, 2 * MIB, why, sizeof why));
    cr_assert_not_null(arena_alloc(a, 3 * MIB, why, sizeof why));
    char stem[ARENA_NAME_MAX];
    snprintf(stem, sizeof stem, "%s-", arena_prefix(a) + 1);
    cr_expect_eq(dir_entries("/dev/shm", stem), 3);
    arena_destroy(a);
    cr_expect_eq(dir_entries("/dev/shm", stem), 0);
}

Test(arena, failed_creation_leaves_nothing) {
    arena *a = NULL;
    /* Far more than any /dev/shm holds. */
    int rc = arena_create(&a, (size_t)1 << 60, why, sizeof why);
    cr_expect_eq(rc, TSR_E_SHM);
    cr_expect_null(a);
    cr_expect(strstr(why, "/dev/shm is full") != NULL, "%s", why);
    cr_expect(strstr(why, "1152921504606846976") != NULL, "%s", why);
    cr_expect_eq(arena_create(NULL, MIB, why, sizeof why), TSR_E_ARGUMENT);
    cr_expect_null(arena_alloc(NULL, 1, why, sizeof why));
    /* A request too large to round stays an error, not a wrap-around. */
    a = make(MIB);
    cr_expect_null(arena_alloc(a, SIZE_MAX - 3, why, sizeof why));
    cr_expect_null(arena_alloc(a, (size_t)1 << 60, why, sizeof why));
    cr_expect_eq(arena_capacity(a), MIB);
    arena_destroy(a);
}

/* In a child with a private mount namespace and a 2 MiB tmpfs on
 * /dev/shm: what does not fit is refused, saying so, and leaves nothing. */
static const char *full_shm_child(void) {
    const char *v = private_tmpfs("/dev/shm", 0, "size=2m,mode=1777");
    if (v) return v;
    char w[512] = "";
    arena *a = NULL;
    int rc = arena_create(&a, 4 * MIB, w, sizeof w);
    CHECK(rc == TSR_E_SHM && a == NULL, "a 4 MiB arena in 2 MiB: %d %s", rc, w);
    CHECK(strstr(w, "/dev/shm is full") && strstr(w, "4194304"), "message: %s", w);
    CHECK(dir_entries("/dev/shm", "") == 0, "the failed arena left entries");
    CHECK(arena_create(&a, MIB, w, sizeof w) == 0, "a 1 MiB arena: %s", w);
    CHECK(arena_alloc(a, MIB, w, sizeof w) != NULL, "the first MiB: %s", w);
    /* Doubling (2 MiB) does not fit; the request alone (one page) does. */
    CHECK(arena_alloc(a, 100, w, sizeof w) != NULL, "a page beyond: %s", w);
    CHECK(arena_alloc(a, 2 * MIB, w, sizeof w) == NULL, "2 MiB more fit in a 2 MiB tmpfs");
    CHECK(strstr(w, "/dev/shm is full") && strstr(w, "2097152"), "message: %s", w);
    CHECK(dir_entries("/dev/shm", "tessera-") == 2, "the failed segment is not gone");
    arena_destroy(a);
    CHECK(dir_entries("/dev/shm", "tessera-") == 0, "arena_destroy left segments");
    return "ok";
}

Test(arena, full_dev_shm_is_a_clear_error) {
    run_in_child(full_shm_child, "no privilege to mount a small tmpfs");
}

/* ---- orphans ----------------------------------------------------------------- */

static void make_entry(const char *name) {
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    cr_assert(fd >= 0, "%s: %s", name, strerror(errno));
    close(fd);
}

static int exists(const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "/dev/shm%s", name);
    return access(path, F_OK) == 0;
}

Test(arena, orphans_of_dead_processes_are_removed_and_live_ones_kept) {
    pid_t dead = fork();
    cr_assert_neq(dead, -1);
    if (dead == 0) _exit(0);
    cr_assert_eq(waitpid(dead, NULL, 0), dead);

    arena *live = make(MIB);
    unsigned long long start;
    const char *tag = arena_process_tag();
    cr_assert_eq(sscanf(strchr(tag, '-') + 1, "%llu", &start), 1);
    long me = (long)getpid();

    char orphan[4][96], keep[6][96];
    snprintf(orphan[0], 96, "/tessera-%ld-12345-0123456789abcdef-0", (long)dead);
    snprintf(orphan[1], 96, "/tessera-%ld-12345-0123456789abcdef-c3", (long)dead);
    snprintf(orphan[2], 96, "/tessera-%ld-0-0123456789abcdef-1", (long)dead);
    /* Our pid, another start time: the pid was reused. */
    snprintf(orphan[3], 96, "/tessera-%ld-%llu-0123456789abcdef-0", me, start + 1);
    snprintf(keep[0], 96, "/tessera-%ld-%llu-fedcba9876543210-0", me, start);
    snprintf(keep[1], 96, "/tessera-%ld-12345-0123456789abcdeX-0", (long)dead);
    snprintf(keep[2], 96, "/tessera-%ld-12345-0123456789abcdef", (long)dead);
    snprintf(keep[3], 96, "/tessera-%ld-12345-0123456789abcdef-0x", (long)dead);
    snprintf(keep[4], 96, "/tesserae-%ld-12345-0123456789abcdef-0", (long)dead);
    snprintf(keep[5], 96, "/tessera-%ld-12345-0123456789ABCDEF-0", (long)dead);
    for (int i = 0; i < 4; i++) make_entry(orphan[i]);
    for (int i = 0; i < 6; i++) make_entry(keep[i]);

    int removed = arena_remove_orphans();
    cr_expect_geq(removed, 0);
    for (int i = 0; i < 4; i++) cr_expect(!exists(orphan[i]), "%s was kept", orphan[i]);
    for (int i = 0; i < 6; i++) cr_expect(exists(keep[i]), "%s was removed", keep[i]);
    char seg0[ARENA_NAME_MAX + 8];
    snprintf(seg0, sizeof seg0, "%s-0", arena_prefix(live));
    cr_expect(exists(seg0), "the live arena's segment was removed");
    void *p = arena_alloc(live, 64, why, sizeof why);
    cr_expect_not_null(p, "%s", why);

    for (int i = 0; i < 6; i++) shm_unlink(keep[i]);
    arena_destroy(live);
}
