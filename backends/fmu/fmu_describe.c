/* SPDX-License-Identifier: MIT */
/* Reading modelDescription.xml (fmu.h) with expat: the elements the
 * backend needs, each attribute checked as it is read (numbers strictly,
 * names against the standard's choices), then the references between
 * them (derivative=, ModelStructure) resolved once every variable is
 * known. A DOCTYPE or an entity declaration stops the parse at once, so
 * no entity is ever expanded and nothing outside the text is read. */
#include "fmu.h"

#include <ctype.h>
#include <errno.h>
#include <expat.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codecs/number_text.h"
#include "tessera/tessera.h"

#define MAX_ELEMENT_DEPTH 64
#define MAX_IDENTIFIER 200

typedef enum kind {
    K_OTHER,
    K_ROOT,
    K_ME,
    K_CS,
    K_EXPERIMENT,
    K_VARS,
    K_VAR,
    K_STRUCTURE,
    K_UNKNOWN_REF /* an element of ModelStructure naming a variable */
} kind;

typedef enum ref_kind { REF_OUTPUT, REF_DERIVATIVE, REF_EVENT_INDICATOR, REF_OTHER } ref_kind;

typedef struct pending_ref {
    uint32_t vr;
    ref_kind what;
    int line;
    char element[32];
} pending_ref;

typedef struct parse {
    XML_Parser p;
    fmu_description *d;
    const char *shown;
    char *why;
    size_t n;
    int rc;
    int depth;
    int root_line; /* where <fmiModelDescription> starts */
    kind stack[MAX_ELEMENT_DEPTH];
    int seen_me, seen_cs, seen_experiment, seen_vars, seen_structure;
    int32_t cap_vars;
    uint32_t *derivative_vr; /* per variable: its derivative= (valid with has_derivative) */
    unsigned char *has_derivative;
    pending_ref *refs;
    size_t n_refs, cap_refs;
} parse;

static const char *const type_names[FMU_TYPES] = {
    "Float64", "Float32", "Int8",   "UInt8",  "Int16",  "UInt16", "Int32",       "UInt32",
    "Int64",   "UInt64",  "Boolean", "String", "Binary", "Clock",  "Enumeration"};
static const char *const causality_names[] = {"parameter", "calculatedParameter", "input",
                                              "output",    "local",               "independent",
                                              "structuralParameter"};
static const char *const variability_names[] = {"constant", "fixed", "tunable", "discrete",
                                                "continuous"};

const char *fmu_type_name(fmu_type t) {
    return (unsigned)t < FMU_TYPES ? type_names[t] : "?";
}

const char *fmu_causality_name(fmu_causality c) {
    return (unsigned)c < sizeof causality_names / sizeof *causality_names ? causality_names[c] : "?";
}

const char *fmu_variability_name(fmu_variability v) {
    return (unsigned)v < sizeof variability_names / sizeof *variability_names ? variability_names[v]
                                                                              : "?";
}

/* ---- messages ----------------------------------------------------------- */

/* text fit for a message: printable ASCII kept, the rest '?', cut at 60 */
static const char *shown_value(const char *s, char *buf, size_t size) {
    size_t i = 0;
    for (; s[i] && i + 4 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[i] = (c >= 0x20 && c < 0x7f && c != '"') ? (char)c : '?';
    }
    if (s[i]) memcpy(buf + (i > 3 ? i - 3 : 0), "...", 3);
    buf[i] = '\0';
    return buf;
}

__attribute__((format(printf, 4, 5))) static void fail_at(parse *ps, int code, int line,
                                                          const char *fmt, ...) {
    if (ps->rc != 0) return;
    ps->rc = code;
    int k = snprintf(ps->why, ps->n, "%s line %d: ", ps->shown, line);
    if (k >= 0 && (size_t)k < ps->n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ps->why + k, ps->n - (size_t)k, fmt, ap);
        va_end(ap);
    }
    if (ps->p) XML_StopParser(ps->p, XML_FALSE);
}

static int line_now(const parse *ps) {
    XML_Size l = XML_GetCurrentLineNumber(ps->p);
    return l > INT_MAX ? INT_MAX : (int)l;
}

#define FAIL(ps, ...) fail_at((ps), TSR_E_LOAD, line_now(ps), __VA_ARGS__)

