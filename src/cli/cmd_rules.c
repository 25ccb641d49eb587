/* cmd_rules.c - `clusterfit rules`: Prometheus alerting rules (YAML) for the exporter's metrics,
 * with step-time and all-reduce expectations taken from a `clusterfit plan --json` file. */
#include "cli.h"
#include "base/json.h"
#include "base/file.h"

#include <stdlib.h>
#include <string.h>

enum {
    O_PLAN = 1, O_GPU_UTIL, O_GPU_FOR, O_NET, O_DATA, O_AR, O_FOR, O_JOB, O_MARGIN, O_WINDOW
};

static const cli_opt opts[] = {
    {"from-plan", 0, "FILE", "take the expected step and all-reduce time per step from a plan --json file (- = stdin)", O_PLAN},
    {"gpu-util-below", 0, "RATIO", "GpuUnderutilized: GPU utilisation below this (default 0.8)", O_GPU_UTIL},
    {"gpu-util-for", 0, "TIME", "... for this long (default 10m)", O_GPU_FOR},
    {"network-above", 0, "RATIO", "NetworkSaturated: traffic above this share of the link speed (default 0.7)", O_NET},
    {"data-loading-above", 0, "RATIO", "DataLoadingBound: data loading above this share of step time (default 0.05)", O_DATA},
    {"allreduce-above", 0, "RATIO", "AllReduceBound: all-reduce above this share of step time (default 0.1)", O_AR},
    {"plan-margin", 0, "RATIO", "with --from-plan: alert when a step is this many times the plan's (default 1.25)", O_MARGIN},
    {"for", 0, "TIME", "how long the other conditions must hold (default 5m)", O_FOR},
    {"rate-window", 0, "TIME", "range of the rate() windows (default 5m)", O_WINDOW},
    {"exporter-job", 0, "NAME", "the Prometheus job label of the exporters' scrape config (default clusterfit)", O_JOB},
    {NULL, 0, NULL, NULL, 0},
};

typedef struct rules_cli {
    const char *plan_file, *job;
    double gpu_util, net, data, ar, margin;
    double gpu_for_s, for_s, window_s;
    /* from the plan */
    int have_plan;
    double step_s, dp_comm_s;
    char plan_desc[256];
} rules_cli;

static int opt_time(const char *name, const char *value, double *out)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    if (cfit_parse_time(value, out, &d))
        return cli_error("--%s: %s", name, d.msg);
    if (*out < 1 || *out > 366 * 86400.0)
        return cli_error("--%s: %s is out of range (1s to 366d)", name, value);
    return 0;
}

static int on_opt(void *vc, int id, const char *name, const char *value)
{
    rules_cli *c = vc;
    switch (id) {
    case -1: return cli_error("rules: unexpected argument '%s' (see --help)", value);
    case O_PLAN: c->plan_file = value; return 0;
    case O_GPU_UTIL: return cli_real(name, value, 0.01, 1, &c->gpu_util);
    case O_GPU_FOR: return opt_time(name, value, &c->gpu_for_s);
    case O_NET: return cli_real(name, value, 0.01, 1, &c->net);
    case O_DATA: return cli_real(name, value, 0.001, 1, &c->data);
    case O_AR: return cli_real(name, value, 0.001, 1, &c->ar);
    case O_MARGIN: return cli_real(name, value, 1, 100, &c->margin);
    case O_FOR: return opt_time(name, value, &c->for_s);
    case O_WINDOW: return opt_time(name, value, &c->window_s);
    case O_JOB:
        for (const char *p = value; *p; p++)
            if (*p == '"' || *p == '\\' || *p == '\n' || *p == '\'')
                return cli_error("--%s: quotes, backslashes and newlines are not allowed", name);
        if (!*value)
            return cli_error("--%s: empty", name);
        c->job = value;
        return 0;
    }
    return 0;
}

/* A Prometheus duration: whole seconds as "90s", "10m", "2h". */
static const char *dur(char *buf, size_t n, double s)
{
    long v = (long)(s + 0.5);
    if (v % 3600 == 0)
        snprintf(buf, n, "%ldh", v / 3600);
    else if (v % 60 == 0)
        snprintf(buf, n, "%ldm", v / 60);
    else
        snprintf(buf, n, "%lds", v);
    return buf;
}

static int plan_number(const cfit__json *obj, const char *key, const char *file, double *out)
{
    const cfit__json *v = cfit__json_get(obj, key);
    cfit_diag d;
    cfit_diag_clear(&d);
    if (!v || v->type != CFIT__JSON_NUMBER || !(v->number >= 0)) {
        cfit_diag_set(&d, CFIT_EPARSE, file, v ? v->line : obj->line, v ? v->col : obj->col,
                      "expected \"%s\" to be a number of seconds >= 0 (a clusterfit plan --json file)", key);
        return cli_error_diag(&d, CFIT_EPARSE);
    }
    *out = v->number;
    return 0;
}

