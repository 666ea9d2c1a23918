/* SPDX-License-Identifier: MIT */
/* tsr_error starts with struct_size, so that it can grow: the caller sets
 * it (TSR_ERROR_INIT) or leaves it 0 (this layout), every function that
 * reports into a tsr_error fills code, message and loc and leaves
 * struct_size as the caller set it, so that one tsr_error can be reused. */
#include <stddef.h>
#include <string.h>

#include <tessera/payload.h>

#include "test_util.h"

#define MISSING_PLUGIN "/nonexistent/tessera-no-such-plugin.so"

Test(error_struct, struct_size_comes_first_and_the_initializer_sets_it) {
    cr_assert_eq(offsetof(tsr_error, struct_size), 0);
    tsr_error err = TSR_ERROR_INIT;
    cr_assert_eq(err.struct_size, sizeof(tsr_error));
    cr_assert_eq(err.code, 0);
    cr_assert_str_eq(err.message, "");
    cr_assert_str_eq(err.loc, "");
}

/* A failed tsr_open with err as given: it is filled, and struct_size kept. */
static void open_fails_into(tsr_error *err, uint32_t struct_size) {
    tsr_component *c = (tsr_component *)(uintptr_t)0x1;
    cr_assert_eq(tsr_open(MISSING_PLUGIN, NULL, &c, err), TSR_E_LOAD);
    cr_assert_null(c);
    cr_assert_eq(err->code, TSR_E_LOAD);
    cr_assert_not_null(strstr(err->message, MISSING_PLUGIN), "message: %s", err->message);
    cr_assert_str_eq(err->loc, "");
    cr_assert_eq(err->struct_size, struct_size, "struct_size changed to %u", err->struct_size);
}

Test(error_struct, tsr_open_fills_an_initialized_error_and_keeps_its_size) {
    tsr_error err = TSR_ERROR_INIT;
    open_fails_into(&err, (uint32_t)sizeof(tsr_error));
}

Test(error_struct, a_zeroed_error_is_this_layout_and_stays_zeroed_in_size) {
    tsr_error err = {0};
    open_fails_into(&err, 0);
}

Test(error_struct, options_and_payload_functions_keep_the_size_too) {
    tsr_error err = TSR_ERROR_INIT;
    tsr_options *o = tsr_options_new();
    cr_assert_not_null(o);
    cr_assert_eq(tsr_options_set(o, "no_such_option", "1", &err), TSR_E_ARGUMENT);
    cr_assert_not_null(strstr(err.message, "no_such_option"), "message: %s", err.message);
    cr_assert_eq(err.struct_size, sizeof(tsr_error));
    tsr_options_free(o);

    tsr_array a;
    void *buffer = NULL;
    const char *text = "{\"object_type\": \"array\", \"shape\": [2], \"dtype\": \"float64\","
                       " \"data\": {\"buffer\": [1, 2, 3], \"encoding\": \"json\"}}";
    int rc = tsr_array_from_json(text, strlen(text), TSR_FLOAT64, &a, &buffer, &err);
    cr_assert_lt(rc, 0);
    cr_assert_eq(err.code, rc);
    cr_assert_neq(err.message[0], '\0');
    cr_assert_eq(err.struct_size, sizeof(tsr_error));
    tsr_array_buffer_free(buffer);
}

Test(error_struct, one_error_reused_holds_the_last_failure_only) {
    tsr_error err = TSR_ERROR_INIT;
    /* A payload failure with a loc, then an open failure: the loc goes. */
    const char *text = "{\"x\": ";
    tsr_array a;
    void *buffer = NULL;
    cr_assert_lt(tsr_array_from_json(text, strlen(text), TSR_FLOAT64, &a, &buffer, &err), 0);
    strcpy(err.loc, "inputs.stale");
    open_fails_into(&err, (uint32_t)sizeof(tsr_error));
}
