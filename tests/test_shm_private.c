/* SPDX-License-Identifier: MIT */
/*
 * Worker mode's shared memory has no name another process can see (memfd
 * segments handed to the worker over a Unix socket), so that:
 *   - nothing can be planted: files made under the names the segments
 *     would have had (the old scheme: "/dev/shm/tessera-<pid>-<start>-
 *     <random>-<k>", whose next index was predictable), by this user or by
 *     another one (nobody, when the tests run as root), do not stop the
 *     arena from growing, a second component, or a pool of workers;
 *   - nothing is left behind when host and worker are both killed with
 *     SIGKILL at any instant: no /dev/shm entry, and no memory still
 *     charged as shared memory to the memory cgroup they ran in (where the
 *     test can make one: root), which is what an unnamed leftover would be.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>

#include "memcg_util.h"
#include "worker_util.h"

TestSuite(shm_private, .fini = expect_no_own_segments, .timeout = 120);

#define MIB ((size_t)1 << 20)

/* ---- planting ------------------------------------------------------------- */

/* Names planted by the test, removed at its end. */
static char planted[256][128];
static int n_planted;

/* Make /dev/shm/<name> as user uid (0: this one), empty, mode 0644; 1 if
 * made. */
static int plant_as(const char *name, uid_t uid) {
    char path[160];
    snprintf(path, sizeof path, "/dev/shm/%.127s", name);
    if (uid == 0) {
        int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0) return 0;
        close(fd);
        return 1;
    }
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        if (setgroups(0, NULL) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(2);
        int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        _exit(fd >= 0 ? 0 : 1);
    }
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) != 2, "cannot become uid %u", uid);
    return WEXITSTATUS(status) == 0;
}

static void plant(const char *name, uid_t uid) {
    if (n_planted < 256 && plant_as(name, uid))
        snprintf(planted[n_planted++], sizeof planted[0], "%.127s", name);
}

/* Every name the old scheme could use next, derived from what /dev/shm
 * shows of this process ("tessera-<pid>-<start>-<16 hex>-<k>" and
 * "...-c<k>"): segments 0 to 63 and channels c0 to c15 of each prefix
 * seen, planted as uid. Returns how many prefixes were seen. */
static int plant_next_names(uid_t uid) {
    char names[8192];
    shm_entries_list(getpid(), names, sizeof names);
    char prefixes[16][96];
    int n = 0;
    for (char *name = names, *end; (end = strchr(name, '\n')) != NULL; name = end + 1) {
        *end = '\0';
        char *dash = strrchr(name, '-');
        if (!dash || n == 16) continue;
        *dash = '\0';
        int seen = 0;
        for (int i = 0; i < n && !seen; i++) seen = strcmp(prefixes[i], name) == 0;
        if (!seen) snprintf(prefixes[n++], sizeof prefixes[0], "%.95s", name);
    }
    for (int i = 0; i < n; i++) {
        char next[128];
        for (int k = 0; k < 64; k++) {
            snprintf(next, sizeof next, "%.95s-%d", prefixes[i], k);
            plant(next, uid);
        }
        for (int k = 0; k < 16; k++) {
            snprintf(next, sizeof next, "%.95s-c%d", prefixes[i], k);
            plant(next, uid);
        }
    }
    return n;
}

static void remove_planted(void) {
    for (int i = 0; i < n_planted; i++) {
        char path[160];
        snprintf(path, sizeof path, "/dev/shm/%.127s", planted[i]);
        unlink(path);
    }
    n_planted = 0;
}

static tsr_component *open_shm(const char *workers) {
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_option(o, "transport", "shm"); /* no quiet fallback to files */
    if (workers) set_option(o, "workers", workers);
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), o);
    tsr_options_free(o);
    return c;
}

/* apply on n float64 that lie in the arena (tsr_component_alloc); 0 or the
 * failure's code (its message in msg). */
