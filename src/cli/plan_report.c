/* plan_report.c - `clusterfit plan --report FILE.html`: the plans as charts with tables beside them.
 *
 * Sections (docs/report.md): the top plans; memory per GPU (stacked bars); step-time breakdown
 * (stacked bars); throughput and MFU against the GPU count (the best plan's GPU type, the layout
 * searched again at each count with the same request); cost against time to train per GPU type
 * with the Pareto front (sizing only: each type searched at several GPU counts); goodput against the
 * checkpoint interval (Daly's model at the best plan's MTBI, write and restart times); the assumptions
 * and catalog sources used.
 */
#include "cli.h"
#include "clusterfit/report.h"
#include "clusterfit/plan.h"
#include "clusterfit/schedule.h"
#include "clusterfit/cost.h"
#include "clusterfit/bom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_TOP = 8, NSCALE = 7, NPARETO = 5, MAX_GPU_TYPES = 32, NGOODPUT = 25 };

static const char *plan_label(char *buf, size_t n, size_t rank, const cfit_plan *p)
{
    snprintf(buf, n, "#%zu %s x%ld", rank + 1, p->gpu->name, p->gpus);
    return buf;
}

static const char *layout_label(char *buf, size_t n, const cfit_plan *p)
{
    char mode[64];
    snprintf(buf, n, "tp %d pp %d dp %d cp %d vp %d%s%s mbs %d ZeRO-%d%s%s", p->layout.tp, p->layout.pp, p->layout.dp,
             p->layout.cp, p->layout.vp, p->layout.pp > 1 ? " " : "", p->layout.pp > 1 ? cfit_layout_schedule_name(&p->layout) : "",
             p->layout.mbs, p->layout.zero, p->offload ? ", offload " : "",
             p->offload ? cfit_offload_str(p->offload, mode, sizeof mode) : "");
    return buf;
}

/* Cost of p on the request's basis; 0 when a price is missing. */
static int plan_cost(const cfit_plan_request *r, const cfit_bom_options *o, const cfit_plan *p, double *usd)
{
    cfit_cost k;
    cfit_cost_compute_with(r->catalog, p, o, &k);
    return cfit_cost_of(&k, (cfit_cost_basis)r->cost_basis, usd);
}

static void top_table(cfit_buf *b, const cfit_plan_request *r, const cfit_bom_options *o, const cfit_plan_result *res,
                      size_t n)
{
    const char *head[] = {"plan", "layout", "fits", "memory/GPU", "step time", "tokens/s", "MFU", "goodput",
                          "time to train", "cost"};
    cfit_html_table_begin(b, "Top plans (best first)", head, 10);
    for (size_t i = 0; i < n; i++) {
        const cfit_plan *p = &res->plans[i];
        char c[10][128], u[48];
        double usd;
        plan_label(c[0], 128, i, p);
        layout_label(c[1], 128, p);
        snprintf(c[2], 128, "%s", p->fits ? "yes" : "NO");
        snprintf(c[3], 128, "%.1f of %.0f GB", p->mem.total_bytes / 1e9, p->mem.capacity_bytes / 1e9);
        snprintf(c[4], 128, "%.3f s", p->step_time_s);
        snprintf(c[5], 128, "%.0f", p->tokens_per_s);
        snprintf(c[6], 128, "%.1f%%", p->mfu * 100);
        snprintf(c[7], 128, "%.1f%%", p->goodput.fraction * 100);
        if (p->time_to_train_s > 0)
            snprintf(c[8], 128, "%.1f days", p->time_to_train_s / 86400);
        else
            snprintf(c[8], 128, "-");
        if (plan_cost(r, o, p, &usd))
            snprintf(c[9], 128, "%s (%s)", fmt_usd(u, sizeof u, usd), cfit_cost_basis_name((cfit_cost_basis)r->cost_basis));
        else
            snprintf(c[9], 128, "no price");
        const char *cells[10];
        for (int k = 0; k < 10; k++)
            cells[k] = c[k];
        cfit_html_row(b, cells, 10);
    }
    cfit_html_table_end(b);
}

