/* test_emit.c - launch configurations for a plan (src/core/emit.c).
 *
 * Plans are costed with cfit_plan_evaluate on fixed layouts, so each test knows the sizes
 * the configuration must carry: DeepSpeed's train_batch_size = micro x accumulation x DP,
 * Megatron's flags for every layout dimension, torchrun's nodes and processes per node;
 * and the DeepSpeed JSON must pass cfit_check_deepspeed with no error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterfit/frameworks.h"
#include "base/json.h"

static int setup(void **state)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_catalog *c = cfit_catalog_new(&d);
    if (!c)
        fail_msg("embedded catalog: %s", d.msg);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    cfit_catalog_free(*state);
    return 0;
}

typedef struct fixture {
    cfit_plan_request req;
    const cfit_gpu *gpu;
    cfit_plan plan;
} fixture;

/* Cost model m on gpus GPUs with layout tp/pp/dp/cp/vp/mbs/zero/recompute (sp on with tp > 1). */
static void plan(void **state, fixture *f, const char *m, long gbs, int tp, int pp, int dp, int cp, int vp,
                 int mbs, int zero, int rec, cfit_precision prec)
{
    cfit_catalog *cat = *state;
    cfit_plan_request_init(&f->req);
    f->req.catalog = cat;
    f->req.model = cfit_catalog_model(cat, m, NULL);
    f->gpu = cfit_catalog_gpu(cat, "h100-sxm", NULL);
    assert_non_null(f->req.model);
    f->req.gpus = &f->gpu;
    f->req.ngpus = 1;
    f->req.global_batch = gbs;
    f->req.precision = prec;
    f->req.gpus_total = (long)tp * pp * dp * cp;
    cfit_layout l = {tp, pp, dp, cp, vp, mbs, zero, rec, tp > 1, 1, 1, 0, 0};
    f->req.fixed = l;
    cfit_diag d;
    cfit_diag_clear(&d);
    if (cfit_plan_evaluate(&f->req, f->gpu, &l, &f->plan, &d))
        fail_msg("evaluate: %s", d.msg);
}

static char *emit(const fixture *f, cfit_emit_kind k)
{
    char *out = NULL;
    cfit_diag d;
    cfit_diag_clear(&d);
    if (cfit_emit(k, &f->req, &f->plan, 0, &out, &d))
        fail_msg("emit: %s", d.msg);
    return out;
}

static void has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)); p += n)
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
            return;
    fail_msg("missing line '%s' in:\n%s", line, text);
}

static void test_deepspeed_batch(void **state)
{
    fixture f;
    plan(state, &f, "llama3-70b", 512, 8, 4, 2, 1, 1, 1, 1, CFIT_RECOMPUTE_FULL, CFIT_PREC_BF16);
    char *text = emit(&f, CFIT_EMIT_DEEPSPEED);
    int err;
    cfit_diag d;
    cfit_json *j = cfit_json_parse(text, strlen(text), "emit", &err, &d);
    assert_non_null(j);
    double tb = cfit_json_get(j, "train_batch_size")->number;
    double mb = cfit_json_get(j, "train_micro_batch_size_per_gpu")->number;
    double gas = cfit_json_get(j, "gradient_accumulation_steps")->number;
    assert_true(tb == 512 && mb == 1 && gas == 256);
    assert_true(tb == mb * gas * f.plan.layout.dp);
    const cfit_json *zero = cfit_json_get(j, "zero_optimization");
    assert_true(cfit_json_get(zero, "stage")->number == 1);
    assert_int_equal(cfit_json_get(zero, "reduce_bucket_size")->type, CFIT_JSON_NUMBER);
    assert_true(cfit_json_get(cfit_json_get(j, "bf16"), "enabled")->boolean);
    assert_true(cfit_json_get(cfit_json_get(j, "pipeline"), "stages")->number == 4);
    assert_non_null(cfit_json_get(j, "activation_checkpointing"));
    assert_true(cfit_json_get(j, "gradient_clipping")->number == 1.0);
    cfit_json_free(j);

    /* it checks clean on the same GPUs and model, with TP given as the mpu would */
    cfit_check_request r;
    cfit_check_request_init(&r);
    r.catalog = *state;
    r.model = f.req.model;
    r.gpus = f.plan.gpus;
    r.tp = 8;
    cfit_check_result res;
    assert_int_equal(cfit_check_deepspeed(text, strlen(text), "emit.json", &r, &res, &d), CFIT_EOK);
    for (size_t i = 0; i < res.n; i++)
        print_message("%s: %s\n", res.findings[i].path, res.findings[i].message);
    assert_int_equal(res.errors, 0);
    assert_int_equal(res.warnings, 0);
    cfit_check_result_fini(&res);
    free(text);
}

