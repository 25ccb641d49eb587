/* catalog.c - load, merge and look up catalog entries (embedded data/ files and user files).
 *
 * Each entry kind is described by one field table (key, type, where it goes, range);
 * a single loader walks the tables, so every kind gets the same strictness: unknown
 * keys are errors with a did-you-mean, required keys must be present, numbers are
 * range-checked, and every error carries FILE:LINE:COL.  A file is loaded into a
 * staging area first and merged only when all of it is valid.
 */
#include "clusterfit/catalog.h"
#include "clusterfit/schedule.h"
#include "clusterfit/workload.h"
#include "base/json.h"
#include "base/file.h"
#include "base/grow.h"
#include "core/embedded.h"
#include "core/hf_json.h"
#include "core/names.h"

#include <errno.h>
#include <float.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum ftype { F_STR, F_TEXT, F_NOTE, F_INT, F_DBL, F_BOOL, F_ENUM, F_OBJ, F_LAYERS, F_FLAGS, F_ALIASES } ftype;
/* F_STR: a name (< CFIT_NAME_MAX); F_TEXT: free text stored; F_NOTE: free text checked, not stored;
 * F_LAYERS: an array of whole numbers in [min, max] into a cfit_layer_list; F_FLAGS: an array of
 * enums names into an unsigned, a bit per name (its index); F_ALIASES: an array of names into a
 * cfit_alias_list */

typedef struct field {
    const char *key;
    ftype type;
    size_t off;                     /* into the entry struct */
    int required;
    double min, max;                /* numbers: inclusive range */
    const char *const *enums;       /* F_ENUM: names, NULL-terminated; value = index */
    const struct field *sub;        /* F_OBJ: fields of the nested object (same struct) */
} field;

#define END {NULL, F_STR, 0, 0, 0, 0, NULL, NULL}
#define BIG 1e30

static const char *const mlp_names[] = {"gelu", "swiglu", NULL};
static const char *const fabric_kinds[] = {"scaleout", "scaleup", NULL};
/* In cfit_gpu_arch and cfit_fabric_family order. */
static const char *const gpu_archs[] = {"other", "volta", "turing", "ampere", "ada", "hopper",
                                        "blackwell", "cdna2", "cdna3", "cdna4", NULL};
static const char *const fabric_families[] = {"other", "ib", "roce", "efa", "nvlink", "pcie", "xgmi",
                                              "slingshot", "tcpxo", NULL};
static const char *const p2p_modes[] = {"yes", "no", NULL};
static const char *const router_scores[] = {"softmax", "sigmoid", NULL};   /* index = router_sigmoid */

const char *cfit_gpu_arch_name(cfit_gpu_arch a)
{
    return a >= 0 && a < CFIT_ARCH_COUNT ? gpu_archs[a] : "other";
}

const char *cfit_fabric_family_name(cfit_fabric_family f)
{
    return f >= 0 && f < CFIT_FAMILY_COUNT ? fabric_families[f] : "other";
}

/* ---- field tables ---- */

#define G(x) offsetof(cfit_gpu, x)
static const field gpu_peak[] = {
    {"bf16", F_DBL, G(peak_flops[CFIT_PREC_BF16]), 1, 1e9, BIG, NULL, NULL},
    {"fp8", F_DBL, G(peak_flops[CFIT_PREC_FP8]), 0, 0, BIG, NULL, NULL},
    {"fp4", F_DBL, G(peak_fp4_flops), 0, 0, BIG, NULL, NULL},
    {"tf32", F_DBL, G(peak_tf32_flops), 0, 0, BIG, NULL, NULL},
    {"fp64", F_DBL, G(peak_fp64_flops), 0, 0, BIG, NULL, NULL},
    END};
static const field gpu_scaleup[] = {
    {"fabric", F_STR, G(scaleup_fabric), 1, 0, 0, NULL, NULL},
    {"bw_bytes_per_s", F_DBL, G(scaleup_bw_bytes_per_s), 1, 1e6, BIG, NULL, NULL},
    {"domain", F_INT, G(scaleup_domain), 1, 1, 1 << 20, NULL, NULL},
    END};
static const field gpu_gemm_eff[] = {
    {"bf16", F_DBL, G(cal.gemm_efficiency[CFIT_PREC_BF16]), 1, 0.01, 1, NULL, NULL},
    {"fp8", F_DBL, G(cal.gemm_efficiency[CFIT_PREC_FP8]), 0, 0.01, 1, NULL, NULL},
    END};
static const field gpu_cal[] = {
    {"gemm_efficiency", F_OBJ, 0, 1, 0, 0, NULL, gpu_gemm_eff},
    {"gemm_half_dim", F_DBL, G(cal.gemm_half_dim), 1, 0, 1e6, NULL, NULL},
    {"attention_efficiency", F_DBL, G(cal.attention_efficiency), 1, 0.01, 1, NULL, NULL},
    {"attention_half_seq", F_DBL, G(cal.attention_half_seq), 0, 0, 1e7, NULL, NULL},
    {"memory_bw_efficiency", F_DBL, G(cal.memory_bw_efficiency), 1, 0.01, 1, NULL, NULL},
    {"reserved_bytes", F_DBL, G(cal.reserved_bytes), 1, 0, 1e13, NULL, NULL},
    {"fragmentation", F_DBL, G(cal.fragmentation), 1, 0, 1, NULL, NULL},
    {"layer_overhead_s", F_DBL, G(cal.layer_overhead_s), 1, 0, 1, NULL, NULL},
    {"source", F_NOTE, 0, 1, 0, 0, NULL, NULL},
    END};
static const field gpu_fields[] = {
    {"name", F_STR, G(name), 1, 0, 0, NULL, NULL},
    {"aliases", F_ALIASES, G(aliases), 0, 0, 0, NULL, NULL},
    {"vendor", F_STR, G(vendor), 1, 0, 0, NULL, NULL},
    {"arch", F_ENUM, G(arch), 0, 0, 0, gpu_archs, NULL},
    {"display_name", F_STR, G(display_name), 1, 0, 0, NULL, NULL},
    {"memory_bytes", F_DBL, G(memory_bytes), 1, 1e6, 1e15, NULL, NULL},
    {"memory_bw_bytes_per_s", F_DBL, G(memory_bw_bytes_per_s), 1, 1e6, 1e15, NULL, NULL},
    {"peak_flops", F_OBJ, 0, 1, 0, 0, NULL, gpu_peak},
    {"tdp_w", F_DBL, G(tdp_w), 1, 1, 1e5, NULL, NULL},
    {"scaleup", F_OBJ, 0, 1, 0, 0, NULL, gpu_scaleup},
    {"default_node", F_STR, G(default_node), 1, 0, 0, NULL, NULL},
    {"calibration", F_OBJ, 0, 1, 0, 0, NULL, gpu_cal},
    {"no_price", F_TEXT, G(no_price), 0, 0, 0, NULL, NULL},
    {"source", F_TEXT, G(source), 1, 0, 0, NULL, NULL},
    END};
#undef G

