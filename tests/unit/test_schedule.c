/* test_schedule.c - pipeline schedules (schedule.h, docs/model.md §5.8): names, the rules each
 * imposes, the bubble and in-flight terms against the papers' tables, the framework's schedules
 * and zero_with_pp in the catalog and in the search. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "clusterfit/plan.h"
#include "clusterfit/schedule.h"

#include "catalog_fixture.h"

static void assert_near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol)) {
        print_error("got %.10g, want %.10g (within %g)\n", got, want, tol);
        fail();
    }
}

static void test_names(void **state)
{
    (void)state;
    cfit_diag d;
    for (int s = CFIT_SCHED_1F1B; s < CFIT_SCHED_COUNT; s++) {
        cfit_schedule got;
        assert_int_equal(cfit_schedule_parse(cfit_schedule_name((cfit_schedule)s), &got, &d), CFIT_EOK);
        assert_int_equal(got, s);
    }
    cfit_schedule got;
    assert_int_equal(cfit_schedule_parse("zbv", &got, &d), CFIT_EUNKNOWN);
    assert_non_null(strstr(d.msg, "did you mean 'zb-v'"));
    assert_int_equal(cfit_schedule_parse("default", &got, &d), CFIT_EUNKNOWN);
    char buf[128];
    assert_string_equal(cfit_schedule_list(CFIT_SCHED_DEFAULT_MASK, buf, sizeof buf), "1f1b, interleaved");
    assert_string_equal(cfit_schedule_list(0, buf, sizeof buf), "none");
    /* a layout's default schedule is the 1F1B family by vp; pp 1 has none */
    cfit_layout l = {8, 4, 2, 1, 2, 1, 1, CFIT_RECOMPUTE_NONE, 1, 1, 1, 0, 0};
    assert_int_equal(cfit_layout_schedule(&l), CFIT_SCHED_INTERLEAVED);
    l.vp = 1;
    assert_string_equal(cfit_layout_schedule_name(&l), "1f1b");
    l.pp = 1;
    assert_string_equal(cfit_layout_schedule_name(&l), "none");
}

/* With F = B_input = W = 1 (t_mb = F + B = 3, B = 2, W = 1), the tables' values: 1F1B (p-1)(F+B);
 * interleaved / v; ZB-H1 a third of 1F1B (Qi et al. §2.1); ZB-V 0 (§6, the sail-sg table);
 * DualPipe (p/2-1)(F&B+B-3W) with F&B = F + B; DualPipeV the same on half-stage chunks. */
static void test_bubble(void **state)
{
    (void)state;
    int p = 8;
    double t = 3.0, b = 2.0, w = 1.0;
    assert_near(cfit_schedule_bubble_s(CFIT_SCHED_1F1B, p, 1, t, b, w), 21.0, 1e-12);
    assert_near(cfit_schedule_bubble_s(CFIT_SCHED_DEFAULT, p, 1, t, b, w), 21.0, 1e-12);
    assert_near(cfit_schedule_bubble_s(CFIT_SCHED_INTERLEAVED, p, 2, t, b, w), 10.5, 1e-12);
    assert_near(cfit_schedule_bubble_s(CFIT_SCHED_ZB_H1, p, 1, t, b, w), 21.0 / 3.0, 1e-12);
    assert_near(cfit_schedule_bubble_s(CFIT_SCHED_ZB_V, p, 2, t, b, w), 0.0, 1e-12);
    assert_near(cfit_schedule_bubble_s(CFIT_SCHED_DUALPIPE, p, 2, t, b, w), 3.0 * 2.0, 1e-12);
    assert_near(cfit_schedule_bubble_s(CFIT_SCHED_DUALPIPEV, p, 2, t, b, w), 7.0 * 2.0 / 2.0, 1e-12);
    /* ZB-H2 (p-1)(F + B_input - 2W) = 0 (Qi Table 1); interleaved-zb ZB-H1's over v */
    assert_near(cfit_schedule_bubble_s(CFIT_SCHED_ZB_H2, p, 1, t, b, w), 0.0, 1e-12);
    assert_near(cfit_schedule_bubble_s(CFIT_SCHED_ZB_H2, p, 1, 4.0, 3.0, w), 7.0, 1e-12);   /* B_input 2: F+B-2W = 1 */
    assert_near(cfit_schedule_bubble_s(CFIT_SCHED_INTERLEAVED_ZB, p, 2, t, b, w), 21.0 / 3.0 / 2.0, 1e-12);
    /* a larger W never makes a bubble negative; no pipeline, no bubble */
    assert_near(cfit_schedule_bubble_s(CFIT_SCHED_ZB_V, p, 2, t, b, 2.0), 0.0, 0);
    assert_near(cfit_schedule_bubble_s(CFIT_SCHED_1F1B, 1, 1, t, b, w), 0.0, 0);
}

