/* SPDX-License-Identifier: MIT */
/*
 * The UM-Bridge mapping of `tessera serve` (bindings/http/umbridge_map.c)
 * on bundled plugins, without HTTP: which fields are vectors, sizes from
 * config and the serve option (and the error naming a symbol without
 * one), symbol sizes inferred from a call's vectors, fields set from
 * config, every check before the component runs, and the segment names
 * the shared-memory routes accept (umbridge_shm.c).
 */
#include <math.h>

#include "test_util.h"
#include "umbridge.h"

static um_vec vec_of(double *v, int64_t n) { return (um_vec){.data = v, .len = n}; }

/* um_run's results, copied. */
typedef struct results {
    um_vec v[8];
    int32_t n;
} results;

static int collect(void *user, int32_t k, const double *data, int64_t len, um_err *e) {
    (void)e;
    results *r = user;
    cr_assert_eq(k, r->n, "results come in order");
    r->v[k].len = len;
    r->v[k].data = malloc(len ? (size_t)len * sizeof(double) : 1);
    cr_assert_not_null(r->v[k].data);
    if (len) memcpy(r->v[k].data, data, (size_t)len * sizeof(double));
    r->n++;
    return 0;
}

static void results_free(results *res) {
    for (int32_t i = 0; i < res->n; i++) free(res->v[i].data);
    memset(res, 0, sizeof *res);
}

/* um_run into *res (released first). */
static int run_into(tsr_component *c, const char *sizes, const um_args *a, results *res,
                    um_err *e) {
    results_free(res);
    return um_run(c, sizes, a, collect, res, e);
}

Test(umbridge_map, float_arrays_are_vectors_and_other_kinds_are_not) {
    tsr_component *heat = open_ok(BUNDLED_PLUGIN("heat"), NULL);
    int32_t idx[UM_MAX_VECTORS];
    /* conductivity, source, initial_temperature, observations, dt; not steps (int64) */
    cr_assert_eq(um_vector_inputs(heat, idx, UM_MAX_VECTORS), 5);
    cr_assert_eq(idx[4], 4);
    cr_assert_not(um_is_vector(tsr_component_input(heat, 5)));
    cr_assert_eq(um_vector_outputs(heat, idx, UM_MAX_VECTORS), 2);
    tsr_close(heat);
    tsr_component *interp = open_ok(BUNDLED_PLUGIN("interp1d"), NULL);
    cr_assert_eq(um_vector_inputs(interp, idx, UM_MAX_VECTORS), 3);   /* method is text */
    tsr_close(interp);
}

Test(umbridge_map, sizes_come_from_config_then_the_option_else_name_the_symbol) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    int64_t *sizes = NULL;
    int32_t n = 0;
    um_err e = {0};
    json_t *config = json_pack("{s:i}", "n", 7);
    cr_assert_eq(um_sizes(c, "m=1,n=3", config, 0, &sizes, &n, &e), 0, "%s", e.message);
    cr_assert_eq(n, 3);
    cr_assert(sizes[0] == 7 && sizes[1] == 1 && sizes[2] == 1);
    free(sizes);
    cr_assert_eq(um_sizes(c, "m=1,n=3", NULL, 0, &sizes, &n, &e), 0);
    cr_assert_eq(sizes[0], 3);
    free(sizes);
    cr_assert_eq(um_sizes(c, NULL, NULL, 0, &sizes, &n, &e), -1);
    cr_assert_str_eq(e.type, "InvalidInput");
    cr_assert_eq(e.status, 400);
    assert_contains(e.message, "symbol 'n'");
    assert_contains(e.message, "config key \"n\"");
    json_decref(config);
    config = json_pack("{s:s}", "n", "three");
    cr_assert_eq(um_sizes(c, NULL, config, 0, &sizes, &n, &e), -1);
    assert_contains(e.message, "must be an integer");
    json_decref(config);
    cr_assert_eq(um_sizes(c, NULL, NULL, 1, &sizes, &n, &e), 0);   /* value is a scalar */
    cr_assert(n == 1 && sizes[0] == 1);
    free(sizes);
    tsr_close(c);
}

