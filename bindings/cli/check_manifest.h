/* SPDX-License-Identifier: MIT */
/* The parts of `tessera check-manifest` (cmd_check_manifest.c): the
 * state of one check, the arrays it owns (check_manifest_values.c) and one
 * endpoint tried (check_manifest_run.c). */
#ifndef TESSERA_CLI_CHECK_MANIFEST_H
#define TESSERA_CLI_CHECK_MANIFEST_H

#include <stdint.h>
#include <stdio.h>

#include "cli.h"

#define COMMAND "check-manifest"
#define DEFAULT_TIMEOUT_MS 5000
#define NOTE_MAX 8        /* lines kept of what a phase logged or printed */
#define NOTE_BYTES 400

typedef enum outcome { RAN, FAILED, CRASHED, EXITED, HUNG } outcome;

/* A few lines, the rest counted. */
typedef struct notes {
    int n, dropped;
    char line[NOTE_MAX][NOTE_BYTES];
} notes;

/* An array of the check: in the component's memory (the worker's shared
 * memory), with a copy of what it held first. */
typedef struct owned {
    const char *name;
    tsr_array a;
    size_t bytes;
    void *first;
} owned;

typedef struct check {
    tsr_component *c;
    const char *path;
    FILE *out;              /* the report's body, printed once the worker is gone */
    int64_t timeout_ms;
    int loading;            /* logs now are load warnings */
    notes load, printed;
    owned *in;              /* one per input, schema order */
    int32_t n_in;
    tsr_array *out_shape;   /* apply's results (shapes only), for cotangents */
    int have_shapes;
    int n_bad;
    int unsafe;             /* the first problem endangers an in-process host */
    char first[TSR_ERRMSG_MAX];   /* the first problem in short, for the verdict */
} check;

/* check_manifest_values.c: element access in any dtype (value as a
 * double pair: real, imaginary), the check's own arrays (in the
 * component's memory, with a copy of what they first held), inputs made
 * from the schema or read from a payload. */
int64_t cm_count(const tsr_array *a);
void cm_fill(owned *o, int32_t k, int32_t *int_scalars);
int cm_generate_inputs(check *ck);
void cm_get(const void *p, tsr_dtype d, int64_t i, double v[2]);
int cm_is_float(tsr_dtype d);
int cm_own(check *ck, owned *o, const char *name, const tsr_array *shape);
int cm_payload_inputs(check *ck, const char *arg);
void cm_print_array(FILE *f, const owned *o);
void cm_release(check *ck, owned *o);
int cm_same(const void *x, const void *y, tsr_dtype d, int64_t i);

/* check_manifest_run.c: run one endpoint twice and report it; a phase's
 * log or output lines, printed with a prefix (by the run and the load's
 * report alike). */
void cm_check_endpoint(check *ck, tsr_endpoint ep);
void cm_print_notes(FILE *f, const notes *ns, const char *prefix);

#endif