#define M(x) offsetof(cfit_model, x)
static const field model_fields[] = {
    {"name", F_STR, M(name), 1, 0, 0, NULL, NULL},
    {"layers", F_INT, M(layers), 1, 1, 1 << 16, NULL, NULL},
    {"hidden_size", F_INT, M(hidden_size), 1, 1, 1 << 24, NULL, NULL},
    {"ffn_hidden_size", F_INT, M(ffn_hidden_size), 1, 1, 1 << 24, NULL, NULL},
    {"num_heads", F_INT, M(num_heads), 1, 1, 1 << 16, NULL, NULL},
    {"num_kv_heads", F_INT, M(num_kv_heads), 1, 1, 1 << 16, NULL, NULL},
    {"vocab_size", F_INT, M(vocab_size), 1, 1, 1 << 24, NULL, NULL},
    {"seq_len", F_INT, M(seq_len), 1, 1, 1 << 24, NULL, NULL},
    {"mlp", F_ENUM, M(mlp), 1, 0, 0, mlp_names, NULL},
    {"tied_embeddings", F_BOOL, M(tied_embeddings), 0, 0, 0, NULL, NULL},
    {"head_dim", F_INT, M(head_dim), 0, 1, 1 << 16, NULL, NULL},
    {"num_experts", F_INT, M(num_experts), 0, 0, 1 << 16, NULL, NULL},
    {"experts_per_token", F_INT, M(experts_per_token), 0, 1, 1 << 16, NULL, NULL},
    {"moe_ffn_hidden_size", F_INT, M(moe_ffn_hidden_size), 0, 1, 1 << 24, NULL, NULL},
    {"shared_ffn_hidden_size", F_INT, M(shared_ffn_hidden_size), 0, 0, 1 << 24, NULL, NULL},
    {"shared_expert_gate", F_BOOL, M(shared_expert_gate), 0, 0, 0, NULL, NULL},
    {"first_dense_layers", F_INT, M(first_dense_layers), 0, 0, 1 << 16, NULL, NULL},
    {"moe_layer_step", F_INT, M(moe_layer_step), 0, 1, 1 << 16, NULL, NULL},
    {"dense_layers", F_LAYERS, M(dense_layers), 0, 0, (1 << 16) - 1, NULL, NULL},
    {"q_lora_rank", F_INT, M(q_lora_rank), 0, 0, 1 << 20, NULL, NULL},
    {"kv_lora_rank", F_INT, M(kv_lora_rank), 0, 0, 1 << 20, NULL, NULL},
    {"qk_nope_head_dim", F_INT, M(qk_nope_head_dim), 0, 1, 1 << 16, NULL, NULL},
    {"qk_rope_head_dim", F_INT, M(qk_rope_head_dim), 0, 1, 1 << 16, NULL, NULL},
    {"v_head_dim", F_INT, M(v_head_dim), 0, 1, 1 << 16, NULL, NULL},
    {"sliding_window", F_INT, M(sliding_window), 0, 1, 1 << 24, NULL, NULL},
    {"sliding_layers", F_INT, M(sliding_layers), 0, 0, 1 << 16, NULL, NULL},
    {"moe_max_nodes_per_token", F_INT, M(moe_max_nodes_per_token), 0, 0, 1 << 16, NULL, NULL},
    {"router_score", F_ENUM, M(router_sigmoid), 0, 0, 0, router_scores, NULL},
    {"router_groups", F_INT, M(router_groups), 0, 0, 1 << 16, NULL, NULL},
    {"router_group_topk", F_INT, M(router_group_topk), 0, 1, 1 << 16, NULL, NULL},
    {"router_expert_bias", F_BOOL, M(router_expert_bias), 0, 0, 0, NULL, NULL},
    {"router_bias_update_rate", F_DBL, M(router_bias_update_rate), 0, 0, 1, NULL, NULL},
    {"router_topk_scaling_factor", F_DBL, M(router_topk_scaling_factor), 0, 0, 1e6, NULL, NULL},
    {"mtp_layers", F_INT, M(mtp_layers), 0, 0, CFIT_MTP_LAYERS_MAX, NULL, NULL},
    {"source", F_TEXT, M(source), 0, 0, 0, NULL, NULL},   /* required in catalogs (load_kind_array); a
                                                              model file without one gets its path */
    END};
#undef M

#define FB(x) offsetof(cfit_fabric, x)
static const field fabric_fields[] = {
    {"name", F_STR, FB(name), 1, 0, 0, NULL, NULL},
    {"kind", F_ENUM, FB(kind), 1, 0, 0, fabric_kinds, NULL},
    {"technology", F_STR, FB(technology), 1, 0, 0, NULL, NULL},
    {"bw_bytes_per_s", F_DBL, FB(bw_bytes_per_s), 1, 1e6, 1e15, NULL, NULL},
    {"latency_s", F_DBL, FB(latency_s), 1, 0, 1, NULL, NULL},
    {"efficiency", F_DBL, FB(efficiency), 1, 0.01, 1, NULL, NULL},
    {"overlap_efficiency", F_DBL, FB(overlap_efficiency), 1, 0, 1, NULL, NULL},
    {"family", F_ENUM, FB(family), 0, 0, 0, fabric_families, NULL},
    {"sharp_efficiency", F_DBL, FB(sharp_efficiency), 0, 0, 1, NULL, NULL},
    {"source", F_TEXT, FB(source), 1, 0, 0, NULL, NULL},
    END};
#undef FB

#define N(x) offsetof(cfit_node, x)
static const field node_fields[] = {
    {"name", F_STR, N(name), 1, 0, 0, NULL, NULL},
    {"gpus_per_node", F_INT, N(gpus_per_node), 1, 1, 4096, NULL, NULL},
    {"nics_per_node", F_INT, N(nics_per_node), 1, 1, 4096, NULL, NULL},
    {"fabric", F_STR, N(fabric), 1, 0, 0, NULL, NULL},
    {"gpu", F_STR, N(gpu), 0, 0, 0, NULL, NULL},
    {"p2p", F_ENUM, N(p2p_off), 0, 0, 0, p2p_modes, NULL},
    {"host_memory_bytes", F_DBL, N(host_memory_bytes), 0, 1e9, 1e15, NULL, NULL},
    {"host_memory_bw_bytes_per_s", F_DBL, N(host_memory_bw_bytes_per_s), 0, 1e9, 1e14, NULL, NULL},
    {"pcie_gen", F_INT, N(pcie_gen), 0, 3, 5, NULL, NULL},
    {"pcie_lanes", F_INT, N(pcie_lanes), 0, 1, 32, NULL, NULL},
    {"host_link_bytes_per_s", F_DBL, N(host_link_bytes_per_s), 0, 1e9, 1e13, NULL, NULL},
    {"host_source", F_TEXT, N(host_source), 0, 0, 0, NULL, NULL},
    {"local_nvme", F_STR, N(local_nvme), 0, 0, 0, NULL, NULL},
    {"local_nvme_source", F_TEXT, N(local_nvme_source), 0, 0, 0, NULL, NULL},
    {"source", F_TEXT, N(source), 1, 0, 0, NULL, NULL},
    END};
#undef N

static const char *const attention_kinds[] = {"fused", "unfused", NULL};
static const char *const moe_dispatchers[] = {"alltoall", "deepep", "hybridep", NULL};   /* cfit_moe_dispatcher */
/* In cfit_schedule order (schedule.c names them the same). */
static const char *const schedule_names[] = {"1f1b", "interleaved", "zb-h1", "zb-v", "dualpipe", "dualpipev", "zb-h2",
                                             "interleaved-zb", NULL};

/* In cfit_price_unit order. */
static const char *const price_units[] = {"usd_per_node", "usd_per_gpu_hour", "usd_per_kwh", "usd_per_port",
                                          "usd_per_kw_month", "fraction_per_year", "years", "kw_per_rack",
                                          "ratio", "usd_per_switch", "usd_per_transceiver", "usd_per_cable",
                                          "usd_per_nic", "usd_per_unit", NULL};

