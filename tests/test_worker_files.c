/* SPDX-License-Identifier: MIT */
/*
 * The files transport of worker mode: arrays cross through binref files in
 * a private spool directory instead of shared memory, when asked
 * (transport=files) or when shared memory cannot be had (transport=auto,
 * the default: memfd_create refused, or too little memory for the arena). Every bundled plugin gives the same bits and the same failures
 * as over shared memory; the spool is private, empty after every call,
 * after a worker's crash and after a timeout, and gone after close; both
 * file paths (io_uring and pread/pwrite) carry the same bytes; orphaned
 * spools of dead hosts are removed.
 */
#define _GNU_SOURCE
#include <sys/stat.h>

#include <tessera/payload.h>

#include "memcg_util.h"
#include "seccomp_util.h"
#include "temp_dir.h"
#include "worker_util.h"

/* Each test's spools go under a directory of its own, removed afterwards
 * with whatever a failed test left in it. */
static char parent[4096];

static void make_parent(void) { make_temp_dir(parent, sizeof parent, "tessera-files"); }

static void remove_parent(void) {
    expect_no_own_segments();
    remove_tree(parent);
}

TestSuite(files, .init = make_parent, .fini = remove_parent, .timeout = 60);

/* ---- the spool, seen from outside ------------------------------------------ */

/* The one spool directory under parent, into path. */
static void the_spool(char *path, size_t size) {
    DIR *d = opendir(parent);
    cr_assert_not_null(d, "cannot read %s", parent);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "tessera-spool-", 14) == 0) {
            int w = snprintf(path, size, "%s/%s", parent, e->d_name);
            cr_assert(w > 0 && (size_t)w < size, "spool path too long");
            n++;
        }
    closedir(d);
    cr_assert_eq(n, 1, "%d spool directories in %s, 1 expected", n, parent);
}

static void expect_empty_spool(const char *when) {
    char spool[4096];
    the_spool(spool, sizeof spool);
    cr_expect_eq(dir_entries(spool, ""), 0, "%s: %d files left in the spool", when,
                 dir_entries(spool, ""));
}

/* Options for a worker with transport=files whose spool goes under parent. */
static tsr_options *files_options(void) {
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_option(o, "transport", "files");
    set_option(o, "spool_dir", parent);
    return o;
}

/* ---- the same bits over shared memory and over files ----------------------- */

/* Values valid for every dtype and every bundled plugin's domain. */
static void fill_values(void *p, tsr_dtype dtype, int64_t count, uint64_t seed) {
    uint64_t s = seed * 2654435761ull + 7;
    for (int64_t i = 0; i < count; i++) {
        double v = 0.75 + 0.5 * rand_unit(&s); /* in [0.25, 1.25) */
        switch (dtype) {
        case TSR_FLOAT64: ((double *)p)[i] = v; break;
        case TSR_FLOAT32: ((float *)p)[i] = (float)v; break;
        case TSR_FLOAT16: /* 0.5 to 1 */
            ((uint16_t *)p)[i] = (uint16_t)(0x3800 + (i * 37 + (int64_t)seed) % 1024);
            break;
        case TSR_COMPLEX128:
            ((double *)p)[2 * i] = v;
            ((double *)p)[2 * i + 1] = -v;
            break;
        case TSR_COMPLEX64:
            ((float *)p)[2 * i] = (float)v;
            ((float *)p)[2 * i + 1] = (float)-v;
            break;
        case TSR_BOOL: ((uint8_t *)p)[i] = (uint8_t)((i + (int64_t)seed) % 2); break;
        default: { /* integers: 2, 3 or 4 in the low byte */
            uint8_t *e = (uint8_t *)p + (size_t)i * tsr_dtype_size(dtype);
            memset(e, 0, tsr_dtype_size(dtype));
            e[0] = (uint8_t)(2 + i % 3);
        }
        }
    }
}

typedef struct arrays {
    int32_t n;
    tsr_array a[16];
    void *data[16];
} arrays;

/* One array per input, each symbolic or free dim of size n (fixed dims as
 * declared). */
