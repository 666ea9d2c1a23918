/* SPDX-License-Identifier: MIT */
/* Validation of a plugin's descriptor and the host's copy of its schema.
 * Everything a call relies on is checked here once, so that calls do not
 * have to re-check the descriptor. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "codecs/utf8.h"

/* The size of the first version of each struct: a plugin may be newer
 * (larger) but never smaller. */
#define PLUGIN_V1_SIZE (offsetof(tsr_plugin, abstract_eval) + sizeof(tsr_endpoint_fn))
/* Whether a plugin's descriptor is new enough to have a member. */
#define PLUGIN_HAS(d, member) \
    ((d)->struct_size >= offsetof(tsr_plugin, member) + sizeof((d)->member))
#define FIELD_V1_SIZE (offsetof(tsr_field, doc) + sizeof(const char *))
/* Whether fields laid out with stride `size` have a member. */
#define FIELD_HAS(size, member) \
    ((size) >= offsetof(tsr_field, member) + sizeof(((tsr_field *)0)->member))

static int is_float_dtype(tsr_dtype d) {
    return d == TSR_FLOAT16 || d == TSR_FLOAT32 || d == TSR_FLOAT64 || d == TSR_COMPLEX64 ||
           d == TSR_COMPLEX128;
}

/* Field names are dotted paths of identifiers: "mesh.nodes". */
static int valid_name(const char *s) {
    size_t len = strnlen(s, SCHEMA_MAX_NAME + 1);
    if (len == 0 || len > SCHEMA_MAX_NAME) return 0;
    int at_start = 1;
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        if (ch == '.') {
            if (at_start) return 0;
            at_start = 1;
            continue;
        }
        int alpha = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
        int digit = ch >= '0' && ch <= '9';
        if (!alpha && !(digit && !at_start)) return 0;
        at_start = 0;
    }
    return !at_start;
}

/* Id of a symbol, added if new; -1 when out of memory, -2 past
 * SCHEMA_MAX_SYMBOLS (a worker's schema could ask for more than field_info's
 * int16 ids hold). */
static int symbol_id(tsr_component *c, const char *name) {
    for (int32_t i = 0; i < c->n_sym; i++)
        if (strcmp(c->sym_names[i], name) == 0) return i;
    if (c->n_sym >= SCHEMA_MAX_SYMBOLS) return -2;
    const char **grown = realloc(c->sym_names, (size_t)(c->n_sym + 1) * sizeof *grown);
    if (!grown) return -1;
    c->sym_names = grown;
    c->sym_names[c->n_sym] = name;
    return c->n_sym++;
}

/* One field as this host's struct, from a plugin's field of `size` bytes
 * (older layouts are shorter): members it lacks read as zero, and the
 * flags it could not have meant are cleared. */
static void field_read(const tsr_field *src, size_t size, tsr_field *f) {
    memset(f, 0, sizeof *f);
    memcpy(f, src, size < sizeof *f ? size : sizeof *f);
    if (!FIELD_HAS(size, default_value)) f->flags &= ~TSR_FIELD_OPTIONAL;
    /* A layout that has kind but not all of choices: an array field (the
     * memcpy above may have read part of the members). */
    if (!FIELD_HAS(size, n_choices)) {
        f->kind = TSR_KIND_ARRAY;
        f->choices = NULL;
        f->n_choices = 0;
    }
}

/* A TEXT field's choices: each a UTF-8 C string of bounded length. */
static int choices_load(const char *label, const tsr_field *f, const char *what,
                        tsr_error *err) {
    if (f->n_choices < 0 || f->n_choices > SCHEMA_MAX_CHOICES) {
        error_set(err, TSR_E_DESCRIPTOR,
                  "component '%s': %s '%s' has n_choices %d (allowed 0 to %d)", label, what,
                  f->name, (int)f->n_choices, SCHEMA_MAX_CHOICES);
        return TSR_E_DESCRIPTOR;
    }
    if (f->n_choices == 0) return 0;
    if (f->kind != TSR_KIND_TEXT) {
        error_set(err, TSR_E_DESCRIPTOR,
                  "component '%s': %s '%s' has choices, but only a TEXT field may have them",
                  label, what, f->name);
        return TSR_E_DESCRIPTOR;
    }
    if (!f->choices) {
        error_set(err, TSR_E_DESCRIPTOR,
                  "component '%s': %s '%s' has %d choices but a NULL choices array", label, what,
                  f->name, (int)f->n_choices);
        return TSR_E_DESCRIPTOR;
    }
    for (int32_t k = 0; k < f->n_choices; k++) {
        const char *ch = f->choices[k];
        size_t len = ch ? strnlen(ch, SCHEMA_MAX_CHOICE_BYTES + 1) : 0;
        if (!ch || len > SCHEMA_MAX_CHOICE_BYTES ||
            !utf8_valid((const unsigned char *)ch, len)) {
            error_set(err, TSR_E_DESCRIPTOR,
                      "component '%s': %s '%s' choice %d is %s", label, what, f->name, (int)k,
                      !ch ? "NULL"
                      : len > SCHEMA_MAX_CHOICE_BYTES ? "too long"
                                                      : "not valid UTF-8");
            return TSR_E_DESCRIPTOR;
        }
    }
    return 0;
}

