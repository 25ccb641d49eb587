/* cmd_plan.c - `clusterfit plan`: parse the job, run the search, then print tables (plan_text.c)
 * or JSON (plan_json.c), the report, launch configs and the bill of materials. */
#include "plan_cli.h"
#include "clusterfit/schedule.h"
#include "clusterfit/topo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    O_MODEL = 1, O_SEQ, O_GBS, O_TOKENS, O_PRECISION, O_GPU, O_GPUS, O_FABRIC, O_TP, O_PP, O_DP,
    O_CP, O_VP, O_MBS, O_ZERO, O_RECOMPUTE, O_SP, O_DAYS, O_TOP, O_GRAD, O_ATTN, O_FRAMEWORK, O_JSON, O_CATALOG, O_QUIET,
    O_BUDGET, O_BASIS, O_PRICE, O_TOPOLOGY, O_MTBF, O_CKPT_EVERY, O_RESTART, O_EP, O_ETP, O_MOE_IMB, O_MOE_OVERLAP,
    O_UTIL, O_GRAPHS, O_MTP
};
enum { O_EMIT = 100 };          /* --emit: emit_opt.c */
enum { O_BOM_BASE = 200 };      /* --bom, --network and their options: plan_bom.c (O_BOM_BASE + CLI_BOM_*) */
enum { O_CALIBRATION = 300 };   /* --calibration FILE: a bench --json file or nccl-tests log (calibration.h) */
enum { O_REPORT = 400 };        /* --report FILE.html: plan_report.c */
enum { O_OFFLOAD = 500, O_FINETUNE, O_LORA_RANK, O_OFFLOAD_MODULES };   /* host-memory offload and fine-tuning (offload.h) */
enum { O_SCHEDULE = 600 };      /* --schedule NAME: a pipeline schedule (schedule.h) */