static void test_inflight(void **state)
{
    (void)state;
    cfit_schedule_terms st;
    cfit_schedule_terms_of(CFIT_SCHED_1F1B, 8, 1, 64, &st);
    assert_near(st.inflight_first, 8, 0);
    assert_near(st.inflight_last, 1, 0);
    assert_int_equal(st.param_copies, 1);
    cfit_schedule_terms_of(CFIT_SCHED_1F1B, 8, 1, 4, &st);   /* fewer micro-batches than stages */
    assert_near(st.inflight_first, 4, 0);
    cfit_schedule_terms_of(CFIT_SCHED_INTERLEAVED, 8, 2, 64, &st);
    assert_near(st.inflight_first, 8 * (1 + 7.0 / 16), 1e-12);
    assert_int_equal(st.sends, 2);
    cfit_schedule_terms_of(CFIT_SCHED_ZB_H1, 8, 1, 64, &st);   /* ZB-H1 keeps 1F1B's memory */
    assert_near(st.inflight_first, 8, 0);
    assert_near(st.inflight_last, 1, 0);
    cfit_schedule_terms_of(CFIT_SCHED_ZB_H2, 8, 1, 64, &st);   /* (2p - 1) M_B on the first stage */
    assert_near(st.inflight_first, 15, 0);
    assert_near(st.inflight_last, 1, 0);
    cfit_schedule_terms_of(CFIT_SCHED_ZB_H2, 8, 1, 10, &st);
    assert_near(st.inflight_first, 10, 0);
    cfit_schedule_terms_of(CFIT_SCHED_INTERLEAVED_ZB, 8, 2, 64, &st);   /* interleaving's memory */
    assert_near(st.inflight_first, 8 * (1 + 7.0 / 16), 1e-12);
    assert_int_equal(st.sends, 2);
    assert_true(cfit_schedule_check(CFIT_SCHED_INTERLEAVED_ZB, 8, 2, 20, 80, NULL, 0));    /* 2 rounds of 10 */
    assert_false(cfit_schedule_check(CFIT_SCHED_INTERLEAVED_ZB, 8, 2, 17, 80, NULL, 0));   /* 17 % 2 */
    assert_true(cfit_schedule_check(CFIT_SCHED_INTERLEAVED_ZB, 8, 2, 5, 80, NULL, 0));     /* one round */
    assert_false(cfit_schedule_check(CFIT_SCHED_INTERLEAVED_ZB, 8, 1, 16, 80, NULL, 0));   /* vp >= 2 */
    assert_true(cfit_schedule_check(CFIT_SCHED_ZB_H2, 8, 1, 16, 80, NULL, 0));
    cfit_schedule_terms_of(CFIT_SCHED_ZB_V, 8, 2, 64, &st);    /* 1F1B's peak, on every device */
    assert_near(st.inflight_first, 8, 0);
    assert_near(st.inflight_last, 8, 0);
    assert_true(st.ends_together);
    cfit_schedule_terms_of(CFIT_SCHED_DUALPIPE, 8, 2, 64, &st); /* Table 2: PP + 1, parameters 2x */
    assert_near(st.inflight_first, 9, 0);
    assert_int_equal(st.param_copies, 2);
    assert_int_equal(st.sends, 1);
    cfit_schedule_terms_of(CFIT_SCHED_DUALPIPEV, 8, 2, 64, &st); /* PP + 1 half-stage chunks, 1x */
    assert_near(st.inflight_first, 8.5, 0);
    assert_int_equal(st.param_copies, 1);
    cfit_schedule_terms_of(CFIT_SCHED_ZB_V, 1, 1, 64, &st);
    assert_near(st.inflight_first, 1, 0);
    assert_false(st.ends_together);
}

