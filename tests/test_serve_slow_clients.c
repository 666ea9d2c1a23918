/* SPDX-License-Identifier: MIT */
/*
 * `tessera serve` against slow and many clients: a client that trickles
 * its headers (or its body) in, one line every half second, is closed at
 * the header (body) deadline, with no answer, though it is never silent
 * for the idle timeout; a flood of 300 such connections from one address
 * (127.0.0.2: the whole of 127/8 is loopback on Linux), more than
 * --max-connections, leaves /health from 127.0.0.1 answering, the flooding
 * address holding exactly --max-connections-per-address of them and the
 * rest refused; a kept-alive client, pausing between its requests longer
 * than the header deadline, is served throughout; a stop with every slot
 * taken does not wait for those connections; a second client is served
 * while the one thread lingers awake for the first one's next request,
 * and both are served on after it. Then the options' bad values, refused
 * by the command line and by http_serve_start.
 *
 * No bound here is on speed: a deadline of 1 s must have closed a
 * connection within 20 s, a client waits up to 30 s for an answer.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "cli_run.h"
#include "net_util.h"
#include "tessera_serve.h"
#include "test_util.h"

#define FLOOD 300
#define PER_ADDRESS 64
#define ANSWER_WAIT_S 30
#define STEPS 40 /* lines a slow client sends, half a second apart: 20 s */

static void pause_ms(long ms) {
    nanosleep(&(struct timespec){ms / 1000, ms % 1000 * 1000000L}, NULL);
}

/* `tessera serve` of vectoradd with extra options (NULL-terminated), its
 * stderr (the access log) in a file; back once /health answers. */
static test_server *serve_with(const char *const *extra) {
    static char log[256];
    temp_path(log, sizeof log);
    const char *args[32] = {"serve", "--port", "{port}"};
    int n = 3;
    for (int k = 0; extra[k]; k++) args[n++] = extra[k];
    args[n++] = BUNDLED_PLUGIN("vectoradd");
    args[n] = NULL;
    return serve_ok(&(server_spec){.args = args, .err = log});
}

#define SERVE(...) serve_with((const char *const[]){__VA_ARGS__, NULL})

/* Stop it; its log (to free). */
static char *stop(test_server *s) {
    int status = serve_stop_ok(s);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "tessera serve ended badly");
    char *log = cli_slurp(s->log);
    unlink(s->log);
    return log;
}

/* A connection to the server from source (an address of 127/8). */
static int connect_from(const char *source, int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert(fd >= 0, "socket: %s", strerror(errno));
    struct sockaddr_in a = {.sin_family = AF_INET};
    cr_assert_eq(inet_pton(AF_INET, source, &a.sin_addr), 1);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0, "bind %s: %s", source,
                 strerror(errno));
    struct timeval wait = {.tv_sec = ANSWER_WAIT_S};
    cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait), 0);
    a.sin_port = htons((uint16_t)port);
    cr_assert_eq(inet_pton(AF_INET, "127.0.0.1", &a.sin_addr), 1);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0, "connect: %s",
                 strerror(errno));
    return fd;
}

/* Send text; 0, or -1 when the server has ended the connection. */
static int send_text(int fd, const char *text) {
    size_t len = strlen(text);
    while (len) {
        ssize_t n = send(fd, text, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        text += n;
        len -= (size_t)n;
    }
    return 0;
}

/* What the server did with a connection so far. */
enum { STILL_OPEN, CLOSED, ANSWERED };

static int state_now(int fd) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 0) == 0) return STILL_OPEN;
    char c;
    ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
    if (n > 0) return ANSWERED;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return STILL_OPEN;
    return CLOSED; /* end of stream, or reset */
}

/* GET /health on fd (kept alive): the status, or -1 when the connection
 * ended first. Reads exactly the answer (its Content-Length). */
