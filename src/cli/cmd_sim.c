/* cmd_sim.c - `clusterfit sim`: a collective on a topology, printed like nccl-tests. */
#include "sim_cli.h"
#include "clusterfit/writer.h"
#include "clusterfit/catalog.h"
#include "clusterfit/sim.h"
#include "sim_report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum {
    O_TOPOLOGY = 1, O_COLLECTIVE, O_ALGO, O_RANKS, O_SIZE, O_MIN, O_MAX, O_FACTOR, O_LINK_BW, O_LATENCY,
    O_SCALEUP_BW, O_GPN, O_PLACEMENT, O_FAIL_LINKS, O_FAIL, O_DESCRIBE, O_JSON, O_GPU, O_FABRIC, O_CATALOG,
    O_REPORT, O_ENGINE, O_PROTO, O_NODES, O_NICS, O_NODE, O_P2P, O_CALIBRATION, O_SPREAD, O_IMBALANCE, O_GPP
};

static const cli_opt opts[] = {
    {"gpu", 0, "NAME", "the GPU (catalog); selects the NCCL engine, with the GPU's node type,\n"
                       "                                       its NICs and fabric (clusterfit catalog list gpus)", O_GPU},
    {"node", 0, "NAME", "a node type (catalog: dgx-h100, aws-p5, ...): its GPU, NICs and fabric", O_NODE},
    {"nodes", 'N', "N", "NCCL engine: nodes in the communicator (default 1, or every node of\n"
                        "                                       --topology)", O_NODES},
    {"gpus-per-node", 0, "N", "NCCL engine: ranks per node (default: the node's GPUs); flow engine:\n"
                              "                                       GPUs under one scale-up switch (default 8; 1 = none)", O_GPN},
    {"gpus-per-process", 0, "N", "NCCL engine: GPUs one process drives, as nccl-tests' -g (default 1, a\n"
                                 "                                       process per rank; RCCL's MSCCL++ needs that)", O_GPP},
    {"nics", 0, "N", "scale-out NICs a node's ranks use instead of the node type's", O_NICS},
    {"fabric", 0, "NAME", "this scale-out fabric instead of the node's (catalog)", O_FABRIC},
    {"p2p", 0, "yes|no", "NCCL engine: whether the node's GPUs reach each other over PCIe\n"
                         "                                       (default: the node type's; no = through host memory)", O_P2P},
    {"catalog", 0, "FILE", "add a catalog file (repeatable; - reads stdin)", O_CATALOG},
    {"engine", 0, "nccl|flow", "nccl: NCCL's algorithms, protocols and tuner (default with --gpu or\n"
                               "                                       --node); flow: the flow-level schedule on --topology\n"
                               "                                       (default otherwise; docs/sim.md)", O_ENGINE},
    {"topology", 't', "SPEC", "fattree:k=16[,oversub=2], railopt:nodes=128[,gpus=8,spines=16],\n"
                              "                                       dragonfly:p=4,a=8,h=4[,routing=min|valiant|ugal] or\n"
                              "                                       torus3d:8x8x8 (docs/sim.md lists every key); required\n"
                              "                                       by the flow engine, the contention of the NCCL one", O_TOPOLOGY},
    {"collective", 0, "NAME", "allreduce (default), allgather, reducescatter, alltoall, sendrecv or\n"
                              "                                       alltoallv (uneven all-to-all: --spread, --imbalance)", O_COLLECTIVE},
    {"spread", 0, "S", "alltoallv: 0 = every peer alike .. 1 = more to farther ranks (default 1;\n"
                       "                                       nccl-tests' NCCL_TESTS_ALLTOALLV_SPREAD)", O_SPREAD},
    {"imbalance", 0, "F", "alltoallv: max / mean expert load, the hottest rank receiving F x the\n"
                          "                                       mean (default 1; docs/sim.md \"alltoallv\")", O_IMBALANCE},
    {"algo", 0, "LIST", "NCCL engine: auto (default: NCCL's tuner), or as NCCL_ALGO a list of\n"
                        "                                       ring, tree, nvls, nvlstree, collnetdirect, collnetchain,\n"
                        "                                       pat, p2p, and RCCL's msccl, mscclpp (\"ring,tree\";\n"
                        "                                       \"^nvls,nvlstree\" = all but);\n"
                        "                                       flow engine: ring (default), or for allreduce tree,\n"
                        "                                       rabenseifner or hierarchical", O_ALGO},
    {"proto", 0, "LIST", "NCCL engine: auto (default), or as NCCL_PROTO a list of ll, ll128, simple", O_PROTO},
    {"ranks", 'n', "N", "ranks taking part (default: every host of the topology)", O_RANKS},
    {"size", 's', "BYTES", "one message size, nccl-tests' size (K M G suffixes, powers of 1024)", O_SIZE},
    {"minbytes", 'b', "BYTES", "smallest size of a sweep (default 32M)", O_MIN},
    {"maxbytes", 'e', "BYTES", "largest size of a sweep (default 32M)", O_MAX},
    {"stepfactor", 'f', "N", "multiply the size by N between rows of a sweep (default 2)", O_FACTOR},
    {"link-bw", 0, "RATE", "flow engine without --gpu: scale-out link rate per direction (default\n"
                           "                                       400G = 50 GB/s)", O_LINK_BW},
    {"latency", 0, "TIME", "flow engine without --gpu: latency per scale-out hop (default 1us)", O_LATENCY},
    {"scaleup-bw", 0, "RATE", "flow engine without --gpu: GPU to scale-up switch rate per direction\n"
                              "                                       (default 450GB/s)", O_SCALEUP_BW},
    {"placement", 0, "linear|random[:SEED]", "rank r on host r (default), or a random permutation",
     O_PLACEMENT},
    {"fail-links", 0, "N[:SEED]", "fail N random scale-out cables before simulating", O_FAIL_LINKS},
    {"fail", 0, "SPEC", "fail the cables SPEC names (the topology's format, docs/sim.md)", O_FAIL},
    {"describe", 0, NULL, "print hosts, switches, links, diameter and bisection, and exit", O_DESCRIBE},
    {"json", 0, NULL, "print one JSON object (docs/json.md) instead of the table", O_JSON},
    {"calibration", 0, "FILE", "NCCL engine: a run measured on 2+ nodes, an nccl-tests log\n"
                               "                                       (all_reduce_perf, ...) or `bench COLLECTIVE --json`: the\n"
                               "                                       NIC rate and network latency are solved from it (- = stdin)", O_CALIBRATION},
    {"report", 0, "FILE.html", "also write a self-contained HTML report with charts (docs/report.md);\n"
                               "                                       NCCL engine: predicted (and measured) busbw", O_REPORT},
    {NULL, 0, NULL, NULL, 0},
};

