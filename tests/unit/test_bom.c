/* test_bom.c - fat-tree counts, storage sizing and the network comparison (src/core/bom.c).
 *
 * The fat-tree cases are worked by hand in docs/sizing.md; two of them are the DGX
 * SuperPOD H100 reference architecture's tables (1 SU: 31 nodes, 8 leaves + 4 spines;
 * 4 SU: 127 nodes, 32 leaves + 16 spines, network.md).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "clusterfit/bom.h"

static cfit_catalog *cat;

static int setup(void **state)
{
    (void)state;
    cfit_diag d;
    cat = cfit_catalog_new(&d);
    return cat ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    cfit_catalog_free(cat);
    return 0;
}

static cfit_fattree tree(long nodes, int nics, int radix, int tiers, double oversub)
{
    cfit_fattree t;
    cfit_diag d;
    assert_int_equal(cfit_fattree_size(nodes, nics, radix, tiers, oversub, &t, &d), CFIT_EOK);
    return t;
}

/* 1024 GPUs = 128 nodes x 8 NICs on 64-port switches, non-blocking: 32 down / 32 up per
 * leaf, 4 leaves per rail x 8 rails = 32 leaves, 1024 uplinks / 64 = 16 spines. */
static void test_two_tier_nonblocking(void **state)
{
    (void)state;
    cfit_fattree t = tree(128, 8, 64, 2, 1.0);
    assert_int_equal(t.tiers, 2);
    assert_int_equal(t.down, 32);
    assert_int_equal(t.up, 32);
    assert_int_equal(t.endpoints, 1024);
    assert_int_equal(t.leaves, 32);
    assert_int_equal(t.spines, 16);
    assert_int_equal(t.cores, 0);
    assert_int_equal(t.switches, 48);
    assert_int_equal(t.node_links, 1024);
    assert_int_equal(t.switch_links, 1024);
    assert_int_equal(t.cables, 2048);
    assert_int_equal(t.transceivers, 4096);
    assert_int_equal(t.max_endpoints_2, 2048);   /* radix^2 / 2 */
}

/* The SuperPOD RA tables: 31 nodes -> 8 leaves + 4 spines; 127 nodes -> 32 + 16. */
static void test_superpod(void **state)
{
    (void)state;
    cfit_fattree t = tree(31, 8, 64, 2, 1.0);
    assert_int_equal(t.leaves, 8);
    assert_int_equal(t.spines, 4);
    t = tree(127, 8, 64, 2, 1.0);
    assert_int_equal(t.leaves, 32);
    assert_int_equal(t.spines, 16);
    assert_int_equal(t.switch_links, 1016);   /* 8 rails x (3 x 32 + 31) */
}

/* 2:1 on 64 ports: 42 down, 21 up; 4 leaves per rail (42, 42, 42, 2 nodes) with
 * 21 + 21 + 21 + 1 uplinks = 64 per rail, 512 in all -> 8 spines instead of 16. */
static void test_oversub(void **state)
{
    (void)state;
    cfit_fattree t = tree(128, 8, 64, 2, 2.0);
    assert_int_equal(t.down, 42);
    assert_int_equal(t.up, 21);
    assert_int_equal(t.leaves, 32);
    assert_int_equal(t.switch_links, 512);
    assert_int_equal(t.spines, 8);
    assert_int_equal(t.max_endpoints_2, 64 * 42);
}

/* Two tiers of 64 ports reach 64 leaves = 2048 ports (256 nodes x 8); 257 nodes need 9
 * leaves per rail = 72 > 64, so three tiers: 2056 uplinks, pods of 32 leaves (3),
 * aggregation ceil(2056 / 32) = 65, core ceil(2056 / 64) = 33. */
static void test_three_tier_switch_over(void **state)
{
    (void)state;
    cfit_fattree t = tree(256, 8, 64, 2, 1.0);
    assert_int_equal(t.tiers, 2);
    assert_int_equal(t.leaves, 64);
    assert_int_equal(t.spines, 32);
    t = tree(257, 8, 64, 2, 1.0);
    assert_int_equal(t.tiers, 3);
    assert_true(t.tiers_raised);
    assert_int_equal(t.leaves, 72);
    assert_int_equal(t.pods, 3);
    assert_int_equal(t.spines, 65);
    assert_int_equal(t.cores, 33);
    assert_int_equal(t.switches, 72 + 65 + 33);
    assert_int_equal(t.switch_links, 2 * 2056);
    assert_int_equal(t.cables, 2056 + 2 * 2056);
    t = tree(64, 8, 64, 3, 1.0);   /* asked for: three tiers even where two would do */
    assert_int_equal(t.tiers, 3);
    assert_false(t.tiers_raised);
}

static void test_one_switch_and_limits(void **state)
{
    (void)state;
    cfit_fattree t = tree(4, 8, 64, 2, 1.0);
    assert_int_equal(t.tiers, 1);
    assert_int_equal(t.switches, 1);
    assert_int_equal(t.cables, 32);
    cfit_diag d;
    /* radix 8: 3 tiers reach 8 x 4 = 32 leaves; 200 nodes x 1 NIC need 50 */
    assert_int_equal(cfit_fattree_size(200, 1, 8, 2, 1.0, &t, &d), CFIT_ERANGE);
    assert_non_null(strstr(d.msg, "three tiers"));
    assert_int_equal(cfit_fattree_size(10, 8, 64, 4, 1.0, &t, &d), CFIT_ERANGE);
    assert_int_equal(cfit_fattree_size(10, 8, 64, 2, 0.5, &t, &d), CFIT_ERANGE);
}

