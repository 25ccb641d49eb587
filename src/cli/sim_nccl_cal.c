/* sim_nccl_cal.c - `clusterfit sim --calibration FILE` in the NCCL engine: the network terms of the
 * model solved on the run FILE measured (nccl_calibrate.h), and the model against its points
 * (docs/sim.md "Calibration"). */
#include "sim_cli.h"
#include "clusterfit/writer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The run's shape: hosts, and the same count of ranks on each, no more than the node holds. */
static int log_shape(const sim_cli *c, sim_nccl_cal *k)
{
    const cfit_calibration *cal = &k->cal;
    if (cal->ranks % cal->hosts)
        return cli_error("--calibration: %s: %d ranks on %d hosts is not the same count on every host; the model "
                         "needs one count per node", cal->file, cal->ranks, cal->hosts);
    k->nodes = cal->hosts, k->per_node = cal->ranks / cal->hosts;
    if (k->per_node > c->node_entry->gpus_per_node)
        return cli_error("--calibration: %s ran %d ranks per host, more than the %d GPUs of a %s node; name the node "
                         "type it ran on (--node)", cal->file, k->per_node, c->node_entry->gpus_per_node,
                         c->node_entry->name);
    return 0;
}

static int load(const sim_cli *c, const cfit_nccl_system *sys, sim_nccl_cal *k)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    int err = cfit_calibration_load(c->calibration, &k->cal, &d);
    if (err)
        return cli_error_diag(&d, err);
    if (strcmp(k->cal.benchmark, "pairs") == 0)
        return cli_error("--calibration: %s is a `bench pairs` run; the NCCL engine is calibrated by a collective "
                         "(an nccl-tests log or `clusterfit bench COLLECTIVE --json`)", k->cal.file);
    if (cfit_collective_parse(k->cal.benchmark, &k->coll, &d))
        return cli_error("--calibration: %s: %s", k->cal.file, d.msg);
    if (sys->nodes < 2)
        return cli_error("sim: --calibration sets the network's terms and one node has no network; add --nodes 2 "
                         "or more");
    return log_shape(c, k);
}

/* The model of the measured run: the sim's node type, GPU, fabrics and --nics/--p2p, its shape. */
static int solve(const sim_cli *c, const cfit_nccl_system *sys, sim_nccl_cal *k)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_nccl_system catalog_run;
    int err = cfit_nccl_system_from_catalog(c->g, c->up, c->node_entry, c->out, k->nodes, k->per_node, (int)c->nics,
                                            &catalog_run, &d);
    if (err)
        return cli_error_diag(&d, err);
    k->catalog_nic_bw = catalog_run.nic_bw, k->catalog_extra_s = catalog_run.net_extra_latency_s;
    if ((err = cfit_nccl_fit_calibration(&k->cal, c->g, c->up, c->node_entry, c->out, (int)c->nics, sys->p2p_off,
                                         &k->log_sys, &k->fit, &d)))
        return cli_error("--calibration: %s: %s", k->cal.file, d.msg);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The calibrated model at every measured size above 0; the error from the times (the log's busbw
 * column has two decimals, 0.00 at small sizes): model busbw / measured - 1 = measured time /
 * model time - 1. */
static int compare(sim_nccl_cal *k)
{
    double abs_err[CFIT_CALIBRATION_MAX_POINTS];
    k->npoints = 0;
    for (int i = 0; i < k->cal.npoints; i++) {
        const cfit_calibration_point *p = &k->cal.points[i];
        if (!(p->size_bytes > 0) || !(p->time_s > 0))
            continue;
        int n = k->npoints;
        cfit_diag d;
        cfit_diag_clear(&d);
        k->model[n].size = k->size[n] = p->size_bytes;
        if (cfit_nccl_best(&k->log_sys, k->coll, CFIT_NCCL_ALL_ALGOS, CFIT_NCCL_ALL_PROTOS, p->size_bytes,
                           &k->model[n].e, &d))
            return cli_error("--calibration: %s", d.msg);
        k->measured_gbs[n] = p->busbw_bytes_per_s / 1e9;
        k->rel_err[n] = p->time_s / k->model[n].e.time_s - 1;
        abs_err[n] = fabs(k->rel_err[n]);
        k->npoints++;
    }
    qsort(abs_err, (size_t)k->npoints, sizeof *abs_err, cmp_double);
    int n = k->npoints;
    k->median_abs_err = n == 0 ? -1 : n % 2 ? abs_err[n / 2] : (abs_err[n / 2 - 1] + abs_err[n / 2]) / 2;
    return 0;
}

