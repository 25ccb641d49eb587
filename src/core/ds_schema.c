/* ds_schema.c - DeepSpeed's config keys, types and aliases, and the known mistakes.
 *
 * Written from DeepSpeed's own definitions as summarised (with file and line) in
 * data/references/frameworks.md: top-level keys from runtime/constants.py and
 * runtime/config.py (read with dict.get: unknown keys ignored), strict pydantic
 * sections from runtime/zero/config.py, zero/offload_config.py, precision_config.py,
 * tensor_parallel/config.py, monitor/config.py and comm/config.py.
 */
#include "core/ds_schema.h"

#include <string.h>

#define K(n, t) {n, CFIT__DS_##t, NULL, NULL}
#define O(n, s) {n, CFIT__DS_OBJ, &s, NULL}
#define A(n, t, of) {n, CFIT__DS_##t, NULL, of}
#define SECTION(var, name, strict, rows) \
    static const cfit__ds_section var = {name, strict, rows, sizeof rows / sizeof rows[0]}

static const cfit__ds_key offload_param_keys[] = {
    K("device", STR), K("nvme_path", STR), K("buffer_count", INT), K("buffer_size", INT),
    K("max_in_cpu", INT), K("pin_memory", BOOL),
};
SECTION(offload_param, "offload_param", 1, offload_param_keys);

static const cfit__ds_key offload_optimizer_keys[] = {
    K("device", STR), K("nvme_path", STR), K("buffer_count", INT), K("pin_memory", BOOL),
    K("pipeline_read", BOOL), K("pipeline_write", BOOL), K("fast_init", BOOL), K("ratio", NUM),
    K("super_offload", BOOL), K("convert_grad_on_cpu", BOOL), K("cpuadam_cores_perc", NUM),
};
SECTION(offload_optimizer, "offload_optimizer", 1, offload_optimizer_keys);

/* DeepSpeedZeroConfig (zero/config.py): stage3_* names are pydantic aliases. */
static const cfit__ds_key zero_keys[] = {
    K("stage", INT), K("contiguous_gradients", BOOL), K("reduce_scatter", BOOL),
    K("reduce_bucket_size", INT), K("use_multi_rank_bucket_allreduce", BOOL),
    K("allgather_partitions", BOOL), K("allgather_bucket_size", INT), K("overlap_comm", BOOL),
    K("load_from_fp32_weights", BOOL), K("elastic_checkpoint", BOOL),
    O("offload_param", offload_param), O("offload_optimizer", offload_optimizer),
    K("zenflow", DICT), K("sub_group_size", INT),
    K("prefetch_bucket_size", INT), A("stage3_prefetch_bucket_size", INT, "prefetch_bucket_size"),
    K("param_persistence_threshold", INT),
    A("stage3_param_persistence_threshold", INT, "param_persistence_threshold"),
    K("model_persistence_threshold", INT),
    A("stage3_model_persistence_threshold", INT, "model_persistence_threshold"),
    K("max_live_parameters", INT), A("stage3_max_live_parameters", INT, "max_live_parameters"),
    K("max_reuse_distance", INT), A("stage3_max_reuse_distance", INT, "max_reuse_distance"),
    K("gather_16bit_weights_on_model_save", BOOL),
    A("stage3_gather_16bit_weights_on_model_save", BOOL, "gather_16bit_weights_on_model_save"),
    K("module_granularity_threshold", SINT),
    A("stage3_module_granularity_threshold", SINT, "module_granularity_threshold"),
    K("use_all_reduce_for_fetch_params", BOOL),
    A("stage3_use_all_reduce_for_fetch_params", BOOL, "use_all_reduce_for_fetch_params"),
    K("allgather_sequential", BOOL), A("stage3_allgather_sequential", BOOL, "allgather_sequential"),
    K("partition_stream_chunk_size", INT),
    A("stage3_partition_stream_chunk_size", INT, "partition_stream_chunk_size"),
    K("ignore_unused_parameters", BOOL), K("legacy_stage1", BOOL), K("round_robin_gradients", BOOL),
    K("zero_hpz_partition_size", INT), K("zero_quantized_weights", BOOL),
    K("zero_quantized_nontrainable_weights", BOOL), K("zero_quantized_gradients", BOOL),
    K("zeropp_loco_param", DICT), K("mics_shard_size", SINT), K("mics_hierarchical_params_gather", BOOL),
    K("memory_efficient_linear", BOOL), K("pipeline_loading_checkpoint", BOOL),
    K("override_module_apply", BOOL), K("log_trace_cache_warnings", BOOL), K("enable_sanity_checks", BOOL),
    K("save_muon_momentum_buffer_in_memory", BOOL), K("leaf_module", DICT),
    /* deprecated, still accepted with a warning (the deprecated table below) */
    K("cpu_offload", BOOL), K("cpu_offload_param", BOOL), K("cpu_offload_use_pin_memory", BOOL),
    K("stage3_gather_fp16_weights_on_model_save", BOOL),
};
SECTION(zero, "zero_optimization", 1, zero_keys);

