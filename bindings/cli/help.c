/* SPDX-License-Identifier: MIT */
/* Help texts. Help asked for goes to stdout; usage errors go to stderr. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

void cli_print_version(void) {
    fprintf(cli_out, "tessera %d.%d.%d (plugin ABI %u)\n", TSR_VERSION_MAJOR,
            TSR_VERSION_MINOR, TSR_VERSION_PATCH, TSR_PLUGIN_ABI_VERSION);
}

/* One line a command, from the table of commands.c. */
static void print_command_list(const cli_command *commands, size_t n) {
    for (size_t k = 0; k < n; k++) {
        const cli_command *c = &commands[k];
        char head[64];
        snprintf(head, sizeof head, "%s%s%s", c->name, *c->args ? " " : "", c->args);
        if (strlen(head) <= 29) fprintf(cli_out, "  %-29s %s\n", head, c->summary);
        else fprintf(cli_out, "  %s\n  %-29s %s\n", head, "", c->summary);
    }
}

void cli_print_main_help(const cli_command *commands, size_t n) {
    fputs(
        "Usage: tessera [--help] [--version] COMMAND [OPTIONS] PLUGIN [PAYLOAD]\n"
        "\n"
        "Load a Tessera component (a plugin .so, a manifest, a Tesseract's\n"
        "tesseract_api.py, or an FMI 3.0 FMU) and call it with a Tesseract-style\n"
        "JSON payload. Results are written to stdout, diagnostics to stderr.\n"
        "\n"
        "Commands:\n",
        cli_out);
    print_command_list(commands, n);
    fputs(
        "  (jacobian-vector-product, vector-jacobian-product and abstract_eval are\n"
        "  accepted too.) 'tessera COMMAND --help' describes each command,\n"
        "  'tessera help options' the library options of --option.\n"
        "\n"
        "PAYLOAD is JSON text, @FILE to read it from FILE, or - (or @-) for stdin.\n"
        "PLUGIN is a path to a .so; a bare name that exists in the current\n"
        "directory is taken from there, any other is searched by the loader.\n"
        "It may also be a JSON manifest of a legacy routine, or a Python component:\n"
        "a folder holding tesseract_api.py (with its tesseract_requirements.txt, an\n"
        "environment is built for it at first use in worker mode), or the file.\n"
        "An FMI 3.0 FMU is a .fmu archive or its unpacked folder, its form after a\n"
        "'#': model.fmu#cosim (a Co-Simulation trajectory, the default when it has\n"
        "one), #simulate (a Model Exchange trajectory) or #rhs (its right-hand side).\n"
        "\n"
        "Options:\n"
        "  -h, --help       show this help\n"
        "  -V, --version    show the version\n"
        "\n",
        cli_out);
    cli_print_exit_statuses();
}

/* The one table of exit statuses: every command follows it (cli.h,
 * enum cli_exit) and every help text prints it. */
void cli_print_exit_statuses(void) {
    fputs("Exit status (every command):\n"
          "  0  success; check-gradients: every check passed\n"
          "  1  the call failed: the plugin lacks the endpoint called, refused its\n"
          "     arguments (shapes, dtypes), reported an error or ended the process\n"
          "     (exit, a Fortran STOP); check-gradients: nothing was checked, or a\n"
          "     derivative disagrees with the reference or with itself run again\n"
          "  2  usage error: unknown command or option, missing or extra arguments,\n"
          "     an option naming an unknown or non-differentiable field or an\n"
          "     endpoint the plugin lacks\n"
          "  3  the plugin could not be loaded or initialised\n"
          "  4  the payload could not be read or decoded: malformed JSON, a bad\n"
          "     array, a field unknown, missing, named twice or not differentiable\n"
          "  5  the results could not be encoded or written\n",
          cli_out);
}