/* Where the sim asks for another run than the one measured: a warning, as the terms carry over. */
static void warn_mismatch(const sim_cli *c, const cfit_nccl_system *sys, sim_nccl_cal *k)
{
    int ranks = sys->nodes * sys->gpus_per_node;
    k->mismatch = (k->coll != c->coll ? SIM_CAL_OTHER_COLL : 0) | (k->cal.ranks != ranks ? SIM_CAL_OTHER_RANKS : 0) |
                  (k->nodes != sys->nodes ? SIM_CAL_OTHER_NODES : 0);
    if (!k->mismatch)
        return;
    fprintf(stderr, "clusterfit: warning: --calibration: %s measured %s on %d ranks (%d nodes x %d); this sim is %s "
                    "on %d ranks (%d nodes x %d): the network terms solved on the measured run are used for this "
                    "one, a prediction, not a replay of the log (docs/sim.md \"Calibration\")\n",
            k->cal.file, cfit_collective_name(k->coll), k->cal.ranks, k->nodes, k->per_node,
            cfit_collective_name(c->coll), ranks, sys->nodes, sys->gpus_per_node);
}

int cli_sim_nccl_calibrate(const sim_cli *c, cfit_nccl_system *sys, sim_nccl_cal *k)
{
    memset(k, 0, sizeof *k);
    int rc = load(c, sys, k);
    if (!rc)
        rc = solve(c, sys, k);
    if (!rc)
        rc = compare(k);
    if (rc)
        return rc;
    cfit_nccl_apply_network(sys, &k->fit);
    warn_mismatch(c, sys, k);
    return 0;
}

static void print_measured(const sim_nccl_cal *k)
{
    const cfit_calibration *cal = &k->cal;
    printf("# measured: busbw %.4g GB/s at %.0f B", cal->bw_bytes_per_s / 1e9, cal->bw_size_bytes);
    if (cal->fit_error >= 0)
        printf("; fit time = %.3g us + size / %.3g GB/s over %d sizes, median error %.1f%%\n", cal->fit_alpha_s * 1e6,
               cal->fit_beta_bytes_per_s / 1e9, cal->fit_rows, cal->fit_error * 100);
    else
        printf("; time %.3g us at %.0f B (no fit: bench JSON)\n", cal->latency_s * cal->steps * 1e6,
               cal->lat_size_bytes);
}

void cli_sim_nccl_cal_print(const sim_nccl_cal *k)
{
    const cfit_calibration *cal = &k->cal;
    char gpp[48] = "";
    if (cal->gpus_per_process > 1)
        snprintf(gpp, sizeof gpp, ", %d GPUs per process", cal->gpus_per_process);
    printf("# calibration: %s (%s%s%s: %s, %d ranks = %d nodes x %d GPU%s%s%s%s)\n", cal->file, cal->source,
           cal->program[0] ? " " : "", cal->program, cfit_collective_name(k->coll), cal->ranks, k->nodes, k->per_node,
           k->per_node == 1 ? "" : "s", cal->gpu[0] ? ", " : "", cal->gpu, gpp);
    print_measured(k);
    printf("# solved on that run (docs/sim.md \"Calibration\"): %.2f GB/s per NIC (catalog %.2f), +%.3g us per "
           "network hop (catalog +%.3g us%s)", k->fit.nic_bw / 1e9, k->catalog_nic_bw / 1e9,
           k->fit.net_extra_latency_s * 1e6, k->catalog_extra_s * 1e6,
           k->fit.latency_floor ? "; the measured time is within NCCL's own latency, so none is added" : "");
    if (k->npoints)
        printf("; the model with them vs the %d measured sizes: median error %.1f%%", k->npoints,
               k->median_abs_err * 100);
    printf("\n");
}

