/* SPDX-License-Identifier: MIT */
/* The entry symbol exists but refuses every host by returning NULL. */
#include <tessera/plugin.h>

TSR_PLUGIN_EXPORT const tsr_plugin *tsr_plugin_entry(uint32_t host_abi_version);
TSR_PLUGIN_EXPORT const tsr_plugin *tsr_plugin_entry(uint32_t host_abi_version) {
    (void)host_abi_version;
    return NULL;
}
