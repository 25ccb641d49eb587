/* cmd_bench_coll.c - `clusterfit bench COLLECTIVE`, for every modelled collective of the registry
 * (clusterfit/collective.h: allreduce, allgather, reducescatter, alltoall, sendrecv).
 *
 * Parses nccl-tests' flags and the launch flags, starts the ranks (comm.h), runs the sweep
 * (cfit_bench_run) on every rank and prints on rank 0, column for column like nccl-tests:
 * header, one row per size (out-of-place then in-place: time, algbw, busbw, #wrong), footer
 * with the out-of-bounds count and the average bus bandwidth; or one JSON object (--json,
 * docs/json.md).  Exit 3 when any element was wrong or the average is below --min-busbw.
 */
#include "cli.h"
#include "bench_launch.h"
#include "bench_nccl_compat.h"
#include "clusterfit/writer.h"
#include "bench_report.h"
#include "clusterfit/comm.h"
#include "clusterfit/bench.h"
#include "clusterfit/collective.h"

#include <stdlib.h>
#include <string.h>

enum {
    O_MIN = 1, O_MAX, O_STEP, O_FACTOR, O_ITERS, O_WARMUP, O_CHECK, O_DTYPE, O_OP, O_ALGO, O_JSON, O_MIN_BUSBW,
    O_SEED, O_REPORT, O_NGPUS, O_NTHREADS
};

static const cli_opt opts[] = {
    {"minbytes", 'b', "BYTES", "smallest size (default 32M; K M G suffixes, powers of 1024)", O_MIN},
    {"maxbytes", 'e', "BYTES", "largest size (default 32M, at most 16G)", O_MAX},
    {"stepbytes", 'i', "BYTES", "add this to the size between rows (default 1M)", O_STEP},
    {"stepfactor", 'f', "N", "multiply the size by N between rows instead (2..1024; 1 = use -i)", O_FACTOR},
    {"iters", 'n', "N", "timed iterations per size (default 20)", O_ITERS},
    {"warmup_iters", 'w', "N", "untimed iterations before each timing (default 5)", O_WARMUP},
    {"check", 'c', "0|1", "check the result bit-exactly and count wrong elements (default 1)", O_CHECK},
    {"datatype", 'd', "TYPE", "float (default), double, int32, int64, bf16 or all", O_DTYPE},
    {"op", 'o', "OP", "sum (default), prod, min, max, avg or all (reducing collectives)", O_OP},
    {"algo", 0, "auto|ring|shm", "all-reduce algorithm (default auto: on one host the faster of the two\n"
                                 "                                       per size, timed before each; else ring)", O_ALGO},
    {"min-busbw", 0, "GB/s", "exit 3 when the average bus bandwidth is below this (GB/s, or a rate: 100G)",
     O_MIN_BUSBW},
    {"seed", 0, "N", "seed of the generated inputs (default 1)", O_SEED},
    {"ngpus", 'g', "N", "nccl-tests' GPUs per thread: N local ranks per process (-g 8 = --np 8;\n"
                        "                                       with --np P, P x N; 1 under mpirun/srun)", O_NGPUS},
    {"nthreads", 't', "N", "nccl-tests' threads per process: multiplies -g the same way", O_NTHREADS},
    {"json", 0, NULL, "print one JSON object (docs/json.md) instead of the table", O_JSON},
    {"report", 0, "FILE.html", "also write an HTML report with charts on rank 0 (docs/report.md)", O_REPORT},
    BENCH_LAUNCH_OPTS,
    {NULL, 0, NULL, NULL, 0},
};

typedef struct coll_cli {
    const char *name;
    cfit_bench_opts o;
    cfit_launch launch;
    int json, have_min;
    long ngpus, nthreads;   /* nccl-tests' -g and -t (bench_nccl_compat.h) */
    double min_busbw_gbs;
    const char *report;   /* --report FILE.html */
} coll_cli;

/* The options whose values are stored as given (cli_bind), and the mark of --min-busbw; on_opt has
 * --min-busbw's value, the launch options that parse (bench_launch_opt) and nccl-tests' flags, which
 * cfit_bench_opt parses for the library (clusterfit/bench.h). */
static const cli_bind binds[] = {
    CLI_FLAG(O_JSON, coll_cli, json),
    CLI_STRING(O_REPORT, coll_cli, report),
    CLI_INT(O_NGPUS, coll_cli, ngpus, 1, 1024),
    CLI_INT(O_NTHREADS, coll_cli, nthreads, 1, 1024),
    CLI_GIVEN(O_MIN_BUSBW, coll_cli, have_min),
    BENCH_LAUNCH_BINDS(coll_cli, launch),
    {.id = 0},
};

