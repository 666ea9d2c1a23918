/* SPDX-License-Identifier: MIT */
/* UM-Bridge's routes (protocol 1.0) in `tessera serve`, beside Tesseract's
 * (UM-Bridge's are capitalised, Tesseract's lower case: they never
 * collide): GET /Info; POST /ModelInfo, /InputSizes, /OutputSizes,
 * /Evaluate, /Gradient, /ApplyJacobian, /ApplyHessian, their *ShMem
 * variants and /TestShMem. One model, named as the component. Every
 * failure is answered in UM-Bridge's shape {"error": {"type", "message"}}:
 * 400 for what the client sent, 500 for what the model did. The body is
 * parsed here, mapped and run by umbridge_map.c, and shared memory is read
 * and written by umbridge_shm.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umbridge.h"

typedef enum route {
    R_INFO, R_MODEL_INFO, R_INPUT_SIZES, R_OUTPUT_SIZES, R_EVALUATE, R_GRADIENT,
    R_APPLY_JACOBIAN, R_APPLY_HESSIAN, R_EVALUATE_SHM, R_GRADIENT_SHM, R_APPLY_JACOBIAN_SHM,
    R_APPLY_HESSIAN_SHM, R_TEST_SHM, R_COUNT
} route;

static const char *const paths[R_COUNT] = {
    "/Info", "/ModelInfo", "/InputSizes", "/OutputSizes", "/Evaluate", "/Gradient",
    "/ApplyJacobian", "/ApplyHessian", "/EvaluateShMem", "/GradientShMem",
    "/ApplyJacobianShMem", "/ApplyHessianShMem", "/TestShMem"};

static const char *model_name(const serve_config *cfg) {
    const char *n = tsr_component_name(cfg->component);
    return n && *n ? n : "component";
}

static void answer_error(serve_response *rs, const um_err *e) {
    serve_json(rs, e->status,
               json_pack("{s:{s:s, s:s}}", "error", "type", e->type, "message", e->message));
}

/* A JSON list of numbers as a vector; what names it in a message. */
static int read_vector(const json_t *v, const char *what, um_vec *out, um_err *e) {
    out->data = NULL;
    out->len = 0;
    if (!json_is_array(v))
        return um_fail(e, "InvalidInput", 400, "%s must be a list of numbers", what);
    size_t n = json_array_size(v);
    out->data = n ? malloc(n * sizeof *out->data) : NULL;
    if (n && !out->data) return um_fail(e, "InvalidOutput", 500, "out of memory");
    out->len = (int64_t)n;
    for (size_t i = 0; i < n; i++) {
        const json_t *x = json_array_get(v, i);
        if (!json_is_number(x)) {
            free(out->data);
            out->data = NULL;
            return um_fail(e, "InvalidInput", 400, "%s: element %zu is not a number", what, i);
        }
        out->data[i] = json_number_value(x);
    }
    return 0;
}

static int read_index(const json_t *body, const char *key, int64_t *out, um_err *e) {
    const json_t *v = json_object_get(body, key);
    if (!json_is_integer(v))
        return um_fail(e, "InvalidInput", 400, "%s must be an integer", key);
    *out = (int64_t)json_integer_value(v);
    return 0;
}

/* The vectors of "input": [[...], ...]. */
static int read_inputs(const tsr_component *c, const json_t *body, um_vec **in, int32_t *n,
                       um_err *e) {
    int32_t idx[UM_MAX_VECTORS];
    int32_t n_vin = um_vector_inputs(c, idx, UM_MAX_VECTORS);
    const json_t *list = json_object_get(body, "input");
    *in = NULL;
    *n = 0;
    if (!json_is_array(list))
        return um_fail(e, "InvalidInput", 400, "input must be a list of lists of numbers");
    size_t k = json_array_size(list);
    if (k > UM_MAX_VECTORS)
        return um_fail(e, "InvalidInput", 400, "input has %zu vectors, more than %d", k,
                       UM_MAX_VECTORS);
    um_vec *v = calloc(k ? k : 1, sizeof *v);
    if (!v) return um_fail(e, "InvalidOutput", 500, "out of memory");
    for (size_t i = 0; i < k; i++) {
        char what[160];
        if ((int32_t)i < n_vin)
            snprintf(what, sizeof what, "input %zu (%s)", i, tsr_component_input(c, idx[i])->name);
        else
            snprintf(what, sizeof what, "input %zu", i);
        if (read_vector(json_array_get(list, i), what, &v[i], e)) {
            um_free_vecs(v, (int32_t)i);
            return -1;
        }
    }
    *in = v;
    *n = (int32_t)k;
    return 0;
}

