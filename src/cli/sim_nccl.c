/* sim_nccl.c - `clusterfit sim`'s NCCL engine: NCCL's tuner and cost model (clusterfit/nccl.h) on
 * hardware named by the catalog, with the contention of a --topology from the flow engine. */
#include "sim_cli.h"
#include "clusterfit/writer.h"
#include "clusterfit/nccl.h"

#include <stdlib.h>
#include <string.h>

/* What the run models, resolved once. */
typedef struct nccl_run {
    const cfit_node *node;
    cfit_nccl_system sys;
    unsigned algo_mask, proto_mask;
    cfit_topo *t;                     /* --topology, or NULL: non-blocking */
    cfit_topo_info info;
    double slowdown;                  /* the topology's factor on the inter-node traffic */
    int ranks;
    int calibrated;                   /* --calibration given: cal holds it */
    sim_nccl_cal cal;
} nccl_run;

typedef sim_nccl_row nccl_row;

static int masks(const sim_cli *c, nccl_run *r)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    if (cfit_nccl_algo_mask(c->algo_name ? c->algo_name : "auto", &r->algo_mask, &d))
        return cli_error("--algo: %s", d.msg);
    if (cfit_nccl_proto_mask(c->proto_name ? c->proto_name : "auto", &r->proto_mask, &d))
        return cli_error("--proto: %s", d.msg);
    return 0;
}

/* Nodes and ranks per node from the options, the node type and the topology. */
static int shape(sim_cli *c, nccl_run *r, int *nodes, int *per_node)
{
    int node_gpus = r->node->gpus_per_node;
    *per_node = c->ranks_per_node ? (int)c->ranks_per_node : node_gpus;
    if (*per_node > node_gpus)
        return cli_error("--gpus-per-node %d is more than the %d GPUs of a %s node", *per_node, node_gpus,
                         r->node->name);
    *nodes = c->nodes ? (int)c->nodes : 1;
    if (!r->t)
        return 0;
    int topo_gpn = c->params.gpus_per_node, hosts = cfit_topo_hosts(r->t);
    int avail = hosts / (topo_gpn > 0 ? topo_gpn : 1);
    if (!c->nodes)
        *nodes = avail;
    if (*per_node > topo_gpn)
        return cli_error("--gpus-per-node %d is more than the topology's %d GPUs per node", *per_node, topo_gpn);
    if (*nodes > avail)
        return cli_error("--nodes %d is more than the topology's %d nodes of %d GPUs", *nodes, avail, topo_gpn);
    return 0;
}

/* The fabric's contention on NCCL's inter-node traffic: every local rank's ring across the nodes
 * at once (rail-aligned, as NCCL's rings and trees leave a node through the NIC beside the GPU),
 * one max-min solution of the flow engine. */
static int contention(const sim_cli *c, nccl_run *r)
{
    r->slowdown = 1;
    if (!r->t || r->sys.nodes < 2)
        return 0;
    cfit_sim_exchange x = {r->sys.nodes, r->sys.gpus_per_node, 0, 0, c->params.link_bw_bytes_per_s, 0};
    double bytes = 1 << 30, factor = 1;
    cfit_diag d;
    cfit_diag_clear(&d);
    int err = cfit_sim_internode_curve(r->t, &x, 1, &bytes, &factor, &d);
    if (err)
        return cli_error_diag(&d, err);
    r->slowdown = factor;
    r->sys.net_slowdown = factor;
    return 0;
}

