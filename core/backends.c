/* SPDX-License-Identifier: MIT */
/* The registration table: the one place that names every backend. A
 * component is served by the first backend that claims its path and
 * options; the plugin backend claims whatever is left. */
#include <stddef.h>

#include "core/backend.h"

extern const backend_ops worker_backend_ops;     /* backends/worker/backend.c */
extern const backend_ops manifest_backend_ops;   /* backends/manifest/manifest_open.c */
extern const backend_ops python_backend_ops;     /* backends/python/python_backend.c */
extern const backend_ops umbridge_backend_ops;   /* backends/umbridge/umbridge_backend.c */
extern const backend_ops fmu_backend_ops;        /* backends/fmu/fmu_backend.c */
extern const backend_ops remote_backend_ops;     /* backends/remote/remote_backend.c */
extern const backend_ops plugin_backend_ops;     /* backends/plugin/plugin.c */

static const backend_ops *const backends[] = {
    &worker_backend_ops,     /* mode "worker", whatever the path names */
    &manifest_backend_ops,   /* a JSON manifest of a legacy routine */
    &python_backend_ops,     /* a Tesseract's tesseract_api.py, or its folder */
    &umbridge_backend_ops,   /* a URL with a #model fragment or option umbridge_model */
    &fmu_backend_ops,        /* an FMI 3.0 FMU: a .fmu archive or its unpacked folder */
    &remote_backend_ops,     /* an http:// or https:// URL: a served Tesseract */
    &plugin_backend_ops,     /* a Tessera plugin (.so) */
};

const backend_ops *backend_for(const char *path, const struct tsr_options *opts, char *why,
                               size_t n) {
    size_t count = sizeof backends / sizeof backends[0];
    const backend_ops *b = backends[count - 1];
    for (size_t i = 0; i + 1 < count; i++)
        if (backends[i]->claims(path, opts)) {
            b = backends[i];
            break;
        }
    why[0] = '\0';
    /* A routine that may end the process is confined to a worker unless
     * the host asked for a mode. */
    if (b != &worker_backend_ops && !opts->mode_set && b->may_end_process &&
        b->may_end_process(path, why, n))
        return &worker_backend_ops;
    why[0] = '\0';
    return b;
}

const char *backend_code_name(const char *path, const struct tsr_options *opts) {
    size_t n = sizeof backends / sizeof backends[0];
    for (size_t i = 0; i + 1 < n; i++)
        if (backends[i] != &worker_backend_ops && backends[i]->claims(path, opts))
            return backends[i]->name;
    return backends[n - 1]->name;
}

int backend_prepare(tsr_component *c, const char *path, const struct tsr_options *opts,
                    tsr_error *err) {
    size_t n = sizeof backends / sizeof backends[0];
    for (size_t i = 0; i < n; i++) {
        const backend_ops *b = backends[i];
        if (b == &worker_backend_ops || !b->claims(path, opts)) continue;
        return b->prepare ? b->prepare(c, err) : 0;
    }
    return 0;
}
