/* SPDX-License-Identifier: MIT */
/* A request body through the library's payload functions: parsed and
 * checked against the schema (Tesseract's request keys), bound into a
 * call, run, and the results written in Tesseract's response form. Binref
 * inputs are read only below the configured input directory, never
 * outside it; without one they are refused. */
#include <string.h>

#include "endpoint_call.h"

void endpoint_call(const serve_config *cfg, tsr_endpoint ep, tsr_encoding enc, const char *body,
                   size_t len, serve_response *rs) {
    tsr_component *c = cfg->component;
    const char *route = serve_endpoint_route(ep);
    const char *name = tsr_component_name(c) ? tsr_component_name(c) : "";
    tsr_input_options in = {.struct_size = sizeof in,
                            .base_dir = cfg->input_dir,
                            .allow_escape = 0,
                            .refuse_files = cfg->input_dir == NULL};
    tsr_payload *p = NULL;
    tsr_error err = {0};
    const char *type = NULL;   /* the run's, when it failed */
    if (tsr_payload_parse_ex(c, ep, body ? body : "", len, &in, &p, &err) != 0) {
        serve_error(rs, &err, NULL, route, name, body, len);
        return;
    }
    tsr_call *call = tsr_call_new(c, ep);
    int rc = call ? tsr_payload_bind(p, call, &err) : TSR_E_NOMEM;
    if (!call) err = (tsr_error){.code = TSR_E_NOMEM, .message = "out of memory"};
    if (!rc) {
        rc = tsr_call_run(call);
        if (rc) {
            err.code = rc;
            snprintf(err.message, sizeof err.message, "%s", tsr_call_errmsg(call));
            snprintf(err.loc, sizeof err.loc, "%s", tsr_call_errloc(call));
            type = tsr_call_errtype(call);   /* the endpoint's own for a value it refused */
        }
    }
    char *text = NULL;
    if (!rc) {
        tsr_output_options out = {.struct_size = sizeof out, .encoding = enc,
                                  .lz4 = cfg->opts.lz4, .output_dir = cfg->output_dir};
        rc = tsr_payload_format_results_ex(p, call, &out, &text, &err);
    }
    if (rc) {
        serve_error(rs, &err, type, route, name, body, len);
    } else {
        rs->status = 200;
        rs->content_type = "application/json";
        rs->body = text;
        rs->free_body = tsr_json_free;
        rs->len = strlen(text);
    }
    tsr_call_free(call);
    tsr_payload_free(p);
}