static void print_common_options(int with_format) {
    fputs("Options:\n", cli_out);
    if (with_format)
        fputs("  -f, --format FORMAT    json (default), json+base64 or json+binref: how\n"
              "                         arrays are written (--output-format is accepted too)\n"
              "  --output-path DIR      json+binref: where the .bin files go (default: the\n"
              "                         current directory; made when missing); buffers name\n"
              "                         them relative to DIR\n"
              "  --input-path DIR       where relative binref paths of the payload resolve\n"
              "                         (default: the current directory, as in Tesseract)\n"
              "  --allow-escape         let binref paths lead outside --input-path ('..',\n"
              "                         absolute paths, symlinks); refused by default\n"
              "  --compression lz4      json+base64, json+binref: each array as an lz4 frame\n"
              "                         (none: the default; json ignores it, as Tesseract)\n"
              "  --checksum             json+base64, json+binref: add the XXH3 of each\n"
              "                         array (\"checksum\"); checked whenever read. Tesseract's\n"
              "                         readers refuse the extra key: leave it out for them\n"
              "  --io IO                binref file I/O: auto (default: io_uring where it\n"
              "                         works, see 'tessera info'), io_uring or posix\n"
              "  --error-format FORMAT  text (default: one 'tessera: error:' line) or json: a\n"
              "                         failure as one line of Tesseract's 422 body,\n"
              "                         {\"detail\": [{\"type\", \"loc\", \"msg\", \"input\"}]}, the\n"
              "                         bytes 'tessera serve' answers the same request with;\n"
              "                         the exit status is the same either way\n"
              "  --stats                after the call, what it cost on stderr: per endpoint\n"
              "                         calls, errors, ms= and mean_ms=, then worker_wait_ms=,\n"
              "                         copy_ms= and the byte counts (tsr_component_stats)\n",
              cli_out);
    fputs("  -o, --output FILE      write the result to FILE instead of stdout\n"
          "  --mode MODE            inproc (default), isolated or worker\n"
          "  --option KEY=VALUE     a library option (tsr_options_set), e.g. workers=2,\n"
          "                         timeout_ms=5000, python=PATH; repeatable; every\n"
          "                         key: 'tessera help options'\n"
          "  --config KEY=VALUE     configuration for the plugin's init; repeatable\n"
          "                         (e.g. --config matrix=A.txt for the linear plugin)\n"
          "  -h, --help             show this help\n",
          cli_out);
}

void cli_print_schema_help(void) {
    fputs("Usage: tessera schema [OPTIONS] PLUGIN\n"
          "\n"
          "Print the component's schema as JSON: name, version, description,\n"
          "inputs and outputs (name, dtype, shape, differentiable, doc, kind) and\n"
          "the endpoints it implements. In shapes, an int is a fixed dimension, a\n"
          "string a symbolic one shared between fields, null any size; a shape\n"
          "that is null itself is an array of any rank. kind is array, text (a\n"
          "JSON string, with its allowed values in choices when it has some) or\n"
          "json (any JSON value, arrays inside as encoded array objects).\n"
          "\n"
          "  --openapi              print instead the OpenAPI document that `tessera serve`\n"
          "                         answers at /openapi.json, as tesseract-core's clients\n"
          "                         and tesseract-jax read it\n"
          "\n",
          cli_out);
    print_common_options(0);
    fputs("\n", cli_out);
    cli_print_exit_statuses();
}

void cli_print_docs_help(void) {
    fputs("Usage: tessera docs [OPTIONS] PLUGIN\n"
          "\n"
          "Write the component's API as one self-contained HTML page (no scripts,\n"
          "nothing fetched; it works offline): its description; each input and\n"
          "output with dtype, shape (symbolic dims, * for any size), default,\n"
          "differentiability and doc, nested fields under their parent; which\n"
          "fields share a symbolic dim; each endpoint, whether the component\n"
          "implements it or it is served by finite differences, and what it takes;\n"
          "an example apply request and the command that sends it. With -o the\n"
          "page is written to a temporary file renamed over FILE, so a failed run\n"
          "leaves FILE as it was.\n"
          "\n",
          cli_out);
    print_common_options(0);
    fputs("\n", cli_out);
    cli_print_exit_statuses();
}