/* The segment names of a *ShMem request, checked. */
typedef struct shm_req {
    const char *prefix;
    char tid[40];
} shm_req;

static int read_shm_req(const json_t *body, shm_req *s, um_err *e) {
    const json_t *tid = json_object_get(body, "tid");
    s->prefix = json_string_value(json_object_get(body, "shmem_name"));
    if (json_is_integer(tid))
        snprintf(s->tid, sizeof s->tid, "%lld", (long long)json_integer_value(tid));
    else if (json_is_string(tid) && strlen(json_string_value(tid)) < sizeof s->tid)
        snprintf(s->tid, sizeof s->tid, "%s", json_string_value(tid));
    else
        return um_fail(e, "InvalidInput", 400, "tid must be a string of at most 32 characters");
    char name[160];
    return um_shm_name(name, sizeof name, s->prefix ? s->prefix : "", "in", s->tid, 0, e);
}

/* The input vectors of a *ShMem request, from its segments. */
static int read_shm_inputs(const serve_config *cfg, const json_t *body, const shm_req *s,
                           um_vec **in, int32_t *n, um_err *e) {
    int64_t k = 0;
    *in = NULL;
    *n = 0;
    if (read_index(body, "shmem_num_inputs", &k, e)) return -1;
    int32_t idx[UM_MAX_VECTORS];
    int32_t n_vin = um_vector_inputs(cfg->component, idx, UM_MAX_VECTORS);
    /* The count first: no segment is opened for a request that is refused. */
    if (k != n_vin)
        return um_fail(e, "InvalidInput", 400,
                       "Number of input parameters does not match model number of model inputs! "
                       "Expected %d but got %lld", (int)n_vin, (long long)k);
    um_vec *v = calloc(k ? (size_t)k : 1, sizeof *v);
    if (!v) return um_fail(e, "InvalidOutput", 500, "out of memory");
    uint64_t total = 0;
    int rc = 0;
    for (int64_t i = 0; !rc && i < k; i++) {
        char key[40], name[160];
        int64_t len = 0;
        snprintf(key, sizeof key, "shmem_size_%lld", (long long)i);
        rc = read_index(body, key, &len, e);
        if (!rc && (len < 0 || (uint64_t)len > cfg->opts.max_body_bytes / sizeof(double) ||
                    (total += (uint64_t)len * sizeof(double)) > cfg->opts.max_body_bytes))
            rc = um_fail(e, "InvalidInput", 400,
                         "%s: the input segments hold more than max_body_bytes (%llu bytes)", key,
                         (unsigned long long)cfg->opts.max_body_bytes);
        if (!rc && len > 0 && !(v[i].data = malloc((size_t)len * sizeof(double))))
            rc = um_fail(e, "InvalidOutput", 500, "out of memory");
        v[i].len = len;
        if (!rc) rc = um_shm_name(name, sizeof name, s->prefix, "in", s->tid, i, e);
        if (!rc) rc = um_shm_read(name, v[i].data, len, e);
    }
    if (rc) {
        um_free_vecs(v, (int32_t)k);
        return -1;
    }
    *in = v;
    *n = (int32_t)k;
    return 0;
}

/* Where the results go: a JSON list of lists, or the client's segments. */
typedef struct answer_sink {
    json_t *list;
    const shm_req *shm;
} answer_sink;

static int to_json(void *user, int32_t k, const double *data, int64_t len, um_err *e) {
    answer_sink *out = user;
    json_t *v = json_array();
    for (int64_t j = 0; v && j < len; j++) {
        json_t *x = json_real(data[j]);
        if (!x) {
            json_decref(v);
            return um_fail(e, "InvalidOutput", 500,
                           "output %d: element %lld is not finite, which JSON cannot carry",
                           (int)k, (long long)j);
        }
        if (json_array_append_new(v, x)) {
            json_decref(v);
            v = NULL;
        }
    }
    if (!v || json_array_append_new(out->list, v))
        return um_fail(e, "InvalidOutput", 500, "out of memory");
    return 0;
}

