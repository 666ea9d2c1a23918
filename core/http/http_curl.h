/* SPDX-License-Identifier: MIT */
/* libcurl, loaded when the first component at a URL is opened rather than
 * linked: libtessera is in every worker process and every Python host,
 * and libcurl brings some thirty libraries (OpenSSL, GnuTLS, Kerberos,
 * LDAP, ...) and ~6 MB of resident memory with it, which a process that
 * opens no URL should not pay (as libtessera never links libpython).
 * Built against libcurl's headers; the library is libcurl.so.4 (or
 * libcurl-gnutls.so.4), 7.66 or newer. */
#ifndef TESSERA_CORE_HTTP_CURL_H
#define TESSERA_CORE_HTTP_CURL_H

#include <stddef.h>

#include <curl/curl.h>

typedef struct curl_api {
    CURLcode (*global_init)(long flags);
    void (*global_cleanup)(void);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *e);
    CURLcode (*easy_setopt)(CURL *e, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *e, CURLINFO info, ...);
    const char *(*easy_strerror)(CURLcode code);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *m);
    CURLMcode (*multi_add_handle)(CURLM *m, CURL *e);
    CURLMcode (*multi_remove_handle)(CURLM *m, CURL *e);
    CURLMcode (*multi_perform)(CURLM *m, int *running);
    CURLMcode (*multi_poll)(CURLM *m, struct curl_waitfd *extra, unsigned n_extra, int ms,
                            int *ready);
    CURLMsg *(*multi_info_read)(CURLM *m, int *left);
    const char *(*multi_strerror)(CURLMcode code);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *line);
    void (*slist_free_all)(struct curl_slist *list);
    CURLU *(*url)(void);
    void (*url_cleanup)(CURLU *u);
    CURLUcode (*url_set)(CURLU *u, CURLUPart part, const char *text, unsigned int flags);
    CURLUcode (*url_get)(const CURLU *u, CURLUPart part, char **text, unsigned int flags);
    void (*free)(void *p);
    const char *(*url_strerror)(CURLUcode code); /* 7.80 on; NULL before */
} curl_api;

/* libcurl's functions, loaded at the first call (thread-safe; never
 * unloaded: its TLS library may have registered exit handlers). NULL
 * with the cause in why when it cannot be loaded. */
const curl_api *curl_load(char *why, size_t n);
/* The same once loaded (a component is open): never NULL then. */
const curl_api *curl_loaded(void);

#endif
