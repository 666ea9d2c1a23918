/* SPDX-License-Identifier: MIT */
/* The interpreter a Python component runs under, in order: the option
 * python; $TESSERA_PYTHON (also how a host tells its workers what it
 * resolved); an environment built from the folder's
 * tesseract_requirements.txt (unless python_env=none); the Python Tessera
 * was built with. Environments are made once with uv (pip's venv when uv
 * is absent), with the requirements and the Tesseract runtime the
 * component imports, and kept under $TESSERA_ENV_DIR by the hash of what
 * went into them; a lock lets many processes open one component at once. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "python_env.h"

#define REQUIREMENTS "tesseract_requirements.txt"
#define MAX_REQUIREMENTS (1u << 20)

/* Where environments are kept; created (0700) if missing. */
static int envs_root(char *root, size_t n, char *why, size_t wn) {
    const char *given = getenv("TESSERA_ENV_DIR");
    const char *cache = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (given && *given)
        snprintf(root, n, "%s", given);
    else if (cache && *cache)
        snprintf(root, n, "%s/tessera/envs", cache);
    else if (home && *home)
        snprintf(root, n, "%s/.cache/tessera/envs", home);
    else
        snprintf(root, n, "/tmp/tessera-envs-%d", (int)getuid());
    /* mkdir -p */
    for (char *p = root + 1;; p++) {
        char c = *p;
        if (c != '/' && c != '\0') continue;
        *p = '\0';
        int ok = mkdir(root, 0700) == 0 || errno == EEXIST;
        *p = c;
        if (!ok) {
            snprintf(why, wn, "cannot create the environments' folder '%.1024s': %s", root,
                     strerror(errno));
            return -1;
        }
        if (c == '\0') return 0;
    }
}

/* The requirements' text, or NULL (none, or too large: why says). */
static char *read_requirements(const char *path, size_t *len, char *why, size_t n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *text = malloc(MAX_REQUIREMENTS + 1);
    *len = text ? fread(text, 1, MAX_REQUIREMENTS + 1, f) : 0;
    fclose(f);
    if (text && *len > MAX_REQUIREMENTS) {
        snprintf(why, n, "%.1024s is larger than 1 MiB", path);
        free(text);
        return NULL;
    }
    return text;
}

/* uv on PATH or beside the base interpreter; "" when neither. */
static void find_uv(const char *base, char *uv, size_t n) {
    uv[0] = '\0';
    const char *path = getenv("PATH");
    char dir[4096];
    for (const char *p = path; p && *p;) {
        size_t len = strcspn(p, ":");
        snprintf(dir, sizeof dir, "%.*s/uv", (int)len, p);
        if (len && access(dir, X_OK) == 0) {
            snprintf(uv, n, "%s", dir);
            return;
        }
        p += len + (p[len] == ':');
    }
    const char *slash = strrchr(base, '/');
    if (slash) {
        snprintf(dir, sizeof dir, "%.*s/uv", (int)(slash - base), base);
        if (access(dir, X_OK) == 0) snprintf(uv, n, "%s", dir);
    }
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* The last lines of the log, for the message. */
static void log_tail(int fd, char *out, size_t n) {
    off_t end = lseek(fd, 0, SEEK_END);
    off_t from = end > 600 ? end - 600 : 0;
    ssize_t got = pread(fd, out, n - 1 < 600 ? n - 1 : 600, from);
    out[got > 0 ? got : 0] = '\0';
    for (char *p = out; *p; p++)
        if (*p == '\n') *p = ' ';
}

/* How a build's install shows its tool's own output (uv's or pip's; the
 * venv's making stays quiet, in the log): on a terminal,
 * the tool's stderr is the host's, where it draws its progress; at log
 * level info or debug, its lines (not --quiet) are logged after it ran;
 * else it is quiet and only its log file has what it said. */
enum { SHOW_QUIET, SHOW_TERMINAL, SHOW_LOG };

static int show_of(const tsr_component *c) {
    const struct tsr_options *o = backend_options(c);
    if (isatty(2)) return SHOW_TERMINAL;
    return (!o->log_off && o->log_level <= TSR_LOG_INFO) ? SHOW_LOG : SHOW_QUIET;
}

/* The log's lines from offset from on, as the component's info lines. */
static void log_forward(const tsr_component *c, int fd, off_t from) {
    FILE *f = fdopen(dup(fd), "r");
    if (!f) return;
    char line[1024];
    if (fseeko(f, from, SEEK_SET) == 0)
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\r\n")] = '\0';
            if (line[0]) comp_log(c, TSR_LOG_INFO, "%s", line);
        }
    fclose(f);
}

