/* SPDX-License-Identifier: MIT */
/* One endpoint call of a served component (endpoint_call.c). */
#ifndef TESSERA_SERVE_ENDPOINT_CALL_H
#define TESSERA_SERVE_ENDPOINT_CALL_H

#include "serve_internal.h"

/* Parse body as the endpoint's request, run it, answer the results in enc
 * (or the failure, errors.c). */
void endpoint_call(const serve_config *cfg, tsr_endpoint ep, tsr_encoding enc, const char *body,
                   size_t len, serve_response *rs);

#endif
