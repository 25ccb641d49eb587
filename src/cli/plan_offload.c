/* plan_offload.c - `plan --offload`, `--finetune`, `--lora-rank`: parsing, and the lines, table rows
 * and JSON fields they add (offload.h; docs/model.md §10). */
#include "plan_cli.h"
#include "clusterfit/writer.h"

#include <stdio.h>
#include <string.h>

int plan_opt_offload(cfit_plan_request *r, int which, const char *name, const char *value)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    if (which == 0)
        return cfit_offload_parse(value, &r->offload, &d) ? cli_error("--%s: %s", name, d.msg) : 0;
    if (which == 3) {   /* --offload-modules */
        unsigned m;
        size_t bad = 0;
        if (cfit_offload_modules_parse(value, &m, &bad)) {
            size_t n = strcspn(value + bad, ",");
            return cli_error("--%s: unknown module '%.*s' (expected none or a comma list of attn_norm, qkv_linear, "
                             "core_attn, attn_proj, mlp_norm, expert_fc1, moe_act, fused_group_mlp)",
                             name, (int)n, value + bad);
        }
        r->offload_modules = (int)m;
        return 0;
    }
    if (which == 1) {
        for (int i = CFIT_FINETUNE_FULL; i < CFIT_FINETUNE_COUNT; i++)
            if (strcmp(value, cfit_finetune_name((cfit_finetune)i)) == 0) {
                r->finetune = i;
                return 0;
            }
        return cli_error("--%s: expected full, lora or qlora, got '%s'", name, value);
    }
    long v;
    int rc = cli_int(name, value, 1, 1 << 16, &v);
    r->lora_rank = (int)v;
    return rc;
}

void plan_print_finetune(const cfit_plan_request *r)
{
    char n[2][32];
    int rank = r->lora_rank > 0 ? r->lora_rank : CFIT_LORA_RANK_DEFAULT;
    if (r->finetune == CFIT_FINETUNE_FULL) {
        printf("fine-tuning: full, every weight trained (costed as pre-training)\n");
        return;
    }
    if (!cfit_finetune_frozen((cfit_finetune)r->finetune))
        return;
    int qlora = r->finetune == CFIT_FINETUNE_QLORA;
    printf("fine-tuning: %s, rank %d%s adapters on Q, K, V, output, %s (%s trainable of %s params); "
           "base weights frozen in %s; backward without weight gradients\n",
           cfit_finetune_name((cfit_finetune)r->finetune), rank, r->lora_rank > 0 ? "" : " (default)",
           cfit_model_is_moe(r->model) ? "each expert's gate, up, down (the router frozen)" : "gate, up, down",
           fmt_count(n[0], 32, cfit_finetune_trainable_params(r)), fmt_count(n[1], 32, cfit_model_params(r->model)),
           qlora ? "4-bit NF4 with double quantization (0.516 B/param), paged optimizer" : "bf16");
}

void plan_print_offload_note(const cfit_plan_result *res)
{
    int nvme = res->nplans > 0 && (res->plans[0].offload & CFIT_OFFLOAD_NVME);
    for (size_t i = 0; i < res->ngpu; i++)
        if (res->per_gpu[i].offload_searched) {
            printf("offload: no layout fit in GPU memory without offload, so the search also tried host-memory "
                   "offload%s (--offload none forbids it)\n",
                   nvme ? ", and as none fit in host memory either, the node's NVMe array (ZeRO-Infinity)" : "");
            return;
        }
}

/* The NVMe tier's line under the offload line: what is on the array and at what rates. */
static void print_nvme(const cfit_plan_request *r, const cfit_plan *p)
{
    const cfit_storage *s = cfit_node_nvme(r->catalog, p->node);
    if (!(p->offload & CFIT_OFFLOAD_NVME) || !s)
        return;
    printf("  NVMe tier: %.1f of %.0f GB per GPU on the node's %s (%.1f TB, %.0f GB/s read, %.0f GB/s write, shared by "
           "its GPUs); swap buffers in host memory, NVMe reads, CPU-Adam and writes pipelined (ZeRO-Infinity)\n",
           p->mem.nvme_bytes / 1e9, p->mem.nvme_capacity_bytes / 1e9, s->name, s->capacity_bytes / 1e12,
           s->read_bytes_per_s / 1e9, s->write_bytes_per_s / 1e9);
}

void plan_print_offload(const cfit_plan_request *r, const cfit_plan *p)
{
    if (!p->offload && !p->offload_modules)
        return;
    char mode[64], mods[128], what[256];
    const cfit_node *n = p->node;
    char link[64];
    cfit_offload_modules_str((unsigned)p->offload_modules, mods, sizeof mods);
    snprintf(what, sizeof what, "%s%s%s%s", p->offload ? cfit_offload_str(p->offload, mode, sizeof mode) : "",
             p->offload && p->offload_modules ? " and " : "", p->offload_modules ? "the inputs of " : "",
             p->offload_modules ? mods : "");
    printf("  offload: %s %s host memory, %.1f of %.0f GB per GPU (node %s: %.0f GB at %.0f GB/s, %s per direction); "
           "exposed %.3g s per step%s%s\n", what,
           p->offload & CFIT_OFFLOAD_NVME ? "through" : "in", p->mem.host_bytes / 1e9, p->mem.host_capacity_bytes / 1e9,
           n->name, n->host_memory_bytes / 1e9, n->host_memory_bw_bytes_per_s / 1e9,
           cfit_node_host_link_str(n, link, sizeof link), p->br.offload_s,
           p->offload & CFIT_OFFLOAD_OPTIMIZER ? " (Adam on the CPU, at DeepSpeed CPU-Adam's measured rate)" : "",
           p->offload_modules ? " (Megatron-Core fine-grained activation offloading)" : "");
    print_nvme(r, p);
}

