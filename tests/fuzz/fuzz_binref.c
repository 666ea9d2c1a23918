/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: a binref buffer string, "<path>[:<offset>[:<size>]]", as a
 * payload gives it: parsed (binref_ref_parse), then resolved beneath an
 * input directory and opened, escaping refused (binref_open). Every
 * input ends in an error with a message or in a descriptor of one of the
 * directory's two regular files: never a crash, and never a way out (by
 * '..', an absolute path or a symlink that points outside, all of which
 * the directory holds).
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
#include "codecs/binref_path.h"

static char dir[64];
static binref_dir base = {.fd = -1};
static struct stat inside_files[2];

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
    binref_dir_close(&base);
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
        if (stat(path, &inside_files[i]) != 0) abort();
    }
    snprintf(path, sizeof path, "%s/link", dir);
    if (symlink("/etc/hostname", path) != 0) abort();
    snprintf(path, sizeof path, "%s/sub/up", dir);
    if (symlink("..", path) != 0) abort();
    if (binref_dir_open(dir, &base, why, sizeof why) != 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (base.fd < 0) setup();
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    binref_ref ref = {0};
    char why[512] = "";
    if (binref_ref_parse(text, &ref, why, sizeof why) != 0) {
        if (why[0] == '\0') __builtin_trap();
    } else {
        int fd = -1;
        uint64_t file_size = 0;
        struct stat st;
        why[0] = '\0';
        if (binref_open(&base, ref.path, false, &fd, &file_size, why, sizeof why) == 0) {
            /* one of the files inside, whatever the path said */
            if (fd < 0 || fstat(fd, &st) != 0 || file_size != 16 ||
                !((st.st_dev == inside_files[0].st_dev && st.st_ino == inside_files[0].st_ino) ||
                  (st.st_dev == inside_files[1].st_dev && st.st_ino == inside_files[1].st_ino)))
                __builtin_trap();
            close(fd);
        } else if (why[0] == '\0' || fd != -1) {
            __builtin_trap();
        }
    }
    free(ref.path);
    free(text);
    return 0;
}
