/* test_sim.c - the flow-level simulator against closed forms and hand-made fairness cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterfit/sim.h"
#include "sim/sim_internal.h"
#include "sim/topo_internal.h"

#define B 50e9      /* link rate, bytes/s */
#define LAT 1e-6    /* per hop */

/* The star's one path: host src up its cable (link 2 src), down dst's (link 2 dst + 1).  The
 * shortest-path BFS would find the same, but visits every host per call (O(n^2) per ring). */
static int star_route(const cfit_topo *t, cfit__topo_scratch *ws, int src, int dst, int flow, int *paths, int *lens,
                      int max, int max_len)
{
    (void)ws, (void)flow, (void)max, (void)max_len;
    if (t->links[2 * src].failed || t->links[2 * dst + 1].failed)
        return 0;
    paths[0] = 2 * src, paths[1] = 2 * dst + 1, lens[0] = 2;
    return 1;
}

/* n hosts on one switch (non-blocking): every path is two hops, latency 2 LAT. */
static cfit_topo *star(int n)
{
    cfit_topo_params p;
    cfit_topo_params_init(&p);
    p.gpus_per_node = 1;
    cfit_topo *t = cfit__topo_alloc("custom", &p);
    assert_non_null(t);
    for (int i = 0; i < n; i++)
        assert_int_equal(cfit__topo_add_vertex(t, CFIT_VERTEX_GPU), i);
    int sw = cfit__topo_add_vertex(t, CFIT_VERTEX_SWITCH);
    for (int i = 0; i < n; i++)
        assert_true(cfit__topo_add_cable(t, i, sw, B, LAT, 1) >= 0);
    assert_int_equal(cfit__topo_finish(t), CFIT_EOK);
    t->route = star_route;
    return t;
}

static void near(double got, double want, double rel)
{
    if (fabs(got - want) > rel * fabs(want))
        fail_msg("got %.9g, want %.9g (within %g)", got, want, rel);
}

static double sim(const cfit_topo *t, cfit_collective c, cfit_algo a, int n, double bytes)
{
    cfit_sim_result r;
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = cfit_sim_collective(t, c, a, n, NULL, bytes, &r, &d);
    if (rc)
        fail_msg("sim failed: %s", d.msg);
    return r.time_s;
}

static const int sizes[] = {2, 3, 5, 8, 64, 100, 1024, 4096, 16384};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

static void ring_matches_alpha_beta(void **state)
{
    (void)state;
    cfit_topo *t = star(16384);
    double S = 256e6, a = 2 * LAT;
    for (int i = 0; i < NSIZES; i++) {
        int n = sizes[i];
        near(sim(t, CFIT_COLL_ALLREDUCE, CFIT_ALGO_RING, n, S), 2.0 * (n - 1) * (a + S / n / B), 0.01);
        near(sim(t, CFIT_COLL_ALLGATHER, CFIT_ALGO_RING, n, S), (n - 1) * (a + S / n / B), 0.01);
        near(sim(t, CFIT_COLL_REDUCESCATTER, CFIT_ALGO_RING, n, S), (n - 1) * (a + S / n / B), 0.01);
        near(sim(t, CFIT_COLL_SENDRECV, CFIT_ALGO_RING, n, S), a + S / B, 0.01);
    }
    near(sim(t, CFIT_COLL_ALLTOALL, CFIT_ALGO_RING, 64, S), 63 * (a + S / 64 / B), 0.01);
    cfit_topo_free(t);
}

static void rabenseifner_matches_alpha_beta(void **state)
{
    (void)state;
    cfit_topo *t = star(16384);
    double S = 256e6, a = 2 * LAT;
    for (int i = 0; i < NSIZES; i++) {
        int n = sizes[i], p = 1, k = 0;
        while (p * 2 <= n)
            p *= 2, k++;
        /* 2 lg p (a) + 2 (p-1)/p S/B, plus fold-in and hand-back of the whole vector if p < n */
        double want = 2 * k * a + 2.0 * (p - 1) / p * S / B + (p < n ? 2 * (a + S / B) : 0);
        near(sim(t, CFIT_COLL_ALLREDUCE, CFIT_ALGO_RABENSEIFNER, n, S), want, 0.01);
    }
    cfit_topo_free(t);
}

/* Tree flows on a rank's busiest link: its degree in tree A plus in tree B (heap order over
 * the ranks, then over the ranks reversed); every tree edge carries S/2 each way. */
static int tree_load(int n)
{
    int m = 0;
    for (int r = 0; r < n; r++) {
        int deg = 0;
        for (int tree = 0; tree < 2; tree++) {
            int pos = tree ? n - 1 - r : r;
            deg += (pos > 0) + (2 * pos + 1 < n) + (2 * pos + 2 < n);
        }
        if (deg > m)
            m = deg;
    }
    return m;
}

static void tree_matches_alpha_beta(void **state)
{
    (void)state;
    cfit_topo *t = star(16384);
    double S = 256e6, a = 2 * LAT;
    for (int i = 0; i < NSIZES; i++) {
        int n = sizes[i];
        double depth = floor(log2(n));
        double want = tree_load(n) * (S / 2) / B + 2 * depth * a;
        near(sim(t, CFIT_COLL_ALLREDUCE, CFIT_ALGO_TREE, n, S), want, 0.01);
        if (n >= 4)
            assert_int_equal(tree_load(n), 4);   /* 2S/B: half the ring's busbw, as NCCL models */
    }
    cfit_topo_free(t);
}

