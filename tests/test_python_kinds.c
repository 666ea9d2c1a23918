/* SPDX-License-Identifier: MIT */
/* Field kinds of Python components through the host, in this process and
 * in a worker: text, text with choices, JSON and any-rank arrays in and
 * out (tests/pycomponents/kinds), zero outputs (no_outputs), a value the
 * host refuses (a Literal outside its values) and one the component's
 * pydantic schema refuses (Field(ge=1)), both TSR_E_VALUE at their loc;
 * and tesseract-core's metrics example writing its logs from a worker. */
#define _GNU_SOURCE /* nftw */
#include <string.h>
#include <unistd.h>

#include "temp_dir.h"
#include "test_util.h"

#define PYCOMPONENT(name) TSR_SOURCE_DIR "/tests/pycomponents/" name
#define EXAMPLES TSR_BINARY_DIR "/third_party/tesseract-examples"

static const char *const modes[] = {"inproc", "worker"};

static tsr_component *open_in(const char *path, const char *mode) {
    tsr_options *o = tsr_options_new();
    cr_assert_not_null(o);
    cr_assert_eq(tsr_options_set(o, "mode", mode, NULL), 0);
    tsr_component *c = open_ok(path, o);
    tsr_options_free(o);
    return c;
}

/* {"a": [1, 2], "b": [4]} with Tesseract's base64 array objects. */
static const char WEIGHTS[] =
    "{\"a\": {\"object_type\": \"array\", \"shape\": [2], \"dtype\": \"float64\", \"data\": "
    "{\"buffer\": \"AAAAAAAA8D8AAAAAAAAAQA==\", \"encoding\": \"base64\"}}, "
    "\"b\": {\"object_type\": \"array\", \"shape\": [1], \"dtype\": \"float64\", \"data\": "
    "{\"buffer\": \"AAAAAAAAEEA=\", \"encoding\": \"base64\"}}}";

/* A call of kinds' apply with field a 2x3 array; method and steps given
 * when not NULL. */
static tsr_call *kinds_call(tsr_component *c, double *field, const char *method,
                            const char *steps) {
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    cr_assert_eq(tsr_call_set_text(call, "name", "Ozzy"), 0, "%s", tsr_call_errmsg(call));
    cr_assert_eq(tsr_call_set_text(call, "weights", WEIGHTS), 0, "%s", tsr_call_errmsg(call));
    if (method) cr_assert_eq(tsr_call_set_text(call, "method", method), 0);
    if (steps) cr_assert_eq(tsr_call_set_text(call, "steps", steps), 0);
    bind_ok(call, "field", f64_mat(field, 2, 3));
    return call;
}

static void describe_kinds(tsr_component *c, const char *mode) {
    static const struct {
        const char *name;
        tsr_kind kind;
    } in[] = {{"name", TSR_KIND_TEXT}, {"method", TSR_KIND_TEXT}, {"steps", TSR_KIND_JSON},
              {"weights", TSR_KIND_JSON}, {"field", TSR_KIND_ARRAY}};
    cr_assert_eq(tsr_component_n_inputs(c), 5, "%s", mode);
    for (int32_t i = 0; i < 5; i++) {
        const tsr_field *f = tsr_component_input(c, i);
        cr_assert_str_eq(f->name, in[i].name, "%s", mode);
        cr_assert_eq(f->kind, in[i].kind, "%s: %s", mode, f->name);
    }
    const tsr_field *method = tsr_component_input(c, 1);
    cr_assert_eq(method->n_choices, 2, "%s", mode);
    cr_assert_str_eq(method->choices[0], "sum");
    cr_assert_str_eq(method->choices[1], "max");
    cr_assert_eq(tsr_component_input(c, 4)->rank, TSR_RANK_ANY, "%s", mode);
    cr_assert_eq(tsr_component_n_outputs(c), 3, "%s", mode);
    cr_assert_eq(tsr_component_output(c, 0)->kind, TSR_KIND_TEXT);
    cr_assert_eq(tsr_component_output(c, 1)->kind, TSR_KIND_JSON);
    cr_assert_eq(tsr_component_output(c, 2)->rank, TSR_RANK_ANY);
}

