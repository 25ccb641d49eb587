/* catalog.h - the sourced facts clusterfit computes from: accelerators, models,
 * fabrics, node types, prices, switches, storage, failure rates and the model's fidelity on
 * published runs.
 *
 * The catalog starts from the entries embedded in the binary (the JSON files in data/, each with
 * a "source"), and cfit_catalog_load_file() adds or overrides entries by name from a
 * user file of the same format.  Every calibration constant the performance model
 * uses lives here, per GPU or per fabric; none is a literal in the model's code.
 *
 * Units: bytes, seconds, bytes per second (per direction), FLOP per second (dense).
 */
#ifndef CLUSTERFIT_CATALOG_H
#define CLUSTERFIT_CATALOG_H

#include <stddef.h>
#include "clusterfit/base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CFIT_NAME_MAX 64
#define CFIT_TEXT_MAX 512

typedef enum cfit_precision { CFIT_PREC_BF16 = 0, CFIT_PREC_FP8 = 1, CFIT_PREC_COUNT } cfit_precision;

/* Achievable fractions and sizes measured or published for one GPU type. */
typedef struct cfit_gpu_calibration {
    double gemm_efficiency[CFIT_PREC_COUNT]; /* large-GEMM fraction of dense peak, per precision */
    double gemm_half_dim;           /* GEMM dimension at which shape efficiency is 1/2 (elements) */
    double attention_efficiency;    /* fused attention kernel fraction of bf16 dense peak, long sequences */
    double attention_half_seq;      /* kernel sequence length at which it runs at half that (0: flat) */
    double memory_bw_efficiency;    /* achievable fraction of HBM bandwidth (STREAM-like) */
    double reserved_bytes;          /* runtime context, communicator and workspace buffers */
    double fragmentation;           /* allocator overhead as a fraction of the rest */
    double layer_overhead_s;        /* fixed per-layer-per-micro-batch kernel launch/sync cost */
} cfit_gpu_calibration;

/* GPU architecture generation: selects NCCL's per-generation protocol limits (sim/nccl.c). */
typedef enum cfit_gpu_arch {
    CFIT_ARCH_OTHER = 0, CFIT_ARCH_VOLTA, CFIT_ARCH_TURING, CFIT_ARCH_AMPERE, CFIT_ARCH_ADA, CFIT_ARCH_HOPPER,
    CFIT_ARCH_BLACKWELL, CFIT_ARCH_CDNA2, CFIT_ARCH_CDNA3, CFIT_ARCH_CDNA4, CFIT_ARCH_COUNT
} cfit_gpu_arch;

CFIT_API const char *cfit_gpu_arch_name(cfit_gpu_arch a);   /* "hopper", ...; "other" */

#define CFIT_MAX_ALIASES 8

/* Other names an entry answers to ("aliases": ["H100", "H100 SXM"]); lookups compare names
 * and aliases ignoring case, spaces, hyphens and underscores. */
typedef struct cfit_alias_list {
    int n;
    char name[CFIT_MAX_ALIASES][CFIT_NAME_MAX];
} cfit_alias_list;

typedef struct cfit_gpu {
    char name[CFIT_NAME_MAX];          /* catalog key, e.g. "h100-sxm" */
    cfit_alias_list aliases;           /* "aliases": what people type (H100, "H100 SXM", MI300X) */
    cfit_gpu_arch arch;                /* "arch" key; "other" when absent */
    char vendor[CFIT_NAME_MAX];
    char display_name[CFIT_NAME_MAX];
    double memory_bytes;               /* HBM capacity */
    double memory_bw_bytes_per_s;      /* HBM bandwidth */
    double peak_flops[CFIT_PREC_COUNT];/* dense tensor FLOP/s for training precisions; 0 = unsupported */
    double peak_fp4_flops;             /* dense, informational; 0 = unsupported */
    double peak_tf32_flops;            /* dense, informational */
    double peak_fp64_flops;            /* informational */
    double tdp_w;
    char scaleup_fabric[CFIT_NAME_MAX];/* fabric entry for the scale-up link */
    double scaleup_bw_bytes_per_s;     /* per GPU, per direction; 0 = none */
    int scaleup_domain;                /* GPUs in one scale-up domain (1 = none) */
    char default_node[CFIT_NAME_MAX];  /* node entry used when none is given */
    cfit_gpu_calibration cal;
    char no_price[CFIT_TEXT_MAX];      /* "no_price": why the GPU has no market price (no list price, no
                                          public rental); "" when it has one.  Plans on it are ranked by
                                          GPU-hours and the output states the reason */
    char source[CFIT_TEXT_MAX];
} cfit_gpu;

