/* SPDX-License-Identifier: MIT */
/*
 * tsr_open refuses what it cannot load, and says why: missing files,
 * files that are not shared objects, missing or refusing entry points,
 * incompatible ABI versions and malformed descriptors. Every failure
 * leaves *out NULL and a message that names the plugin and the cause.
 */
#include "test_util.h"

/* The message of a refused plugin names it, by path or by its name. */
static void assert_names_plugin(const tsr_error *err, const char *path, const char *name) {
    cr_assert(strstr(err->message, path) || (name && strstr(err->message, name)),
              "message names neither %s nor %s: %s", path, name ? name : "-", err->message);
}

static void expect_refusal(const char *file, const char *name, int code, const char *cause) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s.so", TSR_TEST_PLUGIN_DIR, file);
    tsr_error err = open_fails(path, NULL);
    assert_code(err.code, code, err.message);
    assert_names_plugin(&err, path, name);
    if (cause) assert_contains(err.message, cause);
}

/* A path that does not exist: TSR_E_LOAD naming the path. */
Test(load, missing_file) {
    const char *path = TSR_TEST_PLUGIN_DIR "/does_not_exist.so";
    tsr_error err = open_fails(path, NULL);
    assert_code(err.code, TSR_E_LOAD, err.message);
    assert_contains(err.message, path);
}

/* A text file is not a shared object: TSR_E_LOAD naming the path. */
Test(load, not_a_shared_object) {
    char path[256];
    temp_path(path, sizeof path);
    write_file(path, "this is not an ELF file\n");
    tsr_error err = open_fails(path, NULL);
    unlink(path);
    assert_code(err.code, TSR_E_LOAD, err.message);
    assert_contains(err.message, path);
}

/* A truncated shared object is refused before the dynamic loader maps it
 * (the loader would fault with SIGBUS and end the host), in every mode,
 * naming what is cut off. */
Test(load, truncated_shared_object_is_refused_not_fatal) {
    char path[256];
    temp_path(path, sizeof path);
    FILE *in = fopen(TSR_PLUGIN_DIR "/noop.so", "rb");
    cr_assert_not_null(in);
    char head[3000];
    size_t got = fread(head, 1, sizeof head, in);
    fclose(in);
    cr_assert_eq(got, sizeof head);
    FILE *out = fopen(path, "wb");
    cr_assert_not_null(out);
    cr_assert_eq(fwrite(head, 1, got, out), got);
    fclose(out);
    const char *modes[] = {"inproc", "isolated", "worker"};
    for (int m = 0; m < 3; m++) {
        tsr_options *o = tsr_options_new();
        cr_assert_eq(tsr_options_set(o, "mode", modes[m], NULL), 0);
        tsr_error err = open_fails(path, o);
        tsr_options_free(o);
        assert_code(err.code, TSR_E_LOAD, err.message);
        assert_contains(err.message, path);
        assert_contains(err.message, "truncated");
    }
    unlink(path);
}

/* A plugin linked without a library it uses (exp without -lm) borrows the
 * host's in-process; isolated it cannot load, and the message names the
 * symbol and the library that has it in this process. */
Test(load, an_unlinked_libm_is_named) {
    tsr_options *o = tsr_options_new();
    cr_assert_eq(tsr_options_set(o, "mode", "isolated", NULL), 0);
    tsr_error err = open_fails(TSR_TEST_PLUGIN_DIR "/needs_libm.so", o);
    tsr_options_free(o);
    assert_code(err.code, TSR_E_LOAD, err.message);
    assert_contains(err.message, "undefined symbol: exp");
    assert_contains(err.message, "libm.so");
    assert_contains(err.message, "-z,defs");
}

/* A directory is refused too. */
Test(load, directory) {
    tsr_error err = open_fails(TSR_TEST_PLUGIN_DIR, NULL);
    assert_code(err.code, TSR_E_LOAD, err.message);
    assert_contains(err.message, TSR_TEST_PLUGIN_DIR);
}

/* A name without '/' goes through the dynamic loader's search rules: the
 * C math library is found (and refused for lacking the entry symbol),
 * not looked for in the current directory. */
