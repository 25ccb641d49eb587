/* test_nccl_calibrate.c - the NCCL model's network terms solved from a measurement
 * (clusterfit/nccl_calibrate.h), on hand-built systems, and on catalog hardware for a calibration file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "clusterfit/catalog.h"
#include "clusterfit/nccl_calibrate.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static void assert_rel(double a, double b, double rel)
{
    if (!(fabs(a - b) <= rel * fabs(b))) {
        print_error("%.17g is not within %g relative of %.17g\n", a, rel, b);
        fail();
    }
}

/* nodes x g Hopper NVLink GPUs, `nics` InfiniBand NICs per node of nic_bw each, non-blocking. */
static cfit_nccl_system cluster(int nodes, int g, int nics, double nic_bw)
{
    cfit_nccl_system s;
    memset(&s, 0, sizeof s);
    s.nodes = nodes, s.gpus_per_node = g;
    s.arch = CFIT_ARCH_HOPPER;
    s.intra = CFIT_FAMILY_NVLINK;
    s.intra_bw = 360e9;
    s.nics = nics, s.nic_bw = nic_bw;
    s.net = CFIT_FAMILY_IB;
    s.net_slowdown = 1;
    return s;
}

static cfit_nccl_estimate tuned(const cfit_nccl_system *s, cfit_collective c, double bytes)
{
    cfit_nccl_estimate e;
    cfit_diag d;
    cfit_diag_clear(&d);
    assert_int_equal(cfit_nccl_best(s, c, CFIT_NCCL_ALL_ALGOS, CFIT_NCCL_ALL_PROTOS, bytes, &e, &d), CFIT_EOK);
    return e;
}

/* What the model itself predicts for a "true" system is solved back to that system's terms. */
static void round_trip(void **state)
{
    (void)state;
    cfit_nccl_system truth = cluster(2, 8, 8, 5e9);
    truth.net_extra_latency_s = 4e-6;
    cfit_nccl_measured m = {CFIT_COLL_ALLREDUCE, GIB, tuned(&truth, CFIT_COLL_ALLREDUCE, GIB).busbw_bytes_per_s, 0,
                            tuned(&truth, CFIT_COLL_ALLREDUCE, 0).time_s};
    cfit_nccl_system start = cluster(2, 8, 8, 47e9);
    cfit_nccl_network_fit f;
    cfit_diag d;
    cfit_diag_clear(&d);
    assert_int_equal(cfit_nccl_fit_network(&start, &m, &f, &d), CFIT_EOK);
    assert_rel(f.nic_bw, 5e9, 1e-6);
    assert_rel(f.net_extra_latency_s, 4e-6, 1e-6);
    assert_int_equal(f.latency_floor, 0);
    assert_rel(f.model_busbw_bytes_per_s, m.busbw_bytes_per_s, 1e-9);
    assert_rel(f.model_lat_time_s, m.lat_time_s, 1e-9);
}

/* One GPU per node, an unknown GPU generation (no LL128, no PAT): all-gather runs NCCL's ring, and
 * at a size where the latency is negligible busbw = NICs x nic_bw (docs/sim.md "Calibration"). */
static void ring_closed_form(void **state)
{
    (void)state;
    cfit_nccl_system s = cluster(4, 1, 2, 47e9);
    s.arch = CFIT_ARCH_OTHER;
    double size = 1e6 * GIB;
    cfit_nccl_measured m = {CFIT_COLL_ALLGATHER, size, 30e9, 0, 60e-6};
    cfit_nccl_network_fit f;
    cfit_diag d;
    cfit_diag_clear(&d);
    assert_int_equal(cfit_nccl_fit_network(&s, &m, &f, &d), CFIT_EOK);
    assert_rel(f.nic_bw, 30e9 / 2, 1e-6);
    cfit_nccl_apply_network(&s, &f);
    cfit_nccl_estimate e = tuned(&s, CFIT_COLL_ALLGATHER, size);
    assert_int_equal(e.algo, CFIT_NCCL_RING);
    assert_int_equal(e.proto, CFIT_NCCL_SIMPLE);
}

/* A time below what NCCL's own constants give keeps the extra latency at 0 and says so. */
static void latency_floor(void **state)
{
    (void)state;
    cfit_nccl_system s = cluster(2, 8, 8, 47e9);
    cfit_nccl_measured m = {CFIT_COLL_ALLREDUCE, GIB, 100e9, 0, 1e-6};
    cfit_nccl_network_fit f;
    cfit_diag d;
    cfit_diag_clear(&d);
    assert_int_equal(cfit_nccl_fit_network(&s, &m, &f, &d), CFIT_EOK);
    assert_int_equal(f.latency_floor, 1);
    assert_true(f.net_extra_latency_s == 0);
}

/* A busbw the node cannot carry with any network, a run on one node, a bad measurement. */
static void refusals(void **state)
{
    (void)state;
    cfit_nccl_system s = cluster(2, 8, 8, 47e9);
    cfit_nccl_network_fit f;
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_nccl_measured fast = {CFIT_COLL_ALLREDUCE, GIB, 5e12, 0, 30e-6};
    assert_int_equal(cfit_nccl_fit_network(&s, &fast, &f, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "the node, not the network"));
    cfit_nccl_system one = cluster(1, 8, 0, 0);
    cfit_nccl_measured ok = {CFIT_COLL_ALLREDUCE, GIB, 40e9, 0, 30e-6};
    assert_int_equal(cfit_nccl_fit_network(&one, &ok, &f, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "one node"));
    cfit_nccl_measured bad = {CFIT_COLL_ALLREDUCE, GIB, 40e9, 0, 0};
    assert_int_equal(cfit_nccl_fit_network(&s, &bad, &f, &d), CFIT_EINVALID);
    cfit_nccl_measured tiny = {CFIT_COLL_ALLREDUCE, 8, 1e3, 0, 30e-6};   /* 8 B measures latency only */
    assert_int_equal(cfit_nccl_fit_network(&s, &tiny, &f, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "latency, not bandwidth"));
}

