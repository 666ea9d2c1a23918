/* SPDX-License-Identifier: MIT */
/*
 * Pools and batches: a component opened with several workers serves
 * concurrent calls from several threads in different workers, with every
 * result its own; tsr_call_run_batch gives, item for item, the bits that
 * separate calls give, inproc and spread over a pool, and reports a
 * failing item by its index.
 */
#include "worker_util.h"

TestSuite(pool, .fini = expect_no_own_segments, .timeout = 60);

static tsr_component *open_pool(const char *path, tsr_mode mode, const char *workers,
                                const char *key, const char *value) {
    tsr_options *o = mode_options(mode);
    if (workers) set_option(o, "workers", workers);
    if (key) set_config(o, key, value);
    tsr_component *c = open_ok(path, o);
    tsr_options_free(o);
    return c;
}

static int is_child(pid_t pid) {
    pid_t kids[16];
    int n = children_of(getpid(), kids, 16);
    for (int i = 0; i < n; i++)
        if (kids[i] == pid) return 1;
    return 0;
}

/* ---- concurrent calls ----------------------------------------------------------- */

typedef struct whoami_job {
    tsr_component *c;
    pthread_barrier_t *start;
    double x[3];
    int64_t pid;
    int rc;
    char msg[TSR_ERRMSG_MAX];
    double y[3];
} whoami_job;

static void *whoami_thread(void *arg) {
    whoami_job *j = arg;
    tsr_call *call = tsr_call_new(j->c, TSR_EP_APPLY);
    tsr_array x = {.data = j->x, .dtype = TSR_FLOAT64, .rank = 1, .shape = {3}};
    j->rc = call ? tsr_call_set_input(call, "x", &x) : TSR_E_NOMEM;
    pthread_barrier_wait(j->start);
    if (!j->rc) j->rc = tsr_call_run(call);
    if (!j->rc) {
        j->pid = *(const int64_t *)tsr_call_output(call, "pid")->data;
        memcpy(j->y, tsr_call_output(call, "y")->data, sizeof j->y);
    } else if (call) {
        snprintf(j->msg, sizeof j->msg, "%s", tsr_call_errmsg(call));
    }
    tsr_call_free(call);
    return NULL;
}

Test(pool, two_threads_calling_at_once_are_served_by_two_workers) {
    /* each call holds its worker for 100 ms, so calls started together
     * overlap; a few rounds make a slow thread start harmless */
    tsr_component *c = open_pool(TEST_PLUGIN("whoami"), TSR_MODE_WORKER, "2", "sleep_ms", "100");
    cr_expect_eq(stats_of(c).worker_starts, 2);
    int distinct = 0;
    for (int round = 0; round < 5 && !distinct; round++) {
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, 2);
        whoami_job j[2];
        pthread_t t[2];
        for (int k = 0; k < 2; k++) {
            memset(&j[k], 0, sizeof j[k]);
            j[k].c = c;
            j[k].start = &start;
            for (int i = 0; i < 3; i++) j[k].x[i] = 100 * round + 10 * k + i;
            cr_assert_eq(pthread_create(&t[k], NULL, whoami_thread, &j[k]), 0);
        }
        for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
        pthread_barrier_destroy(&start);
        for (int k = 0; k < 2; k++) {
            cr_assert_eq(j[k].rc, 0, "thread %d: %s", k, j[k].msg);
            cr_assert_arr_eq(j[k].y, j[k].x, sizeof j[k].x, "thread %d got another's result", k);
            cr_assert(is_child((pid_t)j[k].pid), "pid %ld is not one of the workers",
                      (long)j[k].pid);
        }
        distinct = j[0].pid != j[1].pid;
    }
    cr_expect(distinct, "in 5 rounds of overlapping calls one worker served both threads");
    tsr_close(c);
}

typedef struct adder_job {
    tsr_component *c;
    int id, calls;
    int failures;
    char msg[TSR_ERRMSG_MAX];
} adder_job;

/* Many vectoradd calls with inputs of this thread only; every result is
 * checked. */