#define CFIT_MODEL_MAX_DENSE_LIST 64

/* A list of layer numbers (0-based). */
typedef struct cfit_layer_list {
    int n;
    int layer[CFIT_MODEL_MAX_DENSE_LIST];
} cfit_layer_list;

typedef enum cfit_mlp { CFIT_MLP_GELU = 0, CFIT_MLP_SWIGLU = 1 } cfit_mlp;

/* The most MTP modules a model may have (cfit_model.mtp_layers; DeepSeek-V3 has 1): the catalog,
 * config.json, `plan --mtp` and `check` all hold to it. */
#define CFIT_MTP_LAYERS_MAX 16

typedef struct cfit_model {
    char name[CFIT_NAME_MAX];
    int layers;
    int hidden_size;
    int ffn_hidden_size;        /* per branch for SwiGLU (the gate and up projections are each this wide) */
    int num_heads;
    int num_kv_heads;           /* == num_heads for MHA */
    int vocab_size;
    int seq_len;                /* default training sequence length */
    cfit_mlp mlp;
    int tied_embeddings;        /* input and output embeddings share weights */
    int head_dim;               /* per attention head; 0 = hidden_size / num_heads (Qwen3 and gpt-oss
                                   set it explicitly) */
    /* Mixture of experts (docs/model.md §1.1): all 0 for a dense model. */
    int num_experts;            /* routed experts in each MoE layer; 0 = dense */
    int experts_per_token;      /* top-k routed experts a token goes to */
    int moe_ffn_hidden_size;    /* per routed expert, per branch (HF moe_intermediate_size) */
    int shared_ffn_hidden_size; /* all shared experts together, per branch (HF
                                   shared_expert_intermediate_size, or n_shared_experts x
                                   moe_intermediate_size); 0 = none */
    int shared_expert_gate;     /* a hidden -> 1 sigmoid gate on the shared expert (Qwen2-MoE) */
    int first_dense_layers;     /* the first k layers have a dense MLP (first_k_dense_replace) */
    int moe_layer_step;         /* of the rest, layer i (from 0) is MoE when (i + 1) % step == 0
                                   (decoder_sparse_step, interleave_moe_layer_step); 0 = 1 */
    cfit_layer_list dense_layers; /* further layers with a dense MLP (mlp_only_layers) */
    /* Multi-head latent attention (DeepSeek-V2/V3): kv_lora_rank 0 = ordinary attention. */
    int q_lora_rank;            /* 0 = a plain q projection */
    int kv_lora_rank;
    int qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
    /* Local attention (gpt-oss alternates 128-token windows): sliding_layers of the layers attend
       to at most sliding_window tokens; 0 = none. */
    int sliding_window;
    int sliding_layers;
    /* Node-limited routing (DeepSeek-V3 §2.1.2): a token's experts lie on at most this many
       nodes (HF topk_group of n_group > 1 groups); 0 = no limit. */
    int moe_max_nodes_per_token;
    int router_sigmoid;         /* router scores by sigmoid (DeepSeek-V3's scoring_func, §2.1.2), else
                                   softmax: "router_score" in the catalog */
    /* Group-limited routing (DeepSeek-V3 §2.1.2; Megatron-Core --moe-router-num-groups/-group-topk):
       the experts form router_groups equal groups (HF n_group) and a token's top-k come from
       router_group_topk of them (HF topk_group); 0 = no groups. */
    int router_groups;
    int router_group_topk;
    /* Auxiliary-loss-free load balancing (DeepSeek-V3 §2.1.2, arXiv:2408.15664; HF topk_method
       "noaux_tc"): a per-expert bias added to the scores for the top-k choice, moved by
       router_bias_update_rate (gamma) per step; 0 = not stated (Megatron-Core's default). */
    int router_expert_bias;
    double router_bias_update_rate;
    /* The routed experts' combine weights are multiplied by this after the top-k choice
       (DeepSeek-V3's MoEGate routed_scaling_factor, HF config.json; Megatron-Core
       moe_router_topk_scaling_factor); 0 = no scaling. Changes the model's function, not its cost. */
    double router_topk_scaling_factor;
    /* Multi-token prediction (DeepSeek-V3 report §2.2; Megatron-Core --mtp-num-layers): this many
       sequential MTP modules after the last layer, each an embedding-and-hidden projection
       (2h -> h, two RMSNorms) and one transformer layer of the last layer's kind, sharing the
       embedding and output head; trained with the main model on the last pipeline stage.
       HF num_nextn_predict_layers; 0 = none, at most CFIT_MTP_LAYERS_MAX. */
    int mtp_layers;
    char source[CFIT_TEXT_MAX];
} cfit_model;