/* The options whose values are stored as given (cli_bind), and the CLI_GIVEN marks of what was
 * given (--size, -b/-e/-f, the link options, --spread, --imbalance); on_opt has the rest: those
 * that parse a unit or a seed, set two fields (--gpus-per-node) or keep their own messages
 * (--engine, --p2p, --collective, --placement). */
static const cli_bind binds[] = {
    CLI_STRING(O_TOPOLOGY, sim_cli, spec),
    CLI_STRING(O_ALGO, sim_cli, algo_name),
    CLI_STRING(O_PROTO, sim_cli, proto_name),
    CLI_STRING(O_NODE, sim_cli, node),
    CLI_STRING(O_GPU, sim_cli, gpu),
    CLI_STRING(O_FABRIC, sim_cli, fabric),
    CLI_STRING(O_FAIL, sim_cli, fail_spec),
    CLI_STRING(O_REPORT, sim_cli, report),
    CLI_STRING(O_CALIBRATION, sim_cli, calibration),
    CLI_FLAG(O_DESCRIBE, sim_cli, describe),
    CLI_FLAG(O_JSON, sim_cli, json),
    CLI_INT(O_NODES, sim_cli, nodes, 1, 1L << 20),
    CLI_INT(O_NICS, sim_cli, nics, 1, 4096),
    CLI_INT(O_RANKS, sim_cli, ranks, 2, 1L << 24),
    CLI_INT(O_FACTOR, sim_cli, factor, 2, 1L << 20),
    CLI_REAL(O_SPREAD, sim_cli, a2av.spread, 0, 1),
    CLI_REAL(O_IMBALANCE, sim_cli, a2av.imbalance, 1, 1e6),
    CLI_GIVEN(O_SIZE, sim_cli, have_size),
    CLI_GIVEN(O_MIN, sim_cli, have_range),
    CLI_GIVEN(O_MAX, sim_cli, have_range),
    CLI_GIVEN(O_FACTOR, sim_cli, have_range),
    CLI_GIVEN(O_LINK_BW, sim_cli, manual),
    CLI_GIVEN(O_SCALEUP_BW, sim_cli, manual),
    CLI_GIVEN(O_LATENCY, sim_cli, manual),
    CLI_GIVEN(O_SPREAD, sim_cli, a2av_given),
    CLI_GIVEN(O_IMBALANCE, sim_cli, a2av_given),
    {.id = 0},
};