/* Copy and check one field; `what` is "input" or "output". */
static int field_load(tsr_component *c, field_info *fi, const tsr_field *f, const char *what,
                      int32_t index, tsr_error *err) {
    const char *label = c->desc->name;
    tsr_field norm;
    if (!f->name) {
        error_set(err, TSR_E_DESCRIPTOR, "component '%s': %s %d has no name", label, what,
                  (int)index);
        return TSR_E_DESCRIPTOR;
    }
    if (!valid_name(f->name)) {
        error_set(err, TSR_E_DESCRIPTOR,
                  "component '%s': %s %d has an invalid name '%.*s' (expected identifiers "
                  "separated by dots, at most %d characters)",
                  label, what, (int)index, SCHEMA_MAX_NAME, f->name, SCHEMA_MAX_NAME);
        return TSR_E_DESCRIPTOR;
    }
    if (f->kind > TSR_KIND_JSON) {
        error_set(err, TSR_E_DESCRIPTOR,
                  "component '%s': %s '%s' has an unknown kind %u (expected TSR_KIND_ARRAY, "
                  "TSR_KIND_TEXT or TSR_KIND_JSON)",
                  label, what, f->name, (unsigned)f->kind);
        return TSR_E_DESCRIPTOR;
    }
    if (choices_load(label, f, what, err)) return TSR_E_DESCRIPTOR;
    if (f->kind != TSR_KIND_ARRAY) {
        /* Bytes of text: uint8, rank 1, any length, whatever the plugin
         * wrote there, so that the array machinery carries them. */
        static const tsr_dim any_len[1] = {TSR_ANY};
        norm = *f;
        norm.dtype = TSR_UINT8;
        norm.rank = 1;
        norm.dims = any_len;
        if (norm.n_choices == 0) norm.choices = NULL;
        f = &norm;
    } else if (f->rank == TSR_RANK_ANY) {
        norm = *f;
        norm.dims = NULL;
        f = &norm;
    }
    if (!tsr_dtype_name(f->dtype)) {
        error_set(err, TSR_E_DESCRIPTOR, "component '%s': %s '%s' has an unknown dtype %d", label,
                  what, f->name, (int)f->dtype);
        return TSR_E_DESCRIPTOR;
    }
    if ((f->rank < 0 && f->rank != TSR_RANK_ANY) || f->rank > TSR_MAX_FIELD_RANK) {
        error_set(err, TSR_E_DESCRIPTOR,
                  "component '%s': %s '%s' has rank %d (allowed 0 to %d, or TSR_RANK_ANY)",
                  label, what, f->name, (int)f->rank, TSR_MAX_FIELD_RANK);
        return TSR_E_DESCRIPTOR;
    }
    if (f->rank > 0 && !f->dims) {
        error_set(err, TSR_E_DESCRIPTOR, "component '%s': %s '%s' has rank %d but no dims", label,
                  what, f->name, (int)f->rank);
        return TSR_E_DESCRIPTOR;
    }
    if ((f->flags & TSR_FIELD_DIFFERENTIABLE) && f->kind == TSR_KIND_TEXT) {
        error_set(err, TSR_E_DESCRIPTOR,
                  "component '%s': %s '%s' is TEXT and cannot be differentiable", label, what,
                  f->name);
        return TSR_E_DESCRIPTOR;
    }
    if ((f->flags & TSR_FIELD_DIFFERENTIABLE) && f->kind == TSR_KIND_ARRAY &&
        !is_float_dtype(f->dtype)) {
        error_set(err, TSR_E_DESCRIPTOR,
                  "component '%s': %s '%s' is marked differentiable but its dtype %s is not a "
                  "floating-point or complex type",
                  label, what, f->name, tsr_dtype_name(f->dtype));
        return TSR_E_DESCRIPTOR;
    }
    memset(fi, 0, sizeof *fi);
    fi->field = *f;
    fi->field.dims = f->rank == TSR_RANK_ANY ? NULL : fi->dims;
    for (int32_t i = 0; i < f->rank; i++) {
        tsr_dim d = f->dims[i];
        fi->dims[i] = d;
        fi->sym[i] = -1;
        if (d.symbol) {
            if (!valid_name(d.symbol) || strchr(d.symbol, '.')) {
                error_set(err, TSR_E_DESCRIPTOR,
                          "component '%s': %s '%s' dimension %d has an invalid symbol name",
                          label, what, f->name, (int)i);
                return TSR_E_DESCRIPTOR;
            }
            int id = symbol_id(c, d.symbol);
            if (id == -2) {
                error_set(err, TSR_E_DESCRIPTOR,
                          "component '%s': more than %d distinct symbolic dims", label,
                          SCHEMA_MAX_SYMBOLS);
                return TSR_E_DESCRIPTOR;
            }
            if (id < 0) {
                error_set(err, TSR_E_NOMEM, "component '%s': out of memory", label);
                return TSR_E_NOMEM;
            }
            fi->kind[i] = DIM_SYMBOL;
            fi->sym[i] = (int16_t)id;
        } else if (d.size == TSR_DIM_ANY) {
            fi->kind[i] = DIM_ANY;
        } else if (d.size >= 0) {
            fi->kind[i] = DIM_FIXED;
        } else {
            error_set(err, TSR_E_DESCRIPTOR,
                      "component '%s': %s '%s' dimension %d has size %lld (expected >= 0, "
                      "TSR_DIM_ANY or a symbol)",
                      label, what, f->name, (int)i, (long long)d.size);
            return TSR_E_DESCRIPTOR;
        }
    }
    return defaults_load(label, fi, f, what, err);
}

