/* test_offload.c - host-memory offload and LoRA / QLoRA fine-tuning terms (offload.h,
 * docs/model.md §10). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "clusterfit/offload.h"
#include "clusterfit/plan.h"
#include "clusterfit/workload.h"

#include "catalog_fixture.h"


/* PCIe: GT/s x lanes / 8 x 128/130 x 256/280; Gen5 x16 about 57.6 GB/s; unknown generations 0. */
static void test_pcie(void **state)
{
    (void)state;
    assert_rel_near(cfit_pcie_bw_bytes_per_s(5, 16), 32e9 * 16 / 8 * 128 / 130 * 256 / 280, 1e-12);
    assert_rel_near(cfit_pcie_bw_bytes_per_s(4, 16), cfit_pcie_bw_bytes_per_s(5, 16) / 2, 1e-12);
    assert_rel_near(cfit_pcie_bw_bytes_per_s(3, 16) / 1e9, 14.4, 0.01);
    assert_true(cfit_pcie_bw_bytes_per_s(2, 16) == 0 && cfit_pcie_bw_bytes_per_s(6, 16) == 0);
    assert_true(cfit_pcie_bw_bytes_per_s(5, 0) == 0);
}

/* A host link that is not PCIe (Grace's NVLink-C2C, host_link_bytes_per_s) replaces the PCIe
 * figures; a node with host memory but no link of either kind cannot offload. */
static void test_host_link(void **state)
{
    (void)state;
    cfit_node n;
    char buf[64];
    memset(&n, 0, sizeof n);
    n.host_memory_bytes = 1e12, n.host_memory_bw_bytes_per_s = 5e11;
    assert_false(cfit_node_has_host(&n));
    assert_true(cfit_node_host_link_bw(&n) == 0);
    n.pcie_gen = 5, n.pcie_lanes = 16;
    assert_true(cfit_node_has_host(&n));
    assert_rel_near(cfit_node_host_link_bw(&n), cfit_pcie_bw_bytes_per_s(5, 16), 1e-12);
    assert_string_equal(cfit_node_host_link_str(&n, buf, sizeof buf), "PCIe Gen5 x16 57.6 GB/s");
    n.host_link_bytes_per_s = 225e9;   /* set, it wins over the PCIe figures */
    assert_rel_near(cfit_node_host_link_bw(&n), 225e9, 1e-12);
    assert_string_equal(cfit_node_host_link_str(&n, buf, sizeof buf), "host link 225.0 GB/s");
    n.pcie_gen = 0, n.pcie_lanes = 0;
    assert_true(cfit_node_has_host(&n));
    assert_true(cfit_node_host_link_bw(NULL) == 0 && !cfit_node_has_host(NULL));
}

/* CPU-Adam: ZeRO-Offload's 10 B parameters in 2.57 s on the DGX-2's 256 GB/s; twice the bandwidth halves it. */
static void test_cpu_adam(void **state)
{
    (void)state;
    assert_rel_near(cfit_cpu_adam_s(10e9, 2 * 6 * 21.333e9), 2.57, 1e-9);
    assert_rel_near(cfit_cpu_adam_s(10e9, 4 * 6 * 21.333e9), 2.57 / 2, 1e-9);
    assert_true(cfit_cpu_adam_s(0, 1e11) == 0 && cfit_cpu_adam_s(1e9, 0) == 0);
}