Test(umbridge_map, the_size_option_is_checked_whole) {
    char why[256];
    cr_assert_eq(um_sizes_check("n=2,m=30", why, sizeof why), 0);
    cr_assert_eq(um_sizes_check(NULL, why, sizeof why), 0);
    const char *bad[] = {"n", "=2", "n=", "n=-1", "n=2x", "n=2,,m=3", "n=99999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(um_sizes_check(bad[i], why, sizeof why), -1, "%s", bad[i]);
}

Test(umbridge_map, evaluate_infers_the_symbol_from_the_vectors_and_checks_lengths) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    double x[] = {1.0, 2.0, 3.0}, a = 1.0, b = 100.0;
    um_vec in[] = {vec_of(x, 3), vec_of(&a, 1), vec_of(&b, 1)};
    um_args args = {.op = UM_EVALUATE, .in = in, .n_in = 3};
    results res = {0};
    um_err e = {0};
    cr_assert_eq(run_into(c, "n=9", &args, &res, &e), 0, "%s", e.message);
    cr_assert(res.n == 1 && res.v[0].len == 1);
    cr_assert_float_eq(res.v[0].data[0], 100.0 + 101.0, 1e-12);
    
    in[1].len = 2;   /* a scalar given two values */
    cr_assert_eq(run_into(c, NULL, &args, &res, &e), -1);
    cr_assert_str_eq(e.type, "InvalidInput");
    assert_contains(e.message, "Input parameter 1 (a) has invalid length! Expected 1 but got 2");
    in[1].len = 1;
    args.n_in = 2;
    cr_assert_eq(run_into(c, NULL, &args, &res, &e), -1);
    assert_contains(e.message, "Expected 3 but got 2");
    results_free(&res);
    tsr_close(c);
}

Test(umbridge_map, derivative_indices_and_vector_lengths_are_checked_before_the_run) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    double x[] = {1.0, 2.0}, a = 1.0, b = 100.0, s[] = {1.0, 1.0};
    um_vec in[] = {vec_of(x, 2), vec_of(&a, 1), vec_of(&b, 1)};
    um_args args = {.op = UM_GRADIENT, .in = in, .n_in = 3, .sens = vec_of(s, 1)};
    results res = {0};
    um_err e = {0};
    cr_assert_eq(run_into(c, NULL, &args, &res, &e), 0, "%s", e.message);
    cr_assert_eq(res.v[0].len, 2);
    cr_assert_float_eq(res.v[0].data[0], -400.0 * 1 * (2 - 1) - 0.0, 1e-12);
    
    struct {
        int64_t out_wrt, in_wrt, sens_len;
        const char *words;
    } bad[] = {{1, 0, 1, "outWrt"}, {-1, 0, 1, "outWrt"}, {0, 3, 1, "inWrt"},
               {0, 0, 2, "sens has invalid length! Expected 1 but got 2"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        args.out_wrt = bad[i].out_wrt;
        args.in_wrt = bad[i].in_wrt;
        args.sens.len = bad[i].sens_len;
        cr_assert_eq(run_into(c, NULL, &args, &res, &e), -1);
        cr_assert_str_eq(e.type, "InvalidInput");
        assert_contains(e.message, bad[i].words);
    }
    args = (um_args){.op = UM_APPLY_JACOBIAN, .in = in, .n_in = 3, .vec = vec_of(s, 1)};
    cr_assert_eq(run_into(c, NULL, &args, &res, &e), -1);
    assert_contains(e.message, "vec has invalid length! Expected 2 but got 1");
    results_free(&res);
    tsr_close(c);
}

Test(umbridge_map, a_field_umbridge_cannot_carry_comes_from_config) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("heat"), NULL);
    double k[4] = {1, 1, 1, 1}, src[4] = {1, 1, 1, 1}, t0[4] = {0}, obs[4] = {0}, dt = 0.1;
    um_vec in[] = {vec_of(k, 4), vec_of(src, 4), vec_of(t0, 4), vec_of(obs, 4), vec_of(&dt, 1)};
    um_args args = {.op = UM_EVALUATE, .in = in, .n_in = 5};
    results res = {0};
    um_err e = {0};
    cr_assert_eq(run_into(c, NULL, &args, &res, &e), -1);
    assert_contains(e.message, "input 'steps' (int64)");
    json_t *config = json_pack("{s:i}", "steps", 3);
    args.config = config;
    cr_assert_eq(run_into(c, NULL, &args, &res, &e), 0, "%s", e.message);
    cr_assert(res.n == 2 && res.v[0].len == 4 && res.v[1].len == 1);
    for (int i = 0; i < 4; i++) cr_assert(res.v[0].data[i] > 0 && isfinite(res.v[0].data[i]));
    
    json_object_set_new(config, "steps", json_real(2.5));
    cr_assert_eq(run_into(c, NULL, &args, &res, &e), -1);
    cr_assert_str_eq(e.type, "InvalidInput");
    assert_contains(e.message, "steps");
    json_decref(config);
    results_free(&res);
    tsr_close(c);
}