/* GB/s as a plain number, or a rate with a unit (DESIGN §4: 100G = 100e9 bits/s). */
static int opt_busbw(coll_cli *c, const char *name, const char *value)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    double v;
    if (cfit_parse_real(value, &v, &d) == 0) {
        if (!(v >= 0 && v <= 1e6))
            return cli_error("--%s: %s is out of range (0 to 1e6 GB/s)", name, value);
    } else if (cfit_parse_rate(value, &v, &d) == 0) {
        v /= 1e9;
    } else {
        return cli_error("--%s: '%s' is not a bandwidth in GB/s (e.g. 20 or 20GB/s or 100G)", name, value);
    }
    c->min_busbw_gbs = v;
    return 0;
}

static int on_opt(void *vc, int id, const char *name, const char *value)
{
    coll_cli *c = vc;
    cfit_bench_opts *o = &c->o;
    cfit_diag d;
    cfit_diag_clear(&d);
    if (id >= BENCH_LAUNCH_ID0)
        return bench_launch_opt(&c->launch, id, name, value);
    switch (id) {
    case -1: return cli_error("bench %s: unexpected argument '%s' (see --help)", c->name, value);
    case O_MIN_BUSBW: return opt_busbw(c, name, value);
    }
    return cfit_bench_opt(o, name, value, &d) ? cli_error("--%s: %s", name, d.msg) : 0;
}

/* ---- output ---- */

typedef struct printer {
    const coll_cli *c;
    int rank;
    cfit_buf json;
    int rows;
    double busbw_sum;
    int bw_count;
    int failed_tests;     /* (size, placement) timings with wrong elements: "Out of bounds values" */
    int64_t wrong_total;
    const char *algos[4];  /* algorithms the rows ran, with how many rows each */
    int algo_rows[4];
    cli_bench_report rep;  /* --report: rows kept on rank 0 */
} printer;

static const char *op_label(const coll_cli *c)
{
    const cfit_coll_info *e = cfit_coll_find(c->name);
    if (e && e->reduces)
        return c->o.all_ops ? "all" : cfit_redop_name(c->o.op);
    return "none";
}

static void on_begin(void *ctx, const cfit_bench_job *job)
{
    printer *p = ctx;
    const coll_cli *c = p->c;
    const cfit_bench_opts *o = &c->o;
    p->rank = job->rank;
    if (job->rank != 0)
        return;
    if (c->report)
        cli_bench_report_begin(&p->rep, c->name, job);
    if (c->json) {
        cfit_buf *b = &p->json;
        cfit_buf_printf(b, "{\"clusterfit_version\": \"%s\", \"benchmark\": \"%s\", \"ranks\": %d, \"hosts\": %d, ",
                         CFIT_VERSION, c->name, job->nranks, job->hosts);
        cfit_buf_key_string(b, "transport", job->transport, 0);
        cfit_buf_key_string(b, "dtype", o->all_dtypes ? "all" : cfit_dtype_name(o->dtype), 1);
        cfit_buf_key_string(b, "op", op_label(c), 1);
        cfit_buf_printf(b, ", \"iters\": %d, \"warmup\": %d, \"results\": [", o->iters, o->warmup);
        return;
    }
    /* nccl-tests' preamble (src/common.cu), so its log parsers and cfit_calibration_parse read it;
     * NCCL's version codes are 0: no NCCL runs */
    printf("# nccl-tests version %s nccl-headers=0 nccl-library=0\n", BENCH_NCCL_TESTS_FORMAT);
    printf("# clusterfit bench %s (clusterfit %s): %d rank%s on %d host%s, transport %s; nccl-tests %s output, "
           "host memory, no NCCL\n", c->name, CFIT_VERSION, job->nranks, job->nranks == 1 ? "" : "s", job->hosts,
           job->hosts == 1 ? "" : "s", job->transport, BENCH_NCCL_TESTS_FORMAT);
    printf("# Collective test starting: %s_perf\n", cfit_coll_find(c->name)->nccl_name);
    printf("# nThread %ld nGpus %ld minBytes %llu maxBytes %llu step: %llu(%s) warmup iters: %d iters: %d "
           "agg iters: 1 validation: %d graph: 0\n", c->nthreads ? c->nthreads : 1, c->ngpus ? c->ngpus : 1,
           (unsigned long long)o->min_bytes, (unsigned long long)o->max_bytes,
           (unsigned long long)(o->step_factor ? o->step_factor : o->step_bytes), o->step_factor ? "factor" : "bytes",
           o->warmup, o->iters, o->check);
    printf("#\n# Using devices\n");
    for (int r = 0; r < job->nranks; r++)
        printf("#  Rank %2d Group  0 Pid %6lld on %10s device host memory\n", r, (long long)job->pids[r],
               job->host[r]);
    printf("#\n");
    printf("#                                                              out-of-place                       in-place\n");
    printf("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n");
    printf("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n");
    fflush(stdout);
}

