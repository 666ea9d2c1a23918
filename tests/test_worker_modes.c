/* SPDX-License-Identifier: MIT */
/*
 * The three modes are one API: a component opened inproc, isolated or in
 * a worker answers every endpoint with the same bits, describes the same
 * schema, and refuses bad calls with the same code and message. Each
 * component is driven through the same script in every mode; what each
 * step produced (results byte for byte, or the failure) is recorded and
 * the records of the modes are compared.
 */
#include "worker_util.h"

TestSuite(modes, .fini = expect_no_own_segments, .timeout = 60);

/* ---- what a script produced ------------------------------------------------ */

typedef struct record {
    char label[160];
    int code;                   /* 0, or the failure */
    char msg[TSR_ERRMSG_MAX];
    tsr_dtype dtype;
    int32_t rank;
    int64_t shape[TSR_MAX_RANK];
    int has_data;
    size_t bytes;
    unsigned char *data;        /* a copy */
} record;

typedef struct transcript {
    int n;
    record r[192];
} transcript;

static record *next_record(transcript *t, const char *label) {
    cr_assert_lt(t->n, 192, "transcript full");
    record *r = &t->r[t->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->label, sizeof r->label, "%s", label);
    return r;
}

static void record_array(transcript *t, const char *label, const tsr_array *a) {
    record *r = next_record(t, label);
    cr_assert_not_null(a, "%s: no result", label);
    r->dtype = a->dtype;
    r->rank = a->rank;
    memcpy(r->shape, a->shape, sizeof r->shape[0] * (size_t)a->rank);
    r->has_data = a->data != NULL;
    int64_t count = 1;
    for (int32_t d = 0; d < a->rank; d++) count *= a->shape[d];
    r->bytes = a->data ? (size_t)count * tsr_dtype_size(a->dtype) : 0;
    if (r->bytes) {
        r->data = malloc(r->bytes);
        cr_assert_not_null(r->data);
        memcpy(r->data, a->data, r->bytes);
    }
}

static void record_failure(transcript *t, const char *label, int code, const tsr_call *call) {
    record *r = next_record(t, label);
    r->code = code;
    snprintf(r->msg, sizeof r->msg, "%s", tsr_call_errmsg(call));
}

static void transcript_free(transcript *t) {
    for (int i = 0; i < t->n; i++) free(t->r[i].data);
    t->n = 0;
}

/* Every record of `got` equals the one of `want`, bit for bit. */
static void expect_same(const transcript *want, const transcript *got, const char *what) {
    cr_assert_eq(got->n, want->n, "%s: %d records, inproc has %d", what, got->n, want->n);
    for (int i = 0; i < want->n; i++) {
        const record *a = &want->r[i], *b = &got->r[i];
        cr_assert_str_eq(b->label, a->label);
        cr_assert_eq(b->code, a->code, "%s, %s: code %d (%s), inproc %d (%s)", what, a->label,
                     b->code, b->msg, a->code, a->msg);
        cr_assert_str_eq(b->msg, a->msg, "%s, %s: messages differ", what, a->label);
        cr_assert_eq(b->dtype, a->dtype, "%s, %s: dtype", what, a->label);
        cr_assert_eq(b->rank, a->rank, "%s, %s: rank", what, a->label);
        for (int32_t d = 0; d < a->rank; d++)
            cr_assert_eq(b->shape[d], a->shape[d], "%s, %s: dim %d", what, a->label, d);
        cr_assert_eq(b->has_data, a->has_data, "%s, %s: data present", what, a->label);
        cr_assert_eq(b->bytes, a->bytes, "%s, %s: bytes", what, a->label);
        if (a->bytes)
            cr_assert(memcmp(a->data, b->data, a->bytes) == 0, "%s, %s: the values differ", what,
                      a->label);
    }
}

/* ---- the script ------------------------------------------------------------ */

/* Inputs for a component: every input field sized with `n` for each
 * symbolic or free dim, filled with pseudo-random numbers. */
typedef struct input_set {
    int32_t n_in;
    tsr_array a[8];
    double *data[8];
} input_set;

