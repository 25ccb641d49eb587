/* test_nccl.c - NCCL's cost model and tuner (clusterfit/nccl.h) on hand-built systems, against
 * values worked out by hand from the formulas in src/sim/nccl.c (no catalog). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "clusterfit/nccl.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define INTRA_BW 360e9   /* per GPU per direction, achievable */
#define NIC_BW 40e9      /* per NIC per direction, achievable */

/* |a - b| <= rel * |b| */
static void assert_rel(double a, double b, double rel)
{
    if (!(fabs(a - b) <= rel * fabs(b))) {
        print_error("%.17g is not within %g relative of %.17g\n", a, rel, b);
        fail();
    }
}

/* One Hopper node of g NVLink GPUs, no NVLS, no network. */
static cfit_nccl_system nvlink_node(int g)
{
    cfit_nccl_system s;
    memset(&s, 0, sizeof s);
    s.nodes = 1, s.gpus_per_node = g;
    s.arch = CFIT_ARCH_HOPPER;
    s.intra = CFIT_FAMILY_NVLINK;
    s.intra_bw = INTRA_BW;
    s.net_slowdown = 1;
    return s;
}

/* nodes x g NVLink GPUs with `nics` InfiniBand NICs per node of nic_bw each, non-blocking. */
static cfit_nccl_system cluster(int nodes, int g, int nics, double nic_bw)
{
    cfit_nccl_system s = nvlink_node(g);
    s.nodes = nodes;
    s.nics = nics, s.nic_bw = nic_bw;
    s.net = CFIT_FAMILY_IB;
    return s;
}

static int is_supported(const cfit_nccl_system *s, cfit_collective c, cfit_nccl_algo a, cfit_nccl_proto p,
                        cfit_diag *d)
{
    cfit_diag_clear(d);
    return cfit_nccl_supported(s, c, a, p, d);
}

/* Ring all-reduce, 1 node x 8 NVLink GPUs, LL at 8 bytes: latency = ring LL base (6.6 us) + 2(n-1)
 * NVLink LL hops of 0.6 us, no network steps; the bandwidth term is 8 B x 1.75 / (intra x 0.5) or
 * the Hopper one-node LL ceiling (141 GB/s of busbw), whichever is slower. */
static void ring_ll_latency_one_node(void **state)
{
    (void)state;
    cfit_nccl_system s = nvlink_node(8);
    cfit_nccl_estimate e;
    cfit_diag d;
    cfit_diag_clear(&d);
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_LL, 8, &e, &d), CFIT_EOK);
    assert_int_equal(e.algo, CFIT_NCCL_RING);
    assert_int_equal(e.proto, CFIT_NCCL_LL);
    assert_true(e.latency_s == (6.6 + 2 * (8 - 1) * 0.6) * 1e-6);
    double spb = 1.75 / (INTRA_BW * 0.5);             /* 9.72e-12 s/B */
    double cap = 1.75 / 141e9;                        /* 1.24e-11 s/B: the ceiling binds */
    assert_true(cap > spb);
    /* 8 bytes run on one of the 16 channels (enqueue.cc): the bandwidth term is 16 x the full one */
    assert_rel(e.time_s, 15e-6 + 8 * cap * 16, 1e-9);
    assert_rel(e.tuner_time_s, 15e-6 + 8 * cap, 1e-9);
    assert_rel(e.algbw_bytes_per_s, 8 / e.time_s, 1e-12);
    assert_rel(e.busbw_bytes_per_s, e.algbw_bytes_per_s * 1.75, 1e-12);
    assert_int_equal(e.net_bound, 0);
}

/* NCCL's channel rule for ring LL on 8 ranks: a channel per 512 threads x 8 B x 8 ranks = 32 KiB,
 * so 64 KiB runs on 2 of 16 channels (8 x the full bandwidth term), 256 KiB on 8 (2 x) and 512 KiB
 * and up on all 16; Simple needs 512 x 64 B = 32 KiB a channel, whatever the ranks. */
static void fewer_channels_for_small_messages(void **state)
{
    (void)state;
    cfit_nccl_system s = nvlink_node(8);
    static const struct {
        cfit_nccl_proto p;
        double bytes, slowdown;
    } cases[] = {
        {CFIT_NCCL_LL, 65536, 8}, {CFIT_NCCL_LL, 262144, 2}, {CFIT_NCCL_LL, 524288, 1},
        {CFIT_NCCL_LL, 1 << 24, 1}, {CFIT_NCCL_SIMPLE, 65536, 8}, {CFIT_NCCL_SIMPLE, 1 << 20, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cfit_nccl_estimate e;
        assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, cases[i].p, cases[i].bytes, &e, NULL),
                         CFIT_EOK);
        double full_bw_s = e.tuner_time_s - e.latency_s;
        assert_true(full_bw_s > 0);
        assert_rel(e.time_s - e.latency_s - e.fill_s, full_bw_s * cases[i].slowdown, 1e-9);
    }
}

/* Ring Simple at 16 GiB: the 56 us latency vanishes and busbw -> the GPU's port on one node, and
 * -> min(port, nics x nic_bw) across 4 nodes of 8 (network-bound with 8 x 40 GB/s < 360 GB/s,
 * node-bound with 8 x 50 GB/s > 360 GB/s). */
static void ring_simple_busbw_limits(void **state)
{
    (void)state;
    cfit_nccl_estimate e;
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_nccl_system one = nvlink_node(8);
    assert_int_equal(cfit_nccl_time(&one, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_SIMPLE, 16 * GIB, &e, &d),
                     CFIT_EOK);
    assert_rel(e.latency_s, (8.4 + 14 * 3.4) * 1e-6, 1e-9);
    assert_rel(e.busbw_bytes_per_s, INTRA_BW, 0.01);
    assert_true(e.busbw_bytes_per_s < INTRA_BW);
    assert_int_equal(e.net_bound, 0);

    cfit_nccl_system net = cluster(4, 8, 8, NIC_BW);
    assert_int_equal(cfit_nccl_time(&net, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_SIMPLE, 16 * GIB, &e, &d),
                     CFIT_EOK);
    assert_rel(e.busbw_bytes_per_s, 8 * NIC_BW, 0.01);
    assert_int_equal(e.net_bound, 1);

    cfit_nccl_system fat = cluster(4, 8, 8, 50e9);
    assert_int_equal(cfit_nccl_time(&fat, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_SIMPLE, 16 * GIB, &e, &d),
                     CFIT_EOK);
    assert_rel(e.busbw_bytes_per_s, INTRA_BW, 0.01);
    assert_int_equal(e.net_bound, 0);
}

/* Without peer-to-peer a PCIe GPU moves 3.9 GB/s through host memory (NVIDIA/nccl#384's SHM
 * all-reduce), the host's bound: the same on PCIe 3.0, 4.0 and 5.0 ports, the link's own rate where
 * that is lower, and a P2P-capable port keeps its full rate. */