static int load_plan(rules_cli *c)
{
    int err;
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit__json *root = cfit__json_load(c->plan_file, &err, &d);
    if (!root)
        return cli_error_diag(&d, err);
    const cfit__json *plans = cfit__json_get(root, "plans");
    int rc = 0;
    if (!plans || plans->type != CFIT__JSON_ARRAY || plans->n == 0 || plans->items[0]->type != CFIT__JSON_OBJECT) {
        cfit_diag_set(&d, CFIT_EPARSE, cfit__input_name(c->plan_file), root->line, root->col,
                      "expected an object with a non-empty \"plans\" array (clusterfit plan --json output)");
        rc = cli_error_diag(&d, CFIT_EPARSE);
    }
    const cfit__json *p = rc ? NULL : plans->items[0];
    const cfit__json *bd = p ? cfit__json_get(p, "breakdown_s") : NULL;
    if (!rc && (!bd || bd->type != CFIT__JSON_OBJECT)) {
        cfit_diag_set(&d, CFIT_EPARSE, cfit__input_name(c->plan_file), p->line, p->col, "plans[0] has no \"breakdown_s\" object");
        rc = cli_error_diag(&d, CFIT_EPARSE);
    }
    if (!rc)
        rc = plan_number(p, "step_time_s", cfit__input_name(c->plan_file), &c->step_s);
    if (!rc)
        rc = plan_number(bd, "dp_comm", cfit__input_name(c->plan_file), &c->dp_comm_s);
    if (!rc && !(c->step_s > 0)) {
        const cfit__json *v = cfit__json_get(p, "step_time_s");
        cfit_diag_set(&d, CFIT_EPARSE, cfit__input_name(c->plan_file), v->line, v->col, "step_time_s must be > 0");
        rc = cli_error_diag(&d, CFIT_EPARSE);
    }
    if (!rc) {
        const cfit__json *g = cfit__json_get(p, "gpu"), *n = cfit__json_get(p, "gpus");
        snprintf(c->plan_desc, sizeof c->plan_desc, "%s x %.0f",
                 g && g->type == CFIT__JSON_STRING ? g->string : "?", n && n->type == CFIT__JSON_NUMBER ? n->number : 0);
        for (char *q = c->plan_desc; *q; q++)
            if (*q == '"' || *q == '\\' || *q == '\n' || *q == '{' || *q == '}')
                *q = '?';
        c->have_plan = 1;
    }
    cfit__json_free(root);
    return rc;
}

static void alert(const char *name, const char *expr, const char *for_, const char *severity, const char *summary)
{
    printf("      - alert: %s\n        expr: %s\n        for: %s\n        labels:\n          severity: %s\n"
           "        annotations:\n          summary: \"%s\"\n",
           name, expr, for_, severity, summary);
}

