/* SPDX-License-Identifier: MIT */
/* The schema the FMU forms share (fmu.h): fields named after the FMU's
 * variables (of up to two dims), scalar parameters with their start values
 * as defaults, the trajectory forms' grid t (its default and its checks),
 * the Model Exchange states paired with their derivatives, and setting the
 * parameters on an instance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu.h"

static void *own(fmu_schema *s, void *p) {
    if (!p) return NULL;
    if (s->n_owned == s->owned_cap) {
        int32_t cap = s->owned_cap ? 2 * s->owned_cap : 64;
        void **grown = realloc(s->owned, (size_t)cap * sizeof *grown);
        if (!grown) {
            free(p);
            return NULL;
        }
        s->owned = grown;
        s->owned_cap = cap;
    }
    s->owned[s->n_owned++] = p;
    return p;
}

int fmu_schema_init(fmu_schema *s, int32_t cap) {
    memset(s, 0, sizeof *s);
    size_t k = (size_t)cap + 1;
    s->cap = cap;
    s->in = calloc(k, sizeof *s->in);
    s->out = calloc(k, sizeof *s->out);
    s->in_var = calloc(k, sizeof *s->in_var);
    s->out_var = calloc(k, sizeof *s->out_var);
    s->in_dims = calloc(2 * k, sizeof *s->in_dims);
    s->out_dims = calloc(2 * k, sizeof *s->out_dims);
    s->defaults = calloc(k, sizeof *s->defaults);
    if (s->in && s->out && s->in_var && s->out_var && s->in_dims && s->out_dims && s->defaults)
        return 0;
    fmu_schema_free(s);
    return TSR_E_NOMEM;
}

void fmu_schema_free(fmu_schema *s) {
    for (int32_t i = 0; i < s->n_owned; i++) free(s->owned[i]);
    free(s->owned);
    free(s->in);
    free(s->out);
    free(s->in_var);
    free(s->out_var);
    free(s->in_dims);
    free(s->out_dims);
    free(s->defaults);
    memset(s, 0, sizeof *s);
}

static int valid_char(char ch, int at_start) {
    int alpha = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
    return alpha || (!at_start && ch >= '0' && ch <= '9');
}

char *fmu_field_name(const char *name) {
    size_t len = strlen(name);
    char *out = malloc(len + 2);
    if (!out) return NULL;
    size_t k = 0;
    int at_start = 1;
    for (size_t i = 0; i < len; i++) {
        char ch = name[i];
        if (ch == '.' && !at_start && i + 1 < len) {
            out[k++] = '.';
            at_start = 1;
            continue;
        }
        if (at_start && ch >= '0' && ch <= '9') out[k++] = '_';
        out[k++] = valid_char(ch, 0) ? ch : '_';
        at_start = 0;
    }
    if (k == 0) out[k++] = '_';
    out[k] = '\0';
    return out;
}

static const char *holder(const fmu_schema *s, const char *name) {
    for (int32_t i = 0; i < s->n_in; i++)
        if (strcmp(s->in[i].name, name) == 0) return s->in[i].doc;
    for (int32_t i = 0; i < s->n_out; i++)
        if (strcmp(s->out[i].name, name) == 0) return s->out[i].doc;
    return NULL;
}

int fmu_schema_add_dims(fmu_schema *s, int output, const char *name, const char *doc,
                        tsr_dtype dtype, int32_t rank, const tsr_dim *dims, uint32_t flags,
                        int32_t var, char *why, size_t n) {
    int32_t *count = output ? &s->n_out : &s->n_in;
    if (*count >= s->cap || rank < 0 || rank > FMU_MAX_FIELD_RANK) {
        snprintf(why, n, "more fields, or more dims, than expected");
        return TSR_E_LOAD;
    }
    const char *other = holder(s, name);
    if (other) {
        snprintf(why, n, "two fields come to the name '%s' (%s, and %s)", name, other,
                 doc ? doc : name);
        return TSR_E_LOAD;
    }
    char *name_copy = own(s, strdup(name));
    char *doc_copy = doc ? own(s, strdup(doc)) : NULL;
    if (!name_copy || (doc && !doc_copy)) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    int32_t k = (*count)++;
    tsr_dim *dim = output ? &s->out_dims[FMU_MAX_FIELD_RANK * k]
                          : &s->in_dims[FMU_MAX_FIELD_RANK * k];
    for (int32_t i = 0; i < rank; i++) dim[i] = dims[i];
    tsr_field f = {.name = name_copy, .dtype = dtype, .rank = rank,
                   .dims = rank ? dim : NULL, .flags = flags, .doc = doc_copy};
    if (output) {
        s->out[k] = f;
        s->out_var[k] = var;
    } else {
        s->in[k] = f;
        s->in_var[k] = var;
    }
    return 0;
}

int fmu_schema_add(fmu_schema *s, int output, const char *name, const char *doc,
                   tsr_dtype dtype, int32_t rank, const char *dim_symbol, int64_t dim_size,
                   uint32_t flags, int32_t var, char *why, size_t n) {
    tsr_dim dim = {dim_symbol, dim_size};
    return fmu_schema_add_dims(s, output, name, doc, dtype, rank > 1 ? 1 : rank, &dim, flags,
                               var, why, n);
}

int fmu_schema_add_variable(fmu_schema *s, const fmu_description *d, int output, int32_t var,
                            tsr_dtype dtype, int32_t rank, const char *dim_symbol,
                            uint32_t flags, const char *const *taken, char *why, size_t n) {
    const fmu_variable *v = &d->vars[var];
    char *name = fmu_field_name(v->name);
    if (!name) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    for (const char *const *t = taken; t && *t; t++)
        if (strcmp(*t, name) == 0) {
            snprintf(why, n,
                     "the FMU's %s '%s' comes to the name '%s', which the form's own field has",
                     fmu_causality_name(v->causality), v->name, name);
            free(name);
            return TSR_E_LOAD;
        }
    char doc[512];
    snprintf(doc, sizeof doc, "%s %s '%s' (valueReference %u)%s%s", fmu_variability_name(v->variability),
             fmu_causality_name(v->causality), v->name, (unsigned)v->vr,
             v->description ? ": " : "", v->description ? v->description : "");
    int rc = fmu_schema_add(s, output, name, doc, dtype, rank, dim_symbol, -1, flags, var, why,
                            n);
    free(name);
    return rc;
}

int fmu_schema_default(fmu_schema *s, const double *values, int64_t count, char *why,
                       size_t n) {
    tsr_field *f = &s->in[s->n_in - 1];
    size_t width = f->dtype == TSR_FLOAT64 ? 8 : f->dtype == TSR_INT32 ? 4 : 1;
    if ((uint64_t)count * width > TSR_MAX_DEFAULT_BYTES) return 0; /* no default: given each time */
    void *data = own(s, malloc((size_t)(count ? count : 1) * width));
    if (!data) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    for (int64_t i = 0; i < count; i++) {
        if (f->dtype == TSR_FLOAT64) ((double *)data)[i] = values[i];
        else if (f->dtype == TSR_INT32) ((int32_t *)data)[i] = (int32_t)values[i];
        else ((uint8_t *)data)[i] = values[i] != 0;
    }
    tsr_array *a = &s->defaults[s->n_in - 1];
    *a = (tsr_array){.data = data, .dtype = f->dtype, .rank = f->rank};
    if (f->rank) a->shape[0] = count;
    f->default_value = a;
    return 0;
}

