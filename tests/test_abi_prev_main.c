/* SPDX-License-Identifier: MIT */
/* A plugin built against the previous main's plugin.h (tests/abi/prev_main,
 * frozen) loads and runs with this library in every mode: its schema (a
 * default, covered by field_size), init with the host's config, apply, jvp
 * and vjp, and a failure it reports, as a plugin binary built before this
 * release would. The plugin ABI version is the current header's, and so
 * are the sizes of the structs the two sides share, but for those this
 * release grew by appending (ABI 1.1: tsr_field's kind and choices,
 * tsr_args' wrt paths; ABI 1.2: tsr_plugin's hvp), whose old size is where
 * the new members start. Its descriptor ends before hvp: the host reads no
 * hvp from it and serves hvp by differences of its vjp. */
#include <dlfcn.h>
#include <stddef.h>

#include <tessera/plugin.h>

#include "worker_util.h"

#define PREV_MAIN TEST_PLUGIN("prev_main")

static const char *const x_only[] = {"x"}, *const y_only[] = {"y"};

static tsr_component *open_prev(tsr_mode mode) {
    tsr_options *o = mode_options(mode);
    set_config(o, "offset", "0.5");
    set_option(o, "log_level", "off");
    tsr_component *c = open_ok(PREV_MAIN, o);
    tsr_options_free(o);
    return c;
}

Test(abi_prev_main, the_frozen_header_has_this_releases_abi_version_and_struct_sizes) {
    void *h = dlopen(PREV_MAIN, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(h, "%s", dlerror());
    const size_t *sizes = dlsym(h, "prev_main_sizes");
    cr_assert_not_null(sizes, "%s", dlerror());
    const size_t now[] = {sizeof(tsr_plugin), sizeof(tsr_field), sizeof(tsr_array),
                          sizeof(tsr_args), sizeof(tsr_host_api), sizeof(tsr_ctx),
                          sizeof(tsr_dim)};
    const char *names[] = {"tsr_plugin", "tsr_field", "tsr_array", "tsr_args",
                           "tsr_host_api", "tsr_ctx", "tsr_dim"};
    /* grown by appending: the old layout ends where the new members start */
    const size_t then[] = {offsetof(tsr_plugin, hvp), offsetof(tsr_field, kind), sizeof(tsr_array),
                           offsetof(tsr_args, wrt_in_paths), sizeof(tsr_host_api),
                           sizeof(tsr_ctx), sizeof(tsr_dim)};
    for (size_t k = 0; k < sizeof now / sizeof now[0]; k++) {
        cr_expect_eq(sizes[k], then[k], "sizeof(%s): %zu then, %zu expected", names[k],
                     sizes[k], then[k]);
        cr_expect_leq(sizes[k], now[k], "sizeof(%s) shrank", names[k]);
    }
    const uint32_t *abi = dlsym(h, "prev_main_abi_version");
    cr_assert_not_null(abi, "%s", dlerror());
    cr_assert_eq(*abi, TSR_PLUGIN_ABI_VERSION);
    dlclose(h);
}

/* Everything the old plugin does, in one mode. */
static void runs_in(tsr_mode mode) {
    tsr_component *c = open_prev(mode);
    cr_assert_eq(tsr_component_mode(c), mode);
    cr_assert_str_eq(tsr_component_name(c), "prev_main");
    cr_assert_eq(tsr_component_n_inputs(c), 2);
    const tsr_field *scale = tsr_component_input(c, 1);
    cr_assert_str_eq(scale->name, "scale");
    /* members past its field_size read as an array field without choices */
    cr_assert_eq(scale->kind, TSR_KIND_ARRAY);
    cr_assert_null(scale->choices);
    cr_assert_eq(scale->n_choices, 0);
    cr_assert_not_null(scale->default_value, "the default behind field_size was read");
    cr_assert_eq(*(const double *)scale->default_value->data, 2.0);
    cr_assert_eq(tsr_field_required(scale), 0);

    /* apply with the default scale (2) and the configured offset (0.5). */
    double *x = tsr_component_alloc(c, 3 * sizeof(double));
    cr_assert_not_null(x);
    x[0] = 1, x[1] = 2, x[2] = -4;
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 3));
    run_ok(call);
    const double *y = tsr_call_output(call, "y")->data;
    cr_assert_eq(y[0], 2.5);
    cr_assert_eq(y[1], 4.5);
    cr_assert_eq(y[2], -7.5);
    /* A failure the plugin reports reaches the host with its message. */
    x[0] = NAN;
    assert_contains(run_fails(call, TSR_E_PLUGIN), "x[0] is NaN");
    tsr_call_free(call);

    /* jvp and vjp with scale given: dy = 3 dx, dx = 3 dy. */
    double s = 3, seed[3] = {1, -1, 0.25};
    x[0] = 1;
    tsr_endpoint eps[] = {TSR_EP_JVP, TSR_EP_VJP};
    for (int k = 0; k < 2; k++) {
        call = new_call(c, eps[k]);
        bind_ok(call, "x", f64_vec(x, 3));
        bind_ok(call, "scale", f64_scalar(&s));
        wrt_ok(call, x_only, 1, y_only, 1);
        seed_ok(call, eps[k] == TSR_EP_JVP ? "x" : "y", f64_vec(seed, 3));
        run_ok(call);
        const double *d = tsr_call_result(call, 0)->data;
        for (int i = 0; i < 3; i++)
            cr_assert_eq(d[i], 3 * seed[i], "%s[%d]", tsr_endpoint_name(eps[k]), i);
        tsr_call_free(call);
    }
    /* No hvp behind its struct_size: served from the vjp, which is
     * linear in x, so the product is zero. */
    cr_assert_eq(tsr_component_has_native_endpoint(c, TSR_EP_HVP), 0);
    cr_assert_eq(tsr_component_hvp_source(c), TSR_HVP_FD_VJP);
    call = new_call(c, TSR_EP_HVP);
    bind_ok(call, "x", f64_vec(x, 3));
    bind_ok(call, "scale", f64_scalar(&s));
    wrt_ok(call, x_only, 1, y_only, 1);
    seed_ok(call, "y", f64_vec(seed, 3));
    tsr_array t = f64_vec(seed, 3);
    cr_assert_eq(tsr_call_set_tangent(call, "x", &t), 0, "%s", tsr_call_errmsg(call));
    run_ok(call);
    const double *hv = tsr_call_output(call, "x")->data;
    for (int i = 0; i < 3; i++) cr_assert_float_eq(hv[i], 0.0, 1e-6, "hvp[%d] = %g", i, hv[i]);
    tsr_call_free(call);
    tsr_component_free_buffer(c, x);
    tsr_close(c);
}

Test(abi_prev_main, an_old_plugin_runs_in_process) { runs_in(TSR_MODE_INPROC); }
Test(abi_prev_main, an_old_plugin_runs_isolated) { runs_in(TSR_MODE_ISOLATED); }
Test(abi_prev_main, an_old_plugin_runs_in_a_worker) { runs_in(TSR_MODE_WORKER); }