static void make_inputs(arrays *out, const tsr_component *c, int64_t n, uint64_t seed) {
    memset(out, 0, sizeof *out);
    out->n = tsr_component_n_inputs(c);
    cr_assert_leq(out->n, 16);
    for (int32_t i = 0; i < out->n; i++) {
        const tsr_field *f = tsr_component_input(c, i);
        int64_t shape[TSR_MAX_FIELD_RANK], count = 1;
        for (int32_t d = 0; d < f->rank; d++) {
            shape[d] = f->dims[d].symbol || f->dims[d].size < 0 ? n : f->dims[d].size;
            count *= shape[d];
        }
        out->data[i] = calloc((size_t)count + 1, tsr_dtype_size(f->dtype));
        cr_assert_not_null(out->data[i]);
        fill_values(out->data[i], f->dtype, count, seed + (uint64_t)i);
        out->a[i] = make_array(out->data[i], f->dtype, f->rank, shape);
    }
}

static void free_arrays(arrays *a) {
    for (int32_t i = 0; i < a->n; i++) free(a->data[i]);
}

/* What a run gave, appended to a log: the code and message, or every
 * result's header and bytes. Two logs are equal iff the runs were. */
typedef struct run_log {
    size_t len, cap;
    char *text;
} run_log;

static void log_bytes(run_log *l, const void *p, size_t n) {
    if (l->len + n > l->cap) {
        l->cap = (l->len + n) * 2 + 256;
        l->text = realloc(l->text, l->cap);
        cr_assert_not_null(l->text);
    }
    memcpy(l->text + l->len, p, n);
    l->len += n;
}

static void log_run(run_log *l, tsr_call *call, int rc, const char *label) {
    log_bytes(l, label, strlen(label) + 1);
    log_bytes(l, &rc, sizeof rc);
    if (rc) {
        log_bytes(l, tsr_call_errmsg(call), strlen(tsr_call_errmsg(call)) + 1);
        return;
    }
    for (int32_t k = 0; k < tsr_call_n_results(call); k++) {
        const tsr_array *r = tsr_call_result(call, k);
        log_bytes(l, &r->dtype, sizeof r->dtype);
        log_bytes(l, &r->rank, sizeof r->rank);
        log_bytes(l, r->shape, (size_t)r->rank * sizeof(int64_t));
        int64_t count = 1;
        for (int32_t d = 0; d < r->rank; d++) count *= r->shape[d];
        if (r->data) log_bytes(l, r->data, (size_t)count * tsr_dtype_size(r->dtype));
    }
}

static void bind_arrays(tsr_call *call, const arrays *in, int with_data) {
    for (int32_t i = 0; i < in->n; i++) {
        tsr_array a = in->a[i];
        if (!with_data) a.data = NULL;
        cr_assert_eq(tsr_call_set_input_at(call, i, &a), 0, "%s", tsr_call_errmsg(call));
    }
}

/* apply, abstract_eval, jacobian, jvp and vjp with every differentiable
 * field, and a batch of apply; all of it logged. */
static void script(tsr_component *c, int64_t n, run_log *l) {
    arrays in;
    make_inputs(&in, c, n, 100);
    tsr_call *apply = new_call(c, TSR_EP_APPLY);
    bind_arrays(apply, &in, 1);
    int apply_rc = tsr_call_run(apply);
    log_run(l, apply, apply_rc, "apply");
    tsr_call *ae = new_call(c, TSR_EP_ABSTRACT_EVAL);
    bind_arrays(ae, &in, 0);
    log_run(l, ae, tsr_call_run(ae), "abstract_eval");
    tsr_call_free(ae);

    const char *ins[16], *outs[16];
    int32_t n_in = 0, n_out = 0;
    cr_assert_leq(tsr_component_n_outputs(c), 16);
    for (int32_t i = 0; i < tsr_component_n_inputs(c); i++)
        if (tsr_component_input(c, i)->flags & TSR_FIELD_DIFFERENTIABLE)
            ins[n_in++] = tsr_component_input(c, i)->name;
    for (int32_t o = 0; o < tsr_component_n_outputs(c); o++)
        if (tsr_component_output(c, o)->flags & TSR_FIELD_DIFFERENTIABLE)
            outs[n_out++] = tsr_component_output(c, o)->name;
    if (n_in && n_out) {
        static const tsr_endpoint eps[] = {TSR_EP_JACOBIAN, TSR_EP_JVP, TSR_EP_VJP};
        for (int e = 0; e < 3; e++) {
            if (!tsr_component_has_endpoint(c, eps[e]) || (eps[e] == TSR_EP_VJP && apply_rc)) continue;
            tsr_call *call = new_call(c, eps[e]);
            bind_arrays(call, &in, 1);
            wrt_ok(call, ins, n_in, outs, n_out);
            arrays seeds = {0};
            int32_t n_seeds = eps[e] == TSR_EP_JVP ? n_in : eps[e] == TSR_EP_VJP ? n_out : 0;
            for (int32_t k = 0; k < n_seeds; k++) {
                tsr_array a = eps[e] == TSR_EP_JVP ? in.a[tsr_component_find_input(c, ins[k])]
                                                   : *tsr_call_output(apply, outs[k]);
                int64_t count = 1;
                for (int32_t d = 0; d < a.rank; d++) count *= a.shape[d];
                seeds.data[k] = calloc((size_t)count + 1, tsr_dtype_size(a.dtype));
                fill_values(seeds.data[k], a.dtype, count, 300 + (uint64_t)k);
                a.data = seeds.data[k];
                seed_ok(call, eps[e] == TSR_EP_JVP ? ins[k] : outs[k], a);
            }
            seeds.n = n_seeds;
            log_run(l, call, tsr_call_run(call), tsr_endpoint_name(eps[e]));
            tsr_call_free(call);
            free_arrays(&seeds);
        }
    }
    tsr_call_free(apply);
    free_arrays(&in);
}

