/* cmd_plan.c - `clusterfit plan`: parse the job, run the search, print tables or JSON. */
#include "cli.h"
#include "emit_opt.h"
#include "base/json.h"
#include "clusterfit/plan.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    O_MODEL = 1, O_SEQ, O_GBS, O_TOKENS, O_PRECISION, O_GPU, O_GPUS, O_FABRIC, O_TP, O_PP, O_DP,
    O_CP, O_VP, O_MBS, O_ZERO, O_RECOMPUTE, O_SP, O_DAYS, O_TOP, O_GRAD, O_ATTN, O_FRAMEWORK, O_JSON, O_CATALOG, O_QUIET
};
enum { O_EMIT = 100 };   /* --emit: emit_opt.c */

static const cli_opt opts[] = {
    {"model", 0, "NAME|FILE", "model from the catalog or a JSON file (default llama3-70b)", O_MODEL},
    {"seq", 0, "N", "sequence length in tokens (default: the model's)", O_SEQ},
    {"gbs", 0, "N", "global batch in sequences (default: 4 Mi tokens, x2 per doubling beyond 100B params)", O_GBS},
    {"tokens", 0, "N", "tokens to train, K M B T = powers of 1000 (default 1T)", O_TOKENS},
    {"precision", 0, "bf16|fp8", "training precision of the GEMMs (default bf16)", O_PRECISION},
    {"gpu", 0, "NAME[,NAME...]", "GPU type(s) from the catalog (default: compare all)", O_GPU},
    {"gpus", 0, "N", "total GPUs (default: sized to meet --days)", O_GPUS},
    {"fabric", 0, "NAME", "scale-out fabric (default: the GPU's node type's)", O_FABRIC},
    {"tp", 0, "N", "tensor parallel size (default: searched)", O_TP},
    {"pp", 0, "N", "pipeline parallel size (default: searched)", O_PP},
    {"dp", 0, "N", "data parallel size (default: searched)", O_DP},
    {"cp", 0, "N", "context parallel size (default: searched)", O_CP},
    {"vp", 0, "N", "interleaved pipeline chunks per GPU (default: searched)", O_VP},
    {"mbs", 0, "N", "micro-batch size in sequences (default: searched)", O_MBS},
    {"zero", 0, "0..3", "ZeRO stage, 1 = distributed optimizer (default: searched)", O_ZERO},
    {"recompute", 0, "none|selective|full|block", "activation recomputation; block = full on the fewest layers that fit (default: searched)", O_RECOMPUTE},
    {"sp", 0, "on|off", "sequence parallelism (default: searched)", O_SP},
    {"days", 0, "D", "deadline in days used to size the GPU count (default 30)", O_DAYS},
    {"top", 0, "K", "plans to show (default 5)", O_TOP},
    {"grad-precision", 0, "fp32|bf16", "gradient precision: bf16 = 16 B/param with Adam (default), fp32 = 18", O_GRAD},
    {"framework", 0, "NAME", "training framework from the catalog (default megatron-core)", O_FRAMEWORK},
    {"attention", 0, "fused|unfused", "attention kernel (default: the framework's)", O_ATTN},
    {"json", 0, NULL, "print one JSON object (docs/json.md) instead of tables", O_JSON},
    {"catalog", 0, "FILE", "add or override catalog entries from FILE (repeatable)", O_CATALOG},
    {"quiet", 'q', NULL, "print only the plan table", O_QUIET},
    {"emit", 0, "KIND[:FILE][,...]", "launch config for the best plan: deepspeed, megatron, torchrun (repeatable)", O_EMIT},
    {NULL, 0, NULL, NULL, 0},
};

typedef struct plan_cli {
    cli_catalog cc;
    const char *model;
    const char *gpu_list;
    const char *fabric;
    const char *framework;
    cfit_plan_request req;
    cfit_model model_file;
    int json, quiet;
    int days_given;
    struct timespec t0;
    int progress_shown;
    cli_emit emit;
} plan_cli;

static int parse_layout_int(const char *name, const char *value, long max, int *out)
{
    long v;
    int rc = cli_int(name, value, 1, max, &v);
    if (!rc)
        *out = (int)v;
    return rc;
}