static void test_rules(void **state)
{
    (void)state;
    char why[256];
    assert_true(cfit_schedule_check(CFIT_SCHED_DUALPIPE, 8, 2, 16, 80, why, sizeof why));
    assert_false(cfit_schedule_check(CFIT_SCHED_DUALPIPE, 7, 2, 16, 80, why, sizeof why));
    assert_non_null(strstr(why, "even --pp"));
    assert_false(cfit_schedule_check(CFIT_SCHED_DUALPIPE, 8, 2, 15, 80, why, sizeof why));
    assert_false(cfit_schedule_check(CFIT_SCHED_DUALPIPEV, 8, 2, 12, 80, why, sizeof why));
    assert_non_null(strstr(why, "2 x pp"));
    assert_false(cfit_schedule_check(CFIT_SCHED_ZB_V, 8, 3, 64, 80, why, sizeof why));
    assert_non_null(strstr(why, "2 model chunks"));
    assert_false(cfit_schedule_check(CFIT_SCHED_INTERLEAVED, 8, 2, 12, 80, why, sizeof why));
    assert_false(cfit_schedule_check(CFIT_SCHED_INTERLEAVED, 8, 1, 16, 80, why, sizeof why));
    assert_false(cfit_schedule_check(CFIT_SCHED_ZB_H1, 1, 1, 16, 80, why, sizeof why));
    assert_false(cfit_schedule_check(CFIT_SCHED_ZB_V, 48, 2, 64, 80, NULL, 0));   /* 96 chunks > 80 */
    assert_true(cfit_schedule_check(CFIT_SCHED_ZB_H1, 8, 1, 0, 80, NULL, 0));     /* m unknown */
}

/* A framework entry without the keys keeps the rule every framework had: 1F1B, interleaved, ZeRO-1. */
static void test_catalog_keys(void **state)
{
    (void)state;
    cfit_diag d;
    cfit_catalog *c = cfit_catalog_new(&d);
    const char *text = "{\"frameworks\": [{\"name\": \"plain\", \"display_name\": \"P\", \"attention\": \"fused\", "
                       "\"attention_efficiency_scale\": 1, \"dp_overlap\": true, \"flat_param_gather\": false, "
                       "\"zero3_max_live_params\": 0, \"source\": \"s\"}, "
                       "{\"name\": \"zb\", \"display_name\": \"Z\", \"attention\": \"fused\", "
                       "\"attention_efficiency_scale\": 1, \"dp_overlap\": true, \"flat_param_gather\": false, "
                       "\"zero3_max_live_params\": 0, \"schedules\": [\"zb-v\", \"dualpipe\"], \"zero_with_pp\": 3, "
                       "\"source\": \"s\"}]}";
    assert_int_equal(cfit_catalog_load_buffer(c, text, strlen(text), "t.json", &d), CFIT_EOK);
    const cfit_framework *plain = cfit_catalog_framework(c, "plain", &d), *zb = cfit_catalog_framework(c, "zb", &d);
    assert_int_equal(plain->schedules, CFIT_SCHED_DEFAULT_MASK);
    assert_int_equal(plain->zero_with_pp, 1);
    assert_int_equal(zb->schedules, CFIT_SCHED_BIT(CFIT_SCHED_ZB_V) | CFIT_SCHED_BIT(CFIT_SCHED_DUALPIPE));
    assert_int_equal(zb->zero_with_pp, 3);
    const char *bad = "{\"frameworks\": [{\"schedules\": [\"zb-v\", \"zb-v\"]}]}";
    assert_int_equal(cfit_catalog_load_buffer(c, bad, strlen(bad), "b.json", &d), CFIT_EPARSE);
    assert_non_null(strstr(d.msg, "at most once"));
    const char *unknown = "{\"frameworks\": [{\"schedules\": [\"gpipe\"]}]}";
    assert_int_equal(cfit_catalog_load_buffer(c, unknown, strlen(unknown), "u.json", &d), CFIT_EPARSE);
    cfit_catalog_free(c);
}

static void request_405b(cfit_plan_request *r, const cfit_gpu **g, const char *fw)
{
    cfit_diag d;
    cfit_plan_request_init(r);
    r->catalog = cat;
    r->model = cfit_catalog_model(cat, "llama3-405b", &d);
    *g = cfit_catalog_gpu(cat, "h100-sxm", &d);
    r->gpus = g;
    r->ngpus = 1;
    r->gpus_total = 16384;
    r->tokens = 15e12;
    r->framework = fw ? cfit_catalog_framework(cat, fw, &d) : NULL;
    r->fixed.tp = 8;
    r->fixed.pp = 16;
    r->fixed.zero = 2;
}

