/* SPDX-License-Identifier: MIT */
/* A component's log lines: to the host's log_fn, else through the stderr
 * sink, below the level asked for dropped. What the library says
 * (comp_log) and what a plugin says (tsr_ctx's log, host_api.c) go the
 * same way. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static const char *const level_names[] = {"DEBUG", "INFO", "WARN", "ERROR"};

void log_line(const struct tsr_options *o, tsr_log_level level, const char *component,
              const char *message) {
    if (o->log_off || level < o->log_level) return;
    if (o->log_fn) {
        o->log_fn(o->log_user, level, component, message);
        return;
    }
    int l = (level >= TSR_LOG_DEBUG && level <= TSR_LOG_ERROR) ? (int)level : TSR_LOG_ERROR;
    /* Through the sink: a host whose stderr is not read is not blocked. */
    char prefix[4200];
    snprintf(prefix, sizeof prefix, "tessera[%s] %s", component, level_names[l]);
    stderr_line(prefix, message);
}

void comp_log(const tsr_component *c, tsr_log_level level, const char *fmt, ...) {
    if (c->opts.log_off || level < c->opts.log_level) return;
    char msg[TSR_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_line(&c->opts, level, comp_label(c), msg);
}
