/* SPDX-License-Identifier: MIT */
/* Derivatives at paths inside a differentiable JSON field (plugin.h,
 * "Derivatives inside JSON values"), with the json_weights test plugin
 * (s = x + sum over keys of sum(w^2)), in every mode: vjp, jvp and
 * jacobian at "weights.{key}" paths, and the refusals: malformed paths,
 * paths into array, TEXT and non-differentiable JSON fields, non-float
 * seeds, an int dtype on a path result, more entries than the bound,
 * batches. Also TEXT inputs in batches and text results in caller
 * buffers. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker_util.h"

#define WEIGHTS TEST_PLUGIN("json_weights")
#define KINDS TEST_PLUGIN("kinds")

typedef struct variant {
    tsr_mode mode;
    const char *transport, *name;
} variant;

static const variant variants[] = {
    {TSR_MODE_INPROC, NULL, "inproc"},
    {TSR_MODE_ISOLATED, NULL, "isolated"},
    {TSR_MODE_WORKER, "shm", "worker exec shm"},
    {TSR_MODE_WORKER, "files", "worker exec files"},
};
#define N_VARIANTS (sizeof variants / sizeof variants[0])

static tsr_component *open_variant(const char *path, size_t v) {
    tsr_options *o = mode_options(variants[v].mode);
    if (variants[v].transport) {
        set_option(o, "spawn", "exec");
        set_option(o, "transport", variants[v].transport);
    }
    tsr_component *c = open_ok(path, o);
    tsr_options_free(o);
    return c;
}

/* ---- weights as Tesseract encodes them ----------------------------------- */

static void b64(const unsigned char *p, size_t n, char *out) {
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n) v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n) v |= p[i + 2];
        out[o++] = tab[(v >> 18) & 63];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? tab[v & 63] : '=';
    }
    out[o] = '\0';
}

/* Append "key": an encoded float64 array of the given shape to buf. */
static void add_weight(char *buf, size_t cap, const char *key, const double *v, int32_t rank,
                       const int64_t *shape) {
    int64_t n = 1;
    char dims[128] = "";
    for (int32_t d = 0; d < rank; d++) {
        n *= shape[d];
        snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%lld", d ? ", " : "",
                 (long long)shape[d]);
    }
    char *data = malloc((size_t)n * 12 + 8);
    cr_assert_not_null(data);
    b64((const unsigned char *)v, (size_t)n * sizeof(double), data);
    size_t used = strlen(buf);
    int w = snprintf(buf + used, cap - used,
                     "%s\"%s\": {\"object_type\": \"array\", \"shape\": [%s], \"dtype\": "
                     "\"float64\", \"data\": {\"buffer\": \"%s\", \"encoding\": \"base64\"}}",
                     used > 1 ? ", " : "", key, dims, data);
    cr_assert(w > 0 && (size_t)w < cap - used, "weights JSON too long");
    free(data);
}

/* weights = {"a": [1, -2], "b": [[0.5, 3], [4, -1]]} */
static double wa[2] = {1, -2}, wb[4] = {0.5, 3, 4, -1};
static char weights_json[4096];

static const char *weights_ab(void) {
    static const int64_t sa[1] = {2}, sb[2] = {2, 2};
    strcpy(weights_json, "{");
    add_weight(weights_json, sizeof weights_json, "a", wa, 1, sa);
    add_weight(weights_json, sizeof weights_json, "b", wb, 2, sb);
    strcat(weights_json, "}");
    return weights_json;
}

static double x0 = 0.25;

static void bind_inputs(tsr_call *call, const char *weights) {
    cr_assert_eq(tsr_call_set_text(call, "weights", weights), 0, "%s", tsr_call_errmsg(call));
    bind_ok(call, "x", f64_scalar(&x0));
}

static void expect_array(const tsr_array *r, const double *want, int32_t rank,
                         const int64_t *shape, double scale, const char *what, size_t v) {
    cr_assert_not_null(r, "%s: %s: no result", variants[v].name, what);
    cr_assert_eq(r->dtype, TSR_FLOAT64, "%s: %s: dtype", variants[v].name, what);
    cr_assert_eq(r->rank, rank, "%s: %s: rank %d", variants[v].name, what, (int)r->rank);
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) {
        cr_assert_eq(r->shape[d], shape[d], "%s: %s: dim %d", variants[v].name, what, (int)d);
        n *= shape[d];
    }
    for (int64_t i = 0; i < n; i++)
        cr_assert_float_eq(((const double *)r->data)[i], scale * want[i], 1e-12,
                           "%s: %s[%lld]", variants[v].name, what, (long long)i);
}

