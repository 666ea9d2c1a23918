/* SPDX-License-Identifier: MIT */
/* An endpoint's refusal of an input value (tsr_ctx_invalid in plugin.h):
 * the last line "invalid: <type> <path>" of a plugin's message, which the
 * host strips and turns into TSR_E_VALUE, tsr_call_errloc and the error's
 * type. One place for the in-process call, the served side of a worker and
 * the host's reading of a worker's answer. */
#ifndef TESSERA_CORE_INVALID_INPUT_H
#define TESSERA_CORE_INVALID_INPUT_H

#include <stddef.h>

struct tsr_call;

/* A pydantic error type ("greater_than_equal") fits in this, NUL included. */
#define INVALID_TYPE_MAX 64

/* Where msg's last line "invalid: <type> <path>" starts (msg itself when
 * the message is that line alone), or NULL when msg does not end with
 * one: type one or more of [a-z0-9_] shorter than INVALID_TYPE_MAX, path
 * non-empty, shorter than TSR_ERRLOC_MAX and without control characters.
 * One trailing newline is allowed. */
const char *invalid_line_find(const char *msg);

/* `lead` then msg into out (n bytes), the invalid line kept whole when msg
 * has one (its text before it is cut first when out is short).
 * TSR_E_VALUE when msg has the line, else `code`. */
int invalid_message_fit(char *out, size_t n, const char *lead, const char *msg, int code);

/* Fail call with "<lead><msg>": when msg ends with the invalid line, with
 * TSR_E_VALUE, the line stripped, errloc its path and errtype its type;
 * else with `code` and no loc. Returns the code it set. */
int call_fail_plugin(struct tsr_call *call, int code, const char *lead, const char *msg);

#endif