/* Duplicates, and a name that is also a nesting prefix of another ("mesh"
 * and "mesh.nodes"), cannot both be represented in a JSON payload. */
static int check_names(tsr_component *c, const field_info *fs, int32_t n, const char *what,
                       tsr_error *err) {
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n; j++) {
            if (i == j) continue;
            const char *a = fs[i].field.name, *b = fs[j].field.name;
            size_t la = strlen(a);
            if (i < j && strcmp(a, b) == 0) {
                error_set(err, TSR_E_DESCRIPTOR, "component '%s': duplicate %s name '%s'",
                          c->desc->name, what, a);
                return TSR_E_DESCRIPTOR;
            }
            if (strncmp(a, b, la) == 0 && b[la] == '.') {
                error_set(err, TSR_E_DESCRIPTOR,
                          "component '%s': %s '%s' is both a field and the parent of %s '%s'",
                          c->desc->name, what, a, what, b);
                return TSR_E_DESCRIPTOR;
            }
        }
    return 0;
}

static int fields_load(tsr_component *c, const tsr_field *src, int32_t n, size_t stride,
                       const char *what, field_info **out, int32_t *count, tsr_error *err) {
    if (n < 0 || n > SCHEMA_MAX_FIELDS || (n > 0 && !src)) {
        error_set(err, TSR_E_DESCRIPTOR, "component '%s': invalid %s list (count %d%s)",
                  c->desc->name, what, (int)n, (n > 0 && !src) ? ", NULL array" : "");
        return TSR_E_DESCRIPTOR;
    }
    *out = calloc(n > 0 ? (size_t)n : 1, sizeof **out);
    if (!*out) {
        error_set(err, TSR_E_NOMEM, "component '%s': out of memory", c->desc->name);
        return TSR_E_NOMEM;
    }
    *count = n;   /* from here descriptor_free releases what the fields hold */
    for (int32_t i = 0; i < n; i++) {
        tsr_field f;
        field_read((const tsr_field *)((const char *)src + (size_t)i * stride), stride, &f);
        int rc = field_load(c, &(*out)[i], &f, what, i, err);
        if (rc) return rc;
    }
    return check_names(c, *out, n, what, err);
}

/* Symbols that some input carries are known before the call; an output
 * shape made only of those and fixed sizes is computed by the host. An
 * optional input may be absent, so its symbols do not count. */
static void mark_static_outputs(tsr_component *c) {
    uint8_t *bound = calloc(c->n_sym > 0 ? (size_t)c->n_sym : 1, 1);
    for (int32_t i = 0; bound && i < c->n_in; i++) {
        if (c->in[i].field.flags & TSR_FIELD_OPTIONAL) continue;
        for (int32_t d = 0; d < c->in[i].field.rank; d++)   /* none when any rank */
            if (c->in[i].kind[d] == DIM_SYMBOL) bound[c->in[i].sym[d]] = 1;
    }
    for (int32_t o = 0; o < c->n_out; o++) {
        field_info *f = &c->out[o];
        int known = bound != NULL && f->field.rank != TSR_RANK_ANY;
        for (int32_t d = 0; known && d < f->field.rank; d++)
            known = f->kind[d] == DIM_FIXED || (f->kind[d] == DIM_SYMBOL && bound[f->sym[d]]);
        f->shape_static = (uint8_t)known;
    }
    free(bound);
}

