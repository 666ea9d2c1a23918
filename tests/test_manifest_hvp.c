/* SPDX-License-Identifier: MIT */
/*
 * A manifest's hvp routine: rdstep's hand-written second-order adjoint
 * RDSTEPH (plugins/legacy/rdstep/rdsteph.f) is the component's native hvp
 * in every mode and agrees with central differences of its first-order
 * adjoint; the tangents, cotangent and results reach the routine by name
 * whichever hvp_inputs are asked for; and a manifest whose hvp arguments
 * do not cover the schema, or that uses hvp's kinds where an endpoint has
 * none, is refused naming the entry; `tessera check-manifest` tries the hvp
 * routine in a worker like the others.
 */
#define _GNU_SOURCE /* asprintf */
#include <jansson.h>

#include "cli_run.h"
#include "temp_dir.h"
#include "worker_util.h"

#define EXAMPLE(name) TSR_PLUGIN_DIR "/" name ".json"
#define NU 7

TestSuite(manifest_hvp, .fini = expect_no_own_segments);

typedef struct rd_point {
    double u[NU], dt, k;
} rd_point;

static rd_point rd_point_new(void) {
    rd_point p = {.dt = 0.05, .k = 0.8};
    fill_random(p.u, NU, 23);
    return p;
}

static void rd_bind(tsr_call *call, rd_point *p) {
    bind_ok(call, "u", f64_vec(p->u, NU));
    bind_ok(call, "dt", f64_scalar(&p->dt));
    bind_ok(call, "k", f64_scalar(&p->k));
}

static const char *const all_in[] = {"u", "dt", "k"};
static const char *const the_out[] = {"u_next"};

/* The native vjp at p for cotangent w: u, dt, k gradients in g (NU + 2). */
static void vjp_at(tsr_component *c, rd_point *p, double *w, double *g) {
    tsr_call *call = new_call(c, TSR_EP_VJP);
    rd_bind(call, p);
    wrt_ok(call, all_in, 3, the_out, 1);
    seed_ok(call, "u_next", f64_vec(w, NU));
    run_ok(call);
    memcpy(g, tsr_call_output(call, "u")->data, NU * sizeof *g);
    g[NU] = *(const double *)tsr_call_output(call, "dt")->data;
    g[NU + 1] = *(const double *)tsr_call_output(call, "k")->data;
    tsr_call_free(call);
}

Test(manifest_hvp, rdstep_hvp_is_native_and_agrees_with_central_differences_of_its_vjp) {
    for (int mode = 0; mode < 3; mode++) {
        tsr_component *c = open_mode(EXAMPLE("rdstep"), (tsr_mode)mode);
        cr_assert(tsr_component_has_native_endpoint(c, TSR_EP_HVP), "%s", mode_names[mode]);
        cr_assert_eq(tsr_component_hvp_source(c), TSR_HVP_NATIVE, "%s", mode_names[mode]);
        rd_point p = rd_point_new();
        double w[NU], vu[NU], vdt = 0.7, vk = -0.3;
        fill_random(w, NU, 5);
        fill_random(vu, NU, 6);
        tsr_call *call = new_call(c, TSR_EP_HVP);
        rd_bind(call, &p);
        wrt_ok(call, all_in, 3, the_out, 1);
        seed_ok(call, "u_next", f64_vec(w, NU));
        tsr_array tu = f64_vec(vu, NU), tdt = f64_scalar(&vdt), tk = f64_scalar(&vk);
        cr_assert_eq(tsr_call_set_tangent(call, "u", &tu), 0, "%s", tsr_call_errmsg(call));
        cr_assert_eq(tsr_call_set_tangent(call, "dt", &tdt), 0, "%s", tsr_call_errmsg(call));
        cr_assert_eq(tsr_call_set_tangent(call, "k", &tk), 0, "%s", tsr_call_errmsg(call));
        run_ok(call);
        double got[NU + 2];
        memcpy(got, tsr_call_output(call, "u")->data, NU * sizeof *got);
        got[NU] = *(const double *)tsr_call_output(call, "dt")->data;
        got[NU + 1] = *(const double *)tsr_call_output(call, "k")->data;
        tsr_call_free(call);
        /* (vjp(x + h v) - vjp(x - h v)) / 2h: vjp is quadratic in dt, k
         * jointly and cubic in u, so the error is O(h^2) */
        const double h = 1e-5;
        rd_point plus = p, minus = p;
        for (int i = 0; i < NU; i++) {
            plus.u[i] += h * vu[i];
            minus.u[i] -= h * vu[i];
        }
        plus.dt += h * vdt, minus.dt -= h * vdt;
        plus.k += h * vk, minus.k -= h * vk;
        double gp[NU + 2], gm[NU + 2];
        vjp_at(c, &plus, w, gp);
        vjp_at(c, &minus, w, gm);
        for (int i = 0; i < NU + 2; i++) {
            double want = (gp[i] - gm[i]) / (2 * h);
            cr_expect(fabs(got[i] - want) <= 1e-7 * (1 + fabs(want)), "%s: hvp[%d] = %.12g, FD %.12g",
                      mode_names[mode], i, got[i], want);
        }
        tsr_close(c);
    }
}

/* Asking for some hvp_inputs only: the routine still gets every tangent
 * (zeros for those not asked) and its other results go to scratch. */