static const cli_opt opts[] = {
    {"model", 0, "NAME|FILE", "model from the catalog, a JSON model file or a Hugging Face config.json; - reads stdin (default llama3-70b)", O_MODEL},
    {"seq", 0, "N", "sequence length in tokens (default: the model's)", O_SEQ},
    {"gbs", 0, "N", "global batch in sequences (default: 4 Mi tokens, x2 per doubling beyond 100B params)", O_GBS},
    {"tokens", 0, "N", "tokens to train, K M B T = powers of 1000 (default 1T)", O_TOKENS},
    {"precision", 0, "bf16|fp8", "training precision of the GEMMs (default bf16)", O_PRECISION},
    {"gpu", 0, "NAME[,NAME...]", "GPU type(s) from the catalog (default: compare all)", O_GPU},
    {"gpus", 0, "N", "total GPUs (default: sized to meet --days)", O_GPUS},
    {"fabric", 0, "NAME", "scale-out fabric (default: the GPU's node type's)", O_FABRIC},
    {"calibration", 0, "FILE", "measured fabric bandwidth and latency from a `clusterfit bench ... --json` file\n"
                               "                                       or an nccl-tests log (all_reduce_perf, all_gather_perf, ...; told\n"
                               "                                       by content; - = stdin) run across hosts, instead of the catalog's (docs/plan.md)", O_CALIBRATION},
    {"topology", 0, "SPEC", "simulate cross-node DP/TP all-reduces, PP sends and CP exchanges on this topology\n"
                            "                                       (sim's SPEC, e.g. fattree:k=16,oversub=2; docs/plan.md)", O_TOPOLOGY},
    {"tp", 0, "N", "tensor parallel size (default: searched)", O_TP},
    {"pp", 0, "N", "pipeline parallel size (default: searched)", O_PP},
    {"dp", 0, "N", "data parallel size (default: searched)", O_DP},
    {"cp", 0, "N", "context parallel size (default: searched)", O_CP},
    {"vp", 0, "N", "model chunks per GPU: interleaved 1F1B's depth; 2 for zb-v, dualpipe(v) (default: searched)", O_VP},
    {"schedule", 0, "NAME", "pipeline schedule: 1f1b, interleaved, zb-h1, zb-v, dualpipe, dualpipev, zb-h2,\n"
                            "                                       interleaved-zb (torchtitan's InterleavedZeroBubble)\n"
                            "                                       (default: searched among the framework's; docs/plan.md)", O_SCHEDULE},
    {"mbs", 0, "N", "micro-batch size in sequences (default: searched)", O_MBS},
    {"zero", 0, "0..3", "ZeRO stage, 1 = distributed optimizer (default: searched)", O_ZERO},
    {"recompute", 0, "MODE|modules:LIST", "activation recomputation: none, selective, full, block or experts;\n"
                   "                                       block = full on the fewest layers that fit; experts = an MoE\n"
                   "                                       model's expert MLPs; modules:LIST = Megatron's --recompute-modules\n"
                   "                                       (core_attn, moe_act, layernorm, mla_up_proj, mlp, moe,\n"
                   "                                       shared_experts; never searched) (default: searched)", O_RECOMPUTE},
    {"sp", 0, "on|off", "sequence parallelism (default: searched)", O_SP},
    {"ep", 0, "N", "expert parallel size of an MoE model's expert layers, folded into tp x cp x dp\n"
                   "                                       (default: searched; docs/plan.md)", O_EP},
    {"etp", 0, "N", "expert tensor parallel size of an MoE model (default: searched, at most --tp)", O_ETP},
    {"moe-imbalance", 0, "X", "busiest expert's tokens over the mean, >= 1 (default: the framework's; docs/model.md)", O_MOE_IMB},
    {"moe-overlap", 0, "on|off", "overlap the expert all-to-all with another micro-batch's compute (default: the framework's)", O_MOE_OVERLAP},
    {"mtp", 0, "N", "multi-token-prediction modules trained after the last layer, 0-16 (default: the model's,\n"
                    "                                       deepseek-v3 1; docs/model.md)", O_MTP},
    {"days", 0, "D", "deadline in days used to size the GPU count (default 30, none with --budget)", O_DAYS},
    {"budget", 0, "USD", "size each GPU type to the fastest plan costing at most USD, K M B = powers of 1000 (docs/sizing.md)", O_BUDGET},
    {"cost-basis", 0, "rent|reserved|spot|own", "cost that --budget bounds and sizing ranks by (default rent = cloud on-demand)", O_BASIS},
    {"price", 0, "KEY=VALUE", "override a price from the catalog, e.g. node.h100-sxm=300000 (repeatable)", O_PRICE},
    {"utilisation", 0, "U", "expected busy fraction of an owned cluster, in (0, 1] (default 1): the run carries\n"
                            "                                       the idle share of its amortisation, maintenance and colocation", O_UTIL},
    {"top", 0, "K", "plans to show (default 5)", O_TOP},
    {"grad-precision", 0, "fp32|bf16", "gradient precision: bf16 = 16 B/param with Adam (default), fp32 = 18", O_GRAD},
    {"framework", 0, "NAME", "training framework from the catalog (default megatron-core)", O_FRAMEWORK},
    {"attention", 0, "fused|unfused", "attention kernel (default: the framework's)", O_ATTN},
    {"cuda-graphs", 0, "none|scoped|full", "CUDA graphs the run replays: scoped = Transformer Engine's attention, router and\n"
                                           "                                       preprocessing graphs, full = the whole iteration (default none; docs/model.md)", O_GRAPHS},
    {"json", 0, NULL, "print one JSON object (docs/json.md) instead of tables", O_JSON},
    {"catalog", 0, "FILE", "add or override catalog entries from FILE (repeatable; - reads stdin)", O_CATALOG},
    {"quiet", 'q', NULL, "print only the plan table", O_QUIET},
    {"emit", 0, "KIND[:FILE][,...]", "launch config for the best plan: deepspeed, megatron, torchrun (repeatable; FILE - = stdout, no header)", O_EMIT},
    {"bom", 0, NULL, "bill of materials of the best plan: NICs, fat-tree switches, cables, optics, storage, capex", O_BOM_BASE + CLI_BOM_FLAG},
    {"network", 0, NULL, "rank fabrics x NICs x oversubscription by the run's total cost (network + GPU time); recommend one", O_BOM_BASE + CLI_BOM_NETWORK},
    {"tiers", 0, "2|3", "switch tiers of the fat-tree (default 2; raised to 3 when two cannot reach)", O_BOM_BASE + CLI_BOM_TIERS},
    {"oversub", 0, "N", "leaf downlinks per uplink, 1 = non-blocking (default 1); divides inter-node bandwidth", O_BOM_BASE + CLI_BOM_OVERSUB},
    {"comm-threshold", 0, "PCT", NULL, O_BOM_BASE + CLI_BOM_GONE_THRESHOLD},   /* removed: says so (not in --help) */
    {"checkpoint-window", 0, "TIME", "time to write one checkpoint, sizes storage write rate (default 5m)", O_BOM_BASE + CLI_BOM_WINDOW},
    {"mtbf", 0, "TIME", "time between job interruptions of one GPU, e.g. 50000h; the job's is this / GPUs\n"
                        "                                       (default: the catalog's failure rates; docs/model.md)", O_MTBF},
    {"checkpoint-every", 0, "TIME", "compute time between checkpoints (default: Daly's optimum for the MTBI and write time)", O_CKPT_EVERY},
    {"restart-time", 0, "TIME", "time from an interruption to training again (default: detection and rescheduling + reading the checkpoint)", O_RESTART},
    {"offload", 0, "none|LIST", "keep in host memory a comma list of: optimizer (ZeRO-Offload: Adam on the CPU), params\n"
                                "                                       (ZeRO-Infinity / FSDP CPU offload, ZeRO-3), activations; costed on the node's\n"
                                "                                       host link (PCIe, Grace's NVLink-C2C) and host memory; optimizer:nvme and\n"
                                "                                       params:nvme on the node's local NVMe array (ZeRO-Infinity) (default: none,\n"
                                "                                       searched when nothing fits)", O_OFFLOAD},
    {"offload-modules", 0, "none|LIST", "Megatron-Core's fine-grained activation offloading: the inputs of a comma list of\n"
                                        "                                       attn_norm, qkv_linear, core_attn, attn_proj, mlp_norm, expert_fc1, moe_act,\n"
                                        "                                       fused_group_mlp go to host memory (default: none; never searched)", O_OFFLOAD_MODULES},
    {"finetune", 0, "full|lora|qlora", "fine-tune all weights, LoRA adapters on frozen bf16 weights or QLoRA on 4-bit\n"
                                       "                                       NF4 weights (default: pre-training; docs/model.md)", O_FINETUNE},
    {"lora-rank", 0, "R", "LoRA adapter rank with --finetune lora or qlora (default 16)", O_LORA_RANK},
    {"report", 0, "FILE.html", "also write a self-contained HTML report with charts (docs/report.md)", O_REPORT},
    {NULL, 0, NULL, NULL, 0},
};