static int on_opt(void *vc, int id, const char *name, const char *value)
{
    plan_cli *c = vc;
    cfit_plan_request *r = &c->req;
    long v;
    int rc = 0;
    switch (id) {
    case -1: return cli_error("plan: unexpected argument '%s'", value);
    case O_MODEL: c->model = value; return 0;
    case O_GPU: c->gpu_list = value; return 0;
    case O_FABRIC: c->fabric = value; return 0;
    case O_FRAMEWORK: c->framework = value; return 0;
    case O_CATALOG: return cli_catalog_add(&c->cc, value);
    case O_JSON: c->json = 1; return 0;
    case O_QUIET: c->quiet = 1; return 0;
    case O_EMIT: return cli_emit_add(&c->emit, value);
    case O_SEQ: rc = cli_int(name, value, 1, 1 << 24, &v); r->seq_len = (int)v; return rc;
    case O_GBS: rc = cli_int(name, value, 1, 1L << 30, &v); r->global_batch = v; return rc;
    case O_GPUS: rc = cli_int(name, value, 1, 1L << 24, &v); r->gpus_total = v; return rc;
    case O_TOP: rc = cli_int(name, value, 1, 1000, &v); r->top = (int)v; return rc;
    case O_TOKENS: {
        uint64_t t;
        rc = cli_count(name, value, &t);
        r->tokens = (double)t;
        return rc;
    }
    case O_DAYS: c->days_given = 1; return cli_real(name, value, 1e-6, 1e6, &r->days);
    case O_TP: return parse_layout_int(name, value, 4096, &r->fixed.tp);
    case O_PP: return parse_layout_int(name, value, 4096, &r->fixed.pp);
    case O_DP: return parse_layout_int(name, value, 1L << 24, &r->fixed.dp);
    case O_CP: return parse_layout_int(name, value, 4096, &r->fixed.cp);
    case O_VP: return parse_layout_int(name, value, 4096, &r->fixed.vp);
    case O_MBS: return parse_layout_int(name, value, 1 << 20, &r->fixed.mbs);
    case O_ZERO: rc = cli_int(name, value, 0, 3, &v); r->fixed.zero = (int)v; return rc;
    case O_PRECISION:
        if (strcmp(value, "bf16") == 0) r->precision = CFIT_PREC_BF16;
        else if (strcmp(value, "fp8") == 0) r->precision = CFIT_PREC_FP8;
        else return cli_error("--precision: expected bf16 or fp8, got '%s'", value);
        return 0;
    case O_RECOMPUTE:
        for (int i = 0; i < CFIT_RECOMPUTE_COUNT; i++)
            if (strcmp(value, cfit_recompute_name((cfit_recompute)i)) == 0) {
                r->fixed.recompute = i;
                return 0;
            }
        return cli_error("--recompute: expected none, selective, full or block, got '%s'", value);
    case O_SP:
        if (strcmp(value, "on") == 0) r->fixed.sp = 1;
        else if (strcmp(value, "off") == 0) r->fixed.sp = 0;
        else return cli_error("--sp: expected on or off, got '%s'", value);
        return 0;
    case O_ATTN:
        if (strcmp(value, "fused") == 0) r->unfused_attention = 0;
        else if (strcmp(value, "unfused") == 0) r->unfused_attention = 1;
        else return cli_error("--attention: expected fused or unfused, got '%s'", value);
        return 0;
    case O_GRAD:
        if (strcmp(value, "fp32") == 0) r->grad_bytes = 4;
        else if (strcmp(value, "bf16") == 0) r->grad_bytes = 2;
        else return cli_error("--grad-precision: expected fp32 or bf16, got '%s'", value);
        return 0;
    }
    return 0;
}

static void progress(void *vc, double fraction)
{
    plan_cli *c = vc;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    double el = (double)(t.tv_sec - c->t0.tv_sec) + (double)(t.tv_nsec - c->t0.tv_nsec) * 1e-9;
    if (el < 1.0 || fraction < 0)
        return;
    fprintf(stderr, "\rsearching layouts: %3.0f%%", fraction * 100.0);
    c->progress_shown = 1;
}

/* ---- resolving names ---- */