static const cfit__ds_key fp16_keys[] = {
    K("enabled", BOOL), K("auto_cast", BOOL), K("loss_scale", NUM), K("initial_scale_power", SINT),
    K("loss_scale_window", SINT), K("hysteresis", SINT), K("consecutive_hysteresis", BOOL),
    K("min_loss_scale", SINT), K("fp16_master_weights_and_grads", BOOL),
};
SECTION(fp16, "fp16", 1, fp16_keys);

static const cfit__ds_key bf16_keys[] = {
    K("enabled", BOOL), K("immediate_grad_update", BOOL), K("check_grad_overflow", BOOL),
    K("bf16_master_weights_and_grads", BOOL), K("bf16_optimizer_states", BOOL),
};
SECTION(bf16, "bf16", 1, bf16_keys);

static const cfit__ds_key tp_keys[] = {
    K("tp_size", SINT), K("tp_grain_size", SINT), K("mpu", ANY), K("tp_group", ANY),
};
SECTION(tpconf, "tp", 1, tp_keys);

/* TPTrainingConfig (tensor_parallel/config.py): DeepSpeed AutoTP for training. */
static const cfit__ds_key tensor_parallel_keys[] = {
    K("autotp_size", SINT), K("tp_overlap_comm", BOOL), K("dtype", ANY), O("tp", tpconf),
    {"tensor_parallel", CFIT__DS_OBJ, &tpconf, "tp"}, K("partition_config", DICT),
    K("preset_model", STR), K("injection_policy_tuple", ANY), K("keep_module_on_host", BOOL),
    K("replace_with_kernel_inject", BOOL), A("kernel_inject", BOOL, "replace_with_kernel_inject"),
};
SECTION(tensor_parallel, "tensor_parallel", 1, tensor_parallel_keys);

static const cfit__ds_key tensorboard_keys[] = {K("enabled", BOOL), K("output_path", STR), K("job_name", STR)};
SECTION(tensorboard, "tensorboard", 1, tensorboard_keys);
static const cfit__ds_key csv_keys[] = {K("enabled", BOOL), K("output_path", STR), K("job_name", STR)};
SECTION(csv_monitor, "csv_monitor", 1, csv_keys);
static const cfit__ds_key wandb_keys[] = {
    K("enabled", BOOL), K("group", STR), K("team", STR), K("project", STR),
};
SECTION(wandb, "wandb", 1, wandb_keys);
static const cfit__ds_key comet_keys[] = {
    K("enabled", BOOL), K("samples_log_interval", SINT), K("project", STR), K("workspace", STR),
    K("api_key", STR), K("experiment_name", STR), K("experiment_key", STR), K("online", BOOL), K("mode", STR),
};
SECTION(comet, "comet", 1, comet_keys);
static const cfit__ds_key trackio_keys[] = {K("enabled", BOOL), K("project", STR)};
SECTION(trackio, "trackio", 1, trackio_keys);
/* HybridEngineConfig (runtime/config.py): max_out_tokens has gt=0 */
static const cfit__ds_key hybrid_engine_keys[] = {
    K("enabled", BOOL), K("max_out_tokens", INT), K("inference_tp_size", SINT),
    K("release_inference_cache", BOOL), K("pin_parameters", BOOL), K("tp_gather_partition_size", SINT),
    K("enable_cuda_graph", BOOL),
};
SECTION(hybrid_engine, "hybrid_engine", 1, hybrid_engine_keys);
static const cfit__ds_key comms_keys[] = {
    K("enabled", BOOL), K("prof_all", BOOL), K("prof_ops", ANY), K("verbose", BOOL), K("debug", BOOL),
};
SECTION(comms_logger, "comms_logger", 1, comms_keys);

