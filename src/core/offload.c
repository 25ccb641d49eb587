/* offload.c - optimizer, parameter and activation offload to host memory (docs/model.md §10.1-§10.3):
 * what moves off the GPU, what the host link and the CPU's Adam step cost.
 *
 * ZeRO-Offload (Ren et al., "ZeRO-Offload: Democratizing Billion-Scale Model Training", USENIX ATC
 * 2021, arXiv 2101.06840) keeps the bf16 parameters and the forward/backward on the GPU and the
 * Adam states, fp32 master weights and gradients on the CPU, which runs the Adam step; gradients
 * go down during the backward, the updated parameters come back up after the step.  ZeRO-Infinity
 * (arXiv 2104.07857) and FSDP's CPUOffload(offload_params=True) also keep the parameter shard in
 * host memory and bring it up for each forward and backward.  Activation offload (PyTorch's
 * save_on_cpu, Megatron-Core's --cpu-offloading) swaps a layer's stored activations out in the
 * forward and back in before its backward.
 */
#include "core/perf.h"
#include "clusterfit/offload.h"
#include "core/names.h"
#include "clusterfit/frameworks.h"

#include <stdio.h>
#include <string.h>

/* DeepSpeed's CPU-Adam (ZeRO-Offload §4.3 and Table 3: 10 billion parameters updated in 2.57 s
 * on a DGX-2's two Xeon Platinum 8168, 5.7x PyTorch's CPU Adam; the DeepSpeed ZeRO-Offload
 * tutorial says "5X-7X faster").  Adam streams its states through memory, so the rate is scaled by
 * host memory bandwidth: the DGX-2's two sockets of 6 channels of DDR4-2666 (21.33 GB/s each,
 * Intel ark Xeon Platinum 8168) are 256 GB/s.  Checked against the public text at hand: the
 * DeepSpeed tutorial (deepspeed.ai/tutorials/zero-offload: "DeepSpeedCPUAdam is 5X-7X faster than
 * the standard PyTorch implementation") agrees with the 5.7x; DeepSpeed's own benchmark
 * (tests/perf/adam_test1.py: 1 Gi fp32 parameters, mean of 100 steps) records no figure, so the
 * paper's table stays the rate's source. */
#define CPU_ADAM_REF_S_PER_PARAM (2.57 / 10e9)
#define CPU_ADAM_REF_HOST_BW (2.0 * 6.0 * 21.333e9)
/* DeepSpeed's reduce_bucket_size default (5e8 elements; deepspeed.ai/docs/config-json): the
 * gradient buffer ZeRO-2 keeps on the GPU while it streams reduced gradients to the CPU. */
#define ZERO_REDUCE_BUCKET_ELEMS 5e8
/* ZeRO-Infinity's NVMe tier through DeepSpeed's swap buffers (deepspeed.ai/docs/config-json,
 * zero_optimization): offload_optimizer.buffer_count 4 ("at least the number of states maintained
 * per parameter by the optimizer. For example, Adam optimizer has 4 states (parameter, gradient,
 * momentum, and variance)"), each of one sub-group, sub_group_size 1e9 elements; offload_param's
 * pool of buffer_count 5 x buffer_size 1e8 elements. */
#define NVME_OPT_SWAP_BUFFERS 4.0
#define ZERO_SUB_GROUP_ELEMS 1e9
#define NVME_PARAM_SWAP_BUFFERS 5.0
#define NVME_PARAM_BUFFER_ELEMS 1e8
/* Activation offload double-buffers: the layer computing and the one in flight over the link
 * (Megatron-Core / Transformer Engine CPU offload keep one layer's activations in transit). */
#define ACT_OFFLOAD_GPU_LAYERS 2.0

static const char *const names[] = {"optimizer", "params", "activations"};

/* One --offload item: a name, optionally ":cpu" (host memory, the default) or ":nvme" (the NVMe
 * tier, optimizer and params only); its bits, or -1. */