static void bus_factors(void **state)
{
    (void)state;
    near(cfit_coll_bus_factor(CFIT_COLL_ALLREDUCE, 8), 2.0 * 7 / 8, 1e-12);
    near(cfit_coll_bus_factor(CFIT_COLL_ALLGATHER, 8), 7.0 / 8, 1e-12);
    near(cfit_coll_bus_factor(CFIT_COLL_REDUCESCATTER, 8), 7.0 / 8, 1e-12);
    near(cfit_coll_bus_factor(CFIT_COLL_ALLTOALL, 8), 7.0 / 8, 1e-12);
    near(cfit_coll_bus_factor(CFIT_COLL_SENDRECV, 8), 1, 1e-12);
    cfit_topo *t = star(8);
    cfit_sim_result r;
    cfit_diag d;
    assert_int_equal(cfit_sim_collective(t, CFIT_COLL_ALLREDUCE, CFIT_ALGO_RING, 8, NULL, 1e9, &r, &d), 0);
    near(r.algbw_bytes_per_s, 1e9 / r.time_s, 1e-12);
    near(r.busbw_bytes_per_s, r.algbw_bytes_per_s * 14 / 8, 1e-12);
    assert_int_equal(r.steps, 14);
    assert_int_equal(r.flows, 14 * 8);
    assert_int_equal(r.flows_solved, 8);
    assert_int_equal(r.bottleneck_tier, 1);
    assert_true(r.hottest_link >= 0);
    near(r.hottest_link_bytes, 14 * 1e9 / 8, 1e-9);   /* every NIC link carries 2(n-1) S/n */
    cfit_topo_free(t);
}

/* cfit_sim_collective_links: the per-link bytes agree with the result and the ring's traffic. */
static void link_bytes_reported(void **state)
{
    (void)state;
    cfit_topo *t = star(8);
    cfit_sim_result r, r0;
    cfit_diag d;
    int nl = cfit_topo_links(t);
    double *lb = calloc((size_t)nl, sizeof *lb);
    assert_non_null(lb);
    assert_int_equal(cfit_sim_collective_links(t, CFIT_COLL_ALLREDUCE, CFIT_ALGO_RING, 8, NULL, 1e9, &r, lb, &d), 0);
    assert_int_equal(cfit_sim_collective(t, CFIT_COLL_ALLREDUCE, CFIT_ALGO_RING, 8, NULL, 1e9, &r0, &d), 0);
    near(r.time_s, r0.time_s, 1e-12);
    double most = 0, total = 0;
    for (int l = 0; l < nl; l++) {
        most = lb[l] > most ? lb[l] : most;
        total += lb[l];
    }
    near(most, r.hottest_link_bytes, 1e-12);
    near(lb[r.hottest_link], r.hottest_link_bytes, 1e-12);
    /* 8 ranks each send 2(n-1)/n S up to the switch and receive as much down: 16 x 14/8 GB */
    near(total, 16 * 14 * 1e9 / 8, 1e-9);
    free(lb);
    cfit_topo_free(t);
}

static void two_flows_share_a_link(void **state)
{
    (void)state;
    cfit_topo *t = star(3);
    int src[] = {0, 1}, dst[] = {2, 2};
    double bytes[] = {1e9, 1e9}, time;
    cfit_diag d;
    assert_int_equal(cfit__sim_flows(t, 2, src, dst, bytes, &time, &d), 0);
    near(time, 1e9 / (B / 2) + 2 * LAT, 1e-9);
    int src1[] = {0}, dst1[] = {2};
    assert_int_equal(cfit__sim_flows(t, 1, src1, dst1, bytes, &time, &d), 0);
    near(time, 1e9 / B + 2 * LAT, 1e-9);
    cfit_topo_free(t);
}

/* Host 3's own link runs at B/4, so its flow to host 2 leaves 3B/4 of the shared trunk and of
 * host 2's link to host 0's flow: with 3x the bytes both finish together at 4 S/B. */
static void bottleneck_elsewhere_leaves_the_rest(void **state)
{
    (void)state;
    cfit_topo_params p;
    cfit_topo_params_init(&p);
    p.gpus_per_node = 1;
    cfit_topo *t = cfit__topo_alloc("custom", &p);
    for (int i = 0; i < 4; i++)
        cfit__topo_add_vertex(t, CFIT_VERTEX_GPU);
    int sa = cfit__topo_add_vertex(t, CFIT_VERTEX_SWITCH), sb = cfit__topo_add_vertex(t, CFIT_VERTEX_SWITCH);
    cfit__topo_add_cable(t, 0, sa, B, 0, 1);
    cfit__topo_add_cable(t, 1, sa, B, 0, 1);
    cfit__topo_add_cable(t, 3, sa, B / 4, 0, 1);
    cfit__topo_add_cable(t, 2, sb, B, 0, 1);
    cfit__topo_add_cable(t, sa, sb, B, 0, 2);
    assert_int_equal(cfit__topo_finish(t), 0);
    int src[] = {3, 0}, dst[] = {2, 2};
    double bytes[] = {1e9, 3e9}, time;
    cfit_diag d;
    assert_int_equal(cfit__sim_flows(t, 2, src, dst, bytes, &time, &d), 0);
    near(time, 4e9 / B, 1e-9);
    /* and a third flow on the trunk: 3 and 1 and 0 -> 2: 3 gets B/4, the others 3B/8 each */
    int src3[] = {3, 0, 1}, dst3[] = {2, 2, 2};
    double bytes3[] = {1e9, 1.5e9, 1.5e9};
    assert_int_equal(cfit__sim_flows(t, 3, src3, dst3, bytes3, &time, &d), 0);
    near(time, 4e9 / B, 1e-9);
    cfit_topo_free(t);
}

