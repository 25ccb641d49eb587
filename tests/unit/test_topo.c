/* test_topo.c - topology graphs (src/sim/topo*.c): builder, routing, closed forms, failures, specs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterfit/topo.h"
#include "sim/topo_internal.h"

#define MAXP 64
#define MAXL 32

static cfit_topo *make(const char *spec, int gpus)
{
    cfit_topo_params p;
    cfit_diag d;
    cfit_topo *t = NULL;
    cfit_topo_params_init(&p);
    p.gpus_per_node = gpus;
    cfit_diag_clear(&d);
    int rc = cfit_topo_new(spec, &p, &t, &d);
    if (rc)
        fail_msg("'%s' rejected: %s (%s)", spec, cfit_err_name(rc), d.msg);
    return t;
}

/* Every path is a chain of non-failed links from src's vertex to dst's vertex. */
static void check_paths(const cfit_topo *t, int src, int dst, const int *paths, const int *lens, int n)
{
    for (int i = 0; i < n; i++) {
        int v = cfit_topo_host_vertex(t, src);
        assert_true(lens[i] >= 1 && lens[i] <= MAXL);
        for (int j = 0; j < lens[i]; j++) {
            const cfit_link *l = cfit_topo_link(t, paths[i * MAXL + j]);
            assert_non_null(l);
            assert_int_equal(l->from, v);
            assert_false(l->failed);
            v = l->to;
            if (j + 1 < lens[i])
                assert_int_equal(cfit_topo_vertex_kind(t, v), CFIT_VERTEX_SWITCH);
        }
        assert_int_equal(v, cfit_topo_host_vertex(t, dst));
    }
}

static int paths_of(const cfit_topo *t, int src, int dst, int flow, int *paths, int *lens)
{
    int n = cfit_topo_paths(t, src, dst, flow, paths, lens, MAXP, MAXL);
    assert_true(n >= 0);
    check_paths(t, src, dst, paths, lens, n);
    return n;
}

static int out_hops(const cfit_topo *t, const int *path, int len)
{
    int n = 0;
    for (int j = 0; j < len; j++)
        n += cfit_topo_link(t, path[j])->tier > 0;
    return n;
}