static const cli_name precisions[] = {{"bf16", CFIT_PREC_BF16}, {"fp8", CFIT_PREC_FP8}, {NULL, 0}};
static const cli_name on_off[] = {{"on", 1}, {"off", 0}, {NULL, 0}};
static const cli_name attentions[] = {{"fused", 0}, {"unfused", 1}, {NULL, 0}};
static const cli_name grad_bytes[] = {{"fp32", 4}, {"bf16", 2}, {NULL, 0}};   /* bytes per gradient */

static const char *recompute_name(int i)
{
    return cfit_recompute_name((cfit_recompute)i);
}

/* --recompute: a mode's name, or modules:LIST with Megatron-Core's submodule names. */
static int parse_recompute(cfit_plan_request *r, const char *value)
{
    static const char modules[] = "modules:";
    if (strncmp(value, modules, sizeof modules - 1) == 0) {
        unsigned mask;
        size_t at;
        const char *list = value + sizeof modules - 1;
        if (cfit_recompute_modules_parse(list, &mask, &at)) {
            char names[160] = "";
            for (int i = 0; i < CFIT_RECMOD_COUNT; i++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                         cfit_recompute_module_name(i));
            size_t n = strcspn(list + at, ",");
            return cli_error("--recompute: unknown module '%.*s' in '%s' (modules: %s)", (int)n, list + at, value, names);
        }
        r->fixed.recompute = CFIT_RECOMPUTE_MODULES;
        r->fixed.recompute_modules = (int)mask;
        return 0;
    }
    for (int i = 0; i < CFIT_RECOMPUTE_MODULES; i++)
        if (strcmp(value, recompute_name(i)) == 0) {
            r->fixed.recompute = i;
            r->fixed.recompute_modules = 0;
            return 0;
        }
    return cli_error("--recompute: expected none, selective, full, block, experts or modules:LIST, got '%s'", value);
}

static const char *graphs_name(int i)
{
    return cfit_cuda_graphs_name((cfit_cuda_graphs)i);
}

static const char *basis_name(int i)
{
    return cfit_cost_basis_name((cfit_cost_basis)i);
}

/* The options whose values are stored as given (cli_bind), and the CLI_GIVEN marks of --days and
 * --budget (the handler parses the budget); on_opt has the rest. */
