/* emit.c - launch configurations for a plan: DeepSpeed JSON, Megatron-LM arguments, torchrun/srun.
 *
 * Each writer fills a string builder from the plan alone.  Flag and key names follow
 * data/references/frameworks.md (DeepSpeed runtime/config.py and zero/config.py,
 * Megatron-LM arguments.py, torch/distributed/run.py); docs/plan.md lists what each
 * emitted line means and what the user still has to add (data, tokenizer, checkpoints).
 * The MoE and MLA arguments follow Megatron-LM main at d98e8a6 (2026-08-22):
 * megatron/training/arguments.py (_add_moe_args, _add_mla_args, validate_args) and the
 * TransformerConfig / ModelParallelConfig fields it turns into flags (docs/check.md).
 */
#include "clusterfit/schedule.h"
#include "clusterfit/frameworks.h"
#include "clusterfit/workload.h"
#include "base/json.h"
#include "core/offload_cost.h"
#include "core/vp_split.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[CFIT_EMIT_COUNT] = {"deepspeed", "megatron", "torchrun"};

const char *cfit_emit_kind_name(cfit_emit_kind k)
{
    return (unsigned)k < CFIT_EMIT_COUNT ? kind_names[k] : "?";
}

int cfit_emit_kind_parse(const char *name, cfit_emit_kind *out, cfit_diag *d)
{
    for (int i = 0; i < CFIT_EMIT_COUNT; i++)
        if (strcmp(name, kind_names[i]) == 0) {
            *out = (cfit_emit_kind)i;
            return CFIT_EOK;
        }
    const char *near = cfit_suggest(name, kind_names, CFIT_EMIT_COUNT);
    if (near)
        return cfit_diag_set(d, CFIT_EUNKNOWN, NULL, 0, 0, "unknown framework '%s' (did you mean '%s'?)",
                             name, near);
    return cfit_diag_set(d, CFIT_EUNKNOWN, NULL, 0, 0,
                         "unknown framework '%s' (expected deepspeed, megatron or torchrun)", name);
}

static int seq_of(const cfit_plan_request *r, int seq_len)
{
    return seq_len > 0 ? seq_len : (r->seq_len > 0 ? r->seq_len : r->model->seq_len);
}

/* ---- DeepSpeed ---- */

/* Bucket sizes in elements: DeepSpeed's defaults (zero/config.py), written as plain
 * integers because a quoted "5e8" fails pydantic's int validation. */
#define DS_BUCKET_ELEMS 500000000L
#define DS_PREFETCH_ELEMS 50000000L
#define DS_PERSISTENCE_ELEMS 100000L
#define DS_MAX_LIVE_ELEMS 1000000000L
/* Where the DGX user guides mount the local NVMe RAID0 array (/raid); edit for another node. */
#define DS_NVME_PATH "/raid/deepspeed_nvme"

static void ds_zero(cfit_buf *b, int stage, int offload)
{
    cfit_buf_printf(b, "  \"zero_optimization\": {\n    \"stage\": %d,\n", stage);
    if (offload & CFIT_OFFLOAD_OPTIMIZER_NVME)   /* ZeRO-Infinity: pipelined swaps, as costed (offload.h) */
        cfit_buf_puts(b, "    \"offload_optimizer\": {\n      \"device\": \"nvme\",\n      \"nvme_path\": \"" DS_NVME_PATH "\",\n"
                          "      \"pin_memory\": true,\n      \"pipeline_read\": true,\n      \"pipeline_write\": true\n    },\n");
    else if (offload & CFIT_OFFLOAD_OPTIMIZER)   /* ZeRO-Offload (offload.h) */
        cfit_buf_puts(b, "    \"offload_optimizer\": {\n      \"device\": \"cpu\",\n      \"pin_memory\": true\n    },\n");
    if (offload & CFIT_OFFLOAD_PARAMS_NVME)
        cfit_buf_puts(b, "    \"offload_param\": {\n      \"device\": \"nvme\",\n      \"nvme_path\": \"" DS_NVME_PATH "\",\n"
                          "      \"pin_memory\": true\n    },\n");
    else if (offload & CFIT_OFFLOAD_PARAMS)
        cfit_buf_puts(b, "    \"offload_param\": {\n      \"device\": \"cpu\",\n      \"pin_memory\": true\n    },\n");
    cfit_buf_printf(b, "    \"overlap_comm\": true,\n    \"contiguous_gradients\": true,\n");
    cfit_buf_printf(b, "    \"reduce_scatter\": true,\n    \"reduce_bucket_size\": %ld,\n", DS_BUCKET_ELEMS);
    if (stage < 3) {
        cfit_buf_printf(b, "    \"allgather_partitions\": true,\n    \"allgather_bucket_size\": %ld\n  },\n",
                         DS_BUCKET_ELEMS);
        return;
    }
    cfit_buf_printf(b, "    \"prefetch_bucket_size\": %ld,\n    \"param_persistence_threshold\": %ld,\n",
                     DS_PREFETCH_ELEMS, DS_PERSISTENCE_ELEMS);
    cfit_buf_printf(b, "    \"max_live_parameters\": %ld,\n    \"max_reuse_distance\": %ld,\n",
                     DS_MAX_LIVE_ELEMS, DS_MAX_LIVE_ELEMS);
    cfit_buf_printf(b, "    \"gather_16bit_weights_on_model_save\": true\n  },\n");
}

