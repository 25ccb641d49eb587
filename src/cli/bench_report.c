/* bench_report.c - `clusterfit bench COLLECTIVE|pairs --report FILE.html`: measured results as charts.
 *
 * Collectives: busbw (out of place and in place) against the size, with a measured reference
 * line: this host's single-thread STREAM copy rate (bench/memory.h), taken on rank 0 right after
 * the run.  It is the rate one process copies memory at, which is what a shared-memory or
 * loopback transport moves a rank's bytes at best; it is a reference, not a strict bound across
 * hosts (docs/report.md).  Pairs: the bandwidth and latency matrices as heat maps, slow links
 * framed and crossed, with the tables beside them.  Storage: the three rates as bars beside the
 * job's need; memory: the STREAM kernels as bars.
 */
#include "cli.h"
#include "bench_report.h"
#include "clusterfit/memory.h"
#include "clusterfit/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_bench_report_begin(cli_bench_report *r, const char *collective, const cfit_bench_job *job)
{
    snprintf(r->collective, sizeof r->collective, "%s", collective);
    snprintf(r->transport, sizeof r->transport, "%s", job->transport ? job->transport : "?");
    r->nranks = job->nranks;
    r->hosts = job->hosts;
    r->n = 0;
}

void cli_bench_report_row(cli_bench_report *r, const cfit_bench_row *row)
{
    if (r->n == 0)
        r->dtype = (int)row->dtype, r->op = (int)row->op;
    if (r->n >= CLI_BENCH_REPORT_ROWS || (int)row->dtype != r->dtype || (int)row->op != r->op)
        return;
    r->size[r->n] = (double)row->size_bytes;
    r->busbw[0][r->n] = row->t[0].busbw_bytes_per_s / 1e9;
    r->busbw[1][r->n] = row->t[1].busbw_bytes_per_s / 1e9;
    r->time_s[r->n] = row->t[0].time_s;
    snprintf(r->algo[r->n], sizeof r->algo[r->n], "%s", row->algo ? row->algo : "?");
    r->n++;
}

int cli_bench_report_write(const cli_bench_report *r)
{
    /* the reference: single-thread STREAM copy, 32 MiB arrays, best of 4 */
    cfit_memory_opts mo = {32u << 20, 1, 5};
    cfit_memory_result mr;
    cfit_diag d;
    cfit_diag_clear(&d);
    double copy_gbs = 0;
    if (cfit_memory_run(&mo, &mr, &d) == CFIT_EOK && mr.wrong == 0)
        copy_gbs = mr.k[CFIT_STREAM_COPY].best_bytes_per_s / 1e9;
    double ref[CLI_BENCH_REPORT_ROWS];
    for (int i = 0; i < r->n; i++)
        ref[i] = copy_gbs;
    cfit_buf b;
    cfit_buf_init(&b);
    char title[160], desc[320];
    snprintf(title, sizeof title, "clusterfit bench %s: %d ranks on %d host%s, transport %s", r->collective, r->nranks,
             r->hosts, r->hosts == 1 ? "" : "s", r->transport);
    cfit_html_begin(&b, title);
    cfit_html_p(&b, "Measured like nccl-tests: busbw = algbw x the collective's bus factor, GB = 1e9 bytes. %s",
                 copy_gbs > 0 ? "The dashed line is this host's single-thread STREAM copy rate, measured after the "
                                "run: the rate one process copies memory at (a reference for shared-memory and "
                                "loopback transports, not a bound across hosts)."
                              : "The STREAM reference could not be measured.");
    cfit_series s[3] = {{"out of place", r->size, r->busbw[0], (size_t)r->n, 0},
                         {"in place", r->size, r->busbw[1], (size_t)r->n, 0},
                         {"STREAM copy", r->size, ref, (size_t)r->n, 1}};
    snprintf(desc, sizeof desc, "Measured busbw in GB/s of %s out of place and in place against the message size, "
                                "with this host's single-thread STREAM copy rate as a dashed reference.", r->collective);
    cfit_chart c = {CFIT_CHART_LINE, "bench-busbw", "Bus bandwidth vs message size", desc,
                     {"message size (bytes)", 2, CFIT_FMT_BYTES, 0, 0}, {"bus bandwidth (GB/s)", 0, CFIT_FMT_PLAIN, 0, 0},
                     NULL, 0, s, copy_gbs > 0 ? 3 : 2, 0, 0};
    cfit_html_h(&b, 2, "Bus bandwidth vs message size");
    cfit_html_figure_begin(&b);
    if (r->n > 0)
        cfit_chart_svg(&b, &c);
    const char *head[] = {"size (B)", "algorithm", "time (us)", "busbw out of place (GB/s)", "busbw in place (GB/s)",
                          "of STREAM copy"};
    cfit_html_table_begin(&b, "Measured rows (first dtype and op)", head, 6);
    for (int i = 0; i < r->n; i++) {
        char v[6][48];
        snprintf(v[0], 48, "%.0f", r->size[i]);
        snprintf(v[1], 48, "%s", r->algo[i]);
        snprintf(v[2], 48, "%.2f", r->time_s[i] * 1e6);
        snprintf(v[3], 48, "%.3f", r->busbw[0][i]);
        snprintf(v[4], 48, "%.3f", r->busbw[1][i]);
        if (copy_gbs > 0)
            snprintf(v[5], 48, "%.0f%%", 100 * r->busbw[0][i] / copy_gbs);
        else
            snprintf(v[5], 48, "-");
        const char *cp[] = {v[0], v[1], v[2], v[3], v[4], v[5]};
        cfit_html_row(&b, cp, 6);
    }
    cfit_html_table_end(&b);
    cfit_html_figure_end(&b);
    if (copy_gbs > 0)
        cfit_html_p(&b, "STREAM copy (1 thread, 3 arrays of 32 MiB, best of 4 timed runs): %.2f GB/s.", copy_gbs);
    cfit_html_end(&b);
    return cli_report_write(r->path, &b);
}

