/* SPDX-License-Identifier: MIT */
/* The bearer token of a server that asks for one (`tessera serve
 * --token-file`): read from a file named by the configuration key
 * token_file, never from the command line or the URL, so that it shows
 * in no process list and no message. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remote.h"

#define TOKEN_MAX 4096
#define BEARER "Authorization: Bearer "

static const char *config_value(const struct tsr_options *o, const char *key) {
    for (int32_t i = 0; i < o->n_config; i++)
        if (strcmp(o->config[i].key, key) == 0) return o->config[i].value;
    return NULL;
}

/* Read at most TOKEN_MAX bytes (one more tells a longer file). -1 with
 * errno on failure. */
static ssize_t read_all(int fd, char *buf, size_t cap) {
    size_t got = 0;
    while (got < cap) {
        ssize_t r = read(fd, buf + got, cap - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

static int bad_token(const char *file, const char *what, char *why, size_t n) {
    snprintf(why, n, "token_file '%s' %s", file, what);
    return TSR_E_ARGUMENT;
}

int remote_token_header(const struct tsr_options *o, char **header, char *why, size_t n) {
    *header = NULL;
    const char *file = config_value(o, "token_file");
    if (!file) return 0;
    char buf[TOKEN_MAX + 1];
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read_all(fd, buf, sizeof buf) : -1;
    int saved = errno;
    if (fd >= 0) close(fd);
    if (got < 0) {
        snprintf(why, n, "cannot read token_file '%s': %s", file, strerror(saved));
        return TSR_E_IO;
    }
    size_t len = (size_t)got;
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ' ||
                       buf[len - 1] == '\t'))
        len--;
    int rc = 0;
    if (got > TOKEN_MAX) rc = bad_token(file, "holds more than 4096 bytes", why, n);
    else if (len == 0) rc = bad_token(file, "is empty", why, n);
    /* Printable ASCII only: a line break would start another header. */
    for (size_t i = 0; !rc && i < len; i++)
        if (buf[i] < 0x21 || buf[i] > 0x7e)
            rc = bad_token(file, "holds a character a bearer token cannot have", why, n);
    if (!rc && !(*header = malloc(sizeof BEARER + len))) {
        snprintf(why, n, "out of memory");
        rc = TSR_E_NOMEM;
    }
    if (!rc) {
        memcpy(*header, BEARER, sizeof BEARER - 1);
        memcpy(*header + sizeof BEARER - 1, buf, len);
        (*header)[sizeof BEARER - 1 + len] = '\0';
    }
    explicit_bzero(buf, sizeof buf);
    return rc;
}

void remote_token_free(char *header) {
    if (!header) return;
    explicit_bzero(header, strlen(header));
    free(header);
}
