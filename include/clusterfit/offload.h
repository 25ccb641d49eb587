/* offload.h - optimizer, parameter and activation offload to host memory, and LoRA / QLoRA
 * fine-tuning: the terms the planner adds to a layout's memory and step time (docs/model.md §10
 * derives them with their sources).
 */
#ifndef CLUSTERFIT_OFFLOAD_H
#define CLUSTERFIT_OFFLOAD_H

#include <stddef.h>
#include "clusterfit/base.h"
#include "clusterfit/catalog.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a layout keeps in host (CPU) memory instead of HBM: a bit set.  The NVMe bits move that
 * state one tier further, to the node's local NVMe array, through host memory (ZeRO-Infinity,
 * arXiv 2104.07857); each comes with its host bit. */
enum {
    CFIT_OFFLOAD_NONE = 0,
    CFIT_OFFLOAD_OPTIMIZER = 1,     /* ZeRO-Offload: Adam states, fp32 master and gradients; Adam on the CPU */
    CFIT_OFFLOAD_PARAMS = 2,        /* ZeRO-Infinity offload_param / FSDP CPU offload: the bf16 parameter shard */
    CFIT_OFFLOAD_ACTIVATIONS = 4,   /* stored activations swapped out in forward, back in for backward */
    CFIT_OFFLOAD_ALL = 7,           /* every host-memory combination: the search's first fallback */
    CFIT_OFFLOAD_OPTIMIZER_NVME = 8,   /* "optimizer:nvme": states and fp32 gradients on NVMe, Adam on the CPU */
    CFIT_OFFLOAD_PARAMS_NVME = 16,     /* "params:nvme": the bf16 parameter shard on NVMe */
    CFIT_OFFLOAD_NVME = CFIT_OFFLOAD_OPTIMIZER_NVME | CFIT_OFFLOAD_PARAMS_NVME,
    CFIT_OFFLOAD_MASK_MAX = 31
};

/* Megatron-Core's fine-grained activation offloading (--fine-grained-activation-offloading
 * --offload-modules LIST; TransformerConfig.offload_modules, Megatron-LM d98e8a6): the submodules
 * whose *input* goes to host memory in the forward and comes back before their backward. */
enum {
    CFIT_OFFMOD_ATTN_NORM = 1 << 0,       /* the attention norm's input (the layer input) */
    CFIT_OFFMOD_QKV_LINEAR = 1 << 1,      /* the QKV (MLA: down) projection's input, the norm's output */
    CFIT_OFFMOD_CORE_ATTN = 1 << 2,       /* Q, K, V */
    CFIT_OFFMOD_ATTN_PROJ = 1 << 3,       /* the output projection's input (needs core_attn) */
    CFIT_OFFMOD_MLP_NORM = 1 << 4,        /* the pre-MLP norm's input */
    CFIT_OFFMOD_EXPERT_FC1 = 1 << 5,      /* the routed tokens expert FC1 reads */
    CFIT_OFFMOD_MOE_ACT = 1 << 6,         /* expert FC1's output, the activation's input */
    CFIT_OFFMOD_FUSED_GROUP_MLP = 1 << 7, /* the fused grouped MLP's inputs: both of the above and FC2's */
    CFIT_OFFMOD_COUNT = 8,
    CFIT_OFFMOD_EXPERTS = CFIT_OFFMOD_EXPERT_FC1 | CFIT_OFFMOD_MOE_ACT | CFIT_OFFMOD_FUSED_GROUP_MLP   /* inside the experts */
};
/* Megatron's name of offload-module bit i ("attn_norm", ...); NULL outside 0 .. CFIT_OFFMOD_COUNT - 1. */
CFIT_API const char *cfit_offload_module_name(int i);
/* "none" (0) or a comma list of Megatron's module names into CFIT_OFFMOD_* bits; 0 = ok, else -1
 * with *bad_at the offset of the unknown name. */
CFIT_API int cfit_offload_modules_parse(const char *list, unsigned *mask, size_t *bad_at);
/* The comma list of a mask ("core_attn,attn_proj"), "none" for 0, in buf. */
CFIT_API char *cfit_offload_modules_str(unsigned mask, char *buf, size_t n);

/* Parse "none" or a comma list of optimizer, params, activations, optimizer:nvme, params:nvme
 * into *mask ("optimizer:nvme" sets CFIT_OFFLOAD_OPTIMIZER | CFIT_OFFLOAD_OPTIMIZER_NVME;
 * "optimizer:cpu" is "optimizer").  CFIT_EOK or CFIT_EINVALID with d->msg set. */
