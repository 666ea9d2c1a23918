/* SPDX-License-Identifier: MIT */
/*
 * The entry point every tests/fuzz/fuzz_NAME.c defines, declared once for
 * libFuzzer's driver and for replay_main.c (and so that the definitions
 * have a prototype, -Wmissing-prototypes).
 */
#ifndef TESSERA_FUZZ_TARGET_H
#define TESSERA_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* TESSERA_FUZZ_TARGET_H */