static void test_parse(void **state)
{
    (void)state;
    cfit_diag d;
    int m = -1;
    char buf[64];
    assert_int_equal(cfit_offload_parse("none", &m, &d), CFIT_EOK);
    assert_int_equal(m, 0);
    assert_int_equal(cfit_offload_parse("optimizer,activations", &m, &d), CFIT_EOK);
    assert_int_equal(m, CFIT_OFFLOAD_OPTIMIZER | CFIT_OFFLOAD_ACTIVATIONS);
    assert_string_equal(cfit_offload_str(m, buf, sizeof buf), "optimizer,activations");
    assert_string_equal(cfit_offload_str(0, buf, sizeof buf), "none");
    assert_int_equal(cfit_offload_parse("params", &m, &d), CFIT_EOK);
    assert_int_equal(m, CFIT_OFFLOAD_PARAMS);
    assert_int_equal(cfit_offload_parse("optimizer:nvme,params:nvme", &m, &d), CFIT_EOK);
    assert_int_equal(m, CFIT_OFFLOAD_OPTIMIZER | CFIT_OFFLOAD_PARAMS | CFIT_OFFLOAD_NVME);
    assert_string_equal(cfit_offload_str(m, buf, sizeof buf), "optimizer:nvme,params:nvme");
    assert_int_equal(cfit_offload_parse("optimizer:cpu,params:nvme", &m, &d), CFIT_EOK);
    assert_string_equal(cfit_offload_str(m, buf, sizeof buf), "optimizer,params:nvme");
    assert_int_equal(cfit_offload_parse("activations:nvme", &m, &d), CFIT_EINVALID);   /* no NVMe tier for them */
    assert_non_null(strstr(d.msg, ":nvme"));
    assert_true(cfit_offload_mask_ok(CFIT_OFFLOAD_OPTIMIZER | CFIT_OFFLOAD_OPTIMIZER_NVME));
    assert_false(cfit_offload_mask_ok(CFIT_OFFLOAD_OPTIMIZER_NVME));   /* an NVMe bit without its host bit */
    assert_false(cfit_offload_mask_ok(CFIT_OFFLOAD_MASK_MAX + 1));
    assert_int_equal(cfit_offload_parse("gpu", &m, &d), CFIT_EINVALID);
    assert_int_equal(cfit_offload_parse(",", &m, &d), CFIT_EINVALID);
}

/* NF4 + double quantization: 4 + 8/64 + 32/(64 x 256) bits = 0.5159 B; LoRA on llama2-7b at rank 16:
 * r x (4 x 8192 + 3 x 15104) per layer, 32 layers = 39.98 M. */
static void test_lora_terms(void **state)
{
    (void)state;
    assert_rel_near(cfit_nf4_bytes_per_param(), (4.0 + 0.125 + 32.0 / 16384.0) / 8.0, 1e-12);
    const cfit_model *m = cfit_catalog_model(cat, "llama2-7b", NULL);
    assert_non_null(m);
    assert_rel_near(cfit_lora_layer_params(m, 16), 16.0 * (4 * 8192 + 3 * 15104), 1e-12);
    assert_rel_near(cfit_lora_layer_params(m, 32), 2 * cfit_lora_layer_params(m, 16), 1e-12);
    /* frozen FLOPs: the weight-gradient GEMMs go, the adapters' 6 per parameter come */
    double full = cfit_model_flops_per_token(m, 4096);
    double w = m->layers * cfit_model_layer_matmul_params(m) + (double)m->hidden_size * m->vocab_size;
    double lora = cfit_finetune_flops_per_token(m, 4096, CFIT_FINETUNE_LORA, 16);
    assert_rel_near(lora, full - 2 * w + 6 * m->layers * cfit_lora_layer_params(m, 16), 1e-12);
    assert_rel_near(cfit_finetune_flops_per_token(m, 4096, CFIT_FINETUNE_QLORA, 16), lora, 1e-12);
    assert_rel_near(cfit_finetune_flops_per_token(m, 4096, CFIT_FINETUNE_FULL, 16), full, 1e-12);
    assert_true(lora / full > 0.66 && lora / full < 0.75);   /* 4N / 6N for the GEMMs, attention unchanged */
    /* MoE (PEFT's Mixtral targets): attention's four plus each expert's w1, w3, w2; the router not */
    const cfit_model *moe = cfit_catalog_model(cat, "mixtral-8x7b", NULL);
    cfit_diag d;
    assert_non_null(moe);
    assert_int_equal(cfit_finetune_check(moe, CFIT_FINETUNE_LORA, &d), CFIT_EOK);
    assert_rel_near(cfit_lora_expert_layer_params(moe, 16), 16.0 * 8 * 3 * (4096 + 14336), 1e-12);
    assert_rel_near(cfit_lora_layer_params(moe, 16), 16.0 * (2 * 8192 + 2 * 5120) + 16.0 * 8 * 3 * (4096 + 14336), 1e-12);
    assert_true(cfit_lora_expert_layer_params(m, 16) == 0);
    /* a token meets its top-2 experts' adapters: FLOPs below a dense count of all eight */
    double moe_full = cfit_model_flops_per_token(moe, 4096), moe_lora = cfit_finetune_flops_per_token(moe, 4096, CFIT_FINETUNE_LORA, 16);
    assert_true(moe_lora < moe_full && moe_lora > 0.6 * moe_full);
    const cfit_model *mla = cfit_catalog_model(cat, "deepseek-v3", NULL);
    assert_non_null(mla);
    assert_int_equal(cfit_finetune_check(mla, CFIT_FINETUNE_QLORA, &d), CFIT_EINVALID);
    assert_int_equal(cfit_finetune_check(m, CFIT_FINETUNE_QLORA, &d), CFIT_EOK);
}

