/* plan_json.c - `clusterfit plan --json`: the result as one document (docs/json.md). */
#include "plan_cli.h"
#include "clusterfit/writer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void j_cost(cfit_buf *b, const plan_cli *c, const cfit_plan *p)
{
    cfit_cost k;
    cfit_cost_compute_with(c->cc.cat, p, &c->bom.o, &k);
    double tokens = c->req.tokens, usd = 0;
    int have = cfit_cost_of(&k, (cfit_cost_basis)c->req.cost_basis, &usd) && tokens > 0;
    cfit_buf_puts(b, ", \"cost\": {");
    cfit_buf_key_string(b, "basis", cfit_cost_basis_name((cfit_cost_basis)c->req.cost_basis), 0);
    cfit_buf_key_opt(b, "basis_usd", have, usd);
    cfit_buf_key_opt(b, "usd_per_million_tokens", have, tokens > 0 ? usd / (tokens / 1e6) : 0);
    cfit_buf_key_opt(b, "capex_usd", k.has_own, k.capex_usd);
    cfit_buf_key_opt(b, "node_capex_usd", k.has_own, k.node_capex_usd);
    cfit_buf_key_opt(b, "network_capex_usd", k.has_own, k.network_capex_usd);
    cfit_buf_key_opt(b, "storage_capex_usd", k.has_own, k.storage_capex_usd);
    cfit_buf_key_opt(b, "switches", k.has_own, (double)k.switches);
    cfit_buf_key_opt(b, "transceivers", k.has_own, (double)k.transceivers);
    cfit_buf_key_opt(b, "cables", k.has_own, (double)k.cables);
    cfit_buf_key_opt(b, "scaleout_ports", k.has_own, k.ports);
    cfit_buf_key_opt(b, "own_run_usd", k.has_own, k.own_run_usd);
    cfit_buf_key_opt(b, "amortised_usd", k.has_own, k.amortised_usd);
    cfit_buf_key_opt(b, "energy_usd", k.has_own, k.energy_usd);
    cfit_buf_key_opt(b, "maintenance_usd", k.has_own, k.maintenance_usd);
    cfit_buf_key_opt(b, "colocation_usd", k.has_own, k.colo_usd);
    cfit_buf_key_number(b, "gpu_hours", k.gpu_hours, 1);
    cfit_buf_key_opt(b, "rent_on_demand_usd", k.has_rent[CFIT_BASIS_RENT], k.rent_usd[CFIT_BASIS_RENT]);
    cfit_buf_key_opt(b, "rent_reserved_usd", k.has_rent[CFIT_BASIS_RESERVED], k.rent_usd[CFIT_BASIS_RESERVED]);
    cfit_buf_key_opt(b, "rent_spot_usd", k.has_rent[CFIT_BASIS_SPOT], k.rent_usd[CFIT_BASIS_SPOT]);
    cfit_buf_key_opt(b, "break_even_utilisation", k.has_break_even && k.break_even_utilisation >= 0, k.break_even_utilisation);
    cfit_buf_key_opt(b, "break_even_utilisation_reserved",
                      k.has_break_even_basis[CFIT_BASIS_RESERVED] && k.break_even_basis[CFIT_BASIS_RESERVED] >= 0,
                      k.break_even_basis[CFIT_BASIS_RESERVED]);
    cfit_buf_key_opt(b, "break_even_utilisation_spot",
                      k.has_break_even_basis[CFIT_BASIS_SPOT] && k.break_even_basis[CFIT_BASIS_SPOT] >= 0,
                      k.break_even_basis[CFIT_BASIS_SPOT]);
    cfit_buf_key_opt(b, "utilisation", k.has_own, k.utilisation);
    cfit_buf_key_opt(b, "power_kw_node", k.has_power, k.node_power_kw);
    cfit_buf_key_opt(b, "power_kw_it", k.has_power, k.power_kw_it);
    cfit_buf_key_opt(b, "power_kw_facility", k.has_power, k.power_kw_facility);
    cfit_buf_key_opt(b, "racks", k.has_power, (double)k.racks);
    cfit_buf_key_opt(b, "nodes_per_rack", k.has_power, k.nodes_per_rack);
    cfit_buf_key_opt(b, "rack_kw", k.has_power, k.rack_kw);
    if (k.has_power)
        cfit_buf_key_string(b, "cooling", k.cooling, 1);
    else
        cfit_buf_puts(b, ", \"cooling\": null");
    if (p->gpu->no_price[0])
        cfit_buf_key_string(b, "no_price", p->gpu->no_price, 1);
    else
        cfit_buf_puts(b, ", \"no_price\": null");
    cfit_buf_puts(b, ", \"missing_prices\": [");
    const char *miss[] = {k.has_own ? "" : k.missing_own, k.has_rent[0] ? "" : k.missing_rent[0],
                          k.has_rent[1] ? "" : k.missing_rent[1], k.has_rent[2] ? "" : k.missing_rent[2]};
    int n = 0;
    for (size_t i = 0; i < sizeof miss / sizeof miss[0]; i++)
        if (miss[i][0]) {
            cfit_buf_puts(b, n++ ? ", " : "");
            cfit_buf_json_string(b, miss[i]);
        }
    cfit_buf_puts(b, "], \"prices_used\": [");
    for (int i = 0; i < k.nused; i++) {
        const cfit_price *pr = k.used[i];
        cfit_buf_puts(b, i ? ", {" : "{");
        cfit_buf_key_string(b, "name", pr->name, 0);
        cfit_buf_key_number(b, "value", pr->value, 1);
        cfit_buf_key_string(b, "unit", cfit_price_unit_name(pr->unit), 1);
        cfit_buf_key_string(b, "date", pr->date, 1);
        cfit_buf_key_string(b, "source", pr->source, 1);
        cfit_buf_puts(b, "}");
    }
    cfit_buf_puts(b, "]}");
}