const char *cfit_price_unit_name(cfit_price_unit u)
{
    return u >= 0 && u < CFIT_UNIT_COUNT ? price_units[u] : "?";
}

int cfit_price_value_ok(const char *name, cfit_price_unit u, double value, char *why, size_t n)
{
    int ratio_floor = strcmp(name, "facility.pue") == 0 || strcmp(name, "power.node_over_gpu_tdp") == 0;
    if (strcmp(name, "owned.utilisation") == 0 && !(value > 0.0 && value <= 1.0)) {
        snprintf(why, n, "must be a busy fraction in (0, 1], got %g", value);
        return 0;
    }
    if (ratio_floor && !(value >= 1.0)) {
        snprintf(why, n, "must be at least 1 (a facility or node draws at least its IT or GPU power), got %g", value);
        return 0;
    }
    if (u == CFIT_UNIT_FRACTION_PER_YEAR && !(value >= 0.0 && value < 1.0)) {
        snprintf(why, n, "must be a fraction from 0 to below 1, got %g", value);
        return 0;
    }
    if (u != CFIT_UNIT_FRACTION_PER_YEAR && !(value > 0.0)) {
        snprintf(why, n, "must be greater than 0, got %g", value);
        return 0;
    }
    return 1;
}

#define PR(x) offsetof(cfit_price, x)
static const field price_fields[] = {
    {"name", F_STR, PR(name), 1, 0, 0, NULL, NULL},
    {"value", F_DBL, PR(value), 1, 0, 1e12, NULL, NULL},
    {"unit", F_ENUM, PR(unit), 1, 0, 0, price_units, NULL},
    {"date", F_STR, PR(date), 1, 0, 0, NULL, NULL},
    {"source", F_TEXT, PR(source), 1, 0, 0, NULL, NULL},
    END};
#undef PR

#define FW(x) offsetof(cfit_framework, x)
static const field framework_fields[] = {
    {"name", F_STR, FW(name), 1, 0, 0, NULL, NULL},
    {"display_name", F_STR, FW(display_name), 1, 0, 0, NULL, NULL},
    {"attention", F_ENUM, FW(unfused_attention), 1, 0, 0, attention_kinds, NULL},
    {"attention_efficiency_scale", F_DBL, FW(attention_efficiency_scale), 1, 0.01, 1, NULL, NULL},
    {"dp_overlap", F_BOOL, FW(dp_overlap), 1, 0, 0, NULL, NULL},
    {"flat_param_gather", F_BOOL, FW(flat_param_gather), 1, 0, 0, NULL, NULL},
    {"zero3_max_live_params", F_DBL, FW(zero3_max_live_params), 1, 0, 1e15, NULL, NULL},
    {"host_layer_s", F_DBL, FW(host_layer_s), 0, 0, 1, NULL, NULL},
    {"moe_host_layer_s", F_DBL, FW(moe_host_layer_s), 0, 0, 1, NULL, NULL},
    {"cuda_graphs", F_BOOL, FW(cuda_graphs), 0, 0, 0, NULL, NULL},
    {"moe_dispatcher", F_ENUM, FW(moe_dispatcher), 0, 0, 0, moe_dispatchers, NULL},
    {"moe_a2a_overlap", F_BOOL, FW(moe_a2a_overlap), 0, 0, 0, NULL, NULL},
    {"moe_imbalance", F_DBL, FW(moe_imbalance), 0, 1, 64, NULL, NULL},
    {"moe_comm_sm_share", F_DBL, FW(moe_comm_sm_share), 0, 0, 1, NULL, NULL},
    {"schedules", F_FLAGS, FW(schedules), 0, 0, 0, schedule_names, NULL},
    {"zero_with_pp", F_INT, FW(zero_with_pp), 0, 0, 3, NULL, NULL},
    {"whole_virtual_stages", F_BOOL, FW(whole_virtual_stages), 0, 0, 0, NULL, NULL},
    {"pipeline_layout", F_BOOL, FW(pipeline_layout), 0, 0, 0, NULL, NULL},
    {"offload_modules", F_BOOL, FW(offload_modules), 0, 0, 0, NULL, NULL},
    {"source", F_TEXT, FW(source), 1, 0, 0, NULL, NULL},
    END};
#undef FW

#define SW(x) offsetof(cfit_switch, x)
static const field switch_fields[] = {
    {"name", F_STR, SW(name), 1, 0, 0, NULL, NULL},
    {"fabric", F_STR, SW(fabric), 1, 0, 0, NULL, NULL},
    {"ports", F_INT, SW(ports), 1, 2, 4096, NULL, NULL},
    {"source", F_TEXT, SW(source), 1, 0, 0, NULL, NULL},
    END};
#undef SW

#define ST(x) offsetof(cfit_storage, x)
static const field storage_fields[] = {
    {"name", F_STR, ST(name), 1, 0, 0, NULL, NULL},
    {"per_node", F_BOOL, ST(per_node), 1, 0, 0, NULL, NULL},
    {"read_bytes_per_s", F_DBL, ST(read_bytes_per_s), 1, 1e6, 1e15, NULL, NULL},
    {"write_bytes_per_s", F_DBL, ST(write_bytes_per_s), 1, 1e6, 1e15, NULL, NULL},
    {"capacity_bytes", F_DBL, ST(capacity_bytes), 1, 1e9, 1e18, NULL, NULL},
    {"max_nodes", F_INT, ST(max_nodes), 0, 0, 1 << 24, NULL, NULL},
    {"source", F_TEXT, ST(source), 1, 0, 0, NULL, NULL},
    END};
#undef ST

/* In cfit_gpu_arch order, then "any" (CFIT_FAILURE_ANY_ARCH). */
static const char *const failure_archs[] = {"other", "volta", "turing", "ampere", "ada", "hopper",
                                            "blackwell", "cdna2", "cdna3", "cdna4", "any", NULL};
/* In cfit_failure_class and cfit_failure_per order. */
static const char *const failure_classes[] = {"gpu", "host", "network", "software", "planned", NULL};
static const char *const failure_pers[] = {"gpu", "node", "nic", NULL};

const char *cfit_failure_class_name(cfit_failure_class k)
{
    return k >= 0 && k < CFIT_FAIL_CLASS_COUNT ? failure_classes[k] : "?";
}

const char *cfit_failure_per_name(cfit_failure_per p)
{
    return p >= 0 && p < CFIT_PER_COUNT ? failure_pers[p] : "?";
}

const char *cfit_failure_arch_name(int arch)
{
    return arch >= 0 && arch <= CFIT_FAILURE_ANY_ARCH ? failure_archs[arch] : "?";
}

#define FL(x) offsetof(cfit_failure, x)
static const field failure_fields[] = {
    {"name", F_STR, FL(name), 1, 0, 0, NULL, NULL},
    {"arch", F_ENUM, FL(arch), 1, 0, 0, failure_archs, NULL},
    {"class", F_ENUM, FL(klass), 1, 0, 0, failure_classes, NULL},
    {"per", F_ENUM, FL(per), 1, 0, 0, failure_pers, NULL},
    {"per_hour", F_DBL, FL(per_hour), 1, 0, 1, NULL, NULL},
    {"interruptions", F_NOTE, 0, 0, 0, 0, NULL, NULL},
    {"source", F_TEXT, FL(source), 1, 0, 0, NULL, NULL},
    END};
#undef FL