static void make_inputs(const tsr_component *c, int64_t n, uint64_t seed, input_set *in) {
    memset(in, 0, sizeof *in);
    in->n_in = tsr_component_n_inputs(c);
    cr_assert_leq(in->n_in, 8);
    for (int32_t i = 0; i < in->n_in; i++) {
        const tsr_field *f = tsr_component_input(c, i);
        cr_assert_eq(f->dtype, TSR_FLOAT64, "the script handles float64 inputs only");
        int64_t shape[TSR_MAX_FIELD_RANK], count = 1;
        for (int32_t d = 0; d < f->rank; d++) {
            shape[d] = f->dims[d].symbol || f->dims[d].size < 0 ? n : f->dims[d].size;
            count *= shape[d];
        }
        in->data[i] = calloc((size_t)count + 1, sizeof(double));
        cr_assert_not_null(in->data[i]);
        fill_random(in->data[i], count, seed + (uint64_t)i);
        /* positive scalars keep every plugin in its domain */
        if (f->rank == 0) in->data[i][0] = 1.5 + in->data[i][0];
        in->a[i] = make_array(in->data[i], TSR_FLOAT64, f->rank, shape);
    }
}

static void free_inputs(input_set *in) {
    for (int32_t i = 0; i < in->n_in; i++) free(in->data[i]);
}

static void bind_all(tsr_call *call, const input_set *in, int with_data) {
    for (int32_t i = 0; i < in->n_in; i++) {
        tsr_array a = in->a[i];
        if (!with_data) a.data = NULL;
        cr_assert_eq(tsr_call_set_input_at(call, i, &a), 0, "%s", tsr_call_errmsg(call));
    }
}

/* Run the call; on success record every result, else the failure. */
static int run_and_record(tsr_call *call, transcript *t, const char *label) {
    int rc = tsr_call_run(call);
    if (rc) {
        record_failure(t, label, rc, call);
        return rc;
    }
    int32_t k_max = tsr_call_n_results(call);
    for (int32_t k = 0; k < k_max; k++) {
        char l[160];
        snprintf(l, sizeof l, "%s result %d", label, (int)k);
        record_array(t, l, tsr_call_result(call, k));
    }
    return 0;
}

/* The differentiable fields, in schema order or reversed. */
typedef struct selection {
    const char *in[8], *out[8];
    int32_t n_in, n_out;
} selection;

static selection differentiable(const tsr_component *c, int reversed) {
    selection s;
    memset(&s, 0, sizeof s);
    for (int32_t i = 0; i < tsr_component_n_inputs(c); i++) {
        int32_t j = reversed ? tsr_component_n_inputs(c) - 1 - i : i;
        if (tsr_component_input(c, j)->flags & TSR_FIELD_DIFFERENTIABLE)
            s.in[s.n_in++] = tsr_component_input(c, j)->name;
    }
    for (int32_t o = 0; o < tsr_component_n_outputs(c); o++) {
        int32_t j = reversed ? tsr_component_n_outputs(c) - 1 - o : o;
        if (tsr_component_output(c, j)->flags & TSR_FIELD_DIFFERENTIABLE)
            s.out[s.n_out++] = tsr_component_output(c, j)->name;
    }
    return s;
}

/* apply, abstract_eval, and for two orderings of the differentiable
 * fields jacobian, jvp (random tangents) and vjp (random cotangents
 * shaped like apply's outputs). */
