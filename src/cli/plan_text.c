/* plan_text.c - `clusterfit plan` for people: the plan tables, the best plan's memory and time
 * breakdown, cost and power, the goal line and the recommendation. */
#include "plan_cli.h"
#include "clusterfit/schedule.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* "full", "block:K" with the layers per stage that block recomputation reruns, or
 * "modules:LIST" with the submodules recomputed. */
const char *plan_recompute_str(char *buf, size_t n, const cfit_plan *p)
{
    if (p->layout.recompute == CFIT_RECOMPUTE_BLOCK)
        snprintf(buf, n, "block:%d", p->recompute_layers);
    else if (p->layout.recompute == CFIT_RECOMPUTE_MODULES) {
        char list[128];
        snprintf(buf, n, "modules:%s", cfit_recompute_modules_str((unsigned)p->layout.recompute_modules, list, sizeof list));
    } else
        snprintf(buf, n, "%s", cfit_recompute_name((cfit_recompute)p->layout.recompute));
    return buf;
}

/* An MoE model's plans show EP and ETP after SP (dense tables are unchanged). */
static int show_experts(const plan_cli *c)
{
    return c->req.model && cfit_model_is_moe(c->req.model);
}

static void layout_str(char *buf, size_t n, const cfit_plan *p, int experts)
{
    const cfit_layout *l = &p->layout;
    char rec[96];
    int w = snprintf(buf, n, "%2d %3d %5d %2d %2d %3d %4d %-9s %-3s", l->tp, l->pp, l->dp, l->cp, l->vp, l->mbs,
                     l->zero, plan_recompute_str(rec, sizeof rec, p), l->sp ? "on" : "off");
    if (experts && w > 0 && (size_t)w < n)
        snprintf(buf + w, n - (size_t)w, " %3d %3d", l->ep > 1 ? l->ep : 1, l->etp > 1 ? l->etp : 1);
}

static void plan_header(int cost, int experts)
{
    printf("%-13s %6s %5s  %2s %3s %5s %2s %2s %3s %4s %-9s %-3s", "gpu", "GPUs",
           "nodes", "TP", "PP", "DP", "CP", "VP", "MBS", "ZeRO", "recompute", "SP");
    if (experts)
        printf(" %3s %3s", "EP", "ETP");
    printf(" %8s %9s %10s %5s %7s %9s", "mem/GPU", "step", "tok/s/GPU", "MFU", "goodput", "train");
    printf(cost ? " %9s %9s\n" : "\n", "rent", "own");
    printf("%-13s %6s %5s  %2s %3s %5s %2s %2s %3s %4s %-9s %-3s", "", "", "",
           "", "", "", "", "", "seq", "", "", "");
    if (experts)
        printf(" %3s %3s", "", "");
    printf(" %8s %9s %10s %5s %7s %9s", "GB", "s", "tokens/s", "%", "%", "days");
    printf(cost ? " %9s %9s\n" : "\n", "on-demand", "run");
}

/* Where --calibration's network terms came from: the file, what it measured and, for a collective,
 * the terms solved on its run (docs/plan.md "Calibration"). */
