/* SPDX-License-Identifier: MIT */
/*
 * `tessera test`: one regression case. Its fields are tesseract-runtime's
 * (endpoint, payload, expected_outputs or expected_exception with
 * expected_exception_regex, atol, rtol, skip_output_path_checks,
 * cli_config); it passes when the call succeeds with outputs close to the
 * expected ones, or fails with an exception of the expected class (a
 * subclass counts, as Python's except does) whose message the regex
 * finds. A request Tessera refuses (shapes, dtypes, names, values) is
 * pydantic's ValidationError, which is a ValueError.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <tessera/payload.h>

#include "cli.h"
#include "test_case.h"

/* Python's exception classes a case may name, each with its base. */
static const struct {
    const char *name, *base;
} exception_classes[] = {
    {"BaseException", NULL},        {"Exception", "BaseException"},
    {"ValueError", "Exception"},    {"ValidationError", "ValueError"},
    {"UnicodeError", "ValueError"}, {"TypeError", "Exception"},
    {"RuntimeError", "Exception"},  {"NotImplementedError", "RuntimeError"},
    {"RecursionError", "RuntimeError"}, {"ArithmeticError", "Exception"},
    {"ZeroDivisionError", "ArithmeticError"}, {"OverflowError", "ArithmeticError"},
    {"FloatingPointError", "ArithmeticError"}, {"LookupError", "Exception"},
    {"KeyError", "LookupError"},    {"IndexError", "LookupError"},
    {"AssertionError", "Exception"}, {"AttributeError", "Exception"},
    {"NameError", "Exception"},     {"ImportError", "Exception"},
    {"ModuleNotFoundError", "ImportError"}, {"OSError", "Exception"},
    {"IOError", "Exception"},       {"FileNotFoundError", "OSError"},
    {"FileExistsError", "OSError"}, {"PermissionError", "OSError"},
    {"TimeoutError", "OSError"},    {"MemoryError", "Exception"},
    {"StopIteration", "Exception"}, {"SystemError", "Exception"},
    {"EOFError", "Exception"},      {"BufferError", "Exception"},
};
#define N_CLASSES (sizeof exception_classes / sizeof exception_classes[0])

static int class_index(const char *name) {
    for (size_t k = 0; k < N_CLASSES; k++)
        if (strcmp(exception_classes[k].name, name) == 0) return (int)k;
    return -1;
}

/* Is the class got the class want or one derived from it? */
static bool is_subclass(const char *got, const char *want) {
    for (int k = class_index(got); k >= 0;) {
        if (strcmp(exception_classes[k].name, want) == 0) return true;
        const char *base = exception_classes[k].base;
        k = base != NULL ? class_index(base) : -1;
    }
    return strcmp(got, want) == 0;
}

/* The class a case names, as tesseract-runtime reads it: a builtin's
 * name, or "package.Name". NULL with why set when it names none. */
static const char *expected_class(const char *name, char *why, size_t n) {
    if (class_index(name) >= 0 && strcmp(name, "ValidationError") != 0) return name;
    const char *dot = strrchr(name, '.');
    if (dot == NULL) {
        snprintf(why, n,
                 "invalid case: non-builtin exception '%s' must be given as "
                 "'packagename.exceptionname' (e.g. 'pydantic.ValidationError')",
                 name);
        return NULL;
    }
    if (strcmp(name, "pydantic.ValidationError") == 0 ||
        strcmp(name, "pydantic_core.ValidationError") == 0 ||
        strcmp(name, "pydantic_core._pydantic_core.ValidationError") == 0)
        return "ValidationError";
    if (strncmp(name, "builtins.", 9) == 0 && class_index(name + 9) >= 0) return name + 9;
    return dot + 1;
}

/* A failure: its code, type (tsr_call_errtype; NULL: the code's), loc
 * and message. */
typedef struct fault {
    int code;
    const char *type, *loc, *message;
} fault;

/* The class of a failure: the request refused is a ValidationError; an
 * endpoint's own exception is named in its message ("ValueError: ..."). */