static void heat_table(cfit_buf *b, const char *caption, const cfit_pairs_result *r, const double *m, double scale,
                       const char *fmt)
{
    int n = r->nhosts;
    const char **head = calloc((size_t)n + 1, sizeof *head);
    char (*cells)[32] = calloc((size_t)n + 1, sizeof *cells);
    const char **cp = calloc((size_t)n + 1, sizeof *cp);
    if (!head || !cells || !cp) {
        free(head), free(cells), free(cp);
        return;
    }
    head[0] = "";
    for (int h = 0; h < n; h++)
        head[h + 1] = r->hosts[h];
    cfit_html_table_begin(b, caption, head, (size_t)n + 1);
    for (int a = 0; a < n; a++) {
        cp[0] = r->hosts[a];
        for (int c = 0; c < n; c++) {
            double v = m[a * n + c];
            if (isfinite(v))
                snprintf(cells[c + 1], 32, fmt, v * scale);
            else
                snprintf(cells[c + 1], 32, "-");
            cp[c + 1] = cells[c + 1];
        }
        cfit_html_row(b, cp, (size_t)n + 1);
    }
    cfit_html_table_end(b);
    free(head), free(cells), free(cp);
}

/* One row per link: the hosts, GB/s and its share of the median; for re-measured links also the
 * first pass's value, the number of re-measurements and their spread (min to max GB/s, rounds included). */
static void links_table(cfit_buf *b, const char *caption, const cfit_pairs_result *r, const cfit_pairs_link *links,
                        int n)
{
    static const char *const head[] = {"link", "GB/s", "of median", "first pass GB/s", "re-measurements", "spread GB/s"};
    size_t ncol = n > 0 && links[0].repeats > 0 ? 6 : 3;
    cfit_html_table_begin(b, caption, head, ncol);
    for (int s = 0; s < n; s++) {
        const cfit_pairs_link *l = &links[s];
        char v[6][160];
        snprintf(v[0], sizeof v[0], "%s - %s", r->hosts[l->a], r->hosts[l->b]);
        snprintf(v[1], sizeof v[1], "%.2f", l->bandwidth_gbs);
        snprintf(v[2], sizeof v[2], "%.0f%%", l->fraction_of_median * 100);
        snprintf(v[3], sizeof v[3], "%.2f", l->first_gbs);
        snprintf(v[4], sizeof v[4], "%d", l->repeats);
        snprintf(v[5], sizeof v[5], "%.2f to %.2f", l->min_gbs, l->max_gbs);
        const char *cp[] = {v[0], v[1], v[2], v[3], v[4], v[5]};
        cfit_html_row(b, cp, ncol);
    }
    cfit_html_table_end(b);
}

