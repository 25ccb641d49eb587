/* rules_alerts.c - the alert set `clusterfit rules` prints (docs/alerts.md is its runbook).
 *
 * Every threshold rule comes twice, severity warning and critical, with the same name, so an
 * Alertmanager inhibit rule can mute the warning while the critical fires (docs/alerts.md).
 * Each alert carries summary, description and runbook_url (docs/alerts.md#<lowercased name>).
 * Text from outside (the plan's GPU name, --exporter-job) is escaped for where it goes: PromQL
 * strings in expressions, Go template text in annotations; libyaml's emitter quotes every
 * value, so the YAML is valid whatever the text holds. */
#include "rules.h"
#include "yaml_out.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct alert {
    const char *name, *severity, *for_;
    char expr[1536], summary[2048], description[2048];
} alert;

typedef struct rules_out {
    const rules_cli *c;
    yaml_out *y;
    char w[32], f[32], gf[32];   /* the rate window, --for, --gpu-util-for as durations */
    char desc_t[1024];           /* the plan's description as template text */
} rules_out;

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

/* s as the inside of a PromQL double-quoted string (Go's strconv escapes). */
static void promql_str(char *dst, size_t n, const char *s)
{
    size_t o = 0;
    for (; *s && o + 5 < n; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            o += (size_t)snprintf(dst + o, n - o, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            o += (size_t)snprintf(dst + o, n - o, "\\x%02x", ch);
        else
            dst[o++] = (char)ch;
    }
    dst[o] = '\0';
}

/* s as Go template text that prints s itself: braces become {{ "{" }} and {{ "}" }}. */
static void template_text(char *dst, size_t n, const char *s)
{
    size_t o = 0;
    for (; *s && o + 12 < n; s++) {
        if (*s == '{' || *s == '}')
            o += (size_t)snprintf(dst + o, n - o, "{{ \"%c\" }}", *s);
        else
            dst[o++] = *s;
    }
    dst[o] = '\0';
}

static void emit_alert(rules_out *r, const alert *a)
{
    yaml_out *y = r->y;
    char url[1024], anchor[128];
    size_t i = 0;
    for (; a->name[i] && i + 1 < sizeof anchor; i++)
        anchor[i] = (char)tolower((unsigned char)a->name[i]);
    anchor[i] = '\0';
    snprintf(url, sizeof url, "%s#%s", r->c->runbook, anchor);
    yout_map(y);
    yout_pair(y, "alert", a->name);
    yout_pair(y, "expr", a->expr);
    yout_pair(y, "for", a->for_);
    yout_key(y, "labels");
    yout_map(y);
    yout_pair(y, "severity", a->severity);
    yout_end(y);
    yout_key(y, "annotations");
    yout_map(y);
    yout_pair(y, "summary", a->summary);
    yout_pair(y, "description", a->description);
    yout_pair(y, "runbook_url", url);
    yout_end(y);
    yout_end(y);
}

/* ---- threshold rules: warning and critical ---------------------------------------------- */

typedef void (*fill_fn)(const rules_out *r, double thr, alert *a);

static void levels(rules_out *r, const char *name, const char *for_, rules_level lv, fill_fn fill)
{
    alert a = {name, "warning", for_, "", "", ""};
    fill(r, lv.warning, &a);
    emit_alert(r, &a);
    if (isnan(lv.critical))
        return;   /* the header comment says so */
    alert b = {name, "critical", for_, "", "", ""};
    fill(r, lv.critical, &b);
    emit_alert(r, &b);
}

static void fill_gpu_util(const rules_out *r, double thr, alert *a)
{
    snprintf(a->expr, sizeof a->expr, "clusterfit_gpu_utilization_ratio < %g", thr);
    snprintf(a->summary, sizeof a->summary,
             "GPU {{ $labels.gpu }} on {{ $labels.instance }} below %g%% utilisation for %s", thr * 100, r->gf);
    snprintf(a->description, sizeof a->description,
             "GPU {{ $labels.gpu }} ({{ $labels.uuid }}) has been busy less than %g%% of the time for %s: the job on it "
             "waits for data, communication or the host, or no job runs there.", thr * 100, r->gf);
}

static void fill_link(const rules_out *r, double thr, alert *a, const char *kind, const char *speed, const char *what)
{
    snprintf(a->expr, sizeof a->expr,
             "rate(clusterfit_%s_receive_bytes_total[%s]) / clusterfit_%s > %g"
             " or rate(clusterfit_%s_transmit_bytes_total[%s]) / clusterfit_%s > %g",
             kind, r->w, speed, thr, kind, r->w, speed, thr);
    snprintf(a->description, sizeof a->description,
             "%s has carried more than %g%% of its %s in one direction (%s rate) for %s: collectives on it run at the "
             "link's limit and steps slow down.", what, thr * 100,
             strcmp(kind, "network") ? "rate" : "link speed", r->w, r->f);
}

static void fill_network(const rules_out *r, double thr, alert *a)
{
    fill_link(r, thr, a, "network", "network_speed_bytes_per_second", "Interface {{ $labels.device }}");
    snprintf(a->summary, sizeof a->summary, "{{ $labels.device }} on {{ $labels.instance }} above %g%% of its link speed",
             thr * 100);
}

static void fill_infiniband(const rules_out *r, double thr, alert *a)
{
    fill_link(r, thr, a, "infiniband", "infiniband_rate_bytes_per_second",
              "InfiniBand port {{ $labels.device }}/{{ $labels.port }}");
    snprintf(a->summary, sizeof a->summary,
             "{{ $labels.device }} port {{ $labels.port }} on {{ $labels.instance }} above %g%% of its rate", thr * 100);
}

static void fill_data(const rules_out *r, double thr, alert *a)
{
    snprintf(a->expr, sizeof a->expr,
             "rate(clusterfit_job_data_loading_seconds_total[%s]) / rate(clusterfit_job_step_seconds_total[%s]) > %g",
             r->w, r->w, thr);
    snprintf(a->summary, sizeof a->summary,
             "job {{ $labels.training_job }} rank {{ $labels.rank }} waits for data more than %g%% of each step", thr * 100);
    snprintf(a->description, sizeof a->description,
             "Rank {{ $labels.rank }} of {{ $labels.training_job }} reports waiting for its next batch more than %g%% of "
             "its step time (%s rate) for %s: the input pipeline or storage does not keep up.", thr * 100, r->w, r->f);
}

/* The mean step time per step over the window, in PromQL. */
static void step_per_step(const rules_out *r, char *buf, size_t n)
{
    snprintf(buf, n, "(rate(clusterfit_job_step_seconds_total[%s]) / rate(clusterfit_job_steps_total[%s]))", r->w, r->w);
}

/* Without a plan: the all-reduce time the job reports, as a share of its step time.  With one:
 * exposed communication as the plan defines it, the measured step less the plan's
 * communication-free step (step_time_s - bound_s.communication). */
static void fill_allreduce(const rules_out *r, double thr, alert *a)
{
    const rules_cli *c = r->c;
    snprintf(a->summary, sizeof a->summary,
             "job {{ $labels.training_job }} rank {{ $labels.rank }} spends more than %g%% of each step in %s", thr * 100,
             c->have_plan ? "exposed communication" : "all-reduce");
    if (!c->have_plan) {
        snprintf(a->expr, sizeof a->expr,
                 "rate(clusterfit_job_allreduce_seconds_total[%s]) / rate(clusterfit_job_step_seconds_total[%s]) > %g",
                 r->w, r->w, thr);
        snprintf(a->description, sizeof a->description,
                 "Rank {{ $labels.rank }} of {{ $labels.training_job }} reports all-reduce time above %g%% of its step "
                 "time (%s rate) for %s (the time its loop waited for all-reduce, as it reports it).", thr * 100, r->w, r->f);
        return;
    }
    char s[256];
    step_per_step(r, s, sizeof s);
    double free_s = c->step_s - c->exposed_comm_s;
    snprintf(a->expr, sizeof a->expr, "1 - %.6g / %s > %g", free_s, s, thr);
    snprintf(a->description, sizeof a->description,
             "Rank {{ $labels.rank }} of {{ $labels.training_job }}: its mean step less the plan's communication-free "
             "step (%.4g s; plan %s) is above %g%% of the step for %s: communication the plan expects hidden is "
             "exposed, or the fabric is slower than planned.", free_s, r->desc_t, thr * 100, r->f);
}

static void fill_straggler(const rules_out *r, double thr, alert *a)
{
    snprintf(a->expr, sizeof a->expr, "clusterfit_job_step_time_ratio_to_median > %g", thr);
    snprintf(a->summary, sizeof a->summary,
             "job {{ $labels.training_job }} rank {{ $labels.rank }} steps take more than %g times the job's median", thr);
    snprintf(a->description, sizeof a->description,
             "Rank {{ $labels.rank }} of {{ $labels.training_job }} has been {{ $value | printf \"%%.2f\" }} times the "
             "median step time of the job's ranks for %s: every synchronous step waits for it.", r->f);
}

/* ---- single rules --------------------------------------------------------------------- */

static void one(rules_out *r, const char *name, const char *severity, const char *for_, const char *expr,
                const char *summary, const char *description)
{
    alert a = {name, severity, for_, "", "", ""};
    snprintf(a.expr, sizeof a.expr, "%s", expr);
    snprintf(a.summary, sizeof a.summary, "%s", summary);
    snprintf(a.description, sizeof a.description, "%s", description);
    emit_alert(r, &a);
}

/* The XIDs NVIDIA's XID catalog (docs.nvidia.com/deploy/xid-errors, "XID Error Listing") says
 * need the GPU reset or the node drained: 48 double-bit ECC, 64 row-remapper/page-retirement
 * failure, 74 NVLink error, 79 fallen off the bus, 95 uncontained ECC, 119/120 GSP timeout/error. */
#define XID_CRITICAL "48|64|74|79|95|119|120"

static void xid_rule(rules_out *r, const char *name, const char *severity, const char *op, const char *description)
{
    char expr[512], m[64];
    snprintf(m, sizeof m, "{xid%s\"" XID_CRITICAL "\"}", op);
    snprintf(expr, sizeof expr,
             "increase(clusterfit_gpu_xid_errors_total%s[%s]) > 0"
             " or (clusterfit_gpu_xid_errors_total%s unless clusterfit_gpu_xid_errors_total%s offset %s)",
             m, r->w, m, m, r->w);
    one(r, name, severity, "0s", expr, "XID {{ $labels.xid }} on GPU {{ $labels.gpu }} of {{ $labels.instance }}",
        description);
}

static void node_group(rules_out *r)
{
    const rules_cli *c = r->c;
    char expr[512], job[256];
    levels(r, "ClusterfitGpuUnderutilized", r->gf, c->gpu_util, fill_gpu_util);
    levels(r, "ClusterfitNetworkSaturated", r->f, c->net, fill_network);
    levels(r, "ClusterfitInfinibandSaturated", r->f, c->net, fill_infiniband);
    xid_rule(r, "ClusterfitGpuXidCritical", "critical", "=~",
             "GPU {{ $labels.gpu }} ({{ $labels.uuid }}) logged XID {{ $labels.xid }}, one NVIDIA's XID catalog says "
             "needs a GPU reset or the node drained (ECC double-bit or uncontained, NVLink, off the bus, GSP).");
    xid_rule(r, "ClusterfitGpuXidError", "warning", "!~",
             "GPU {{ $labels.gpu }} ({{ $labels.uuid }}) logged XID {{ $labels.xid }}: most such XIDs are the "
             "application's (illegal address, MMU fault) or recoverable; look it up in NVIDIA's XID catalog.");
    one(r, "ClusterfitGpuLost", "critical", "1m", "clusterfit_gpu_up == 0",
        "GPU {{ $labels.gpu }} on {{ $labels.instance }} does not answer NVML (fallen off the bus or driver gone)",
        "NVML has not answered for GPU {{ $labels.gpu }} ({{ $labels.uuid }}) for 1m: the GPU fell off the bus, "
        "the driver was unloaded, or NVML hangs.");
    promql_str(job, sizeof job, c->job);
    snprintf(expr, sizeof expr, "up{job=\"%s\"} == 0", job);
    one(r, "ClusterfitExporterDown", "critical", "2m", expr, "clusterfit exporter on {{ $labels.instance }} is down",
        "Prometheus has not scraped the clusterfit exporter on {{ $labels.instance }} for 2m: the node, the exporter "
        "or the network path to it is down, and its GPU alerts are blind.");
    one(r, "ClusterfitCollectorFailing", "warning", "10m", "clusterfit_scrape_collector_success == 0",
        "collector {{ $labels.collector }} on {{ $labels.instance }} keeps failing (see the exporter's log)",
        "The {{ $labels.collector }} collector has failed every scrape for 10m; its metrics are missing and the "
        "alerts on them cannot fire.");
}

static void plan_rules(rules_out *r)
{
    const rules_cli *c = r->c;
    char s[256], expr[768], sum[2048], desc[2048];
    step_per_step(r, s, sizeof s);
    snprintf(expr, sizeof expr, "%s > %.6g", s, c->step_s * c->margin);
    snprintf(sum, sizeof sum, "job {{ $labels.training_job }} rank {{ $labels.rank }} steps take {{ $value | "
             "humanizeDuration }}; the plan (%s) expects %.4g s", r->desc_t, c->step_s);
    snprintf(desc, sizeof desc, "The mean step of rank {{ $labels.rank }} ({{ $value | humanizeDuration }}) has been "
             "above %g times the plan's %.4g s for %s.", c->margin, c->step_s, r->f);
    one(r, "ClusterfitStepSlowerThanPlan", "warning", r->f, expr, sum, desc);
    if (!(c->exposed_comm_s > 0))
        return;   /* the header comment says why there is no communication expectation */
    double free_s = c->step_s - c->exposed_comm_s;
    snprintf(expr, sizeof expr, "%s - %.6g > %.6g", s, free_s, c->exposed_comm_s * c->margin);
    snprintf(sum, sizeof sum, "job {{ $labels.training_job }} rank {{ $labels.rank }} exposes {{ $value | "
             "humanizeDuration }} of communication per step; the plan (%s) expects %.4g s", r->desc_t, c->exposed_comm_s);
    snprintf(desc, sizeof desc, "The mean step less the plan's communication-free step (%.4g s) has been above %g "
             "times the plan's exposed communication (%.4g s) for %s.", free_s, c->margin, c->exposed_comm_s, r->f);
    one(r, "ClusterfitAllReduceSlowerThanPlan", "warning", r->f, expr, sum, desc);
}

static void job_group(rules_out *r)
{
    levels(r, "ClusterfitDataLoadingBound", r->f, r->c->data, fill_data);
    levels(r, "ClusterfitAllReduceBound", r->f, r->c->ar, fill_allreduce);
    levels(r, "ClusterfitStraggler", r->f, r->c->straggler, fill_straggler);
    if (r->c->have_plan)
        plan_rules(r);
}

static void group(rules_out *r, const char *name, void (*rules)(rules_out *r))
{
    yout_map(r->y);
    yout_pair(r->y, "name", name);
    yout_key(r->y, "rules");
    yout_seq(r->y);
    rules(r);
    yout_end(r->y);
    yout_end(r->y);
}

/* The header comment (libyaml writes no comments): outside text with its control characters
 * replaced, so it stays one comment line. */
static void header(const rules_cli *c, FILE *f)
{
    char desc[sizeof c->plan_desc];
    snprintf(desc, sizeof desc, "%s", c->plan_desc);
    for (char *q = desc; *q; q++)
        if ((unsigned char)*q < 0x20 || *q == 0x7f)
            *q = '?';
    fprintf(f, "# Prometheus alerting rules for clusterfit exporter metrics (docs/metrics.md), printed by\n"
               "# clusterfit rules; runbook: docs/alerts.md. Load with rule_files: in prometheus.yml; check\n"
               "# with promtool check rules.\n");
    if (c->have_plan)
        fprintf(f, "# Expectations from the plan: %s, step %.4g s, exposed communication %.4g s per step.\n", desc,
                c->step_s, c->exposed_comm_s);
    const struct { const char *alert, *opt; rules_level lv; } lv[] = {
        {"ClusterfitGpuUnderutilized", "gpu-util", c->gpu_util},
        {"ClusterfitNetworkSaturated and ClusterfitInfinibandSaturated", "network", c->net},
        {"ClusterfitDataLoadingBound", "data-loading", c->data},
        {"ClusterfitAllReduceBound", "allreduce", c->ar},
        {"ClusterfitStraggler", "straggler", c->straggler},
    };
    for (size_t i = 0; i < sizeof lv / sizeof *lv; i++)
        if (isnan(lv[i].lv.critical))
            fprintf(f, "# No critical %s: --%s-warning %g is past the default critical\n"
                       "# threshold (give --%s-critical).\n", lv[i].alert, lv[i].opt, lv[i].lv.warning, lv[i].opt);
    if (c->have_plan && !(c->exposed_comm_s > 0))
        fprintf(f, "# The plan exposes no communication (bound_s.communication = 0): no\n"
                   "# ClusterfitAllReduceSlowerThanPlan expectation to alert on.\n");
}

int rules_print(const rules_cli *c, FILE *f)
{
    rules_out r = {.c = c};
    dur(r.w, sizeof r.w, c->window_s);
    dur(r.f, sizeof r.f, c->for_s);
    dur(r.gf, sizeof r.gf, c->gpu_for_s);
    template_text(r.desc_t, sizeof r.desc_t, c->plan_desc);
    header(c, f);
    r.y = yout_open(f);
    if (!r.y)
        return fprintf(stderr, "clusterfit: error: out of memory\n"), 1;
    yout_map(r.y);
    yout_key(r.y, "groups");
    yout_seq(r.y);
    group(&r, "clusterfit-node", node_group);
    group(&r, "clusterfit-job", job_group);
    yout_end(r.y);
    yout_end(r.y);
    const char *why = NULL;
    if (yout_close(r.y, &why))
        return fprintf(stderr, "clusterfit: error: rules: %s\n", why ? why : "cannot write the rules"), 2;
    return 0;
}
