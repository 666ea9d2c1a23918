/* SPDX-License-Identifier: MIT */
/* Fields beyond arrays (plugin.h, "Field kinds"): TEXT inputs with
 * choices and defaults, JSON inputs, text results, arrays of any rank and
 * components without outputs, in every mode (worker: both spawns and the
 * files transport); and the descriptors that misuse them. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#include <tessera/payload.h>

#include "worker_util.h"

#define KINDS TEST_PLUGIN("kinds")

/* Each way of running a component. */
typedef struct variant {
    tsr_mode mode;
    const char *spawn;       /* worker: "exec" or "fork" */
    const char *transport;   /* worker: "shm" or "files" */
} variant;

/* spawn=fork needs a single-threaded host: its test runs in a child
 * (forked_worker_carries_text_both_ways). */
static const variant variants[] = {
    {TSR_MODE_INPROC, NULL, NULL},
    {TSR_MODE_ISOLATED, NULL, NULL},
    {TSR_MODE_WORKER, "exec", "shm"},
    {TSR_MODE_WORKER, "exec", "files"},
};
#define N_VARIANTS (sizeof variants / sizeof variants[0])

static tsr_component *open_variant(const char *path, size_t v) {
    tsr_options *o = mode_options(variants[v].mode);
    if (variants[v].spawn) set_option(o, "spawn", variants[v].spawn);
    if (variants[v].transport) set_option(o, "transport", variants[v].transport);
    tsr_component *c = open_ok(path, o);
    tsr_options_free(o);
    return c;
}

static const char *variant_name(size_t v) {
    static const char *names[] = {"inproc", "isolated", "worker exec", "worker files"};
    return names[v];
}

/* Binds x (3 values) and a (a 2x2 matrix). */
static void bind_arrays(tsr_call *call, double *x, double *a) {
    bind_ok(call, "x", f64_vec(x, 3));
    bind_ok(call, "a", f64_mat(a, 2, 2));
}

static void check_label(tsr_call *call, const char *want, size_t v) {
    size_t len = 0;
    const char *label = tsr_call_output_text(call, "label", &len);
    cr_assert_not_null(label, "%s: no label", variant_name(v));
    cr_assert_str_eq(label, want, "%s", variant_name(v));
    cr_assert_eq(len, strlen(want), "%s", variant_name(v));
}

/* apply with every kind of input: text set with tsr_call_set_text, JSON,
 * the text default, a uint8 array bound to a TEXT field; text and
 * any-rank results, in each mode. */