static int opt_size(const char *name, const char *value, uint64_t *out)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    return cfit_parse_size(value, out, &d) ? cli_error("--%s: %s", name, d.msg) : 0;
}

static int opt_rate(const char *name, const char *value, double *out)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    return cfit_parse_rate(value, out, &d) ? cli_error("--%s: %s", name, d.msg) : 0;
}

/* "N" or "N:SEED" (linear / random / random:SEED for placement). */
static int opt_seeded(const char *name, const char *value, long *n, unsigned *seed)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", value);
    char *colon = strchr(buf, ':');
    long s = 1;
    if (colon) {
        *colon = '\0';
        if (cli_int(name, colon + 1, 0, 4294967295L, &s))
            return EXIT_USAGE;
    }
    *seed = (unsigned)s;
    return cli_int(name, buf, 0, 1L << 30, n);
}

static int on_opt(void *vc, int id, const char *name, const char *value)
{
    sim_cli *c = vc;
    cfit_diag d;
    cfit_diag_clear(&d);
    switch (id) {
    case -1: return cli_error("sim: unexpected argument '%s' (see --help)", value);
    case O_COLLECTIVE: return cfit_collective_parse(value, &c->coll, &d) ? cli_error("--%s: %s", name, d.msg) : 0;
    case O_ENGINE:
        c->engine_name = value;
        if (strcmp(value, "nccl") && strcmp(value, "flow"))
            return cli_error("--%s: '%s' is not nccl or flow", name, value);
        return 0;
    case O_P2P:
        if (strcmp(value, "yes") && strcmp(value, "no"))
            return cli_error("--%s: '%s' is not yes or no", name, value);
        c->p2p = strcmp(value, "no") == 0 ? 2 : 1;
        return 0;
    case O_SIZE: return opt_size(name, value, &c->size);
    case O_MIN: return opt_size(name, value, &c->minb);
    case O_MAX: return opt_size(name, value, &c->maxb);
    case O_LINK_BW: return opt_rate(name, value, &c->params.link_bw_bytes_per_s);
    case O_SCALEUP_BW: return opt_rate(name, value, &c->params.scaleup_bw_bytes_per_s);
    case O_LATENCY:
        return cfit_parse_time(value, &c->params.link_latency_s, &d) ? cli_error("--%s: %s", name, d.msg) : 0;
    case O_CATALOG: return cli_catalog_add(&c->cc, value);
    case O_GPP: {
        long g;
        int rc = cli_int(name, value, 1, 1024, &g);
        c->gpus_per_process = (int)g;
        return rc;
    }
    case O_GPN: {
        long g;
        int rc = cli_int(name, value, 1, 1024, &g);
        c->params.gpus_per_node = (int)g;
        c->ranks_per_node = g;
        c->gpn_given = 1;
        return rc;
    }
    case O_PLACEMENT:
        c->placement = value;
        if (strcmp(value, "linear") == 0)
            return c->random_place = 0, 0;
        if (strcmp(value, "random") == 0)
            return c->random_place = 1, c->place_seed = 1, 0;
        if (strncmp(value, "random:", 7) == 0) {
            long s;
            c->random_place = 1;
            int rc = cli_int(name, value + 7, 0, 4294967295L, &s);
            c->place_seed = (unsigned)s;
            return rc;
        }
        return cli_error("--%s: '%s' is not linear, random or random:SEED", name, value);
    case O_FAIL_LINKS: return opt_seeded(name, value, &c->fail_n, &c->fail_seed);
    }
    return 0;
}

/* The algorithm as the schedule runs it: alltoall's "ring" is the pairwise exchange. */
static const char *algo_label(const sim_cli *c)
{
    if (c->coll == CFIT_COLL_ALLTOALL || c->coll == CFIT_COLL_ALLTOALLV)
        return "pairwise";
    return c->coll == CFIT_COLL_SENDRECV ? "shift" : cfit_algo_name(c->algo);
}