/* Lax sections (dict.get): an unknown key is ignored, so it is reported as a warning. */
static const cfit__ds_key act_ckpt_keys[] = {
    K("partition_activations", BOOL), K("number_checkpoints", INT), K("contiguous_memory_optimization", BOOL),
    K("synchronize_checkpoint_boundary", BOOL), K("profile", BOOL), K("cpu_checkpointing", BOOL),
};
SECTION(activation_checkpointing, "activation_checkpointing", 0, act_ckpt_keys);
static const cfit__ds_key flops_keys[] = {
    K("enabled", BOOL), K("recompute_fwd_factor", NUM), K("profile_step", INT), K("module_depth", NUM),
    K("top_modules", INT), K("detailed", BOOL), K("output_file", ANY),
};
SECTION(flops_profiler, "flops_profiler", 0, flops_keys);
static const cfit__ds_key pipeline_keys[] = {
    K("stages", ANY), K("partition", STR), K("seed_layers", BOOL), K("activation_checkpoint_interval", INT),
    K("pipe_partitioned", BOOL), K("grad_partitioned", BOOL), K("use_reentrant", BOOL),
};
SECTION(pipeline, "pipeline", 0, pipeline_keys);

static const cfit__ds_key top_keys[] = {
    K("train_batch_size", INT), K("train_micro_batch_size_per_gpu", INT), K("gradient_accumulation_steps", INT),
    K("managed_gradient_accumulation", BOOL), K("optimizer", DICT), K("scheduler", DICT),
    K("zero_allow_untested_optimizer", BOOL), K("zero_force_ds_cpu_optimizer", BOOL),
    O("fp16", fp16), O("bf16", bf16), O("bfloat16", bf16), K("amp", DICT), K("torch_autocast", DICT),
    K("data_types", DICT), K("communication_data_type", STR), K("seq_parallel_communication_data_type", STR),
    K("prescale_gradients", BOOL), K("gradient_predivide_factor", NUM), K("gradient_allreduce_op", STR),
    K("sparse_gradients", BOOL), K("disable_allgather", BOOL), K("gradient_clipping", NUM),
    {"zero_optimization", CFIT__DS_INT_OR_BOOL_OBJ, &zero, NULL}, O("tensor_parallel", tensor_parallel),
    O("pipeline", pipeline), K("sequence_parallel_size", INT), K("data_parallel_size", INT),
    K("expert_parallel", DICT), K("use_data_before_expert_parallelism", BOOL), K("elasticity", DICT),
    K("steps_per_print", INT), K("wall_clock_breakdown", BOOL), K("memory_breakdown", BOOL),
    K("dump_state", BOOL), K("disable_python_gc", BOOL), K("log_level", ANY), K("vocabulary_size", INT), K("dataloader_drop_last", BOOL),
    K("graph_harvesting", BOOL), O("flops_profiler", flops_profiler),
    O("activation_checkpointing", activation_checkpointing), K("checkpoint", DICT),
    O("tensorboard", tensorboard), O("wandb", wandb), O("csv_monitor", csv_monitor), O("comet", comet),
    O("trackio", trackio),
    O("comms_logger", comms_logger), K("autotuning", DICT), K("compile", DICT), K("timers", DICT),
    K("aio", DICT), K("nebula", DICT), K("datastates_ckpt", DICT), O("hybrid_engine", hybrid_engine),
    K("sparse_attention", DICT), K("progressive_layer_drop", DICT), K("data_efficiency", DICT),
    K("curriculum_learning", DICT), K("compression_training", DICT), K("quantize_training", DICT),
    K("weight_quantization", DICT),
};
SECTION(top, "", 0, top_keys);

const cfit__ds_section *cfit__ds_top(void)
{
    return &top;
}

const cfit__ds_key *cfit__ds_find(const cfit__ds_section *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->keys[i].name, name) == 0)
            return &s->keys[i];
    return NULL;
}

#define PP_FIX "DeepSpeed's pipeline degree comes from the model code, PipelineModule(layers, num_stages=N); " \
               "the \"pipeline\" section only tunes it; or launch with Megatron's --pipeline-model-parallel-size"
#define TP_FIX "training tensor parallelism comes from Megatron's mpu (--tensor-model-parallel-size) or " \
               "DeepSpeed AutoTP: \"tensor_parallel\": {\"autotp_size\": N}"