/* The batch of a component whose results the host sizes: 3 items over 2
 * workers, each lane with its own files. */
static void batch_script(tsr_component *c, int64_t n, run_log *l) {
    arrays in;
    make_inputs(&in, c, n, 500);
    arrays batch = in;
    for (int32_t i = 0; i < in.n; i++) {
        tsr_array *a = &batch.a[i];
        size_t bytes = tsr_dtype_size(a->dtype);
        for (int32_t d = 0; d < a->rank; d++) bytes *= (size_t)a->shape[d];
        batch.data[i] = calloc(3 * bytes + 1, 1);
        for (int item = 0; item < 3; item++) {
            memcpy((char *)batch.data[i] + item * bytes, in.data[i], bytes);
            ((char *)batch.data[i])[item * bytes] ^= (char)item; /* items differ */
        }
        memmove(a->shape + 1, a->shape, (size_t)a->rank * sizeof(int64_t));
        a->shape[0] = 3;
        a->rank++;
        a->data = batch.data[i];
    }
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_arrays(call, &batch, 1);
    log_run(l, call, tsr_call_run_batch(call, 3), "batch");
    tsr_call_free(call);
    free_arrays(&batch);
    free_arrays(&in);
}

/* Two workers, so that batches run two lanes with files of their own. */
static tsr_component *open_transport(const char *path, const char *transport, const char *key,
                                     const char *value) {
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_option(o, "transport", transport);
    set_option(o, "spool_dir", parent);
    set_option(o, "workers", "2");
    if (key) set_config(o, key, value);
    tsr_component *c = open_ok(path, o);
    tsr_options_free(o);
    return c;
}

/* The script over shared memory and over files gives the same log, and
 * the spool is empty after it and gone after close. */
static void transports_agree(const char *path, const char *key, const char *value,
                             const int64_t *sizes, int n_sizes, int batch) {
    /* a plugin this build should have made: its absence is a failure, not a skip */
    cr_assert_eq(access(path, R_OK), 0, "%s is missing: %s", path, strerror(errno));
    tsr_component *shm = open_transport(path, "shm", key, value);
    tsr_component *files = open_transport(path, "files", key, value);
    for (int s = 0; s < n_sizes; s++) {
        run_log a = {0}, b = {0};
        script(shm, sizes[s], &a);
        script(files, sizes[s], &b);
        if (batch) {
            batch_script(shm, sizes[s], &a);
            batch_script(files, sizes[s], &b);
        }
        cr_expect(a.len == b.len && memcmp(a.text, b.text, a.len) == 0,
                  "%s, n = %lld: files and shared memory disagree", path, (long long)sizes[s]);
        free(a.text);
        free(b.text);
        expect_empty_spool(path);
    }
    tsr_stats st = stats_of(files);
    cr_expect_eq(st.bytes_by_ref, 0, "nothing crosses by reference through files");
    tsr_close(files);
    tsr_close(shm);
    cr_expect_eq(dir_entries(parent, ""), 0, "%s: the spool outlived tsr_close", path);
}