#define FD(x) offsetof(cfit_fidelity, x)
static const field fidelity_fields[] = {
    {"name", F_STR, FD(name), 1, 0, 0, NULL, NULL},
    {"gpu", F_STR, FD(gpu), 1, 0, 0, NULL, NULL},
    {"gpus", F_INT, FD(gpus), 1, 1, 1 << 24, NULL, NULL},
    {"params", F_DBL, FD(params), 1, 1, 1e15, NULL, NULL},
    {"framework", F_STR, FD(framework), 1, 0, 0, NULL, NULL},
    {"error", F_DBL, FD(error), 1, -1, 100, NULL, NULL},
    {"moe", F_BOOL, FD(moe), 0, 0, 0, NULL, NULL},
    {"source", F_TEXT, FD(source), 1, 0, 0, NULL, NULL},
    END};
#undef FD

/* ---- the catalog: one growable array per kind ---- */

typedef struct kind {
    const char *key;          /* top-level key, "gpus" */
    const char *what;         /* "gpu" */
    const field *fields;
    size_t size;              /* entry struct size */
} kind;

enum { K_GPU, K_MODEL, K_FABRIC, K_NODE, K_FRAMEWORK, K_PRICE, K_SWITCH, K_STORAGE, K_FAILURE, K_FIDELITY, K_COUNT };

static const kind kinds[K_COUNT] = {
    {"gpus", "gpu", gpu_fields, sizeof(cfit_gpu)},
    {"models", "model", model_fields, sizeof(cfit_model)},
    {"fabrics", "fabric", fabric_fields, sizeof(cfit_fabric)},
    {"nodes", "node", node_fields, sizeof(cfit_node)},
    {"frameworks", "framework", framework_fields, sizeof(cfit_framework)},
    {"prices", "price", price_fields, sizeof(cfit_price)},
    {"switches", "switch", switch_fields, sizeof(cfit_switch)},
    {"storage", "storage", storage_fields, sizeof(cfit_storage)},
    {"failures", "failure", failure_fields, sizeof(cfit_failure)},
    {"fidelity", "fidelity", fidelity_fields, sizeof(cfit_fidelity)},
};

typedef struct table {
    char *v;                  /* entries, size kinds[i].size each */
    size_t n, cap;
    size_t *slot;             /* open-addressed name index: entry index + 1, 0 = empty */
    size_t nslot;             /* a power of two, at least twice n; 0 before the first entry */
} table;

struct cfit_catalog {
    table t[K_COUNT];
};

static void *entry_at(const table *t, int k, size_t i)
{
    return t->v + i * kinds[k].size;
}

static void table_free(table *t)
{
    free(t->v);
    free(t->slot);
}

/* FNV-1a of a name: the index makes loading linear (a 60,000-model file took 27 s
 * with the linear scan per entry it replaces). */
static size_t name_hash(const char *s)
{
    size_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The slot holding name, or the empty slot where it would go. */
static size_t *table_slot(const table *t, int k, const char *name)
{
    size_t mask = t->nslot - 1, i = name_hash(name) & mask;
    while (t->slot[i] && strcmp((const char *)entry_at(t, k, t->slot[i] - 1), name) != 0)
        i = (i + 1) & mask;
    return &t->slot[i];
}

static int table_find(const table *t, int k, const char *name)
{
    if (!t->nslot)
        return -1;
    size_t at = *table_slot(t, k, name);   /* name is the first member */
    return at ? (int)(at - 1) : -1;
}

static int table_reindex(table *t, int k, size_t nslot)
{
    size_t *slot = calloc(nslot, sizeof *slot);
    if (!slot)
        return CFIT_ENOMEM;
    free(t->slot);
    t->slot = slot;
    t->nslot = nslot;
    for (size_t i = 0; i < t->n; i++)
        *table_slot(t, k, entry_at(t, k, i)) = i + 1;
    return CFIT_EOK;
}

static int table_put(table *t, int k, const void *e)
{
    int i = table_find(t, k, (const char *)e);
    if (i >= 0) {
        memcpy(entry_at(t, k, (size_t)i), e, kinds[k].size);
        return CFIT_EOK;
    }
    if (cfit__grow(&t->v, &t->cap, t->n + 1, kinds[k].size))
        return CFIT_ENOMEM;
    if (2 * (t->n + 1) > t->nslot && table_reindex(t, k, t->nslot ? 2 * t->nslot : 64))
        return CFIT_ENOMEM;
    memcpy(entry_at(t, k, t->n), e, kinds[k].size);
    *table_slot(t, k, (const char *)e) = ++t->n;
    return CFIT_EOK;
}

/* ---- loading one entry from its field table ---- */

static int key_names(const field *fs, const char **out, size_t max)
{
    size_t n = 0;
    for (; fs->key && n < max; fs++)
        out[n++] = fs->key;
    return (int)n;
}

static int load_fields(const cfit_json *obj, const field *fs, char *base, const char *what,
                       const char *file, cfit_diag *d);

static int load_layers(const cfit_json *v, const field *f, cfit_layer_list *out, const char *what,
                       const char *file, cfit_diag *d)
{
    if (v->n > CFIT_MODEL_MAX_DENSE_LIST)
        return cfit_diag_set(d, CFIT_ERANGE, file, v->line, v->col, "%s key '%s' lists %zu layers; at most %d",
                             what, f->key, v->n, CFIT_MODEL_MAX_DENSE_LIST);
    out->n = 0;
    for (size_t i = 0; i < v->n; i++) {
        const cfit_json *e = v->items[i];
        if (e->type != CFIT_JSON_NUMBER || e->number < f->min || e->number > f->max ||
            e->number != (double)(int)e->number)
            return cfit_diag_set(d, CFIT_EPARSE, file, e->line, e->col,
                                 "%s key '%s' must list whole layer numbers from %g to %g", what, f->key,
                                 f->min, f->max);
        out->layer[out->n++] = (int)e->number;
    }
    return CFIT_EOK;
}

/* An array of names from f->enums into a bit mask (bit i = enums[i]); each name once. */
static int load_flags(const cfit_json *v, const field *f, unsigned *out, const char *what, const char *file,
                      cfit_diag *d)
{
    *out = 0;
    for (size_t i = 0; i < v->n; i++) {
        const cfit_json *e = v->items[i];
        int k = -1;
        for (int j = 0; e->type == CFIT_JSON_STRING && f->enums[j]; j++)
            if (strcmp(f->enums[j], e->string) == 0)
                k = j;
        if (k < 0 || (*out & (1u << k))) {
            char list[256] = "";
            for (int j = 0; f->enums[j]; j++) {
                size_t used = strlen(list);
                snprintf(list + used, sizeof list - used, "%s%s", j ? ", " : "", f->enums[j]);
            }
            return cfit_diag_set(d, CFIT_EPARSE, file, e->line, e->col, "%s key '%s' must list each of %s at most once",
                                 what, f->key, list);
        }
        *out |= 1u << k;
    }
    return CFIT_EOK;
}

static int load_aliases(const cfit_json *v, const field *f, cfit_alias_list *out, const char *what,
                        const char *file, cfit_diag *d)
{
    if (v->n > CFIT_MAX_ALIASES)
        return cfit_diag_set(d, CFIT_ERANGE, file, v->line, v->col, "%s key '%s' lists %zu names; at most %d",
                             what, f->key, v->n, CFIT_MAX_ALIASES);
    out->n = 0;
    for (size_t i = 0; i < v->n; i++) {
        const cfit_json *e = v->items[i];
        if (e->type != CFIT_JSON_STRING || !e->string[0] || strlen(e->string) >= CFIT_NAME_MAX)
            return cfit_diag_set(d, CFIT_EPARSE, file, e->line, e->col,
                                 "%s key '%s' must list names of 1 to %d characters", what, f->key, CFIT_NAME_MAX - 1);
        snprintf(out->name[out->n++], CFIT_NAME_MAX, "%s", e->string);
    }
    return CFIT_EOK;
}

static int load_value(const cfit_json *v, const field *f, char *base, const char *what,
                      const char *file, cfit_diag *d)
{
    static const char *const want[] = {"a string", "a string", "a string", "a whole number",
                                       "a number", "true or false", "a string", "an object",
                                       "an array of layer numbers", "an array of names", "an array of names"};
    int ok;
    switch (f->type) {
    case F_STR: case F_TEXT: case F_NOTE: case F_ENUM: ok = v->type == CFIT_JSON_STRING; break;
    case F_INT: case F_DBL: ok = v->type == CFIT_JSON_NUMBER; break;
    case F_BOOL: ok = v->type == CFIT_JSON_BOOL; break;
    case F_LAYERS: case F_FLAGS: case F_ALIASES: ok = v->type == CFIT_JSON_ARRAY; break;
    default: ok = v->type == CFIT_JSON_OBJECT; break;
    }
    if (!ok)
        return cfit_diag_set(d, CFIT_EPARSE, file, v->line, v->col, "%s key '%s' must be %s, got %s",
                             what, f->key, want[f->type], cfit_json_type_name(v->type));
    switch (f->type) {
    case F_STR: {
        size_t len = strlen(v->string);
        if (len == 0 || len >= CFIT_NAME_MAX)
            return cfit_diag_set(d, CFIT_ERANGE, file, v->line, v->col,
                                 "%s key '%s' must be 1 to %d characters", what, f->key, CFIT_NAME_MAX - 1);
        memcpy(base + f->off, v->string, len + 1);
        return CFIT_EOK;
    }
    case F_TEXT:
    case F_NOTE:
        if (v->string[0] == '\0')
            return cfit_diag_set(d, CFIT_ERANGE, file, v->line, v->col, "%s key '%s' must not be empty",
                                 what, f->key);
        if (f->type == F_TEXT && strlen(v->string) >= CFIT_TEXT_MAX)
            return cfit_diag_set(d, CFIT_ERANGE, file, v->line, v->col, "%s key '%s' is %zu bytes long; at most %d",
                                 what, f->key, strlen(v->string), CFIT_TEXT_MAX - 1);
        if (f->type == F_TEXT)
            snprintf(base + f->off, CFIT_TEXT_MAX, "%s", v->string);
        return CFIT_EOK;
    case F_ENUM: {
        char list[256] = "";
        for (int i = 0; f->enums[i]; i++) {
            if (strcmp(f->enums[i], v->string) == 0) {
                *(int *)(void *)(base + f->off) = i;
                return CFIT_EOK;
            }
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s%s", i == 0 ? "" : f->enums[i + 1] ? ", " : " or ",
                     f->enums[i]);
        }
        return cfit_diag_set(d, CFIT_EPARSE, file, v->line, v->col, "%s key '%s' must be one of %s, got '%s'",
                             what, f->key, list, v->string);
    }
    case F_INT:
    case F_DBL:
        if (v->number < f->min || v->number > f->max)
            return cfit_diag_set(d, CFIT_ERANGE, file, v->line, v->col,
                                 "%s key '%s' must be between %g and %g, got %g", what, f->key,
                                 f->min, f->max, v->number);
        if (f->type == F_INT) {
            if (v->number != (double)(int)v->number)
                return cfit_diag_set(d, CFIT_EPARSE, file, v->line, v->col,
                                     "%s key '%s' must be a whole number, got %g", what, f->key, v->number);
            *(int *)(void *)(base + f->off) = (int)v->number;
        } else {
            *(double *)(void *)(base + f->off) = v->number;
        }
        return CFIT_EOK;
    case F_BOOL:
        *(int *)(void *)(base + f->off) = v->boolean;
        return CFIT_EOK;
    case F_OBJ:
        return load_fields(v, f->sub, base, what, file, d);
    case F_LAYERS:
        return load_layers(v, f, (cfit_layer_list *)(void *)(base + f->off), what, file, d);
    case F_FLAGS:
        return load_flags(v, f, (unsigned *)(void *)(base + f->off), what, file, d);
    case F_ALIASES:
        return load_aliases(v, f, (cfit_alias_list *)(void *)(base + f->off), what, file, d);
    }
    return CFIT_EOK;
}