static const int64_t shape_a[1] = {2}, shape_b[2] = {2, 2};

/* ---- derivatives at paths, every mode ------------------------------------ */

Test(json_paths, apply_reads_the_weights_and_vjp_at_two_paths_of_one_field_gives_each_its_gradient) {
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(WEIGHTS, v);
        tsr_call *ap = new_call(c, TSR_EP_APPLY);
        bind_inputs(ap, weights_ab());
        run_ok(ap);
        /* 0.25 + 1 + 4 + 0.25 + 9 + 16 + 1 */
        cr_assert_float_eq(*(double *)tsr_call_output(ap, "s")->data, 31.5, 1e-12, "%s",
                           variants[v].name);
        tsr_call *vj = new_call(c, TSR_EP_VJP);
        static const char *in[] = {"weights.{a}", "x", "weights.{b}"}, *out[] = {"s"};
        wrt_ok(vj, in, 3, out, 1);
        bind_inputs(vj, weights_ab());
        double ct = 3.0;
        seed_ok(vj, "s", f64_scalar(&ct));
        /* Twice: the second run sizes its path results again. */
        for (int run = 0; run < 2; run++) {
            run_ok(vj);
            cr_assert_eq(tsr_call_n_results(vj), 3);
            expect_array(tsr_call_output(vj, "weights.{a}"), wa, 1, shape_a, 2 * ct, "d/da", v);
            expect_array(tsr_call_output(vj, "weights.{b}"), wb, 2, shape_b, 2 * ct, "d/db", v);
            cr_assert_float_eq(*(double *)tsr_call_output(vj, "x")->data, ct, 1e-12);
            cr_assert_eq(tsr_call_result(vj, 2), tsr_call_output(vj, "weights.{b}"));
            cr_assert_null(tsr_call_output(vj, "weights"), "%s", variants[v].name);
            ct = -1.0;
        }
        tsr_call_free(vj);
        tsr_call_free(ap);
        tsr_close(c);
    }
}

Test(json_paths, jvp_takes_tangents_at_paths_and_at_a_whole_array_field) {
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(WEIGHTS, v);
        tsr_call *jv = new_call(c, TSR_EP_JVP);
        static const char *in[] = {"weights.{b}", "x", "weights.{a}"}, *out[] = {"s"};
        wrt_ok(jv, in, 3, out, 1);
        bind_inputs(jv, weights_ab());
        double ta[2] = {1, 1}, tb[4] = {1, 0, 0, 2}, tx = 5;
        seed_ok(jv, "weights.{a}", f64_vec(ta, 2));
        seed_ok(jv, "weights.{b}", f64_mat(tb, 2, 2));
        seed_ok(jv, "x", f64_scalar(&tx));
        run_ok(jv);
        /* 5 + 2 (1 - 2) + 2 (0.5 - 2) */
        cr_assert_float_eq(*(double *)tsr_call_output(jv, "s")->data, 0.0, 1e-12, "%s",
                           variants[v].name);
        /* A tangent the component does not accept is its error to give. */
        seed_ok(jv, "weights.{a}", f64_mat(tb, 2, 2));
        cr_assert_eq(tsr_call_run(jv), TSR_E_PLUGIN, "%s", variants[v].name);
        assert_contains(tsr_call_errmsg(jv), "weights.{a}");
        tsr_call_free(jv);
        tsr_close(c);
    }
}

Test(json_paths, jacobian_finds_its_blocks_by_path) {
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(WEIGHTS, v);
        tsr_call *jc = new_call(c, TSR_EP_JACOBIAN);
        static const char *in[] = {"weights.{b}", "x", "weights.{a}"}, *out[] = {"s"};
        wrt_ok(jc, in, 3, out, 1);
        bind_inputs(jc, weights_ab());
        run_ok(jc);
        expect_array(tsr_call_jacobian(jc, "s", "weights.{b}"), wb, 2, shape_b, 2, "ds/db", v);
        expect_array(tsr_call_jacobian(jc, "s", "weights.{a}"), wa, 1, shape_a, 2, "ds/da", v);
        cr_assert_float_eq(*(double *)tsr_call_jacobian(jc, "s", "x")->data, 1.0, 1e-12);
        cr_assert_null(tsr_call_jacobian(jc, "s", "weights.{c}"));
        tsr_call_free(jc);
        tsr_close(c);
    }
}

