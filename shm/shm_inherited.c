/* SPDX-License-Identifier: MIT */
/* A worker forked from its host drops the host's shared memory: the
 * mappings of the host's arenas and channels, found by their memfd label
 * in /proc/self/maps. Without this the worker, and what its plugin forks,
 * could write into every component's arena of the host. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "arena.h"

#define INHERITED_STEM "/memfd:tessera-"

/* Ranges are gathered before any is unmapped (unmapping while reading
 * the maps file could skip a line); more than fit take another pass. */
enum { RANGES_PER_PASS = 256 };

int shm_unmap_inherited(char *why, size_t n) {
    for (;;) {
        FILE *f = fopen("/proc/self/maps", "re");
        if (!f) {
            snprintf(why, n, "cannot read /proc/self/maps: %s", strerror(errno));
            return -1;
        }
        unsigned long lo[RANGES_PER_PASS], hi[RANGES_PER_PASS];
        int k = 0, more = 0;
        char line[4096 + 256];
        while (fgets(line, sizeof line, f)) {
            if (!strchr(line, '\n')) { /* longer than any path: the rest of it is skipped */
                int c;
                while ((c = fgetc(f)) != EOF && c != '\n') {
                }
                continue;
            }
            unsigned long a, b;
            char path[4096];
            path[0] = '\0';
            if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %4095s", &a, &b, path) < 2) continue;
            if (strncmp(path, INHERITED_STEM, strlen(INHERITED_STEM)) != 0) continue;
            if (k == RANGES_PER_PASS) {
                more = 1;
                break;
            }
            lo[k] = a;
            hi[k++] = b;
        }
        fclose(f);
        for (int i = 0; i < k; i++)
            if (munmap((void *)lo[i], hi[i] - lo[i]) != 0) {
                snprintf(why, n, "cannot unmap the host's shared memory at %#lx: %s", lo[i],
                         strerror(errno));
                return -1;
            }
        if (!more) return 0;
    }
}