static void test_deepspeed_zero3_cp(void **state)
{
    fixture f;
    plan(state, &f, "llama3-8b", 256, 1, 1, 8, 2, 1, 1, 3, CFIT_RECOMPUTE_NONE, CFIT_PREC_FP8);
    char *text = emit(&f, CFIT_EMIT_DEEPSPEED);
    has_line(text, "  \"sequence_parallel_size\": 2,");
    has_line(text, "    \"prefetch_bucket_size\": 50000000,");
    assert_null(strstr(text, "fp8"));          /* DeepSpeed has no fp8 key */
    assert_null(strstr(text, "\"pipeline\""));
    free(text);
}

static void test_megatron(void **state)
{
    fixture f;
    plan(state, &f, "llama3-70b", 512, 8, 4, 2, 2, 5, 1, 1, CFIT_RECOMPUTE_SELECTIVE, CFIT_PREC_FP8);
    char *text = emit(&f, CFIT_EMIT_MEGATRON);
    static const char *const want[] = {
        "--tensor-model-parallel-size 8", "--pipeline-model-parallel-size 4",
        "--num-layers-per-virtual-pipeline-stage 4", "--context-parallel-size 2", "--sequence-parallel",
        "--micro-batch-size 1", "--global-batch-size 512", "--use-distributed-optimizer",
        "--overlap-grad-reduce", "--overlap-param-gather", "--recompute-granularity selective",
        "--num-layers 80", "--hidden-size 8192", "--ffn-hidden-size 28672", "--num-attention-heads 64",
        "--group-query-attention", "--num-query-groups 8", "--seq-length 8192",
        "--max-position-embeddings 8192", "--swiglu", "--untie-embeddings-and-output-weights", "--bf16",
        "--fp8-format hybrid",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        has_line(text, want[i]);
    free(text);
}

static void test_megatron_uneven_block(void **state)
{
    fixture f;
    /* Llama 3 405B: 126 layers on 16 stages, 15 x 8 + 6 */
    plan(state, &f, "llama3-405b", 2048, 8, 16, 8, 1, 1, 1, 1, CFIT_RECOMPUTE_BLOCK, CFIT_PREC_BF16);
    char *text = emit(&f, CFIT_EMIT_MEGATRON);
    has_line(text, "--decoder-last-pipeline-num-layers 6");
    has_line(text, "--recompute-granularity full");
    has_line(text, "--recompute-method block");
    assert_non_null(strstr(text, "--recompute-num-layers "));
    free(text);

    /* interleaved: Megatron counts recomputed layers per model chunk, so K per GPU becomes
     * ceil(K / vp) per chunk */
    plan(state, &f, "llama3-405b", 2048, 8, 16, 128, 1, 7, 1, 1, CFIT_RECOMPUTE_BLOCK, CFIT_PREC_BF16);
    assert_true(f.plan.recompute_layers > 0);
    char want[64];
    snprintf(want, sizeof want, "--recompute-num-layers %d", (f.plan.recompute_layers + 6) / 7);
    text = emit(&f, CFIT_EMIT_MEGATRON);
    has_line(text, want);
    free(text);
}

/* Megatron-FSDP (ZeRO-3) needs --ckpt-format fsdp_dtensor and CUDA_DEVICE_MAX_CONNECTIONS unset;
 * the emitted arguments pass check with no error. */
static void test_megatron_fsdp(void **state)
{
    fixture f;
    plan(state, &f, "llama3-8b", 256, 2, 1, 16, 1, 1, 1, 3, CFIT_RECOMPUTE_NONE, CFIT_PREC_BF16);
    char *text = emit(&f, CFIT_EMIT_MEGATRON);
    has_line(text, "--use-megatron-fsdp");
    has_line(text, "--data-parallel-sharding-strategy optim_grads_params");
    has_line(text, "--ckpt-format fsdp_dtensor");
    cfit_check_request r;
    cfit_check_request_init(&r);
    r.catalog = *state;
    r.gpus = 32;
    cfit_check_result res;
    cfit_diag d;
    cfit_diag_clear(&d);
    assert_int_equal(cfit_check_megatron(text, strlen(text), "m.txt", &r, &res, &d), CFIT_EOK);
    assert_int_equal(res.errors, 0);
    cfit_check_result_fini(&res);
    free(text);
    text = emit(&f, CFIT_EMIT_TORCHRUN);
    assert_null(strstr(text, "CUDA_DEVICE_MAX_CONNECTIONS"));
    free(text);
}

static void test_torchrun(void **state)
{
    fixture f;
    plan(state, &f, "llama3-8b", 256, 2, 1, 16, 1, 1, 1, 1, CFIT_RECOMPUTE_NONE, CFIT_PREC_BF16);
    char *text = emit(&f, CFIT_EMIT_TORCHRUN);
    has_line(text, "export CUDA_DEVICE_MAX_CONNECTIONS=1");
    assert_non_null(strstr(text, "torchrun --nnodes 4 --nproc-per-node 8 "));
    assert_non_null(strstr(text, "srun --nodes 4 --ntasks-per-node 1 --gpus-per-node 8 torchrun"));
    free(text);
}

/* An MoE plan built by hand (the planner does not cost MoE yet): layout, batch and GPUs only. */
static void moe_plan(void **state, fixture *f, const char *m, int tp, int pp, int dp, int ep, int etp, long gbs)
{
    cfit_catalog *cat = *state;
    memset(f, 0, sizeof *f);
    cfit_plan_request_init(&f->req);
    f->req.catalog = cat;
    f->req.model = cfit_catalog_model(cat, m, NULL);
    assert_non_null(f->req.model);
    f->gpu = cfit_catalog_gpu(cat, "h100-sxm", NULL);
    f->plan.gpu = f->gpu;
    f->plan.gpus = (long)tp * pp * dp;
    f->plan.layout = (cfit_layout){tp, pp, dp, 1, 1, 1, 1, CFIT_RECOMPUTE_NONE, tp > 1, ep, etp, 0, 0};
    f->plan.global_batch = gbs;
    f->plan.grad_accum = gbs / dp;
}

/* The emitted arguments pass check on the plan's GPUs with no error and no warning. */
static void checks_clean(void **state, const fixture *f, const char *text)
{
    cfit_check_request r;
    cfit_check_request_init(&r);
    r.catalog = *state;
    r.gpus = f->plan.gpus;
    cfit_check_result res;
    cfit_diag d;
    cfit_diag_clear(&d);
    assert_int_equal(cfit_check_megatron(text, strlen(text), "m.txt", &r, &res, &d), CFIT_EOK);
    for (size_t i = 0; i < res.n; i++)
        print_message("%s: %s\n", res.findings[i].path, res.findings[i].message);
    assert_int_equal(res.errors, 0);
    assert_int_equal(res.warnings, 0);
    cfit_check_result_fini(&res);
}

/* DeepSeek-V3: 256 experts top-8, one shared expert, the first 3 layers dense, MLA. */
static void test_megatron_moe_mla(void **state)
{
    fixture f;
    moe_plan(state, &f, "deepseek-v3", 2, 16, 32, 64, 1, 8192);
    char *text = emit(&f, CFIT_EMIT_MEGATRON);
    static const char *const want[] = {
        "--expert-model-parallel-size 64", "--expert-tensor-parallel-size 1", "--num-experts 256",
        "--moe-router-topk 8", "--moe-ffn-hidden-size 2048", "--moe-shared-expert-intermediate-size 2048",
        "--moe-layer-freq '([0]*3+[1]*58)'", "--moe-token-dispatcher-type alltoall", "--moe-grouped-gemm",
        "--multi-latent-attention", "--q-lora-rank 1536", "--kv-lora-rank 512", "--qk-head-dim 128",
        "--qk-pos-emb-head-dim 64", "--v-head-dim 128", "--decoder-last-pipeline-num-layers 1",
        "--moe-router-score-function sigmoid", "--moe-router-num-groups 8", "--moe-router-group-topk 4",
        "--moe-router-enable-expert-bias", "--moe-router-bias-update-rate 0.001",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        has_line(text, want[i]);
    assert_null(strstr(text, "--group-query-attention"));   /* exclusive with MLA */
    assert_null(strstr(text, "--disable-bias-linear"));     /* ETP 1: biases allowed */
    checks_clean(state, &f, text);
    free(text);
}

/* Llama 4 Maverick alternates dense and MoE layers (the pattern repeats), its top-1 router scores
 * by sigmoid (so no pre-softmax); ETP 2 needs the biases off; Qwen3's head_dim 128 differs from
 * hidden / heads. */
static void test_megatron_moe_patterns(void **state)
{
    fixture f;
    moe_plan(state, &f, "llama4-maverick", 4, 4, 16, 16, 2, 1024);
    char *text = emit(&f, CFIT_EMIT_MEGATRON);
    has_line(text, "--moe-layer-freq '([0]+[1])*24'");
    has_line(text, "--moe-router-score-function sigmoid");
    assert_null(strstr(text, "--moe-router-pre-softmax"));
    has_line(text, "--expert-tensor-parallel-size 2");
    has_line(text, "--disable-bias-linear");
    has_line(text, "--group-query-attention");
    checks_clean(state, &f, text);
    free(text);
    moe_plan(state, &f, "qwen3-30b-a3b", 1, 1, 64, 8, 0, 512);
    text = emit(&f, CFIT_EMIT_MEGATRON);
    has_line(text, "--moe-layer-freq 1");
    has_line(text, "--kv-channels 128");
    has_line(text, "--expert-tensor-parallel-size 1");
    assert_null(strstr(text, "--moe-shared-expert-intermediate-size"));
    checks_clean(state, &f, text);
    free(text);
}

/* The plan's own split of DeepSeek-V3's layers (plan.h stage_layers_first/last): each end that
 * differs from the middle stages' share is written, and Megatron accepts it. */
static void test_megatron_moe_split(void **state)
{
    fixture f;
    moe_plan(state, &f, "deepseek-v3", 1, 16, 128, 64, 1, 4096);
    f.plan.stage_layers_first = 2, f.plan.stage_layers_last = 3;   /* middle 14 x 4 */
    char *text = emit(&f, CFIT_EMIT_MEGATRON);
    has_line(text, "--decoder-first-pipeline-num-layers 2");
    has_line(text, "--decoder-last-pipeline-num-layers 3");
    checks_clean(state, &f, text);
    free(text);
    f.plan.stage_layers_first = 4, f.plan.stage_layers_last = 1;   /* the first as the middle */
    text = emit(&f, CFIT_EMIT_MEGATRON);
    assert_null(strstr(text, "--decoder-first-pipeline-num-layers"));
    has_line(text, "--decoder-last-pipeline-num-layers 1");
    checks_clean(state, &f, text);
    free(text);
}

/* Expert parallelism the model cannot take is refused, not emitted. */
static void test_megatron_moe_refused(void **state)
{
    fixture f;
    char *out = (char *)1;
    cfit_diag d;
    moe_plan(state, &f, "mixtral-8x7b", 1, 1, 8, 3, 1, 64);
    assert_int_equal(cfit_emit(CFIT_EMIT_MEGATRON, &f.req, &f.plan, 0, &out, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "EP 3 does not divide the 8 experts"));
    assert_null(out);
    moe_plan(state, &f, "llama3-8b", 1, 1, 8, 2, 1, 64);
    assert_int_equal(cfit_emit(CFIT_EMIT_MEGATRON, &f.req, &f.plan, 0, &out, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "dense"));
    moe_plan(state, &f, "llama3-8b", 1, 1, 8, 1, 1, 64);   /* EP 1: a dense model's plain layout */
    out = emit(&f, CFIT_EMIT_MEGATRON);
    assert_null(strstr(out, "expert"));
    free(out);
}

static void test_kinds(void **state)
{
    (void)state;
    cfit_emit_kind k;
    cfit_diag d;
    assert_int_equal(cfit_emit_kind_parse("megatron", &k, &d), CFIT_EOK);
    assert_int_equal(k, CFIT_EMIT_MEGATRON);
    assert_string_equal(cfit_emit_kind_name(CFIT_EMIT_TORCHRUN), "torchrun");
    assert_int_equal(cfit_emit_kind_parse("deepsped", &k, &d), CFIT_EUNKNOWN);
    assert_non_null(strstr(d.msg, "did you mean 'deepspeed'"));
    fixture f;
    memset(&f, 0, sizeof f);
    char *out = (char *)1;
    assert_int_equal(cfit_emit(CFIT_EMIT_DEEPSPEED, &f.req, &f.plan, 0, &out, &d), CFIT_EINVALID);
    assert_null(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deepspeed_batch),
        cmocka_unit_test(test_deepspeed_zero3_cp),
        cmocka_unit_test(test_megatron),
        cmocka_unit_test(test_megatron_uneven_block),
        cmocka_unit_test(test_megatron_fsdp),
        cmocka_unit_test(test_torchrun),
        cmocka_unit_test(test_megatron_moe_mla),
        cmocka_unit_test(test_megatron_moe_patterns),
        cmocka_unit_test(test_megatron_moe_split),
        cmocka_unit_test(test_megatron_moe_refused),
        cmocka_unit_test(test_kinds),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
