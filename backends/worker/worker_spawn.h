/* SPDX-License-Identifier: MIT */
/* Starting the worker process itself: posix_spawn of tessera-worker, or a
 * plain fork that serves in the child. Internal to worker_proc.c. */
#ifndef TESSERA_WORKER_SPAWN_H
#define TESSERA_WORKER_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

#include "worker_proc.h"

/* Where the worker finds what it inherits. */
#define WORKER_FD_CHAN 3
#define WORKER_FD_BELL 4
#define WORKER_FD_HOST_BELL 5
#define WORKER_FD_SEGS 6   /* shared memory only: where arena segments arrive */

/* The host's fds that become the child's 3, 4, 5, 6 and 1+2 (segs is -1
 * with files: the child then has no fd 6). Each must be above 6 so that
 * placing one never overwrites another. */
typedef struct spawn_fds {
    int chan, bell, host_bell, segs, out;
} spawn_fds;

/* Start the child; 0 and *pid, or TSR_E_WORKER / TSR_E_NOMEM with a cause. */
int worker_spawn(const worker_spawn_opts *o, const spawn_fds *f, pid_t *pid, char *why,
                 size_t n);

#endif