static void json_row(printer *p, const cfit_bench_row *row, int ip)
{
    cfit_buf *b = &p->json;
    const cfit_bench_timing *t = &row->t[ip];
    cfit_buf_printf(b, "%s{\"size_bytes\": %llu, \"count\": %llu, ", p->rows++ ? ", " : "",
                     (unsigned long long)row->size_bytes, (unsigned long long)row->count);
    cfit_buf_key_string(b, "type", cfit_dtype_name(row->dtype), 0);
    cfit_buf_key_string(b, "redop", row->reduces ? cfit_redop_name(row->op) : "none", 1);
    cfit_buf_printf(b, ", \"root\": %d, \"in_place\": %s", row->root, ip ? "true" : "false");
    cfit_buf_key_number(b, "time_s", t->time_s, 1);
    cfit_buf_key_number(b, "algbw_gbs", t->algbw_bytes_per_s / 1e9, 1);
    cfit_buf_key_number(b, "busbw_gbs", t->busbw_bytes_per_s / 1e9, 1);
    cfit_buf_key_opt(b, "wrong", t->wrong >= 0, (double)t->wrong);
    cfit_buf_key_string(b, "algo", row->algo, 1);
    cfit_buf_puts(b, "}");
}

static void on_row(void *ctx, int rank, const cfit_bench_row *row)
{
    printer *p = ctx;
    for (int i = 0; i < 4; i++)
        if (!p->algos[i] || strcmp(p->algos[i], row->algo) == 0) {
            p->algos[i] = row->algo;
            p->algo_rows[i]++;
            break;
        }
    for (int ip = 0; ip < 2; ip++) {
        const cfit_bench_timing *t = &row->t[ip];
        p->busbw_sum += t->busbw_bytes_per_s / 1e9;
        p->bw_count++;
        if (t->wrong > 0) {
            p->failed_tests++;
            p->wrong_total += t->wrong;
        }
    }
    if (rank != 0)
        return;
    if (p->c->report)
        cli_bench_report_row(&p->rep, row);
    if (p->c->json) {
        json_row(p, row, 0);
        json_row(p, row, 1);
        return;
    }
    printf("%12llu  %12llu  %8s  %6s  %6i", (unsigned long long)row->size_bytes, (unsigned long long)row->count,
           cfit_dtype_name(row->dtype), row->reduces ? cfit_redop_name(row->op) : "none", row->root);
    for (int ip = 0; ip < 2; ip++) {
        const cfit_bench_timing *t = &row->t[ip];
        char tb[32], ab[32], bb[32];
        printf("  %7s  %6s  %6s", fmt_fit(tb, sizeof tb, 7, t->time_s * 1e6), fmt_fit(ab, sizeof ab, 6, t->algbw_bytes_per_s / 1e9),
               fmt_fit(bb, sizeof bb, 6, t->busbw_bytes_per_s / 1e9));
        if (t->wrong >= 0)
            printf("  %6g", (double)t->wrong);
        else
            printf("  %6s", "N/A");
    }
    printf("\n");
    fflush(stdout);
}