CFIT_API int cfit_offload_parse(const char *s, int *mask, cfit_diag *d);
/* Whether mask is one the planner costs: within CFIT_OFFLOAD_MASK_MAX, each NVMe bit with its
 * host bit. */
CFIT_API int cfit_offload_mask_ok(int mask);
/* "none", or the comma list of a mask ("optimizer:nvme,params"), in buf. */
CFIT_API const char *cfit_offload_str(int mask, char *buf, size_t n);

/* Achievable bytes/s one direction of a PCIe link of generation gen (3..5) and `lanes` lanes:
 * GT/s x 128b/130b x the TLP payload share of 256 B packets (PCIe Base Spec); 0 when unknown. */
CFIT_API double cfit_pcie_bw_bytes_per_s(int gen, int lanes);
/* One GPU's host link, bytes/s per direction: the node's host_link_bytes_per_s where it gives
 * one (NVLink-C2C), else its PCIe generation and width; 0 when neither is known. */
CFIT_API double cfit_node_host_link_bw(const cfit_node *n);
/* The host link as the CLI prints it ("PCIe Gen5 x16 55.1 GB/s", "host link 225.0 GB/s"),
 * per direction, in buf. */
CFIT_API const char *cfit_node_host_link_str(const cfit_node *n, char *buf, size_t size);
/* Whether a node entry has the figures offload is costed with (host memory size and bandwidth,
 * and a host link: PCIe generation and width, or host_link_bytes_per_s). */
CFIT_API int cfit_node_has_host(const cfit_node *n);
/* The node's local NVMe array (its "local_nvme" storage entry in catalog c), or NULL when the
 * entry names none or names one that is not a per-node storage entry. */
CFIT_API const cfit_storage *cfit_node_nvme(const cfit_catalog *c, const cfit_node *n);
/* Seconds DeepSpeed's CPU-Adam takes to update `params` parameters on a host of host_bw
 * bytes/s (ZeRO-Offload's measured rate, scaled by memory bandwidth; docs/model.md §10.2). */
CFIT_API double cfit_cpu_adam_s(double params, double host_bw_bytes_per_s);

/* Fine-tuning mode.  NONE (pre-training) and FULL cost the same: every parameter trained. */
typedef enum cfit_finetune {
    CFIT_FINETUNE_NONE = 0, CFIT_FINETUNE_FULL = 1, CFIT_FINETUNE_LORA = 2, CFIT_FINETUNE_QLORA = 3,
    CFIT_FINETUNE_COUNT
} cfit_finetune;

#define CFIT_LORA_RANK_DEFAULT 16   /* --lora-rank when not given (Hu et al. use 1..64; 16 is common) */

CFIT_API const char *cfit_finetune_name(cfit_finetune f);   /* "none", "full", "lora", "qlora" */
/* Whether the base weights are frozen (lora, qlora). */
CFIT_API int cfit_finetune_frozen(cfit_finetune f);
/* LoRA adapter parameters of one layer at rank r: r x (d_in + d_out) for each of Q, K, V, the
 * output projection and the MLP's gate, up and down (fc1, fc2) projections; in an MoE layer for
 * each routed expert's and the shared experts' (not the router); the mean over the layers when
 * MoE and dense layers mix. */
CFIT_API double cfit_lora_layer_params(const cfit_model *m, int rank);
/* Of those, the routed experts' (the mean layer's; 0 for a dense model). */
CFIT_API double cfit_lora_expert_layer_params(const cfit_model *m, int rank);
/* Bytes per quantized weight of QLoRA's NF4 with double quantization: 4 bits, one fp32 absmax
 * per 64 weights quantized to 8 bits with one fp32 constant per 256 of those. */
CFIT_API double cfit_nf4_bytes_per_param(void);
/* Model FLOPs per trained token of fine-tuning mode f at rank r (workload.h's convention):
 * frozen modes skip the weight-gradient GEMMs (2 FLOPs per weight a token meets) and add the
 * adapters' forward and backward (6 per adapter parameter a token meets: its top-k experts'). */
CFIT_API double cfit_finetune_flops_per_token(const cfit_model *m, int seq, cfit_finetune f, int rank);
/* The parameters a request trains: all of them, or the adapters of lora / qlora. */
struct cfit_plan_request;
CFIT_API double cfit_finetune_trainable_params(const struct cfit_plan_request *r);
/* Whether the planner costs fine-tuning mode f for model m: LoRA adapters are placed on Q, K, V,
 * output and the (dense or expert) MLP projections, so MLA models are refused (d->msg says so). */
CFIT_API int cfit_finetune_check(const cfit_model *m, cfit_finetune f, cfit_diag *d);

#ifdef __cplusplus
}
#endif
#endif
