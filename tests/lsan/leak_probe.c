/* SPDX-License-Identifier: MIT */
/*
 * Tests that leak on purpose, to prove that the sanitizer build's leak
 * check (run_leak_checked.sh) fails a test that leaks: probe_caught.sh
 * runs each alone and expects the leaking ones to be reported as failed
 * and the clean one to pass. Not part of the normal run.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/tessera.h>

#include "worker_util.h"

#define LEAKY TSR_BINARY_DIR "/tests/lsan/leaky.so"

/* The block is lost when the test body returns. */
Test(probe, leak_in_the_test_body_fails_the_test) {
    char *volatile block = malloc(4321);
    cr_assert_not_null(block);
    memset(block, 2, 4321);
    block = NULL;
}

/* In a forked child of the test, which ends with _exit (child_verdict.h). */
static const char *leak_in_child(void) {
    char *volatile block = malloc(4343);
    CHECK(block, "out of memory");
    memset(block, 3, 4343);
    block = NULL;
    return "ok";
}

Test(probe, leak_in_a_forked_test_child_fails_the_test) { run_in_child(leak_in_child, NULL); }

/* Open and close the leaky plugin in a worker; NULL when that worked. */
static const char *open_close_worker(const char *spawn, const char *leak) {
    tsr_options *o = tsr_options_new();
    CHECK(o, "out of memory");
    tsr_error err = TSR_ERROR_INIT;
    tsr_component *c = NULL;
    int rc = tsr_options_set(o, "mode", "worker", &err);
    if (!rc) rc = tsr_options_set(o, "spawn", spawn, &err);
    if (!rc) rc = tsr_options_set_config(o, "leak", leak);
    if (!rc) rc = tsr_open(LEAKY, o, &c, &err);
    tsr_options_free(o);
    CHECK(rc == 0, "spawn=%s leak=%s: %s", spawn, leak, err.message);
    tsr_close(c);
    return NULL;
}

static const char *exec_worker_leaks(void) {
    const char *v = open_close_worker("exec", "1");
    return v ? v : "ok";
}

/* spawn=fork needs a single-threaded host: the test's forked child. */
static const char *fork_worker_leaks(void) {
    const char *v = open_close_worker("fork", "1");
    return v ? v : "ok";
}

static const char *workers_free_everything(void) {
    const char *v = open_close_worker("exec", "0");
    if (!v) v = open_close_worker("fork", "0");
    return v ? v : "ok";
}

/* The plugin's fini forgets a block in the tessera-worker process. */
Test(probe, leak_in_an_exec_worker_fails_the_test) { run_in_child(exec_worker_leaks, NULL); }

/* The same in a worker forked from the test's process. */
Test(probe, leak_in_a_forked_worker_fails_the_test) { run_in_child(fork_worker_leaks, NULL); }

/* The control: the same workers, nothing forgotten, pass. */
Test(probe, workers_that_free_everything_pass) { run_in_child(workers_free_everything, NULL); }
