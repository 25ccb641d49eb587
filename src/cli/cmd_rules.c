/* cmd_rules.c - `clusterfit rules`: Prometheus alerting rules (YAML) for the exporter's metrics,
 * with step-time and exposed-communication expectations taken from a `clusterfit plan --json`
 * file: the options and the plan here, the alerts in rules_alerts.c. */
#include "cli.h"
#include "rules.h"
#include "clusterfit/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    O_PLAN = 1, O_GPU_UTIL, O_GPU_CRIT, O_GPU_FOR, O_NET, O_NET_CRIT, O_DATA, O_DATA_CRIT, O_AR, O_AR_CRIT,
    O_STRAG, O_STRAG_CRIT, O_FOR, O_JOB, O_MARGIN, O_WINDOW, O_RUNBOOK
};

static const cli_opt opts[] = {
    {"from-plan", 0, "FILE", "take the expected step and exposed communication per step from a plan --json file (- = stdin)", O_PLAN},
    {"gpu-util-warning", 0, "RATIO", "GpuUnderutilized warning: GPU utilisation below this (default 0.8)", O_GPU_UTIL},
    {"gpu-util-below", 0, "RATIO", "the older name of --gpu-util-warning", O_GPU_UTIL},
    {"gpu-util-critical", 0, "RATIO", "... critical: below this (default 0.5; under the warning)", O_GPU_CRIT},
    {"gpu-util-for", 0, "TIME", "... for this long (default 10m)", O_GPU_FOR},
    {"network-warning", 0, "RATIO", "Network/InfinibandSaturated warning: traffic above this share of the link (default 0.7)", O_NET},
    {"network-above", 0, "RATIO", "the older name of --network-warning", O_NET},
    {"network-critical", 0, "RATIO", "... critical: above this (default 0.9; over the warning)", O_NET_CRIT},
    {"data-loading-warning", 0, "RATIO", "DataLoadingBound warning: data loading above this share of the step (default 0.05)", O_DATA},
    {"data-loading-above", 0, "RATIO", "the older name of --data-loading-warning", O_DATA},
    {"data-loading-critical", 0, "RATIO", "... critical: above this (default 0.2)", O_DATA_CRIT},
    {"allreduce-warning", 0, "RATIO", "AllReduceBound warning: all-reduce (with --from-plan: exposed communication) above this share of the step (default 0.1)", O_AR},
    {"allreduce-above", 0, "RATIO", "the older name of --allreduce-warning", O_AR},
    {"allreduce-critical", 0, "RATIO", "... critical: above this (default 0.3)", O_AR_CRIT},
    {"straggler-warning", 0, "RATIO", "Straggler warning: a rank's step time above this many times the job's median (default 1.2)", O_STRAG},
    {"straggler-critical", 0, "RATIO", "... critical: above this (default 1.5)", O_STRAG_CRIT},
    {"plan-margin", 0, "RATIO", "with --from-plan: alert when a step is this many times the plan's (default 1.25)", O_MARGIN},
    {"for", 0, "TIME", "how long the other conditions must hold (default 5m)", O_FOR},
    {"rate-window", 0, "TIME", "range of the rate() windows (default 5m)", O_WINDOW},
    {"exporter-job", 0, "NAME", "the Prometheus job label of the exporters' scrape config (default clusterfit)", O_JOB},
    {"runbook-url", 0, "URL", "where docs/alerts.md is served; runbook_url = URL#alertname (default docs/alerts.md)", O_RUNBOOK},
    {NULL, 0, NULL, NULL, 0},
};

/* The options whose values are stored as given (cli_bind), a critical threshold with the CLI_GIVEN
 * mark that it was given (check_level); on_opt has the rest: the times and the texts. */
