/* SPDX-License-Identifier: MIT */
/* Endpoints made of several routines run in order ("vjp": [...]), as a
 * hand-derived adjoint often is: DPOSV's vjp solves for the cotangent, then
 * a rank-one update gives the matrix's gradient. The steps share buffers:
 * an array argument of the same kind and field (a result, an input's
 * private copy, an output used as scratch) is one buffer in every step,
 * prepared before the first step (copied in, zeroed, initialised) and
 * handed back after the last, so that what a step writes the next reads.
 * Workspaces are each step's own. */
#include <stdio.h>

#include "manifest_internal.h"

static int shareable(mf_kind k) { return k <= MF_JACOBIAN; }

static int same_buffer(const mf_arg *a, const mf_arg *b) {
    return shareable(a->kind) && a->kind == b->kind && a->field == b->field &&
           (a->kind != MF_JACOBIAN || a->field2 == b->field2);
}

int mf_steps_alias(const mf_steps *st, int32_t s, int32_t i, int32_t *s0, int32_t *i0) {
    const mf_arg *a = &st->r[s].args[i];
    if (!shareable(a->kind)) return -1;
    for (int32_t t = 0; t < s; t++)
        for (int32_t k = 0; k < st->r[t].n_args; k++)
            if (same_buffer(&st->r[t].args[k], a)) {
                *s0 = t;
                *i0 = k;
                return 0;
            }
    return -1;
}

int mf_steps_check(mf_parse *p, const mf_steps *st, const char *entry) {
    for (int32_t s = 1; s < st->n; s++)
        for (int32_t i = 0; i < st->r[s].n_args; i++) {
            int32_t s0, i0;
            if (mf_steps_alias(st, s, i, &s0, &i0) != 0) continue;
            const mf_arg *a = &st->r[s].args[i], *first = &st->r[s0].args[i0];
            char at[96];
            snprintf(at, sizeof at, "%s[%d].args[%d]", entry, (int)s, (int)i);
            int prepares = a->zero || (a->kind != MF_JACOBIAN && a->field2 >= 0);
            if (prepares)
                return mf_fail(p, TSR_E_DESCRIPTOR, at,
                               "this '%s' argument shares its buffer with %s[%d].args[%d], its "
                               "first use; \"init\" and \"zero\" prepare the buffer before the "
                               "first step, so they belong there",
                               mf_kind_names[a->kind], entry, (int)s0, (int)i0);
            if (a->order_f != first->order_f || a->copy != first->copy ||
                a->by_value != first->by_value)
                return mf_fail(p, TSR_E_DESCRIPTOR, at,
                               "this '%s' argument shares its buffer with %s[%d].args[%d] but "
                               "is declared otherwise (\"order\", \"readonly\" and \"pass\" must "
                               "agree: the steps see one buffer)",
                               mf_kind_names[a->kind], entry, (int)s0, (int)i0);
        }
    return 0;
}
