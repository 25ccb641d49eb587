/* cmd_bench_pairs.c - `clusterfit bench pairs`: the host x host bandwidth and latency
 * matrices, the median, and the links and hosts below --slow-threshold of it. */
#include "bench_launch.h"
#include "cli.h"
#include "clusterfit/writer.h"
#include "clusterfit/pairs.h"
#include "bench_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { O_SIZE = 1, O_ITERS, O_WARMUP, O_LAT_ITERS, O_PER_RANK, O_SLOW, O_JSON, O_REPORT, O_CONFIRM };

static const cli_opt opts[] = {
    {"size", 's', "BYTES", "bandwidth message size (default 16M; K M G suffixes, powers of 1024)", O_SIZE},
    {"iters", 'n', "N", "timed exchanges per pair (default 10)", O_ITERS},
    {"warmup", 'w', "N", "untimed exchanges per pair first (default 1)", O_WARMUP},
    {"lat-iters", 0, "N", "timed 8-byte ping-pongs per pair for the latency (default 100)", O_LAT_ITERS},
    {"per-rank", 0, NULL, "measure between every pair of ranks, not one rank per host", O_PER_RANK},
    {"slow-threshold", 0, "PCT", "a link below PCT% of the median bandwidth is slow (default 80)", O_SLOW},
    {"confirm", 0, "N", "re-measure each suspect link N times alone; only links still slow count (default 3; 0 = off)",
     O_CONFIRM},
    {"json", 0, NULL, "print one JSON object (docs/bench-launch.md) instead of the tables", O_JSON},
    {"report", 0, "FILE.html", "also write an HTML report with heat maps (docs/report.md)", O_REPORT},
    BENCH_LAUNCH_OPTS,
    {NULL, 0, NULL, NULL, 0},
};

typedef struct pairs_cli {
    cfit_launch launch;
    cfit_pairs_opts o;
    int json;
    const char *transport;
    const char *report;   /* --report FILE.html */
} pairs_cli;

/* The options whose values are stored as given (cli_bind); on_opt has --size and --slow-threshold
 * (their own ranges and messages) and the launch options that parse (bench_launch_opt). */
static const cli_bind binds[] = {
    CLI_INT(O_ITERS, pairs_cli, o.iters, 1, 1000000),
    CLI_INT(O_WARMUP, pairs_cli, o.warmup, 0, 1000000),
    CLI_INT(O_LAT_ITERS, pairs_cli, o.lat_iters, 1, 10000000),
    CLI_INT(O_CONFIRM, pairs_cli, o.confirm, 0, 100),
    CLI_FLAG(O_PER_RANK, pairs_cli, o.per_rank),
    CLI_FLAG(O_JSON, pairs_cli, json),
    CLI_STRING(O_REPORT, pairs_cli, report),
    BENCH_LAUNCH_BINDS(pairs_cli, launch),
    {.id = 0},
};

static int on_opt(void *vc, int id, const char *name, const char *value)
{
    pairs_cli *p = vc;
    if (id >= BENCH_LAUNCH_ID0) {
        if (id == BENCH_OPT_TRANSPORT)
            p->transport = value;
        return bench_launch_opt(&p->launch, id, name, value);
    }
    switch (id) {
    case -1: return cli_error("bench pairs: unexpected argument '%s' (see --help)", value);
    case O_SIZE: {
        cfit_diag d;
        uint64_t s;
        cfit_diag_clear(&d);
        if (cfit_parse_size(value, &s, &d))
            return cli_error("--%s: %s", name, d.msg);
        if (s < 1 || s > ((uint64_t)1 << 34))
            return cli_error("--%s: %s is out of range (1 byte to 16G)", name, value);
        p->o.size_bytes = (size_t)s;
        return 0;
    }
    case O_SLOW: {
        double pct;
        if (cli_real(name, value, 0, 100, &pct))
            return EXIT_USAGE;
        if (pct <= 0)
            return cli_error("--%s: %s must be above 0", name, value);
        p->o.slow_threshold = pct / 100.0;
        return 0;
    }
    }
    return 0;
}

static void print_matrix(const cfit_pairs_result *r, const double *m, double scale, const char *title)
{
    int n = r->nhosts;
    printf("\n# %s\n%-6s", title, "");
    for (int b = 0; b < n; b++) {
        char col[16];
        snprintf(col, sizeof col, "h%d", b);
        printf(" %9s", col);
    }
    printf("\n");
    for (int a = 0; a < n; a++) {
        char row[16];
        snprintf(row, sizeof row, "h%d", a);
        printf("%-6s", row);
        for (int b = 0; b < n; b++) {
            double v = m[a * n + b];
            if (isnan(v))
                printf(" %9s", "-");
            else
                printf(" %9.2f", v * scale);
        }
        printf("\n");
    }
}