static void print_calibration(const plan_cli *c, const cfit_plan *p)
{
    const cfit_calibration *k = &c->cal;
    if (strcmp(k->source, "nccl-tests") == 0)
        printf("  fabric: calibrated from %s (nccl-tests %s: %s, %d ranks across %d hosts%s%s): busbw %.3g GB/s at "
               "%.0f B, fit time = %.3g us + size / %.3g GB/s over %d sizes (median error %.1f%%)", c->calibration_file,
               k->program[0] ? k->program : "log", k->benchmark, k->ranks, k->hosts, k->gpu[0] ? ", " : "", k->gpu,
               k->bw_bytes_per_s / 1e9, k->bw_size_bytes, k->fit_alpha_s * 1e6, k->fit_beta_bytes_per_s / 1e9,
               k->fit_rows, k->fit_error * 100);
    else
        printf("  fabric: calibrated from %s (%s across %d hosts): %s %.3g GB/s, %.3g us per step", c->calibration_file,
               k->benchmark, k->hosts, c->cal_solved ? "busbw" : "median link", k->bw_bytes_per_s / 1e9,
               k->latency_s * 1e6);
    if (c->cal_solved)
        printf("; solved on that run (as sim --calibration): %.3g GB/s per NIC per direction, %.3g us per network "
               "step, instead of the catalog's %.3g GB/s and %.3g us\n", c->cal_fit.nic_bw / 1e9,
               c->cal_model.latency_s * 1e6, c->cal_catalog_nic_bw / 1e9,
               (CFIT_NCCL_REFERENCE_NET_LATENCY_S + c->cal_catalog_extra_s) * 1e6);
    else
        printf(", taken as one NIC's rate and the per-step latency, instead of the catalog's %.3g GB/s x %.2f and "
               "%.3g us\n", p->fabric->bw_bytes_per_s / 1e9, p->fabric->efficiency, p->fabric->latency_s * 1e6);
}

/* The rent and own cells: "-" where a price is missing. */
static void cost_cells(const plan_cli *c, const cfit_plan *p)
{
    cfit_cost k;
    char b[2][32];
    cfit_cost_compute_with(c->cc.cat, p, &c->bom.o, &k);
    double rent, own;
    printf(" %9s %9s", cfit_cost_of(&k, CFIT_BASIS_RENT, &rent) ? fmt_usd(b[0], 32, rent) : "-",
           cfit_cost_of(&k, CFIT_BASIS_OWN, &own) ? fmt_usd(b[1], 32, own) : "-");
}

static void plan_row(const plan_cli *c, const cfit_plan *p, double tokens, int cost)
{
    char lay[112];
    layout_str(lay, sizeof lay, p, show_experts(c));
    printf("%-13s %6ld %5ld  %s %8.1f %9.*f %10.0f %5.1f %7.1f ", p->gpu->name, p->gpus, p->nodes, lay,
           p->mem.total_bytes / 1e9, p->step_time_s >= 1000.0 ? 0 : 3, p->step_time_s,
           p->tokens_per_s_per_gpu, p->mfu * 100.0, p->goodput.fraction * 100.0);
    if (tokens > 0)
        printf("%9.1f", p->time_to_train_s / 86400.0);
    else
        printf("%9s", "-");
    if (cost)
        cost_cells(c, p);
    if (p->offload) {   /* offload.h: what the plan keeps in host memory */
        char mode[64];
        printf("  offload %s", cfit_offload_str(p->offload, mode, sizeof mode));
    }
    if (p->offload_modules) {
        char mods[128];
        printf("  offload-modules %s", cfit_offload_modules_str((unsigned)p->offload_modules, mods, sizeof mods));
    }
    printf("%s\n", p->fits ? "" : "  (does not fit)");
}

const char *plan_fix_hint(const cfit_plan *p)
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

/* "12.1 min", "3.09 h", "87.4 s": a duration in the unit that reads best. */
static const char *fmt_dur(char *buf, size_t n, double s)
{
    if (s >= 2 * 86400.0)
        snprintf(buf, n, "%.3g d", s / 86400.0);
    else if (s >= 2 * 3600.0)
        snprintf(buf, n, "%.3g h", s / 3600.0);
    else if (s >= 120.0)
        snprintf(buf, n, "%.3g min", s / 60.0);
    else
        snprintf(buf, n, "%.3g s", s);
    return buf;
}

