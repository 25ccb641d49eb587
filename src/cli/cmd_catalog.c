/* cmd_catalog.c - `clusterfit catalog list [KIND]` and `clusterfit catalog show NAME|FILE`. */
#include "cli.h"
#include "clusterfit/schedule.h"
#include "clusterfit/workload.h"
#include "clusterfit/offload.h"

#include <string.h>

enum { OPT_CATALOG = 1 };

static const cli_opt opts[] = {
    {"catalog", 0, "FILE", "add or override entries from FILE (repeatable; - reads stdin)", OPT_CATALOG},
    {NULL, 0, NULL, NULL, 0},
};

typedef struct ctx {
    cli_catalog cc;
    const char *pos[3];
    int npos;
} ctx;

static int on_opt(void *vc, int id, const char *name, const char *value)
{
    ctx *c = vc;
    (void)name;
    if (id == -1) {
        if (c->npos >= 3)
            return cli_error("catalog: unexpected argument '%s'", value);
        c->pos[c->npos++] = value;
        return 0;
    }
    return cli_catalog_add(&c->cc, value);   /* the only option */
}

static void list_gpus(const cfit_catalog *cat)
{
    printf("%-14s %-7s %-9s %9s %10s %12s %12s %9s %7s  %s\n", "gpu", "vendor", "arch", "memory", "HBM",
           "bf16 dense", "fp8 dense", "scale-up", "domain", "node");
    printf("%-14s %-7s %-9s %9s %10s %12s %12s %9s %7s\n", "", "", "", "GB", "TB/s", "TFLOP/s", "TFLOP/s",
           "GB/s/dir", "GPUs");
    for (size_t i = 0; i < cfit_catalog_gpu_count(cat); i++) {
        const cfit_gpu *g = cfit_catalog_gpu_at(cat, i);
        printf("%-14s %-7s %-9s %9.0f %10.2f %12.1f %12.1f %9.0f %7d  %s\n", g->name, g->vendor,
               cfit_gpu_arch_name(g->arch), g->memory_bytes / 1e9, g->memory_bw_bytes_per_s / 1e12, g->peak_flops[CFIT_PREC_BF16] / 1e12,
               g->peak_flops[CFIT_PREC_FP8] / 1e12, g->scaleup_bw_bytes_per_s / 1e9, g->scaleup_domain,
               g->default_node);
    }
}

static void list_models(const cfit_catalog *cat)
{
    printf("%-18s %9s %9s %7s %7s %7s %6s %4s %8s %6s %-6s %s\n", "model", "params", "active", "layers", "hidden",
           "ffn", "heads", "kv", "vocab", "seq", "mlp", "experts");
    for (size_t i = 0; i < cfit_catalog_model_count(cat); i++) {
        const cfit_model *m = cfit_catalog_model_at(cat, i);
        char p[32], a[32], e[48] = "-";
        if (cfit_model_is_moe(m))
            snprintf(e, sizeof e, "%d top-%d%s%s", m->num_experts, m->experts_per_token,
                     m->shared_ffn_hidden_size > 0 ? " +shared" : "", cfit_model_is_mla(m) ? ", MLA" : "");
        printf("%-18s %9s %9s %7d %7d %7d %6d %4d %8d %6d %-6s %s\n", m->name,
               fmt_count(p, sizeof p, cfit_model_params(m)), fmt_count(a, sizeof a, cfit_model_active_params(m)),
               m->layers, m->hidden_size, m->ffn_hidden_size, m->num_heads, m->num_kv_heads, m->vocab_size,
               m->seq_len, m->mlp == CFIT_MLP_SWIGLU ? "swiglu" : "gelu", e);
    }
}