static void req_7b(cfit_plan_request *r, const cfit_gpu **g, const char *gpu)
{
    cfit_plan_request_init(r);
    r->catalog = cat;
    r->model = cfit_catalog_model(cat, "llama2-7b", NULL);
    r->tokens = 1e9;
    *g = cfit_catalog_gpu(cat, gpu, NULL);
    assert_non_null(*g);
    r->gpus = g;
    r->ngpus = 1;
}

static cfit_plan eval(cfit_plan_request *r, const cfit_gpu *g, int zero, int rec)
{
    cfit_layout l = {1, 1, 4, 1, 1, 1, zero, rec, 0, 1, 1, 0, 0};
    cfit_plan p;
    cfit_diag d;
    assert_int_equal(cfit_plan_evaluate(r, g, &l, &p, &d), CFIT_EOK);
    return p;
}

/* Optimizer offload at ZeRO-2 on 4 GPUs: no optimizer states on the GPU, 16 B per sharded
 * parameter on the host, the gradient shard capped at DeepSpeed's bucket, the GPU's step replaced
 * by the exposed host-link and CPU-Adam time. */
static void test_optimizer_offload(void **state)
{
    (void)state;
    cfit_plan_request r;
    const cfit_gpu *g;
    req_7b(&r, &g, "rtx5090");
    cfit_plan base = eval(&r, g, 2, CFIT_RECOMPUTE_FULL);
    r.offload = CFIT_OFFLOAD_OPTIMIZER;
    cfit_plan p = eval(&r, g, 2, CFIT_RECOMPUTE_FULL);
    double P = cfit_model_params(r.model);
    assert_int_equal(p.offload, CFIT_OFFLOAD_OPTIMIZER);
    assert_true(p.mem.optimizer_bytes == 0 && p.br.optimizer_s == 0);
    assert_rel_near(p.mem.host_bytes, 16.0 * P / 4, 1e-9);
    assert_rel_near(p.mem.host_capacity_bytes, 768e9 / 4, 1e-12);   /* pcie-rtx5090-8's host over the job's 4 GPUs */
    assert_rel_near(p.mem.grads_bytes, base.mem.grads_bytes < 1e9 ? base.mem.grads_bytes : 1e9, 1e-12);
    assert_true(p.br.offload_s >= cfit_cpu_adam_s(P, 921.6e9));   /* the 4 GPUs' shards on one host */
    assert_true(p.mem.total_bytes < base.mem.total_bytes && p.fits);
    assert_rel_near(p.step_time_s, base.step_time_s - base.br.optimizer_s + p.br.offload_s, 1e-9);
}

/* Parameter offload needs ZeRO-3 and moves the shard; activation offload keeps two layers. */
static void test_params_activations(void **state)
{
    (void)state;
    cfit_plan_request r;
    const cfit_gpu *g;
    req_7b(&r, &g, "rtx5090");
    cfit_plan base = eval(&r, g, 3, CFIT_RECOMPUTE_NONE);
    r.offload = CFIT_OFFLOAD_PARAMS | CFIT_OFFLOAD_ACTIVATIONS;
    cfit_plan p = eval(&r, g, 3, CFIT_RECOMPUTE_NONE);
    assert_true(p.mem.weights_bytes == 0);
    assert_true(p.mem.activations_bytes < base.mem.activations_bytes / 4);
    assert_rel_near(p.mem.host_bytes, base.mem.weights_bytes + base.mem.activations_bytes - p.mem.activations_bytes, 1e-9);
    assert_true(p.br.offload_s > 0 && p.step_time_s > base.step_time_s);
    cfit_diag d;
    r.fixed.zero = 2;
    assert_int_equal(cfit_plan_validate(&r, &d), CFIT_EINVALID);   /* params offload needs ZeRO-3 */
    r.fixed.zero = 0;
    r.offload = CFIT_OFFLOAD_OPTIMIZER;
    assert_int_equal(cfit_plan_validate(&r, &d), CFIT_EINVALID);   /* optimizer offload needs a ZeRO stage */
}

