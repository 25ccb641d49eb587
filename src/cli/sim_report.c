/* sim_report.c - `clusterfit sim --report FILE.html`: busbw curves, the fabric's tiers, its figures.
 *
 * The topology is drawn as its switch tiers, whatever its size: one row per level (GPUs, grouped
 * by node, at the bottom; a switch's level is the lowest tier among its links), each row at most
 * 32 boxes (a box stands for several switches or nodes when there are more, and says how many),
 * the cables between boxes as lines coloured by the utilisation of the busiest link they stand
 * for (bytes carried at the largest size / (link rate x collective time), from
 * cfit_sim_collective_links; grey when idle), and the hottest links the simulator reports (up to
 * CFIT_SIM_HOT_LINKS) drawn thick on top (docs/report.md).
 */
#include "cli.h"
#include "sim_report.h"
#include "clusterfit/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_BOXES = 32, MAX_LEVELS = 5, MAX_SIZES = 64, W = 900 };

static const char *const tier_names[] = {"scale-up", "leaf/edge", "spine/aggregation", "core/global"};

static const char *tier_name(int tier)
{
    return tier >= 0 && tier < 4 ? tier_names[tier] : "none";
}

/* busbw vs size: the simulated algorithm, and for allreduce every other algorithm too (those not
 * defined here left out: CFIT_EINVALID).  Another failure (a route over the simulator's limit, out
 * of memory) is the report's error, never a silently missing curve: *err and d get it. */
static void busbw_section(cfit_buf *b, const cli_sim_report_in *in, int *err, cfit_diag *fail)
{
    int n = in->nrows < MAX_SIZES ? in->nrows : MAX_SIZES;
    double x[MAX_SIZES], y[CFIT_ALGO_COUNT][MAX_SIZES], bound[MAX_SIZES];
    const char *names[CFIT_ALGO_COUNT];
    int ns = 0;
    for (int i = 0; i < n; i++)
        x[i] = in->rows[i].size, y[0][i] = in->rows[i].r.busbw_bytes_per_s / 1e9, bound[i] = in->link_bw_bytes_per_s / 1e9;
    names[ns++] = in->algo_label;
    if (in->coll == CFIT_COLL_ALLREDUCE)
        for (int a = 0; a < CFIT_ALGO_COUNT; a++) {
            if (a == (int)in->algo)
                continue;
            int ok = 1;
            for (int i = 0; i < n && ok; i++) {
                cfit_sim_result r;
                memset(&r, 0, sizeof r);
                cfit_diag d;
                cfit_diag_clear(&d);
                int rc = cfit_sim_collective(in->t, in->coll, (cfit_algo)a, in->ranks, in->place, x[i], &r, &d);
                ok = rc == CFIT_EOK;
                if (rc && rc != CFIT_EINVALID && !*err)
                    *err = rc, *fail = d;
                y[ns][i] = r.busbw_bytes_per_s / 1e9;
            }
            if (*err)
                return;
            if (ok)
                names[ns++] = cfit_algo_name((cfit_algo)a);
        }
    cfit_series s[CFIT_ALGO_COUNT + 1];
    for (int k = 0; k < ns; k++)
        s[k] = (cfit_series){names[k], x, y[k], (size_t)n, 0};
    s[ns] = (cfit_series){"scale-out link rate", x, bound, (size_t)n, 1};
    char title[160], desc[320];
    snprintf(title, sizeof title, "%s bus bandwidth vs message size", cfit_collective_name(in->coll));
    snprintf(desc, sizeof desc, "Simulated busbw in GB/s of %s on %s, %d ranks, per algorithm, against the "
                                "scale-out link rate per GPU (the bound for traffic that crosses the fabric).",
             cfit_collective_name(in->coll), in->spec, in->ranks);
    cfit_chart c = {CFIT_CHART_LINE, "sim-busbw", title, desc, {"message size (bytes)", 2, CFIT_FMT_BYTES, 0, 0},
                     {"bus bandwidth (GB/s)", 0, CFIT_FMT_PLAIN, 0, 0}, NULL, 0, s, (size_t)ns + 1, 0, 0};
    cfit_html_h(b, 2, "Bus bandwidth vs message size");
    cfit_html_figure_begin(b);
    cfit_chart_svg(b, &c);
    const char *head[2 + CFIT_ALGO_COUNT];
    char hb[CFIT_ALGO_COUNT][48];
    head[0] = "size (B)";
    head[1] = "time (us)";
    for (int k = 0; k < ns; k++) {
        snprintf(hb[k], sizeof hb[k], "%s busbw GB/s", names[k]);
        head[2 + k] = hb[k];
    }
    char cap[96];
    snprintf(cap, sizeof cap, "busbw (GB = 1e9 B); time of %s", in->algo_label);
    cfit_html_table_begin(b, cap, head, (size_t)ns + 2);
    for (int i = 0; i < n; i++) {
        char cells[2 + CFIT_ALGO_COUNT][32];
        const char *cp[2 + CFIT_ALGO_COUNT];
        snprintf(cells[0], 32, "%.0f", x[i]);
        snprintf(cells[1], 32, "%.2f", in->rows[i].r.time_s * 1e6);
        for (int k = 0; k < ns; k++)
            snprintf(cells[2 + k], 32, "%.2f", y[k][i]);
        for (int k = 0; k < ns + 2; k++)
            cp[k] = cells[k];
        cfit_html_row(b, cp, (size_t)ns + 2);
    }
    cfit_html_table_end(b);
    cfit_html_figure_end(b);
    cfit_html_p(b, "%s placement. busbw = algbw x the nccl-tests bus factor; the dashed line is the scale-out "
                    "link rate per GPU (%.2f GB/s): schedules that keep traffic on the scale-up links "
                    "(hierarchical, Rabenseifner's first halvings) can exceed it.",
                 in->random_place ? "Random" : "Linear", in->link_bw_bytes_per_s / 1e9);
}