typedef enum cfit_fabric_kind { CFIT_FABRIC_SCALEOUT = 0, CFIT_FABRIC_SCALEUP = 1 } cfit_fabric_kind;

/* What a fabric's links are: sets the latency class NCCL's model uses (NVLink, PCI, network). */
typedef enum cfit_fabric_family {
    CFIT_FAMILY_OTHER = 0, CFIT_FAMILY_IB, CFIT_FAMILY_ROCE, CFIT_FAMILY_EFA, CFIT_FAMILY_NVLINK,
    CFIT_FAMILY_PCIE, CFIT_FAMILY_XGMI, CFIT_FAMILY_SLINGSHOT, CFIT_FAMILY_TCPXO, CFIT_FAMILY_COUNT
} cfit_fabric_family;

CFIT_API const char *cfit_fabric_family_name(cfit_fabric_family f);   /* "ib", ...; "other" */

typedef struct cfit_fabric {
    char name[CFIT_NAME_MAX];          /* e.g. "ib-ndr", "roce-400g", "nvlink4" */
    cfit_fabric_kind kind;
    char technology[CFIT_NAME_MAX];    /* human name */
    double bw_bytes_per_s;             /* per port (scale-out) or per GPU (scale-up; the GPU entry's own rate is used) */
    double latency_s;                  /* per message step, as collective libraries see it */
    double efficiency;                 /* achievable fraction of bw for large collectives */
    double overlap_efficiency;         /* fraction of a compute window usable to hide traffic */
    cfit_fabric_family family;         /* "family" key; "other" when absent */
    double sharp_efficiency;           /* in-network reduction: scale-up = NVLink SHARP (NCCL NVLS),
                                          scale-out = switch SHARP (NCCL CollNet); the achievable
                                          fraction of bw for it; 0 = the fabric cannot reduce */
    char source[CFIT_TEXT_MAX];
} cfit_fabric;

typedef struct cfit_node {
    char name[CFIT_NAME_MAX];          /* e.g. "hgx-h100-8" */
    int gpus_per_node;
    int nics_per_node;                 /* scale-out ports for the GPUs */
    char fabric[CFIT_NAME_MAX];        /* default scale-out fabric entry */
    char gpu[CFIT_NAME_MAX];           /* the GPU entry this node type holds ("" = any) */
    int p2p_off;                       /* "p2p": "no" - GPUs cannot reach each other's memory over
                                          PCIe (GeForce, IOMMU), so NCCL goes through host memory */
    double host_memory_bytes;          /* CPU (host) memory of the node; 0 = unknown (no offload) */
    double host_memory_bw_bytes_per_s; /* its peak bandwidth, all sockets (channels x transfer rate x 8 B) */
    int pcie_gen, pcie_lanes;          /* each GPU's host link (generation 3..5, lanes); 0 = unknown */
    double host_link_bytes_per_s;      /* each GPU's host link when it is not PCIe (Grace's NVLink-C2C),
                                          bytes/s per direction; set, it replaces pcie_gen/pcie_lanes */
    char host_source[CFIT_TEXT_MAX];   /* where the host figures come from */
    char local_nvme[CFIT_NAME_MAX];    /* "local_nvme": the per-node storage entry of its local NVMe
                                          array ("" = none known: no NVMe offload tier) */
    char local_nvme_source[CFIT_TEXT_MAX]; /* where the node's NVMe array comes from */
    char source[CFIT_TEXT_MAX];
} cfit_node;