/* --offload-modules (Megatron-Core's fine-grained activation offloading): the two norms' inputs of
 * llama2-7b at micro-batch 1, seq 4096, bf16, no SP: 2 x 2 B x T x h per layer, all 32 layers'
 * less the one computing, to the host; the GPU's activations fall by the same; Q, K, V add
 * 2 x (1 + 2 g/a) x a d / h x T x h; the names round-trip and Megatron's rules are refused. */
static void test_offload_modules(void **state)
{
    (void)state;
    cfit_plan_request r;
    const cfit_gpu *g;
    req_7b(&r, &g, "rtx5090");
    r.seq_len = 4096;
    cfit_plan base = eval(&r, g, 1, CFIT_RECOMPUTE_NONE);
    r.offload_modules = CFIT_OFFMOD_ATTN_NORM | CFIT_OFFMOD_MLP_NORM;
    cfit_plan p = eval(&r, g, 1, CFIT_RECOMPUTE_NONE);
    const cfit_model *m = r.model;
    double T = 4096, h = m->hidden_size, per_layer = 2.0 * 2.0 * T * h;
    assert_int_equal(p.offload_modules, CFIT_OFFMOD_ATTN_NORM | CFIT_OFFMOD_MLP_NORM);
    assert_rel_near(p.mem.host_bytes, per_layer * (m->layers - 1), 1e-9);
    assert_rel_near(base.mem.activations_bytes - p.mem.activations_bytes, per_layer * (m->layers - 1), 1e-9);
    assert_true(p.step_time_s >= base.step_time_s);
    r.offload_modules = CFIT_OFFMOD_CORE_ATTN;
    cfit_plan q = eval(&r, g, 1, CFIT_RECOMPUTE_NONE);
    double kv = (double)m->num_kv_heads / m->num_heads, qkv = 2.0 * (1.0 + 2.0 * kv) * T * h;   /* a d = h */
    assert_rel_near(q.mem.host_bytes, qkv * (m->layers - 1), 1e-9);
    unsigned mask;
    size_t bad = 0;
    char buf[128];
    assert_int_equal(cfit_offload_modules_parse("core_attn,attn_proj,expert_fc1", &mask, &bad), 0);
    assert_string_equal(cfit_offload_modules_str(mask, buf, sizeof buf), "core_attn,attn_proj,expert_fc1");
    assert_int_equal(cfit_offload_modules_parse("none", &mask, &bad), 0);
    assert_int_equal(mask, 0u);
    assert_string_equal(cfit_offload_modules_str(0, buf, sizeof buf), "none");
    assert_int_equal(cfit_offload_modules_parse("core_attn,bogus", &mask, &bad), -1);
    assert_int_equal((int)bad, 10);
    cfit_diag d;
    r.offload_modules = CFIT_OFFMOD_ATTN_PROJ;   /* attn_proj needs core_attn */
    assert_int_equal(cfit_plan_validate(&r, &d), CFIT_EINVALID);
    r.offload_modules = CFIT_OFFMOD_MOE_ACT;     /* a dense model has no experts */
    assert_int_equal(cfit_plan_validate(&r, &d), CFIT_EINVALID);
    r.offload_modules = CFIT_OFFMOD_CORE_ATTN;
    r.offload = CFIT_OFFLOAD_ACTIVATIONS;        /* not with layer-level offload */
    assert_int_equal(cfit_plan_validate(&r, &d), CFIT_EINVALID);
    r.offload = CFIT_SEARCH;
    r.fixed.recompute = CFIT_RECOMPUTE_FULL;     /* nothing stored to move */
    assert_int_equal(cfit_plan_validate(&r, &d), CFIT_EINVALID);
}

/* LoRA: weights 2 B per base parameter plus the adapters, gradients and Adam for the adapters only;
 * QLoRA: NF4 projections; both faster than full training (no weight gradients). */