static void host_path_rate(void **state)
{
    (void)state;
    cfit_nccl_estimate e;
    cfit_diag d;
    cfit_diag_clear(&d);
    double bus[3], ports[3] = {12.8e9, 25.6e9, 51.2e9};
    for (int i = 0; i < 3; i++) {
        cfit_nccl_system s = nvlink_node(2);
        s.intra = CFIT_FAMILY_PCIE, s.intra_bw = ports[i], s.p2p_off = 1;
        assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_SIMPLE, 16 * GIB, &e, &d),
                         CFIT_EOK);
        bus[i] = e.busbw_bytes_per_s;
    }
    assert_rel(bus[0], 3.9e9, 0.01);
    assert_true(bus[0] < 3.9e9);
    assert_rel(bus[1], bus[0], 1e-12);
    assert_rel(bus[2], bus[0], 1e-12);

    cfit_nccl_system p2p = nvlink_node(2);
    p2p.intra = CFIT_FAMILY_PCIE, p2p.intra_bw = 25.6e9;
    assert_int_equal(cfit_nccl_time(&p2p, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_SIMPLE, 16 * GIB, &e, &d),
                     CFIT_EOK);
    assert_rel(e.busbw_bytes_per_s, 25.6e9, 0.01);

    cfit_nccl_system slow = p2p;   /* a x4 link below the host's rate keeps the link's */
    slow.intra_bw = 2e9, slow.p2p_off = 1;
    assert_int_equal(cfit_nccl_time(&slow, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_SIMPLE, 16 * GIB, &e, &d),
                     CFIT_EOK);
    assert_rel(e.busbw_bytes_per_s, 2e9, 0.01);
}

/* net_slowdown 2 doubles the network-bound bandwidth term (same latency) and so halves the busbw
 * of a large message. */
static void net_slowdown_halves_busbw(void **state)
{
    (void)state;
    cfit_nccl_estimate e1, e2;
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_nccl_system s = cluster(4, 8, 8, NIC_BW);
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_SIMPLE, 16 * GIB, &e1, &d),
                     CFIT_EOK);
    s.net_slowdown = 2;
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_SIMPLE, 16 * GIB, &e2, &d),
                     CFIT_EOK);
    assert_int_equal(e1.net_bound, 1);
    assert_int_equal(e2.net_bound, 1);
    assert_true(e1.latency_s == e2.latency_s);
    assert_rel(e2.time_s - e2.latency_s, 2 * (e1.time_s - e1.latency_s), 1e-9);
    assert_rel(e2.busbw_bytes_per_s, e1.busbw_bytes_per_s / 2, 0.01);
    /* below 1 is refused */
    s.net_slowdown = 0.5;
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_SIMPLE, GIB, &e2, &d),
                     CFIT_EINVALID);
}

/* Tree all-reduce, network-bound (4 x 40 GB/s per node < 360 / 2): a double binary tree moves S per
 * node with 2 nodes and 2S with more, so the bandwidth term (time - latency) on 2 nodes is half
 * that on 4 nodes, = 1 GiB / (4 x 40 GB/s x 0.92); at 1 GiB no tree correction factor applies. */
static void tree_two_nodes_half_bytes(void **state)
{
    (void)state;
    cfit_nccl_estimate e2, e4;
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_nccl_system s2 = cluster(2, 8, 4, NIC_BW), s4 = cluster(4, 8, 4, NIC_BW);
    assert_int_equal(cfit_nccl_time(&s2, CFIT_COLL_ALLREDUCE, CFIT_NCCL_TREE, CFIT_NCCL_SIMPLE, GIB, &e2, &d), CFIT_EOK);
    assert_int_equal(cfit_nccl_time(&s4, CFIT_COLL_ALLREDUCE, CFIT_NCCL_TREE, CFIT_NCCL_SIMPLE, GIB, &e4, &d), CFIT_EOK);
    assert_int_equal(e2.net_bound, 1);
    assert_int_equal(e4.net_bound, 1);
    assert_rel(e4.time_s - e4.latency_s - e4.fill_s, 2 * (e2.time_s - e2.latency_s - e2.fill_s), 1e-9);
    assert_rel(e2.time_s - e2.latency_s - e2.fill_s, GIB / (4 * NIC_BW * 0.92), 1e-9);
    /* latency: tree Simple base 8.4 + 2 ((g-1) x 4.0 NVLink + log2(nodes) x 14 network) us */
    assert_rel(e2.latency_s, (8.4 + 2 * (7 * 4.0 + 1 * 14.0)) * 1e-6, 1e-9);
    assert_rel(e4.latency_s, (8.4 + 2 * (7 * 4.0 + 2 * 14.0)) * 1e-6, 1e-9);
}

/* NVLSTree crosses nodes on its heads' NICs only: a 72-GPU NVLink domain with a NIC per GPU has
 * at most 32 heads (NCCL_MAX_NVLS_ARITY), so its network term is 2S / (32 x nic) on 3+ nodes,
 * whatever the NICs beyond 32; with 8 GPUs and 4 NICs per GPU every head keeps its 4 NICs. */
static void nvlstree_uses_heads_nics(void **state)
{
    (void)state;
    cfit_nccl_estimate e72, e32;
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_nccl_system s72 = cluster(4, 72, 72, 5e9), s32 = cluster(4, 72, 32, 5e9);
    s72.nvls_bw = s32.nvls_bw = 400e9;
    assert_int_equal(cfit_nccl_time(&s72, CFIT_COLL_ALLREDUCE, CFIT_NCCL_NVLS_TREE, CFIT_NCCL_SIMPLE, GIB, &e72, &d),
                     CFIT_EOK);
    assert_int_equal(cfit_nccl_time(&s32, CFIT_COLL_ALLREDUCE, CFIT_NCCL_NVLS_TREE, CFIT_NCCL_SIMPLE, GIB, &e32, &d),
                     CFIT_EOK);
    assert_int_equal(e72.net_bound, 1);
    assert_rel(e72.time_s - e72.latency_s - e72.fill_s, 2 * GIB / (32 * 5e9), 1e-9);
    assert_rel(e72.time_s, e32.time_s, 1e-12);
    cfit_nccl_system f = cluster(4, 8, 32, 5e9);   /* 4 NICs per GPU: all 32 carry the tree */
    f.nvls_bw = 400e9;
    assert_int_equal(cfit_nccl_time(&f, CFIT_COLL_ALLREDUCE, CFIT_NCCL_NVLS_TREE, CFIT_NCCL_SIMPLE, GIB, &e32, &d),
                     CFIT_EOK);
    assert_rel(e32.time_s - e32.latency_s - e32.fill_s, 2 * GIB / (32 * 5e9), 1e-9);
}

/* Pipeline fill: NVLS on one node runs 4 stages, so it finishes 3 chunk waves (channels x heads x
 * chunk) after its bandwidth term; 8 Hopper GPUs run 16 channels x 8 heads, chunks 128 KiB from
 * 1 GiB, 64 KiB from 64 MiB, 32 KiB from 8 MiB, 16 KiB below, and never more than the message. */
