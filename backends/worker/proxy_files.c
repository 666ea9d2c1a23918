/* SPDX-License-Identifier: MIT */
/* The files transport, host side: where shared memory cannot be used (or
 * is refused), a worker call writes its inputs and seeds to a binref file
 * in the component's spool, the worker reads them into private memory and
 * writes its results to another file, and the host reads those into the
 * call's own buffers. Both files are removed after every call, whatever
 * its end (see spool.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessera/payload.h"
#include "pool.h"
#include "codecs/binref_file.h"
#include "worker/spool.h"

int files_start(tsr_component *c, const char *shm_why, tsr_error *err) {
    const struct tsr_options *o = backend_options(c);
    const char *path = tsr_component_path(c);
    worker_backend *wb = worker_backend_of(c);
    /* Refused now rather than at every call. */
    const char *no_uring = NULL;
    if (o->file_io == TSR_FILE_IO_URING && binref_io_probe(&no_uring) != BINREF_IO_URING) {
        error_set(err, TSR_E_IO, "cannot load '%s' in a worker: file_io=io_uring, but io_uring "
                  "does not work here: %s", path, no_uring ? no_uring : "unknown reason");
        return TSR_E_IO;
    }
    const char *parent = o->spool_dir ? o->spool_dir : spool_default_parent();
    int removed = spool_remove_orphans(parent);
    if (removed > 0)
        comp_log(c, TSR_LOG_INFO, "removed %d spool directories left by dead processes in %s",
                 removed, parent);
    char why[TSR_ERRMSG_MAX - 128];
    int rc = spool_create(&wb->spool, parent, why, sizeof why);
    if (rc) {
        error_set(err, rc, "cannot load '%s' in a worker: %s%s%s", path, why,
                  shm_why ? "; shared memory could not be used either: " : "",
                  shm_why ? shm_why : "");
        return rc;
    }
    if (shm_why)
        comp_log(c, TSR_LOG_INFO,
                 "shared memory is unusable (%s): arrays of worker calls go through files in %s",
                 shm_why, spool_path(wb->spool));
    else
        comp_log(c, TSR_LOG_DEBUG, "arrays of worker calls go through files in %s",
                 spool_path(wb->spool));
    return 0;
}

int files_wire(tsr_call *call, int slot, binref_writer **w, const tsr_array *a, size_t bytes,
               binref *ref) {
    tsr_component *c = call_component(call);
    char why[TSR_ERRMSG_MAX - 128];
    int rc = 0;
    if (!*w) {
        char tag[SPOOL_TAG_MAX], prefix[SPOOL_TAG_MAX + 8];
        spool_tag(tag, slot);
        spool_prefix(prefix, sizeof prefix, tag, 0);
        /* Never rolled over: one file, index 0, which the worker expects. */
        binref_writer_opts wo = {.dir = spool_path(worker_backend_of(c)->spool),
                                 .prefix = prefix,
                                 .io = (binref_io)backend_options(c)->file_io};
        rc = binref_writer_open(w, &wo, why, sizeof why);
    }
    const char *file;
    uint64_t offset = 0;
    if (!rc) rc = binref_writer_add(*w, a->data, bytes, &file, &offset, why, sizeof why);
    if (rc) return call_fail(call, rc, "cannot write the inputs for the worker: %s", why);
    *ref = (binref){.seg = 0, .offset = offset, .bytes = bytes};
    backend_count(c, BACKEND_STAT_COPIED, bytes);
    return 0;
}

int files_flush(tsr_call *call, binref_writer *w) {
    char why[TSR_ERRMSG_MAX - 128];
    int rc = w ? binref_writer_flush(w, why, sizeof why) : 0;
    return rc ? call_fail(call, rc, "cannot write the inputs for the worker: %s", why) : 0;
}

static int same_header(const tsr_array *a, const tsr_array *b) {
    return a->dtype == b->dtype && a->rank == b->rank &&
           memcmp(a->shape, b->shape, (size_t)a->rank * sizeof(int64_t)) == 0;
}

int files_read_results(tsr_call *call, int slot, const chan_request_view *v) {
    const tsr_args *args = call_args(call);
    tsr_component *c = call_component(call);
    if (args->endpoint == TSR_EP_ABSTRACT_EVAL) return 0;
    const spool *sp = worker_backend_of(c)->spool;
    char tag[SPOOL_TAG_MAX], path[PATH_MAX], entry[SPOOL_TAG_MAX + 16],
        why[TSR_ERRMSG_MAX - 128], name[160];
    spool_tag(tag, slot);
    if (spool_file(path, sizeof path, spool_path(sp), tag, 1) != 0 ||
        spool_entry(entry, sizeof entry, tag, 1) != 0)
        return call_fail(call, TSR_E_IO, "the spool's path is too long");
    enum { FEW = 8 };
    binref_read few[FEW];
    binref_read *reads = args->n_results <= FEW ? few : calloc((size_t)args->n_results,
                                                               sizeof *reads);
    if (!reads) return call_fail(call, TSR_E_NOMEM, "out of memory");
    int n_reads = 0, rc = 0;
    for (int32_t k = 0; !rc && k < args->n_results; k++) {
        const tsr_array *r = &args->results[k], *e = call_expected(call, k);
        size_t bytes = 0;
        /* Not produced, or reshaped: results_check says which. */
        if (!r->data || !e->data || !same_header(r, e) || shape_bytes(e, &bytes) != 0 ||
            bytes == 0)
            continue;
        binref ref = v->results[k].ref; /* read once: the worker could change it */
        if (ref.seg != 0 || ref.reserved != 0 || ref.bytes != bytes) {
            rc = call_fail(call, TSR_E_WORKER,
                           "the worker answered %s with %llu bytes in file %u, %zu expected",
                           call_result_name(call, k, name, sizeof name),
                           (unsigned long long)ref.bytes, (unsigned)ref.seg, bytes);
            break;
        }
        reads[n_reads++] = (binref_read){.path = path, .offset = ref.offset, .bytes = bytes,
                                         .dst = r->data, .what = NULL};
    }
    /* Opened beneath the spool's descriptor as a plain entry: whatever the
     * worker left under the name (a symlink, a FIFO) is refused, never
     * followed or waited on. */
    int fd = -1;
    uint64_t size;
    if (!rc && n_reads > 0) {
        if (binref_open_entry(spool_dirfd(sp), entry, path, &fd, &size, why, sizeof why) != 0)
            rc = call_fail(call, TSR_E_IO, "cannot read the results of the worker: %s", why);
        for (int k = 0; k < n_reads; k++) {
            reads[k].fd = fd;
            reads[k].has_fd = true;
        }
    }
    if (!rc && binref_read_all(reads, n_reads, (binref_io)backend_options(c)->file_io, why,
                               sizeof why) != 0)
        rc = call_fail(call, TSR_E_IO, "cannot read the results of the worker: %s", why);
    if (fd >= 0) close(fd);
    if (reads != few) free(reads);
    return rc;
}

void files_end(tsr_call *call, int slot, binref_writer *w) {
    char tag[SPOOL_TAG_MAX];
    spool_tag(tag, slot);
    binref_writer_close(w, 1);
    spool_clean(worker_backend_of(call_component(call))->spool, tag);
}
