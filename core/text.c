/* SPDX-License-Identifier: MIT */
/* TEXT and JSON inputs in calls (plugin.h, "Field kinds"): the NUL the
 * host guarantees after their bytes, and their check against UTF-8 and a
 * field's choices before every run. Binding them and reading a text
 * result are in call.c, with the other inputs and results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "codecs/utf8.h"

#define ALIGN_UP(n) (((n) + TSR_ALIGNMENT - 1) / TSR_ALIGNMENT * TSR_ALIGNMENT)

int text_bind_array(tsr_call *call, int32_t i, const tsr_array *a) {
    if (!call->text) {
        call->text = calloc((size_t)call->comp->n_in, sizeof *call->text);
        if (!call->text)
            return call_fail_at(call, TSR_E_NOMEM, "inputs", call->comp->in[i].field.name,
                                "out of memory binding input '%s'",
                                call->comp->in[i].field.name);
    }
    call->text[i].src = a->data;
    call->text[i].copy = a->data != NULL;
    return 0;
}

void text_release(tsr_call *call) {
    for (int32_t i = 0; call->text && i < call->comp->n_in; i++) free(call->text[i].buf);
    free(call->text);
    call->text = NULL;
}

/* pydantic's wording of a literal_error: "Input should be 'a', 'b' or 'c'". */
static void choices_cause(const field_info *f, char *buf, size_t n) {
    size_t used = 0;
    int w = snprintf(buf, n, "Input should be ");
    used = w > 0 ? (size_t)w : 0;
    for (int32_t k = 0; k < f->field.n_choices && used < n; k++) {
        const char *sep = k == 0 ? "" : k + 1 == f->field.n_choices ? " or " : ", ";
        w = snprintf(buf + used, n - used, "%s'%s'", sep, f->field.choices[k]);
        if (w > 0) used += (size_t)w;
    }
}

/* Whether text (len bytes) is one of f's choices: without their lengths,
 * which strlen would cost at every run. */
static int is_choice(const field_info *f, const char *text, size_t len) {
    /* A NUL inside is in no choice, and past it strncmp could not tell. */
    if (memchr(text, '\0', len)) return 0;
    for (int32_t k = 0; k < f->field.n_choices; k++) {
        const char *ch = f->field.choices[k];
        if (ch[0] == text[0] && strncmp(ch, text, len) == 0 && ch[len] == '\0') return 1;
    }
    return 0;
}

/* A bound array of a TEXT or JSON input copied into the call's buffer,
 * with the NUL the endpoint relies on. */
static int text_copy(tsr_call *call, int32_t i, tsr_array *a) {
    text_slot *t = &call->text[i];
    size_t len = (size_t)a->shape[0];
    if (t->cap < len + 1) {
        size_t cap = ALIGN_UP(len + 1);
        char *buf = aligned_alloc(TSR_ALIGNMENT, cap);
        if (!buf)
            return call_fail_at(call, TSR_E_NOMEM, "inputs", call->comp->in[i].field.name,
                                "out of memory copying input '%s'",
                                call->comp->in[i].field.name);
        free(t->buf);
        t->buf = buf;
        t->cap = cap;
    }
    if (len) memcpy(t->buf, t->src, len);
    t->buf[len] = '\0';
    a->data = t->buf;
    return 0;
}

int text_inputs_check(tsr_call *call) {
    const tsr_component *c = call->comp;
    for (int32_t k = 0; k < c->n_text_in; k++) {
        int32_t i = c->text_in[k];
        const field_info *f = &c->in[i];
        tsr_array *a = &call->inputs[i];
        if (!call->input_bound[i] && tsr_input_absent(a)) continue;
        /* dtype and rank were checked with the other inputs */
        if (call->input_bound[i] && call->text && call->text[i].copy) {
            int rc = text_copy(call, i, a);
            if (rc) return rc;
        }
        if (!a->data)
            return call_fail_at(call, TSR_E_ARGUMENT, "inputs", f->field.name,
                                "input '%s': the text is NULL", f->field.name);
        size_t len = (size_t)a->shape[0];
        /* One of the choices is valid UTF-8 (checked at load): the scan
         * is only for text that is not. */
        if (f->field.n_choices > 0 && is_choice(f, a->data, len)) continue;
        if (!utf8_valid(a->data, len))
            return call_fail_at(call, TSR_E_VALUE, "inputs", f->field.name,
                                "input '%s': Input should be a valid string, unable to parse "
                                "raw data as a unicode string",
                                f->field.name);
        if (f->field.n_choices > 0) {
            char cause[TSR_ERRMSG_MAX / 2];
            choices_cause(f, cause, sizeof cause);
            return call_fail_at(call, TSR_E_VALUE, "inputs", f->field.name, "input '%s': %s",
                                f->field.name, cause);
        }
    }
    return 0;
}