static void json_string_or_null(cfit_buf *b, const char *s)
{
    if (s[0])
        cfit_buf_json_string(b, s);
    else
        cfit_buf_puts(b, "null");
}

static void json_number_member(cfit_buf *b, const char *key, double v)
{
    cfit_buf_printf(b, ", \"%s\": ", key);
    cfit_buf_json_number(b, v);
}

static void json_fit(cfit_buf *b, const cfit_calibration *cal)
{
    cfit_buf_puts(b, ", \"fit\": ");
    if (cal->fit_error < 0) {
        cfit_buf_puts(b, "null");
        return;
    }
    cfit_buf_puts(b, "{\"alpha_s\": ");
    cfit_buf_json_number(b, cal->fit_alpha_s);
    json_number_member(b, "beta_gbs", cal->fit_beta_bytes_per_s / 1e9);
    json_number_member(b, "median_relative_error", cal->fit_error);
    cfit_buf_printf(b, ", \"rows\": %d}", cal->fit_rows);
}

static void json_points(cfit_buf *b, const sim_nccl_cal *k)
{
    cfit_buf_puts(b, ", \"points\": [");
    for (int i = 0; i < k->npoints; i++) {
        const cfit_nccl_estimate *e = &k->model[i].e;
        cfit_buf_printf(b, "%s{\"size_bytes\": %.0f", i ? ", " : "", k->size[i]);
        json_number_member(b, "measured_busbw_gbs", k->measured_gbs[i]);
        json_number_member(b, "model_busbw_gbs", e->busbw_bytes_per_s / 1e9);
        json_number_member(b, "relative_error", k->rel_err[i]);
        cfit_buf_printf(b, ", \"algo\": \"%s\", \"proto\": \"%s\"}", cfit_nccl_algo_name(e->algo),
                         cfit_nccl_proto_name(e->proto));
    }
    cfit_buf_puts(b, "]");
}

void cli_sim_nccl_cal_json(cfit_buf *b, const sim_nccl_cal *k)
{
    const cfit_calibration *cal = &k->cal;
    cfit_buf_puts(b, "\"calibration\": {\"file\": ");
    cfit_buf_json_string(b, cal->file);
    cfit_buf_puts(b, ", \"source\": ");
    cfit_buf_json_string(b, cal->source);
    cfit_buf_printf(b, ", \"collective\": \"%s\", \"program\": ", cfit_collective_name(k->coll));
    json_string_or_null(b, cal->program);
    cfit_buf_puts(b, ", \"gpu\": ");
    json_string_or_null(b, cal->gpu);
    cfit_buf_printf(b, ", \"ranks\": %d, \"nodes\": %d, \"gpus_per_node\": %d, \"gpus_per_process\": %d", cal->ranks,
                    k->nodes, k->per_node, cal->gpus_per_process > 1 ? cal->gpus_per_process : 1);
    json_number_member(b, "busbw_gbs", cal->bw_bytes_per_s / 1e9);
    cfit_buf_printf(b, ", \"busbw_size_bytes\": %.0f", cal->bw_size_bytes);
    json_fit(b, cal);
    json_number_member(b, "nic_bw_gbs", k->fit.nic_bw / 1e9);
    json_number_member(b, "net_extra_latency_s", k->fit.net_extra_latency_s);
    json_number_member(b, "catalog_nic_bw_gbs", k->catalog_nic_bw / 1e9);
    json_number_member(b, "catalog_net_extra_latency_s", k->catalog_extra_s);
    cfit_buf_printf(b, ", \"latency_floor\": %s, \"matches\": %s", k->fit.latency_floor ? "true" : "false",
                     k->mismatch ? "false" : "true");
    cfit_buf_puts(b, ", \"model_median_relative_error\": ");
    if (k->npoints)
        cfit_buf_json_number(b, k->median_abs_err);
    else
        cfit_buf_puts(b, "null");
    json_points(b, k);
    cfit_buf_puts(b, "}");
}