Test(load, bare_name_uses_loader_search) {
    tsr_error err = open_fails("libm.so.6", NULL);
    assert_code(err.code, TSR_E_LOAD, err.message);
    assert_contains(err.message, TSR_PLUGIN_ENTRY_SYMBOL);
}

/* A shared object without tsr_plugin_entry: TSR_E_LOAD naming the symbol. */
Test(load, no_entry_symbol) {
    expect_refusal("no_entry", NULL, TSR_E_LOAD, TSR_PLUGIN_ENTRY_SYMBOL);
}

/* An entry function that returns NULL refuses this host: TSR_E_ABI. */
Test(load, entry_returns_null) {
    expect_refusal("entry_null", NULL, TSR_E_ABI, "entry");
}

/* ABI version 0 and 2 are refused with TSR_E_ABI, and the message gives
 * both the plugin's version and the host's. */
Test(load, incompatible_abi_versions) {
    const char *files[] = {"abi_old", "abi_new"};
    const char *versions[] = {"0", "2"};
    for (int k = 0; k < 2; k++) {
        char path[512], rest[TSR_ERRMSG_MAX];
        snprintf(path, sizeof path, "%s/%s.so", TSR_TEST_PLUGIN_DIR, files[k]);
        tsr_error err = open_fails(path, NULL);
        assert_code(err.code, TSR_E_ABI, err.message);
        assert_names_plugin(&err, path, files[k]);
        /* Digits of the path must not count as versions. */
        strip_substring(rest, sizeof rest, err.message, path);
        assert_contains(rest, versions[k]);
        assert_contains(rest, "1");
    }
}

/* A descriptor whose struct_size is too small to hold ABI v1. */
Test(load, struct_size_too_small) {
    expect_refusal("short_struct", NULL, TSR_E_DESCRIPTOR, "struct_size");
}

/* A field_size too small to hold the v1 tsr_field. */
Test(load, field_size_too_small) {
    expect_refusal("short_field", "short_field", TSR_E_DESCRIPTOR, "field_size");
}

/* A descriptor without a name. */
Test(load, null_component_name) {
    expect_refusal("null_name", NULL, TSR_E_DESCRIPTOR, "name");
}

/* apply is the one required endpoint. */
Test(load, apply_missing) {
    expect_refusal("no_apply", "no_apply", TSR_E_DESCRIPTOR, "apply");
}

/* Two inputs named alike; the message gives the name. */
Test(load, duplicate_input_names) {
    expect_refusal("dup_inputs", "dup_inputs", TSR_E_DESCRIPTOR, "twin");
}

/* Two outputs named alike; the message gives the name. */
Test(load, duplicate_output_names) {
    expect_refusal("dup_outputs", "dup_outputs", TSR_E_DESCRIPTOR, "twin");
}

/* A field of dtype 99 is refused, naming the field. */
Test(load, unknown_dtype) {
    expect_refusal("bad_dtype", "bad_dtype", TSR_E_DESCRIPTOR, "oddtype");
}

/* A field of rank TSR_MAX_FIELD_RANK + 1 is refused, naming the field. */
Test(load, rank_above_maximum) {
    expect_refusal("big_rank", "big_rank", TSR_E_DESCRIPTOR, "deep");
}

/* A field of rank -2 (below TSR_RANK_ANY) is refused, naming the field. */
Test(load, negative_rank) {
    expect_refusal("neg_rank", "neg_rank", TSR_E_DESCRIPTOR, "negative");
}

/* A field of rank 2 with dims NULL is refused, naming the field. */
Test(load, dims_null_with_positive_rank) {
    expect_refusal("null_dims", "null_dims", TSR_E_DESCRIPTOR, "dimless");
}

/* A fixed dimension of -5 is neither a size nor TSR_DIM_ANY. */
Test(load, negative_fixed_dimension) {
    expect_refusal("neg_dim", "neg_dim", TSR_E_DESCRIPTOR, "minus");
}

/* An int32 field cannot be differentiable. */
Test(load, integer_field_marked_differentiable) {
    expect_refusal("int_differentiable", "int_differentiable", TSR_E_DESCRIPTOR, "counter");
}