static int apply_in_arena(tsr_component *c, int64_t n, char *msg, size_t cap) {
    double *x = tsr_component_alloc(c, (size_t)n * sizeof *x);
    if (!x) {
        snprintf(msg, cap, "tsr_component_alloc of %lld doubles failed", (long long)n);
        return TSR_E_SHM;
    }
    for (int64_t i = 0; i < n; i++) x[i] = (double)i;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, n));
    int rc = tsr_call_run(call);
    snprintf(msg, cap, "%s", tsr_call_errmsg(call));
    if (rc == 0) {
        const double *y = tsr_call_output(call, "y")->data;
        for (int64_t i = 0; i < n; i++)
            if (y[i] != (double)i) {
                snprintf(msg, cap, "y[%lld] = %g", (long long)i, y[i]);
                rc = TSR_E_PLUGIN_RESULT;
                break;
            }
    }
    tsr_call_free(call);
    tsr_component_free_buffer(c, x);
    return rc;
}

static void planted_names_do_not_matter(uid_t uid) {
    tsr_component *c = open_shm(NULL);
    char msg[TSR_ERRMSG_MAX];
    cr_assert_eq(apply_in_arena(c, 1000, msg, sizeof msg), 0, "%s", msg);
    int prefixes = plant_next_names(uid);
    cr_log_info("as uid %u: %d names planted under %d prefixes", uid, n_planted, prefixes);
    /* The arena's first segment is 1 MiB: 8 MiB grows it, and the segment
     * that grows it reaches the worker. */
    int rc = apply_in_arena(c, (int64_t)(8 * MIB / sizeof(double)), msg, sizeof msg);
    cr_expect_eq(rc, 0, "growing the arena with %d names planted: %s", n_planted, msg);
    rc = apply_in_arena(c, (int64_t)(24 * MIB / sizeof(double)), msg, sizeof msg);
    cr_expect_eq(rc, 0, "growing it again: %s", msg);
    /* A second component and a pool: new arenas and channels. */
    tsr_component *pool = open_shm("3");
    cr_expect_eq(apply_in_arena(pool, 3 * (int64_t)MIB, msg, sizeof msg), 0, "%s", msg);
    tsr_close(pool);
    tsr_close(c);
    /* By construction: no segment ever had a name to plant on. */
    cr_expect_eq(prefixes, 0, "this process has names in /dev/shm");
    remove_planted();
}

Test(shm_private, names_planted_by_this_user_do_not_stop_the_arena_from_growing) {
    planted_names_do_not_matter(0);
}

Test(shm_private, names_planted_by_another_user_do_not_stop_the_arena_from_growing) {
    if (geteuid() != 0) cr_skip_test("not root: cannot plant as another user");
    planted_names_do_not_matter(65534); /* nobody */
}

/* ---- SIGKILL of host and worker at any instant ------------------------------ */

/* A host that opens a worker-mode component, grows its arena call by call
 * (each new segment is handed to the worker before the call that names
 * it), closes it and starts over, until it is killed. */
_Noreturn static void host_loop(const memcg *cg) {
    if (cg && memcg_enter(cg) != 0) _exit(3);
    for (;;) {
        tsr_options *o = tsr_options_new();
        tsr_error err = TSR_ERROR_INIT;
        tsr_component *c = NULL;
        if (!o || tsr_options_set(o, "mode", "worker", &err) != 0 ||
            tsr_options_set(o, "transport", "shm", &err) != 0 ||
            tsr_open(BUNDLED_PLUGIN("noop"), o, &c, &err) != 0)
            _exit(4);
        tsr_options_free(o);
        void *kept[12];
        for (int j = 0; j < 12; j++) {
            int64_t n = (int64_t)(j + 1) * 32768; /* 256 KiB more each time */
            double *x = kept[j] = tsr_component_alloc(c, (size_t)n * sizeof *x);
            if (!x) _exit(5);
            memset(x, 0, (size_t)n * sizeof *x);
            tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
            tsr_array xa = {.data = x, .dtype = TSR_FLOAT64, .rank = 1, .shape = {n}};
            if (!call || tsr_call_set_input(call, "x", &xa) != 0 || tsr_call_run(call) != 0)
                _exit(6);
            tsr_call_free(call);
        }
        for (int j = 0; j < 12; j++) tsr_component_free_buffer(c, kept[j]);
        tsr_close(c);
    }
}

