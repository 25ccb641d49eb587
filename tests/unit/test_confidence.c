/* test_confidence.c - the plan's model check (clusterfit/confidence.h): the published runs of the
 * plan GPU's family nearest in scale, their median and max |error|. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "clusterfit/confidence.h"

#include "catalog_fixture.h"

/* The embedded runs (data/fidelity.json): a Hopper plan gets 5 Hopper runs, nearest first. */
static void test_embedded_hopper(void **state)
{
    (void)state;
    assert_true(cfit_catalog_fidelity_count(cat) >= 100);
    cfit_confidence k;
    cfit_plan_confidence(cat, cfit_catalog_gpu(cat, "h100-sxm", NULL), 1024, 70e9, 0, &k);
    assert_int_equal(k.runs, CFIT_CONFIDENCE_RUNS);
    assert_int_equal(k.arch, CFIT_ARCH_HOPPER);
    assert_true(k.median_abs_error >= 0 && k.median_abs_error <= k.max_abs_error);
    assert_true(k.gpus_min <= 1024 && k.gpus_max >= 1024);
    for (int i = 0; i < k.runs; i++) {
        const cfit_fidelity *f = NULL;
        for (size_t j = 0; j < cfit_catalog_fidelity_count(cat) && !f; j++)
            if (strcmp(cfit_catalog_fidelity_at(cat, j)->name, k.ids[i]) == 0)
                f = cfit_catalog_fidelity_at(cat, j);
        assert_non_null(f);
        assert_int_equal(cfit_catalog_gpu(cat, f->gpu, NULL)->arch, CFIT_ARCH_HOPPER);
        assert_true(fabs(f->error) <= k.max_abs_error);
    }
}

/* An MoE model is compared with the MoE runs of its family; without any, with the dense ones. */
static void test_moe(void **state)
{
    (void)state;
    cfit_confidence k;
    cfit_plan_confidence(cat, cfit_catalog_gpu(cat, "h100-sxm", NULL), 64, 47e9, 1, &k);
    assert_true(k.runs > 0 && k.moe_runs && !k.dense_for_moe);
    for (int i = 0; i < k.runs; i++)
        assert_non_null(strstr(k.ids[i], "MOE"));
    cfit_plan_confidence(cat, cfit_catalog_gpu(cat, "a100-sxm-80g", NULL), 64, 47e9, 1, &k);
    assert_true(k.runs > 0 && !k.moe_runs && k.dense_for_moe);
    cfit_plan_confidence(cat, cfit_catalog_gpu(cat, "h100-sxm", NULL), 64, 47e9, 0, &k);
    assert_true(k.runs > 0 && !k.moe_runs && !k.dense_for_moe);
    assert_null(strstr(k.ids[0], "MOE"));
}

/* No run of the family: runs 0; a user's entry of that family is then the one compared. */
static void test_family_without_runs(void **state)
{
    (void)state;
    cfit_diag d;
    cfit_catalog *c = cfit_catalog_new(&d);
    assert_non_null(c);
    const cfit_gpu *g = cfit_catalog_gpu(c, "mi300x", NULL);
    assert_non_null(g);
    cfit_confidence k;
    cfit_plan_confidence(c, g, 64, 8e9, 0, &k);
    assert_int_equal(k.runs, 0);
    static const char js[] = "{\"fidelity\": [{\"name\": \"site-1\", \"gpu\": \"mi300x\", \"gpus\": 128, "
                             "\"params\": 7e9, \"framework\": \"megatron-core\", \"error\": -0.12, "
                             "\"source\": \"test\"}]}";
    assert_int_equal(cfit_catalog_load_buffer(c, js, sizeof js - 1, "t.json", &d), CFIT_EOK);
    g = cfit_catalog_gpu(c, "mi300x", NULL);   /* a load rebuilds the tables: entries move */
    cfit_plan_confidence(c, g, 64, 8e9, 0, &k);
    assert_int_equal(k.runs, 1);
    assert_true(fabs(k.median_abs_error - 0.12) < 1e-12 && fabs(k.max_abs_error - 0.12) < 1e-12);
    assert_int_equal(k.gpus_min, 128);
    assert_string_equal(k.ids[0], "site-1");
    static const char bad[] = "{\"fidelity\": [{\"name\": \"x\", \"gpu\": \"mi300x\", \"gpus\": 0, "
                              "\"params\": 7e9, \"framework\": \"megatron-core\", \"error\": 0, \"source\": \"t\"}]}";
    assert_int_equal(cfit_catalog_load_buffer(c, bad, sizeof bad - 1, "b.json", &d), CFIT_ERANGE);
    assert_non_null(strstr(d.msg, "gpus"));
    static const char ref[] = "{\"fidelity\": [{\"name\": \"y\", \"gpu\": \"mi999\", \"gpus\": 8, "
                              "\"params\": 7e9, \"framework\": \"megatron-core\", \"error\": 0, \"source\": \"t\"}]}";
    assert_int_equal(cfit_catalog_load_buffer(c, ref, sizeof ref - 1, "r.json", &d), CFIT_EUNKNOWN);
    assert_non_null(strstr(d.msg, "fidelity 'y': gpu 'mi999' is not a gpu entry"));
    cfit_catalog_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embedded_hopper),
        cmocka_unit_test(test_moe),
        cmocka_unit_test(test_family_without_runs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
