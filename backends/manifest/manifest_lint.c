/* SPDX-License-Identifier: MIT */
/* Warnings at load about argument lists that look wrong but may be right.
 * A shared library carries no signatures, so a manifest that passes a
 * Fortran routine its scalars by value, or drops a hidden character
 * length, loads and then crashes the process at the first call. Some
 * signs are cheap to see (a gfortran-style name under "convention": "c",
 * a size expression that is negative for empty inputs); none proves a
 * mistake, so each is a WARN in the component's log, never a refusal. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "manifest_internal.h"

__attribute__((format(printf, 3, 4))) static void warn(const mf_parse *p, const char *entry,
                                                       const char *fmt, ...) {
    char cause[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cause, sizeof cause, fmt, ap);
    va_end(ap);
    comp_log(p->c, TSR_LOG_WARN, "%s: %s: %s", tsr_component_path(p->c), entry, cause);
}

/* gfortran lowercases a routine's name and appends '_'. */
static int looks_fortran(const char *symbol) {
    size_t n = strlen(symbol);
    return n > 1 && symbol[n - 1] == '_' && symbol[n - 2] != '_';
}

static int scalar_kind(const mf_arg *a) {
    return a->kind == MF_IN || a->kind == MF_TANGENT || a->kind == MF_COTANGENT ||
           a->kind == MF_DIM || a->kind == MF_INT || a->kind == MF_CONST ||
           a->kind == MF_LENGTH;
}

/* Under "convention": "c" a routine named as gfortran names them gets its
 * scalars by value and no hidden lengths; a Fortran routine reads every
 * argument through an address, and a value there faults at once. Only
 * what the convention decided is questioned: a "pass" or "hidden_length"
 * written in the manifest is the author's word. */
static void check_convention(const mf_parse *p, const mf_endpoint *e, const char *entry) {
    if (p->m->fortran || !looks_fortran(e->symbol)) return;
    char at[192];
    for (int32_t i = 0; i < e->n_args; i++) {
        const mf_arg *a = &e->args[i];
        if (a->pass_given) continue;
        mf_entry_at(at, sizeof at, entry, (size_t)i);
        if (a->kind == MF_CHAR) {
            warn(p, at,
                 "'char' gets no hidden length under \"convention\": \"c\", but the symbol "
                 "'%s' is named as gfortran names routines, whose CHARACTER arguments take "
                 "one after all others; for a Fortran routine say \"convention\": \"fortran\" "
                 "(or \"hidden_length\": true)",
                 e->symbol);
            return;
        }
        if (scalar_kind(a) && a->by_value) {
            warn(p, at,
                 "'%s' is passed by value (\"convention\": \"c\"), but the symbol '%s' is "
                 "named as gfortran names routines, which take every argument by address: "
                 "a Fortran routine reads the value as an address and crashes; for one say "
                 "\"convention\": \"fortran\" (or \"pass\": \"value\" to keep this)",
                 mf_kind_names[a->kind], e->symbol);
            return;
        }
    }
}

/* gfortran's CHARACTER arguments take a length; a caller that drops it
 * has had its stack corrupted (LAPACK called from C, gfortran >= 7). */
static void check_hidden_lengths(const mf_parse *p, const mf_endpoint *e, const char *entry) {
    if (!p->m->fortran || !looks_fortran(e->symbol)) return;
    for (int32_t i = 0; i < e->n_args; i++) {
        const mf_arg *a = &e->args[i];
        if (a->kind != MF_CHAR || a->hidden_len) continue;
        char at[192];
        warn(p, mf_entry_at(at, sizeof at, entry, (size_t)i),
             "\"hidden_length\": false for '%s', a Fortran routine: gfortran passes the "
             "length of each CHARACTER argument after all others, and a routine that reads "
             "it, or a tail call that reuses the frame, finds none",
             e->symbol);
        return;
    }
}

/* The value of x with every dimension 0 (an empty input is a valid shape);
 * -1 when x depends on an input's value or does not evaluate. */
static int at_zero(const mf_expr *x, int64_t *v) {
    mf_expr z = *x;
    for (int32_t k = 0; k < z.n_ops; k++) {
        if (z.ops[k].code == MF_OP_VAL) return -1;
        if (z.ops[k].code == MF_OP_SYM) z.ops[k] = (mf_op){MF_OP_NUM, 0};
    }
    return mf_expr_eval(&z, NULL, NULL, v) == 0 ? 0 : -1;
}

/* A size written "n-1" is negative for an empty input: a workspace then
 * fails the call, an integer reaches the routine as a negative size (LAPACK
 * writes leading dimensions and workspace sizes max(1, ...)). */
static void check_sizes(const mf_parse *p, const mf_endpoint *e, json_t *args,
                        const char *entry) {
    for (int32_t i = 0; i < e->n_args; i++) {
        const mf_arg *a = &e->args[i];
        int64_t v;
        if ((a->kind != MF_INT && a->kind != MF_WORKSPACE) || !a->expr ||
            at_zero(a->expr, &v) != 0 || v >= 0)
            continue;
        const char *text = json_string_value(
            json_object_get(json_array_get(args, (size_t)i), mf_kind_names[a->kind]));
        if (!text) continue;   /* a plain negative number is meant */
        char at[192];
        warn(p, mf_entry_at(at, sizeof at, entry, (size_t)i),
             "'%s' is %lld when the dimensions are 0 (an empty input): %s; if the routine "
             "accepts empty inputs write max(1, %s) or max(0, %s)",
             text, (long long)v,
             a->kind == MF_WORKSPACE ? "a call would fail, its workspace size being negative"
                                     : "the routine would get a negative size",
             text, text);
    }
}

void mf_lint_routine(const mf_parse *p, const mf_endpoint *e, json_t *args, const char *entry) {
    char at[160];
    mf_entry(at, sizeof at, entry, "args");
    check_convention(p, e, at);
    check_hidden_lengths(p, e, at);
    check_sizes(p, e, args, at);
}
