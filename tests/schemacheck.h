/* SPDX-License-Identifier: MIT */
/*
 * Inputs for the schemacheck test plugin (tests/plugins/schemacheck.c),
 * and the reference values of its outputs computed here.
 */
#ifndef TESSERA_TEST_SCHEMACHECK_H
#define TESSERA_TEST_SCHEMACHECK_H

#include "test_util.h"

#define SC_PATH TEST_PLUGIN("schemacheck")
#define SC_MAX 16

typedef struct sc_inputs {
    int64_t n, nw;
    double left[SC_MAX], right[SC_MAX], grid[SC_MAX * 3], wild[SC_MAX], scale;
    int32_t shift;
    bool flag;
} sc_inputs;

static inline sc_inputs sc_make(int64_t n, int64_t nw, uint64_t seed) {
    sc_inputs in;
    memset(&in, 0, sizeof in);
    in.n = n;
    in.nw = nw;
    fill_random(in.left, SC_MAX, seed);
    fill_random(in.right, SC_MAX, seed + 1);
    fill_random(in.grid, SC_MAX * 3, seed + 2);
    fill_random(in.wild, SC_MAX, seed + 3);
    in.scale = 1.5;
    in.shift = -2;
    in.flag = true;
    return in;
}

static inline tsr_array sc_grid_array(sc_inputs *in) {
    return f64_mat(in->grid, in->n, 3);
}

static inline tsr_array sc_array(sc_inputs *in, const char *name) {
    if (!strcmp(name, "left")) return f64_vec(in->left, in->n);
    if (!strcmp(name, "right")) return f64_vec(in->right, in->n);
    if (!strcmp(name, "grid")) return sc_grid_array(in);
    if (!strcmp(name, "wild")) return f64_vec(in->wild, in->nw);
    if (!strcmp(name, "scale")) return f64_scalar(&in->scale);
    if (!strcmp(name, "shift")) return make_array(&in->shift, TSR_INT32, 0, NULL);
    if (!strcmp(name, "flag")) return make_array(&in->flag, TSR_BOOL, 0, NULL);
    cr_assert_fail("no input %s", name);
    return f64_scalar(NULL);
}

static const char *const sc_input_names[] = {"left", "right", "grid", "wild", "scale", "shift", "flag"};
#define SC_N_INPUTS 7

/* Bind every input except `skip` (NULL: bind all). */
static inline void sc_bind_except(tsr_call *call, sc_inputs *in, const char *skip) {
    for (int k = 0; k < SC_N_INPUTS; k++)
        if (!skip || strcmp(skip, sc_input_names[k]) != 0)
            bind_ok(call, sc_input_names[k], sc_array(in, sc_input_names[k]));
}

/* combo[i] = scale*left[i] + right[i] + sum_j grid[i][j] + shift */
static inline double sc_combo(const sc_inputs *in, int64_t i) {
    double v = in->scale * in->left[i] + in->right[i] + in->shift;
    for (int j = 0; j < 3; j++) v += in->grid[i * 3 + j];
    return v;
}

/* The message of a failed call names the component and the endpoint. */
static inline void sc_assert_context(const char *msg, const char *endpoint) {
    assert_contains(msg, "schemacheck");
    assert_contains(msg, endpoint);
}

#endif