/* Storage and capex for 128 H100 nodes training llama3-70b at 1M tokens/s. */
static void test_bom_storage_and_capex(void **state)
{
    (void)state;
    cfit_plan p;
    memset(&p, 0, sizeof p);
    p.gpu = cfit_catalog_gpu(cat, "h100-sxm", NULL);
    p.node = cfit_catalog_node(cat, "hgx-h100-8", NULL);
    p.fabric = cfit_catalog_fabric(cat, "ib-ndr", NULL);
    p.gpus = 1024;
    p.nodes = 128;
    p.tokens_per_s = 1e6;
    const cfit_model *m = cfit_catalog_model(cat, "llama3-70b", NULL);
    cfit_bom_options o;
    cfit_bom_options_init(&o);
    cfit_bom b;
    cfit_diag d;
    assert_int_equal(cfit_bom_compute(cat, m, &p, &o, &b, &d), CFIT_EOK);
    assert_string_equal(b.sw->name, "qm9700-ndr");
    assert_int_equal(b.nics, 1024);
    assert_true(b.bytes_per_token == 4.0);   /* vocabulary 128256 > 65536: uint32 ids */
    assert_true(fabs(b.data_read_bytes_per_s - 1e6 * 4 * 4) < 1e-6);
    double ckpt = cfit_model_params(m) * 14.0;
    assert_true(fabs(b.checkpoint_bytes - ckpt) < 1.0);
    assert_true(fabs(b.checkpoint_write_bytes_per_s - ckpt / 300.0) < 1e-3);
    int pfs = -1, fsx = -1, nvme = -1;
    for (int i = 0; i < b.nstorage; i++) {
        const char *n = b.storage[i].s->name;
        pfs = strcmp(n, "pfs-flash-block") == 0 ? i : pfs;
        fsx = strcmp(n, "fsx-lustre-1000-tib") == 0 ? i : fsx;
        nvme = strcmp(n, "nvme-local-8x-gen4") == 0 ? i : nvme;
    }
    assert_true(pfs >= 0 && fsx >= 0 && nvme >= 0);
    assert_int_equal(b.storage[pfs].units, 1);          /* 3.29 GB/s write < 65 GB/s */
    assert_int_equal(b.storage[fsx].units, (long)ceil(ckpt / 300.0 / 1.048576e9));
    assert_int_equal(b.storage[nvme].units, 128);
    assert_int_equal(b.storage_choice, pfs);
    /* 48 switches x 30000 + 4096 optics x 900 + 2048 cables x 150 */
    assert_true(b.has_network_price);
    assert_true(fabs(b.fabric_usd - (48 * 30000.0 + 4096 * 900.0 + 2048 * 150.0)) < 1e-6);
    assert_true(fabs(b.capex_usd - (128 * 317000.0 + b.fabric_usd + 350000.0)) < 1e-6);
    /* a 5-minute window -> a 1-minute one: 5x the write rate */
    o.checkpoint_window_s = 60;
    assert_int_equal(cfit_bom_compute(cat, m, &p, &o, &b, &d), CFIT_EOK);
    assert_true(fabs(b.checkpoint_write_bytes_per_s - ckpt / 60.0) < 1e-3);
}

/* Oversubscription divides the inter-node bandwidth: step time never falls, and more
 * NICs never slow a plan down. */
static void test_network_compare(void **state)
{
    (void)state;
    cfit_plan_request r;
    cfit_plan_request_init(&r);
    r.catalog = cat;
    r.model = cfit_catalog_model(cat, "llama3-8b", NULL);
    const cfit_gpu *g = cfit_catalog_gpu(cat, "h100-sxm", NULL);
    r.gpus = &g;
    r.ngpus = 1;
    r.gpus_total = 512;
    r.tokens = 1e11;
    r.top = 1;
    cfit_plan_result res;
    cfit_diag d;
    assert_int_equal(cfit_plan_search(&r, &res, &d), CFIT_EOK);
    assert_true(res.nplans > 0);
    cfit_bom_options o;
    cfit_bom_options_init(&o);
    cfit_net_result net;
    assert_int_equal(cfit_network_compare(&r, &res.plans[0], &o, 0.10, &net, &d), CFIT_EOK);
    /* 7 fabrics of 100G+, 1/2/4/8 NICs, 1:1 and 2:1; 2:1 is dropped where one switch holds every port */
    assert_true(net.n > 7 * 4 && net.n <= 7 * 4 * 2);
    assert_true(net.baseline >= 0);
    assert_true(net.recommended >= 0 && net.cheapest >= 0);
    for (size_t i = 1; i < net.n; i++) {
        const cfit_net_option *a = &net.opts[i - 1], *b = &net.opts[i];
        if (b->oversub != 2.0)
            continue;
        assert_true(a->oversub == 1.0 && a->fabric == b->fabric && a->nics_per_node == b->nics_per_node);
        assert_true(b->plan.step_time_s >= a->plan.step_time_s * (1 - 1e-9));
        assert_true(b->network_capex_usd < a->network_capex_usd);   /* fewer spines */
    }
    const cfit_net_option *rec = &net.opts[net.recommended];
    if (net.under_threshold)
        for (size_t i = 0; i < net.n; i++)
            if (net.opts[i].exposed_share < 0.10)
                assert_true(net.opts[i].network_capex_usd >= rec->network_capex_usd);
    cfit_net_result_fini(&net);
    cfit_plan_result_fini(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_tier_nonblocking),
        cmocka_unit_test(test_superpod),
        cmocka_unit_test(test_oversub),
        cmocka_unit_test(test_three_tier_switch_over),
        cmocka_unit_test(test_one_switch_and_limits),
        cmocka_unit_test(test_bom_storage_and_capex),
        cmocka_unit_test(test_network_compare),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