static void *adder_thread(void *arg) {
    adder_job *j = arg;
    tsr_call *call = tsr_call_new(j->c, TSR_EP_APPLY);
    double a[4], b[4], s;
    for (int k = 0; k < j->calls && call; k++) {
        for (int i = 0; i < 4; i++) {
            a[i] = j->id * 1000 + k;
            b[i] = i;
        }
        s = 2;
        tsr_array aa = {.data = a, .dtype = TSR_FLOAT64, .rank = 1, .shape = {4}};
        tsr_array ba = {.data = b, .dtype = TSR_FLOAT64, .rank = 1, .shape = {4}};
        tsr_array sa = {.data = &s, .dtype = TSR_FLOAT64, .rank = 0};
        tsr_call_set_input(call, "a", &aa);
        tsr_call_set_input(call, "b", &ba);
        tsr_call_set_input(call, "s", &sa);
        if (tsr_call_run(call) != 0) {
            snprintf(j->msg, sizeof j->msg, "%s", tsr_call_errmsg(call));
            j->failures++;
            continue;
        }
        const double *r = tsr_call_output(call, "result")->data;
        for (int i = 0; i < 4; i++)
            if (r[i] != a[i] * 2 + b[i]) {
                snprintf(j->msg, sizeof j->msg, "call %d: result[%d] = %g, expected %g", k, i,
                         r[i], a[i] * 2 + b[i]);
                j->failures++;
                break;
            }
    }
    if (!call) j->failures++;
    tsr_call_free(call);
    return NULL;
}

Test(pool, more_threads_than_workers_wait_their_turn_and_get_their_own_results) {
    tsr_component *c = open_pool(BUNDLED_PLUGIN("vectoradd"), TSR_MODE_WORKER, "2", NULL, NULL);
    adder_job j[5];
    pthread_t t[5];
    for (int k = 0; k < 5; k++) {
        j[k] = (adder_job){.c = c, .id = k + 1, .calls = 200};
        cr_assert_eq(pthread_create(&t[k], NULL, adder_thread, &j[k]), 0);
    }
    for (int k = 0; k < 5; k++) pthread_join(t[k], NULL);
    for (int k = 0; k < 5; k++) cr_expect_eq(j[k].failures, 0, "thread %d: %s", k, j[k].msg);
    tsr_stats s = stats_of(c);
    cr_expect_eq(s.calls, 5 * 200);
    cr_expect_eq(s.worker_starts, 2);
    cr_expect_eq(s.worker_deaths, 0);
    tsr_close(c);
}

/* ---- batches: the same bits as item by item ---------------------------------- */

/* Batched inputs for a component whose inputs are float64 scalars or
 * (n,) vectors: each gets a leading axis of `batch`. */
typedef struct batched {
    int64_t batch, n;
    int32_t n_in;
    tsr_array in[8];          /* batched */
    double *data[8];
    int32_t n_seed;
    tsr_array seed[8];        /* batched tangents or cotangents */
    double *seed_data[8];
} batched;

static tsr_array with_batch_axis(void *data, int32_t rank, const int64_t *shape, int64_t batch) {
    int64_t s[TSR_MAX_RANK];
    s[0] = batch;
    for (int32_t d = 0; d < rank; d++) s[d + 1] = shape[d];
    return make_array(data, TSR_FLOAT64, rank + 1, s);
}

static double *random_doubles(int64_t count, uint64_t seed) {
    double *p = calloc((size_t)count + 1, sizeof(double));
    cr_assert_not_null(p);
    fill_random(p, count, seed);
    return p;
}

static void make_batched(const tsr_component *c, int64_t batch, int64_t n, batched *b) {
    memset(b, 0, sizeof *b);
    b->batch = batch;
    b->n = n;
    b->n_in = tsr_component_n_inputs(c);
    for (int32_t i = 0; i < b->n_in; i++) {
        const tsr_field *f = tsr_component_input(c, i);
        int64_t shape[1] = {n};
        int64_t count = batch * (f->rank ? n : 1);
        b->data[i] = random_doubles(count, 31 * (uint64_t)i + (uint64_t)batch);
        b->in[i] = with_batch_axis(b->data[i], f->rank, shape, batch);
    }
}

/* Batched seeds: tangents of every input (jvp) or cotangents of every
 * output (vjp), of item ranks `ranks` (0, or 1 for (n,)). */
static void make_seeds(batched *b, int32_t count, const int32_t *ranks) {
    b->n_seed = count;
    for (int32_t k = 0; k < count; k++) {
        int64_t shape[1] = {b->n};
        b->seed_data[k] = random_doubles(b->batch * (ranks[k] ? b->n : 1), 500 + (uint64_t)k);
        b->seed[k] = with_batch_axis(b->seed_data[k], ranks[k], shape, b->batch);
    }
}

static void free_batched(batched *b) {
    for (int32_t i = 0; i < b->n_in; i++) free(b->data[i]);
    for (int32_t k = 0; k < b->n_seed; k++) free(b->seed_data[k]);
}