Test(manifest_hvp, hvp_of_one_input_gives_the_same_entries_as_of_all) {
    tsr_component *c = open_ok(EXAMPLE("rdstep"), NULL);
    rd_point p = rd_point_new();
    double w[NU], vu[NU], zero = 0;
    fill_random(w, NU, 7);
    fill_random(vu, NU, 8);
    double full[NU];
    {
        tsr_call *call = new_call(c, TSR_EP_HVP);
        rd_bind(call, &p);
        wrt_ok(call, all_in, 3, the_out, 1);
        seed_ok(call, "u_next", f64_vec(w, NU));
        tsr_array tu = f64_vec(vu, NU), t0 = f64_scalar(&zero);
        cr_assert_eq(tsr_call_set_tangent(call, "u", &tu), 0);
        cr_assert_eq(tsr_call_set_tangent(call, "dt", &t0), 0);
        cr_assert_eq(tsr_call_set_tangent(call, "k", &t0), 0);
        run_ok(call);
        memcpy(full, tsr_call_output(call, "u")->data, sizeof full);
        tsr_call_free(call);
    }
    tsr_call *call = new_call(c, TSR_EP_HVP);
    rd_bind(call, &p);
    const char *const u_only[] = {"u"};
    wrt_ok(call, u_only, 1, the_out, 1);
    seed_ok(call, "u_next", f64_vec(w, NU));
    tsr_array tu = f64_vec(vu, NU);
    cr_assert_eq(tsr_call_set_tangent(call, "u", &tu), 0);
    run_ok(call);
    cr_assert_eq(tsr_call_n_results(call), 1);
    const double *got = tsr_call_output(call, "u")->data;
    for (int i = 0; i < NU; i++) cr_expect_eq(got[i], full[i], "u[%d]", i);
    tsr_call_free(call);
    tsr_close(c);
}

/* rdstep.json with its library by absolute path, edited by edit, opened:
 * the error (code 0 when it opens). */
static tsr_error open_edited(void (*edit)(json_t *endpoints)) {
    json_error_t jerr;
    json_t *root = json_load_file(EXAMPLE("rdstep"), 0, &jerr);
    cr_assert_not_null(root, "%s", jerr.text);
    char *lib = NULL;
    cr_assert(asprintf(&lib, "%s/librdstep.so", TSR_PLUGIN_DIR) > 0);
    json_object_set_new(root, "library", json_string(lib));
    free(lib);
    edit(json_object_get(root, "endpoints"));
    char dir[256], path[512];
    make_temp_dir(dir, sizeof dir, "tessera-manifest-hvp");
    snprintf(path, sizeof path, "%s/rdstep_edited.json", dir);
    cr_assert_eq(json_dump_file(root, path, JSON_INDENT(2)), 0);
    json_decref(root);
    tsr_component *c = NULL;
    tsr_error err = TSR_ERROR_INIT;
    int rc = tsr_open(path, NULL, &c, &err);
    if (rc == 0) {
        tsr_close(c);
        err.code = 0;
    }
    remove_tree(dir);
    return err;
}

static json_t *hvp_args(json_t *endpoints) {
    return json_object_get(json_object_get(endpoints, "hvp"), "args");
}

static void drop_result_k(json_t *endpoints) { json_array_remove(hvp_args(endpoints), 11); }
static void drop_tangent_dt(json_t *endpoints) { json_array_remove(hvp_args(endpoints), 7); }
static void drop_cotangent(json_t *endpoints) { json_array_remove(hvp_args(endpoints), 5); }
static void tangent_of_an_output(json_t *endpoints) {
    json_array_set_new(hvp_args(endpoints), 6, json_pack("{s:s}", "tangent", "u_next"));
}
static void tangent_in_vjp(json_t *endpoints) {
    json_t *args = json_object_get(json_object_get(endpoints, "vjp"), "args");
    json_array_set_new(args, 5, json_pack("{s:s}", "tangent", "u"));
}
static void no_hvp(json_t *endpoints) { json_object_del(endpoints, "hvp"); }

Test(manifest_hvp, hvp_arguments_must_cover_the_schema_and_fit_the_endpoint) {
    struct {
        void (*edit)(json_t *);
        const char *needle;
    } cases[] = {
        {drop_result_k, "endpoints.hvp.args: wrong arity: differentiable input 'k' is passed to no "
                        "'result' argument, so its Hessian-vector product would not be computed"},
        {drop_tangent_dt, "endpoints.hvp.args: wrong arity: differentiable input 'dt' is passed to "
                          "no 'tangent' argument, so its tangent would be ignored"},
        {drop_cotangent, "endpoints.hvp.args: wrong arity: differentiable output 'u_next' is "
                         "passed to no 'cotangent' argument, so its cotangent would be ignored"},
        {tangent_of_an_output, "u_next"},
        {tangent_in_vjp, "endpoints.vjp.args[5]"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tsr_error err = open_edited(cases[k].edit);
        cr_expect_eq(err.code, TSR_E_DESCRIPTOR, "case %zu: %d %s", k, err.code, err.message);
        assert_contains(err.message, cases[k].needle);
    }
    /* without the routine the manifest still opens, and hvp is the core's */
    cr_assert_eq(open_edited(no_hvp).code, 0);
}

Test(manifest_hvp, check_manifest_runs_the_hvp_routine_in_a_worker) {
    cli_run r = run_cli(NULL, "check-manifest", EXAMPLE("rdstep"));
    assert_ok(&r);
    assert_contains(r.out, "\nvjp: ran; results finite; inputs unchanged; the same answer twice\n");
    assert_contains(r.out, "\nhvp: ran; results finite; inputs unchanged; the same answer twice\n");
    assert_contains(r.out, "verdict: safe to run in-process");
    run_free(&r);
}