static int resolve(plan_cli *c, const cfit_gpu ***gpus_out)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    const cfit_catalog *cat = c->cc.cat;
    const char *mname = c->model ? c->model : "llama3-70b";
    if (strstr(mname, ".json") || strchr(mname, '/')) {
        int rc = cfit_model_load_file(mname, &c->model_file, &d);
        if (rc)
            return cli_error_diag(&d, rc);
        c->req.model = &c->model_file;
    } else {
        c->req.model = cfit_catalog_model(cat, mname, &d);
        if (!c->req.model)
            return cli_error("--model: %s", d.msg);
    }
    if (c->fabric) {
        c->req.fabric = cfit_catalog_fabric(cat, c->fabric, &d);
        if (!c->req.fabric)
            return cli_error("--fabric: %s", d.msg);
        if (c->req.fabric->kind != CFIT_FABRIC_SCALEOUT)
            return cli_error("--fabric: '%s' is a scale-up link; name a scale-out fabric (clusterfit catalog list fabrics)",
                             c->fabric);
    }
    if (c->framework) {
        c->req.framework = cfit_catalog_framework(cat, c->framework, &d);
        if (!c->req.framework)
            return cli_error("--framework: %s", d.msg);
    }
    size_t n = cfit_catalog_gpu_count(cat);
    const cfit_gpu **gpus = calloc(n + 64, sizeof *gpus);
    if (!gpus)
        return cli_error("out of memory");
    size_t k = 0;
    if (!c->gpu_list) {
        for (size_t i = 0; i < n; i++) {
            const cfit_gpu *g = cfit_catalog_gpu_at(cat, i);
            if (g->peak_flops[c->req.precision] > 0)   /* fp8 comparison skips GPUs without it */
                gpus[k++] = g;
        }
    } else {
        char *list = strdup(c->gpu_list), *save = NULL;
        for (char *tok = list ? strtok_r(list, ",", &save) : NULL; tok && k < n + 64;
             tok = strtok_r(NULL, ",", &save)) {
            const cfit_gpu *g = cfit_catalog_gpu(cat, tok, &d);
            if (!g) {
                free(list);
                free(gpus);
                return cli_error("--gpu: %s", d.msg);
            }
            if (g->peak_flops[c->req.precision] <= 0) {
                free(list);
                free(gpus);
                return cli_error("--gpu: '%s' has no dense %s tensor rate; use --precision bf16", g->name,
                                 cfit_precision_name(c->req.precision));
            }
            gpus[k++] = g;
        }
        free(list);
        if (k == 0) {
            free(gpus);
            return cli_error("--gpu: empty list");
        }
    }
    c->req.gpus = gpus;
    c->req.ngpus = k;
    *gpus_out = gpus;
    return 0;
}

/* ---- JSON ---- */

/* The GPU count the request fixes: --gpus, or tp x pp x cp x dp when all four are given;
 * 0 when it is sized from the deadline. */
static long fixed_gpus(const cfit_plan_request *r)
{
    const cfit_layout *f = &r->fixed;
    if (r->gpus_total)
        return r->gpus_total;
    if (f->tp > 0 && f->pp > 0 && f->cp > 0 && f->dp > 0)
        return (long)f->tp * f->pp * f->cp * f->dp;
    return 0;
}

static void j_num(cfit__buf *b, const char *key, double v, int comma)
{
    cfit__buf_printf(b, "%s\"%s\": ", comma ? ", " : "", key);
    cfit__buf_json_number(b, v);
}

static void j_str(cfit__buf *b, const char *key, const char *v, int comma)
{
    cfit__buf_printf(b, "%s\"%s\": ", comma ? ", " : "", key);
    cfit__buf_json_string(b, v);
}