static const char *tier_name(int tier)
{
    static const char *const names[] = {"scale-up", "leaf/edge", "spine/aggregation", "core/global"};
    return tier >= 0 && tier < 4 ? names[tier] : "none";
}

static const char *vertex_name(const cfit_topo *t, int v, char *buf, size_t n)
{
    snprintf(buf, n, "%s %d", cfit_topo_vertex_kind(t, v) == CFIT_VERTEX_GPU ? "gpu" : "switch", v);
    return buf;
}

/* xorshift64*: the permutation random:SEED gives, stable across platforms. */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

static int *make_placement(const sim_cli *c, int hosts)
{
    int *p = malloc((size_t)hosts * sizeof *p);
    if (!p)
        return NULL;
    for (int h = 0; h < hosts; h++)
        p[h] = h;
    uint64_t s = 0x9E3779B97F4A7C15ULL ^ c->place_seed;
    for (int h = hosts - 1; c->random_place && h > 0; h--) {
        int j = (int)(next_rand(&s) % (uint64_t)(h + 1));
        int tmp = p[h];
        p[h] = p[j], p[j] = tmp;
    }
    return p;
}

static void json_topology(cfit_buf *b, const sim_cli *c, const cfit_topo *t, const cfit_topo_info *info)
{
    cfit_buf_puts(b, "\"topology\": {\"spec\": ");
    cfit_buf_json_string(b, c->spec);
    cfit_buf_puts(b, ", \"kind\": ");
    cfit_buf_json_string(b, cfit_topo_kind_name(t));
    cfit_buf_printf(b, ", \"hosts\": %d, \"switches\": %d, \"links\": %d, \"diameter\": %d, \"bisection_gbs\": ",
                     info->hosts, info->switches, info->links, info->diameter);
    cfit_buf_json_number(b, info->bisection_bytes_per_s / 1e9);
    cfit_buf_puts(b, "}");
}

/* --gpu: the catalog entries and the link parameters taken from them. */
static void json_links(cfit_buf *b, const sim_cli *c)
{
    cfit_buf_puts(b, ", \"links\": {\"gpu\": ");
    cfit_buf_json_string(b, c->g->name);
    cfit_buf_puts(b, ", \"scaleup_fabric\": ");
    cfit_buf_json_string(b, c->up->name);
    cfit_buf_puts(b, ", \"fabric\": ");
    cfit_buf_json_string(b, c->out->name);
    cfit_buf_puts(b, ", \"scaleup_bw_gbs\": ");
    cfit_buf_json_number(b, c->params.scaleup_bw_bytes_per_s / 1e9);
    cfit_buf_printf(b, ", \"gpus_per_node\": %d, \"link_bw_gbs\": ", c->params.gpus_per_node);
    cfit_buf_json_number(b, c->params.link_bw_bytes_per_s / 1e9);
    cfit_buf_puts(b, ", \"link_latency_s\": ");
    cfit_buf_json_number(b, c->params.link_latency_s);
    cfit_buf_puts(b, "}");
}

static int describe(const sim_cli *c, const cfit_topo *t, const cfit_topo_info *info)
{
    if (c->json) {
        cfit_buf b;
        cfit_buf_init(&b);
        cfit_buf_printf(&b, "{\"clusterfit_version\": \"%s\", ", CFIT_VERSION);
        json_topology(&b, c, t, info);
        cfit_buf_puts(&b, "}\n");
        return cli_emit_json(&b);
    }
    printf("topology   %s (%s)\n", c->spec, cfit_topo_kind_name(t));
    printf("hosts      %d GPUs\n", info->hosts);
    printf("switches   %d\n", info->switches);
    printf("links      %d cables (%d directed links)\n", info->links, cfit_topo_links(t));
    printf("diameter   %d links (scale-out, NIC cables included)\n", info->diameter);
    printf("bisection  %.2f GB/s per direction\n", info->bisection_bytes_per_s / 1e9);
    return 0;
}

typedef cli_sim_row row;

long cli_sim_elements(cfit_collective coll, double size, int ranks)
{
    const cfit_coll_info *e = cfit_coll_info_of(coll);
    double per = e ? size / e->size_per_count(ranks) : size;   /* nccl-tests' count: one rank's part */
    return (long)(per / 4);
}

