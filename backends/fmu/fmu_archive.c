/* SPDX-License-Identifier: MIT */
/* Unpacking an FMU archive (fmu.h): every entry's name is checked before
 * anything is written (no absolute name, no "..", no empty component, no
 * backslash, no link or device, no name twice, the declared sizes within
 * the limit), then each file is written through folder descriptors
 * walked one component at a time from the scratch folder, so that no
 * name can reach outside it; the bytes written are counted against the
 * limit again, and libzip's CRC check turns a damaged entry into a read
 * error. On any failure the scratch folder is removed. */
#include "fmu.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmu_zip.h"
#include "tessera/tessera.h"

#define MAX_NAME_BYTES 1024 /* an entry's whole name */
#define MAX_DEPTH 64        /* components in one name */
#define COPY_CHUNK ((size_t)1 << 16)

typedef struct entry {
    char *norm;   /* the name without "." components or a trailing '/' */
    zip_uint64_t index;
    zip_uint64_t size;
    int is_dir;
} entry;

/* name, fit for a message: printable ASCII kept, the rest as '?', long
 * names cut. */
static const char *shown_name(const char *name, char *buf, size_t size) {
    size_t i = 0;
    for (; name[i] && i + 4 < size; i++) {
        unsigned char c = (unsigned char)name[i];
        buf[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (name[i]) {
        memcpy(buf + (i > 3 ? i - 3 : 0), "...", 3);
    }
    buf[i] = '\0';
    return buf;
}

/* Why name (an entry's) is refused, or NULL; on success *norm is the
 * normalised name (malloc'd, or NULL on no memory: *nomem set) and
 * *trailing_slash says whether it ended in '/'. */
static const char *check_name(const char *name, char **norm, int *trailing_slash, int *nomem) {
    *norm = NULL;
    *nomem = 0;
    size_t len = strlen(name);
    if (len == 0) return "has an empty name";
    if (len > MAX_NAME_BYTES) return "has a name longer than 1024 bytes";
    if (name[0] == '/') return "has an absolute name";
    if (strchr(name, '\\')) return "has a backslash in its name";
    *trailing_slash = name[len - 1] == '/';
    char *out = malloc(len + 1);
    if (!out) {
        *nomem = 1;
        return "out of memory";
    }
    size_t o = 0;
    int depth = 0;
    const char *p = name;
    while (*p) {
        const char *end = strchr(p, '/');
        size_t clen = end ? (size_t)(end - p) : strlen(p);
        int last = !end || end[1] == '\0';
        if (clen == 0) {
            free(out);
            return "has an empty component in its name";
        }
        if (clen == 2 && p[0] == '.' && p[1] == '.') {
            free(out);
            return "leaves the archive's folder";
        }
        if (!(clen == 1 && p[0] == '.')) {
            if (++depth > MAX_DEPTH) {
                free(out);
                return "is nested more than 64 folders deep";
            }
            if (o) out[o++] = '/';
            memcpy(out + o, p, clen);
            o += clen;
        }
        if (last) break;
        p = end + 1;
    }
    out[o] = '\0';
    if (o == 0) {
        free(out);
        return "names the archive's folder itself";
    }
    *norm = out;
    return NULL;
}

static int by_norm(const void *a, const void *b) {
    return strcmp(((const entry *)a)->norm, ((const entry *)b)->norm);
}

static void free_entries(entry *e, zip_int64_t count) {
    if (!e) return;
    for (zip_int64_t i = 0; i < count; i++) free(e[i].norm);
    free(e);
}

/* Everything below the folder open at dfd, removed without following a
 * link (the descriptor is consumed). 0, or -1 with errno. */
static int remove_below(int dfd, int depth) {
    DIR *d = fdopendir(dfd);
    if (!d) {
        int e = errno;
        close(dfd);
        errno = e;
        return -1;
    }
    int rc = 0, err = 0;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (!de) {
            if (errno) rc = -1, err = errno;
            break;
        }
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = -1, err = errno;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            if (depth >= 4 * MAX_DEPTH) {
                rc = -1, err = ELOOP;
                continue;
            }
            int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0 || remove_below(sub, depth + 1) != 0) {
                rc = -1, err = errno;
                continue;
            }
            if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) != 0) rc = -1, err = errno;
        } else if (unlinkat(dirfd(d), de->d_name, 0) != 0) {
            rc = -1, err = errno;
        }
    }
    closedir(d);
    errno = err;
    return rc;
}