static const char *payload_form(tsr_endpoint ep) {
    switch (ep) {
    case TSR_EP_APPLY:
        return "  {\"inputs\": {FIELD: ARRAY, ...}}\n"
               "  -> {OUTPUT: ARRAY, ...}\n";
    case TSR_EP_ABSTRACT_EVAL:
        return "  {\"inputs\": {FIELD: {\"shape\": [...], \"dtype\": \"...\"}, ...}}\n"
               "  -> {OUTPUT: {\"shape\": [...], \"dtype\": \"...\"}, ...}\n";
    case TSR_EP_JVP:
        return "  {\"inputs\": {...}, \"jvp_inputs\": [IN, ...], \"jvp_outputs\": [OUT, ...],\n"
               "   \"tangent_vector\": {IN: ARRAY, ...}}\n"
               "  -> {OUT: ARRAY, ...}\n";
    case TSR_EP_VJP:
        return "  {\"inputs\": {...}, \"vjp_inputs\": [IN, ...], \"vjp_outputs\": [OUT, ...],\n"
               "   \"cotangent_vector\": {OUT: ARRAY, ...}}\n"
               "  -> {IN: ARRAY, ...}\n";
    case TSR_EP_HVP:
        return "  {\"inputs\": {...}, \"hvp_inputs\": [IN, ...], \"hvp_outputs\": [OUT, ...],\n"
               "   \"cotangent_vector\": {OUT: ARRAY, ...}, \"tangent_vector\": {IN: ARRAY, ...}}\n"
               "  -> {IN: ARRAY, ...}: the derivative of the vjp of the cotangent along\n"
               "     the tangent, one array per hvp_input, shaped like it\n";
    default:
        return "  {\"inputs\": {...}, \"jac_inputs\": [IN, ...], \"jac_outputs\": [OUT, ...]}\n"
               "  -> {OUT: {IN: ARRAY shaped (*OUT.shape, *IN.shape)}, ...}\n";
    }
}

void cli_print_call_help(const char *command, tsr_endpoint ep) {
    fprintf(cli_out, "Usage: tessera %s [OPTIONS] PLUGIN PAYLOAD\n\n", command);
    fputs("PAYLOAD is JSON text, @FILE, or - (or @-) for stdin. Arrays are encoded\n"
          "arrays ({\"object_type\": \"array\", \"shape\": [...], \"dtype\": \"float64\",\n"
          "\"data\": {\"buffer\": ..., \"encoding\": \"json\", \"base64\" or \"binref\"}},\n"
          "with \"compression\": \"lz4\" and \"checksum\" optional), or plain numbers and\n"
          "nested lists. A binref buffer is \"FILE:OFFSET\" (\"FILE:OFFSET:SIZE\" when\n"
          "compressed). Nested inputs are nested objects.\n"
          "\n"
          "Payload and result:\n",
          cli_out);
    fputs(payload_form(ep), cli_out);
    fputs("\n", cli_out);
    print_common_options(1);
    fputs("\n", cli_out);
    cli_print_exit_statuses();
}

void cli_print_info_help(void) {
    fputs("Usage: tessera info [-o FILE]\n"
          "\n"
          "Print what this build and this machine offer, one 'key: value' per line:\n"
          "  tessera     the library's version\n"
          "  plugin ABI  the plugin ABI version it loads\n"
          "  file I/O    how binref files are written and read: io_uring, or\n"
          "              pread/pwrite with the reason io_uring is unavailable\n"
          "              (kernel switch, seccomp, memlock limit, old kernel)\n"
          "  shm         whether worker mode's shared memory (memfd) works, and the\n"
          "              memory available\n"
          "  kernel      the kernel's name, release and machine\n"
          "\n"
          "Options:\n"
          "  -o, --output FILE      write it to FILE instead of stdout\n"
          "  -h, --help             show this help\n"
          "\n",
          cli_out);
    cli_print_exit_statuses();
}