static void test_lora_plan(void **state)
{
    (void)state;
    cfit_plan_request r;
    const cfit_gpu *g;
    req_7b(&r, &g, "h100-sxm");
    cfit_plan full = eval(&r, g, 1, CFIT_RECOMPUTE_NONE);
    r.finetune = CFIT_FINETUNE_LORA;
    cfit_plan lora = eval(&r, g, 1, CFIT_RECOMPUTE_NONE);
    const cfit_model *m = r.model;
    double P = cfit_model_params(m), A = m->layers * cfit_lora_layer_params(m, 16);
    assert_rel_near(lora.mem.weights_bytes, 2 * P + 2 * A, 1e-9);
    assert_rel_near(lora.mem.grads_bytes, 2 * A, 1e-9);
    assert_rel_near(lora.mem.optimizer_bytes, 12 * A / 4, 1e-9);
    assert_true(lora.br.compute_s < 0.9 * full.br.compute_s && lora.step_time_s < full.step_time_s);
    assert_true(lora.br.dp_comm_s <= full.br.dp_comm_s);
    r.finetune = CFIT_FINETUNE_QLORA;
    cfit_plan q = eval(&r, g, 1, CFIT_RECOMPUTE_NONE);
    double lin = m->layers * cfit_model_layer_matmul_params(m);
    assert_rel_near(q.mem.weights_bytes, cfit_nf4_bytes_per_param() * lin + 2 * (P - lin) + 2 * A, 1e-9);
    assert_true(q.br.compute_s > lora.br.compute_s);   /* dequantization traffic */
    assert_true(q.goodput.checkpoint_bytes < full.goodput.checkpoint_bytes / 100);   /* adapters only */
    cfit_diag d;
    r.lora_rank = 8;
    r.finetune = CFIT_FINETUNE_FULL;
    assert_int_equal(cfit_plan_validate(&r, &d), CFIT_EINVALID);   /* --lora-rank without lora */
    r.finetune = CFIT_FINETUNE_LORA;
    assert_int_equal(cfit_plan_validate(&r, &d), CFIT_EOK);
    r.fixed.zero = 3;
    assert_int_equal(cfit_plan_validate(&r, &d), CFIT_EOK);   /* FSDP / ZeRO-3 shards the frozen weights too */
    r.fixed.zero = CFIT_SEARCH;
    r.lora_rank = 0;   /* the default rank, as `lora` above */
    cfit_plan z3 = eval(&r, g, 3, CFIT_RECOMPUTE_NONE);
    assert_rel_near(z3.mem.weights_bytes, lora.mem.weights_bytes / 4, 1e-9);
    r.offload = CFIT_OFFLOAD_PARAMS;   /* and parameter offload moves that shard to the host */
    cfit_plan off = eval(&r, g, 3, CFIT_RECOMPUTE_NONE);
    assert_true(off.mem.weights_bytes == 0);
    assert_rel_near(off.mem.host_bytes, z3.mem.weights_bytes, 1e-9);
}

/* LoRA on an MoE model: the frozen experts sharded over EP, the experts' adapters trained. */
static void test_lora_moe(void **state)
{
    (void)state;
    cfit_plan_request r;
    const cfit_gpu *g;
    req_7b(&r, &g, "h100-sxm");
    r.model = cfit_catalog_model(cat, "mixtral-8x7b", NULL);
    r.finetune = CFIT_FINETUNE_LORA;
    r.gpus_total = 8;
    cfit_plan_result res;
    cfit_diag d;
    assert_int_equal(cfit_plan_search(&r, &res, &d), CFIT_EOK);
    assert_true(res.nplans > 0 && res.plans[0].fits);
    const cfit_plan *p = &res.plans[0];
    double A = r.model->layers * cfit_lora_layer_params(r.model, 16);
    assert_true(p->mem.optimizer_bytes <= 12.0 * A + 1 && p->mem.optimizer_bytes > 0);   /* adapters only */
    assert_true(p->goodput.checkpoint_bytes < cfit_model_params(r.model));
    cfit_plan_result_fini(&res);
}

/* Nothing fits on one RTX 5090 without offload: the search tries the offload masks and says so. */
static void test_fallback(void **state)
{
    (void)state;
    cfit_plan_request r;
    const cfit_gpu *g;
    req_7b(&r, &g, "rtx5090");
    r.gpus_total = 1;
    cfit_plan_result res;
    cfit_diag d;
    assert_int_equal(cfit_plan_search(&r, &res, &d), CFIT_EOK);
    assert_true(res.per_gpu[0].found && res.per_gpu[0].offload_searched);
    assert_true(res.plans[0].offload != 0 && res.plans[0].fits);
    cfit_plan_result_fini(&res);
    r.offload = CFIT_OFFLOAD_NONE;   /* --offload none: no fallback */
    assert_int_equal(cfit_plan_search(&r, &res, &d), CFIT_EOK);
    assert_true(!res.per_gpu[0].found && !res.per_gpu[0].offload_searched);
    cfit_plan_result_fini(&res);
}

