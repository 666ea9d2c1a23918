/* SPDX-License-Identifier: MIT */
/* HTTP exchanges on libcurl (http_client.h). */
/* CURLOPT_PROTOCOLS is deprecated from 7.85 on, but the only way to
 * restrict protocols that every libcurl this may load at run time knows. */
#define CURL_DISABLE_DEPRECATION
#include "http_client.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "http_curl.h"
#include "tessera/tessera.h"

/* curl_global_init is thread-safe from libcurl 7.84 on; this lock makes
 * the library's own calls safe with older ones too. libcurl counts them,
 * so a host that uses libcurl itself keeps its state. */
static pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER;

int http_global_up(char *why, size_t n) {
    const curl_api *cu = curl_load(why, n);
    if (!cu) return TSR_E_LOAD;
    pthread_mutex_lock(&global_lock);
    CURLcode rc = cu->global_init(CURL_GLOBAL_DEFAULT);
    pthread_mutex_unlock(&global_lock);
    if (rc == CURLE_OK) return 0;
    snprintf(why, n, "libcurl could not start: %s", cu->easy_strerror(rc));
    return rc == CURLE_OUT_OF_MEMORY ? TSR_E_NOMEM : TSR_E_LOAD;
}

void http_global_down(void) {
    pthread_mutex_lock(&global_lock);
    curl_loaded()->global_cleanup();
    pthread_mutex_unlock(&global_lock);
}

/* Room for len + add bytes and a NUL. */
static int body_reserve(http_body *b, size_t add) {
    if (b->len + add + 1 <= b->cap) return 0;
    size_t cap = b->cap ? 2 * b->cap : 64 * 1024;
    if (cap < b->len + add + 1) cap = b->len + add + 1;
    char *grown = realloc(b->data, cap);
    if (!grown) return -1;
    b->data = grown;
    b->cap = cap;
    return 0;
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *user) {
    http_body *b = user;
    size_t add = size * nmemb;
    if (b->limit && b->len + add > b->limit) {
        b->over = 1;
        b->arrived = (uint64_t)b->len + add;   /* for the message; the data is not kept */
        return 0; /* ends the transfer with CURLE_WRITE_ERROR */
    }
    if (body_reserve(b, add) != 0) {
        b->over = -1;
        return 0;
    }
    memcpy(b->data + b->len, ptr, add);
    b->len += add;
    return add;
}

/* A head's line: a Content-Length larger than the limit ends the transfer
 * there, before any of the body is read or room is made for it. Read
 * from the line itself, the same with any libcurl version; every answer's
 * head (an interim 100 Continue's too) comes through here. */
static size_t on_header(char *ptr, size_t size, size_t nmemb, void *user) {
    http_body *b = user;
    size_t len = size * nmemb;
    static const char key[] = "content-length:";
    if (!b->limit || len <= sizeof key - 1 || strncasecmp(ptr, key, sizeof key - 1) != 0)
        return len;
    uint64_t v = 0;
    size_t k = sizeof key - 1;
    while (k < len && (ptr[k] == ' ' || ptr[k] == '\t')) k++;
    int digits = 0;
    for (; k < len && ptr[k] >= '0' && ptr[k] <= '9'; k++, digits++)
        v = v > (UINT64_MAX - 9) / 10 ? UINT64_MAX : v * 10 + (uint64_t)(ptr[k] - '0');
    if (!digits || v <= b->limit) return len;   /* no number: libcurl's own check refuses it */
    b->declared = v;
    b->over = 2;
    return 0; /* ends the transfer with CURLE_WRITE_ERROR */
}

