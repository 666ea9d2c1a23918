/* SPDX-License-Identifier: MIT */
/* The parts of a loaded manifest shared by the manifest_*.c files:
 * parsing and checking (manifest_open, _json, _schema, _endpoint, _args,
 * _expr), libffi preparation (manifest_cif) and the calls themselves
 * (manifest_call, manifest_stage). Not seen by the rest of the core, which
 * knows manifests as one backend (manifest_backend_ops, manifest_open.c);
 * docs/guides/manifests.md states the format. */
#ifndef TESSERA_CORE_MANIFEST_INTERNAL_H
#define TESSERA_CORE_MANIFEST_INTERNAL_H

#include <ffi.h>
#include <jansson.h>
#include <pthread.h>

#include "core/backend.h"

/* Bounds that keep a call's bookkeeping on the stack. */
#define MF_MAX_ARGS 64        /* arguments of one routine, hidden lengths excluded */
#define MF_MAX_STEPS 4        /* routines of one endpoint, run in order */
#define MF_MAX_EXPR_OPS 32    /* operations in one size expression */
#define MF_MAX_EXPR_DEPTH 16  /* evaluation stack of one expression */
#define MF_MAX_TEXT 256       /* bytes of a character constant */
#define MF_MAX_VALUE_SYMS 8   /* inputs whose values are sizes ("size": true) */
#define MF_QUERY_CACHE 8      /* shapes whose workspace query results are kept */

/* What an argument of the routine is. */
typedef enum mf_kind {
    MF_IN,         /* an input's data */
    MF_OUT,        /* an output's buffer (scratch in derivative endpoints) */
    MF_TANGENT,    /* jvp, hvp: the tangent of an input (zeros when not asked) */
    MF_COTANGENT,  /* vjp, hvp: the cotangent of an output (zeros when not asked) */
    MF_RESULT,     /* jvp: d output; vjp, hvp: d input (scratch when not asked) */
    MF_JACOBIAN,   /* jacobian: the block d output / d input */
    MF_DIM,        /* an integer: one axis of a field's shape */
    MF_INT,        /* an integer: a size expression */
    MF_CONST,      /* a number written in the manifest */
    MF_WORKSPACE,  /* scratch memory of a computed size */
    MF_CHAR,       /* a character constant (Fortran: plus a hidden length) */
    MF_INFO,       /* an integer the routine sets; nonzero is a failure */
    MF_LENGTH,     /* an integer: the length of a named workspace (-1 in a query) */
    MF_KIND_COUNT
} mf_kind;

extern const char *const mf_kind_names[MF_KIND_COUNT];

/* Kinds whose argument is the address of an array. */
static inline int mf_is_array_kind(mf_kind k) { return k <= MF_JACOBIAN || k == MF_WORKSPACE; }

/* A size expression compiled to postfix. */
typedef enum mf_opcode {
    MF_OP_NUM, MF_OP_SYM, MF_OP_VAL, MF_OP_ADD, MF_OP_SUB, MF_OP_MUL, MF_OP_DIV, MF_OP_NEG,
    MF_OP_MAX, MF_OP_MIN
} mf_opcode;

typedef struct mf_op {
    mf_opcode code;
    int64_t value;   /* a number, a symbol id of the component, or (VAL) a size input */
} mf_op;

typedef struct mf_expr {
    int32_t n_ops;
    mf_op ops[MF_MAX_EXPR_OPS];
} mf_expr;

/* A scalar as passed by value or pointed to: room for any dtype. */
typedef union mf_scalar {
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    float f32;
    double f64;
    void *ptr;
    unsigned char bytes[16];
} mf_scalar;

/* Where the size of one dimension comes from at a call: axis `axis` of
 * input `field`, the fixed size when field is -1, or (MF_DIM_EXPR) an
 * output's size expression ("n+1", "nmax - nmin + 1"). */
#define MF_DIM_EXPR (-2)
typedef struct mf_dim_src {
    int32_t field;
    int32_t axis;
    int64_t fixed;
    const mf_expr *expr;
} mf_dim_src;

