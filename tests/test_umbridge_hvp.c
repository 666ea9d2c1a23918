/* SPDX-License-Identifier: MIT */
/* hvp of a UM-Bridge model through the C API: the "quad" model of
 * tests/python/umbridge_models.py served by umbridge.serve_models, whose
 * ApplyHessian is written out by hand, against the same Hessian written
 * out here; in-process and in a worker. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "net_util.h"
#include "tessera/tessera.h"

static test_server quad_server;

/* python3 tests/python/umbridge_models.py PORT quad plain, answering once
 * it accepts connections. A server that exits before it accepts (its port
 * taken between free_port and its bind, by a test running beside this
 * one) is started again on another port, up to three times; its stderr
 * goes to a file whose end the failure shows. */
static void start_models(void) {
    static const char *const args[] = {TSR_SOURCE_DIR "/tests/python/umbridge_models.py", "{port}",
                                       "quad", "plain", NULL};
    static char python[4096], log[64];
    cr_assert_eq(find_program("python3", python, sizeof python), 0, "no python3 on PATH");
    snprintf(log, sizeof log, "/tmp/tessera-umbridge-hvp-%d.log", (int)getpid());
    server_spec spec = {.program = python, .args = args, .err = log};
    for (int attempt = 0; attempt < 3; attempt++) {
        cr_assert_eq(server_start(&quad_server, &spec), 0);
        time_t deadline = time(NULL) + 60;
        while (!accepts(quad_server.port) && !server_exited(&quad_server) &&
               time(NULL) < deadline)
            nanosleep(&(struct timespec){0, 50 * 1000000L}, NULL);
        if (accepts(quad_server.port) || !server_exited(&quad_server)) break;
    }
    cr_assert(accepts(quad_server.port), "the UM-Bridge server did not start: %s",
              file_tail(log));
    unlink(log);
}

static void stop_models(void) { server_stop(&quad_server); }

TestSuite(umbridge_hvp, .init = start_models, .fini = stop_models, .timeout = 120);

static tsr_component *open_model(const char *model, const char *mode) {
    char url[128];
    snprintf(url, sizeof url, "%s#%s", quad_server.url, model);
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_options_set(o, "mode", mode, &err), 0, "%s", err.message);
    tsr_component *c = NULL;
    int rc = tsr_open(url, o, &c, &err);
    tsr_options_free(o);
    cr_assert_eq(rc, 0, "%s", err.message);
    return c;
}

static tsr_array vec(double *data, int64_t n) {
    return (tsr_array){.data = data, .dtype = TSR_FLOAT64, .rank = 1, .shape = {n}};
}

/* quad: out0 = [x0^2 y + x1^3], out1 = [x0 x1, y^2] at x = (1.5, -0.5), y = 2. */
static double x[2] = {1.5, -0.5}, y[1] = {2.0};

static void check_hvp(const char *mode) {
    tsr_component *c = open_model("quad", mode);
    cr_assert_eq(tsr_component_hvp_source(c), TSR_HVP_NATIVE);
    double w0[1] = {0.7}, w1[2] = {-1.0, 2.5}, v0[2] = {0.3, -2.0}, v1[1] = {1.25};
    tsr_call *call = tsr_call_new(c, TSR_EP_HVP);
    tsr_array ax = vec(x, 2), ay = vec(y, 1), aw0 = vec(w0, 1), aw1 = vec(w1, 2), av0 = vec(v0, 2),
              av1 = vec(v1, 1);
    const char *ins[] = {"in0", "in1"}, *outs[] = {"out0", "out1"};
    cr_assert_eq(tsr_call_set_input(call, "in0", &ax), 0);
    cr_assert_eq(tsr_call_set_input(call, "in1", &ay), 0);
    cr_assert_eq(tsr_call_set_wrt(call, ins, 2, outs, 2), 0, "%s", tsr_call_errmsg(call));
    cr_assert_eq(tsr_call_set_seed(call, "out0", &aw0), 0);
    cr_assert_eq(tsr_call_set_seed(call, "out1", &aw1), 0);
    cr_assert_eq(tsr_call_set_tangent(call, "in0", &av0), 0);
    cr_assert_eq(tsr_call_set_tangent(call, "in1", &av1), 0);
    cr_assert_eq(tsr_call_run(call), 0, "%s", tsr_call_errmsg(call));
    /* sum over o, j of d/d in_j (w_o . d out_o / d in_k) v_j, by hand */
    double want_x[2] = {w0[0] * (2 * y[0] * v0[0] + 2 * x[0] * v1[0]) + w1[0] * v0[1],
                        w0[0] * (6 * x[1] * v0[1]) + w1[0] * v0[0]};
    double want_y = w0[0] * (2 * x[0] * v0[0]) + w1[1] * 2 * v1[0];
    const double *gx = tsr_call_result(call, 0)->data, *gy = tsr_call_result(call, 1)->data;
    cr_expect_float_eq(gx[0], want_x[0], 1e-12);
    cr_expect_float_eq(gx[1], want_x[1], 1e-12);
    cr_expect_float_eq(gy[0], want_y, 1e-12);
    tsr_call_free(call);
    tsr_close(c);
}

Test(umbridge_hvp, hvp_sums_apply_hessian_over_cotangents_and_tangents_in_process) {
    check_hvp("inproc");
}

Test(umbridge_hvp, hvp_sums_apply_hessian_over_cotangents_and_tangents_in_a_worker) {
    check_hvp("worker");
}

Test(umbridge_hvp, a_zero_tangent_holds_its_input_fixed) {
    tsr_component *c = open_model("quad", "inproc");
    double w0[1] = {1.0}, w1[2] = {0.0, 0.0}, v0[2] = {0.0, 0.0}, v1[1] = {1.0};
    tsr_call *call = tsr_call_new(c, TSR_EP_HVP);
    tsr_array ax = vec(x, 2), ay = vec(y, 1), aw0 = vec(w0, 1), aw1 = vec(w1, 2), av0 = vec(v0, 2),
              av1 = vec(v1, 1);
    const char *ins[] = {"in0", "in1"}, *outs[] = {"out0", "out1"};
    tsr_call_set_input(call, "in0", &ax);
    tsr_call_set_input(call, "in1", &ay);
    cr_assert_eq(tsr_call_set_wrt(call, ins, 2, outs, 2), 0);
    tsr_call_set_seed(call, "out0", &aw0);
    tsr_call_set_seed(call, "out1", &aw1);
    tsr_call_set_tangent(call, "in0", &av0);
    tsr_call_set_tangent(call, "in1", &av1);
    cr_assert_eq(tsr_call_run(call), 0, "%s", tsr_call_errmsg(call));
    /* the mixed block d2 out0 / dx dy: (2 x0, 0) */
    const double *gx = tsr_call_result(call, 0)->data;
    cr_expect_float_eq(gx[0], 2 * x[0], 1e-12);
    cr_expect_float_eq(gx[1], 0.0, 1e-12);
    tsr_call_free(call);
    tsr_close(c);
}

Test(umbridge_hvp, a_model_without_derivatives_has_no_hvp) {
    tsr_component *c = open_model("plain", "inproc");
    cr_expect_eq(tsr_component_hvp_source(c), TSR_HVP_NONE);
    tsr_close(c);
}