static int offload_item_bits(const char *t)
{
    const char *colon = strchr(t, ':');
    size_t len = colon ? (size_t)(colon - t) : strlen(t);
    for (int i = 0; i < 3; i++) {
        if (strlen(names[i]) != len || strncmp(t, names[i], len) != 0)
            continue;
        if (!colon || strcmp(colon, ":cpu") == 0)
            return 1 << i;
        if (strcmp(colon, ":nvme") == 0 && i < 2)
            return (1 << i) | (i == 0 ? CFIT_OFFLOAD_OPTIMIZER_NVME : CFIT_OFFLOAD_PARAMS_NVME);
    }
    return -1;
}

int cfit_offload_parse(const char *s, int *mask, cfit_diag *d)
{
    *mask = 0;
    if (strcmp(s, "none") == 0)
        return CFIT_EOK;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int bits = offload_item_bits(t);
        if (bits < 0)
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                                 "expected none or a comma list of optimizer, params, activations (optimizer and "
                                 "params take :nvme for ZeRO-Infinity's NVMe tier), got '%s'", t);
        *mask |= bits;
    }
    if (!*mask)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "expected none or a comma list of optimizer, params, activations");
    return CFIT_EOK;
}

static const char *const offload_module_names[CFIT_OFFMOD_COUNT] = {
    "attn_norm", "qkv_linear", "core_attn", "attn_proj", "mlp_norm", "expert_fc1", "moe_act", "fused_group_mlp"};

const char *cfit_offload_module_name(int i)
{
    return i >= 0 && i < CFIT_OFFMOD_COUNT ? offload_module_names[i] : NULL;
}

int cfit_offload_modules_parse(const char *list, unsigned *mask, size_t *bad_at)
{
    *mask = 0;
    return strcmp(list, "none") == 0 ? 0 : cfit__name_list_mask(list, offload_module_names, CFIT_OFFMOD_COUNT, mask, bad_at);
}

char *cfit_offload_modules_str(unsigned mask, char *buf, size_t n)
{
    cfit__name_list_str(mask, offload_module_names, CFIT_OFFMOD_COUNT, buf, n);
    if (n && !buf[0])
        snprintf(buf, n, "none");
    return buf;
}

int cfit_offload_mask_ok(int mask)
{
    return mask >= 0 && mask <= CFIT_OFFLOAD_MASK_MAX &&
           (!(mask & CFIT_OFFLOAD_OPTIMIZER_NVME) || (mask & CFIT_OFFLOAD_OPTIMIZER)) &&
           (!(mask & CFIT_OFFLOAD_PARAMS_NVME) || (mask & CFIT_OFFLOAD_PARAMS));
}

const char *cfit_offload_str(int mask, char *buf, size_t n)
{
    static const int nvme_bit[] = {CFIT_OFFLOAD_OPTIMIZER_NVME, CFIT_OFFLOAD_PARAMS_NVME, 0};
    size_t w = 0;
    buf[0] = '\0';
    for (int i = 0; i < 3 && n; i++)
        if (mask & (1 << i)) {
            int k = snprintf(buf + w, n - w, "%s%s%s", w ? "," : "", names[i], mask & nvme_bit[i] ? ":nvme" : "");
            w = k > 0 && (size_t)k < n - w ? w + (size_t)k : w;
        }
    if (!w && n)
        snprintf(buf, n, "none");
    return buf;
}

double cfit_pcie_bw_bytes_per_s(int gen, int lanes)
{
    /* PCIe 3.0-5.0: 8, 16, 32 GT/s per lane, 128b/130b coding; a 256 B max-payload TLP carries
     * 24 B of framing, sequence number, header and LCRC (PCIe Base Specification): 256/280 */
    if (gen < 3 || gen > 5 || lanes <= 0)
        return 0.0;
    double gts = 8e9 * (double)(1 << (gen - 3));
    return gts * lanes / 8.0 * (128.0 / 130.0) * (256.0 / 280.0);
}

