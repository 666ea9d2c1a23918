/* SPDX-License-Identifier: MIT */
/* `tessera check-gradients`: the human-readable report on stdout and the
 * progress bar on stderr. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gradcheck.h"

/* The report goes to the command's own stdout (own_stdout.c). */
__attribute__((format(printf, 1, 2)))
static void say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(cli_out, fmt, ap);
    va_end(ap);
}

static const tsr_endpoint endpoints[] = {TSR_EP_JVP, TSR_EP_VJP, TSR_EP_JACOBIAN, TSR_EP_HVP};
#define N_ENDPOINTS (sizeof endpoints / sizeof endpoints[0])

static const char *reference_label(tsr_gradcheck_reference ref) {
    switch (ref) {
    case TSR_GRADCHECK_VS_FD: return "finite diff.";
    case TSR_GRADCHECK_VS_JACOBIAN: return "jacobian";
    case TSR_GRADCHECK_VS_TAYLOR: return "taylor";
    case TSR_GRADCHECK_VS_VJP_FD: return "vjp diff.";
    default: return "-";
    }
}

/* "x", "x[3]" or "w[1,2]"; a dense seed has no single element. */
static const char *element(char *buf, size_t cap, const char *name, int64_t index, int32_t rank,
                           const int64_t *multi, const char *dense) {
    if (!name || index < 0) {
        snprintf(buf, cap, "%s", dense);
        return buf;
    }
    size_t used = (size_t)snprintf(buf, cap, "%s", name);
    for (int32_t d = 0; d < rank && used < cap; d++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%lld%s", d ? "," : "[",
                                 (long long)multi[d], d + 1 == rank ? "]" : "");
    return buf;
}

static void print_fields(const tsr_component *c, const gradcheck_args *a) {
    const tsr_gradcheck_options *o = &a->opts;
    say("tessera check-gradients: component '%s', ", tsr_component_name(c));
    if (o->taylor) {
        say("Taylor remainder convergence, seed %llu\n", (unsigned long long)o->seed);
        return;
    }
    char eps[64];
    if (o->eps > 0) snprintf(eps, sizeof eps, "%g", o->eps);
    else
        snprintf(eps, sizeof eps, "%g (float32: %g)", TSR_GRADCHECK_F64_EPS,
                 TSR_GRADCHECK_F32_EPS);
    say("central differences with h = %s%s, up to %lld elements per field, seed %llu\n", eps,
        o->absolute_step ? "" : " * max(|x|, 1)",
        (long long)(o->max_evals ? o->max_evals : TSR_GRADCHECK_DEFAULT_MAX_EVALS),
        (unsigned long long)o->seed);
}

static void print_summaries(const tsr_gradcheck_report *r) {
    say("\n%-9s %-13s %8s %9s %12s %12s %6s\n", "endpoint", "compared with", "checks",
        "failures", "max abs err", "max rel err", "calls");
    for (size_t k = 0; k < N_ENDPOINTS; k++) {
        const tsr_gradcheck_summary *s = tsr_gradcheck_summary_of(r, endpoints[k]);
        /* hvp is native in few components: its row only when checked */
        if (!s->checked && endpoints[k] == TSR_EP_HVP) continue;
        if (!s->checked) {
            say("%-9s not checked\n", tsr_endpoint_name(endpoints[k]));
            continue;
        }
        say("%-9s %-13s %8lld %9lld", tsr_endpoint_name(endpoints[k]),
            reference_label(s->reference), (long long)s->checks, (long long)s->failures);
        if (s->reference == TSR_GRADCHECK_VS_TAYLOR) say(" %12s %12s", "-", "-");
        else say(" %12.3g %12.3g", s->max_abs_err, s->max_rel_err);
        say(" %6lld\n", (long long)s->calls);
    }
    say("apply evaluations: %lld\n", (long long)tsr_gradcheck_apply_evals(r));
}

static void print_skipped(const tsr_gradcheck_report *r) {
    for (int32_t k = 0; k < tsr_gradcheck_n_skipped(r); k++) {
        const tsr_gradcheck_skip *s = tsr_gradcheck_skipped_at(r, k);
        say("skipped %s '%s': %s\n", s->is_input ? "input" : "output", s->field, s->reason);
    }
}

static int64_t total_failures(const tsr_gradcheck_report *r) {
    int64_t n = 0;
    for (size_t k = 0; k < N_ENDPOINTS; k++) n += tsr_gradcheck_summary_of(r, endpoints[k])->failures;
    return n;
}

static void print_failures(const tsr_gradcheck_report *r) {
    int64_t kept = tsr_gradcheck_n_failures(r), all = total_failures(r);
    if (kept == 0) return;
    say("\nfailures (%lld of %lld listed):\n", (long long)kept, (long long)all);
    say("  %-9s %-32s %-9s %22s %22s %10s %10s\n", "endpoint", "derivative", "vs", "got", "want",
        "abs err", "rel err");
    for (int64_t k = 0; k < kept; k++) {
        const tsr_gradcheck_failure *f = tsr_gradcheck_failure_at(r, k);
        char out[96], in[96], pair[200];
        element(out, sizeof out, f->output, f->out_index, f->out_rank, f->out_multi,
                "(c^T, random c)");
        element(in, sizeof in, f->input, f->in_index, f->in_rank, f->in_multi, "(random t)");
        if (f->endpoint == TSR_EP_HVP)   /* random w and v: element of w . H v */
            snprintf(pair, sizeof pair, "(w.Hv) at %s", in);
        else
            snprintf(pair, sizeof pair, "d %s / d %s", out, in);
        say("  %-9s %-32s %-9s %22.15g %22.15g %10.3g %10.3g\n", tsr_endpoint_name(f->endpoint),
            pair, reference_label(f->reference), f->got, f->want, f->abs_err, f->rel_err);
    }
}

static void print_taylor(const tsr_gradcheck_report *r) {
    int32_t n = tsr_gradcheck_n_taylor(r);
    if (n == 0) return;
    say("\nTaylor tests: observed order log2(r(h) / r(h/2)), h from %g; 2 is right, 1 wrong; "
        "'-': at rounding level\n",
        tsr_gradcheck_taylor_at(r, 0)->step[0]);
    int width = 0;
    for (int32_t k = 0; k < n; k++) {
        const tsr_gradcheck_taylor *t = tsr_gradcheck_taylor_at(r, k);
        int w = (int)(strlen(t->output) + strlen(t->input)) + 7;
        if (w > width) width = w;
    }
    for (int32_t k = 0; k < n; k++) {
        const tsr_gradcheck_taylor *t = tsr_gradcheck_taylor_at(r, k);
        char pair[160];
        snprintf(pair, sizeof pair, "d %s / d %s", t->output, t->input);
        say("  %-9s %-*s %-6s", tsr_endpoint_name(t->endpoint), width, pair,
            t->passed ? "ok" : "FAILED");
        for (int32_t q = 0; q + 1 < t->n_steps; q++) {
            if (isnan(t->order[q])) say("     -");
            else say(" %5.2f", t->order[q]);
        }
        if (t->n_counted == 0) say("  (residual at rounding level)");
        say("\n");
    }
}

bool cli_gradcheck_nothing_checked(const tsr_gradcheck_report *r) {
    int64_t checks = 0;
    for (size_t k = 0; k < N_ENDPOINTS; k++) checks += tsr_gradcheck_summary_of(r, endpoints[k])->checks;
    return checks == 0;
}

/* Why a check had nothing to compare: said plainly, since a check that
 * compared nothing has not passed. */
void cli_gradcheck_why_nothing(const tsr_gradcheck_report *r, const tsr_component *c, FILE *f) {
    int checked = 0, served = 0;
    for (size_t k = 0; k < N_ENDPOINTS; k++) {
        checked |= tsr_gradcheck_summary_of(r, endpoints[k])->checked;
        served |= tsr_component_has_endpoint(c, endpoints[k]) && !tsr_component_has_native_endpoint(c, endpoints[k]);
    }
    if (!checked && served)
        fprintf(f, "nothing checked: the plugin implements no derivative endpoint; those served "
                   "by\nfinite differences of apply are checked only when --endpoints names "
                   "them\n");
    else if (!checked)
        fprintf(f, "nothing checked: the plugin has no derivative endpoint\n");
    else
        fprintf(f, "nothing checked: no selected input and output had an element to compare "
                   "(see the fields skipped)\n");
}

void cli_gradcheck_print(const tsr_gradcheck_report *r, const tsr_component *c,
                         const gradcheck_args *a) {
    print_fields(c, a);
    print_summaries(r);
    if (cli_gradcheck_nothing_checked(r)) cli_gradcheck_why_nothing(r, c, cli_out);
    print_skipped(r);
    print_taylor(r);
    print_failures(r);
    if (cli_gradcheck_nothing_checked(r)) {
        say("\nresult: NOTHING CHECKED\n");
        return;
    }
    if (tsr_gradcheck_passed(r)) {
        say("\nresult: passed\n");
        return;
    }
    say("\nresult: FAILED:");
    for (size_t k = 0, first = 1; k < N_ENDPOINTS; k++) {
        const tsr_gradcheck_summary *s = tsr_gradcheck_summary_of(r, endpoints[k]);
        if (s->failures == 0) continue;
        say("%s %s (%lld of %lld)", first ? "" : ",", tsr_endpoint_name(endpoints[k]),
            (long long)s->failures, (long long)s->checks);
        first = 0;
    }
    say("\n");
}

/* ---- progress ---------------------------------------------------------------- */

#define BAR_WIDTH 30
/* Short checks finish before a bar would be read. */
#define BAR_MIN_TOTAL 20

static int bar_shown;
static int bar_last = -1;

void cli_gradcheck_progress(void *user, int64_t done, int64_t total) {
    (void)user;
    if (total < BAR_MIN_TOTAL || total <= 0) return;
    int filled = (int)(done * BAR_WIDTH / total);
    int permille = (int)(done * 1000 / total);
    if (permille == bar_last) return;
    bar_last = permille;
    char bar[BAR_WIDTH + 1];
    for (int k = 0; k < BAR_WIDTH; k++) bar[k] = k < filled ? '#' : '.';
    bar[BAR_WIDTH] = '\0';
    fprintf(stderr, "\r[%s] %lld/%lld evaluations", bar, (long long)done, (long long)total);
    fflush(stderr);
    bar_shown = 1;
}

/* Erase the bar so that what follows starts on a clean line. */
void cli_gradcheck_progress_end(void) {
    if (!bar_shown) return;
    fprintf(stderr, "\r%*s\r", BAR_WIDTH + 40, "");
    fflush(stderr);
    bar_shown = 0;
}
