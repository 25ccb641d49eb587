/* test_check.c - DeepSpeed config findings (src/core/check.c, src/core/ds_schema.c).
 *
 * Each test feeds a small config and asserts the findings by JSON path, severity and
 * position; the issue's example must produce one finding for each class of problem.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "clusterfit/frameworks.h"

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

/* Check text with a world size and (optionally) a model; fails the test on a parse error. */
static void run(void **state, const char *text, long gpus, const char *model, int tp, cfit_check_result *res)
{
    cfit_check_request r;
    cfit_check_request_init(&r);
    r.catalog = *state;
    r.gpus = gpus;
    r.tp = tp;
    if (model)
        r.model = cfit_catalog_model(*state, model, NULL);
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = cfit_check_deepspeed(text, strlen(text), "t.json", &r, res, &d);
    if (rc)
        fail_msg("check failed: %s:%d:%d: %s", d.file, d.line, d.col, d.msg);
}

/* The finding at path whose message contains word (NULL: any), or NULL. */
static const cfit_finding *find(const cfit_check_result *res, const char *path, const char *word)
{
    for (size_t i = 0; i < res->n; i++)
        if (strcmp(res->findings[i].path, path) == 0 && (!word || strstr(res->findings[i].message, word)))
            return &res->findings[i];
    return NULL;
}

static const cfit_finding *must(const cfit_check_result *res, const char *path, const char *word,
                                cfit_severity sev)
{
    const cfit_finding *f = find(res, path, word);
    if (!f) {
        for (size_t i = 0; i < res->n; i++)
            print_message("  have %s: %s\n", res->findings[i].path, res->findings[i].message);
        fail_msg("no finding at '%s' mentioning '%s'", path, word ? word : "");
    }
    assert_int_equal(f->severity, sev);
    return f;
}

static const char *issue_example =
    "{\"train_batch_size\": 128, \"gradient_accumulation_steps\": 4, \"zero_optimization\": {\"stage\": 3,\n"
    "\"reduce_bucket_size\": \"5e8\", \"prefetch_bucket_size\": \"3e8\"}, \"tensor_parallel\": {\"enabled\": true,\n"
    "\"tp_size\": 8}, \"pipeline_parallel\": {\"enabled\": true, \"pipeline_size\": 4},\n"
    "\"communication_data_type\": \"bf16\"}";

static void test_issue_example(void **state)
{
    cfit_check_result res;
    run(state, issue_example, 32, "llama3-70b", 0, &res);
    /* unknown keys, precisely described */
    must(&res, "tensor_parallel.enabled", "extra_forbidden", CFIT_SEV_ERROR);
    /* numbers given as strings, with the position of the value */
    const cfit_finding *f = must(&res, "zero_optimization.reduce_bucket_size", "\"5e8\"", CFIT_SEV_ERROR);
    assert_int_equal(f->line, 2);
    assert_int_equal(f->col, 23);
    assert_non_null(strstr(f->fix, "500000000"));
    must(&res, "zero_optimization.prefetch_bucket_size", "\"3e8\"", CFIT_SEV_ERROR);
    /* parallelism keys DeepSpeed does not have */
    f = must(&res, "pipeline_parallel", "not a DeepSpeed config key", CFIT_SEV_ERROR);
    assert_non_null(strstr(f->fix, "PipelineModule"));
    must(&res, "tensor_parallel.tp_size", "tensor_parallel.tp", CFIT_SEV_ERROR);
    /* world size, batch arithmetic, unsupported combination, memory */
    must(&res, "tensor_parallel.tp_size", "world size 32 != TP 8 x PP 4 x DP 32", CFIT_SEV_ERROR);
    must(&res, "train_batch_size", "batch arithmetic", CFIT_SEV_ERROR);
    must(&res, "zero_optimization.stage", "incompatible with pipeline parallelism", CFIT_SEV_ERROR);
    must(&res, "train_batch_size", "memory", CFIT_SEV_ERROR);
    assert_true(res.errors >= 9);
    cfit_check_result_fini(&res);
}

static void test_clean(void **state)
{
    cfit_check_result res;
    run(state,
        "{\"train_batch_size\": 256, \"train_micro_batch_size_per_gpu\": 1, \"gradient_accumulation_steps\": 4,"
        " \"bf16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 3, \"reduce_bucket_size\": 5e8,"
        " \"stage3_max_live_parameters\": 1e9}, \"gradient_clipping\": 1.0}",
        64, "llama3-8b", 0, &res);
    assert_int_equal(res.errors, 0);
    assert_int_equal(res.warnings, 0);
    cfit_check_result_fini(&res);
}