/* `"goodput": {...}`: failures, checkpoints and restarts (goodput.h); model figures are null when
 * the catalog has no failure rates for the GPU. */
static void j_goodput(cfit_buf *b, const cfit_plan *p)
{
    const cfit_goodput *g = &p->goodput;
    int m = g->modelled;
    cfit_buf_puts(b, ", \"goodput\": {");
    cfit_buf_printf(b, "\"modelled\": %s", m ? "true" : "false");
    cfit_buf_key_number(b, "fraction", g->fraction, 1);
    cfit_buf_key_opt(b, "mtbi_hours", m, g->mtbi_hours);
    cfit_buf_key_number(b, "expected_interruptions", g->expected_interruptions, 1);
    cfit_buf_key_number(b, "planned_interruptions", g->planned_interruptions, 1);
    cfit_buf_puts(b, ", \"interruptions_per_hour\": {");
    for (int k = 0; k < CFIT_FAIL_CLASS_COUNT; k++)
        cfit_buf_key_number(b, cfit_failure_class_name((cfit_failure_class)k), g->rate_per_hour[k], k > 0);
    cfit_buf_puts(b, "}");
    cfit_buf_key_opt(b, "checkpoint_bytes", m, g->checkpoint_bytes);
    cfit_buf_puts(b, ", \"storage\": ");
    if (m && g->storage[0])
        cfit_buf_json_string(b, g->storage);
    else
        cfit_buf_puts(b, "null");
    cfit_buf_key_opt(b, "storage_units", m && g->storage[0], (double)g->storage_units);
    cfit_buf_key_opt(b, "checkpoint_write_bytes_per_s", m, g->write_bytes_per_s);
    cfit_buf_key_opt(b, "checkpoint_write_s", m, g->checkpoint_write_s);
    cfit_buf_key_opt(b, "checkpoint_read_s", m, g->checkpoint_read_s);
    cfit_buf_key_opt(b, "checkpoint_interval_s", m, g->checkpoint_interval_s);
    cfit_buf_key_opt(b, "young_interval_s", m, g->young_interval_s);
    cfit_buf_key_opt(b, "daly_interval_s", m, g->daly_interval_s);
    cfit_buf_key_opt(b, "detect_reschedule_s", m, g->detect_reschedule_s);
    cfit_buf_key_opt(b, "restart_s", m, g->restart_s);
    cfit_buf_key_number(b, "ideal_time_to_train_s", g->ideal_time_s, 1);
    cfit_buf_key_number(b, "lost_gpu_hours", g->lost_gpu_hours, 1);
    cfit_buf_puts(b, "}");
}

