/* test_cost.c - the cost model, price overrides and budget sizing (src/core/cost.c, search.c).
 *
 * The first test recomputes one plan's cost by hand from the prices in data/prices.json
 * (as `clusterfit plan` prints them) and checks every total to the cent.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "clusterfit/cost.h"

#include "catalog_fixture.h"

/* A plan with only what the cost model reads: GPU, node, fabric, counts and time. */
static cfit_plan plan_of(const char *gpu, long nodes, double days)
{
    cfit_plan p;
    memset(&p, 0, sizeof p);
    p.gpu = cfit_catalog_gpu(cat, gpu, NULL);
    assert_non_null(p.gpu);
    p.node = cfit_catalog_node(cat, p.gpu->default_node, NULL);
    p.fabric = cfit_catalog_fabric(cat, p.node->fabric, NULL);
    p.nodes = nodes;
    p.gpus = nodes * p.node->gpus_per_node;
    p.time_to_train_s = days * 86400.0;
    return p;
}

#define CENT(x, want) assert_true(fabs((x) - (want)) < 0.005)

/* 8 HGX H100 nodes (64 GPUs) for 30 days = 720 h = 720/8766 years, with the prices
 * node.h100-sxm 317000, switch.qm9700-ndr 30000, optic.ib-ndr 900, cable.ib-ndr 150, amortisation.years 4,
 * maintenance.fraction_per_year 0.05, colo.usd_per_kw_month 150, energy.usd_per_kwh 0.0806,
 * facility.pue 1.56, power.node_over_gpu_tdp 1.82, cloud.on_demand/reserved/spot.h100-sxm
 * 6.88/5.19/3.0:
 *   capex       = 8 x 317000 + the fabric: the 64 node ports fit one 64-port QM9700, 64 cables,
 *                 128 transceivers: 30000 + 128 x 900 + 64 x 150 = 2,690,800.00 (no storage: the
 *                 plan has no goodput storage tier; cfit_bom_capex, test_bom.c)
 *   amortised   = 2,690,800 / 4 x 720/8766                      =    55,252.57
 *   power IT    = 8 nodes x 8 x 700 W x 1.82                    =        81.536 kW
 *   energy      = 81.536 x 1.56 kW x 720 h x 0.0806             =     7,381.45
 *   maintenance = 2,690,800 x 0.05 x 720/8766                   =    11,050.51
 *   colocation  = 81.536 kW x 150 x 12 x 720/8766               =    12,054.60
 *   own         = sum                                           =    85,739.13
 *   rent        = 64 x 720 x 6.88 / 5.19 / 3.0 = 317,030.40 / 239,155.20 / 138,240.00 */
static void test_cost_by_hand(void **state)
{
    (void)state;
    cfit_plan p = plan_of("h100-sxm", 8, 30);
    cfit_cost k;
    cfit_cost_compute(cat, &p, &k);
    assert_true(k.has_own && k.has_power && k.has_rent[0] && k.has_rent[1] && k.has_rent[2]);
    CENT(k.capex_usd, 2690800.00);
    CENT(k.network_capex_usd, 154800.00);
    CENT(k.storage_capex_usd, 0.0);
    assert_int_equal(k.switches, 1);
    assert_int_equal(k.transceivers, 128);
    CENT(k.ports, 64);
    CENT(k.amortised_usd, 55252.57);
    CENT(k.energy_usd, 7381.45);
    CENT(k.maintenance_usd, 11050.51);
    CENT(k.colo_usd, 12054.60);
    CENT(k.own_run_usd, 85739.13);
    CENT(k.rent_usd[CFIT_BASIS_RENT], 317030.40);
    CENT(k.rent_usd[CFIT_BASIS_RESERVED], 239155.20);
    CENT(k.rent_usd[CFIT_BASIS_SPOT], 138240.00);
    double usd;
    assert_true(cfit_cost_of(&k, CFIT_BASIS_OWN, &usd));
    CENT(usd, 85739.13);
    /* break-even: (capex/4 + capex x 0.05 + 81.536 x 150 x 12) / (64 x 8766 x 6.88 - energy per year) */
    assert_true(k.has_break_even);
    assert_true(fabs(k.break_even_utilisation - 0.2530532823) < 1e-9);
    /* 3 nodes of 10.192 kW in a 40 kW rack: 30.576 kW, above the 30 kW air limit */
    assert_int_equal(k.nodes_per_rack, 3);
    assert_int_equal(k.racks, 3);
    assert_string_equal(k.cooling, "rear-door");
    assert_true(k.nused >= 13);
}