static void script(tsr_component *c, const input_set *in, transcript *t) {
    tsr_call *apply = new_call(c, TSR_EP_APPLY);
    bind_all(apply, in, 1);
    int apply_failed = run_and_record(apply, t, "apply");

    tsr_call *ae = new_call(c, TSR_EP_ABSTRACT_EVAL);
    bind_all(ae, in, 0);
    run_and_record(ae, t, "abstract_eval");
    tsr_call_free(ae);

    for (int reversed = 0; reversed < 2; reversed++) {
        selection s = differentiable(c, reversed);
        char label[64];

        snprintf(label, sizeof label, "jacobian %d", reversed);
        tsr_call *jac = new_call(c, TSR_EP_JACOBIAN);
        bind_all(jac, in, 1);
        wrt_ok(jac, s.in, s.n_in, s.out, s.n_out);
        run_and_record(jac, t, label);
        tsr_call_free(jac);

        snprintf(label, sizeof label, "jvp %d", reversed);
        tsr_call *jvp = new_call(c, TSR_EP_JVP);
        bind_all(jvp, in, 1);
        wrt_ok(jvp, s.in, s.n_in, s.out, s.n_out);
        double *tangent[8];
        for (int32_t k = 0; k < s.n_in; k++) {
            tsr_array a = in->a[tsr_component_find_input(c, s.in[k])];
            int64_t count = 1;
            for (int32_t d = 0; d < a.rank; d++) count *= a.shape[d];
            tangent[k] = calloc((size_t)count + 1, sizeof(double));
            fill_random(tangent[k], count, 77 + (uint64_t)k);
            a.data = tangent[k];
            seed_ok(jvp, s.in[k], a);
        }
        run_and_record(jvp, t, label);
        tsr_call_free(jvp);
        for (int32_t k = 0; k < s.n_in; k++) free(tangent[k]);

        if (apply_failed) continue; /* no output shapes for the cotangents */
        snprintf(label, sizeof label, "vjp %d", reversed);
        tsr_call *vjp = new_call(c, TSR_EP_VJP);
        bind_all(vjp, in, 1);
        wrt_ok(vjp, s.in, s.n_in, s.out, s.n_out);
        double *cotangent[8];
        for (int32_t k = 0; k < s.n_out; k++) {
            tsr_array a = *tsr_call_output(apply, s.out[k]);
            int64_t count = 1;
            for (int32_t d = 0; d < a.rank; d++) count *= a.shape[d];
            cotangent[k] = calloc((size_t)count + 1, sizeof(double));
            fill_random(cotangent[k], count, 99 + (uint64_t)k);
            a.data = cotangent[k];
            seed_ok(vjp, s.out[k], a);
        }
        run_and_record(vjp, t, label);
        tsr_call_free(vjp);
        for (int32_t k = 0; k < s.n_out; k++) free(cotangent[k]);
    }
    tsr_call_free(apply);
}

static tsr_component *open_in_mode(const char *path, tsr_mode mode, const char *key,
                                   const char *value) {
    tsr_options *o = mode_options(mode);
    if (key) set_config(o, key, value);
    tsr_component *c = open_ok(path, o);
    tsr_options_free(o);
    cr_assert_eq(tsr_component_mode(c), mode);
    return c;
}

/* The script on every size, in each mode; results and failures must be
 * identical to inproc's. Returns how many results inproc produced. */
static int modes_agree(const char *path, const char *key, const char *value,
                       const int64_t *sizes, int n_sizes) {
    tsr_component *c[3];
    for (int m = 0; m < 3; m++) c[m] = open_in_mode(path, (tsr_mode)m, key, value);
    static transcript t[3];
    int results = 0;
    for (int s = 0; s < n_sizes; s++) {
        input_set in;
        make_inputs(c[0], sizes[s], 1000 + (uint64_t)s, &in);
        for (int m = 0; m < 3; m++) script(c[m], &in, &t[m]);
        for (int m = 1; m < 3; m++) {
            char what[256];
            snprintf(what, sizeof what, "%s, n = %lld, %s", tsr_component_name(c[0]),
                     (long long)sizes[s], mode_names[m]);
            expect_same(&t[0], &t[m], what);
        }
        for (int i = 0; i < t[0].n; i++) results += t[0].r[i].code == 0;
        for (int m = 0; m < 3; m++) transcript_free(&t[m]);
        free_inputs(&in);
    }
    for (int m = 0; m < 3; m++) tsr_close(c[m]);
    return results;
}

Test(modes, noop_gives_the_same_bits_in_every_mode_and_endpoint) {
    const int64_t sizes[] = {0, 1, 7};
    /* apply 1, abstract_eval 1, twice: jacobian 1, jvp 1, vjp 1 */
    cr_expect_eq(modes_agree(BUNDLED_PLUGIN("noop"), NULL, NULL, sizes, 3), 3 * 8);
}

Test(modes, vectoradd_gives_the_same_bits_in_every_mode_and_endpoint) {
    const int64_t sizes[] = {1, 5};
    /* apply 1, abstract_eval 1, twice: jacobian 3, jvp 1, vjp 3 */
    cr_expect_eq(modes_agree(BUNDLED_PLUGIN("vectoradd"), NULL, NULL, sizes, 2), 2 * 16);
}