static int health(int fd) {
    if (send_text(fd, "GET /health HTTP/1.1\r\nHost: test\r\n\r\n") != 0) return -1;
    char buf[4096];
    size_t len = 0;
    char *end = NULL;
    while (!end) {
        if (len == sizeof buf - 1) return -1;
        ssize_t n = recv(fd, buf + len, sizeof buf - 1 - len, 0);
        if (n <= 0) return -1;
        len += (size_t)n;
        buf[len] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    int status = -1;
    if (sscanf(buf, "HTTP/1.1 %d", &status) != 1) return -1;
    const char *cl = strcasestr(buf, "Content-Length:");
    size_t body = cl ? strtoul(cl + 15, NULL, 10) : 0;
    size_t have = len - (size_t)(end + 4 - buf);
    while (have < body) {
        ssize_t n = recv(fd, buf, sizeof buf < body - have ? sizeof buf : body - have, 0);
        if (n <= 0) return -1;
        have += (size_t)n;
    }
    return status;
}

/* GET /health on a connection of its own from source. */
static int health_from(const char *source, int port) {
    int fd = connect_from(source, port);
    int status = health(fd);
    close(fd);
    return status;
}

/* Send first, then line every half second, until the server ends the
 * connection or STEPS lines went; what the server did. */
static int trickle(int fd, const char *first, const char *line, int *sent) {
    cr_assert_eq(send_text(fd, first), 0);
    for (*sent = 0; *sent < STEPS; (*sent)++) {
        int st = state_now(fd);
        if (st != STILL_OPEN) return st;
        if (send_text(fd, line) != 0) return CLOSED;
        pause_ms(500);
    }
    return state_now(fd);
}

TestSuite(serve_slow_clients, .fini = stop_servers);

/* ---- deadlines ---------------------------------------------------------------- */

Test(serve_slow_clients, headers_trickling_in_are_closed_at_the_header_deadline_unanswered) {
    test_server *s = SERVE("--header-timeout", "1", "--idle-timeout", "2");
    int fd = connect_from("127.0.0.1", s->port);
    int sent;
    int st = trickle(fd, "GET /health HTTP/1.1\r\nHost: test\r\n", "X-Slow: 1\r\n", &sent);
    close(fd);
    cr_assert_eq(st, CLOSED,
                 "a client sending a header line every 0.5 s was %s after %d lines (idle "
                 "timeout 2 s, header timeout 1 s)", st == ANSWERED ? "answered" : "still open",
                 sent);
    /* Others are served after it. */
    cr_assert_eq(health_from("127.0.0.1", s->port), 200);
    char *log = stop(s);
    assert_contains(log, "127.0.0.1 closed: its request headers did not all come within 1 s");
    free(log);
}

Test(serve_slow_clients, a_request_line_trickling_in_is_closed_at_the_header_deadline) {
    test_server *s = SERVE("--header-timeout", "1", "--idle-timeout", "2");
    int fd = connect_from("127.0.0.1", s->port);
    int sent;
    int st = trickle(fd, "GET /", "a", &sent);
    close(fd);
    cr_assert_eq(st, CLOSED, "a request line sent a byte every 0.5 s was %s after %d bytes",
                 st == ANSWERED ? "answered" : "still open", sent);
    free(stop(s));
}

Test(serve_slow_clients, a_body_trickling_in_is_closed_at_the_body_deadline) {
    test_server *s = SERVE("--header-timeout", "5", "--body-timeout", "1", "--idle-timeout", "2");
    int fd = connect_from("127.0.0.1", s->port);
    int sent;
    int st = trickle(fd,
                     "POST /apply HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                     "Content-Length: 1000\r\n\r\n{",
                     " ", &sent);
    close(fd);
    cr_assert_eq(st, CLOSED, "a body sent a byte every 0.5 s was %s after %d bytes",
                 st == ANSWERED ? "answered" : "still open", sent);
    char *log = stop(s);
    assert_contains(log, "127.0.0.1 closed: its request body did not all come within 1 s");
    free(log);
}

Test(serve_slow_clients, a_kept_alive_client_pausing_past_the_header_deadline_is_served) {
    /* Pauses of 2 s: twice the header deadline, a fifth of the idle one. */
    test_server *s = SERVE("--header-timeout", "1", "--idle-timeout", "10");
    int fd = connect_from("127.0.0.1", s->port);
    for (int k = 0; k < 3; k++) {
        if (k) pause_ms(2000);
        cr_assert_eq(health(fd), 200, "request %d on the kept-alive connection", k + 1);
    }
    close(fd);
    char *log = stop(s);
    cr_assert_null(strstr(log, "closed:"), "%s", log);
    free(log);
}

/* ---- a flood from one address ------------------------------------------------- */

Test(serve_slow_clients, a_flood_from_one_address_leaves_health_answering_for_others,
     .timeout = 240) {
    /* Deadlines far off: what ends the flood here is the per-address limit. */
    test_server *s = SERVE("--header-timeout", "120", "--idle-timeout", "120", "--max-connections",
                     "256");
    static int flood[FLOOD];
    for (int k = 0; k < FLOOD; k++) {
        flood[k] = connect_from("127.0.0.2", s->port);
        /* Half a request, as a slow client has sent (a refused one may
         * be gone already: nothing to check here). */
        (void)send_text(flood[k], "GET /health HTTP/1.1\r\nHost: test\r\n");
        if (k % 50 == 49) cr_assert_eq(health_from("127.0.0.1", s->port), 200,
                                       "/health with %d flooding connections", k + 1);
    }
    /* The refused ones end as soon as the server accepts them. */
    int open_left = FLOOD;
    for (int tries = 0; tries < 300 && open_left > PER_ADDRESS; tries++) {
        open_left = 0;
        for (int k = 0; k < FLOOD; k++) open_left += state_now(flood[k]) == STILL_OPEN;
        if (open_left > PER_ADDRESS) pause_ms(100);
    }
    for (int k = 0; k < FLOOD; k++)
        cr_assert_neq(state_now(flood[k]), ANSWERED, "a half request was answered");
    cr_assert_eq(open_left, PER_ADDRESS,
                 "the flooding address holds %d connections (default limit: a quarter of 256)",
                 open_left);
    /* Throughout: others are answered, a kept-alive one too; one more from
     * the flooding address is refused. */
    int kept = connect_from("127.0.0.1", s->port);
    for (int k = 0; k < 5; k++) {
        cr_assert_eq(health_from("127.0.0.1", s->port), 200);
        cr_assert_eq(health(kept), 200);
    }
    close(kept);
    cr_assert_eq(health_from("127.0.0.2", s->port), -1,
                 "a connection past the per-address limit was answered");
    for (int k = 0; k < FLOOD; k++) close(flood[k]);
    /* Their slots are free again. */
    int status = -1;
    for (int tries = 0; tries < 100 && (status = health_from("127.0.0.2", s->port)) != 200; tries++)
        pause_ms(100);
    cr_assert_eq(status, 200, "the flooding address, its connections closed, is served again");
    free(stop(s));
}

/* ---- stopping ----------------------------------------------------------------- */

Test(serve_slow_clients, a_stop_with_every_slot_taken_does_not_wait_for_the_connections) {
    /* Their deadlines are 120 s off; the stop has 60 s. */
    test_server *s = SERVE("--header-timeout", "120", "--idle-timeout", "120", "--max-connections", "4",
                     "--max-connections-per-address", "4", "--threads", "4");
    int fd[5];
    for (int k = 0; k < 5; k++) {
        fd[k] = connect_from("127.0.0.1", s->port);
        (void)send_text(fd[k], "GET /health HTTP/1.1\r\n");
    }
    pause_ms(500); /* let the server take the slots (it only helps the stop if not) */
    cr_assert_eq(kill(s->pid, SIGTERM), 0);
    int status = 0;
    pid_t got = 0;
    for (int tries = 0; tries < 600 && (got = waitpid(s->pid, &status, WNOHANG)) == 0; tries++)
        pause_ms(100);
    if (got == 0) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
    }
    pid_t pid = s->pid;
    s->pid = 0; /* reaped: nothing left for stop_servers */
    for (int k = 0; k < 5; k++) close(fd[k]);
    unlink(s->log);
    cr_assert_eq(got, pid, "tessera serve was still stopping 60 s after SIGTERM");
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ---- lingering for a lone client ------------------------------------------------ */

Test(serve_slow_clients, a_second_client_is_served_while_the_only_thread_lingers_for_the_first) {
    /* One request thread, lingering up to 100 ms after each answer while
     * one connection is open: the second connection's request is answered
     * (the linger ends when a second connection opens), and both stay
     * served on their kept-alive connections. */
    test_server *s = SERVE("--threads", "1", "--linger-us", "100000");
    int a = connect_from("127.0.0.1", s->port);
    for (int k = 0; k < 20; k++) cr_assert_eq(health(a), 200, "request %d of the lone client", k);
    int b = connect_from("127.0.0.1", s->port);
    cr_assert_eq(health(b), 200, "the second client, during the first's linger");
    for (int k = 0; k < 5; k++) {
        cr_assert_eq(health(a), 200);
        cr_assert_eq(health(b), 200);
    }
    close(b);
    for (int k = 0; k < 5; k++) cr_assert_eq(health(a), 200, "the first client alone again");
    close(a);
    free(stop(s));
}

Test(serve_slow_clients, a_server_that_never_lingers_serves_a_kept_alive_client) {
    test_server *s = SERVE("--linger-us", "0");
    int a = connect_from("127.0.0.1", s->port);
    for (int k = 0; k < 10; k++) cr_assert_eq(health(a), 200);
    close(a);
    free(stop(s));
}

/* ---- bad values --------------------------------------------------------------- */

Test(serve_slow_clients, bad_limits_are_usage_errors_naming_the_option) {
    static const struct {
        const char *opt, *value, *message;
    } bad[] = {
        {"--header-timeout", "0", "--header-timeout takes a number from 1 to 86400, got '0'"},
        {"--header-timeout", "ten", "--header-timeout takes a number up to 86400, got 'ten'"},
        {"--header-timeout", "86401", "--header-timeout takes a number up to 86400"},
        {"--body-timeout", "0", "--body-timeout takes a number from 1 to 86400, got '0'"},
        {"--body-timeout", "-1", "--body-timeout takes a number up to 86400, got '-1'"},
        {"--max-connections-per-address", "0",
         "--max-connections-per-address takes a number from 1 to 65536, got '0'"},
        {"--max-connections-per-address", "257",
         "--max-connections-per-address 257 is more than --max-connections (256)"},
        {"--linger-us", "ten", "--linger-us takes a number up to 100000, got 'ten'"},
        {"--linger-us", "100001", "--linger-us takes a number up to 100000"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        cli_run r = run_cli(NULL, "serve", bad[k].opt, bad[k].value, BUNDLED_PLUGIN("vectoradd"));
        assert_fails(&r, EXIT_USAGE, bad[k].message);
        run_free(&r);
    }
    cli_run r = run_cli(NULL, "serve", "--max-connections", "8", "--max-connections-per-address",
                        "9", BUNDLED_PLUGIN("vectoradd"));
    assert_fails(&r, EXIT_USAGE,
                 "--max-connections-per-address 9 is more than --max-connections (8)");
    run_free(&r);
}

Test(serve_slow_clients, the_help_documents_the_deadlines_and_the_per_address_limit) {
    cli_run r = run_cli(NULL, "serve", "--help");
    assert_ok(&r);
    assert_contains(r.out, "--header-timeout S");
    assert_contains(r.out, "--body-timeout S");
    assert_contains(r.out, "--max-connections-per-address N");
    assert_contains(r.out, "--linger-us N");
    run_free(&r);
}

Test(serve_slow_clients, the_library_refuses_a_per_address_limit_above_the_total) {
    tsr_component *c = open_ok(BUNDLED_PLUGIN("vectoradd"), NULL);
    http_serve_options o = {.struct_size = sizeof o, .max_connections = 8,
                           .max_connections_per_address = 9};
    http_server *s = NULL;
    tsr_error err = TSR_ERROR_INIT;
    int rc = http_serve_start(c, &o, &s, &err);
    cr_assert_eq(rc, TSR_E_ARGUMENT, "rc %d: %s", rc, err.message);
    cr_assert_null(s);
    cr_assert_str_eq(err.loc, "max_connections_per_address");
    assert_contains(err.message, "max_connections_per_address 9 is more than max_connections 8");
    /* Within it, the server starts, and the limits' defaults fit any total. */
    o.max_connections_per_address = 8;
    cr_assert_eq(http_serve_start(c, &o, &s, &err), 0, "%s", err.message);
    http_serve_stop(s);
    http_serve_options tiny = {.struct_size = sizeof tiny, .max_connections = 1};
    cr_assert_eq(http_serve_start(c, &tiny, &s, &err), 0, "%s", err.message);
    http_serve_stop(s);
    tsr_close(c);
}
