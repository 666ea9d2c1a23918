/* SPDX-License-Identifier: MIT */
/* Loading libcurl (http_curl.h). */
#include "http_curl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static curl_api api;
static const curl_api *loaded;
static char load_error[256];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* The SONAME of libcurl since 7.16, and Debian's GnuTLS build of it. */
static const char *const names[] = {"libcurl.so.4", "libcurl-gnutls.so.4"};

static int take(void *dl, const char *file, const char *name, void *slot) {
    void *sym = dlsym(dl, name);
    if (!sym) {
        snprintf(load_error, sizeof load_error, "%s has no %s (libcurl 7.66 or newer is needed)",
                 file, name);
        return -1;
    }
    memcpy(slot, &sym, sizeof sym); /* a data pointer into a function pointer */
    return 0;
}

static void load(void) {
    void *dl = NULL;
    const char *file = names[0];
    for (size_t i = 0; !dl && i < sizeof names / sizeof names[0]; i++)
        dl = dlopen(file = names[i], RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        snprintf(load_error, sizeof load_error, "cannot load libcurl (%s): %s", names[0],
                 e ? e : "not found");
        return;
    }
    const struct {
        const char *name;
        void *slot;
    } fns[] = {
        {"curl_global_init", &api.global_init},
        {"curl_global_cleanup", &api.global_cleanup},
        {"curl_easy_init", &api.easy_init},
        {"curl_easy_cleanup", &api.easy_cleanup},
        {"curl_easy_setopt", &api.easy_setopt},
        {"curl_easy_getinfo", &api.easy_getinfo},
        {"curl_easy_strerror", &api.easy_strerror},
        {"curl_multi_init", &api.multi_init},
        {"curl_multi_cleanup", &api.multi_cleanup},
        {"curl_multi_add_handle", &api.multi_add_handle},
        {"curl_multi_remove_handle", &api.multi_remove_handle},
        {"curl_multi_perform", &api.multi_perform},
        {"curl_multi_poll", &api.multi_poll},
        {"curl_multi_info_read", &api.multi_info_read},
        {"curl_multi_strerror", &api.multi_strerror},
        {"curl_slist_append", &api.slist_append},
        {"curl_slist_free_all", &api.slist_free_all},
        {"curl_url", &api.url},
        {"curl_url_cleanup", &api.url_cleanup},
        {"curl_url_set", &api.url_set},
        {"curl_url_get", &api.url_get},
        {"curl_free", &api.free},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (take(dl, file, fns[i].name, fns[i].slot) != 0) return; /* dl stays: harmless */
    void *sym = dlsym(dl, "curl_url_strerror");
    memcpy(&api.url_strerror, &sym, sizeof sym);
    loaded = &api;
}

const curl_api *curl_load(char *why, size_t n) {
    pthread_once(&load_once, load);
    if (!loaded) snprintf(why, n, "%s", load_error);
    return loaded;
}

const curl_api *curl_loaded(void) { return loaded; }