Test(modes, rosenbrock_gives_the_same_bits_and_failures_in_every_mode) {
    /* n = 1 is refused by the plugin itself: the same message everywhere */
    const int64_t sizes[] = {1, 2, 6};
    /* n >= 2: apply 1, abstract_eval 1, twice: jacobian 3, jvp 1, vjp 3;
     * n = 1: every endpoint fails */
    cr_expect_eq(modes_agree(BUNDLED_PLUGIN("rosenbrock"), NULL, NULL, sizes, 3), 2 * 16);
}

Test(modes, linear_gives_the_same_bits_and_failures_in_every_mode) {
    /* y's length comes from the matrix file: every result is allocated by
     * the plugin (through the host in worker mode). x of 5 is refused by
     * the plugin, with the same message in every mode. */
    const int64_t sizes[] = {4, 5};
    /* n = 4: apply 1, abstract_eval 1, twice: jacobian 1, jvp 1, vjp 1 */
    cr_expect_eq(modes_agree(BUNDLED_PLUGIN("linear"), "matrix", LINEAR_MATRIX_FILE, sizes, 2),
                 8);
}

/* ---- schema --------------------------------------------------------------- */

static void expect_same_field(const tsr_field *a, const tsr_field *b, const char *what) {
    cr_assert_not_null(a);
    cr_assert_not_null(b, "%s: missing", what);
    cr_expect_str_eq(b->name, a->name, "%s", what);
    cr_expect_eq(b->dtype, a->dtype, "%s: dtype", what);
    cr_expect_eq(b->rank, a->rank, "%s: rank", what);
    cr_expect_eq(b->flags, a->flags, "%s: flags", what);
    cr_expect_str_eq(b->doc ? b->doc : "(none)", a->doc ? a->doc : "(none)", "%s: doc", what);
    for (int32_t d = 0; d < a->rank; d++) {
        cr_expect_eq(b->dims[d].size, a->dims[d].size, "%s: dim %d size", what, d);
        cr_expect_str_eq(b->dims[d].symbol ? b->dims[d].symbol : "(none)",
                         a->dims[d].symbol ? a->dims[d].symbol : "(none)", "%s: dim %d symbol",
                         what, d);
    }
}

static void schemas_agree(const char *path, const char *key, const char *value) {
    tsr_component *c[3];
    for (int m = 0; m < 3; m++) c[m] = open_in_mode(path, (tsr_mode)m, key, value);
    for (int m = 1; m < 3; m++) {
        char what[320];
        const tsr_component *a = c[0], *b = c[m];
        snprintf(what, sizeof what, "%s in %s", tsr_component_name(a), mode_names[m]);
        cr_expect_str_eq(tsr_component_name(b), tsr_component_name(a), "%s", what);
        cr_expect_str_eq(tsr_component_version(b), tsr_component_version(a), "%s", what);
        cr_expect_str_eq(tsr_component_description(b), tsr_component_description(a), "%s", what);
        cr_expect_str_eq(tsr_component_path(b), path, "%s", what);
        cr_assert_eq(tsr_component_n_inputs(b), tsr_component_n_inputs(a), "%s", what);
        cr_assert_eq(tsr_component_n_outputs(b), tsr_component_n_outputs(a), "%s", what);
        for (int32_t i = 0; i < tsr_component_n_inputs(a); i++) {
            char f[400];
            snprintf(f, sizeof f, "%s, input %d", what, (int)i);
            expect_same_field(tsr_component_input(a, i), tsr_component_input(b, i), f);
            cr_expect_eq(tsr_component_find_input(b, tsr_component_input(a, i)->name), i, "%s", f);
        }
        for (int32_t o = 0; o < tsr_component_n_outputs(a); o++) {
            char f[400];
            snprintf(f, sizeof f, "%s, output %d", what, (int)o);
            expect_same_field(tsr_component_output(a, o), tsr_component_output(b, o), f);
            cr_expect_eq(tsr_component_find_output(b, tsr_component_output(a, o)->name), o, "%s", f);
        }
        cr_expect_null(tsr_component_input(b, tsr_component_n_inputs(a)), "%s", what);
        cr_expect_null(tsr_component_output(b, tsr_component_n_outputs(a)), "%s", what);
        cr_expect_eq(tsr_component_find_input(b, "no such field"), -1, "%s", what);
        for (int ep = 0; ep < TSR_EP_COUNT; ep++)
            cr_expect_eq(tsr_component_has_endpoint(b, (tsr_endpoint)ep), tsr_component_has_endpoint(a, (tsr_endpoint)ep),
                         "%s: has_endpoint(%s)", what, tsr_endpoint_name((tsr_endpoint)ep));
    }
    for (int m = 0; m < 3; m++) tsr_close(c[m]);
}