Test(umbridge_shm, segment_names_are_checked) {
    char name[160];
    um_err e = {0};
    cr_assert_eq(um_shm_name(name, sizeof name, "/umbridge", "in", "123", 2, &e), 0);
    cr_assert_str_eq(name, "/umbridge_in_123_2");
    cr_assert_eq(um_shm_name(name, sizeof name, "/umbridge_test", "shmem_out", "9", -1, &e), 0);
    cr_assert_str_eq(name, "/umbridge_test_shmem_out_9");
    const char *prefixes[] = {"", "/", "umbridge", "/a/b", "/a b", "/..\n"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        cr_assert_eq(um_shm_name(name, sizeof name, prefixes[i], "in", "1", 0, &e), -1, "%s",
                     prefixes[i]);
    const char *tids[] = {"", "1/2", "..", "a.b", "1234567890123456789012345678901234"};
    for (size_t i = 0; i < sizeof tids / sizeof tids[0]; i++)
        cr_assert_eq(um_shm_name(name, sizeof name, "/u", "in", tids[i], 0, &e), -1, "%s",
                     tids[i]);
    cr_assert_eq(um_shm_read("/tessera-umbridge-test-no-such-segment", (double[1]){0}, 1, &e), -1);
    assert_contains(e.message, "cannot open");
}

Test(umbridge_map, apply_hessian_is_hvp_with_the_tangent_on_inwrt2_and_zero_on_inwrt1) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("rosenbrock"), NULL);
    double x[] = {0.5, -1.0}, a = 1.0, b = 100.0, sens = 2.0, v[] = {1.0, 3.0}, vb = 1.0;
    um_vec in[] = {vec_of(x, 2), vec_of(&a, 1), vec_of(&b, 1)};
    um_args args = {.op = UM_APPLY_HESSIAN, .in = in, .n_in = 3, .sens = vec_of(&sens, 1),
                    .vec = vec_of(v, 2)};
    results res = {0};
    um_err e = {0};
    cr_assert_eq(run_into(c, NULL, &args, &res, &e), 0, "%s", e.message);
    /* H = [[-4b(x1 - x0^2) + 8b x0^2 + 2, -4b x0], [-4b x0, 2b]] */
    double h00 = -4 * b * (x[1] - x[0] * x[0]) + 8 * b * x[0] * x[0] + 2, h01 = -4 * b * x[0],
           h11 = 2 * b;
    cr_assert(res.n == 1 && res.v[0].len == 2);
    cr_assert_float_eq(res.v[0].data[0], sens * (h00 * v[0] + h01 * v[1]), 1e-9);
    cr_assert_float_eq(res.v[0].data[1], sens * (h01 * v[0] + h11 * v[1]), 1e-9);
    
    /* inWrt1 = x, inWrt2 = b: d/db (sens * dvalue/dx) = sens * [-4 x0 (x1 - x0^2), 2 (x1 - x0^2)] */
    args.in_wrt2 = 2;
    args.vec = vec_of(&vb, 1);
    cr_assert_eq(run_into(c, NULL, &args, &res, &e), 0, "%s", e.message);
    double r = x[1] - x[0] * x[0];
    cr_assert_float_eq(res.v[0].data[0], sens * -4 * x[0] * r, 1e-9);
    cr_assert_float_eq(res.v[0].data[1], sens * 2 * r, 1e-9);
    
    args.vec = vec_of(v, 2);   /* vec sized for x, not for b */
    cr_assert_eq(run_into(c, NULL, &args, &res, &e), -1);
    assert_contains(e.message, "vec has invalid length! Expected 1 but got 2");
    results_free(&res);
    tsr_close(c);
}
