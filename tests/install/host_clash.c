/* SPDX-License-Identifier: MIT */
/*
 * A host that defines, for its own purposes, names that libtessera uses
 * internally (arena_alloc, call_fail, find_field). Linked beside
 * libtessera.a it must build (no duplicate symbol) and run: the library
 * keeps calling its own functions, the host its own, in process and in a
 * worker (where the library's arena_alloc places the arrays).
 *
 *     host_clash PLUGIN.so inproc|worker
 */
#include <stdio.h>
#include <string.h>

#include <tessera/tessera.h>

/* The host's own meanings of the library's internal names. */
int arena_alloc(int n) { return n + 1; }
int call_fail(void) { return 42; }
const char *find_field(void) { return "the host's find_field"; }

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: host_clash PLUGIN.so inproc|worker\n");
        return 2;
    }
    printf("host: arena_alloc(1) = %d, call_fail() = %d, %s\n", arena_alloc(1), call_fail(),
           find_field());

    tsr_error err = TSR_ERROR_INIT;
    tsr_options *o = tsr_options_new();
    if (!o || tsr_options_set(o, "mode", argv[2], &err) != 0) {
        fprintf(stderr, "host_clash: %s\n", o ? err.message : "out of memory");
        tsr_options_free(o);
        return 2;
    }
    tsr_component *c = NULL;
    int opened = tsr_open(argv[1], o, &c, &err);
    tsr_options_free(o);
    if (opened != 0) {
        fprintf(stderr, "host_clash: %s\n", err.message);
        return 1;
    }
    double xs[3] = {1, 2, 3}, alpha = 2.5;
    tsr_array x = {.data = xs, .dtype = TSR_FLOAT64, .rank = 1, .shape = {3}};
    tsr_array a = {.data = &alpha, .dtype = TSR_FLOAT64, .rank = 0};
    tsr_call *call = tsr_call_new(c, TSR_EP_APPLY);
    int rc = !call || tsr_call_set_input(call, "x", &x) || tsr_call_set_input(call, "alpha", &a) ||
             tsr_call_run(call);
    if (rc) {
        fprintf(stderr, "host_clash: apply: %s\n", call ? tsr_call_errmsg(call) : "no call");
    } else {
        const double *y = tsr_call_output(call, "y")->data;
        printf("%s: y = [%g %g %g], library %s\n", argv[2], y[0], y[1], y[2], tsr_version());
    }
    tsr_call_free(call);
    tsr_close(c);
    return rc;
}