static const cli_bind binds[] = {
    CLI_STRING(O_PLAN, rules_cli, plan_file),
    CLI_REAL(O_GPU_UTIL, rules_cli, gpu_util.warning, 0.01, 1),
    CLI_REAL(O_NET, rules_cli, net.warning, 0.01, 1),
    CLI_REAL(O_DATA, rules_cli, data.warning, 0.001, 1),
    CLI_REAL(O_AR, rules_cli, ar.warning, 0.001, 1),
    CLI_REAL(O_STRAG, rules_cli, straggler.warning, 1.01, 100),
    CLI_REAL(O_MARGIN, rules_cli, margin, 1, 100),
    CLI_REAL(O_GPU_CRIT, rules_cli, gpu_util.critical, 0.01, 1),
    CLI_GIVEN(O_GPU_CRIT, rules_cli, gpu_util.critical_set),
    CLI_REAL(O_NET_CRIT, rules_cli, net.critical, 0.01, 1),
    CLI_GIVEN(O_NET_CRIT, rules_cli, net.critical_set),
    CLI_REAL(O_DATA_CRIT, rules_cli, data.critical, 0.001, 1),
    CLI_GIVEN(O_DATA_CRIT, rules_cli, data.critical_set),
    CLI_REAL(O_AR_CRIT, rules_cli, ar.critical, 0.001, 1),
    CLI_GIVEN(O_AR_CRIT, rules_cli, ar.critical_set),
    CLI_REAL(O_STRAG_CRIT, rules_cli, straggler.critical, 1.01, 100),
    CLI_GIVEN(O_STRAG_CRIT, rules_cli, straggler.critical_set),
    {.id = 0},
};

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

static int opt_text(const char *name, const char *value, const char **out)
{
    if (!*value)
        return cli_error("--%s: empty", name);
    *out = value;
    return 0;
}

static int on_opt(void *vc, int id, const char *name, const char *value)
{
    rules_cli *c = vc;
    switch (id) {
    case -1: return cli_error("rules: unexpected argument '%s' (see --help)", value);
    case O_GPU_FOR: return opt_time(name, value, &c->gpu_for_s);
    case O_FOR: return opt_time(name, value, &c->for_s);
    case O_WINDOW: return opt_time(name, value, &c->window_s);
    case O_JOB: return opt_text(name, value, &c->job);
    case O_RUNBOOK: return opt_text(name, value, &c->runbook);
    }
    return 0;
}

/* A critical threshold must be stricter than its warning: lower for "below", higher for "above".
 * A default one that is not (the warning moved past it) is dropped: no critical alert. */
static int check_level(const char *what, rules_level *lv, int below)
{
    if (below ? lv->critical < lv->warning : lv->critical > lv->warning)
        return 0;
    if (!lv->critical_set) {
        lv->critical = NAN;
        return 0;
    }
    return cli_error("--%s-critical %g must be %s --%s-warning %g", what, lv->critical, below ? "below" : "above", what,
                     lv->warning);
}

static int check_levels(rules_cli *c)
{
    int rc = check_level("gpu-util", &c->gpu_util, 1);
    rc = rc ? rc : check_level("network", &c->net, 0);
    rc = rc ? rc : check_level("data-loading", &c->data, 0);
    rc = rc ? rc : check_level("allreduce", &c->ar, 0);
    return rc ? rc : check_level("straggler", &c->straggler, 0);
}

static int plan_number(const cfit_json *obj, const char *key, const char *file, double *out)
{
    const cfit_json *v = cfit_json_get(obj, key);
    cfit_diag d;
    cfit_diag_clear(&d);
    if (!v || v->type != CFIT_JSON_NUMBER || !(v->number >= 0)) {
        cfit_diag_set(&d, CFIT_EPARSE, file, v ? v->line : obj->line, v ? v->col : obj->col,
                      "expected \"%s\" to be a number of seconds >= 0 (a clusterfit plan --json file)", key);
        return cli_error_diag(&d, CFIT_EPARSE);
    }
    *out = v->number;
    return 0;
}

/* The plan's exposed communication (bound_s.communication; else the sum of breakdown_s's
 * communication parts, which it is by definition: docs/json.md). */
static int exposed_comm(rules_cli *c, const cfit_json *p, const cfit_json *bd)
{
    const cfit_json *bound = cfit_json_get(p, "bound_s");
    if (bound && bound->type == CFIT_JSON_OBJECT && cfit_json_get(bound, "communication"))
        return plan_number(bound, "communication", cfit_input_name(c->plan_file), &c->exposed_comm_s);
    static const char *const parts[] = {"tp_comm", "cp_comm", "pp_comm", "dp_comm", "ep_comm"};
    c->exposed_comm_s = 0;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        double v = 0;
        int rc = cfit_json_get(bd, parts[i]) ? plan_number(bd, parts[i], cfit_input_name(c->plan_file), &v) : 0;
        if (rc)
            return rc;
        c->exposed_comm_s += v;
    }
    return 0;
}