static int parameter_dtype(fmu_type t, tsr_dtype *out) {
    switch (t) {
    case FMU_FLOAT64: *out = TSR_FLOAT64; return 1;
    case FMU_INT32: *out = TSR_INT32; return 1;
    case FMU_BOOLEAN: *out = TSR_BOOL; return 1;
    default: return 0;
    }
}

int fmu_schema_add_parameters(fmu_schema *s, const fmu_description *d, tsr_component *c,
                              const char *const *taken, int32_t *vars, int32_t *n_vars,
                              char *why, size_t n) {
    for (int32_t i = 0; i < d->n_vars; i++) {
        const fmu_variable *v = &d->vars[i];
        if (v->causality != FMU_PARAMETER ||
            (v->variability != FMU_FIXED && v->variability != FMU_TUNABLE))
            continue;
        tsr_dtype dtype;
        if (v->is_array || !parameter_dtype(v->type, &dtype)) {
            comp_log(c, TSR_LOG_INFO,
                     "FMU parameter '%s' (%s%s) is not an input: Tessera takes scalar Float64, "
                     "Int32 and Boolean parameters; it keeps its start value",
                     v->name, fmu_type_name(v->type), v->is_array ? " array" : "");
            continue;
        }
        uint32_t flags = dtype == TSR_FLOAT64 ? TSR_FIELD_DIFFERENTIABLE : 0u;
        int rc = fmu_schema_add_variable(s, d, 0, i, dtype, 0, NULL, flags, taken, why, n);
        if (!rc && v->has_start) rc = fmu_schema_default(s, &v->start, 1, why, n);
        if (rc) return rc;
        vars[(*n_vars)++] = i;
    }
    return 0;
}