/* Two switches joined by two parallel cables, two GPUs under each. */
static void test_custom_graph(void **state)
{
    (void)state;
    cfit_topo *t = cfit__topo_alloc("custom", NULL);
    assert_non_null(t);
    int g[4], s0, s1;
    for (int i = 0; i < 4; i++)
        g[i] = cfit__topo_add_vertex(t, CFIT_VERTEX_GPU);
    s0 = cfit__topo_add_vertex(t, CFIT_VERTEX_SWITCH);
    s1 = cfit__topo_add_vertex(t, CFIT_VERTEX_SWITCH);
    for (int i = 0; i < 4; i++)
        assert_int_equal(cfit__topo_add_cable(t, g[i], i < 2 ? s0 : s1, 1e9, 1e-6, 1), 2 * i);
    int c0 = cfit__topo_add_cable(t, s0, s1, 1e9, 1e-6, 2);
    int c1 = cfit__topo_add_cable(t, s0, s1, 1e9, 1e-6, 2);
    assert_int_equal(c1, c0 + 2);
    assert_int_equal(cfit__topo_finish(t), CFIT_EOK);
    assert_int_equal(cfit_topo_hosts(t), 4);
    assert_int_equal(cfit_topo_vertices(t), 6);
    assert_int_equal(cfit_topo_switches(t), 2);
    assert_int_equal(cfit_topo_links(t), 12);
    assert_int_equal(cfit_topo_host_vertex(t, 3), g[3]);
    assert_string_equal(cfit_topo_kind_name(t), "custom");
    const cfit_link *l = cfit_topo_link(t, c0 + 1);
    assert_int_equal(l->from, s1);
    assert_int_equal(l->to, s0);

    int paths[MAXP * MAXL], lens[MAXP];
    assert_int_equal(paths_of(t, 0, 1, -1, paths, lens), 1);   /* same switch */
    assert_int_equal(lens[0], 2);
    assert_int_equal(paths_of(t, 0, 2, -1, paths, lens), 2);   /* two parallel cables */
    assert_int_equal(lens[0], 3);
    assert_int_equal(lens[1], 3);
    assert_int_not_equal(paths[1], paths[MAXL + 1]);
    /* A flow hashes onto one of them, the same one every time, and flows spread over both. */
    int seen[2] = {0, 0};
    for (int f = 0; f < 64; f++) {
        assert_int_equal(paths_of(t, 0, 2, f, paths, lens), 1);
        int again[MAXL], alen[1];
        assert_int_equal(cfit_topo_paths(t, 0, 2, f, again, alen, 1, MAXL), 1);
        assert_int_equal(again[1], paths[1]);
        seen[paths[1] == c0]++;
    }
    assert_true(seen[0] > 8 && seen[1] > 8);
    /* max caps the count; too short a max_len is an error; bad hosts are invalid. */
    assert_int_equal(cfit_topo_paths(t, 0, 2, -1, paths, lens, 1, MAXL), 1);
    assert_int_equal(cfit_topo_paths(t, 0, 2, -1, paths, lens, 4, 2), CFIT_ERANGE);
    assert_int_equal(cfit_topo_paths(t, 0, 0, -1, paths, lens, 4, MAXL), CFIT_EINVALID);
    assert_int_equal(cfit_topo_paths(t, 0, 9, -1, paths, lens, 4, MAXL), CFIT_EINVALID);
    /* Fail one cable: one path left; fail both: none. */
    t->links[c0].failed = t->links[c0 + 1].failed = 1;
    assert_int_equal(paths_of(t, 0, 2, -1, paths, lens), 1);
    assert_int_equal(paths[1], c1);
    t->links[c1].failed = t->links[c1 + 1].failed = 1;
    assert_int_equal(paths_of(t, 0, 2, -1, paths, lens), 0);
    assert_int_equal(paths_of(t, 0, 2, 7, paths, lens), 0);
    assert_int_equal(paths_of(t, 0, 1, -1, paths, lens), 1);
    cfit_topo_info info;
    assert_int_equal(cfit_topo_describe(t, &info), CFIT_EOK);
    assert_int_equal(info.hosts, 4);
    assert_int_equal(info.switches, 2);
    assert_int_equal(info.links, 6);
    cfit_topo_free(t);
    cfit_topo_free(NULL);
}

/* Ties in hops go to the path with fewer scale-out links: a GPU pair that shares both a
 * scale-up switch and a leaf talks over the scale-up switch. */
static void test_scaleup_preferred(void **state)
{
    (void)state;
    cfit_topo *t = make("fattree:k=8", 2);   /* 4 GPUs, two nodes, per edge switch */
    int paths[MAXP * MAXL], lens[MAXP];
    assert_int_equal(paths_of(t, 0, 1, -1, paths, lens), 1);
    assert_int_equal(out_hops(t, paths, lens[0]), 0);
    assert_int_equal(paths_of(t, 1, 2, -1, paths, lens), 1);   /* next node, same edge */
    assert_int_equal(out_hops(t, paths, lens[0]), 2);
    cfit_topo_free(t);
}

static void test_fattree_counts(void **state)
{
    (void)state;
    for (int k = 2; k <= 16; k += 2) {
        char spec[32];
        snprintf(spec, sizeof spec, "fattree:k=%d", k);
        cfit_topo *t = make(spec, 8);
        cfit_topo_info info;
        assert_int_equal(cfit_topo_describe(t, &info), CFIT_EOK);
        int hosts = k * k * k / 4, nodes = (hosts + 7) / 8;
        assert_int_equal(info.hosts, hosts);
        assert_int_equal(info.switches, 5 * k * k / 4 + nodes);
        /* NIC cables + edge-agg + agg-core + scale-up */
        assert_int_equal(info.links, hosts + k * k * k / 4 + k * k * k / 4 + hosts);
        assert_int_equal(info.diameter, 6);
        assert_true(fabs(info.bisection_bytes_per_s - hosts / 2 * 50e9) < 1.0);
        cfit_topo_free(t);
    }
}

