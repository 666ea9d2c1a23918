/* SPDX-License-Identifier: MIT */
/* The "invalid: <type> <path>" last line of a plugin's message
 * (tsr_ctx_invalid): recognised, kept whole through a worker's answer, and
 * turned into TSR_E_VALUE with the path as the call's loc. The line is
 * text from the plugin: it is checked strictly, and one that does not fit
 * leaves the message as it is (a plain plugin failure). */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "invalid_input.h"

static const char TAG[] = "invalid: ";

_Static_assert(sizeof(((tsr_call *)0)->errtype) == INVALID_TYPE_MAX, "errtype holds a type");

/* The line's type and path, or 0 when [line, end) is not one. */
static int parse_line(const char *line, const char *end, const char **type, size_t *type_n,
                      const char **path, size_t *path_n) {
    size_t tag = sizeof TAG - 1;
    if ((size_t)(end - line) <= tag || memcmp(line, TAG, tag) != 0) return 0;
    const char *t = line + tag, *p = t;
    while (p < end && ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) p++;
    size_t tn = (size_t)(p - t);
    if (tn == 0 || tn >= INVALID_TYPE_MAX || p >= end || *p != ' ') return 0;
    const char *q = ++p;
    for (; q < end; q++)
        if ((unsigned char)*q < 0x20 || *q == 0x7f) return 0;
    size_t pn = (size_t)(end - p);
    if (pn == 0 || pn >= TSR_ERRLOC_MAX) return 0;
    *type = t;
    *type_n = tn;
    *path = p;
    *path_n = pn;
    return 1;
}

/* The line's start and its end (before a trailing newline), or NULL. */
static const char *find_line(const char *msg, const char **end) {
    if (msg == NULL) return NULL;
    size_t len = strlen(msg);
    if (len > 0 && msg[len - 1] == '\n') len--;
    const char *line = msg + len;
    while (line > msg && line[-1] != '\n') line--;
    const char *t, *p;
    size_t tn, pn;
    if (!parse_line(line, msg + len, &t, &tn, &p, &pn)) return NULL;
    *end = msg + len;
    return line;
}

const char *invalid_line_find(const char *msg) {
    const char *end;
    return find_line(msg, &end);
}

int invalid_message_fit(char *out, size_t n, const char *lead, const char *msg, int code) {
    const char *end, *line = find_line(msg, &end);
    if (n == 0) return line ? TSR_E_VALUE : code;
    if (line == NULL) {
        snprintf(out, n, "%s%s", lead, msg ? msg : "");
        return code;
    }
    size_t line_n = (size_t)(end - line), lead_n = strlen(lead);
    size_t body_n = (size_t)(line - msg);   /* with its newline */
    if (lead_n + line_n + 1 >= n) {          /* not even the line fits: a plain failure */
        snprintf(out, n, "%s%s", lead, msg);
        return code;
    }
    size_t room = n - 1 - lead_n - line_n;
    if (body_n > room) body_n = room;
    /* A cut body still ends with the newline before the line. */
    if (body_n > 0 && line > msg) {
        snprintf(out, n, "%s%.*s\n%.*s", lead, (int)(body_n - 1), msg, (int)line_n, line);
    } else {
        snprintf(out, n, "%s%.*s", lead, (int)line_n, line);
    }
    return TSR_E_VALUE;
}

int call_fail_plugin(tsr_call *call, int code, const char *lead, const char *msg) {
    const char *end, *line = find_line(msg, &end);
    if (line == NULL) return call_fail(call, code, "%s%s", lead, msg ? msg : "");
    const char *t, *p;
    size_t tn, pn;
    (void)parse_line(line, end, &t, &tn, &p, &pn);
    /* The text before the line, without the newline that ends it. */
    int body_n = (int)(line - msg) - (line > msg);
    call_fail(call, TSR_E_VALUE, "%s%.*s", lead, body_n, msg);
    snprintf(call->errloc, sizeof call->errloc, "%.*s", (int)pn, p);
    snprintf(call->errtype, sizeof call->errtype, "%.*s", (int)tn, t);
    return TSR_E_VALUE;
}