static void test_cooling_classes(void **state)
{
    (void)state;
    cfit_cost k;
    cfit_plan p = plan_of("gb200", 2, 10);   /* 72 x 1200 W x 1.82 = 157.2 kW per NVL72 rack */
    cfit_cost_compute(cat, &p, &k);
    assert_int_equal(k.nodes_per_rack, 1);
    assert_int_equal(k.racks, 2);
    assert_string_equal(k.cooling, "direct-liquid");
    p = plan_of("l40s", 4, 10);              /* 8 x 350 W x 1.82 = 5.1 kW: 7 per rack, 35.7 kW */
    cfit_cost_compute(cat, &p, &k);
    assert_int_equal(k.nodes_per_rack, 7);
    assert_string_equal(k.cooling, "rear-door");
}

static void test_missing_prices(void **state)
{
    (void)state;
    cfit_plan p = plan_of("mi355x", 4, 10);
    cfit_cost k;
    char buf[128];
    cfit_cost_compute(cat, &p, &k);
    assert_true(k.has_power);
    assert_false(k.has_own);
    assert_false(k.has_rent[CFIT_BASIS_RENT]);
    assert_string_equal(cfit_cost_missing(&k, CFIT_BASIS_OWN, buf, sizeof buf), "node.mi355x");
    assert_string_equal(cfit_cost_missing(&k, CFIT_BASIS_RENT, buf, sizeof buf), "cloud.on_demand.mi355x");
    assert_string_equal(cfit_cost_missing(&k, CFIT_BASIS_SPOT, buf, sizeof buf), "cloud.spot.mi355x");
    double usd;
    assert_false(cfit_cost_of(&k, CFIT_BASIS_OWN, &usd));
}

static void test_price_set(void **state)
{
    (void)state;
    cfit_catalog *c = cfit_catalog_new(NULL);
    assert_non_null(c);
    cfit_diag d;
    cfit_diag_clear(&d);
    assert_int_equal(cfit_cost_key_check(c, "node.h100", &d), CFIT_EUNKNOWN);
    assert_non_null(strstr(d.msg, "did you mean 'node.h100-sxm'?"));
    assert_int_equal(cfit_cost_price_set(c, "energy.usd_per_kw", 0.1, &d), CFIT_EUNKNOWN);
    assert_non_null(strstr(d.msg, "energy.usd_per_kwh"));
    assert_int_equal(cfit_cost_price_set(c, "node.mi300x", -1, &d), CFIT_ERANGE);
    assert_int_equal(cfit_cost_price_set(c, "node.mi300x", 250000, &d), CFIT_EOK);
    const cfit_price *pr = cfit_catalog_price(c, "node.mi300x", NULL);
    assert_non_null(pr);
    assert_int_equal(pr->unit, CFIT_UNIT_USD_PER_NODE);
    assert_string_equal(pr->date, "");
    assert_string_equal(pr->source, "--price");
    assert_int_equal(cfit_cost_price_set(c, "cloud.spot.mi300x", 2.0, &d), CFIT_EOK);
    assert_int_equal(cfit_catalog_price(c, "cloud.spot.mi300x", NULL)->unit, CFIT_UNIT_USD_PER_GPU_HOUR);
    assert_int_equal(cfit_cost_price_set(c, "facility.pue", 1.2, &d), CFIT_EOK);
    assert_int_equal(cfit_catalog_price(c, "facility.pue", NULL)->unit, CFIT_UNIT_RATIO);
    /* the override changes the cost: energy scales with the PUE */
    cfit_plan p = plan_of("h100-sxm", 8, 30);
    cfit_cost k;
    cfit_cost_compute(c, &p, &k);
    CENT(k.energy_usd, 7381.45 * 1.2 / 1.56);
    cfit_catalog_free(c);
}

static void sizing_request(cfit_plan_request *r, const cfit_gpu **gpus, size_t n)
{
    cfit_plan_request_init(r);
    r->catalog = cat;
    r->model = cfit_catalog_model(cat, "llama3-8b", NULL);
    r->tokens = 1e12;
    r->gpus = gpus;
    r->ngpus = n;
    r->top = 3;
}

static double run_cost(const cfit_plan *p, cfit_cost_basis b)
{
    cfit_cost k;
    double usd = -1;
    cfit_cost_compute(cat, p, &k);
    assert_true(cfit_cost_of(&k, b, &usd));
    return usd;
}

