/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: modelDescription.xml text read by fmu_describe_text. Every
 * input ends in a refusal with a message or in a description whose
 * references hold: each derivative_of, output and derivative an index of
 * vars (derivative_of a Float variable, each ContinuousStateDerivative a
 * variable with derivative=), names unique and found by
 * fmu_find_variable; never a crash, a leak or an entity expanded.
 *
 * Input: the XML text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "backends/fmu/fmu.h"

static int is_float(const fmu_variable *v) {
    return v->type == FMU_FLOAT64 || v->type == FMU_FLOAT32;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fmu_description d;
    char why[512] = "";
    int rc = fmu_describe_text((const char *)data, size, "md", &d, why, sizeof why);
    if (rc != 0) {
        if (why[0] == '\0' || d.vars || d.fmi_version) __builtin_trap();
        return 0;
    }
    if (!d.fmi_version || strncmp(d.fmi_version, "3.", 2) != 0 || !d.instantiation_token ||
        !(d.me.present || d.cs.present))
        __builtin_trap();
    for (int32_t i = 0; i < d.n_vars; i++) {
        const fmu_variable *v = &d.vars[i];
        if (!v->name || fmu_find_variable(&d, v->name) != i) __builtin_trap();
        if (v->derivative_of >= 0 &&
            (v->derivative_of >= d.n_vars || !is_float(v) || !is_float(&d.vars[v->derivative_of])))
            __builtin_trap();
    }
    for (int32_t i = 0; i < d.n_outputs; i++)
        if (d.outputs[i] < 0 || d.outputs[i] >= d.n_vars) __builtin_trap();
    for (int32_t i = 0; i < d.n_derivatives; i++)
        if (d.derivatives[i] < 0 || d.derivatives[i] >= d.n_vars ||
            d.vars[d.derivatives[i]].derivative_of < 0)
            __builtin_trap();
    fmu_description_free(&d);
    return 0;
}