typedef struct mf_arg {
    mf_kind kind;
    tsr_dtype dtype;     /* element type (arrays) or scalar type */
    uint8_t by_value;    /* scalars: passed by value rather than by address */
    uint8_t copy;        /* the routine gets a private copy of the data */
    uint8_t order_f;     /* the routine sees the array in column-major order */
    uint8_t zero;        /* the buffer is zeroed before the call */
    uint8_t hidden_len;  /* MF_CHAR: a size_t length follows all arguments */
    uint8_t query;       /* MF_WORKSPACE: its size is asked of the routine (LWORK = -1) */
    uint8_t pass_given;  /* "pass" (MF_CHAR: "hidden_length") was written, not taken
                            from the convention */
    int32_t partner;     /* WORKSPACE: its length argument; LENGTH: its workspace;
                            INT / CONST right after a workspace with no length: that
                            workspace (checked to be no longer than it); else -1 */
    const char *name;    /* MF_WORKSPACE: its name; MF_LENGTH: the workspace's (in root) */
    int32_t field;       /* input index (IN, TANGENT, vjp RESULT) or output index
                            (OUT, COTANGENT, jvp RESULT, JACOBIAN); -1 if none */
    int32_t field2;      /* JACOBIAN: the input; OUT: the input copied in first; RESULT:
                            the field whose seed is copied in first (vjp: an output's
                            cotangent, jvp: an input's tangent); else -1 */
    mf_dim_src dim;      /* MF_DIM */
    mf_expr *expr;       /* MF_INT, MF_WORKSPACE */
    mf_scalar value;     /* MF_CONST */
    char *text;          /* MF_CHAR */
    size_t text_len;
} mf_arg;

/* How a status (return value or info argument) is explained. */
enum mf_match { MF_MATCH_VALUE, MF_MATCH_NEGATIVE, MF_MATCH_POSITIVE };

typedef struct mf_message {
    enum mf_match match;
    int64_t value;
    const char *text;
} mf_message;

/* Results of a routine's workspace queries, per shape of its inputs: the
 * key is every input's shape, the sizes one per queried workspace. */
typedef struct mf_query_cache {
    int32_t key_len;
    int32_t n_query;
    int32_t used;
    int32_t next;                /* the entry replaced when all are used */
    int64_t *keys;               /* MF_QUERY_CACHE * key_len */
    int64_t *sizes;              /* MF_QUERY_CACHE * n_query */
} mf_query_cache;

typedef struct mf_endpoint {
    int present;
    tsr_endpoint ep;
    const char *symbol;
    void (*fn)(void);
    int32_t n_args;
    mf_arg *args;
    tsr_dtype returns;           /* TSR_INT32 / TSR_INT64: a status; INVALID: void */
    mf_arg *result;              /* a function's result into a rank-0 field, or NULL */
    mf_message *messages;
    int32_t n_messages;
    int32_t n_hidden;            /* hidden lengths appended */
    int stages;                  /* some argument may need scratch memory */
    ffi_type **types;            /* n_args + n_hidden */
    ffi_cif cif;
    mf_query_cache queries;      /* n_query > 0: some workspace is queried */
    char where[32];              /* a setup routine: "setup[0]", named in its errors */
} mf_endpoint;

/* An endpoint: one routine, or a short sequence of them ("vjp": [...]),
 * run in order on shared buffers: an array argument of the same kind and
 * field is one buffer in every step, so that what a step writes the next
 * reads. */
typedef struct mf_steps {
    int present;
    int32_t n;
    mf_endpoint *r;              /* n routines */
    int stages;                  /* some argument needs scratch memory */
} mf_steps;

struct manifest {
    json_t *root;                /* the manifest; strings of the schema point into it */
    char *dir;                   /* the manifest's folder, for a relative library */
    char *library;               /* the library as it was loaded */
    void *dl;                    /* its dlopen handle */
    int fortran;                 /* convention: scalars by reference, hidden lengths */
    const char *may_exit;        /* why the routines may end the process, or NULL */
    tsr_plugin desc;
    tsr_field *fields;           /* inputs then outputs */
    tsr_dim *dims;
    mf_dim_src *sym_src;         /* per symbol id of the component */
    mf_dim_src *out_dims;        /* output o, dim d at [o * TSR_MAX_FIELD_RANK + d] */
    const char **out_text;       /* like out_dims: an output's size expression, or NULL */
    mf_expr *out_exprs;          /* like out_dims: those expressions compiled */
    int sized_outputs;           /* some output's size is an expression */
    int32_t n_value_syms;        /* inputs declared "size": true, whose values are sizes */
    int32_t value_syms[MF_MAX_VALUE_SYMS];   /* their input indices */
    mf_steps ep[TSR_EP_COUNT];
    mf_endpoint *setup;          /* routines called once at load ("setup") */
    int32_t n_setup;
    pthread_mutex_t lock;        /* guards the query caches */
};