Test(json_paths, an_int_dtype_set_on_a_path_result_fails_the_call) {
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(WEIGHTS, v);
        tsr_call *vj = new_call(c, TSR_EP_VJP);
        static const char *in[] = {"weights.{a}"}, *out[] = {"s"};
        wrt_ok(vj, in, 1, out, 1);
        bind_inputs(vj, weights_ab());
        cr_assert_eq(tsr_call_set_text(vj, "mode", "int_result"), 0);
        double ct = 1;
        seed_ok(vj, "s", f64_scalar(&ct));
        int rc = tsr_call_run(vj);
        cr_assert_eq(rc, TSR_E_PLUGIN_RESULT, "%s: %d %s", variants[v].name, rc,
                     tsr_call_errmsg(vj));
        assert_contains(tsr_call_errmsg(vj), "int64");
        assert_contains(tsr_call_errmsg(vj), "float64");
        /* The same call serves on once the dtype is right. */
        cr_assert_eq(tsr_call_set_text(vj, "mode", "good"), 0);
        run_ok(vj);
        expect_array(tsr_call_output(vj, "weights.{a}"), wa, 1, shape_a, 2, "d/da", v);
        tsr_call_free(vj);
        tsr_close(c);
    }
}

Test(json_paths, a_seed_of_a_non_float_dtype_at_a_path_is_refused_before_the_plugin) {
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(WEIGHTS, v);
        tsr_call *jv = new_call(c, TSR_EP_JVP);
        static const char *in[] = {"weights.{a}"}, *out[] = {"s"};
        wrt_ok(jv, in, 1, out, 1);
        bind_inputs(jv, weights_ab());
        int32_t ti[2] = {1, 2};
        int64_t two = 2;
        seed_ok(jv, "weights.{a}", make_array(ti, TSR_INT32, 1, &two));
        cr_assert_eq(tsr_call_run(jv), TSR_E_DTYPE, "%s: %s", variants[v].name,
                     tsr_call_errmsg(jv));
        assert_contains(tsr_call_errmsg(jv), "tangent_vector['weights.{a}']");
        assert_contains(tsr_call_errmsg(jv), "int32");
        cr_assert_str_eq(tsr_call_errloc(jv), "tangent_vector.weights.{a}");
        /* A seed's name is the path: the field's name alone is not one. */
        double t[2] = {1, 1};
        cr_assert_eq(tsr_call_set_seed(jv, "weights", &(tsr_array){0}), TSR_E_UNKNOWN_FIELD);
        seed_ok(jv, "weights.{a}", f64_vec(t, 2));
        run_ok(jv);
        cr_assert_float_eq(*(double *)tsr_call_output(jv, "s")->data, -2.0, 1e-12);
        tsr_call_free(jv);
        tsr_close(c);
    }
}

/* More entries than fields, up to the bound, cross every mode: the
 * channel carries 1024 paths and as many tangents. */
Test(json_paths, the_bound_of_1024_entries_holds_and_one_more_is_refused) {
    enum { N = 1024 };
    static char keys[N + 1][16];
    static const char *paths[N + 1];
    static double vals[N + 1], tans[N + 1];
    static char big[N * 160];
    static const int64_t one[1] = {1};
    strcpy(big, "{");
    for (int k = 0; k <= N; k++) {
        char key[8];
        snprintf(key, sizeof key, "k%d", k);
        snprintf(keys[k], sizeof keys[k], "weights.{k%d}", k);
        paths[k] = keys[k];
        vals[k] = k % 7 - 3;
        tans[k] = 1;
        add_weight(big, sizeof big, key, &vals[k], 1, one);
    }
    strcat(big, "}");
    static const char *out[] = {"s"};
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(WEIGHTS, v);
        tsr_call *jv = new_call(c, TSR_EP_JVP);
        int rc = tsr_call_set_wrt(jv, paths, N + 1, out, 1);
        cr_assert_eq(rc, TSR_E_ARGUMENT, "%s: %d", variants[v].name, rc);
        assert_contains(tsr_call_errmsg(jv), "1025 entries, at most 1024");
        wrt_ok(jv, paths, N, out, 1);
        bind_inputs(jv, big);
        for (int k = 0; k < N; k++) seed_ok(jv, paths[k], f64_vec(&tans[k], 1));
        run_ok(jv);
        double want = 0;
        for (int k = 0; k < N; k++) want += 2 * vals[k];
        cr_assert_float_eq(*(double *)tsr_call_output(jv, "s")->data, want, 1e-9, "%s",
                           variants[v].name);
        tsr_call_free(jv);
        tsr_close(c);
    }
}

