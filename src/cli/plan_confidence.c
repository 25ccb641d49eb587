/* plan_confidence.c - the plan's model check line and JSON object: how clusterfit's model did on
 * the published runs nearest the plan (clusterfit/confidence.h, docs/plan.md "Model check"). */
#include "plan_cli.h"
#include "clusterfit/confidence.h"
#include "clusterfit/workload.h"

#include <stdio.h>

static void plan_confidence_of(const cfit_plan_request *r, const cfit_plan *p, cfit_confidence *k)
{
    cfit_plan_confidence(r->catalog, p->gpu, p->gpus, cfit_model_params(r->model), r->model->num_experts > 0, k);
}

/* Where the runs compared come from. */
static const char *runs_file(const cfit_confidence *k)
{
    return k->moe_runs ? "bench/data/moe-calibration.csv" : "bench/data/calibration.csv";
}

const char *plan_confidence_line(char *buf, size_t n, const cfit_plan_request *r, const cfit_plan *p)
{
    cfit_confidence k;
    plan_confidence_of(r, p, &k);
    const char *arch = cfit_gpu_arch_name(k.arch);
    if (!k.runs) {
        snprintf(buf, n, "model check: no published run of this GPU family (%s) in bench/data/calibration.csv%s",
                 arch, r->model->num_experts > 0 ? " or moe-calibration.csv" : "");
        return buf;
    }
    char at[48];
    if (k.gpus_min == k.gpus_max)
        snprintf(at, sizeof at, "%d GPUs", k.gpus_min);
    else
        snprintf(at, sizeof at, "%d-%d GPUs", k.gpus_min, k.gpus_max);
    snprintf(buf, n, "model check: published %s%s runs at %s (%s %d, %s%s): median |error| %.0f%%, max %.0f%%",
             arch, k.moe_runs ? " MoE" : "", at, k.runs < CFIT_CONFIDENCE_RUNS ? "all" : "nearest", k.runs,
             runs_file(&k), k.dense_for_moe ? "; dense runs, no MoE run of this family" : "",
             100 * k.median_abs_error, 100 * k.max_abs_error);
    return buf;
}

void plan_print_confidence(const plan_cli *c, const cfit_plan *p)
{
    char line[256];
    printf("  %s\n", plan_confidence_line(line, sizeof line, &c->req, p));
}

void plan_json_confidence(cfit_buf *b, const plan_cli *c, const cfit_plan *p)
{
    cfit_confidence k;
    plan_confidence_of(&c->req, p, &k);
    cfit_buf_puts(b, ", \"confidence\": {");
    cfit_buf_key_string(b, "arch", cfit_gpu_arch_name(k.arch), 0);
    cfit_buf_key_number(b, "runs", k.runs, 1);
    if (k.runs) {
        cfit_buf_key_number(b, "median_abs_error", k.median_abs_error, 1);
        cfit_buf_key_number(b, "max_abs_error", k.max_abs_error, 1);
    } else {
        cfit_buf_puts(b, ", \"median_abs_error\": null, \"max_abs_error\": null");
    }
    cfit_buf_puts(b, ", \"ids\": [");
    for (int i = 0; i < k.runs; i++) {
        cfit_buf_puts(b, i ? ", " : "");
        cfit_buf_json_string(b, k.ids[i]);
    }
    cfit_buf_printf(b, "], \"moe_runs\": %s, \"dense_runs_for_moe\": %s", k.moe_runs ? "true" : "false",
                     k.dense_for_moe ? "true" : "false");
    cfit_buf_printf(b, ", \"source\": \"%s via data/%s\"}", runs_file(&k),
                     k.moe_runs ? "moe-fidelity.json" : "fidelity.json");
}