Test(python_kinds, each_kind_in_and_out_in_each_mode, .timeout = 300) {
    for (size_t m = 0; m < 2; m++) {
        tsr_component *c = open_in(PYCOMPONENT("kinds"), modes[m]);
        describe_kinds(c, modes[m]);
        double field[6] = {1, 2, 3, 4, 5, 6};
        tsr_call *call = kinds_call(c, field, NULL, NULL);   /* method, steps: defaults */
        run_ok(call);
        size_t len = 0;
        const char *greeting = tsr_call_output_text(call, "greeting", &len);
        cr_assert_not_null(greeting, "%s", modes[m]);
        cr_assert_str_eq(greeting, "Hello Ozzy!", "%s", modes[m]);
        cr_assert_eq(len, strlen("Hello Ozzy!"));
        const char *summary = tsr_call_output_text(call, "summary", NULL);
        cr_assert_str_eq(summary, "{\"a\":3.0,\"b\":4.0}", "%s: %s", modes[m], summary);
        const tsr_array *scaled = tsr_call_output(call, "scaled");
        cr_assert_eq(scaled->rank, 2, "%s", modes[m]);
        cr_assert_eq(scaled->shape[0], 2);
        cr_assert_eq(scaled->shape[1], 3);
        for (int i = 0; i < 6; i++) cr_assert_eq(((const double *)scaled->data)[i], field[i]);
        tsr_call_free(call);

        /* Given values: max of each weight, times 3; any rank: a 0-d field. */
        call = kinds_call(c, field, "max", "3");
        double one = 7;
        bind_ok(call, "field", f64_scalar(&one));
        run_ok(call);
        cr_assert_str_eq(tsr_call_output_text(call, "summary", NULL), "{\"a\":6.0,\"b\":12.0}",
                         "%s", modes[m]);
        scaled = tsr_call_output(call, "scaled");
        cr_assert_eq(scaled->rank, 0, "%s", modes[m]);
        cr_assert_eq(*(const double *)scaled->data, 21);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(python_kinds, a_literal_outside_its_values_is_TSR_E_VALUE_at_its_loc, .timeout = 300) {
    for (size_t m = 0; m < 2; m++) {
        tsr_component *c = open_in(PYCOMPONENT("kinds"), modes[m]);
        double field[6] = {0};
        tsr_call *call = kinds_call(c, field, "median", NULL);
        const char *msg = run_fails(call, TSR_E_VALUE);
        cr_assert_str_eq(tsr_call_errloc(call), "inputs.method", "%s", modes[m]);
        cr_assert_str_eq(tsr_call_errtype(call), "literal_error", "%s", modes[m]);
        assert_contains(msg, "'sum' or 'max'");
        tsr_call_free(call);
        tsr_close(c);
    }
}

/* A bound only the component's pydantic schema knows: the glue's
 * "invalid:" line, read by the host through the worker's answer too. */
Test(python_kinds, a_value_pydantic_refuses_is_TSR_E_VALUE_with_its_type, .timeout = 300) {
    for (size_t m = 0; m < 2; m++) {
        tsr_component *c = open_in(PYCOMPONENT("kinds"), modes[m]);
        double field[6] = {0};
        tsr_call *call = kinds_call(c, field, NULL, "0");
        const char *msg = run_fails(call, TSR_E_VALUE);
        cr_assert_str_eq(tsr_call_errloc(call), "inputs.steps", "%s: %s", modes[m], msg);
        cr_assert_str_eq(tsr_call_errtype(call), "greater_than_equal", "%s", modes[m]);
        assert_contains(msg, "greater than or equal to 1");
        cr_assert_null(strstr(msg, "invalid:"), "%s: %s", modes[m], msg);
        tsr_call_free(call);
        /* JSON that does not parse: json_invalid at the field. */
        call = kinds_call(c, field, NULL, "{1");
        run_fails(call, TSR_E_VALUE);
        cr_assert_str_eq(tsr_call_errloc(call), "inputs.steps", "%s", modes[m]);
        cr_assert_str_eq(tsr_call_errtype(call), "json_invalid", "%s", modes[m]);
        tsr_call_free(call);
        tsr_close(c);
    }
}

Test(python_kinds, zero_outputs_in_each_mode, .timeout = 300) {
    for (size_t m = 0; m < 2; m++) {
        tsr_component *c = open_in(PYCOMPONENT("no_outputs"), modes[m]);
        cr_assert_eq(tsr_component_n_outputs(c), 0, "%s", modes[m]);
        double x[2] = {1, 2};
        tsr_call *call = new_call(c, TSR_EP_APPLY);
        bind_ok(call, "x", f64_vec(x, 2));
        run_ok(call);
        cr_assert_eq(tsr_call_n_results(call), 0);
        x[0] = -1;   /* the component's own failure still reaches the host */
        const char *msg = run_fails(call, TSR_E_PLUGIN);
        assert_contains(msg, "x[0] is negative");
        cr_assert_str_eq(tsr_call_errloc(call), "");
        tsr_call_free(call);
        tsr_close(c);
    }
}

static void expect_file(const char *dir, const char *rel, const char *text) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s was not written", path);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (text) assert_contains(buf, text);
}

Test(python_kinds, metrics_writes_its_logs_from_a_worker, .timeout = 300) {
    if (access(EXAMPLES "/metrics/tesseract_api.py", R_OK) != 0)
        cr_skip("tesseract-core's examples are not fetched (scripts/fetch_tesseract_examples.sh)");
    char dir[256];
    make_temp_dir(dir, sizeof dir, "metrics");
    tsr_options *o = tsr_options_new();
    cr_assert_eq(tsr_options_set(o, "mode", "worker", NULL), 0);
    cr_assert_eq(tsr_options_set_env(o, "TESSERACT_OUTPUT_PATH", dir), 0);
    tsr_component *c = open_ok(EXAMPLES "/metrics", o);
    tsr_options_free(o);
    cr_assert_eq(tsr_component_n_outputs(c), 0);
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    run_ok(call);
    tsr_call_free(call);
    tsr_close(c);
    expect_file(dir, "logs/parameters.json", "\"example_param\": \"value\"");
    expect_file(dir, "logs/metrics.csv", "squared_step,81,9");
    expect_file(dir, "logs/artifacts/artifact.txt", "an output file we want to log");
    expect_file(dir, "logs/tesseract.log", "This is a message from the apply function.");
    remove_tree(dir);
}
