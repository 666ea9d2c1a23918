/* SPDX-License-Identifier: MIT */
/* A parsed JSON value back to compact text, numbers in their shortest
 * exact form (0.1, not jansson's 0.10000000000000001), as Python writes
 * them: the text of a JSON default or a JSON result. */
#include <stdlib.h>
#include <string.h>

#include "remote.h"
#include "codecs/json_writer.h"

static void put(json_writer *w, json_t *v) {
    size_t i;
    const char *key;
    json_t *x;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        jw_begin_object(w);
        json_object_foreach(v, key, x) {
            jw_key(w, key);
            put(w, x);
        }
        jw_end_object(w);
        return;
    case JSON_ARRAY:
        jw_begin_array(w);
        json_array_foreach(v, i, x) put(w, x);
        jw_end_array(w);
        return;
    case JSON_STRING: {
        char *quoted = json_dumps(v, JSON_ENCODE_ANY);
        if (quoted) jw_raw_value(w, quoted, strlen(quoted));
        else w->failed = true;
        free(quoted);
        return;
    }
    case JSON_INTEGER: jw_int(w, json_integer_value(v)); return;
    case JSON_REAL: jw_double(w, json_real_value(v)); return;
    case JSON_TRUE: jw_bool(w, true); return;
    case JSON_FALSE: jw_bool(w, false); return;
    default: jw_null(w); return;
    }
}

char *remote_json_text(json_t *v) {
    json_writer w;
    jw_init(&w);
    put(&w, v);
    return jw_finish(&w);
}