static int resolve(sim_cli *c, nccl_run *r)
{
    if (c->random_place)
        return cli_error("sim: --placement is the flow engine's (--engine flow); NCCL orders its rings by node");
    if (c->ranks)
        return cli_error("sim: the NCCL engine takes --nodes and --gpus-per-node instead of --ranks");
    int rc = masks(c, r);
    if (rc)
        return rc;
    r->node = c->node_entry;
    if (c->spec && (rc = cli_sim_build(c, &r->t, &r->info)))
        return rc;
    int nodes = 1, per_node = 1;
    if ((rc = shape(c, r, &nodes, &per_node)))
        return rc;
    if ((long)nodes * per_node < 2)
        return cli_error("sim: %d node%s of %d GPU%s is one rank; a collective needs 2 or more (--nodes, "
                         "--gpus-per-node)", nodes, nodes == 1 ? "" : "s", per_node, per_node == 1 ? "" : "s");
    cfit_diag d;
    cfit_diag_clear(&d);
    int err = cfit_nccl_system_from_catalog(c->g, c->up, r->node, c->out, nodes, per_node, (int)c->nics, &r->sys, &d);
    if (err)
        return cli_error_diag(&d, err);
    if (c->p2p)
        r->sys.p2p_off = c->p2p == 2;
    if (c->gpus_per_process > per_node)
        return cli_error("--gpus-per-process %d is more than the %d GPUs per node", c->gpus_per_process, per_node);
    r->sys.gpus_per_process = c->gpus_per_process;
    r->ranks = nodes * per_node;
    if (c->calibration && (rc = cli_sim_nccl_calibrate(c, &r->sys, &r->cal)))
        return rc;
    r->calibrated = c->calibration != NULL;
    return contention(c, r);
}

static int model(const sim_cli *c, const nccl_run *r, nccl_row *rows, int nrows, double lo)
{
    double s = lo;
    for (int i = 0; i < nrows; i++, s = s ? s * (double)c->factor : 1) {
        cfit_diag d;
        cfit_diag_clear(&d);
        rows[i].size = s;
        /* alltoallv: NCCL's point-to-point path carrying the busiest rank's bytes (docs/sim.md) */
        double b = c->coll == CFIT_COLL_ALLTOALLV ? cfit_sim_alltoallv_busiest(&c->a2av, r->ranks, s) : s;
        int err = cfit_nccl_best(&r->sys, c->coll, r->algo_mask, r->proto_mask, b, &rows[i].e, &d);
        if (err)
            return cli_error("%s%s", c->algo_name || c->proto_name ? "--algo/--proto: " : "", d.msg);
    }
    return 0;
}

static const char *bound_name(const nccl_row *row)
{
    return row->e.net_bound ? "network" : "node";
}

/* The first line of the table (and the report's title). */
static void headline(char *buf, size_t n, const sim_cli *c, const nccl_run *r)
{
    const cfit_nccl_system *s = &r->sys;
    snprintf(buf, n, "clusterfit sim: %s, NCCL model (algo %s, proto %s), %d ranks: %d node%s x %d GPU%s (%s, node %s)",
             cfit_collective_name(c->coll), c->algo_name ? c->algo_name : "auto", c->proto_name ? c->proto_name : "auto",
             r->ranks, s->nodes, s->nodes == 1 ? "" : "s", s->gpus_per_node, s->gpus_per_node == 1 ? "" : "s",
             c->g->name, r->node->name);
}

static void print_system(const sim_cli *c, const nccl_run *r)
{
    const cfit_nccl_system *s = &r->sys;
    char head[320];
    headline(head, sizeof head, c, r);
    printf("# %s\n", head);
    if (r->calibrated)
        cli_sim_nccl_cal_print(&r->cal);
    printf("# scale-up: %s %.2f GB/s per GPU (x%.2f efficiency)", c->up->name, s->intra_bw / 1e9, c->up->efficiency);
    if (s->nvls_bw > 0)
        printf(", NVLink SHARP %.2f GB/s (x%.2f)", s->nvls_bw / 1e9, c->up->sharp_efficiency);
    if (s->p2p_off)
        printf(", no GPU peer-to-peer");
    if (s->intra_extra_latency_s > 0)
        printf(", +%.3g us per GPU hop", s->intra_extra_latency_s * 1e6);
    if (s->gpus_per_process > 1)
        printf(", %d GPUs per process", s->gpus_per_process);
    printf("\n");
    if (s->nodes > 1) {
        char how[40];
        if (r->calibrated)
            snprintf(how, sizeof how, "calibrated");
        else
            snprintf(how, sizeof how, "x%.2f efficiency", c->out->efficiency);
        printf("# scale-out: %d x %s %.2f GB/s per NIC (%s), %.2f GB/s per node", s->nics, c->out->name,
               s->nic_bw / 1e9, how, s->nics * s->nic_bw / 1e9);
        if (s->sharp_bw > 0)
            printf(", SHARP %.2f GB/s per NIC", s->sharp_bw / 1e9);
        if (s->net_extra_latency_s > 0)
            printf(", +%.3g us per network hop", s->net_extra_latency_s * 1e6);
        printf("\n");
        if (r->t)
            printf("# network: %s (%s, %d switches, bisection %.2f GB/s): inter-node traffic x%.3g slower than "
                   "non-blocking (flow engine)\n", c->spec, cfit_topo_kind_name(r->t), r->info.switches,
                   r->info.bisection_bytes_per_s / 1e9, r->slowdown);
        else
            printf("# network: non-blocking, rail-optimised (no --topology)\n");
    }
    printf("# modelled (NCCL's cost model and tuner; docs/sim.md \"The NCCL model\"): #wrong is always 0\n#\n");
}