static void list_fabrics(const cfit_catalog *cat)
{
    printf("%-17s %-9s %-9s %10s %9s %6s %6s  %s\n", "fabric", "kind", "family", "GB/s/dir", "latency", "eff",
           "sharp", "technology");
    for (size_t i = 0; i < cfit_catalog_fabric_count(cat); i++) {
        const cfit_fabric *f = cfit_catalog_fabric_at(cat, i);
        char sharp[16] = "-";
        if (f->sharp_efficiency > 0)
            snprintf(sharp, sizeof sharp, "%.2f", f->sharp_efficiency);
        printf("%-17s %-9s %-9s %10.1f %7.2fus %6.2f %6s  %s\n", f->name,
               f->kind == CFIT_FABRIC_SCALEUP ? "scale-up" : "scale-out", cfit_fabric_family_name(f->family),
               f->bw_bytes_per_s / 1e9, f->latency_s * 1e6, f->efficiency, sharp, f->technology);
    }
}

static void list_nodes(const cfit_catalog *cat)
{
    printf("%-18s %6s %6s  %-14s %-14s %s\n", "node", "GPUs", "NICs", "fabric", "gpu", "p2p");
    for (size_t i = 0; i < cfit_catalog_node_count(cat); i++) {
        const cfit_node *n = cfit_catalog_node_at(cat, i);
        printf("%-18s %6d %6d  %-14s %-14s %s\n", n->name, n->gpus_per_node, n->nics_per_node, n->fabric,
               n->gpu[0] ? n->gpu : "any", n->p2p_off ? "no" : "yes");
    }
}

static void list_frameworks(const cfit_catalog *cat)
{
    printf("%-22s %-9s %6s %10s %12s  %s\n", "framework", "attention", "scale", "dp overlap", "param gather",
           "name");
    for (size_t i = 0; i < cfit_catalog_framework_count(cat); i++) {
        const cfit_framework *f = cfit_catalog_framework_at(cat, i);
        printf("%-22s %-9s %6.2f %10s %12s  %s\n", f->name, f->unfused_attention ? "unfused" : "fused",
               f->attention_efficiency_scale, f->dp_overlap ? "yes" : "no",
               f->flat_param_gather ? "flat" : "hierarchical", f->display_name);
    }
}

static void list_prices(const cfit_catalog *cat)
{
    printf("%-36s %12s %-18s %-7s\n", "price", "value", "unit", "date");
    for (size_t i = 0; i < cfit_catalog_price_count(cat); i++) {
        const cfit_price *p = cfit_catalog_price_at(cat, i);
        printf("%-36s %12.10g %-18s %-7s\n", p->name, p->value, cfit_price_unit_name(p->unit), p->date);
    }
}

static void list_switches(const cfit_catalog *cat)
{
    printf("%-22s %-12s %6s\n", "switch", "fabric", "ports");
    for (size_t i = 0; i < cfit_catalog_switch_count(cat); i++) {
        const cfit_switch *w = cfit_catalog_switch_at(cat, i);
        printf("%-22s %-12s %6d\n", w->name, w->fabric, w->ports);
    }
}

static void list_storage(const cfit_catalog *cat)
{
    printf("%-22s %-8s %10s %10s %10s\n", "storage", "per node", "read GB/s", "write GB/s", "TB");
    for (size_t i = 0; i < cfit_catalog_storage_count(cat); i++) {
        const cfit_storage *s = cfit_catalog_storage_at(cat, i);
        printf("%-22s %-8s %10.1f %10.1f %10.1f\n", s->name, s->per_node ? "yes" : "no", s->read_bytes_per_s / 1e9,
               s->write_bytes_per_s / 1e9, s->capacity_bytes / 1e12);
    }
}

static void list_failures(const cfit_catalog *cat)
{
    printf("%-26s %-9s %-9s %-5s %14s %14s\n", "failure", "arch", "class", "per", "per unit-hour",
           "unit-hours each");
    for (size_t i = 0; i < cfit_catalog_failure_count(cat); i++) {
        const cfit_failure *f = cfit_catalog_failure_at(cat, i);
        printf("%-26s %-9s %-9s %-5s %14.4g %14.4g\n", f->name, cfit_failure_arch_name(f->arch),
               cfit_failure_class_name((cfit_failure_class)f->klass), cfit_failure_per_name((cfit_failure_per)f->per),
               f->per_hour, f->per_hour > 0 ? 1.0 / f->per_hour : 0.0);
    }
}