/* Goodput and the wall time to train (docs/model.md "Failures, checkpoints and goodput"). */
static void print_goodput(const cfit_plan *p, double tokens)
{
    const cfit_goodput *g = &p->goodput;
    char b[5][32];
    if (g->modelled) {
        printf("  goodput: %.1f%%: an unexpected interruption every %s (%.0f in the run, + %.0f planned); restart %s\n",
               g->fraction * 100, fmt_dur(b[0], 32, g->mtbi_hours * 3600), g->expected_interruptions,
               g->planned_interruptions, fmt_dur(b[1], 32, g->restart_s));
        int given = g->checkpoint_interval_s != g->daly_interval_s;
        printf("  checkpoints: %.3g TB every %s (%s %s), written in %s to ", g->checkpoint_bytes / 1e12,
               fmt_dur(b[2], 32, g->checkpoint_interval_s), given ? "as given; Daly's optimum" : "Daly's optimum; Young",
               fmt_dur(b[3], 32, given ? g->daly_interval_s : g->young_interval_s), fmt_dur(b[4], 32, g->checkpoint_write_s));
        if (g->storage[0])
            printf("%ld x %s\n", g->storage_units, g->storage);
        else
            printf("storage sized to the checkpoint window\n");
    } else {
        printf("  goodput: not modelled (no failure rates for %s in the catalog)\n", p->gpu->name);
    }
    if (tokens > 0)
        printf("  time to train: %.1f days (%.1f without interruptions; %.3g GPU-hours, %.3g lost to them)\n",
               p->time_to_train_s / 86400.0, g->ideal_time_s / 86400.0, p->time_to_train_s * p->gpus / 3600.0,
               g->lost_gpu_hours);
}

