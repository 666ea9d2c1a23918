/* SPDX-License-Identifier: MIT */
#include "binref_path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif
#endif

#include <tessera/tessera.h>

#include "binref_io.h"

/* The start of a trailing ":<digits>" group of s[0..len), or NULL. Digits
 * only, at least one, and something must stay before the colon. */
static const char *digit_group(const char *s, size_t len) {
    size_t i = len;
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') i--;
    if (i == len || i < 2 || s[i - 1] != ':') return NULL;
    return s + i - 1;
}

/* The start of a trailing ":-<digits>" or ":+<digits>" group of
 * s[0..len), or NULL: a signed number where a byte count belongs. */
static const char *signed_group(const char *s, size_t len) {
    size_t i = len;
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') i--;
    if (i == len || i < 3 || (s[i - 1] != '-' && s[i - 1] != '+') || s[i - 2] != ':') return NULL;
    return s + i - 2;
}

static int parse_number(const char *digits, size_t len, uint64_t *out) {
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned d = (unsigned)(digits[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int binref_ref_parse(const char *text, binref_ref *out, char *why, size_t why_size) {
    memset(out, 0, sizeof *out);
    size_t len = strlen(text);
    const char *g2 = digit_group(text, len);
    const char *g1 = g2 ? digit_group(text, (size_t)(g2 - text)) : NULL;
    size_t path_len = g1 ? (size_t)(g1 - text) : g2 ? (size_t)(g2 - text) : len;
    if (path_len == 0) {
        snprintf(why, why_size, "binref buffer \"%.64s\" names no file (\"<path>[:<offset>[:<size>]]\")",
                 text);
        return TSR_E_PAYLOAD;
    }
    if (g1 == NULL) {
        /* "x.bin:-8" would otherwise name a file "x.bin:-8". */
        const char *sg = signed_group(text, g2 ? (size_t)(g2 - text) : len);
        if (sg != NULL) {
            bool size = g2 == NULL && digit_group(text, (size_t)(sg - text)) != NULL;
            snprintf(why, why_size,
                     "binref %s in \"%.64s\" is invalid: it must be a whole number of bytes, 0 or "
                     "more",
                     size ? "size" : "offset", text);
            return TSR_E_PAYLOAD;
        }
    }
    const char *off = g1 ? g1 : g2;
    if (off != NULL) {
        const char *end = g1 ? g2 : text + len;
        if (parse_number(off + 1, (size_t)(end - off - 1), &out->offset) != 0) {
            snprintf(why, why_size, "binref offset in \"%.64s\" is too large", text);
            return TSR_E_PAYLOAD;
        }
    }
    if (g1 != NULL) {
        out->has_size = true;
        if (parse_number(g2 + 1, len - (size_t)(g2 - text) - 1, &out->size) != 0) {
            snprintf(why, why_size, "binref size in \"%.64s\" is too large", text);
            return TSR_E_PAYLOAD;
        }
    }
    out->path = strndup(text, path_len);
    if (out->path == NULL) {
        snprintf(why, why_size, "out of memory");
        return TSR_E_NOMEM;
    }
    return 0;
}

int binref_dir_open(const char *base_dir, binref_dir *out, char *why, size_t why_size) {
    const char *dir = base_dir != NULL && base_dir[0] != '\0' ? base_dir : ".";
    out->fd = -1;
    out->real = realpath(dir, NULL);
    int e = errno;
    if (out->real != NULL) {
        out->fd = open(out->real, O_PATH | O_DIRECTORY | O_CLOEXEC);
        e = errno;
    }
    if (out->fd < 0) {
        snprintf(why, why_size, "input directory '%s': %s", dir, strerror(e));
        binref_dir_close(out);
        return e == ENOMEM ? TSR_E_NOMEM : TSR_E_IO;
    }
    return 0;
}

void binref_dir_close(binref_dir *d) {
    if (d->fd >= 0) close(d->fd);
    d->fd = -1;
    free(d->real);
    d->real = NULL;
}

/* Is path (absolute, normalised) base itself or below it? */
static bool inside(const char *base, const char *path) {
    size_t n = strlen(base);
    if (n == 1 && base[0] == '/') return path[0] == '/';
    return strncmp(path, base, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Lexical normal form of an absolute path: no ".", "..", "//". */
static void normalise(const char *in, char *out) {
    size_t o = 0;
    out[o++] = '/';
    for (const char *p = in; *p;) {
        while (*p == '/') p++;
        const char *end = strchrnul(p, '/');
        size_t n = (size_t)(end - p);
        if (n == 0 || (n == 1 && p[0] == '.')) {
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (o > 1) {
                o--;
                while (o > 1 && out[o - 1] != '/') o--;
            }
        } else {
            if (o > 1 && out[o - 1] != '/') out[o++] = '/';
            memcpy(out + o, p, n);
            o += n;
            out[o++] = '/';
        }
        p = end;
    }
    if (o > 1 && out[o - 1] == '/') o--;
    out[o] = '\0';
}

/* The next component of *p ("" at the end), with *p moved past it and the
 * slashes before it. */
static const char *next_component(const char **p, size_t *n) {
    while (**p == '/') (*p)++;
    const char *c = *p;
    *p = strchrnul(c, '/');
    *n = (size_t)(*p - c);
    return c;
}

/*
 * What to open beneath the input directory for path (*rel; free()), or a
 * refusal of a path that lexically leaves it: an absolute path elsewhere,
 * or one whose '..' climb out. An absolute path inside loses the
 * directory's own components as written (they are real directories, so
 * what follows resolves as the kernel would resolve the whole), or, when
 * they are written with '..', its lexical form.
 */
static int relative_part(const char *base, const char *path, char **rel, char *why,
                         size_t why_size) {
    *rel = NULL;
    bool absolute = path[0] == '/';
    char *joined = NULL;
    if (absolute ? (joined = strdup(path)) == NULL : asprintf(&joined, "%s/%s", base, path) < 0) {
        snprintf(why, why_size, "out of memory");
        return TSR_E_NOMEM;
    }
    char *lexical = malloc(strlen(joined) + 2);
    if (lexical == NULL) {
        free(joined);
        snprintf(why, why_size, "out of memory");
        return TSR_E_NOMEM;
    }
    normalise(joined, lexical);
    free(joined);
    if (!inside(base, lexical)) {
        free(lexical);
        snprintf(why, why_size,
                 absolute ? "binref path '%s' is absolute and lies outside the input directory "
                            "'%s' (reading outside it is not allowed)"
                          : "binref path '%s' leads outside the input directory '%s' through "
                            "'..' (reading outside it is not allowed)",
                 path, base);
        return TSR_E_PAYLOAD;
    }
    const char *rest = path;
    if (absolute) {
        /* Match the directory's components against the path's. */
        const char *b = base, *p = path;
        for (;;) {
            size_t bn, pn;
            const char *bc = next_component(&b, &bn);
            if (bn == 0) break;
            const char *pc;
            do pc = next_component(&p, &pn);
            while (pn == 1 && pc[0] == '.');
            if (pn != bn || memcmp(pc, bc, bn) != 0) {
                p = NULL; /* '..' among them: take the lexical form */
                break;
            }
        }
        rest = p != NULL ? p : lexical + strlen(base);
    }
    while (*rest == '/') rest++;
    *rel = strdup(*rest ? rest : ".");
    free(lexical);
    if (*rel == NULL) {
        snprintf(why, why_size, "out of memory");
        return TSR_E_NOMEM;
    }
    return 0;
}

/* Flags of every binref read open: O_NONBLOCK so that a FIFO (or a
 * device) cannot block the open; cleared once fstat says regular file. */
#define READ_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

/* Symlinks followed in one resolution, as the kernel's limit. */
#define MAX_LINKS 40

/*
 * rel opened beneath dirfd without the kernel's help: one component at a
 * time with openat(O_NOFOLLOW) from descriptors of directories already
 * reached, '..' going back to the previous descriptor (never above
 * dirfd: EXDEV), a symlink's target read from the link opened (O_PATH) and
 * walked in its place when it is relative (an absolute one: EXDEV, as
 * RESOLVE_BENEATH), none when !follow (ELOOP). Returns the descriptor or
 * -1 with errno.
 */
static int walk_beneath(int dirfd, const char *rel, bool follow) {
    char *todo = strdup(rel);
    int *stack = NULL, depth = 0, cap = 0, links = 0, fd = -1, err = 0;
    if (todo == NULL) return errno = ENOMEM, -1;
    const char *p = todo;
    for (;;) {
        int cur = depth ? stack[depth - 1] : dirfd;
        size_t n;
        const char *c = next_component(&p, &n);
        if (n == 0) { /* the path ends at a directory */
            fd = openat(cur, ".", READ_FLAGS);
            err = errno;
            break;
        }
        bool last = true;
        for (const char *q = p; *q; q++) last = last && *q == '/';
        char name[NAME_MAX + 1];
        if (n > NAME_MAX) {
            err = ENAMETOOLONG;
            break;
        }
        memcpy(name, c, n);
        name[n] = '\0';
        if (strcmp(name, ".") == 0) continue;
        if (strcmp(name, "..") == 0) {
            if (depth == 0) {
                err = EXDEV;
                break;
            }
            close(stack[--depth]);
            continue;
        }
        int link = -1;
        if (last) {
            /* A trailing slash asks for a directory, as for the kernel. */
            fd = openat(cur, name, READ_FLAGS | O_NOFOLLOW | (*p ? O_DIRECTORY : 0));
            if (fd >= 0) break;
            err = errno;
            if (err != ELOOP) break;
            link = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        } else {
            link = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        }
        if (link < 0) {
            err = errno;
            break;
        }
        struct stat st;
        if (fstat(link, &st) != 0) {
            err = errno;
            close(link);
            break;
        }
        if (S_ISDIR(st.st_mode) && !last) {
            if (depth == cap) {
                int c2 = cap ? cap * 2 : 8;
                int *s2 = realloc(stack, (size_t)c2 * sizeof *s2);
                if (s2 == NULL) {
                    err = ENOMEM;
                    close(link);
                    break;
                }
                stack = s2;
                cap = c2;
            }
            stack[depth++] = link;
            continue;
        }
        if (!S_ISLNK(st.st_mode)) {
            close(link);
            if (!last) {
                err = ENOTDIR;
                break;
            }
            /* The last one was a symlink and is not any more: again. */
            if (++links > MAX_LINKS) {
                err = ELOOP;
                break;
            }
            p = c;
            continue;
        }
        if (!follow || ++links > MAX_LINKS) {
            close(link);
            err = ELOOP;
            break;
        }
        char target[PATH_MAX];
        ssize_t tn = readlinkat(link, "", target, sizeof target - 1);
        err = errno;
        close(link);
        if (tn <= 0) {
            if (tn == 0) err = ENOENT;
            break;
        }
        target[tn] = '\0';
        if (target[0] == '/') {
            err = EXDEV;
            break;
        }
        /* The target walked in the link's place, then what followed it. */
        char *next = NULL;
        if (asprintf(&next, "%s%s", target, p) < 0) {
            err = ENOMEM;
            break;
        }
        free(todo);
        todo = next;
        p = todo;
    }
    while (depth > 0) close(stack[--depth]);
    free(stack);
    free(todo);
    if (fd < 0) errno = err;
    return fd;
}

#if defined(SYS_openat2) && defined(RESOLVE_BENEATH)
/* Set when the kernel has no openat2 (ENOSYS) or refuses its arguments. */
static atomic_int no_openat2;
#endif

/* rel opened beneath dirfd, following symlinks only while they stay
 * beneath it (when follow), in one step. Returns the descriptor or -1 with
 * errno: EXDEV for a way out. */
static int open_beneath(int dirfd, const char *rel, bool follow) {
#if defined(SYS_openat2) && defined(RESOLVE_BENEATH)
    if (!atomic_load_explicit(&no_openat2, memory_order_relaxed)) {
        struct open_how how = {.flags = READ_FLAGS,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS |
                                          (follow ? 0 : RESOLVE_NO_SYMLINKS)};
        for (int tries = 0;; tries++) {
            long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
            if (fd >= 0) return (int)fd;
            /* A rename raced a '..' of the resolution: the kernel could not
             * prove it stayed beneath, and asks for another try. */
            if (errno == EAGAIN && tries < 64) continue;
            if (errno == ENOSYS || errno == E2BIG || errno == EINVAL)
                atomic_store_explicit(&no_openat2, 1, memory_order_relaxed);
            else if (errno != EPERM) /* EPERM: a seccomp filter, say */
                return -1;
            break;
        }
    }
#endif
    return walk_beneath(dirfd, rel, follow);
}

int binref_open(const binref_dir *d, const char *path, bool allow_escape, int *fd,
                    uint64_t *size, char *why, size_t why_size) {
    *fd = -1;
    *size = 0;
    int f, e;
    if (allow_escape) {
        /* Anywhere: an absolute path ignores the directory's descriptor. */
        f = openat(d->fd, path, READ_FLAGS);
        e = errno;
    } else {
        char *rel;
        int rc = relative_part(d->real, path, &rel, why, why_size);
        if (rc != 0) return rc;
        f = open_beneath(d->fd, rel, true);
        e = errno;
        if (f < 0 && e == EXDEV) {
            /* A symlink led out, or it was absolute (never followed
             * beneath). Where to does the message say; one that stays
             * inside is opened by its real path, no symlink followed. */
            char *joined = NULL, *real = NULL;
            if (asprintf(&joined, "%s/%s", d->real, rel) >= 0) real = realpath(joined, NULL);
            free(joined);
            if (real != NULL && inside(d->real, real)) {
                const char *r = real + strlen(d->real);
                while (*r == '/') r++;
                f = open_beneath(d->fd, *r ? r : ".", false);
                e = errno;
                if (f < 0 && (e == ELOOP || e == EXDEV)) {
                    /* Changed while it was looked at. */
                    free(real);
                    real = NULL;
                    e = EXDEV;
                }
            }
            if (f < 0 && e == EXDEV) {
                if (real != NULL && !inside(d->real, real))
                    snprintf(why, why_size,
                             "binref path '%s' leads outside the input directory '%s' through a "
                             "symlink (to '%s'; reading outside it is not allowed)",
                             path, d->real, real);
                else
                    snprintf(why, why_size,
                             "binref path '%s' leads outside the input directory '%s' through a "
                             "symlink (reading outside it is not allowed)",
                             path, d->real);
                free(real);
                free(rel);
                return TSR_E_PAYLOAD;
            }
            free(real);
        }
        free(rel);
    }
    if (f < 0) {
        snprintf(why, why_size, "cannot open binref file '%s' (in '%s'): %s", path, d->real,
                 strerror(e));
        return e == ENOMEM ? TSR_E_NOMEM : TSR_E_IO;
    }
    int rc = binref_fd_regular(f, path, NULL, size, why, why_size);
    if (rc != 0) {
        close(f);
        return rc;
    }
    *fd = f;
    return 0;
}