static int load_fields(const cfit_json *obj, const field *fs, char *base, const char *what,
                       const char *file, cfit_diag *d)
{
    for (size_t i = 0; i < obj->n; i++) {
        const cfit_json_member *mb = &obj->members[i];
        const field *f = fs;
        while (f->key && strcmp(f->key, mb->key) != 0)
            f++;
        if (!f->key) {
            const char *names[32];
            int n = key_names(fs, names, 32);
            const char *near = cfit_closest(mb->key, names, (size_t)n);
            return cfit_diag_set(d, CFIT_EPARSE, file, mb->line, mb->col, "unknown %s key '%s'%s%s%s",
                                 what, mb->key, near ? " (did you mean '" : "", near ? near : "",
                                 near ? "'?)" : "");
        }
        int rc = load_value(mb->value, f, base, what, file, d);
        if (rc)
            return rc;
    }
    for (const field *f = fs; f->key; f++)
        if (f->required && !cfit_json_member_get(obj, f->key))
            return cfit_diag_set(d, CFIT_EPARSE, file, obj->line, obj->col, "%s entry%s%s%s is missing required key '%s'",
                                 what, base[0] ? " '" : "", base[0] ? base : "", base[0] ? "'" : "", f->key);
    return CFIT_EOK;
}

/* ---- files ---- */

typedef struct pos { int line, col; } pos;

/* Entries parsed from one file, with where each entry object stands in it. */
typedef struct staged {
    table t[K_COUNT];
    pos *at[K_COUNT];          /* at[k][i]: position of t[k] entry i */
    size_t at_cap[K_COUNT];    /* room in at[k] */
} staged;

static void staged_free(staged *s)
{
    for (int k = 0; k < K_COUNT; k++) {
        table_free(&s->t[k]);
        free(s->at[k]);
    }
}

/* "YYYY-MM" with a month 01..12. */
static int date_ok(const char *s)
{
    for (int i = 0; i < 7; i++)
        if (i == 4 ? s[i] != '-' : (s[i] < '0' || s[i] > '9'))
            return 0;
    int month = (s[5] - '0') * 10 + (s[6] - '0');
    return s[7] == '\0' && month >= 1 && month <= 12;
}

/* A framework entry without "schedules" runs 1F1B and interleaved 1F1B; without "zero_with_pp"
 * it combines at most ZeRO-1 with pipelines (the rule every framework had before the keys). */
static void framework_defaults(const cfit_json *obj, cfit_framework *fw)
{
    if (!cfit_json_member_get(obj, "schedules"))
        fw->schedules = CFIT_SCHED_DEFAULT_MASK;
    if (!cfit_json_member_get(obj, "zero_with_pp"))
        fw->zero_with_pp = 1;
}