typedef struct drawing {
    int nv, gpn;
    int *level;          /* per vertex: 0 GPU row, 1 + lowest link tier for switches */
    int *index;          /* per vertex: position within its level (GPUs: node number) */
    int count[MAX_LEVELS];
    int per_box[MAX_LEVELS];
    int boxes[MAX_LEVELS];
    int rows;            /* levels present, mapped to rows */
    int row_of[MAX_LEVELS];
} drawing;

static int draw_init(drawing *g, const cfit_topo *t)
{
    memset(g, 0, sizeof *g);
    g->nv = cfit_topo_vertices(t);
    g->gpn = cfit_topo_gpus_per_node(t);
    g->level = calloc((size_t)g->nv, sizeof *g->level);
    g->index = calloc((size_t)g->nv, sizeof *g->index);
    if (!g->level || !g->index)
        return -1;
    for (int l = 0; l < cfit_topo_links(t); l++) {   /* a switch's row: 1 + the lowest tier of its links */
        const cfit_link *k = cfit_topo_link(t, l);
        int tier = k->tier < 0 ? 0 : k->tier > 3 ? 3 : k->tier;
        if (cfit_topo_vertex_kind(t, k->from) == CFIT_VERTEX_SWITCH &&
            (g->level[k->from] == 0 || g->level[k->from] > tier + 1))
            g->level[k->from] = tier + 1;
    }
    for (int v = 0; v < g->nv; v++)
        if (cfit_topo_vertex_kind(t, v) == CFIT_VERTEX_SWITCH && g->level[v] == 0)
            g->level[v] = 1;
    for (int h = 0; h < cfit_topo_hosts(t); h++)
        g->index[cfit_topo_host_vertex(t, h)] = h / (g->gpn > 0 ? g->gpn : 1);
    g->count[0] = (cfit_topo_hosts(t) + g->gpn - 1) / (g->gpn > 0 ? g->gpn : 1);
    for (int v = 0; v < g->nv; v++)
        if (cfit_topo_vertex_kind(t, v) == CFIT_VERTEX_SWITCH)
            g->index[v] = g->count[g->level[v]]++;
    for (int lv = 0; lv < MAX_LEVELS; lv++) {
        g->per_box[lv] = (g->count[lv] + MAX_BOXES - 1) / MAX_BOXES;
        if (g->per_box[lv] < 1)
            g->per_box[lv] = 1;
        g->boxes[lv] = (g->count[lv] + g->per_box[lv] - 1) / g->per_box[lv];
    }
    for (int lv = MAX_LEVELS - 1; lv >= 0; lv--)
        g->row_of[lv] = g->count[lv] ? g->rows++ : -1;
    return 0;
}

static void draw_fini(drawing *g)
{
    free(g->level);
    free(g->index);
}