static void pipeline_fill(void **state)
{
    (void)state;
    cfit_diag d;
    cfit_nccl_system s = nvlink_node(8);
    s.arch = CFIT_ARCH_HOPPER;
    s.nvls_bw = 274e9;
    const double size[] = {GIB, 256.0 * 1024 * 1024, 32.0 * 1024 * 1024, 4.0 * 1024 * 1024, 65536};
    const double chunk[] = {131072, 65536, 32768, 16384, 65536.0 / 128};
    double prev = 1e30;
    for (int i = 0; i < 5; i++) {
        cfit_nccl_estimate e;
        assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_NVLS, CFIT_NCCL_SIMPLE, size[i], &e, &d),
                         CFIT_EOK);
        assert_rel(e.fill_s, 3 * chunk[i] * 128 / 274e9, 1e-9);
        assert_rel(e.time_s, e.latency_s + size[i] / 274e9 + e.fill_s, 1e-9);
        assert_true(e.busbw_bytes_per_s < prev);   /* smaller messages, lower rate */
        prev = e.busbw_bytes_per_s;
    }
    /* tree across 2 nodes of 8: 2 (8 - 1) = 14 GPU hops at the port's rate (2S per port: the bound) and
     * 2 x 2 x 1 = 4 network stages at the NICs' (S over 8 NICs), Simple chunks of 512 KiB on 16
     * channels; the fill is every stage's chunk time but the slowest one */
    cfit_nccl_system m = cluster(2, 8, 8, NIC_BW);
    cfit_nccl_estimate t;
    assert_int_equal(cfit_nccl_time(&m, CFIT_COLL_ALLREDUCE, CFIT_NCCL_TREE, CFIT_NCCL_SIMPLE, GIB, &t, &d), CFIT_EOK);
    double spb = (t.time_s - t.latency_s - t.fill_s) / GIB, net_share = (1 / (8 * NIC_BW)) / (2 / INTRA_BW);
    assert_true(net_share < 1);
    assert_rel(t.fill_s, (14 + 4 * net_share - 1) * 524288.0 * 16 * spb, 1e-9);
    /* LL: a GPU hop forwards one trip of the kernel's loop (512 threads x 8 B), the network a 32 KiB
     * step, which is then the slowest stage */
    double S = 64.0 * 1024 * 1024;
    assert_int_equal(cfit_nccl_time(&m, CFIT_COLL_ALLREDUCE, CFIT_NCCL_TREE, CFIT_NCCL_LL, S, &t, &d), CFIT_EOK);
    spb = (t.time_s - t.latency_s - t.fill_s) / S;
    assert_true(32768 * net_share > 4096);
    assert_rel(t.fill_s, (14 * 4096.0 + 3 * net_share * 32768) * 16 * spb, 1e-9);
    /* ring has none */
    cfit_nccl_estimate r;
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_SIMPLE, GIB, &r, &d), CFIT_EOK);
    assert_true(r.fill_s == 0);
}

/* The tuner picks by NCCL's own cost (latency + bandwidth, no fill), as NCCL's does: on 8 GPUs at
 * 32 MiB NVLS has the least such cost, so it runs even where its fill makes another pair faster. */
static void tuner_ignores_fill(void **state)
{
    (void)state;
    cfit_diag d;
    cfit_nccl_system s = nvlink_node(8);
    s.arch = CFIT_ARCH_HOPPER;
    s.nvls_bw = 274e9;
    cfit_nccl_estimate best;
    double S = 32.0 * 1024 * 1024;
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_ALL_ALGOS, CFIT_NCCL_ALL_PROTOS, S, &best, &d),
                     CFIT_EOK);
    for (int a = 0; a < CFIT_NCCL_ALGO_COUNT; a++)
        for (int p = 0; p < CFIT_NCCL_PROTO_COUNT; p++) {
            cfit_nccl_estimate e;
            if (cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, (cfit_nccl_algo)a, (cfit_nccl_proto)p, S, &e, NULL) == CFIT_EOK)
                assert_true(best.time_s - best.fill_s <= e.time_s - e.fill_s);
        }
}

/* A slower NVLink fabric's extra latency lands on every GPU hop the run takes (ring LL on 8 GPUs: 14
 * hops), but not in what NCCL's tuner costs the pair at, which keeps NCCL's own constants. */
static void intra_extra_latency_per_hop(void **state)
{
    (void)state;
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_nccl_estimate base, slow;
    cfit_nccl_system s = nvlink_node(8);
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_LL, 1024, &base, &d), CFIT_EOK);
    s.intra_extra_latency_s = 0.88e-6;
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_LL, 1024, &slow, &d), CFIT_EOK);
    assert_rel(slow.latency_s - base.latency_s, 14 * 0.88e-6, 1e-9);
    assert_rel(slow.tuner_time_s, base.tuner_time_s, 1e-12);
    assert_true(slow.time_s > base.time_s);
    /* tree: 2 (g - 1) GPU hops on one node */
    s.intra_extra_latency_s = 0;
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_TREE, CFIT_NCCL_LL, 1024, &base, &d), CFIT_EOK);
    s.intra_extra_latency_s = 1e-6;
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_TREE, CFIT_NCCL_LL, 1024, &slow, &d), CFIT_EOK);
    assert_rel(slow.latency_s - base.latency_s, 14 * 1e-6, 1e-9);
}

/* An LL128 ring across nodes pays the network hop (4 us) on each of its steps: 2 x 8 GPUs, all-reduce,
 * 30 steps -> 14 + 30 x 4 = 134 us, where NCCL's tuner sums 28 steps at NVLink's 1.9 us and the
 * 2 network steps at 4 us: 14 + 53.2 + 8 = 75.2 us. LL and Simple keep NCCL's sum, and one node has no
 * network step. */
static void ll128_ring_pays_network_hop_every_step(void **state)
{
    (void)state;
    cfit_nccl_system s = cluster(2, 8, 8, NIC_BW);
    cfit_nccl_estimate e;
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_LL128, 1 << 20, &e, NULL),
                     CFIT_EOK);
    assert_rel(e.latency_s, 134e-6, 1e-9);
    /* the same bandwidth term (1 MiB runs on all 16 channels), the tuner's latency NCCL's sum */
    assert_rel(e.tuner_time_s - 75.2e-6, e.time_s - e.latency_s - e.fill_s, 1e-9);
    /* all-gather: 15 steps */
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLGATHER, CFIT_NCCL_RING, CFIT_NCCL_LL128, 1 << 20, &e, NULL),
                     CFIT_EOK);
    assert_rel(e.latency_s, (14 + 15 * 4.0) * 1e-6, 1e-9);
    /* LL: NCCL's sum, 28 steps at the 1 us network post overhead (above NVLink's 0.6) + 2 at 2.7 us */
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_LL, 1 << 16, &e, NULL), CFIT_EOK);
    assert_rel(e.latency_s, (6.6 + 28 * 1.0 + 2 * 2.7) * 1e-6, 1e-9);
    /* one node: 14 NVLink LL128 hops of 1.9 us */
    s = nvlink_node(8);
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_LL128, 1 << 20, &e, NULL),
                     CFIT_EOK);
    assert_rel(e.latency_s, (14 + 14 * 1.9) * 1e-6, 1e-9);
}

/* A send-recv inside a node runs on the channels NCCL gives one point-to-point operation, each moving
 * half of Hopper's 38.7 GB/s per-channel ceiling in each direction: on 8 ranks 4 channels up to
 * 16 MiB a part (77.4 GB/s at 64 MiB), 16 at 256 MiB (309.6), and from 1 GiB the GPU's port
 * (360 GB/s here); on 4 ranks 8 channels at 64 MiB. */