static const cli_bind binds[] = {
    CLI_STRING(O_MODEL, plan_cli, model),
    CLI_STRING(O_GPU, plan_cli, gpu_list),
    CLI_STRING(O_FABRIC, plan_cli, fabric),
    CLI_STRING(O_TOPOLOGY, plan_cli, topology),
    CLI_STRING(O_CALIBRATION, plan_cli, calibration_file),
    CLI_STRING(O_REPORT, plan_cli, report),
    CLI_STRING(O_FRAMEWORK, plan_cli, framework),
    CLI_FLAG(O_JSON, plan_cli, json),
    CLI_FLAG(O_QUIET, plan_cli, quiet),
    CLI_INT(O_SEQ, plan_cli, req.seq_len, 1, 1 << 24),
    CLI_INT(O_GBS, plan_cli, req.global_batch, 1, 1L << 30),
    CLI_INT(O_GPUS, plan_cli, req.gpus_total, 1, 1L << 24),
    CLI_INT(O_TOP, plan_cli, req.top, 1, 1000),
    CLI_COUNT(O_TOKENS, plan_cli, req.tokens),
    CLI_INT(O_TP, plan_cli, req.fixed.tp, 1, 4096),
    CLI_INT(O_PP, plan_cli, req.fixed.pp, 1, 4096),
    CLI_INT(O_DP, plan_cli, req.fixed.dp, 1, 1L << 24),
    CLI_INT(O_CP, plan_cli, req.fixed.cp, 1, 4096),
    CLI_INT(O_VP, plan_cli, req.fixed.vp, 1, 4096),
    CLI_INT(O_MBS, plan_cli, req.fixed.mbs, 1, 1 << 20),
    CLI_INT(O_EP, plan_cli, req.fixed.ep, 1, 1 << 16),
    CLI_INT(O_ETP, plan_cli, req.fixed.etp, 1, 4096),
    CLI_INT(O_ZERO, plan_cli, req.fixed.zero, 0, 3),
    CLI_REAL(O_MOE_IMB, plan_cli, req.moe_imbalance, 1.0, 64.0),
    CLI_INT(O_MTP, plan_cli, mtp, 0, CFIT_MTP_LAYERS_MAX),
    CLI_ENUM(O_PRECISION, plan_cli, req.precision, precisions),
    CLI_ENUM(O_SP, plan_cli, req.fixed.sp, on_off),
    CLI_ENUM(O_MOE_OVERLAP, plan_cli, req.moe_a2a_overlap, on_off),
    CLI_ENUM(O_ATTN, plan_cli, req.unfused_attention, attentions),
    CLI_ENUM(O_GRAD, plan_cli, req.grad_bytes, grad_bytes),
    CLI_NAMED(O_GRAPHS, plan_cli, req.cuda_graphs, graphs_name, CFIT_GRAPHS_COUNT),
    CLI_NAMED(O_BASIS, plan_cli, req.cost_basis, basis_name, CFIT_BASIS_COUNT),
    CLI_REAL(O_DAYS, plan_cli, req.days, 1e-6, 1e6),
    CLI_GIVEN(O_DAYS, plan_cli, days_given),
    CLI_GIVEN(O_BUDGET, plan_cli, budget_given),   /* its value: on_opt */
    {.id = 0},
};

/* --mtbf, --checkpoint-every, --restart-time: a positive time with a unit, at most 100 years. */
static int parse_goodput_time(const char *name, const char *value, double *out_s)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    if (value[0] == '-')
        return cli_error("--%s: %s is negative; give a positive time such as 30m or 50000h", name, value);
    if (cfit_parse_time(value, out_s, &d))
        return cli_error("--%s: %s", name, d.msg);
    if (!(*out_s > 0))
        return cli_error("--%s: %s is zero; give a positive time such as 30m or 50000h", name, value);
    if (*out_s > 100 * 365.25 * 86400.0)
        return cli_error("--%s: %s is out of range (at most 100 years)", name, value);
    return 0;
}