static void test_fattree_ecmp(void **state)
{
    (void)state;
    cfit_topo *t = make("fattree:k=8", 4);   /* 128 GPUs, 16 per pod */
    int paths[MAXP * MAXL], lens[MAXP];
    assert_int_equal(paths_of(t, 0, 127, -1, paths, lens), 16);   /* (k/2)^2 between pods */
    for (int i = 0; i < 16; i++)
        assert_int_equal(out_hops(t, paths + i * MAXL, lens[i]), 6);
    assert_int_equal(paths_of(t, 0, 15, -1, paths, lens), 4);     /* k/2 inside a pod */
    assert_int_equal(paths_of(t, 0, 5, -1, paths, lens), 4);      /* next edge switch */
    assert_int_equal(out_hops(t, paths, lens[0]), 4);
    assert_int_equal(paths_of(t, 0, 3, -1, paths, lens), 1);      /* same node */
    assert_int_equal(out_hops(t, paths, lens[0]), 0);
    cfit_topo_free(t);
}

/* The fat-tree's structured router gives exactly the paths the generic BFS finds. */
static void same_as_bfs(const char *spec, int gpus)
{
    cfit_topo *t = make(spec, gpus);
    int h = cfit_topo_hosts(t);
    static int pa[MAXP * MAXL], la[MAXP], pb[MAXP * MAXL], lb[MAXP];
    for (int a = 0; a < h; a++)
        for (int b = 0; b < h; b++) {
            if (a == b)
                continue;
            int n = paths_of(t, a, b, -1, pa, la);
            int m = cfit__topo_route_shortest(t, NULL, a, b, -1, pb, lb, MAXP, MAXL);
            if (n != m)
                fail_msg("%s %d->%d: %d paths, BFS %d", spec, a, b, n, m);
            for (int i = 0; i < n; i++) {
                int found = 0;
                for (int j = 0; j < m && !found; j++)
                    found = la[i] == lb[j] && !memcmp(pa + i * MAXL, pb + j * MAXL,
                                                      (size_t)la[i] * sizeof(int));
                assert_true(found);
            }
        }
    cfit_topo_free(t);
}

static void test_fattree_router(void **state)
{
    (void)state;
    same_as_bfs("fattree:k=4", 2);
    same_as_bfs("fattree:k=6", 4);
    same_as_bfs("fattree:k=8,oversub=2", 4);
    same_as_bfs("fattree:k=8,oversub=4", 1);
}

static void test_fattree_oversub(void **state)
{
    (void)state;
    cfit_topo *t = make("fattree:k=8,oversub=2", 4);
    cfit_topo_info info;
    cfit_topo_describe(t, &info);
    assert_true(fabs(info.bisection_bytes_per_s - 128 / 2 * 50e9 / 2) < 1.0);
    /* u = 2 uplinks per edge: 2 aggregation switches per pod, 2 * 4 cores */
    assert_int_equal(info.switches, 8 * 4 + 8 * 2 + 2 * 4 + 32);
    assert_int_equal(info.links, 128 + 8 * 4 * 2 + 8 * 2 * 4 + 128);
    int paths[MAXP * MAXL], lens[MAXP];
    assert_int_equal(paths_of(t, 0, 127, -1, paths, lens), 8);    /* 2 uplinks x 4 cores */
    cfit_topo_free(t);
}


/* The longest route between any two hosts, in scale-out links, equals info.diameter. */
static void check_diameter(const char *spec, int gpus)
{
    cfit_topo *t = make(spec, gpus);
    cfit_topo_info info;
    cfit_topo_describe(t, &info);
    int paths[MAXP * MAXL], lens[MAXP], worst = 0;
    for (int a = 0; a < info.hosts; a++)
        for (int b = 0; b < info.hosts; b++) {
            if (a == b)
                continue;
            int n = paths_of(t, a, b, -1, paths, lens);
            assert_true(n >= 1);
            int h = out_hops(t, paths, lens[0]);
            worst = h > worst ? h : worst;
        }
    if (worst != info.diameter)
        fail_msg("%s: longest route %d links, describe says %d", spec, worst, info.diameter);
    cfit_topo_free(t);
}