/* How a training framework runs the layout: which attention kernel, whether gradient
 * communication overlaps the backward pass, how ZeRO-3 gathers parameters. */
typedef struct cfit_framework {
    char name[CFIT_NAME_MAX];          /* e.g. "megatron-core" */
    char display_name[CFIT_NAME_MAX];
    int unfused_attention;             /* attention scores materialised in HBM */
    double attention_efficiency_scale; /* multiplies the GPU's fused attention efficiency */
    int dp_overlap;                    /* gradient reduction overlaps the backward pass */
    int flat_param_gather;             /* ZeRO-3 gathers move the full volume per GPU NIC */
    double zero3_max_live_params;      /* ZeRO-3 parameters gathered at once; 0 = one layer */
    double host_layer_s;               /* host (CPU) time to issue one layer's forward kernels for a
                                          micro-batch; 0 = not modelled (never host-bound) */
    double moe_host_layer_s;           /* what an MoE layer's forward adds to it (router, permutation,
                                          dispatch, experts, combine) without CUDA graphs; 0 = none */
    int cuda_graphs;                   /* replays CUDA graphs (plan --cuda-graphs scoped|full):
                                          Megatron-Core's --cuda-graph-impl; 0 = refused */
    /* MoE token dispatch (docs/model.md §5.13) */
    int moe_dispatcher;                /* cfit_moe_dispatcher: how tokens reach their experts */
    int moe_a2a_overlap;               /* the dispatch/combine all-to-all of one micro-batch overlaps
                                          another's compute (Megatron --overlap-moe-expert-parallel-comm) */
    double moe_imbalance;              /* tokens of the busiest expert over the mean (>= 1; 0 = 1,
                                          balanced routing) */
    double moe_comm_sm_share;          /* share of the GPU's SMs the dispatch kernels hold while they
                                          overlap compute (that compute slows by it); 0 = none */
    unsigned schedules;                /* pipeline schedules it runs: a bit per cfit_schedule (schedule.h);
                                          without a "schedules" key 1f1b and interleaved */
    /* Each pipeline stage of an interleaved (vp > 1) schedule holds a whole number of virtual
       stages: Megatron-Core's TransformerConfig "Uneven PP" rules (first, last and each middle
       rank's layers divisible by vp; megatron/core/transformer/transformer_config.py, Megatron-LM
       d98e8a6) and arguments.py's num_layers_per_virtual_pipeline_stage; searched vp kept to them. */
    int whole_virtual_stages;
    int pipeline_layout;               /* places any layer count on any virtual stage from a layout
                                          string (Megatron-Core --pipeline-model-parallel-layout,
                                          megatron/core/transformer/pipeline_parallel_layer_layout.py):
                                          a mixed or MTP model's interleaved stages are then balanced
                                          (docs/model.md §5.8) */
    int offload_modules;               /* runs Megatron-Core's fine-grained activation offloading
                                          (--offload-modules: plan --offload-modules, docs/model.md §10.1) */
    int zero_with_pp;                  /* highest ZeRO stage it combines with pipeline parallelism
                                          (without the key 1: the distributed optimizer) */
    char source[CFIT_TEXT_MAX];
} cfit_framework;

/* A framework's MoE token dispatcher: NCCL's all-to-all (Megatron's "alltoall"), or DeepEP /
 * HybridEP fused kernels that send a token once per destination node and forward it there over
 * the scale-up link (github.com/deepseek-ai/DeepEP; Megatron's "flex" dispatcher). */
typedef enum cfit_moe_dispatcher {
    CFIT_DISPATCH_ALLTOALL = 0, CFIT_DISPATCH_DEEPEP = 1, CFIT_DISPATCH_HYBRIDEP = 2, CFIT_DISPATCH_COUNT
} cfit_moe_dispatcher;