static void sendrecv_channels_in_a_node(void **state)
{
    (void)state;
    static const struct {
        int g;
        double bytes, bw;
    } cases[] = {{8, 64.0 * 1024 * 1024, 4 * 19.35e9}, {8, 256.0 * 1024 * 1024, 16 * 19.35e9},
                 {4, 64.0 * 1024 * 1024, 8 * 19.35e9}, {8, GIB, INTRA_BW}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cfit_nccl_system s = nvlink_node(cases[i].g);
        cfit_nccl_estimate e;
        assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_SENDRECV, CFIT_NCCL_P2P, CFIT_NCCL_SIMPLE, cases[i].bytes, &e, NULL),
                         CFIT_EOK);
        assert_rel(e.time_s - e.latency_s - e.fill_s, cases[i].bytes / cases[i].bw, 1e-9);
    }
}

/* NCCL's per-channel ceilings: a Hopper ring with LL128 carries at most 16 channels x 36.7 GB/s of busbw,
 * whatever its links (900 GB/s per GPU here, 828 after LL128's 0.92); a Blackwell tree all-reduce
 * with LL128 on 3+ nodes 16 x 20 GB/s, in nccl-tests busbw x (n - 1) / n (MI250X, RCCL: none). */
static void per_channel_ceilings(void **state)
{
    (void)state;
    cfit_nccl_system s = nvlink_node(8);
    s.intra_bw = 900e9;
    cfit_nccl_estimate e;
    double S = 64.0 * 1024 * 1024;
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_LL128, S, &e, NULL), CFIT_EOK);
    assert_rel(e.time_s - e.latency_s - e.fill_s, S * 1.75 / (16 * 36.7e9), 1e-9);
    s = cluster(4, 8, 8, 100e9);
    s.arch = CFIT_ARCH_BLACKWELL;
    s.intra_bw = 900e9;
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_TREE, CFIT_NCCL_LL128, S, &e, NULL), CFIT_EOK);
    /* nccl-tests busbw 2 (n - 1) / n x S / t capped at 16 x 20 GB/s x (n - 1) / n: t = 2 S / 320 GB/s */
    assert_rel(e.time_s - e.latency_s - e.fill_s, 2 * S / (16 * 20e9), 1e-9);
    cfit_nccl_estimate un;
    s.arch = CFIT_ARCH_CDNA2;   /* RCCL keeps its own tables: no NCCL ceiling */
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_TREE, CFIT_NCCL_LL128, S, &un, NULL), CFIT_EOK);
    assert_true(un.time_s - un.latency_s - un.fill_s < 2 * S / (16 * 20e9));
}

/* NCCL's rules for which algorithm x protocol runs where. */
static void support_rules(void **state)
{
    (void)state;
    cfit_diag d;
    cfit_nccl_estimate e;
    cfit_nccl_system s = nvlink_node(8);

    /* nvls without NVLink SHARP: refused, the message says why */
    assert_int_equal(is_supported(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_NVLS, CFIT_NCCL_SIMPLE, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "NVLink SHARP"));
    cfit_diag_clear(&d);
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_NVLS, CFIT_NCCL_SIMPLE, GIB, &e, &d),
                     CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "NVLink SHARP"));
    /* with it, on one node: accepted (Simple only); 1 GiB / nvls_bw + 25 us, + the pipeline fill */
    s.nvls_bw = 400e9;
    assert_int_equal(is_supported(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_NVLS, CFIT_NCCL_SIMPLE, &d), CFIT_EOK);
    assert_int_equal(is_supported(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_NVLS, CFIT_NCCL_LL, &d), CFIT_EINVALID);
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_NVLS, CFIT_NCCL_SIMPLE, GIB, &e, &d), CFIT_EOK);
    assert_rel(e.time_s, 25e-6 + GIB / 400e9 + e.fill_s, 1e-9);
    /* nvlstree needs several nodes */
    assert_int_equal(is_supported(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_NVLS_TREE, CFIT_NCCL_SIMPLE, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "nodes"));
    cfit_nccl_system m = cluster(2, 8, 8, NIC_BW);
    m.nvls_bw = 400e9;
    assert_int_equal(is_supported(&m, CFIT_COLL_ALLREDUCE, CFIT_NCCL_NVLS_TREE, CFIT_NCCL_SIMPLE, &d), CFIT_EOK);

    /* collnetdirect needs switch SHARP */
    assert_int_equal(is_supported(&m, CFIT_COLL_ALLREDUCE, CFIT_NCCL_COLLNET_DIRECT, CFIT_NCCL_SIMPLE, &d),
                     CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "SHARP"));
    m.sharp_bw = 30e9;
    assert_int_equal(is_supported(&m, CFIT_COLL_ALLREDUCE, CFIT_NCCL_COLLNET_DIRECT, CFIT_NCCL_SIMPLE, &d), CFIT_EOK);

    /* pat: all-gather with one GPU per node on several nodes only */
    cfit_nccl_system p8 = cluster(4, 8, 8, NIC_BW), p1 = cluster(4, 1, 1, NIC_BW);
    assert_int_equal(is_supported(&p8, CFIT_COLL_ALLGATHER, CFIT_NCCL_PAT, CFIT_NCCL_SIMPLE, &d), CFIT_EINVALID);
    assert_int_equal(is_supported(&p1, CFIT_COLL_ALLGATHER, CFIT_NCCL_PAT, CFIT_NCCL_SIMPLE, &d), CFIT_EOK);
    assert_int_equal(is_supported(&p1, CFIT_COLL_ALLREDUCE, CFIT_NCCL_PAT, CFIT_NCCL_SIMPLE, &d), CFIT_EINVALID);
    cfit_diag_clear(&d);
    assert_int_equal(cfit_nccl_time(&p1, CFIT_COLL_ALLGATHER, CFIT_NCCL_PAT, CFIT_NCCL_SIMPLE, GIB, &e, &d), CFIT_EOK);
    /* 8 + log2(4) x (14 / 3.5) + 4 x 2.8 us; (n-1)/n of S over one 40 GB/s NIC at 0.75 */
    assert_rel(e.latency_s, (8.0 + 2 * 4.0 + 4 * 2.8) * 1e-6, 1e-9);
    assert_rel(e.time_s - e.latency_s, 0.75 * GIB / NIC_BW / 0.75, 1e-9);

    /* p2p is the only algorithm for alltoall and sendrecv, and for nothing else */
    for (int c = CFIT_COLL_ALLTOALL; c <= CFIT_COLL_SENDRECV; c++)
        for (int a = 0; a < CFIT_NCCL_ALGO_COUNT; a++) {
            int rc = is_supported(&m, (cfit_collective)c, (cfit_nccl_algo)a, CFIT_NCCL_SIMPLE, &d);
            assert_int_equal(rc, a == CFIT_NCCL_P2P ? CFIT_EOK : CFIT_EINVALID);
        }
    assert_int_equal(is_supported(&m, CFIT_COLL_ALLREDUCE, CFIT_NCCL_P2P, CFIT_NCCL_SIMPLE, &d), CFIT_EINVALID);
    assert_int_equal(is_supported(&m, CFIT_COLL_ALLGATHER, CFIT_NCCL_P2P, CFIT_NCCL_SIMPLE, &d), CFIT_EINVALID);
    cfit_diag_clear(&d);
    assert_int_equal(cfit_nccl_best(&m, CFIT_COLL_ALLTOALL, CFIT_NCCL_ALL_ALGOS, CFIT_NCCL_ALL_PROTOS, GIB, &e, &d),
                     CFIT_EOK);
    assert_int_equal(e.algo, CFIT_NCCL_P2P);

    /* ll128 needs NVLink-class links between the node's GPUs */
    cfit_nccl_system pcie = nvlink_node(4);
    pcie.intra = CFIT_FAMILY_PCIE;
    pcie.intra_bw = 25e9;
    assert_int_equal(is_supported(&pcie, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_LL128, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "ll128"));
    assert_int_equal(is_supported(&pcie, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_LL, &d), CFIT_EOK);
    assert_int_equal(is_supported(&pcie, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_SIMPLE, &d), CFIT_EOK);
    s.intra = CFIT_FAMILY_XGMI;   /* xgmi is NVLink class */
    assert_int_equal(is_supported(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_LL128, &d), CFIT_EOK);
}