static int to_segment(void *user, int32_t k, const double *data, int64_t len, um_err *e) {
    const answer_sink *out = user;
    char name[160];
    if (um_shm_name(name, sizeof name, out->shm->prefix, "out", out->shm->tid, k, e)) return -1;
    return um_shm_write(name, data, len, e);
}

/* /Evaluate, /Gradient, ... and their *ShMem variants. */
static int call_route(const serve_config *cfg, route r, const json_t *body, const json_t *config,
                      serve_response *rs, um_err *e) {
    int shm = r >= R_EVALUATE_SHM;
    um_op op = (um_op)(shm ? r - R_EVALUATE_SHM : r - R_EVALUATE);
    static const tsr_endpoint eps[] = {TSR_EP_APPLY, TSR_EP_VJP, TSR_EP_JVP, TSR_EP_HVP};
    static const char *const names[] = {"Evaluate", "Gradient", "ApplyJacobian", "ApplyHessian"};
    /* Support first, as the reference server answers it. */
    if (!tsr_component_has_endpoint(cfg->component, eps[op]))
        return um_fail(e, "UnsupportedFeature", 400, "%s not supported by model!", names[op]);
    um_args a = {.op = op, .config = config};
    um_vec *in = NULL;
    shm_req s = {0};
    answer_sink out = {.shm = &s};
    int rc = shm ? read_shm_req(body, &s, e) : 0;
    if (!rc && op != UM_EVALUATE) rc = read_index(body, "outWrt", &a.out_wrt, e);
    if (!rc && (op == UM_GRADIENT || op == UM_APPLY_JACOBIAN))
        rc = read_index(body, "inWrt", &a.in_wrt, e);
    if (!rc && op == UM_APPLY_HESSIAN)
        rc = read_index(body, "inWrt1", &a.in_wrt, e) || read_index(body, "inWrt2", &a.in_wrt2, e);
    if (!rc && (op == UM_GRADIENT || op == UM_APPLY_HESSIAN))
        rc = read_vector(json_object_get(body, "sens"), "sens", &a.sens, e);
    if (!rc && (op == UM_APPLY_JACOBIAN || op == UM_APPLY_HESSIAN))
        rc = read_vector(json_object_get(body, "vec"), "vec", &a.vec, e);
    if (!rc) rc = shm ? read_shm_inputs(cfg, body, &s, &in, &a.n_in, e)
                      : read_inputs(cfg->component, body, &in, &a.n_in, e);
    a.in = in;
    if (!shm && !rc && !(out.list = json_array()))
        rc = um_fail(e, "InvalidOutput", 500, "out of memory");
    if (!rc) rc = um_run(cfg->component, cfg->umbridge_sizes, &a, shm ? to_segment : to_json,
                         &out, e);
    json_t *reply = NULL;
    if (!rc && shm) reply = json_object();
    if (!rc && !shm) {
        /* Evaluate answers a list of vectors, the others one vector. */
        json_t *value = op == UM_EVALUATE ? json_incref(out.list)
                                          : json_incref(json_array_get(out.list, 0));
        reply = value ? json_pack("{s:o}", "output", value) : NULL;
        if (!reply) rc = um_fail(e, "InvalidOutput", 500, "out of memory");
    }
    json_decref(out.list);
    um_free_vecs(in, a.n_in);
    free(a.sens.data);
    free(a.vec.data);
    if (!rc) serve_json(rs, 200, reply);
    return rc;
}

/* /TestShMem: copy the client's one test value from its in segment to its
 * out segment; {"value": [x]} when that worked, {} when not (the client
 * then falls back to HTTP). */
static void test_shm(const json_t *body, serve_response *rs) {
    shm_req s = {.prefix = "/umbridge_test"};
    um_err e;
    char in[160], out[160];
    double x;
    const json_t *tid = json_object_get(body, "tid");
    snprintf(s.tid, sizeof s.tid, "%s", json_is_string(tid) ? json_string_value(tid) : "");
    if (um_shm_name(in, sizeof in, s.prefix, "shmem_in", s.tid, -1, &e) ||
        um_shm_name(out, sizeof out, s.prefix, "shmem_out", s.tid, -1, &e) ||
        um_shm_read(in, &x, 1, &e) || um_shm_write(out, &x, 1, &e)) {
        serve_json(rs, 200, json_object());
        return;
    }
    serve_json(rs, 200, json_pack("{s:[f]}", "value", x));
}