Test(files, bundled_plugins_give_the_same_bits_over_files_as_over_shared_memory) {
    const int64_t sizes[] = {0, 1, 6};
    transports_agree(BUNDLED_PLUGIN("noop"), NULL, NULL, sizes, 3, 1);
    transports_agree(BUNDLED_PLUGIN("vectoradd"), NULL, NULL, sizes + 1, 2, 1);
    /* n = 1 is refused by the plugin: the same message either way */
    transports_agree(BUNDLED_PLUGIN("rosenbrock"), NULL, NULL, sizes + 1, 2, 1);
    transports_agree(BUNDLED_PLUGIN("heat"), NULL, NULL, sizes + 1, 2, 0);
    /* y's length comes from the matrix file: every result is allocated on
     * the plugin's request (tsr_ctx_alloc); x of 5 is refused */
    const int64_t linear_sizes[] = {4, 5};
    transports_agree(BUNDLED_PLUGIN("linear"), "matrix", LINEAR_MATRIX_FILE, linear_sizes, 2, 0);
}

#ifndef TSR_HAVE_LEGACY_EXAMPLES
#error "tests/CMakeLists.txt says whether the legacy examples are built (TSR_HAVE_LEGACY_EXAMPLES)"
#endif
#if TSR_HAVE_LEGACY_EXAMPLES
/* The manifests of the legacy examples, built with TESSERA_BUILD_LEGACY_EXAMPLES. */
Test(files, legacy_examples_give_the_same_bits_over_files_as_over_shared_memory) {
    const int64_t sizes[] = {1, 6};
    transports_agree(TSR_PLUGIN_DIR "/dgemv.json", NULL, NULL, sizes, 2, 0);
    transports_agree(TSR_PLUGIN_DIR "/rdstep.json", NULL, NULL, sizes, 2, 0);
}
#endif

Test(files, every_dtype_and_derivatives_by_finite_differences_cross_unchanged) {
    const int64_t sizes[] = {0, 3};
    /* float64, int32, bool, float32, complex128; a wildcard-shaped result
     * the plugin sizes itself */
    transports_agree(TEST_PLUGIN("payload_fields"), NULL, NULL, sizes, 2, 0);
    /* float16 and int64 too */
    transports_agree(TEST_PLUGIN("mixed_dtypes"), NULL, NULL, sizes + 1, 1, 0);
    /* jvp, vjp and jacobian served by finite differences of apply */
    transports_agree(TEST_PLUGIN("fd_central"), NULL, NULL, sizes + 1, 1, 0);
}

/* ---- the spool's life -------------------------------------------------------- */

Test(files, the_spool_is_private_and_empty_between_calls_and_gone_after_close) {
    char spool[4096];
    tsr_options *o = files_options();
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), o);
    tsr_options_free(o);
    the_spool(spool, sizeof spool);
    struct stat st;
    cr_assert_eq(stat(spool, &st), 0);
    cr_expect(S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700, "mode %o", st.st_mode & 0777);
    cr_expect_eq(st.st_uid, geteuid());
    cr_expect_eq(dir_entries(spool, ""), 0, "the channel's file has a name");
    cr_expect_eq(shm_entries_of(getpid()), 0, "the files transport used /dev/shm");

    /* an input from tsr_component_alloc is ordinary memory here, copied like any other */
    int64_t n = 1000;
    double *x = tsr_component_alloc(c, (size_t)n * sizeof *x);
    cr_assert_not_null(x);
    fill_random(x, n, 3);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, n));
    for (int i = 0; i < 3; i++) {
        x[0] = i;
        run_ok(call);
        const tsr_array *y = tsr_call_output(call, "y");
        cr_assert_not_null(y);
        cr_expect_eq(y->shape[0], n);
        cr_expect(memcmp(y->data, x, (size_t)n * sizeof *x) == 0, "y differs from x");
        cr_expect_eq(dir_entries(spool, ""), 0, "call %d left files in the spool", i);
    }
    tsr_stats s = stats_of(c);
    cr_expect_eq(s.bytes_copied, 3 * (uint64_t)n * sizeof *x);
    cr_expect_eq(s.bytes_by_ref, 0);
    tsr_call_free(call);
    tsr_component_free_buffer(c, x);
    tsr_close(c);
    cr_expect_eq(dir_entries(parent, ""), 0, "the spool outlived tsr_close");
}