static void test_batch_arithmetic(void **state)
{
    cfit_check_result res;
    run(state, "{\"train_batch_size\": 30, \"train_micro_batch_size_per_gpu\": 4, \"bf16\": {\"enabled\": true}}",
        2, NULL, 0, &res);
    must(&res, "train_batch_size", "30 != micro 4 x accumulation 3 x DP 2", CFIT_SEV_ERROR);
    cfit_check_result_fini(&res);
    /* the same with an mpu of TP 4: DP 2 of 8 GPUs */
    run(state, "{\"train_batch_size\": 32, \"train_micro_batch_size_per_gpu\": 4, \"gradient_accumulation_steps\": 4,"
        " \"bf16\": {\"enabled\": true}}", 8, NULL, 4, &res);
    assert_int_equal(res.errors, 0);
    cfit_check_result_fini(&res);
    run(state, "{\"gradient_accumulation_steps\": 4, \"bf16\": {\"enabled\": true}}", 8, NULL, 0, &res);
    must(&res, "", "needs to be provided", CFIT_SEV_ERROR);
    cfit_check_result_fini(&res);
}

static void test_types_and_aliases(void **state)
{
    cfit_check_result res;
    run(state,
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},\n"
        " \"zero_optimization\": {\"stage\": 1, \"reduce_bucket_size\": \"500000000\", \"sub_group_size\": 2.5,\n"
        " \"prefetch_bucket_size\": 1, \"stage3_prefetch_bucket_size\": 1, \"overlap_comm\": \"yes\"},\n"
        " \"steps_per_print\": \"auto\"}",
        0, NULL, 0, &res);
    must(&res, "zero_optimization.reduce_bucket_size", "lax mode", CFIT_SEV_WARNING);
    must(&res, "zero_optimization.sub_group_size", "int_from_float", CFIT_SEV_ERROR);
    must(&res, "zero_optimization.stage3_prefetch_bucket_size", "alias", CFIT_SEV_ERROR);
    must(&res, "zero_optimization.overlap_comm", "lax mode converts it to true", CFIT_SEV_WARNING);
    must(&res, "steps_per_print", "auto", CFIT_SEV_ERROR);
    cfit_check_result_fini(&res);
}

/* Issue 17: a Hugging Face Trainer config - "auto" where HfTrainerDeepSpeedConfig fills it
 * (transformers integrations/deepspeed.py) is accepted, each noted as not verified. */
static void test_hf_auto(void **state)
{
    cfit_check_result res;
    run(state,
        "{\"train_batch_size\": \"auto\", \"train_micro_batch_size_per_gpu\": \"auto\",\n"
        " \"gradient_accumulation_steps\": \"auto\", \"gradient_clipping\": \"auto\",\n"
        " \"fp16\": {\"enabled\": \"auto\"}, \"bf16\": {\"enabled\": \"auto\"},\n"
        " \"optimizer\": {\"type\": \"AdamW\", \"params\": {\"lr\": \"auto\", \"betas\": \"auto\"}},\n"
        " \"zero_optimization\": {\"stage\": 3, \"reduce_bucket_size\": \"auto\",\n"
        "  \"stage3_prefetch_bucket_size\": \"auto\", \"stage3_param_persistence_threshold\": \"auto\"}}",
        8, "llama3-8b", 0, &res);
    assert_int_equal(res.errors, 0);
    assert_int_equal(res.warnings, 0);
    must(&res, "train_batch_size", "not verified", CFIT_SEV_INFO);
    must(&res, "fp16.enabled", "TrainingArguments.fp16", CFIT_SEV_INFO);
    must(&res, "optimizer.params.lr", "learning_rate", CFIT_SEV_INFO);
    must(&res, "zero_optimization.stage3_prefetch_bucket_size", "hidden_size", CFIT_SEV_INFO);
    must(&res, "", "11 values are \"auto\"", CFIT_SEV_INFO);
    must(&res, "", "batch arithmetic", CFIT_SEV_INFO);
    cfit_check_result_fini(&res);
    /* "auto" where the Trainer fills nothing keeps its findings */
    run(state, "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true}, \"steps_per_print\": \"auto\",\n"
        " \"zero_optimization\": {\"stage\": 1, \"allgather_bucket_size\": \"auto\"}}", 0, NULL, 0, &res);
    must(&res, "steps_per_print", "auto", CFIT_SEV_ERROR);
    must(&res, "zero_optimization.allgather_bucket_size", "dropped", CFIT_SEV_WARNING);
    cfit_check_result_fini(&res);
}

/* Strings and numbers for booleans as pydantic's lax mode takes them; dict.get sections take none. */
static void test_lax_values(void **state)
{
    cfit_check_result res;
    run(state,
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": \"True\"},\n"
        " \"zero_optimization\": {\"stage\": 1, \"overlap_comm\": \"off\", \"contiguous_gradients\": 1,\n"
        "  \"reduce_scatter\": \"maybe\", \"allgather_partitions\": 2},\n"
        " \"fp16\": {\"enabled\": false, \"loss_scale\": \"0\"},\n"
        " \"activation_checkpointing\": {\"partition_activations\": \"false\"}}",
        0, NULL, 0, &res);
    must(&res, "bf16.enabled", "converts it to true", CFIT_SEV_WARNING);
    must(&res, "zero_optimization.overlap_comm", "converts it to false", CFIT_SEV_WARNING);
    must(&res, "zero_optimization.contiguous_gradients", "converts it to true", CFIT_SEV_WARNING);
    must(&res, "zero_optimization.reduce_scatter", "bool_parsing", CFIT_SEV_ERROR);
    must(&res, "zero_optimization.allgather_partitions", "bool_parsing", CFIT_SEV_ERROR);
    must(&res, "fp16.loss_scale", "lax mode", CFIT_SEV_WARNING);
    must(&res, "activation_checkpointing.partition_activations", "counts as true", CFIT_SEV_ERROR);
    assert_null(find(&res, "", "neither bf16 nor fp16"));   /* "True" enables bf16 */
    cfit_check_result_fini(&res);
}

