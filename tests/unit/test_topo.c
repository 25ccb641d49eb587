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
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_custom_graph),
        cmocka_unit_test(test_scaleup_preferred),
        cmocka_unit_test(test_fattree_counts),
        cmocka_unit_test(test_fattree_ecmp),
        cmocka_unit_test(test_fattree_oversub),
        cmocka_unit_test(test_spec_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
