/* SPDX-License-Identifier: MIT */
/* The names a call's derivatives go by on the wire: a whole field's name,
 * or the path inside a JSON field the host passed in tsr_args. */
#include <stddef.h>

#include "remote.h"

const char *const *remote_wrt_paths(const tsr_args *a, int out) {
    size_t need = offsetof(tsr_args, wrt_out_paths) + sizeof a->wrt_out_paths;
    if (a->struct_size < need) return NULL;
    return out ? a->wrt_out_paths : a->wrt_in_paths;
}

const char *remote_wrt_path(const tsr_field *fields, const int32_t *idx, const char *const *paths,
                            int32_t k) {
    return paths && paths[k] ? paths[k] : fields[idx[k]].name;
}
