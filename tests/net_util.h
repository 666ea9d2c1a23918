/* SPDX-License-Identifier: MIT */
/*
 * Loopback ports and served components for tests that start a server: a
 * port nothing listens on, whether something accepts on one, whether its
 * /health answers, and a server (`tessera serve`, tesseract-runtime serve)
 * started as a child in its own process group, waited for until /health
 * answers and stopped with everything it started.
 *
 * The server_* functions assert nothing, so that a Criterion report hook
 * (which starts servers for a whole program) can use them too; serve_ok
 * asserts and remembers its server so that stop_servers, a test's .fini,
 * stops it however the test ends. Header-only because every
 * tests/test_*.c is its own program; the file including it defines
 * _GNU_SOURCE first.
 */
#ifndef TESSERA_TEST_NET_UTIL_H
#define TESSERA_TEST_NET_UTIL_H

#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* One port the kernel would hand out now, or -1. */
static inline int any_free_port(void) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    close(fd);
    return ntohs(a.sin_port);
}

/* A port nothing listens on now, and not one this process handed out
 * before: servers started one after another, none listening yet, were
 * once given the same port (one then failed to bind, while a /health
 * check found the other answering on it). */
static inline int free_port(void) {
    static int given[256];
    static unsigned n_given;
    for (int tries = 0; tries < 64; tries++) {
        int port = any_free_port();
        if (port <= 0) return port;
        int seen = 0;
        for (unsigned k = 0; k < n_given && k < 256 && !seen; k++) seen = given[k] == port;
        if (seen) continue;
        given[n_given++ % 256] = port;
        return port;
    }
    return -1;
}

/* A connection to 127.0.0.1:port, or -1. */
static inline int connect_port(int port) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static inline int accepts(int port) {
    int fd = connect_port(port);
    if (fd >= 0) close(fd);
    return fd >= 0;
}

/* Whether GET /health on the port answers 200 (within 5 s). */
static inline int health_answers(int port) {
    int fd = connect_port(port);
    if (fd < 0) return 0;
    struct timeval wait = {.tv_sec = 5};
    char head[64] = {0};
    static const char ask[] = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    size_t got = 0;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait) == 0 &&
        send(fd, ask, sizeof ask - 1, MSG_NOSIGNAL) == (ssize_t)(sizeof ask - 1)) {
        for (ssize_t n; got < 12 && (n = recv(fd, head + got, sizeof head - 1 - got, 0)) > 0;)
            got += (size_t)n;
    }
    close(fd);
    return got >= 12 && strncmp(head, "HTTP/1.", 7) == 0 && strncmp(head + 9, "200", 3) == 0;
}

/* The first executable `name` on PATH into out: 0, or -1. */
static inline int find_program(const char *name, char *out, size_t n) {
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t len = strcspn(p, ":");
        snprintf(out, n, "%.*s/%s", (int)len, p, name);
        if (len && access(out, X_OK) == 0) return 0;
        p += len + (p[len] == ':');
    }
    return -1;
}

/* ---- a served component ---------------------------------------------------------- */

#define SERVER_MAX_ARGS 31

/* How to start one: program (NULL: tessera) with args, where an argument
 * "{port}" becomes the port; stdout and stderr into files (NULL:
 * /dev/null; the same path for both is one file); its directory; env
 * "KEY", "VALUE", ... NULL; in_child runs in the child before exec. */
typedef struct server_spec {
    const char *program;
    const char *const *args;
    const char *out, *err;
    const char *dir;
    const char *const *env;
    void (*in_child)(void);
} server_spec;

typedef struct test_server {
    pid_t pid; /* 0: not running (never started, exited or stopped) */
    int port;
    int status; /* its wait status once reaped */
    char url[64];
    const char *log; /* its stderr file, for messages ("" if none) */
} test_server;

static inline int open_output(const char *path, int flags) {
    return open(path ? path : "/dev/null", flags | O_CLOEXEC, 0644);
}

/* In the child: its own group, gone with the test, its files; never returns. */
static inline void server_exec(const server_spec *spec, const char *port) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = open_output(spec->out, O_WRONLY | O_CREAT | O_TRUNC);
    int err = spec->err && spec->out && strcmp(spec->err, spec->out) == 0
                  ? out
                  : open_output(spec->err, O_WRONLY | O_CREAT | O_TRUNC);
    if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        _exit(127);
    for (const char *const *e = spec->env; e && e[0] && e[1]; e += 2)
        if (setenv(e[0], e[1], 1) != 0) _exit(127);
    if (spec->dir && chdir(spec->dir) != 0) _exit(127);
    if (spec->in_child) spec->in_child();
    const char *program = spec->program ? spec->program : TSR_CLI;
    char *argv[SERVER_MAX_ARGS + 2] = {(char *)(uintptr_t)program};
    for (int k = 0; spec->args && spec->args[k] && k < SERVER_MAX_ARGS; k++)
        argv[k + 1] = (char *)(uintptr_t)(strcmp(spec->args[k], "{port}") == 0 ? port
                                                                                 : spec->args[k]);
    execv(program, argv);
    _exit(127);
}

