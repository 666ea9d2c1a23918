/* SPDX-License-Identifier: MIT */
/* The bundled rosenbrock plugin with some endpoints taken away, for the
 * tests of hvp's fallbacks against its exact hvp: the including file
 * names the variant (ROSEN_NAME) and says what it keeps (ROSEN_KEEP_VJP,
 * ROSEN_KEEP_JACOBIAN; ROSEN_FD_METHOD for an fd_method). hvp is never
 * kept. The descriptor is copied at load, the plugin's own entry left out. */
#include <tessera/plugin.h>

#undef TSR_PLUGIN_DEFINE
#define TSR_PLUGIN_DEFINE(descriptor)
#include "../../plugins/rosenbrock/rosenbrock.c"

static tsr_plugin variant;

TSR_PLUGIN_EXPORT const tsr_plugin *tsr_plugin_entry(uint32_t host_abi_version);
TSR_PLUGIN_EXPORT const tsr_plugin *tsr_plugin_entry(uint32_t host_abi_version) {
    (void)host_abi_version;
    variant = rosenbrock_plugin;
    variant.name = ROSEN_NAME;
    variant.hvp = NULL;
    variant.jvp = NULL;
#ifndef ROSEN_KEEP_VJP
    variant.vjp = NULL;
#endif
#ifndef ROSEN_KEEP_JACOBIAN
    variant.jacobian = NULL;
#endif
#ifdef ROSEN_FD_METHOD
    variant.fd_method = ROSEN_FD_METHOD;
#endif
    return &variant;
}