/* fp16.loss_scale: 0 = dynamic, > 0 static, < 0 an error; deprecated ZeRO keys name their replacement. */
static void test_loss_scale_and_deprecated(void **state)
{
    cfit_check_result res;
    run(state,
        "{\"train_micro_batch_size_per_gpu\": 1, \"fp16\": {\"enabled\": true, \"loss_scale\": 0},\n"
        " \"zero_optimization\": {\"stage\": 3, \"cpu_offload\": true, \"cpu_offload_use_pin_memory\": true,\n"
        "  \"stage3_gather_fp16_weights_on_model_save\": true}}",
        0, NULL, 0, &res);
    assert_int_equal(res.errors, 0);
    must(&res, "zero_optimization.cpu_offload", "use offload_optimizer instead", CFIT_SEV_WARNING);
    must(&res, "zero_optimization.cpu_offload_use_pin_memory", "ignores the value", CFIT_SEV_WARNING);
    must(&res, "zero_optimization.stage3_gather_fp16_weights_on_model_save",
         "use gather_16bit_weights_on_model_save instead", CFIT_SEV_WARNING);
    cfit_check_result_fini(&res);
    run(state,
        "{\"train_micro_batch_size_per_gpu\": 1, \"fp16\": {\"enabled\": true, \"loss_scale\": -1},\n"
        " \"zero_optimization\": {\"stage\": 2, \"cpu_offload\": true, \"offload_optimizer\": {\"device\": \"cpu\"}}}",
        0, NULL, 0, &res);
    must(&res, "fp16.loss_scale", "negative", CFIT_SEV_ERROR);
    must(&res, "zero_optimization.cpu_offload", "Cannot provide deprecated parameter", CFIT_SEV_ERROR);
    cfit_check_result_fini(&res);
}

/* Keys and types re-checked against DeepSpeed's pydantic models (docs/check.md): fields added
 * since 0.19.6-dev, int fields without ge=0, and the comet, trackio and hybrid_engine models. */
static void test_schema_fields(void **state)
{
    cfit_check_result res;
    run(state,
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true}, \"disable_python_gc\": true,\n"
        " \"zero_optimization\": {\"stage\": 3, \"stage3_partition_stream_chunk_size\": 100000000,\n"
        "  \"module_granularity_threshold\": -1, \"mics_shard_size\": -1,\n"
        "  \"offload_optimizer\": {\"device\": \"cpu\", \"convert_grad_on_cpu\": false}},\n"
        " \"tensor_parallel\": {\"autotp_size\": 0}, \"trackio\": {\"enabled\": false, \"project\": \"p\"},\n"
        " \"comet\": {\"enabled\": false, \"samples_log_interval\": 10},\n"
        " \"hybrid_engine\": {\"enabled\": false, \"max_out_tokens\": 512}}",
        0, NULL, 0, &res);
    for (size_t i = 0; i < res.n; i++)
        print_message("  have %s: %s\n", res.findings[i].path, res.findings[i].message);
    assert_int_equal(res.n, 0);
    cfit_check_result_fini(&res);
    run(state,
        "{\"train_micro_batch_size_per_gpu\": 1, \"fp16\": {\"enabled\": true, \"min_loss_scale\": 0.5},\n"
        " \"comet\": {\"enable\": true}, \"hybrid_engine\": {\"max_out_tokenz\": 1}}",
        0, NULL, 0, &res);
    must(&res, "fp16.min_loss_scale", "int_from_float", CFIT_SEV_ERROR);
    must(&res, "comet.enable", NULL, CFIT_SEV_ERROR);
    must(&res, "hybrid_engine.max_out_tokenz", NULL, CFIT_SEV_ERROR);
    cfit_check_result_fini(&res);
}

/* runtime/config.py: data types and the all-reduce op are lower-cased before the check;
 * _do_error_check's ZeRO-only precision options; zero/config.py's partial offload. */