static void j_plan(cfit_buf *b, const plan_cli *c, const cfit_plan *p)
{
    const cfit_layout *l = &p->layout;
    cfit_buf_puts(b, "{");
    cfit_buf_key_string(b, "gpu", p->gpu->name, 0);
    cfit_buf_key_number(b, "gpus", (double)p->gpus, 1);
    cfit_buf_key_number(b, "nodes", (double)p->nodes, 1);
    cfit_buf_key_string(b, "node", p->node->name, 1);
    cfit_buf_key_string(b, "fabric", p->fabric->name, 1);
    cli_json_layout_dims(b, l, 1);
    cfit_buf_key_number(b, "ep", l->ep > 1 ? l->ep : 1, 1);    /* expert parallel sizes: 1 when dense */
    cfit_buf_key_number(b, "etp", l->etp > 1 ? l->etp : 1, 1);
    cfit_buf_key_number(b, "global_batch", (double)p->global_batch, 1);
    cfit_buf_key_number(b, "grad_accum", (double)p->grad_accum, 1);
    cfit_buf_key_number(b, "zero", l->zero, 1);
    cfit_buf_key_string(b, "recompute", cfit_recompute_name((cfit_recompute)l->recompute), 1);
    cfit_buf_key_number(b, "recompute_layers", p->recompute_layers, 1);
    {   /* the Megatron submodules the mode reruns: selective = core_attn, experts = moe */
        unsigned mods = cfit_recompute_mask((cfit_recompute)l->recompute, (unsigned)l->recompute_modules);
        cfit_buf_puts(b, ", \"recompute_modules\": [");
        for (int i = 0, first = 1; i < CFIT_RECMOD_COUNT; i++)
            if (mods & (1u << i)) {
                cfit_buf_printf(b, "%s\"%s\"", first ? "" : ", ", cfit_recompute_module_name(i));
                first = 0;
            }
        cfit_buf_puts(b, "]");
    }
    cfit_buf_printf(b, ", \"sequence_parallel\": %s", l->sp ? "true" : "false");
    cfit_buf_printf(b, ", \"fits\": %s", p->fits ? "true" : "false");
    cfit_buf_puts(b, ", \"memory\": {");
    cfit_buf_key_number(b, "weights_bytes", p->mem.weights_bytes, 0);
    cfit_buf_key_number(b, "grads_bytes", p->mem.grads_bytes, 1);
    cfit_buf_key_number(b, "optimizer_bytes", p->mem.optimizer_bytes, 1);
    cfit_buf_key_number(b, "activations_bytes", p->mem.activations_bytes, 1);
    cfit_buf_key_number(b, "other_bytes", p->mem.other_bytes, 1);
    cfit_buf_key_number(b, "total_bytes", p->mem.total_bytes, 1);
    cfit_buf_key_number(b, "capacity_bytes", p->mem.capacity_bytes, 1);
    cfit_buf_key_number(b, "shortfall_bytes", p->fits ? 0.0 : p->mem.total_bytes - p->mem.capacity_bytes, 1);
    cfit_buf_puts(b, "}");
    cfit_buf_key_number(b, "step_time_s", p->step_time_s, 1);
    cfit_buf_puts(b, ", \"breakdown_s\": {");
    cfit_buf_key_number(b, "compute", p->br.compute_s, 0);
    cfit_buf_key_number(b, "tp_comm", p->br.tp_comm_s, 1);
    cfit_buf_key_number(b, "cp_comm", p->br.cp_comm_s, 1);
    cfit_buf_key_number(b, "pp_comm", p->br.pp_comm_s, 1);
    cfit_buf_key_number(b, "pp_bubble", p->br.pp_bubble_s, 1);
    cfit_buf_key_number(b, "dp_comm", p->br.dp_comm_s, 1);
    cfit_buf_key_number(b, "ep_comm", p->br.ep_comm_s, 1);
    cfit_buf_key_number(b, "optimizer", p->br.optimizer_s, 1);
    cfit_buf_key_number(b, "other", p->br.other_s, 1);
    cfit_buf_key_number(b, "host_wait", p->br.host_wait_s, 1);
    cfit_buf_puts(b, "}, \"bound_s\": {");
    cfit_buf_key_number(b, "compute", p->compute_bound_s, 0);
    cfit_buf_key_number(b, "memory", p->memory_bound_s, 1);
    cfit_buf_key_number(b, "communication", p->comm_exposed_s, 1);
    cfit_buf_puts(b, "}");
    cfit_buf_key_number(b, "stage_layers_min", p->stage_layers_min, 1);
    cfit_buf_key_number(b, "stage_layers_max", p->stage_layers_max, 1);
    if (p->stage_layers_first > 0) {   /* a balanced split (docs/model.md §5.8); null: the default one */
        cfit_buf_key_number(b, "stage_layers_first", p->stage_layers_first, 1);
        cfit_buf_key_number(b, "stage_layers_last", p->stage_layers_last, 1);
    } else {
        cfit_buf_puts(b, ", \"stage_layers_first\": null, \"stage_layers_last\": null");
    }
    cfit_buf_key_number(b, "stage_imbalance", p->stage_imbalance, 1);
    cfit_buf_key_number(b, "tokens_per_s", p->tokens_per_s, 1);
    cfit_buf_key_number(b, "tokens_per_s_per_gpu", p->tokens_per_s_per_gpu, 1);
    cfit_buf_key_number(b, "model_tflops_per_gpu", p->model_tflops_per_gpu, 1);
    cfit_buf_key_number(b, "hardware_tflops_per_gpu", p->hardware_tflops_per_gpu, 1);
    cfit_buf_key_number(b, "mfu", p->mfu, 1);
    cfit_buf_key_number(b, "hfu", p->hfu, 1);
    cfit_buf_key_number(b, "time_to_train_s", p->time_to_train_s, 1);
    plan_json_offload(b, c, p);
    j_goodput(b, p);
    j_cost(b, c, p);
    plan_json_confidence(b, c, p);
    cfit_buf_puts(b, "}");
}