int http_lane_init(http_lane *l, char *why, size_t n) {
    const curl_api *cu = curl_loaded();
    memset(l, 0, sizeof *l);
    l->easy = cu->easy_init();
    l->multi = cu->multi_init();
    /* Never a signal handler of libcurl's own (the host's process), never
     * a protocol but HTTP(S), never a redirect followed. */
    int bad = !l->easy || !l->multi ||
              cu->easy_setopt(l->easy, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
              cu->easy_setopt(l->easy, CURLOPT_WRITEFUNCTION, on_data) != CURLE_OK ||
              cu->easy_setopt(l->easy, CURLOPT_WRITEDATA, &l->body) != CURLE_OK ||
              cu->easy_setopt(l->easy, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK ||
              cu->easy_setopt(l->easy, CURLOPT_HEADERDATA, &l->body) != CURLE_OK ||
              cu->easy_setopt(l->easy, CURLOPT_ERRORBUFFER, l->errbuf) != CURLE_OK ||
              cu->easy_setopt(l->easy, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK ||
              cu->easy_setopt(l->easy, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)) !=
                  CURLE_OK;
    if (!bad) return 0;
    http_lane_free(l);
    snprintf(why, n, "cannot start an HTTP client (libcurl): out of memory");
    return TSR_E_NOMEM;
}

void http_lane_free(http_lane *l) {
    const curl_api *cu = curl_loaded();
    if (l->multi) cu->multi_cleanup(l->multi);
    if (l->easy) cu->easy_cleanup(l->easy);
    free(l->body.data);
    memset(l, 0, sizeof *l);
}

struct curl_slist *http_header_list(const char *const *lines) {
    const curl_api *cu = curl_loaded();
    struct curl_slist *list = NULL;
    for (; *lines; lines++) {
        struct curl_slist *grown = cu->slist_append(list, *lines);
        if (!grown) {
            cu->slist_free_all(list);
            return NULL;
        }
        list = grown;
    }
    return list;
}

void http_header_list_free(struct curl_slist *list) {
    if (list) curl_loaded()->slist_free_all(list);
}

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int cancel_requested(const http_cancel *cx) {
    return cx && cx->flag && atomic_load_explicit(cx->flag, memory_order_relaxed);
}

/* The eventfd woke the wait. The flag is the truth: with it clear (a
 * request merged into a run that has ended) the eventfd is drained, and
 * rung again if a request came meanwhile, for other sleepers on it. */
static void cancel_fd_ready(const http_cancel *cx) {
    if (cancel_requested(cx)) return;
    uint64_t v;
    while (read(cx->fd, &v, sizeof v) < 0 && errno == EINTR) {
    }
    if (cancel_requested(cx)) {
        uint64_t one = 1;
        while (write(cx->fd, &one, sizeof one) < 0 && errno == EINTR) {
        }
    }
}

static int set_request(http_lane *l, const http_request *r) {
    CURLcode (*setopt)(CURL *, CURLoption, ...) = curl_loaded()->easy_setopt;
    CURL *e = l->easy;
    int bad = setopt(e, CURLOPT_URL, r->url) != CURLE_OK ||
              setopt(e, CURLOPT_HTTPHEADER, r->headers) != CURLE_OK ||
              setopt(e, CURLOPT_TIMEOUT_MS, r->timeout_ms) != CURLE_OK ||
              setopt(e, CURLOPT_CONNECTTIMEOUT_MS, r->connect_ms) != CURLE_OK;
    if (r->body)
        bad = bad || setopt(e, CURLOPT_POST, 1L) != CURLE_OK ||
              setopt(e, CURLOPT_POSTFIELDS, r->body) != CURLE_OK ||
              setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len) != CURLE_OK;
    else
        bad = bad || setopt(e, CURLOPT_HTTPGET, 1L) != CURLE_OK;
    return bad ? -1 : 0;
}

/* Run the transfer to its end, or until a cancel. 0 with the transfer's
 * result in *result, or TSR_E_CANCELLED / TSR_E_NOMEM / TSR_E_WORKER. */
static int run_transfer(http_lane *l, const http_cancel *cx, CURLcode *result, char *why,
                        size_t n) {
    const curl_api *cu = curl_loaded();
    int with_fd = cx && cx->fd >= 0;
    int checking = cx && cx->check && cx->check_ms > 0;
    uint64_t next_check = checking ? now_ms() + (uint64_t)cx->check_ms : 0;
    int running = 1;
    for (;;) {
        CURLMcode mc = cu->multi_perform(l->multi, &running);
        if (mc == CURLM_OK && !running) break;
        if (mc == CURLM_OK && cancel_requested(cx)) {
            snprintf(why, n, "cancelled while waiting for the answer");
            return TSR_E_CANCELLED;
        }
        int wait_ms = 1000;
        if (mc == CURLM_OK && checking) {
            uint64_t t = now_ms();
            if (t >= next_check) {
                if (cx->check(cx->user)) {
                    snprintf(why, n, "cancelled while waiting for the answer");
                    return TSR_E_CANCELLED;
                }
                next_check = t + (uint64_t)cx->check_ms;
            }
            if (next_check - t < (uint64_t)wait_ms) wait_ms = (int)(next_check - t);
        }
        struct curl_waitfd extra = {.fd = with_fd ? cx->fd : 0, .events = CURL_WAIT_POLLIN};
        if (mc == CURLM_OK)
            mc = cu->multi_poll(l->multi, with_fd ? &extra : NULL, with_fd ? 1u : 0u, wait_ms,
                                 NULL);
        if (mc != CURLM_OK) {
            snprintf(why, n, "the HTTP client failed: %s", cu->multi_strerror(mc));
            return mc == CURLM_OUT_OF_MEMORY ? TSR_E_NOMEM : TSR_E_WORKER;
        }
        if (with_fd && (extra.revents & CURL_WAIT_POLLIN)) cancel_fd_ready(cx);
    }
    *result = CURLE_OK;
    int left;
    CURLMsg *m;
    while ((m = cu->multi_info_read(l->multi, &left)))
        if (m->msg == CURLMSG_DONE && m->easy_handle == l->easy) *result = m->data.result;
    return 0;
}

/* A transfer that ended without a whole answer. */
static int transfer_failed(const http_lane *l, const http_request *r, CURLcode result, char *why,
                           size_t n) {
    const char *cause = l->errbuf[0] ? l->errbuf : curl_loaded()->easy_strerror(result);
    if (result == CURLE_WRITE_ERROR && l->body.over > 0) {
        char limit[200];
        if (r->max_body_name)
            snprintf(limit, sizeof limit, "%s (%llu bytes)", r->max_body_name,
                     (unsigned long long)r->max_body);
        else
            snprintf(limit, sizeof limit,
                     "max_payload_bytes (%llu bytes); raise the option max_payload_bytes to "
                     "allow it",
                     (unsigned long long)r->max_body);
        if (l->body.over == 2)
            snprintf(why, n,
                     "the answer declares %llu bytes (Content-Length), more than %s; refused "
                     "before its body was read",
                     (unsigned long long)l->body.declared, limit);
        else
            snprintf(why, n, "the answer is larger than %s; reading stopped after %llu bytes",
                     limit, (unsigned long long)l->body.arrived);
        return TSR_E_LIMIT;
    }
    if ((result == CURLE_WRITE_ERROR && l->body.over < 0) || result == CURLE_OUT_OF_MEMORY) {
        snprintf(why, n, "out of memory for the answer");
        return TSR_E_NOMEM;
    }
    if (result == CURLE_OPERATION_TIMEDOUT) {
        snprintf(why, n, "no answer in time (%s)", cause);
        return TSR_E_TIMEOUT;
    }
    snprintf(why, n, "%s", cause);
    return TSR_E_WORKER;
}

int http_exchange(http_lane *l, const http_request *r, long *status, char *why, size_t n) {
    const curl_api *cu = curl_loaded();
    *status = 0;
    l->body.len = 0;
    l->body.over = 0;
    l->body.declared = 0;
    l->body.limit = r->max_body;
    l->errbuf[0] = '\0';
    if (set_request(l, r) != 0) {
        snprintf(why, n, "the HTTP client refused the request's settings");
        return TSR_E_WORKER;
    }
    CURLMcode mc = cu->multi_add_handle(l->multi, l->easy);
    if (mc != CURLM_OK) {
        snprintf(why, n, "the HTTP client failed: %s", cu->multi_strerror(mc));
        return mc == CURLM_OUT_OF_MEMORY ? TSR_E_NOMEM : TSR_E_WORKER;
    }
    CURLcode result = CURLE_OK;
    int rc = run_transfer(l, r->cancel, &result, why, n);
    /* Removing a handle mid-transfer (a cancel) closes its connection;
     * after a whole answer the connection stays for the next request. */
    cu->multi_remove_handle(l->multi, l->easy);
    if (rc) return rc;
    if (result != CURLE_OK) return transfer_failed(l, r, result, why, n);
    if (body_reserve(&l->body, 0) != 0) {
        snprintf(why, n, "out of memory for the answer");
        return TSR_E_NOMEM;
    }
    l->body.data[l->body.len] = '\0';
    cu->easy_getinfo(l->easy, CURLINFO_RESPONSE_CODE, status);
    return 0;
}
