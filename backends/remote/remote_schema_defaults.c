/* SPDX-License-Identifier: MIT */
/* Inputs a served Tesseract lets a request leave out (not in its model's
 * "required"): one whose "default" reads as an array of the field's dtype,
 * rank and fixed sizes gets it as its default; any other (Optional[X] =
 * None, a default Tessera cannot hold) becomes optional, and a call that
 * leaves it out leaves it out of the request, so that the server applies
 * its own default. */
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "remote_schema_read.h"
#include "tessera/payload.h"

int remote_read_default(const field_reader *r, int32_t k, json_t *dflt, int required) {
    remote_schema *s = r->s;
    if (required || strcmp(r->side, "input") != 0) return 0;
    remote_field *x = &s->extra[k];
    tsr_field *f = &s->fields[k];
    char *text = dflt && !json_is_null(dflt) ? json_dumps(dflt, JSON_ENCODE_ANY | JSON_COMPACT)
                                             : NULL;
    tsr_error err = TSR_ERROR_INIT;
    char why[200];
    if (text && tsr_array_from_json(text, strlen(text), f->dtype, &x->default_array,
                                    &x->default_buf, &err) == 0 &&
        backend_default_mismatch(f, s->dims + (size_t)k * TSR_MAX_FIELD_RANK,
                                 &x->default_array, why, sizeof why) != 0) {
        tsr_array_buffer_free(x->default_buf);
        x->default_buf = NULL;
    }
    free(text);
    if (!x->default_buf) f->flags |= TSR_FIELD_OPTIONAL;
    return 0;
}

void remote_defaults_link(remote_schema *s, int32_t n_in) {
    for (int32_t k = 0; k < n_in; k++)
        if (s->extra[k].default_buf) s->fields[k].default_value = &s->extra[k].default_array;
}

void remote_defaults_free(remote_schema *s) {
    for (int32_t k = 0; s->extra && k < s->n_fields; k++)
        tsr_array_buffer_free(s->extra[k].default_buf);
}