static void test_error_checks(void **state)
{
    cfit_check_result res;
    run(state,
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},\n"
        " \"communication_data_type\": \"BF16\", \"seq_parallel_communication_data_type\": \"FP32\",\n"
        " \"gradient_allreduce_op\": \"Mean\", \"zero_optimization\": {\"stage\": 3,\n"
        "  \"offload_optimizer\": {\"device\": \"cpu\", \"ratio\": 0.5}}}",
        0, NULL, 0, &res);
    assert_int_equal(res.n, 0);
    cfit_check_result_fini(&res);
    run(state,
        "{\"train_micro_batch_size_per_gpu\": 1,\n"
        " \"bf16\": {\"enabled\": true, \"bf16_optimizer_states\": true},\n"
        " \"seq_parallel_communication_data_type\": \"int8\", \"gradient_allreduce_op\": \"max\",\n"
        " \"zero_optimization\": {\"stage\": 0, \"offload_optimizer\": {\"device\": \"cpu\", \"ratio\": 0.5}}}",
        0, NULL, 0, &res);
    must(&res, "bf16.bf16_optimizer_states", "ZeRO Stage 1, 2, or 3", CFIT_SEV_ERROR);
    must(&res, "bf16.bf16_optimizer_states", "requires bf16_master_weights_and_grads", CFIT_SEV_ERROR);
    must(&res, "seq_parallel_communication_data_type", "not a communication data type", CFIT_SEV_ERROR);
    must(&res, "gradient_allreduce_op", "not a gradient all-reduce operation", CFIT_SEV_ERROR);
    must(&res, "zero_optimization.offload_optimizer.ratio", "Partial offloading", CFIT_SEV_ERROR);
    assert_int_equal(res.errors, 5);
    cfit_check_result_fini(&res);
}

static void test_unknown_keys(void **state)
{
    cfit_check_result res;
    run(state,
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true, \"check_overflow\": true},\n"
        " \"zero_optimisation\": {\"stage\": 2}, \"flops_profiler\": {\"enable\": true}, \"whatever\": 1}",
        0, NULL, 0, &res);
    const cfit_finding *f = must(&res, "zero_optimisation", "ignores it silently", CFIT_SEV_ERROR);
    assert_non_null(strstr(f->fix, "\"zero_optimization\""));
    assert_int_equal(f->line, 2);
    assert_int_equal(f->col, 2);
    must(&res, "bf16.check_overflow", "extra_forbidden", CFIT_SEV_ERROR);
    f = must(&res, "flops_profiler.enable", NULL, CFIT_SEV_ERROR);
    assert_non_null(strstr(f->fix, "\"enabled\""));
    must(&res, "whatever", "ignores it", CFIT_SEV_WARNING);
    cfit_check_result_fini(&res);
}

static void test_combinations(void **state)
{
    cfit_check_result res;
    run(state,
        "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true}, \"fp16\": {\"enabled\": true},"
        " \"zero_optimization\": {\"stage\": 3}, \"gradient_allreduce_op\": \"sum\", \"pipeline\": {\"stages\": 2},"
        " \"communication_data_type\": \"fp8\"}",
        8, NULL, 0, &res);
    must(&res, "fp16.enabled", "simultaneously", CFIT_SEV_ERROR);
    must(&res, "gradient_allreduce_op", "ZeRO stage 3", CFIT_SEV_ERROR);
    must(&res, "zero_optimization.stage", "incompatible with pipeline", CFIT_SEV_ERROR);
    must(&res, "communication_data_type", "fp8", CFIT_SEV_ERROR);
    cfit_check_result_fini(&res);
}

static void test_bad_input(void **state)
{
    static const char *const bad[] = {"", "{", "[1]", "{\"a\": 1,}", "{\"a\": 1, \"a\": 2}", "nul", "\"x\""};
    cfit_check_request r;
    cfit_check_request_init(&r);
    r.catalog = *state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cfit_check_result res;
        cfit_diag d;
        cfit_diag_clear(&d);
        int rc = cfit_check_deepspeed(bad[i], strlen(bad[i]), "b.json", &r, &res, &d);
        assert_int_equal(rc, CFIT_EPARSE);
        assert_string_equal(d.file, "b.json");
        assert_true(d.line >= 1);
        assert_true(d.msg[0] != '\0');
    }
    cfit_check_result res;
    cfit_diag d;
    assert_int_equal(cfit_check_deepspeed("{}", (size_t)CFIT_CHECK_MAX_BYTES + 1, "huge.json", &r, &res, &d),
                     CFIT_ERANGE);
    assert_int_equal(cfit_check_deepspeed_file("/nonexistent/ds.json", &r, &res, &d), CFIT_EIO);
}

static void test_findings_sorted(void **state)
{
    cfit_check_result res;
    run(state, issue_example, 32, "llama3-70b", 0, &res);
    for (size_t i = 1; i < res.n; i++) {
        const cfit_finding *a = &res.findings[i - 1], *b = &res.findings[i];
        assert_true(a->line < b->line || (a->line == b->line && a->col <= b->col));
    }
    cfit_check_result_fini(&res);
}

static void run_mg(void **state, const char *text, long gpus, const char *model, cfit_check_result *res)
{
    cfit_check_request r;
    cfit_check_request_init(&r);
    r.catalog = *state;
    r.gpus = gpus;
    if (model)
        r.model = cfit_catalog_model(*state, model, NULL);
    cfit_diag d;
    cfit_diag_clear(&d);
    if (cfit_check_megatron(text, strlen(text), "a.txt", &r, res, &d))
        fail_msg("megatron check failed: %s:%d:%d: %s", d.file, d.line, d.col, d.msg);
}

