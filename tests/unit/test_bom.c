/* test_bom.c - fat-tree counts, storage sizing and the network comparison (src/core/bom.c).
 *
 * The fat-tree cases are worked by hand in docs/sizing.md; two of them are the DGX
 * SuperPOD H100 reference architecture's tables (1 SU: 31 nodes, 8 leaves + 4 spines;
 * 4 SU: 127 nodes, 32 leaves + 16 spines, network.md).  The network comparison is checked
 * for monotonicity in bandwidth and for its ranking by total cost (docs/sizing.md).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "clusterfit/bom.h"

#include "catalog_fixture.h"

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
    p.time_to_train_s = 86400.0;
    snprintf(p.goodput.storage, sizeof p.goodput.storage, "nas-flash-2u");   /* what goodput writes to */
    p.goodput.storage_units = 4;
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
    double ckpt = cfit_model_params(m) * 14.0 + (double)p.gpus * 10080.0;   /* + per-rank RNG and loader state */
    assert_true(fabs(b.checkpoint_bytes - ckpt) < 1.0);
    assert_true(fabs(b.checkpoint_write_bytes_per_s - ckpt / 300.0) < 1e-3);
    int pfs = -1, fsx = -1, nvme = -1, nas = -1;
    for (int i = 0; i < b.nstorage; i++) {
        const char *n = b.storage[i].s->name;
        nas = strcmp(n, "nas-flash-2u") == 0 ? i : nas;
        pfs = strcmp(n, "pfs-flash-block") == 0 ? i : pfs;
        fsx = strcmp(n, "fsx-lustre-1000-tib") == 0 ? i : fsx;
        nvme = strcmp(n, "nvme-local-8x-gen4") == 0 ? i : nvme;
    }
    assert_true(pfs >= 0 && fsx >= 0 && nvme >= 0 && nas >= 0);
    assert_int_equal(b.storage[pfs].units, 1);          /* 3.29 GB/s write < 65 GB/s */
    assert_int_equal(b.storage[fsx].units, (long)ceil(ckpt / 300.0 / 1.048576e9));
    assert_int_equal(b.storage[nvme].units, 128);
    assert_int_equal(b.data_tier, nvme);                /* 16 MB/s of data from the local NVMe */
    assert_true(b.restart_read_bytes_per_s == b.checkpoint_write_bytes_per_s);
    assert_int_equal(b.storage[nas].units, 4);          /* one NFS server per 32 nodes: $177,600 < $350,000 */
    assert_int_equal(b.storage_choice, nas);
    /* 48 switches x 30000 + 4096 optics x 900 + 2048 cables x 150 */
    assert_true(b.has_network_price);
    assert_true(fabs(b.fabric_usd - (48 * 30000.0 + 4096 * 900.0 + 2048 * 150.0)) < 1e-6);
    assert_true(fabs(b.capex_usd - (128 * 317000.0 + b.fabric_usd + 4 * 44400.0)) < 1e-6);
    /* one computation: the cost block's capex is the bill of materials' (issue 15) */
    cfit_cost k;
    cfit_cost_compute_with(cat, &p, &o, &k);
    assert_true(k.has_own);
    assert_true(k.capex_usd == b.capex_usd);
    assert_true(k.network_capex_usd == b.fabric_usd && k.storage_capex_usd == 4 * 44400.0);
    o.oversub = 2;   /* a 2:1 fabric is cheaper, in both */
    assert_int_equal(cfit_bom_compute(cat, m, &p, &o, &b, &d), CFIT_EOK);
    cfit_cost_compute_with(cat, &p, &o, &k);
    assert_true(k.capex_usd == b.capex_usd && b.fabric_usd < 48 * 30000.0 + 4096 * 900.0 + 2048 * 150.0);
    o.oversub = 1;
    /* a 5-minute window -> a 1-minute one: 5x the write rate */
    o.checkpoint_window_s = 60;
    assert_int_equal(cfit_bom_compute(cat, m, &p, &o, &b, &d), CFIT_EOK);
    assert_true(fabs(b.checkpoint_write_bytes_per_s - ckpt / 60.0) < 1e-3);
}

/* The network comparison for model on gpus H100s (1e11 tokens) into net; best into *best. */
static void compare(const char *model, long gpus, cfit_net_result *net, cfit_plan_result *res)
{
    static const cfit_gpu *g;
    g = cfit_catalog_gpu(cat, "h100-sxm", NULL);
    cfit_plan_request r;
    cfit_plan_request_init(&r);
    r.catalog = cat;
    r.model = cfit_catalog_model(cat, model, NULL);
    r.gpus = &g;
    r.ngpus = 1;
    r.gpus_total = gpus;
    r.tokens = 1e11;
    r.top = 1;
    cfit_diag d;
    assert_non_null(r.model);
    assert_int_equal(cfit_plan_search(&r, res, &d), CFIT_EOK);
    assert_true(res->nplans > 0);
    cfit_bom_options o;
    cfit_bom_options_init(&o);
    assert_int_equal(cfit_network_compare(&r, &res->plans[0], &o, net, &d), CFIT_EOK);
}

/* More bandwidth of the same fabric (no fewer NICs, no more oversubscription) never shows a
 * longer step or more exposed communication, and never costs less. */