/* Group- or node-limited routing and the aux-loss-free expert bias, when the model has them. */
static void show_router(const cfit_model *m)
{
    if (m->router_groups > 1)
        printf("  %-20s %d groups of %d experts, a token's from %d of them\n", "router groups", m->router_groups,
               m->num_experts / m->router_groups, m->router_group_topk);
    if (m->moe_max_nodes_per_token > 0)
        printf("  %-20s at most %d nodes per token\n", "node-limited", m->moe_max_nodes_per_token);
    if (m->router_expert_bias && m->router_bias_update_rate > 0)
        printf("  %-20s aux-loss-free, update rate %g\n", "expert bias", m->router_bias_update_rate);
    else if (m->router_expert_bias)
        printf("  %-20s aux-loss-free\n", "expert bias");
    if (m->router_topk_scaling_factor > 0)
        printf("  %-20s top-k weights x %g\n", "routed scaling", m->router_topk_scaling_factor);
}

static void show_moe(const cfit_model *m)
{
    printf("  %-20s %d routed, top-%d by %s scores, %d wide each\n", "experts", m->num_experts,
           m->experts_per_token, m->router_sigmoid ? "sigmoid" : "softmax", m->moe_ffn_hidden_size);
    if (m->shared_ffn_hidden_size > 0)
        printf("  %-20s %d wide in all%s\n", "shared experts", m->shared_ffn_hidden_size,
               m->shared_expert_gate ? ", gated" : "");
    show_router(m);
    printf("  %-20s %d of %d", "MoE layers", cfit_model_moe_layers(m), m->layers);
    if (m->first_dense_layers > 0)
        printf(", after %d dense", m->first_dense_layers);
    if (m->moe_layer_step > 1)
        printf(", every %d (layer i when (i + 1) %% %d == 0)", m->moe_layer_step, m->moe_layer_step);
    for (int i = 0; i < m->dense_layers.n; i++)
        printf("%s%d", i == 0 ? ", dense also: " : " ", m->dense_layers.layer[i]);
    printf("\n");
}

static void show_model(const cfit_model *m)
{
    char p[32];
    printf("model %s\n", m->name);
    printf("  %-20s %s (%.0f)\n", "parameters", fmt_count(p, sizeof p, cfit_model_params(m)), cfit_model_params(m));
    if (cfit_model_is_moe(m))
        printf("  %-20s %s (%.0f) per token\n", "active parameters",
               fmt_count(p, sizeof p, cfit_model_active_params(m)), cfit_model_active_params(m));
    printf("  %-20s %d\n  %-20s %d\n  %-20s %d\n", "layers", m->layers, "hidden_size",
           m->hidden_size, "ffn_hidden_size", m->ffn_hidden_size);
    printf("  %-20s %d\n  %-20s %d\n", "num_heads", m->num_heads, "num_kv_heads", m->num_kv_heads);
    if (m->head_dim > 0)
        printf("  %-20s %d\n", "head_dim", m->head_dim);
    if (cfit_model_is_mla(m))
        printf("  %-20s MLA: q_lora_rank %d, kv_lora_rank %d, qk head %d + %d rope, v head %d\n", "attention",
               m->q_lora_rank, m->kv_lora_rank, m->qk_nope_head_dim, m->qk_rope_head_dim, m->v_head_dim);
    if (m->sliding_layers > 0)
        printf("  %-20s %d tokens on %d of %d layers\n", "sliding window", m->sliding_window, m->sliding_layers,
               m->layers);
    if (m->mtp_layers > 0)
        printf("  %-20s %d (%s params: a 2h -> h projection and a %s layer each; embedding and head shared)\n",
               "mtp_layers", m->mtp_layers, fmt_count(p, sizeof p, cfit_model_mtp_params(m, 0)),
               cfit_model_mtp_moe(m) ? "MoE" : "dense");
    printf("  %-20s %d\n  %-20s %d\n", "vocab_size", m->vocab_size, "seq_len", m->seq_len);
    printf("  %-20s %s\n  %-20s %s\n", "mlp", m->mlp == CFIT_MLP_SWIGLU ? "swiglu" : "gelu",
           "tied_embeddings", m->tied_embeddings ? "true" : "false");
    if (cfit_model_is_moe(m))
        show_moe(m);
    printf("  %-20s %.4g FLOP (model, fwd+bwd, seq %d)\n", "FLOPs per token",
           cfit_model_flops_per_token(m, m->seq_len), m->seq_len);
    printf("  %-20s %s\n", "source", m->source);
}