static void print_table(const sim_cli *c, const nccl_run *r, const nccl_row *rows, int nrows)
{
    print_system(c, r);
    printf("#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %13s  %6s  %7s\n", "size", "count", "type", "redop", "root",
           "time", "algbw", "busbw", "#wrong", "algo", "proto", "bound");
    printf("#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %13s  %6s  %7s\n", "(B)", "(elements)", "", "", "", "(us)",
           "(GB/s)", "(GB/s)", "", "", "", "");
    double sum = 0;
    for (int i = 0; i < nrows; i++) {
        char tb[32], ab[32], bb[32];
        const cfit_nccl_estimate *e = &rows[i].e;
        printf("%12.0f  %12ld  %8s  %6s  %6s  %7s  %6s  %6s  %6d  %13s  %6s  %7s\n", rows[i].size,
               cli_sim_elements(c->coll, rows[i].size, r->ranks), "float", "sum", "-1",
               fmt_fit(tb, sizeof tb, 7, e->time_s * 1e6), fmt_fit(ab, sizeof ab, 6, e->algbw_bytes_per_s / 1e9),
               fmt_fit(bb, sizeof bb, 6, e->busbw_bytes_per_s / 1e9), 0, cfit_nccl_algo_name(e->algo),
               cfit_nccl_proto_name(e->proto), bound_name(&rows[i]));
        sum += e->busbw_bytes_per_s / 1e9;
    }
    printf("# Out of bounds values : 0 OK\n");
    printf("# Avg bus bandwidth    : %g\n#\n", nrows ? sum / nrows : 0);
}

static void json_system(cfit_buf *b, const sim_cli *c, const nccl_run *r)
{
    const cfit_nccl_system *s = &r->sys;
    cfit_buf_puts(b, "\"system\": {\"gpu\": ");
    cfit_buf_json_string(b, c->g->name);
    cfit_buf_puts(b, ", \"node\": ");
    cfit_buf_json_string(b, r->node->name);
    cfit_buf_printf(b, ", \"nodes\": %d, \"gpus_per_node\": %d, \"scaleup_fabric\": ", s->nodes, s->gpus_per_node);
    cfit_buf_json_string(b, c->up->name);
    cfit_buf_puts(b, ", \"intra_bw_gbs\": ");
    cfit_buf_json_number(b, s->intra_bw / 1e9);
    cfit_buf_puts(b, ", \"nvls_bw_gbs\": ");
    cfit_buf_json_number(b, s->nvls_bw / 1e9);
    cfit_buf_puts(b, ", \"intra_extra_latency_s\": ");
    cfit_buf_json_number(b, s->intra_extra_latency_s);
    cfit_buf_printf(b, ", \"p2p\": %s, \"gpus_per_process\": %d, \"fabric\": ", s->p2p_off ? "false" : "true",
                    s->gpus_per_process > 1 ? s->gpus_per_process : 1);
    if (s->nodes > 1)
        cfit_buf_json_string(b, c->out->name);
    else
        cfit_buf_puts(b, "null");
    cfit_buf_printf(b, ", \"nics_per_node\": %d, \"nic_bw_gbs\": ", s->nics);
    cfit_buf_json_number(b, s->nic_bw / 1e9);
    cfit_buf_puts(b, ", \"sharp_bw_gbs\": ");
    cfit_buf_json_number(b, s->sharp_bw / 1e9);
    cfit_buf_puts(b, ", \"net_extra_latency_s\": ");
    cfit_buf_json_number(b, s->net_extra_latency_s);
    cfit_buf_puts(b, ", \"topology\": ");
    if (r->t)
        cfit_buf_json_string(b, c->spec);
    else
        cfit_buf_puts(b, "null");
    cfit_buf_puts(b, ", \"net_slowdown\": ");
    cfit_buf_json_number(b, r->slowdown);
    cfit_buf_puts(b, "}");
}