static void test_megatron_rules(void **state)
{
    cfit_check_result res;
    run_mg(state,
           "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4\n"
           "--num-layers-per-virtual-pipeline-stage 3 --micro-batch-size 2 --global-batch-size 100\n"
           "--num-layers 80 --num-attention-heads 64 --seq-length 8192 --context-parallel-size 3\n"
           "--recompute-granularity selective --recompute-num-layers 2 --sequence-parallel\n",
           96, NULL, &res);
    must(&res, "--num-layers-per-virtual-pipeline-stage", "divisible", CFIT_SEV_ERROR);
    must(&res, "--global-batch-size", "micro-batches per step (50) >= PP and divisible by PP 4", CFIT_SEV_ERROR);
    must(&res, "--context-parallel-size", "2 x CP", CFIT_SEV_ERROR);
    must(&res, "--recompute-granularity", "selective", CFIT_SEV_ERROR);
    cfit_check_result_fini(&res);
    /* the world size from a torchrun line; quoting; a shell variable is not checked */
    run_mg(state,
           "torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py \\\n"
           "  --tensor-model-parallel-size 3 --micro-batch-size $MBS --data-path 'a b' --load \"x y\"\n",
           0, NULL, &res);
    must(&res, "--tensor-model-parallel-size", "world size (16)", CFIT_SEV_ERROR);
    const cfit_finding *f = must(&res, "--micro-batch-size", "shell variable", CFIT_SEV_INFO);
    assert_int_equal(f->line, 2);
    assert_int_equal(f->col, 34);
    assert_int_equal(res.errors, 1);
    cfit_check_result_fini(&res);
}

/* Issue 17: sizes of 0 are errors (validate_args divides by them or asserts > 0), not read as 1;
 * a negative value says so. */
static void test_megatron_zero_sizes(void **state)
{
    cfit_check_result res;
    run_mg(state,
           "--tensor-model-parallel-size 0 --pipeline-model-parallel-size 0\n"
           "--micro-batch-size 0 --global-batch-size 0 --num-layers 32 --context-parallel-size -2\n",
           8, NULL, &res);
    must(&res, "--tensor-model-parallel-size", "is 0", CFIT_SEV_ERROR);
    must(&res, "--pipeline-model-parallel-size", "ZeroDivisionError", CFIT_SEV_ERROR);
    must(&res, "--micro-batch-size", "micro_batch_size > 0", CFIT_SEV_ERROR);
    must(&res, "--global-batch-size", "global_batch_size > 0", CFIT_SEV_ERROR);
    must(&res, "--context-parallel-size", "is negative (-2)", CFIT_SEV_ERROR);
    assert_int_equal(res.errors, 5);
    cfit_check_result_fini(&res);
}

/* The flag table against Megatron-LM's parser (arguments.py): argparse types, nargs lists,
 * flags validate_args refuses, and Megatron-FSDP's checkpoint format. */