/* `catalog show FILE`: a model file (clusterfit's format or a Hugging Face config.json). */
static int show_model_file(const char *path)
{
    cfit_model m;
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = cfit_model_load_file(path, &m, &d);
    if (rc)
        return cli_error_diag(&d, rc);
    show_model(&m);
    return 0;
}

static int show(const cfit_catalog *cat, const char *name)
{
    if (strchr(name, '/') || strstr(name, ".json") || strcmp(name, "-") == 0)   /* "-": stdin */
        return show_model_file(name);
    const cfit_gpu *g = cfit_catalog_gpu(cat, name, NULL);
    const cfit_node *exact = cfit_catalog_node(cat, name, NULL);
    if (g && exact && strcmp(exact->name, name) == 0 && strcmp(g->name, name) != 0)
        g = NULL;   /* a node's own name before a GPU alias it resembles (node dgx-b200, GPU b200's "DGX B200") */
    if (g) {
        const cfit_gpu_calibration *k = &g->cal;
        printf("gpu %s (%s)\n", g->name, g->display_name);
        if (g->aliases.n) {
            printf("  %-28s", "also known as");
            for (int i = 0; i < g->aliases.n; i++)
                printf("%s%s", i ? ", " : " ", g->aliases.name[i]);
            printf("\n");
        }
        printf("  %-28s %s\n", "architecture", cfit_gpu_arch_name(g->arch));
        printf("  %-28s %.1f GB\n", "memory", g->memory_bytes / 1e9);
        printf("  %-28s %.3f TB/s\n", "memory bandwidth", g->memory_bw_bytes_per_s / 1e12);
        printf("  %-28s %.1f TFLOP/s\n", "bf16 dense", g->peak_flops[CFIT_PREC_BF16] / 1e12);
        printf("  %-28s %.1f TFLOP/s\n", "fp8 dense", g->peak_flops[CFIT_PREC_FP8] / 1e12);
        printf("  %-28s %.1f TFLOP/s\n", "fp4 dense", g->peak_fp4_flops / 1e12);
        printf("  %-28s %.1f TFLOP/s\n", "tf32 dense", g->peak_tf32_flops / 1e12);
        printf("  %-28s %.1f TFLOP/s\n", "fp64", g->peak_fp64_flops / 1e12);
        printf("  %-28s %.0f W\n", "TDP", g->tdp_w);
        printf("  %-28s %s, %.0f GB/s per direction, domain %d\n", "scale-up", g->scaleup_fabric,
               g->scaleup_bw_bytes_per_s / 1e9, g->scaleup_domain);
        printf("  %-28s %s\n", "default node", g->default_node);
        if (g->no_price[0])
            printf("  %-28s %s\n", "no market price", g->no_price);
        printf("  calibration:\n");
        printf("  %-28s bf16 %.2f, fp8 %.2f of dense peak\n", "  GEMM efficiency",
               k->gemm_efficiency[CFIT_PREC_BF16], k->gemm_efficiency[CFIT_PREC_FP8]);
        printf("  %-28s %.0f elements\n", "  GEMM half-efficiency dim", k->gemm_half_dim);
        if (k->attention_half_seq > 0)
            printf("  %-28s %.2f of bf16 peak on long sequences, half that at %.0f tokens\n", "  attention efficiency",
                   k->attention_efficiency, k->attention_half_seq);
        else
            printf("  %-28s %.2f of bf16 peak\n", "  attention efficiency", k->attention_efficiency);
        printf("  %-28s %.2f of HBM bandwidth\n", "  memory efficiency", k->memory_bw_efficiency);
        printf("  %-28s %.1f GB\n", "  reserved memory", k->reserved_bytes / 1e9);
        printf("  %-28s %.0f%%\n", "  fragmentation", k->fragmentation * 100);
        printf("  %-28s %.1f us\n", "  per-layer overhead", k->layer_overhead_s * 1e6);
        printf("  %-28s %s\n", "source", g->source);
        return 0;
    }
    const cfit_model *m = cfit_catalog_model(cat, name, NULL);
    if (m) {
        show_model(m);
        return 0;
    }
    const cfit_fabric *f = cfit_catalog_fabric(cat, name, NULL);
    if (f) {
        printf("fabric %s (%s, %s)\n", f->name, f->technology,
               f->kind == CFIT_FABRIC_SCALEUP ? "scale-up" : "scale-out");
        printf("  %-20s %.1f GB/s per direction\n", "bandwidth", f->bw_bytes_per_s / 1e9);
        printf("  %-20s %.2f us\n", "latency", f->latency_s * 1e6);
        printf("  %-20s %.2f of line rate\n", "efficiency", f->efficiency);
        printf("  %-20s %.2f of compute time\n", "overlap", f->overlap_efficiency);
        printf("  %-20s %s\n", "family", cfit_fabric_family_name(f->family));
        if (f->sharp_efficiency > 0)
            printf("  %-20s %.2f of line rate (%s)\n", "in-network reduce", f->sharp_efficiency,
                   f->kind == CFIT_FABRIC_SCALEUP ? "NVLink SHARP, NCCL NVLS" : "switch SHARP, NCCL CollNet");
        printf("  %-20s %s\n", "source", f->source);
        return 0;
    }
    const cfit_framework *fw = cfit_catalog_framework(cat, name, NULL);
    if (fw) {
        printf("framework %s (%s)\n", fw->name, fw->display_name);
        printf("  %-28s %s\n", "attention kernel", fw->unfused_attention ? "unfused (scores in HBM)" : "fused");
        printf("  %-28s %.2f x the GPU's attention efficiency\n", "attention efficiency", fw->attention_efficiency_scale);
        printf("  %-28s %s\n", "gradient comm overlap", fw->dp_overlap ? "yes" : "no");
        printf("  %-28s %s\n", "ZeRO-3 parameter gather", fw->flat_param_gather ? "flat (full volume per NIC)" : "hierarchical");
        if (fw->zero3_max_live_params > 0)
            printf("  %-28s %.3g parameters\n", "ZeRO-3 live parameters", fw->zero3_max_live_params);
        else
            printf("  %-28s one layer\n", "ZeRO-3 live parameters");
        if (fw->host_layer_s > 0)
            printf("  %-28s %.3g ms per layer forward pass\n", "host time to issue kernels", fw->host_layer_s * 1e3);
        else
            printf("  %-28s not modelled\n", "host time to issue kernels");
        if (fw->moe_host_layer_s > 0)
            printf("  %-28s %.3g ms more per forward pass without CUDA graphs\n", "MoE layer host time",
                   fw->moe_host_layer_s * 1e3);
        printf("  %-28s %s\n", "CUDA graphs (--cuda-graphs)", fw->cuda_graphs ? "scoped or full" : "none");
        char list[128];
        printf("  %-28s %s\n", "pipeline schedules", cfit_schedule_list(fw->schedules, list, sizeof list));
        printf("  %-28s ZeRO-%d\n", "ZeRO with PP, at most", fw->zero_with_pp);
        printf("  %-28s %s\n", "source", fw->source);
        return 0;
    }
    const cfit_node *n = cfit_catalog_node(cat, name, NULL);
    if (n) {
        printf("node %s\n  %-20s %d\n  %-20s %d\n  %-20s %s\n  %-20s %s\n  %-20s %s\n  %-20s %s\n", n->name,
               "gpus_per_node", n->gpus_per_node, "nics_per_node", n->nics_per_node, "fabric", n->fabric, "gpu",
               n->gpu[0] ? n->gpu : "any", "p2p", n->p2p_off ? "no (through host memory)" : "yes", "source",
               n->source);
        char link[64];
        if (cfit_node_has_host(n))   /* what plan --offload is costed with (offload.h) */
            printf("  %-20s %.0f GB at %.1f GB/s; %s per direction per GPU\n  %-20s %s\n", "host memory",
                   n->host_memory_bytes / 1e9, n->host_memory_bw_bytes_per_s / 1e9,
                   cfit_node_host_link_str(n, link, sizeof link), "host source", n->host_source);
        const cfit_storage *nv = cfit_node_nvme(cat, n);
        if (nv)   /* what plan --offload optimizer:nvme is costed with (offload.h) */
            printf("  %-20s %s: %.1f TB, %.0f GB/s read, %.0f GB/s write\n  %-20s %s\n", "local NVMe", nv->name,
                   nv->capacity_bytes / 1e12, nv->read_bytes_per_s / 1e9, nv->write_bytes_per_s / 1e9,
                   "local NVMe source", n->local_nvme_source);
        return 0;
    }
    const cfit_switch *sw = cfit_catalog_switch(cat, name, NULL);
    if (sw) {
        printf("switch %s\n  %-20s %s\n  %-20s %d\n  %-20s %s\n", sw->name, "fabric", sw->fabric, "ports",
               sw->ports, "source", sw->source);
        return 0;
    }
    for (size_t i = 0; i < cfit_catalog_storage_count(cat); i++) {
        const cfit_storage *st = cfit_catalog_storage_at(cat, i);
        if (strcmp(st->name, name) != 0)
            continue;
        printf("storage %s\n  %-20s %s\n  %-20s %.1f GB/s\n  %-20s %.1f GB/s\n  %-20s %.1f TB\n  %-20s %s\n",
               st->name, "unit", st->per_node ? "one per node" : "shared building block", "read",
               st->read_bytes_per_s / 1e9, "write", st->write_bytes_per_s / 1e9, "capacity",
               st->capacity_bytes / 1e12, "source", st->source);
        return 0;
    }
    for (size_t i = 0; i < cfit_catalog_failure_count(cat); i++) {
        const cfit_failure *fl = cfit_catalog_failure_at(cat, i);
        if (strcmp(fl->name, name) != 0)
            continue;
        printf("failure %s\n  %-20s %s\n  %-20s %s\n  %-20s %.4g interruptions per %s-hour (one per %.4g %s-hours)\n"
               "  %-20s %s\n", fl->name, "arch", cfit_failure_arch_name(fl->arch), "class",
               cfit_failure_class_name((cfit_failure_class)fl->klass), "rate", fl->per_hour,
               cfit_failure_per_name((cfit_failure_per)fl->per), fl->per_hour > 0 ? 1.0 / fl->per_hour : 0.0,
               cfit_failure_per_name((cfit_failure_per)fl->per), "source", fl->source);
        return 0;
    }
    const cfit_price *pr = cfit_catalog_price(cat, name, NULL);
    if (pr) {
        printf("price %s\n  %-20s %.10g\n  %-20s %s\n  %-20s %s\n  %-20s %s\n", pr->name, "value", pr->value,
               "unit", cfit_price_unit_name(pr->unit), "date", pr->date, "source", pr->source);
        return 0;
    }
    const char *names[512];
    size_t k = 0;
    for (size_t i = 0; i < cfit_catalog_gpu_count(cat) && k < 512; i++)
        names[k++] = cfit_catalog_gpu_at(cat, i)->name;
    for (size_t i = 0; i < cfit_catalog_model_count(cat) && k < 512; i++)
        names[k++] = cfit_catalog_model_at(cat, i)->name;
    for (size_t i = 0; i < cfit_catalog_fabric_count(cat) && k < 512; i++)
        names[k++] = cfit_catalog_fabric_at(cat, i)->name;
    for (size_t i = 0; i < cfit_catalog_node_count(cat) && k < 512; i++)
        names[k++] = cfit_catalog_node_at(cat, i)->name;
    for (size_t i = 0; i < cfit_catalog_framework_count(cat) && k < 512; i++)
        names[k++] = cfit_catalog_framework_at(cat, i)->name;
    for (size_t i = 0; i < cfit_catalog_price_count(cat) && k < 512; i++)
        names[k++] = cfit_catalog_price_at(cat, i)->name;
    for (size_t i = 0; i < cfit_catalog_switch_count(cat) && k < 512; i++)
        names[k++] = cfit_catalog_switch_at(cat, i)->name;
    for (size_t i = 0; i < cfit_catalog_storage_count(cat) && k < 512; i++)
        names[k++] = cfit_catalog_storage_at(cat, i)->name;
    for (size_t i = 0; i < cfit_catalog_failure_count(cat) && k < 512; i++)
        names[k++] = cfit_catalog_failure_at(cat, i)->name;
    const char *near = cfit_suggest(name, names, k);
    if (near)
        return cli_error("no catalog entry named '%s' (did you mean '%s'?)", name, near);
    return cli_error("no catalog entry named '%s' (see 'clusterfit catalog list')", name);
}

