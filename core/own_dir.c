/* SPDX-License-Identifier: MIT */
/* Where this code is installed: backends find their helpers (the worker
 * executable, the Python bridge) relative to it. */
#include <dlfcn.h>
#include <libgen.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/backend.h"

void backend_own_dir(char *dir, size_t n) {
    Dl_info info;
    struct link_map *map = NULL;
    dir[0] = '\0';
    if (!dladdr1((void *)tsr_open, &info, (void **)&map, RTLD_DL_LINKMAP)) return;
    char path[4096] = "";
    if (map && map->l_name[0] == '\0') { /* the main program */
        ssize_t len = readlink("/proc/self/exe", path, sizeof path - 1);
        path[len > 0 ? len : 0] = '\0';
    }
    if (!path[0] && info.dli_fname && strchr(info.dli_fname, '/'))
        snprintf(path, sizeof path, "%s", info.dli_fname);
    if (path[0]) snprintf(dir, n, "%s", dirname(path));
}
