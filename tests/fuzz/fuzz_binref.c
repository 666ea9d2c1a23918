/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: a binref buffer string, "<path>[:<offset>[:<size>]]", as a
 * payload gives it: parsed (tsr_binref_ref_parse), then resolved against an
 * input directory with escaping refused (tsr_binref_resolve). Every input
 * ends in an error with a message or in a file inside the input directory:
 * never a crash, and never a way out (by '..', an absolute path or a
 * symlink that points outside, all of which the directory holds).
 *
 * Input: the buffer string (made NUL-terminated).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_target.h"
#include "transport/payload/binref_path.h"

static char dir[64];
static char *base_real;

static void cleanup(void) {
    char path[128];
    const char *names[] = {"sub/up", "sub/b.bin", "link", "a.bin"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/sub", dir);
    rmdir(path);
    rmdir(dir);
    free(base_real);
}

/* dir/a.bin, dir/sub/b.bin, dir/link -> /etc/hostname, dir/sub/up -> .. */
static void setup(void) {
    snprintf(dir, sizeof dir, "/tmp/tessera-fuzz-binref-%ld", (long)getpid());
    char path[128], why[256];
    snprintf(path, sizeof path, "%s/sub", dir);
    if (mkdir(dir, 0700) != 0 || mkdir(path, 0700) != 0) abort();
    atexit(cleanup);
    const char *files[] = {"a.bin", "sub/b.bin"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite("0123456789abcdef", 1, 16, f) != 16 || fclose(f) != 0) abort();
    }
    snprintf(path, sizeof path, "%s/link", dir);
    if (symlink("/etc/hostname", path) != 0) abort();
    snprintf(path, sizeof path, "%s/sub/up", dir);
    if (symlink("..", path) != 0) abort();
    if (tsr_binref_base(dir, &base_real, why, sizeof why) != 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!base_real) setup();
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    tsr_binref_ref ref = {0};
    char why[512] = "";
    if (tsr_binref_ref_parse(text, &ref, why, sizeof why) != 0) {
        if (why[0] == '\0') __builtin_trap();
    } else {
        char *file = NULL;
        why[0] = '\0';
        if (tsr_binref_resolve(base_real, ref.path, false, &file, why, sizeof why) == 0) {
            size_t n = strlen(base_real);
            /* inside the input directory, whatever the path said */
            if (!file || strncmp(file, base_real, n) != 0 || (file[n] != '/' && file[n] != '\0'))
                __builtin_trap();
        } else if (why[0] == '\0') {
            __builtin_trap();
        }
        free(file);
    }
    free(ref.path);
    free(text);
    return 0;
}