/* "16 MiB", "4 KiB", "1000 bytes": the message size as given. */
static const char *size_text(char *buf, size_t n, size_t bytes)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB"};
    int u = 0;
    while (u < 3 && bytes >= 1024 && bytes % 1024 == 0)
        bytes /= 1024, u++;
    snprintf(buf, n, "%zu %s", bytes, units[u]);
    return buf;
}

static void print_link(const cfit_pairs_result *r, const cfit_pairs_link *l)
{
    printf("  %s - %s  %.2f GB/s  %.0f%% of median", r->hosts[l->a], r->hosts[l->b], l->bandwidth_gbs,
           l->fraction_of_median * 100);
    if (l->repeats)
        printf("  (first %.2f, %d re-measurements: %.2f to %.2f GB/s)", l->first_gbs, l->repeats, l->min_gbs,
               l->max_gbs);
    printf("\n");
}

static void print_human(const pairs_cli *p, const cfit_pairs_result *r, int size)
{
    char sz[32];
    int n = r->nhosts;
    printf("# clusterfit bench pairs: %d hosts of %d ranks, %s per message, %d iterations, %d rounds, "
           "transport %s\n", n, size, size_text(sz, sizeof sz, p->o.size_bytes), p->o.iters,
           cfit_pairs_rounds(n), p->transport ? p->transport : "auto");
    for (int h = 0; h < n; h++)
        printf("#   h%-4d %s (rank %d)\n", h, r->hosts[h], r->host_rank[h]);
    print_matrix(r, r->bw_gbs, 1.0, "bandwidth, GB/s per direction with both directions busy");
    print_matrix(r, r->lat_s, 1e6, "latency, us (half the round trip of 8 bytes)");
    printf("\nmedian bandwidth %.2f GB/s, median latency %.2f us\n", r->median_bw_gbs, r->median_lat_s * 1e6);
    if (r->ndismissed) {
        printf("suspects not confirmed (slow in the first pass, at least %g%% of the median when re-measured alone):\n",
               p->o.slow_threshold * 100);
        for (int s = 0; s < r->ndismissed; s++)
            print_link(r, &r->dismissed[s]);
    }
    if (r->nslow == 0) {
        printf("no slow links (every link at least %g%% of the median bandwidth)\n", p->o.slow_threshold * 100);
        return;
    }
    printf("slow links (below %g%% of the median bandwidth%s):\n", p->o.slow_threshold * 100,
           p->o.confirm ? ", confirmed by re-measuring" : "");
    for (int s = 0; s < r->nslow; s++)
        print_link(r, &r->slow[s]);
    if (r->nslow_hosts) {
        printf("slow hosts (every link slow):");
        for (int h = 0; h < n; h++)
            if (r->host_slow[h])
                printf(" %s", r->hosts[h]);
        printf("\n");
    }
}

static void json_matrix(cfit_buf *b, const char *key, const double *m, int n)
{
    cfit_buf_printf(b, ", \"%s\": [", key);
    for (int a = 0; a < n; a++) {
        cfit_buf_puts(b, a ? ", [" : "[");
        for (int c = 0; c < n; c++) {
            if (c)
                cfit_buf_puts(b, ", ");
            cfit_buf_json_number(b, m[a * n + c]);
        }
        cfit_buf_puts(b, "]");
    }
    cfit_buf_puts(b, "]");
}

static void json_links(cfit_buf *b, const char *key, const cfit_pairs_result *r, const cfit_pairs_link *v, int n)
{
    cfit_buf_printf(b, ", \"%s\": [", key);
    for (int s = 0; s < n; s++) {
        const cfit_pairs_link *l = &v[s];
        cfit_buf_puts(b, s ? ", {" : "{");
        cfit_buf_key_string(b, "a", r->hosts[l->a], 0);
        cfit_buf_key_string(b, "b", r->hosts[l->b], 1);
        cfit_buf_key_number(b, "bandwidth_gbs", l->bandwidth_gbs, 1);
        cfit_buf_key_number(b, "fraction_of_median", l->fraction_of_median, 1);
        cfit_buf_printf(b, ", \"repeats\": %d", l->repeats);
        cfit_buf_key_opt(b, "first_gbs", l->repeats > 0, l->first_gbs);
        cfit_buf_key_opt(b, "min_gbs", l->repeats > 0, l->min_gbs);
        cfit_buf_key_opt(b, "max_gbs", l->repeats > 0, l->max_gbs);
        cfit_buf_puts(b, "}");
    }
    cfit_buf_puts(b, "]");
}