static const cfit__ds_hint hints[] = {
    {"", "pipeline_parallel", 1, 'p', "not a DeepSpeed config key: DeepSpeed ignores it, so no pipeline "
     "parallelism is configured", PP_FIX},
    {"", "pipeline_parallel_size", 1, 'p', "not a DeepSpeed config key: DeepSpeed ignores it", PP_FIX},
    {"", "pipeline_model_parallel_size", 1, 'p', "not a DeepSpeed config key: DeepSpeed ignores it", PP_FIX},
    {"", "pp_size", 1, 'p', "not a DeepSpeed config key: DeepSpeed ignores it", PP_FIX},
    {"", "tensor_parallel_size", 1, 't', "not a DeepSpeed config key: DeepSpeed ignores it", TP_FIX},
    {"", "tensor_model_parallel_size", 1, 't', "not a DeepSpeed config key: DeepSpeed ignores it", TP_FIX},
    {"", "model_parallel_size", 1, 't', "not a DeepSpeed config key: DeepSpeed ignores it", TP_FIX},
    {"", "tp_size", 1, 't', "not a DeepSpeed config key: DeepSpeed ignores it", TP_FIX},
    {"", "context_parallel", 1, 'c', "not a DeepSpeed config key: DeepSpeed ignores it",
     "DeepSpeed's sequence parallelism (Ulysses) is \"sequence_parallel_size\": N; Megatron's is "
     "--context-parallel-size"},
    {"", "context_parallel_size", 1, 'c', "not a DeepSpeed config key: DeepSpeed ignores it",
     "DeepSpeed's sequence parallelism (Ulysses) is \"sequence_parallel_size\": N; Megatron's is "
     "--context-parallel-size"},
    {"", "data_parallel", 1, 'd', "not a DeepSpeed config key: DeepSpeed ignores it",
     "DeepSpeed takes the data-parallel size from the world size; \"data_parallel_size\": N exists only "
     "together with \"sequence_parallel_size\""},
    {"", "fp8", 1, 0, "not a DeepSpeed config key: DeepSpeed has no fp8 setting and ignores it",
     "fp8 GEMMs come from Transformer Engine in the model code (or Megatron's --fp8-format hybrid); "
     "keep \"bf16\": {\"enabled\": true}"},
    {"", "zero_stage", 1, 0, "not a DeepSpeed config key: DeepSpeed ignores it and runs without ZeRO",
     "write \"zero_optimization\": {\"stage\": N}"},
    {"tensor_parallel", "enabled", 1, 0, "not a field of DeepSpeed's tensor_parallel (AutoTP) config: "
     "DeepSpeed rejects it (extra_forbidden); AutoTP is on when autotp_size > 1",
     "remove it and write \"autotp_size\": N"},
    {"tensor_parallel", "tp_size", 1, 't', "not a field of tensor_parallel: DeepSpeed rejects it "
     "(extra_forbidden); tp_size belongs in tensor_parallel.tp", TP_FIX},
    {"zero_optimization", "grad_hooks", 1, 0, "listed in DeepSpeed's config-json.md but not a field of "
     "DeepSpeedZeroConfig: DeepSpeed rejects it (extra_forbidden)", "remove it"},
    {"zero_optimization", "aio", 1, 0, "aio is a top-level section, not a zero_optimization field: "
     "DeepSpeed rejects it (extra_forbidden)", "move \"aio\" to the top level"},
    {"bf16", "check_overflow", 1, 0, "shown in DeepSpeed's BFLOAT16_FORMAT doc string but not a field: "
     "DeepSpeed rejects it (extra_forbidden)", "write \"check_grad_overflow\""},
};

/* DeepSpeedZeroConfig's deprecated fields (runtime/zero/config.py: json_schema_extra deprecated=True). */
static const cfit__ds_deprecated deprecated[] = {
    {"zero_optimization", "cpu_offload", "offload_optimizer", 1,
     "write \"offload_optimizer\": {\"device\": \"cpu\"}"},
    {"zero_optimization", "cpu_offload_param", "offload_param", 1, "write \"offload_param\": {\"device\": \"cpu\"}"},
    {"zero_optimization", "cpu_offload_use_pin_memory", "offload_param or offload_optimizer", 0,
     "write \"pin_memory\": true inside offload_param or offload_optimizer"},
    {"zero_optimization", "stage3_gather_fp16_weights_on_model_save", "gather_16bit_weights_on_model_save", 1,
     "rename it to \"gather_16bit_weights_on_model_save\""},
};

const cfit__ds_deprecated *cfit__ds_deprecated_find(const char *section, const char *key)
{
    for (size_t i = 0; i < sizeof deprecated / sizeof deprecated[0]; i++)
        if (strcmp(deprecated[i].section, section) == 0 && strcmp(deprecated[i].key, key) == 0)
            return &deprecated[i];
    return NULL;
}

const cfit__ds_hint *cfit__ds_hint_find(const char *section, const char *key)
{
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
        if (strcmp(hints[i].section, section) == 0 && strcmp(hints[i].key, key) == 0)
            return &hints[i];
    return NULL;
}