/* A stacked bar per top plan ("#1".."#n"), one segment per name: v[k][i] is segment k of plan i. */
static void plan_stacked_chart(cfit_buf *b, const char *id, const char *title, const char *desc,
                               const char *ylabel, const char *const *names, int nk, double (*v)[MAX_TOP],
                               size_t n)
{
    char labels[MAX_TOP][48];
    const char *cats[MAX_TOP];
    cfit_series s[8];
    for (size_t i = 0; i < n; i++) {
        snprintf(labels[i], sizeof labels[i], "#%zu", i + 1);
        cats[i] = labels[i];
    }
    for (int k = 0; k < nk; k++)
        s[k] = (cfit_series){names[k], NULL, v[k], n, 0};
    cfit_chart c = {CFIT_CHART_STACKED, id, title, desc, {"plan (rank)", 0, CFIT_FMT_PLAIN, 0, 0},
                     {ylabel, 0, CFIT_FMT_PLAIN, 0, 0}, cats, n, s, nk, 0, 0};
    cfit_chart_svg(b, &c);
}

static void memory_section(cfit_buf *b, const cfit_plan_result *res, size_t n)
{
    static const char *const names[] = {"weights", "gradients", "optimizer states", "activations", "other"};
    double v[5][MAX_TOP];
    for (size_t i = 0; i < n; i++) {
        const cfit_memory *m = &res->plans[i].mem;
        v[0][i] = m->weights_bytes / 1e9, v[1][i] = m->grads_bytes / 1e9, v[2][i] = m->optimizer_bytes / 1e9;
        v[3][i] = m->activations_bytes / 1e9, v[4][i] = m->other_bytes / 1e9;
    }
    cfit_html_h(b, 2, "Memory per GPU");
    cfit_html_figure_begin(b);
    plan_stacked_chart(b, "plan-memory", "Memory per GPU (busiest pipeline stage)",
                       "Stacked bars: weights, gradients, optimizer states, activations and other memory per GPU "
                       "for each of the top plans, in GB.",
                       "memory per GPU (GB)", names, 5, v, n);
    const char *head[] = {"plan", "weights GB", "grads GB", "optimizer GB", "activations GB", "other GB", "total GB",
                          "capacity GB"};
    cfit_html_table_begin(b, "Memory per GPU (GB = 1e9 bytes)", head, 8);
    for (size_t i = 0; i < n; i++) {
        char c8[8][32];
        snprintf(c8[0], 32, "#%zu", i + 1);
        for (int k = 0; k < 5; k++)
            snprintf(c8[k + 1], 32, "%.2f", v[k][i]);
        snprintf(c8[6], 32, "%.2f", res->plans[i].mem.total_bytes / 1e9);
        snprintf(c8[7], 32, "%.1f", res->plans[i].mem.capacity_bytes / 1e9);
        const char *cells[8];
        for (int k = 0; k < 8; k++)
            cells[k] = c8[k];
        cfit_html_row(b, cells, 8);
    }
    cfit_html_table_end(b);
    cfit_html_figure_end(b);
    cfit_html_p(b, "Weights 2 B/param (+1 with an fp8 copy), gradients per --grad-precision, optimizer 12 B/param "
                    "(Adam, fp32 master), each divided by dp at the ZeRO stage that shards it; activations after "
                    "Korthikanti et al. 2022 (docs/model.md).");
}