/* ---- parsing (manifest_json.c) ---------------------------------------- */

/* What the parsing functions share: where errors go and whose they are. */
typedef struct mf_parse {
    tsr_component *c;
    struct manifest *m;
    tsr_error *err;
} mf_parse;

/* Fail with "PATH: ENTRY: cause"; returns code. */
int mf_fail(mf_parse *p, int code, const char *entry, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Refuse keys of obj outside the NULL-terminated list allowed. */
int mf_check_keys(mf_parse *p, json_t *obj, const char *entry, const char *const *allowed);
/* A string member; missing is an error only when required (then *out is NULL). */
int mf_get_string(mf_parse *p, json_t *obj, const char *key, const char *entry, int required,
                  const char **out);
int mf_get_bool(mf_parse *p, json_t *obj, const char *key, const char *entry, int *out);
/* "entry.key" or "entry[i]" into buf. */
const char *mf_entry(char *buf, size_t n, const char *entry, const char *key);
const char *mf_entry_at(char *buf, size_t n, const char *entry, size_t index);

/* manifest_may_exit.c: the manifest's "may_exit" (true, false or a reason)
 * into *reason (NULL: the routines never end the process). 0, or -1 when
 * the value is of another kind. */
int mf_may_exit(json_t *root, const char **reason);

/* manifest_schema.c: inputs and outputs into m->fields, then, after
 * the descriptor is loaded, where each symbol and output dimension comes from. */
int mf_schema_parse(mf_parse *p);
int mf_schema_sources(mf_parse *p);

/* manifest_sizes.c: the sizes of outputs whose shapes are expressions,
 * at a call. mf_dim_value: one dimension (0, or an mf_expr_eval failure);
 * mf_output_count: an output's elements (-1 with the error set on ctx);
 * mf_sizes_prepare: before a routine runs, give each result whose size
 * only the manifest knows its shape and buffer (tsr_ctx_alloc), and check
 * cotangents of such outputs against it. */
int mf_dim_value(const struct manifest *m, const mf_dim_src *s, const tsr_array *inputs,
                 int64_t *out);
int mf_output_count(tsr_ctx *ctx, const struct manifest *m, const tsr_args *args, int32_t o,
                    int64_t *count);
int mf_sizes_prepare(tsr_ctx *ctx, const struct manifest *m, const tsr_args *args);

/* manifest_endpoint.c: each endpoint's symbol, arguments, status rules
 * and its coverage of the schema. */
int mf_endpoints_declare(mf_parse *p);   /* which endpoints exist (before the descriptor is loaded) */
int mf_endpoints_parse(mf_parse *p);     /* their arguments (after it is loaded) */
/* One routine: symbol, returns, args, errors (an endpoint's coverage of
 * the schema is checked over all its steps). */
int mf_routine_parse(mf_parse *p, mf_endpoint *e, json_t *obj, const char *entry);
/* manifest_steps.c: the arguments steps share must be declared alike
 * (modifiers that prepare a buffer at its first use only). */
int mf_steps_check(mf_parse *p, const mf_steps *st, const char *entry);
/* Whether args[i] of step s shares its buffer with an earlier argument
 * (of this or an earlier step): its position, or -1. */
int mf_steps_alias(const mf_steps *st, int32_t s, int32_t i, int32_t *s0, int32_t *i0);

/* manifest_open.c: the routine's symbol in the loaded library. */
int mf_routine_resolve(mf_parse *p, mf_endpoint *e, const char *entry);
void mf_routine_free(mf_endpoint *e);

/* manifest_setup.c: "setup", routines called once when the component
 * opens (after the library is loaded), with constant arguments only. */
int mf_setup_parse(mf_parse *p);
int mf_setup_run(tsr_component *c, struct manifest *m, tsr_error *err);

/* manifest_args.c: one argument. */
int mf_arg_parse(mf_parse *p, mf_endpoint *e, json_t *obj, const char *entry, mf_arg *out);

/* manifest_lint.c: warnings (the component's log, WARN) about an argument
 * list that looks wrong but may be right: a gfortran-style symbol under
 * "convention": "c", a dropped hidden length, a size negative for empty
 * inputs. args: the routine's "args" JSON, for the expressions' text. */
void mf_lint_routine(const mf_parse *p, const mf_endpoint *e, json_t *args, const char *entry);

/* manifest_returns.c: "returns", a status or a function's result. */
int mf_returns_parse(mf_parse *p, mf_endpoint *e, json_t *obj, const char *entry);
/* Where the function's result goes at this call (NULL: nobody asked). */
void *mf_result_target(const mf_endpoint *e, const tsr_args *args);
/* Store a result as libffi returned it (widened to ffi_arg when smaller). */
void mf_result_store(const mf_arg *a, void *dst, const void *ret);

/* manifest_query.c: workspaces and their lengths. At load: link each
 * {"length": NAME} to its workspace, and check the pairs (a queried
 * workspace has a length; an integer right after a workspace that has
 * none must not exceed it). At a call: the cached sizes for this shape. */
int mf_workspaces_link(mf_parse *p, mf_endpoint *e, const char *entry);
int mf_query_cache_init(mf_parse *p, mf_endpoint *e, const char *entry);
void mf_query_cache_free(mf_endpoint *e);
/* sizes[i] for each queried workspace args[i] (others untouched): 1 when
 * this shape's sizes are known, 0 when the routine must be asked. */
int mf_query_lookup(struct manifest *m, const mf_endpoint *e, const tsr_array *inputs,
                    int64_t *sizes);
void mf_query_store(struct manifest *m, mf_endpoint *e, const tsr_array *inputs,
                    const int64_t *sizes);
/* The size a routine wrote into the first element of a queried workspace
 * (a float rounded up); -1 when it is not a usable size. */
int64_t mf_query_reported(const mf_arg *a, const void *first);

/* manifest_cif.c: the libffi type of a scalar passed or returned by value (NULL: none). */
ffi_type *mf_ffi_scalar_type(tsr_dtype d);

/* manifest_expr.c */
int mf_expr_compile(mf_parse *p, const char *text, const char *entry, mf_expr *out);
/* Value of e for the inputs of a call: 0; -1 on overflow; -2 on a division
 * by zero. m and inputs may be NULL when e has numbers only. */
int mf_expr_eval(const mf_expr *e, const struct manifest *m, const tsr_array *inputs,
                 int64_t *out);
/* The value of size input s (value_syms[s]) at this call. */
int64_t mf_value_of(const struct manifest *m, int32_t s, const tsr_array *inputs);
/* A symbol id of c by name, or -1. */
int32_t mf_symbol_id(const tsr_component *c, const char *name);

/* manifest_cif.c: libffi call interfaces, once per endpoint. */
int mf_cif_prepare(mf_parse *p, mf_endpoint *e, const char *entry);
void mf_cif_free(mf_endpoint *e);

/* manifest_call.c: the endpoint functions of the descriptor. */
int mf_call_apply(tsr_ctx *ctx, const tsr_args *args);
int mf_call_jvp(tsr_ctx *ctx, const tsr_args *args);
int mf_call_vjp(tsr_ctx *ctx, const tsr_args *args);
int mf_call_hvp(tsr_ctx *ctx, const tsr_args *args);
int mf_call_jacobian(tsr_ctx *ctx, const tsr_args *args);
/* A routine whose arguments are all constants (a setup routine). */
int mf_call_constant(tsr_ctx *ctx, const struct manifest *m, const mf_endpoint *e);

/* manifest_stage.c: moving arrays between the host's layout and the
 * routine's. count elements of size esize; shape/rank describe the array
 * (C order on the host's side). */
void mf_to_fortran(void *dst, const void *src, const int64_t *shape, int32_t rank, size_t esize);
void mf_from_fortran(void *dst, const void *src, const int64_t *shape, int32_t rank,
                     size_t esize);

#endif
