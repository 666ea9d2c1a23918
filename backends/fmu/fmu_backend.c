/* SPDX-License-Identifier: MIT */
/* The FMU backend (fmu.h): which paths it claims, opening an FMU as one
 * of its forms, running a call, closing.
 *
 * Claim rule: a path whose file name ends in ".fmu" (an archive, or a
 * folder of that name), or a folder holding modelDescription.xml; either
 * may carry the form as a fragment: "model.fmu#rhs". The forms:
 *   #cosim     the Co-Simulation interface as a trajectory (fmu_cosim.c);
 *              the default when the FMU has that interface
 *   #simulate  the Model Exchange interface integrated here over a grid
 *              (fmu_simulate.c); the default of an FMU without Co-Simulation
 *   #rhs       the Model Exchange right-hand side (fmu_rhs.c)
 * The fragment travels with the path, so a worker process opens the same
 * form. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "fmu.h"

/* The path without its fragment (malloc'd), and the fragment ("" when none). */
static char *split_path(const char *path, const char **fragment) {
    const char *hash = strrchr(path, '#');
    const char *slash = strrchr(path, '/');
    if (hash && slash && hash < slash) hash = NULL; /* a '#' inside a folder's name */
    *fragment = hash ? hash + 1 : "";
    size_t len = hash ? (size_t)(hash - path) : strlen(path);
    char *plain = malloc(len + 1);
    if (!plain) return NULL;
    memcpy(plain, path, len);
    plain[len] = '\0';
    return plain;
}

static int named_fmu(const char *plain) {
    size_t len = strlen(plain);
    while (len > 1 && plain[len - 1] == '/') len--;
    return len > 4 && strncasecmp(plain + len - 4, ".fmu", 4) == 0;
}

static int fmu_claims(const char *path, const struct tsr_options *opts) {
    (void)opts;
    if (strncasecmp(path, "http://", 7) == 0 || strncasecmp(path, "https://", 8) == 0) return 0;
    const char *fragment;
    char *plain = split_path(path, &fragment);
    if (!plain) return 0;
    int claim = named_fmu(plain);
    if (!claim) {
        struct stat st;
        char xml[4096];
        if (stat(plain, &st) == 0 && S_ISDIR(st.st_mode) &&
            snprintf(xml, sizeof xml, "%s/modelDescription.xml", plain) < (int)sizeof xml)
            claim = stat(xml, &st) == 0 && S_ISREG(st.st_mode);
    }
    free(plain);
    return claim;
}

static int choose_form(fmu_model *m, const char *fragment, char *why, size_t n) {
    const fmu_description *d = &m->d;
    if (!fragment[0]) {
        if (d->cs.present) fragment = "cosim";
        else fragment = "simulate";
    }
    if (strcmp(fragment, "cosim") == 0) {
        m->form = FMU_FORM_COSIM;
        m->kind = FMU_CO_SIMULATION;
        if (d->cs.present) return 0;
        snprintf(why, n, "it has no Co-Simulation interface (it has Model Exchange: open it as "
                         "'#simulate' or '#rhs')");
        return TSR_E_LOAD;
    }
    if (strcmp(fragment, "rhs") == 0 || strcmp(fragment, "simulate") == 0) {
        m->form = fragment[0] == 'r' ? FMU_FORM_RHS : FMU_FORM_SIMULATE;
        m->kind = FMU_MODEL_EXCHANGE;
        if (!d->me.present) {
            snprintf(why, n, "it has no Model Exchange interface, which '#%s' needs (open it "
                             "as '#cosim')", fragment);
            return TSR_E_LOAD;
        }
        return 0;
    }
    snprintf(why, n, "'#%s' names no form (the forms: #cosim, #simulate, #rhs)", fragment);
    return TSR_E_ARGUMENT;
}