static int exposed_fits(const rules_cli *c, const cfit_json *p)
{
    if (c->exposed_comm_s <= c->step_s)
        return 0;
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_diag_set(&d, CFIT_EPARSE, cfit_input_name(c->plan_file), p->line, p->col,
                  "exposed communication %.6g s is longer than step_time_s %.6g s", c->exposed_comm_s, c->step_s);
    return cli_error_diag(&d, CFIT_EPARSE);
}

static int load_plan(rules_cli *c)
{
    int err;
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_json *root = cfit_json_load(c->plan_file, &err, &d);
    if (!root)
        return cli_error_diag(&d, err);
    const cfit_json *plans = cfit_json_get(root, "plans");
    int rc = 0;
    if (!plans || plans->type != CFIT_JSON_ARRAY || plans->n == 0 || plans->items[0]->type != CFIT_JSON_OBJECT) {
        cfit_diag_set(&d, CFIT_EPARSE, cfit_input_name(c->plan_file), root->line, root->col,
                      "expected an object with a non-empty \"plans\" array (clusterfit plan --json output)");
        rc = cli_error_diag(&d, CFIT_EPARSE);
    }
    const cfit_json *p = rc ? NULL : plans->items[0];
    const cfit_json *bd = p ? cfit_json_get(p, "breakdown_s") : NULL;
    if (!rc && (!bd || bd->type != CFIT_JSON_OBJECT)) {
        cfit_diag_set(&d, CFIT_EPARSE, cfit_input_name(c->plan_file), p->line, p->col, "plans[0] has no \"breakdown_s\" object");
        rc = cli_error_diag(&d, CFIT_EPARSE);
    }
    if (!rc)
        rc = plan_number(p, "step_time_s", cfit_input_name(c->plan_file), &c->step_s);
    if (!rc)
        rc = plan_number(bd, "dp_comm", cfit_input_name(c->plan_file), &c->dp_comm_s);
    if (!rc)
        rc = exposed_comm(c, p, bd);
    if (!rc && c->step_s > 0)
        rc = exposed_fits(c, p);
    if (!rc && !(c->step_s > 0)) {
        const cfit_json *v = cfit_json_get(p, "step_time_s");
        cfit_diag_set(&d, CFIT_EPARSE, cfit_input_name(c->plan_file), v->line, v->col, "step_time_s must be > 0");
        rc = cli_error_diag(&d, CFIT_EPARSE);
    }
    if (!rc) {
        const cfit_json *g = cfit_json_get(p, "gpu"), *n = cfit_json_get(p, "gpus");
        snprintf(c->plan_desc, sizeof c->plan_desc, "%s x %.0f",
                 g && g->type == CFIT_JSON_STRING ? g->string : "?", n && n->type == CFIT_JSON_NUMBER ? n->number : 0);
        c->have_plan = 1;   /* rules_alerts.c escapes the GPU name wherever it goes */
    }
    cfit_json_free(root);
    return rc;
}

/* Write the rules to memory first, so that a refusal (text libyaml will not take) prints nothing. */
static int print_buffered(const rules_cli *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return cli_error("out of memory");
    int rc = rules_print(c, mem);
    if (fclose(mem) != 0 && !rc)
        rc = cli_error("out of memory");
    if (!rc && fwrite(buf, 1, len, stdout) != len)
        rc = EXIT_RUNTIME;
    free(buf);
    return rc ? rc : EXIT_OK;
}

int cmd_rules(int argc, char **argv)
{
    rules_cli c = {.job = "clusterfit", .runbook = "docs/alerts.md", .gpu_util = {0.8, 0.5, 0}, .net = {0.7, 0.9, 0},
                   .data = {0.05, 0.2, 0}, .ar = {0.1, 0.3, 0}, .straggler = {1.2, 1.5, 0},
                   .margin = 1.25,
                   .gpu_for_s = 600, .for_s = 300, .window_s = 300};
    int rc = cli_parse_bound(argc, argv, opts, binds, on_opt, &c, "clusterfit rules [--from-plan plan.json] [options]",
                             "Print Prometheus alerting rules (YAML) for the clusterfit exporter's metrics, each threshold\n"
                             "as a warning and a critical alert with summary, description and runbook_url (docs/alerts.md):\n"
                             "idle GPUs, saturated links, data loading and all-reduce eating the step, stragglers, XID\n"
                             "errors, lost GPUs and exporters down; with --from-plan, step time and exposed communication\n"
                             "against the plan's.");
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if ((rc = check_levels(&c)) || (c.plan_file && (rc = load_plan(&c))))
        return rc;
    return print_buffered(&c);
}