/* The live children of this process now (workers of a killed host land
 * here: this process is their subreaper), up to max. */
static int my_children(pid_t *out, int max) { return children_of(getpid(), out, max); }

/* Reap pid, whichever way it ended; 1 if it was a child to reap. */
static int reap_pid(pid_t pid) {
    while (waitpid(pid, NULL, 0) < 0)
        if (errno != EINTR) return 0;
    return 1;
}

Test(shm_private, host_and_worker_killed_together_at_random_instants_leave_nothing) {
    memcg cg;
    int have_cg = memcg_create(&cg, "kill") == 0;
    if (!have_cg)
        cr_log_warn("no memory cgroup of our own: shared memory still charged is not checked");
    /* Workers whose host is killed become this process's children, so
     * that the test can kill and reap them as well. */
    cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    srand(seed);
    cr_log_info("seed %u", seed);
    for (int round = 0; round < 8; round++) {
        pid_t host = fork();
        cr_assert_geq(host, 0);
        if (host == 0) host_loop(have_cg ? &cg : NULL);
        /* 0 to 400 ms: before the component is open, while the worker
         * starts, while segments are made and handed over, mid-call, in
         * tsr_close. */
        long delay_us = rand() % 400000;
        struct timespec nap = {delay_us / 1000000, (delay_us % 1000000) * 1000};
        nanosleep(&nap, NULL);
        long long before = have_cg ? memcg_shmem(&cg) : -1;
        pid_t workers[8];
        int n_workers = children_of(host, workers, 8), seen = n_workers;
        cr_assert_eq(kill(host, SIGKILL), 0);
        for (int i = 0; i < n_workers; i++) kill(workers[i], SIGKILL);
        int status;
        cr_assert_eq(waitpid(host, &status, 0), host);
        cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "round %d (%ld us): the host ended otherwise (status %#x)", round, delay_us,
                  status);
        /* A worker started after the snapshot exits by itself once its
         * host is gone; kill and reap whatever is left. */
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (;;) {
            pid_t kids[8];
            int n = my_children(kids, 8);
            for (int i = 0; i < n; i++) kill(kids[i], SIGKILL);
            for (int i = 0; i < n_workers; i++) reap_pid(workers[i]);
            n_workers = 0;
            while (waitpid(-1, NULL, WNOHANG) > 0) {
            }
            if (n == 0 || ms_since(&t0) > 10000) break;
            sleep_ms(5);
        }
        cr_expect_eq(my_children((pid_t[8]){0}, 8), 0, "round %d: a process is left", round);
        cr_expect_eq(shm_entries_of(host), 0, "round %d (%ld us): entries of the host in /dev/shm",
                     round, delay_us);
        if (!have_cg) continue;
        cr_log_info("round %d: killed after %ld us, %d worker(s), %lld bytes of shared memory",
                    round, delay_us, seen, before);
        /* Unnamed leftovers would still be charged to the cgroup. The
         * kernel frees the last of them (a segment in flight on the socket)
         * as it tears the processes down; give it a moment. */
        long long shmem = memcg_shmem(&cg);
        for (int i = 0; i < 200 && shmem != 0; i++) {
            sleep_ms(10);
            shmem = memcg_shmem(&cg);
        }
        cr_expect_eq(shmem, 0, "round %d (%ld us): %lld bytes of shared memory outlive host and "
                               "worker", round, delay_us, shmem);
    }
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    if (have_cg) memcg_remove(&cg);
}
