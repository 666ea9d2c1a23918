/* SPDX-License-Identifier: MIT */
/* `tessera init`: the templates of a kind written into a new folder. Each
 * file is created with O_EXCL, so nothing existing is ever overwritten,
 * and a failure part way (a full disk, a folder made read-only meanwhile)
 * removes every file and folder this run made, leaving the tree as it was. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "init_templates.h"
#include "init_write.h"

#define PLACEHOLDER "{{name}}"
/* What this run made, undone in reverse order on failure. */
typedef struct made_entry {
    char *path;
    bool is_dir;
} made_entry;

typedef struct made_list {
    made_entry *at;
    int n, cap;
} made_list;

static int remember(made_list *m, const char *path, bool is_dir) {
    if (m->n == m->cap) {
        int cap = m->cap ? 2 * m->cap : 32;
        made_entry *grown = realloc(m->at, (size_t)cap * sizeof *grown);
        if (grown == NULL) return -1;
        m->at = grown;
        m->cap = cap;
    }
    char *copy = strdup(path);
    if (copy == NULL) return -1;
    m->at[m->n++] = (made_entry){.path = copy, .is_dir = is_dir};
    return 0;
}

static void undo(made_list *m) {
    for (int k = m->n - 1; k >= 0; k--) {
        const made_entry *e = &m->at[k];
        if (e->is_dir ? rmdir(e->path) != 0 : unlink(e->path) != 0)
            cli_error("init", "cannot remove '%s' again: %s", e->path, strerror(errno));
    }
}

static void forget(made_list *m) {
    for (int k = 0; k < m->n; k++) free(m->at[k].path);
    free(m->at);
    *m = (made_list){.n = 0};
}

/* text with every PLACEHOLDER replaced by name; *out_len its length. */
static char *substitute(const char *text, size_t len, const char *name, size_t *out_len) {
    size_t hole = strlen(PLACEHOLDER), name_len = strlen(name), count = 0;
    for (const char *p = text; (p = strstr(p, PLACEHOLDER)) != NULL; p += hole) count++;
    size_t size = len - count * hole + count * name_len;
    char *out = malloc(size + 1);
    if (out == NULL) return NULL;
    char *w = out;
    for (const char *p = text;;) {
        const char *at = strstr(p, PLACEHOLDER);
        size_t keep = at ? (size_t)(at - p) : strlen(p);
        memcpy(w, p, keep);
        w += keep;
        if (at == NULL) break;
        memcpy(w, name, name_len);
        w += name_len;
        p = at + hole;
    }
    *w = '\0';
    *out_len = size;
    return out;
}

/* mkdir -p path, remembering each folder made (mode 0777 less the umask,
 * as mkdir(1) makes them). */
static int make_dirs(made_list *m, const char *path) {
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        cli_error("init", "path too long: '%s'", path);
        return -1;
    }
    for (char *p = buf + 1;; p++) {
        bool end = *p == '\0';
        if (*p != '/' && !end) continue;
        *p = '\0';
        if (mkdir(buf, 0777) == 0) {
            if (remember(m, buf, true) != 0) {
                cli_error("init", "out of memory");
                return -1;
            }
        } else if (errno != EEXIST) {
            cli_error("init", "cannot create the folder '%s': %s", buf, strerror(errno));
            return -1;
        }
        if (end) return 0;
        *p = '/';
    }
}

static int write_all(int fd, const char *text, size_t len) {
    while (len > 0) {
        ssize_t w = write(fd, text, len);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        text += w;
        len -= (size_t)w;
    }
    return 0;
}

/* One file, created (never over an existing one) and written whole. */
static int write_file(made_list *m, const char *path, const char *text, size_t len) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        cli_error("init", "cannot create '%s': %s", path, strerror(errno));
        return -1;
    }
    if (remember(m, path, false) != 0) {
        close(fd);
        unlink(path);
        cli_error("init", "out of memory");
        return -1;
    }
    int failed = write_all(fd, text, len) != 0;
    int saved = errno;
    /* close reports what a delayed write-back could not store (NFS, quota) */
    if (close(fd) != 0 && !failed) {
        failed = 1;
        saved = errno;
    }
    if (failed) cli_error("init", "cannot write '%s': %s", path, strerror(saved));
    return failed ? -1 : 0;
}

/* Template t, its path and text with the name in, written below dir. */
static int write_template(made_list *m, const char *dir, const init_template *t,
                          const char *name) {
    size_t rel_len = 0, text_len = 0;
    char *rel = substitute(t->path, strlen(t->path), name, &rel_len);
    char *text = substitute(t->text, t->len, name, &text_len);
    char path[PATH_MAX];
    int rc = -1;
    if (rel == NULL || text == NULL) {
        cli_error("init", "out of memory");
    } else if (snprintf(path, sizeof path, "%s/%s", dir, rel) >= (int)sizeof path) {
        cli_error("init", "path too long: '%s/%s'", dir, rel);
    } else {
        char *slash = strrchr(path + strlen(dir) + 1, '/');
        rc = 0;
        if (slash != NULL) { /* a subfolder such as test_cases/ */
            *slash = '\0';
            rc = make_dirs(m, path);
            *slash = '/';
        }
        if (rc == 0) rc = write_file(m, path, text, text_len);
    }
    free(rel);
    free(text);
    return rc;
}

int init_write(const char *dir, const char *kind, const char *name) {
    made_list m = {.at = NULL};
    int rc = make_dirs(&m, dir);
    for (size_t k = 0; rc == 0 && k < init_template_count; k++) {
        const init_template *t = &init_templates[k];
        if (strcmp(t->kind, kind) == 0 || strcmp(t->kind, "common") == 0)
            rc = write_template(&m, dir, t, name);
    }
    if (rc != 0) {
        undo(&m);
        fprintf(stderr, "tessera init: what it had written is removed again\n");
    } else {
        /* Only once every file is in place: a failure lists nothing. */
        for (int k = 0; k < m.n; k++)
            if (!m.at[k].is_dir) fprintf(cli_out, "wrote %s\n", m.at[k].path);
    }
    forget(&m);
    return rc == 0 ? CLI_OK : CLI_OUTPUT;
}