static void box_xy(const drawing *g, int v, double *x, double *y)
{
    int lv = g->level[v];
    int box = g->index[v] / g->per_box[lv];
    double slot = (double)(W - 320) / g->boxes[lv];
    *x = 200 + slot * (box + 0.5);
    *y = 60 + 90.0 * g->row_of[lv];
}

static void topology_section(cfit_buf *b, const cli_sim_report_in *in)
{
    const cfit_topo *t = in->t;
    const cli_sim_row *last = &in->rows[in->nrows - 1];
    drawing g;
    cfit_html_h(b, 2, "Topology and link utilisation");
    if (draw_init(&g, t)) {
        draw_fini(&g);
        cfit_html_p(b, "Out of memory drawing the topology.");
        return;
    }
    int h = 60 + 90 * g.rows + 10;
    char title[160], desc[400], col[8], lab[96];
    snprintf(title, sizeof title, "%s: switch tiers and the hottest links", in->spec);
    snprintf(desc, sizeof desc, "Rows of boxes are the topology's levels (GPUs grouped by node at the bottom, then "
                                "switches by the lowest tier of their links); lines are cables coloured by the "
                                "utilisation of the busiest link they stand for (grey: idle); the %d hottest "
                                "links of the %.0f-byte %s are drawn thick.",
             last->r.nhot, last->size, cfit_collective_name(in->coll));
    cfit_buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"sim-topo\" width=\"%d\" "
                        "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-labelledby=\"sim-topo-t sim-topo-d\" "
                        "font-family=\"sans-serif\" font-size=\"12\">\n<title id=\"sim-topo-t\">", W, h, W, h);
    cfit_xml_text(b, title);
    cfit_buf_puts(b, "</title>\n<desc id=\"sim-topo-d\">");
    cfit_xml_text(b, desc);
    cfit_buf_printf(b, "</desc>\n<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", W, h);
    /* cables, aggregated per pair of boxes and drawn once, coloured by the busiest link between
     * the two boxes: utilisation = bytes it carried at the largest size / (rate x time); grey
     * when none of them carried anything (or the per-link bytes could not be had) */
    int nl = cfit_topo_links(t);
    const double *lb = last->r.time_s > 0 ? in->link_bytes : NULL;
    size_t npair = (size_t)MAX_LEVELS * MAX_BOXES * MAX_LEVELS * MAX_BOXES;
    double *util = malloc(npair * sizeof *util);
    int *rep = malloc(npair * sizeof *rep);
    for (size_t i = 0; util && rep && i < npair; i++)
        util[i] = -1, rep[i] = -1;
    for (int l = 0; util && rep && l < nl; l++) {
        const cfit_link *k = cfit_topo_link(t, l);
        int a = g.level[k->from] * MAX_BOXES + g.index[k->from] / g.per_box[g.level[k->from]];
        int c = g.level[k->to] * MAX_BOXES + g.index[k->to] / g.per_box[g.level[k->to]];
        if (a == c || g.level[k->from] == g.level[k->to])
            continue;
        size_t key = (size_t)(a < c ? a : c) * MAX_LEVELS * MAX_BOXES + (size_t)(a < c ? c : a);
        double u = lb && k->bw_bytes_per_s > 0 ? lb[l] / (k->bw_bytes_per_s * last->r.time_s) : 0;
        if (rep[key] < 0)
            rep[key] = l;
        if (u > util[key])
            util[key] = u;
    }
    cfit_buf_puts(b, "<g stroke-width=\"1.5\">\n");
    for (size_t key = 0; util && rep && key < npair; key++) {
        if (rep[key] < 0)
            continue;
        const cfit_link *k = cfit_topo_link(t, rep[key]);
        double x0, y0, x1, y1;
        box_xy(&g, k->from, &x0, &y0);
        box_xy(&g, k->to, &x1, &y1);
        if (util[key] > 0)
            cfit_heat_colour(util[key], col);
        else
            snprintf(col, sizeof col, "#bdbdbd");
        cfit_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\">"
                            "<title>tier %d (%s): busiest link %.0f%% utilised</title></line>\n",
                         x0, y0, x1, y1, col, k->tier, tier_name(k->tier), util[key] * 100);
    }
    cfit_buf_puts(b, "</g>\n");
    free(util), free(rep);
    /* the hottest links */
    for (int i = 0; i < last->r.nhot; i++) {
        const cfit_link *k = cfit_topo_link(t, last->r.hot_links[i]);
        double u = k->bw_bytes_per_s > 0 && last->r.time_s > 0
                       ? last->r.hot_link_bytes[i] / (k->bw_bytes_per_s * last->r.time_s) : 0;
        double x0, y0, x1, y1;
        box_xy(&g, k->from, &x0, &y0);
        box_xy(&g, k->to, &x1, &y1);
        if (g.level[k->from] == g.level[k->to])   /* same row: bow it so it shows */
            y1 = y0 + 0.01;
        cfit_heat_colour(u, col);
        cfit_buf_printf(b, "<path d=\"M%.1f %.1fQ%.1f %.1f %.1f %.1f\" fill=\"none\" stroke=\"%s\" stroke-width=\"4\">"
                            "<title>link %d, tier %d (%s): %.4g GB, utilisation %.0f%%</title></path>\n",
                         x0, y0, (x0 + x1) / 2 + 12, (y0 + y1) / 2 - (y0 == y1 ? 30 : 0), x1, y1, col,
                         last->r.hot_links[i], k->tier, tier_name(k->tier), last->r.hot_link_bytes[i] / 1e9, u * 100);
    }
    /* boxes and row labels */
    for (int lv = 0; lv < MAX_LEVELS; lv++) {
        if (!g.count[lv])
            continue;
        double y = 60 + 90.0 * g.row_of[lv], slot = (double)(W - 320) / g.boxes[lv];
        double bw = fmin(18, slot * 0.8);
        if (lv == 0)
            snprintf(lab, sizeof lab, "%d nodes x %d GPUs", g.count[0], g.gpn);
        else
            snprintf(lab, sizeof lab, "%d %s switches", g.count[lv], tier_name(lv - 1));
        cfit_buf_printf(b, "<text x=\"8\" y=\"%.1f\">", y + 4);
        cfit_xml_text(b, lab);
        cfit_buf_puts(b, "</text>\n");
        if (g.per_box[lv] > 1)
            cfit_buf_printf(b, "<text x=\"8\" y=\"%.1f\" font-size=\"10\">each box: %d</text>\n", y + 18, g.per_box[lv]);
        for (int k = 0; k < g.boxes[lv]; k++)
            cfit_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"14\" fill=\"%s\" "
                                "stroke=\"#000000\" stroke-width=\"0.5\"/>\n",
                             200 + slot * (k + 0.5) - bw / 2, y - 7, bw, lv == 0 ? "#e6e6e6" : "#ffffff");
    }
    /* utilisation scale */
    for (int i = 0; i < 5; i++) {
        cfit_heat_colour(i / 4.0, col);
        cfit_buf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"10\" fill=\"%s\"/>"
                            "<text x=\"%d\" y=\"%d\" font-size=\"10\">%d%%</text>\n",
                         W - 30, 20 + 14 * i, col, W - 60, 29 + 14 * i, 25 * i);
    }
    cfit_buf_printf(b, "<text x=\"%d\" y=\"14\" font-size=\"10\">utilisation</text>\n", W - 90);
    cfit_buf_puts(b, "</svg>\n");
    draw_fini(&g);
    const char *head[] = {"link", "from", "to", "tier", "GB carried", "utilisation"};
    char cap[128];
    snprintf(cap, sizeof cap, "Hottest links at %.0f B (bytes carried / (link rate x %.4g us))", last->size,
             last->r.time_s * 1e6);
    cfit_html_table_begin(b, cap, head, 6);
    for (int i = 0; i < last->r.nhot; i++) {
        const cfit_link *k = cfit_topo_link(t, last->r.hot_links[i]);
        char c[6][48];
        snprintf(c[0], 48, "%d", last->r.hot_links[i]);
        snprintf(c[1], 48, "%s %d", cfit_topo_vertex_kind(t, k->from) == CFIT_VERTEX_GPU ? "gpu" : "switch", k->from);
        snprintf(c[2], 48, "%s %d", cfit_topo_vertex_kind(t, k->to) == CFIT_VERTEX_GPU ? "gpu" : "switch", k->to);
        snprintf(c[3], 48, "%d (%s)", k->tier, tier_name(k->tier));
        snprintf(c[4], 48, "%.4g", last->r.hot_link_bytes[i] / 1e9);
        snprintf(c[5], 48, "%.0f%%", k->bw_bytes_per_s > 0 && last->r.time_s > 0
                                         ? 100 * last->r.hot_link_bytes[i] / (k->bw_bytes_per_s * last->r.time_s) : 0);
        const char *cp[] = {c[0], c[1], c[2], c[3], c[4], c[5]};
        cfit_html_row(b, cp, 6);
    }
    cfit_html_table_end(b);
    cfit_html_p(b, "Bottleneck tier of the slowest step at the largest size: %d (%s).", last->r.bottleneck_tier,
                 tier_name(last->r.bottleneck_tier));
}