Test(modes, every_mode_describes_the_same_schema) {
    schemas_agree(BUNDLED_PLUGIN("noop"), NULL, NULL);
    schemas_agree(BUNDLED_PLUGIN("vectoradd"), NULL, NULL);
    schemas_agree(BUNDLED_PLUGIN("rosenbrock"), NULL, NULL);
    schemas_agree(BUNDLED_PLUGIN("linear"), "matrix", LINEAR_MATRIX_FILE);
}

Test(modes, partial_plugins_report_the_same_endpoints_in_every_mode) {
    /* apply only, with an output whose shape depends on values, an int64
     * output, and plugins without abstract_eval */
    schemas_agree(TEST_PLUGIN("misbehave"), NULL, NULL);
    schemas_agree(TEST_PLUGIN("whoami"), NULL, NULL);
    schemas_agree(TEST_PLUGIN("crash"), NULL, NULL);
}

/* ---- refusals --------------------------------------------------------------- */

typedef struct outcome {
    int code;
    char msg[TSR_ERRMSG_MAX];
} outcome;

/* The first step of a scenario that fails, with its code and message. */
static int first_failure(int rc, tsr_call *call, outcome *o) {
    if (rc && !o->code) {
        o->code = rc;
        snprintf(o->msg, sizeof o->msg, "%s", tsr_call_errmsg(call));
        cr_expect_eq(tsr_call_errcode(call), rc, "errcode disagrees with the return value");
    }
    return rc;
}

typedef void (*scenario)(tsr_component *c, outcome *o);

static double zeros[16];

static void wrong_dtype(tsr_component *c, outcome *o) {
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    int64_t n = 3;
    tsr_array x = make_array(zeros, TSR_FLOAT32, 1, &n);
    if (!first_failure(tsr_call_set_input(call, "x", &x), call, o))
        first_failure(tsr_call_run(call), call, o);
    tsr_call_free(call);
}

static void invalid_dtype_code(tsr_component *c, outcome *o) {
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    int64_t n = 3;
    tsr_array x = make_array(zeros, (tsr_dtype)99, 1, &n);
    if (!first_failure(tsr_call_set_input(call, "x", &x), call, o))
        first_failure(tsr_call_run(call), call, o);
    tsr_call_free(call);
}

static void wrong_rank(tsr_component *c, outcome *o) {
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    tsr_array x = f64_mat(zeros, 2, 2);
    if (!first_failure(tsr_call_set_input(call, "x", &x), call, o))
        first_failure(tsr_call_run(call), call, o);
    tsr_call_free(call);
}

static void null_data(tsr_component *c, outcome *o) {
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    tsr_array x = f64_vec(NULL, 2);
    if (!first_failure(tsr_call_set_input(call, "x", &x), call, o))
        first_failure(tsr_call_run(call), call, o);
    tsr_call_free(call);
}

/* vectoradd: a and b share n */
static void shape_mismatch(tsr_component *c, outcome *o) {
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    tsr_array a = f64_vec(zeros, 3), b = f64_vec(zeros, 4), s = f64_scalar(zeros);
    if (!first_failure(tsr_call_set_input(call, "a", &a), call, o) &&
        !first_failure(tsr_call_set_input(call, "b", &b), call, o) &&
        !first_failure(tsr_call_set_input(call, "s", &s), call, o))
        first_failure(tsr_call_run(call), call, o);
    tsr_call_free(call);
}

static void missing_input(tsr_component *c, outcome *o) {
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    tsr_array a = f64_vec(zeros, 3), s = f64_scalar(zeros);
    if (!first_failure(tsr_call_set_input(call, "a", &a), call, o) &&
        !first_failure(tsr_call_set_input(call, "s", &s), call, o))
        first_failure(tsr_call_run(call), call, o);
    tsr_call_free(call);
}

static void unknown_input(tsr_component *c, outcome *o) {
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    tsr_array a = f64_vec(zeros, 3);
    first_failure(tsr_call_set_input(call, "c", &a), call, o);
    tsr_call_free(call);
}

