/* SPDX-License-Identifier: MIT */
/* Serving a component to another process: what core offers the worker's
 * side of worker mode, which otherwise opens and queries the component
 * through the public API. The worker receives a call's arrays from the
 * host, checks them here against the schema, and runs the endpoint here,
 * with the same services to the plugin (tsr_ctx) as in-process; only
 * tsr_ctx_alloc is answered by the worker (it asks the host). */
#ifndef TESSERA_CORE_SERVED_H
#define TESSERA_CORE_SERVED_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "tessera/tessera.h"

/* How an endpoint lays out its results, stated once (results.c lays out a
 * call's results with it too): result k of apply and abstract_eval is
 * output k; of jvp, output wrt_out[k]; of vjp, the gradient of input
 * wrt_in[k], shaped like it; of jacobian, the block (out, in) for
 * k = o * n_wrt_in + i, shaped (*out_shape, *in_shape). */
typedef struct result_layout {
    int32_t out;                     /* the output field of its leading dims, or -1 (vjp) */
    int32_t in;                      /* the input whose shape its trailing dims are, or -1 */
    tsr_dtype dtype;
    int32_t rank;                    /* the two fields' ranks together */
    /* A derivative result for an entry on a JSON field (a path inside it,
     * or the whole field): the endpoint sets its float dtype, rank and
     * shape and allocates it; dtype and rank above are only a start. */
    int free_form;
} result_layout;
void result_layout_of(const tsr_component *c, tsr_endpoint ep, const int32_t *wrt_in,
                      int32_t n_wrt_in, const int32_t *wrt_out, int32_t k, result_layout *out);
/* wrt_path.c: a derivative list's entry inside JSON field `field`:
 * `path` is the field's name, or it followed by parts in Tesseract's
 * syntax (".{key}", ".[N]", ".name"), at most SCHEMA_MAX_PATH bytes.
 * wrt_path_syntax checks the parts alone. 0, or -1 with the cause in why. */
int wrt_path_check(const char *field, const char *path, char *why, size_t n);
int wrt_path_syntax(const char *rest, char *why, size_t n);
/* A seed or a derivative result at such an entry is a float array. */
static inline int wrt_free_dtype(int32_t dtype) {
    return dtype == TSR_FLOAT16 || dtype == TSR_FLOAT32 || dtype == TSR_FLOAT64;
}

/* An input's or seed's name in messages, what being "input",
 * "tangent_vector" or "cotangent_vector": "input 'x'" or
 * "tangent_vector['x']" (names.c). Formatted only when a message needs it. */
const char *array_label(const char *what, const char *name, char *buf, size_t n);
/* The request's section such an array belongs to, for locs: "inputs" for
 * "input", else what. */
const char *array_section(const char *what);
/* "output 'y'", "result for input 'x'" or "jacobian block 'y'/'x'". */
const char *result_layout_name(const tsr_component *c, const result_layout *l, char *buf,
                               size_t n);

/* A component served to another process, with the scratch its checks use. */
typedef struct served served;
served *served_new(tsr_component *c);
void served_free(served *s);

/* What the host must know of the component beyond its schema. */
typedef struct served_traits {
    unsigned implemented;            /* bit ep: the plugin itself has endpoint ep */
    int thread_safe;
    tsr_fd_method fd_method;
    uint32_t fd_samples;
    double fd_step;
} served_traits;
void served_traits_of(const served *s, served_traits *out);

/* The shapes of a received call against the schema, as the host checks
 * them before it sends (symbolic dims agree across inputs, seeds and
 * results; tangents are shaped like their inputs; results the host sized
 * are shaped as the endpoint requires), so that a plugin never sees
 * shapes that in-process calls could not give it. Counts, indices, dtypes
 * and ranks must have been checked already. 0, or TSR_E_PAYLOAD
 * (TSR_E_NOMEM) with a cause in why. */
int served_check(served *s, const tsr_args *args, char *why, size_t n);

/* Run args->endpoint's function of the plugin, its results prepared first
 * as `unwritten` (UNWRITTEN_*, core/options.h) says: cleared, or
 * marked and checked after a successful run (TSR_E_PLUGIN_RESULT naming a
 * result the plugin left unwritten). tsr_ctx_alloc for result k
 * calls alloc(user, k, ...), which sets the buffer or refuses with a code
 * and a cause; tsr_ctx_cancelled reads *cancel (the host's request; NULL:
 * never). *plugin_status is what the endpoint returned. 0, or the
 * failure's code with a message in why (the plugin's own, or the refusal
 * of an allocation). */
typedef void *(*served_alloc_fn)(void *user, int32_t k, int *code, char *why, size_t n);
int served_invoke(served *s, const tsr_args *args, int unwritten, served_alloc_fn alloc, void *user,
                  const _Atomic uint32_t *cancel, int *plugin_status, char *why, size_t n);

#endif
