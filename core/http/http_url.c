/* SPDX-License-Identifier: MIT */
/* A server's URLs (http_url.h), parsed by libcurl's URL API: a route's URL
 * from the one the host gave (a path prefix such as a proxy's is kept, a
 * query such as ?run_id= too, the fragment dropped), the fragment itself,
 * and the same URLs without their password for messages. */
#include "http_url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_curl.h"
#include "tessera/tessera.h"

/* u's URL as a malloc'd string; NULL when out of memory. */
static char *url_text(const curl_api *cu, CURLU *u) {
    char *text = NULL;
    if (cu->url_get(u, CURLUPART_URL, &text, 0) != CURLUE_OK) return NULL;
    char *copy = strdup(text);
    cu->free(text);
    return copy;
}

static int url_failed(CURLUcode uc, char *why, size_t n) {
    if (uc == CURLUE_OUT_OF_MEMORY) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    const curl_api *cu = curl_loaded();
    if (cu->url_strerror) snprintf(why, n, "not a URL Tessera can reach (%s)", cu->url_strerror(uc));
    else snprintf(why, n, "not a URL Tessera can reach (libcurl's URL error %d)", (int)uc);
    return TSR_E_ARGUMENT;
}

int http_url_join(const char *base, const char *path, char **url, char **shown, char *why,
                    size_t n) {
    *url = *shown = NULL;
    const curl_api *cu = curl_loaded();
    CURLU *u = cu->url();
    if (!u) return url_failed(CURLUE_OUT_OF_MEMORY, why, n);
    char *old = NULL, *joined = NULL;
    CURLUcode uc = cu->url_set(u, CURLUPART_URL, base, 0);
    if (uc == CURLUE_OK) uc = cu->url_set(u, CURLUPART_FRAGMENT, NULL, 0);
    if (uc == CURLUE_OK) uc = cu->url_get(u, CURLUPART_PATH, &old, 0);
    if (uc == CURLUE_OK) {
        size_t keep = strlen(old);
        while (keep > 0 && old[keep - 1] == '/') keep--; /* "http://h:8000/" + "/apply" */
        size_t len = keep + strlen(path) + 1;
        joined = malloc(len);
        if (joined) snprintf(joined, len, "%.*s%s", (int)keep, old, path);
        uc = joined ? cu->url_set(u, CURLUPART_PATH, joined, 0) : CURLUE_OUT_OF_MEMORY;
    }
    if (uc == CURLUE_OK && !(*url = url_text(cu, u))) uc = CURLUE_OUT_OF_MEMORY;
    if (uc == CURLUE_OK) uc = cu->url_set(u, CURLUPART_PASSWORD, NULL, 0);
    if (uc == CURLUE_OK && !(*shown = url_text(cu, u))) uc = CURLUE_OUT_OF_MEMORY;
    cu->free(old);
    free(joined);
    cu->url_cleanup(u);
    if (uc == CURLUE_OK) return 0;
    free(*url);
    free(*shown);
    *url = *shown = NULL;
    return url_failed(uc, why, n);
}

int http_url_fragment(const char *base, char **fragment, char *why, size_t n) {
    *fragment = NULL;
    const curl_api *cu = curl_loaded();
    CURLU *u = cu->url();
    if (!u) return url_failed(CURLUE_OUT_OF_MEMORY, why, n);
    char *text = NULL;
    CURLUcode uc = cu->url_set(u, CURLUPART_URL, base, 0);
    if (uc == CURLUE_OK) {
        uc = cu->url_get(u, CURLUPART_FRAGMENT, &text, CURLU_URLDECODE);
        if (uc == CURLUE_NO_FRAGMENT) uc = CURLUE_OK; /* none (or an empty one): "" */
    }
    if (uc == CURLUE_OK && !(*fragment = strdup(text ? text : ""))) uc = CURLUE_OUT_OF_MEMORY;
    cu->free(text);
    cu->url_cleanup(u);
    return uc == CURLUE_OK ? 0 : url_failed(uc, why, n);
}
