/* SPDX-License-Identifier: MIT */
/* Reading a manifest's JSON: typed members and errors that point at the
 * entry ("dgesv.json: endpoints.apply.args[2]: ..."). */
#include <stdio.h>
#include <string.h>

#include "manifest_internal.h"

int mf_fail(mf_parse *p, int code, const char *entry, const char *fmt, ...) {
    char cause[TSR_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cause, sizeof cause, fmt, ap);
    va_end(ap);
    if (entry && *entry)
        error_set(p->err, code, "%s: %s: %s", tsr_component_path(p->c), entry, cause);
    else
        error_set(p->err, code, "%s: %s", tsr_component_path(p->c), cause);
    return code;
}

const char *mf_entry(char *buf, size_t n, const char *entry, const char *key) {
    snprintf(buf, n, "%s%s%s", entry, *entry ? "." : "", key);
    return buf;
}

const char *mf_entry_at(char *buf, size_t n, const char *entry, size_t index) {
    snprintf(buf, n, "%s[%zu]", entry, index);
    return buf;
}

/* Typos in a manifest are caught rather than ignored. */
int mf_check_keys(mf_parse *p, json_t *obj, const char *entry, const char *const *allowed) {
    const char *key;
    json_t *value;
    json_object_foreach(obj, key, value) {
        int known = 0;
        for (const char *const *a = allowed; *a && !known; a++) known = strcmp(*a, key) == 0;
        if (known) continue;
        char list[512] = "";
        size_t used = 0;
        for (const char *const *a = allowed; *a; a++) {
            int w = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", *a);
            if (w < 0 || (size_t)w >= sizeof list - used) break;
            used += (size_t)w;
        }
        return mf_fail(p, TSR_E_DESCRIPTOR, entry, "unknown key '%s' (expected one of: %s)", key,
                       list);
    }
    return 0;
}

static const char *json_kind(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

int mf_get_string(mf_parse *p, json_t *obj, const char *key, const char *entry, int required,
                  const char **out) {
    char at[256];
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v) {
        if (!required) return 0;
        return mf_fail(p, TSR_E_DESCRIPTOR, mf_entry(at, sizeof at, entry, key),
                       "missing (a string is required)");
    }
    if (!json_is_string(v))
        return mf_fail(p, TSR_E_DESCRIPTOR, mf_entry(at, sizeof at, entry, key),
                       "expected a string, got %s", json_kind(v));
    *out = json_string_value(v);
    return 0;
}

int mf_get_bool(mf_parse *p, json_t *obj, const char *key, const char *entry, int *out) {
    char at[256];
    json_t *v = json_object_get(obj, key);
    if (!v) return 0;
    if (!json_is_boolean(v))
        return mf_fail(p, TSR_E_DESCRIPTOR, mf_entry(at, sizeof at, entry, key),
                       "expected true or false, got %s", json_kind(v));
    *out = json_is_true(v);
    return 0;
}