double cfit_node_host_link_bw(const cfit_node *n)
{
    if (!n)
        return 0.0;
    return n->host_link_bytes_per_s > 0 ? n->host_link_bytes_per_s : cfit_pcie_bw_bytes_per_s(n->pcie_gen, n->pcie_lanes);
}

const char *cfit_node_host_link_str(const cfit_node *n, char *buf, size_t size)
{
    if (n && n->host_link_bytes_per_s > 0)
        snprintf(buf, size, "host link %.1f GB/s", n->host_link_bytes_per_s / 1e9);
    else if (n)
        snprintf(buf, size, "PCIe Gen%d x%d %.1f GB/s", n->pcie_gen, n->pcie_lanes,
                 cfit_pcie_bw_bytes_per_s(n->pcie_gen, n->pcie_lanes) / 1e9);
    else if (size)
        buf[0] = '\0';
    return buf;
}

int cfit_node_has_host(const cfit_node *n)
{
    return n && n->host_memory_bytes > 0 && n->host_memory_bw_bytes_per_s > 0 && cfit_node_host_link_bw(n) > 0;
}

const cfit_storage *cfit_node_nvme(const cfit_catalog *c, const cfit_node *n)
{
    if (!c || !n || !n->local_nvme[0])
        return NULL;
    for (size_t i = 0; i < cfit_catalog_storage_count(c); i++) {
        const cfit_storage *s = cfit_catalog_storage_at(c, i);
        if (strcmp(s->name, n->local_nvme) == 0)
            return s->per_node && s->read_bytes_per_s > 0 && s->write_bytes_per_s > 0 ? s : NULL;
    }
    return NULL;
}

double cfit_cpu_adam_s(double params, double host_bw_bytes_per_s)
{
    if (params <= 0 || host_bw_bytes_per_s <= 0)
        return 0.0;
    return params * CPU_ADAM_REF_S_PER_PARAM * CPU_ADAM_REF_HOST_BW / host_bw_bytes_per_s;
}

/* The node's NVMe array (docs/model.md §10.7); CFIT_EINVALID when the request fixes an NVMe
 * offload and the node names none. */
static int offload_nvme_init(cfit__ctx *ctx, cfit_diag *d)
{
    const cfit_node *n = ctx->node;
    cfit__host *h = &ctx->host;
    const cfit_storage *s = cfit_node_nvme(ctx->req->catalog, n);
    h->has_nvme = s != NULL;
    if (ctx->req->offload > 0 && (ctx->req->offload & CFIT_OFFLOAD_NVME) && !s) {
        char mode[64];
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--offload %s needs the local NVMe array of node '%s' (gpu %s), which its catalog entry "
                             "does not name: give local_nvme (a per-node storage entry) with --catalog (docs/catalog.md), "
                             "or offload to host memory without ':nvme'",
                             cfit_offload_str(ctx->req->offload, mode, sizeof mode), n->name, ctx->g->name);
    }
    if (s) {
        h->nvme_read_bw = s->read_bytes_per_s;
        h->nvme_write_bw = s->write_bytes_per_s;
        h->nvme_bytes = s->capacity_bytes;
    }
    return CFIT_EOK;
}

int cfit__offload_init(cfit__ctx *ctx, cfit_diag *d)
{
    const cfit_node *n = ctx->node;
    cfit__host *h = &ctx->host;
    h->has_host = cfit_node_has_host(n);
    if ((ctx->req->offload > 0 || ctx->req->offload_modules) && !h->has_host)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--offload%s needs the host memory of node '%s' (gpu %s), which its catalog entry lacks: "
                             "give host_memory_bytes, host_memory_bw_bytes_per_s and either pcie_gen with pcie_lanes or "
                             "host_link_bytes_per_s with --catalog "
                             "(docs/catalog.md)", ctx->req->offload > 0 ? "" : "-modules", n->name, ctx->g->name);
    if (!h->has_host)
        return CFIT_EOK;
    h->link_bw = cfit_node_host_link_bw(n);
    h->host_bw = n->host_memory_bw_bytes_per_s;
    h->host_bytes = n->host_memory_bytes;
    return offload_nvme_init(ctx, d);
}