/* A price entry's date and value (load_fields has checked its keys). */
static int price_entry_check(const cfit_price *p, const char *file, const cfit_json *v, cfit_diag *d)
{
    char why[160];
    const cfit_json_member *vm = cfit_json_member_get(v, "value");
    const cfit_json *val = vm ? vm->value : NULL;
    if (!date_ok(p->date))
        return cfit_diag_set(d, CFIT_EPARSE, file, v->line, v->col, "price entry '%s': date must be YYYY-MM, got '%s'",
                             p->name, p->date);
    if (!cfit_price_value_ok(p->name, p->unit, p->value, why, sizeof why))
        return cfit_diag_set(d, CFIT_ERANGE, file, val ? val->line : v->line, val ? val->col : v->col,
                             "price entry '%s': value %s", p->name, why);
    return CFIT_EOK;
}

static int load_kind_array(const cfit_json *arr, int k, staged *st, const char *file, cfit_diag *d)
{
    if (arr->type != CFIT_JSON_ARRAY)
        return cfit_diag_set(d, CFIT_EPARSE, file, arr->line, arr->col, "'%s' must be an array, got %s",
                             kinds[k].key, cfit_json_type_name(arr->type));
    char *e = malloc(kinds[k].size);
    if (!e)
        return cfit_diag_set(d, CFIT_ENOMEM, file, 0, 0, "out of memory");
    int rc = CFIT_EOK;
    for (size_t i = 0; i < arr->n && !rc; i++) {
        const cfit_json *v = arr->items[i];
        memset(e, 0, kinds[k].size);
        if (v->type != CFIT_JSON_OBJECT) {
            rc = cfit_diag_set(d, CFIT_EPARSE, file, v->line, v->col, "%s entry must be an object, got %s",
                               kinds[k].what, cfit_json_type_name(v->type));
            break;
        }
        rc = load_fields(v, kinds[k].fields, e, kinds[k].what, file, d);
        if (!rc && table_find(&st->t[k], k, e) >= 0)
            rc = cfit_diag_set(d, CFIT_EPARSE, file, v->line, v->col, "duplicate %s entry '%s'",
                               kinds[k].what, e);
        if (!rc && k == K_GPU) {
            const cfit_gpu *g = (const cfit_gpu *)(const void *)e;
            if (g->peak_flops[CFIT_PREC_FP8] > 0 && g->cal.gemm_efficiency[CFIT_PREC_FP8] <= 0)
                rc = cfit_diag_set(d, CFIT_EPARSE, file, v->line, v->col,
                                   "gpu entry '%s' has an fp8 rate but no calibration.gemm_efficiency.fp8",
                                   g->name);
        }
        if (!rc && k == K_PRICE)
            rc = price_entry_check((const cfit_price *)(const void *)e, file, v, d);
        if (!rc && k == K_FRAMEWORK)
            framework_defaults(v, (cfit_framework *)(void *)e);
        if (!rc && k == K_MODEL && !((const cfit_model *)(const void *)e)->source[0])
            rc = cfit_diag_set(d, CFIT_EPARSE, file, v->line, v->col, "model entry '%s' is missing required key 'source'", e);
        if (!rc && k == K_MODEL)
            rc = cfit_model_validate((cfit_model *)(void *)e, d) ? cfit_diag_set(d, CFIT_EINVALID, file,
                     v->line, v->col, "%s", d ? d->msg : "invalid model") : CFIT_EOK;
        if (!rc) {   /* new names append, so the position lands at the entry's index */
            size_t n = st->t[k].n;
            int grown = cfit__grow(&st->at[k], &st->at_cap[k], n + 1, sizeof *st->at[k]) == CFIT_EOK;
            if (grown)
                st->at[k][n] = (pos){v->line, v->col};
            if (!grown || table_put(&st->t[k], k, e))
                rc = cfit_diag_set(d, CFIT_ENOMEM, file, 0, 0, "out of memory");
        }
    }
    free(e);
    return rc;
}