static void print_details(const plan_cli *c, const cfit_plan *p, double tokens)
{
    const cfit_memory *m = &p->mem;
    const cfit_breakdown *br = &p->br;
    double st = p->step_time_s;
    char rec[96];
    printf("\nbest plan: %ld x %s on %ld x %s nodes, scale-out %s\n", p->gpus, p->gpu->name, p->nodes,
           p->node->name, p->fabric->name);
    printf("  layout: tp %d, pp %d (layers per stage %d..%d, imbalance %.1f%%), dp %d, cp %d, vp %d%s%s, "
           "micro-batch %d x %ld accumulation steps, ZeRO-%d, recompute %s, sp %s\n",
           p->layout.tp, p->layout.pp, p->stage_layers_min, p->stage_layers_max, p->stage_imbalance * 100,
           p->layout.dp, p->layout.cp, p->layout.vp, p->layout.pp > 1 ? ", schedule " : "",
           p->layout.pp > 1 ? cfit_layout_schedule_name(&p->layout) : "", p->layout.mbs, p->grad_accum, p->layout.zero,
           plan_recompute_str(rec, sizeof rec, p), p->layout.sp ? "on" : "off");
    if (p->layout.pp > 1 && p->stage_layers_first > 0) {   /* a balanced split (docs/model.md §5.8) */
        int pp = p->layout.pp, mtp = c->req.model->mtp_layers, mid = cfit_plan_stage_layers_mid(p, c->req.model->layers);
        char mids[48] = "";
        if (pp > 2)
            snprintf(mids, sizeof mids, ", %d on each middle one", mid);
        printf("  stages: %d layers on the first%s, %d on the last (with %sthe loss); --emit megatron writes %s\n",
               p->stage_layers_first, mids, p->stage_layers_last,
               mtp > 0 ? (mtp == 1 ? "the MTP module and " : "the MTP modules and ") : "",
               p->layout.vp > 1 ? "a --pipeline-model-parallel-layout" : "--decoder-first/last-pipeline-num-layers");
    }
    if (show_experts(c))
        printf("  experts: ep %d, etp %d, expert dp %ld (Megatron-Core parallel folding over tp x cp x dp)\n",
               p->layout.ep > 1 ? p->layout.ep : 1, p->layout.etp > 1 ? p->layout.etp : 1,
               (long)p->layout.tp * p->layout.cp * p->layout.dp /
                   ((long)(p->layout.ep > 1 ? p->layout.ep : 1) * (p->layout.etp > 1 ? p->layout.etp : 1)));
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
        print_calibration(c, p);
    plan_print_offload(&c->req, p);
    printf("\n%-34s %10s  %s\n", "memory per GPU (busiest stage)", "GB", "source");
    printf("  %-32s %10.2f  %s\n", "weights", m->weights_bytes / 1e9,
           plan_mem_source(&c->req, p, 0, "2 B/param (+1 fp8 copy), / dp at ZeRO-3"));
    printf("  %-32s %10.2f  %s\n", "gradients", m->grads_bytes / 1e9,
           plan_mem_source(&c->req, p, 1, "--grad-precision B/param, / dp at ZeRO-2+"));
    printf("  %-32s %10.2f  %s\n", "optimizer states", m->optimizer_bytes / 1e9,
           plan_mem_source(&c->req, p, 2, "12 B/param Adam, / dp at ZeRO-1+"));
    printf("  %-32s %10.2f  %s\n", "activations", m->activations_bytes / 1e9, "Korthikanti et al. 2022, docs/model.md");
    printf("  %-32s %10.2f  %s\n", "other (runtime, fragmentation)", m->other_bytes / 1e9, "catalog calibration");
    printf("  %-32s %10.2f  of %.1f GB (%s)%s\n", "total", m->total_bytes / 1e9, m->capacity_bytes / 1e9,
           p->gpu->name, p->fits ? "" : "  DOES NOT FIT");
    if (p->offload || p->offload_modules)
        printf("  %-32s %10.2f  of %.1f GB per GPU (node host memory / its GPUs)\n", "offloaded to host memory",
               m->host_bytes / 1e9, m->host_capacity_bytes / 1e9);
    if (p->offload & CFIT_OFFLOAD_NVME)
        printf("  %-32s %10.2f  of %.1f GB per GPU (node NVMe array / its GPUs)\n", "offloaded to NVMe",
               m->nvme_bytes / 1e9, m->nvme_capacity_bytes / 1e9);
    printf("\n%-34s %10s %7s\n", "step time", "s", "share");
    struct { const char *k; double v; } rows[] = {
        {"compute (GEMM, attention, element-wise)", br->compute_s}, {"tensor-parallel comm", br->tp_comm_s},
        {"context-parallel comm", br->cp_comm_s}, {"pipeline send/recv", br->pp_comm_s},
        {"pipeline bubble", br->pp_bubble_s}, {"data-parallel comm (exposed)", br->dp_comm_s},
        {"optimizer step", br->optimizer_s}, {"kernel overhead", br->other_s},
        {"expert all-to-all (exposed)", br->ep_comm_s}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0] - (show_experts(c) ? 0 : 1); i++) {
        printf("  %-40.40s %10.4f %6.1f%%\n", rows[i].k, rows[i].v, st > 0 ? 100 * rows[i].v / st : 0);
        if (!strcmp(rows[i].k, "kernel overhead") && br->host_wait_s > 0)   /* docs/model.md 5.3 */
            printf("    %-38.38s %10.4f %6.1f%%\n", "of it, GPU idle waiting for the host", br->host_wait_s,
                   st > 0 ? 100 * br->host_wait_s / st : 0);
    }
    if (p->offload || p->offload_modules)
        printf("  %-40.40s %10.4f %6.1f%%\n", p->offload & CFIT_OFFLOAD_NVME ? "offload: link, NVMe, CPU Adam (exposed)"
                                            : p->offload & CFIT_OFFLOAD_OPTIMIZER ? "offload: host link + CPU Adam (exposed)"
                                                                                  : "offload: host link (exposed)", br->offload_s,
               st > 0 ? 100 * br->offload_s / st : 0);
    printf("  %-40s %10.4f\n", "total", st);
    printf("  bound: compute %.0f%%, memory bandwidth %.0f%%, communication %.0f%%, pipeline bubble %.0f%%\n",
           100 * p->compute_bound_s / st, 100 * p->memory_bound_s / st, 100 * p->comm_exposed_s / st,
           100 * br->pp_bubble_s / st);
    printf("\n  throughput: %.0f tokens/s (%.0f per GPU), %.0f model TFLOP/s per GPU (MFU %.1f%%), "
           "%.0f hardware TFLOP/s (HFU %.1f%%)\n",
           p->tokens_per_s, p->tokens_per_s_per_gpu, p->model_tflops_per_gpu, p->mfu * 100,
           p->hardware_tflops_per_gpu, p->hfu * 100);
    print_goodput(p, tokens);
    plan_print_confidence(c, p);
    if (!p->fits)
        printf("  to fit: %s\n", plan_fix_hint(p));
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

