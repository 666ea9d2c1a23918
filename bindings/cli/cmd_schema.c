/* SPDX-License-Identifier: MIT */
/* `tessera schema PLUGIN`: the component's schema as JSON; with
 * --openapi, the OpenAPI document `tessera serve` answers at
 * /openapi.json (libtessera-serve writes both). */
#include <limits.h>
#include <stdlib.h>

#include "cli.h"
#include "tessera_serve.h"

int cli_cmd_schema(int argc, char **argv) {
    cli_options o;
    int rc = cli_parse_options(argc, argv, false, &o);
    if (rc == CLI_OK && o.help) {
        cli_print_schema_help();
    } else if (rc == CLI_OK && o.n_positional != 1) {
        rc = cli_usage_error("schema", o.n_positional == 0 ? "missing PLUGIN" : "too many arguments");
    } else if (rc == CLI_OK) {
        char path_buf[PATH_MAX];
        tsr_component *c = NULL;
        tsr_error err = TSR_ERROR_INIT;
        char *text = NULL;
        if (tsr_open(cli_plugin_path(o.positional[0], path_buf, sizeof path_buf), o.library, &c, &err) != 0) {
            cli_error(NULL, "%s", err.message);
            rc = CLI_LOAD_FAILED;
        } else if ((o.openapi ? http_serve_openapi(c, NULL, &text, &err)
                              : tsr_schema_to_json(c, &text, &err)) != 0) {
            cli_error(NULL, "%s", err.message);
            rc = CLI_OUTPUT;
        } else {
            rc = cli_write_output(&o, text);
        }
        tsr_json_free(text);
        tsr_close(c);
    }
    cli_options_free(&o);
    return rc;
}