/* A switch model at one scale-out fabric's port rate: the radix a fat-tree is built from
 * (bom.h).  One entry per (switch, rate): a 51.2 Tb/s chip is 64 ports at 800G or 128 at 400G. */
typedef struct cfit_switch {
    char name[CFIT_NAME_MAX];          /* e.g. "qm9700-ndr" */
    char fabric[CFIT_NAME_MAX];        /* the scale-out fabric entry whose ports it has */
    int ports;                         /* radix at that fabric's rate */
    char source[CFIT_TEXT_MAX];
} cfit_switch;

/* A storage option: node-local NVMe (one unit per node) or a parallel file system
 * building block (as many units as the throughput needs). */
typedef struct cfit_storage {
    char name[CFIT_NAME_MAX];          /* e.g. "nvme-local-8x-gen4" */
    int per_node;                      /* 1: every node has one unit (local disks) */
    double read_bytes_per_s;           /* sequential read per unit */
    double write_bytes_per_s;          /* sequential write per unit */
    double capacity_bytes;             /* per unit */
    int max_nodes;                     /* "max_nodes": client nodes one shared unit serves; 0 = no limit */
    char source[CFIT_TEXT_MAX];
} cfit_storage;

/* What a failure entry's interruptions are attributed to (docs/model.md "Failures"): the classes a
 * published breakdown counts separately, so a study that counts only GPU faults, or only hardware,
 * compares with the matching share of the model. */
typedef enum cfit_failure_class {
    CFIT_FAIL_GPU = 0,      /* the GPU package: die, HBM, SRAM, system processor, thermal, SDC */
    CFIT_FAIL_HOST,         /* the rest of the node: CPU, memory, SSD, power, chassis, host maintenance */
    CFIT_FAIL_NETWORK,      /* NICs, switches, cables */
    CFIT_FAIL_SOFTWARE,     /* software bugs, dependencies, collective timeouts */
    CFIT_FAIL_PLANNED,      /* planned maintenance: a restart without lost work */
    CFIT_FAIL_CLASS_COUNT
} cfit_failure_class;

/* What a failure rate is per: one GPU, one node or one scale-out NIC, per hour. */
typedef enum cfit_failure_per { CFIT_PER_GPU = 0, CFIT_PER_NODE, CFIT_PER_NIC, CFIT_PER_COUNT } cfit_failure_per;

#define CFIT_FAILURE_ANY_ARCH CFIT_ARCH_COUNT   /* a failure entry's "arch": "any" */

/* One component's job-interrupting failure rate, per unit-hour.  A job of G GPUs on N nodes with
 * K NICs per node sees rate x G, x N or x N K per hour from it.  A GPU uses the entries of its own
 * arch when there are any, else those of arch "any". */
typedef struct cfit_failure {
    char name[CFIT_NAME_MAX];          /* e.g. "any.gpu" */
    int arch;                          /* cfit_gpu_arch, or CFIT_FAILURE_ANY_ARCH */
    int klass;                         /* cfit_failure_class ("class" key) */
    int per;                           /* cfit_failure_per */
    double per_hour;                   /* interruptions per unit-hour */
    char source[CFIT_TEXT_MAX];
} cfit_failure;

/* How clusterfit's model did on one published training run (data/fidelity.json, written by
 * bench/fidelity.py --emit-table from bench/data/calibration.csv): the plan's model check. */
typedef struct cfit_fidelity {
    char name[CFIT_NAME_MAX];          /* the row id, e.g. "MEGLM-H100-3" */
    char gpu[CFIT_NAME_MAX];           /* a catalog GPU name */
    int gpus;
    double params;                     /* model parameters */
    char framework[CFIT_NAME_MAX];
    double error;                      /* (predicted - published) / published tokens/s per GPU */
    int moe;                           /* an MoE run (data/moe-fidelity.json, bench/moe_fidelity.py) */
    char source[CFIT_TEXT_MAX];
} cfit_fidelity;

