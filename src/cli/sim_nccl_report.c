/* sim_nccl_report.c - `clusterfit sim --report FILE.html` with the NCCL engine: the predicted busbw
 * per size, one series per algorithm/protocol run the tuner picked, and with --calibration the
 * measured busbw of the log on the same chart, the model's error at each measured size and the
 * solved network terms (docs/report.md).  The page has the flow engine report's structure
 * (sim_report.c): a title, one paragraph on the model, sections of chart + table. */
#include "sim_cli.h"
#include "clusterfit/report.h"

#include <stdio.h>
#include <string.h>

enum { MAX_SIZES = 64, MAX_RUNS = 8 };

/* The prediction as runs of sizes with one algorithm x protocol: each run a series, ending at the
 * next run's first size so that the line stays joined (the next run's marker is drawn on top). */
typedef struct runs {
    double x[MAX_SIZES], y[MAX_SIZES];
    char name[MAX_RUNS][32];
    int n;
    cfit_series s[MAX_RUNS + 2];
} runs;

static int same_pair(const cfit_nccl_estimate *a, const cfit_nccl_estimate *b)
{
    return a->algo == b->algo && a->proto == b->proto;
}

static void make_runs(runs *g, const sim_nccl_report_in *in, int n)
{
    int start = 0;
    g->n = 0;
    for (int i = 0; i < n; i++) {
        g->x[i] = in->rows[i].size, g->y[i] = in->rows[i].e.busbw_bytes_per_s / 1e9;
        int last = i == n - 1 || (!same_pair(&in->rows[i].e, &in->rows[i + 1].e) && g->n < MAX_RUNS - 1);
        if (!last)
            continue;
        const cfit_nccl_estimate *e = &in->rows[start].e;
        int mixed = 0;   /* the last run, once MAX_RUNS are used, may hold several pairs */
        for (int j = start + 1; j <= i; j++)
            mixed |= !same_pair(e, &in->rows[j].e);
        snprintf(g->name[g->n], sizeof g->name[g->n], "%s/%s%s", cfit_nccl_algo_name(e->algo),
                 cfit_nccl_proto_name(e->proto), mixed ? " and later" : "");
        int end = i + 1 < n ? i + 1 : i;
        g->s[g->n] = (cfit_series){g->name[g->n], g->x + start, g->y + start, (size_t)(end - start + 1), 0};
        g->n++;
        start = i + 1;
    }
}

/* The measured busbw of the log and, when the sim asks for another run than it measured, the
 * calibrated model of the measured run (the points' errors are against that). */
static size_t add_measured(runs *g, const sim_nccl_cal *k, double *model_y)
{
    size_t ns = (size_t)g->n;
    g->s[ns++] = (cfit_series){"measured (log)", k->size, k->measured_gbs, (size_t)k->npoints, 0};
    if (k->mismatch) {
        for (int i = 0; i < k->npoints; i++)
            model_y[i] = k->model[i].e.busbw_bytes_per_s / 1e9;
        g->s[ns++] = (cfit_series){"model, measured run", k->size, model_y, (size_t)k->npoints, 0};
    }
    return ns;
}

static void prediction_table(cfit_buf *b, const sim_nccl_report_in *in, int n)
{
    const char *head[] = {"size (B)", "time (us)", "busbw (GB/s)", "algo", "proto", "bound"};
    cfit_html_table_begin(b, "The prediction per size (GB = 1e9 B), as the table sim prints", head, 6);
    for (int i = 0; i < n; i++) {
        const cfit_nccl_estimate *e = &in->rows[i].e;
        char c[3][32];
        snprintf(c[0], 32, "%.0f", in->rows[i].size);
        snprintf(c[1], 32, "%.2f", e->time_s * 1e6);
        snprintf(c[2], 32, "%.2f", e->busbw_bytes_per_s / 1e9);
        const char *cp[] = {c[0], c[1], c[2], cfit_nccl_algo_name(e->algo), cfit_nccl_proto_name(e->proto),
                            e->net_bound ? "network" : "node"};
        cfit_html_row(b, cp, 6);
    }
    cfit_html_table_end(b);
}

static void busbw_section(cfit_buf *b, const sim_nccl_report_in *in)
{
    int n = in->nrows < MAX_SIZES ? in->nrows : MAX_SIZES;
    runs g;
    make_runs(&g, in, n);
    double model_y[CFIT_CALIBRATION_MAX_POINTS];
    size_t ns = in->cal && in->cal->npoints ? add_measured(&g, in->cal, model_y) : (size_t)g.n;
    char title[160], desc[400];
    snprintf(title, sizeof title, "%s bus bandwidth vs message size", cfit_collective_name(in->coll));
    snprintf(desc, sizeof desc, "Predicted busbw in GB/s of %s on %d ranks per message size, one series per NCCL "
                                "algorithm and protocol the tuner picks%s.", cfit_collective_name(in->coll), in->ranks,
             ns > (size_t)g.n ? ", with the busbw the calibration log measured" : "");
    cfit_chart c = {CFIT_CHART_LINE, "nccl-busbw", title, desc, {"message size (bytes)", 2, CFIT_FMT_BYTES, 0, 0},
                     {"bus bandwidth (GB/s)", 0, CFIT_FMT_PLAIN, 0, 0}, NULL, 0, g.s, ns, 0, 0};
    cfit_html_h(b, 2, "Bus bandwidth vs message size");
    cfit_html_figure_begin(b);
    cfit_chart_svg(b, &c);
    prediction_table(b, in, n);
    cfit_html_figure_end(b);
    cfit_html_p(b, "busbw = algbw x the nccl-tests bus factor. Each series is a run of sizes where NCCL's tuner "
                    "picks one algorithm and protocol (the least predicted time, docs/sim.md \"The NCCL model\").");
}

