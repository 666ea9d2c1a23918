/* SPDX-License-Identifier: MIT */
/*
 * `tessera test`: Tesseract's regression cases (the *.json files of test_cases) run
 * against a component, with the verdict tesseract-runtime's `test` gives.
 *   cmd_test.c       the command: the cases to run, one line each, summary
 *   test_run.c       one case: its fields, the call, the expected exception
 *   test_compare.c   obtained outputs against expected ones
 */
#ifndef TESSERA_CLI_TEST_CASE_H
#define TESSERA_CLI_TEST_CASE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include <tessera/tessera.h>

/* A case's verdict; why is set when it did not pass. */
typedef struct test_verdict {
    bool passed;
    char why[1024];
} test_verdict;

typedef struct test_settings {
    const char *input_path; /* base of relative binref paths; NULL: the cwd */
} test_settings;

/* Run the case held in text (len bytes), from file name (for messages),
 * against c. */
void test_run_case(tsr_component *c, const char *text, size_t len, const test_settings *s,
                   test_verdict *v);

/* Compare the component's answer (obtained, as tessera writes it in
 * base64) with expected_outputs of a case for endpoint ep; false with why
 * set on the first difference. */
bool test_compare_outputs(const tsr_component *c, tsr_endpoint ep, json_t *obtained,
                          json_t *expected, double atol, double rtol, char *why, size_t n);

#endif /* TESSERA_CLI_TEST_CASE_H */