static void print_table(const sim_cli *c, const cfit_topo *t, const cfit_topo_info *info, int ranks, const row *rows,
                        int nrows)
{
    printf("# clusterfit sim: %s (%s) on %s, %d ranks of %d hosts, %s placement\n", cfit_collective_name(c->coll),
           algo_label(c), c->spec, ranks, info->hosts, c->random_place ? "random" : "linear");
    printf("# topology: %d switches, %d cables, diameter %d, bisection %.2f GB/s\n", info->switches, info->links,
           info->diameter, info->bisection_bytes_per_s / 1e9);
    if (c->g)
        printf("# links from the catalog: %s scale-up %s %.2f GB/s (x%.2f efficiency), %d GPUs per switch; "
               "scale-out %s %.2f GB/s per GPU (x%.2f efficiency, %.2f NICs per GPU), %.3g us per hop\n",
               c->g->name, c->up->name, c->params.scaleup_bw_bytes_per_s / 1e9, c->up->efficiency,
               c->params.gpus_per_node, c->out->name, c->params.link_bw_bytes_per_s / 1e9, c->out->efficiency,
               c->nic_share, c->params.link_latency_s * 1e6);
    printf("# simulated (flow level, max-min fair; docs/sim.md): #wrong is always 0\n#\n");
    printf("#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size", "count", "type", "redop", "root", "time",
           "algbw", "busbw", "#wrong");
    printf("#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)",
           "(GB/s)", "");
    double sum = 0;
    for (int i = 0; i < nrows; i++) {
        char tb[32], ab[32], bb[32];
        const cfit_sim_result *r = &rows[i].r;
        printf("%12.0f  %12ld  %8s  %6s  %6s  %7s  %6s  %6s  %6d\n", rows[i].size, cli_sim_elements(c->coll, rows[i].size, ranks),
               "float", "sum", "-1", fmt_fit(tb, sizeof tb, 7, r->time_s * 1e6),
               fmt_fit(ab, sizeof ab, 6, r->algbw_bytes_per_s / 1e9), fmt_fit(bb, sizeof bb, 6, r->busbw_bytes_per_s / 1e9), 0);
        sum += r->busbw_bytes_per_s / 1e9;
    }
    printf("# Out of bounds values : 0 OK\n");
    printf("# Avg bus bandwidth    : %g\n#\n", nrows ? sum / nrows : 0);
    const cfit_sim_result *last = &rows[nrows - 1].r;
    printf("# hottest links (largest size):\n");
    for (int i = 0; i < last->nhot; i++) {
        const cfit_link *l = cfit_topo_link(t, last->hot_links[i]);
        char a[32], b[32];
        printf("#   link %-6d %s -> %s, tier %d (%s): %.4g GB\n", last->hot_links[i],
               vertex_name(t, l->from, a, sizeof a), vertex_name(t, l->to, b, sizeof b), l->tier, tier_name(l->tier),
               last->hot_link_bytes[i] / 1e9);
    }
    printf("# bottleneck tier: %d (%s)\n", last->bottleneck_tier, tier_name(last->bottleneck_tier));
}

static int print_json(const sim_cli *c, const cfit_topo *t, const cfit_topo_info *info, int ranks, const row *rows,
                      int nrows)
{
    cfit_buf b;
    cfit_buf_init(&b);
    cfit_buf_printf(&b, "{\"clusterfit_version\": \"%s\", ", CFIT_VERSION);
    json_topology(&b, c, t, info);
    if (c->g)
        json_links(&b, c);
    cfit_buf_printf(&b, ", \"collective\": \"%s\", \"algo\": \"%s\", \"ranks\": %d, \"placement\": ",
                     cfit_collective_name(c->coll), algo_label(c), ranks);
    cfit_buf_json_string(&b, c->placement ? c->placement : "linear");
    cfit_buf_puts(&b, ", \"results\": [");
    double sum = 0;
    for (int i = 0; i < nrows; i++) {
        const cfit_sim_result *r = &rows[i].r;
        cfit_buf_printf(&b, "%s{\"size_bytes\": %.0f, \"count\": %ld, \"type\": \"float\", \"redop\": \"sum\", "
                             "\"root\": -1, \"time_s\": ", i ? ", " : "", rows[i].size, cli_sim_elements(c->coll, rows[i].size, ranks));
        cfit_buf_json_number(&b, r->time_s);
        cfit_buf_puts(&b, ", \"algbw_gbs\": ");
        cfit_buf_json_number(&b, r->algbw_bytes_per_s / 1e9);
        cfit_buf_puts(&b, ", \"busbw_gbs\": ");
        cfit_buf_json_number(&b, r->busbw_bytes_per_s / 1e9);
        cfit_buf_printf(&b, ", \"wrong\": 0, \"steps\": %ld, \"flows\": %ld, \"bottleneck_tier\": %d}", r->steps,
                         r->flows, r->bottleneck_tier);
        sum += r->busbw_bytes_per_s / 1e9;
    }
    cfit_buf_puts(&b, "], \"avg_busbw_gbs\": ");
    cfit_buf_json_number(&b, nrows ? sum / nrows : 0);
    cfit_buf_puts(&b, ", \"hottest_links\": [");
    const cfit_sim_result *last = &rows[nrows - 1].r;
    for (int i = 0; i < last->nhot; i++) {
        const cfit_link *l = cfit_topo_link(t, last->hot_links[i]);
        cfit_buf_printf(&b, "%s{\"link\": %d, \"from\": %d, \"to\": %d, \"tier\": %d, \"bytes\": ", i ? ", " : "",
                         last->hot_links[i], l->from, l->to, l->tier);
        cfit_buf_json_number(&b, last->hot_link_bytes[i]);
        cfit_buf_puts(&b, "}");
    }
    cfit_buf_printf(&b, "], \"bottleneck_tier\": %d}\n", last->bottleneck_tier);
    return cli_emit_json(&b);
}