static void error_table(cfit_buf *b, const sim_nccl_cal *k)
{
    const char *head[] = {"size (B)", "measured busbw (GB/s)", "model busbw (GB/s)", "error", "algo/proto"};
    cfit_html_table_begin(b, "The calibrated model at each measured size (error = model / measured - 1, from the "
                              "times)", head, 5);
    for (int i = 0; i < k->npoints; i++) {
        const cfit_nccl_estimate *e = &k->model[i].e;
        char c[5][48];
        snprintf(c[0], 48, "%.0f", k->size[i]);
        snprintf(c[1], 48, "%.2f", k->measured_gbs[i]);
        snprintf(c[2], 48, "%.2f", e->busbw_bytes_per_s / 1e9);
        snprintf(c[3], 48, "%+.1f%%", k->rel_err[i] * 100);
        snprintf(c[4], 48, "%s/%s", cfit_nccl_algo_name(e->algo), cfit_nccl_proto_name(e->proto));
        const char *cp[] = {c[0], c[1], c[2], c[3], c[4]};
        cfit_html_row(b, cp, 5);
    }
    cfit_html_table_end(b);
}

static void measured_section(cfit_buf *b, const sim_nccl_cal *k)
{
    cfit_html_h(b, 2, "Predicted vs measured");
    cfit_html_p(b, "%s (%s%s%s: %s, %d ranks = %d nodes x %d GPU(s)). Solved on that run: %.4g GB/s per NIC (catalog "
                    "%.4g), +%.3g us per network hop (catalog +%.3g us); the model with them is within a median %.1f%% "
                    "of its %d sizes (docs/sim.md \"Calibration\").%s",
                 k->cal.file, k->cal.source, k->cal.program[0] ? " " : "", k->cal.program,
                 cfit_collective_name(k->coll), k->cal.ranks, k->nodes, k->per_node, k->fit.nic_bw / 1e9,
                 k->catalog_nic_bw / 1e9, k->fit.net_extra_latency_s * 1e6, k->catalog_extra_s * 1e6,
                 k->median_abs_err * 100, k->npoints,
                 k->mismatch ? " The sim asks for another collective or shape than the log measured: the errors are "
                               "those of the model of the measured run." : "");
    double pct[CFIT_CALIBRATION_MAX_POINTS];
    for (int i = 0; i < k->npoints; i++)
        pct[i] = k->rel_err[i] * 100;
    cfit_series s = {"model / measured - 1", k->size, pct, (size_t)k->npoints, 0};
    cfit_chart c = {CFIT_CHART_LINE, "nccl-error", "Model error at each measured size",
                     "The calibrated model's busbw against the log's, in percent, per message size.",
                     {"message size (bytes)", 2, CFIT_FMT_BYTES, 0, 0}, {"model error (%)", 0, CFIT_FMT_PLAIN, 0, 0},
                     NULL, 0, &s, 1, 0, 260};
    cfit_html_figure_begin(b);
    cfit_chart_svg(b, &c);
    error_table(b, k);
    cfit_html_figure_end(b);
}

static void system_section(cfit_buf *b, const sim_nccl_report_in *in)
{
    const cfit_nccl_system *s = in->sys;
    cfit_html_h(b, 2, "System");
    const char *head[] = {"term", "value"};
    cfit_html_table_begin(b, "The hardware modelled (GB = 1e9 B, per direction)", head, 2);
    char v[6][64];
    snprintf(v[0], 64, "%d x %d GPUs", s->nodes, s->gpus_per_node);
    snprintf(v[1], 64, "%.2f GB/s", s->intra_bw / 1e9);
    snprintf(v[2], 64, "%.2f GB/s", s->nvls_bw / 1e9);
    snprintf(v[3], 64, "%d x %.2f GB/s%s", s->nics, s->nic_bw / 1e9, in->cal ? " (calibrated)" : "");
    snprintf(v[4], 64, "%.3g us", s->net_extra_latency_s * 1e6);
    snprintf(v[5], 64, "x%.3g", s->net_slowdown);
    const char *names[] = {"nodes x ranks per node", "scale-up per GPU", "NVLink SHARP per GPU",
                           "NICs per node x rate", "extra latency per network hop", "network contention"};
    for (int i = 0; i < (s->nodes > 1 ? 6 : 3); i++) {
        const char *row[] = {names[i], v[i]};
        cfit_html_row(b, row, 2);
    }
    cfit_html_table_end(b);
}

int cli_sim_nccl_report(const char *path, const sim_nccl_report_in *in)
{
    if (in->nrows < 1)
        return 0;
    cfit_buf b;
    cfit_buf_init(&b);
    cfit_html_begin(&b, in->title);
    cfit_html_p(&b, "NCCL's cost model and tuner: for every algorithm x protocol the hardware runs, time = latency + "
                     "bytes / bandwidth, and the pair with the least time is run (docs/sim.md). GB = 1e9 bytes.");
    busbw_section(&b, in);
    if (in->cal && in->cal->npoints)
        measured_section(&b, in->cal);
    system_section(&b, in);
    cfit_html_end(&b);
    return cli_report_write(path, &b);
}
