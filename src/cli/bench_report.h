/* bench_report.h - `clusterfit bench ... --report FILE.html` (bench_report.c, docs/report.md). */
#ifndef CFIT_BENCH_REPORT_H
#define CFIT_BENCH_REPORT_H

#include "clusterfit/bench.h"
#include "clusterfit/pairs.h"
#include "clusterfit/memory.h"
#include "clusterfit/storage.h"

enum { CLI_BENCH_REPORT_ROWS = 64 };

/* The rows of one collective run, gathered on rank 0 while it prints. */
typedef struct cli_bench_report {
    const char *path;                  /* --report FILE.html; NULL = none */
    char collective[32], transport[16];
    int nranks, hosts;
    int n;
    int dtype, op;                     /* of the first row; rows of other dtypes/ops are left out */
    double size[CLI_BENCH_REPORT_ROWS], busbw[2][CLI_BENCH_REPORT_ROWS], time_s[CLI_BENCH_REPORT_ROWS];
    char algo[CLI_BENCH_REPORT_ROWS][16];
} cli_bench_report;

void cli_bench_report_begin(cli_bench_report *r, const char *collective, const cfit_bench_job *job);
void cli_bench_report_row(cli_bench_report *r, const cfit_bench_row *row);
/* Measure the reference line (single-thread STREAM copy) and write the page: 0 or an exit code. */
int cli_bench_report_write(const cli_bench_report *r);

/* `bench pairs --report`: bandwidth and latency heat maps, slow links marked.  0 or an exit code. */
int cli_pairs_report(const char *path, const cfit_pairs_result *r, double slow_threshold);

/* `bench storage --report`: the three rates as bars beside the need (--need / --plan; bytes/s, 0 =
 * none; need_source names where it came from).  0 or an exit code. */
int cli_storage_report(const char *path, const cfit_storage_result *r, double need_read, double need_write,
                       const char *need_source);
/* `bench memory --report`: the STREAM kernels' best rates as bars.  0 or an exit code. */
int cli_memory_report(const char *path, const cfit_memory_result *r);

#endif
