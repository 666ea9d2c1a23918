/* SPDX-License-Identifier: MIT */
#include "binref_sink.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>

/* Files are named like Tesseract's, after a random UUID (version 4). */
static int uuid4(char out[37]) {
    unsigned char b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);
        if (n < 0) return -1;
        got += (size_t)n;
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
             b[13], b[14], b[15]);
    return 0;
}

static int open_writer(binref_sink *s, const payload_ctx *ctx, const char *path) {
    char prefix[37];
    if (uuid4(prefix) != 0)
        return payload_fail(ctx, TSR_E_IO, path, "no random bytes for a binref file name");
    binref_writer_opts o = {.dir = s->dir ? s->dir : ".", .prefix = prefix,
                            .max_file_bytes = s->max_file_bytes, .mode = s->mode, .io = s->io};
    char why[512];
    int rc = binref_writer_open(&s->writer, &o, why, sizeof why);
    if (rc != 0) return payload_fail(ctx, rc, path, "%s", why);
    return 0;
}

int binref_sink_add(binref_sink *s, const void *bytes, size_t n, void *owned,
                        const char **file, uint64_t *offset, const payload_ctx *ctx,
                        const char *path) {
    if (owned != NULL) {
        if (s->n_owned == s->cap_owned) {
            int cap = s->cap_owned ? s->cap_owned * 2 : 8;
            void **o = realloc(s->owned, (size_t)cap * sizeof *o);
            if (o == NULL) {
                free(owned);
                return payload_fail(ctx, TSR_E_NOMEM, path, "out of memory");
            }
            s->owned = o;
            s->cap_owned = cap;
        }
        s->owned[s->n_owned++] = owned;
    }
    int rc;
    if (s->writer == NULL && (rc = open_writer(s, ctx, path)) != 0) return rc;
    char why[512];
    rc = binref_writer_add(s->writer, bytes, n, file, offset, why, sizeof why);
    if (rc != 0) return payload_fail(ctx, rc, path, "%s", why);
    return 0;
}

int binref_sink_finish(binref_sink *s, bool ok, const payload_ctx *ctx) {
    int rc = 0;
    if (s->writer != NULL && ok) {
        char why[512];
        rc = binref_writer_flush(s->writer, why, sizeof why);
        if (rc != 0) payload_fail(ctx, rc, NULL, "%s", why);
    }
    binref_writer_close(s->writer, !ok || rc != 0);
    s->writer = NULL;
    for (int k = 0; k < s->n_owned; k++) free(s->owned[k]);
    free(s->owned);
    s->owned = NULL;
    s->n_owned = s->cap_owned = 0;
    return rc;
}
