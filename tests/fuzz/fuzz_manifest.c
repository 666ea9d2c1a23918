/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: a legacy routine's manifest (docs/guides/manifests.md), read by
 * tsr_open as any component is: its JSON, its schema, its endpoints and
 * their arguments and size expressions, then the descriptor checks. Every
 * input must end in a load error with a message, never a crash.
 *
 * Loading the library a manifest names is where parsing ends: this target
 * refuses every dlopen (its own dlopen takes the library's place), so that
 * no input makes the fuzzer load whatever library the system has.
 *
 * Input: the manifest text, written to a file named *.json.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tessera/tessera.h>

#include "fuzz_target.h"

void *dlopen(const char *file, int mode) {
    (void)file;
    (void)mode;
    return NULL;
}

void *dlmopen(Lmid_t ns, const char *file, int mode) {
    (void)ns;
    return dlopen(file, mode);
}

static char path[64];

static void remove_file(void) { unlink(path); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/tessera-fuzz-manifest-%ld.json", (long)getpid());
        atexit(remove_file);
    }
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    tsr_component *c = (tsr_component *)(uintptr_t)1;
    tsr_error err = TSR_ERROR_INIT;
    memset(&err, 0, sizeof err);
    int rc = tsr_open(path, NULL, &c, &err);
    /* With no library to load, every manifest fails, cleanly. */
    if (rc == 0 || c != NULL || err.code != rc || err.message[0] == '\0') __builtin_trap();
    return 0;
}