/* ZeRO x PP is the framework's: Llama 3 405B's tp 8 pp 16 with ZeRO-2 plans under FSDP2 /
 * torchtitan, and is refused by Megatron-Core and DeepSpeed naming them; a schedule the framework
 * does not run is refused naming the ones it does. */
static void test_framework_rules(void **state)
{
    (void)state;
    cfit_plan_request r;
    const cfit_gpu *g;
    cfit_diag d;
    request_405b(&r, &g, "pytorch-fsdp");
    cfit_plan_result res;
    assert_int_equal(cfit_plan_search(&r, &res, &d), CFIT_EOK);
    assert_true(res.nplans > 0 && res.plans[0].fits);
    assert_int_equal(res.plans[0].layout.zero, 2);
    assert_int_equal(res.plans[0].layout.pp, 16);
    cfit_plan_result_fini(&res);
    request_405b(&r, &g, NULL);
    assert_int_equal(cfit_plan_validate(&r, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "framework 'megatron-core' combines at most ZeRO-1"));
    request_405b(&r, &g, "deepspeed");
    assert_int_equal(cfit_plan_validate(&r, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "'deepspeed'"));
    request_405b(&r, &g, NULL);
    r.fixed.zero = 1;
    r.fixed.schedule = CFIT_SCHED_ZB_V;
    assert_int_equal(cfit_plan_validate(&r, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "it runs: 1f1b, interleaved"));
    request_405b(&r, &g, "llm-foundry");
    r.fixed.zero = 1;
    assert_int_equal(cfit_plan_validate(&r, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "runs no pipeline parallelism"));
}

/* One layout under each schedule (cfit_plan_evaluate): the bubble follows the schedule's formula on
 * the plan's own terms, ZB-H1 keeps 1F1B's memory, DualPipe doubles the weights. */
static void test_plan_terms(void **state)
{
    (void)state;
    cfit_plan_request r;
    const cfit_gpu *g;
    cfit_diag d;
    request_405b(&r, &g, "torchtitan");
    r.model = cfit_catalog_model(cat, "llama3-70b", &d);
    cfit_layout l = {8, 8, 4, 1, 1, 1, 1, CFIT_RECOMPUTE_NONE, 1, 1, 1, CFIT_SCHED_1F1B, 0};
    cfit_plan one, zb, dual, zbv;
    assert_int_equal(cfit_plan_evaluate(&r, g, &l, &one, &d), CFIT_EOK);
    l.schedule = CFIT_SCHED_ZB_H1;
    assert_int_equal(cfit_plan_evaluate(&r, g, &l, &zb, &d), CFIT_EOK);
    l.schedule = CFIT_SCHED_DUALPIPE;
    l.vp = 2;
    assert_int_equal(cfit_plan_evaluate(&r, g, &l, &dual, &d), CFIT_EOK);
    l.schedule = CFIT_SCHED_ZB_V;
    assert_int_equal(cfit_plan_evaluate(&r, g, &l, &zbv, &d), CFIT_EOK);
    assert_string_equal(cfit_layout_schedule_name(&zb.layout), "zb-h1");
    /* 1F1B's bubble is (p - 1) x the per-micro-batch time */
    double t_mb = (one.step_time_s - one.br.pp_bubble_s - one.br.dp_comm_s - one.br.optimizer_s) / one.grad_accum;
    assert_near(one.br.pp_bubble_s, 7.0 * t_mb, 1e-9 * one.step_time_s);
    assert_true(zb.br.pp_bubble_s < one.br.pp_bubble_s && zb.br.pp_bubble_s > one.br.pp_bubble_s / 3.0 - 1e-9);
    assert_true(zbv.br.pp_bubble_s < zb.br.pp_bubble_s);
    assert_near(zb.mem.activations_bytes, one.mem.activations_bytes, 1.0);
    assert_true(dual.mem.weights_bytes > 1.9 * one.mem.weights_bytes);
    assert_true(dual.mem.activations_bytes > one.mem.activations_bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_bubble),
        cmocka_unit_test(test_inflight),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_catalog_keys),
        cmocka_unit_test(test_framework_rules),
        cmocka_unit_test(test_plan_terms),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