static void errors(void **state)
{
    (void)state;
    cfit_topo *t = star(8);
    cfit_sim_result r;
    cfit_diag d;
    cfit_diag_clear(&d);
    assert_int_equal(cfit_sim_collective(t, CFIT_COLL_ALLREDUCE, CFIT_ALGO_RING, 1, NULL, 1e6, &r, &d), CFIT_EINVALID);
    assert_int_equal(cfit_sim_collective(t, CFIT_COLL_ALLREDUCE, CFIT_ALGO_RING, 9, NULL, 1e6, &r, &d), CFIT_EINVALID);
    assert_int_equal(cfit_sim_collective(t, CFIT_COLL_ALLGATHER, CFIT_ALGO_TREE, 8, NULL, 1e6, &r, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "tree"));
    int twice[] = {0, 1, 1};
    assert_int_equal(cfit_sim_collective(t, CFIT_COLL_ALLREDUCE, CFIT_ALGO_RING, 3, twice, 1e6, &r, &d),
                     CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "host 1"));
    /* cut host 5 off: its cable's two links fail */
    t->links[10].failed = t->links[11].failed = 1;
    assert_int_equal(cfit_sim_collective(t, CFIT_COLL_ALLREDUCE, CFIT_ALGO_RING, 8, NULL, 1e6, &r, &d),
                     CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "rank 4"));
    assert_non_null(strstr(d.msg, "rank 5"));
    cfit_collective c;
    cfit_algo a;
    assert_int_equal(cfit_collective_parse("allgather", &c, &d), 0);
    assert_int_equal(c, CFIT_COLL_ALLGATHER);
    assert_int_equal(cfit_collective_parse("alreduce", &c, &d), CFIT_EUNKNOWN);
    assert_non_null(strstr(d.msg, "allreduce"));
    assert_int_equal(cfit_algo_parse("rabenseifner", &a, &d), 0);
    assert_int_equal(a, CFIT_ALGO_RABENSEIFNER);
    cfit_topo_free(t);
}

/* Nodes of g GPUs on a scale-up switch (rate U), each GPU with its own NIC on one big leaf:
 * hierarchical = ring RS in the node + g concurrent rings across nodes + ring AG in the node. */
static void hierarchical_matches_closed_form(void **state)
{
    (void)state;
    const int g = 8, nodes = 16, n = g * nodes;
    const double U = 450e9;
    cfit_topo_params p;
    cfit_topo_params_init(&p);
    p.gpus_per_node = g;
    cfit_topo *t = cfit__topo_alloc("custom", &p);
    for (int i = 0; i < n; i++)
        cfit__topo_add_vertex(t, CFIT_VERTEX_GPU);
    int leaf = cfit__topo_add_vertex(t, CFIT_VERTEX_SWITCH);
    for (int k = 0; k < nodes; k++) {
        int nvs = cfit__topo_add_vertex(t, CFIT_VERTEX_SWITCH);
        for (int j = 0; j < g; j++)
            cfit__topo_add_cable(t, k * g + j, nvs, U, 0.5e-6, 0);
    }
    for (int i = 0; i < n; i++)
        cfit__topo_add_cable(t, i, leaf, B, LAT, 1);
    assert_int_equal(cfit__topo_finish(t), 0);
    double S = 1e9, ain = 1e-6, aout = 2 * LAT;
    double want = 2 * (g - 1) * (ain + S / g / U) + 2 * (nodes - 1) * (aout + S / g / nodes / B);
    near(sim(t, CFIT_COLL_ALLREDUCE, CFIT_ALGO_HIERARCHICAL, n, S), want, 0.01);
    /* a placement with 3 ranks on one node and 1 on another is refused */
    int uneven[] = {0, 1, 2, 8};
    cfit_sim_result r;
    cfit_diag d;
    assert_int_equal(cfit_sim_collective(t, CFIT_COLL_ALLREDUCE, CFIT_ALGO_HIERARCHICAL, 4, uneven, S, &r, &d),
                     CFIT_EINVALID);
    cfit_topo_free(t);
}

static double ft_time(const char *spec, int ranks, const int *place, double S)
{
    cfit_topo_params p;
    cfit_topo_params_init(&p);
    cfit_topo *t = NULL;
    cfit_diag d;
    if (cfit_topo_new(spec, &p, &t, &d))
        fail_msg("%s: %s", spec, d.msg);
    cfit_sim_result r;
    if (cfit_sim_collective(t, CFIT_COLL_ALLREDUCE, CFIT_ALGO_RING, ranks, place, S, &r, &d))
        fail_msg("%s: %s", spec, d.msg);
    cfit_topo_free(t);
    return r.time_s;
}

/* k=8: 128 GPUs, 16 per pod, 4 per edge; oversub=2 halves the edge uplinks.  Cross-pod ring:
 * rank i on pod i%8, so every hop leaves its pod and each edge sends 4 flows up: 2x slower.
 * Single-pod ring: pod 0's GPUs in order, so one hop in four leaves its edge: not slower. */
static void oversubscribed_fattree(void **state)
{
    (void)state;
    int cross[128], pod[16];
    for (int i = 0; i < 128; i++)
        cross[i] = (i % 8) * 16 + i / 8;
    for (int i = 0; i < 16; i++)
        pod[i] = i;
    double S = 1e9;
    double full = ft_time("fattree:k=8,gpus=1", 128, cross, S), over = ft_time("fattree:k=8,oversub=2,gpus=1", 128, cross, S);
    near(over / full, 2.0, 0.05);
    double full1 = ft_time("fattree:k=8,gpus=1", 16, pod, S), over1 = ft_time("fattree:k=8,oversub=2,gpus=1", 16, pod, S);
    assert_true(over1 / full1 < 1.1);
}

