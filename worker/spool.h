/* SPDX-License-Identifier: MIT */
/*
 * The spool of a worker-mode component whose arrays travel through files
 * (transport "files"): a private directory
 * "<parent>/tessera-spool-<pid>-<starttime>-<16 random hex>", mode 0700,
 * made at open and removed with everything in it at close. The pid and
 * start time let a later open prove it orphaned (spool_remove_orphans),
 * as for shared-memory names; the random part makes it unguessable.
 *
 * Inside, each worker slot has one tag ("w<slot>") and at most two files
 * at a time, both removed by the host after every call, whatever its end:
 *   "<tag>-in-0.bin"   inputs and seeds, written by the host
 *   "<tag>-out-0.bin"  results, written by the worker
 * (binref_writer's "<prefix>-<k>.bin" with prefixes "<tag>-in" and
 * "<tag>-out", never rolled over: k is always 0). The control block of
 * each worker's channel lives there too, in a file without a name.
 */
#ifndef TESSERA_CODECS_SPOOL_H
#define TESSERA_CODECS_SPOOL_H

#include <stddef.h>

#define SPOOL_TAG_MAX 16
#define SPOOL_STEM "tessera-spool-"

typedef struct spool spool;

/* The parent used when none is given: $TMPDIR, else /tmp. */
const char *spool_default_parent(void);

/* Make the spool directory under parent (which must exist). Returns 0, or
 * TSR_E_IO / TSR_E_NOMEM with the cause in why. */
int spool_create(spool **out, const char *parent, char *why, size_t n);
/* Remove the directory and everything in it. Accepts NULL. */
void spool_destroy(spool *s);
const char *spool_path(const spool *s);

/* "w<slot>" into tag (SPOOL_TAG_MAX bytes). */
void spool_tag(char *tag, int slot);
/* "<tag>-in" (results 0) or "<tag>-out" (results 1): a binref_writer
 * prefix. Returns 0, or -1 when it does not fit. */
int spool_prefix(char *buf, size_t n, const char *tag, int results);
/* "<dir>/<tag>-in-0.bin" or "<dir>/<tag>-out-0.bin". 0, or -1 when it
 * does not fit. */
int spool_file(char *buf, size_t n, const char *dir, const char *tag, int results);
/* The same without the directory: "<tag>-in-0.bin" or "<tag>-out-0.bin",
 * an entry of the spool to open beneath its descriptor. */
int spool_entry(char *buf, size_t n, const char *tag, int results);
/* The spool directory's descriptor (the spool keeps it). Its files are
 * opened beneath it as plain entries (binref_open_entry: no symlink
 * followed, no FIFO waited on), never by path. */
int spool_dirfd(const spool *s);
/* Remove both files of a slot (either may be missing). */
void spool_clean(const spool *s, const char *tag);

/* Remove spool directories under parent whose creator is provably gone
 * (owned by this user, named by a process that no longer runs). Returns
 * how many were removed. */
int spool_remove_orphans(const char *parent);

#endif /* TESSERA_CODECS_SPOOL_H */