/* ---- refusals at tsr_call_set_wrt (the host's, one mode suffices) -------- */

static void wrt_fails(tsr_call *call, const char *path, int code, const char *cause) {
    const char *in[] = {path}, *out[] = {"s"};
    int rc = tsr_call_set_wrt(call, in, 1, out, 1);
    cr_assert_eq(rc, code, "'%s': %d, %d expected (%s)", path, rc, code, tsr_call_errmsg(call));
    cr_assert_eq(tsr_call_errcode(call), code);
    assert_contains(tsr_call_errmsg(call), path);
    assert_contains(tsr_call_errmsg(call), cause);
    cr_assert_str_eq(tsr_call_errloc(call), "vjp_inputs.0", "'%s'", path);
}

Test(json_paths, malformed_paths_are_refused_naming_the_path_and_the_cause) {
    tsr_component *c = open_mode(WEIGHTS, TSR_MODE_INPROC);
    tsr_call *vj = new_call(c, TSR_EP_VJP);
    wrt_fails(vj, "weights.{a", TSR_E_UNKNOWN_FIELD, "not closed by '}'");
    wrt_fails(vj, "weights.[x]", TSR_E_UNKNOWN_FIELD, "does not hold a list index");
    wrt_fails(vj, "weights.[]", TSR_E_UNKNOWN_FIELD, "does not hold a list index");
    wrt_fails(vj, "weights.[-1]", TSR_E_UNKNOWN_FIELD, "does not hold a list index");
    wrt_fails(vj, "weights.", TSR_E_UNKNOWN_FIELD, "nothing after the '.'");
    wrt_fails(vj, "weights..{a}", TSR_E_UNKNOWN_FIELD, "a path part is .{key}, .[N] or .name");
    wrt_fails(vj, "weights.{a}b", TSR_E_UNKNOWN_FIELD, "where '.' was expected");
    wrt_fails(vj, "weights.a-b", TSR_E_UNKNOWN_FIELD, "where '.' was expected");
    wrt_fails(vj, "nothing.{a}", TSR_E_UNKNOWN_FIELD, "inputs: weights, x, mode, cfg");
    wrt_fails(vj, "x.[0]", TSR_E_UNKNOWN_FIELD, "'x' is an array");
    /* the same path twice */
    const char *twice[] = {"weights.{a}", "x", "weights.{a}"}, *out[] = {"s"};
    cr_assert_eq(tsr_call_set_wrt(vj, twice, 3, out, 1), TSR_E_ARGUMENT);
    assert_contains(tsr_call_errmsg(vj), "'weights.{a}' is named twice");
    /* a refused list leaves none set: the run says so */
    cr_assert_eq(tsr_call_run(vj), TSR_E_MISSING);
    /* Well-formed paths of every part are taken; what they name is the
     * component's to judge. */
    const char *deep[] = {"weights.{x y.z}.[2].k_1"};
    wrt_ok(vj, deep, 1, out, 1);
    bind_inputs(vj, weights_ab());
    double ct = 1;
    seed_ok(vj, "s", f64_scalar(&ct));
    cr_assert_eq(tsr_call_run(vj), TSR_E_PLUGIN);
    assert_contains(tsr_call_errmsg(vj), "weights.{x y.z}.[2].k_1");
    tsr_call_free(vj);
    tsr_close(c);
}