void plan_json_offload(cfit_buf *b, const plan_cli *c, const cfit_plan *p)
{
    const cfit_plan_request *r = &c->req;
    char mode[64];
    cfit_buf_puts(b, ", \"offload\": {");
    char mods[128];
    cfit_buf_key_string(b, "mode", cfit_offload_str(p->offload, mode, sizeof mode), 0);
    cfit_buf_key_string(b, "modules", cfit_offload_modules_str((unsigned)p->offload_modules, mods, sizeof mods), 1);
    cfit_buf_key_number(b, "host_bytes", p->mem.host_bytes, 1);
    const cfit_node *n = p->node;   /* the node's host memory over the job's GPUs on it, when known */
    double cap = n->host_memory_bytes / (double)(p->gpus < n->gpus_per_node ? p->gpus : n->gpus_per_node);
    cfit_buf_key_opt(b, "host_capacity_bytes", cap > 0, cap);
    if (p->offload & CFIT_OFFLOAD_NVME) {   /* ZeRO-Infinity's tier: the node's array */
        const cfit_storage *s = cfit_node_nvme(r->catalog, n);
        cfit_buf_key_string(b, "nvme_storage", s ? s->name : "", 1);
        cfit_buf_key_number(b, "nvme_bytes", p->mem.nvme_bytes, 1);
        cfit_buf_key_number(b, "nvme_capacity_bytes", p->mem.nvme_capacity_bytes, 1);
    }
    cfit_buf_key_number(b, "exposed_s", p->br.offload_s, 1);
    cfit_buf_puts(b, "}, \"finetune\": {");
    cfit_buf_key_string(b, "mode", cfit_finetune_name((cfit_finetune)r->finetune), 0);
    cfit_buf_key_opt(b, "lora_rank", cfit_finetune_frozen((cfit_finetune)r->finetune),
                      r->lora_rank > 0 ? r->lora_rank : CFIT_LORA_RANK_DEFAULT);
    cfit_buf_key_number(b, "trainable_params", cfit_finetune_trainable_params(r), 1);
    cfit_buf_puts(b, "}");
}

const char *plan_mem_source(const cfit_plan_request *r, const cfit_plan *p, int row, const char *dflt)
{
    int frozen = cfit_finetune_frozen((cfit_finetune)r->finetune), qlora = r->finetune == CFIT_FINETUNE_QLORA;
    if (row == 0 && (p->offload & CFIT_OFFLOAD_PARAMS_NVME))
        return "shard on NVMe, through host memory (ZeRO-Infinity)";
    if (row == 0 && (p->offload & CFIT_OFFLOAD_PARAMS))
        return "shard in host memory (ZeRO-Infinity, FSDP offload)";
    if (row == 2 && (p->offload & CFIT_OFFLOAD_OPTIMIZER_NVME))
        return "on NVMe with the fp32 gradients (ZeRO-Infinity, CPU-Adam)";
    if (row == 2 && (p->offload & CFIT_OFFLOAD_OPTIMIZER))
        return "in host memory (ZeRO-Offload, CPU-Adam)";
    if (!frozen)
        return dflt;
    static const char *const lora[] = {"frozen bf16 base + bf16 adapters", "adapters only, / dp at ZeRO-2+",
                                       "adapters only, 12 B/param, / dp at ZeRO-1+"};
    if (row == 0 && qlora)
        return "frozen NF4 base (0.516 B/param) + bf16 adapters";
    return row >= 0 && row < 3 ? lora[row] : dflt;
}

int plan_nothing_fits_offload(const cfit_plan *p)
{
    char mode[64], rec[96];
    const cfit_layout *l = &p->layout;
    const cfit_memory *m = &p->mem;
    char nvme[128] = "";
    if (p->offload & CFIT_OFFLOAD_NVME)
        snprintf(nvme, sizeof nvme, " and %.1f GB of NVMe per GPU of the %.1f GB its array has per GPU",
                 m->nvme_bytes / 1e9, m->nvme_capacity_bytes / 1e9);
    return cli_error("nothing fits, even with %s offload: the closest layout (%ld x %s, tp %d pp %d dp %d cp %d "
                     "mbs %d ZeRO-%d, recompute %s, offload %s) needs %.1f GB per GPU of the %.0f GB available and "
                     "%.1f GB of host memory per GPU of the %.1f GB its node has per GPU%s; more GPUs (--gpus) or a node "
                     "with more memory", p->offload & CFIT_OFFLOAD_NVME ? "NVMe" : "host-memory", p->gpus, p->gpu->name,
                     l->tp, l->pp, l->dp, l->cp, l->mbs, l->zero, plan_recompute_str(rec, sizeof rec, p),
                     cfit_offload_str(p->offload, mode, sizeof mode), m->total_bytes / 1e9, m->capacity_bytes / 1e9,
                     m->host_bytes / 1e9, m->host_capacity_bytes / 1e9, nvme);
}
