/* SPDX-License-Identifier: MIT */
/* A shared object that exports a function, but not the entry symbol. */
#include <stdint.h>

__attribute__((visibility("default"))) int not_a_tessera_plugin(uint32_t v);
__attribute__((visibility("default"))) int not_a_tessera_plugin(uint32_t v) {
    return (int)v;
}
