/* SPDX-License-Identifier: MIT */
/* Keeping what a plugin forks from outliving its worker. The worker is a
 * child subreaper: a descendant whose parent dies is reparented to it, not
 * to init, so that every descendant stays in its tree, and when the worker
 * ends by itself (told to exit, or its host gone) it kills the whole tree.
 * The worker also leads a process group of its own, which its descendants
 * inherit; the host kills that group whenever a worker ends, by exit or
 * by signal (worker_proc.c). A PID namespace would end them all with the
 * worker whatever killed it, but a process whose children go to another
 * PID namespace can start no thread (clone refuses CLONE_THREAD), and a
 * worker must keep its threads (the host watchdog, io_uring's, the
 * plugin's). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "tessera/tessera.h"
#include "worker_args.h"

int worker_contain_kin(char *why, size_t n) {
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
        snprintf(why, n, "cannot make the worker a child subreaper: %s", strerror(errno));
        return TSR_E_WORKER;
    }
    return 0;
}

/* SIGKILL each live child of pid (all its threads' children) and, first,
 * theirs; returns how many were found. */
static int kill_tree(pid_t pid, int depth) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
    DIR *tasks = opendir(path);
    if (!tasks) return 0;
    int found = 0;
    struct dirent *t;
    while ((t = readdir(tasks)) != NULL) {
        if (t->d_name[0] == '.') continue;
        char list[96];
        snprintf(list, sizeof list, "/proc/%ld/task/%.20s/children", (long)pid, t->d_name);
        FILE *f = fopen(list, "re");
        if (!f) continue;
        long child;
        while (fscanf(f, "%ld", &child) == 1) {
            if (child <= 0) continue;
            /* Stopped first, so that it forks no more while its own are
             * found; the depth bound only guards against a runaway chain. */
            (void)kill((pid_t)child, SIGSTOP);
            if (depth < 64) found += kill_tree((pid_t)child, depth + 1);
            if (kill((pid_t)child, SIGKILL) == 0) found++;
        }
        fclose(f);
    }
    closedir(tasks);
    return found;
}

void worker_end_kin(void) {
    /* Killed children stay as zombies (counted again) and their orphans
     * come to this subreaper: a few rounds find those. */
    for (int round = 0; round < 4 && kill_tree(getpid(), 0) > 0; round++) {
    }
}