/* The capex line: the bill of materials' one computation (cfit_bom_capex), as `--bom` prints it. */
static void print_capex(const cfit_plan *p, const cfit_cost *k)
{
    char b[5][48];
    printf("  capex: %s nodes %s (%.0f NICs in the node price) + fabric %s (%ld switch%s, %ld transceivers, "
           "%ld cables) + storage %s", fmt_count(b[0], 48, (double)p->nodes), fmt_cents(b[1], 48, k->node_capex_usd),
           k->ports, fmt_cents(b[2], 48, k->network_capex_usd), k->switches, k->switches == 1 ? "" : "es",
           k->transceivers, k->cables, fmt_cents(b[3], 48, k->storage_capex_usd));
    if (k->storage[0])
        printf(" (%ld x %s)", k->storage_units, k->storage);
    printf(" = %s\n", fmt_cents(b[4], 48, k->capex_usd));
}

/* Buy vs rent: the busy fraction above which owning beats each rent basis, and the utilisation
 * the own figures assume. */
static void print_break_even(const cfit_cost *k)
{
    static const char *const names[CFIT_BASIS_OWN] = {"on-demand", "reserved", "spot"};
    int any = 0;
    for (int b = 0; b < CFIT_BASIS_OWN; b++) {
        if (!k->has_break_even_basis[b])
            continue;
        printf(any++ ? "; " : "  buy-vs-rent break-even: owning is cheaper when the cluster is busy more than ");
        if (k->break_even_basis[b] < 0)
            printf("never against %s (its rent is below the energy to own)", names[b]);
        else if (k->break_even_basis[b] > 1)
            printf("never against %s (%.0f%%: more than the whole year)", names[b], 100 * k->break_even_basis[b]);
        else
            printf("%.0f%% of the year against %s", 100 * k->break_even_basis[b], names[b]);
    }
    if (any)
        printf("\n");
    if (k->has_own && k->utilisation < 1.0)
        printf("  own at %.0f%% utilisation (--utilisation): the run carries the idle share, amortisation, "
               "maintenance and colocation / %.2f\n", 100 * k->utilisation, k->utilisation);
}

/* The cost and power block of the details (docs/sizing.md). */
static void print_cost(const plan_cli *c, const cfit_plan *p, double tokens)
{
    cfit_cost k;
    char b[6][48];
    cfit_cost_compute_with(c->cc.cat, p, &c->bom.o, &k);
    printf("\ncost and power (docs/sizing.md)\n");
    if (k.has_power)
        printf("  power: %.2f kW per node at load, %.1f kW IT, %.1f kW facility; %ld rack%s of %d node%s "
               "(%.1f kW per rack): %s cooling\n", k.node_power_kw, k.power_kw_it, k.power_kw_facility, k.racks,
               k.racks == 1 ? "" : "s", k.nodes_per_rack, k.nodes_per_rack == 1 ? "" : "s", k.rack_kw, k.cooling);
    if (k.has_own) {
        print_capex(p, &k);
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
    print_break_even(&k);
    if (p->gpu->no_price[0] && (!k.has_own || !k.has_rent[CFIT_BASIS_RENT]))
        printf("  no market price for %s: %s\n", p->gpu->name, p->gpu->no_price);
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
        cfit_cost_compute_with(c->cc.cat, &g->best, &c->bom.o, &k);
        if (k.has_own || k.has_rent[CFIT_BASIS_RENT])
            return 1;
    }
    for (size_t i = 0; i < res->nplans; i++) {
        cfit_cost k;
        cfit_cost_compute_with(c->cc.cat, &res->plans[i], &c->bom.o, &k);
        if (k.has_own || k.has_rent[CFIT_BASIS_RENT])
            return 1;
    }
    return 0;
}