static void emit_deepspeed(cfit_buf *b, const cfit_plan_request *r, const cfit_plan *p)
{
    const cfit_layout *l = &p->layout;
    (void)r;
    cfit_buf_printf(b, "{\n  \"train_batch_size\": %ld,\n", p->global_batch);
    cfit_buf_printf(b, "  \"train_micro_batch_size_per_gpu\": %d,\n", l->mbs);
    cfit_buf_printf(b, "  \"gradient_accumulation_steps\": %ld,\n", p->grad_accum);
    /* fp8 GEMMs come from Transformer Engine in the model code; DeepSpeed has no fp8 key */
    cfit_buf_puts(b, "  \"bf16\": {\n    \"enabled\": true\n  },\n");
    ds_zero(b, l->zero, p->offload);
    if (l->pp > 1)
        cfit_buf_printf(b, "  \"pipeline\": {\n    \"stages\": %d,\n    \"partition\": \"parameters\"\n  },\n",
                         l->pp);
    if (l->cp > 1)
        cfit_buf_printf(b, "  \"sequence_parallel_size\": %d,\n", l->cp);
    if (l->recompute != CFIT_RECOMPUTE_NONE)
        cfit_buf_printf(b, "  \"activation_checkpointing\": {\n    \"partition_activations\": %s,\n"
                            "    \"contiguous_memory_optimization\": false,\n"
                            "    \"cpu_checkpointing\": false\n  },\n",
                         l->tp > 1 ? "true" : "false");
    cfit_buf_puts(b, "  \"gradient_clipping\": 1.0,\n  \"steps_per_print\": 10,\n");
    cfit_buf_puts(b, "  \"wall_clock_breakdown\": false\n}\n");
}

/* ---- Megatron-LM ---- */

/* Uneven pipeline stages: Megatron puts the remainder on the first/last stage
 * (--decoder-first/last-pipeline-num-layers) and needs the middle to divide evenly. */
static void mg_uneven(cfit_buf *b, int L, int p)
{
    int m = (L + p - 1) / p;
    int last = L - (p - 1) * m;
    if (last > 0) {
        cfit_buf_printf(b, "--decoder-last-pipeline-num-layers %d\n", last);
        return;
    }
    int rem = L - (p - 2) * m;
    if (p > 2 && rem >= 2)
        cfit_buf_printf(b, "--decoder-first-pipeline-num-layers %d\n--decoder-last-pipeline-num-layers %d\n",
                         rem - rem / 2, rem / 2);
}

/* The plan's own split of a model mixing dense and MoE layers (plan.h stage_layers_first/last):
 * each end that differs from the middle stages' equal share; with two stages, both ends. */
static void mg_split(cfit_buf *b, int L, const cfit_plan *p)
{
    int pp = p->layout.pp, first = p->stage_layers_first, last = p->stage_layers_last;
    int mid = pp > 2 ? cfit_plan_stage_layers_mid(p, L) : first;
    if (first != mid)
        cfit_buf_printf(b, "--decoder-first-pipeline-num-layers %d\n", first);
    if (last != mid)
        cfit_buf_printf(b, "--decoder-last-pipeline-num-layers %d\n", last);
}

