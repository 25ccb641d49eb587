/* cmd_plan.c - `clusterfit plan`: parse the job, run the search, print tables or JSON. */
#include "cli.h"
#include "clusterfit/topo.h"
#include "emit_opt.h"
#include "plan_bom.h"
#include "base/json.h"
#include "clusterfit/plan.h"
#include "clusterfit/cost.h"
#include "clusterfit/calibration.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    O_MODEL = 1, O_SEQ, O_GBS, O_TOKENS, O_PRECISION, O_GPU, O_GPUS, O_FABRIC, O_TP, O_PP, O_DP,
    O_CP, O_VP, O_MBS, O_ZERO, O_RECOMPUTE, O_SP, O_DAYS, O_TOP, O_GRAD, O_ATTN, O_FRAMEWORK, O_JSON, O_CATALOG, O_QUIET,
    O_BUDGET, O_BASIS, O_PRICE, O_TOPOLOGY
};
enum { O_EMIT = 100 };   /* --emit: emit_opt.c */
enum { O_BOM_BASE = 200 };
enum { O_CALIBRATION = 300 };
enum { O_REPORT = 400 };   /* --report FILE.html: plan_report.c */   /* --calibration FILE: a bench --json file (calibration.h) */   /* --bom, --network and their options: plan_bom.c (O_BOM_BASE + CLI_BOM_*) */

static const cli_opt opts[] = {
    {"model", 0, "NAME|FILE", "model from the catalog or a JSON file (default llama3-70b)", O_MODEL},
    {"seq", 0, "N", "sequence length in tokens (default: the model's)", O_SEQ},
    {"gbs", 0, "N", "global batch in sequences (default: 4 Mi tokens, x2 per doubling beyond 100B params)", O_GBS},
    {"tokens", 0, "N", "tokens to train, K M B T = powers of 1000 (default 1T)", O_TOKENS},
    {"precision", 0, "bf16|fp8", "training precision of the GEMMs (default bf16)", O_PRECISION},
    {"gpu", 0, "NAME[,NAME...]", "GPU type(s) from the catalog (default: compare all)", O_GPU},
    {"gpus", 0, "N", "total GPUs (default: sized to meet --days)", O_GPUS},
    {"fabric", 0, "NAME", "scale-out fabric (default: the GPU's node type's)", O_FABRIC},
    {"calibration", 0, "FILE", "measured fabric bandwidth and latency from a `clusterfit bench ... --json` file\n"
                               "                                       run across hosts, instead of the catalog's (docs/plan.md)", O_CALIBRATION},
    {"topology", 0, "SPEC", "simulate cross-node DP/TP all-reduces, PP sends and CP exchanges on this topology\n"
                            "                                       (sim's SPEC, e.g. fattree:k=16,oversub=2; docs/plan.md)", O_TOPOLOGY},
    {"tp", 0, "N", "tensor parallel size (default: searched)", O_TP},
    {"pp", 0, "N", "pipeline parallel size (default: searched)", O_PP},
    {"dp", 0, "N", "data parallel size (default: searched)", O_DP},
    {"cp", 0, "N", "context parallel size (default: searched)", O_CP},
    {"vp", 0, "N", "interleaved pipeline chunks per GPU (default: searched)", O_VP},
    {"mbs", 0, "N", "micro-batch size in sequences (default: searched)", O_MBS},
    {"zero", 0, "0..3", "ZeRO stage, 1 = distributed optimizer (default: searched)", O_ZERO},
    {"recompute", 0, "none|selective|full|block", "activation recomputation; block = full on the fewest layers that fit (default: searched)", O_RECOMPUTE},
    {"sp", 0, "on|off", "sequence parallelism (default: searched)", O_SP},
    {"days", 0, "D", "deadline in days used to size the GPU count (default 30, none with --budget)", O_DAYS},
    {"budget", 0, "USD", "size each GPU type to the fastest plan costing at most USD, K M B = powers of 1000 (docs/sizing.md)", O_BUDGET},
    {"cost-basis", 0, "rent|reserved|spot|own", "cost that --budget bounds and sizing ranks by (default rent = cloud on-demand)", O_BASIS},
    {"price", 0, "KEY=VALUE", "override a price from the catalog, e.g. node.h100-sxm=300000 (repeatable)", O_PRICE},
    {"top", 0, "K", "plans to show (default 5)", O_TOP},
    {"grad-precision", 0, "fp32|bf16", "gradient precision: bf16 = 16 B/param with Adam (default), fp32 = 18", O_GRAD},
    {"framework", 0, "NAME", "training framework from the catalog (default megatron-core)", O_FRAMEWORK},
    {"attention", 0, "fused|unfused", "attention kernel (default: the framework's)", O_ATTN},
    {"json", 0, NULL, "print one JSON object (docs/json.md) instead of tables", O_JSON},
    {"catalog", 0, "FILE", "add or override catalog entries from FILE (repeatable)", O_CATALOG},
    {"quiet", 'q', NULL, "print only the plan table", O_QUIET},
    {"emit", 0, "KIND[:FILE][,...]", "launch config for the best plan: deepspeed, megatron, torchrun (repeatable)", O_EMIT},
    {"bom", 0, NULL, "bill of materials of the best plan: NICs, fat-tree switches, cables, optics, storage, capex", O_BOM_BASE + CLI_BOM_FLAG},
    {"network", 0, NULL, "compare fabrics, NIC counts and oversubscription for the best plan and recommend one", O_BOM_BASE + CLI_BOM_NETWORK},
    {"tiers", 0, "2|3", "switch tiers of the fat-tree (default 2; raised to 3 when two cannot reach)", O_BOM_BASE + CLI_BOM_TIERS},
    {"oversub", 0, "N", "leaf downlinks per uplink, 1 = non-blocking (default 1); divides inter-node bandwidth", O_BOM_BASE + CLI_BOM_OVERSUB},
    {"comm-threshold", 0, "PCT", "exposed communication share the --network recommendation stays under (default 10)", O_BOM_BASE + CLI_BOM_THRESHOLD},
    {"checkpoint-window", 0, "TIME", "time to write one checkpoint, sizes storage write rate (default 5m)", O_BOM_BASE + CLI_BOM_WINDOW},
    {"report", 0, "FILE.html", "also write a self-contained HTML report with charts (docs/report.md)", O_REPORT},
    {NULL, 0, NULL, NULL, 0},
};

