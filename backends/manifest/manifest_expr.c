/* SPDX-License-Identifier: MIT */
/* Size expressions of a manifest ("n*n", "max(1, n)", "2*(m+n)", "n/2",
 * "nmax - nmin + 1"): integer literals, the schema's symbolic dimensions,
 * the values of inputs declared "size": true, + - * / (integer division,
 * rounding toward zero; binary and unary minus), parentheses, max(a, b)
 * and min(a, b). Compiled once to postfix; evaluated at each call in
 * 64-bit integers with overflow and division checks. */
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
    char name[SCHEMA_MAX_NAME + 1];
    if (len > SCHEMA_MAX_NAME) return fail(ps, "too long a name");
    memcpy(name, start, len);
    name[len] = '\0';
    skip_blanks(ps);
    int is_max = strcmp(name, "max") == 0, is_min = strcmp(name, "min") == 0;
    if ((is_max || is_min) && *ps->at == '(') {
        ps->at++;
        int rc = parse_sum(ps);
        if (rc) return rc;
        skip_blanks(ps);
        if (*ps->at != ',')
            return fail(ps, is_max ? "expected ',' between the two arguments of max"
                                   : "expected ',' between the two arguments of min");
        ps->at++;
        rc = parse_sum(ps);
        if (rc) return rc;
        skip_blanks(ps);
        if (*ps->at != ')')
            return fail(ps, is_max ? "expected ')' after the arguments of max"
                                   : "expected ')' after the arguments of min");
        ps->at++;
        return emit(ps, is_max ? MF_OP_MAX : MF_OP_MIN, 0);
    }
    const tsr_component *c = ps->p->c;
    int32_t id = mf_symbol_id(c, name);
    if (id < 0) {
        const struct manifest *m = ps->p->m;
        for (int32_t s = 0; s < m->n_value_syms; s++)
            if (strcmp(m->desc.inputs[m->value_syms[s]].name, name) == 0)
                return emit(ps, MF_OP_VAL, s);
    }
    if (id < 0) {
        char known[256] = "";
        size_t used = 0;
        for (int32_t s = 0; s < backend_schema(c).n_sym; s++) {
            int w = snprintf(known + used, sizeof known - used, "%s%s", used ? ", " : "",
                             backend_schema(c).sym_names[s]);
            if (w < 0 || (size_t)w >= sizeof known - used) break;
            used += (size_t)w;
        }
        int32_t in = find_field(backend_schema(c).in, backend_schema(c).n_in, name);
        if (in >= 0)
            return mf_fail(ps->p, TSR_E_DESCRIPTOR, ps->entry,
                           "size expression '%s': '%s' is an input, not a dimension; a rank-0 "
                           "integer input whose value is a size must be declared so: "
                           "\"size\": true in its entry of \"inputs\"",
                           ps->text, name);
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
        char op = *ps->at;
        if (op != '*' && op != '/') return 0;
        ps->at++;
        rc = parse_primary(ps);
        if (!rc) rc = emit(ps, op == '*' ? MF_OP_MUL : MF_OP_DIV, 0);
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
        depth += (op == MF_OP_NUM || op == MF_OP_SYM || op == MF_OP_VAL) ? 1
                 : (op == MF_OP_NEG ? 0 : -1);
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

/* 0; -1 on overflow; -2 on a division by zero. m and inputs may be NULL
 * for an expression of numbers only. */
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
        case MF_OP_VAL: stack[top++] = mf_value_of(m, (int32_t)op->value, inputs); continue;
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
        case MF_OP_DIV:
            if (b == 0) return -2;
            overflow = a == INT64_MIN && b == -1;
            r = overflow ? 0 : a / b;
            break;
        case MF_OP_MIN: r = a < b ? a : b; break;
        default: r = a > b ? a : b; break;
        }
        if (overflow) return -1;
        stack[top - 1] = r;
    }
    *out = stack[0];
    return 0;
}

int64_t mf_value_of(const struct manifest *m, int32_t s, const tsr_array *inputs) {
    const tsr_array *a = &inputs[m->value_syms[s]];
    switch (a->dtype) {
    case TSR_INT8: return *(const int8_t *)a->data;
    case TSR_INT16: return *(const int16_t *)a->data;
    case TSR_INT32: return *(const int32_t *)a->data;
    case TSR_UINT8: return *(const uint8_t *)a->data;
    case TSR_UINT16: return *(const uint16_t *)a->data;
    case TSR_UINT32: return *(const uint32_t *)a->data;
    case TSR_UINT64: {
        uint64_t v = *(const uint64_t *)a->data;
        return v > INT64_MAX ? INT64_MAX : (int64_t)v;
    }
    default: return *(const int64_t *)a->data;
    }
}