static void j_plan(cfit__buf *b, const cfit_plan *p)
{
    const cfit_layout *l = &p->layout;
    cfit__buf_puts(b, "{");
    j_str(b, "gpu", p->gpu->name, 0);
    j_num(b, "gpus", (double)p->gpus, 1);
    j_num(b, "nodes", (double)p->nodes, 1);
    j_str(b, "node", p->node->name, 1);
    j_str(b, "fabric", p->fabric->name, 1);
    j_num(b, "tp", l->tp, 1);
    j_num(b, "pp", l->pp, 1);
    j_num(b, "dp", l->dp, 1);
    j_num(b, "cp", l->cp, 1);
    j_num(b, "vp", l->vp, 1);
    j_num(b, "micro_batch", l->mbs, 1);
    j_num(b, "global_batch", (double)p->global_batch, 1);
    j_num(b, "grad_accum", (double)p->grad_accum, 1);
    j_num(b, "zero", l->zero, 1);
    j_str(b, "recompute", cfit_recompute_name((cfit_recompute)l->recompute), 1);
    j_num(b, "recompute_layers", p->recompute_layers, 1);
    cfit__buf_printf(b, ", \"sequence_parallel\": %s", l->sp ? "true" : "false");
    cfit__buf_printf(b, ", \"fits\": %s", p->fits ? "true" : "false");
    cfit__buf_puts(b, ", \"memory\": {");
    j_num(b, "weights_bytes", p->mem.weights_bytes, 0);
    j_num(b, "grads_bytes", p->mem.grads_bytes, 1);
    j_num(b, "optimizer_bytes", p->mem.optimizer_bytes, 1);
    j_num(b, "activations_bytes", p->mem.activations_bytes, 1);
    j_num(b, "other_bytes", p->mem.other_bytes, 1);
    j_num(b, "total_bytes", p->mem.total_bytes, 1);
    j_num(b, "capacity_bytes", p->mem.capacity_bytes, 1);
    j_num(b, "shortfall_bytes", p->fits ? 0.0 : p->mem.total_bytes - p->mem.capacity_bytes, 1);
    cfit__buf_puts(b, "}");
    j_num(b, "step_time_s", p->step_time_s, 1);
    cfit__buf_puts(b, ", \"breakdown_s\": {");
    j_num(b, "compute", p->br.compute_s, 0);
    j_num(b, "tp_comm", p->br.tp_comm_s, 1);
    j_num(b, "cp_comm", p->br.cp_comm_s, 1);
    j_num(b, "pp_comm", p->br.pp_comm_s, 1);
    j_num(b, "pp_bubble", p->br.pp_bubble_s, 1);
    j_num(b, "dp_comm", p->br.dp_comm_s, 1);
    j_num(b, "optimizer", p->br.optimizer_s, 1);
    j_num(b, "other", p->br.other_s, 1);
    cfit__buf_puts(b, "}, \"bound_s\": {");
    j_num(b, "compute", p->compute_bound_s, 0);
    j_num(b, "memory", p->memory_bound_s, 1);
    j_num(b, "communication", p->comm_exposed_s, 1);
    cfit__buf_puts(b, "}");
    j_num(b, "stage_layers_min", p->stage_layers_min, 1);
    j_num(b, "stage_layers_max", p->stage_layers_max, 1);
    j_num(b, "stage_imbalance", p->stage_imbalance, 1);
    j_num(b, "tokens_per_s", p->tokens_per_s, 1);
    j_num(b, "tokens_per_s_per_gpu", p->tokens_per_s_per_gpu, 1);
    j_num(b, "model_tflops_per_gpu", p->model_tflops_per_gpu, 1);
    j_num(b, "hardware_tflops_per_gpu", p->hardware_tflops_per_gpu, 1);
    j_num(b, "mfu", p->mfu, 1);
    j_num(b, "hfu", p->hfu, 1);
    j_num(b, "time_to_train_s", p->time_to_train_s, 1);
    cfit__buf_puts(b, "}");
}