static tsr_array item_of(const tsr_array *a, int64_t i) {
    tsr_array s = *a;
    s.rank = a->rank - 1;
    memmove(s.shape, a->shape + 1, sizeof s.shape[0] * (size_t)s.rank);
    int64_t count = 1;
    for (int32_t d = 0; d < s.rank; d++) count *= s.shape[d];
    s.data = (char *)a->data + (size_t)(i * count) * tsr_dtype_size(a->dtype);
    return s;
}

typedef struct selection_names {
    const char *in[8], *out[8];
    int32_t n_in, n_out;
} selection_names;

/* Every input and every output (all differentiable in the plugins used
 * here), in schema order. */
static selection_names every_field(const tsr_component *c) {
    selection_names s;
    memset(&s, 0, sizeof s);
    for (int32_t i = 0; i < tsr_component_n_inputs(c); i++) s.in[s.n_in++] = tsr_component_input(c, i)->name;
    for (int32_t o = 0; o < tsr_component_n_outputs(c); o++) s.out[s.n_out++] = tsr_component_output(c, o)->name;
    return s;
}

static void prepare(tsr_call *call, const selection_names *sel) {
    if (sel) wrt_ok(call, sel->in, sel->n_in, sel->out, sel->n_out);
}

/* One endpoint as a batch and item by item in the same component: every
 * item of every batched result equals the item call's result, bit for
 * bit. The batched results are copied to *copy (for comparing modes). */
static size_t batch_matches_items(tsr_component *c, tsr_endpoint ep, const batched *b,
                                  unsigned char **copy) {
    selection_names sel = every_field(c);
    const selection_names *wrt = ep == TSR_EP_APPLY ? NULL : &sel;
    const char *const *seed_names = ep == TSR_EP_JVP ? sel.in : sel.out;

    tsr_call *batch = new_call(c, ep);
    prepare(batch, wrt);
    for (int32_t i = 0; i < b->n_in; i++)
        cr_assert_eq(tsr_call_set_input_at(batch, i, &b->in[i]), 0);
    for (int32_t k = 0; k < b->n_seed; k++) seed_ok(batch, seed_names[k], b->seed[k]);
    int rc = tsr_call_run_batch(batch, b->batch);
    cr_assert_eq(rc, 0, "%s batch of %lld: %s", tsr_endpoint_name(ep), (long long)b->batch,
                 tsr_call_errmsg(batch));
    int32_t n_res = tsr_call_n_results(batch);
    cr_assert_gt(n_res, 0);

    size_t total = 0;
    for (int32_t k = 0; k < n_res; k++) {
        const tsr_array *r = tsr_call_result(batch, k);
        cr_assert_eq(r->shape[0], b->batch, "result %d lacks the batch axis", k);
        int64_t count = 1;
        for (int32_t d = 0; d < r->rank; d++) count *= r->shape[d];
        total += (size_t)count * tsr_dtype_size(r->dtype);
    }
    *copy = malloc(total + 1);
    cr_assert_not_null(*copy);
    size_t at = 0;
    for (int32_t k = 0; k < n_res; k++) {
        const tsr_array *r = tsr_call_result(batch, k);
        int64_t count = 1;
        for (int32_t d = 0; d < r->rank; d++) count *= r->shape[d];
        memcpy(*copy + at, r->data, (size_t)count * tsr_dtype_size(r->dtype));
        at += (size_t)count * tsr_dtype_size(r->dtype);
    }

    tsr_call *item = new_call(c, ep);
    prepare(item, wrt);
    for (int64_t i = 0; i < b->batch; i++) {
        for (int32_t f = 0; f < b->n_in; f++) {
            tsr_array a = item_of(&b->in[f], i);
            cr_assert_eq(tsr_call_set_input_at(item, f, &a), 0);
        }
        for (int32_t k = 0; k < b->n_seed; k++) seed_ok(item, seed_names[k], item_of(&b->seed[k], i));
        run_ok(item);
        cr_assert_eq(tsr_call_n_results(item), n_res);
        for (int32_t k = 0; k < n_res; k++) {
            const tsr_array *whole = tsr_call_result(batch, k);
            const tsr_array *one = tsr_call_result(item, k);
            tsr_array part = item_of(whole, i);
            cr_assert_eq(part.rank, one->rank, "%s result %d: rank", tsr_endpoint_name(ep), k);
            for (int32_t d = 0; d < one->rank; d++) cr_assert_eq(part.shape[d], one->shape[d]);
            int64_t count = 1;
            for (int32_t d = 0; d < one->rank; d++) count *= one->shape[d];
            cr_assert(memcmp(part.data, one->data, (size_t)count * tsr_dtype_size(one->dtype)) == 0,
                      "%s, batch of %lld: item %lld of result %d differs from its own call",
                      tsr_endpoint_name(ep), (long long)b->batch, (long long)i, k);
        }
    }
    tsr_call_free(item);
    tsr_call_free(batch);
    return total;
}