/* The bandwidth heat map with the slow links marked, and its table. */
static void pairs_bw_section(cfit_buf *b, const cfit_pairs_result *r)
{
    int n = r->nhosts;
    char desc[256];
    unsigned char *mark = calloc((size_t)n * (size_t)n, 1);
    for (int s = 0; mark && s < r->nslow; s++) {
        mark[r->slow[s].a * n + r->slow[s].b] = 1;
        mark[r->slow[s].b * n + r->slow[s].a] = 1;
    }
    snprintf(desc, sizeof desc, "Bandwidth in GB/s between every pair of %d hosts; %d slow link%s marked.", n, r->nslow,
             r->nslow == 1 ? "" : "s");
    cfit_heatmap h = {"pairs-bw", "Pairwise bandwidth", desc, "GB/s", (const char *const *)r->hosts,
                       (const char *const *)r->hosts, (size_t)n, (size_t)n, r->bw_gbs, mark, "slow link", 0};
    cfit_html_h(b, 2, "Bandwidth between hosts");
    cfit_html_figure_begin(b);
    cfit_heatmap_svg(b, &h);
    heat_table(b, "Bandwidth, GB/s per direction", r, r->bw_gbs, 1, "%.2f");
    cfit_html_figure_end(b);
    free(mark);
}

/* The slow links, and beside them the suspects their re-measurements did not confirm. */
static void pairs_links_section(cfit_buf *b, const cfit_pairs_result *r)
{
    if (r->nslow)
        links_table(b, r->slow[0].repeats ? "Slow links, confirmed by re-measuring alone, slowest first"
                                          : "Slow links, slowest first", r, r->slow, r->nslow);
    else
        cfit_html_p(b, "No slow links.");
    if (r->ndismissed)
        links_table(b, "Suspects not confirmed: slow in the rounds, not below the threshold when re-measured alone",
                    r, r->dismissed, r->ndismissed);
}

/* The latency heat map (us) and its table. */
static void pairs_lat_section(cfit_buf *b, const cfit_pairs_result *r)
{
    int n = r->nhosts;
    char desc[256];
    double *lat_us = malloc((size_t)n * (size_t)n * sizeof *lat_us);
    if (!lat_us)
        return;
    for (int i = 0; i < n * n; i++)
        lat_us[i] = r->lat_s[i] * 1e6;
    snprintf(desc, sizeof desc, "Latency in microseconds (half the round trip of 8 bytes) between every pair of "
                                "%d hosts.", n);
    cfit_heatmap hl = {"pairs-lat", "Pairwise latency", desc, "us", (const char *const *)r->hosts,
                        (const char *const *)r->hosts, (size_t)n, (size_t)n, lat_us, NULL, NULL, 0};
    cfit_html_h(b, 2, "Latency between hosts");
    cfit_html_figure_begin(b);
    cfit_heatmap_svg(b, &hl);
    heat_table(b, "Latency, us", r, r->lat_s, 1e6, "%.2f");
    cfit_html_figure_end(b);
    free(lat_us);
}

int cli_pairs_report(const char *path, const cfit_pairs_result *r, double slow_threshold)
{
    cfit_buf b;
    cfit_buf_init(&b);
    char title[128];
    snprintf(title, sizeof title, "clusterfit bench pairs: %d hosts", r->nhosts);
    cfit_html_begin(&b, title);
    cfit_html_p(&b, "Median bandwidth %.2f GB/s per direction (both directions busy), median latency %.2f us. A link "
                     "below %g%% of the median bandwidth is slow: framed and crossed in the heat map.",
                 r->median_bw_gbs, r->median_lat_s * 1e6, slow_threshold * 100);
    pairs_bw_section(&b, r);
    pairs_links_section(&b, r);
    pairs_lat_section(&b, r);
    cfit_html_end(&b);
    return cli_report_write(path, &b);
}

static void bars_table(cfit_buf *b, const char *caption, const char *const *head, size_t ncol,
                       const char *const *labels, const double *const *cols, size_t nrow, const char *fmt)
{
    cfit_html_table_begin(b, caption, head, ncol);
    for (size_t i = 0; i < nrow; i++) {
        char v[4][48];
        const char *cp[4];
        cp[0] = labels[i];
        for (size_t k = 1; k < ncol && k < 4; k++) {
            double x = cols[k - 1][i];
            if (isfinite(x))
                snprintf(v[k], sizeof v[k], fmt, x);
            else
                snprintf(v[k], sizeof v[k], "-");
            cp[k] = v[k];
        }
        cfit_html_row(b, cp, ncol);
    }
    cfit_html_table_end(b);
}