CFIT_API const char *cfit_failure_class_name(cfit_failure_class k);   /* "gpu", "host", ... */
CFIT_API const char *cfit_failure_per_name(cfit_failure_per p);       /* "gpu", "node", "nic" */
CFIT_API const char *cfit_failure_arch_name(int arch);                /* an arch name, or "any" */

/* Units of a price entry; cfit_price_unit_name() gives the JSON spelling. */
typedef enum cfit_price_unit {
    CFIT_UNIT_USD_PER_NODE = 0,       /* capex of one node of a GPU type's default node entry */
    CFIT_UNIT_USD_PER_GPU_HOUR,       /* cloud rent */
    CFIT_UNIT_USD_PER_KWH,            /* energy */
    CFIT_UNIT_USD_PER_PORT,           /* scale-out switch port share, optics and cables per node port */
    CFIT_UNIT_USD_PER_KW_MONTH,       /* colocation per IT kW */
    CFIT_UNIT_FRACTION_PER_YEAR,      /* maintenance as a fraction of capex */
    CFIT_UNIT_YEARS,                  /* amortisation life */
    CFIT_UNIT_KW_PER_RACK,            /* rack density limits */
    CFIT_UNIT_RATIO,                  /* dimensionless (PUE, node power over GPU TDP) */
    CFIT_UNIT_USD_PER_SWITCH,         /* one switch (switch.NAME) */
    CFIT_UNIT_USD_PER_TRANSCEIVER,    /* one optical module port end (optic.FABRIC) */
    CFIT_UNIT_USD_PER_CABLE,          /* one fibre cable (cable.FABRIC) */
    CFIT_UNIT_USD_PER_NIC,            /* one scale-out NIC port (nic.FABRIC) */
    CFIT_UNIT_USD_PER_UNIT,           /* one storage unit (storage.NAME) */
    CFIT_UNIT_COUNT
} cfit_price_unit;

/* A price or facility constant: every one has a source and a date ("YYYY-MM").  Keys are
 * documented in docs/sizing.md (node.GPU, cloud.on_demand.GPU, energy.usd_per_kwh, ...). */
typedef struct cfit_price {
    char name[CFIT_NAME_MAX];          /* e.g. "node.h100-sxm" */
    double value;
    cfit_price_unit unit;
    char date[CFIT_NAME_MAX];          /* "YYYY-MM"; "" for a --price override */
    char source[CFIT_TEXT_MAX];
} cfit_price;

CFIT_API const char *cfit_price_unit_name(cfit_price_unit u);

/* Whether value is a meaningful figure for the price named name in unit u: money, rates, rack
 * powers and lives must be > 0; a maintenance fraction in [0, 1); facility.pue and
 * power.node_over_gpu_tdp >= 1 (a facility or a node draws at least its IT or GPU power).
 * Returns 1, or 0 with why (a phrase: "must be at least 1 (...)") filled. */
CFIT_API int cfit_price_value_ok(const char *name, cfit_price_unit u, double value, char *why, size_t n);

typedef struct cfit_catalog cfit_catalog;

/* A catalog with the embedded entries.  Returns NULL only when out of memory or when
 * the embedded data is broken (d says where). Free with cfit_catalog_free. */
CFIT_API cfit_catalog *cfit_catalog_new(cfit_diag *d);
CFIT_API void cfit_catalog_free(cfit_catalog *c);

/* Add or override entries from a file (same format as the files in data/).  Errors:
 * CFIT_EIO (cannot read), CFIT_EPARSE (syntax, unknown key, wrong type), CFIT_ERANGE
 * (out-of-range value), with d giving FILE:LINE:COL.  On error the catalog is unchanged. */
CFIT_API int cfit_catalog_load_file(cfit_catalog *c, const char *path, cfit_diag *d);
/* The same from a buffer; name is used in diagnostics. */
CFIT_API int cfit_catalog_load_buffer(cfit_catalog *c, const char *text, size_t len,
                             const char *name, cfit_diag *d);

