/* test_calibration.c - reading bench --json files and nccl-tests logs into fabric numbers
 * (src/core/calibration.c, src/core/nccl_log.c) and their effect on the planner's data-parallel time. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterfit/calibration.h"
#include "clusterfit/catalog.h"
#include "clusterfit/plan.h"

#define ROW(size, inplace, t, bus, wrong)                                                              \
    "{\"size_bytes\": " #size ", \"count\": 1, \"type\": \"float\", \"redop\": \"sum\", \"root\": -1, " \
    "\"in_place\": " #inplace ", \"time_s\": " #t ", \"algbw_gbs\": 1, \"busbw_gbs\": " #bus              \
    ", \"wrong\": " #wrong ", \"future_key\": [1, 2]}"

static const char *const good_ar =
    "{\"clusterfit_version\": \"0.1.0\", \"benchmark\": \"allreduce\", \"ranks\": 4, \"hosts\": 2,\n"
    " \"transport\": \"tcp\", \"iters\": 20, \"warmup\": 5, \"results\": [\n"
    "  " ROW(1024, false, 0.00006, 0.01, 0) ",\n"
    "  " ROW(64, false, 0.00003, 0.001, 0) ",\n"
    "  " ROW(64, true, 0.00001, 0.001, 0) ",\n"
    "  " ROW(4194304, false, 0.002, 5.5, 0) ",\n"
    "  " ROW(8388608, true, 0.003, 9.9, 0) ",\n"
    "  " ROW(0, false, 0.000001, 0, 0) "\n"
    " ], \"avg_busbw_gbs\": 2.5, \"wrong_total\": 0}\n";

/* Parse s as the file `file`, from a copy without a NUL after the text (ASan sees over-reads). */
static int parse_as(const char *s, const char *file, cfit_calibration *c, cfit_diag *d)
{
    size_t n = strlen(s);
    char *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    memcpy(copy, s, n);
    cfit_diag_clear(d);
    int rc = cfit_calibration_parse(copy, n, file, c, d);
    free(copy);
    return rc;
}

/* s, read as `file`, is refused with err at line (and col unless -1), the message containing needle. */
static void bad_as(const char *s, const char *file, int err, int line, int col, const char *needle)
{
    cfit_calibration c;
    cfit_diag d;
    int rc = parse_as(s, file, &c, &d);
    if (rc != err || d.line != line || (col >= 0 && d.col != col) || !strstr(d.msg, needle))
        fail_msg("got %d at %d:%d '%s', want %d at %d:%d with '%s'", rc, d.line, d.col, d.msg, err, line, col,
                 needle);
    assert_string_equal(d.file, file);
}

static int parse(const char *s, cfit_calibration *c, cfit_diag *d)
{
    return parse_as(s, "cal.json", c, d);
}

/* s is refused with err at line:col, the message containing needle. */
static void bad(const char *s, int err, int line, int col, const char *needle)
{
    bad_as(s, "cal.json", err, line, col, needle);
}

static void test_collective(void **state)
{
    (void)state;
    cfit_calibration c;
    cfit_diag d;
    assert_int_equal(parse(good_ar, &c, &d), CFIT_EOK);
    assert_string_equal(c.benchmark, "allreduce");
    assert_int_equal(c.ranks, 4);
    assert_int_equal(c.hosts, 2);
    /* largest out-of-place size (the 8 MiB row is in-place, the 0-byte row ignored) */
    assert_true(fabs(c.bw_bytes_per_s - 5.5e9) < 1.0);
    assert_true(c.bw_size_bytes == 4194304.0);
    /* smallest non-zero out-of-place size: 30 us over 2(n-1) = 6 steps */
    assert_int_equal(c.steps, 6);
    assert_true(c.lat_size_bytes == 64.0);
    assert_true(fabs(c.latency_s - 5e-6) < 1e-12);
    assert_string_equal(c.file, "cal.json");
}

static void test_steps(void **state)
{
    (void)state;
    assert_int_equal(cfit_calibration_steps("allreduce", 8), 14);
    assert_int_equal(cfit_calibration_steps("allgather", 8), 7);
    assert_int_equal(cfit_calibration_steps("reducescatter", 8), 7);
    assert_int_equal(cfit_calibration_steps("alltoall", 3), 2);
    assert_int_equal(cfit_calibration_steps("sendrecv", 8), 1);
    assert_int_equal(cfit_calibration_steps("sendrecv", 1), 0);
    assert_int_equal(cfit_calibration_steps("storage", 8), 0);
}

