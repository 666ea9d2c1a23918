/* SPDX-License-Identifier: MIT */
/* Loading libzip (fmu_zip.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "fmu_zip.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static fmu_zip_api api;
static int loaded;
static char load_error[512];

static void load(void) {
    static const char *const file = "libzip.so.4";
    void *dl = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        snprintf(load_error, sizeof load_error, "cannot load libzip (%s): %s", file,
                 e ? e : "not found");
        return;
    }
    const struct {
        const char *name;
        void *slot;
    } fns[] = {
        {"zip_open", &api.open},
        {"zip_discard", &api.discard},
        {"zip_strerror", &api.strerror},
        {"zip_error_init_with_code", &api.error_init_with_code},
        {"zip_error_strerror", &api.error_strerror},
        {"zip_error_fini", &api.error_fini},
        {"zip_get_num_entries", &api.get_num_entries},
        {"zip_get_name", &api.get_name},
        {"zip_stat_init", &api.stat_init},
        {"zip_stat_index", &api.stat_index},
        {"zip_file_get_external_attributes", &api.file_get_external_attributes},
        {"zip_fopen_index", &api.fopen_index},
        {"zip_fread", &api.fread},
        {"zip_fclose", &api.fclose},
        {"zip_file_get_error", &api.file_get_error},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        void *sym = dlsym(dl, fns[i].name);
        if (!sym) {
            snprintf(load_error, sizeof load_error, "%s has no %s (libzip 1.2 or newer is needed)",
                     file, fns[i].name);
            dlclose(dl);
            return;
        }
        memcpy(fns[i].slot, &sym, sizeof sym); /* object pointer to function pointer */
    }
    loaded = 1;
}

const fmu_zip_api *fmu_zip_load(char *why, size_t n) {
    pthread_once(&once, load);
    if (loaded) return &api;
    snprintf(why, n, "%s", load_error);
    return NULL;
}
