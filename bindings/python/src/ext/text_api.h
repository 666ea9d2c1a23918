/* SPDX-License-Identifier: MIT */
/* The library's calls for TEXT and JSON values (tsr_call_set_text,
 * tsr_call_output_text), referenced weakly: the extension then also loads
 * with a library that predates them, where a component has no such
 * fields and these wrappers answer TSR_E_UNSUPPORTED / NULL. */
#ifndef TESSERA_PY_TEXT_API_H
#define TESSERA_PY_TEXT_API_H

#include "ext.h"

#pragma weak tsr_call_set_text
#pragma weak tsr_call_output_text

/* Whether the library carries TEXT and JSON values. */
static inline int text_api_available(void) {
    return tsr_call_set_text != NULL && tsr_call_output_text != NULL;
}

static inline int text_api_set(tsr_call *call, const char *name, const char *utf8) {
    if (!tsr_call_set_text) return TSR_E_UNSUPPORTED;
    return tsr_call_set_text(call, name, utf8);
}

static inline const char *text_api_output(const tsr_call *call, const char *name, size_t *len) {
    if (!tsr_call_output_text) return NULL;
    return tsr_call_output_text(call, name, len);
}

#endif /* TESSERA_PY_TEXT_API_H */