static void print_rules(const rules_cli *c)
{
    char gf[32], f[32], w[32], expr[1024], sum[512];
    dur(gf, sizeof gf, c->gpu_for_s);
    dur(f, sizeof f, c->for_s);
    dur(w, sizeof w, c->window_s);
    printf("# Prometheus alerting rules for clusterfit exporter metrics (docs/metrics.md), printed by\n"
           "# clusterfit rules. Load with rule_files: in prometheus.yml; check with promtool check rules.\n");
    if (c->have_plan)
        printf("# Expectations from the plan: %s, step %.4g s, exposed all-reduce %.4g s per step.\n", c->plan_desc,
               c->step_s, c->dp_comm_s);
    printf("groups:\n  - name: clusterfit-node\n    rules:\n");
    snprintf(expr, sizeof expr, "clusterfit_gpu_utilization_ratio < %g", c->gpu_util);
    snprintf(sum, sizeof sum, "GPU {{ $labels.gpu }} on {{ $labels.instance }} below %g%% utilisation for %s",
             c->gpu_util * 100, gf);
    alert("ClusterfitGpuUnderutilized", expr, gf, "warning", sum);
    snprintf(expr, sizeof expr,
             "rate(clusterfit_network_receive_bytes_total[%s]) / clusterfit_network_speed_bytes_per_second > %g"
             " or rate(clusterfit_network_transmit_bytes_total[%s]) / clusterfit_network_speed_bytes_per_second > %g",
             w, c->net, w, c->net);
    snprintf(sum, sizeof sum, "{{ $labels.device }} on {{ $labels.instance }} above %g%% of its link speed", c->net * 100);
    alert("ClusterfitNetworkSaturated", expr, f, "warning", sum);
    snprintf(expr, sizeof expr,
             "rate(clusterfit_infiniband_receive_bytes_total[%s]) / clusterfit_infiniband_rate_bytes_per_second > %g"
             " or rate(clusterfit_infiniband_transmit_bytes_total[%s]) / clusterfit_infiniband_rate_bytes_per_second > %g",
             w, c->net, w, c->net);
    snprintf(sum, sizeof sum, "{{ $labels.device }} port {{ $labels.port }} on {{ $labels.instance }} above %g%% of its rate",
             c->net * 100);
    alert("ClusterfitInfinibandSaturated", expr, f, "warning", sum);
    snprintf(expr, sizeof expr, "increase(clusterfit_gpu_xid_errors_total[%s]) > 0"
                                " or (clusterfit_gpu_xid_errors_total unless clusterfit_gpu_xid_errors_total offset %s)",
             w, w);
    alert("ClusterfitGpuXidError", expr, "0s", "critical",
          "XID {{ $labels.xid }} on GPU {{ $labels.gpu }} of {{ $labels.instance }}");
    alert("ClusterfitGpuLost", "clusterfit_gpu_up == 0", "1m", "critical",
          "GPU {{ $labels.gpu }} on {{ $labels.instance }} does not answer NVML (fallen off the bus or driver gone)");
    snprintf(expr, sizeof expr, "up{job=\"%s\"} == 0", c->job);
    alert("ClusterfitExporterDown", expr, "2m", "critical", "clusterfit exporter on {{ $labels.instance }} is down");
    alert("ClusterfitCollectorFailing", "clusterfit_scrape_collector_success == 0", "10m", "warning",
          "collector {{ $labels.collector }} on {{ $labels.instance }} keeps failing (see the exporter's log)");

    printf("  - name: clusterfit-job\n    rules:\n");
    snprintf(expr, sizeof expr,
             "rate(clusterfit_job_data_loading_seconds_total[%s]) / rate(clusterfit_job_step_seconds_total[%s]) > %g",
             w, w, c->data);
    snprintf(sum, sizeof sum, "job {{ $labels.training_job }} rank {{ $labels.rank }} waits for data more than %g%% of each step",
             c->data * 100);
    alert("ClusterfitDataLoadingBound", expr, f, "warning", sum);
    snprintf(expr, sizeof expr,
             "rate(clusterfit_job_allreduce_seconds_total[%s]) / rate(clusterfit_job_step_seconds_total[%s]) > %g",
             w, w, c->ar);
    snprintf(sum, sizeof sum, "job {{ $labels.training_job }} rank {{ $labels.rank }} spends more than %g%% of each step in all-reduce",
             c->ar * 100);
    alert("ClusterfitAllReduceBound", expr, f, "warning", sum);
    if (!c->have_plan)
        return;
    snprintf(expr, sizeof expr,
             "rate(clusterfit_job_step_seconds_total[%s]) / rate(clusterfit_job_steps_total[%s]) > %.6g",
             w, w, c->step_s * c->margin);
    snprintf(sum, sizeof sum, "job {{ $labels.training_job }} rank {{ $labels.rank }} steps take {{ $value | humanizeDuration }};"
             " the plan (%s) expects %.4g s", c->plan_desc, c->step_s);
    alert("ClusterfitStepSlowerThanPlan", expr, f, "warning", sum);
    if (c->dp_comm_s > 0) {
        snprintf(expr, sizeof expr,
                 "rate(clusterfit_job_allreduce_seconds_total[%s]) / rate(clusterfit_job_steps_total[%s]) > %.6g",
                 w, w, c->dp_comm_s * c->margin);
        snprintf(sum, sizeof sum, "job {{ $labels.training_job }} rank {{ $labels.rank }} all-reduce takes {{ $value | humanizeDuration }}"
                 " per step; the plan (%s) expects %.4g s", c->plan_desc, c->dp_comm_s);
        alert("ClusterfitAllReduceSlowerThanPlan", expr, f, "warning", sum);
    } else {
        printf("      # the plan exposes no data-parallel communication (breakdown_s.dp_comm = 0):\n"
               "      # no all-reduce expectation to alert on\n");
    }
}

int cmd_rules(int argc, char **argv)
{
    rules_cli c = {.job = "clusterfit", .gpu_util = 0.8, .net = 0.7, .data = 0.05, .ar = 0.1, .margin = 1.25,
                   .gpu_for_s = 600, .for_s = 300, .window_s = 300};
    int rc = cli_parse(argc, argv, opts, on_opt, &c, "clusterfit rules [--from-plan plan.json] [options]",
                       "Print Prometheus alerting rules (YAML) for the clusterfit exporter's metrics: idle GPUs,\n"
                       "saturated links, data loading and all-reduce eating the step, XID errors, lost GPUs and\n"
                       "exporters down; with --from-plan, step and all-reduce times against the plan's.");
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if (c.plan_file && (rc = load_plan(&c)))
        return rc;
    print_rules(&c);
    return EXIT_OK;
}