static void step_section(cfit_buf *b, const cfit_plan_result *res, size_t n)
{
    static const char *const names[] = {"compute", "TP comm", "CP comm", "PP send/recv", "PP bubble",
                                        "DP comm (exposed)", "optimizer", "overhead"};
    double v[8][MAX_TOP];
    for (size_t i = 0; i < n; i++) {
        const cfit_breakdown *br = &res->plans[i].br;
        double x[8] = {br->compute_s, br->tp_comm_s, br->cp_comm_s, br->pp_comm_s, br->pp_bubble_s, br->dp_comm_s,
                       br->optimizer_s, br->other_s};
        for (int k = 0; k < 8; k++)
            v[k][i] = x[k];
    }
    cfit_html_h(b, 2, "Step time");
    cfit_html_figure_begin(b);
    plan_stacked_chart(b, "plan-step", "Step time breakdown",
                       "Stacked bars: compute, tensor-, context- and pipeline-parallel communication, pipeline "
                       "bubble, exposed data-parallel communication, optimizer and overhead per training step, in "
                       "seconds.",
                       "time per step (s)", names, 8, v, n);
    const char *head[] = {"plan", "compute s", "TP s", "CP s", "PP s", "bubble s", "DP s", "optimizer s",
                          "overhead s", "step s"};
    cfit_html_table_begin(b, "Step time breakdown (seconds)", head, 10);
    for (size_t i = 0; i < n; i++) {
        char c10[10][32];
        snprintf(c10[0], 32, "#%zu", i + 1);
        for (int k = 0; k < 8; k++)
            snprintf(c10[k + 1], 32, "%.4f", v[k][i]);
        snprintf(c10[9], 32, "%.4f", res->plans[i].step_time_s);
        const char *cells[10];
        for (int k = 0; k < 10; k++)
            cells[k] = c10[k];
        cfit_html_row(b, cells, 10);
    }
    cfit_html_table_end(b);
    cfit_html_figure_end(b);
}

/* The first failed simulation of a search at another count (best_at): the report's error, not a
 * point silently left out (the CLI runs one report at a time). */
static int sim_err;
static cfit_diag sim_fail;

/* Search r restricted to gpu at `gpus` GPUs; 1 with *out the best plan, 0 when nothing fits or
 * the search fails (a failed simulation also noted in sim_err). */
static int best_at(const cfit_plan_request *r, const cfit_gpu *gpu, long gpus, cfit_plan *out)
{
    cfit_plan_request q = *r;
    const cfit_gpu *one[1] = {gpu};
    q.gpus = one;
    q.ngpus = 1;
    q.gpus_total = gpus;
    q.fixed.dp = CFIT_SEARCH;   /* the count changes: dp follows it */
    q.top = 1;
    q.budget_usd = 0;
    q.progress = NULL;
    cfit_plan_result res;
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = cfit_plan_search(&q, &res, &d);
    if (rc && !sim_err && strncmp(d.msg, "simulating a cross-node exchange", 32) == 0)   /* perf.c topo_factor */
        sim_err = rc, sim_fail = d;
    if (rc)
        return 0;
    int ok = res.nplans > 0 && res.plans[0].fits;
    if (ok)
        *out = res.plans[0];
    cfit_plan_result_fini(&res);
    return ok;
}