int descriptor_load(tsr_component *c, const tsr_plugin *d, tsr_error *err) {
    if (d->abi_version != TSR_PLUGIN_ABI_VERSION) {
        error_set(err, TSR_E_ABI,
                  "cannot load '%s': plugin built for ABI version %u, this host supports "
                  "version %u; rebuild the plugin against this version's plugin.h",
                  c->path, d->abi_version, TSR_PLUGIN_ABI_VERSION);
        return TSR_E_ABI;
    }
    if (d->struct_size < PLUGIN_V1_SIZE) {
        error_set(err, TSR_E_DESCRIPTOR,
                  "cannot load '%s': descriptor struct_size %u is smaller than ABI v1's %zu",
                  c->path, d->struct_size, (size_t)PLUGIN_V1_SIZE);
        return TSR_E_DESCRIPTOR;
    }
    if (d->field_size < FIELD_V1_SIZE) {
        error_set(err, TSR_E_DESCRIPTOR,
                  "cannot load '%s': descriptor field_size %u is smaller than ABI v1's %zu",
                  c->path, d->field_size, (size_t)FIELD_V1_SIZE);
        return TSR_E_DESCRIPTOR;
    }
    if (!d->name || !valid_name(d->name)) {
        error_set(err, TSR_E_DESCRIPTOR,
                  "cannot load '%s': the descriptor's name is %s (expected an identifier)",
                  c->path, d->name ? "invalid" : "missing");
        return TSR_E_DESCRIPTOR;
    }
    c->desc = d;
    if (!d->apply) {
        error_set(err, TSR_E_DESCRIPTOR, "component '%s' (%s): the required endpoint 'apply' is missing",
                  d->name, c->path);
        return TSR_E_DESCRIPTOR;
    }
    int rc = fields_load(c, d->inputs, d->n_inputs, d->field_size, "input", &c->in, &c->n_in, err);
    if (rc) return rc;
    rc = fields_load(c, d->outputs, d->n_outputs, d->field_size, "output", &c->out, &c->n_out,
                     err);
    if (rc) return rc;
    /* No outputs is allowed: apply then returns no results. */
    for (int32_t i = 0; i < c->n_in; i++)
        if (c->in[i].field.kind != TSR_KIND_ARRAY) c->n_text_in++;
    if (c->n_text_in) {
        c->text_in = calloc((size_t)c->n_text_in, sizeof *c->text_in);
        if (!c->text_in) {
            error_set(err, TSR_E_NOMEM, "component '%s': out of memory", d->name);
            return TSR_E_NOMEM;
        }
        for (int32_t i = 0, k = 0; i < c->n_in; i++)
            if (c->in[i].field.kind != TSR_KIND_ARRAY) c->text_in[k++] = i;
    }
    mark_static_outputs(c);
    c->ep[TSR_EP_APPLY] = d->apply;
    c->ep[TSR_EP_JVP] = d->jvp;
    c->ep[TSR_EP_VJP] = d->vjp;
    c->ep[TSR_EP_JACOBIAN] = d->jacobian;
    c->ep[TSR_EP_ABSTRACT_EVAL] = d->abstract_eval;
    /* Appended in ABI 1.2: a plugin built before has no such member. */
    c->ep[TSR_EP_HVP] = PLUGIN_HAS(d, hvp) ? d->hvp : NULL;
    if (PLUGIN_HAS(d, fd_step)) {
        if ((unsigned)d->fd_method > TSR_FD_SPSA || !(d->fd_step >= 0 && d->fd_step < 1) ||
            d->fd_samples > 1000000) {
            error_set(err, TSR_E_DESCRIPTOR,
                      "component '%s': invalid finite-difference settings (fd_method %d, "
                      "fd_step %g, fd_samples %u)",
                      d->name, (int)d->fd_method, d->fd_step, d->fd_samples);
            return TSR_E_DESCRIPTOR;
        }
        c->fd_method = d->fd_method;
        c->fd_samples = d->fd_samples ? d->fd_samples : FD_DEFAULT_SAMPLES;
        c->fd_step = d->fd_step;
    }
    c->thread_safe = (d->flags & TSR_PLUGIN_THREAD_SAFE) != 0;
    return 0;
}

int backend_set_descriptor(tsr_component *c, const tsr_plugin *d, tsr_error *err) {
    return descriptor_load(c, d, err);
}

void backend_set_endpoint_state(tsr_component *c, void *state) { c->endpoint_state = state; }

void descriptor_free(tsr_component *c) {
    defaults_free(c->in, c->n_in);
    free(c->in);
    free(c->out);
    free(c->sym_names);
    free(c->text_in);
    c->text_in = NULL;
    c->n_text_in = 0;
    c->in = c->out = NULL;
    c->n_in = c->n_out = 0;
    c->sym_names = NULL;
}