static int on_opt(void *vc, int id, const char *name, const char *value)
{
    plan_cli *c = vc;
    cfit_plan_request *r = &c->req;
    int rc = 0;
    switch (id) {
    case -1: return cli_error("plan: unexpected argument '%s'", value);
    case O_CATALOG: return cli_catalog_add(&c->cc, value);
    case O_EMIT: return cli_emit_add(&c->emit, value);
    case O_BOM_BASE + CLI_BOM_FLAG: case O_BOM_BASE + CLI_BOM_NETWORK: case O_BOM_BASE + CLI_BOM_TIERS:
    case O_BOM_BASE + CLI_BOM_OVERSUB: case O_BOM_BASE + CLI_BOM_GONE_THRESHOLD: case O_BOM_BASE + CLI_BOM_WINDOW:
        return cli_bom_opt(&c->bom, id - O_BOM_BASE, name, value);
    case O_MTBF:
        rc = parse_goodput_time(name, value, &r->goodput.mtbf_gpu_hours);
        r->goodput.mtbf_gpu_hours /= 3600.0;
        return rc;
    case O_CKPT_EVERY: return parse_goodput_time(name, value, &r->goodput.checkpoint_every_s);
    case O_RESTART: return parse_goodput_time(name, value, &r->goodput.restart_s);
    case O_RECOMPUTE: return parse_recompute(r, value);
    case O_BUDGET: {   /* a count (K M B T = powers of 1000: "5M") or a plain number */
        uint64_t n;
        if (cfit_parse_count(value, &n, NULL) == CFIT_EOK) {
            r->budget_usd = (double)n;
            return r->budget_usd <= 1e15 ? 0 : cli_error("--budget: %s is out of range (0.01 to 1e15)", value);
        }
        return cli_real(name, value, 1e-2, 1e15, &r->budget_usd);
    }
    case O_UTIL: {
        cfit_diag d;
        cfit_diag_clear(&d);
        if (cfit_parse_real(value, &c->utilisation, &d))
            return cli_error("--%s: %s", name, d.msg);
        if (!(c->utilisation > 0.0 && c->utilisation <= 1.0))
            return cli_error("--%s: %s is outside (0, 1] (the owned cluster's busy fraction)", name, value);
        return 0;
    }
    case O_PRICE:
        if (c->nprices == (int)(sizeof c->prices / sizeof c->prices[0]))
            return cli_error("--price: at most %d overrides", c->nprices);
        c->prices[c->nprices++] = value;
        return 0;
    case O_SCHEDULE: {
        cfit_schedule sc;
        cfit_diag d;
        cfit_diag_clear(&d);
        if (cfit_schedule_parse(value, &sc, &d))
            return cli_error("--schedule: %s", d.msg);
        r->fixed.schedule = (int)sc;
        return 0;
    }
    case O_OFFLOAD: case O_FINETUNE: case O_LORA_RANK: case O_OFFLOAD_MODULES:
        return plan_opt_offload(r, id - O_OFFLOAD, name, value);
    }
    return 0;
}

static void progress(void *vc, double fraction)
{
    plan_cli *c = vc;
    if (cfit_now_s() - c->t0_s < 1.0 || fraction < 0)
        return;
    fprintf(stderr, "\rsearching layouts: %3.0f%%", fraction * 100.0);
    c->progress_shown = 1;
}

/* ---- prices ---- */

/* Apply every --price KEY=VALUE to the opened catalog. */
static int apply_prices(plan_cli *c)
{
    for (int i = 0; i < c->nprices; i++) {
        const char *arg = c->prices[i], *eq = strchr(arg, '=');
        if (!eq || eq == arg || !eq[1])
            return cli_error("--price: expected KEY=VALUE (e.g. node.h100-sxm=300000), got '%s'", arg);
        char key[2 * CFIT_NAME_MAX];
        snprintf(key, sizeof key, "%.*s", (int)(eq - arg), arg);
        double v;
        cfit_diag d;
        cfit_diag_clear(&d);
        if (cfit_parse_real(eq + 1, &v, &d))
            return cli_error("--price: %s: %s", key, d.msg);
        int rc = cfit_cost_price_set(c->cc.cat, key, v, &d);
        if (rc)
            return cli_error("--price: %s", d.msg);
    }
    cfit_diag d;
    cfit_diag_clear(&d);
    if (c->utilisation > 0 && cfit_cost_price_set(c->cc.cat, "owned.utilisation", c->utilisation, &d))
        return cli_error("--utilisation: %s", d.msg);
    return 0;
}

/* ---- resolving names ---- */

