/* SPDX-License-Identifier: MIT */
/* What an abstract_eval the component cannot answer says: which outputs'
 * shapes are unknown before the call (a dim no input binds), and where
 * to add the abstract_eval that would give them, in the words of the
 * component's kind (a tesseract_api.py, a plugin, a served component). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "shape_hint.h"

/* Appends to buf (NUL-terminated, size n) at *used; silently cut short. */
static void put(char *buf, size_t n, size_t *used, const char *fmt, const char *s) {
    if (*used >= n) return;
    int w = snprintf(buf + *used, n - *used, fmt, s);
    if (w > 0) *used += (size_t)w < n - *used ? (size_t)w : n - *used - 1;
}

/* The tesseract_api.py of a Python component at path (a folder or the file). */
static void api_file(const char *path, char *out, size_t n) {
    char real[PATH_MAX];
    const char *p = realpath(path, real) ? real : path;
    struct stat st;
    int dir = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
    snprintf(out, n, dir ? "%s/tesseract_api.py" : "%s", p);
}

void shape_hint(const tsr_component *c, char *buf, size_t n) {
    size_t used = 0;
    int unknown = 0;
    buf[0] = '\0';
    for (int32_t o = 0; o < c->n_out; o++)
        if (!c->out[o].shape_static) unknown++;
    put(buf, n, &used, "%s", unknown == 1 ? "the shape of output " : "the shapes of outputs ");
    for (int32_t o = 0, k = 0; o < c->n_out; o++) {
        if (c->out[o].shape_static) continue;
        put(buf, n, &used, k == 0 ? "'%s'" : k + 1 < unknown ? ", '%s'" : " and '%s'",
            c->out[o].field.name);
        k++;
    }
    put(buf, n, &used, "%s",
        unknown == 1 ? " cannot be known before the call (no input shape gives it, and the "
                       "component has no abstract_eval); "
                     : " cannot be known before the call (no input shape gives them, and the "
                       "component has no abstract_eval); ");
    const char *kind = backend_code_name(c->path, &c->opts);
    if (strcmp(kind, "python") == 0) {
        char api[PATH_MAX + 32];
        api_file(c->path, api, sizeof api);
        put(buf, n, &used, "define abstract_eval in %s", api);
    } else if (strcmp(kind, "remote") == 0) {
        put(buf, n, &used, "%s", "the served component needs an abstract_eval endpoint");
    } else if (strcmp(kind, "manifest") == 0) {
        put(buf, n, &used, "give each of them dims that inputs bind in the manifest %s",
            c->path);
    } else {
        put(buf, n, &used, "%s", "add an abstract_eval endpoint in the plugin");
    }
}