/* ZeRO-Infinity's NVMe tier on an H100 node's 8-drive array at ZeRO-3 over 4 GPUs: the optimizer's
 * 16 B/param and the bf16 shard on NVMe, host memory keeps DeepSpeed's swap buffers, the step at
 * least the time to read the states back; a node without an array refuses it. */
static void test_nvme(void **state)
{
    (void)state;
    cfit_plan_request r;
    const cfit_gpu *g;
    req_7b(&r, &g, "h100-sxm");
    r.offload = CFIT_OFFLOAD_OPTIMIZER | CFIT_OFFLOAD_PARAMS | CFIT_OFFLOAD_NVME;
    cfit_plan p = eval(&r, g, 3, CFIT_RECOMPUTE_NONE);
    double P = cfit_model_params(r.model), Pd = P / 4;
    assert_int_equal(p.offload, r.offload);
    assert_true(p.mem.weights_bytes == 0 && p.mem.optimizer_bytes == 0);
    assert_rel_near(p.mem.nvme_bytes, 16.0 * Pd + 2.0 * Pd, 1e-9);
    assert_rel_near(p.mem.nvme_capacity_bytes, 30.72e12 / 4, 1e-12);    /* nvme-local-8x-gen4 over the job's 4 GPUs */
    assert_rel_near(p.mem.host_bytes, 4 * (Pd < 1e9 ? Pd : 1e9) * 4 + 5 * 1e8 * 2, 1e-9);   /* swap buffers */
    assert_true(p.br.offload_s >= 16.0 * Pd / (52e9 / 4) && p.fits);   /* the states read back at the GPU's share */
    r.offload = CFIT_OFFLOAD_OPTIMIZER;   /* the host tier: no NVMe bytes, a shorter step */
    cfit_plan h = eval(&r, g, 3, CFIT_RECOMPUTE_NONE);
    assert_true(h.mem.nvme_bytes == 0 && h.br.offload_s < p.br.offload_s);
    req_7b(&r, &g, "rtx5090");   /* pcie-rtx5090-8 names no NVMe array */
    r.gpus_total = 4;
    r.offload = CFIT_OFFLOAD_OPTIMIZER | CFIT_OFFLOAD_OPTIMIZER_NVME;
    cfit_plan_result res;
    cfit_diag d;
    assert_int_equal(cfit_plan_search(&r, &res, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "local_nvme"));
}

/* Llama 3 405B on one 8 x H100 node fits neither GPU nor host memory: the fallback's NVMe pass does. */
static void test_nvme_fallback(void **state)
{
    (void)state;
    cfit_plan_request r;
    const cfit_gpu *g;
    req_7b(&r, &g, "h100-sxm");
    r.model = cfit_catalog_model(cat, "llama3-405b", NULL);
    r.gpus_total = 8;
    cfit_plan_result res;
    cfit_diag d;
    assert_int_equal(cfit_plan_search(&r, &res, &d), CFIT_EOK);
    assert_true(res.per_gpu[0].found && res.per_gpu[0].offload_searched);
    assert_true((res.plans[0].offload & CFIT_OFFLOAD_NVME) && res.plans[0].fits);
    assert_true(res.plans[0].mem.nvme_bytes <= res.plans[0].mem.nvme_capacity_bytes);
    cfit_plan_result_fini(&res);
}

/* A node entry without host figures cannot offload. */
static void test_no_host(void **state)
{
    (void)state;
    cfit_plan_request r;
    const cfit_gpu *g;
    req_7b(&r, &g, "mi300x");
    r.gpus_total = 8;
    r.offload = CFIT_OFFLOAD_OPTIMIZER;
    cfit_plan_result res;
    cfit_diag d;
    assert_int_equal(cfit_plan_search(&r, &res, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "host memory"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pcie),
        cmocka_unit_test(test_host_link),
        cmocka_unit_test(test_cpu_adam),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_lora_terms),
        cmocka_unit_test(test_optimizer_offload),
        cmocka_unit_test(test_params_activations),
        cmocka_unit_test(test_offload_modules),
        cmocka_unit_test(test_lora_plan),
        cmocka_unit_test(test_lora_moe),
        cmocka_unit_test(test_fallback),
        cmocka_unit_test(test_no_host),
        cmocka_unit_test(test_nvme),
        cmocka_unit_test(test_nvme_fallback),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