/* What the forms do not serve, refused at open rather than mid-call. */
static int check_supported(const fmu_model *m, char *why, size_t n) {
    const fmu_description *d = &m->d;
    if (d->n_clocks) {
        snprintf(why, n, "it has %d Clock variables; Tessera does not serve clocked FMUs",
                 (int)d->n_clocks);
        return TSR_E_UNSUPPORTED;
    }
    if (m->kind == FMU_MODEL_EXCHANGE && m->form != FMU_FORM_RHS && d->n_event_indicators) {
        snprintf(why, n, "it has %d event indicators; Tessera's integration does not handle "
                         "state events (its right-hand side is served as '#rhs')",
                 (int)d->n_event_indicators);
        return TSR_E_UNSUPPORTED;
    }
    return 0;
}

static int make_label(fmu_model *m, char *why, size_t n) {
    const fmu_interface *i = m->kind == FMU_MODEL_EXCHANGE ? &m->d.me : &m->d.cs;
    m->label = fmu_field_name(i->model_identifier);
    if (m->label) {
        for (char *p = m->label; *p; p++)
            if (*p == '.') *p = '_';
        return 0;
    }
    snprintf(why, n, "out of memory");
    return TSR_E_NOMEM;
}

static int open_model(fmu_model *m, const char *plain, const char *fragment, char *why,
                      size_t n) {
    int rc = fmu_unpack(plain, FMU_MAX_UNPACKED_BYTES, &m->unpacked, why, n);
    if (rc) return rc;
    char xml[4096];
    if (snprintf(xml, sizeof xml, "%s/modelDescription.xml", m->unpacked.dir) >= (int)sizeof xml) {
        snprintf(why, n, "its folder's path is too long");
        return TSR_E_LOAD;
    }
    rc = fmu_describe_file(xml, "modelDescription.xml", &m->d, why, n);
    if (!rc) rc = choose_form(m, fragment, why, n);
    if (!rc) rc = check_supported(m, why, n);
    if (!rc) rc = make_label(m, why, n);
    if (!rc)
        rc = fmu_library_open(&m->lib, m->unpacked.dir, &m->d, m->kind,
                              backend_options(m->c)->mode, m->c, why, n);
    if (!rc)
        rc = fmu_instance_make(&m->inst, &m->lib, &m->d, m->kind, m->unpacked.dir, m->c, why, n);
    if (!rc)
        rc = m->form == FMU_FORM_COSIM ? fmu_cosim_build(m, why, n)
             : m->form == FMU_FORM_RHS ? fmu_rhs_build(m, why, n)
                                       : fmu_simulate_build(m, why, n);
    return rc;
}

static int fmu_open(tsr_component *c, tsr_error *err) {
    const char *path = tsr_component_path(c);
    char why[TSR_ERRMSG_MAX - 128];
    const char *fragment;
    fmu_model *m = calloc(1, sizeof *m);
    char *plain = m ? split_path(path, &fragment) : NULL;
    int rc = 0;
    if (!m || !plain) {
        free(plain);
        free(m);
        error_set(err, TSR_E_NOMEM, "cannot load the FMU '%s': out of memory", path);
        return TSR_E_NOMEM;
    }
    backend_set_state(c, m);
    m->c = c;
    rc = open_model(m, plain, fragment, why, sizeof why);
    free(plain);
    if (rc) {
        error_set(err, rc, "cannot load the FMU '%s': %s", path, why);
        return rc; /* close releases what was made */
    }
    backend_set_endpoint_state(c, m);
    return backend_set_descriptor(c, &m->desc, err);
}

static void fmu_close(tsr_component *c) {
    fmu_model *m = backend_state(c);
    if (!m) return;
    m->lib.keep_loaded = m->inst.fatal;
    fmu_instance_free(&m->inst);
    fmu_library_close(&m->lib);
    fmu_schema_free(&m->schema);
    fmu_description_free(&m->d);
    fmu_unpacked_free(&m->unpacked);
    free(m->label);
    free(m->params);
    free(m->inputs);
    free(m->outputs);
    free(m->states);
    free(m->derivatives);
    free(m->param_now);
    free(m->vr);
    free(m->values);
    free(m->values2);
    fmu_simulate_free(m->sim);
    free(m);
}

const backend_ops fmu_backend_ops = {
    .name = "fmu",
    .claims = fmu_claims,
    .open = fmu_open,
    .invoke = invoke_in_process,
    .close = fmu_close,
};