static void test_diameters(void **state)
{
    (void)state;
    check_diameter("fattree:k=4", 2);
    check_diameter("railopt:nodes=6,su_nodes=4,gpus=2,spines=3", 2);
    check_diameter("railopt:nodes=3,gpus=1", 1);
    check_diameter("torus3d:4x3x2", 1);
    check_diameter("torus3d:5x1x1,gpus=2", 8);
    check_diameter("dragonfly:p=1,a=2,h=1", 1);
    check_diameter("dragonfly:p=2,a=4,h=2", 2);
}

static void check_info(const char *spec, int gpus, int hosts, int switches, int cables, double cut)
{
    cfit_topo *t = make(spec, gpus);
    cfit_topo_info info;
    assert_int_equal(cfit_topo_describe(t, &info), CFIT_EOK);
    if (info.hosts != hosts || info.switches != switches || info.links != cables)
        fail_msg("%s: %d hosts %d switches %d cables, want %d %d %d", spec, info.hosts,
                 info.switches, info.links, hosts, switches, cables);
    if (fabs(info.bisection_bytes_per_s - cut * 50e9) > 1.0)
        fail_msg("%s: bisection %g links, want %g", spec, info.bisection_bytes_per_s / 50e9, cut);
    cfit_topo_free(t);
}

/* Closed forms: SuperPOD table 4 (railopt), Kim et al. (dragonfly), k-ary n-cube (torus). */
static void test_closed_forms(void **state)
{
    (void)state;
    /* 1 SU: 32 nodes, 8 leaves + 4 spines, 256 node cables and 256 leaf-spine cables */
    check_info("railopt:su=1,gpus=8", 8, 256, 8 + 4 + 32, 256 + 256 + 256, 128);
    check_info("railopt:su=4", 8, 1024, 32 + 16 + 128, 3 * 1024, 512);
    check_info("railopt:nodes=40,gpus=4,spines=3", 4, 160, 8 + 3 + 40, 160 + 8 * 32 + 160, 80);
    /* balanced a=2p=2h, g=a*h+1: N = a*p*g, g(g-1)/2 global cables, cut floor(g/2)*ceil(g/2) */
    check_info("dragonfly:p=2,a=4,h=2", 1, 72, 36, 72 + 9 * 6 + 36, 20);
    check_info("dragonfly:p=4,a=8,h=4,gpus=4", 4, 1056, 264 + 264, 1056 + 33 * 28 + 528 + 1056,
               16 * 17);
    /* g=3 < a*h+1 = 9: L = 8/2 = 4 cables per pair of groups, cut 4*1*2 */
    check_info("dragonfly:p=2,a=4,h=2,g=3", 1, 24, 12, 24 + 3 * 6 + 12, 8);
    check_info("dragonfly:p=1,a=3,h=1,g=1", 1, 3, 3, 3 + 3, 1);
    check_info("dragonfly:p=2,a=1,g=1", 1, 2, 1, 2, 1);   /* one router: the NICs limit */
    /* X x Y x Z: cut across the largest dimension, 2*N/n_max cables */
    check_info("torus3d:4x4x4", 1, 64, 64, 64 + 3 * 64, 32);
    check_info("torus3d:8x4x2,gpus=4", 4, 256, 64 + 64, 256 + 64 * 3 + 256, 16);
    check_info("torus3d:x=2,y=3,z=4", 1, 24, 24, 24 + 24 * 3, 12);
    check_info("torus3d:3x1x1", 1, 3, 3, 3 + 3, 1);
}

static int vertex(const cfit_topo *t, const char *name)
{
    int v = cfit__topo_find_vertex(t, name);
    assert_true(v >= 0);
    return v;
}

/* Count scale-out cables between switches whose index under prefix splits by side(). */
static int cut_cables(const cfit_topo *t, const char *first, int per, int half)
{
    int v0 = vertex(t, first), n = 0;
    for (int l = 0; l < cfit_topo_links(t); l += 2) {
        const cfit_link *k = cfit_topo_link(t, l);
        if (k->from < v0 || k->to < v0 || k->tier == 0)
            continue;
        int a = (k->from - v0) / per, b = (k->to - v0) / per;
        n += (a < half) != (b < half);
    }
    return n;
}