static void test_megatron_table(void **state)
{
    cfit_check_result res;
    run_mg(state,
           "--micro-batch-size 1 --rotary-base 500000 --train-samples 3000000000 --seed -1\n"
           "--data-path 0.3 /a/b 0.7 /c/d --recompute-modules core_attn mlp --cp-comm-type p2p a2a\n"
           "--grad-reduce-in-bf16 --lr 3e-4\n",
           0, NULL, &res);
    assert_int_equal(res.errors, 0);
    assert_int_equal(res.warnings, 0);
    assert_int_equal(res.infos, 0);
    cfit_check_result_fini(&res);
    run_mg(state,
           "--micro-batch-size 1 --rotary-base 5e5 --bf16-grads --batch-size 4 --checkpoint-activations\n"
           "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params\n"
           "--pipeline-model-parallel-size 4 --num-layers 30 --decoder-last-pipeline-num-layers 6\n"
           "--num-layers-per-virtual-pipeline-stage 2\n",
           0, NULL, &res);
    must(&res, "--rotary-base", "expects an integer", CFIT_SEV_ERROR);
    must(&res, "--bf16-grads", "not checked", CFIT_SEV_INFO);   /* no such flag: --grad-reduce-in-bf16 */
    must(&res, "--batch-size", "no longer valid", CFIT_SEV_ERROR);
    must(&res, "--checkpoint-activations", "no longer valid", CFIT_SEV_ERROR);
    must(&res, "--use-megatron-fsdp", "fsdp_dtensor", CFIT_SEV_ERROR);
    must(&res, "--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank",
         CFIT_SEV_ERROR);
    assert_int_equal(res.errors, 5);
    cfit_check_result_fini(&res);
    /* 48 micro-batches on PP 4 in groups of 8 (last group 0) pass; groups of 10 leave 8: pass;
     * groups of 14 leave 6: pass; groups of 3 are below PP */
    static const struct { const char *g; int errors; } groups[] = {{"8", 0}, {"10", 0}, {"14", 0}, {"3", 1}, {"50", 1}};
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        char text[400];
        snprintf(text, sizeof text, "--pipeline-model-parallel-size 4 --num-virtual-stages-per-pipeline-rank 2 "
                 "--num-layers 32 --micro-batch-size 1 --global-batch-size 96 "
                 "--microbatch-group-size-per-virtual-pipeline-stage %s\n", groups[i].g);
        run_mg(state, text, 8, NULL, &res);
        assert_int_equal(res.errors, groups[i].errors);
        cfit_check_result_fini(&res);
    }
    run_mg(state, "--micro-batch-size 1 --tp-comm-overlap --distribute-saved-activations\n", 0, NULL, &res);
    must(&res, "--tp-comm-overlap", "sequence parallelism", CFIT_SEV_ERROR);
    must(&res, "--distribute-saved-activations", "TP > 1", CFIT_SEV_ERROR);
    cfit_check_result_fini(&res);
    run_mg(state, "--micro-batch-size 1 --tensor-model-parallel-size 2 --sequence-parallel --tp-comm-overlap\n"
           "--distribute-saved-activations --recompute-granularity full --recompute-method uniform "
           "--recompute-num-layers 1\n", 0, NULL, &res);
    assert_int_equal(res.errors, 0);
    cfit_check_result_fini(&res);
    run_mg(state, "--micro-batch-size 1 --fp8-format e5m2 --recompute-granularity full --recompute-method Uniform "
           "--recompute-num-layers 1 --ckpt-format dcp\n", 0, NULL, &res);
    must(&res, "--fp8-format", "invalid choice", CFIT_SEV_ERROR);
    must(&res, "--recompute-method", "invalid choice", CFIT_SEV_ERROR);
    must(&res, "--ckpt-format", "invalid choice", CFIT_SEV_ERROR);
    assert_int_equal(res.errors, 3);
    cfit_check_result_fini(&res);
    run_mg(state, "--micro-batch-size 1 --use-torch-fsdp2 --ckpt-format torch\n", 0, NULL, &res);
    must(&res, "--use-torch-fsdp2", "--untie-embeddings-and-output-weights", CFIT_SEV_ERROR);
    must(&res, "--ckpt-format", "torch_dist or torch_dcp", CFIT_SEV_ERROR);
    cfit_check_result_fini(&res);
}

static void test_megatron_bad_input(void **state)
{
    cfit_check_request r;
    cfit_check_request_init(&r);
    r.catalog = *state;
    cfit_check_result res;
    cfit_diag d;
    cfit_diag_clear(&d);
    const char *text = "--micro-batch-size 1\n--load \"/ckpt\n";
    assert_int_equal(cfit_check_megatron(text, strlen(text), "m.txt", &r, &res, &d), CFIT_EPARSE);
    assert_int_equal(d.line, 2);
    assert_int_equal(d.col, 8);
    assert_non_null(strstr(d.msg, "unterminated"));
    assert_int_equal(cfit_check_megatron("--a\0b", 5, "m.txt", &r, &res, &d), CFIT_EPARSE);
}

/* A DeepSeek-V3 layout as Megatron-Core runs it (EP 64 over 1,024 GPUs, MLA, flex dispatcher):
 * every MoE and MLA flag is known and the expert grid fits. */
static const char *mg_moe_ok =
    "torchrun --nnodes 128 --nproc-per-node 8 pretrain_gpt.py\n"
    "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 16 --sequence-parallel\n"
    "--expert-model-parallel-size 64 --expert-tensor-parallel-size 1\n"
    "--micro-batch-size 1 --global-batch-size 8192 --num-layers 61\n"
    "--decoder-first-pipeline-num-layers 3 --decoder-last-pipeline-num-layers 2\n"
    "--multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128\n"
    "--qk-pos-emb-head-dim 64 --v-head-dim 128 --num-experts 256 --moe-router-topk 8\n"
    "--moe-ffn-hidden-size 2048 --moe-shared-expert-intermediate-size 2048\n"
    "--moe-layer-freq '([0]*3+[1]*58)' --moe-token-dispatcher-type flex\n"
    "--moe-flex-dispatcher-backend deepep --moe-grouped-gemm --moe-router-num-groups 8\n"
    "--moe-router-group-topk 4 --moe-router-score-function sigmoid --moe-router-enable-expert-bias\n";

static void test_megatron_moe_clean(void **state)
{
    cfit_check_result res;
    run_mg(state, mg_moe_ok, 0, NULL, &res);
    for (size_t i = 0; i < res.n; i++)
        print_message("  %s: %s\n", res.findings[i].path, res.findings[i].message);
    assert_int_equal(res.n, 0);
    cfit_check_result_fini(&res);
}

/* Expert parallelism: EP divides the experts, ETP x EP x PP divides the world, ETP (default TP)
 * > 1 needs --disable-bias-linear, EP without experts. */