static void failure_class(int code, const char *message, char *out, size_t n) {
    switch (code) {
    case TSR_E_PAYLOAD:
    case TSR_E_UNKNOWN_FIELD:
    case TSR_E_MISSING:
    case TSR_E_DTYPE:
    case TSR_E_SHAPE:
    case TSR_E_NOT_DIFFERENTIABLE:
    case TSR_E_ARGUMENT:
    case TSR_E_VALUE: /* refused by the schema's choices or by the endpoint's own validation */
        snprintf(out, n, "ValidationError");
        return;
    case TSR_E_PLUGIN:
        break;
    default:
        snprintf(out, n, code == TSR_E_UNSUPPORTED ? "NotImplementedError" : "RuntimeError");
        return;
    }
    /* The first word ending in Error or Exception followed by ':'. */
    for (const char *p = message; *p != '\0'; p++) {
        if (p != message && (p[-1] == '_' || (p[-1] >= 'A' && p[-1] <= 'Z') ||
                             (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= '0' && p[-1] <= '9')))
            continue;
        size_t len = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.");
        if (len == 0 || p[len] != ':') continue;
        const char *word = memchr(p, '.', len) ? p + len : p;
        while (word > p && word[-1] != '.') word--;
        size_t wl = (size_t)(p + len - word);
        if ((wl > 5 && strncmp(word + wl - 5, "Error", 5) == 0) ||
            (wl > 9 && strncmp(word + wl - 9, "Exception", 9) == 0)) {
            snprintf(out, n, "%.*s", (int)wl, word);
            return;
        }
    }
    snprintf(out, n, "Exception");
}

static int endpoint_of(const char *name) {
    static const struct {
        const char *name;
        tsr_endpoint ep;
    } names[] = {
        {"apply", TSR_EP_APPLY},
        {"abstract_eval", TSR_EP_ABSTRACT_EVAL},
        {"jacobian", TSR_EP_JACOBIAN},
        {"jacobian_vector_product", TSR_EP_JVP},
        {"vector_jacobian_product", TSR_EP_VJP},
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcmp(names[k].name, name) == 0) return (int)names[k].ep;
    return -1;
}

typedef struct test_spec {
    const char *endpoint;
    json_t *payload;
    json_t *expected;        /* NULL when an exception is expected */
    const char *exception;   /* the class, resolved */
    const char *regex;
    double atol, rtol;
} test_spec;

static bool number_field(json_t *root, const char *key, double fallback, double *out, char *why,
                         size_t n) {
    json_t *v = json_object_get(root, key);
    *out = fallback;
    if (v == NULL) return true;
    if (!json_is_number(v)) {
        snprintf(why, n, "invalid case: \"%s\" must be a number", key);
        return false;
    }
    *out = json_number_value(v);
    return true;
}

static bool read_spec(json_t *root, test_spec *s, char *why, size_t n) {
    if (!json_is_object(root)) {
        snprintf(why, n, "invalid case: not a JSON object");
        return false;
    }
    json_t *ep = json_object_get(root, "endpoint");
    s->payload = json_object_get(root, "payload");
    if (!json_is_string(ep) || !json_is_object(s->payload)) {
        snprintf(why, n, "invalid case: \"endpoint\" (a string) and \"payload\" (an object) are required");
        return false;
    }
    s->endpoint = json_string_value(ep);
    json_t *exp = json_object_get(root, "expected_outputs");
    json_t *exc = json_object_get(root, "expected_exception");
    json_t *re = json_object_get(root, "expected_exception_regex");
    s->expected = json_is_null(exp) ? NULL : exp;
    if (s->expected != NULL && !json_is_object(s->expected)) {
        snprintf(why, n, "invalid case: \"expected_outputs\" must be an object");
        return false;
    }
    if (exc != NULL && !json_is_null(exc) && !json_is_string(exc)) {
        snprintf(why, n, "invalid case: \"expected_exception\" must be a string");
        return false;
    }
    s->exception = NULL;
    if (json_is_string(exc)) {
        s->exception = expected_class(json_string_value(exc), why, n);
        if (s->exception == NULL) return false;
    }
    if ((s->expected != NULL) == (s->exception != NULL)) {
        snprintf(why, n, "invalid case: give exactly one of \"expected_outputs\" and "
                         "\"expected_exception\"");
        return false;
    }
    if (re != NULL && !json_is_null(re) && !json_is_string(re)) {
        snprintf(why, n, "invalid case: \"expected_exception_regex\" must be a string");
        return false;
    }
    s->regex = json_is_string(re) ? json_string_value(re) : NULL;
    return number_field(root, "atol", 1e-8, &s->atol, why, n) &&
           number_field(root, "rtol", 1e-5, &s->rtol, why, n);
}

/* A refused request as pydantic's ValidationError prints it ("<loc>\n
 * <msg> [type=<type>, ...]"), made from its 422 detail, so that a case's
 * regex written against tesseract-runtime's message matches here too;
 * "" when there is no detail. */
static void pydantic_text(const fault *f, const char *request, char *out, size_t n) {
    out[0] = '\0';
    char *body = NULL;
    if (tsr_error_detail_json_typed(f->type, f->code, f->loc, f->message, request,
                                    request ? strlen(request) : 0, &body) != 0)
        return;
    json_t *root = json_loads(body, 0, NULL);
    tsr_json_free(body);
    json_t *item = json_array_get(json_object_get(root, "detail"), 0);
    const char *msg = json_string_value(json_object_get(item, "msg"));
    const char *type = json_string_value(json_object_get(item, "type"));
    if (msg != NULL && type != NULL)
        snprintf(out, n, "1 validation error\n%s\n  %s [type=%s]", f->loc, msg, type);
    json_decref(root);
}