/* plan --topology's factor: k rings across nodes; 2:1 at the leaf halves their rate. */
static void internode_slowdown(void **state)
{
    (void)state;
    const char *specs[] = {"fattree:k=8", "fattree:k=8,oversub=2"};
    double want[] = {1.0, 2.0};
    for (int i = 0; i < 2; i++) {
        cfit_topo_params p;
        cfit_topo_params_init(&p);
        cfit_topo *t = NULL;
        cfit_diag d;
        assert_int_equal(cfit_topo_new(specs[i], &p, &t, &d), 0);
        double f = 0;
        assert_int_equal(cfit_sim_internode_slowdown(t, 8, 8, &f, &d), 0);
        near(f, want[i], 0.01);
        assert_int_equal(cfit_sim_internode_slowdown(t, 1, 8, &f, &d), 0);
        near(f, 1.0, 1e-12);
        assert_int_equal(cfit_sim_internode_slowdown(t, 1000, 8, &f, &d), 0);   /* clamped to 16 nodes */
        near(f, want[i], 0.01);
        double g = 0;   /* a send-recv with a one-node stride is the rings' step */
        assert_int_equal(cfit_sim_internode_slowdown(t, 8, 8, &f, &d), 0);
        assert_int_equal(cfit_sim_internode_sendrecv_slowdown(t, 8, 8, 8, &g, &d), 0);
        near(g, f, 1e-12);
        assert_int_equal(cfit_sim_internode_sendrecv_slowdown(t, 1, 8, 8, &g, &d), 0);
        near(g, 1.0, 1e-12);
        cfit_topo_free(t);
    }
}

/* One step of 1 GB flows on a 1,056-host dragonfly (p=4, a=8, h=4, one GPU per node) with
 * routing R: uniform (a random permutation) or adversarial (every host to the same host of the
 * next group, 32 flows for one global cable). */
static double dfly_step(const char *routing, int adversarial)
{
    char spec[96];
    snprintf(spec, sizeof spec, "dragonfly:p=4,a=8,h=4,gpus=1,routing=%s", routing);
    cfit_topo_params p;
    cfit_topo_params_init(&p);
    cfit_topo *t = NULL;
    cfit_diag d;
    assert_int_equal(cfit_topo_new(spec, &p, &t, &d), 0);
    int n = cfit_topo_hosts(t), m = 0;
    int *perm = malloc((size_t)n * 3 * sizeof *perm), *src = perm + n, *dst = perm + 2 * n;
    double *bytes = malloc((size_t)n * sizeof *bytes);
    assert_non_null(perm);
    assert_non_null(bytes);
    for (int i = 0; i < n; i++)
        perm[i] = i;
    uint64_t x = 12345;
    for (int i = n - 1; i > 0; i--) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int j = (int)(x % (uint64_t)(i + 1)), tmp = perm[i];
        perm[i] = perm[j], perm[j] = tmp;
    }
    for (int i = 0; i < n; i++) {
        int to = adversarial ? (i + 32) % n : perm[i];
        if (to != i)
            src[m] = i, dst[m] = to, bytes[m++] = 1e9;
    }
    double time = 0;
    assert_int_equal(cfit__sim_flows(t, m, src, dst, bytes, &time, &d), 0);
    free(perm);
    free(bytes);
    cfit_topo_free(t);
    return time;
}

/* UGAL chooses per flow by load: adversarial traffic spreads (as Valiant, 14x faster than
 * minimal), uniform traffic keeps its minimal routes where they are not hot; on both it is
 * within 15% of the better of minimal and Valiant. */
static void dragonfly_ugal(void **state)
{
    (void)state;
    for (int adv = 0; adv < 2; adv++) {
        double tmin = dfly_step("min", adv), tval = dfly_step("valiant", adv), tugal = dfly_step("ugal", adv);
        double best = tmin < tval ? tmin : tval;
        if (tugal > 1.15 * best)
            fail_msg("%s: ugal %g s, min %g s, valiant %g s", adv ? "adversarial" : "uniform", tugal, tmin, tval);
    }
    near(dfly_step("min", 1), 32 * 1e9 / B, 1e-4);   /* the one global cable carries 32 flows */
    assert_true(dfly_step("ugal", 1) < dfly_step("min", 1) / 10);
}

/* A flow split over m paths weighs 1/m on each: on a shared link it gets as much as a
 * single-path flow, not m times as much (flows, not subflows, share fairly).  Two hosts of one
 * edge switch send to other pods (16 core paths each) and a third flow shares host 1's NIC. */
static void weighted_fairness(void **state)
{
    (void)state;
    cfit_topo_params p;
    cfit_topo_params_init(&p);
    p.gpus_per_node = 1;
    cfit_topo *t = NULL;
    cfit_diag d;
    assert_int_equal(cfit_topo_new("fattree:k=8", &p, &t, &d), 0);
    /* host 0 -> host 100 (another pod: 16 paths) and host 1 -> host 100 (the same: both end on
     * host 100's NIC): each gets half of it */
    int src[] = {0, 1}, dst[] = {100, 100};
    double bytes[] = {1e9, 1e9}, time = 0;
    assert_int_equal(cfit__sim_flows(t, 2, src, dst, bytes, &time, &d), 0);
    near(time, 2e9 / B + 6 * LAT, 1e-9);
    /* host 2 -> host 3 (same edge: one path) and host 4 -> host 3 (another pod: 16 paths)
     * share host 3's NIC equally */
    int src2[] = {2, 4 + 96}, dst2[] = {3, 3};
    assert_int_equal(cfit__sim_flows(t, 2, src2, dst2, bytes, &time, &d), 0);
    near(time, 2e9 / B + 6 * LAT, 1e-9);
    cfit_topo_free(t);
}

/* A shift across pods of a full fat-tree (every flow over 16 of its 64 core paths, picked
 * least-loaded per slice) runs at the NIC rate: no artificial collisions. */