/* "rent (cloud on-demand)" etc.: the basis as the goal line names it. */
const char *plan_basis_words(int basis)
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
            printf("; budget %s on %s", fmt_usd(b, 32, r->budget_usd), plan_basis_words(r->cost_basis));
        printf("\n");
    } else if (r->days <= 0) {
        printf("goal: the fastest plan of each GPU type costing at most %s on %s; ranked by time to train\n",
               fmt_usd(b, 32, r->budget_usd), plan_basis_words(r->cost_basis));
    } else {
        printf("goal: the fewest GPUs of each type that train within %g day(s)", r->days);
        if (r->budget_usd > 0)
            printf(" and cost at most %s on %s", fmt_usd(b, 32, r->budget_usd), plan_basis_words(r->cost_basis));
        if (res->ranked_by_cost)
            printf("; ranked by cost on %s\n", plan_basis_words(r->cost_basis));
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
        cfit_cost_compute_with(c->cc.cat, &g->best, &c->bom.o, &k);
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
        plan_header(cost, show_experts(c));
    for (size_t i = 0; i < res->ngpu; i++)
        if (meets_goal(&res->per_gpu[i], sizing))
            plan_row(c, &res->per_gpu[i].best, c->req.tokens, cost);
    for (size_t i = 0; i < res->ngpu; i++)
        if (!meets_goal(&res->per_gpu[i], sizing))
            print_missed(c, &res->per_gpu[i], sizing);
    for (size_t i = 0; i < res->ngpu; i++)
        if (res->per_gpu[i].gpu->no_price[0])
            printf("%-13s no market price, so ranked by GPU-hours: %s\n", res->per_gpu[i].gpu->name,
                   res->per_gpu[i].gpu->no_price);
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

int plan_print_tables(const plan_cli *c, const cfit_plan_result *res, int sizing)
{
    const cfit_plan_request *r = &c->req;
    const cfit_model *m = r->model;
    char buf[3][32], active[48] = "", mtp[32] = "";
    int cost = any_cost(c, res);
    if (!c->quiet) {
        if (cfit_model_active_params(m) != cfit_model_params(m))
            snprintf(active, sizeof active, ", %s active", fmt_count(buf[0], 32, cfit_model_active_params(m)));
        if (m->mtp_layers > 0)
            snprintf(mtp, sizeof mtp, " with %d MTP module%s", m->mtp_layers, m->mtp_layers == 1 ? "" : "s");
        printf("workload: %s (%s params%s%s), %s tokens, seq %d, global batch %ld sequences (%s tokens), %s\n",
               m->name, fmt_count(buf[0], 32, cfit_model_params(m)), mtp, active,
               r->tokens > 0 ? fmt_count(buf[1], 32, r->tokens) : "-", res->seq_len, res->global_batch,
               fmt_count(buf[2], 32, (double)res->global_batch * res->seq_len), cfit_precision_name(r->precision));
        if (c->model_file.layers > 0)   /* a user's own model (also under --mtp): where its figures come from */
            printf("model source: %s\n", m->source);
        plan_print_finetune(r);
        print_goal(c, res, sizing);
        plan_print_offload_note(res);
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
        plan_header(cost, show_experts(c));
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