/* The tuner: LL at 8 bytes, ring Simple at 1 GiB on an NVLink node (ring LL 15.0 us < tree LL
 * 15.2 us; ring Simple 56 us + 1 GiB x 1.75 / 360 GB/s beats LL128 and tree); NVLS at 1 GiB once
 * nvls_bw exceeds 360 / 1.75 GB/s; no supported pair -> CFIT_EINVALID naming what runs. */
static void tuner_choices(void **state)
{
    (void)state;
    cfit_nccl_estimate e, x;
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_nccl_system s = nvlink_node(8);
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_ALL_ALGOS, CFIT_NCCL_ALL_PROTOS, 8, &e, &d),
                     CFIT_EOK);
    assert_int_equal(e.proto, CFIT_NCCL_LL);
    assert_int_equal(e.algo, CFIT_NCCL_RING);
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_ALL_ALGOS, CFIT_NCCL_ALL_PROTOS, GIB, &e, &d),
                     CFIT_EOK);
    assert_int_equal(e.proto, CFIT_NCCL_SIMPLE);
    assert_int_equal(e.algo, CFIT_NCCL_RING);
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_SIMPLE, GIB, &x, &d), CFIT_EOK);
    assert_true(e.time_s == x.time_s);
    assert_rel(e.time_s, 56e-6 + GIB * 1.75 / INTRA_BW, 1e-9);

    s.nvls_bw = 400e9;
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_ALL_ALGOS, CFIT_NCCL_ALL_PROTOS, GIB, &e, &d),
                     CFIT_EOK);
    assert_int_equal(e.algo, CFIT_NCCL_NVLS);
    assert_int_equal(e.proto, CFIT_NCCL_SIMPLE);
    /* ... but not below the break-even rate: 200 GB/s < 205.7 GB/s */
    s.nvls_bw = 200e9;
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_ALL_ALGOS, CFIT_NCCL_ALL_PROTOS, GIB, &e, &d),
                     CFIT_EOK);
    assert_int_equal(e.algo, CFIT_NCCL_RING);

    /* nvls forced with no NVLink SHARP: nothing left */
    s.nvls_bw = 0;
    cfit_diag_clear(&d);
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, 1u << CFIT_NCCL_NVLS, CFIT_NCCL_ALL_PROTOS, GIB, &e, &d),
                     CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "this hardware runs allreduce with"));
    assert_non_null(strstr(d.msg, "ring/ll"));
    assert_non_null(strstr(d.msg, "ring/simple"));
    assert_non_null(strstr(d.msg, "tree/ll128"));
    assert_null(strstr(strstr(d.msg, "this hardware runs"), "nvls"));   /* not in what it runs */
    /* the reason is a Simple pair's, so the missing NVLink SHARP, not "simple protocol only" */
    assert_non_null(strstr(d.msg, "NVLink SHARP"));
    assert_null(strstr(d.msg, "runs only with the simple protocol"));
    cfit_diag_clear(&d);
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, 1u << CFIT_NCCL_NVLS, 1u << CFIT_NCCL_SIMPLE, GIB, &e, &d),
                     CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "NVLink SHARP"));
    assert_non_null(strstr(d.msg, "this hardware runs allreduce with ring/ll"));
    /* tree with LL only for all-gather: tree is all-reduce only */
    cfit_diag_clear(&d);
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLGATHER, 1u << CFIT_NCCL_TREE, 1u << CFIT_NCCL_LL, GIB, &e, &d),
                     CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "this hardware runs allgather with ring/ll"));
    /* empty masks */
    cfit_diag_clear(&d);
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, 0, 0, GIB, &e, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "no algorithm or no protocol selected"));
}

/* NCCL_ALGO / NCCL_PROTO list syntax. */
static void mask_parsing(void **state)
{
    (void)state;
    unsigned m = 0;
    cfit_diag d;
    cfit_diag_clear(&d);
    assert_int_equal(cfit_nccl_algo_mask("auto", &m, &d), CFIT_EOK);
    assert_int_equal(m, CFIT_NCCL_ALL_ALGOS);
    assert_int_equal(cfit_nccl_algo_mask("ring,tree", &m, &d), CFIT_EOK);
    assert_int_equal(m, (1u << CFIT_NCCL_RING) | (1u << CFIT_NCCL_TREE));
    assert_int_equal(cfit_nccl_algo_mask("^nvls,nvlstree", &m, &d), CFIT_EOK);
    assert_int_equal(m, CFIT_NCCL_ALL_ALGOS & ~((1u << CFIT_NCCL_NVLS) | (1u << CFIT_NCCL_NVLS_TREE)));
    assert_int_equal(cfit_nccl_algo_mask("Ring", &m, &d), CFIT_EOK);
    assert_int_equal(m, 1u << CFIT_NCCL_RING);
    assert_int_equal(cfit_nccl_algo_mask("collnet", &m, &d), CFIT_EOK);
    assert_int_equal(m, 1u << CFIT_NCCL_COLLNET_DIRECT);
    cfit_diag_clear(&d);
    assert_int_equal(cfit_nccl_algo_mask("ringg", &m, &d), CFIT_EUNKNOWN);
    assert_non_null(strstr(d.msg, "ringg"));
    assert_int_equal(cfit_nccl_algo_mask("ring,ringg", &m, &d), CFIT_EUNKNOWN);
    assert_int_equal(cfit_nccl_algo_mask("", &m, &d), CFIT_EINVALID);
    assert_int_equal(cfit_nccl_algo_mask("^", &m, &d), CFIT_EINVALID);
    assert_int_equal(cfit_nccl_algo_mask(",", &m, &d), CFIT_EINVALID);
    assert_int_equal(cfit_nccl_algo_mask("^ring,tree,nvls,nvlstree,collnetdirect,collnetchain,pat,p2p,msccl,mscclpp",
                                         &m, &d),
                     CFIT_EINVALID);
    assert_int_equal(cfit_nccl_algo_mask("MSCCLPP", &m, &d), CFIT_EOK);
    assert_int_equal(m, 1u << CFIT_NCCL_MSCCLPP);

    assert_int_equal(cfit_nccl_proto_mask("auto", &m, &d), CFIT_EOK);
    assert_int_equal(m, CFIT_NCCL_ALL_PROTOS);
    assert_int_equal(cfit_nccl_proto_mask("ll,ll128", &m, &d), CFIT_EOK);
    assert_int_equal(m, (1u << CFIT_NCCL_LL) | (1u << CFIT_NCCL_LL128));
    assert_int_equal(cfit_nccl_proto_mask("^simple", &m, &d), CFIT_EOK);
    assert_int_equal(m, CFIT_NCCL_ALL_PROTOS & ~(1u << CFIT_NCCL_SIMPLE));
    assert_int_equal(cfit_nccl_proto_mask("Simple", &m, &d), CFIT_EOK);
    assert_int_equal(m, 1u << CFIT_NCCL_SIMPLE);
    cfit_diag_clear(&d);
    assert_int_equal(cfit_nccl_proto_mask("lll", &m, &d), CFIT_EUNKNOWN);
    assert_non_null(strstr(d.msg, "lll"));
    assert_int_equal(cfit_nccl_proto_mask("", &m, &d), CFIT_EINVALID);
    assert_int_equal(cfit_nccl_proto_mask("^", &m, &d), CFIT_EINVALID);
    assert_int_equal(cfit_nccl_proto_mask("^ll,ll128,simple", &m, &d), CFIT_EINVALID);
}

