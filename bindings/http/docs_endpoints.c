/* SPDX-License-Identifier: MIT */
/* The docs page's endpoints: for each, whether the component implements
 * it, finite differences of apply serve it or the host derives it from the
 * declared shapes; what its request holds (the differentiable fields that
 * jac_inputs and the like may name) and the command that sends it. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "docs_html.h"

static const char *fd_method_name(tsr_fd_method m) {
    switch (m) {
    case TSR_FD_FORWARD: return "forward differences";
    case TSR_FD_CENTRAL: return "central differences";
    case TSR_FD_SPSA: return "SPSA";
    default: return "finite differences";
    }
}

static bool listed(const json_t *names, const char *name) {
    size_t i;
    const json_t *v;
    json_array_foreach(names, i, v) {
        if (json_is_string(v) && strcmp(json_string_value(v), name) == 0) return true;
    }
    return false;
}

/* The names of the differentiable fields, or a note that there are none. */
static void differentiable_names(FILE *f, const json_t *fields) {
    bool any = false;
    size_t i;
    const json_t *field;
    json_array_foreach(fields, i, field) {
        if (!json_is_true(json_object_get(field, "differentiable"))) continue;
        fputs(any ? ", <code>" : "<code>", f);
        docs_text(f, docs_string(field, "name"));
        fputs("</code>", f);
        any = true;
    }
    if (!any) fputs("<span class=\"note\">none is differentiable</span>", f);
}

/* How ep is served: the badge, and whether it is available at all. */
static bool served_badge(FILE *f, const json_t *schema, const docs_facts *facts, tsr_endpoint ep) {
    if (!listed(json_object_get(schema, "endpoints"), tsr_endpoint_name(ep))) {
        fputs("<span class=\"badge missing\">not available</span>", f);
        return false;
    }
    if (facts->native & (1u << ep)) fputs("<span class=\"badge native\">implemented</span>", f);
    else if (ep == TSR_EP_ABSTRACT_EVAL)
        fputs("<span class=\"badge derived\">derived from the declared shapes</span>", f);
    else if (ep == TSR_EP_HVP && facts->hvp_source == TSR_HVP_FD_VJP)
        fputs("<span class=\"badge fd\">central differences of vjp</span>", f);
    else if (ep == TSR_EP_HVP)
        fputs("<span class=\"badge fd\">second differences of apply</span>", f);
    else
        fprintf(f, "<span class=\"badge fd\">%s of apply</span>", fd_method_name(facts->fd_method));
    return true;
}

/* The keys naming the fields to differentiate, with the names allowed. */
static void wrt_keys(FILE *f, const json_t *schema, const char *prefix) {
    fprintf(f, "<dt>%s_inputs</dt><dd>a list of differentiable inputs: ", prefix);
    differentiable_names(f, json_object_get(schema, "inputs"));
    fprintf(f, "</dd>\n<dt>%s_outputs</dt><dd>a list of differentiable outputs: ", prefix);
    differentiable_names(f, json_object_get(schema, "outputs"));
    fputs("</dd>\n", f);
}

static void endpoint_body(FILE *f, const json_t *schema, tsr_endpoint ep) {
    const char *inputs = "<dt>inputs</dt><dd>the inputs, as in the example below</dd>\n";
    switch (ep) {
    case TSR_EP_APPLY:
        fputs(inputs, f);
        fputs("<dt>returns</dt><dd>every output</dd>\n", f);
        break;
    case TSR_EP_JVP:
        fputs(inputs, f);
        wrt_keys(f, schema, "jvp");
        fputs("<dt>tangent_vector</dt><dd>an array for each of the jvp_inputs, shaped like it</dd>\n"
              "<dt>returns</dt><dd>the Jacobian-vector product for each of the jvp_outputs</dd>\n",
              f);
        break;
    case TSR_EP_VJP:
        fputs(inputs, f);
        wrt_keys(f, schema, "vjp");
        fputs("<dt>cotangent_vector</dt><dd>an array for each of the vjp_outputs, shaped like "
              "it</dd>\n<dt>returns</dt><dd>the vector-Jacobian product for each of the "
              "vjp_inputs</dd>\n",
              f);
        break;
    case TSR_EP_HVP:
        fputs(inputs, f);
        wrt_keys(f, schema, "hvp");
        fputs("<dt>cotangent_vector</dt><dd>an array for each of the hvp_outputs, shaped like "
              "it</dd>\n<dt>tangent_vector</dt><dd>an array for each of the hvp_inputs, shaped "
              "like it</dd>\n<dt>returns</dt><dd>for each of the hvp_inputs, the derivative of "
              "the vector-Jacobian product along the tangent (a Hessian-vector product), "
              "shaped like it</dd>\n",
              f);
        break;
    case TSR_EP_JACOBIAN:
        fputs(inputs, f);
        wrt_keys(f, schema, "jac");
        fputs("<dt>returns</dt><dd>for each of the jac_outputs, for each of the jac_inputs, the "
              "block of shape output&nbsp;shape&nbsp;+&nbsp;input&nbsp;shape</dd>\n",
              f);
        break;
    default:
        fputs("<dt>inputs</dt><dd>the shape and dtype of every input: "
              "<code>{\"shape\": [...], \"dtype\": \"...\"}</code></dd>\n"
              "<dt>returns</dt><dd>the shape and dtype of every output</dd>\n",
              f);
    }
}

void docs_endpoints_section(FILE *f, const json_t *schema, const docs_facts *facts) {
    static const tsr_endpoint order[] = {TSR_EP_APPLY,     TSR_EP_JVP, TSR_EP_VJP,
                                         TSR_EP_JACOBIAN,  TSR_EP_HVP, TSR_EP_ABSTRACT_EVAL};
    fputs("<section id=\"endpoints\">\n<h2>Endpoints</h2>\n", f);
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        tsr_endpoint ep = order[k];
        /* served_badge decides the class: write the card to a buffer. */
        char *card = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&card, &len);
        if (m == NULL) continue;
        bool available = served_badge(m, schema, facts, ep);
        if (available) {
            fputs("</h3>\n<dl>\n", m);
            endpoint_body(m, schema, ep);
            fputs("</dl>\n<pre>", m);
            const char *command = ep == TSR_EP_ABSTRACT_EVAL ? "abstract-eval" : tsr_endpoint_name(ep);
            char file[64];
            snprintf(file, sizeof file, "%s.json", tsr_endpoint_name(ep));
            docs_command_line(m, facts, command, file);
            fputs("</pre>\n", m);
        } else {
            fputs("</h3>\n", m);
        }
        if (fclose(m) == 0) {
            fprintf(f, "<div class=\"endpoint%s\">\n<h3><code>%s</code> ", available ? "" : " off",
                    tsr_endpoint_name(ep));
            fputs(card, f);
            fputs("</div>\n", f);
        }
        free(card);
    }
    fputs("</section>\n", f);
}