int cli_sim_sizes(const sim_cli *c, double *lo, double *hi, int *nrows)
{
    *lo = (double)(c->have_size ? c->size : c->minb), *hi = (double)(c->have_size ? c->size : c->maxb);
    if (*hi < *lo)
        return cli_error("--maxbytes %.0f is smaller than --minbytes %.0f", *hi, *lo);
    *nrows = 0;
    for (double s = *lo; s <= *hi && *nrows < 64; s = s ? s * (double)c->factor : 1)
        (*nrows)++;
    return 0;
}

static int simulate(const sim_cli *c, const cfit_topo *t, const cfit_topo_info *info)
{
    int hosts = cfit_topo_hosts(t);
    int ranks = c->ranks ? (int)c->ranks : hosts;
    if (ranks > hosts)
        return cli_error("--ranks %d is more than the topology's %d hosts", ranks, hosts);
    if (ranks < 2)
        return cli_error("the topology has %d host%s; a collective needs 2 or more", hosts, hosts == 1 ? "" : "s");
    double lo, hi;
    int nrows = 0;
    int rc = cli_sim_sizes(c, &lo, &hi, &nrows);
    if (rc)
        return rc;
    row *rows = calloc((size_t)nrows, sizeof *rows);
    int *place = make_placement(c, hosts);
    /* --report colours every link by what it carried at the largest size */
    double *link_bytes = c->report ? calloc((size_t)cfit_topo_links(t) + 1, sizeof *link_bytes) : NULL;
    cfit_sim_state *st = cfit_sim_state_new(t, NULL);   /* one for the whole sweep */
    if (!rows || !place || (c->report && !link_bytes) || !st || cfit_sim_state_set_alltoallv(st, &c->a2av, NULL)) {
        free(rows), free(place), free(link_bytes), cfit_sim_state_free(st);
        return cli_error("out of memory");
    }
    double s = lo;
    for (int i = 0; i < nrows && !rc; i++, s = s ? s * (double)c->factor : 1) {
        cfit_diag d;
        cfit_diag_clear(&d);
        rows[i].size = s;
        int err = cfit_sim_run(st, c->coll, c->algo, ranks, place, s, &rows[i].r, i == nrows - 1 ? link_bytes : NULL,
                               &d);
        if (err)
            rc = cli_error_diag(&d, err);
    }
    cfit_sim_state_free(st);
    if (!rc && c->json)
        rc = print_json(c, t, info, ranks, rows, nrows);
    else if (!rc)
        print_table(c, t, info, ranks, rows, nrows);
    if (!rc && c->report) {
        cli_sim_report_in in = {c->spec, algo_label(c), c->coll, c->algo, ranks, place, c->random_place, t, info,
                                c->params.link_bw_bytes_per_s, rows, nrows, link_bytes};
        rc = cli_sim_report(c->report, &in);
    }
    free(rows), free(place), free(link_bytes);
    return rc;
}

/* --gpu [--fabric]: the link parameters from the catalog, with its achievable-efficiency factors
 * (as plan costs them, docs/sim.md); the latency is set per hop once the diameter is known. */
