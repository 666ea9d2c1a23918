/* SPDX-License-Identifier: MIT */
/* What an abstract_eval the component cannot answer says: which outputs'
 * shapes are unknown before the call (a dim no input binds), and where
 * to add the abstract_eval that would give them, in the words of the
 * component's kind (a tesseract_api.py, a plugin, a served component). */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "shape_hint.h"

/* Appends each of the strings (NULL ends them) to buf (NUL-terminated,
 * size n) at *used; cut short when full. */
static void put(char *buf, size_t n, size_t *used, const char *first, ...) {
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s != NULL; s = va_arg(ap, const char *)) {
        size_t len = strlen(s), room = *used + 1 < n ? n - *used - 1 : 0;
        if (len > room) len = room;
        memcpy(buf + *used, s, len);
        *used += len;
        buf[*used] = '\0';
    }
    va_end(ap);
}

/* The tesseract_api.py of a Python component at path (a folder or the file). */
static void api_file(const char *path, char *out, size_t n) {
    char real[PATH_MAX];
    const char *p = realpath(path, real) ? real : path;
    struct stat st;
    int dir = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
    snprintf(out, n, "%s%s", p, dir ? "/tesseract_api.py" : "");
}

void shape_hint(const tsr_component *c, char *buf, size_t n) {
    size_t used = 0;
    int unknown = 0;
    buf[0] = '\0';
    for (int32_t o = 0; o < c->n_out; o++)
        if (!c->out[o].shape_static) unknown++;
    put(buf, n, &used, unknown == 1 ? "the shape of output " : "the shapes of outputs ", NULL);
    for (int32_t o = 0, k = 0; o < c->n_out; o++) {
        if (c->out[o].shape_static) continue;
        put(buf, n, &used, k == 0 ? "'" : k + 1 < unknown ? ", '" : " and '",
            c->out[o].field.name, "'", NULL);
        k++;
    }
    put(buf, n, &used, " cannot be known before the call (no input shape gives ",
        unknown == 1 ? "it" : "them", ", and the component has no abstract_eval); ", NULL);
    const char *kind = backend_code_name(c->path, &c->opts);
    if (strcmp(kind, "python") == 0) {
        char api[PATH_MAX + 32];
        api_file(c->path, api, sizeof api);
        put(buf, n, &used, "define abstract_eval in ", api, NULL);
    } else if (strcmp(kind, "remote") == 0) {
        put(buf, n, &used, "the served component needs an abstract_eval endpoint", NULL);
    } else if (strcmp(kind, "manifest") == 0) {
        put(buf, n, &used, "give each of them dims that inputs bind in the manifest ", c->path,
            NULL);
    } else {
        put(buf, n, &used, "add an abstract_eval endpoint in the plugin", NULL);
    }
}