static void scaling_section(cfit_buf *b, const cfit_plan_request *r, const cfit_plan *best)
{
    double x[NSCALE], tps[NSCALE], mfu[NSCALE], ideal[NSCALE];
    size_t n = 0;
    int gpn = best->node ? best->node->gpus_per_node : 1;
    for (int k = -3; k <= 3; k++) {
        double g = ldexp((double)best->gpus, k);
        if (g < gpn || g != floor(g) || g > (double)(1L << 24))
            continue;
        cfit_plan p;
        if (!best_at(r, best->gpu, (long)g, &p))
            continue;
        x[n] = g, tps[n] = p.tokens_per_s, mfu[n] = p.mfu * 100;
        n++;
    }
    cfit_html_h(b, 2, "Scaling with the GPU count");
    if (n < 2) {
        cfit_html_p(b, "Fewer than two GPU counts around %ld fit on %s: no scaling curve.", best->gpus,
                     best->gpu->name);
        return;
    }
    for (size_t i = 0; i < n; i++)
        ideal[i] = tps[0] * x[i] / x[0];
    char title[128], desc[256];
    snprintf(title, sizeof title, "Throughput vs GPU count (%s)", best->gpu->name);
    snprintf(desc, sizeof desc, "Tokens per second of the best layout at %zu GPU counts from %.0f to %.0f, against "
                                "linear scaling from the smallest count.", n, x[0], x[n - 1]);
    cfit_series s[] = {{"tokens/s", x, tps, n, 0}, {"linear scaling", x, ideal, n, 1}};
    cfit_chart c = {CFIT_CHART_LINE, "plan-scaling", title, desc, {"GPUs", 2, CFIT_FMT_INT, 0, 0},
                     {"throughput (tokens/s)", 0, CFIT_FMT_NUM, 0, 0}, NULL, 0, s, 2, 0, 0};
    cfit_series s2[] = {{"MFU", x, mfu, n, 0}};
    cfit_chart c2 = {CFIT_CHART_LINE, "plan-mfu", "Model FLOPs utilisation vs GPU count",
                      "MFU in percent of the best layout at each GPU count.", {"GPUs", 2, CFIT_FMT_INT, 0, 0},
                      {"MFU (%)", 0, CFIT_FMT_PLAIN, 0, 0}, NULL, 0, s2, 1, 0, 0};
    cfit_html_figure_begin(b);
    cfit_chart_svg(b, &c);
    cfit_chart_svg(b, &c2);
    const char *head[] = {"GPUs", "tokens/s", "tokens/s per GPU", "MFU", "scaling efficiency"};
    cfit_html_table_begin(b, "Best layout at each GPU count", head, 5);
    for (size_t i = 0; i < n; i++) {
        char c5[5][32];
        snprintf(c5[0], 32, "%.0f", x[i]);
        snprintf(c5[1], 32, "%.0f", tps[i]);
        snprintf(c5[2], 32, "%.0f", tps[i] / x[i]);
        snprintf(c5[3], 32, "%.1f%%", mfu[i]);
        snprintf(c5[4], 32, "%.1f%%", 100 * tps[i] / ideal[i]);
        const char *cells[] = {c5[0], c5[1], c5[2], c5[3], c5[4]};
        cfit_html_row(b, cells, 5);
    }
    cfit_html_table_end(b);
    cfit_html_figure_end(b);
    cfit_html_p(b, "Each count is searched again with the same request (layout re-chosen, dp follows the count); "
                    "counts below one node or where nothing fits are left out.");
}

/* The best plan's goodput terms as a table (docs/model.md "Failures, checkpoints and goodput"). */
static void goodput_table(cfit_buf *b, const cfit_goodput *g)
{
    const char *head[] = {"term", "value"};
    char v[10][128];
    snprintf(v[0], 128, "%.3g h", g->mtbi_hours);
    snprintf(v[1], 128, "%.0f (+ %.0f planned)", g->expected_interruptions, g->planned_interruptions);
    snprintf(v[2], 128, "%.4g TB", g->checkpoint_bytes / 1e12);
    snprintf(v[3], 128, "%.3g s to %ld x %s", g->checkpoint_write_s, g->storage_units, g->storage[0] ? g->storage : "-");
    snprintf(v[4], 128, "%.3g s", g->checkpoint_read_s);
    snprintf(v[5], 128, "%.3g s (%.3g s detection and rescheduling)", g->restart_s, g->detect_reschedule_s);
    snprintf(v[6], 128, "%.4g s", g->young_interval_s);
    snprintf(v[7], 128, "%.4g s", g->daly_interval_s);
    snprintf(v[8], 128, "%.4g s", g->checkpoint_interval_s);
    snprintf(v[9], 128, "%.2f%%", g->fraction * 100);
    const char *k[] = {"mean time between unexpected interruptions", "interruptions over the run", "checkpoint size",
                       "checkpoint write", "checkpoint read at restart", "restart", "Young's interval sqrt(2 delta M)",
                       "Daly's optimum interval", "interval used", "goodput"};
    cfit_html_table_begin(b, "Goodput of the best plan", head, 2);
    for (int i = 0; i < 10; i++) {
        const char *cells[] = {k[i], v[i]};
        cfit_html_row(b, cells, 2);
    }
    cfit_html_table_end(b);
}

/* Goodput against the checkpoint interval: Daly's fraction at the best plan's MTBI, write and
 * restart times, from an eighth to eight times the interval used, with that interval marked. */