static void assert_monotone(const cfit_net_result *net)
{
    size_t pairs = 0;
    for (size_t i = 0; i < net->n; i++)
        for (size_t j = 0; j < net->n; j++) {
            const cfit_net_option *a = &net->opts[i], *b = &net->opts[j];
            if (i == j || a->fabric != b->fabric || b->nics_per_node < a->nics_per_node || b->oversub > a->oversub)
                continue;
            assert_true(a->found && b->found);
            assert_true(b->plan.step_time_s <= a->plan.step_time_s * (1 + 1e-12));
            assert_true(b->exposed_comm_s <= a->exposed_comm_s + 1e-12 * a->plan.step_time_s);
            assert_true(b->exposed_share <= a->exposed_share + 1e-12);
            assert_true(b->plan.fits);
            assert_true(b->network_capex_usd >= a->network_capex_usd);   /* more NICs, more spines */
            pairs++;
        }
    assert_true(pairs > 0);
}

/* Every fabric that needs a spine is compared at 1, 2, 4 and 8 NICs x 1:1, 2:1 and 4:1. */
static void assert_grid(const cfit_net_result *net)
{
    int full = 0;
    for (size_t i = 0; i < net->n; i++) {
        int seen = 0;
        for (size_t j = 0; j < net->n; j++) {
            const cfit_net_option *x = &net->opts[j];
            if (x->fabric != net->opts[i].fabric)
                continue;
            int k = x->nics_per_node == 1 ? 0 : x->nics_per_node == 2 ? 1 : x->nics_per_node == 4 ? 2 : 3;
            int o = x->oversub == 1.0 ? 0 : x->oversub == 2.0 ? 1 : 2;
            assert_true(x->nics_per_node == 1 << k && x->oversub == (double)(1 << o));
            seen |= 1 << (k * 3 + o);
        }
        full += seen == (1 << 12) - 1;
    }
    assert_true(full > 0);
}

/* Ranked by total; the recommendation is the least network capex within 2% of the least total. */
static void assert_ranked(const cfit_net_result *net)
{
    assert_true(net->n > 0 && net->opts[0].has_total);
    assert_true(net->recommended >= 0 && net->baseline >= 0);
    const cfit_net_option *rec = &net->opts[net->recommended];
    double least = net->opts[0].total_usd;
    assert_true(rec->total_usd <= least * (1 + CFIT_NET_TIE_FRACTION));
    for (size_t i = 0; i < net->n; i++) {
        const cfit_net_option *x = &net->opts[i];
        assert_true(x->has_total);
        assert_true(fabs(x->total_usd - (x->network_run_usd + x->gpu_time_usd)) < 1e-6 * x->total_usd);
        assert_true(x->total_usd >= least);
        if (i > 0)
            assert_true(x->total_usd >= net->opts[i - 1].total_usd);
        if (x->total_usd <= least * (1 + CFIT_NET_TIE_FRACTION))
            assert_true(x->network_capex_usd >= rec->network_capex_usd);
    }
    assert_int_equal(net->compared, net->recommended == 0 ? 1 : 0);
}

static void test_network_compare(void **state)
{
    (void)state;
    static const struct { const char *model; long gpus; } cases[] = {{"llama3-8b", 512}, {"llama3-70b", 512}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cfit_plan_result res;
        cfit_net_result net;
        compare(cases[c].model, cases[c].gpus, &net, &res);
        /* 7 fabrics of 100G+ x 1/2/4/8 NICs x 1:1, 2:1, 4:1; oversubscription is dropped where
         * one switch holds every port */
        assert_true(net.n > 7 * 4 && net.n <= 7 * 4 * 3);
        assert_grid(&net);
        assert_monotone(&net);
        assert_ranked(&net);
        cfit_net_result_fini(&net);
        cfit_plan_result_fini(&res);
    }
}

/* The network's share of the run is capex x run years x (1 / amortisation + maintenance). */
static void test_network_run_share(void **state)
{
    (void)state;
    cfit_plan_result res;
    cfit_net_result net;
    compare("llama3-8b", 256, &net, &res);
    const cfit_price *life = cfit_catalog_price(cat, "amortisation.years", NULL);
    const cfit_price *maint = cfit_catalog_price(cat, "maintenance.fraction_per_year", NULL);
    assert_true(net.has_share && fabs(net.network_share_per_year - (1 / life->value + maint->value)) < 1e-12);
    const cfit_price *rate = cfit_catalog_price(cat, "cloud.on_demand.h100-sxm", NULL);
    assert_true(net.has_rate && fabs(net.usd_per_gpu_hour - rate->value) < 1e-9);
    for (size_t i = 0; i < net.n; i++) {
        const cfit_net_option *x = &net.opts[i];
        double years = x->plan.time_to_train_s / (365.25 * 86400);
        assert_true(fabs(x->network_run_usd - x->network_capex_usd * years * net.network_share_per_year) < 1e-6);
        assert_true(fabs(x->gpu_time_usd - x->plan.time_to_train_s / 3600 * 256 * rate->value) < 1e-6);
    }
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
        cmocka_unit_test(test_network_run_share),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