/* One chunk of a pipeline layout: [E] t*n [m*k L] (n 0: an empty chunk). */
static void layout_chunk(char *s, size_t size, int embed, int n, int mtp, int loss)
{
    char t[16] = "", mm[16] = "";
    if (n == 1)
        snprintf(t, sizeof t, "t");
    else if (n > 1)
        snprintf(t, sizeof t, "t*%d", n);
    if (mtp == 1)
        snprintf(mm, sizeof mm, "m");
    else if (mtp > 1)
        snprintf(mm, sizeof mm, "m*%d", mtp);
    snprintf(s, size, "%s%s%s%s", embed ? "E" : "", t, mm, loss ? "L" : "");
}

/* A run of k equal chunks; more: chunks follow (a "|" after it), else the layout ends. */
static void layout_run(cfit_buf *b, const char *chunk, int k, int more)
{
    if (k > 1 && more)
        cfit_buf_printf(b, "(%s|)*%d", chunk, k);
    else if (k > 1)
        cfit_buf_printf(b, "(%s|)*%d%s", chunk, k - 1, chunk);
    else
        cfit_buf_printf(b, "%s%s", chunk, more ? "|" : "");
}

/* Layers of chunk v (0 .. vp-1) of a device holding n: the remainder on its first chunks, so the
 * last one, which holds the MTP modules and the loss on the last device, is the lighter. */
static int chunk_layers(int n, int vp, int v)
{
    return n / vp + (v < n % vp ? 1 : 0);
}

/* The plan's balanced split with vp > 1 as Megatron-Core's --pipeline-model-parallel-layout
 * (megatron/core/transformer/pipeline_parallel_layer_layout.py): pp x vp chunks in layer order,
 * chunk c on device c % pp; the first device's total, the middle ones' equal share, the last's;
 * the embedding opens the first chunk, the MTP modules and the loss close the last.  Runs of equal
 * chunks are written (X|)*k, as Megatron's parser unrolls them; the whole in single quotes. */
static void mg_layout(cfit_buf *b, const cfit_model *m, const cfit_plan *p)
{
    int pp = p->layout.pp, vp = p->layout.vp, first = p->stage_layers_first, last = p->stage_layers_last;
    int mid = cfit_plan_stage_layers_mid(p, m->layers), chunks = pp * vp, run = 0;
    char prev[48] = "", cur[48];
    cfit_buf_puts(b, "--pipeline-model-parallel-layout '");   /* quoted: | * ( ) are shell syntax */
    for (int c = 0; c < chunks; c++) {
        int d = c % pp, n = d == 0 ? first : d == pp - 1 ? last : mid, end = c == chunks - 1;
        layout_chunk(cur, sizeof cur, c == 0, chunk_layers(n, vp, c / pp), end ? m->mtp_layers : 0, end);
        if (run > 0 && strcmp(cur, prev) == 0) {
            run++;
            continue;
        }
        if (run > 0)
            layout_run(b, prev, run, 1);
        memcpy(prev, cur, sizeof prev);
        run = 1;
    }
    layout_run(b, prev, run, 0);
    cfit_buf_puts(b, "'\n");
}

/* Interleaved stages: an even split of whole virtual stages, or uneven end stages of whole
 * virtual stages each (vp_split.c; emit refuses a plan with neither, vp_bad). */
static void mg_virtual(cfit_buf *b, int L, int pp, int vp)
{
    cfit__vp_split s;
    if (L % (pp * vp) == 0 || !cfit__vp_split_choose(L, pp, vp, &s)) {
        cfit_buf_printf(b, "--num-layers-per-virtual-pipeline-stage %d\n", L / (pp * vp));
        return;
    }
    if (pp == 2 || s.first != s.mid)
        cfit_buf_printf(b, "--decoder-first-pipeline-num-layers %d\n", s.first);
    if (pp == 2 || s.last != s.mid)
        cfit_buf_printf(b, "--decoder-last-pipeline-num-layers %d\n", s.last);
    cfit_buf_printf(b, "--num-virtual-stages-per-pipeline-rank %d\n", vp);
}