static void properties_section(cfit_buf *b, const cli_sim_report_in *in)
{
    const cfit_topo_info *info = in->info;
    const cfit_topo *t = in->t;
    cfit_html_h(b, 2, "Topology properties");
    const char *head[] = {"property", "value"};
    cfit_html_table_begin(b, "Bisection and diameter (cfit_topo_describe, docs/sim.md)", head, 2);
    char v[8][64];
    snprintf(v[0], 64, "%s", cfit_topo_kind_name(t));
    snprintf(v[1], 64, "%d GPUs (%d per node)", info->hosts, cfit_topo_gpus_per_node(t));
    snprintf(v[2], 64, "%d", info->switches);
    snprintf(v[3], 64, "%d cables", info->links);
    snprintf(v[4], 64, "%d links", info->diameter);
    snprintf(v[5], 64, "%.2f GB/s per direction", info->bisection_bytes_per_s / 1e9);
    snprintf(v[6], 64, "%.3f GB/s", info->hosts ? info->bisection_bytes_per_s / 1e9 / (info->hosts / 2.0) : 0);
    snprintf(v[7], 64, "%.2f GB/s", in->link_bw_bytes_per_s / 1e9);
    const char *names[] = {"kind", "hosts", "switches", "cables", "diameter (scale-out, NIC cables included)",
                           "bisection bandwidth", "bisection per host of one half", "scale-out link rate"};
    for (int i = 0; i < 8; i++) {
        const char *row[] = {names[i], v[i]};
        cfit_html_row(b, row, 2);
    }
    cfit_html_table_end(b);
    /* cables and rates per tier */
    long cables[4] = {0}, failed[4] = {0};
    double rate[4] = {0};
    for (int l = 0; l < cfit_topo_links(t); l += 2) {
        const cfit_link *k = cfit_topo_link(t, l);
        int tier = k->tier < 0 ? 0 : k->tier > 3 ? 3 : k->tier;
        cables[tier]++;
        failed[tier] += k->failed != 0;
        rate[tier] = fmax(rate[tier], k->bw_bytes_per_s);
    }
    const char *th[] = {"tier", "cables", "failed", "rate per direction"};
    cfit_html_table_begin(b, "Cables per tier", th, 4);
    for (int i = 0; i < 4; i++) {
        if (!cables[i])
            continue;
        char c[4][48];
        snprintf(c[0], 48, "%d (%s)", i, tier_name(i));
        snprintf(c[1], 48, "%ld", cables[i]);
        snprintf(c[2], 48, "%ld", failed[i]);
        snprintf(c[3], 48, "%.2f GB/s", rate[i] / 1e9);
        const char *cp[] = {c[0], c[1], c[2], c[3]};
        cfit_html_row(b, cp, 4);
    }
    cfit_html_table_end(b);
}

int cli_sim_report(const char *path, const cli_sim_report_in *in)
{
    if (in->nrows < 1)
        return 0;
    cfit_buf b;
    cfit_buf_init(&b);
    char title[200];
    snprintf(title, sizeof title, "clusterfit sim: %s (%s) on %s, %d ranks", cfit_collective_name(in->coll),
             in->algo_label, in->spec, in->ranks);
    cfit_html_begin(&b, title);
    cfit_html_p(&b, "Flow-level simulation: each step's flows share links by max-min fairness over the topology's "
                     "equal-cost paths (docs/sim.md). GB = 1e9 bytes.");
    int err = 0;
    cfit_diag fail;
    cfit_diag_clear(&fail);
    busbw_section(&b, in, &err, &fail);
    if (err) {
        cfit_buf_fini(&b);
        return cli_error_diag(&fail, err);
    }
    topology_section(&b, in);
    properties_section(&b, in);
    cfit_html_end(&b);
    return cli_report_write(path, &b);
}