static int print_json(const plan_cli *c, const cfit_plan_result *res, int sizing)
{
    const cfit_plan_request *r = &c->req;
    const cfit_model *m = r->model;
    cfit__buf b;
    cfit__buf_init(&b);
    cfit__buf_puts(&b, "{");
    j_str(&b, "clusterfit_version", CFIT_VERSION, 0);
    cfit__buf_puts(&b, ", \"workload\": {");
    j_str(&b, "model", m->name, 0);
    j_num(&b, "params", cfit_model_params(m), 1);
    j_num(&b, "seq_len", res->seq_len, 1);
    j_num(&b, "global_batch", (double)res->global_batch, 1);
    j_num(&b, "tokens_per_step", (double)res->global_batch * res->seq_len, 1);
    j_num(&b, "tokens", r->tokens, 1);
    j_str(&b, "precision", cfit_precision_name(r->precision), 1);
    const cfit_framework *fw = r->framework ? r->framework : cfit_catalog_framework(r->catalog, "megatron-core", NULL);
    int unfused = r->unfused_attention >= 0 ? r->unfused_attention : (fw && fw->unfused_attention);
    j_str(&b, "framework", fw ? fw->name : "megatron-core", 1);
    j_str(&b, "attention", unfused ? "unfused" : "fused", 1);
    j_num(&b, "model_flops_per_token", cfit_model_flops_per_token(m, res->seq_len), 1);
    cfit__buf_puts(&b, "}, \"goal\": {");
    j_str(&b, "mode", sizing ? "deadline" : "fixed_gpus", 0);
    j_num(&b, "days", sizing ? r->days : 0.0, 1);
    j_num(&b, "gpus", (double)fixed_gpus(r), 1);
    cfit__buf_puts(&b, "}, \"search\": {");
    j_num(&b, "evaluated", (double)res->evaluated, 0);
    j_num(&b, "feasible", (double)res->feasible, 1);
    j_num(&b, "seconds", res->seconds, 1);
    cfit__buf_puts(&b, "}, \"plans\": [");
    for (size_t i = 0; i < res->nplans; i++) {
        if (i)
            cfit__buf_puts(&b, ", ");
        j_plan(&b, &res->plans[i]);
    }
    cfit__buf_puts(&b, "], \"per_gpu\": [");
    for (size_t i = 0; i < res->ngpu; i++) {
        const cfit_gpu_result *g = &res->per_gpu[i];
        cfit__buf_puts(&b, i ? ", {" : "{");
        j_str(&b, "gpu", g->gpu->name, 0);
        cfit__buf_printf(&b, ", \"found\": %s, \"meets_deadline\": %s", g->found ? "true" : "false",
                         g->meets_deadline ? "true" : "false");
        if (g->found) {
            cfit__buf_puts(&b, ", \"best\": ");
            j_plan(&b, &g->best);
        } else if (g->has_closest) {
            cfit__buf_puts(&b, ", \"closest\": ");
            j_plan(&b, &g->closest);
        }
        cfit__buf_puts(&b, "}");
    }
    cfit__buf_puts(&b, "]}\n");
    int ok = cfit__buf_ok(&b);
    if (ok)
        fputs(b.data, stdout);
    cfit__buf_fini(&b);
    return ok ? 0 : cli_error("out of memory");
}

/* ---- tables ---- */

/* "full", or "block:K" with the layers per stage that block recomputation reruns. */
static const char *recompute_str(char *buf, size_t n, const cfit_plan *p)
{
    if (p->layout.recompute == CFIT_RECOMPUTE_BLOCK)
        snprintf(buf, n, "block:%d", p->recompute_layers);
    else
        snprintf(buf, n, "%s", cfit_recompute_name((cfit_recompute)p->layout.recompute));
    return buf;
}

static void layout_str(char *buf, size_t n, const cfit_plan *p)
{
    const cfit_layout *l = &p->layout;
    char rec[32];
    snprintf(buf, n, "%2d %3d %5d %2d %2d %3d %4d %-9s %-3s", l->tp, l->pp, l->dp, l->cp, l->vp, l->mbs,
             l->zero, recompute_str(rec, sizeof rec, p), l->sp ? "on" : "off");
}

static void plan_header(void)
{
    printf("%-13s %6s %5s  %2s %3s %5s %2s %2s %3s %4s %-9s %-3s %8s %9s %10s %5s %9s\n", "gpu", "GPUs",
           "nodes", "TP", "PP", "DP", "CP", "VP", "MBS", "ZeRO", "recompute", "SP", "mem/GPU", "step",
           "tok/s/GPU", "MFU", "train");
    printf("%-13s %6s %5s  %2s %3s %5s %2s %2s %3s %4s %-9s %-3s %8s %9s %10s %5s %9s\n", "", "", "",
           "", "", "", "", "", "seq", "", "", "", "GB", "s", "tokens/s", "%", "days");
}

static void plan_row(const cfit_plan *p, double tokens)
{
    char lay[96];
    layout_str(lay, sizeof lay, p);
    printf("%-13s %6ld %5ld  %s %8.1f %9.*f %10.0f %5.1f ", p->gpu->name, p->gpus, p->nodes, lay,
           p->mem.total_bytes / 1e9, p->step_time_s >= 1000.0 ? 0 : 3, p->step_time_s,
           p->tokens_per_s_per_gpu, p->mfu * 100.0);
    if (tokens > 0)
        printf("%9.1f", p->time_to_train_s / 86400.0);
    else
        printf("%9s", "-");
    printf("%s\n", p->fits ? "" : "  (does not fit)");
}