void cli_print_gradcheck_help(void) {
    fputs("Usage: tessera check-gradients [OPTIONS] PLUGIN PAYLOAD\n"
          "\n"
          "Check the component's derivative endpoints (jvp, vjp, jacobian, hvp) against\n"
          "finite differences of apply, at the inputs of PAYLOAD: {\"inputs\": {...}}\n"
          "as for apply (JSON text, @FILE, or - for stdin). Differentiable float32 and\n"
          "float64 fields are checked; float16 and complex fields are reported as\n"
          "skipped; other inputs are held fixed.\n"
          "\n"
          "How: for up to N sampled elements of each input, a central difference\n"
          "with step h = eps * max(|x|, 1) gives a column of every output. The\n"
          "jacobian is compared with whole columns; once it agrees, jvp and vjp are\n"
          "checked against it with one random dense tangent and cotangent each.\n"
          "Without a (correct) jacobian, jvp is called with each sampled unit\n"
          "tangent and vjp with each sampled unit cotangent. An element passes when\n"
          "|got - want| <= atol + rtol * |want| + the error of the difference\n"
          "itself, from apply's rounding noise (estimated first, 6 applies per\n"
          "input). With --taylor no step or tolerance is needed: along a random\n"
          "direction the remainder |f(x+hv) - f(x) - h J v| must shrink as h^2\n"
          "(observed order log2(r(h)/r(h/2)) >= 1.8) while h is halved.\n"
          "Then each checked endpoint is called twice more with the same random seeds\n"
          "and must give the same results (an adjoint that adds to results it did\n"
          "not zero fails here). hvp is checked last, with one call on a random\n"
          "cotangent w and tangent v: against central differences of the vjp along\n"
          "v (2 vjp calls), or, without a vjp or with one found wrong, against\n"
          "second differences of w . f (4 applies per sampled input element).\n"
          "A check that compared nothing (every derivative\n"
          "served by finite differences and not named) says so and exits 1.\n"
          "\n"
          "Options:\n"
          "  --endpoints LIST       which of jvp,vjp,jacobian,hvp to check (default: every\n"
          "                         one the plugin implements itself, not those served\n"
          "                         by finite differences)\n"
          "  --input-paths LIST     inputs to differentiate, comma-separated (default:\n"
          "                         every differentiable input)\n"
          "  --output-paths LIST    outputs to differentiate (default: every\n"
          "                         differentiable output)\n"
          "  --max-evals N          sampled elements per field (default 100)\n"
          "  --seed N               seed of the sampling and random directions (default 0)\n"
          "  --rtol X, --atol X     tolerances (default 1e-5 and 1e-8; 1e-2 and 1e-4\n"
          "                         when a float32 field is involved)\n"
          "  --eps X                finite-difference step (default 1e-5; 1e-3 for\n"
          "                         float32 inputs), relative to max(|x|, 1)\n"
          "  --absolute-step        use h = eps, not relative to the input's scale\n"
          "  --taylor               Taylor remainder convergence instead (eps-free)\n"
          "  --taylor-steps N       step halvings in Taylor mode, 3 to 40 (default 8)\n"
          "  --max-failures N       failures listed (default 20; all are counted)\n"
          "  -f, --format FORMAT    text (default) or json\n"
          "  --mode MODE            inproc (default), isolated or worker\n"
          "  --option KEY=VALUE     a library option, e.g. fd_method=central (the host's\n"
          "                         finite differences for a component); repeatable\n"
          "  --config KEY=VALUE     configuration for the plugin's init; repeatable\n"
          "  -h, --help             show this help\n"
          "\n"
          "Output: a table per endpoint (checks, failures, largest absolute and\n"
          "relative errors, calls), the number of apply evaluations, skipped fields,\n"
          "then each failure: endpoint, derivative d OUT[j] / d IN[i], the endpoint's\n"
          "value and the reference. A progress bar is drawn on stderr when it is a\n"
          "terminal.\n"
          "\n",
          cli_out);
    cli_print_exit_statuses();
}

void cli_print_check_manifest_help(void) {
    fputs("Usage: tessera check-manifest [OPTIONS] MANIFEST [PAYLOAD]\n"
          "\n"
          "Try a new manifest (or any component) before trusting it in-process: open\n"
          "it in a worker, so that a crash, an exit or a hang ends only the worker, and\n"
          "run each endpoint it implements once, then once more with the same inputs.\n"
          "Each endpoint is reported as ran, FAILED (the cause), CRASHED the worker\n"
          "(a signal: a wrong argument list), ENDED the worker process (exit: a\n"
          "Fortran STOP, LAPACK's XERBLA) or HUNG (no answer within the timeout),\n"
          "with whether its results are finite, whether it wrote an input, tangent or\n"
          "cotangent it was trusted not to write (\"readonly\"), and whether the second\n"
          "run gave the same answer. The last line is the verdict: whether the\n"
          "component is safe to run in-process. Warnings of the load (a symbol\n"
          "named as gfortran names routines under \"convention\": \"c\", ...) come first.\n"
          "\n"
          "Inputs: PAYLOAD's, {\"inputs\": {...}} as for apply (JSON text, @FILE, or -\n"
          "for stdin); without it they are made from the schema: symbolic dimensions\n"
          "3, 4, 5, ... (one size per symbol), unconstrained ones 3, square float\n"
          "matrices symmetric positive definite, other floats in [0.25, 0.875],\n"
          "scalar integers 1, 2, 3, ... in schema order. Give a PAYLOAD when the\n"
          "routine needs more (a size input that must lie in a range, a matrix of\n"
          "some structure, values in a domain, an option code). Tangents and\n"
          "cotangents are made the same way, for every differentiable field.\n"
          "\n"
          "Options:\n"
          "  --timeout-ms MS        how long one run may take before it counts as hung\n"
          "                         and its worker is killed (default 5000)\n"
          "  --option KEY=VALUE     a library option (worker_exe, rlimit_as, ...); not\n"
          "                         mode or timeout_ms; repeatable\n"
          "  --config KEY=VALUE     configuration for the component's init; repeatable\n"
          "  -h, --help             show this help\n"
          "\n"
          "Exit status 0 only when every endpoint ran cleanly (ran twice, finite,\n"
          "same answer, inputs unchanged); 1 otherwise.\n"
          "\n",
          cli_out);
    cli_print_exit_statuses();
}