/* Deadline sizing ranks by cost when every plan has a price. */
static void test_rank_by_cost(void **state)
{
    (void)state;
    const cfit_gpu *g[] = {cfit_catalog_gpu(cat, "h100-sxm", NULL), cfit_catalog_gpu(cat, "b200", NULL)};
    cfit_plan_request r;
    sizing_request(&r, g, 2);
    r.days = 30;
    cfit_plan_result res;
    cfit_diag d;
    assert_int_equal(cfit_plan_search(&r, &res, &d), CFIT_EOK);
    assert_true(res.ranked_by_cost);
    assert_true(res.nplans >= 2);
    for (size_t i = 1; i < res.nplans; i++)
        assert_true(run_cost(&res.plans[i - 1], CFIT_BASIS_RENT) <= run_cost(&res.plans[i], CFIT_BASIS_RENT));
    for (size_t i = 0; i < res.ngpu; i++) {
        assert_true(res.per_gpu[i].has_cost);
        assert_true(res.per_gpu[i].within_budget);
    }
    cfit_plan_result_fini(&res);
}

/* Budget sizing: the plan of each type is within the budget, and a larger budget never
 * gives a slower plan. */
static void test_budget(void **state)
{
    (void)state;
    const cfit_gpu *g[] = {cfit_catalog_gpu(cat, "h100-sxm", NULL), cfit_catalog_gpu(cat, "mi355x", NULL)};
    double prev_s = INFINITY;
    for (int bi = 0; bi < 3; bi++) {
        static const double budgets[] = {2e5, 1e6, 5e6};
        cfit_plan_request r;
        sizing_request(&r, g, 2);
        r.days = 0;
        r.budget_usd = budgets[bi];
        cfit_plan_result res;
        cfit_diag d;
        assert_int_equal(cfit_plan_search(&r, &res, &d), CFIT_EOK);
        assert_false(res.ranked_by_cost);
        const cfit_gpu_result *h = &res.per_gpu[0], *m = &res.per_gpu[1];
        assert_true(h->found && h->has_cost && h->within_budget);
        assert_true(h->cost_usd <= budgets[bi]);
        assert_true(h->best.time_to_train_s <= prev_s);
        prev_s = h->best.time_to_train_s;
        assert_true(m->found);                 /* mi355x has no rent price: never within a budget */
        assert_false(m->has_cost);
        assert_false(m->within_budget);
        for (size_t i = 0; i < res.nplans; i++)
            assert_ptr_equal(res.plans[i].gpu, g[0]);
        cfit_plan_result_fini(&res);
    }
}

/* Cost does not always grow with the count: llama3-70b on h200-sxm costs less on 1,024 GPUs
 * than on 2,048, yet 2,048 is affordable at $5M and faster.  Budget sizing must find the
 * fastest affordable count, at least as fast as every affordable ladder count from 64 to
 * 512 nodes searched at a fixed count. */
static void test_budget_not_monotone(void **state)
{
    (void)state;
    const cfit_gpu *g[] = {cfit_catalog_gpu(cat, "h200-sxm", NULL)};
    cfit_plan_request r;
    sizing_request(&r, g, 1);
    r.model = cfit_catalog_model(cat, "llama3-70b", NULL);
    r.tokens = 2e12;
    r.days = 0;
    r.budget_usd = 5e6;
    cfit_plan_result res;
    cfit_diag d;
    assert_int_equal(cfit_plan_search(&r, &res, &d), CFIT_EOK);
    const cfit_gpu_result *h = &res.per_gpu[0];
    assert_true(h->found && h->within_budget);
    assert_int_equal(h->best.gpus, 2048);
    static const long nodes[] = {64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512};
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
        cfit_plan_request f = r;
        f.gpus_total = nodes[i] * 8;
        cfit_plan_result fr;
        assert_int_equal(cfit_plan_search(&f, &fr, &d), CFIT_EOK);
        const cfit_gpu_result *x = &fr.per_gpu[0];
        if (x->found && x->within_budget)
            assert_true(h->best.time_to_train_s <= x->best.time_to_train_s);
        if (nodes[i] == 128)   /* the count the binary search stopped at: cheaper, slower */
            assert_true(x->within_budget && x->cost_usd < h->cost_usd &&
                        x->best.time_to_train_s > h->best.time_to_train_s);
        cfit_plan_result_fini(&fr);
    }
    cfit_plan_result_fini(&res);
}

static void test_budget_needs_goal(void **state)
{
    (void)state;
    const cfit_gpu *g[] = {cfit_catalog_gpu(cat, "h100-sxm", NULL)};
    cfit_plan_request r;
    sizing_request(&r, g, 1);
    r.days = 0;
    cfit_plan_result res;
    cfit_diag d;
    assert_int_equal(cfit_plan_search(&r, &res, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "--budget"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cost_by_hand),
        cmocka_unit_test(test_cooling_classes),
        cmocka_unit_test(test_missing_prices),
        cmocka_unit_test(test_price_set),
        cmocka_unit_test(test_rank_by_cost),
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_budget_not_monotone),
        cmocka_unit_test(test_budget_needs_goal),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