static void fattree_shift_balanced(void **state)
{
    (void)state;
    cfit_topo_params p;
    cfit_topo_params_init(&p);
    cfit_topo *t = NULL;
    cfit_diag d;
    assert_int_equal(cfit_topo_new("fattree:k=16", &p, &t, &d), 0);
    int nodes[] = {16, 32, 128};
    for (int i = 0; i < 3; i++) {
        double f = 0;
        assert_int_equal(cfit_sim_internode_sendrecv_slowdown(t, nodes[i], 8, 64, &f, &d), 0);
        near(f, 1.0, 1e-9);
    }
    cfit_topo_free(t);
    /* 144 (k=24) and 100 (k=20) paths between pods in groups of 12 and 10 per aggregation
     * switch: slices of whole groups (12 and 10 subflows) keep every uplink equally loaded */
    const char *specs[] = {"fattree:k=24", "fattree:k=20"};
    int nn[] = {432, 250};
    long strides[] = {1600, 1000};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(cfit_topo_new(specs[i], &p, &t, &d), 0);
        double f = 0;
        assert_int_equal(cfit_sim_internode_sendrecv_slowdown(t, nn[i], 8, strides[i], &f, &d), 0);
        near(f, 1.0, 1e-9);
        cfit_topo_free(t);
    }
    assert_int_equal(cfit_topo_new("railopt:nodes=128", &p, &t, &d), 0);
    double f = 0;   /* cross-rail: 3 of 8 GPUs send to the next node's other rails */
    assert_int_equal(cfit_sim_internode_sendrecv_slowdown(t, 128, 8, 3, &f, &d), 0);
    near(f, 1.0, 1e-9);
    cfit_topo_free(t);
}

/* plan's size-dependent factor: on a 2:1 fat-tree small messages are latency-bound (factor
 * near 1), large ones rate-bound (2); a CP-style exchange in groups stays inside them. */
static void internode_curve(void **state)
{
    (void)state;
    cfit_topo_params p;
    cfit_topo_params_init(&p);
    cfit_topo *t = NULL;
    cfit_diag d;
    assert_int_equal(cfit_topo_new("fattree:k=8,oversub=2", &p, &t, &d), 0);
    cfit_sim_exchange x = {8, 8, 8, 0, 50e9, 10e-6};
    double sz[3] = {1e3, 5e5, 1e10}, f[3];
    assert_int_equal(cfit_sim_internode_curve(t, &x, 3, sz, f, &d), 0);
    assert_true(f[0] >= 1.0 && f[0] < 1.01);
    assert_true(f[1] > f[0] && f[1] < f[2]);
    near(f[2], 2.0, 0.01);
    near(f[1], (5e5 / 25e9 + 10e-6) / (5e5 / 50e9 + 10e-6), 0.01);   /* T(b) / (b/bw + latency) */
    x.group = 8;   /* groups of one node: nothing leaves a node */
    assert_int_equal(cfit_sim_internode_curve(t, &x, 3, sz, f, &d), 0);
    near(f[2], 1.0, 1e-12);
    cfit_topo_free(t);
}

/* All-to-all's mirrored steps (step n - k = step k reversed, solved once on a fat-tree) give
 * the same result as simulating every step: time, hottest links and bottleneck tier, with
 * linear and random placement and an oversubscribed tree. */
static void alltoall_mirror_shortcut(void **state)
{
    (void)state;
    const char *specs[] = {"fattree:k=8", "fattree:k=16,oversub=2", "fattree:k=8,gpus=1"};
    int ranks[] = {128, 200, 97};
    for (int i = 0; i < 3; i++) {
        cfit_topo_params p;
        cfit_topo_params_init(&p);
        cfit_topo *t = NULL;
        cfit_diag d;
        assert_int_equal(cfit_topo_new(specs[i], &p, &t, &d), 0);
        int n = ranks[i], hosts = cfit_topo_hosts(t), *place = malloc((size_t)hosts * sizeof *place);
        assert_non_null(place);
        for (int h = 0; h < hosts; h++)
            place[h] = (h * 37 + 11) % hosts;   /* 37 is prime to every host count here: a permutation */
        for (int random = 0; random < 2; random++) {
            cfit_sim_result fast, slow;
            cfit__sim_mirror_off = 0;
            assert_int_equal(cfit_sim_collective(t, CFIT_COLL_ALLTOALL, CFIT_ALGO_RING, n, random ? place : NULL,
                                                 64e6, &fast, &d), 0);
            cfit__sim_mirror_off = 1;
            assert_int_equal(cfit_sim_collective(t, CFIT_COLL_ALLTOALL, CFIT_ALGO_RING, n, random ? place : NULL,
                                                 64e6, &slow, &d), 0);
            cfit__sim_mirror_off = 0;
            near(fast.time_s, slow.time_s, 1e-12);
            assert_int_equal(fast.steps, slow.steps);
            assert_int_equal(fast.flows, slow.flows);
            assert_true(fast.flows_solved < slow.flows_solved);
            assert_int_equal(fast.bottleneck_tier, slow.bottleneck_tier);
            assert_int_equal(fast.nhot, slow.nhot);
            for (int h = 0; h < fast.nhot; h++)
                near(fast.hot_link_bytes[h], slow.hot_link_bytes[h], 1e-9);
        }
        free(place);
        cfit_topo_free(t);
    }
}

/* A step solved in one block of a fat-tree's aggregation planes (sim.c step_planes) gives the
 * result of solving every subflow (the test hook's reference): time, schedule size, bottleneck
 * tier and the bytes of the hottest links, for the collectives whose steps it serves, on full,
 * tapered and node-less trees, linear and random placement, and with a failed link (no planes). */
