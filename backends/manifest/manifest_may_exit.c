/* SPDX-License-Identifier: MIT */
/* "may_exit": a manifest's routines may end the process that runs them
 * (reference LAPACK's XERBLA STOPs on an illegal argument, GSL's default
 * error handler aborts, a Fortran STOP anywhere). In-process, that ends
 * the host, with status 0 after a STOP; in a worker, only the worker, and
 * the call fails with a message. */
#include <stdio.h>
#include <string.h>

#include "manifest.h"
#include "manifest_internal.h"

#define GENERIC_REASON "the manifest declares \"may_exit\": true"

int mf_may_exit(json_t *root, const char **reason) {
    json_t *v = json_object_get(root, "may_exit");
    *reason = NULL;
    if (!v || json_is_false(v)) return 0;
    if (json_is_true(v)) *reason = GENERIC_REASON;
    else if (json_is_string(v) && json_string_length(v) > 0) *reason = json_string_value(v);
    else return -1;
    return 0;
}

int manifest_may_exit(const char *path, char *reason, size_t n) {
    size_t len = strlen(path);
    if (len < 5 || strcmp(path + len - 5, ".json") != 0) return 0;
    json_t *root = json_load_file(path, 0, NULL);
    const char *why = NULL;
    int yes = root && json_is_object(root) && mf_may_exit(root, &why) == 0 && why;
    if (yes && reason && n) snprintf(reason, n, "%s", why);
    json_decref(root);
    return yes;
}