/* Start it on a free port; 0, or -1 (no port, no fork). */
static inline int server_start(test_server *s, const server_spec *spec) {
    memset(s, 0, sizeof *s);
    s->log = spec->err ? spec->err : "";
    s->port = free_port();
    if (s->port <= 0) return -1;
    char port[16];
    snprintf(port, sizeof port, "%d", s->port);
    snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d", s->port);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) server_exec(spec, port);
    setpgid(pid, pid); /* also here: a stop may come before the child's own */
    s->pid = pid;
    return 0;
}

/* Whether it exited (reaped: pid 0, status kept). */
static inline int server_exited(test_server *s) {
    if (s->pid > 0 && waitpid(s->pid, &s->status, WNOHANG) == s->pid) s->pid = 0;
    return s->pid <= 0;
}

/* Wait until its /health answers: 0, or -1 (it exited, or not by the
 * deadline, a time(NULL)). */
static inline int server_wait_healthy(test_server *s, time_t deadline) {
    while (!server_exited(s)) {
        if (health_answers(s->port)) return 0;
        if (time(NULL) >= deadline) return -1;
        nanosleep(&(struct timespec){0, 50 * 1000000L}, NULL);
    }
    return -1;
}

/* SIGTERM to its group, SIGKILL after 5 s; 0 once reaped (status in
 * s->status), -1 if it was not running. */
static inline int server_stop(test_server *s) {
    if (s->pid <= 0) return -1;
    kill(-s->pid, SIGTERM);
    for (int tries = 0; tries < 100 && !server_exited(s); tries++)
        nanosleep(&(struct timespec){0, 50 * 1000000L}, NULL);
    if (s->pid > 0) {
        kill(-s->pid, SIGKILL);
        if (waitpid(s->pid, &s->status, 0) == s->pid) s->pid = 0;
    }
    return s->pid == 0 ? 0 : -1;
}

/* ---- inside a test ------------------------------------------------------------------ */

#define SERVE_LIMIT_S 120 /* a Python component may take a while to import */

#define TEST_SERVERS 8

/* Those serve_ok started, in this test's process. */
static inline test_server *test_servers(void) {
    static test_server servers[TEST_SERVERS];
    return servers;
}

/* The last bytes of a file, for a message (static buffer). */
static inline const char *file_tail(const char *path) {
    static char buf[2048];
    buf[0] = '\0';
    FILE *f = path && *path ? fopen(path, "r") : NULL;
    if (!f) return "";
    if (fseek(f, 0, SEEK_END) == 0 && ftell(f) > (long)sizeof buf - 1)
        fseek(f, -(long)(sizeof buf - 1), SEEK_END);
    else
        rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* A served component that answers /health, stopped by stop_servers. */
static inline test_server *serve_ok(const server_spec *spec) {
    test_server *s = NULL;
    for (int k = 0; !s && k < TEST_SERVERS; k++)
        if (test_servers()[k].pid <= 0) s = &test_servers()[k];
    cr_assert_not_null(s, "more than %d servers at once", TEST_SERVERS);
    const char *program = spec->program ? spec->program : TSR_CLI;
    cr_assert_eq(server_start(s, spec), 0, "cannot start %s", program);
    int up = server_wait_healthy(s, time(NULL) + SERVE_LIMIT_S);
    cr_assert_eq(up, 0, "%s on port %d %s: %s", program, s->port,
                 s->pid > 0 ? "did not answer /health" : "exited", file_tail(s->log));
    return s;
}

/* Stop it: its wait status. */
static inline int serve_stop_ok(test_server *s) {
    cr_assert_eq(server_stop(s), 0, "the server on port %d was not running", s->port);
    return s->status;
}

/* A test's .fini: every server serve_ok started and nothing stopped. */
static inline void stop_servers(void) {
    for (int k = 0; k < TEST_SERVERS; k++) server_stop(&test_servers()[k]);
}

#endif /* TESSERA_TEST_NET_UTIL_H */