static void test_megatron_moe_grid(void **state)
{
    cfit_check_result res;
    run_mg(state, "--micro-batch-size 1 --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2\n"
           "--num-experts 60 --moe-ffn-hidden-size 512 --expert-model-parallel-size 8\n", 64, NULL, &res);
    must(&res, "--expert-model-parallel-size", "multiple of expert model parallel_size (60 experts, EP 8)",
         CFIT_SEV_ERROR);
    must(&res, "--tensor-model-parallel-size", "ETP defaults to TP", CFIT_SEV_ERROR);
    must(&res, "--expert-model-parallel-size", "alltoall", CFIT_SEV_WARNING);
    cfit_check_result_fini(&res);
    run_mg(state, "--micro-batch-size 1 --pipeline-model-parallel-size 2 --num-experts 64 --moe-ffn-hidden-size 512\n"
           "--expert-model-parallel-size 8 --expert-tensor-parallel-size 4 --disable-bias-linear\n"
           "--moe-token-dispatcher-type alltoall\n", 32, NULL, &res);
    const cfit_finding *f = must(&res, "--expert-model-parallel-size", "world_size (32)", CFIT_SEV_ERROR);
    assert_non_null(strstr(f->message, "ETP 4 x EP 8 x PP 2 = 64"));
    assert_int_equal(res.errors, 1);
    cfit_check_result_fini(&res);
    /* the same on 64 GPUs fits: expert-data-parallel size 1 */
    run_mg(state, "--micro-batch-size 1 --pipeline-model-parallel-size 2 --num-experts 64 --moe-ffn-hidden-size 512\n"
           "--expert-model-parallel-size 8 --expert-tensor-parallel-size 4 --disable-bias-linear\n"
           "--moe-token-dispatcher-type alltoall\n", 64, NULL, &res);
    assert_int_equal(res.n, 0);
    cfit_check_result_fini(&res);
    run_mg(state, "--micro-batch-size 1 --expert-model-parallel-size 2 --moe-ffn-hidden-size 512 --moe-grouped-gemm\n",
           0, NULL, &res);
    must(&res, "--expert-model-parallel-size", "num_experts must be non None", CFIT_SEV_ERROR);
    must(&res, "--moe-ffn-hidden-size", "num_moe_experts is None", CFIT_SEV_ERROR);
    must(&res, "--moe-grouped-gemm", "without --num-experts", CFIT_SEV_WARNING);
    cfit_check_result_fini(&res);
    /* a mixed dense/MoE pattern lets --moe-ffn-hidden-size stand without experts (a warning in Megatron) */
    run_mg(state, "--micro-batch-size 1 --moe-ffn-hidden-size 512 --moe-layer-freq 2\n", 0, NULL, &res);
    assert_null(find(&res, "--moe-ffn-hidden-size", NULL));
    cfit_check_result_fini(&res);
}

/* Router, sizes, dispatcher choices and combinations. */
static void test_megatron_moe_router(void **state)
{
    cfit_check_result res;
    run_mg(state, "--micro-batch-size 1 --num-experts 8 --moe-router-topk 16 --moe-ffn-hidden-size 0\n"
           "--moe-token-dispatcher-type all2all --moe-router-num-groups 3 --moe-router-group-topk 4\n"
           "--moe-grouped-gemm=true --moe-shared-expert-gate\n", 0, NULL, &res);
    must(&res, "--moe-router-topk", "larger than num_experts 8", CFIT_SEV_ERROR);
    must(&res, "--moe-ffn-hidden-size", "positive", CFIT_SEV_ERROR);
    must(&res, "--moe-token-dispatcher-type", "invalid choice", CFIT_SEV_ERROR);
    must(&res, "--moe-router-num-groups", "divisible by moe_router_num_groups (3)", CFIT_SEV_ERROR);
    must(&res, "--moe-router-group-topk", "smaller than moe_router_num_groups", CFIT_SEV_ERROR);
    must(&res, "--moe-grouped-gemm", "switch", CFIT_SEV_ERROR);
    must(&res, "--moe-shared-expert-gate", "only effective", CFIT_SEV_WARNING);
    assert_int_equal(res.errors, 6);
    cfit_check_result_fini(&res);
    run_mg(state, "--micro-batch-size 1 --num-experts 16 --moe-router-topk 1 --moe-ffn-hidden-size 8192\n"
           "--moe-enable-deepep --moe-flex-dispatcher-backend hybridep --moe-pad-expert-input-to-capacity\n"
           "--moe-router-load-balancing-type sinkhorn --moe-expert-capacity-factor 1.0\n", 0, NULL, &res);
    assert_null(find(&res, "--moe-router-topk", NULL));   /* sinkhorn: no pre-softmax needed */
    must(&res, "--moe-enable-deepep", "flex token dispatcher", CFIT_SEV_ERROR);
    must(&res, "--moe-enable-deepep", "Only one backend", CFIT_SEV_ERROR);
    must(&res, "--moe-expert-capacity-factor", "load balancing", CFIT_SEV_ERROR);
    cfit_check_result_fini(&res);
    run_mg(state, "--micro-batch-size 1 --num-experts 16 --moe-router-topk 1 --moe-ffn-hidden-size 8192\n"
           "--moe-token-dispatcher-type flex --moe-pad-expert-input-to-capacity\n", 0, NULL, &res);
    must(&res, "--moe-router-topk", "--moe-router-pre-softmax", CFIT_SEV_ERROR);
    must(&res, "--moe-pad-expert-input-to-capacity", "deepep backend", CFIT_SEV_ERROR);
    must(&res, "--moe-pad-expert-input-to-capacity", "capacity_factor must be set", CFIT_SEV_ERROR);
    cfit_check_result_fini(&res);
}