int cmd_catalog(int argc, char **argv)
{
    ctx c;
    memset(&c, 0, sizeof c);
    int rc = cli_parse(argc, argv, opts, on_opt, &c,
                       "clusterfit catalog list [gpus|models|fabrics|nodes|frameworks|prices|switches|storage|failures] | catalog show NAME|FILE",
                       "List the catalog entries clusterfit plans with (GPUs, models, fabrics, node types,\n"
                       "training frameworks, prices, switches, storage, failure rates), or show one entry with its source.\n"
                       "catalog show FILE shows a model file or a Hugging Face config.json as a model.\n"
                       "The catalog is embedded in the binary; --catalog FILE adds or overrides entries by name.");
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if (c.npos == 0)
        return cli_error("catalog: missing action: 'list' or 'show NAME'");
    if ((rc = cli_catalog_open(&c.cc)))
        return rc;
    const char *action = c.pos[0];
    if (strcmp(action, "list") == 0 && c.npos <= 2) {
        const char *kind = c.npos == 2 ? c.pos[1] : NULL;
        int any = 0;
        struct { const char *k; void (*fn)(const cfit_catalog *); } kinds[] = {
            {"gpus", list_gpus}, {"models", list_models}, {"fabrics", list_fabrics}, {"nodes", list_nodes},
            {"frameworks", list_frameworks}, {"prices", list_prices}, {"switches", list_switches},
            {"storage", list_storage}, {"failures", list_failures}};
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
            if (kind && strcmp(kind, kinds[i].k) != 0)
                continue;
            if (any)
                printf("\n");
            kinds[i].fn(c.cc.cat);
            any = 1;
        }
        if (!any)
            rc = cli_error("catalog list: unknown kind '%s' (gpus, models, fabrics, nodes, frameworks, prices, switches, storage or failures)", kind);
    } else if (strcmp(action, "show") == 0 && c.npos == 2) {
        rc = show(c.cc.cat, c.pos[1]);
    } else {
        rc = cli_error("catalog: usage: 'catalog list [gpus|models|fabrics|nodes|frameworks|prices|switches|storage|failures]' or 'catalog show NAME|FILE'");
    }
    cfit_catalog_free(c.cc.cat);
    return rc;
}