static int print_json(const pairs_cli *p, const cfit_pairs_result *r)
{
    cfit_buf b;
    int n = r->nhosts;
    cfit_buf_init(&b);
    cfit_buf_printf(&b, "{\"clusterfit_version\": \"%s\", \"benchmark\": \"pairs\", \"hosts\": [", CFIT_VERSION);
    for (int h = 0; h < n; h++) {
        if (h)
            cfit_buf_puts(&b, ", ");
        cfit_buf_json_string(&b, r->hosts[h]);
    }
    cfit_buf_puts(&b, "]");
    cfit_buf_key_number(&b, "size_bytes", (double)p->o.size_bytes, 1);
    json_matrix(&b, "bandwidth_gbs", r->bw_gbs, n);
    json_matrix(&b, "latency_s", r->lat_s, n);
    cfit_buf_key_number(&b, "median_bandwidth_gbs", r->median_bw_gbs, 1);
    cfit_buf_key_number(&b, "median_latency_s", r->median_lat_s, 1);
    cfit_buf_key_number(&b, "slow_threshold", p->o.slow_threshold, 1);
    cfit_buf_printf(&b, ", \"confirm\": %d", p->o.confirm);
    json_links(&b, "slow_links", r, r->slow, r->nslow);
    json_links(&b, "dismissed_links", r, r->dismissed, r->ndismissed);
    cfit_buf_puts(&b, ", \"slow_hosts\": [");
    for (int h = 0, k = 0; h < n; h++)
        if (r->host_slow[h]) {
            if (k++)
                cfit_buf_puts(&b, ", ");
            cfit_buf_json_string(&b, r->hosts[h]);
        }
    cfit_buf_puts(&b, "]}\n");
    return cli_emit_json(&b);
}

static int pairs_body(cfit_comm *c, void *ctx)
{
    pairs_cli *p = ctx;
    cfit_pairs_result r;
    int rc = cfit_pairs_run(c, &p->o, &r);
    int code = 0;
    if (rc == CFIT_EINVALID && r.nhosts < 2) {
        if (cfit_comm_rank(c) == 0)
            cli_error("bench pairs needs at least 2 ranks (launch with --np N, mpirun, srun or torchrun-style "
                      "env; docs/bench-launch.md)");
        code = EXIT_USAGE;
    } else if (rc == CFIT_ENOMEM) {
        fprintf(stderr, "clusterfit: error: rank %d: out of memory\n", cfit_comm_rank(c));
        code = EXIT_RUNTIME;
    } else if (rc) {
        code = bench_comm_error(c, rc);
    } else if (cfit_comm_rank(c) == 0) {
        if (p->json)
            code = print_json(p, &r);
        else
            print_human(p, &r, cfit_comm_size(c));
        if (!code && p->report)
            code = cli_pairs_report(p->report, &r, p->o.slow_threshold);
        if (!code && r.nslow)
            code = EXIT_BENCH;
    } else if (r.nslow) {
        code = EXIT_BENCH;
    }
    cfit_pairs_result_free(&r);
    return code;
}

/* CLUSTERFIT_PAIRS_INJECT="A-B:FACTOR[:once]": the test hook of pairs.h (docs/bench-launch.md). */
static int pairs_inject(cfit_pairs_opts *o)
{
    const char *e = getenv("CLUSTERFIT_PAIRS_INJECT");
    if (!e || !*e)
        return 0;
    int a, b, used = 0;
    double f;
    if (sscanf(e, "%d-%d:%lf%n", &a, &b, &f, &used) != 3 || a < 0 || b < 0 || a == b || !(f > 0) ||
        (e[used] && strcmp(e + used, ":once") != 0))
        return cli_error("CLUSTERFIT_PAIRS_INJECT: expected A-B:FACTOR[:once], got '%s'", e);
    o->inject_a = a, o->inject_b = b, o->inject_factor = f, o->inject_once = e[used] != '\0';
    return 0;
}

int cmd_bench_pairs(int argc, char **argv)
{
    pairs_cli p;
    memset(&p, 0, sizeof p);
    bench_launch_init(&p.launch);
    cfit_pairs_opts_init(&p.o);
    int rc = cli_parse_bound(argc, argv, opts, binds, on_opt, &p, "clusterfit bench pairs [options]",
                             "Measure bandwidth and latency between every pair of hosts, in rounds of disjoint\n"
                             "pairs, and name the links and hosts slower than the rest. One rank per host takes\n"
                             "part (every rank with --per-rank, or when all run on one host); exit 3 when a link\n"
                             "is below --slow-threshold of the median. Launch with --np N, mpirun, srun or\n"
                             "RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT (docs/bench-launch.md).");
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if ((rc = pairs_inject(&p.o)))
        return rc;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (p.launch.np > 0 && cpus > 0 && p.launch.np > cpus)
        fprintf(stderr, "clusterfit: warning: %d ranks on %ld CPUs: ranks wait for a CPU, so timings (and slow "
                "links) are the scheduler's as much as the link's; use --np %ld or fewer\n", p.launch.np, cpus, cpus);
    bench_launch_digest(&p.launch, argc, argv);
    return bench_run(&p.launch, pairs_body, &p);
}