static void test_pairs(void **state)
{
    (void)state;
    const char *s = "{\"clusterfit_version\": \"0.1.0\", \"benchmark\": \"pairs\", \"hosts\": [\"a\", \"b\", \"c\"],\n"
                    " \"size_bytes\": 16777216, \"bandwidth_gbs\": [[null, 1.2, 1.1], [1.2, null, 1], [1.1, 1, null]],\n"
                    " \"latency_s\": [[null, 1e-5, 1e-5], [1e-5, null, 2e-5], [1e-5, 2e-5, null]],\n"
                    " \"median_bandwidth_gbs\": 1.1, \"median_latency_s\": 1e-05, \"slow_threshold\": 0.8,\n"
                    " \"slow_links\": [], \"slow_hosts\": []}";
    cfit_calibration c;
    cfit_diag d;
    assert_int_equal(parse(s, &c, &d), CFIT_EOK);
    assert_string_equal(c.benchmark, "pairs");
    assert_int_equal(c.hosts, 3);
    assert_true(fabs(c.bw_bytes_per_s - 1.1e9) < 1.0);
    assert_true(fabs(c.latency_s - 1e-5) < 1e-15);
    assert_int_equal(c.steps, 1);

    bad("{\"benchmark\": \"pairs\", \"hosts\": [\"a\"], \"median_bandwidth_gbs\": 1, \"median_latency_s\": 1}",
        CFIT_EINVALID, 1, 33, "within one host");
    bad("{\"benchmark\": \"pairs\", \"hosts\": 2, \"median_bandwidth_gbs\": 1, \"median_latency_s\": 1}",
        CFIT_EPARSE, 1, 33, "array of host names");
    bad("{\"benchmark\": \"pairs\", \"hosts\": [\"a\", \"b\"], \"median_latency_s\": 1}", CFIT_EPARSE, 1, 1,
        "no \"median_bandwidth_gbs\"");
    bad("{\"benchmark\": \"pairs\", \"hosts\": [\"a\", \"b\"], \"median_bandwidth_gbs\": 0, \"median_latency_s\": 1}",
        CFIT_ERANGE, 1, 69, "must be above 0");
}

static void test_refusals(void **state)
{
    (void)state;
    bad("{\"benchmark\": \"allreduce\", \"ranks\": 2, \"hosts\": 1, \"results\": []}", CFIT_EINVALID, 1, 49,
        "within one host");
    bad("{\"benchmark\": \"allreduce\", \"ranks\": 2, \"hosts\": 2, \"results\": [\n " ROW(64, false, 1, 1, 3) "]}",
        CFIT_EINVALID, 2, 151, "3 wrong elements");
    bad("{\"benchmark\": \"allreduce\", \"ranks\": 2, \"hosts\": 2, \"wrong_total\": 1, \"results\": []}",
        CFIT_EINVALID, 1, 67, "wrong_total");
    bad("{\"benchmark\": \"storage\"}", CFIT_EINVALID, 1, 15, "measures no fabric");
    bad("{\"benchmark\": \"alreduce\"}", CFIT_EINVALID, 1, 15, "did you mean \"allreduce\"");
    bad("{\"benchmark\": 3}", CFIT_EPARSE, 1, 15, "must be a string");
    bad("{\"ranks\": 2}", CFIT_EPARSE, 1, 1, "no \"benchmark\"");
    bad("[1]", CFIT_EPARSE, 1, 1, "not array");
    bad("{\"benchmark\": \"allreduce\", \"ranks\": 2, \"hosts\": 2}", CFIT_EPARSE, 1, 1, "no \"results\"");
    bad("{\"benchmark\": \"allreduce\", \"ranks\": 2.5, \"hosts\": 2, \"results\": []}", CFIT_ERANGE, 1, 37,
        "whole number");
    bad("{\"benchmark\": \"allreduce\", \"ranks\": \"2\", \"hosts\": 2, \"results\": []}", CFIT_EPARSE, 1, 37,
        "must be a number, not string");
    bad("{\"benchmark\": \"allreduce\", \"ranks\": 2, \"hosts\": 2, \"results\": []}", CFIT_EINVALID, 1, 63,
        "no out-of-place row");
    bad("{\"benchmark\": \"allreduce\", \"ranks\": 2, \"hosts\": 2, \"results\": [{\"wrong\": 0}]}", CFIT_EPARSE,
        1, 64, "has no \"size_bytes\"");
    bad("{\"benchmark\": \"allreduce\", \"ranks\": 2, \"hosts\": 2, \"results\": [" ROW(64, 1, 1, 1, 0) "]}",
        CFIT_EPARSE, 1, 152, "true or false");
    bad("{\"benchmark\": \"allreduce\", \"ranks\": 2, \"hosts\": 2, \"results\": [" ROW(64, false, 1, -1, 0) "]}",
        CFIT_ERANGE, 1, 201, "must not be negative");
    bad("{\"benchmark\": \"allreduce\",", CFIT_EPARSE, 1, 27, "");
}