int fmu_set_parameters(fmu_instance *fi, const fmu_description *d, const int32_t *vars,
                       int32_t n_vars, const tsr_array *inputs, char *why, size_t n) {
    for (int32_t k = 0; k < n_vars; k++) {
        const fmu_variable *v = &d->vars[vars[k]];
        const void *data = inputs[k].data;
        fmi3Status st;
        const char *fn;
        if (v->type == FMU_FLOAT64) {
            st = fi->api->set_float64(fi->handle, &v->vr, 1, data, 1);
            fn = "fmi3SetFloat64";
        } else if (v->type == FMU_INT32) {
            st = fi->api->set_int32(fi->handle, &v->vr, 1, data, 1);
            fn = "fmi3SetInt32";
        } else {
            fmi3Boolean b = *(const uint8_t *)data != 0;
            st = fi->api->set_boolean(fi->handle, &v->vr, 1, &b, 1);
            fn = "fmi3SetBoolean";
        }
        if (fmu_status(fi, st, fn, why, n)) {
            size_t used = strlen(why);
            snprintf(why + used, n - used, " (setting parameter '%s')", v->name);
            return -1;
        }
    }
    return 0;
}

int fmu_check_grid(const tsr_array *t, int fixed_step, char *why, size_t n) {
    int64_t len = t->shape[0];
    const double *g = t->data;
    if (len < 1) {
        snprintf(why, n, "input 't': the grid is empty (it needs at least the start time)");
        return -1;
    }
    for (int64_t k = 0; k < len; k++) {
        if (!isfinite(g[k])) {
            snprintf(why, n, "input 't': t[%lld] is not finite", (long long)k);
            return -1;
        }
        if (k && !(g[k] > g[k - 1])) {
            snprintf(why, n, "input 't': the grid is not strictly increasing at t[%lld] = %.17g",
                     (long long)k, g[k]);
            return -1;
        }
    }
    if (!fixed_step || len < 3) return 0;
    double h = g[1] - g[0];
    for (int64_t k = 2; k < len; k++)
        if (fabs((g[k] - g[k - 1]) - h) > 1e-9 * fabs(h)) {
            snprintf(why, n,
                     "input 't': the FMU cannot change its communication step size "
                     "(canHandleVariableCommunicationStepSize is false) but the grid's step at "
                     "t[%lld] is %.17g, not %.17g",
                     (long long)k, g[k] - g[k - 1], h);
            return -1;
        }
    return 0;
}

int fmu_default_grid(fmu_model *m, char *why, size_t n) {
    const fmu_description *d = &m->d;
    double t0 = d->has_start_time ? d->start_time : 0.0;
    double t1 = d->has_stop_time ? d->stop_time : t0 + 1.0;
    if (!(t1 > t0)) return 0; /* no default: the caller gives t */
    double h = d->has_step_size && d->step_size > 0 ? d->step_size
                                                     : (t1 - t0) / FMU_DEFAULT_STEPS;
    double steps = ceil((t1 - t0) / h - 1e-9);
    if (!(steps >= 1) || steps * 8 + 8 > (double)TSR_MAX_DEFAULT_BYTES) return 0;
    int64_t count = (int64_t)steps + 1;
    double *g = malloc((size_t)count * sizeof *g);
    if (!g) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    /* A step that divides the span: each point as span * k / steps, so
     * that 0.1-steps read 0.3, not 0.30000000000000004. */
    int even = fabs(steps * h - (t1 - t0)) <= 1e-9 * (t1 - t0);
    for (int64_t k = 0; k < count; k++)
        g[k] = k + 1 == count ? t1
               : even         ? t0 + (t1 - t0) * (double)k / steps
                              : t0 + (double)k * h;
    int rc = fmu_schema_default(&m->schema, g, count, why, n);
    free(g);
    return rc;
}

int fmu_find_states(fmu_model *m, char *why, size_t n) {
    const fmu_description *d = &m->d;
    for (int32_t k = 0; k < d->n_derivatives; k++) {
        const fmu_variable *der = &d->vars[d->derivatives[k]];
        if (der->derivative_of < 0 || der->type != FMU_FLOAT64 || der->is_array) {
            snprintf(why, n,
                     "ContinuousStateDerivative '%s' is not a scalar Float64 with a derivative= "
                     "attribute naming its state",
                     der->name);
            return TSR_E_LOAD;
        }
        m->derivatives[k] = d->derivatives[k];
        m->states[k] = der->derivative_of;
    }
    m->n_states = d->n_derivatives;
    if (!m->n_states) {
        snprintf(why, n, "its Model Exchange interface has no continuous states "
                         "(ModelStructure lists no ContinuousStateDerivative)");
        return TSR_E_LOAD;
    }
    size_t count = 0;
    fmi3Status s = m->inst.api->get_number_of_continuous_states(m->inst.handle, &count);
    if (fmu_status(&m->inst, s, "fmi3GetNumberOfContinuousStates", why, n)) return TSR_E_LOAD;
    if (count != (size_t)m->n_states) {
        snprintf(why, n,
                 "its description lists %d continuous states but its binary says %zu "
                 "(fmi3GetNumberOfContinuousStates)",
                 (int)m->n_states, count);
        return TSR_E_LOAD;
    }
    return 0;
}