int cfit__offload_zero_ok(const cfit__ctx *ctx, int mask, int zero, int *floor)
{
    (void)ctx;   /* frozen LoRA / QLoRA weights shard at ZeRO-3 as well (finetune.c) */
    int lo = mask & CFIT_OFFLOAD_PARAMS ? 3 : mask & CFIT_OFFLOAD_OPTIMIZER ? 1 : 0;
    *floor = lo;
    return zero >= lo && zero <= 3;
}

/* GPUs of a job of N that share one node's host memory and CPUs. */
static double sharers(const cfit__ctx *ctx, long N)
{
    long k = N < ctx->gpn ? N : ctx->gpn;
    return k > 0 ? (double)k : 1.0;
}

double cfit__host_capacity_bytes(const cfit__ctx *ctx, long N)
{
    return ctx->host.has_host ? ctx->host.host_bytes / sharers(ctx, N) : 0.0;
}

double cfit__nvme_capacity_bytes(const cfit__ctx *ctx, long N)
{
    return ctx->host.has_nvme ? ctx->host.nvme_bytes / sharers(ctx, N) : 0.0;
}

/* The optimizer's 16 B/param (below) on NVMe: host memory keeps DeepSpeed's swap buffers, one
 * sub-group of elements each in fp32. */
static void nvme_optimizer_memory(double state_bytes, double params, cfit__stage_mem *sm)
{
    double group = params < ZERO_SUB_GROUP_ELEMS ? params : ZERO_SUB_GROUP_ELEMS;
    sm->nvme += state_bytes;
    sm->host += NVME_OPT_SWAP_BUFFERS * group * 4.0;
}

/* The parameter shard on NVMe: host memory keeps offload_param's buffer pool (bf16). */
static void nvme_params_memory(double shard_bytes, cfit__stage_mem *sm)
{
    double pool = NVME_PARAM_SWAP_BUFFERS * NVME_PARAM_BUFFER_ELEMS * 2.0;
    sm->nvme += shard_bytes;
    sm->host += shard_bytes < pool ? shard_bytes : pool;
}

void cfit__offload_stage_memory(const cfit__ctx *ctx, const cfit__layer_cost *lc, const cfit_layout *l,
                                int n, double inflight, cfit__stage_mem *sm)
{
    if (ctx->host.offload & CFIT_OFFLOAD_OPTIMIZER) {
        /* Adam's 12 B/param and the fp32 gradient partition CPU-Adam reads (4 B/param) */
        if (ctx->host.offload & CFIT_OFFLOAD_OPTIMIZER_NVME)
            nvme_optimizer_memory(sm->opt * (16.0 / 12.0), sm->opt / 12.0, sm);
        else
            sm->host += sm->opt * (16.0 / 12.0);
        sm->opt = 0.0;
        double bucket = ZERO_REDUCE_BUCKET_ELEMS * ctx->grad_bytes;
        if (l->zero >= 2 && sm->gr > bucket)   /* reduced gradients stream out as they are made */
            sm->gr = bucket;
    }
    if (ctx->host.offload & CFIT_OFFLOAD_PARAMS) {   /* the shard; the gathered layers stay in `other` */
        if (ctx->host.offload & CFIT_OFFLOAD_PARAMS_NVME)
            nvme_params_memory(sm->w, sm);
        else
            sm->host += sm->w;
        sm->w = 0.0;
    }
    if (lc->act_off_bytes > 0) {   /* --offload-modules: the layer computing keeps its own on the GPU */
        double moved = lc->act_off_bytes * n * inflight;
        sm->host += moved - lc->act_off_bytes;
        sm->act += lc->act_off_bytes;
    }
    if (ctx->host.offload & CFIT_OFFLOAD_ACTIVATIONS) {
        double stored = lc->act_bytes * n * inflight, kept = ACT_OFFLOAD_GPU_LAYERS * lc->act_bytes;
        if (stored > kept) {
            sm->host += stored - kept;
            sm->act -= stored - kept;
        }
    }
}