static void test_load(void **state)
{
    (void)state;
    cfit_calibration c;
    cfit_diag d;
    cfit_diag_clear(&d);
    assert_int_equal(cfit_calibration_load("/nonexistent/cal.json", &c, &d), CFIT_EIO);
    assert_non_null(strstr(d.msg, "cannot open"));
    char path[] = "/tmp/cfit-cal-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(good_ar, f);
    fclose(f);
    assert_int_equal(cfit_calibration_load(path, &c, &d), CFIT_EOK);
    assert_string_equal(c.file, path);
    remove(path);
}

static const char *const ar_log =
    "# nccl-tests version 2.17.1 nccl-headers=22703 nccl-library=22703\n"
    "# Collective test starting: all_reduce_perf\n"
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 268435456 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
    "#\n"
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid   4100 on     node01 device  0 [0000:19:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  1 Group  0 Pid   4101 on     node01 device  1 [0000:1a:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  2 Group  0 Pid   4102 on     node02 device  0 [0000:19:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  3 Group  0 Pid   4103 on     node02 device  1 [0000:1a:00] NVIDIA H100 80GB HBM3\n"
    "#\n"
    "#                                                              out-of-place                       in-place          \n"
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n"
    "           8             2     float     sum      -1    20.60    0.00    0.00       0    20.81    0.00    0.00       0\n"
    "        1024           256     float     sum      -1    19.70    0.05    0.08       0    19.90    0.05    0.08       0\n"
    "      131072         32768     float     sum      -1    33.44    3.92    5.88       0    33.77    3.88    5.82       0\n"
    "    16777216       4194304     float     sum      -1  1697.72    9.88   14.82       0  1714.70    9.78   14.68       0\n"
    "   268435456      67108864     float     sum      -1  27400.8    9.80   14.69       0  27674.8    9.70   14.55       0\n"
    "# Out of bounds values : 0 OK\n"
    "# Avg bus bandwidth    : 7.0953 \n"
    "#\n"
    "# Collective test concluded: all_reduce_perf\n"
    "#\n";

static const char *const old_log =
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 268435456 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
    "#\n"
    "# Using devices\n"
    "#  Rank  0 Pid   4100 on     node01 device  0 [0x19] Tesla V100-SXM2-32GB\n"
    "#  Rank  1 Pid   4101 on     node01 device  1 [0x1a] Tesla V100-SXM2-32GB\n"
    "#  Rank  2 Pid   4102 on     node02 device  0 [0x19] Tesla V100-SXM2-32GB\n"
    "#  Rank  3 Pid   4103 on     node02 device  1 [0x1a] Tesla V100-SXM2-32GB\n"
    "#\n"
    "#                                                       out-of-place                       in-place          \n"
    "#       size         count      type     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
    "#        (B)    (elements)               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n"
    "           8             2     float    20.60    0.00    0.00       0    20.81    0.00    0.00       0\n"
    "        1024           256     float    19.70    0.05    0.08       0    19.90    0.05    0.08       0\n"
    "      131072         32768     float    33.44    3.92    5.88       0    33.77    3.88    5.82       0\n"
    "    16777216       4194304     float  1697.72    9.88   14.82       0  1714.70    9.78   14.68       0\n"
    "   268435456      67108864     float  27400.8    9.80   14.69       0  27674.8    9.70   14.55       0\n"
    "# Out of bounds values : 0 OK\n"
    "# Avg bus bandwidth    : 7.0953 \n"
    "#\n"
    "#\n";

static const char *const ag_log =
    "# nccl-tests version 2.17.1 nccl-headers=22703 nccl-library=22703\n"
    "# Collective test starting: all_gather_perf\n"
    "# nThread 1 nGpus 1 minBytes 1024 maxBytes 67108864 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
    "#\n"
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid   4100 on     node01 device  0 [0000:19:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  1 Group  0 Pid   4101 on     node01 device  1 [0000:1a:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  2 Group  0 Pid   4102 on     node02 device  0 [0000:19:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  3 Group  0 Pid   4103 on     node02 device  1 [0000:1a:00] NVIDIA H100 80GB HBM3\n"
    "#\n"
    "#                                                              out-of-place                       in-place          \n"
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n"
    "        1024            64     float    none      -1    15.13    0.07    0.05       0    15.28    0.07    0.05       0\n"
    "       65536          4096     float    none      -1    23.19    2.83    2.12       0    23.42    2.80    2.10       0\n"
    "     4194304        262144     float    none      -1   539.29    7.78    5.83       0   544.68    7.70    5.78       0\n"
    "    67108864       4194304     float    none      -1  8403.61    7.99    5.99       0  8487.64    7.91    5.93       0\n"
    "# Out of bounds values : 0 OK\n"
    "# Avg bus bandwidth    : 3.49813 \n"
    "#\n"
    "# Collective test concluded: all_gather_perf\n"
    "#\n";

static const char *const a2a_log =
    "# nccl-tests version 2.17.1 nccl-headers=22703 nccl-library=22703\n"
    "# Collective test starting: alltoall_perf\n"
    "# nThread 1 nGpus 1 minBytes 1536 maxBytes 100663296 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
    "#\n"
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid   4100 on     node01 device  0 [0000:19:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  1 Group  0 Pid   4101 on     node02 device  0 [0000:19:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  2 Group  0 Pid   4102 on     node03 device  0 [0000:19:00] NVIDIA H100 80GB HBM3\n"
    "#\n"
    "#                                                              out-of-place                       in-place          \n"
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n"
    "        1536           128     float    none      -1    40.31    0.04    0.03     N/A    40.71    0.04    0.03     N/A\n"
    "       98304          8192     float    none      -1    59.66    1.65    1.10     N/A    60.26    1.63    1.09     N/A\n"
    "     6291456        524288     float    none      -1  1298.29    4.85    3.23     N/A  1311.27    4.80    3.20     N/A\n"
    "   100663296       8388608     float    none      -1  20172.7    4.99    3.33     N/A  20374.4    4.94    3.29     N/A\n"
    "# Out of bounds values : 0 OK\n"
    "# Avg bus bandwidth    : 1.92031 \n"
    "#\n"
    "# Collective test concluded: alltoall_perf\n"
    "#\n";


/* ---- nccl-tests logs ---- */

static int parse_log(const char *s, cfit_calibration *c, cfit_diag *d)
{
    return parse_as(s, "nccl.log", c, d);
}

/* s is refused with err at line (and col unless -1), the message containing needle. */
static void bad_log(const char *s, int err, int line, int col, const char *needle)
{
    bad_as(s, "nccl.log", err, line, col, needle);
}

static void test_nccl_allreduce(void **state)
{
    (void)state;
    cfit_calibration c;
    cfit_diag d;
    assert_int_equal(parse_log(ar_log, &c, &d), CFIT_EOK);
    assert_string_equal(c.source, "nccl-tests");
    assert_string_equal(c.program, "all_reduce_perf");
    assert_string_equal(c.benchmark, "allreduce");
    assert_string_equal(c.gpu, "NVIDIA H100 80GB HBM3");
    assert_int_equal(c.gpus_per_process, 1);   /* the header's nGpus */
    assert_int_equal(c.ranks, 4);
    assert_int_equal(c.hosts, 2);
    assert_int_equal(c.steps, 6);
    assert_true(fabs(c.bw_bytes_per_s - 14.69e9) < 1.0);   /* busbw of the largest size */
    assert_true(c.bw_size_bytes == 268435456.0);
    assert_int_equal(c.npoints, 5);
    assert_int_equal(c.fit_rows, 5);
    assert_true(c.points[0].size_bytes == 8 && fabs(c.points[0].time_s - 20.60e-6) < 1e-12);
    assert_true(fabs(c.points[4].busbw_bytes_per_s - 14.69e9) < 1.0);
    /* generated as 20 us + size / 10 GB/s with a few per cent of noise */
    assert_true(fabs(c.fit_alpha_s - 20e-6) < 1.5e-6);
    assert_true(fabs(c.fit_beta_bytes_per_s - 10e9) < 0.5e9);
    assert_true(c.fit_error >= 0 && c.fit_error < 0.05);
    assert_true(fabs(c.latency_s - c.fit_alpha_s / 6) < 1e-15);
    assert_string_equal(c.file, "nccl.log");

    /* the same log under `srun --label` and `mpirun --tag-output` */
    const char *pre[] = {"0: ", "[1,0]<stdout>:"};
    for (size_t k = 0; k < 2; k++) {
        size_t n = strlen(ar_log), lines = 0;
        for (size_t i = 0; i < n; i++)
            lines += ar_log[i] == '\n';
        char *buf = malloc(n + lines * strlen(pre[k]) + 1), *o = buf;
        assert_non_null(buf);
        for (const char *l = ar_log; *l;) {
            const char *e = strchr(l, '\n');
            o += sprintf(o, "%s%.*s\n", pre[k], (int)(e - l), l);
            l = e + 1;
        }
        cfit_calibration c2;
        assert_int_equal(parse_log(buf, &c2, &d), CFIT_EOK);
        assert_int_equal(c2.ranks, 4);
        assert_int_equal(c2.hosts, 2);
        assert_true(c2.fit_alpha_s == c.fit_alpha_s && c2.bw_bytes_per_s == c.bw_bytes_per_s);
        free(buf);
    }
}

static void test_nccl_old_format(void **state)
{
    (void)state;
    cfit_calibration c;
    cfit_diag d;
    /* no redop/root columns, no "Collective test starting" line: busbw/algbw = 2(n-1)/n says all-reduce */
    assert_int_equal(parse_log(old_log, &c, &d), CFIT_EOK);
    assert_string_equal(c.benchmark, "allreduce");
    assert_string_equal(c.program, "");
    assert_string_equal(c.gpu, "Tesla V100-SXM2-32GB");
    assert_int_equal(c.ranks, 4);
    assert_int_equal(c.hosts, 2);
    assert_true(fabs(c.bw_bytes_per_s - 14.69e9) < 1.0);
    assert_true(fabs(c.fit_alpha_s - 20e-6) < 1.5e-6);
}

static void test_nccl_allgather_alltoall(void **state)
{
    (void)state;
    cfit_calibration c;
    cfit_diag d;
    assert_int_equal(parse_log(ag_log, &c, &d), CFIT_EOK);
    assert_string_equal(c.benchmark, "allgather");
    assert_int_equal(c.ranks, 4);
    assert_int_equal(c.steps, 3);
    assert_true(fabs(c.bw_bytes_per_s - 5.99e9) < 1.0);
    assert_true(fabs(c.fit_alpha_s - 15e-6) < 1e-6);
    assert_true(fabs(c.latency_s - c.fit_alpha_s / 3) < 1e-15);
    /* #wrong is N/A when validation is off (-c 0); 3 hosts of one GPU */
    assert_int_equal(parse_log(a2a_log, &c, &d), CFIT_EOK);
    assert_string_equal(c.benchmark, "alltoall");
    assert_int_equal(c.ranks, 3);
    assert_int_equal(c.hosts, 3);
    assert_int_equal(c.steps, 2);
    assert_true(fabs(c.fit_alpha_s - 40e-6) < 2e-6);
}

#define R0 "#  Rank  0 Group  0 Pid   4100 on     node01 device  0 [0000:19:00] NVIDIA H100 80GB HBM3\n"
#define R1 "#  Rank  1 Group  0 Pid   4101 on     node02 device  0 [0000:19:00] NVIDIA H100 80GB HBM3\n"
#define R1_SAME "#  Rank  1 Group  0 Pid   4101 on     node01 device  1 [0000:1a:00] NVIDIA H100 80GB HBM3\n"
#define COLS "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
#define PROG "# Collective test starting: all_reduce_perf\n"
#define HEAD PROG R0 R1 COLS
#define ROW8 "8 2 float sum -1 20.6 0.00 0.00 0 20.8 0.00 0.00 0\n"
#define ROWM "1048576 262144 float sum -1 120.0 8.74 8.74 0 121.0 8.67 8.67 0\n"

static void test_nccl_refusals(void **state)
{
    (void)state;
    cfit_calibration c;
    cfit_diag d;
    assert_int_equal(parse_log(HEAD ROW8 ROWM, &c, &d), CFIT_EOK);
    assert_true(fabs(c.bw_bytes_per_s - 8.74e9) < 1.0);
    assert_int_equal(c.steps, 2);
    assert_int_equal(c.gpus_per_process, 0);   /* no nThread line */
    assert_int_equal(parse_log(PROG "# nThread 1 nGpus 8 minBytes 8 maxBytes 1048576 step: 2(factor)\n" R0 R1 COLS ROW8
                               ROWM, &c, &d), CFIT_EOK);
    assert_int_equal(c.gpus_per_process, 8);
    bad_log(PROG "# nThread 1 nGpus 0 minBytes 8\n" R0 R1 COLS ROW8 ROWM, CFIT_EPARSE, 2, 19,
            "nGpus '0' is not a GPU count");
    /* NCCL INFO chatter and blank lines are skipped */
    assert_int_equal(parse_log(HEAD "node01:4100:4100 [0] NCCL INFO Bootstrap : Using eth0\n\n" ROW8 ROWM, &c, &d),
                     CFIT_EOK);

    bad_log(HEAD "8 2 float sum -1 20.6 0.00 0.00 0 20.8 0.00 0.00\n", CFIT_EPARSE, 5, 1,
            "a data row of 12 fields where the column header has 13");
    bad_log(HEAD "8 2 float sum -1 fast 0.00 0.00 0 20.8 0.00 0.00 0\n", CFIT_EPARSE, 5, 18,
            "the time column must be a number >= 0, not 'fast'");
    bad_log(HEAD "8x 2 float sum -1 20.6 0.00 0.00 0 20.8 0.00 0.00 0\n", CFIT_EPARSE, 5, 1,
            "size column must be a whole number");
    bad_log(HEAD ROWM ROW8, CFIT_EPARSE, 6, 1, "sizes must increase");
    bad_log(HEAD ROW8 ROW8, CFIT_EPARSE, 6, 1, "sizes must increase");
    bad_log(HEAD, CFIT_EPARSE, 4, 1, "no data rows");
    bad_log("hello\nworld\n", CFIT_EPARSE, 0, 0, "no data rows");
    bad_log(PROG R0 R1_SAME COLS ROW8 ROWM, CFIT_EINVALID, 2, 1, "within one host (all 2 ranks on node01)");
    bad_log(HEAD ROW8 "1048576 262144 float sum -1 120.0 8.74 8.74 3 121.0 8.67 8.67 0\n", CFIT_EINVALID, 6, 45,
            "3 wrong elements");
    bad_log(HEAD ROW8 ROWM "# Out of bounds values : 2 FAILED\n", CFIT_EINVALID, 7, 26, "2 out-of-bounds values");
    bad_log(PROG COLS ROW8 ROWM, CFIT_EPARSE, 3, 1, "no '#  Rank N");
    bad_log(PROG R0 R1 R1 COLS ROW8 ROWM, CFIT_EPARSE, 4, 1, "rank 1 is listed twice");
    bad_log("# Collective test starting: ./build/broadcast_perf\n" R0 R1 COLS ROW8 ROWM, CFIT_EINVALID, 5, 1,
            "broadcast_perf measures a collective the planner does not model");
    bad_log("# Collective test starting: bcast_perf\n" R0 R1 COLS ROW8 ROWM, CFIT_EINVALID, 5, 1,
            "unknown nccl-tests binary 'bcast_perf'");
    bad_log(R0 R1 COLS ROW8 ROWM, CFIT_EINVALID, 4, 1, "cannot tell all_reduce or sendrecv");
    bad_log(HEAD ROWM, CFIT_EINVALID, 5, 1, "gives no positive latency");
    bad_log(PROG "#  Rank  0 Group  0 Pid 4100\n" R1 COLS ROW8 ROWM, CFIT_EPARSE, 2, 4, "cannot read this Rank line");
    bad_log(PROG R0 R1 "#  size count type time\n" ROW8, CFIT_EPARSE, 4, 1, "no size, time or busbw");
    bad_log(HEAD ROW8 ROWM COLS ROW8, CFIT_EPARSE, 7, 1, "a second result table");
    /* without a column header the row shape decides: 11 to 13 fields */
    bad_log(PROG R0 R1 "8 2 float 20.6 0.00 0.00 0\n", CFIT_EPARSE, 4, 1, "a data row of 7 fields, and no column header");
}

static void test_fit(void **state)
{
    (void)state;
    cfit_calibration_point p[4] = {{8, 10e-6 + 8 / 20e9, 0}, {1e6, 10e-6 + 1e6 / 20e9, 0}, {1e8, 10e-6 + 1e8 / 20e9, 0},
                                   {0, 1e-6, 0}};
    double a, b, e;
    int rows;
    assert_int_equal(cfit_calibration_fit(p, 4, &a, &b, &e, &rows), 0);
    assert_int_equal(rows, 3);   /* the 0-byte point is left out */
    assert_true(fabs(a - 10e-6) < 1e-6 * 10e-6);
    assert_true(fabs(b - 20e9) < 1e3);
    assert_true(e < 1e-9);
    assert_int_equal(cfit_calibration_fit(p, 1, &a, &b, &e, &rows), -1);   /* one size */
    cfit_calibration_point q[2] = {{1e6, 1e-3, 0}, {2e6, 1.5e-3, 0}};   /* alpha 0.5 ms */
    assert_int_equal(cfit_calibration_fit(q, 2, &a, &b, &e, NULL), 0);
    assert_true(fabs(a - 0.5e-3) < 1e-6 * 0.5e-3);
    cfit_calibration_point r[2] = {{1e6, 2e-3, 0}, {2e6, 2.5e-3, 0}};
    r[0].time_s = 3e-3;   /* larger size faster: slope <= 0 */
    assert_int_equal(cfit_calibration_fit(r, 2, &a, &b, &e, NULL), -1);
}

/* A slower measured fabric lengthens the plan's data-parallel time; a faster one shortens it. */
static void test_plan_uses_it(void **state)
{
    (void)state;
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_catalog *cat = cfit_catalog_new(&d);
    assert_non_null(cat);
    const cfit_gpu *g = cfit_catalog_gpu(cat, "h100-sxm", &d);
    assert_non_null(g);
    cfit_plan_request r;
    cfit_plan_request_init(&r);
    r.catalog = cat;
    r.model = cfit_catalog_model(cat, "llama3-8b", &d);
    r.gpus = &g;
    r.ngpus = 1;
    r.tokens = 1e12;
    r.gpus_total = 64;
    cfit_layout l = {1, 1, 64, 1, 1, 1, 0, CFIT_RECOMPUTE_NONE, 0, 1, 1, 0, 0};
    cfit_plan base, slow, fast;
    assert_int_equal(cfit_plan_evaluate(&r, g, &l, &base, &d), CFIT_EOK);
    cfit_calibration c;
    memset(&c, 0, sizeof c);
    c.bw_bytes_per_s = 1e9;
    c.latency_s = 50e-6;
    r.calibration = &c;
    assert_int_equal(cfit_plan_evaluate(&r, g, &l, &slow, &d), CFIT_EOK);
    c.bw_bytes_per_s = 400e9;
    c.latency_s = 1e-6;
    assert_int_equal(cfit_plan_evaluate(&r, g, &l, &fast, &d), CFIT_EOK);
    assert_true(slow.br.dp_comm_s > base.br.dp_comm_s);
    assert_true(slow.step_time_s > base.step_time_s);
    assert_true(fast.br.dp_comm_s <= base.br.dp_comm_s);
    cfit_catalog_free(cat);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collective),
        cmocka_unit_test(test_steps),
        cmocka_unit_test(test_pairs),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_plan_uses_it),
        cmocka_unit_test(test_nccl_allreduce),
        cmocka_unit_test(test_nccl_old_format),
        cmocka_unit_test(test_nccl_allgather_alltoall),
        cmocka_unit_test(test_nccl_refusals),
        cmocka_unit_test(test_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