/* apply, jvp, vjp and jacobian as batches of 1, 2 and 7, inproc and with
 * three workers: items match separate calls, and the modes match. */
static void batches_agree(const char *plugin, int64_t n, const int32_t *out_ranks) {
    tsr_component *c[2] = {open_pool(plugin, TSR_MODE_INPROC, NULL, NULL, NULL),
                           open_pool(plugin, TSR_MODE_WORKER, "3", NULL, NULL)};
    const int64_t sizes[] = {1, 2, 7};
    const tsr_endpoint eps[] = {TSR_EP_APPLY, TSR_EP_JVP, TSR_EP_VJP, TSR_EP_JACOBIAN};
    for (int s = 0; s < 3; s++) {
        for (int e = 0; e < 4; e++) {
            unsigned char *copy[2];
            size_t bytes[2];
            for (int m = 0; m < 2; m++) {
                batched b;
                make_batched(c[m], sizes[s], n, &b);
                int32_t in_ranks[8];
                for (int32_t i = 0; i < b.n_in; i++) in_ranks[i] = tsr_component_input(c[m], i)->rank;
                if (eps[e] == TSR_EP_JVP) make_seeds(&b, b.n_in, in_ranks);
                if (eps[e] == TSR_EP_VJP) make_seeds(&b, tsr_component_n_outputs(c[m]), out_ranks);
                bytes[m] = batch_matches_items(c[m], eps[e], &b, &copy[m]);
                free_batched(&b);
            }
            cr_assert_eq(bytes[1], bytes[0]);
            cr_expect(memcmp(copy[0], copy[1], bytes[0]) == 0,
                      "%s, batch of %lld: worker and inproc differ", tsr_endpoint_name(eps[e]),
                      (long long)sizes[s]);
            free(copy[0]);
            free(copy[1]);
        }
    }
    tsr_close(c[0]);
    tsr_close(c[1]);
}

Test(pool, vectoradd_batches_match_item_calls_inproc_and_on_three_workers) {
    const int32_t out_ranks[] = {1};
    batches_agree(BUNDLED_PLUGIN("vectoradd"), 5, out_ranks);
}

Test(pool, rosenbrock_batches_match_item_calls_inproc_and_on_three_workers) {
    const int32_t out_ranks[] = {0};
    batches_agree(BUNDLED_PLUGIN("rosenbrock"), 4, out_ranks);
}

Test(pool, a_batch_is_split_in_contiguous_chunks_across_the_pool) {
    tsr_component *c = open_pool(TEST_PLUGIN("whoami"), TSR_MODE_WORKER, "3", NULL, NULL);
    double x[7];
    for (int i = 0; i < 7; i++) x[i] = i;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_mat(x, 7, 1));
    cr_assert_eq(tsr_call_run_batch(call, 7), 0, "%s", tsr_call_errmsg(call));
    const tsr_array *pid = tsr_call_output(call, "pid");
    cr_assert_eq(pid->rank, 1);
    cr_assert_eq(pid->shape[0], 7);
    cr_assert_eq(pid->dtype, TSR_INT64);
    const int64_t *p = pid->data;
    int changes = 0, distinct = 1;
    for (int i = 1; i < 7; i++) {
        if (p[i] != p[i - 1]) changes++;
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= p[j] == p[i];
        distinct += !seen;
    }
    for (int i = 0; i < 7; i++) cr_expect(is_child((pid_t)p[i]), "item %d ran in pid %ld", i, (long)p[i]);
    cr_expect_eq(distinct, 3, "items ran in %d workers", distinct);
    cr_expect_eq(changes, 2, "the chunks are not contiguous");
    const double *y = tsr_call_output(call, "y")->data;
    cr_expect_arr_eq(y, x, sizeof x);
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- batch errors ------------------------------------------------------------------- */