static void goodput_section(cfit_buf *b, const cfit_plan *best)
{
    const cfit_goodput *g = &best->goodput;
    cfit_html_h(b, 2, "Goodput: failures, checkpoints and restarts");
    if (!g->modelled || !(g->checkpoint_interval_s > 0)) {
        cfit_html_p(b, "No failure rates for %s in the catalog: goodput is taken as 100%%.", best->gpu->name);
        return;
    }
    double x[NGOODPUT], y[NGOODPUT], mx[2], my[2];
    for (int i = 0; i < NGOODPUT; i++) {
        x[i] = g->checkpoint_interval_s * exp2(-3.0 + 6.0 * i / (NGOODPUT - 1));
        y[i] = 100 * cfit_goodput_fraction(x[i], g->checkpoint_write_s, g->restart_s, g->mtbi_hours * 3600);
    }
    mx[0] = mx[1] = g->checkpoint_interval_s;
    my[0] = y[0] < y[NGOODPUT - 1] ? y[0] : y[NGOODPUT - 1];
    my[1] = 100 * g->fraction;
    char desc[256];
    snprintf(desc, sizeof desc, "Goodput in percent against the compute time between checkpoints for %ld x %s, "
             "MTBI %.3g h, write %.3g s, restart %.3g s; the dashed line marks the interval used.", best->gpus,
             best->gpu->name, g->mtbi_hours, g->checkpoint_write_s, g->restart_s);
    cfit_series s[] = {{"goodput (Daly 2006)", x, y, NGOODPUT, 0}, {"interval used", mx, my, 2, 1}};
    cfit_chart c = {CFIT_CHART_LINE, "plan-goodput", "Goodput vs checkpoint interval", desc,
                     {"checkpoint interval (s)", 10, CFIT_FMT_NUM, 0, 0}, {"goodput (%)", 0, CFIT_FMT_PLAIN, 0, 0},
                     NULL, 0, s, 2, 0, 0};
    cfit_html_figure_begin(b);
    cfit_chart_svg(b, &c);
    goodput_table(b, g);
    cfit_html_figure_end(b);
    cfit_html_p(b, "Planned stops (each a checkpoint and a restart, without rework) are counted in the goodput "
                    "but not in the curve. Failure rates: catalog \"failures\" entries (clusterfit catalog list "
                    "failures); Young 1974, Daly 2006: docs/model.md.");
}

typedef struct pt { double days, usd; const char *gpu; long gpus; } pt;

static int by_days(const void *a, const void *b)
{
    const pt *x = a, *y = b;
    return x->days < y->days ? -1 : x->days > y->days ? 1 : (x->usd > y->usd) - (x->usd < y->usd);
}