/* cfit_nccl_fit_calibration: a calibration file's run on catalog hardware (2 hosts x 8 H100 on
 * their node type's NICs) solved as cfit_nccl_fit_network solves it; its step latency is 5 us +
 * the extra; a pairs file, uneven ranks and more ranks per host than the node has are refused. */
static void fit_from_calibration(void **state)
{
    (void)state;
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_catalog *cat = cfit_catalog_new(&d);
    assert_non_null(cat);
    const cfit_gpu *g = cfit_catalog_gpu(cat, "h100-sxm", &d);
    const cfit_node *node = cfit_catalog_node(cat, g->default_node, &d);
    const cfit_fabric *up = cfit_catalog_fabric(cat, g->scaleup_fabric, &d), *net = cfit_catalog_fabric(cat, node->fabric, &d);
    assert_non_null(node);
    assert_non_null(up);
    assert_non_null(net);
    cfit_nccl_system truth;
    assert_int_equal(cfit_nccl_system_from_catalog(g, up, node, net, 2, 8, 0, &truth, &d), CFIT_EOK);
    truth.nic_bw = 5e9, truth.net_extra_latency_s = 3e-6;
    cfit_calibration cal;
    memset(&cal, 0, sizeof cal);
    strcpy(cal.benchmark, "allreduce");
    strcpy(cal.source, "nccl-tests");
    cal.ranks = 16, cal.hosts = 2, cal.bw_size_bytes = GIB, cal.lat_size_bytes = 0;
    cal.bw_bytes_per_s = tuned(&truth, CFIT_COLL_ALLREDUCE, GIB).busbw_bytes_per_s;
    cal.fit_alpha_s = tuned(&truth, CFIT_COLL_ALLREDUCE, 0).time_s;
    cfit_nccl_system run;
    cfit_nccl_network_fit f;
    assert_int_equal(cfit_nccl_fit_calibration(&cal, g, up, node, net, 0, -1, &run, &f, &d), CFIT_EOK);
    assert_rel(f.nic_bw, 5e9, 1e-6);
    assert_rel(run.nic_bw, 5e9, 1e-6);
    assert_rel(cfit_nccl_fit_step_latency_s(&f), 5e-6 + 3e-6, 1e-6);
    assert_int_equal(run.nodes, 2);
    assert_int_equal(run.gpus_per_node, 8);
    assert_int_equal(run.gpus_per_process, 0);
    /* a log of one process per host driving its 8 GPUs (nGpus 8): modelled so, its small sizes
     * bound by 8 launches, here slower than the run's whole fixed time: no latency is added */
    cfit_calibration one = cal;
    one.gpus_per_process = 8;
    assert_int_equal(cfit_nccl_fit_calibration(&one, g, up, node, net, 0, -1, &run, &f, &d), CFIT_EOK);
    assert_int_equal(run.gpus_per_process, 8);
    assert_rel(f.nic_bw, 5e9, 1e-2);   /* the largest size's busbw still sets it; no latency to trade */
    assert_true(cal.fit_alpha_s < 8 * 4.47e-6);
    assert_int_equal(f.latency_floor, 1);

    cfit_calibration bad = cal;
    strcpy(bad.benchmark, "pairs");
    assert_int_equal(cfit_nccl_fit_calibration(&bad, g, up, node, net, 0, -1, &run, &f, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "pairs"));
    bad = cal, bad.ranks = 15;
    assert_int_equal(cfit_nccl_fit_calibration(&bad, g, up, node, net, 0, -1, &run, &f, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "same count"));
    bad = cal, bad.ranks = 32;
    assert_int_equal(cfit_nccl_fit_calibration(&bad, g, up, node, net, 0, -1, &run, &f, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "ranks per host"));
    cfit_catalog_free(cat);
}

/* SHARP keeps the catalog's SHARP / plain ratio; a system without SHARP gets none. */
static void apply_sharp(void **state)
{
    (void)state;
    cfit_nccl_system s = cluster(2, 8, 8, 40e9);
    s.sharp_bw = 20e9;
    cfit_nccl_measured m = {CFIT_COLL_ALLREDUCE, GIB, 60e9, 0, 40e-6};
    cfit_nccl_network_fit f;
    cfit_diag d;
    cfit_diag_clear(&d);
    assert_int_equal(cfit_nccl_fit_network(&s, &m, &f, &d), CFIT_EOK);
    assert_rel(f.sharp_bw, f.nic_bw / 2, 1e-12);
    cfit_nccl_system big = cluster(4, 8, 8, 40e9), plain = cluster(4, 8, 8, 40e9);
    big.sharp_bw = 20e9;
    cfit_nccl_apply_network(&big, &f);
    cfit_nccl_apply_network(&plain, &f);
    assert_rel(big.sharp_bw, f.sharp_bw, 1e-12);
    assert_true(plain.sharp_bw == 0);
    assert_rel(plain.nic_bw, f.nic_bw, 1e-12);
    assert_true(plain.net_extra_latency_s == f.net_extra_latency_s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(ring_closed_form),
        cmocka_unit_test(latency_floor),
        cmocka_unit_test(refusals),
        cmocka_unit_test(apply_sharp),
        cmocka_unit_test(fit_from_calibration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