static int catalog_params(sim_cli *c)
{
    if (!c->gpu && !c->node)
        return c->fabric || c->cc.nfiles || c->nics ? cli_error("sim: --fabric, --nics and --catalog need --gpu NAME or "
                                                                "--node NAME")
                                                    : 0;
    if (c->manual)
        return cli_error("sim: --gpu and --node take the link parameters from the catalog; drop --link-bw, --latency "
                         "and --scaleup-bw");
    if (c->gpn_given && c->engine == SIM_ENGINE_FLOW)
        return cli_error("sim: with --gpu the scale-up domain comes from the catalog; drop --gpus-per-node (or use "
                         "the NCCL engine, where it sets the ranks per node)");
    int rc = cli_catalog_open(&c->cc);
    if (rc)
        return rc;
    cfit_diag d;
    cfit_diag_clear(&d);
    const cfit_catalog *cat = c->cc.cat;
    const cfit_node *node = NULL;
    if (c->node && !(node = cfit_catalog_node(cat, c->node, &d)))
        return cli_error("--node: %s", d.msg);
    const char *gpu = c->gpu ? c->gpu : node->gpu;
    if (!gpu[0])
        return cli_error("--node: node type '%s' names no GPU; add --gpu NAME", node->name);
    if (!(c->g = cfit_catalog_gpu(cat, gpu, &d)))
        return cli_error("--gpu: %s", d.msg);
    if (!node && !(node = cfit_catalog_node(cat, c->g->default_node, &d)))
        return cli_error("--gpu: %s", d.msg);
    c->node_entry = node;
    if (!(c->out = cfit_catalog_fabric(cat, c->fabric ? c->fabric : node->fabric, &d)))
        return cli_error("--fabric: %s", d.msg);
    if (c->out->kind != CFIT_FABRIC_SCALEOUT)
        return cli_error("--fabric: '%s' is a scale-up link; name a scale-out fabric (clusterfit catalog list fabrics)",
                         c->out->name);
    if (!(c->up = cfit_catalog_fabric(cat, c->g->scaleup_fabric, &d)))
        return cli_error("--gpu: %s", d.msg);
    /* a topology has one scale-out cable per GPU: it carries the node's NICs shared by its GPUs */
    int nics = c->nics ? (int)c->nics : node->nics_per_node;
    c->nic_share = node->gpus_per_node > 0 ? (double)nics / node->gpus_per_node : 1.0;
    double up_bw = c->g->scaleup_bw_bytes_per_s > 0 ? c->g->scaleup_bw_bytes_per_s : c->up->bw_bytes_per_s;
    c->params.link_bw_bytes_per_s = c->out->bw_bytes_per_s * c->out->efficiency * c->nic_share;
    c->params.link_latency_s = c->out->latency_s;
    c->params.scaleup_bw_bytes_per_s = up_bw * c->up->efficiency;
    c->params.scaleup_latency_s = c->up->latency_s / 2;   /* GPU -> switch -> GPU */
    c->params.gpus_per_node = c->g->scaleup_domain > 1 ? c->g->scaleup_domain : 1;
    return 0;
}

/* The engine: --engine, else NCCL when the hardware is named; the options the other one lacks. */
static int pick_engine(sim_cli *c)
{
    if (c->a2av_given && c->coll != CFIT_COLL_ALLTOALLV)
        return cli_error("sim: --spread and --imbalance describe an uneven all-to-all: add --collective alltoallv");
    c->engine = c->engine_name ? (strcmp(c->engine_name, "nccl") == 0 ? SIM_ENGINE_NCCL : SIM_ENGINE_FLOW)
                               : (c->gpu || c->node) ? SIM_ENGINE_NCCL : SIM_ENGINE_FLOW;
    if (c->engine == SIM_ENGINE_NCCL)
        return c->gpu || c->node ? 0 : cli_error("sim: the NCCL engine needs the hardware: --gpu NAME or --node NAME");
    if (!c->spec)
        return cli_error("sim: --topology SPEC is required (e.g. --topology fattree:k=8), or name the hardware with "
                         "--gpu NAME for NCCL's model");
    if (c->proto_name || c->nodes || c->p2p || c->calibration || c->gpus_per_process)
        return cli_error("sim: --%s is the NCCL engine's (--gpu NAME or --node NAME)",
                         c->proto_name ? "proto" : c->nodes ? "nodes" : c->p2p ? "p2p" : c->calibration ? "calibration"
                                                                                    : "gpus-per-process");
    cfit_diag d;
    cfit_diag_clear(&d);
    if (c->algo_name && cfit_algo_parse(c->algo_name, &c->algo, &d))
        return cli_error("--algo: %s", d.msg);
    return 0;
}