/* Catalog entries to a system: NIC counts, NVLS and SHARP rates, the network's extra latency. */
static void system_from_catalog(void **state)
{
    (void)state;
    cfit_gpu g;
    cfit_fabric up, net;
    cfit_node node;
    memset(&g, 0, sizeof g), memset(&up, 0, sizeof up), memset(&net, 0, sizeof net), memset(&node, 0, sizeof node);
    g.arch = CFIT_ARCH_HOPPER;
    g.scaleup_bw_bytes_per_s = 450e9;
    up.kind = CFIT_FABRIC_SCALEUP, up.family = CFIT_FAMILY_NVLINK;
    up.bw_bytes_per_s = 900e9, up.efficiency = 0.8, up.sharp_efficiency = 0.6;
    net.family = CFIT_FAMILY_IB, net.bw_bytes_per_s = 50e9, net.efficiency = 0.9, net.latency_s = 5e-6;
    node.gpus_per_node = 8, node.nics_per_node = 8;

    cfit_nccl_system s;
    cfit_diag d;
    cfit_diag_clear(&d);
    /* full nodes: the node's 8 NICs; the GPU's own scale-up rate is the line rate */
    assert_int_equal(cfit_nccl_system_from_catalog(&g, &up, &node, &net, 2, 8, 0, &s, &d), CFIT_EOK);
    assert_int_equal(s.nodes, 2);
    assert_int_equal(s.gpus_per_node, 8);
    assert_int_equal(s.arch, CFIT_ARCH_HOPPER);
    assert_int_equal(s.intra, CFIT_FAMILY_NVLINK);
    assert_int_equal(s.net, CFIT_FAMILY_IB);
    assert_int_equal(s.nics, 8);
    assert_rel(s.intra_bw, 450e9 * 0.8, 1e-12);
    assert_rel(s.nvls_bw, 450e9 * 0.6, 1e-12);
    assert_rel(s.nic_bw, 50e9 * 0.9, 1e-12);
    assert_true(s.net_extra_latency_s == 0);
    assert_true(s.intra_extra_latency_s == 0);   /* latency 0: not beyond the NVLink reference */
    assert_true(s.sharp_bw == 0);
    assert_true(s.net_slowdown == 1);
    /* an NVLink fabric slower than the 2 us reference adds the rest per GPU hop; xGMI does not */
    up.latency_s = 2.88e-6;
    assert_int_equal(cfit_nccl_system_from_catalog(&g, &up, &node, &net, 2, 8, 0, &s, &d), CFIT_EOK);
    assert_rel(s.intra_extra_latency_s, 0.88e-6, 1e-9);
    up.family = CFIT_FAMILY_XGMI;
    assert_int_equal(cfit_nccl_system_from_catalog(&g, &up, &node, &net, 2, 8, 0, &s, &d), CFIT_EOK);
    assert_true(s.intra_extra_latency_s == 0);
    up.family = CFIT_FAMILY_NVLINK, up.latency_s = 0;
    /* a partial node (2 of 8 GPUs) uses its share: 2 NICs; an explicit count wins */
    assert_int_equal(cfit_nccl_system_from_catalog(&g, &up, &node, &net, 2, 2, 0, &s, &d), CFIT_EOK);
    assert_int_equal(s.nics, 2);
    assert_int_equal(cfit_nccl_system_from_catalog(&g, &up, &node, &net, 2, 2, 5, &s, &d), CFIT_EOK);
    assert_int_equal(s.nics, 5);
    assert_int_equal(cfit_nccl_system_from_catalog(&g, &up, &node, &net, 2, 8, 3, &s, &d), CFIT_EOK);
    assert_int_equal(s.nics, 3);
    /* a share below one NIC is still one */
    node.nics_per_node = 1;
    assert_int_equal(cfit_nccl_system_from_catalog(&g, &up, &node, &net, 2, 2, 0, &s, &d), CFIT_EOK);
    assert_int_equal(s.nics, 1);
    node.nics_per_node = 8;
    /* one node: no network at all */
    assert_int_equal(cfit_nccl_system_from_catalog(&g, &up, &node, &net, 1, 8, 0, &s, &d), CFIT_EOK);
    assert_int_equal(s.nics, 0);
    assert_true(s.nic_bw == 0);
    /* no per-GPU rate: the fabric's; no sharp_efficiency: no NVLS */
    g.scaleup_bw_bytes_per_s = 0;
    up.sharp_efficiency = 0;
    assert_int_equal(cfit_nccl_system_from_catalog(&g, &up, &node, &net, 1, 8, 0, &s, &d), CFIT_EOK);
    assert_rel(s.intra_bw, 900e9 * 0.8, 1e-12);
    assert_true(s.nvls_bw == 0);
    /* the fabric's latency beyond InfiniBand's 5 us, per hop; none below; switch SHARP */
    net.latency_s = 12e-6, net.sharp_efficiency = 0.7;
    assert_int_equal(cfit_nccl_system_from_catalog(&g, &up, &node, &net, 2, 8, 0, &s, &d), CFIT_EOK);
    assert_rel(s.net_extra_latency_s, 7e-6, 1e-9);
    assert_rel(s.sharp_bw, 50e9 * 0.7, 1e-12);
    net.latency_s = 3e-6;
    assert_int_equal(cfit_nccl_system_from_catalog(&g, &up, &node, &net, 2, 8, 0, &s, &d), CFIT_EOK);
    assert_true(s.net_extra_latency_s == 0);
    /* counts below one */
    assert_int_equal(cfit_nccl_system_from_catalog(&g, &up, &node, &net, 0, 8, 0, &s, &d), CFIT_EINVALID);
    assert_int_equal(cfit_nccl_system_from_catalog(&g, &up, &node, &net, 2, 0, 0, &s, &d), CFIT_EINVALID);
}