static void plane_block_solve(void **state)
{
    (void)state;
    const char *specs[] = {"fattree:k=8", "fattree:k=16,oversub=2", "fattree:k=8,gpus=1", "fattree:k=12",
                           "fattree:k=16"};
    int ranks[] = {128, 200, 97, 300, 256};   /* the reference solve is the slow one: keep ASan runs short */
    cfit_collective colls[] = {CFIT_COLL_ALLTOALL, CFIT_COLL_ALLREDUCE, CFIT_COLL_ALLGATHER};
    for (int i = 0; i < 5; i++) {
        cfit_topo_params p;
        cfit_topo_params_init(&p);
        cfit_topo *t = NULL;
        cfit_diag d;
        assert_int_equal(cfit_topo_new(specs[i], &p, &t, &d), 0);
        int n = ranks[i], hosts = cfit_topo_hosts(t), *place = malloc((size_t)hosts * sizeof *place);
        assert_non_null(place);
        for (int h = 0; h < hosts; h++)
            place[h] = (h * 37 + 11) % hosts;   /* 37 is prime to every host count here */
        for (int run = 0; run < 7; run++) {
            int random = run % 2, failed = run == 6;
            if (failed)
                t->links[cfit_topo_links(t) - 1].failed = 1;
            cfit_sim_result fast, ref;
            cfit_collective c = colls[run / 2 % 3];
            cfit__sim_planes_off = 0;
            assert_int_equal(cfit_sim_collective(t, c, CFIT_ALGO_RING, n, random ? place : NULL, 64e6, &fast, &d), 0);
            cfit__sim_planes_off = 1;
            assert_int_equal(cfit_sim_collective(t, c, CFIT_ALGO_RING, n, random ? place : NULL, 64e6, &ref, &d), 0);
            cfit__sim_planes_off = 0;
            near(fast.time_s, ref.time_s, 1e-12);
            assert_int_equal(fast.steps, ref.steps);
            assert_int_equal(fast.flows, ref.flows);
            assert_int_equal(fast.flows_solved, ref.flows_solved);
            assert_int_equal(fast.bottleneck_tier, ref.bottleneck_tier);
            assert_int_equal(fast.nhot, ref.nhot);
            for (int h = 0; h < fast.nhot; h++)
                near(fast.hot_link_bytes[h], ref.hot_link_bytes[h], 1e-9);
            if (failed)
                t->links[cfit_topo_links(t) - 1].failed = 0;
        }
        free(place);
        cfit_topo_free(t);
    }
}

/* alltoallv: spread 0 and imbalance 1 is alltoall (16-byte parts); nccl-tests' pattern sums to
 * the size; the hot rank's load makes it the busiest at imbalance x the parts; the mirrored
 * steps solved once give what simulating each gives; bad patterns are refused. */
static void alltoallv_pattern(void **state)
{
    (void)state;
    cfit_topo_params p;
    cfit_topo_params_init(&p);
    cfit_topo *t = NULL;
    cfit_diag d;
    assert_int_equal(cfit_topo_new("fattree:k=8", &p, &t, &d), 0);
    cfit_sim_state *s = cfit_sim_state_new(t, &d);
    assert_non_null(s);
    cfit_sim_result a, v, ref;
    double size = 64.0 * (1 << 20);   /* a multiple of 16 x 128: the uniform parts are exact */
    assert_int_equal(cfit_sim_run(s, CFIT_COLL_ALLTOALL, CFIT_ALGO_RING, 128, NULL, size, &a, NULL, &d), 0);
    cfit_sim_alltoallv pat = {0, 1};
    assert_int_equal(cfit_sim_state_set_alltoallv(s, &pat, &d), 0);
    assert_int_equal(cfit_sim_run(s, CFIT_COLL_ALLTOALLV, CFIT_ALGO_RING, 128, NULL, size, &v, NULL, &d), 0);
    near(v.time_s, a.time_s, 1e-12);
    near(v.algbw_bytes_per_s, a.algbw_bytes_per_s, 1e-12);
    pat = (cfit_sim_alltoallv){1, 1};   /* nccl-tests' default: d x size / (n(n-1)/2) to distance d */
    double sum = 0;
    for (int j = 1; j < 100; j++)
        sum += cfit_sim_alltoallv_bytes(&pat, 100, 1e8, 3, (3 + j) % 100);
    near(sum, 1e8, 1e-3);
    assert_true(cfit_sim_alltoallv_bytes(&pat, 100, 1e8, 3, 4) < cfit_sim_alltoallv_bytes(&pat, 100, 1e8, 3, 2));
    pat = (cfit_sim_alltoallv){0, 3};   /* rank 0 receives 3x the uniform part, the others (100-3)/99 of it */
    near(cfit_sim_alltoallv_bytes(&pat, 100, 1.6e6, 5, 0), 3 * 16000, 1e-12);
    near(cfit_sim_alltoallv_bytes(&pat, 100, 1.6e6, 5, 7), (100 - 3) / 99.0 * 16000, 1e-12);
    pat = (cfit_sim_alltoallv){0.5, 3};   /* half way: 8000 + 95 x 1.6e6 / 4950 / 2, down to 16 bytes, x 3 */
    near(cfit_sim_alltoallv_bytes(&pat, 100, 1.6e6, 5, 0), 23344.0 * 3, 1e-12);
    for (int off = 0; off < 2; off++) {   /* the mirrored steps: solved once, or each */
        cfit__sim_mirror_off = off;
        assert_int_equal(cfit_sim_state_set_alltoallv(s, &pat, &d), 0);
        assert_int_equal(cfit_sim_run(s, CFIT_COLL_ALLTOALLV, CFIT_ALGO_RING, 100, NULL, size, off ? &ref : &v,
                                      NULL, &d), 0);
    }
    cfit__sim_mirror_off = 0;
    near(v.time_s, ref.time_s, 1e-12);
    assert_true(v.flows_solved < ref.flows_solved);
    assert_true(v.time_s > a.time_s);   /* the hot rank receives 3x */
    near(v.algbw_bytes_per_s * v.time_s, cfit_sim_alltoallv_busiest(&pat, 100, size), 1e-12);
    pat = (cfit_sim_alltoallv){1.5, 1};
    assert_int_equal(cfit_sim_state_set_alltoallv(s, &pat, &d), CFIT_EINVALID);
    pat = (cfit_sim_alltoallv){0, 0.5};
    assert_int_equal(cfit_sim_state_set_alltoallv(s, &pat, &d), CFIT_EINVALID);
    pat = (cfit_sim_alltoallv){0, 200};
    assert_int_equal(cfit_sim_state_set_alltoallv(s, &pat, &d), 0);
    assert_int_equal(cfit_sim_run(s, CFIT_COLL_ALLTOALLV, CFIT_ALGO_RING, 128, NULL, size, &v, NULL, &d),
                     CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "more than the 128 ranks"));
    cfit_sim_state_free(s);
    cfit_topo_free(t);
}