static void fail_nomem(parse *ps) {
    if (ps->rc != 0) return;
    ps->rc = TSR_E_NOMEM;
    snprintf(ps->why, ps->n, "%s: out of memory", ps->shown);
    if (ps->p) XML_StopParser(ps->p, XML_FALSE);
}

/* "<Float64 name="k">" or "<CoSimulation>", for messages */
static const char *element_shown(const char *el, const char **atts, char *buf, size_t size) {
    const char *name = NULL;
    for (size_t i = 0; atts[i]; i += 2)
        if (strcmp(atts[i], "name") == 0) name = atts[i + 1];
    char v[72];
    if (name)
        snprintf(buf, size, "<%s name=\"%s\">", el, shown_value(name, v, sizeof v));
    else
        snprintf(buf, size, "<%s>", el);
    return buf;
}

/* ---- values ------------------------------------------------------------- */

static const char *attr(const char **atts, const char *name) {
    for (size_t i = 0; atts[i]; i += 2)
        if (strcmp(atts[i], name) == 0) return atts[i + 1];
    return NULL;
}

/* A decimal integer, nothing around it: 0, or -1. */
static int parse_u64(const char *s, uint64_t *out) {
    if (!isdigit((unsigned char)s[0])) return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

static int parse_i64(const char *s, int64_t *out) {
    const char *digits = s[0] == '-' || s[0] == '+' ? s + 1 : s;
    if (!isdigit((unsigned char)digits[0])) return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

/* A finite real as xs:double writes it ([+-]digits[.digits][e[+-]digits],
 * or .digits), nothing around it, read whatever the process's locale
 * (numtext_real, after rewriting it in JSON's form). 0, or -1. */
static int parse_real(const char *s, double *out) {
    char json[512];
    size_t o = 0;
    const char *p = s;
    if (*p == '-') json[o++] = *p++;
    else if (*p == '+') p++;
    while (*p == '0' && isdigit((unsigned char)p[1])) p++; /* JSON has no leading zeros */
    size_t int_len = 0;
    while (isdigit((unsigned char)p[int_len])) int_len++;
    size_t frac_len = 0;
    int has_point = p[int_len] == '.';
    if (has_point)
        while (isdigit((unsigned char)p[int_len + 1 + frac_len])) frac_len++;
    if (int_len == 0 && frac_len == 0) return -1;
    if (int_len + frac_len + 8 > sizeof json - o - 16) return -1;
    if (int_len == 0) json[o++] = '0';
    memcpy(json + o, p, int_len);
    o += int_len;
    p += int_len;
    if (has_point) {
        p++;
        if (frac_len) {
            json[o++] = '.';
            memcpy(json + o, p, frac_len);
            o += frac_len;
            p += frac_len;
        }
    }
    if (*p == 'e' || *p == 'E') {
        json[o++] = 'e';
        p++;
        if (*p == '+' || *p == '-') json[o++] = *p++;
        size_t exp_len = 0;
        while (isdigit((unsigned char)p[exp_len])) exp_len++;
        if (exp_len == 0 || exp_len > 8) return -1;
        memcpy(json + o, p, exp_len);
        o += exp_len;
        p += exp_len;
    }
    if (*p) return -1;
    double v;
    if (numtext_real(json, o, &v) != 0 || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

static int parse_bool(const char *s, int *out) {
    if (strcmp(s, "true") == 0 || strcmp(s, "1") == 0) return *out = 1, 0;
    if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0) return *out = 0, 0;
    return -1;
}

static int lookup(const char *s, const char *const *names, int count) {
    for (int i = 0; i < count; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

static int set_text(parse *ps, char **dst, const char *src) {
    if (!src) return 0;
    char *copy = strdup(src);
    if (!copy) {
        fail_nomem(ps);
        return -1;
    }
    free(*dst);
    *dst = copy;
    return 0;
}

/* A boolean attribute (default 0): 0, or -1 after failing. */
static int bool_attr(parse *ps, const char *shown, const char **atts, const char *name, int *out) {
    const char *v = attr(atts, name);
    *out = 0;
    if (!v) return 0;
    if (parse_bool(v, out) != 0) {
        char b[72];
        FAIL(ps, "%s: %s \"%s\" is not true or false", shown, name, shown_value(v, b, sizeof b));
        return -1;
    }
    return 0;
}

static int real_attr(parse *ps, const char *shown, const char **atts, const char *name,
                     int positive, int *has, double *out) {
    const char *v = attr(atts, name);
    if (has) *has = 0;
    if (!v) return 0;
    char b[72];
    if (parse_real(v, out) != 0) {
        FAIL(ps, "%s: %s \"%s\" is not a finite number", shown, name, shown_value(v, b, sizeof b));
        return -1;
    }
    if (positive && !(*out > 0)) {
        FAIL(ps, "%s: %s \"%s\" is not positive", shown, name, shown_value(v, b, sizeof b));
        return -1;
    }
    if (has) *has = 1;
    return 0;
}

static int vr_attr(parse *ps, const char *shown, const char **atts, const char *name, int required,
                   int *has, uint32_t *out) {
    const char *v = attr(atts, name);
    *has = 0;
    if (!v) {
        if (required) FAIL(ps, "%s: no %s", shown, name);
        return required ? -1 : 0;
    }
    uint64_t u;
    if (parse_u64(v, &u) != 0 || u > UINT32_MAX) {
        char b[72];
        FAIL(ps, "%s: %s \"%s\" is not an unsigned integer", shown, name,
             shown_value(v, b, sizeof b));
        return -1;
    }
    *out = (uint32_t)u;
    *has = 1;
    return 0;
}

/* ---- elements ----------------------------------------------------------- */

static int is_identifier(const char *s) {
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
    size_t i = 1;
    for (; s[i]; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return 0;
    return i <= MAX_IDENTIFIER;
}

static void read_root(parse *ps, const char **atts) {
    fmu_description *d = ps->d;
    const char *v = attr(atts, "fmiVersion");
    char b[72];
    if (!v) {
        FAIL(ps, "<fmiModelDescription>: no fmiVersion");
        return;
    }
    if ((v[0] == '1' || v[0] == '2') && v[1] == '.') {
        FAIL(ps, "fmiVersion \"%s\": FMI %c.0 FMUs are not supported: Tessera loads FMI 3.0",
             shown_value(v, b, sizeof b), v[0]);
        return;
    }
    if (!(v[0] == '3' && v[1] == '.')) {
        FAIL(ps, "fmiVersion \"%s\" is not 3.x: Tessera loads FMI 3.0", shown_value(v, b, sizeof b));
        return;
    }
    const char *name = attr(atts, "modelName");
    const char *token = attr(atts, "instantiationToken");
    if (!name) {
        FAIL(ps, "<fmiModelDescription>: no modelName");
        return;
    }
    if (!token) {
        FAIL(ps, "<fmiModelDescription>: no instantiationToken");
        return;
    }
    if (set_text(ps, &d->fmi_version, v) || set_text(ps, &d->model_name, name) ||
        set_text(ps, &d->instantiation_token, token) ||
        set_text(ps, &d->description, attr(atts, "description")) ||
        set_text(ps, &d->generation_tool, attr(atts, "generationTool")))
        return;
}

static void read_interface(parse *ps, const char *el, const char **atts, fmu_interface *f, int cs) {
    char shown[48];
    snprintf(shown, sizeof shown, "<%s>", el);
    const char *id = attr(atts, "modelIdentifier");
    char b[72];
    if (!id) {
        FAIL(ps, "%s: no modelIdentifier", shown);
        return;
    }
    if (!is_identifier(id)) {
        FAIL(ps, "%s: modelIdentifier \"%s\" is not a C identifier (it names the binary)", shown,
             shown_value(id, b, sizeof b));
        return;
    }
    if (set_text(ps, &f->model_identifier, id)) return;
    f->present = 1;
    if (bool_attr(ps, shown, atts, "providesDirectionalDerivatives",
                  &f->provides_directional_derivatives) ||
        bool_attr(ps, shown, atts, "providesAdjointDerivatives", &f->provides_adjoint_derivatives) ||
        bool_attr(ps, shown, atts, "canGetAndSetFMUState", &f->can_get_and_set_fmu_state) ||
        bool_attr(ps, shown, atts, "canSerializeFMUState", &f->can_serialize_fmu_state) ||
        bool_attr(ps, shown, atts, "canBeInstantiatedOnlyOncePerProcess",
                  &f->can_be_instantiated_only_once_per_process))
        return;
    if (!cs) {
        bool_attr(ps, shown, atts, "needsCompletedIntegratorStep",
                  &f->needs_completed_integrator_step);
        return;
    }
    int has = 0;
    if (bool_attr(ps, shown, atts, "canHandleVariableCommunicationStepSize",
                  &f->can_handle_variable_communication_step_size) ||
        bool_attr(ps, shown, atts, "hasEventMode", &f->has_event_mode) ||
        real_attr(ps, shown, atts, "fixedInternalStepSize", 1, &has, &f->fixed_internal_step_size))
        return;
}

static void read_experiment(parse *ps, const char **atts) {
    fmu_description *d = ps->d;
    const char *shown = "<DefaultExperiment>";
    if (real_attr(ps, shown, atts, "startTime", 0, &d->has_start_time, &d->start_time) ||
        real_attr(ps, shown, atts, "stopTime", 0, &d->has_stop_time, &d->stop_time) ||
        real_attr(ps, shown, atts, "tolerance", 1, &d->has_tolerance, &d->tolerance) ||
        real_attr(ps, shown, atts, "stepSize", 1, &d->has_step_size, &d->step_size))
        return;
}

/* The first value of start (a space-separated list for arrays), every
 * value checked against the type. 0, or -1 after failing. */
static int read_start(parse *ps, const char *shown, fmu_type t, const char *text, double *out) {
    char tok[128], b[72];
    int first = 1;
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
        if (!*p) break;
        size_t len = strcspn(p, " \t\n\r");
        if (len >= sizeof tok) {
            FAIL(ps, "%s: start \"%s\" is not a %s value", shown, shown_value(p, b, sizeof b),
                 type_names[t]);
            return -1;
        }
        memcpy(tok, p, len);
        tok[len] = '\0';
        p += len;
        double v = 0;
        int ok;
        if (t == FMU_FLOAT64 || t == FMU_FLOAT32) {
            ok = parse_real(tok, &v) == 0 && (t == FMU_FLOAT64 || fabs(v) <= FLT_MAX);
        } else if (t == FMU_BOOLEAN) {
            int bv = 0;
            ok = parse_bool(tok, &bv) == 0;
            v = bv;
        } else if (t == FMU_UINT8 || t == FMU_UINT16 || t == FMU_UINT32 || t == FMU_UINT64) {
            static const uint64_t max[] = {UINT8_MAX, UINT16_MAX, UINT32_MAX, UINT64_MAX};
            uint64_t u = 0;
            int w = t == FMU_UINT8 ? 0 : t == FMU_UINT16 ? 1 : t == FMU_UINT32 ? 2 : 3;
            ok = parse_u64(tok, &u) == 0 && u <= max[w];
            v = (double)u;
        } else {
            int64_t lo = INT64_MIN, hi = INT64_MAX, s = 0;
            if (t == FMU_INT8) lo = INT8_MIN, hi = INT8_MAX;
            if (t == FMU_INT16) lo = INT16_MIN, hi = INT16_MAX;
            if (t == FMU_INT32) lo = INT32_MIN, hi = INT32_MAX; /* Enumeration: xs:long */
            ok = parse_i64(tok, &s) == 0 && s >= lo && s <= hi;
            v = (double)s;
        }
        if (!ok) {
            FAIL(ps, "%s: start \"%s\" is not a %s value", shown, shown_value(tok, b, sizeof b),
                 type_names[t]);
            return -1;
        }
        if (first) *out = v;
        first = 0;
    }
    if (first) {
        FAIL(ps, "%s: start is empty", shown);
        return -1;
    }
    return 0;
}

static void read_variable(parse *ps, fmu_type t, const char *el, const char **atts) {
    fmu_description *d = ps->d;
    char shown[128], b[72];
    element_shown(el, atts, shown, sizeof shown);
    if (d->n_vars == ps->cap_vars) {
        if (ps->cap_vars > INT32_MAX / 2) {
            FAIL(ps, "%s: too many variables", shown);
            return;
        }
        int32_t cap = ps->cap_vars ? 2 * ps->cap_vars : 64;
        fmu_variable *v = realloc(d->vars, (size_t)cap * sizeof *v);
        if (!v) {
            fail_nomem(ps);
            return;
        }
        d->vars = v;
        uint32_t *dv = realloc(ps->derivative_vr, (size_t)cap * sizeof *dv);
        if (!dv) {
            fail_nomem(ps);
            return;
        }
        ps->derivative_vr = dv;
        unsigned char *hd = realloc(ps->has_derivative, (size_t)cap);
        if (!hd) {
            fail_nomem(ps);
            return;
        }
        ps->has_derivative = hd;
        ps->cap_vars = cap;
    }
    fmu_variable *v = &d->vars[d->n_vars];
    memset(v, 0, sizeof *v);
    v->type = t;
    v->derivative_of = -1;
    v->line = line_now(ps);
    v->causality = FMU_LOCAL;
    v->variability = t == FMU_FLOAT64 || t == FMU_FLOAT32 ? FMU_CONTINUOUS : FMU_DISCRETE;
    ps->has_derivative[d->n_vars] = 0;
    d->n_vars++; /* counted now so that free releases what is set below */
    const char *name = attr(atts, "name");
    if (!name || !*name) {
        FAIL(ps, "%s: no name", shown);
        return;
    }
    if (set_text(ps, &v->name, name) || set_text(ps, &v->description, attr(atts, "description")))
        return;
    int has = 0;
    if (vr_attr(ps, shown, atts, "valueReference", 1, &has, &v->vr)) return;
    const char *c = attr(atts, "causality");
    if (c) {
        int i = lookup(c, causality_names, (int)(sizeof causality_names / sizeof *causality_names));
        if (i < 0) {
            FAIL(ps, "%s: causality \"%s\" is not one of parameter, calculatedParameter, input, "
                     "output, local, independent, structuralParameter",
                 shown, shown_value(c, b, sizeof b));
            return;
        }
        v->causality = (fmu_causality)i;
    }
    const char *var = attr(atts, "variability");
    if (var) {
        int i = lookup(var, variability_names,
                       (int)(sizeof variability_names / sizeof *variability_names));
        if (i < 0) {
            FAIL(ps, "%s: variability \"%s\" is not one of constant, fixed, tunable, discrete, "
                     "continuous",
                 shown, shown_value(var, b, sizeof b));
            return;
        }
        v->variability = (fmu_variability)i;
    }
    const char *start = attr(atts, "start");
    if (start && t != FMU_STRING && t != FMU_BINARY && t != FMU_CLOCK) {
        if (read_start(ps, shown, t, start, &v->start)) return;
        v->has_start = 1;
    }
    int has_der = 0;
    if (vr_attr(ps, shown, atts, "derivative", 0, &has_der, &ps->derivative_vr[d->n_vars - 1]))
        return;
    if (has_der && t != FMU_FLOAT64 && t != FMU_FLOAT32) {
        FAIL(ps, "%s: derivative= is for Float64 and Float32 variables only", shown);
        return;
    }
    ps->has_derivative[d->n_vars - 1] = (unsigned char)has_der;
    if (t == FMU_CLOCK) d->n_clocks++;
}

static void read_structure_item(parse *ps, const char *el, const char **atts) {
    char shown[48];
    snprintf(shown, sizeof shown, "<%s>", el);
    uint32_t vr = 0;
    int has = 0;
    if (vr_attr(ps, shown, atts, "valueReference", 1, &has, &vr)) return;
    if (ps->n_refs == ps->cap_refs) {
        size_t cap = ps->cap_refs ? 2 * ps->cap_refs : 32;
        pending_ref *r = realloc(ps->refs, cap * sizeof *r);
        if (!r) {
            fail_nomem(ps);
            return;
        }
        ps->refs = r;
        ps->cap_refs = cap;
    }
    pending_ref *r = &ps->refs[ps->n_refs++];
    r->vr = vr;
    r->line = line_now(ps);
    snprintf(r->element, sizeof r->element, "%s", el);
    r->what = strcmp(el, "Output") == 0                      ? REF_OUTPUT
              : strcmp(el, "ContinuousStateDerivative") == 0 ? REF_DERIVATIVE
              : strcmp(el, "EventIndicator") == 0            ? REF_EVENT_INDICATOR
                                                             : REF_OTHER;
}

static int structure_element(const char *el) {
    return strcmp(el, "Output") == 0 || strcmp(el, "ContinuousStateDerivative") == 0 ||
           strcmp(el, "ClockedState") == 0 || strcmp(el, "InitialUnknown") == 0 ||
           strcmp(el, "EventIndicator") == 0;
}

/* Refuses a second <el> where the standard allows one. */
static int once(parse *ps, int *seen, const char *el) {
    if (*seen) {
        FAIL(ps, "<%s> appears twice", el);
        return -1;
    }
    *seen = 1;
    return 0;
}

static void XMLCALL on_start(void *ud, const XML_Char *el, const XML_Char **atts) {
    parse *ps = ud;
    if (ps->rc != 0) return;
    if (ps->depth >= MAX_ELEMENT_DEPTH) {
        FAIL(ps, "<%s> is nested more than %d elements deep", el, MAX_ELEMENT_DEPTH);
        return;
    }
    kind parent = ps->depth ? ps->stack[ps->depth - 1] : K_OTHER;
    kind k = K_OTHER;
    if (ps->depth == 0) {
        if (strcmp(el, "fmiModelDescription") != 0) {
            char b[72];
            FAIL(ps, "the root element is <%s>, not <fmiModelDescription>",
                 shown_value(el, b, sizeof b));
            return;
        }
        k = K_ROOT;
        ps->root_line = line_now(ps);
        read_root(ps, atts);
    } else if (parent == K_ROOT) {
        if (strcmp(el, "ModelExchange") == 0) {
            k = K_ME;
            if (!once(ps, &ps->seen_me, el)) read_interface(ps, el, atts, &ps->d->me, 0);
        } else if (strcmp(el, "CoSimulation") == 0) {
            k = K_CS;
            if (!once(ps, &ps->seen_cs, el)) read_interface(ps, el, atts, &ps->d->cs, 1);
        } else if (strcmp(el, "DefaultExperiment") == 0) {
            k = K_EXPERIMENT;
            if (!once(ps, &ps->seen_experiment, el)) read_experiment(ps, atts);
        } else if (strcmp(el, "ModelVariables") == 0) {
            k = K_VARS;
            once(ps, &ps->seen_vars, el);
        } else if (strcmp(el, "ModelStructure") == 0) {
            k = K_STRUCTURE;
            once(ps, &ps->seen_structure, el);
        }
    } else if (parent == K_VARS) {
        int t = lookup(el, type_names, FMU_TYPES);
        if (t >= 0) {
            k = K_VAR;
            read_variable(ps, (fmu_type)t, el, atts);
        }
    } else if (parent == K_VAR) {
        if (strcmp(el, "Dimension") == 0 && ps->d->n_vars > 0)
            ps->d->vars[ps->d->n_vars - 1].is_array = 1;
    } else if (parent == K_STRUCTURE) {
        if (structure_element(el)) {
            k = K_UNKNOWN_REF;
            read_structure_item(ps, el, atts);
        }
    }
    ps->stack[ps->depth++] = k;
}

static void XMLCALL on_end(void *ud, const XML_Char *el) {
    parse *ps = ud;
    (void)el;
    if (ps->depth > 0) ps->depth--;
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int has_internal_subset) {
    (void)name, (void)sysid, (void)pubid, (void)has_internal_subset;
    parse *ps = ud;
    FAIL(ps, "a DOCTYPE is not allowed in modelDescription.xml");
}

static void XMLCALL on_entity(void *ud, const XML_Char *name, int is_parameter,
                              const XML_Char *value, int value_length, const XML_Char *base,
                              const XML_Char *system_id, const XML_Char *public_id,
                              const XML_Char *notation) {
    (void)is_parameter, (void)value, (void)value_length, (void)base, (void)system_id;
    (void)public_id, (void)notation;
    parse *ps = ud;
    char b[72];
    FAIL(ps, "entity \"%s\": entity declarations are not allowed", shown_value(name, b, sizeof b));
}

/* ---- after the parse: references ---------------------------------------- */

typedef struct vr_index {
    uint32_t vr;
    int32_t index;
} vr_index;

static int by_vr(const void *a, const void *b) {
    const vr_index *x = a, *y = b;
    if (x->vr != y->vr) return x->vr < y->vr ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int by_name_cmp(const void *a, const void *b, void *ctx) {
    const fmu_description *d = ctx;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    int c = strcmp(d->vars[x].name, d->vars[y].name);
    return c ? c : (x < y ? -1 : x > y);
}

static int32_t find_vr(const vr_index *idx, int32_t n, uint32_t vr) {
    int32_t lo = 0, hi = n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (idx[mid].vr < vr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && idx[lo].vr == vr ? idx[lo].index : -1;
}

static int resolve(parse *ps) {
    fmu_description *d = ps->d;
    char b[72];
    int32_t nv = d->n_vars;
    size_t alloc_n = nv ? (size_t)nv : 1;
    int32_t *names = malloc(alloc_n * sizeof *names);
    vr_index *idx = malloc(alloc_n * sizeof *idx);
    if (!names || !idx) {
        free(names);
        free(idx);
        fail_nomem(ps);
        return ps->rc;
    }
    for (int32_t i = 0; i < nv; i++) {
        names[i] = i;
        idx[i].vr = d->vars[i].vr;
        idx[i].index = i;
    }
    /* names are unique; so are value references, across every type (FMI 3.0) */
    qsort_r(names, (size_t)nv, sizeof *names, by_name_cmp, d);
    for (int32_t i = 1; i < nv && ps->rc == 0; i++) {
        const fmu_variable *a = &d->vars[names[i - 1]], *v = &d->vars[names[i]];
        if (strcmp(a->name, v->name) == 0)
            fail_at(ps, TSR_E_LOAD, v->line, "<%s name=\"%s\">: a variable of that name is on line %d",
                    type_names[v->type], shown_value(v->name, b, sizeof b), a->line);
    }
    qsort(idx, (size_t)nv, sizeof *idx, by_vr);
    for (int32_t i = 1; i < nv && ps->rc == 0; i++) {
        if (idx[i].vr == idx[i - 1].vr) {
            const fmu_variable *a = &d->vars[idx[i - 1].index], *v = &d->vars[idx[i].index];
            char b2[72];
            fail_at(ps, TSR_E_LOAD, v->line,
                    "<%s name=\"%s\">: valueReference %u is that of \"%s\" (line %d) too",
                    type_names[v->type], shown_value(v->name, b, sizeof b), v->vr,
                    shown_value(a->name, b2, sizeof b2), a->line);
        }
    }
    for (int32_t i = 0; i < nv && ps->rc == 0; i++) {
        if (!ps->has_derivative[i]) continue;
        fmu_variable *v = &d->vars[i];
        int32_t s = find_vr(idx, nv, ps->derivative_vr[i]);
        if (s < 0 || (d->vars[s].type != FMU_FLOAT64 && d->vars[s].type != FMU_FLOAT32))
            fail_at(ps, TSR_E_LOAD, v->line, "<%s name=\"%s\">: derivative \"%u\" names no Float variable",
                    type_names[v->type], shown_value(v->name, b, sizeof b), ps->derivative_vr[i]);
        else
            v->derivative_of = s;
    }
    size_t n_out = 0, n_der = 0;
    for (size_t i = 0; i < ps->n_refs; i++) {
        n_out += ps->refs[i].what == REF_OUTPUT;
        n_der += ps->refs[i].what == REF_DERIVATIVE;
    }
    if (ps->rc == 0 && (n_out > INT32_MAX || n_der > INT32_MAX || ps->n_refs > INT32_MAX)) {
        fail_at(ps, TSR_E_LOAD, 0, "too many ModelStructure elements");
    }
    if (ps->rc == 0) {
        d->outputs = malloc((n_out ? n_out : 1) * sizeof *d->outputs);
        d->derivatives = malloc((n_der ? n_der : 1) * sizeof *d->derivatives);
        if (!d->outputs || !d->derivatives) fail_nomem(ps);
    }
    for (size_t i = 0; i < ps->n_refs && ps->rc == 0; i++) {
        const pending_ref *r = &ps->refs[i];
        int32_t s = find_vr(idx, nv, r->vr);
        if (s < 0) {
            fail_at(ps, TSR_E_LOAD, r->line, "<%s valueReference=\"%u\">: no variable has it",
                    r->element, r->vr);
        } else if (r->what == REF_DERIVATIVE && d->vars[s].derivative_of < 0) {
            fail_at(ps, TSR_E_LOAD, r->line,
                    "<%s valueReference=\"%u\">: \"%s\" is not a derivative (no derivative=)",
                    r->element, r->vr, shown_value(d->vars[s].name, b, sizeof b));
        } else if (r->what == REF_OUTPUT) {
            d->outputs[d->n_outputs++] = s;
        } else if (r->what == REF_DERIVATIVE) {
            d->derivatives[d->n_derivatives++] = s;
        } else if (r->what == REF_EVENT_INDICATOR) {
            d->n_event_indicators++;
        }
    }
    free(idx);
    if (ps->rc == 0) {
        d->by_name = names;
    } else {
        free(names);
    }
    return ps->rc;
}

/* ---- entry points ------------------------------------------------------- */

int fmu_describe_text(const char *xml, size_t len, const char *shown, fmu_description *d,
                      char *why, size_t n) {
    memset(d, 0, sizeof *d);
    parse ps = {.d = d, .shown = shown ? shown : "modelDescription.xml", .why = why, .n = n};
    if (len > FMU_MAX_DESCRIPTION_BYTES) {
        snprintf(why, n, "%s: %zu bytes, more than the %llu allowed", ps.shown, len,
                 (unsigned long long)FMU_MAX_DESCRIPTION_BYTES);
        return TSR_E_LOAD;
    }
    ps.p = XML_ParserCreate(NULL);
    if (!ps.p) {
        snprintf(why, n, "%s: out of memory", ps.shown);
        return TSR_E_NOMEM;
    }
    XML_SetUserData(ps.p, &ps);
    XML_SetElementHandler(ps.p, on_start, on_end);
    XML_SetStartDoctypeDeclHandler(ps.p, on_doctype);
    XML_SetEntityDeclHandler(ps.p, on_entity);
    if (XML_Parse(ps.p, xml, (int)len, 1) != XML_STATUS_OK && ps.rc == 0) {
        enum XML_Error e = XML_GetErrorCode(ps.p);
        fail_at(&ps, e == XML_ERROR_NO_MEMORY ? TSR_E_NOMEM : TSR_E_LOAD, line_now(&ps),
                "not well-formed XML: %s", XML_ErrorString(e));
    }
    int last_line = line_now(&ps);
    XML_ParserFree(ps.p);
    ps.p = NULL;
    if (ps.rc == 0 && !d->fmi_version)
        fail_at(&ps, TSR_E_LOAD, last_line, "no <fmiModelDescription>");
    if (ps.rc == 0 && !d->me.present && !d->cs.present)
        fail_at(&ps, TSR_E_LOAD, ps.root_line,
                "<fmiModelDescription> has neither <ModelExchange> nor <CoSimulation>: Tessera loads those two kinds");
    if (ps.rc == 0) resolve(&ps);
    free(ps.derivative_vr);
    free(ps.has_derivative);
    free(ps.refs);
    if (ps.rc != 0) fmu_description_free(d);
    return ps.rc;
}

int fmu_describe_file(const char *path, const char *shown, fmu_description *d, char *why,
                      size_t n) {
    memset(d, 0, sizeof *d);
    if (!shown) shown = path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, n, "'%s': %s", shown, strerror(errno));
        return errno == ENOENT ? TSR_E_LOAD : TSR_E_IO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, n, "'%s': %s", shown, strerror(errno));
        close(fd);
        return TSR_E_IO;
    }
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > FMU_MAX_DESCRIPTION_BYTES) {
        snprintf(why, n, "'%s': %s", shown,
                 S_ISREG(st.st_mode) ? "larger than the 64 MiB a description may be"
                                     : "not a regular file");
        close(fd);
        return TSR_E_LOAD;
    }
    size_t size = (size_t)st.st_size;
    char *buf = malloc(size ? size : 1);
    if (!buf) {
        snprintf(why, n, "'%s': out of memory", shown);
        close(fd);
        return TSR_E_NOMEM;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            snprintf(why, n, "'%s': %s", shown, strerror(errno));
            free(buf);
            close(fd);
            return TSR_E_IO;
        }
        if (r == 0) break; /* shrank while read: parse what is there */
        got += (size_t)r;
    }
    close(fd);
    int rc = fmu_describe_text(buf, got, shown, d, why, n);
    free(buf);
    return rc;
}

void fmu_description_free(fmu_description *d) {
    if (!d) return;
    free(d->fmi_version);
    free(d->model_name);
    free(d->instantiation_token);
    free(d->description);
    free(d->generation_tool);
    free(d->me.model_identifier);
    free(d->cs.model_identifier);
    for (int32_t i = 0; i < d->n_vars; i++) {
        free(d->vars[i].name);
        free(d->vars[i].description);
    }
    free(d->vars);
    free(d->outputs);
    free(d->derivatives);
    free(d->by_name);
    memset(d, 0, sizeof *d);
}

int32_t fmu_find_variable(const fmu_description *d, const char *name) {
    if (!d || !name || !d->by_name) return -1;
    int32_t lo = 0, hi = d->n_vars;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(d->vars[d->by_name[mid]].name, name);
        if (c == 0) return d->by_name[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}