/* Footer / JSON tail on rank 0; the exit status on every rank. */
static int finish(printer *p)
{
    const coll_cli *c = p->c;
    double avg = p->bw_count ? p->busbw_sum / p->bw_count : 0.0;
    int low = c->have_min && avg < c->min_busbw_gbs;
    if (p->rank == 0 && c->json) {
        cfit_buf *b = &p->json;
        cfit_buf_puts(b, "]");
        cfit_buf_key_number(b, "avg_busbw_gbs", avg, 1);
        cfit_buf_printf(b, ", \"wrong_total\": %lld}\n", (long long)p->wrong_total);
        if (cfit_buf_ok(b))
            fputs(b->data, stdout);
        else
            return cli_error("out of memory");
    } else if (p->rank == 0) {
        printf("# Out of bounds values : %d %s\n", p->failed_tests, p->failed_tests ? "FAILED" : "OK");
        printf("# Avg bus bandwidth    : %g %s\n", avg, !c->have_min ? "" : low ? "FAILED" : "OK");
        printf("#\n# Collective test concluded: %s_perf\n# clusterfit algorithm:", cfit_coll_find(c->name)->nccl_name);
        for (int i = 0; i < 4 && p->algos[i]; i++)
            if (p->algos[1])
                printf("%s %s for %d size%s", i ? "," : "", p->algos[i], p->algo_rows[i], p->algo_rows[i] == 1 ? "" : "s");
            else
                printf(" %s", p->algos[i]);
        printf("\n#\n");
    }
    fflush(stdout);
    if (p->rank == 0 && c->report) {
        p->rep.path = c->report;
        int rc = cli_bench_report_write(&p->rep);
        if (rc)
            return rc;
    }
    if (p->wrong_total > 0) {
        if (p->rank == 0)
            cli_error("%lld wrong element%s: the result check failed", (long long)p->wrong_total,
                      p->wrong_total == 1 ? "" : "s");
        return EXIT_BENCH;
    }
    if (low) {
        if (p->rank == 0)
            cli_error("average bus bandwidth %.3g GB/s is below --min-busbw %g GB/s", avg, c->min_busbw_gbs);
        return EXIT_BENCH;
    }
    return EXIT_OK;
}

/* One rank's whole run (bench_run calls it on every rank). */
static int rank_body(cfit_comm *comm, void *ctx)
{
    coll_cli *c = ctx;
    printer p;
    memset(&p, 0, sizeof p);
    p.c = c;
    cfit_buf_init(&p.json);
    cfit_bench_sink sink = {.ctx = &p, .begin = on_begin, .row = on_row};
    cfit_diag d;
    cfit_diag_clear(&d);
    int err = cfit_bench_run(comm, &c->o, &sink, &d);
    int rc;
    if (err) {   /* bad options fail alike on every rank: rank 0 says why; runtime errors per rank */
        fflush(stdout);
        int bad_input = err == CFIT_EINVALID || err == CFIT_ERANGE;
        if (!bad_input || cfit_comm_rank(comm) == 0)
            cli_error("%s", d.msg);
        rc = bad_input ? EXIT_USAGE : EXIT_RUNTIME;
    } else {
        rc = finish(&p);
    }
    cfit_buf_fini(&p.json);
    return rc;
}

int cmd_bench_collective(const char *name, int argc, char **argv)
{
    coll_cli c;
    memset(&c, 0, sizeof c);
    c.name = name;
    cfit_bench_opts_init(&c.o);
    c.o.collective = name;
    bench_launch_init(&c.launch);
    char usage[96], desc[1024];
    snprintf(usage, sizeof usage, "clusterfit bench %s [-b BYTES -e BYTES -f N ...] [--np N] [options]", name);
    snprintf(desc, sizeof desc,
             "Run %s between ranks over shared memory or TCP and print nccl-tests' columns: per size, out of\n"
             "place then in place, time(us), algbw = bytes/time and busbw = algbw x the collective's nccl-tests\n"
             "factor (GB/s, 1 GB = 1e9 bytes), and #wrong, the elements that differ bit for bit from the exact\n"
             "result (docs/bench.md).  Launch with --np N, or under mpirun/srun/torchrun (docs/bench-launch.md).\n"
             "Exit status: 0 success, 1 runtime failure (a peer lost, a timeout), 2 bad option,\n"
             "3 a wrong element or an average bus bandwidth below --min-busbw.",
             name);
    int rc = cli_parse_bound(argc, argv, opts, binds, on_opt, &c, usage, desc);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    cfit_diag d;
    cfit_diag_clear(&d);
    if (cfit_bench_opts_check(&c.o, &d))
        return cli_error("bench %s: %s", name, d.msg);
    const char *corrupt = getenv("CLUSTERFIT_BENCH_CORRUPT");   /* test hook (docs/bench.md) */
    if (corrupt && *corrupt && cli_count("CLUSTERFIT_BENCH_CORRUPT", corrupt, &c.o.corrupt))
        return EXIT_USAGE;
    if ((rc = bench_nccl_ranks(&c.launch, c.ngpus, c.nthreads)))
        return rc;
    bench_launch_digest(&c.launch, argc, argv);
    if (c.launch.np > 0)
        cfit_bench_need_bytes(&c.o, c.launch.np, &c.launch.mem_bytes_per_rank, &c.launch.shm_bytes_per_rank);
    fflush(stdout);
    return bench_run(&c.launch, rank_body, &c);
}