/* The closed forms count the cables the builder really laid across the cut. */
static void test_cuts_in_graph(void **state)
{
    (void)state;
    cfit_topo *t = make("dragonfly:p=2,a=4,h=2", 1);
    assert_int_equal(cut_cables(t, "r0", 4, 4), 4 * 5);   /* groups 0-3 vs 4-8 */
    cfit_topo_free(t);
    t = make("torus3d:8x4x2", 1);
    int n = 0, v0 = vertex(t, "sw0");
    for (int l = 0; l < cfit_topo_links(t); l += 2) {
        const cfit_link *k = cfit_topo_link(t, l);
        if (k->tier == 2)
            n += ((k->from - v0) % 8 < 4) != ((k->to - v0) % 8 < 4);
    }
    assert_int_equal(n, 2 * 4 * 2);
    cfit_topo_free(t);
}

static void switch_xyz(const cfit_topo *t, int v, int X, int Y, int *c)
{
    int i = v - vertex(t, "sw0");
    c[0] = i % X;
    c[1] = i / X % Y;
    c[2] = i / (X * Y);
}

static void test_torus_dor(void **state)
{
    (void)state;
    cfit_topo *t = make("torus3d:4x4x4", 1);
    int paths[MAXP * MAXL], lens[MAXP];
    /* (0,0,0) -> (1,2,0): +X once, then Y by 2 either way: two paths, X first */
    int dst = 1 + 4 * 2;
    assert_int_equal(paths_of(t, 0, dst, -1, paths, lens), 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(lens[i], 5);
        int c[3], prev[3] = {0, 0, 0}, dimseen = 0;
        for (int j = 1; j + 1 < lens[i]; j++) {
            switch_xyz(t, cfit_topo_link(t, paths[i * MAXL + j])->to, 4, 4, c);
            int dim = c[0] != prev[0] ? 0 : c[1] != prev[1] ? 1 : 2;
            assert_true(dim >= dimseen);   /* dimension order */
            dimseen = dim;
            memcpy(prev, c, sizeof c);
        }
        assert_int_equal(prev[0], 1);
        assert_int_equal(prev[1], 2);
    }
    assert_int_not_equal(paths[2], paths[MAXL + 2]);
    /* (0,0,0) -> (3,0,0): the short way, -X */
    assert_int_equal(paths_of(t, 0, 3, -1, paths, lens), 1);
    assert_int_equal(lens[0], 3);
    /* (2,2,2): ties in every dimension, 8 paths of 6 torus hops; a flow picks one */
    assert_int_equal(paths_of(t, 0, 2 + 8 + 32, -1, paths, lens), 8);
    assert_int_equal(lens[7], 8);
    assert_int_equal(paths_of(t, 0, 2 + 8 + 32, 5, paths, lens), 1);
    /* fail the +X link out of (0,0,0): the route to (1,0,0) detours */
    assert_int_equal(cfit_topo_fail_spec(t, "sw0-sw1", NULL), CFIT_EOK);
    int n = paths_of(t, 0, 1, -1, paths, lens);
    assert_true(n >= 1);
    assert_true(lens[0] > 3);
    cfit_topo_free(t);
}

static int tier_count(const cfit_topo *t, const int *path, int len, int tier)
{
    int n = 0;
    for (int j = 0; j < len; j++)
        n += cfit_topo_link(t, path[j])->tier == tier;
    return n;
}

/* A ring longer than a caller's path buffer: CFIT_ERANGE from the router, the route once the
 * buffer holds it; cfit__topo_hops gives its length. */
