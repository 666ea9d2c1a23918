/* SPDX-License-Identifier: MIT */
/* Size expressions of a manifest ("n*n", "max(1, n)", "2*(m+n)"): integer
 * literals, the schema's symbolic dimensions, + - * (binary and unary
 * minus), parentheses and max(a, b). Compiled once to postfix; evaluated
 * at each call in 64-bit integers with overflow checks. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "manifest_internal.h"

typedef struct parser {
    mf_parse *p;
    const char *text;
    const char *at;
    const char *entry;
    mf_expr *out;
} parser;

static int fail(parser *ps, const char *what) {
    return mf_fail(ps->p, TSR_E_DESCRIPTOR, ps->entry,
                   "size expression '%s': %s at position %d", ps->text, what,
                   (int)(ps->at - ps->text) + 1);
}

static void skip_blanks(parser *ps) {
    while (*ps->at == ' ' || *ps->at == '\t') ps->at++;
}

static int emit(parser *ps, mf_opcode code, int64_t value) {
    if (ps->out->n_ops >= MF_MAX_EXPR_OPS) return fail(ps, "too long an expression");
    ps->out->ops[ps->out->n_ops++] = (mf_op){code, value};
    return 0;
}

int32_t mf_symbol_id(const tsr_component *c, const char *name) {
    for (int32_t s = 0; s < backend_schema(c).n_sym; s++)
        if (strcmp(backend_schema(c).sym_names[s], name) == 0) return s;
    return -1;
}

static int parse_sum(parser *ps);

static int parse_name(parser *ps) {
    const char *start = ps->at;
    while (isalnum((unsigned char)*ps->at) || *ps->at == '_') ps->at++;
    size_t len = (size_t)(ps->at - start);
    char name[TSR_MAX_NAME + 1];
    if (len > TSR_MAX_NAME) return fail(ps, "too long a name");
    memcpy(name, start, len);
    name[len] = '\0';
    skip_blanks(ps);
    if (strcmp(name, "max") == 0 && *ps->at == '(') {
        ps->at++;
        int rc = parse_sum(ps);
        if (rc) return rc;
        skip_blanks(ps);
        if (*ps->at != ',') return fail(ps, "expected ',' between the two arguments of max");
        ps->at++;
        rc = parse_sum(ps);
        if (rc) return rc;
        skip_blanks(ps);
        if (*ps->at != ')') return fail(ps, "expected ')' after the arguments of max");
        ps->at++;
        return emit(ps, MF_OP_MAX, 0);
    }
    const tsr_component *c = ps->p->c;
    int32_t id = mf_symbol_id(c, name);
    if (id < 0) {
        char known[256] = "";
        size_t used = 0;
        for (int32_t s = 0; s < backend_schema(c).n_sym; s++) {
            int w = snprintf(known + used, sizeof known - used, "%s%s", used ? ", " : "",
                             backend_schema(c).sym_names[s]);
            if (w < 0 || (size_t)w >= sizeof known - used) break;
            used += (size_t)w;
        }
        return mf_fail(ps->p, TSR_E_DESCRIPTOR, ps->entry,
                       "size expression '%s': unknown dimension '%s' (the schema's symbolic "
                       "dimensions: %s)",
                       ps->text, name, used ? known : "none");
    }
    return emit(ps, MF_OP_SYM, id);
}

static int parse_primary(parser *ps) {
    skip_blanks(ps);
    char ch = *ps->at;
    if (ch == '-') {
        ps->at++;
        int rc = parse_primary(ps);
        return rc ? rc : emit(ps, MF_OP_NEG, 0);
    }
    if (ch == '(') {
        ps->at++;
        int rc = parse_sum(ps);
        if (rc) return rc;
        skip_blanks(ps);
        if (*ps->at != ')') return fail(ps, "expected ')'");
        ps->at++;
        return 0;
    }
    if (isdigit((unsigned char)ch)) {
        int64_t v = 0;
        while (isdigit((unsigned char)*ps->at)) {
            if (__builtin_mul_overflow(v, 10, &v) ||
                __builtin_add_overflow(v, *ps->at - '0', &v))
                return fail(ps, "number too large");
            ps->at++;
        }
        return emit(ps, MF_OP_NUM, v);
    }
    if (isalpha((unsigned char)ch) || ch == '_') return parse_name(ps);
    return fail(ps, "expected a number, a dimension name or '('");
}

static int parse_product(parser *ps) {
    int rc = parse_primary(ps);
    for (;;) {
        if (rc) return rc;
        skip_blanks(ps);
        if (*ps->at != '*') return 0;
        ps->at++;
        rc = parse_primary(ps);
        if (!rc) rc = emit(ps, MF_OP_MUL, 0);
    }
}

static int parse_sum(parser *ps) {
    int rc = parse_product(ps);
    for (;;) {
        if (rc) return rc;
        skip_blanks(ps);
        char op = *ps->at;
        if (op != '+' && op != '-') return 0;
        ps->at++;
        rc = parse_product(ps);
        if (!rc) rc = emit(ps, op == '+' ? MF_OP_ADD : MF_OP_SUB, 0);
    }
}

static int stack_depth(const mf_expr *e) {
    int depth = 0, most = 0;
    for (int32_t i = 0; i < e->n_ops; i++) {
        mf_opcode op = e->ops[i].code;
        depth += (op == MF_OP_NUM || op == MF_OP_SYM) ? 1 : (op == MF_OP_NEG ? 0 : -1);
        if (depth > most) most = depth;
    }
    return most;
}

int mf_expr_compile(mf_parse *p, const char *text, const char *entry, mf_expr *out) {
    parser ps = {.p = p, .text = text, .at = text, .entry = entry, .out = out};
    out->n_ops = 0;
    int rc = parse_sum(&ps);
    if (rc) return rc;
    skip_blanks(&ps);
    if (*ps.at) return fail(&ps, "unexpected character");
    if (stack_depth(out) > MF_MAX_EXPR_DEPTH) return fail(&ps, "too deeply nested");
    return 0;
}

int mf_expr_eval(const mf_expr *e, const struct manifest *m, const tsr_array *inputs,
                 int64_t *out) {
    int64_t stack[MF_MAX_EXPR_DEPTH];
    int top = 0;
    for (int32_t i = 0; i < e->n_ops; i++) {
        const mf_op *op = &e->ops[i];
        int64_t a, b, r;
        switch (op->code) {
        case MF_OP_NUM: stack[top++] = op->value; continue;
        case MF_OP_SYM: {
            const mf_dim_src *s = &m->sym_src[op->value];
            stack[top++] = inputs[s->field].shape[s->axis];
            continue;
        }
        case MF_OP_NEG:
            if (stack[top - 1] == INT64_MIN) return -1;
            stack[top - 1] = -stack[top - 1];
            continue;
        default: break;
        }
        b = stack[--top];
        a = stack[top - 1];
        int overflow = 0;
        switch (op->code) {
        case MF_OP_ADD: overflow = __builtin_add_overflow(a, b, &r); break;
        case MF_OP_SUB: overflow = __builtin_sub_overflow(a, b, &r); break;
        case MF_OP_MUL: overflow = __builtin_mul_overflow(a, b, &r); break;
        default: r = a > b ? a : b; break;
        }
        if (overflow) return -1;
        stack[top - 1] = r;
    }
    *out = stack[0];
    return 0;
}