static void mg_parallel(cfit_buf *b, const cfit_model *m, const cfit_plan *p)
{
    const cfit_layout *l = &p->layout;
    int L = m->layers;
    cfit_buf_printf(b, "--tensor-model-parallel-size %d\n--pipeline-model-parallel-size %d\n", l->tp, l->pp);
    if (l->pp > 1 && l->vp > 1 && p->stage_layers_first > 0)
        mg_layout(b, m, p);
    else if (l->pp > 1 && l->vp > 1)
        mg_virtual(b, L, l->pp, l->vp);
    else if (l->pp > 1 && p->stage_layers_first > 0)
        mg_split(b, L, p);
    else if (l->pp > 1 && L % l->pp)
        mg_uneven(b, L, l->pp);
    cfit_buf_printf(b, "--context-parallel-size %d\n", l->cp);
    if (cfit_model_is_moe(m))
        /* explicit ETP: Megatron's default for it is TP, not 1 */
        cfit_buf_printf(b, "--expert-model-parallel-size %d\n--expert-tensor-parallel-size %d\n",
                         l->ep > 1 ? l->ep : 1, l->etp > 1 ? l->etp : 1);
    if (l->sp && l->tp > 1)
        cfit_buf_puts(b, "--sequence-parallel\n");
    cfit_buf_printf(b, "--micro-batch-size %d\n--global-batch-size %ld\n", l->mbs, p->global_batch);
}

/* A list flag: Megatron's argparse takes the comma list's names space-separated (nargs="+"). */
static void mg_list(cfit_buf *b, const char *flag, const char *comma_list)
{
    cfit_buf_printf(b, "%s ", flag);
    for (const char *c = comma_list; *c; c++)
        cfit_buf_printf(b, "%c", *c == ',' ? ' ' : *c);
    cfit_buf_puts(b, "\n");
}

static void mg_memory(cfit_buf *b, const cfit_plan *p, int overlap)
{
    const cfit_layout *l = &p->layout;
    if (l->zero == 1)
        cfit_buf_puts(b, "--use-distributed-optimizer\n");
    else if (l->zero >= 2)
        /* validate_args: "Megatron FSDP only supports fsdp_dtensor checkpoint format" */
        cfit_buf_printf(b, "--use-megatron-fsdp\n--data-parallel-sharding-strategy %s\n--ckpt-format fsdp_dtensor\n",
                         l->zero == 2 ? "optim_grads" : "optim_grads_params");
    if (l->zero == 1 && (p->offload & CFIT_OFFLOAD_OPTIMIZER))   /* Megatron-Core's CPU optimizer (offload.h) */
        /* validate_args asserts the precision-aware optimizer with it (its code path) */
        cfit_buf_puts(b, "--optimizer-cpu-offload\n--use-precision-aware-optimizer\n--overlap-cpu-optimizer-d2h-h2d\n");
    if (overlap && l->dp > 1) {
        cfit_buf_puts(b, "--overlap-grad-reduce\n");
        if (l->zero == 1)
            cfit_buf_puts(b, "--overlap-param-gather\n");
    }
    switch (l->recompute) {
    case CFIT_RECOMPUTE_SELECTIVE:
        cfit_buf_puts(b, "--recompute-granularity selective\n");
        break;
    case CFIT_RECOMPUTE_FULL:
        cfit_buf_puts(b, "--recompute-granularity full\n--recompute-method uniform\n--recompute-num-layers 1\n");
        break;
    case CFIT_RECOMPUTE_EXPERTS:
        cfit_buf_puts(b, "--recompute-granularity selective\n--recompute-modules moe\n");
        break;
    case CFIT_RECOMPUTE_MODULES: {
        char list[128];
        cfit_buf_puts(b, "--recompute-granularity selective\n");
        mg_list(b, "--recompute-modules", cfit_recompute_modules_str((unsigned)l->recompute_modules, list, sizeof list));
        break;
    }
    case CFIT_RECOMPUTE_BLOCK:
        /* Megatron counts --recompute-num-layers per model chunk: with vp chunks per GPU,
         * ceil(K / vp) per chunk reruns at least the K layers per GPU the plan needs */
        if (p->recompute_layers > 0)
            cfit_buf_printf(b, "--recompute-granularity full\n--recompute-method block\n--recompute-num-layers %d\n",
                             (p->recompute_layers + l->vp - 1) / l->vp);
        break;
    default:
        break;
    }
    if (p->offload_modules) {   /* Megatron-Core's fine-grained activation offloading (offload.h) */
        char list[128];
        cfit_buf_puts(b, "# with Transformer Engine >= 2.10 also set NVTE_CPU_OFFLOAD_V1=1 (validate_args)\n"
                         "--fine-grained-activation-offloading\n");
        mg_list(b, "--offload-modules", cfit_offload_modules_str((unsigned)p->offload_modules, list, sizeof list));
    }
}

