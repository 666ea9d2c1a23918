/* SPDX-License-Identifier: MIT */
/* A server's URLs from the one the host gave (http_url.c). libcurl must be
 * up (http_global_up). */
#ifndef TESSERA_CORE_HTTP_URL_H
#define TESSERA_CORE_HTTP_URL_H

#include <stddef.h>

/* base with its path extended by path ("http://h:8000/p" + "/apply") and
 * its fragment dropped (*url), and the same without a password (*shown),
 * both malloc'd. 0, or TSR_E_ARGUMENT / TSR_E_NOMEM with why. */
int http_url_join(const char *base, const char *path, char **url, char **shown, char *why,
                  size_t n);
/* base's fragment, percent-decoded, malloc'd ("" when it has none or an
 * empty one). 0, or TSR_E_ARGUMENT / TSR_E_NOMEM with why. */
int http_url_fragment(const char *base, char **fragment, char *why, size_t n);

#endif