Test(files, a_worker_that_crashes_leaves_nothing_in_the_spool) {
    tsr_options *o = files_options();
    set_option(o, "restart", "auto");
    set_config(o, "fault", "segv");
    set_config(o, "when", "call:2"); /* each worker's second call */
    tsr_component *c = open_ok(TEST_PLUGIN("crash"), o);
    tsr_options_free(o);
    double x[4] = {1, 2, 3, 4};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 4));
    run_ok(call);
    expect_empty_spool("after a call");
    assert_contains(run_fails(call, TSR_E_WORKER), "signal 11");
    expect_empty_spool("after the crash");
    cr_expect_eq(stats_of(c).worker_deaths, 1);
    run_ok(call); /* the restarted worker */
    cr_expect(memcmp(tsr_call_output(call, "y")->data, x, sizeof x) == 0);
    expect_empty_spool("after the call that followed");
    tsr_call_free(call);
    tsr_close(c);
    cr_expect_eq(dir_entries(parent, ""), 0, "the spool outlived tsr_close");
}

Test(files, a_call_that_times_out_leaves_nothing_in_the_spool) {
    /* hang's apply never returns: the worker is killed after 100 ms */
    tsr_options *o = files_options();
    set_option(o, "timeout_ms", "100");
    tsr_component *c = open_ok(TEST_PLUGIN("hang"), o);
    tsr_options_free(o);
    double x[4] = {1, 2, 3, 4};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 4));
    run_fails(call, TSR_E_TIMEOUT);
    expect_empty_spool("after the timeout");
    tsr_call_free(call);
    tsr_close(c);
    cr_expect_eq(dir_entries(parent, ""), 0, "the spool outlived tsr_close");
}

Test(files, spools_of_dead_hosts_are_removed_and_live_ones_kept) {
    char dead[4096 + 96], live[4096 + 96];
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) _exit(0);
    cr_assert_eq(waitpid(child, NULL, 0), child);
    /* the reaped child's pid (free now, or another process's since) */
    snprintf(dead, sizeof dead, "%s/tessera-spool-%ld-12345-0123456789abcdef", parent, (long)child);
    cr_assert_eq(mkdir(dead, 0700), 0);
    char inner[sizeof dead + 16];
    snprintf(inner, sizeof inner, "%s/w0-in-0.bin", dead);
    FILE *f = fopen(inner, "w");
    cr_assert_not_null(f);
    fclose(f);
    /* this process's own name: it lives */
    unsigned long long start = 0;
    FILE *stat_file = fopen("/proc/self/stat", "r");
    cr_assert_not_null(stat_file);
    char buf[1024];
    size_t got = fread(buf, 1, sizeof buf - 1, stat_file);
    fclose(stat_file);
    buf[got] = '\0';
    const char *p = strrchr(buf, ')');
    cr_assert_not_null(p);
    cr_assert_eq(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
                               "%*d %*d %*d %*d %llu", &start), 1);
    snprintf(live, sizeof live, "%s/tessera-spool-%ld-%llu-fedcba9876543210", parent,
             (long)getpid(), start);
    cr_assert_eq(mkdir(live, 0700), 0);

    tsr_options *o = files_options();
    tsr_component *c = open_ok(BUNDLED_PLUGIN("noop"), o);
    tsr_options_free(o);
    cr_expect_neq(access(dead, F_OK), 0, "the dead host's spool is still there");
    cr_expect_eq(access(live, F_OK), 0, "a live host's spool was removed");
    tsr_close(c);
    cr_expect_eq(access(live, F_OK), 0, "a live host's spool was removed at close");
    cr_expect_eq(dir_entries(parent, ""), 1);
}

/* spawn=fork (in a single-threaded child) and a relative spool_dir with
 * a worker that runs elsewhere (cwd=/): the worker finds the spool. */