/* Bad systems and sizes are refused, not computed. */
static void bad_inputs(void **state)
{
    (void)state;
    cfit_nccl_estimate e;
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_nccl_system s = nvlink_node(1);   /* one rank */
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_SIMPLE, GIB, &e, &d),
                     CFIT_EINVALID);
    s = cluster(2, 8, 0, NIC_BW);          /* two nodes, no NIC */
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_ALL_ALGOS, CFIT_NCCL_ALL_PROTOS, GIB, &e, &d),
                     CFIT_EINVALID);
    s = nvlink_node(8);
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_SIMPLE, -1, &e, &d),
                     CFIT_EINVALID);
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_SIMPLE, NAN, &e, &d),
                     CFIT_EINVALID);
    /* size 0: latency only */
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_SIMPLE, 0, &e, &d), CFIT_EOK);
    assert_true(e.time_s == e.latency_s);
    assert_true(e.algbw_bytes_per_s == 0);
}

/* cfit_nccl_best_quiet picks what cfit_nccl_best picks (pair and time, bit for bit) on one node,
 * across nodes, with NVLS, one GPU per node (PAT), every collective, sizes 0 B to 16 GiB; and
 * refuses what it refuses. */
static void best_quiet_agrees(void **state)
{
    (void)state;
    cfit_nccl_system sys[4] = {nvlink_node(8), cluster(16, 8, 8, NIC_BW), cluster(16, 8, 8, NIC_BW),
                               cluster(64, 1, 1, NIC_BW)};
    sys[2].nvls_bw = 0.6 * INTRA_BW;
    for (int i = 0; i < 4; i++)
        for (int c = 0; c < CFIT_COLL_COUNT; c++)
            for (double b = 0; b <= 16 * GIB; b = b ? b * 4 : 8) {
                cfit_nccl_estimate e, q;
                cfit_diag d;
                cfit_diag_clear(&d);
                int rc = cfit_nccl_best(&sys[i], (cfit_collective)c, CFIT_NCCL_ALL_ALGOS, CFIT_NCCL_ALL_PROTOS, b, &e, &d);
                assert_int_equal(cfit_nccl_best_quiet(&sys[i], (cfit_collective)c, CFIT_NCCL_ALL_ALGOS,
                                                      CFIT_NCCL_ALL_PROTOS, b, &q), rc);
                if (rc)
                    continue;
                assert_int_equal(q.algo, e.algo);
                assert_int_equal(q.proto, e.proto);
                assert_true(q.time_s == e.time_s);
            }
    cfit_nccl_estimate q;
    assert_int_equal(cfit_nccl_best_quiet(&sys[0], CFIT_COLL_ALLREDUCE, 1u << CFIT_NCCL_NVLS, CFIT_NCCL_ALL_PROTOS, GIB, &q),
                     CFIT_EINVALID);
}

/* One node of g MI300X-class GPUs: CDNA3 over xGMI, 7 links of 45 GB/s each to the 7 peers. */
#define XGMI_BW (7 * 45e9)
static cfit_nccl_system xgmi_node(int g, cfit_gpu_arch arch)
{
    cfit_nccl_system s = nvlink_node(g);
    s.arch = arch;
    s.intra = CFIT_FAMILY_XGMI;
    s.intra_bw = XGMI_BW;
    return s;
}

/* RCCL's scheduler on one node of 8 MI300X: MSCCL++ (a process per GPU, all-reduce up to 1 MiB:
 * one shot = 13.1 us + S / 45 GB/s, two shots = 26.2 us + 2S / (8 x 45 GB/s)), then MSCCL's
 * all-pairs (45.8 us + 2S / (8 x 45 GB/s), x2 under LL up to 512 KiB; to 16 MiB), then NCCL's
 * tuner; one process driving the 8 GPUs (nccl-tests -g 8) loses MSCCL++; LL128 is not RCCL's on
 * gfx942. */
static void rccl_addons(void **state)
{
    (void)state;
    cfit_nccl_system s = xgmi_node(8, CFIT_ARCH_CDNA3);
    cfit_nccl_estimate e;
    cfit_diag d;
    unsigned all = CFIT_NCCL_ALL_ALGOS, protos = CFIT_NCCL_ALL_PROTOS;
    double link = 45e9;
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, all, protos, 1024, &e, &d), CFIT_EOK);
    assert_int_equal(e.algo, CFIT_NCCL_MSCCLPP);
    assert_int_equal(e.proto, CFIT_NCCL_LL);
    assert_rel(e.time_s, 13.1e-6 + 1024 / link, 1e-9);
    assert_rel(e.busbw_bytes_per_s, 1024 / e.time_s * 1.75, 1e-9);
    /* 1 MiB: two shots (26.2 + 2.9 us) beat one (13.1 + 23.3 us) */
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, all, protos, 1 << 20, &e, &d), CFIT_EOK);
    assert_int_equal(e.algo, CFIT_NCCL_MSCCLPP);
    assert_rel(e.time_s, 26.2e-6 + 2.0 * (1 << 20) / (8 * link), 1e-9);
    /* 4 MiB: MSCCL's Simple all-pairs */
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, all, protos, 4 << 20, &e, &d), CFIT_EOK);
    assert_int_equal(e.algo, CFIT_NCCL_MSCCL);
    assert_int_equal(e.proto, CFIT_NCCL_SIMPLE);
    assert_rel(e.time_s, 45.8e-6 + 2.0 * (4 << 20) / (8 * link), 1e-9);
    /* 32 MiB: past MSCCL's files, NCCL's tuner; never LL128 on gfx942 */
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, all, protos, 32 << 20, &e, &d), CFIT_EOK);
    assert_int_equal(e.algo, CFIT_NCCL_RING);
    for (double b = 1024; b <= 64.0 * (1 << 20); b *= 4) {
        assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, all, protos, b, &e, &d), CFIT_EOK);
        assert_true(e.proto != CFIT_NCCL_LL128);
    }
    assert_int_equal(is_supported(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_LL128, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "gfx90a"));
    /* one process, 8 GPUs: MSCCL's LL all-pairs at 64 KiB */
    s.gpus_per_process = 8;
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, all, protos, 65536, &e, &d), CFIT_EOK);
    assert_int_equal(e.algo, CFIT_NCCL_MSCCL);
    assert_int_equal(e.proto, CFIT_NCCL_LL);
    assert_rel(e.time_s, 45.8e-6 + 2 * 2.0 * 65536 / (8 * link), 1e-9);
    assert_int_equal(is_supported(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_MSCCLPP, CFIT_NCCL_LL, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "process per GPU"));
    /* out of range, forced */
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_MSCCL, CFIT_NCCL_SIMPLE, 32 << 20, &e, &d),
                     CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "16 MiB"));
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_MSCCL, CFIT_NCCL_SIMPLE, 4096, &e, &d),
                     CFIT_EINVALID);
    assert_int_equal(is_supported(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_MSCCL, CFIT_NCCL_LL128, &d), CFIT_EINVALID);
    s.gpus_per_process = 9;
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, all, protos, 65536, &e, &d), CFIT_EINVALID);
    /* where they do not apply: all-gather, 4 GPUs, NVIDIA, MI350-class (MSCCL only), across nodes */
    s = xgmi_node(8, CFIT_ARCH_CDNA3);
    assert_int_equal(is_supported(&s, CFIT_COLL_ALLGATHER, CFIT_NCCL_MSCCL, CFIT_NCCL_SIMPLE, &d), CFIT_EINVALID);
    cfit_nccl_system four = xgmi_node(4, CFIT_ARCH_CDNA3);
    assert_int_equal(is_supported(&four, CFIT_COLL_ALLREDUCE, CFIT_NCCL_MSCCL, CFIT_NCCL_SIMPLE, &d), CFIT_EINVALID);
    assert_int_equal(cfit_nccl_best(&four, CFIT_COLL_ALLREDUCE, all, protos, 1024, &e, &d), CFIT_EOK);
    assert_int_equal(e.algo, CFIT_NCCL_RING);
    cfit_nccl_system h = nvlink_node(8);
    assert_int_equal(is_supported(&h, CFIT_COLL_ALLREDUCE, CFIT_NCCL_MSCCL, CFIT_NCCL_SIMPLE, &d), CFIT_EINVALID);
    cfit_nccl_system c4 = xgmi_node(8, CFIT_ARCH_CDNA4);
    assert_int_equal(cfit_nccl_best(&c4, CFIT_COLL_ALLREDUCE, all, protos, 1024, &e, &d), CFIT_EOK);
    assert_int_equal(e.algo, CFIT_NCCL_MSCCL);
    assert_int_equal(is_supported(&c4, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_LL128, &d), CFIT_EINVALID);
    c4.nodes = 2, c4.nics = 8, c4.nic_bw = NIC_BW, c4.net = CFIT_FAMILY_ROCE;
    assert_int_equal(is_supported(&c4, CFIT_COLL_ALLREDUCE, CFIT_NCCL_MSCCL, CFIT_NCCL_SIMPLE, &d), CFIT_EINVALID);
    assert_int_equal(is_supported(&c4, CFIT_COLL_ALLREDUCE, CFIT_NCCL_TREE, CFIT_NCCL_LL128, &d), CFIT_EOK);
    /* --algo ring keeps the ring, as NCCL_ALGO would */
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, 1u << CFIT_NCCL_RING, protos, 1024, &e, &d), CFIT_EOK);
    assert_int_equal(e.algo, CFIT_NCCL_RING);
}

