/* SPDX-License-Identifier: MIT */
/* The bundled linear plugin (y = A x, A read from a file at init) against
 * a reference written here, with its own reading of the matrix file. */
#include "ref_model.h"

typedef struct matrix {
    int64_t rows, cols;
    double v[64];
} matrix;

/* The file format: '#' comments, then "m n", then m*n numbers row by row. */
static matrix read_matrix(const char *path) {
    matrix a = {0};
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    double numbers[66];
    int count = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *p = line, *end;
        for (;;) {
            double v = strtod(p, &end);
            if (end == p) break;
            cr_assert(count < 66, "matrix file too large for the test");
            numbers[count++] = v;
            p = end;
        }
    }
    fclose(f);
    cr_assert(count >= 2);
    a.rows = (int64_t)numbers[0];
    a.cols = (int64_t)numbers[1];
    cr_assert_eq(count, 2 + a.rows * a.cols, "%s: %d numbers", path, count);
    memcpy(a.v, numbers + 2, (size_t)(a.rows * a.cols) * sizeof(double));
    return a;
}

static void linear_ref(const ref_model *m, double *const *in, double **out) {
    const matrix *a = m->user;
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < a->cols; j++) out[0][i] += a->v[i * a->cols + j] * in[0][j];
}

static ref_model linear_model(const matrix *a, double *x) {
    ref_model m = {.n_in = 1, .n_out = 1, .fn = linear_ref, .user = a};
    m.in[0] = (ref_field){.name = "x", .rank = 1, .shape = {a->cols}, .data = x};
    m.out[0] = (ref_field){.name = "y", .rank = 1, .shape = {a->rows}};
    return m;
}

/* apply, jacobian (A itself), jvp, vjp and abstract_eval match the matrix
 * of the example file (3 x 4). */
Test(linear, example_matrix_every_endpoint) {
    matrix a = read_matrix(LINEAR_MATRIX_FILE);
    tsr_component *c = open_with_config(BUNDLED_PLUGIN("linear"), "matrix", LINEAR_MATRIX_FILE);
    cr_assert_str_eq(tsr_component_name(c), "linear");
    double x[16];
    fill_random(x, a.cols, 5);
    ref_model m = linear_model(&a, x);
    ref_check_apply(c, &m);
    cr_assert_eq(ref_check_all_derivatives(c, &m), 1);
    ref_model shapes = linear_model(&a, NULL);
    ref_check_abstract_eval(c, &shapes);
    tsr_close(c);
}

/* The Jacobian block is exactly A, entry by entry. */
Test(linear, jacobian_is_the_matrix) {
    matrix a = read_matrix(LINEAR_MATRIX_FILE);
    tsr_component *c = open_with_config(BUNDLED_PLUGIN("linear"), "matrix", LINEAR_MATRIX_FILE);
    double x[16] = {0};
    tsr_call *call = new_call(c, TSR_EP_JACOBIAN);
    bind_ok(call, "x", f64_vec(x, a.cols));
    const char *in[] = {"x"}, *out[] = {"y"};
    wrt_ok(call, in, 1, out, 1);
    run_ok(call);
    const tsr_array *j = tsr_call_jacobian(call, "y", "x");
    cr_assert_not_null(j);
    cr_assert_eq(j->rank, 2);
    cr_assert_eq(j->shape[0], a.rows);
    cr_assert_eq(j->shape[1], a.cols);
    for (int64_t k = 0; k < a.rows * a.cols; k++)
        cr_assert_eq(((const double *)j->data)[k], a.v[k], "entry %ld", (long)k);
    tsr_call_free(call);
    tsr_close(c);
}

/* A 1 x 1 matrix and a 2 x 5 one written by the test work the same way. */
Test(linear, other_matrices) {
    const char *texts[] = {"1 1\n-3.5\n", "2 5\n1 2 3 4 5\n# comment\n6 7 8 9 10.5\n"};
    for (int k = 0; k < 2; k++) {
        char path[256];
        temp_path(path, sizeof path);
        write_file(path, texts[k]);
        matrix a = read_matrix(path);
        tsr_component *c = open_with_config(BUNDLED_PLUGIN("linear"), "matrix", path);
        double x[16];
        fill_random(x, a.cols, 50 + (uint64_t)k);
        ref_model m = linear_model(&a, x);
        ref_check_apply(c, &m);
        cr_assert_eq(ref_check_all_derivatives(c, &m), 1);
        tsr_close(c);
        unlink(path);
    }
}

/* Without the "matrix" configuration key init fails, naming the key. */
Test(linear, missing_matrix_config_fails_init) {
    tsr_error err = open_fails(BUNDLED_PLUGIN("linear"), NULL);
    assert_code(err.code, TSR_E_INIT, err.message);
    assert_contains(err.message, "linear");
    assert_contains(err.message, "matrix");
}

/* A matrix file that does not exist fails init, naming the file. */
Test(linear, missing_matrix_file_fails_init) {
    tsr_options *o = tsr_options_new();
    const char *path = "/nonexistent/tessera/matrix.txt";
    cr_assert_eq(tsr_options_set_config(o, "matrix", path), 0);
    tsr_error err = open_fails(BUNDLED_PLUGIN("linear"), o);
    assert_code(err.code, TSR_E_INIT, err.message);
    assert_contains(err.message, path);
    tsr_options_free(o);
}

/* A file with fewer numbers than its dimensions promise fails init. */
Test(linear, truncated_matrix_file_fails_init) {
    char path[256];
    temp_path(path, sizeof path);
    write_file(path, "2 2\n1 2 3\n");
    tsr_options *o = tsr_options_new();
    cr_assert_eq(tsr_options_set_config(o, "matrix", path), 0);
    tsr_error err = open_fails(BUNDLED_PLUGIN("linear"), o);
    assert_code(err.code, TSR_E_INIT, err.message);
    assert_contains(err.message, path);
    tsr_options_free(o);
    unlink(path);
}

/* An x whose length differs from the number of columns of A is refused by
 * the plugin, as a failure of linear's apply. */
Test(linear, wrong_x_length_refused) {
    tsr_component *c = open_with_config(BUNDLED_PLUGIN("linear"), "matrix", LINEAR_MATRIX_FILE);
    double x[5] = {0};
    tsr_call *call = new_call(c, TSR_EP_APPLY);
    bind_ok(call, "x", f64_vec(x, 5));
    const char *msg = run_fails(call, TSR_E_PLUGIN);
    assert_contains(msg, "linear");
    assert_contains(msg, "apply");
    tsr_call_free(call);
    tsr_close(c);
}