/* Build the environment in env from the requirements in api_dir. */
static int build_env(const tsr_component *c, const char *base, const char *env,
                     const char *api_dir, int log_fd, char *why, size_t n) {
    char uv[4096], python[4200], req[4200], base_copy[4096], env_copy[4200];
    find_uv(base, uv, sizeof uv);
    if (path_fmt(python, sizeof python, "%s/bin/python", env) ||
        path_fmt(req, sizeof req, "%s/" REQUIREMENTS, api_dir) ||
        path_fmt(base_copy, sizeof base_copy, "%s", base) ||
        path_fmt(env_copy, sizeof env_copy, "%s", env)) {
        snprintf(why, n, "a path is too long");
        return -1;
    }
    dprintf(log_fd, "tessera: building %s with %s\n", env, uv[0] ? uv : "venv and pip");
    int show = show_of(c);
    int err_fd = show == SHOW_TERMINAL ? 2 : log_fd;
    /* "--quiet" last where nobody looks; where someone does, the list
     * ends before it (both tools take flags after their operands). */
    char *quiet = show == SHOW_QUIET ? "--quiet" : NULL;
    off_t from = lseek(log_fd, 0, SEEK_CUR);
    int rc;
    if (uv[0]) {
        char *make[] = {uv, "venv", "--quiet", "--python", base_copy, env_copy, NULL};
        char *install[] = {uv, "pip", "install", "--python", python, "-r", req,
                           TSR_PYTHON_RUNTIME_SPEC, quiet, NULL};
        rc = python_run_logged(make, api_dir, log_fd, log_fd, why, n) ||
             python_run_logged(install, api_dir, log_fd, err_fd, why, n);
    } else {
        char *make[] = {base_copy, "-m", "venv", env_copy, NULL};
        char *install[] = {python, "-m", "pip", "install", "--disable-pip-version-check",
                           "-r", req, TSR_PYTHON_RUNTIME_SPEC, quiet, NULL};
        rc = python_run_logged(make, api_dir, log_fd, log_fd, why, n) ||
             python_run_logged(install, api_dir, log_fd, err_fd, why, n);
    }
    if (show == SHOW_LOG && from >= 0) log_forward(c, log_fd, from);
    return rc ? -1 : 0;
}

/* The environment for the requirements in api_dir: made unless a complete
 * one is there (its marker is written last). */
static int ensure_env(tsr_component *c, const char *api_dir, const char *text, size_t len,
                      char *python, size_t pn, char *why, size_t n) {
    char root[4096];
    if (envs_root(root, sizeof root, why, n) != 0) return -1;
    XXH3_state_t *h = XXH3_createState();
    if (!h) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    XXH3_64bits_reset(h);
    XXH3_64bits_update(h, text, len);
    XXH3_64bits_update(h, TSR_PYTHON_DEFAULT, sizeof TSR_PYTHON_DEFAULT);
    XXH3_64bits_update(h, TSR_PYTHON_RUNTIME_SPEC, sizeof TSR_PYTHON_RUNTIME_SPEC);
    unsigned long long hash = XXH3_64bits_digest(h);
    XXH3_freeState(h);
    char env[4200], marker[4300], lock[4300], log[4300];
    if (path_fmt(env, sizeof env, "%s/%016llx", root, hash) ||
        path_fmt(marker, sizeof marker, "%s/.tessera-ready", env) ||
        path_fmt(lock, sizeof lock, "%s.lock", env) || path_fmt(log, sizeof log, "%s.log", env) ||
        path_fmt(python, pn, "%s/bin/python", env)) {
        snprintf(why, n, "the environments' folder's path is too long");
        return -1;
    }
    if (access(marker, F_OK) == 0) {
        comp_log(c, TSR_LOG_INFO, "the Python environment %s", env);
        return 0;
    }
    int lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock_fd < 0 || flock(lock_fd, LOCK_EX) != 0) {
        snprintf(why, n, "cannot lock '%.1024s': %s", lock, strerror(errno));
        if (lock_fd >= 0) close(lock_fd);
        return -1;
    }
    int rc = 0;
    if (access(marker, F_OK) != 0) { /* nobody made it while this waited */
        comp_log(c, TSR_LOG_INFO, "building the Python environment %s (log: %s)", env, log);
        nftw(env, remove_entry, 16, FTW_DEPTH | FTW_PHYS); /* an earlier attempt's rest */
        int log_fd = open(log, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        char cause[512] = "";
        rc = log_fd < 0 ? -1 : build_env(c, TSR_PYTHON_DEFAULT, env, api_dir, log_fd, cause,
                                          sizeof cause);
        if (rc == 0) {
            int m = open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
            rc = m < 0 ? -1 : close(m);
        }
        if (rc) {
            char tail[700] = "";
            if (log_fd >= 0) log_tail(log_fd, tail, sizeof tail);
            snprintf(why, n,
                     "cannot build the component's Python environment from %.512s/" REQUIREMENTS
                     ": %.256s (log: %.512s)%s%.600s",
                     api_dir, cause[0] ? cause : strerror(errno), log, tail[0] ? ": ..." : "",
                     tail);
        }
        if (log_fd >= 0) close(log_fd);
    }
    close(lock_fd);
    return rc;
}

int python_resolve(tsr_component *c, const char *api_dir, python_target *t, tsr_error *err) {
    const struct tsr_options *o = backend_options(c);
    const char *path = tsr_component_path(c);
    const char *given = o->python ? o->python : getenv("TESSERA_PYTHON");
    char why[2048] = "", python[4300];
    if (given && *given) {
        if (path_fmt(python, sizeof python, "%s", given)) {
            error_set(err, TSR_E_LOAD, "cannot load '%s': the interpreter's path is too long", path);
            return TSR_E_LOAD;
        }
    } else {
        char req[4200];
        path_fmt(req, sizeof req, "%s/" REQUIREMENTS, api_dir); /* too long: not read */
        size_t len = 0;
        char *text = o->python_env_off ? NULL : read_requirements(req, &len, why, sizeof why);
        if (why[0]) {
            error_set(err, TSR_E_LOAD, "cannot load '%s': %s", path, why);
            return TSR_E_LOAD;
        }
        snprintf(python, sizeof python, "%s", TSR_PYTHON_DEFAULT);
        int rc = text ? ensure_env(c, api_dir, text, len, python, sizeof python, why, sizeof why)
                      : 0;
        free(text);
        if (rc) {
            error_set(err, TSR_E_LOAD, "cannot load '%s': %s", path, why);
            return TSR_E_LOAD;
        }
    }
    if (python_probe(python, t, why, sizeof why) != 0) {
        error_set(err, TSR_E_LOAD, "cannot load '%s': %s%s", path, why,
                  o->python ? " (option python)" : "");
        return TSR_E_LOAD;
    }
    return 0;
}