static double exposed(double need_s, double window_s)
{
    return need_s > window_s ? need_s - window_s : 0.0;
}

/* One GPU's share of its node's transfer paths: the host link (PCIe, capped by its share of host
 * memory bandwidth) and the NVMe array's sequential read and write. */
typedef struct tier_bw { double link, read, write; } tier_bw;

static tier_bw tier_bw_of(const cfit__ctx *ctx, long N)
{
    const cfit__host *h = &ctx->host;
    double share = sharers(ctx, N);
    tier_bw t = {h->host_bw / share < h->link_bw ? h->host_bw / share : h->link_bw, 0.0, 0.0};
    if (h->has_nvme && (h->offload & CFIT_OFFLOAD_NVME)) {
        t.read = h->nvme_read_bw / share;
        t.write = h->nvme_write_bw / share;
    }
    return t;
}

static double max2(double a, double b)
{
    return a > b ? a : b;
}

/* Seconds to bring `bytes` of the parameter shard up to the GPU: over the host link, and from
 * NVMe behind it when the shard lives there (ZeRO-Infinity §6.3 overlaps NVMe->CPU reads with
 * the CPU->GPU copies of the previous parameters: the slower of the two). */
static double params_up_s(const cfit__ctx *ctx, const tier_bw *bw, double bytes)
{
    double t = bytes / bw->link;
    return ctx->host.offload & CFIT_OFFLOAD_PARAMS_NVME ? max2(t, bytes / bw->read) : t;
}

/* Per step: the optimizer on the CPU (docs/model.md §10.2, §10.7).  Host tier: ZeRO-Offload's
 * schedule, gradients down behind the last backward, then the Adam step and the updated bf16
 * shard coming up, exposed (the paper's optional one-step delayed update is not assumed).  NVMe
 * tier: the fp32 gradients also go on to NVMe behind the backward, and the step streams each
 * sub-group's 16 B/param in, updates it and writes its 12 B/param of states back, the three
 * pipelined (ZeRO-Infinity §6.3; DeepSpeed's pipeline_read / pipeline_write): the slowest sets it. */
static double optimizer_offload_s(const cfit__ctx *ctx, const tier_bw *bw, long N, double P_opt, double w_bytes,
                                  double bwd_s)
{
    const cfit__host *h = &ctx->host;
    double down = ctx->grad_bytes * P_opt / bw->link, up = 2.0 * P_opt / bw->link;
    double adam = cfit_cpu_adam_s(P_opt * sharers(ctx, N), h->host_bw);
    if (!(h->offload & CFIT_OFFLOAD_OPTIMIZER_NVME))
        return exposed(down, bwd_s) + adam + up;
    double grads_out = 4.0 * P_opt / bw->write, states_in = 16.0 * P_opt / bw->read;
    double states_out = (12.0 * P_opt + (h->offload & CFIT_OFFLOAD_PARAMS_NVME ? w_bytes : 0.0)) / bw->write;
    return exposed(max2(down, grads_out), bwd_s) + max2(max2(states_in, adam), states_out) + up;
}