static int resolve(plan_cli *c, const cfit_gpu ***gpus_out)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    const cfit_catalog *cat = c->cc.cat;
    const char *mname = c->model ? c->model : "llama3-70b";
    if (strstr(mname, ".json") || strchr(mname, '/') || strcmp(mname, "-") == 0) {   /* "-": stdin */
        int rc = cfit_model_load_file(mname, &c->model_file, &d);
        if (rc)
            return cli_error_diag(&d, rc);
        c->req.model = &c->model_file;
    } else {
        c->req.model = cfit_catalog_model(cat, mname, &d);
        if (!c->req.model)
            return cli_error("--model: %s", d.msg);
    }
    if (c->mtp >= 0 && c->mtp != c->req.model->mtp_layers) {   /* --mtp: the model with that many MTP modules */
        c->model_mtp = *c->req.model;
        c->model_mtp.mtp_layers = c->mtp;
        c->req.model = &c->model_mtp;
    }
    if (cli_model_plannable(c->req.model, c->req.seq_len > 0 ? c->req.seq_len : c->req.model->seq_len))
        return EXIT_USAGE;
    if (c->req.fixed.etp > 0 && !cfit_model_is_moe(c->req.model))   /* even 1: nothing to split */
        return cli_error("--etp %d needs an MoE model (it splits the experts): '%s' has no experts",
                         c->req.fixed.etp, c->req.model->name);
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

/* No GPU type's plan meeting the goal is within the budget: say what the cheapest costs. */
static int budget_missed(const plan_cli *c, const cfit_plan_result *res)
{
    const cfit_gpu_result *best = NULL;
    char b[2][32];
    for (size_t i = 0; i < res->ngpu; i++) {
        const cfit_gpu_result *g = &res->per_gpu[i];
        if (g->found && g->meets_deadline && g->has_cost && (!best || g->cost_usd < best->cost_usd))
            best = g;
    }
    if (!best)
        return cli_error("no GPU type has a plan within the budget on %s", plan_basis_words(c->req.cost_basis));
    if (c->req.days > 0)
        return cli_error("no GPU type trains within %g day(s) and the budget of %s on %s: the cheapest "
                         "meeting the deadline, %ld x %s, costs %s; raise --budget or lower --tokens",
                         c->req.days, fmt_usd(b[0], 32, c->req.budget_usd), plan_basis_words(c->req.cost_basis),
                         best->best.gpus, best->gpu->name, fmt_usd(b[1], 32, best->cost_usd));
    return cli_error("no GPU type has a plan within the budget of %s on %s: the cheapest, %ld x %s, costs %s; "
                     "raise --budget or lower --tokens", fmt_usd(b[0], 32, c->req.budget_usd),
                     plan_basis_words(c->req.cost_basis), best->best.gpus, best->gpu->name,
                     fmt_usd(b[1], 32, best->cost_usd));
}

/* No GPU type meets the deadline: the best achievable, and what it would take. */
static int deadline_missed(const plan_cli *c, const cfit_plan_result *res)
{
    const cfit_plan *fast = NULL;
    char tok[2][32];
    for (size_t i = 0; i < res->ngpu; i++)
        if (res->per_gpu[i].found && (!fast || res->per_gpu[i].best.time_to_train_s < fast->time_to_train_s))
            fast = &res->per_gpu[i].best;
    fmt_count(tok[0], sizeof tok[0], c->req.tokens);
    if (!fast || fast->time_to_train_s <= 0)
        return cli_error("no GPU type trains %s tokens within %g day(s) at up to 65536 nodes; "
                         "raise --days or lower --tokens", tok[0], c->req.days);
    double days = fast->time_to_train_s / 86400.0;
    return cli_error("no GPU type trains %s tokens within %g day(s) at up to 65536 nodes (best %.1f days, "
                     "%ld x %s); raise --days to %.1f or lower --tokens to about %s", tok[0], c->req.days, days,
                     fast->gpus, fast->gpu->name, ceil(days * 10.0) / 10.0,
                     fmt_count(tok[1], sizeof tok[1], c->req.tokens * c->req.days / days));
}