/* Routes longer than the first path buffer (64 links) are routed: the buffer grows to the
 * simulator's limit of 4096 links per route; a longer route is CFIT_ERANGE naming its length
 * and the limit, from the collectives and from cfit_sim_internode_curve (never a factor 1). */
static cfit_topo *ring_of(const char *spec, const char *fail)
{
    cfit_topo_params p;
    cfit_topo_params_init(&p);
    p.link_bw_bytes_per_s = B, p.link_latency_s = LAT, p.gpus_per_node = 1;
    cfit_topo *t = NULL;
    cfit_diag d;
    cfit_diag_clear(&d);
    if (cfit_topo_new(spec, &p, &t, &d) || (fail && cfit_topo_fail_spec(t, fail, &d)))
        fail_msg("topology '%s': %s", spec, d.msg);
    return t;
}

static void long_routes(void **state)
{
    (void)state;
    cfit_diag d;
    double time, bytes[1] = {1e6};
    /* torus3d:127x1x1: host 0 to host 63 is 63 torus hops + 2 NIC cables = 65 links */
    cfit_topo *t = ring_of("torus3d:127x1x1,gpus=1", NULL);
    int src[1] = {0}, dst[1] = {63};
    cfit_diag_clear(&d);
    assert_int_equal(cfit__sim_flows(t, 1, src, dst, bytes, &time, &d), 0);
    near(time, 1e6 / B + 65 * LAT, 1e-12);
    int ranks = cfit_topo_hosts(t), *place = malloc((size_t)ranks * sizeof *place);
    assert_non_null(place);
    for (int r = 0; r < ranks; r++)   /* every rank 63 hosts from the last: each step crosses 65 links */
        place[r] = (int)((long)r * 63 % ranks);
    cfit_sim_result r;
    assert_int_equal(cfit_sim_collective(t, CFIT_COLL_SENDRECV, CFIT_ALGO_RING, ranks, place, 1e6, &r, &d), 0);
    free(place);
    assert_true(r.time_s > 1e6 / B + 65 * LAT * 0.999);
    cfit_topo_free(t);

    /* at the limit: the failed cable sends host 0 to host 1 the long way, 4094 hops + 2 */
    t = ring_of("torus3d:4095x1x1,gpus=1", "sw0-sw1");
    src[0] = 0, dst[0] = 1;
    assert_int_equal(cfit__sim_flows(t, 1, src, dst, bytes, &time, &d), 0);
    near(time, 1e6 / B + 4096 * LAT, 1e-12);
    cfit_topo_free(t);
    /* one hop over it */
    t = ring_of("torus3d:4096x1x1,gpus=1", "sw0-sw1");
    cfit_diag_clear(&d);
    assert_int_equal(cfit__sim_flows(t, 1, src, dst, bytes, &time, &d), CFIT_ERANGE);
    assert_non_null(strstr(d.msg, "torus3d: the route from rank 0 (host 0) to rank 1 (host 1) takes 4097 links"));
    assert_non_null(strstr(d.msg, "limit of 4096 links per route"));
    cfit_diag_clear(&d);
    assert_int_equal(cfit_sim_collective(t, CFIT_COLL_SENDRECV, CFIT_ALGO_RING, 2, NULL, 1e6, &r, &d), CFIT_ERANGE);
    assert_non_null(strstr(d.msg, "takes 4097 links"));
    /* the exchange factors: an error, whatever the factors were left at */
    cfit_sim_exchange x = {2, 1, 1, 0, 0, 0};
    double sz[2] = {1e3, 1e9}, f[2] = {0, 0};
    cfit_diag_clear(&d);
    assert_int_equal(cfit_sim_internode_curve(t, &x, 2, sz, f, &d), CFIT_ERANGE);
    assert_non_null(strstr(d.msg, "limit of 4096"));
    cfit_topo_free(t);
}

/* ---- the caller-owned state (sim.h cfit_sim_state) ---- */

static void same_result(const cfit_sim_result *a, const cfit_sim_result *b)
{
    assert_true(a->time_s == b->time_s);   /* bit for bit: the same solve */
    assert_true(a->algbw_bytes_per_s == b->algbw_bytes_per_s && a->busbw_bytes_per_s == b->busbw_bytes_per_s);
    assert_int_equal(a->steps, b->steps);
    assert_int_equal(a->flows, b->flows);
    assert_int_equal(a->flows_solved, b->flows_solved);
    assert_int_equal(a->bottleneck_tier, b->bottleneck_tier);
    assert_int_equal(a->nhot, b->nhot);
    for (int i = 0; i < a->nhot; i++)
        assert_true(a->hot_links[i] == b->hot_links[i] && a->hot_link_bytes[i] == b->hot_link_bytes[i]);
}