static void test_torus_long_ring(void **state)
{
    (void)state;
    cfit_topo *t = make("torus3d:127x1x1", 1);
    int *paths = malloc(8 * 128 * sizeof *paths), lens[8];
    assert_non_null(paths);
    assert_int_equal(cfit_topo_paths(t, 0, 63, -1, paths, lens, 8, 64), CFIT_ERANGE);
    assert_int_equal(cfit_topo_paths(t, 0, 63, -1, paths, lens, 8, 65), 1);
    assert_int_equal(lens[0], 65);
    int v = cfit_topo_host_vertex(t, 0);
    for (int j = 0; j < 65; j++) {   /* a chain of links from host 0 to host 63 */
        assert_int_equal(cfit_topo_link(t, paths[j])->from, v);
        v = cfit_topo_link(t, paths[j])->to;
    }
    assert_int_equal(v, cfit_topo_host_vertex(t, 63));
    assert_int_equal(cfit__topo_hops(t, NULL, 0, 63), 65);
    assert_int_equal(cfit__topo_hops(t, NULL, 0, 64), 65);   /* the other way round */
    assert_int_equal(cfit__topo_hops(t, NULL, 0, 1), 3);
    cfit_topo_free(t);
    t = make("torus3d:128x1x1", 1);   /* distance 64 = n/2: both ways, 66 links each */
    assert_int_equal(cfit_topo_paths(t, 0, 64, -1, paths, lens, 8, 65), CFIT_ERANGE);
    assert_int_equal(cfit_topo_paths(t, 0, 64, -1, paths, lens, 8, 128), 2);
    assert_int_equal(lens[0], 66);
    assert_int_equal(lens[1], 66);
    cfit_topo_free(t);
    free(paths);
}

static void test_dragonfly_routing(void **state)
{
    (void)state;
    cfit_topo *t = make("dragonfly:p=1,a=4,h=2", 1);   /* g = 9, 36 hosts */
    int paths[MAXP * MAXL], lens[MAXP];
    for (int a = 0; a < 36; a++)
        for (int b = 0; b < 36; b++) {
            if (a == b)
                continue;
            int n = paths_of(t, a, b, -1, paths, lens);
            assert_int_equal(n, 1);   /* one global cable between two groups */
            assert_true(lens[0] - 2 <= 3);
            assert_true(tier_count(t, paths, lens[0], 3) == (a / 4 != b / 4));
        }
    cfit_topo_free(t);
    t = make("dragonfly:p=1,a=4,h=2,routing=valiant", 1);
    assert_int_equal(paths_of(t, 0, 35, 3, paths, lens), 1);
    assert_int_equal(tier_count(t, paths, lens[0], 3), 2);
    assert_true(lens[0] - 2 <= 5);
    assert_int_equal(paths_of(t, 0, 35, -1, paths, lens), 7);   /* one per intermediate group */
    assert_int_equal(paths_of(t, 0, 1, -1, paths, lens), 1);    /* same group: local */
    cfit_topo_free(t);
    t = make("dragonfly:p=1,a=4,h=2,routing=ugal", 1);
    assert_int_equal(paths_of(t, 0, 35, -1, paths, lens), 8);   /* minimal + 7 Valiant */
    assert_int_equal(tier_count(t, paths, lens[0], 3), 1);
    int kinds[3] = {0, 0, 0};
    for (int f = 0; f < 200; f++) {
        assert_int_equal(paths_of(t, 0, 35, f, paths, lens), 1);
        kinds[tier_count(t, paths, lens[0], 3)]++;
    }
    assert_true(kinds[1] > 90 && kinds[2] > 40 && kinds[1] > kinds[2]);
    /* lose the only global cable between groups 0 and 8: still routed, through a third group */
    cfit_topo_free(t);
    t = make("dragonfly:p=1,a=4,h=2", 1);
    assert_int_equal(paths_of(t, 0, 35, -1, paths, lens), 1);
    int g = paths[0], k = 0;
    for (int j = 0; j < lens[0]; j++)
        if (cfit_topo_link(t, paths[j])->tier == 3)
            g = paths[j], k++;
    assert_int_equal(k, 1);
    t->links[g].failed = t->links[g ^ 1].failed = 1;
    assert_true(paths_of(t, 0, 35, -1, paths, lens) >= 1);
    assert_int_equal(tier_count(t, paths, lens[0], 3), 2);
    assert_int_equal(paths_of(t, 0, 35, 9, paths, lens), 1);
    cfit_topo_free(t);
}