/* misbehave: 'ragged' is not differentiable */
static void not_differentiable(tsr_component *c, outcome *o) {
    tsr_call *call = new_call(c, TSR_EP_JVP);
    const char *in[] = {"xin"}, *out[] = {"ragged"};
    tsr_array x = f64_vec(zeros, 2);
    if (!first_failure(tsr_call_set_input(call, "xin", &x), call, o) &&
        !first_failure(tsr_call_set_wrt(call, in, 1, out, 1), call, o))
        first_failure(tsr_call_run(call), call, o);
    tsr_call_free(call);
}

/* vectoradd: a tangent shaped unlike its input */
static void tangent_shape(tsr_component *c, outcome *o) {
    tsr_call *call = new_call(c, TSR_EP_JVP);
    const char *in[] = {"a"}, *out[] = {"result"};
    tsr_array a = f64_vec(zeros, 3), s = f64_scalar(zeros), t = f64_vec(zeros, 4);
    if (!first_failure(tsr_call_set_input(call, "a", &a), call, o) &&
        !first_failure(tsr_call_set_input(call, "b", &a), call, o) &&
        !first_failure(tsr_call_set_input(call, "s", &s), call, o) &&
        !first_failure(tsr_call_set_wrt(call, in, 1, out, 1), call, o) &&
        !first_failure(tsr_call_set_seed(call, "a", &t), call, o))
        first_failure(tsr_call_run(call), call, o);
    tsr_call_free(call);
}

static void missing_cotangent(tsr_component *c, outcome *o) {
    tsr_call *call = new_call(c, TSR_EP_VJP);
    const char *in[] = {"a", "s"}, *out[] = {"result"};
    tsr_array a = f64_vec(zeros, 3), s = f64_scalar(zeros);
    if (!first_failure(tsr_call_set_input(call, "a", &a), call, o) &&
        !first_failure(tsr_call_set_input(call, "b", &a), call, o) &&
        !first_failure(tsr_call_set_input(call, "s", &s), call, o) &&
        !first_failure(tsr_call_set_wrt(call, in, 2, out, 1), call, o))
        first_failure(tsr_call_run(call), call, o);
    tsr_call_free(call);
}

/* crash (with no fault configured) has apply only */
static void missing_endpoint(tsr_component *c, outcome *o) {
    tsr_call *call = new_call(c, TSR_EP_VJP);
    tsr_array x = f64_vec(zeros, 2);
    if (!first_failure(tsr_call_set_input(call, "x", &x), call, o))
        first_failure(tsr_call_run(call), call, o);
    tsr_call_free(call);
}

/* The scenario fails with `code` in every mode, with the same message,
 * which names what `needle` says. */
static void refused_alike(const char *path, scenario fn, int code, const char *needle) {
    outcome o[3];
    memset(o, 0, sizeof o);
    for (int m = 0; m < 3; m++) {
        tsr_component *c = open_in_mode(path, (tsr_mode)m, NULL, NULL);
        fn(c, &o[m]);
        tsr_close(c);
        assert_code(o[m].code, code, o[m].msg);
        assert_contains(o[m].msg, needle);
    }
    for (int m = 1; m < 3; m++)
        cr_expect_str_eq(o[m].msg, o[0].msg, "%s and inproc differ", mode_names[m]);
}

Test(modes, a_wrong_dtype_is_refused_alike) {
    refused_alike(BUNDLED_PLUGIN("noop"), wrong_dtype, TSR_E_DTYPE, "input 'x'");
    refused_alike(BUNDLED_PLUGIN("noop"), invalid_dtype_code, TSR_E_DTYPE, "99");
}

Test(modes, a_wrong_shape_is_refused_alike) {
    refused_alike(BUNDLED_PLUGIN("noop"), wrong_rank, TSR_E_SHAPE, "input 'x'");
    refused_alike(BUNDLED_PLUGIN("vectoradd"), shape_mismatch, TSR_E_SHAPE, "'b'");
    refused_alike(BUNDLED_PLUGIN("vectoradd"), tangent_shape, TSR_E_SHAPE, "tangent_vector['a']");
}