typedef struct plan_cli {
    cli_catalog cc;
    const char *model;
    const char *gpu_list;
    const char *fabric;
    const char *framework;
    const char *topology;
    cfit_plan_request req;
    cfit_model model_file;
    int json, quiet;
    int days_given;
    int budget_given;
    const char *prices[64];
    int nprices;
    struct timespec t0;
    int progress_shown;
    cli_emit emit;
    cli_bom bom;
    const char *calibration_file;     /* --calibration */
    cfit_calibration cal;
    const char *report;               /* --report FILE.html */
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
    case O_TOPOLOGY: c->topology = value; return 0;
    case O_CALIBRATION: c->calibration_file = value; return 0;
    case O_REPORT: c->report = value; return 0;
    case O_FRAMEWORK: c->framework = value; return 0;
    case O_CATALOG: return cli_catalog_add(&c->cc, value);
    case O_JSON: c->json = 1; return 0;
    case O_QUIET: c->quiet = 1; return 0;
    case O_EMIT: return cli_emit_add(&c->emit, value);
    case O_BOM_BASE + CLI_BOM_FLAG: case O_BOM_BASE + CLI_BOM_NETWORK: case O_BOM_BASE + CLI_BOM_TIERS:
    case O_BOM_BASE + CLI_BOM_OVERSUB: case O_BOM_BASE + CLI_BOM_THRESHOLD: case O_BOM_BASE + CLI_BOM_WINDOW:
        return cli_bom_opt(&c->bom, id - O_BOM_BASE, name, value);
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
    case O_BUDGET: {   /* a count (K M B T = powers of 1000: "5M") or a plain number */
        uint64_t n;
        c->budget_given = 1;
        if (cfit_parse_count(value, &n, NULL) == CFIT_EOK) {
            r->budget_usd = (double)n;
            return r->budget_usd <= 1e15 ? 0 : cli_error("--budget: %s is out of range (0.01 to 1e15)", value);
        }
        return cli_real(name, value, 1e-2, 1e15, &r->budget_usd);
    }
    case O_PRICE:
        if (c->nprices == (int)(sizeof c->prices / sizeof c->prices[0]))
            return cli_error("--price: at most %d overrides", c->nprices);
        c->prices[c->nprices++] = value;
        return 0;
    case O_BASIS:
        for (int i = 0; i < CFIT_BASIS_COUNT; i++)
            if (strcmp(value, cfit_cost_basis_name((cfit_cost_basis)i)) == 0) {
                r->cost_basis = i;
                return 0;
            }
        return cli_error("--cost-basis: expected rent, reserved, spot or own, got '%s'", value);
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
    return 0;
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





static void j_cost(cfit__buf *b, const plan_cli *c, const cfit_plan *p)
{
    cfit_cost k;
    cfit_cost_compute(c->cc.cat, p, &k);
    double tokens = c->req.tokens, usd = 0;
    int have = cfit_cost_of(&k, (cfit_cost_basis)c->req.cost_basis, &usd) && tokens > 0;
    cfit__buf_puts(b, ", \"cost\": {");
    cfit__buf_key_string(b, "basis", cfit_cost_basis_name((cfit_cost_basis)c->req.cost_basis), 0);
    cfit__buf_key_opt(b, "basis_usd", have, usd);
    cfit__buf_key_opt(b, "usd_per_million_tokens", have, tokens > 0 ? usd / (tokens / 1e6) : 0);
    cfit__buf_key_opt(b, "capex_usd", k.has_own, k.capex_usd);
    cfit__buf_key_opt(b, "node_capex_usd", k.has_own, k.node_capex_usd);
    cfit__buf_key_opt(b, "network_capex_usd", k.has_own, k.network_capex_usd);
    cfit__buf_key_opt(b, "scaleout_ports", k.has_own, k.ports);
    cfit__buf_key_opt(b, "own_run_usd", k.has_own, k.own_run_usd);
    cfit__buf_key_opt(b, "amortised_usd", k.has_own, k.amortised_usd);
    cfit__buf_key_opt(b, "energy_usd", k.has_own, k.energy_usd);
    cfit__buf_key_opt(b, "maintenance_usd", k.has_own, k.maintenance_usd);
    cfit__buf_key_opt(b, "colocation_usd", k.has_own, k.colo_usd);
    cfit__buf_key_number(b, "gpu_hours", k.gpu_hours, 1);
    cfit__buf_key_opt(b, "rent_on_demand_usd", k.has_rent[CFIT_BASIS_RENT], k.rent_usd[CFIT_BASIS_RENT]);
    cfit__buf_key_opt(b, "rent_reserved_usd", k.has_rent[CFIT_BASIS_RESERVED], k.rent_usd[CFIT_BASIS_RESERVED]);
    cfit__buf_key_opt(b, "rent_spot_usd", k.has_rent[CFIT_BASIS_SPOT], k.rent_usd[CFIT_BASIS_SPOT]);
    cfit__buf_key_opt(b, "break_even_utilisation", k.has_break_even && k.break_even_utilisation >= 0, k.break_even_utilisation);
    cfit__buf_key_opt(b, "power_kw_node", k.has_power, k.node_power_kw);
    cfit__buf_key_opt(b, "power_kw_it", k.has_power, k.power_kw_it);
    cfit__buf_key_opt(b, "power_kw_facility", k.has_power, k.power_kw_facility);
    cfit__buf_key_opt(b, "racks", k.has_power, (double)k.racks);
    cfit__buf_key_opt(b, "nodes_per_rack", k.has_power, k.nodes_per_rack);
    cfit__buf_key_opt(b, "rack_kw", k.has_power, k.rack_kw);
    if (k.has_power)
        cfit__buf_key_string(b, "cooling", k.cooling, 1);
    else
        cfit__buf_puts(b, ", \"cooling\": null");
    cfit__buf_puts(b, ", \"missing_prices\": [");
    const char *miss[] = {k.has_own ? "" : k.missing_own, k.has_rent[0] ? "" : k.missing_rent[0],
                          k.has_rent[1] ? "" : k.missing_rent[1], k.has_rent[2] ? "" : k.missing_rent[2]};
    int n = 0;
    for (size_t i = 0; i < sizeof miss / sizeof miss[0]; i++)
        if (miss[i][0]) {
            cfit__buf_puts(b, n++ ? ", " : "");
            cfit__buf_json_string(b, miss[i]);
        }
    cfit__buf_puts(b, "], \"prices_used\": [");
    for (int i = 0; i < k.nused; i++) {
        const cfit_price *pr = k.used[i];
        cfit__buf_puts(b, i ? ", {" : "{");
        cfit__buf_key_string(b, "name", pr->name, 0);
        cfit__buf_key_number(b, "value", pr->value, 1);
        cfit__buf_key_string(b, "unit", cfit_price_unit_name(pr->unit), 1);
        cfit__buf_key_string(b, "date", pr->date, 1);
        cfit__buf_key_string(b, "source", pr->source, 1);
        cfit__buf_puts(b, "}");
    }
    cfit__buf_puts(b, "]}");
}

static void j_plan(cfit__buf *b, const plan_cli *c, const cfit_plan *p)
{
    const cfit_layout *l = &p->layout;
    cfit__buf_puts(b, "{");
    cfit__buf_key_string(b, "gpu", p->gpu->name, 0);
    cfit__buf_key_number(b, "gpus", (double)p->gpus, 1);
    cfit__buf_key_number(b, "nodes", (double)p->nodes, 1);
    cfit__buf_key_string(b, "node", p->node->name, 1);
    cfit__buf_key_string(b, "fabric", p->fabric->name, 1);
    cfit__buf_key_number(b, "tp", l->tp, 1);
    cfit__buf_key_number(b, "pp", l->pp, 1);
    cfit__buf_key_number(b, "dp", l->dp, 1);
    cfit__buf_key_number(b, "cp", l->cp, 1);
    cfit__buf_key_number(b, "vp", l->vp, 1);
    cfit__buf_key_number(b, "micro_batch", l->mbs, 1);
    cfit__buf_key_number(b, "global_batch", (double)p->global_batch, 1);
    cfit__buf_key_number(b, "grad_accum", (double)p->grad_accum, 1);
    cfit__buf_key_number(b, "zero", l->zero, 1);
    cfit__buf_key_string(b, "recompute", cfit_recompute_name((cfit_recompute)l->recompute), 1);
    cfit__buf_key_number(b, "recompute_layers", p->recompute_layers, 1);
    cfit__buf_printf(b, ", \"sequence_parallel\": %s", l->sp ? "true" : "false");
    cfit__buf_printf(b, ", \"fits\": %s", p->fits ? "true" : "false");
    cfit__buf_puts(b, ", \"memory\": {");
    cfit__buf_key_number(b, "weights_bytes", p->mem.weights_bytes, 0);
    cfit__buf_key_number(b, "grads_bytes", p->mem.grads_bytes, 1);
    cfit__buf_key_number(b, "optimizer_bytes", p->mem.optimizer_bytes, 1);
    cfit__buf_key_number(b, "activations_bytes", p->mem.activations_bytes, 1);
    cfit__buf_key_number(b, "other_bytes", p->mem.other_bytes, 1);
    cfit__buf_key_number(b, "total_bytes", p->mem.total_bytes, 1);
    cfit__buf_key_number(b, "capacity_bytes", p->mem.capacity_bytes, 1);
    cfit__buf_key_number(b, "shortfall_bytes", p->fits ? 0.0 : p->mem.total_bytes - p->mem.capacity_bytes, 1);
    cfit__buf_puts(b, "}");
    cfit__buf_key_number(b, "step_time_s", p->step_time_s, 1);
    cfit__buf_puts(b, ", \"breakdown_s\": {");
    cfit__buf_key_number(b, "compute", p->br.compute_s, 0);
    cfit__buf_key_number(b, "tp_comm", p->br.tp_comm_s, 1);
    cfit__buf_key_number(b, "cp_comm", p->br.cp_comm_s, 1);
    cfit__buf_key_number(b, "pp_comm", p->br.pp_comm_s, 1);
    cfit__buf_key_number(b, "pp_bubble", p->br.pp_bubble_s, 1);
    cfit__buf_key_number(b, "dp_comm", p->br.dp_comm_s, 1);
    cfit__buf_key_number(b, "optimizer", p->br.optimizer_s, 1);
    cfit__buf_key_number(b, "other", p->br.other_s, 1);
    cfit__buf_puts(b, "}, \"bound_s\": {");
    cfit__buf_key_number(b, "compute", p->compute_bound_s, 0);
    cfit__buf_key_number(b, "memory", p->memory_bound_s, 1);
    cfit__buf_key_number(b, "communication", p->comm_exposed_s, 1);
    cfit__buf_puts(b, "}");
    cfit__buf_key_number(b, "stage_layers_min", p->stage_layers_min, 1);
    cfit__buf_key_number(b, "stage_layers_max", p->stage_layers_max, 1);
    cfit__buf_key_number(b, "stage_imbalance", p->stage_imbalance, 1);
    cfit__buf_key_number(b, "tokens_per_s", p->tokens_per_s, 1);
    cfit__buf_key_number(b, "tokens_per_s_per_gpu", p->tokens_per_s_per_gpu, 1);
    cfit__buf_key_number(b, "model_tflops_per_gpu", p->model_tflops_per_gpu, 1);
    cfit__buf_key_number(b, "hardware_tflops_per_gpu", p->hardware_tflops_per_gpu, 1);
    cfit__buf_key_number(b, "mfu", p->mfu, 1);
    cfit__buf_key_number(b, "hfu", p->hfu, 1);
    cfit__buf_key_number(b, "time_to_train_s", p->time_to_train_s, 1);
    j_cost(b, c, p);
    cfit__buf_puts(b, "}");
}

/* `"calibration": {...}` from --calibration, or null. */
static void j_calibration(cfit__buf *b, const plan_cli *c)
{
    if (!c->calibration_file) {
        cfit__buf_puts(b, ", \"calibration\": null");
        return;
    }
    cfit__buf_puts(b, ", \"calibration\": {");
    cfit__buf_key_string(b, "file", c->calibration_file, 0);
    cfit__buf_key_string(b, "benchmark", c->cal.benchmark, 1);
    cfit__buf_key_number(b, "bandwidth_bytes_per_s", c->cal.bw_bytes_per_s, 1);
    cfit__buf_key_number(b, "latency_s", c->cal.latency_s, 1);
    cfit__buf_puts(b, "}");
}

static int print_json(const plan_cli *c, const cfit_plan_result *res, int sizing)
{
    const cfit_plan_request *r = &c->req;
    const cfit_model *m = r->model;
    cfit__buf b;
    cfit__buf_init(&b);
    cfit__buf_puts(&b, "{");
    cfit__buf_key_string(&b, "clusterfit_version", CFIT_VERSION, 0);
    cfit__buf_puts(&b, ", \"workload\": {");
    cfit__buf_key_string(&b, "model", m->name, 0);
    cfit__buf_key_number(&b, "params", cfit_model_params(m), 1);
    cfit__buf_key_number(&b, "seq_len", res->seq_len, 1);
    cfit__buf_key_number(&b, "global_batch", (double)res->global_batch, 1);
    cfit__buf_key_number(&b, "tokens_per_step", (double)res->global_batch * res->seq_len, 1);
    cfit__buf_key_number(&b, "tokens", r->tokens, 1);
    cfit__buf_key_string(&b, "precision", cfit_precision_name(r->precision), 1);
    const cfit_framework *fw = r->framework ? r->framework : cfit_catalog_framework(r->catalog, "megatron-core", NULL);
    int unfused = r->unfused_attention >= 0 ? r->unfused_attention : (fw && fw->unfused_attention);
    cfit__buf_key_string(&b, "framework", fw ? fw->name : "megatron-core", 1);
    cfit__buf_key_string(&b, "attention", unfused ? "unfused" : "fused", 1);
    cfit__buf_key_number(&b, "model_flops_per_token", cfit_model_flops_per_token(m, res->seq_len), 1);
    if (c->topology || c->fabric) {   /* --fabric alone: the topology assumed (docs/plan.md) */
        const cfit_plan *best = res->nplans > 0 ? &res->plans[0] : NULL;
        char spec[64];
        if (!c->topology)
            cfit_plan_assumed_topology(best ? best->nodes : 1, best ? best->node->gpus_per_node : 1, spec,
                                       sizeof spec);
        cfit__buf_puts(&b, ", \"topology\": {");
        cfit__buf_key_string(&b, "spec", c->topology ? c->topology : spec, 0);
        cfit__buf_puts(&b, c->topology ? ", \"assumed\": false" : ", \"assumed\": true");
        cfit__buf_key_number(&b, "slowdown", best ? best->fabric_slowdown : 1.0, 1);
        cfit__buf_key_number(&b, "slowdown_dp", best ? best->slowdown_dp : 1.0, 1);
        cfit__buf_key_number(&b, "slowdown_tp", best ? best->slowdown_tp : 1.0, 1);
        cfit__buf_key_number(&b, "slowdown_pp", best ? best->slowdown_pp : 1.0, 1);
        cfit__buf_key_number(&b, "slowdown_cp", best ? best->slowdown_cp : 1.0, 1);
        cfit__buf_puts(&b, "}");
    }
    cfit__buf_puts(&b, "}, \"goal\": {");
    cfit__buf_key_string(&b, "mode", !sizing ? "fixed_gpus" : r->days > 0 ? "deadline" : "budget", 0);
    cfit__buf_key_number(&b, "days", sizing ? r->days : 0.0, 1);
    cfit__buf_key_number(&b, "gpus", (double)cfit_plan_fixed_gpus(r), 1);
    cfit__buf_key_number(&b, "budget_usd", r->budget_usd, 1);
    cfit__buf_key_string(&b, "cost_basis", cfit_cost_basis_name((cfit_cost_basis)r->cost_basis), 1);
    cfit__buf_key_string(&b, "ranked_by", !sizing ? "tokens_per_s" : res->ranked_by_cost ? "cost" :
                           r->days > 0 ? "gpu_hours" : "time_to_train", 1);
    cfit__buf_puts(&b, "}, \"search\": {");
    cfit__buf_key_number(&b, "evaluated", (double)res->evaluated, 0);
    cfit__buf_key_number(&b, "feasible", (double)res->feasible, 1);
    cfit__buf_key_number(&b, "seconds", res->seconds, 1);
    cfit__buf_puts(&b, "}");
    j_calibration(&b, c);
    cfit__buf_puts(&b, ", \"plans\": [");
    for (size_t i = 0; i < res->nplans; i++) {
        if (i)
            cfit__buf_puts(&b, ", ");
        j_plan(&b, c, &res->plans[i]);
    }
    cfit__buf_puts(&b, "], \"per_gpu\": [");
    for (size_t i = 0; i < res->ngpu; i++) {
        const cfit_gpu_result *g = &res->per_gpu[i];
        cfit__buf_puts(&b, i ? ", {" : "{");
        cfit__buf_key_string(&b, "gpu", g->gpu->name, 0);
        cfit__buf_printf(&b, ", \"found\": %s, \"meets_deadline\": %s, \"within_budget\": %s",
                         g->found ? "true" : "false", g->meets_deadline ? "true" : "false",
                         g->within_budget ? "true" : "false");
        cfit__buf_key_opt(&b, "cost_usd", g->has_cost, g->cost_usd);
        if (g->found) {
            cfit__buf_puts(&b, ", \"best\": ");
            j_plan(&b, c, &g->best);
        } else if (g->has_closest) {
            cfit__buf_puts(&b, ", \"closest\": ");
            j_plan(&b, c, &g->closest);
        }
        cfit__buf_puts(&b, "}");
    }
    cfit__buf_puts(&b, "]");
    if (res->nplans > 0)
        cli_bom_json(&c->bom, r, &res->plans[0], &b);
    cfit__buf_puts(&b, "}\n");
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

static void plan_header(int cost)
{
    printf("%-13s %6s %5s  %2s %3s %5s %2s %2s %3s %4s %-9s %-3s %8s %9s %10s %5s %9s", "gpu", "GPUs",
           "nodes", "TP", "PP", "DP", "CP", "VP", "MBS", "ZeRO", "recompute", "SP", "mem/GPU", "step",
           "tok/s/GPU", "MFU", "train");
    printf(cost ? " %9s %9s\n" : "\n", "rent", "own");
    printf("%-13s %6s %5s  %2s %3s %5s %2s %2s %3s %4s %-9s %-3s %8s %9s %10s %5s %9s", "", "", "",
           "", "", "", "", "", "seq", "", "", "", "GB", "s", "tokens/s", "%", "days");
    printf(cost ? " %9s %9s\n" : "\n", "on-demand", "run");
}

/* The rent and own cells: "-" where a price is missing. */
static void cost_cells(const plan_cli *c, const cfit_plan *p)
{
    cfit_cost k;
    char b[2][32];
    cfit_cost_compute(c->cc.cat, p, &k);
    double rent, own;
    printf(" %9s %9s", cfit_cost_of(&k, CFIT_BASIS_RENT, &rent) ? fmt_usd(b[0], 32, rent) : "-",
           cfit_cost_of(&k, CFIT_BASIS_OWN, &own) ? fmt_usd(b[1], 32, own) : "-");
}

static void plan_row(const plan_cli *c, const cfit_plan *p, double tokens, int cost)
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
    if (cost)
        cost_cells(c, p);
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

static void print_details(const plan_cli *c, const cfit_plan *p, double tokens)
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
    if (c->topology || c->fabric) {
        char spec[64];
        if (!c->topology)
            cfit_plan_assumed_topology(p->nodes, p->node->gpus_per_node, spec, sizeof spec);
        printf("  fabric: simulated on topology %s%s%s%s, cross-node collectives x %.3g (DP %.3g, TP %.3g, "
               "PP %.3g, CP %.3g)\n", c->topology ? c->topology : spec,
               c->topology ? "" : " (assumed for --fabric ", c->topology ? "" : c->fabric,
               c->topology ? "" : ": non-blocking rail-optimised)", p->fabric_slowdown, p->slowdown_dp,
               p->slowdown_tp, p->slowdown_pp, p->slowdown_cp);
    }
    if (c->calibration_file)
        printf("  fabric: calibrated from %s (%s across %d hosts): %.3g GB/s per NIC per direction, %.3g us per "
               "step, instead of the catalog's %.3g GB/s x %.2f and %.3g us\n", c->calibration_file,
               c->cal.benchmark, c->cal.hosts, c->cal.bw_bytes_per_s / 1e9, c->cal.latency_s * 1e6,
               p->fabric->bw_bytes_per_s / 1e9, p->fabric->efficiency, p->fabric->latency_s * 1e6);
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

static void print_prices_used(const cfit_cost *k)
{
    printf("  prices used ('clusterfit catalog show KEY' for the source):\n");
    for (int i = 0; i < k->nused; i++) {
        const cfit_price *pr = k->used[i];
        printf("    %-34s %12.10g %-18s %s\n", pr->name, pr->value, cfit_price_unit_name(pr->unit),
               pr->date[0] ? pr->date : "-       (--price)");
    }
}

/* The cost and power block of the details (docs/sizing.md). */
static void print_cost(const plan_cli *c, const cfit_plan *p, double tokens)
{
    cfit_cost k;
    char b[6][48];
    cfit_cost_compute(c->cc.cat, p, &k);
    printf("\ncost and power (docs/sizing.md)\n");
    if (k.has_power)
        printf("  power: %.2f kW per node at load, %.1f kW IT, %.1f kW facility; %ld rack%s of %d node%s "
               "(%.1f kW per rack): %s cooling\n", k.node_power_kw, k.power_kw_it, k.power_kw_facility, k.racks,
               k.racks == 1 ? "" : "s", k.nodes_per_rack, k.nodes_per_rack == 1 ? "" : "s", k.rack_kw, k.cooling);
    if (k.has_own) {
        printf("  capex: %s nodes %s + %.0f scale-out ports %s = %s\n", fmt_count(b[0], 48, (double)p->nodes),
               fmt_cents(b[1], 48, k.node_capex_usd), k.ports, fmt_cents(b[2], 48, k.network_capex_usd),
               fmt_cents(b[3], 48, k.capex_usd));
        printf("  own, this run: amortisation %s + energy %s + maintenance %s + colocation %s = %s\n",
               fmt_cents(b[0], 48, k.amortised_usd), fmt_cents(b[1], 48, k.energy_usd),
               fmt_cents(b[2], 48, k.maintenance_usd), fmt_cents(b[3], 48, k.colo_usd),
               fmt_cents(b[4], 48, k.own_run_usd));
    }
    static const char *const names[CFIT_BASIS_OWN] = {"on-demand", "reserved", "spot"};
    for (int i = 0; i < CFIT_BASIS_OWN; i++)
        if (k.has_rent[i])
            printf("  rent %s, this run: %.2f GPU-hours = %s\n", names[i], k.gpu_hours,
                   fmt_cents(b[0], 48, k.rent_usd[i]));
    double usd;
    if (tokens > 0 && cfit_cost_of(&k, (cfit_cost_basis)c->req.cost_basis, &usd))
        printf("  cost per million trained tokens (%s): %s\n", cfit_cost_basis_name((cfit_cost_basis)c->req.cost_basis),
               fmt_cents(b[0], 48, usd / (tokens / 1e6)));
    if (k.has_break_even && k.break_even_utilisation >= 0)
        printf("  buy-vs-rent break-even: owning is cheaper than on-demand rent when the cluster is busy more than "
               "%.0f%% of the year\n", 100 * k.break_even_utilisation);
    else if (k.has_break_even)
        printf("  buy-vs-rent break-even: none (on-demand rent costs less than the energy to own)\n");
    if (!k.has_own)
        printf("  own cost: no price; supply --price %s=VALUE\n", k.missing_own);
    if (!k.has_rent[CFIT_BASIS_RENT])
        printf("  rent cost: no price; supply --price %s=VALUE\n", k.missing_rent[CFIT_BASIS_RENT]);
    print_prices_used(&k);
}

/* Whether any plan in the output has a price (the cost columns are shown then). */
static int any_cost(const plan_cli *c, const cfit_plan_result *res)
{
    for (size_t i = 0; i < res->ngpu; i++) {
        const cfit_gpu_result *g = &res->per_gpu[i];
        cfit_cost k;
        if (!g->found)
            continue;
        cfit_cost_compute(c->cc.cat, &g->best, &k);
        if (k.has_own || k.has_rent[CFIT_BASIS_RENT])
            return 1;
    }
    for (size_t i = 0; i < res->nplans; i++) {
        cfit_cost k;
        cfit_cost_compute(c->cc.cat, &res->plans[i], &k);
        if (k.has_own || k.has_rent[CFIT_BASIS_RENT])
            return 1;
    }
    return 0;
}

/* "rent (cloud on-demand)" etc.: the basis as the goal line names it. */
static const char *basis_words(int basis)
{
    static const char *const words[CFIT_BASIS_COUNT] = {"rent (cloud on-demand)", "rent (cloud reserved)",
                                                        "rent (cloud spot)", "own (amortised capex + opex)"};
    return basis >= 0 && basis < CFIT_BASIS_COUNT ? words[basis] : "?";
}

static void print_goal(const plan_cli *c, const cfit_plan_result *res, int sizing)
{
    const cfit_plan_request *r = &c->req;
    char b[32];
    if (!sizing) {
        printf("goal: the fastest layout on %ld GPUs; ranked by tokens/s", cfit_plan_fixed_gpus(r));
        if (r->budget_usd > 0)
            printf("; budget %s on %s", fmt_usd(b, 32, r->budget_usd), basis_words(r->cost_basis));
        printf("\n");
    } else if (r->days <= 0) {
        printf("goal: the fastest plan of each GPU type costing at most %s on %s; ranked by time to train\n",
               fmt_usd(b, 32, r->budget_usd), basis_words(r->cost_basis));
    } else {
        printf("goal: the fewest GPUs of each type that train within %g day(s)", r->days);
        if (r->budget_usd > 0)
            printf(" and cost at most %s on %s", fmt_usd(b, 32, r->budget_usd), basis_words(r->cost_basis));
        if (res->ranked_by_cost)
            printf("; ranked by cost on %s\n", basis_words(r->cost_basis));
        else
            printf("; ranked by GPU-hours%s\n", any_cost(c, res) ? " (not every plan has a price)" : "");
    }
}

static int meets_goal(const cfit_gpu_result *g, int sizing)
{
    return g->found && (!sizing || (g->meets_deadline && g->within_budget));
}

/* Why a GPU type has no row in the comparison. */
static void print_missed(const plan_cli *c, const cfit_gpu_result *g, int sizing)
{
    const cfit_plan_request *r = &c->req;
    char b[2][32];
    if (g->found && sizing && !g->meets_deadline) {
        printf("%-13s no GPU count up to %ld nodes trains within %g day(s) (best %.1f days)\n",
               g->gpu->name, 65536L, r->days, g->best.time_to_train_s / 86400.0);
    } else if (g->found && sizing && !g->has_cost) {
        cfit_cost k;
        cfit_cost_compute(c->cc.cat, &g->best, &k);
        printf("%-13s no %s price: supply --price %s=VALUE\n", g->gpu->name,
               cfit_cost_basis_name((cfit_cost_basis)r->cost_basis),
               cfit_cost_missing(&k, (cfit_cost_basis)r->cost_basis, b[0], sizeof b[0]));
    } else if (g->found && sizing && !g->within_budget) {
        printf("%-13s the %s plan (%ld GPUs, %.1f days) costs %s, over the budget of %s\n", g->gpu->name,
               r->days > 0 ? "cheapest meeting the deadline" : "smallest fitting", g->best.gpus,
               g->best.time_to_train_s / 86400.0, fmt_usd(b[0], 32, g->cost_usd), fmt_usd(b[1], 32, r->budget_usd));
    } else if (!g->found && g->has_closest) {
        printf("%-13s nothing fits: the closest layout needs %.1f GB per GPU, %.1f GB more than %.0f GB\n",
               g->gpu->name, g->closest.mem.total_bytes / 1e9,
               (g->closest.mem.total_bytes - g->closest.mem.capacity_bytes) / 1e9,
               g->closest.mem.capacity_bytes / 1e9);
    } else if (!g->found) {
        printf("%-13s no valid layout (check the batch and parallel sizes)\n", g->gpu->name);
    }
}

static void print_comparison(const plan_cli *c, const cfit_plan_result *res, int sizing, int cost)
{
    int rows = 0;
    printf("comparison: the best plan of each GPU type\n");
    for (size_t i = 0; i < res->ngpu; i++)
        rows += meets_goal(&res->per_gpu[i], sizing);
    if (rows)
        plan_header(cost);
    for (size_t i = 0; i < res->ngpu; i++)
        if (meets_goal(&res->per_gpu[i], sizing))
            plan_row(c, &res->per_gpu[i].best, c->req.tokens, cost);
    for (size_t i = 0; i < res->ngpu; i++)
        if (!meets_goal(&res->per_gpu[i], sizing))
            print_missed(c, &res->per_gpu[i], sizing);
}

/* The key a recommendation ranks by: cost on the basis when every candidate has one, else
 * GPU-hours. */
static double rank_key(const cfit_gpu_result *g, int by_cost)
{
    return by_cost ? g->cost_usd : g->best.time_to_train_s * (double)g->best.gpus;
}

static void print_tier(const plan_cli *c, const char *tier, const cfit_gpu_result *g, const char *why)
{
    const cfit_plan *p = &g->best;
    char b[2][32];
    printf("  %-9s %s, %ld GPUs on %ld nodes: %s; %.1f days; %.1f of %.0f GB per GPU", tier, p->gpu->name, p->gpus,
           p->nodes, why, p->time_to_train_s / 86400.0, p->mem.total_bytes / 1e9, p->mem.capacity_bytes / 1e9);
    if (g->has_cost && c->req.tokens > 0)
        printf("; %s %s, %s per million tokens", fmt_usd(b[0], 32, g->cost_usd),
               cfit_cost_basis_name((cfit_cost_basis)c->req.cost_basis),
               fmt_usd(b[1], 32, g->cost_usd / (c->req.tokens / 1e6)));
    printf("\n");
}

/* minimal: the cheapest plan meeting the goal; balanced: the fastest within 15% of the
 * cheapest's cost; fastest: the shortest time to train (docs/sizing.md). */
static void print_recommendation(const plan_cli *c, const cfit_plan_result *res)
{
    const cfit_gpu_result *cand[256];
    size_t n = 0;
    int by_cost = 1;
    for (size_t i = 0; i < res->ngpu && n < 256; i++)
        if (meets_goal(&res->per_gpu[i], 1)) {
            cand[n++] = &res->per_gpu[i];
            by_cost &= res->per_gpu[i].has_cost;
        }
    if (n == 0)
        return;
    const cfit_gpu_result *min = cand[0], *fast = cand[0], *bal = NULL;
    for (size_t i = 1; i < n; i++) {
        if (rank_key(cand[i], by_cost) < rank_key(min, by_cost))
            min = cand[i];
        if (cand[i]->best.time_to_train_s < fast->best.time_to_train_s)
            fast = cand[i];
    }
    for (size_t i = 0; i < n; i++)
        if (rank_key(cand[i], by_cost) <= 1.15 * rank_key(min, by_cost) &&
            (!bal || cand[i]->best.time_to_train_s < bal->best.time_to_train_s))
            bal = cand[i];
    printf("\nrecommendation (by %s):\n", by_cost ? "cost" : "GPU-hours: not every type has a price");
    print_tier(c, "minimal", min, by_cost ? "the cheapest that meets the goal" : "the fewest GPU-hours that meet the goal");
    print_tier(c, "balanced", bal, by_cost ? "the fastest within 15% of the cheapest's cost"
                                           : "the fastest within 15% of the fewest GPU-hours");
    print_tier(c, "fastest", fast, "the shortest time to train that meets the goal");
}

static int print_tables(const plan_cli *c, const cfit_plan_result *res, int sizing)
{
    const cfit_plan_request *r = &c->req;
    const cfit_model *m = r->model;
    char buf[3][32];
    int cost = any_cost(c, res);
    if (!c->quiet) {
        printf("workload: %s (%s params), %s tokens, seq %d, global batch %ld sequences (%s tokens), %s\n",
               m->name, fmt_count(buf[0], 32, cfit_model_params(m)),
               r->tokens > 0 ? fmt_count(buf[1], 32, r->tokens) : "-", res->seq_len, res->global_batch,
               fmt_count(buf[2], 32, (double)res->global_batch * res->seq_len), cfit_precision_name(r->precision));
        print_goal(c, res, sizing);
        printf("\n");
    }
    if (res->ngpu > 1 && !c->quiet) {
        print_comparison(c, res, sizing, cost);
        if (sizing)
            print_recommendation(c, res);
        printf("\n");
    }
    if (res->nplans > 0) {
        printf("top %zu plan%s\n", res->nplans, res->nplans == 1 ? "" : "s");
        plan_header(cost);
        for (size_t i = 0; i < res->nplans; i++)
            plan_row(c, &res->plans[i], r->tokens, cost);
        if (!c->quiet) {
            print_details(c, &res->plans[0], r->tokens);
            print_cost(c, &res->plans[0], r->tokens);
        }
        cli_bom_print(&c->bom, r, &res->plans[0]);
    }
    if (!c->quiet) {
        printf("\nsearch: %llu layout%s evaluated, %llu fit in memory, %.2f s\n",
               (unsigned long long)res->evaluated, res->evaluated == 1 ? "" : "s",
               (unsigned long long)res->feasible, res->seconds);
        printf("sources: GPU, node and fabric figures from the catalog ('clusterfit catalog show NAME'); "
               "formulas in docs/model.md%s\n", cost ? ", costs in docs/sizing.md" : "");
    }
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
        return cli_error("no GPU type has a plan within the budget on %s", basis_words(c->req.cost_basis));
    if (c->req.days > 0)
        return cli_error("no GPU type trains within %g day(s) and the budget of %s on %s: the cheapest "
                         "meeting the deadline, %ld x %s, costs %s; raise --budget or lower --tokens",
                         c->req.days, fmt_usd(b[0], 32, c->req.budget_usd), basis_words(c->req.cost_basis),
                         best->best.gpus, best->gpu->name, fmt_usd(b[1], 32, best->cost_usd));
    return cli_error("no GPU type has a plan within the budget of %s on %s: the cheapest, %ld x %s, costs %s; "
                     "raise --budget or lower --tokens", fmt_usd(b[0], 32, c->req.budget_usd),
                     basis_words(c->req.cost_basis), best->best.gpus, best->gpu->name,
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
    char rec[32];
    return cli_error("nothing fits: the closest layout (%ld x %s, tp %d pp %d dp %d cp %d mbs %d ZeRO-%d, "
                     "recompute %s) needs %.1f GB per GPU, %.1f GB more than the %.0f GB available; %s",
                     best->gpus, best->gpu->name, best->layout.tp, best->layout.pp, best->layout.dp,
                     best->layout.cp, best->layout.mbs, best->layout.zero,
                     recompute_str(rec, sizeof rec, best), best->mem.total_bytes / 1e9,
                     (best->mem.total_bytes - best->mem.capacity_bytes) / 1e9, best->mem.capacity_bytes / 1e9,
                     fix_hint(best));
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
    c->req.calibration = &c->cal;
    return 0;
}

int cmd_plan(int argc, char **argv)
{
    plan_cli c;
    memset(&c, 0, sizeof c);
    cfit_plan_request_init(&c.req);
    cli_bom_init(&c.bom);
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
    if (c.budget_given && !c.days_given)
        c.req.days = 0;   /* budget sizing: no deadline */
    c.req.oversub = c.bom.o.oversub;   /* the plan is modelled on the fabric the BOM builds */
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
        int sizing = cfit_plan_fixed_gpus(&c.req) == 0;
        int any_plan = res.nplans > 0;
        for (size_t i = 0; i < res.ngpu; i++)
            any_plan |= res.per_gpu[i].found;
        if (res.nplans > 0 && (c.bom.bom || c.bom.network))
            rc = cli_bom_run(&c.bom, &c.req, &res.plans[0]);
        if (!rc && c.json)
            rc = print_json(&c, &res, sizing);
        else if (!rc && any_plan)
            rc = print_tables(&c, &res, sizing);
        if (!rc && any_plan && c.report)
            rc = cli_plan_report(c.report, &c.req, &res, sizing);
        if (!rc && !any_plan)
            rc = nothing_fits(&c.req, &res);
        else if (!rc && res.nplans == 0 && c.req.days <= 0) {
            char key[128] = "";
            for (size_t i = 0; i < res.ngpu && !key[0]; i++)
                if (res.per_gpu[i].found && !res.per_gpu[i].has_cost) {
                    cfit_cost k;
                    cfit_cost_compute(c.cc.cat, &res.per_gpu[i].best, &k);
                    cfit_cost_missing(&k, (cfit_cost_basis)c.req.cost_basis, key, sizeof key);
                }
            if (key[0])
                rc = cli_error("no GPU type has a plan within the budget on %s: a price is missing; supply "
                               "--price %s=VALUE", basis_words(c.req.cost_basis), key);
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