/* A field with the empty name is refused. */
Test(load, empty_field_name) {
    expect_refusal("empty_field_name", "empty_field_name", TSR_E_DESCRIPTOR, "name");
}

/* A field with a NULL name is refused. */
Test(load, null_field_name) {
    expect_refusal("null_field_name", "null_field_name", TSR_E_DESCRIPTOR, "name");
}

/* A failing init gives TSR_E_INIT with the plugin's own message. */
Test(load, init_failure_propagates_message) {
    const char *path = TEST_PLUGIN("init_fails");
    tsr_error err = open_fails(path, NULL);
    assert_code(err.code, TSR_E_INIT, err.message);
    assert_names_plugin(&err, path, "init_fails");
    assert_contains(err.message, "cannot open mesh 'missing.msh'");
}

/* An init that fails without a message still gives TSR_E_INIT and a
 * message naming the plugin. */
Test(load, init_failure_without_message) {
    const char *path = TEST_PLUGIN("init_fails");
    tsr_options *o = tsr_options_new();
    cr_assert_eq(tsr_options_set_config(o, "quiet", "1"), 0);
    tsr_error err = open_fails(path, o);
    tsr_options_free(o);
    assert_code(err.code, TSR_E_INIT, err.message);
    assert_names_plugin(&err, path, "init_fails");
    assert_contains(err.message, "init");
}

/* NULL path or NULL out is an argument error; a NULL err is allowed. */
Test(load, bad_arguments) {
    tsr_component *c = NULL;
    tsr_error err = {0};
    assert_code(tsr_open(NULL, NULL, &c, &err), TSR_E_ARGUMENT, err.message);
    cr_assert_null(c);
    assert_code(tsr_open(BUNDLED_PLUGIN("noop"), NULL, NULL, &err), TSR_E_ARGUMENT, err.message);
    assert_code(tsr_open(TSR_TEST_PLUGIN_DIR "/does_not_exist.so", NULL, &c, NULL), TSR_E_LOAD,
                "(no message with err NULL)");
    cr_assert_null(c);
}

/* A valid plugin loads: its name, version, description, path and mode
 * are reported, and a load failure before it leaves no trace. */
Test(load, valid_plugin_metadata) {
    tsr_error err = open_fails(TEST_PLUGIN("no_apply"), NULL);
    (void)err;
    tsr_component *c = open_ok(TEST_PLUGIN("stateful"), NULL);
    cr_assert_str_eq(tsr_component_name(c), "stateful");
    cr_assert_str_eq(tsr_component_version(c), "2.5");
    cr_assert_str_eq(tsr_component_description(c), "scales x by a configured factor");
    assert_contains(tsr_component_path(c), "stateful.so");
    cr_assert_eq(tsr_component_mode(c), TSR_MODE_INPROC);
    tsr_close(c);
}

/* The same plugin can be loaded twice at once; each load has its own
 * state (the stateful plugin only accepts this host's exact ABI version,
 * so loading it also shows the host passes TSR_PLUGIN_ABI_VERSION). */
Test(load, two_loads_have_separate_state) {
    tsr_options *o = tsr_options_new();
    cr_assert_eq(tsr_options_set_config(o, "scale", "3"), 0);
    tsr_component *c3 = open_ok(TEST_PLUGIN("stateful"), o);
    cr_assert_eq(tsr_options_set_config(o, "scale", "-2"), 0);
    tsr_component *c2 = open_ok(TEST_PLUGIN("stateful"), o);
    tsr_options_free(o);
    double x[2] = {1.5, -4};
    tsr_component *cs[2] = {c3, c2};
    double factor[2] = {3, -2};
    for (int k = 0; k < 2; k++) {
        tsr_call *call = new_call(cs[k], TSR_EP_APPLY);
        bind_ok(call, "x", f64_vec(x, 2));
        run_ok(call);
        const double *y = tsr_call_output(call, "y")->data;
        for (int i = 0; i < 2; i++) cr_assert_eq(y[i], factor[k] * x[i]);
        tsr_call_free(call);
    }
    tsr_close(c3);
    tsr_close(c2);
}