static const char *fix_hint(const cfit_plan *p)
{
    const cfit_memory *m = &p->mem;
    double states = m->weights_bytes + m->grads_bytes + m->optimizer_bytes;
    int every_layer = p->layout.recompute == CFIT_RECOMPUTE_FULL ||
                      (p->layout.recompute == CFIT_RECOMPUTE_BLOCK && p->recompute_layers >= p->stage_layers_max);
    if (m->activations_bytes > states) {
        if (!every_layer)
            return "activations dominate: --recompute full, a smaller --mbs, or more --tp/--cp would shrink them";
        return "activations dominate even with full recomputation: more --tp, --cp or --pp, or a GPU with more memory";
    }
    if (p->layout.zero < 3 && p->layout.pp == 1 && p->layout.dp > 1)
        return "weights, gradients and optimizer states dominate: --zero 3 shards them over the data-parallel GPUs";
    if (p->layout.zero < 1 && p->layout.dp > 1)
        return "optimizer states dominate: --zero 1 shards them over the data-parallel GPUs";
    return "weights, gradients and optimizer states dominate: more GPUs (--gpus), more --tp/--pp, or a GPU with more memory";
}

static void print_details(const cfit_plan *p, double tokens)
{
    const cfit_memory *m = &p->mem;
    const cfit_breakdown *br = &p->br;
    double st = p->step_time_s;
    char rec[32];
    printf("\nbest plan: %ld x %s on %ld x %s nodes, scale-out %s\n", p->gpus, p->gpu->name, p->nodes,
           p->node->name, p->fabric->name);
    printf("  layout: tp %d, pp %d (layers per stage %d..%d, imbalance %.1f%%), dp %d, cp %d, vp %d, "
           "micro-batch %d x %ld accumulation steps, ZeRO-%d, recompute %s, sp %s\n",
           p->layout.tp, p->layout.pp, p->stage_layers_min, p->stage_layers_max, p->stage_imbalance * 100,
           p->layout.dp, p->layout.cp, p->layout.vp, p->layout.mbs, p->grad_accum, p->layout.zero,
           recompute_str(rec, sizeof rec, p), p->layout.sp ? "on" : "off");
    printf("\n%-34s %10s  %s\n", "memory per GPU (busiest stage)", "GB", "source");
    printf("  %-32s %10.2f  %s\n", "weights", m->weights_bytes / 1e9, "2 B/param (+1 fp8 copy), / dp at ZeRO-3");
    printf("  %-32s %10.2f  %s\n", "gradients", m->grads_bytes / 1e9, "--grad-precision B/param, / dp at ZeRO-2+");
    printf("  %-32s %10.2f  %s\n", "optimizer states", m->optimizer_bytes / 1e9, "12 B/param Adam, / dp at ZeRO-1+");
    printf("  %-32s %10.2f  %s\n", "activations", m->activations_bytes / 1e9, "Korthikanti et al. 2022, docs/model.md");
    printf("  %-32s %10.2f  %s\n", "other (runtime, fragmentation)", m->other_bytes / 1e9, "catalog calibration");
    printf("  %-32s %10.2f  of %.1f GB (%s)%s\n", "total", m->total_bytes / 1e9, m->capacity_bytes / 1e9,
           p->gpu->name, p->fits ? "" : "  DOES NOT FIT");
    printf("\n%-34s %10s %7s\n", "step time", "s", "share");
    struct { const char *k; double v; } rows[] = {
        {"compute (GEMM, attention, element-wise)", br->compute_s}, {"tensor-parallel comm", br->tp_comm_s},
        {"context-parallel comm", br->cp_comm_s}, {"pipeline send/recv", br->pp_comm_s},
        {"pipeline bubble", br->pp_bubble_s}, {"data-parallel comm (exposed)", br->dp_comm_s},
        {"optimizer step", br->optimizer_s}, {"kernel overhead", br->other_s}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        printf("  %-40.40s %10.4f %6.1f%%\n", rows[i].k, rows[i].v, st > 0 ? 100 * rows[i].v / st : 0);
    printf("  %-40s %10.4f\n", "total", st);
    printf("  bound: compute %.0f%%, memory bandwidth %.0f%%, communication %.0f%%, pipeline bubble %.0f%%\n",
           100 * p->compute_bound_s / st, 100 * p->memory_bound_s / st, 100 * p->comm_exposed_s / st,
           100 * br->pp_bubble_s / st);
    printf("\n  throughput: %.0f tokens/s (%.0f per GPU), %.0f model TFLOP/s per GPU (MFU %.1f%%), "
           "%.0f hardware TFLOP/s (HFU %.1f%%)\n",
           p->tokens_per_s, p->tokens_per_s_per_gpu, p->model_tflops_per_gpu, p->mfu * 100,
           p->hardware_tflops_per_gpu, p->hfu * 100);
    if (tokens > 0)
        printf("  time to train: %.1f days (%.3g GPU-hours)\n", p->time_to_train_s / 86400.0,
               p->time_to_train_s * p->gpus / 3600.0);
    if (!p->fits)
        printf("  to fit: %s\n", fix_hint(p));
}

static int print_tables(const plan_cli *c, const cfit_plan_result *res, int sizing)
{
    const cfit_plan_request *r = &c->req;
    const cfit_model *m = r->model;
    char buf[3][32];
    if (!c->quiet) {
        printf("workload: %s (%s params), %s tokens, seq %d, global batch %ld sequences (%s tokens), %s\n",
               m->name, fmt_count(buf[0], 32, cfit_model_params(m)),
               r->tokens > 0 ? fmt_count(buf[1], 32, r->tokens) : "-", res->seq_len, res->global_batch,
               fmt_count(buf[2], 32, (double)res->global_batch * res->seq_len), cfit_precision_name(r->precision));
        if (sizing)
            printf("goal: the fewest GPUs of each type that train within %g day(s); ranked by GPU-hours\n", r->days);
        else
            printf("goal: the fastest layout on %ld GPUs; ranked by tokens/s\n", fixed_gpus(r));
        printf("\n");
    }
    if (res->ngpu > 1 && !c->quiet) {
        printf("comparison: the best plan of each GPU type\n");
        int rows = 0;
        for (size_t i = 0; i < res->ngpu; i++)
            rows += res->per_gpu[i].found && (!sizing || res->per_gpu[i].meets_deadline);
        if (rows)
            plan_header();
        for (size_t i = 0; i < res->ngpu; i++) {
            const cfit_gpu_result *g = &res->per_gpu[i];
            if (g->found && (!sizing || g->meets_deadline))
                plan_row(&g->best, r->tokens);
        }
        for (size_t i = 0; i < res->ngpu; i++) {
            const cfit_gpu_result *g = &res->per_gpu[i];
            if (g->found && sizing && !g->meets_deadline)
                printf("%-13s no GPU count up to %ld nodes trains within %g day(s) (best %.1f days)\n",
                       g->gpu->name, 65536L, r->days, g->best.time_to_train_s / 86400.0);
            else if (!g->found && g->has_closest)
                printf("%-13s nothing fits: the closest layout needs %.1f GB per GPU, %.1f GB more than %.0f GB\n",
                       g->gpu->name, g->closest.mem.total_bytes / 1e9,
                       (g->closest.mem.total_bytes - g->closest.mem.capacity_bytes) / 1e9,
                       g->closest.mem.capacity_bytes / 1e9);
            else if (!g->found)
                printf("%-13s no valid layout (check the batch and parallel sizes)\n", g->gpu->name);
        }
        printf("\n");
    }
    if (res->nplans > 0) {
        printf("top %zu plan%s\n", res->nplans, res->nplans == 1 ? "" : "s");
        plan_header();
        for (size_t i = 0; i < res->nplans; i++)
            plan_row(&res->plans[i], r->tokens);
        if (!c->quiet)
            print_details(&res->plans[0], r->tokens);
    }
    if (!c->quiet) {
        printf("\nsearch: %llu layout%s evaluated, %llu fit in memory, %.2f s\n",
               (unsigned long long)res->evaluated, res->evaluated == 1 ? "" : "s",
               (unsigned long long)res->feasible, res->seconds);
        printf("sources: GPU, node and fabric figures from the catalog ('clusterfit catalog show NAME'); "
               "formulas in docs/model.md\n");
    }
    return 0;
}

/* When no GPU type has a fitting plan, explain the closest one and exit 2. */
static int nothing_fits(const cfit_plan_request *r, const cfit_plan_result *res)
{
    const cfit_plan *best = NULL;
    for (size_t i = 0; i < res->ngpu; i++) {
        const cfit_gpu_result *g = &res->per_gpu[i];
        if (g->has_closest && (!best || g->closest.mem.total_bytes - g->closest.mem.capacity_bytes <
                                            best->mem.total_bytes - best->mem.capacity_bytes))
            best = &g->closest;
    }
    if (!best) {
        long n = fixed_gpus(r);
        if (n)
            return cli_error("no valid layout on %ld GPUs: tp x pp x cp x dp must equal the GPU count with dp x "
                             "micro-batch dividing the global batch of %ld sequences, tp within the scale-up "
                             "domain and the fixed sizes as given; try a --gbs divisible by more of the GPU "
                             "count, or fix fewer dimensions", n, res->global_batch);
        return cli_error("no valid layout at any GPU count: the global batch of %ld sequences and the fixed "
                         "parallel sizes admit none", res->global_batch);
    }
    char rec[32];
    return cli_error("nothing fits: the closest layout (%ld x %s, tp %d pp %d dp %d cp %d mbs %d ZeRO-%d, "
                     "recompute %s) needs %.1f GB per GPU, %.1f GB more than the %.0f GB available; %s",
                     best->gpus, best->gpu->name, best->layout.tp, best->layout.pp, best->layout.dp,
                     best->layout.cp, best->layout.mbs, best->layout.zero,
                     recompute_str(rec, sizeof rec, best), best->mem.total_bytes / 1e9,
                     (best->mem.total_bytes - best->mem.capacity_bytes) / 1e9, best->mem.capacity_bytes / 1e9,
                     fix_hint(best));
}

int cmd_plan(int argc, char **argv)
{
    plan_cli c;
    memset(&c, 0, sizeof c);
    cfit_plan_request_init(&c.req);
    c.req.tokens = 1e12;
    int rc = cli_parse(argc, argv, opts, on_opt, &c, "clusterfit plan [options]",
                       "Plan the GPU cluster and parallel layout for training a transformer: memory per GPU,\n"
                       "step time, MFU and time to train.  With no options it plans llama3-70b on 1T tokens\n"
                       "within 30 days on every catalog GPU type.  Layout options fix a dimension; the rest\n"
                       "is searched.  With every dimension fixed the layout is evaluated as given.");
    if (!rc)
        rc = cli_emit_validate(&c.emit, c.json);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if (c.req.gpus_total > 0 && c.days_given)
        return cli_error("--days sizes the GPU count; it cannot be combined with --gpus");
    if ((rc = cli_catalog_open(&c.cc)))
        return rc;
    const cfit_gpu **gpus = NULL;
    rc = resolve(&c, &gpus);
    if (rc) {
        cfit_catalog_free(c.cc.cat);
        return rc;
    }
    c.req.catalog = c.cc.cat;
    if (isatty(STDERR_FILENO) && !c.json) {
        c.req.progress = progress;
        c.req.progress_ctx = &c;
    }
    clock_gettime(CLOCK_MONOTONIC, &c.t0);
    cfit_plan_result res;
    cfit_diag d;
    cfit_diag_clear(&d);
    int err = cfit_plan_search(&c.req, &res, &d);
    if (c.progress_shown)
        fprintf(stderr, "\r%30s\r", "");
    if (err) {
        rc = cli_error_diag(&d, err);
    } else {
        const cfit_layout *f = &c.req.fixed;
        int sizing = c.req.gpus_total == 0 && !(f->tp > 0 && f->pp > 0 && f->cp > 0 && f->dp > 0);
        int any_plan = res.nplans > 0;
        for (size_t i = 0; i < res.ngpu; i++)
            any_plan |= res.per_gpu[i].found;
        if (c.json)
            rc = print_json(&c, &res, sizing);
        else if (any_plan)
            rc = print_tables(&c, &res, sizing);
        if (!rc && !any_plan)
            rc = nothing_fits(&c.req, &res);
        else if (!rc && res.nplans == 0) {
            char tok[32];
            rc = cli_error("no GPU type trains %s tokens within %g day(s) at up to 65536 nodes; "
                           "raise --days or lower --tokens", fmt_count(tok, sizeof tok, c.req.tokens),
                           c.req.days);
        }
        if (!rc && c.emit.n)
            rc = cli_emit_write(&c.emit, &c.req, &res);
        cfit_plan_result_fini(&res);
    }
    free(gpus);
    cfit_catalog_free(c.cc.cat);
    return rc;
}