void cli_print_serve_help(void) {
    fputs("Usage: tessera serve [OPTIONS] PLUGIN\n"
          "\n"
          "Serve the component over HTTP with Tesseract's REST API until SIGINT or\n"
          "SIGTERM: GET /health, GET /openapi.json, POST /apply and whichever of\n"
          "/jacobian, /jacobian_vector_product, /vector_jacobian_product and\n"
          "/abstract_eval it has. tesseract-core's Tesseract.from_url and\n"
          "tesseract-jax call it unchanged. The output format follows the Accept\n"
          "header (application/json, application/json+base64, application/json+binref);\n"
          "bad requests get 422 with {\"detail\": [...]}, component failures 500 with\n"
          "a JSON body naming the cause. One access-log line per request on stderr.\n"
          "GET /docs answers the component's page, the one `tessera docs` writes.\n"
          "UM-Bridge clients (protocol 1.0) reach it on the same port: GET /Info,\n"
          "POST /Evaluate, /Gradient, /ApplyJacobian, /ApplyHessian and the rest,\n"
          "with the component as the one model; each float input field is one vector.\n"
          "\n"
          "Options:\n"
          "  --host ADDR            IPv4 address to bind (default 127.0.0.1: this machine only)\n"
          "  --port N               port (default 0: any free one, printed at start)\n"
          "  --mode MODE            inproc (default), isolated or worker\n"
          "  --option KEY=VALUE     a library option, e.g. workers=4 (concurrent calls in\n"
          "                         worker mode), timeout_ms=5000; repeatable\n"
          "  --config KEY=VALUE     configuration for the plugin's init; repeatable\n"
          "  --token-file FILE      require 'Authorization: Bearer TOKEN', TOKEN being the\n"
          "                         file's first line\n"
          "  --input-path DIR       where binref inputs are read (never outside it);\n"
          "                         without it binref inputs are refused\n"
          "  --output-path DIR      where json+binref outputs are written; without it\n"
          "                         json+binref is not offered\n"
          "  --output-format FMT    the format when Accept names none (default json)\n"
          "  --compression lz4      base64 and binref outputs as lz4 frames\n"
          "  --max-body-bytes N     larger requests get 413 (default 1 GiB)\n"
          "  --threads N            request threads (default 4)\n"
          "  --linger-us N          after answering the only client, wait awake this long\n"
          "                         for its next request instead of sleeping (default\n"
          "                         200; 0: sleep at once)\n"
          "  --max-connections N    connections at once (default 256); past them new ones\n"
          "                         wait until one closes\n"
          "  --max-connections-per-address N\n"
          "                         connections at once from one address, the rest\n"
          "                         closed as soon as accepted (default a quarter of\n"
          "                         --max-connections; at most --max-connections)\n"
          "  --idle-timeout S       close connections silent this long (default 60)\n"
          "  --header-timeout S     close a connection whose request line and headers\n"
          "                         have not all come S seconds after it opened (or after\n"
          "                         its request line, on a kept-alive one) however slowly\n"
          "                         they trickle in (default 10)\n"
          "  --body-timeout S       the same for the body, from the end of the headers\n"
          "                         (default 300)\n"
          "  --umbridge-size SYM=N  the size of symbolic dim SYM for UM-Bridge's\n"
          "                         /InputSizes and /OutputSizes when the request's config\n"
          "                         gives none; repeatable\n"
          "  --quiet                no access log\n"
          "  -h, --help             show this help\n"
          "\n",
          cli_out);
    cli_print_exit_statuses();
}
