/* SPDX-License-Identifier: MIT */
/* The docs page of a loaded component, shared by `tessera docs` and
 * `tessera serve`'s GET /docs: the facts the page needs (mode, which
 * endpoints are the component's own, what serves the others) read from
 * the component, then docs_html_page. */
#include <stdio.h>

#include "docs_html.h"
#include "tessera_serve.h"

int http_serve_docs(const tsr_component *c, const char *component_arg, char **page,
                    tsr_error *err) {
    *page = NULL;
    char *schema = NULL;
    int rc = tsr_schema_to_json(c, &schema, err);
    if (rc != 0) return rc;
    docs_facts facts = {.component_arg = component_arg ? component_arg : tsr_component_path(c),
                        .fd_method = tsr_component_fd_method(c),
                        .hvp_source = tsr_component_hvp_source(c)};
    tsr_mode mode = tsr_component_mode(c);
    if (mode != TSR_MODE_INPROC) facts.mode = mode == TSR_MODE_WORKER ? "worker" : "isolated";
    for (int ep = 0; ep < TSR_EP_COUNT; ep++)
        if (tsr_component_has_native_endpoint(c, (tsr_endpoint)ep)) facts.native |= 1u << ep;
    char why[512];
    if (docs_html_page(schema, &facts, page, why, sizeof why) != 0) {
        /* the schema comes from the library, so what fails is memory */
        snprintf(err->message, sizeof err->message, "cannot make the docs page of '%s': %s",
                 tsr_component_name(c), why);
        err->loc[0] = '\0';
        rc = err->code = TSR_E_NOMEM;
    }
    tsr_json_free(schema);
    return rc;
}