static void pareto_section(cfit_buf *b, const cfit_plan_request *r, const cfit_bom_options *o,
                           const cfit_plan_result *res)
{
    size_t ntypes = res->ngpu < MAX_GPU_TYPES ? res->ngpu : MAX_GPU_TYPES;
    double xs[MAX_GPU_TYPES][NPARETO], ys[MAX_GPU_TYPES][NPARETO];
    cfit_series s[MAX_GPU_TYPES + 1];
    pt all[MAX_GPU_TYPES * NPARETO];
    size_t ns = 0, nall = 0;
    for (size_t i = 0; i < ntypes; i++) {
        const cfit_gpu_result *g = &res->per_gpu[i];
        if (!g->found)
            continue;
        size_t n = 0;
        for (int k = -2; k <= 2; k++) {
            double cnt = ldexp((double)g->best.gpus, k);
            cfit_plan p;
            double usd;
            if (cnt < 1 || cnt != floor(cnt) || cnt > (double)(1L << 24))
                continue;
            if (!(k == 0 ? (p = g->best, 1) : best_at(r, g->gpu, (long)cnt, &p)) || p.time_to_train_s <= 0 ||
                !plan_cost(r, o, &p, &usd))
                continue;
            xs[ns][n] = p.time_to_train_s / 86400, ys[ns][n] = usd;
            all[nall++] = (pt){xs[ns][n], usd, g->gpu->name, p.gpus};
            n++;
        }
        if (n)
            s[ns] = (cfit_series){g->gpu->name, xs[ns], ys[ns], n, 0}, ns++;
    }
    cfit_html_h(b, 2, "Cost vs time to train");
    if (!nall) {
        cfit_html_p(b, "No GPU type has a priced plan on the %s basis: no cost chart.",
                     cfit_cost_basis_name((cfit_cost_basis)r->cost_basis));
        return;
    }
    qsort(all, nall, sizeof all[0], by_days);
    double fx[MAX_GPU_TYPES * NPARETO], fy[MAX_GPU_TYPES * NPARETO];
    pt front[MAX_GPU_TYPES * NPARETO];
    size_t nf = 0;
    for (size_t i = 0; i < nall; i++)
        if (nf == 0 || all[i].usd < front[nf - 1].usd)
            front[nf] = all[i], fx[nf] = all[i].days, fy[nf] = all[i].usd, nf++;
    s[ns++] = (cfit_series){"Pareto front", fx, fy, nf, 1};
    char desc[256];
    snprintf(desc, sizeof desc, "Cost on the %s basis against days to train for each GPU type at 1/4 to 4 times its "
                                "sized GPU count; the dashed line joins the plans no other plan beats on both.",
             cfit_cost_basis_name((cfit_cost_basis)r->cost_basis));
    cfit_chart c = {CFIT_CHART_SCATTER, "plan-pareto", "Cost vs time to train per GPU type", desc,
                     {"time to train (days)", 10, CFIT_FMT_INT, 0, 0}, {"cost (USD)", 10, CFIT_FMT_NUM, 0, 0},
                     NULL, 0, s, ns, 720, 380};
    cfit_html_figure_begin(b);
    cfit_chart_svg(b, &c);
    const char *head[] = {"GPU", "GPUs", "days", "cost"};
    cfit_html_table_begin(b, "Pareto front (no plan is both faster and cheaper)", head, 4);
    for (size_t i = 0; i < nf; i++) {
        char c4[4][96];
        snprintf(c4[0], 96, "%s", front[i].gpu);
        snprintf(c4[1], 96, "%ld", front[i].gpus);
        snprintf(c4[2], 96, "%.1f", front[i].days);
        fmt_usd(c4[3], 96, front[i].usd);
        const char *cells[] = {c4[0], c4[1], c4[2], c4[3]};
        cfit_html_row(b, cells, 4);
    }
    cfit_html_table_end(b);
    cfit_html_figure_end(b);
}

static void source_row(cfit_buf *b, const char *kind, const char *name, const char *src)
{
    const char *cells[] = {kind, name, src && src[0] ? src : "-"};
    cfit_html_row(b, cells, 3);
}

/* The best plan's capex, the figure the text, --json and --bom print (cfit_bom_capex). */
static void capex_table(cfit_buf *b, const cfit_cost *k)
{
    if (!k->has_own)
        return;
    const char *ch[] = {"capex of the best plan", "USD"};
    const char *what[] = {"nodes (NICs in the node price)", "fabric: switches, optics, cables", "storage", "total"};
    const double usd[] = {k->node_capex_usd, k->network_capex_usd, k->storage_capex_usd, k->capex_usd};
    cfit_html_table_begin(b, "Capex of the best plan (the same computation as plan --bom; docs/sizing.md)", ch, 2);
    for (int i = 0; i < 4; i++) {
        char v[48];
        const char *cells[] = {what[i], fmt_cents(v, sizeof v, usd[i])};
        cfit_html_row(b, cells, 2);
    }
    cfit_html_table_end(b);
}