/* `"calibration": {...}` from --calibration, or null. */
static void j_calibration(cfit_buf *b, const plan_cli *c)
{
    if (!c->calibration_file) {
        cfit_buf_puts(b, ", \"calibration\": null");
        return;
    }
    cfit_buf_puts(b, ", \"calibration\": {");
    cfit_buf_key_string(b, "file", c->calibration_file, 0);
    cfit_buf_key_string(b, "benchmark", c->cal.benchmark, 1);
    cfit_buf_key_number(b, "bandwidth_bytes_per_s", c->cal_model.bw_bytes_per_s, 1);
    cfit_buf_key_number(b, "latency_s", c->cal_model.latency_s, 1);
    cfit_buf_printf(b, ", \"solved\": %s", c->cal_solved ? "true" : "false");
    cfit_buf_key_number(b, "measured_bandwidth_bytes_per_s", c->cal.bw_bytes_per_s, 1);
    cfit_buf_key_number(b, "measured_latency_s", c->cal.latency_s, 1);
    const cfit_calibration *k = &c->cal;
    int log = strcmp(k->source, "nccl-tests") == 0;
    cfit_buf_key_string(b, "source", k->source, 1);
    cfit_buf_key_number(b, "ranks", k->ranks, 1);
    cfit_buf_key_number(b, "hosts", k->hosts, 1);
    cfit_buf_key_number(b, "steps", k->steps, 1);
    cfit_buf_puts(b, ", \"program\": ");
    if (log && k->program[0])
        cfit_buf_json_string(b, k->program);
    else
        cfit_buf_puts(b, "null");
    cfit_buf_puts(b, ", \"gpu\": ");
    if (log && k->gpu[0])
        cfit_buf_json_string(b, k->gpu);
    else
        cfit_buf_puts(b, "null");
    if (!log) {
        cfit_buf_puts(b, ", \"fit\": null}");
        return;
    }
    cfit_buf_puts(b, ", \"fit\": {");
    cfit_buf_key_number(b, "alpha_s", k->fit_alpha_s, 0);
    cfit_buf_key_number(b, "beta_bytes_per_s", k->fit_beta_bytes_per_s, 1);
    cfit_buf_key_number(b, "median_relative_error", k->fit_error, 1);
    cfit_buf_key_number(b, "rows", k->fit_rows, 1);
    cfit_buf_puts(b, ", \"points\": [");
    for (int i = 0; i < k->npoints; i++) {
        cfit_buf_puts(b, i ? ", {" : "{");
        cfit_buf_key_number(b, "size_bytes", k->points[i].size_bytes, 0);
        cfit_buf_key_number(b, "time_s", k->points[i].time_s, 1);
        cfit_buf_key_number(b, "busbw_bytes_per_s", k->points[i].busbw_bytes_per_s, 1);
        cfit_buf_puts(b, "}");
    }
    cfit_buf_puts(b, "]}}");
}