static int any_meets_deadline(const cfit_plan_result *res)
{
    for (size_t i = 0; i < res->ngpu; i++)
        if (res->per_gpu[i].found && res->per_gpu[i].meets_deadline)
            return 1;
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
        long n = cfit_plan_fixed_gpus(r);
        if (n)
            return cli_error("no valid layout on %ld GPUs: tp x pp x cp x dp must equal the GPU count with dp x "
                             "micro-batch dividing the global batch of %ld sequences, tp within the scale-up "
                             "domain and the fixed sizes as given; try a --gbs divisible by more of the GPU "
                             "count, or fix fewer dimensions", n, res->global_batch);
        return cli_error("no valid layout at any GPU count: the global batch of %ld sequences and the fixed "
                         "parallel sizes admit none", res->global_batch);
    }
    char rec[96];
    if (best->offload)
        return plan_nothing_fits_offload(best);
    /* --offload none forbade the offload search that would otherwise have run */
    const char *offload_hint = r->offload == CFIT_OFFLOAD_NONE ? "; or drop --offload none to let the search keep "
                                                                 "states in host memory"
                                                               : "";
    return cli_error("nothing fits: the closest layout (%ld x %s, tp %d pp %d dp %d cp %d mbs %d ZeRO-%d, "
                     "recompute %s) needs %.1f GB per GPU, %.1f GB more than the %.0f GB available; %s%s",
                     best->gpus, best->gpu->name, best->layout.tp, best->layout.pp, best->layout.dp,
                     best->layout.cp, best->layout.mbs, best->layout.zero,
                     plan_recompute_str(rec, sizeof rec, best), best->mem.total_bytes / 1e9,
                     (best->mem.total_bytes - best->mem.capacity_bytes) / 1e9, best->mem.capacity_bytes / 1e9,
                     plan_fix_hint(best), offload_hint);
}

/* --topology: the fabric cross-node all-reduces and PP sends are simulated on (default link parameters: the
 * simulated slowdown is a ratio to the same fabric without contention). */
static int open_topology(const char *spec, cfit_topo **out)
{
    cfit_topo_params p;
    cfit_topo_params_init(&p);
    cfit_diag d;
    cfit_diag_clear(&d);
    int err = cfit_topo_new(spec, &p, out, &d);
    return err ? cli_error("--topology: %s", d.msg) : 0;
}

/* A collective's measurement calibrates the NCCL model as `sim --calibration` does: its network
 * terms solved on the run it measured (its hosts and ranks on the plan's GPU, node type, fabric and
 * --nics), then taken as the planner's NIC rate and per-step latency (docs/plan.md "Calibration"). */
static int solve_calibration(plan_cli *c)
{
    const cfit_gpu *g = c->req.gpus[0];
    cfit_diag d;
    cfit_diag_clear(&d);
    if (c->req.ngpus != 1)
        return cli_error("--calibration: %s measured one GPU type's cluster; name it with --gpu (the model is "
                         "solved on the run's own hardware)", c->cal.file);
    const cfit_node *node = cfit_catalog_node(c->req.catalog, g->default_node, &d);
    const cfit_fabric *up = node ? cfit_catalog_fabric(c->req.catalog, g->scaleup_fabric, &d) : NULL;
    const cfit_fabric *net = c->req.fabric ? c->req.fabric : node ? cfit_catalog_fabric(c->req.catalog, node->fabric, &d) : NULL;
    if (!node || !up || !net)
        return cli_error_diag(&d, CFIT_EUNKNOWN);
    cfit_nccl_system catalog_run, run;
    int per_node = c->cal.hosts > 0 ? c->cal.ranks / c->cal.hosts : 1;
    if (!cfit_nccl_system_from_catalog(g, up, node, net, c->cal.hosts, per_node > 0 ? per_node : 1,
                                       c->req.nics_per_node, &catalog_run, &d))
        c->cal_catalog_nic_bw = catalog_run.nic_bw, c->cal_catalog_extra_s = catalog_run.net_extra_latency_s;
    int err = cfit_nccl_fit_calibration(&c->cal, g, up, node, net, c->req.nics_per_node, -1, &run, &c->cal_fit, &d);
    if (err)
        return cli_error("--calibration: %s: %s", c->cal.file, d.msg);
    c->cal_model.bw_bytes_per_s = c->cal_fit.nic_bw;
    c->cal_model.latency_s = cfit_nccl_fit_step_latency_s(&c->cal_fit);
    c->cal_solved = 1;
    return 0;
}

/* --calibration FILE: measured fabric numbers replace the catalog's (docs/plan.md "Calibration"). */
static int open_calibration(plan_cli *c)
{
    if (c->bom.network)
        return cli_error("--calibration measures one fabric; --network compares catalog fabrics, so the two do not mix");
    cfit_diag d;
    cfit_diag_clear(&d);
    int err = cfit_calibration_load(c->calibration_file, &c->cal, &d);
    if (err)
        return cli_error_diag(&d, err);
    c->cal_model = c->cal;
    if (strcmp(c->cal.benchmark, "pairs") != 0 && (err = solve_calibration(c)))
        return err;
    c->req.calibration = &c->cal_model;
    return 0;
}