static const char *forked_worker_with_relative_spool(void) {
    if (chdir(parent) != 0) return "cannot enter the directory";
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    if (!o || tsr_options_set(o, "mode", "worker", &err) ||
        tsr_options_set(o, "spawn", "fork", &err) ||
        tsr_options_set(o, "transport", "files", &err) ||
        tsr_options_set(o, "spool_dir", ".", &err) || tsr_options_set(o, "cwd", "/", &err))
        return "options";
    tsr_component *c = NULL;
    int rc = tsr_open(BUNDLED_PLUGIN("noop"), o, &c, &err);
    tsr_options_free(o);
    CHECK(rc == 0, "tsr_open: %s", err.message);
    double x[3] = {1, -2, 3};
    tsr_array xa = {x, TSR_FLOAT64, 1, {3}};
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    if (!call || tsr_call_set_input(call, "x", &xa) != 0) return "binding";
    CHECK(tsr_call_run(call) == 0, "the call: %s", tsr_call_errmsg(call));
    if (memcmp(tsr_call_result(call, 0)->data, x, sizeof x) != 0) return "y differs from x";
    tsr_call_free(call);
    tsr_close(c);
    if (dir_entries(".", "") != 0) return "the spool outlived tsr_close";
    return "ok";
}

Test(files, a_forked_worker_finds_a_relative_spool_from_another_directory) {
    run_in_child(forked_worker_with_relative_spool, NULL);
}

/* ---- io_uring and pread/pwrite ----------------------------------------------- */

/* 1 MiB arrays (past the size below which auto takes pread/pwrite anyway)
 * through both paths: the bytes of vectoradd's result are those in
 * process. */
Test(files, io_uring_and_pread_pwrite_carry_the_same_bytes) {
    int64_t n = 128 * 1024;
    double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b), s = 0.5;
    cr_assert(a && b);
    fill_random(a, n, 11);
    fill_random(b, n, 12);
    tsr_component *inproc = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    tsr_call *ref = new_call(inproc, TSR_EP_APPLY);
    bind_ok(ref, "a", f64_vec(a, n));
    bind_ok(ref, "b", f64_vec(b, n));
    bind_ok(ref, "s", f64_scalar(&s));
    run_ok(ref);
    const char *why_not = NULL;
    int uring = strcmp(tsr_file_io_backend(&why_not), "io_uring") == 0;
    static const char *const ios[] = {"io_uring", "posix", "auto"};
    for (int i = 0; i < 3; i++) {
        tsr_options *o = files_options();
        set_option(o, "file_io", ios[i]);
        tsr_component *c = NULL;
        tsr_error err = TSR_ERROR_INIT;
        int rc = tsr_open(BUNDLED_PLUGIN("vectoradd"), o, &c, &err);
        tsr_options_free(o);
        if (i == 0 && !uring) {
            /* refused at open, saying why */
            assert_code(rc, TSR_E_IO, err.message);
            assert_contains(err.message, "io_uring");
            cr_log_info("io_uring does not work here (%s): only pread/pwrite checked", why_not);
            continue;
        }
        cr_assert_eq(rc, 0, "file_io=%s: %s", ios[i], err.message);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "a", f64_vec(a, n));
        bind_ok(call, "b", f64_vec(b, n));
        bind_ok(call, "s", f64_scalar(&s));
        run_ok(call);
        const tsr_array *want = tsr_call_result(ref, 0), *got = tsr_call_result(call, 0);
        cr_expect(got->shape[0] == n && memcmp(got->data, want->data, (size_t)n * 8) == 0,
                  "file_io=%s: the result differs", ios[i]);
        expect_empty_spool(ios[i]);
        tsr_call_free(call);
        tsr_close(c);
    }
    tsr_call_free(ref);
    tsr_close(inproc);
    free(a);
    free(b);
    cr_expect_eq(dir_entries(parent, ""), 0);
}

/* ---- options ------------------------------------------------------------------ */

Test(files, bad_transport_options_are_refused_naming_them) {
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    assert_code(tsr_options_set(o, "transport", "pigeon", &err), TSR_E_ARGUMENT, err.message);
    assert_contains(err.message, "auto, shm or files");
    assert_code(tsr_options_set(o, "file_io", "mmap", &err), TSR_E_ARGUMENT, err.message);
    assert_contains(err.message, "file_io");
    assert_code(tsr_options_set(o, "spool_dir", "", &err), TSR_E_ARGUMENT, err.message);
    tsr_options_free(o);

    o = files_options();
    set_option(o, "spool_dir", "/nonexistent/tessera-spool-parent");
    tsr_error e = open_fails(BUNDLED_PLUGIN("noop"), o);
    tsr_options_free(o);
    cr_expect_eq(e.code, TSR_E_IO);
    assert_contains(e.message, "/nonexistent/tessera-spool-parent");
}

/* ---- automatic fallback ----------------------------------------------------------- */