static int print_json(const sim_cli *c, const nccl_run *r, const nccl_row *rows, int nrows)
{
    cfit_buf b;
    cfit_buf_init(&b);
    cfit_buf_printf(&b, "{\"clusterfit_version\": \"%s\", \"engine\": \"nccl\", ", CFIT_VERSION);
    json_system(&b, c, r);
    if (r->calibrated) {
        cfit_buf_puts(&b, ", ");
        cli_sim_nccl_cal_json(&b, &r->cal);
    }
    cfit_buf_printf(&b, ", \"collective\": \"%s\", \"algo\": \"%s\", \"proto\": \"%s\", \"ranks\": %d, \"results\": [",
                     cfit_collective_name(c->coll), c->algo_name ? c->algo_name : "auto",
                     c->proto_name ? c->proto_name : "auto", r->ranks);
    double sum = 0;
    for (int i = 0; i < nrows; i++) {
        const cfit_nccl_estimate *e = &rows[i].e;
        cfit_buf_printf(&b, "%s{\"size_bytes\": %.0f, \"count\": %ld, \"type\": \"float\", \"redop\": \"sum\", "
                             "\"root\": -1, \"time_s\": ", i ? ", " : "", rows[i].size,
                         cli_sim_elements(c->coll, rows[i].size, r->ranks));
        cfit_buf_json_number(&b, e->time_s);
        cfit_buf_puts(&b, ", \"latency_s\": ");
        cfit_buf_json_number(&b, e->latency_s);
        cfit_buf_puts(&b, ", \"fill_s\": ");
        cfit_buf_json_number(&b, e->fill_s);
        cfit_buf_puts(&b, ", \"launch_s\": ");
        cfit_buf_json_number(&b, e->launch_s);
        cfit_buf_puts(&b, ", \"algbw_gbs\": ");
        cfit_buf_json_number(&b, e->algbw_bytes_per_s / 1e9);
        cfit_buf_puts(&b, ", \"busbw_gbs\": ");
        cfit_buf_json_number(&b, e->busbw_bytes_per_s / 1e9);
        cfit_buf_printf(&b, ", \"wrong\": 0, \"algo\": \"%s\", \"proto\": \"%s\", \"bound\": \"%s\"}",
                         cfit_nccl_algo_name(e->algo), cfit_nccl_proto_name(e->proto), bound_name(&rows[i]));
        sum += e->busbw_bytes_per_s / 1e9;
    }
    cfit_buf_puts(&b, "], \"avg_busbw_gbs\": ");
    cfit_buf_json_number(&b, nrows ? sum / nrows : 0);
    cfit_buf_puts(&b, "}\n");
    return cli_emit_json(&b);
}

static int report(const sim_cli *c, const nccl_run *r, const nccl_row *rows, int nrows)
{
    char head[320];
    headline(head, sizeof head, c, r);
    sim_nccl_report_in in = {head, c->coll, r->ranks, &r->sys, rows, nrows, r->calibrated ? &r->cal : NULL};
    return cli_sim_nccl_report(c->report, &in);
}

int cli_sim_nccl(sim_cli *c)
{
    nccl_run r;
    memset(&r, 0, sizeof r);
    int rc = resolve(c, &r);
    double lo, hi;
    int nrows = 0;
    if (!rc)
        rc = cli_sim_sizes(c, &lo, &hi, &nrows);
    nccl_row *rows = rc ? NULL : calloc((size_t)nrows, sizeof *rows);
    if (!rc && !rows)
        rc = cli_error("out of memory");
    if (!rc)
        rc = model(c, &r, rows, nrows, lo);
    if (!rc)
        rc = c->json ? print_json(c, &r, rows, nrows) : (print_table(c, &r, rows, nrows), 0);
    if (!rc && c->report)
        rc = report(c, &r, rows, nrows);
    free(rows);
    cfit_topo_free(r.t);
    return rc;
}