/* One process driving 8 GPUs launches 8 kernels an iteration: at least 8 x 4.47 us on NVIDIA,
 * 8 x 5.54 us on AMD; a process per GPU has no such bound; the tuner's pick is unchanged. */
static void launch_bound(void **state)
{
    (void)state;
    cfit_nccl_system s = nvlink_node(8);
    cfit_nccl_estimate e, one;
    cfit_diag d;
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_ALL_ALGOS, CFIT_NCCL_ALL_PROTOS, 1024, &one, &d),
                     CFIT_EOK);
    assert_true(one.launch_s == 0);
    assert_true(one.time_s < 8 * 4.47e-6);
    s.gpus_per_process = 8;
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_ALL_ALGOS, CFIT_NCCL_ALL_PROTOS, 1024, &e, &d),
                     CFIT_EOK);
    assert_int_equal(e.algo, one.algo);
    assert_int_equal(e.proto, one.proto);
    assert_rel(e.launch_s, 8 * 4.47e-6, 1e-9);
    assert_rel(e.time_s, 8 * 4.47e-6, 1e-9);
    assert_rel(e.busbw_bytes_per_s, 1024 / e.time_s * 1.75, 1e-9);
    assert_rel(e.tuner_time_s, one.tuner_time_s, 1e-12);
    /* a large message outlasts the launches */
    assert_int_equal(cfit_nccl_best(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_ALL_ALGOS, CFIT_NCCL_ALL_PROTOS, GIB, &e, &d),
                     CFIT_EOK);
    assert_true(e.time_s > e.launch_s);
    s.gpus_per_process = 2;
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_LL, 8, &e, &d), CFIT_EOK);
    assert_rel(e.launch_s, 2 * 4.47e-6, 1e-9);
    assert_true(e.time_s > e.launch_s);   /* 15 us of ring latency */
    cfit_nccl_system m = xgmi_node(8, CFIT_ARCH_CDNA3);
    m.gpus_per_process = 8;
    assert_int_equal(cfit_nccl_time(&m, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_LL, 8, &e, &d), CFIT_EOK);
    assert_rel(e.launch_s, 8 * 5.54e-6, 1e-9);
    assert_rel(e.time_s, 8 * 5.54e-6, 1e-9);
}

/* NCCL's point-to-point path across nodes takes at least 35 us (+ the fabric's extra latency);
 * inside a node it keeps the ring's base + one hop. */
static void p2p_net_floor(void **state)
{
    (void)state;
    cfit_nccl_system s = cluster(2, 8, 8, NIC_BW);
    cfit_nccl_estimate e;
    cfit_diag d;
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_SENDRECV, CFIT_NCCL_P2P, CFIT_NCCL_LL, 1024, &e, &d), CFIT_EOK);
    assert_rel(e.latency_s, 35e-6, 1e-9);
    s.net_extra_latency_s = 11e-6;   /* EFA-like */
    assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLTOALL, CFIT_NCCL_P2P, CFIT_NCCL_SIMPLE, 1024, &e, &d), CFIT_EOK);
    assert_rel(e.latency_s, 46e-6, 1e-9);
    cfit_nccl_system one = nvlink_node(8);
    assert_int_equal(cfit_nccl_time(&one, CFIT_COLL_SENDRECV, CFIT_NCCL_P2P, CFIT_NCCL_LL, 1024, &e, &d), CFIT_EOK);
    assert_rel(e.latency_s, (6.6 + 0.6) * 1e-6, 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ring_ll_latency_one_node),  cmocka_unit_test(ring_simple_busbw_limits),
        cmocka_unit_test(fewer_channels_for_small_messages), cmocka_unit_test(host_path_rate),
        cmocka_unit_test(net_slowdown_halves_busbw), cmocka_unit_test(tree_two_nodes_half_bytes),
        cmocka_unit_test(support_rules),             cmocka_unit_test(pipeline_fill),
        cmocka_unit_test(nvlstree_uses_heads_nics),
        cmocka_unit_test(tuner_ignores_fill),        cmocka_unit_test(intra_extra_latency_per_hop),
        cmocka_unit_test(ll128_ring_pays_network_hop_every_step),
        cmocka_unit_test(sendrecv_channels_in_a_node),
        cmocka_unit_test(per_channel_ceilings),
        cmocka_unit_test(tuner_choices),             cmocka_unit_test(rccl_addons), cmocka_unit_test(launch_bound), cmocka_unit_test(p2p_net_floor),
        cmocka_unit_test(mask_parsing),              cmocka_unit_test(system_from_catalog),
        cmocka_unit_test(bad_inputs),                cmocka_unit_test(best_quiet_agrees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