int plan_print_json(const plan_cli *c, const cfit_plan_result *res, int sizing)
{
    const cfit_plan_request *r = &c->req;
    const cfit_model *m = r->model;
    cfit_buf b;
    cfit_buf_init(&b);
    cfit_buf_puts(&b, "{");
    cfit_buf_key_string(&b, "clusterfit_version", CFIT_VERSION, 0);
    cfit_buf_puts(&b, ", \"workload\": {");
    cfit_buf_key_string(&b, "model", m->name, 0);
    cfit_buf_key_number(&b, "params", cfit_model_params(m), 1);
    cfit_buf_key_number(&b, "active_params", cfit_model_active_params(m), 1);
    cfit_buf_key_number(&b, "mtp_layers", m->mtp_layers, 1);
    cfit_buf_key_number(&b, "seq_len", res->seq_len, 1);
    cfit_buf_key_number(&b, "global_batch", (double)res->global_batch, 1);
    cfit_buf_key_number(&b, "tokens_per_step", (double)res->global_batch * res->seq_len, 1);
    cfit_buf_key_number(&b, "tokens", r->tokens, 1);
    cfit_buf_key_string(&b, "precision", cfit_precision_name(r->precision), 1);
    const cfit_framework *fw = r->framework ? r->framework : cfit_catalog_framework(r->catalog, "megatron-core", NULL);
    int unfused = r->unfused_attention >= 0 ? r->unfused_attention : (fw && fw->unfused_attention);
    cfit_buf_key_string(&b, "framework", fw ? fw->name : "megatron-core", 1);
    cfit_buf_key_string(&b, "attention", unfused ? "unfused" : "fused", 1);
    cfit_buf_key_string(&b, "cuda_graphs", cfit_cuda_graphs_name((cfit_cuda_graphs)r->cuda_graphs), 1);
    cfit_buf_key_number(&b, "model_flops_per_token",
                         cfit_finetune_flops_per_token(m, res->seq_len, (cfit_finetune)r->finetune,
                                                       r->lora_rank > 0 ? r->lora_rank : CFIT_LORA_RANK_DEFAULT), 1);
    if (c->topology || c->fabric) {   /* --fabric alone: the topology assumed (docs/plan.md) */
        const cfit_plan *best = res->nplans > 0 ? &res->plans[0] : NULL;
        char spec[64];
        if (!c->topology)
            cfit_plan_assumed_topology(best ? best->nodes : 1, best ? best->node->gpus_per_node : 1, spec,
                                       sizeof spec);
        cfit_buf_puts(&b, ", \"topology\": {");
        cfit_buf_key_string(&b, "spec", c->topology ? c->topology : spec, 0);
        cfit_buf_puts(&b, c->topology ? ", \"assumed\": false" : ", \"assumed\": true");
        cfit_buf_key_number(&b, "slowdown", best ? best->fabric_slowdown : 1.0, 1);
        cfit_buf_key_number(&b, "slowdown_dp", best ? best->slowdown_dp : 1.0, 1);
        cfit_buf_key_number(&b, "slowdown_tp", best ? best->slowdown_tp : 1.0, 1);
        cfit_buf_key_number(&b, "slowdown_pp", best ? best->slowdown_pp : 1.0, 1);
        cfit_buf_key_number(&b, "slowdown_cp", best ? best->slowdown_cp : 1.0, 1);
        cfit_buf_puts(&b, "}");
    }
    cfit_buf_puts(&b, "}, \"goal\": {");
    cfit_buf_key_string(&b, "mode", !sizing ? "fixed_gpus" : r->days > 0 ? "deadline" : "budget", 0);
    cfit_buf_key_number(&b, "days", sizing ? r->days : 0.0, 1);
    cfit_buf_key_number(&b, "gpus", (double)cfit_plan_fixed_gpus(r), 1);
    cfit_buf_key_number(&b, "budget_usd", r->budget_usd, 1);
    cfit_buf_key_string(&b, "cost_basis", cfit_cost_basis_name((cfit_cost_basis)r->cost_basis), 1);
    cfit_buf_key_string(&b, "ranked_by", !sizing ? "tokens_per_s" : res->ranked_by_cost ? "cost" :
                           r->days > 0 ? "gpu_hours" : "time_to_train", 1);
    cfit_buf_puts(&b, "}, \"search\": {");
    cfit_buf_key_number(&b, "evaluated", (double)res->evaluated, 0);
    cfit_buf_key_number(&b, "feasible", (double)res->feasible, 1);
    cfit_buf_key_number(&b, "seconds", res->seconds, 1);
    cfit_buf_puts(&b, "}");
    j_calibration(&b, c);
    cfit_buf_puts(&b, ", \"plans\": [");
    for (size_t i = 0; i < res->nplans; i++) {
        if (i)
            cfit_buf_puts(&b, ", ");
        j_plan(&b, c, &res->plans[i]);
    }
    cfit_buf_puts(&b, "], \"per_gpu\": [");
    for (size_t i = 0; i < res->ngpu; i++) {
        const cfit_gpu_result *g = &res->per_gpu[i];
        cfit_buf_puts(&b, i ? ", {" : "{");
        cfit_buf_key_string(&b, "gpu", g->gpu->name, 0);
        cfit_buf_printf(&b, ", \"found\": %s, \"meets_deadline\": %s, \"within_budget\": %s",
                         g->found ? "true" : "false", g->meets_deadline ? "true" : "false",
                         g->within_budget ? "true" : "false");
        cfit_buf_printf(&b, ", \"offload_searched\": %s", g->offload_searched ? "true" : "false");
        cfit_buf_key_opt(&b, "cost_usd", g->has_cost, g->cost_usd);
        if (g->found) {
            cfit_buf_puts(&b, ", \"best\": ");
            j_plan(&b, c, &g->best);
        } else if (g->has_closest) {
            cfit_buf_puts(&b, ", \"closest\": ");
            j_plan(&b, c, &g->closest);
        }
        cfit_buf_puts(&b, "}");
    }
    cfit_buf_puts(&b, "]");
    if (res->nplans > 0)
        cli_bom_json(&c->bom, r, &res->plans[0], &b);
    cfit_buf_puts(&b, "}\n");
    return cli_emit_json(&b);
}