static void batch_errors_in(tsr_mode mode) {
    tsr_component *c = open_pool(TEST_PLUGIN("whoami"), mode, "3", NULL, NULL);
    double x[7 * 2];
    for (int i = 0; i < 14; i++) x[i] = i;
    tsr_call *call = new_call(c, TSR_EP_APPLY);

    /* x without the leading axis */
    bind_ok(call, "x", f64_vec(x, 3));
    const char *msg = expect_failure(call, tsr_call_run_batch(call, 7), TSR_E_SHAPE);
    assert_contains(msg, "input 'x' needs a leading dimension of 7");
    /* a leading axis of the right size, but then no item shape */
    bind_ok(call, "x", f64_vec(x, 7));
    msg = expect_failure(call, tsr_call_run_batch(call, 7), TSR_E_SHAPE);
    assert_contains(msg, "batch item 0: input 'x': rank 0 given");
    bind_ok(call, "x", f64_mat(x, 7, 2));
    msg = expect_failure(call, tsr_call_run_batch(call, 6), TSR_E_SHAPE);
    assert_contains(msg, "leading dimension of 6");
    msg = expect_failure(call, tsr_call_run_batch(call, 0), TSR_E_ARGUMENT);
    cr_expect_null(tsr_call_output(call, "y"), "no results after a failed batch");

    /* item 5 is refused by the plugin: the message names it */
    x[5 * 2] = -1;
    msg = expect_failure(call, tsr_call_run_batch(call, 7), TSR_E_PLUGIN);
    assert_contains(msg, "batch item 5");
    assert_contains(msg, "x[0] = -1 is negative");
    x[5 * 2] = 10;
    cr_assert_eq(tsr_call_run_batch(call, 7), 0, "the call works again: %s", tsr_call_errmsg(call));
    cr_expect_eq(((const double *)tsr_call_output(call, "y")->data)[5 * 2], 10.0);

    /* items are validated like calls; item 0 first */
    tsr_array wrong = make_array(x, TSR_FLOAT32, 2, (int64_t[]){7, 2});
    cr_assert_eq(tsr_call_set_input(call, "x", &wrong), 0);
    msg = expect_failure(call, tsr_call_run_batch(call, 7), TSR_E_DTYPE);
    assert_contains(msg, "batch item 0: input 'x': dtype float32 given");
    tsr_call_set_input(call, "x", NULL);
    msg = expect_failure(call, tsr_call_run_batch(call, 7), TSR_E_MISSING);
    assert_contains(msg, "input 'x' is missing");
    tsr_call_free(call);

    tsr_call *ae = new_call(c, TSR_EP_ABSTRACT_EVAL);
    bind_ok(ae, "x", f64_mat(NULL, 7, 2));
    expect_failure(ae, tsr_call_run_batch(ae, 7), TSR_E_UNSUPPORTED);
    tsr_call_free(ae);
    tsr_close(c);
}

Test(pool, batch_errors_inproc_name_the_cause_and_the_failing_item) {
    batch_errors_in(TSR_MODE_INPROC);
}

Test(pool, batch_errors_on_three_workers_name_the_cause_and_the_failing_item) {
    batch_errors_in(TSR_MODE_WORKER);
}

Test(pool, value_dependent_results_cannot_be_batched) {
    tsr_component *c = open_pool(BUNDLED_PLUGIN("linear"), TSR_MODE_WORKER, "2", "matrix",
                                 LINEAR_MATRIX_FILE);
    double x[3 * 4] = {0};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_mat(x, 3, 4));
    const char *msg = expect_failure(call, tsr_call_run_batch(call, 3), TSR_E_UNSUPPORTED);
    assert_contains(msg, "depends on values");
    tsr_call_free(call);
    tsr_close(c);
}

Test(pool, a_worker_dying_in_a_batch_fails_the_batch_naming_the_item) {
    /* each worker dies on its second call: with 2 workers and 4 items,
     * items 1 and 3 are second calls */
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_option(o, "workers", "2");
    set_option(o, "restart", "auto");
    set_config(o, "fault", "exit:4");
    set_config(o, "when", "call:2");
    tsr_component *c = open_ok(TEST_PLUGIN("crash"), o);
    tsr_options_free(o);
    double x[4 * 2] = {0};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_mat(x, 4, 2));
    const char *msg = expect_failure(call, tsr_call_run_batch(call, 4), TSR_E_WORKER);
    assert_contains(msg, "exited with status 4");
    cr_expect(strstr(msg, "batch item 1") || strstr(msg, "batch item 3"), "%s", msg);
    cr_expect_eq(stats_of(c).worker_deaths, 2);
    /* restart=auto: fresh workers, each on its first call */
    bind_ok(call, "x", f64_mat(x, 2, 2));
    cr_expect_eq(tsr_call_run_batch(call, 2), 0, "%s", tsr_call_errmsg(call));
    cr_expect_eq(stats_of(c).worker_starts, 4);
    tsr_call_free(call);
    tsr_close(c);
}