static void sources_section(cfit_buf *b, const cfit_plan_request *r, const cfit_bom_options *o,
                            const cfit_plan_result *res, size_t n)
{
    cfit_html_h(b, 2, "Assumptions and sources");
    const char *head[] = {"kind", "entry", "source"};
    cfit_html_table_begin(b, "Catalog entries used (clusterfit catalog show NAME)", head, 3);
    source_row(b, "model", r->model->name, r->model->source);
    if (r->framework)
        source_row(b, "framework", r->framework->name, r->framework->source);
    const char *seen[MAX_TOP * 3];
    size_t nseen = 0;
    for (size_t i = 0; i < n; i++) {
        const cfit_plan *p = &res->plans[i];
        struct { const char *kind, *name, *src; } e[] = {
            {"gpu", p->gpu->name, p->gpu->source}, {"node", p->node->name, p->node->source},
            {"fabric", p->fabric->name, p->fabric->source}};
        for (int k = 0; k < 3; k++) {
            int dup = 0;
            for (size_t j = 0; j < nseen; j++)
                dup |= strcmp(seen[j], e[k].name) == 0;
            if (!dup && nseen < MAX_TOP * 3) {
                seen[nseen++] = e[k].name;
                source_row(b, e[k].kind, e[k].name, e[k].src);
            }
        }
    }
    cfit_html_table_end(b);
    if (n) {
        cfit_cost k;
        cfit_cost_compute_with(r->catalog, &res->plans[0], o, &k);
        const char *ph[] = {"price", "value", "unit", "date", "source"};
        cfit_html_table_begin(b, "Prices used for the best plan (docs/sizing.md)", ph, 5);
        for (int i = 0; i < k.nused; i++) {
            const cfit_price *pr = k.used[i];
            char v[32];
            snprintf(v, sizeof v, "%.10g", pr->value);
            const char *cells[] = {pr->name, v, cfit_price_unit_name(pr->unit), pr->date[0] ? pr->date : "--price",
                                   pr->source[0] ? pr->source : "-"};
            cfit_html_row(b, cells, 5);
        }
        cfit_html_table_end(b);
        capex_table(b, &k);
    }
    cfit_html_p(b, "Formulas: FLOPs per step after Narayanan et al. 2021, activation memory after Korthikanti et al. "
                    "2022, roofline op times, collectives on NCCL's cost model, pipeline bubble (p-1)/(v m): docs/model.md. "
                    "Sizing and cost: docs/sizing.md. Search and options: docs/plan.md. MFU counts model FLOPs "
                    "only (PaLM definition). GB = 1e9 bytes.");
}

int cli_report_write(const char *path, cfit_buf *b)
{
    int rc = 0;
    if (!cfit_buf_ok(b)) {
        cli_error("--report: out of memory");
        rc = EXIT_RUNTIME;
    } else {
        rc = cli_write_output("--report", path, b->data, b->len);
    }
    cfit_buf_fini(b);
    return rc;
}

int cli_plan_report(const char *path, const cfit_plan_request *r, const cfit_bom_options *o,
                    const cfit_plan_result *res, int sizing)
{
    cfit_buf b;
    cfit_buf_init(&b);
    char title[160], tok[48];
    snprintf(title, sizeof title, "clusterfit plan: %s, %s tokens", r->model->name,
             r->tokens > 0 ? fmt_count(tok, sizeof tok, r->tokens) : "no token count");
    cfit_html_begin(&b, title);
    cfit_html_p(&b, "Sequence %d tokens, global batch %ld sequences, %s; %s. Search: %llu layouts costed, %llu fit.", res->seq_len, res->global_batch, r->precision == CFIT_PREC_FP8 ? "fp8" : "bf16",
                 sizing ? (r->budget_usd > 0 ? "GPU count sized to the budget" : "GPU count sized to the deadline")
                        : "GPU count fixed",
                 (unsigned long long)res->evaluated, (unsigned long long)res->feasible);
    size_t n = res->nplans < MAX_TOP ? res->nplans : MAX_TOP;
    if (n) {
        cfit_html_h(&b, 2, "Top plans");
        top_table(&b, r, o, res, n);
        char check[256];
        cfit_html_p(&b, "Best plan's %s.", plan_confidence_line(check, sizeof check, r, &res->plans[0]));
        memory_section(&b, res, n);
        step_section(&b, res, n);
        goodput_section(&b, &res->plans[0]);
        scaling_section(&b, r, &res->plans[0]);
    } else {
        cfit_html_p(&b, "No plan meets the goal; see the command's output for the closest layouts.");
    }
    if (sizing)
        pareto_section(&b, r, o, res);
    if (sim_err) {
        int rc = cli_error_diag(&sim_fail, sim_err);
        sim_err = 0;
        cfit_buf_fini(&b);
        return rc;
    }
    sources_section(&b, r, o, res, n);
    cfit_html_end(&b);
    return cli_report_write(path, &b);
}
