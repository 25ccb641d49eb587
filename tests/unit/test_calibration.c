/* test_calibration.c - reading bench --json files into fabric numbers (src/core/calibration.c) and
 * their effect on the planner's data-parallel time. */
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

static int parse(const char *s, cfit_calibration *c, cfit_diag *d)
{
    size_t n = strlen(s);
    char *copy = malloc(n ? n : 1);   /* no NUL after the text: ASan sees over-reads */
    assert_non_null(copy);
    memcpy(copy, s, n);
    cfit_diag_clear(d);
    int rc = cfit_calibration_parse(copy, n, "cal.json", c, d);
    free(copy);
    return rc;
}

/* s is refused with err at line:col, the message containing needle. */
static void bad(const char *s, int err, int line, int col, const char *needle)
{
    cfit_calibration c;
    cfit_diag d;
    int rc = parse(s, &c, &d);
    if (rc != err || d.line != line || d.col != col || !strstr(d.msg, needle))
        fail_msg("got %d at %d:%d '%s', want %d at %d:%d with '%s'", rc, d.line, d.col, d.msg, err, line, col,
                 needle);
    assert_string_equal(d.file, "cal.json");
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
    cfit_layout l = {1, 1, 64, 1, 1, 1, 0, CFIT_RECOMPUTE_NONE, 0};
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