int fmu_schema_add_states(fmu_model *m, const char *name, const char *lead, char *why,
                          size_t n) {
    const fmu_description *d = &m->d;
    char doc[1024];
    int used = snprintf(doc, sizeof doc, "%s", lead);
    for (int32_t k = 0; k < m->n_states && used > 0 && (size_t)used < sizeof doc; k++)
        used += snprintf(doc + used, sizeof doc - (size_t)used, " %s", d->vars[m->states[k]].name);
    int rc = fmu_schema_add(&m->schema, 0, name, doc, TSR_FLOAT64, 1, NULL, m->n_states,
                            TSR_FIELD_DIFFERENTIABLE, -1, why, n);
    double *start = m->values; /* scratch, free until the first call */
    for (int32_t k = 0; k < m->n_states; k++) {
        const fmu_variable *v = &d->vars[m->states[k]];
        start[k] = v->has_start ? v->start : 0.0;
    }
    return rc ? rc : fmu_schema_default(&m->schema, start, m->n_states, why, n);
}

int fmu_schema_add_signals(fmu_model *m, fmu_causality which, uint32_t flags,
                           const char *const *taken, char *why, size_t n) {
    const fmu_description *d = &m->d;
    int output = which == FMU_OUTPUT;
    for (int32_t i = 0; i < d->n_vars; i++) {
        const fmu_variable *v = &d->vars[i];
        if (v->causality != which) continue;
        if (v->type != FMU_FLOAT64 || v->is_array) {
            comp_log(m->c, TSR_LOG_INFO,
                     output ? "FMU output '%s' (%s%s) is not an output of the component: "
                              "Tessera returns scalar Float64 outputs"
                            : "FMU input '%s' (%s%s) is not an input of the component: Tessera "
                              "takes scalar Float64 inputs; it keeps its start value",
                     v->name, fmu_type_name(v->type), v->is_array ? " array" : "");
            continue;
        }
        int rc = fmu_schema_add_variable(&m->schema, d, output, i, TSR_FLOAT64, 1, "n", flags,
                                         taken, why, n);
        if (rc) return rc;
        if (output) m->outputs[m->n_outputs++] = i;
        else m->inputs[m->n_inputs++] = i;
    }
    return 0;
}

int fmu_model_scratch(fmu_model *m, char *why, size_t n) {
    /* knowns and unknowns together, seeds and sensitivities with room for
     * the unit-seed fallback: each at most twice the variables */
    size_t cap = 2 * (size_t)m->d.n_vars + 8;
    m->params = calloc(cap, sizeof *m->params);
    m->inputs = calloc(cap, sizeof *m->inputs);
    m->outputs = calloc(cap, sizeof *m->outputs);
    m->states = calloc(cap, sizeof *m->states);
    m->derivatives = calloc(cap, sizeof *m->derivatives);
    m->param_now = calloc(cap, sizeof *m->param_now);
    m->vr = calloc(cap, sizeof *m->vr);
    m->values = calloc(cap, sizeof *m->values);
    m->values2 = calloc(cap, sizeof *m->values2);
    if (m->params && m->inputs && m->outputs && m->states && m->derivatives && m->param_now &&
        m->vr && m->values && m->values2 && fmu_schema_init(&m->schema, m->d.n_vars + 8) == 0)
        return 0;
    snprintf(why, n, "out of memory");
    return TSR_E_NOMEM; /* fmu_close frees what was had */
}

void fmu_schema_describe(fmu_model *m, tsr_endpoint_fn apply) {
    const fmu_description *d = &m->d;
    m->desc = (tsr_plugin){TSR_PLUGIN_HEADER,
                           .name = m->label,
                           .version = d->fmi_version,
                           .description = d->description ? d->description : d->model_name,
                           .inputs = m->schema.in,
                           .n_inputs = m->schema.n_in,
                           .outputs = m->schema.out,
                           .n_outputs = m->schema.n_out,
                           .apply = apply};
}