/* Run-length form of layers [0, n) of the MoE pattern: "[0]*3+[1]*58". */
static void mg_pattern_runs(cfit_buf *b, const cfit_model *m, int n)
{
    for (int i = 0; i < n;) {
        int v = cfit_model_layer_is_moe(m, i), run = 1;
        while (i + run < n && cfit_model_layer_is_moe(m, i + run) == v)
            run++;
        cfit_buf_printf(b, "%s[%d]", i ? "+" : "", v);
        if (run > 1)
            cfit_buf_printf(b, "*%d", run);
        i += run;
    }
}

/* The shortest period of the MoE pattern that repeats a whole number of times (layers if none). */
static int mg_pattern_period(const cfit_model *m)
{
    for (int p = 1; p < m->layers; p++) {
        int ok = m->layers % p == 0;
        for (int i = p; ok && i < m->layers; i++)
            ok = cfit_model_layer_is_moe(m, i) == cfit_model_layer_is_moe(m, i % p);
        if (ok)
            return p;
    }
    return m->layers;
}

/* --moe-layer-freq: 1 when every layer is MoE, else the pattern as the Python list expression
 * Megatron evaluates (1 = MoE, 0 = dense; its integer form N puts MoE on layers i % N == 0, which
 * the models' "every step-th layer from step - 1" cannot match), quoted for a shell. */
static void mg_layer_freq(cfit_buf *b, const cfit_model *m)
{
    if (cfit_model_moe_layers(m) == m->layers) {
        cfit_buf_puts(b, "--moe-layer-freq 1\n");
        return;
    }
    int p = mg_pattern_period(m);
    cfit_buf_puts(b, "--moe-layer-freq '(");
    mg_pattern_runs(b, m, p);
    if (p < m->layers)
        cfit_buf_printf(b, ")*%d'\n", m->layers / p);
    else
        cfit_buf_puts(b, ")'\n");
}

/* The router's score function, group-limited routing and aux-loss-free expert bias
 * (TransformerConfig moe_router_score_function, moe_router_num_groups / moe_router_group_topk,
 * moe_router_enable_expert_bias / moe_router_bias_update_rate, moe_router_topk_scaling_factor;
 * Megatron-LM d98e8a6). */
static void mg_router(cfit_buf *b, const cfit_model *m)
{
    if (m->router_sigmoid)
        cfit_buf_puts(b, "--moe-router-score-function sigmoid\n");
    if (m->router_groups > 1)
        cfit_buf_printf(b, "--moe-router-num-groups %d\n--moe-router-group-topk %d\n", m->router_groups,
                         m->router_group_topk);
    if (m->router_expert_bias)
        cfit_buf_puts(b, "--moe-router-enable-expert-bias\n");
    if (m->router_expert_bias && m->router_bias_update_rate > 0)
        cfit_buf_printf(b, "--moe-router-bias-update-rate %g\n", m->router_bias_update_rate);
    if (m->router_topk_scaling_factor > 0)
        cfit_buf_printf(b, "--moe-router-topk-scaling-factor %g\n", m->router_topk_scaling_factor);
}

/* Megatron-Core MoE layers: experts, router, dispatcher (the framework's: NCCL all-to-all, or the
 * flex dispatcher with its DeepEP / HybridEP backend, TransformerConfig moe_flex_dispatcher_backend). */
/* Whether the plan overlaps the expert all-to-all with another micro-batch's compute: --moe-overlap,
 * else the framework's (docs/model.md §5.13). */
static int a2a_overlap(const cfit_plan_request *r)
{
    return r->moe_a2a_overlap >= 0 ? r->moe_a2a_overlap : r->framework ? r->framework->moe_a2a_overlap : 0;
}