Test(modes, missing_arguments_are_refused_alike) {
    refused_alike(BUNDLED_PLUGIN("vectoradd"), missing_input, TSR_E_MISSING, "input 'b'");
    refused_alike(BUNDLED_PLUGIN("vectoradd"), missing_cotangent, TSR_E_MISSING,
                  "cotangent_vector['result']");
    refused_alike(BUNDLED_PLUGIN("noop"), null_data, TSR_E_ARGUMENT, "data is NULL");
}

Test(modes, names_and_endpoints_are_checked_alike) {
    refused_alike(BUNDLED_PLUGIN("vectoradd"), unknown_input, TSR_E_UNKNOWN_FIELD, "'c'");
    refused_alike(TEST_PLUGIN("misbehave"), not_differentiable, TSR_E_NOT_DIFFERENTIABLE,
                  "'ragged'");
    refused_alike(TEST_PLUGIN("crash"), missing_endpoint, TSR_E_UNSUPPORTED, "available");
}

/* ---- how workers are started ------------------------------------------------ */

/* In the child: spawn=fork and spawn=exec workers answer with the same
 * bits as inproc. */
static const char *fork_and_exec_agree(void) {
    double x[5] = {1.5, -2, 1e-300, 3, 0.25};
    double y[3][5];
    for (int k = 0; k < 3; k++) {
        tsr_options *o = tsr_options_new();
        tsr_error err = TSR_ERROR_INIT;
        if (k > 0 && (tsr_options_set(o, "mode", "worker", &err) != 0 ||
                      tsr_options_set(o, "spawn", k == 1 ? "fork" : "exec", &err) != 0))
            return "options refused";
        tsr_component *c = NULL;
        int rc = tsr_open(BUNDLED_PLUGIN("vectoradd"), o, &c, &err);
        tsr_options_free(o);
        CHECK(rc == 0, "tsr_open (%d): %s", k, err.message);
        tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
        double s = 0.5;
        tsr_array a = {.data = x, .dtype = TSR_FLOAT64, .rank = 1, .shape = {5}};
        tsr_array sa = {.data = &s, .dtype = TSR_FLOAT64, .rank = 0};
        tsr_call_set_input(call, "a", &a);
        tsr_call_set_input(call, "b", &a);
        tsr_call_set_input(call, "s", &sa);
        CHECK(tsr_call_run(call) == 0, "run (%d): %s", k, tsr_call_errmsg(call));
        memcpy(y[k], tsr_call_output(call, "result")->data, sizeof y[k]);
        tsr_call_free(call);
        tsr_close(c);
    }
    if (memcmp(y[0], y[1], sizeof y[0]) != 0) return "spawn=fork differs from inproc";
    if (memcmp(y[0], y[2], sizeof y[0]) != 0) return "spawn=exec differs from inproc";
    return "ok";
}

Test(modes, fork_and_exec_workers_agree_with_inproc) {
    run_in_child(fork_and_exec_agree, NULL);
}

Test(modes, fork_spawning_is_refused_in_a_threaded_host) {
    /* Criterion's test process has a thread of its own besides this one */
    tsr_options *o = mode_options(TSR_MODE_WORKER);
    set_option(o, "spawn", "fork");
    tsr_error err = open_fails(BUNDLED_PLUGIN("noop"), o);
    tsr_options_free(o);
    assert_code(err.code, TSR_E_ARGUMENT, err.message);
    assert_contains(err.message, "single-threaded");
    assert_contains(err.message, "spawn=exec");
}

/* ---- counters ------------------------------------------------------------------ */

Test(modes, every_mode_counts_the_runs_that_reach_the_plugin) {
    for (int m = 0; m < 3; m++) {
        tsr_component *c = open_in_mode(BUNDLED_PLUGIN("noop"), (tsr_mode)m, NULL, NULL);
        double x[2] = {1, 2};
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "x", f64_vec(x, 2));
        for (int i = 0; i < 3; i++) run_ok(call);
        /* refused before it reaches the plugin: not counted */
        bind_or_run_fails(call, "x", f64_mat(x, 1, 2), TSR_E_SHAPE);
        tsr_stats s = stats_of(c);
        cr_expect_eq(s.calls, 3, "%s counted %llu calls", mode_names[m],
                     (unsigned long long)s.calls);
        cr_expect_eq(s.worker_starts, m == TSR_MODE_WORKER ? 1 : 0, "%s", mode_names[m]);
        cr_expect_eq(s.worker_deaths, 0);
        tsr_call_free(call);
        tsr_close(c);
    }
}