int cmd_plan(int argc, char **argv)
{
    plan_cli c;
    memset(&c, 0, sizeof c);
    cfit_plan_request_init(&c.req);
    cli_bom_init(&c.bom);
    c.req.tokens = 1e12;
    c.mtp = -1;
    int rc = cli_parse_bound(argc, argv, opts, binds, on_opt, &c, "clusterfit plan [options]",
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
    if (c.budget_given && !c.days_given)
        c.req.days = 0;   /* budget sizing: no deadline */
    c.req.oversub = c.bom.o.oversub;   /* the plan is modelled on the fabric the BOM builds */
    c.req.goodput.checkpoint_window_s = c.bom.o.checkpoint_window_s;   /* and checkpoints to its storage */
    if ((rc = cli_catalog_open(&c.cc)))
        return rc;
    const cfit_gpu **gpus = NULL;
    rc = apply_prices(&c);
    if (!rc)
        rc = resolve(&c, &gpus);
    if (rc) {
        cfit_catalog_free(c.cc.cat);
        return rc;
    }
    c.req.catalog = c.cc.cat;
    if (c.calibration_file && (rc = open_calibration(&c))) {
        free(gpus);
        cfit_catalog_free(c.cc.cat);
        return rc;
    }
    cfit_topo *topo = NULL;
    if (c.topology && (rc = open_topology(c.topology, &topo))) {
        free(gpus);
        cfit_catalog_free(c.cc.cat);
        return rc;
    }
    c.req.topology = topo;
    c.req.assume_topology = c.fabric && !topo;
    if (isatty(STDERR_FILENO) && !c.json) {
        c.req.progress = progress;
        c.req.progress_ctx = &c;
    }
    c.t0_s = cfit_now_s();
    cfit_plan_result res;
    cfit_diag d;
    cfit_diag_clear(&d);
    int err = cfit_plan_search(&c.req, &res, &d);
    if (c.progress_shown)
        fprintf(stderr, "\r%30s\r", "");
    if (err) {
        rc = cli_error_diag(&d, err);
    } else {
        int sizing = cfit_plan_fixed_gpus(&c.req) == 0;
        int any_plan = res.nplans > 0;
        for (size_t i = 0; i < res.ngpu; i++)
            any_plan |= res.per_gpu[i].found;
        if (res.nplans > 0 && (c.bom.bom || c.bom.network))
            rc = cli_bom_run(&c.bom, &c.req, &res.plans[0]);
        if (!rc && c.json)
            rc = plan_print_json(&c, &res, sizing);
        else if (!rc && any_plan && !cli_emit_stdout_bare(&c.emit))
            rc = plan_print_tables(&c, &res, sizing);
        if (!rc && any_plan && c.report)
            rc = cli_plan_report(c.report, &c.req, &c.bom.o, &res, sizing);
        if (!rc && !any_plan)
            rc = nothing_fits(&c.req, &res);
        else if (!rc && res.nplans == 0 && c.req.days <= 0) {
            char key[128] = "";
            for (size_t i = 0; i < res.ngpu && !key[0]; i++)
                if (res.per_gpu[i].found && !res.per_gpu[i].has_cost) {
                    cfit_cost k;
                    cfit_cost_compute_with(c.cc.cat, &res.per_gpu[i].best, &c.bom.o, &k);
                    cfit_cost_missing(&k, (cfit_cost_basis)c.req.cost_basis, key, sizeof key);
                }
            if (key[0])
                rc = cli_error("no GPU type has a plan within the budget on %s: a price is missing; supply "
                               "--price %s=VALUE", plan_basis_words(c.req.cost_basis), key);
            else
                rc = budget_missed(&c, &res);
        } else if (!rc && res.nplans == 0 && c.req.budget_usd > 0 && any_meets_deadline(&res)) {
            rc = budget_missed(&c, &res);
        } else if (!rc && res.nplans == 0) {
            rc = deadline_missed(&c, &res);
        }
        if (!rc && c.emit.n)
            rc = cli_emit_write(&c.emit, &c.req, &res);
        cli_bom_fini(&c.bom);
        cfit_plan_result_fini(&res);
    }
    free(gpus);
    cfit_topo_free(topo);
    cfit_catalog_free(c.cc.cat);
    return rc;
}
