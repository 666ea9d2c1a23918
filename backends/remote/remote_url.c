/* SPDX-License-Identifier: MIT */
/* Which paths the remote backend claims (each endpoint's URL is made by
 * core/http/http_url.c). */
#include <strings.h>

#include "remote.h"

int remote_url_claims(const char *path) {
    return strncasecmp(path, "http://", 7) == 0 || strncasecmp(path, "https://", 8) == 0;
}