/* --moe-layer-freq: Megatron's whitelist, Python's meaning, one element per layer. */
static void test_megatron_moe_layer_freq(void **state)
{
    static const struct {
        const char *freq;
        const char *word;   /* NULL: clean */
    } t[] = {
        {"1", NULL}, {"4", NULL}, {"'([0]*3+[1]*21)'", NULL}, {"'([0]+[1])*12'", NULL}, {"'2*[0,1,]*6'", NULL},
        {"'[1]*(20+4)'", NULL}, {"0", "divides by zero"}, {"x", "expects an integer"},
        {"'[1]*23'", "Invalid length of moe_layer_pattern: 23, expected 24"}, {"'([1] * 24)'", "allows only"},
        {"'[2]*24'", "Invalid layer pattern"}, {"'[01]+[1]*23'", "leading zeros"},
        {"'[1]*3*[1]'", "list times a list"}, {"'[1]*23+1'", "list plus a number"},
        {"'([1],[0])'", "tuple"}, {"'[[1]]*24'", "a list inside"}, {"'[1'", "unclosed '['"},
        {"'[1]*65537'", "limit of 65536"}, {"1+2", "expects an integer"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char text[300];
        snprintf(text, sizeof text, "--micro-batch-size 1 --num-layers 24 --num-experts 8 --moe-ffn-hidden-size 64 "
                 "--moe-layer-freq %s\n", t[i].freq);
        cfit_check_result res;
        run_mg(state, text, 0, NULL, &res);
        if (t[i].word)
            must(&res, "--moe-layer-freq", t[i].word, CFIT_SEV_ERROR);
        else if (res.n)
            fail_msg("%s: %s", t[i].freq, res.findings[0].message);
        cfit_check_result_fini(&res);
    }
    /* nesting deeper than CPython's parser allows is refused, not recursed into */
    char deep[700] = "--micro-batch-size 1 --num-experts 8 --moe-layer-freq ";
    size_t n = strlen(deep);
    for (int i = 0; i < 300; i++)
        deep[n++] = '(';
    memcpy(deep + n, "[1]", 4);
    cfit_check_result res;
    run_mg(state, deep, 0, NULL, &res);
    must(&res, "--moe-layer-freq", "nested", CFIT_SEV_ERROR);
    cfit_check_result_fini(&res);
}

static void test_megatron_mla(void **state)
{
    cfit_check_result res;
    run_mg(state, "--micro-batch-size 1 --multi-latent-attention --group-query-attention --num-query-groups 8\n"
           "--q-lora-rank 0 --v-head-dim 128\n", 0, NULL, &res);
    must(&res, "--group-query-attention", "mutually exclusive", CFIT_SEV_ERROR);
    must(&res, "--q-lora-rank", "positive", CFIT_SEV_ERROR);
    must(&res, "--multi-latent-attention", "default is 32", CFIT_SEV_WARNING);
    cfit_check_result_fini(&res);
    run_mg(state, "--micro-batch-size 1 --kv-lora-rank 512\n", 0, NULL, &res);
    must(&res, "--kv-lora-rank", "without --multi-latent-attention", CFIT_SEV_WARNING);
    cfit_check_result_fini(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_issue_example),
        cmocka_unit_test(test_clean),
        cmocka_unit_test(test_batch_arithmetic),
        cmocka_unit_test(test_types_and_aliases),
        cmocka_unit_test(test_hf_auto),
        cmocka_unit_test(test_lax_values),
        cmocka_unit_test(test_loss_scale_and_deprecated),
        cmocka_unit_test(test_schema_fields),
        cmocka_unit_test(test_error_checks),
        cmocka_unit_test(test_unknown_keys),
        cmocka_unit_test(test_combinations),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_findings_sorted),
        cmocka_unit_test(test_megatron_rules),
        cmocka_unit_test(test_megatron_zero_sizes),
        cmocka_unit_test(test_megatron_table),
        cmocka_unit_test(test_megatron_bad_input),
        cmocka_unit_test(test_megatron_moe_clean),
        cmocka_unit_test(test_megatron_moe_grid),
        cmocka_unit_test(test_megatron_moe_router),
        cmocka_unit_test(test_megatron_moe_layer_freq),
        cmocka_unit_test(test_megatron_mla),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