static void mg_moe(cfit_buf *b, const cfit_model *m, const cfit_layout *l, int dispatcher, int overlap)
{
    static const char *const flex_backend[CFIT_DISPATCH_COUNT] = {NULL, "deepep", "hybridep"};
    cfit_buf_printf(b, "--num-experts %d\n--moe-router-topk %d\n--moe-ffn-hidden-size %d\n", m->num_experts,
                     m->experts_per_token, m->moe_ffn_hidden_size);
    /* TransformerConfig: "Please use --moe-router-pre-softmax when topk is 1" (softmax scores) */
    if (m->experts_per_token == 1 && !m->router_sigmoid)
        cfit_buf_puts(b, "--moe-router-pre-softmax\n");
    if (m->shared_ffn_hidden_size > 0)
        cfit_buf_printf(b, "--moe-shared-expert-intermediate-size %d\n", m->shared_ffn_hidden_size);
    if (m->shared_ffn_hidden_size > 0 && m->shared_expert_gate)
        cfit_buf_puts(b, "--moe-shared-expert-gate\n");
    mg_layer_freq(b, m);
    mg_router(b, m);
    if (dispatcher > CFIT_DISPATCH_ALLTOALL && dispatcher < CFIT_DISPATCH_COUNT)
        cfit_buf_printf(b, "--moe-token-dispatcher-type flex\n--moe-flex-dispatcher-backend %s\n",
                         flex_backend[dispatcher]);
    else
        cfit_buf_puts(b, "--moe-token-dispatcher-type alltoall\n");
    cfit_buf_puts(b, "--moe-grouped-gemm\n");
    if (overlap && l->ep > 1)   /* Megatron-Core's merged 1F1B step (a2a_bad: what it asserts) */
        cfit_buf_puts(b, "--overlap-moe-expert-parallel-comm\n");
    /* TransformerConfig: "Bias in Moe is only supported when ETP==1" (add_bias_linear defaults on) */
    if (l->etp > 1)
        cfit_buf_puts(b, "--disable-bias-linear\n");
}

/* Multi-head latent attention: Megatron's own defaults (kv rank 32) are not DeepSeek's, so every
 * size is written. */
static void mg_mla(cfit_buf *b, const cfit_model *m)
{
    cfit_buf_puts(b, "--multi-latent-attention\n");
    if (m->q_lora_rank > 0)
        cfit_buf_printf(b, "--q-lora-rank %d\n", m->q_lora_rank);
    cfit_buf_printf(b, "--kv-lora-rank %d\n--qk-head-dim %d\n--qk-pos-emb-head-dim %d\n--v-head-dim %d\n",
                     m->kv_lora_rank, m->qk_nope_head_dim, m->qk_rope_head_dim, m->v_head_dim);
}

static void mg_attention(cfit_buf *b, const cfit_model *m)
{
    if (cfit_model_is_mla(m)) {
        mg_mla(b, m);   /* validate_args: group query attention is exclusive with MLA */
        return;
    }
    if (m->num_kv_heads > 0 && m->num_kv_heads < m->num_heads)
        cfit_buf_printf(b, "--group-query-attention\n--num-query-groups %d\n", m->num_kv_heads);
    /* Megatron's kv_channels defaults to hidden / heads (TransformerConfig.__post_init__) */
    if (m->head_dim > 0 && (long)m->head_dim * m->num_heads != m->hidden_size)
        cfit_buf_printf(b, "--kv-channels %d\n", m->head_dim);
}

static void mg_model(cfit_buf *b, const cfit_model *m, const cfit_layout *l, int seq, int dispatcher, int overlap)
{
    cfit_buf_printf(b, "--num-layers %d\n--hidden-size %d\n--ffn-hidden-size %d\n--num-attention-heads %d\n",
                     m->layers, m->hidden_size, m->ffn_hidden_size, m->num_heads);
    mg_attention(b, m);
    if (cfit_model_is_moe(m))
        mg_moe(b, m, l, dispatcher, overlap);
    if (m->mtp_layers > 0)   /* TransformerConfig mtp_num_layers; Megatron's default trains none */
        cfit_buf_printf(b, "--mtp-num-layers %d\n", m->mtp_layers);
    cfit_buf_printf(b, "--seq-length %d\n--max-position-embeddings %d\n", seq,
                     seq > m->seq_len ? seq : m->seq_len);
    if (m->mlp == CFIT_MLP_SWIGLU)
        cfit_buf_puts(b, "--swiglu\n");
    if (!m->tied_embeddings)
        cfit_buf_puts(b, "--untie-embeddings-and-output-weights\n");
}