static void state_lifecycle(void **state)
{
    (void)state;
    cfit_sim_state_free(NULL);   /* a no-op */
    cfit_diag d;
    cfit_diag_clear(&d);
    assert_null(cfit_sim_state_new(NULL, &d));
    assert_non_null(strstr(d.msg, "no topology"));
    cfit_topo *t = star(4);
    cfit_sim_state *s = cfit_sim_state_new(t, &d);
    assert_non_null(s);
    assert_ptr_equal(cfit_sim_state_topo(s), t);
    cfit_sim_result r;
    assert_int_equal(cfit_sim_run(NULL, CFIT_COLL_ALLREDUCE, CFIT_ALGO_RING, 4, NULL, 1e6, &r, NULL, &d),
                     CFIT_EINVALID);
    assert_int_equal(cfit_sim_run(s, CFIT_COLL_ALLREDUCE, CFIT_ALGO_RING, 5, NULL, 1e6, &r, NULL, &d), CFIT_EINVALID);
    assert_int_equal(cfit_sim_run(s, CFIT_COLL_ALLREDUCE, CFIT_ALGO_RING, 4, NULL, 1e6, &r, NULL, &d), 0);
    cfit_sim_state_free(s);
    cfit_topo_free(t);
}

/* Two states on one (const) topology give the same results as each other and as a fresh
 * state per call, whatever either solved before: a ring, an all-to-all, a hierarchical
 * all-reduce and the exchange curve, on a fat-tree (indexed paths), an adaptive dragonfly and a
 * rail-optimised fabric; and after a link fails between two solves of one state. */
static void states_agree(void **state)
{
    (void)state;
    static const char *const specs[] = {"fattree:k=8,oversub=2", "dragonfly:p=2,a=4,h=2,gpus=1,routing=ugal",
                                        "railopt:nodes=4"};
    for (int i = 0; i < 3; i++) {
        cfit_topo_params p;
        cfit_topo_params_init(&p);
        cfit_topo *t = NULL;
        cfit_diag d;
        assert_int_equal(cfit_topo_new(specs[i], &p, &t, &d), 0);
        const cfit_topo *ct = t;
        int n = cfit_topo_hosts(ct), nl = cfit_topo_links(ct);
        cfit_sim_state *a = cfit_sim_state_new(ct, &d), *b = cfit_sim_state_new(ct, &d);
        assert_non_null(a);
        assert_non_null(b);
        double *la = calloc((size_t)nl, sizeof *la), *lb = calloc((size_t)nl, sizeof *lb);
        assert_non_null(la);
        assert_non_null(lb);
        cfit_sim_result ra, rb, rf;
        assert_int_equal(cfit_sim_run(a, CFIT_COLL_ALLREDUCE, CFIT_ALGO_RING, n, NULL, 1e8, &ra, NULL, &d), 0);
        assert_int_equal(cfit_sim_run(a, CFIT_COLL_ALLTOALL, CFIT_ALGO_RING, n, NULL, 1e8, &ra, la, &d), 0);
        assert_int_equal(cfit_sim_run(b, CFIT_COLL_ALLTOALL, CFIT_ALGO_RING, n, NULL, 1e8, &rb, lb, &d), 0);
        assert_int_equal(cfit_sim_collective(ct, CFIT_COLL_ALLTOALL, CFIT_ALGO_RING, n, NULL, 1e8, &rf, &d), 0);
        same_result(&ra, &rb);
        same_result(&ra, &rf);
        assert_memory_equal(la, lb, (size_t)nl * sizeof *la);
        cfit_algo ar = cfit_topo_gpus_per_node(ct) > 1 ? CFIT_ALGO_HIERARCHICAL : CFIT_ALGO_TREE;
        assert_int_equal(cfit_sim_run(a, CFIT_COLL_ALLREDUCE, ar, n, NULL, 1e8, &ra, NULL, &d), 0);
        assert_int_equal(cfit_sim_collective(ct, CFIT_COLL_ALLREDUCE, ar, n, NULL, 1e8, &rf, &d), 0);
        same_result(&ra, &rf);
        cfit_sim_exchange x = {4, 1, 0, 0, 50e9, 5e-6};
        double sz[3] = {1e3, 1e6, 1e9}, fa[3], fb[3];
        assert_int_equal(cfit_sim_state_curve(a, &x, 3, sz, fa, &d), 0);
        assert_int_equal(cfit_sim_internode_curve(ct, &x, 3, sz, fb, &d), 0);
        assert_memory_equal(fa, fb, sizeof fa);
        t->links[nl - 2].failed = t->links[nl - 1].failed = 1;   /* a switch cable: indexed paths off */
        int rc = cfit_sim_run(a, CFIT_COLL_ALLREDUCE, CFIT_ALGO_RING, n, NULL, 1e8, &ra, NULL, &d);
        assert_int_equal(cfit_sim_collective(ct, CFIT_COLL_ALLREDUCE, CFIT_ALGO_RING, n, NULL, 1e8, &rf, &d), rc);
        if (rc == 0)
            same_result(&ra, &rf);
        free(la), free(lb);
        cfit_sim_state_free(a);
        cfit_sim_state_free(b);
        cfit_topo_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ring_matches_alpha_beta),
        cmocka_unit_test(link_bytes_reported),
        cmocka_unit_test(rabenseifner_matches_alpha_beta),
        cmocka_unit_test(tree_matches_alpha_beta),
        cmocka_unit_test(bus_factors),
        cmocka_unit_test(state_lifecycle),
        cmocka_unit_test(states_agree),
        cmocka_unit_test(two_flows_share_a_link),
        cmocka_unit_test(bottleneck_elsewhere_leaves_the_rest),
        cmocka_unit_test(errors),
        cmocka_unit_test(hierarchical_matches_closed_form),
        cmocka_unit_test(oversubscribed_fattree),
        cmocka_unit_test(internode_slowdown),
        cmocka_unit_test(dragonfly_ugal),
        cmocka_unit_test(alltoall_mirror_shortcut),
        cmocka_unit_test(plane_block_solve),
        cmocka_unit_test(alltoallv_pattern),
        cmocka_unit_test(internode_curve),
        cmocka_unit_test(long_routes),
        cmocka_unit_test(weighted_fairness),
        cmocka_unit_test(fattree_shift_balanced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