/* Parse one model object (the format of a "models" entry) from a file or a buffer (name
 * is used in diagnostics).  Errors as for catalog files; *out is valid only on success.
 * An object with a "model_type" or "architectures" key is read as a Hugging Face config.json
 * instead (hf_config.h). */
CFIT_API int cfit_model_load_file(const char *path, cfit_model *out, cfit_diag *d);
CFIT_API int cfit_model_load_buffer(const char *text, size_t len, const char *name, cfit_model *out, cfit_diag *d);

CFIT_API size_t cfit_catalog_gpu_count(const cfit_catalog *c);
CFIT_API const cfit_gpu *cfit_catalog_gpu_at(const cfit_catalog *c, size_t i);
CFIT_API size_t cfit_catalog_model_count(const cfit_catalog *c);
CFIT_API const cfit_model *cfit_catalog_model_at(const cfit_catalog *c, size_t i);
CFIT_API size_t cfit_catalog_fabric_count(const cfit_catalog *c);
CFIT_API const cfit_fabric *cfit_catalog_fabric_at(const cfit_catalog *c, size_t i);
CFIT_API size_t cfit_catalog_node_count(const cfit_catalog *c);
CFIT_API const cfit_node *cfit_catalog_node_at(const cfit_catalog *c, size_t i);
CFIT_API size_t cfit_catalog_framework_count(const cfit_catalog *c);
CFIT_API const cfit_framework *cfit_catalog_framework_at(const cfit_catalog *c, size_t i);
CFIT_API size_t cfit_catalog_price_count(const cfit_catalog *c);
CFIT_API size_t cfit_catalog_switch_count(const cfit_catalog *c);
CFIT_API const cfit_switch *cfit_catalog_switch_at(const cfit_catalog *c, size_t i);
CFIT_API size_t cfit_catalog_storage_count(const cfit_catalog *c);
CFIT_API const cfit_storage *cfit_catalog_storage_at(const cfit_catalog *c, size_t i);
CFIT_API const cfit_price *cfit_catalog_price_at(const cfit_catalog *c, size_t i);
CFIT_API size_t cfit_catalog_failure_count(const cfit_catalog *c);
CFIT_API const cfit_failure *cfit_catalog_failure_at(const cfit_catalog *c, size_t i);
CFIT_API size_t cfit_catalog_fidelity_count(const cfit_catalog *c);
CFIT_API const cfit_fidelity *cfit_catalog_fidelity_at(const cfit_catalog *c, size_t i);

/* Lookup by name; NULL if absent.  On NULL, if d is given, d->msg names the closest
 * entries ("unknown gpu 'h10' (did you mean 'h100-sxm'?)") and the call's caller
 * should treat it as CFIT_EUNKNOWN. */
CFIT_API const cfit_gpu *cfit_catalog_gpu(const cfit_catalog *c, const char *name, cfit_diag *d);
CFIT_API const cfit_model *cfit_catalog_model(const cfit_catalog *c, const char *name, cfit_diag *d);
CFIT_API const cfit_fabric *cfit_catalog_fabric(const cfit_catalog *c, const char *name, cfit_diag *d);
CFIT_API const cfit_node *cfit_catalog_node(const cfit_catalog *c, const char *name, cfit_diag *d);
CFIT_API const cfit_framework *cfit_catalog_framework(const cfit_catalog *c, const char *name, cfit_diag *d);
CFIT_API const cfit_price *cfit_catalog_price(const cfit_catalog *c, const char *name, cfit_diag *d);
CFIT_API const cfit_switch *cfit_catalog_switch(const cfit_catalog *c, const char *name, cfit_diag *d);
/* The switch entry for a scale-out fabric: the first whose "fabric" names it; NULL if none. */
CFIT_API const cfit_switch *cfit_catalog_switch_for(const cfit_catalog *c, const char *fabric);

/* Add or replace one price (a --price KEY=VALUE override); p->name is the key.  Returns
 * CFIT_EOK or CFIT_ENOMEM.  Which keys are meaningful is the cost model's business
 * (cfit_cost_key_check in cost.h). */
CFIT_API int cfit_catalog_price_put(cfit_catalog *c, const cfit_price *p);

#ifdef __cplusplus
}
#endif
#endif