static void emit_megatron(cfit_buf *b, const cfit_plan_request *r, const cfit_plan *p, int seq)
{
    const cfit_framework *fw = r->framework;
    int overlap = fw ? fw->dp_overlap : 1;
    mg_parallel(b, r->model, p);
    mg_memory(b, p, overlap);
    mg_model(b, r->model, &p->layout, seq, fw ? fw->moe_dispatcher : CFIT_DISPATCH_ALLTOALL, a2a_overlap(r));
    cfit_buf_puts(b, "--bf16\n");
    if (r->precision == CFIT_PREC_FP8)
        cfit_buf_puts(b, "--fp8-format hybrid\n");
}

/* ---- torchrun / srun ---- */

static void emit_torchrun(cfit_buf *b, const cfit_plan *p)
{
    long per_node = p->node ? p->node->gpus_per_node : 8;
    if (per_node > p->gpus)
        per_node = p->gpus;
    long nodes = p->nodes > 0 ? p->nodes : 1;
    /* Megatron-LM's validate_args asserts the variable is 1 with TP or CP > 1 (before Blackwell),
     * and asserts it is not 1 with Megatron-FSDP (ZeRO-2/3 in the Megatron writer). */
    if ((p->layout.tp > 1 || p->layout.cp > 1) && p->layout.zero < 2)
        cfit_buf_puts(b, "export CUDA_DEVICE_MAX_CONNECTIONS=1\n");
    cfit_buf_printf(b, "torchrun --nnodes %ld --nproc-per-node %ld --rdzv-backend c10d "
                        "--rdzv-endpoint \"$MASTER_ADDR:29500\" --rdzv-id \"$JOB_ID\" pretrain_gpt.py ARGS\n",
                     nodes, per_node);
    cfit_buf_printf(b, "srun --nodes %ld --ntasks-per-node 1 --gpus-per-node %ld torchrun --nnodes %ld "
                        "--nproc-per-node %ld --rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:29500\" "
                        "--rdzv-id \"$SLURM_JOB_ID\" pretrain_gpt.py ARGS\n",
                     nodes, per_node, nodes, per_node);
}

/* A pipeline the framework of kind k cannot run (docs/plan.md, framework configs): beyond the
 * 1F1B family (1f1b, interleaved: what these configs always described) neither DeepSpeed's pipeline
 * engine (runtime/pipe/schedule.py; it asserts ZeRO < 2, runtime/pipe/engine.py) nor Megatron-LM
 * (pipeline_parallel/schedules.py) runs a schedule. */
static int schedule_bad(cfit_emit_kind k, const cfit_layout *l, cfit_diag *d)
{
    cfit_schedule s = cfit_layout_schedule(l);
    if (l->pp <= 1 || k == CFIT_EMIT_TORCHRUN)
        return CFIT_EOK;
    if (s != CFIT_SCHED_1F1B && s != CFIT_SCHED_INTERLEAVED)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--emit %s: the plan's pipeline schedule %s is not one %s runs "
                             "(plan with --schedule 1f1b or interleaved)", cfit_emit_kind_name(k), cfit_schedule_name(s),
                             k == CFIT_EMIT_DEEPSPEED ? "DeepSpeed" : "Megatron-LM");
    if (k == CFIT_EMIT_DEEPSPEED && l->zero >= 2)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--emit deepspeed: DeepSpeed's pipeline engine rejects ZeRO-%d "
                             "with pp %d (ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism)", l->zero, l->pp);
    return CFIT_EOK;
}

/* A virtual pipeline whose stages cannot each hold whole virtual stages (vp_split.h): Megatron's
 * TransformerConfig raises ValueError on it. */
static int vp_bad(cfit_emit_kind k, const cfit_model *m, const cfit_plan *p, cfit_diag *d)
{
    const cfit_layout *l = &p->layout;
    if (k != CFIT_EMIT_MEGATRON || l->pp <= 1 || l->vp <= 1 || p->stage_layers_first > 0 ||   /* a layout */
        cfit__vp_split_ok(m->layers, l->pp, l->vp))
        return CFIT_EOK;
    return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--emit megatron: %d layers do not split over pp %d stages of "
                         "vp %d virtual stages each as Megatron-Core requires (every stage a positive multiple of %d "
                         "layers); plan with another --vp or --pp", m->layers, l->pp, l->vp, l->vp);
}