Test(json_paths, paths_into_text_and_non_differentiable_json_fields_are_refused) {
    tsr_component *c = open_mode(WEIGHTS, TSR_MODE_INPROC);
    tsr_call *jv = new_call(c, TSR_EP_JVP);
    const char *in[] = {"mode.{a}"}, *out[] = {"s"};
    int rc = tsr_call_set_wrt(jv, in, 1, out, 1);
    cr_assert_eq(rc, TSR_E_NOT_DIFFERENTIABLE);
    assert_contains(tsr_call_errmsg(jv), "'mode' is text");
    in[0] = "cfg.{a}";
    cr_assert_eq(tsr_call_set_wrt(jv, in, 1, out, 1), TSR_E_NOT_DIFFERENTIABLE);
    assert_contains(tsr_call_errmsg(jv), "'cfg.{a}': input 'cfg' is not differentiable");
    in[0] = "cfg";
    cr_assert_eq(tsr_call_set_wrt(jv, in, 1, out, 1), TSR_E_NOT_DIFFERENTIABLE);
    /* an output path where the output is an array */
    const char *w[] = {"weights.{a}"}, *bad_out[] = {"s.[0]"};
    cr_assert_eq(tsr_call_set_wrt(jv, w, 1, bad_out, 1), TSR_E_UNKNOWN_FIELD);
    assert_contains(tsr_call_errmsg(jv), "output 's' is an array");
    tsr_call_free(jv);
    tsr_close(c);
}

Test(json_paths, batches_refuse_paths_and_give_text_inputs_to_every_item) {
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(WEIGHTS, v);
        tsr_call *vj = new_call(c, TSR_EP_VJP);
        const char *in[] = {"weights.{a}"}, *out[] = {"s"};
        wrt_ok(vj, in, 1, out, 1);
        double xs[3] = {1, 2, 3}, cts[3] = {1, 1, 1};
        cr_assert_eq(tsr_call_set_text(vj, "weights", weights_ab()), 0);
        bind_ok(vj, "x", f64_vec(xs, 3));
        seed_ok(vj, "s", f64_vec(cts, 3));
        cr_assert_eq(tsr_call_run_batch(vj, 3), TSR_E_UNSUPPORTED);
        assert_contains(tsr_call_errmsg(vj), "inside JSON fields");
        /* apply: x batched, weights (JSON) and mode (TEXT) the same for each */
        tsr_call *ap = new_call(c, TSR_EP_APPLY);
        cr_assert_eq(tsr_call_set_text(ap, "weights", weights_ab()), 0);
        cr_assert_eq(tsr_call_set_text(ap, "mode", "good"), 0);
        bind_ok(ap, "x", f64_vec(xs, 3));
        int rc = tsr_call_run_batch(ap, 3);
        cr_assert_eq(rc, 0, "%s: %s", variants[v].name, tsr_call_errmsg(ap));
        const tsr_array *s = tsr_call_output(ap, "s");
        cr_assert_eq(s->rank, 1);
        cr_assert_eq(s->shape[0], 3);
        for (int i = 0; i < 3; i++)
            cr_assert_float_eq(((double *)s->data)[i], xs[i] + 31.25, 1e-12, "%s item %d",
                               variants[v].name, i);
        /* a text outside the choices fails the batch, as a call */
        cr_assert_eq(tsr_call_set_text(ap, "mode", "other"), 0);
        cr_assert_eq(tsr_call_run_batch(ap, 3), TSR_E_VALUE, "%s", variants[v].name);
        tsr_call_free(ap);
        tsr_call_free(vj);
        tsr_close(c);
    }
}

/* ---- text results in caller buffers --------------------------------------- */

Test(json_paths, a_text_result_buffer_needs_the_length_plus_one_and_gets_the_nul) {
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(KINDS, v);
        tsr_call *ap = new_call(c, TSR_EP_APPLY);
        double x[2] = {1, 2}, a = 1;
        bind_ok(ap, "x", f64_vec(x, 2));
        bind_ok(ap, "a", f64_scalar(&a));
        /* label is "single|none": 11 bytes, 12 with the NUL */
        char buf[16];
        memset(buf, 'Z', sizeof buf);
        cr_assert_eq(tsr_call_set_result_buffer(ap, 1, buf, 11), 0);
        int rc = tsr_call_run(ap);
        cr_assert_neq(rc, 0, "%s: a buffer of the length alone", variants[v].name);
        assert_contains(tsr_call_errmsg(ap), "needs 12 bytes");
        cr_assert_eq(tsr_call_set_result_buffer(ap, 1, buf, 12), 0);
        run_ok(ap);
        size_t len = 0;
        const char *label = tsr_call_output_text(ap, "label", &len);
        cr_assert_eq(label, buf, "%s: the text is in the caller's buffer", variants[v].name);
        cr_assert_eq(len, 11);
        cr_assert_str_eq(buf, "single|none", "%s", variants[v].name);
        cr_assert_eq(buf[12], 'Z', "%s: nothing written past the NUL", variants[v].name);
        tsr_call_free(ap);
        tsr_close(c);
    }
}
