/* SPDX-License-Identifier: MIT */
/*
 * Runs a fuzz target's LLVMFuzzerTestOneInput on files, without libFuzzer:
 * the seed corpus and the regression inputs are replayed by ctest with any
 * compiler, so a fixed crash stays fixed where clang is not installed.
 *
 *   replay_TARGET PATH...   each PATH a file or a directory of files
 *
 * Exits 0 after every input ran (a crash ends the process, and the test),
 * 2 when a path cannot be read or no input was found.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_target.h"

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            uint8_t *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    int failed = ferror(f) || !buf;
    fclose(f);
    if (failed) {
        free(buf);
        fprintf(stderr, "replay: cannot read %s\n", path);
        return -1;
    }
    /* An exact-size copy, so that reading past the input is an ASan error. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of a directory, in name order. */
static int run_dir(const char *dir, int *count) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open directory %s\n", dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char **grown = realloc(names, (n + 1) * sizeof *names);
        if (!grown) break;
        names = grown;
        names[n] = strdup(e->d_name);
        if (names[n]) n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (run_file(path) != 0) rc = -1;
            else (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv) {
    int count = 0, rc = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s does not exist\n", argv[i]);
            rc = 2;
        } else if (S_ISDIR(st.st_mode)) {
            if (run_dir(argv[i], &count) != 0) rc = 2;
        } else if (run_file(argv[i]) != 0) {
            rc = 2;
        } else {
            count++;
        }
    }
    printf("replay: %d inputs ran\n", count);
    return count == 0 ? 2 : rc;
}
