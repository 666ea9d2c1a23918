/* SPDX-License-Identifier: MIT */
/* A request thread that stays awake for a lone client's next request
 * (linger.c). */
#ifndef TESSERA_SERVE_LINGER_H
#define TESSERA_SERVE_LINGER_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct serve_linger {
    uint64_t budget_ns;         /* the longest wait awake; 0: never */
    _Atomic int open;           /* connections open now */
    _Atomic uint32_t misses;    /* lingers in a row that the next request did not end */
    _Atomic uint32_t skipped;   /* answers since the last linger, while they miss */
} serve_linger;

void linger_init(serve_linger *l, uint32_t linger_us);
void linger_opened(serve_linger *l);
void linger_closed(serve_linger *l);
/* A request on connection fd was answered: while it is the only one open,
 * wait awake (at most budget_ns) for its next request to come. */
void linger_after_answer(serve_linger *l, int fd);

#endif