/* ---- a call used for batches and single runs ---------------------------------- */

/* run, batch, run, batch: each answers with its own shapes and values. */
static void single_and_batch_alternate(tsr_mode mode) {
    tsr_component *c = open_pool(BUNDLED_PLUGIN("vectoradd"), mode, "2", NULL, NULL);
    double a[3 * 4], b[3 * 4], s[3] = {2, 3, 4};
    for (int i = 0; i < 12; i++) {
        a[i] = i;
        b[i] = 100 + i;
    }
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    for (int round = 0; round < 2; round++) {
        bind_ok(call, "a", f64_vec(a, 4));
        bind_ok(call, "b", f64_vec(b, 4));
        bind_ok(call, "s", f64_scalar(s));
        run_ok(call);
        const tsr_array *r = tsr_call_output(call, "result");
        cr_assert_eq(r->rank, 1, "round %d: a single run after a batch has rank %d", round,
                     r->rank);
        for (int i = 0; i < 4; i++) cr_expect_eq(((double *)r->data)[i], a[i] * 2 + b[i]);

        int64_t items = 3 - round;
        bind_ok(call, "a", f64_mat(a, items, 4));
        bind_ok(call, "b", f64_mat(b, items, 4));
        bind_ok(call, "s", f64_vec(s, items));
        cr_assert_eq(tsr_call_run_batch(call, items), 0, "round %d: %s", round,
                     tsr_call_errmsg(call));
        r = tsr_call_output(call, "result");
        cr_assert_eq(r->rank, 2);
        cr_assert_eq(r->shape[0], items);
        for (int i = 0; i < items * 4; i++)
            cr_expect_eq(((double *)r->data)[i], a[i] * s[i / 4] + b[i]);
    }
    tsr_call_free(call);
    tsr_close(c);
}

Test(pool, single_runs_and_batches_alternate_on_one_call_inproc) {
    single_and_batch_alternate(TSR_MODE_INPROC);
}

Test(pool, single_runs_and_batches_alternate_on_one_call_in_a_pool) {
    single_and_batch_alternate(TSR_MODE_WORKER);
}

/* A tangent unset after a batch is missing from the next batch: no item
 * reuses the one from before. */
static void unset_tangent_is_missing(tsr_mode mode) {
    tsr_component *c = open_pool(BUNDLED_PLUGIN("vectoradd"), mode, "2", NULL, NULL);
    double a[2 * 3] = {0}, s[2] = {1, 1}, t[2 * 3] = {1, 1, 1, 1, 1, 1};
    tsr_call *call = new_call(c, TSR_EP_JVP);
    const char *in[] = {"a"}, *out[] = {"result"};
    bind_ok(call, "a", f64_mat(a, 2, 3));
    bind_ok(call, "b", f64_mat(a, 2, 3));
    bind_ok(call, "s", f64_vec(s, 2));
    wrt_ok(call, in, 1, out, 1);
    seed_ok(call, "a", f64_mat(t, 2, 3));
    cr_assert_eq(tsr_call_run_batch(call, 2), 0, "%s", tsr_call_errmsg(call));
    cr_assert_eq(tsr_call_set_seed(call, "a", NULL), 0);
    const char *msg = expect_failure(call, tsr_call_run_batch(call, 2), TSR_E_MISSING);
    assert_contains(msg, "tangent_vector['a'] is missing");
    /* set_wrt forgets the seeds as well */
    seed_ok(call, "a", f64_mat(t, 2, 3));
    cr_assert_eq(tsr_call_run_batch(call, 2), 0, "%s", tsr_call_errmsg(call));
    wrt_ok(call, in, 1, out, 1);
    expect_failure(call, tsr_call_run_batch(call, 2), TSR_E_MISSING);
    tsr_call_free(call);
    tsr_close(c);
}

Test(pool, a_tangent_unset_after_a_batch_is_missing_inproc) {
    unset_tangent_is_missing(TSR_MODE_INPROC);
}

Test(pool, a_tangent_unset_after_a_batch_is_missing_in_a_pool) {
    unset_tangent_is_missing(TSR_MODE_WORKER);
}