double cfit__offload_step_s(const cfit__ctx *ctx, const cfit__layer_cost *lc, long N, int n, long m_mb,
                            double P_opt, double w_bytes, double *t_opt_s)
{
    tier_bw bw = tier_bw_of(ctx, N);
    if (bw.link <= 0)
        return 0.0;
    double fwd_s = n * lc->fwd_s, bwd_s = n * lc->bwd_s, t = 0.0;
    /* per micro-batch, per direction (PCIe is full duplex): the parameter shard up for the
     * forward and again for the backward, activations down in the forward and up in the backward,
     * each prefetched behind that pass's compute (copy engines, no SMs) */
    double act = (ctx->host.offload & CFIT_OFFLOAD_ACTIVATIONS ? lc->act_bytes * n : 0.0) + lc->act_off_bytes * n;
    double par = ctx->host.offload & CFIT_OFFLOAD_PARAMS ? w_bytes : 0.0;
    if (act > 0 || par > 0) {
        double f_s = max2(params_up_s(ctx, &bw, par), act / bw.link);
        double b_s = max2((par + act) / bw.link, params_up_s(ctx, &bw, par));
        t += m_mb * (exposed(f_s, fwd_s) + exposed(b_s, bwd_s));
    }
    if (ctx->host.offload & CFIT_OFFLOAD_OPTIMIZER) {
        t += optimizer_offload_s(ctx, &bw, N, P_opt, w_bytes, bwd_s);
        *t_opt_s = 0.0;
    } else if (par > 0) {   /* the GPU's optimizer writes the updated shard back down (and on to NVMe) */
        t += ctx->host.offload & CFIT_OFFLOAD_PARAMS_NVME ? max2(par / bw.link, par / bw.write) : par / bw.link;
    }
    return t;
}

/* --finetune and --lora-rank against the model and the fixed ZeRO stage. */
static int finetune_validate(const cfit_plan_request *r, cfit_diag *d)
{
    cfit_finetune ft = (cfit_finetune)r->finetune;
    if (r->finetune < 0 || r->finetune >= CFIT_FINETUNE_COUNT)
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "fine-tuning mode %d out of range", r->finetune);
    if (r->lora_rank < 0)
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "--lora-rank must be a positive whole number, got %d", r->lora_rank);
    if (r->lora_rank > 0 && !cfit_finetune_frozen(ft))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--lora-rank %d needs --finetune lora or qlora (got %s)", r->lora_rank,
                             ft == CFIT_FINETUNE_NONE ? "no --finetune" : "--finetune full");
    return cfit_finetune_check(r->model, ft, d);
}

/* --offload-modules as Megatron-Core's TransformerConfig.__post_init__ checks offload_modules
 * (Megatron-LM d98e8a6), and what the planner needs to cost them. */
static int offload_modules_validate(const cfit_plan_request *r, cfit_diag *d)
{
    unsigned o = (unsigned)r->offload_modules;
    const cfit_framework *fw = cfit__plan_framework(r);
    char list[128];
    if (!o)
        return CFIT_EOK;
    cfit_offload_modules_str(o, list, sizeof list);
    if (o >= 1u << CFIT_OFFMOD_COUNT)
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "offload module mask %u out of range", o);
    if (fw && !fw->offload_modules)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--offload-modules is Megatron-Core's fine-grained activation offloading, which "
                             "framework '%s' does not run (the megatron-core entries do)", fw->name);
    if (r->offload > 0 && (r->offload & CFIT_OFFLOAD_ACTIVATIONS))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--offload-modules cannot be combined with --offload activations (Megatron-Core: "
                             "fine_grained_activation_offloading cannot be enabled with cpu_offloading)");
    if ((o & CFIT_OFFMOD_ATTN_PROJ) && !(o & CFIT_OFFMOD_CORE_ATTN))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--offload-modules attn_proj needs core_attn beside it (Megatron-Core: the input of "
                             "attn_proj is the output of core_attn, which is needed in core_attn.backward())");
    if ((o & CFIT_OFFMOD_FUSED_GROUP_MLP) && (o & (CFIT_OFFMOD_EXPERT_FC1 | CFIT_OFFMOD_MOE_ACT)))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--offload-modules fused_group_mlp offloads the whole fused grouped MLP and cannot be "
                             "combined with expert_fc1 or moe_act (Megatron-Core)");
    if ((o & CFIT_OFFMOD_EXPERTS) && !cfit_model_is_moe(r->model))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--offload-modules %s: expert_fc1, moe_act and fused_group_mlp need an MoE model: '%s' "
                             "has no experts", list, r->model->name);
    unsigned recomputed = cfit_recompute_mask((cfit_recompute)(r->fixed.recompute >= 0 ? r->fixed.recompute : 0),
                                              (unsigned)r->fixed.recompute_modules);
    if ((o & CFIT_OFFMOD_EXPERTS) && r->fixed.recompute >= 0 && (recomputed & CFIT_RECMOD_MOE))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--offload-modules %s cannot offload inside an MoE layer that is recomputed whole "
                             "(recompute module moe; Megatron-Core refuses it)", list);
    if (r->fixed.recompute == CFIT_RECOMPUTE_FULL || r->fixed.recompute == CFIT_RECOMPUTE_BLOCK)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--offload-modules needs stored activations to move: with --recompute %s a layer keeps only "
                             "its input; use none, selective or modules:LIST", cfit_recompute_name((cfit_recompute)r->fixed.recompute));
    return CFIT_EOK;
}