static int parse_staged(const char *text, size_t len, const char *file, staged *st, cfit_diag *d)
{
    int rc;
    cfit_json *root = cfit_json_parse(text, len, file, &rc, d);
    if (!root)
        return rc ? rc : CFIT_EPARSE;
    if (root->type != CFIT_JSON_OBJECT) {
        rc = cfit_diag_set(d, CFIT_EPARSE, file, root->line, root->col,
                           "a catalog file must be an object with keys gpus, models, fabrics, nodes, frameworks, prices, switches, storage, failures, fidelity");
        goto out;
    }
    for (size_t i = 0; i < root->n && !rc; i++) {
        const cfit_json_member *mb = &root->members[i];
        int k = 0;
        while (k < K_COUNT && strcmp(kinds[k].key, mb->key) != 0)
            k++;
        if (k == K_COUNT) {
            const char *names[K_COUNT];
            for (int j = 0; j < K_COUNT; j++)
                names[j] = kinds[j].key;
            const char *near = cfit_closest(mb->key, names, K_COUNT);
            rc = cfit_diag_set(d, CFIT_EPARSE, file, mb->line, mb->col,
                               "unknown catalog key '%s'%s%s%s (expected gpus, models, fabrics, nodes, frameworks, prices, switches, storage, failures or fidelity)",
                               mb->key, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
            break;
        }
        rc = load_kind_array(mb->value, k, st, file, d);
    }
out:
    cfit_json_free(root);
    return rc;
}

static int merge(cfit_catalog *c, staged *st)
{
    for (int k = 0; k < K_COUNT; k++)
        for (size_t i = 0; i < st->t[k].n; i++)
            if (table_put(&c->t[k], k, entry_at(&st->t[k], k, i)))
                return CFIT_ENOMEM;
    return CFIT_EOK;
}

/* Where the entry named name of kind k stands in the file being loaded, if it is there. */
static pos where(const staged *st, int k, const char *name)
{
    int i = st ? table_find(&st->t[k], k, name) : -1;
    return i >= 0 ? st->at[k][i] : (pos){0, 0};
}

/* References between entries must resolve, to the right kind of fabric, in the merged
 * catalog; a broken one in the file being loaded is reported at its entry. */
/* No GPU name or alias may be another GPU's as people type it (names.h): a lookup must resolve. */
static int check_aliases(const cfit_catalog *c, const staged *st, const char *file, cfit_diag *d)
{
    const table *t = &c->t[K_GPU];
    for (size_t i = 0; i < t->n; i++) {
        const cfit_gpu *g = cfit_catalog_gpu_at(c, i);
        for (int j = -1; j < g->aliases.n; j++) {
            const char *a = j < 0 ? g->name : g->aliases.name[j];
            for (size_t k = 0; k < t->n; k++) {
                const cfit_gpu *h = cfit_catalog_gpu_at(c, k);
                int clash = k != i && cfit__name_same(a, h->name);
                for (int m = 0; !clash && k != i && m < h->aliases.n; m++)
                    clash = cfit__name_same(a, h->aliases.name[m]);
                pos p = where(st, K_GPU, g->name);
                if (clash)
                    return cfit_diag_set(d, CFIT_EINVALID, file, p.line, p.col,
                                         "gpu '%s': name or alias '%s' is also gpu '%s' (ignoring case and separators)",
                                         g->name, a, h->name);
            }
        }
    }
    return CFIT_EOK;
}

/* A fidelity entry's run is compared within its GPU's family: the GPU and framework must exist. */
static int check_fidelity_refs(const cfit_catalog *c, const staged *st, const char *file, cfit_diag *d)
{
    for (size_t i = 0; i < c->t[K_FIDELITY].n; i++) {
        const cfit_fidelity *f = cfit_catalog_fidelity_at(c, i);
        pos p = where(st, K_FIDELITY, f->name);
        if (table_find(&c->t[K_GPU], K_GPU, f->gpu) < 0)
            return cfit_diag_set(d, CFIT_EUNKNOWN, file, p.line, p.col,
                                 "fidelity '%s': gpu '%s' is not a gpu entry", f->name, f->gpu);
        if (table_find(&c->t[K_FRAMEWORK], K_FRAMEWORK, f->framework) < 0)
            return cfit_diag_set(d, CFIT_EUNKNOWN, file, p.line, p.col,
                                 "fidelity '%s': framework '%s' is not a framework entry", f->name, f->framework);
    }
    return CFIT_EOK;
}

static int check_refs(const cfit_catalog *c, const staged *st, const char *file, cfit_diag *d)
{
    int rc = check_aliases(c, st, file, d);
    if (!rc)
        rc = check_fidelity_refs(c, st, file, d);
    if (rc)
        return rc;
    for (size_t i = 0; i < c->t[K_GPU].n; i++) {
        const cfit_gpu *g = cfit_catalog_gpu_at(c, i);
        pos p = where(st, K_GPU, g->name);
        if (table_find(&c->t[K_NODE], K_NODE, g->default_node) < 0)
            return cfit_diag_set(d, CFIT_EUNKNOWN, file, p.line, p.col,
                                 "gpu '%s': default_node '%s' is not a node entry", g->name, g->default_node);
        int f = table_find(&c->t[K_FABRIC], K_FABRIC, g->scaleup_fabric);
        if (f < 0)
            return cfit_diag_set(d, CFIT_EUNKNOWN, file, p.line, p.col,
                                 "gpu '%s': scaleup fabric '%s' is not a fabric entry", g->name, g->scaleup_fabric);
        if (cfit_catalog_fabric_at(c, (size_t)f)->kind != CFIT_FABRIC_SCALEUP)
            return cfit_diag_set(d, CFIT_EINVALID, file, p.line, p.col,
                                 "gpu '%s': scaleup fabric '%s' is a scale-out fabric", g->name, g->scaleup_fabric);
    }
    for (size_t i = 0; i < c->t[K_NODE].n; i++) {
        const cfit_node *n = cfit_catalog_node_at(c, i);
        pos p = where(st, K_NODE, n->name);
        int f = table_find(&c->t[K_FABRIC], K_FABRIC, n->fabric);
        if (f < 0)
            return cfit_diag_set(d, CFIT_EUNKNOWN, file, p.line, p.col,
                                 "node '%s': fabric '%s' is not a fabric entry", n->name, n->fabric);
        if (cfit_catalog_fabric_at(c, (size_t)f)->kind != CFIT_FABRIC_SCALEOUT)
            return cfit_diag_set(d, CFIT_EINVALID, file, p.line, p.col,
                                 "node '%s': fabric '%s' is a scale-up link, not a scale-out fabric",
                                 n->name, n->fabric);
        if (n->gpu[0] && table_find(&c->t[K_GPU], K_GPU, n->gpu) < 0)
            return cfit_diag_set(d, CFIT_EUNKNOWN, file, p.line, p.col,
                                 "node '%s': gpu '%s' is not a gpu entry", n->name, n->gpu);
    }
    for (size_t i = 0; i < c->t[K_SWITCH].n; i++) {
        const cfit_switch *sw = cfit_catalog_switch_at(c, i);
        pos p = where(st, K_SWITCH, sw->name);
        int f = table_find(&c->t[K_FABRIC], K_FABRIC, sw->fabric);
        if (f < 0 || cfit_catalog_fabric_at(c, (size_t)f)->kind != CFIT_FABRIC_SCALEOUT)
            return cfit_diag_set(d, f < 0 ? CFIT_EUNKNOWN : CFIT_EINVALID, file, p.line, p.col,
                                 "switch '%s': fabric '%s' is not a scale-out fabric entry", sw->name, sw->fabric);
    }
    return CFIT_EOK;
}

static int catalog_copy(cfit_catalog *dst, const cfit_catalog *src)
{
    memset(dst, 0, sizeof *dst);
    for (int k = 0; k < K_COUNT; k++)
        for (size_t i = 0; i < src->t[k].n; i++)
            if (table_put(&dst->t[k], k, entry_at(&src->t[k], k, i)))
                return CFIT_ENOMEM;
    return CFIT_EOK;
}

int cfit_catalog_load_buffer(cfit_catalog *c, const char *text, size_t len, const char *name,
                             cfit_diag *d)
{
    staged st;
    memset(&st, 0, sizeof st);
    int rc = parse_staged(text, len, name, &st, d);
    if (!rc) {
        /* merge into a copy first so that a dangling reference leaves c unchanged */
        cfit_catalog trial;
        rc = catalog_copy(&trial, c);
        if (!rc)
            rc = merge(&trial, &st);
        if (!rc)
            rc = check_refs(&trial, &st, name, d);
        if (!rc) {
            for (int k = 0; k < K_COUNT; k++) {
                table_free(&c->t[k]);
                c->t[k] = trial.t[k];
            }
        } else {
            for (int k = 0; k < K_COUNT; k++)
                table_free(&trial.t[k]);
            if (rc == CFIT_ENOMEM)
                cfit_diag_set(d, rc, name, 0, 0, "out of memory");
        }
    }
    staged_free(&st);
    return rc;
}


int cfit_catalog_load_file(cfit_catalog *c, const char *path, cfit_diag *d)
{
    char *text;
    size_t len;
    int rc = cfit__read_input(path, (size_t)64 << 20, &text, &len, d);
    if (rc)
        return rc;
    rc = cfit_catalog_load_buffer(c, text, len, cfit_input_name(path), d);
    free(text);
    return rc;
}

int cfit_model_load_buffer(const char *text, size_t len, const char *name, cfit_model *out, cfit_diag *d)
{
    int rc;
    cfit_json *root = cfit_json_parse(text, len, name, &rc, d);
    if (!root)
        return rc ? rc : CFIT_EPARSE;
    memset(out, 0, sizeof *out);
    if (root->type != CFIT_JSON_OBJECT)
        rc = cfit_diag_set(d, CFIT_EPARSE, name, root->line, root->col,
                           "a model file must be one object like an entry of \"models\"");
    else if (cfit__hf_is_config(root)) {
        rc = cfit__hf_model_from_json(root, name, out, d);
        cfit_json_free(root);
        return rc;
    } else
        rc = load_fields(root, model_fields, (char *)out, "model", name, d);
    if (!rc && !out->source[0])   /* a user's own file: its path is its source */
        snprintf(out->source, sizeof out->source, "%s (model file; no source given)", name);
    if (!rc && cfit_model_validate(out, d))
        rc = cfit_diag_set(d, CFIT_EINVALID, name, root->line, root->col, "%s", d ? d->msg : "invalid model");
    cfit_json_free(root);
    return rc;
}

int cfit_model_load_file(const char *path, cfit_model *out, cfit_diag *d)
{
    char *text;
    size_t len;
    int rc = cfit__read_input(path, (size_t)64 << 20, &text, &len, d);
    if (rc)
        return rc;
    rc = cfit_model_load_buffer(text, len, cfit_input_name(path), out, d);
    free(text);
    return rc;
}

cfit_catalog *cfit_catalog_new(cfit_diag *d)
{
    cfit_catalog *c = calloc(1, sizeof *c);
    if (!c) {
        cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
        return NULL;
    }
    for (const cfit__embedded_file *f = cfit__embedded_files; f->name; f++) {
        staged st;
        memset(&st, 0, sizeof st);
        char name[128];
        snprintf(name, sizeof name, "data/%s", f->name);
        int rc = parse_staged(f->data, f->len, name, &st, d);
        if (!rc)
            rc = merge(c, &st);
        staged_free(&st);
        if (rc) {
            cfit_catalog_free(c);
            return NULL;
        }
    }
    if (check_refs(c, NULL, "data", d)) {
        cfit_catalog_free(c);
        return NULL;
    }
    return c;
}

void cfit_catalog_free(cfit_catalog *c)
{
    if (!c)
        return;
    for (int k = 0; k < K_COUNT; k++)
        table_free(&c->t[k]);
    free(c);
}

/* ---- accessors ---- */

size_t cfit_catalog_gpu_count(const cfit_catalog *c) { return c->t[K_GPU].n; }
size_t cfit_catalog_model_count(const cfit_catalog *c) { return c->t[K_MODEL].n; }
size_t cfit_catalog_fabric_count(const cfit_catalog *c) { return c->t[K_FABRIC].n; }
size_t cfit_catalog_node_count(const cfit_catalog *c) { return c->t[K_NODE].n; }
size_t cfit_catalog_framework_count(const cfit_catalog *c) { return c->t[K_FRAMEWORK].n; }
size_t cfit_catalog_price_count(const cfit_catalog *c) { return c->t[K_PRICE].n; }
size_t cfit_catalog_switch_count(const cfit_catalog *c) { return c->t[K_SWITCH].n; }
size_t cfit_catalog_storage_count(const cfit_catalog *c) { return c->t[K_STORAGE].n; }
size_t cfit_catalog_failure_count(const cfit_catalog *c) { return c->t[K_FAILURE].n; }

const cfit_switch *cfit_catalog_switch_at(const cfit_catalog *c, size_t i)
{
    return i < c->t[K_SWITCH].n ? entry_at(&c->t[K_SWITCH], K_SWITCH, i) : NULL;
}
const cfit_storage *cfit_catalog_storage_at(const cfit_catalog *c, size_t i)
{
    return i < c->t[K_STORAGE].n ? entry_at(&c->t[K_STORAGE], K_STORAGE, i) : NULL;
}

const cfit_failure *cfit_catalog_failure_at(const cfit_catalog *c, size_t i)
{
    return i < c->t[K_FAILURE].n ? entry_at(&c->t[K_FAILURE], K_FAILURE, i) : NULL;
}

size_t cfit_catalog_fidelity_count(const cfit_catalog *c) { return c->t[K_FIDELITY].n; }
const cfit_fidelity *cfit_catalog_fidelity_at(const cfit_catalog *c, size_t i)
{
    return i < c->t[K_FIDELITY].n ? entry_at(&c->t[K_FIDELITY], K_FIDELITY, i) : NULL;
}

const cfit_price *cfit_catalog_price_at(const cfit_catalog *c, size_t i)
{
    return i < c->t[K_PRICE].n ? entry_at(&c->t[K_PRICE], K_PRICE, i) : NULL;
}

int cfit_catalog_price_put(cfit_catalog *c, const cfit_price *p)
{
    return table_put(&c->t[K_PRICE], K_PRICE, p);
}

const cfit_framework *cfit_catalog_framework_at(const cfit_catalog *c, size_t i)
{
    return i < c->t[K_FRAMEWORK].n ? entry_at(&c->t[K_FRAMEWORK], K_FRAMEWORK, i) : NULL;
}

const cfit_gpu *cfit_catalog_gpu_at(const cfit_catalog *c, size_t i)
{
    return i < c->t[K_GPU].n ? entry_at(&c->t[K_GPU], K_GPU, i) : NULL;
}
const cfit_model *cfit_catalog_model_at(const cfit_catalog *c, size_t i)
{
    return i < c->t[K_MODEL].n ? entry_at(&c->t[K_MODEL], K_MODEL, i) : NULL;
}
const cfit_fabric *cfit_catalog_fabric_at(const cfit_catalog *c, size_t i)
{
    return i < c->t[K_FABRIC].n ? entry_at(&c->t[K_FABRIC], K_FABRIC, i) : NULL;
}
const cfit_node *cfit_catalog_node_at(const cfit_catalog *c, size_t i)
{
    return i < c->t[K_NODE].n ? entry_at(&c->t[K_NODE], K_NODE, i) : NULL;
}

/* The entry whose name or (GPUs) alias is name ignoring case and separators (names.h); -1 none. */
static int find_typed(const table *t, int k, const char *name)
{
    for (size_t i = 0; i < t->n; i++) {
        if (cfit__name_same((const char *)entry_at(t, k, i), name))
            return (int)i;
        const cfit_alias_list *a = k == K_GPU ? &((const cfit_gpu *)entry_at(t, k, i))->aliases : NULL;
        for (int j = 0; a && j < a->n; j++)
            if (cfit__name_same(a->name[j], name))
                return (int)i;
    }
    return -1;
}

/* Lookup by name, then as people type it (case, separators, aliases), with a did-you-mean
 * listing of the closest name. */
static const void *lookup(const cfit_catalog *c, int k, const char *name, cfit_diag *d)
{
    const table *t = &c->t[k];
    int i = table_find(t, k, name);
    if (i < 0 && k != K_PRICE)
        i = find_typed(t, k, name);
    if (i >= 0)
        return entry_at(t, k, (size_t)i);
    if (d) {
        const char **names = malloc((t->n ? t->n : 1) * sizeof *names);
        const char *near = NULL;
        if (names) {
            for (size_t j = 0; j < t->n; j++)
                names[j] = entry_at(t, k, j);
            near = cfit__name_suggest(name, names, t->n);
        }
        cfit_diag_set(d, CFIT_EUNKNOWN, NULL, 0, 0, "unknown %s '%s'%s%s%s (see 'clusterfit catalog list %s')",
                      kinds[k].what, name, near ? " (did you mean '" : "", near ? near : "",
                      near ? "'?)" : "", kinds[k].key);
        free(names);
    }
    return NULL;
}

const cfit_gpu *cfit_catalog_gpu(const cfit_catalog *c, const char *name, cfit_diag *d)
{
    return lookup(c, K_GPU, name, d);
}
const cfit_model *cfit_catalog_model(const cfit_catalog *c, const char *name, cfit_diag *d)
{
    return lookup(c, K_MODEL, name, d);
}
const cfit_fabric *cfit_catalog_fabric(const cfit_catalog *c, const char *name, cfit_diag *d)
{
    return lookup(c, K_FABRIC, name, d);
}
const cfit_node *cfit_catalog_node(const cfit_catalog *c, const char *name, cfit_diag *d)
{
    return lookup(c, K_NODE, name, d);
}
const cfit_framework *cfit_catalog_framework(const cfit_catalog *c, const char *name, cfit_diag *d)
{
    return lookup(c, K_FRAMEWORK, name, d);
}
const cfit_price *cfit_catalog_price(const cfit_catalog *c, const char *name, cfit_diag *d)
{
    return lookup(c, K_PRICE, name, d);
}
const cfit_switch *cfit_catalog_switch(const cfit_catalog *c, const char *name, cfit_diag *d)
{
    return lookup(c, K_SWITCH, name, d);
}
const cfit_switch *cfit_catalog_switch_for(const cfit_catalog *c, const char *fabric)
{
    for (size_t i = 0; i < c->t[K_SWITCH].n; i++) {
        const cfit_switch *sw = cfit_catalog_switch_at(c, i);
        if (strcmp(sw->fabric, fabric) == 0)
            return sw;
    }
    return NULL;
}
