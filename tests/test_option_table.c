/* SPDX-License-Identifier: MIT */
/*
 * The table of library options (tsr_option_info_at) is what tsr_options_set
 * takes: every key parses its sample value and its documented default, the
 * documented default is the default (setting it changes nothing), a bad
 * value is refused naming the key, and a key outside the table is refused
 * with a message listing the table's keys. tessera.h points at the table
 * instead of keeping a second copy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/option_table.h>

#include "core/options.h"
#include "test_util.h"

/* A whole file (freed by the caller). */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot read %s", path);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    cr_assert_geq(size, 0);
    rewind(f);
    char *text = malloc((size_t)size + 1);
    cr_assert_not_null(text);
    cr_assert_eq(fread(text, 1, (size_t)size, f), (size_t)size);
    text[size] = '\0';
    fclose(f);
    return text;
}

Test(option_table, every_entry_is_complete) {
    size_t n = 0;
    for (const tsr_option_info *o; (o = tsr_option_info_at(n)) != NULL; n++) {
        cr_assert(o->key && *o->key, "entry %zu has no key", n);
        cr_assert(o->values && *o->values, "%s: no values", o->key);
        cr_assert(o->default_text && *o->default_text, "%s: no default", o->key);
        cr_assert(o->modes && *o->modes, "%s: no modes", o->key);
        cr_assert(o->summary && *o->summary, "%s: no summary", o->key);
        cr_assert(o->details && o->sample && *o->sample, "%s: no details or sample", o->key);
        cr_assert(!strchr(o->summary, '\n'), "%s: the summary is one line", o->key);
        for (size_t m = 0; m < n; m++)
            cr_assert_str_neq(tsr_option_info_at(m)->key, o->key, "%s is listed twice", o->key);
    }
    cr_assert_geq(n, 20);
    cr_assert_null(tsr_option_info_at(n + 1));
    cr_assert_null(tsr_option_info_at((size_t)-1));
}

Test(option_table, every_key_parses_its_sample_and_its_default) {
    for (size_t i = 0; tsr_option_info_at(i); i++) {
        const tsr_option_info *o = tsr_option_info_at(i);
        tsr_options *opts = tsr_options_new();
        cr_assert_not_null(opts);
        tsr_error err = TSR_ERROR_INIT;
        cr_assert_eq(tsr_options_set(opts, o->key, o->sample, &err), 0, "%s=%s: %s", o->key,
                     o->sample, err.message);
        if (o->default_value)
            cr_assert_eq(tsr_options_set(opts, o->key, o->default_value, &err), 0, "%s=%s: %s",
                         o->key, o->default_value, err.message);
        tsr_options_free(opts);
    }
}

/* The default the table documents is the one options_defaults sets. */
Test(option_table, documented_default_changes_nothing) {
    for (size_t i = 0; tsr_option_info_at(i); i++) {
        const tsr_option_info *o = tsr_option_info_at(i);
        if (!o->default_value) continue;
        tsr_options *fresh = tsr_options_new(), *set = tsr_options_new();
        cr_assert(fresh && set);
        tsr_error err = TSR_ERROR_INIT;
        cr_assert_eq(tsr_options_set(set, o->key, o->default_value, &err), 0, "%s", err.message);
        set->mode_set = 0; /* records that mode was given, not a value */
        cr_assert(memcmp(fresh, set, sizeof *fresh) == 0,
                  "%s=%s (its documented default) changes the options", o->key,
                  o->default_value);
        tsr_options_free(fresh);
        tsr_options_free(set);
    }
}

Test(option_table, bad_values_are_refused_naming_the_key) {
    for (size_t i = 0; tsr_option_info_at(i); i++) {
        const tsr_option_info *o = tsr_option_info_at(i);
        tsr_options *opts = tsr_options_new();
        cr_assert_not_null(opts);
        tsr_error err = TSR_ERROR_INIT;
        /* A path or a name takes any text but the empty one. */
        const char *bad =
            strcmp(o->values, "a path") == 0 || strcmp(o->values, "a name") == 0 ? "" : "no-such-value";
        assert_code(tsr_options_set(opts, o->key, bad, &err), TSR_E_ARGUMENT, o->key);
        assert_contains(err.message, o->key);
        tsr_options_free(opts);
    }
}

Test(option_table, a_key_outside_the_table_is_refused_listing_the_table) {
    const char *outside[] = {"colour", "Mode", "mode ", "", "max_array_byte", "workers="};
    for (size_t k = 0; k < sizeof outside / sizeof outside[0]; k++) {
        tsr_options *opts = tsr_options_new();
        cr_assert_not_null(opts);
        tsr_error err = TSR_ERROR_INIT;
        assert_code(tsr_options_set(opts, outside[k], "1", &err), TSR_E_ARGUMENT, err.message);
        assert_contains(err.message, "unknown option");
        for (size_t i = 0; tsr_option_info_at(i); i++)
            assert_contains(err.message, tsr_option_info_at(i)->key);
        tsr_options_free(opts);
    }
}

/* tessera.h keeps no second list of the keys: it points at the table. */
Test(option_table, header_points_at_the_table) {
    char *header = slurp(TSR_SOURCE_DIR "/include/tessera/tessera.h");
    assert_contains(header, "docs/reference/options.md");
    assert_contains(header, "tessera help options");
    for (size_t i = 0; tsr_option_info_at(i); i++) {
        char quoted[96];
        snprintf(quoted, sizeof quoted, "\"%s\"", tsr_option_info_at(i)->key);
        cr_assert_null(strstr(header, quoted), "tessera.h still describes %s", quoted);
    }
    char *md = slurp(TSR_SOURCE_DIR "/docs/reference/options.md");
    for (size_t i = 0; tsr_option_info_at(i); i++) {
        char heading[96];
        snprintf(heading, sizeof heading, "\n## %s\n", tsr_option_info_at(i)->key);
        assert_contains(md, heading);
    }
    free(md);
    free(header);
}