int cfit__offload_validate(const cfit_plan_request *r, cfit_diag *d)
{
    const cfit_layout *f = &r->fixed;
    int rc = finetune_validate(r, d);
    if (!rc)
        rc = offload_modules_validate(r, d);
    if (rc)
        return rc;
    int mask = r->offload > 0 ? r->offload : 0;
    char buf[64];
    if (r->offload > 0 && !cfit_offload_mask_ok(r->offload))
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "offload mask %d out of range (an NVMe bit needs its host bit)",
                             r->offload);
    if ((mask & CFIT_OFFLOAD_PARAMS) && f->zero >= 0 && f->zero < 3)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--offload %s needs --zero 3 (DeepSpeed offload_param and FSDP CPU offload shard the "
                             "parameters), got --zero %d", cfit_offload_str(mask, buf, sizeof buf), f->zero);
    if ((mask & CFIT_OFFLOAD_OPTIMIZER) && f->zero == 0)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--offload optimizer needs --zero 1, 2 or 3 (DeepSpeed's offload_optimizer works on a "
                             "ZeRO stage), got --zero 0");
    return CFIT_EOK;
}

int cfit__emit_offload_bad(int k, const cfit_plan_request *r, const cfit_plan *p, cfit_diag *d)
{
    char mode[64];
    if (k == CFIT_EMIT_MEGATRON && (p->offload & CFIT_OFFLOAD_NVME))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "emit: the plan offloads to NVMe (--offload %s), which only DeepSpeed's ZeRO-Infinity "
                             "expresses (offload_optimizer / offload_param device nvme): emit deepspeed",
                             cfit_offload_str(p->offload, mode, sizeof mode));
    if (p->offload_modules && k != CFIT_EMIT_MEGATRON)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "emit: --offload-modules is Megatron-Core's fine-grained activation offloading, which only "
                             "Megatron-LM arguments express: emit megatron");
    if (k == CFIT_EMIT_TORCHRUN)
        return CFIT_EOK;
    if (p->offload & CFIT_OFFLOAD_ACTIVATIONS)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "emit: the plan offloads activations (--offload %s), which neither a DeepSpeed config nor "
                             "Megatron-LM arguments express (wrap the model in torch.autograd.graph.save_on_cpu); plan "
                             "with --offload without activations to emit it", cfit_offload_str(p->offload, mode, sizeof mode));
    if (k != CFIT_EMIT_MEGATRON)
        return CFIT_EOK;
    if ((p->offload & CFIT_OFFLOAD_PARAMS) || ((p->offload & CFIT_OFFLOAD_OPTIMIZER) && p->layout.zero != 1))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "emit: Megatron-LM offloads only the distributed optimizer's states "
                             "(--optimizer-cpu-offload with ZeRO-1); the plan has --offload %s at ZeRO-%d: emit deepspeed",
                             cfit_offload_str(p->offload, mode, sizeof mode), p->layout.zero);
    if (cfit_finetune_frozen((cfit_finetune)r->finetune))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "emit: Megatron-LM's pretrain_gpt.py trains every weight; --finetune %s needs a PEFT "
                             "framework: emit deepspeed (the LoRA adapters come from the model code)",
                             cfit_finetune_name((cfit_finetune)r->finetune));
    return CFIT_EOK;
}