/* The folder at path and everything in it: 0, or -1 with errno. */
static int remove_tree(const char *path) {
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) return errno == ENOENT ? 0 : -1;
    if (remove_below(dfd, 0) != 0) return -1;
    return rmdir(path);
}

/* The folder named by the first `depth` components of norm, below root,
 * made where missing: a descriptor, or -1 with errno (ENOTDIR when a
 * component is a file). */
static int walk_to_parent(int root, char *norm, int *last_at) {
    int cur = dup(root);
    if (cur < 0) return -1;
    char *p = norm;
    for (;;) {
        char *slash = strchr(p, '/');
        if (!slash) break;
        *slash = '\0';
        if (mkdirat(cur, p, 0700) != 0 && errno != EEXIST) {
            int e = errno;
            *slash = '/';
            close(cur);
            errno = e;
            return -1;
        }
        int next = openat(cur, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        *slash = '/';
        close(cur);
        if (next < 0) {
            errno = e == ELOOP ? ENOTDIR : e;
            return -1;
        }
        cur = next;
        p = slash + 1;
    }
    *last_at = (int)(p - norm);
    return cur;
}

static int write_all(int fd, const char *buf, size_t len) {
    while (len) {
        ssize_t w = write(fd, buf, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

typedef struct unpack_ctx {
    const char *path; /* the archive, for messages */
    const fmu_zip_api *z;
    zip_t *za;
    int root;         /* the scratch folder */
    uint64_t max_bytes, written;
    char *buf;        /* COPY_CHUNK bytes */
    char *why;
    size_t n;
} unpack_ctx;

static int extract_one(unpack_ctx *c, entry *e, const char *raw_name) {
    const fmu_zip_api *z = c->z;
    char shown[160];
    const char *sn = shown_name(raw_name, shown, sizeof shown);
    int last_at = 0;
    int parent = walk_to_parent(c->root, e->norm, &last_at);
    if (parent < 0) {
        int code = errno == ENOTDIR || errno == EEXIST ? TSR_E_LOAD : TSR_E_IO;
        snprintf(c->why, c->n, "'%s': entry '%s': cannot make its folder: %s", c->path, sn,
                 errno == ENOTDIR ? "a file of the archive has that name" : strerror(errno));
        return code;
    }
    const char *leaf = e->norm + last_at;
    if (e->is_dir) {
        int rc = 0;
        if (mkdirat(parent, leaf, 0700) != 0 && errno != EEXIST) {
            snprintf(c->why, c->n, "'%s': entry '%s': cannot make the folder: %s", c->path, sn,
                     strerror(errno));
            rc = TSR_E_IO;
        } else {
            /* one made before, for a file below it, is fine; a file is not */
            struct stat st;
            if (fstatat(parent, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
                snprintf(c->why, c->n, "'%s': entry '%s': a file of the archive has that name",
                         c->path, sn);
                rc = TSR_E_LOAD;
            }
        }
        close(parent);
        return rc;
    }
    /* binaries/ may hold programs the model starts, besides its library */
    mode_t mode = strncmp(e->norm, "binaries/", 9) == 0 ? 0700 : 0600;
    int fd = openat(parent, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    int open_errno = errno;
    close(parent);
    if (fd < 0) {
        snprintf(c->why, c->n, "'%s': entry '%s': cannot create the file: %s", c->path, sn,
                 open_errno == EEXIST ? "a folder of the archive has that name"
                                      : strerror(open_errno));
        return open_errno == EEXIST ? TSR_E_LOAD : TSR_E_IO;
    }
    zip_file_t *zf = z->fopen_index(c->za, e->index, 0);
    if (!zf) {
        snprintf(c->why, c->n, "'%s': entry '%s': cannot be read: %s", c->path, sn,
                 z->strerror(c->za));
        close(fd);
        return TSR_E_LOAD;
    }
    int rc = 0;
    uint64_t this_entry = 0;
    for (;;) {
        zip_int64_t got = z->fread(zf, c->buf, COPY_CHUNK);
        if (got < 0) {
            snprintf(c->why, c->n, "'%s': entry '%s' is damaged: %s", c->path, sn,
                     z->error_strerror(z->file_get_error(zf)));
            rc = TSR_E_LOAD;
            break;
        }
        if (got == 0) break;
        this_entry += (uint64_t)got;
        c->written += (uint64_t)got;
        if (this_entry > e->size) {
            snprintf(c->why, c->n, "'%s': entry '%s' holds more than the %llu bytes its header "
                     "declares", c->path, sn, (unsigned long long)e->size);
            rc = TSR_E_LOAD;
            break;
        }
        if (c->written > c->max_bytes) {
            snprintf(c->why, c->n, "'%s': entry '%s' takes the archive over %llu bytes unpacked",
                     c->path, sn, (unsigned long long)c->max_bytes);
            rc = TSR_E_LOAD;
            break;
        }
        if (write_all(fd, c->buf, (size_t)got) != 0) {
            snprintf(c->why, c->n, "'%s': entry '%s': cannot write: %s", c->path, sn,
                     strerror(errno));
            rc = TSR_E_IO;
            break;
        }
    }
    if (rc == 0 && this_entry != e->size) {
        snprintf(c->why, c->n, "'%s': entry '%s' is damaged: %llu bytes where its header says %llu",
                 c->path, sn, (unsigned long long)this_entry, (unsigned long long)e->size);
        rc = TSR_E_LOAD;
    }
    if (z->fclose(zf) != 0 && rc == 0) {
        snprintf(c->why, c->n, "'%s': entry '%s' is damaged", c->path, sn);
        rc = TSR_E_LOAD;
    }
    if (close(fd) != 0 && rc == 0) {
        snprintf(c->why, c->n, "'%s': entry '%s': cannot write: %s", c->path, sn, strerror(errno));
        rc = TSR_E_IO;
    }
    return rc;
}

/* Every entry checked, nothing written: 0 with *out_entries (sorted by
 * normalised name), or an error. */
static int check_entries(const fmu_zip_api *z, const char *path, zip_t *za, uint64_t max_bytes,
                         entry **out_entries, zip_int64_t *out_count, char *why, size_t n) {
    *out_entries = NULL;
    *out_count = 0;
    zip_int64_t count = z->get_num_entries(za, 0);
    if (count < 0) {
        snprintf(why, n, "'%s': cannot count its entries: %s", path, z->strerror(za));
        return TSR_E_LOAD;
    }
    if (count > FMU_MAX_ENTRIES) {
        snprintf(why, n, "'%s' has %lld entries, more than the %d allowed", path, (long long)count,
                 FMU_MAX_ENTRIES);
        return TSR_E_LOAD;
    }
    entry *es = calloc(count ? (size_t)count : 1, sizeof *es);
    if (!es) {
        snprintf(why, n, "out of memory");
        return TSR_E_NOMEM;
    }
    uint64_t declared = 0;
    int rc = 0, have_md = 0;
    char shown[160];
    zip_int64_t i = 0;
    for (; i < count; i++) {
        zip_stat_t st;
        z->stat_init(&st);
        if (z->stat_index(za, (zip_uint64_t)i, 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME) ||
            !(st.valid & ZIP_STAT_SIZE)) {
            snprintf(why, n, "'%s': entry %lld cannot be read: %s", path, (long long)i,
                     z->strerror(za));
            rc = TSR_E_LOAD;
            break;
        }
        const char *sn = shown_name(st.name, shown, sizeof shown);
        int trailing = 0, nomem = 0;
        const char *bad = check_name(st.name, &es[i].norm, &trailing, &nomem);
        if (bad) {
            if (nomem)
                snprintf(why, n, "out of memory");
            else
                snprintf(why, n, "'%s': entry '%s' %s", path, sn, bad);
            rc = nomem ? TSR_E_NOMEM : TSR_E_LOAD;
            break;
        }
        zip_uint8_t opsys = 0;
        zip_uint32_t attr = 0;
        if (z->file_get_external_attributes(za, (zip_uint64_t)i, 0, &opsys, &attr) != 0) {
            snprintf(why, n, "'%s': entry '%s': cannot read its attributes: %s", path, sn,
                     z->strerror(za));
            rc = TSR_E_LOAD;
            break;
        }
        mode_t type = opsys == ZIP_OPSYS_UNIX ? (mode_t)((attr >> 16) & S_IFMT) : 0;
        if (type != 0 && type != S_IFREG && type != S_IFDIR) {
            snprintf(why, n, "'%s': entry '%s' is %s, not a file or folder", path, sn,
                     type == S_IFLNK ? "a symbolic link" : "a device or other special file");
            rc = TSR_E_LOAD;
            break;
        }
        if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE) {
            snprintf(why, n, "'%s': entry '%s' is encrypted", path, sn);
            rc = TSR_E_LOAD;
            break;
        }
        es[i].index = (zip_uint64_t)i;
        es[i].is_dir = trailing || type == S_IFDIR;
        es[i].size = es[i].is_dir ? 0 : st.size;
        if (es[i].size > max_bytes || declared > max_bytes - es[i].size) {
            snprintf(why, n, "'%s': entry '%s' takes the archive over %llu bytes unpacked", path,
                     sn, (unsigned long long)max_bytes);
            rc = TSR_E_LOAD;
            break;
        }
        declared += es[i].size;
        if (!es[i].is_dir && strcmp(es[i].norm, "modelDescription.xml") == 0) have_md = 1;
    }
    if (rc != 0) {
        free_entries(es, count); /* the names not reached are NULL */
        return rc;
    }
    qsort(es, (size_t)count, sizeof *es, by_norm);
    for (i = 1; i < count; i++) {
        if (strcmp(es[i].norm, es[i - 1].norm) == 0) {
            snprintf(why, n, "'%s': entry '%s' is in the archive twice", path,
                     shown_name(es[i].norm, shown, sizeof shown));
            free_entries(es, count);
            return TSR_E_LOAD;
        }
    }
    if (!have_md) {
        snprintf(why, n, "'%s' has no modelDescription.xml at its top", path);
        free_entries(es, count);
        return TSR_E_LOAD;
    }
    *out_entries = es;
    *out_count = count;
    return 0;
}

static int use_folder(const char *path, fmu_unpacked *out, char *why, size_t n) {
    char *dir = realpath(path, NULL);
    if (!dir) {
        snprintf(why, n, "'%s': %s", path, strerror(errno));
        return errno == ENOMEM ? TSR_E_NOMEM : TSR_E_LOAD;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    int ok = dfd >= 0 && fstatat(dfd, "modelDescription.xml", &st, 0) == 0 && S_ISREG(st.st_mode);
    int e = errno;
    if (dfd >= 0) close(dfd);
    if (!ok) {
        snprintf(why, n, "'%s': the folder has no modelDescription.xml%s%s", path,
                 dfd < 0 ? ": " : "", dfd < 0 ? strerror(e) : "");
        free(dir);
        return TSR_E_LOAD;
    }
    out->dir = dir;
    out->owned = 0;
    return 0;
}

/* A fresh scratch folder: its absolute path (malloc'd), or NULL with why. */
static char *make_scratch(char *why, size_t n, int *code) {
    const char *t = getenv("TMPDIR");
    if (!t || !*t) t = "/tmp";
    char tmpl[PATH_MAX];
    int len = snprintf(tmpl, sizeof tmpl, "%s/tessera-fmu-XXXXXX", t);
    if (len < 0 || (size_t)len >= sizeof tmpl) {
        snprintf(why, n, "TMPDIR is too long a path");
        *code = TSR_E_IO;
        return NULL;
    }
    if (!mkdtemp(tmpl)) {
        snprintf(why, n, "cannot make a folder in '%s': %s", t, strerror(errno));
        *code = TSR_E_IO;
        return NULL;
    }
    char *abs = realpath(tmpl, NULL);
    if (!abs) {
        int e = errno;
        rmdir(tmpl);
        snprintf(why, n, "'%s': %s", tmpl, strerror(e));
        *code = e == ENOMEM ? TSR_E_NOMEM : TSR_E_IO;
        return NULL;
    }
    return abs;
}

int fmu_unpack(const char *path, uint64_t max_bytes, fmu_unpacked *out, char *why, size_t n) {
    out->dir = NULL;
    out->owned = 0;
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(why, n, "'%s': %s", path, strerror(errno));
        return errno == ENOENT || errno == ENOTDIR ? TSR_E_LOAD : TSR_E_IO;
    }
    if (S_ISDIR(st.st_mode)) return use_folder(path, out, why, n);
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, n, "'%s' is neither an FMU archive nor its folder", path);
        return TSR_E_LOAD;
    }
    const fmu_zip_api *z = fmu_zip_load(why, n);
    if (!z) return TSR_E_LOAD;
    int zerr = 0;
    zip_t *za = z->open(path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
    if (!za) {
        zip_error_t ze;
        z->error_init_with_code(&ze, zerr);
        /* ZIP_CHECKCONS refuses two entries of one name before any is listed. */
        snprintf(why, n, "'%s' is not a usable zip archive: %s%s", path, z->error_strerror(&ze),
                 zerr == ZIP_ER_EXISTS ? " (two of its entries have one name)" : "");
        z->error_fini(&ze);
        return zerr == ZIP_ER_MEMORY ? TSR_E_NOMEM : TSR_E_LOAD;
    }
    entry *es = NULL;
    zip_int64_t count = 0;
    int rc = check_entries(z, path, za, max_bytes, &es, &count, why, n);
    char *dir = NULL;
    unpack_ctx c = {.path = path, .z = z, .za = za, .root = -1, .max_bytes = max_bytes, .why = why, .n = n};
    if (rc == 0) dir = make_scratch(why, n, &rc);
    if (dir) {
        c.root = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (c.root < 0) {
            snprintf(why, n, "'%s': %s", dir, strerror(errno));
            rc = TSR_E_IO;
        } else if (!(c.buf = malloc(COPY_CHUNK))) {
            snprintf(why, n, "out of memory");
            rc = TSR_E_NOMEM;
        }
    }
    /* in the archive's order, so that reads go forward through the file */
    if (rc == 0) {
        entry **order = malloc((count ? (size_t)count : 1) * sizeof *order);
        if (!order) {
            snprintf(why, n, "out of memory");
            rc = TSR_E_NOMEM;
        } else {
            for (zip_int64_t i = 0; i < count; i++) order[es[i].index] = &es[i];
            for (zip_int64_t i = 0; i < count && rc == 0; i++) {
                const char *raw = z->get_name(za, order[i]->index, 0);
                rc = extract_one(&c, order[i], raw ? raw : order[i]->norm);
            }
            free(order);
        }
    }
    free(c.buf);
    if (c.root >= 0) close(c.root);
    free_entries(es, count);
    z->discard(za);
    if (rc != 0) {
        if (dir) {
            remove_tree(dir);
            free(dir);
        }
        return rc;
    }
    out->dir = dir;
    out->owned = 1;
    return 0;
}

void fmu_unpacked_free(fmu_unpacked *u) {
    if (!u) return;
    if (u->dir && u->owned) remove_tree(u->dir);
    free(u->dir);
    u->dir = NULL;
    u->owned = 0;
}