int cli_storage_report(const char *path, const cfit_storage_result *r, double need_read, double need_write,
                       const char *need_source)
{
    static const char *const cats[] = {"sequential write", "sequential read", "random read"};
    const cfit_storage_test *t[3] = {&r->seq_write, &r->seq_read, &r->rand_read};
    double got[3], need[3] = {need_write > 0 ? need_write / 1e9 : NAN, need_read > 0 ? need_read / 1e9 : NAN,
                              need_read > 0 ? need_read / 1e9 : NAN};
    for (int i = 0; i < 3; i++)
        got[i] = t[i]->measured ? t[i]->bytes_per_s / 1e9 : NAN;
    int have_need = need_read > 0 || need_write > 0;
    cfit_buf b;
    cfit_buf_init(&b);
    char title[4200], desc[320];
    snprintf(title, sizeof title, "clusterfit bench storage: %s", r->path);
    cfit_html_begin(&b, title);
    cfit_html_p(&b, "Engine %s, %s I/O%s. GB = 1e9 bytes.%s%s", r->engine, r->direct ? "direct (O_DIRECT)" : "buffered",
                 r->reused ? ", test file reused (write not measured)" : "",
                 have_need ? " Need from " : " No need given (--need GB/s or --plan FILE).",
                 have_need ? need_source : "");
    cfit_series s[2] = {{"measured", NULL, got, 3, 0}, {"need", NULL, need, 3, 0}};
    snprintf(desc, sizeof desc, "Measured sequential write, sequential read and random read rates in GB/s%s.",
             have_need ? ", beside the training job's need (read need for both reads, checkpoint write need for the "
                         "write)" : "");
    cfit_chart c = {CFIT_CHART_BAR, "storage", "Storage rates against the need", desc, {"test", 0, CFIT_FMT_PLAIN, 0, 0},
                     {"rate (GB/s)", 0, CFIT_FMT_PLAIN, 0, 0}, cats, 3, s, have_need ? 2 : 1, 0, 0};
    cfit_html_h(&b, 2, "Storage against the need");
    cfit_html_figure_begin(&b);
    cfit_chart_svg(&b, &c);
    const char *head[] = {"test", "measured GB/s", "need GB/s", "IOPS"};
    double iops[3];
    for (int i = 0; i < 3; i++)
        iops[i] = t[i]->measured ? t[i]->iops : NAN;
    const double *cols[3] = {got, need, iops};
    bars_table(&b, "Rates (GB = 1e9 bytes)", head, 4, cats, cols, 3, "%.3f");
    cfit_html_figure_end(&b);
    for (int i = 0; i < r->nnotes; i++)
        cfit_html_p(&b, "Note: %s", r->notes[i]);
    cfit_html_end(&b);
    return cli_report_write(path, &b);
}

int cli_memory_report(const char *path, const cfit_memory_result *r)
{
    const char *cats[CFIT_STREAM_KERNELS];
    double gbs[CFIT_STREAM_KERNELS], mins[CFIT_STREAM_KERNELS];
    for (int i = 0; i < CFIT_STREAM_KERNELS; i++)
        cats[i] = r->k[i].name, gbs[i] = r->k[i].best_bytes_per_s / 1e9, mins[i] = r->k[i].min_s;
    cfit_buf b;
    cfit_buf_init(&b);
    char title[160];
    snprintf(title, sizeof title, "clusterfit bench memory: STREAM, %d thread%s", r->threads, r->threads == 1 ? "" : "s");
    cfit_html_begin(&b, title);
    cfit_html_p(&b, "3 arrays of %.1f MiB, %d iterations (the first not counted), best rate per kernel; %s. "
                     "GB = 1e9 bytes.", r->array_bytes / 1048576.0, r->ntimes,
                 r->wrong ? "the arrays FAILED validation" : "the arrays validate");
    cfit_series s[1] = {{"best rate", NULL, gbs, CFIT_STREAM_KERNELS, 0}};
    cfit_chart c = {CFIT_CHART_BAR, "memory", "STREAM kernels", "Best rate in GB/s of STREAM copy, scale, add and "
                     "triad on host memory.", {"kernel", 0, CFIT_FMT_PLAIN, 0, 0},
                     {"rate (GB/s)", 0, CFIT_FMT_PLAIN, 0, 0}, cats, CFIT_STREAM_KERNELS, s, 1, 0, 0};
    cfit_html_h(&b, 2, "Host memory bandwidth");
    cfit_html_figure_begin(&b);
    cfit_chart_svg(&b, &c);
    const char *head[] = {"kernel", "best GB/s", "min time s"};
    const double *cols[2] = {gbs, mins};
    bars_table(&b, "STREAM (bytes counted the STREAM way)", head, 3, cats, cols, CFIT_STREAM_KERNELS, "%.4g");
    cfit_html_figure_end(&b);
    cfit_html_end(&b);
    return cli_report_write(path, &b);
}