Test(kinds, apply_text_json_and_any_rank_in_every_mode) {
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(KINDS, v);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        double x[3] = {1, 2, 3}, a[4] = {1, -1, 0.5, 2};
        bind_arrays(call, x, a);
        /* mode left out: its default "single" */
        run_ok(call);
        check_label(call, "single|none", v);
        const tsr_array *total = tsr_call_output(call, "total");
        cr_assert_eq(total->rank, 2, "%s", variant_name(v));
        cr_assert_eq(((const double *)total->data)[3], 2.0);
        cr_assert_eq(tsr_call_set_text(call, "mode", "double"), 0, "%s", tsr_call_errmsg(call));
        cr_assert_eq(tsr_call_set_text(call, "config", "{\"k\": [1, 2]}"), 0);
        run_ok(call);
        check_label(call, "double|{\"k\": [1, 2]}", v);
        cr_assert_eq(((const double *)tsr_call_output(call, "y")->data)[2], 6.0);
        cr_assert_eq(((const double *)tsr_call_output(call, "total")->data)[1], -3.0);
        /* the same call again, and a rank-3 a: any rank */
        double a3[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        int64_t s3[3] = {2, 2, 2};
        bind_ok(call, "a", make_array(a3, TSR_FLOAT64, 3, s3));
        run_ok(call);
        total = tsr_call_output(call, "total");
        cr_assert_eq(total->rank, 3);
        cr_assert_eq(((const double *)total->data)[7], 24.0, "%s", variant_name(v));
        /* bytes of a uint8 array, not NUL-terminated: the host adds it */
        char bytes[8] = {'c', 'a', 'f', '\xc3', '\xa9', 'X', 'X', 'X'};
        int64_t len = 5;
        bind_ok(call, "mode", make_array(bytes, TSR_UINT8, 1, &len));
        run_ok(call);
        check_label(call, "caf\xc3\xa9|{\"k\": [1, 2]}", v);
        /* changed in place between runs: read again */
        memcpy(bytes, "double", 6);
        len = 6;
        bind_ok(call, "mode", make_array(bytes, TSR_UINT8, 1, &len));
        run_ok(call);
        check_label(call, "double|{\"k\": [1, 2]}", v);
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* A text outside the choices fails before the endpoint runs, with
 * TSR_E_VALUE, pydantic's wording and the field's path; and the call
 * serves on with an allowed value. */
Test(kinds, text_outside_choices_is_refused_naming_the_allowed_values) {
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(KINDS, v);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        double x[3] = {1, 2, 3}, a[4] = {0};
        bind_arrays(call, x, a);
        cr_assert_eq(tsr_call_set_text(call, "mode", "triple"), 0);
        const char *msg = run_fails(call, TSR_E_VALUE);
        assert_contains(msg, "Input should be 'single', 'double' or 'caf\xc3\xa9'");
        assert_contains(msg, "mode");
        cr_assert_str_eq(tsr_call_errloc(call), "inputs.mode");
        cr_assert_str_eq(tsr_error_type(tsr_call_errcode(call)), "literal_error");
        /* a prefix of a choice is not that choice */
        cr_assert_eq(tsr_call_set_text(call, "mode", "doub"), 0);
        run_fails(call, TSR_E_VALUE);
        cr_assert_eq(tsr_call_set_text(call, "mode", "single"), 0);
        run_ok(call);
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* Text that is not UTF-8 (a lone continuation byte, an overlong NUL, a
 * surrogate) is refused with TSR_E_VALUE, in a TEXT and a JSON field. */
Test(kinds, invalid_utf8_is_refused) {
    static const char *bad[] = {"\x80", "\xc0\x80", "\xed\xa0\x80", "ab\xf5\x80\x80\x80", "\xe2\x82"};
    for (size_t v = 0; v < N_VARIANTS; v += 2) {
        tsr_component *c = open_variant(KINDS, v);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        double x[3] = {1, 2, 3}, a[4] = {0};
        bind_arrays(call, x, a);
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            cr_assert_eq(tsr_call_set_text(call, "config", bad[k]), 0);
            const char *msg = run_fails(call, TSR_E_VALUE);
            assert_contains(msg, "unicode");
            cr_assert_str_eq(tsr_call_errloc(call), "inputs.config");
        }
        cr_assert_eq(tsr_call_set_text(call, "config", "\"\xe2\x82\xac\""), 0);   /* the euro sign */
        run_ok(call);
        check_label(call, "single|\"\xe2\x82\xac\"", v);
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* tsr_call_set_text on an array field: TSR_E_DTYPE; on an unknown
 * field: TSR_E_UNKNOWN_FIELD; NULL text: TSR_E_ARGUMENT. A float array
 * bound to a TEXT field is refused by dtype. tsr_call_output_text of an
 * array output is NULL. */
Test(kinds, text_api_misuse_is_refused) {
    tsr_component *c = open_ok(KINDS, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    expect_failure(call, tsr_call_set_text(call, "x", "1"), TSR_E_DTYPE);
    assert_contains(tsr_call_errmsg(call), "'x'");
    expect_failure(call, tsr_call_set_text(call, "nope", "1"), TSR_E_UNKNOWN_FIELD);
    expect_failure(call, tsr_call_set_text(call, "mode", NULL), TSR_E_ARGUMENT);
    double x[3] = {1, 2, 3}, a[4] = {0};
    bind_arrays(call, x, a);
    bind_or_run_fails(call, "mode", f64_vec(x, 3), TSR_E_DTYPE);
    cr_assert_eq(tsr_call_set_text(call, "mode", "single"), 0);
    run_ok(call);
    cr_assert_null(tsr_call_output_text(call, "y", NULL));
    cr_assert_null(tsr_call_output_text(call, "nope", NULL));
    cr_assert_not_null(tsr_call_output_text(call, "label", NULL));
    tsr_call_free(call);
    tsr_close(c);
}

/* abstract_eval is given the bytes of text inputs (it sizes label from
 * them), and an any-rank output takes the rank it sets. */
Test(kinds, abstract_eval_reads_text_inputs_in_every_mode) {
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(KINDS, v);
        tsr_call *call = new_call(c, TSR_EP_ABSTRACT_EVAL);
        int64_t n = 4, s3[3] = {2, 3, 4};
        bind_ok(call, "x", make_array(NULL, TSR_FLOAT64, 1, &n));
        bind_ok(call, "a", make_array(NULL, TSR_FLOAT64, 3, s3));
        cr_assert_eq(tsr_call_set_text(call, "mode", "double"), 0);
        cr_assert_eq(tsr_call_set_text(call, "config", "[1]"), 0);
        run_ok(call);
        const tsr_array *label = tsr_call_output(call, "label");
        cr_assert_eq(label->rank, 1);
        cr_assert_eq(label->shape[0], 10, "%s: %lld", variant_name(v), (long long)label->shape[0]);
        const tsr_array *total = tsr_call_output(call, "total");
        cr_assert_eq(total->rank, 3, "%s", variant_name(v));
        cr_assert_eq(total->shape[2], 4);
        /* the choices hold in abstract_eval too */
        cr_assert_eq(tsr_call_set_text(call, "mode", "nope"), 0);
        run_fails(call, TSR_E_VALUE);
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* jvp and vjp of an any-rank input and output, in every mode. */
Test(kinds, jvp_and_vjp_of_any_rank_fields_in_every_mode) {
    static const char *in[] = {"a"}, *out[] = {"total"};
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(KINDS, v);
        double x[3] = {1, 2, 3}, a[4] = {1, 2, 3, 4}, t[4] = {1, 0, -1, 2};
        for (int e = 0; e < 2; e++) {
            tsr_call *call = new_call(c, e ? TSR_EP_VJP : TSR_EP_JVP);
            bind_arrays(call, x, a);
            cr_assert_eq(tsr_call_set_text(call, "mode", "double"), 0);
            wrt_ok(call, in, 1, out, 1);
            seed_ok(call, e ? "total" : "a", f64_mat(t, 2, 2));
            run_ok(call);
            const tsr_array *r = tsr_call_output(call, e ? "a" : "total");
            cr_assert_not_null(r, "%s", variant_name(v));
            cr_assert_eq(r->rank, 2);
            cr_assert_eq(((const double *)r->data)[3], 6.0, "%s", variant_name(v));
            tsr_call_free(call);
        }
        tsr_close(c);
    }
}

/* An any-rank input accepts ranks 0 to TSR_MAX_FIELD_RANK, no more. */
Test(kinds, any_rank_input_takes_ranks_up_to_the_field_maximum) {
    tsr_component *c = open_ok(KINDS, NULL);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    double x[3] = {1, 2, 3}, a[1] = {2};
    int64_t ones[TSR_MAX_FIELD_RANK + 1];
    for (int d = 0; d <= TSR_MAX_FIELD_RANK; d++) ones[d] = 1;
    bind_ok(call, "x", f64_vec(x, 3));
    bind_ok(call, "a", make_array(a, TSR_FLOAT64, 0, ones));
    run_ok(call);
    cr_assert_eq(tsr_call_output(call, "total")->rank, 0);
    bind_ok(call, "a", make_array(a, TSR_FLOAT64, TSR_MAX_FIELD_RANK, ones));
    run_ok(call);
    cr_assert_eq(tsr_call_output(call, "total")->rank, TSR_MAX_FIELD_RANK);
    const char *msg = bind_or_run_fails(call, "a",
                                        make_array(a, TSR_FLOAT64, TSR_MAX_FIELD_RANK + 1, ones),
                                        TSR_E_SHAPE);
    assert_contains(msg, "any rank");
    tsr_call_free(call);
    tsr_close(c);
}

/* The schema says what kind each field is, its choices, and null for an
 * any-rank shape; a text default is its string. */
Test(kinds, schema_json_names_kinds_choices_and_any_rank) {
    tsr_component *c = open_ok(KINDS, NULL);
    char *json = NULL;
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(tsr_schema_to_json(c, &json, &err), 0, "%s", err.message);
    assert_contains(json, "{\"name\":\"mode\",\"dtype\":\"uint8\",\"shape\":[null]");
    assert_contains(json, "\"default\":\"single\",\"kind\":\"text\",\"choices\":[\"single\",\"double\"");
    assert_contains(json, "{\"name\":\"config\",\"dtype\":\"uint8\",\"shape\":[null]");
    assert_contains(json, "\"required\":false,\"kind\":\"json\"}");
    assert_contains(json, "{\"name\":\"a\",\"dtype\":\"float64\",\"shape\":null");
    assert_contains(json, "{\"name\":\"label\",\"dtype\":\"uint8\",\"shape\":[null],\"differentiable\":false,\"doc\":null,\"kind\":\"text\"}");
    tsr_json_free(json);
    const tsr_field *mode = tsr_component_input(c, 1);
    cr_assert_eq(mode->kind, TSR_KIND_TEXT);
    cr_assert_eq(mode->dtype, TSR_UINT8);
    cr_assert_eq(mode->rank, 1);
    cr_assert_eq(mode->n_choices, 3);
    cr_assert_eq(tsr_component_input(c, 3)->rank, TSR_RANK_ANY);
    tsr_close(c);
}

/* A worker's host sees the same kinds, choices and ranks as in-process. */
Test(kinds, worker_schema_carries_kinds_choices_and_any_rank) {
    for (size_t v = 2; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(KINDS, v);
        const tsr_field *mode = tsr_component_input(c, 1);
        cr_assert_eq(mode->kind, TSR_KIND_TEXT, "%s", variant_name(v));
        cr_assert_eq(mode->n_choices, 3);
        cr_assert_str_eq(mode->choices[2], "caf\xc3\xa9");
        cr_assert_not_null(mode->default_value);
        cr_assert_eq(mode->default_value->shape[0], 6);
        cr_assert_eq(tsr_component_input(c, 2)->kind, TSR_KIND_JSON);
        cr_assert_eq(tsr_component_input(c, 3)->rank, TSR_RANK_ANY);
        cr_assert_eq(tsr_component_output(c, 1)->kind, TSR_KIND_TEXT);
        cr_assert_eq(tsr_component_output(c, 2)->rank, TSR_RANK_ANY);
        tsr_close(c);
    }
}

/* spawn=fork, in a single-threaded child: text in (set_text, a uint8
 * array, the default), text out, the choices refused, abstract_eval
 * reading text, and the schema's kinds on the host. */
static const char *forked_worker_text(void) {
    tsr_options *o = tsr_options_new();
    tsr_error err = TSR_ERROR_INIT;
    if (!o || tsr_options_set(o, "mode", "worker", &err) ||
        tsr_options_set(o, "spawn", "fork", &err))
        return "options";
    tsr_component *c = NULL;
    int rc = tsr_open(KINDS, o, &c, &err);
    tsr_options_free(o);
    CHECK(rc == 0, "tsr_open: %s", err.message);
    CHECK(tsr_component_input(c, 1)->kind == TSR_KIND_TEXT &&
              tsr_component_input(c, 1)->n_choices == 3 &&
              tsr_component_input(c, 3)->rank == TSR_RANK_ANY,
          "the host's schema lost kinds, choices or any rank");
    double x[3] = {1, 2, 3}, a[4] = {1, 2, 3, 4};
    tsr_array xa = {x, TSR_FLOAT64, 1, {3}}, aa = {a, TSR_FLOAT64, 2, {2, 2}};
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    if (!call || tsr_call_set_input(call, "x", &xa) || tsr_call_set_input(call, "a", &aa))
        return "binding";
    CHECK(tsr_call_run(call) == 0, "apply: %s", tsr_call_errmsg(call));
    const char *label = tsr_call_output_text(call, "label", NULL);
    CHECK(label && strcmp(label, "single|none") == 0, "label %s", label ? label : "NULL");
    char bytes[6] = {'d', 'o', 'u', 'b', 'l', 'e'};   /* no NUL */
    tsr_array mode = {bytes, TSR_UINT8, 1, {6}};
    if (tsr_call_set_input(call, "mode", &mode) || tsr_call_set_text(call, "config", "7"))
        return "binding text";
    CHECK(tsr_call_run(call) == 0, "apply: %s", tsr_call_errmsg(call));
    size_t len = 0;
    label = tsr_call_output_text(call, "label", &len);
    CHECK(label && strcmp(label, "double|7") == 0 && len == 8, "label %s",
          label ? label : "NULL");
    CHECK(((const double *)tsr_call_output(call, "total")->data)[3] == 12.0, "total");
    if (tsr_call_set_text(call, "mode", "other")) return "binding text";
    CHECK(tsr_call_run(call) == TSR_E_VALUE, "a value outside the choices: %s",
          tsr_call_errmsg(call));
    tsr_call_free(call);
    call = tsr_call_new(c, TSR_EP_ABSTRACT_EVAL);
    tsr_array xs = {NULL, TSR_FLOAT64, 1, {3}}, as = {NULL, TSR_FLOAT64, 1, {5}};
    if (!call || tsr_call_set_input(call, "x", &xs) || tsr_call_set_input(call, "a", &as) ||
        tsr_call_set_text(call, "config", "[1,2]"))
        return "binding shapes";
    CHECK(tsr_call_run(call) == 0, "abstract_eval: %s", tsr_call_errmsg(call));
    CHECK(tsr_call_output(call, "label")->shape[0] == 12, "label's length %lld",
          (long long)tsr_call_output(call, "label")->shape[0]);
    CHECK(tsr_call_output(call, "total")->rank == 1, "total's rank");
    tsr_call_free(call);
    tsr_close(c);
    return "ok";
}

Test(kinds, forked_worker_carries_text_both_ways) {
    run_in_child_watched(forked_worker_text, NULL, 60);
}

/* A component without outputs loads; apply returns no results, and still
 * fails when the endpoint does. In every mode. */
Test(kinds, zero_outputs_apply_returns_no_results) {
    for (size_t v = 0; v < N_VARIANTS; v++) {
        tsr_component *c = open_variant(TEST_PLUGIN("no_outputs"), v);
        cr_assert_eq(tsr_component_n_outputs(c), 0);
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        double x[2] = {1, 2};
        bind_ok(call, "x", f64_vec(x, 2));
        run_ok(call);
        cr_assert_eq(tsr_call_n_results(call), 0, "%s", variant_name(v));
        x[0] = -1;
        assert_contains(run_fails(call, TSR_E_PLUGIN), "negative");
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* ---- descriptors that misuse kinds ----------------------------------------- */

typedef struct refusal {
    const char *plugin;
    const char *field;   /* named in the message */
    const char *cause;
} refusal;

static void expect_refused(const refusal *r) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s.so", TSR_TEST_PLUGIN_DIR, r->plugin);
    tsr_error err = open_fails(path, NULL);
    assert_code(err.code, TSR_E_DESCRIPTOR, err.message);
    assert_contains(err.message, r->plugin);
    assert_contains(err.message, r->field);
    assert_contains(err.message, r->cause);
}

Test(kinds_descriptor, unknown_kind_is_refused) {
    expect_refused(&(refusal){"kind_unknown", "oddkind", "unknown kind 7"});
}
Test(kinds_descriptor, choices_on_an_array_field_are_refused) {
    expect_refused(&(refusal){"choices_on_array", "arraychoice", "only a TEXT field"});
}
Test(kinds_descriptor, null_choices_array_is_refused) {
    expect_refused(&(refusal){"choices_null", "nochoices", "NULL choices"});
}
Test(kinds_descriptor, null_choice_is_refused) {
    expect_refused(&(refusal){"choice_null_entry", "holechoice", "choice 1 is NULL"});
}
Test(kinds_descriptor, non_utf8_choice_is_refused) {
    expect_refused(&(refusal){"choice_not_utf8", "badchoice", "not valid UTF-8"});
}
Test(kinds_descriptor, negative_n_choices_is_refused) {
    expect_refused(&(refusal){"choices_negative", "minuschoices", "n_choices -1"});
}
Test(kinds_descriptor, huge_n_choices_is_refused) {
    expect_refused(&(refusal){"choices_huge", "manychoices", "n_choices 2000000000"});
}
Test(kinds_descriptor, text_default_outside_its_choices_is_refused) {
    expect_refused(&(refusal){"choice_default_outside", "offchoice", "not one of its choices"});
}
Test(kinds_descriptor, differentiable_text_is_refused) {
    expect_refused(&(refusal){"text_differentiable", "difftext", "cannot be differentiable"});
}