/* Build the topology, fail its links, describe it.  Returns 0 or an exit code after printing
 * (*t is then NULL or to be freed by the caller). */
int cli_sim_build(sim_cli *c, cfit_topo **t, cfit_topo_info *info)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    int err = cfit_topo_new(c->spec, &c->params, t, &d);
    if (err)
        return cli_error("--topology: %s", d.msg);
    if (c->fail_n > 0 && (err = cfit_topo_fail_random(*t, (int)c->fail_n, c->fail_seed, &d)))
        return cli_error("--fail-links: %s", d.msg);
    if (c->fail_spec && (err = cfit_topo_fail_spec(*t, c->fail_spec, &d)))
        return cli_error("--fail: %s", d.msg);
    if ((err = cfit_topo_describe(*t, info)))
        return cli_error("describing the topology failed: %s", cfit_strerror(err));
    return 0;
}

int cmd_sim(int argc, char **argv)
{
    sim_cli c;
    memset(&c, 0, sizeof c);
    cfit_topo_params_init(&c.params);
    c.minb = c.maxb = 32u << 20;
    c.factor = 2;
    c.a2av = (cfit_sim_alltoallv)CFIT_SIM_ALLTOALLV_DEFAULT;
    int rc = cli_parse_bound(argc, argv, opts, binds, on_opt, &c,
                             "clusterfit sim --gpu NAME|--node NAME [--nodes N] [options]\n"
                             "       clusterfit sim --topology SPEC [options]",
                             "Time a collective as nccl-tests would measure it.  With the hardware named (--gpu or\n"
                             "--node) the NCCL engine models NCCL's algorithms (ring, tree, NVLS, NVLSTree, CollNet,\n"
                             "PAT) and protocols (LL, LL128, Simple) and runs the pair NCCL's tuner would pick per size;\n"
                             "a --topology adds its contention from the flow engine.  Without them the flow engine\n"
                             "simulates the collective's schedule on --topology at flow level: each step's flows share\n"
                             "links by max-min fairness over the topology's equal-cost paths (docs/sim.md).  Prints\n"
                             "nccl-tests' columns per size (algbw = size/time, busbw = algbw x the collective's\n"
                             "nccl-tests factor, GB = 1e9 bytes) and, per engine, the algorithm and protocol chosen or\n"
                             "the links carrying the most bytes and the tier that limited the slowest step.\n"
                             "--calibration FILE sets the NCCL engine's network from a measured run (docs/sim.md\n"
                             "\"Calibration\"); --report FILE.html draws the predicted busbw, and the measured one.\n"
                             "Exit status: 0 success, 1 a file that cannot be read, 2 bad option or spec, an\n"
                             "algorithm the hardware cannot run, a --calibration file that cannot set the network,\n"
                             "or failed links disconnecting ranks.");
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if ((rc = pick_engine(&c)))
        return rc;
    if (c.describe && !c.spec)
        return cli_error("sim: --describe needs --topology");
    if (c.describe && c.report)
        return cli_error("sim: --report needs a simulation; drop --describe");
    if (c.have_size && c.have_range)
        return cli_error("sim: give --size or -b/-e/-f, not both");
    if ((rc = catalog_params(&c))) {
        cfit_catalog_free(c.cc.cat);
        return rc;
    }
    if (c.engine == SIM_ENGINE_NCCL && !c.describe) {
        rc = cli_sim_nccl(&c);
        cfit_catalog_free(c.cc.cat);
        return rc;
    }
    cfit_topo *t = NULL;
    cfit_topo_info info;
    rc = cli_sim_build(&c, &t, &info);
    if (!rc && c.g && info.diameter > 1) {   /* the catalog's latency is per step: spread it over the hops */
        c.params.link_latency_s /= info.diameter;
        cfit_topo_free(t);
        t = NULL;
        rc = cli_sim_build(&c, &t, &info);
    }
    if (!rc)
        rc = c.describe ? describe(&c, t, &info) : simulate(&c, t, &info);
    cfit_topo_free(t);
    cfit_catalog_free(c.cc.cat);
    return rc;
}
