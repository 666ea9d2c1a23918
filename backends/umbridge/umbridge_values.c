/* SPDX-License-Identifier: MIT */
/* Values between Tessera's arrays and UM-Bridge's JSON (umbridge.h):
 * float64 vectors as lists of numbers, read back only when each is a
 * finite number and the list has the declared length. */
#include <math.h>
#include <stdio.h>

#include "umbridge.h"

int umb_vector_json(const double *v, int64_t len, const char *what, json_t **out, char *why,
                    size_t n) {
    json_t *list = json_array();
    for (int64_t i = 0; list && i < len; i++) {
        if (!isfinite(v[i])) {
            json_decref(list);
            *out = NULL;
            snprintf(why, n, "%s[%lld] is %g, which JSON (and so UM-Bridge) cannot carry", what,
                     (long long)i, v[i]);
            return TSR_E_VALUE;
        }
        if (json_array_append_new(list, json_real(v[i])) != 0) {
            json_decref(list);
            list = NULL;
        }
    }
    *out = list;
    if (list) return 0;
    snprintf(why, n, "out of memory for %s", what);
    return TSR_E_NOMEM;
}

int umb_vector_read(json_t *v, int64_t len, const char *what, double *out, char *why, size_t n) {
    if (!json_is_array(v)) {
        snprintf(why, n, "%s is not a list of numbers", what);
        return TSR_E_PLUGIN_RESULT;
    }
    if ((int64_t)json_array_size(v) != len) {
        snprintf(why, n, "%s has %zu values, the model declares %lld", what, json_array_size(v),
                 (long long)len);
        return TSR_E_PLUGIN_RESULT;
    }
    for (int64_t i = 0; i < len; i++) {
        json_t *x = json_array_get(v, (size_t)i);
        if (!json_is_number(x)) {
            snprintf(why, n, "%s[%lld] is not a number", what, (long long)i);
            return TSR_E_PLUGIN_RESULT;
        }
        out[i] = json_number_value(x);
    }
    return 0;
}

int umb_inputs_json(const umb_model *m, const tsr_args *a, json_t **out, char *why, size_t n) {
    json_t *list = json_array();
    int rc = list ? 0 : TSR_E_NOMEM;
    for (int32_t i = 0; !rc && i < m->n_in; i++) {
        json_t *v;
        rc = umb_vector_json(a->inputs[i].data, m->sizes[i], m->fields[i].name, &v, why, n);
        if (!rc && json_array_append_new(list, v) != 0) rc = TSR_E_NOMEM;
    }
    if (rc == TSR_E_NOMEM) snprintf(why, n, "out of memory for the inputs");
    if (rc) {
        json_decref(list);
        list = NULL;
    }
    *out = list;
    return rc;
}