static void test_railopt_paths(void **state)
{
    (void)state;
    cfit_topo *t = make("railopt:nodes=8,su_nodes=4,gpus=2,spines=2", 2);
    int paths[MAXP * MAXL], lens[MAXP];
    assert_int_equal(paths_of(t, 0, 2, -1, paths, lens), 1);     /* same rail, same SU */
    assert_int_equal(out_hops(t, paths, lens[0]), 2);
    assert_int_equal(paths_of(t, 0, 3, -1, paths, lens), 8);     /* other rail: 2 spines x 2 x 2 */
    assert_int_equal(paths_of(t, 0, 8, -1, paths, lens), 8);     /* other SU */
    assert_int_equal(paths_of(t, 0, 1, -1, paths, lens), 1);     /* same node: NVLink */
    assert_int_equal(out_hops(t, paths, lens[0]), 0);
    cfit_topo_free(t);
}

static void test_failures(void **state)
{
    (void)state;
    cfit_topo *t = make("fattree:k=4", 1);
    int paths[MAXP * MAXL], lens[MAXP];
    cfit_diag d;
    assert_int_equal(paths_of(t, 0, 2, -1, paths, lens), 2);
    assert_int_equal(cfit_topo_fail_spec(t, "edge0-agg0", &d), CFIT_EOK);
    assert_int_equal(paths_of(t, 0, 2, -1, paths, lens), 1);
    assert_int_equal(paths_of(t, 0, 15, -1, paths, lens), 2);
    assert_int_equal(cfit_topo_fail_spec(t, "edge0-agg1", &d), CFIT_EOK);
    assert_int_equal(paths_of(t, 0, 2, -1, paths, lens), 0);     /* edge 0 cut off */
    assert_int_equal(paths_of(t, 0, 15, 3, paths, lens), 0);
    assert_int_equal(paths_of(t, 0, 1, -1, paths, lens), 1);     /* same edge still fine */
    assert_int_equal(cfit_topo_fail_spec(t, "edge0-agg1", &d), CFIT_ERANGE);
    assert_non_null(strstr(d.msg, "no working cable"));
    assert_int_equal(cfit_topo_fail_spec(t, "edge0", &d), CFIT_EPARSE);
    assert_int_equal(cfit_topo_fail_spec(t, "edge9-agg0", &d), CFIT_EPARSE);
    assert_non_null(strstr(d.msg, "'edge9'"));
    assert_int_equal(cfit_topo_fail_spec(t, "edge1-agg0,", &d), CFIT_EPARSE);
    assert_int_equal(cfit_topo_fail_spec(t, "edge01-agg0", &d), CFIT_EPARSE);
    assert_int_equal(cfit_topo_fail_spec(t, "", &d), CFIT_EPARSE);
    cfit_topo_free(t);

    /* Random failures: n switch cables, reproducible by seed, avoided by routing. */
    unsigned failed[2] = {0, 0};
    for (int rep = 0; rep < 2; rep++) {
        t = make("fattree:k=8", 4);
        assert_int_equal(cfit_topo_fail_random(t, 10, 42, &d), CFIT_EOK);
        int n = 0;
        for (int l = 0; l < cfit_topo_links(t); l++) {
            const cfit_link *k = cfit_topo_link(t, l);
            if (k->failed) {
                n++;
                assert_int_equal(cfit_topo_vertex_kind(t, k->from), CFIT_VERTEX_SWITCH);
                assert_int_equal(cfit_topo_vertex_kind(t, k->to), CFIT_VERTEX_SWITCH);
                failed[rep] = failed[rep] * 31u + (unsigned)l;
            }
        }
        assert_int_equal(n, 20);
        for (int b = 1; b < 128; b += 7)
            assert_true(paths_of(t, 0, b, -1, paths, lens) >= 1);
        assert_int_equal(cfit_topo_fail_random(t, 100000, 1, &d), CFIT_ERANGE);
        assert_int_equal(cfit_topo_fail_random(t, -1, 1, &d), CFIT_ERANGE);
        cfit_topo_free(t);
    }
    assert_int_equal(failed[0], failed[1]);
}

static void expect_error(const char *spec, int err, const char *needle, const char *needle2)
{
    cfit_topo *t = (cfit_topo *)&t;
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = cfit_topo_new(spec, NULL, &t, &d);
    if (rc != err)
        fail_msg("'%s': got %s, want %s (%s)", spec, cfit_err_name(rc), cfit_err_name(err), d.msg);
    assert_null(t);
    if (needle && !strstr(d.msg, needle))
        fail_msg("'%s': message '%s' lacks '%s'", spec, d.msg, needle);
    if (needle2 && !strstr(d.msg, needle2))
        fail_msg("'%s': message '%s' lacks '%s'", spec, d.msg, needle2);
    assert_true(d.msg[0] && d.msg[strlen(d.msg) - 1] != '.');
}

