/* SPDX-License-Identifier: MIT */
/*
 * A host for the scale plugin: y = alpha * x, then the gradient of sum(y)
 * with respect to alpha (a vjp with a cotangent of ones), which is sum(x).
 *
 *     first_host ./scale.so [alpha]
 */
#include <stdio.h>
#include <stdlib.h>

#include <tessera/tessera.h>

static int fail(const char *what, tsr_call *call) {
    fprintf(stderr, "first_host: %s: %s\n", what, tsr_call_errmsg(call));
    return 1;
}

static void print_vector(const char *name, const tsr_array *a) {
    const double *v = a->data;
    printf("%s = [", name);
    for (int64_t i = 0; i < a->shape[0]; i++) printf(i ? " %g" : "%g", v[i]);
    printf("]\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: first_host PLUGIN.so [alpha]\n");
        return 2;
    }
    double xs[3] = {1.0, 2.0, 3.0}, ones[3] = {1.0, 1.0, 1.0};
    double alpha = argc > 2 ? atof(argv[2]) : 2.5;
    tsr_array x = {.data = xs, .dtype = TSR_FLOAT64, .rank = 1, .shape = {3}};
    tsr_array a = {.data = &alpha, .dtype = TSR_FLOAT64, .rank = 0};
    tsr_array y_bar = {.data = ones, .dtype = TSR_FLOAT64, .rank = 1, .shape = {3}};

    tsr_error err = TSR_ERROR_INIT;
    tsr_component *c;
    if (tsr_open(argv[1], NULL, &c, &err) != 0) {
        fprintf(stderr, "first_host: %s\n", err.message);
        return 1;
    }
    int rc = 0;

    /* apply: bind every input by name, run, read the result as a view. */
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    if (!call || tsr_call_set_input(call, "x", &x) || tsr_call_set_input(call, "alpha", &a) ||
        tsr_call_run(call)) {
        rc = fail("apply", call);
    } else {
        print_vector("y", tsr_call_output(call, "y"));
    }
    tsr_call_free(call);

    /* vjp: d(sum y)/d alpha, i.e. vjp_inputs = [alpha], vjp_outputs = [y],
     * cotangent_vector = {y: ones}. */
    const char *wrt_in[] = {"alpha"}, *wrt_out[] = {"y"};
    call = rc ? NULL : tsr_call_new(c, TSR_EP_VJP);
    if (call) {
        if (tsr_call_set_input(call, "x", &x) || tsr_call_set_input(call, "alpha", &a) ||
            tsr_call_set_wrt(call, wrt_in, 1, wrt_out, 1) ||
            tsr_call_set_seed(call, "y", &y_bar) || tsr_call_run(call)) {
            rc = fail("vjp", call);
        } else {
            printf("d(sum y)/d alpha = %g\n", *(const double *)tsr_call_output(call, "alpha")->data);
        }
    } else if (!rc) {
        fprintf(stderr, "first_host: out of memory\n");
        rc = 1;
    }
    tsr_call_free(call);
    tsr_close(c);
    return rc;
}
