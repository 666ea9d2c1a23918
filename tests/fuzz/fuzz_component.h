/* SPDX-License-Identifier: MIT */
/*
 * The contract test plugin as the fuzz targets that call it open it: once
 * per process, with small limits so that each input stays cheap (a
 * jacobian of a long input is quadratic) and the limit checks run too.
 * A plugin that will not open ends the run: no input could be tried.
 */
#ifndef TESSERA_FUZZ_COMPONENT_H
#define TESSERA_FUZZ_COMPONENT_H

#include <stdio.h>
#include <stdlib.h>

#include <tessera/tessera.h>

/* who: the target's name, for the message. */
static inline tsr_component *fuzz_component(const char *who) {
    static tsr_component *c;
    if (c) return c;
    tsr_options *o = tsr_options_new();
    tsr_error err = {0};
    if (!o || tsr_options_set(o, "max_call_bytes", "16M", &err) != 0 ||
        tsr_options_set(o, "max_payload_bytes", "1M", &err) != 0 ||
        tsr_open(FUZZ_PLUGIN, o, &c, &err) != 0) {
        fprintf(stderr, "%s: cannot open %s: %s\n", who, FUZZ_PLUGIN, err.message);
        abort();
    }
    tsr_options_free(o);
    return c;
}

#endif /* TESSERA_FUZZ_COMPONENT_H */