/* The verdict of a failure. */
static void judge_failure(const test_spec *s, const fault *f, const char *request,
                          test_verdict *v) {
    int code = f->code;
    const char *message = f->message;
    char got[128];
    failure_class(code, message, got, sizeof got);
    if (s->exception == NULL) {
        snprintf(v->why, sizeof v->why, "%s: %.880s", got, message);
        return;
    }
    if (!is_subclass(got, s->exception)) {
        snprintf(v->why, sizeof v->why, "Expected %.60s, but got %.60s: %.800s", s->exception, got, message);
        return;
    }
    if (s->regex != NULL) {
        regex_t re;
        if (regcomp(&re, s->regex, REG_EXTENDED | REG_NOSUB) != 0) {
            snprintf(v->why, sizeof v->why, "expected_exception_regex '%s' does not compile",
                     s->regex);
            return;
        }
        int found = regexec(&re, message, 0, NULL, 0);
        if (found != 0 && strcmp(got, "ValidationError") == 0) {
            char text[TSR_ERRMSG_MAX + TSR_ERRLOC_MAX + 64];
            pydantic_text(f, request, text, sizeof text);
            if (text[0] != '\0') found = regexec(&re, text, 0, NULL, 0);
        }
        regfree(&re);
        if (found != 0) {
            snprintf(v->why, sizeof v->why,
                     "Exception message does not match regex. Expected pattern: %s; actual "
                     "message: %s",
                     s->regex, message);
            return;
        }
    }
    v->passed = true;
}

static void run_spec(tsr_component *c, const test_spec *s, const test_settings *set,
                     test_verdict *v) {
    int ep = endpoint_of(s->endpoint);
    if (ep < 0 || !tsr_component_has_endpoint(c, (tsr_endpoint)ep)) {
        snprintf(v->why, sizeof v->why, "Endpoint %s not found in the component", s->endpoint);
        return;
    }
    char *request = json_dumps(s->payload, JSON_COMPACT);
    if (request == NULL) {
        snprintf(v->why, sizeof v->why, "out of memory");
        return;
    }
    tsr_error err = TSR_ERROR_INIT;
    tsr_payload *p = NULL;
    tsr_call *call = NULL;
    char *answer = NULL;
    tsr_input_options in = {.struct_size = sizeof in, .base_dir = set->input_path};
    if (tsr_payload_parse_ex(c, (tsr_endpoint)ep, request, strlen(request), &in, &p, &err) != 0 ||
        (call = tsr_call_new(c, (tsr_endpoint)ep)) == NULL ||
        tsr_payload_bind(p, call, &err) != 0) {
        fault f = {call == NULL && p != NULL ? TSR_E_NOMEM : err.code, NULL, err.loc,
                   err.message};
        judge_failure(s, &f, request, v);
    } else if (tsr_call_run(call) != 0) {
        fault f = {tsr_call_errcode(call), tsr_call_errtype(call), tsr_call_errloc(call),
                   tsr_call_errmsg(call)};
        judge_failure(s, &f, request, v);
    } else if (s->exception != NULL) {
        snprintf(v->why, sizeof v->why, "Expected %s, but no exception was raised", s->exception);
    } else if (tsr_payload_format_results(p, call, TSR_ENCODING_BASE64, &answer, &err) != 0) {
        snprintf(v->why, sizeof v->why, "the results could not be written: %.900s", err.message);
    } else {
        json_t *got = json_loads(answer, 0, NULL);
        if (got == NULL)
            snprintf(v->why, sizeof v->why, "the results are not JSON");
        else
            v->passed = test_compare_outputs(c, (tsr_endpoint)ep, got, s->expected, s->atol,
                                             s->rtol, v->why, sizeof v->why);
        json_decref(got);
    }
    tsr_json_free(answer);
    tsr_call_free(call);
    tsr_payload_free(p);
    free(request);
}

void test_run_case(tsr_component *c, const char *text, size_t len, const test_settings *s,
                   test_verdict *v) {
    v->passed = false;
    v->why[0] = '\0';
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL) {
        snprintf(v->why, sizeof v->why, "invalid case: malformed JSON at line %d: %s", jerr.line,
                 jerr.text);
        return;
    }
    test_spec spec;
    if (read_spec(root, &spec, v->why, sizeof v->why)) run_spec(c, &spec, s, v);
    json_decref(root);
}
