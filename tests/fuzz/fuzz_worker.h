/* SPDX-License-Identifier: MIT */
/* What the worker-request fuzz target and its seed writer share: the
 * layout of an input and the arena behind it. */
#ifndef TESSERA_FUZZ_WORKER_H
#define TESSERA_FUZZ_WORKER_H

#include <stddef.h>

#include "shm/channel.h"

/* An input starts with chan_block's request and answer fields, endpoint
 * to plugin_status, as they lie in the block. */
#define FUZZ_HEADER_BYTES (offsetof(chan_block, message) - offsetof(chan_block, endpoint))
/* The arena has one segment of this size, segment 0. */
#define FUZZ_ARENA_BYTES ((size_t)1 << 20)

#endif