/* An overlapped expert all-to-all Megatron-Core cannot run as planned (TransformerConfig.__post_init__,
 * Megatron-LM d98e8a6: a virtual pipeline with pp > 1, no full or block recomputation and no
 * whole-MoE recompute module, at most one MTP layer). */
static int a2a_bad(cfit_emit_kind k, const cfit_plan_request *r, const cfit_plan *p, cfit_diag *d)
{
    const cfit_layout *l = &p->layout;
    if (k != CFIT_EMIT_MEGATRON || !a2a_overlap(r) || l->ep <= 1 || !cfit_model_is_moe(r->model))
        return CFIT_EOK;
    const char *why = NULL;
    if (l->pp > 1 && l->vp <= 1)
        why = "If enabling EP A2A overlap, virtual_pipeline_model_parallel_size must be specified when "
              "pipeline_model_parallel_size > 1: plan with --vp 2 or more";
    else if (l->recompute == CFIT_RECOMPUTE_FULL || l->recompute == CFIT_RECOMPUTE_BLOCK)
        why = "disable full recomputation when enabling overlap_moe_expert_parallel_comm: plan with another --recompute";
    else if (cfit_recompute_mask((cfit_recompute)l->recompute, (unsigned)l->recompute_modules) & CFIT_RECMOD_MOE)
        why = "disable moe in recompute_modules when enabling overlap_moe_expert_parallel_comm: plan with another "
              "--recompute";
    else if (r->model->mtp_layers > 1)
        why = "MTP supports at most one layer when enabling overlap_moe_expert_parallel_comm: plan with --mtp 1";
    if (!why)
        return CFIT_EOK;
    return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                         "--emit megatron: the plan overlaps the expert all-to-all (--moe-overlap), which "
                         "Megatron-Core refuses here (%s), or plan with --moe-overlap off", why);
}

/* Expert parallelism the model cannot take: the plan is not one Megatron would start. */
static int moe_layout_bad(const cfit_model *m, const cfit_layout *l, cfit_diag *d)
{
    int ep = l->ep > 1 ? l->ep : 1, etp = l->etp > 1 ? l->etp : 1;
    if (!cfit_model_is_moe(m) && (ep > 1 || etp > 1))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "emit: EP %d x ETP %d needs an MoE model; '%s' is dense",
                             ep, etp, m->name);
    if (cfit_model_is_moe(m) && m->num_experts % ep)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "emit: EP %d does not divide the %d experts of '%s'",
                             ep, m->num_experts, m->name);
    return CFIT_EOK;
}

int cfit_emit(cfit_emit_kind k, const cfit_plan_request *r, const cfit_plan *p, int seq_len,
              char **out, cfit_diag *d)
{
    *out = NULL;
    if (!r || !r->model || !p || p->layout.tp < 1 || p->layout.pp < 1 || p->layout.dp < 1 ||
        p->layout.cp < 1 || p->layout.mbs < 1 || p->global_batch < 1 || p->grad_accum < 1)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "emit needs a complete plan");
    int bad = moe_layout_bad(r->model, &p->layout, d);
    if (!bad)
        bad = cfit__emit_offload_bad((int)k, r, p, d);   /* offload.c: what the launchers cannot express */
    if (!bad)
        bad = schedule_bad(k, &p->layout, d);
    if (!bad)
        bad = vp_bad(k, r->model, p, d);
    if (!bad)
        bad = a2a_bad(k, r, p, d);
    if (bad)
        return bad;
    cfit_buf b;
    cfit_buf_init(&b);
    switch (k) {
    case CFIT_EMIT_DEEPSPEED: emit_deepspeed(&b, r, p); break;
    case CFIT_EMIT_MEGATRON: emit_megatron(&b, r, p, seq_of(r, seq_len)); break;
    case CFIT_EMIT_TORCHRUN: emit_torchrun(&b, p); break;
    default:
        cfit_buf_fini(&b);
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "unknown emit kind %d", (int)k);
    }
    if (!cfit_buf_ok(&b)) {
        cfit_buf_fini(&b);
        return cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
    }
    *out = b.data;
    return CFIT_EOK;
}
