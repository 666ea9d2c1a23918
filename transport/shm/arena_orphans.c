/* SPDX-License-Identifier: MIT */
/* Removing segments left behind by crashed hosts. An entry goes only when
 * its creator is provably gone; anything doubtful stays. */
#include "arena_internal.h"

#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define SHM_DIR "/dev/shm"

/* 1 if the process that created a name with these parts is gone. */
static int creator_gone(const shm_name_parts *parts) {
    if (kill(parts->pid, 0) != 0 && errno == ESRCH) return 1;
    /* The pid lives (or belongs to another user: EPERM); it is another
     * process only if it started at another time. A name without a start
     * time (made where /proc was missing) cannot prove that. */
    if (parts->start == 0) return 0;
    unsigned long long start;
    if (shm_proc_starttime(parts->pid, &start) != 0) return 0;
    return start != parts->start;
}

int arena_remove_orphans(void) {
    DIR *d = opendir(SHM_DIR);
    if (d == NULL) return 0;   /* no /dev/shm: nothing can be orphaned there */
    int removed = 0;
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (e == NULL) break;   /* end, or a read error: stop with what was done */
        shm_name_parts parts;
        if (shm_parse_name(e->d_name, &parts) != 0) continue;
        if (!creator_gone(&parts)) continue;
        char name[NAME_MAX + 2];
        snprintf(name, sizeof name, "/%s", e->d_name);
        /* Another host may remove the same orphan at the same moment. */
        if (shm_unlink(name) == 0) removed++;
    }
    closedir(d);
    return removed;
}