static char logged[4 * TSR_ERRMSG_MAX];

static void keep_log(void *user, tsr_log_level level, const char *component, const char *msg) {
    (void)user;
    (void)component;
    if (level == TSR_LOG_INFO && strlen(logged) + strlen(msg) + 2 < sizeof logged) {
        strcat(logged, msg);
        strcat(logged, "\n");
    }
}

/* In this (child) process: shared memory made unusable, as a container's
 * seccomp policy may (memfd_create refused), or too little memory for the
 * arena (a memory cgroup of the test's own, limited to what the child uses
 * plus 512 KiB).
 * "skip" without the privilege. */
static memcg cg;

static const char *shm_unusable(int no_memory) {
    if (!no_memory) return forbid_syscall(SYS_memfd_create) == 0 ? NULL : "skip";
    long long used;
    if (memcg_enter(&cg) != 0 || (used = memcg_usage(&cg)) < 0 ||
        memcg_set_limit(&cg, (uint64_t)used + (512 << 10)) != 0)
        return "skip";
    return NULL;
}

static const char *fallback_in(int no_memory) {
    const char *why = shm_unusable(no_memory);
    if (why) return why;
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    CHECK(o && tsr_options_set(o, "mode", "worker", &err) == 0 &&
              tsr_options_set(o, "spool_dir", parent, &err) == 0 &&
              tsr_options_set(o, "log_level", "info", &err) == 0,
          "options");
    tsr_options_set_log(o, keep_log, NULL);
    tsr_component *c = NULL;
    int rc = tsr_open(BUNDLED_PLUGIN("vectoradd"), o, &c, &err);
    CHECK(rc == 0, "tsr_open with shared memory unusable: %s", err.message);
    CHECK(strstr(logged, "shared memory is unusable") && strstr(logged, "through files in"),
          "nothing logged at INFO about the fallback: '%.1000s'", logged);
    CHECK(strstr(logged, no_memory ? "not enough memory for arena segment 0"
                                   : "memfd_create): Operation not permitted"),
          "the cause is not logged: '%.1000s'", logged);
    double a[3] = {1, 2, 3}, b[3] = {10, 20, 30}, s = 2;
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    tsr_array aa = {a, TSR_FLOAT64, 1, {3}}, ba = {b, TSR_FLOAT64, 1, {3}};
    tsr_array sa = {&s, TSR_FLOAT64, 0, {0}};
    CHECK(call && tsr_call_set_input(call, "a", &aa) == 0 &&
              tsr_call_set_input(call, "b", &ba) == 0 && tsr_call_set_input(call, "s", &sa) == 0,
          "binding");
    rc = tsr_call_run(call);
    CHECK(rc == 0, "the call over files: %s", tsr_call_errmsg(call));
    const double *y = tsr_call_result(call, 0)->data;
    CHECK(y[0] == 12 && y[1] == 24 && y[2] == 36, "wrong result %g %g %g", y[0], y[1], y[2]);
    tsr_call_free(call);
    tsr_close(c);
    CHECK(dir_entries(parent, "") == 0, "the spool outlived tsr_close");
    CHECK(memfds_held(getpid()) == 0, "shared memory is held");
    /* shared memory only: refused */
    CHECK(tsr_options_set(o, "transport", "shm", &err) == 0, "option");
    rc = tsr_open(BUNDLED_PLUGIN("vectoradd"), o, &c, &err);
    CHECK(rc == TSR_E_SHM && c == NULL, "transport=shm gave %d: %s", rc, err.message);
    tsr_options_free(o);
    return "ok";
}

static const char *fallback_when_memfd_is_refused(void) { return fallback_in(0); }
static const char *fallback_when_memory_is_short(void) { return fallback_in(1); }

Test(files, memfd_refused_by_policy_makes_workers_fall_back_to_files) {
    run_in_child(fallback_when_memfd_is_refused, "no seccomp filter for this architecture");
}

Test(files, too_little_memory_for_the_arena_makes_workers_fall_back_to_files) {
    if (!MEMCG_TIGHT_LIMITS_WORK) cr_skip_test("sanitizer and coverage builds need more than 512 KiB of room");
    if (memcg_create(&cg, "files") != 0) cr_skip_test("no memory cgroup of our own can be made");
    run_in_child(fallback_when_memory_is_short, "cannot limit the child's memory");
    memcg_remove(&cg);
}
