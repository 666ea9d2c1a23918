/* SPDX-License-Identifier: MIT */
/* Limits on what one call may make the library hold: bytes per array and
 * per call (options max_array_bytes, max_call_bytes), checked from shapes
 * before anything is allocated, so that a shape claiming 2^62 elements is
 * refused, never attempted; and the payload size (max_payload_bytes) and
 * its JSON values (max_payload_values). */
#include <stdio.h>
#include <string.h>

#include "internal.h"

uint64_t limit_array_bytes(const tsr_array *a) {
    size_t bytes;
    return shape_bytes(a, &bytes) == 0 ? (uint64_t)bytes : UINT64_MAX;
}

static void label_of(const char *what, const char *name, char *buf, size_t n) {
    if (!name) snprintf(buf, n, "%s", what);
    else if (strcmp(what, "input") == 0) snprintf(buf, n, "input '%s'", name);
    else snprintf(buf, n, "%s['%s']", what, name);
}

/* The check itself, on any running total (a call's, or a served call's
 * scratch in a worker, which has no call object). */
static int check_against(const struct tsr_options *o, uint64_t *used, uint64_t bytes,
                         const char *what, const char *name, char *why, size_t n) {
    char label[SCHEMA_MAX_NAME * 2 + 48];
    if (o->max_array_bytes && bytes > o->max_array_bytes) {
        label_of(what, name, label, sizeof label);
        if (bytes == UINT64_MAX)
            snprintf(why, n, "%s: its size overflows (max_array_bytes is %llu)", label,
                     (unsigned long long)o->max_array_bytes);
        else
            snprintf(why, n,
                     "%s: %llu bytes exceed max_array_bytes (%llu); raise the option "
                     "max_array_bytes to allow it",
                     label, (unsigned long long)bytes, (unsigned long long)o->max_array_bytes);
        return TSR_E_LIMIT;
    }
    uint64_t total;
    if (__builtin_add_overflow(*used, bytes, &total)) total = UINT64_MAX;
    if (o->max_call_bytes && total > o->max_call_bytes) {
        label_of(what, name, label, sizeof label);
        snprintf(why, n,
                 "%s: %llu bytes bring the call's arrays to %llu bytes, past max_call_bytes "
                 "(%llu); raise the option max_call_bytes to allow it",
                 label, (unsigned long long)bytes, (unsigned long long)total,
                 (unsigned long long)o->max_call_bytes);
        return TSR_E_LIMIT;
    }
    *used = total;
    return 0;
}

int limit_check(tsr_call *call, uint64_t bytes, const char *what, const char *name, char *why,
                size_t n) {
    return check_against(&call->comp->opts, &call->limit_used, bytes, what, name, why, n);
}

int limit_check_total(const tsr_component *c, uint64_t *used, uint64_t bytes, const char *what,
                      char *why, size_t n) {
    return check_against(&c->opts, used, bytes, what, NULL, why, n);
}

int limit_take(tsr_call *call, uint64_t bytes, const char *what, const char *name) {
    char why[TSR_ERRMSG_MAX - 128];
    int rc = limit_check(call, bytes, what, name, why, sizeof why);
    if (!rc) return 0;
    call_fail(call, rc, "%s", why);
    /* An array of the request has a loc ("inputs.x"); a result has none. */
    if (name) call_set_loc(call, strcmp(what, "input") == 0 ? "inputs" : what, name);
    return rc;
}

uint64_t component_payload_limit(const tsr_component *c) {
    return c ? c->opts.max_payload_bytes : 0;
}

uint64_t component_payload_values(const tsr_component *c) {
    return c ? c->opts.max_payload_values : 0;
}

void component_array_limits(const tsr_component *c, uint64_t *array, uint64_t *call) {
    *array = c ? c->opts.max_array_bytes : 0;
    *call = c ? c->opts.max_call_bytes : 0;
}