static void model_info(const serve_config *cfg, serve_response *rs) {
    tsr_component *c = cfg->component;
    serve_json(rs, 200,
               json_pack("{s:{s:b, s:b, s:b, s:b}}", "support", "Evaluate",
                         tsr_component_has_endpoint(c, TSR_EP_APPLY), "Gradient",
                         tsr_component_has_endpoint(c, TSR_EP_VJP), "ApplyJacobian",
                         tsr_component_has_endpoint(c, TSR_EP_JVP), "ApplyHessian",
                         tsr_component_has_endpoint(c, TSR_EP_HVP)));
}

static int sizes_route(const serve_config *cfg, int outputs, const json_t *config,
                       serve_response *rs, um_err *e) {
    int64_t *sizes = NULL;
    int32_t n = 0;
    if (um_sizes(cfg->component, cfg->umbridge_sizes, config, outputs, &sizes, &n, e)) return -1;
    json_t *list = json_array();
    for (int32_t i = 0; list && i < n; i++)
        if (json_array_append_new(list, json_integer((json_int_t)sizes[i]))) {
            json_decref(list);
            list = NULL;
        }
    free(sizes);
    if (!list) return um_fail(e, "InvalidOutput", 500, "out of memory");
    serve_json(rs, 200, json_pack("{s:o}", outputs ? "outputSizes" : "inputSizes", list));
    return 0;
}

int umbridge_handle(const serve_config *cfg, const serve_request *rq, serve_response *rs) {
    route r = R_COUNT;
    for (int i = 0; i < R_COUNT; i++)
        if (strcmp(rq->path, paths[i]) == 0) r = (route)i;
    if (r == R_COUNT) return 0;
    int is_get = strcmp(rq->method, "GET") == 0 || strcmp(rq->method, "HEAD") == 0;
    if (r == R_INFO ? !is_get : strcmp(rq->method, "POST") != 0) {
        rs->allow = r == R_INFO ? "GET, HEAD" : "POST";
        serve_detail(rs, 405, "Method Not Allowed");
        return 1;
    }
    um_err e = {0};
    if (r == R_INFO) {
        serve_json(rs, 200, json_pack("{s:f, s:[s]}", "protocolVersion", 1.0, "models",
                                      model_name(cfg)));
        return 1;
    }
    if (rq->body_too_large) {
        um_fail(&e, "InvalidInput", 413, "the request body is larger than max_body_bytes (%llu bytes)",
                (unsigned long long)cfg->opts.max_body_bytes);
        answer_error(rs, &e);
        return 1;
    }
    json_error_t jerr;
    json_t *body = json_loadb(rq->body ? rq->body : "", rq->body_len, 0, &jerr);
    const json_t *name = json_object_get(body, "name");
    const json_t *config = json_object_get(body, "config");
    int rc = 0;
    if (!json_is_object(body))
        rc = um_fail(&e, "InvalidInput", 400, "the body is not a JSON object: %s",
                     body ? "another value" : jerr.text);
    else if (!json_is_string(name) || strcmp(json_string_value(name), model_name(cfg)) != 0)
        rc = um_fail(&e, "ModelNotFound", 400, "Model %s not found! The following are available: "
                     "['%s'].", json_is_string(name) ? json_string_value(name) : "(no name)",
                     model_name(cfg));
    else if (config && !json_is_object(config) && !json_is_null(config))
        rc = um_fail(&e, "InvalidInput", 400, "config must be a JSON object");
    if (json_is_null(config)) config = NULL;
    if (!rc) {
        switch (r) {
        case R_MODEL_INFO: model_info(cfg, rs); break;
        case R_TEST_SHM: test_shm(body, rs); break;
        case R_INPUT_SIZES:
        case R_OUTPUT_SIZES: rc = sizes_route(cfg, r == R_OUTPUT_SIZES, config, rs, &e); break;
        default: rc = call_route(cfg, r, body, config, rs, &e); break;
        }
    }
    if (rc) answer_error(rs, &e);
    json_decref(body);
    return 1;
}