static void test_spec_errors(void **state)
{
    (void)state;
    expect_error("fattree:k=7", CFIT_ERANGE, "k=7", "even");
    expect_error("fattree:k=100000", CFIT_ERANGE, "k=100000", "limit");
    expect_error("fattree:k=99999999999999999999", CFIT_ERANGE, "k", NULL);
    expect_error("fattree:k=8,x=1", CFIT_EPARSE, "unknown key 'x' for fattree", NULL);
    expect_error("fattree:kk=8", CFIT_EPARSE, "unknown key 'kk'", "did you mean 'k'?");
    expect_error("fattree:k=8,oversub=3", CFIT_ERANGE, "oversub=3", "divide");
    expect_error("fattree:k=8,k=8", CFIT_EPARSE, "twice", NULL);
    expect_error("fattree:k", CFIT_EPARSE, "needs a value", NULL);
    expect_error("fattree:k=", CFIT_EPARSE, "needs a value", NULL);
    expect_error("fattree:k=8,", CFIT_EPARSE, "empty", NULL);
    expect_error("fattree:k=abc", CFIT_EPARSE, "k", NULL);
    expect_error("fattree:k=0", CFIT_ERANGE, "k", NULL);
    expect_error("fattree", CFIT_EPARSE, "missing key 'k'", NULL);
    expect_error("fatree:k=8", CFIT_EPARSE, "unknown topology 'fatree'", "fattree");
    expect_error("", CFIT_EPARSE, "unknown topology", NULL);
    expect_error(NULL, CFIT_EPARSE, NULL, NULL);
    expect_error("railopt:gpus=8", CFIT_EPARSE, "nodes", NULL);
    expect_error("railopt:nodes=4,su=1", CFIT_EPARSE, "nodes", NULL);
    expect_error("railopt:nodes=1000000,gpus=8", CFIT_ERANGE, "limit", NULL);
    expect_error("railopt:nodes=4,spine=2", CFIT_EPARSE, "did you mean 'spines'", NULL);
    expect_error("dragonfly:p=2,a=4,h=2,g=10", CFIT_ERANGE, "g=10", "a*h+1");
    expect_error("dragonfly:p=2,routing=fast", CFIT_EPARSE, "routing", "min|valiant|ugal");
    expect_error("dragonfly:a=4", CFIT_EPARSE, "missing key 'p'", NULL);
    expect_error("dragonfly:p=1048576,a=1048576,h=1048576", CFIT_ERANGE, "limit", NULL);
    expect_error("torus3d:8x8", CFIT_EPARSE, "XxYxZ", NULL);
    expect_error("torus3d:8x8x8x8", CFIT_EPARSE, "XxYxZ", NULL);
    expect_error("torus3d:0x8x8", CFIT_ERANGE, "x", NULL);
    expect_error("torus3d:8x8x8,x=2", CFIT_EPARSE, "twice", NULL);
    expect_error("torus3d:1048576x1048576x1048576", CFIT_ERANGE, "limit", NULL);
    expect_error("torus3d", CFIT_EPARSE, "missing dimensions", NULL);
    expect_error("torus3d:1x1x1,gpus=1", CFIT_ERANGE, "at least 2", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_custom_graph),
        cmocka_unit_test(test_scaleup_preferred),
        cmocka_unit_test(test_fattree_counts),
        cmocka_unit_test(test_fattree_ecmp),
        cmocka_unit_test(test_fattree_oversub),
        cmocka_unit_test(test_fattree_router),
        cmocka_unit_test(test_diameters),
        cmocka_unit_test(test_closed_forms),
        cmocka_unit_test(test_cuts_in_graph),
        cmocka_unit_test(test_torus_dor),
        cmocka_unit_test(test_torus_long_ring),
        cmocka_unit_test(test_dragonfly_routing),
        cmocka_unit_test(test_railopt_paths),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_spec_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
