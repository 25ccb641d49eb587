/* plan_bom.c - `plan --bom` (bill of materials and storage) and `plan --network` (fabric
 * comparison and recommendation) for the best plan; formulas in docs/sizing.md. */
#include "plan_bom.h"
#include "clusterfit/schedule.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_bom_init(cli_bom *x)
{
    memset(x, 0, sizeof *x);
    cfit_bom_options_init(&x->o);
}

int cli_bom_opt(cli_bom *x, int id, const char *name, const char *value)
{
    long v;
    int rc = 0;
    cfit_diag d;
    switch (id) {
    case CLI_BOM_FLAG: x->bom = 1; return 0;
    case CLI_BOM_NETWORK: x->network = 1; return 0;
    case CLI_BOM_TIERS: rc = cli_int(name, value, 2, 3, &v); x->o.tiers = (int)v; return rc;
    case CLI_BOM_OVERSUB: return cli_real(name, value, 1.0, 64.0, &x->o.oversub);
    case CLI_BOM_GONE_THRESHOLD:
        return cli_error("--%s is gone: --network ranks options by the total cost of the run, not by an "
                         "exposed-communication threshold (docs/sizing.md, Network sizing)", name);
    case CLI_BOM_WINDOW:
        cfit_diag_clear(&d);
        if (cfit_parse_time(value, &x->o.checkpoint_window_s, &d))
            return cli_error("--%s: %s", name, d.msg);
        if (!(x->o.checkpoint_window_s >= 1.0 && x->o.checkpoint_window_s <= 86400.0))
            return cli_error("--%s: %s is out of range (1s to 24h)", name, value);
        return 0;
    }
    return 0;
}

int cli_bom_run(cli_bom *x, const cfit_plan_request *r, const cfit_plan *best)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc;
    if (x->bom) {
        if ((rc = cfit_bom_compute(r->catalog, r->model, best, &x->o, &x->b, &d)))
            return cli_error("--bom: %s", d.msg);
        x->has_bom = 1;
    }
    if (x->network) {
        if ((rc = cfit_network_compare(r, best, &x->o, &x->net, &d)))
            return cli_error_diag(&d, rc);
        x->has_net = 1;
    }
    return 0;
}

void cli_bom_fini(cli_bom *x)
{
    if (x->has_net)
        cfit_net_result_fini(&x->net);
    x->has_net = 0;
}

/* ---- tables ---- */

static const char *oversub_str(char *buf, size_t n, double o)
{
    snprintf(buf, n, o == 1.0 ? "non-blocking" : "%g:1 oversubscribed", o);
    return buf;
}

static const char *usd_or_dash(char *buf, size_t n, int have, double usd)
{
    return have ? fmt_cents(buf, n, usd) : "-";
}

static void print_fabric(const cfit_bom *b, double oversub)
{
    const cfit_fattree *t = &b->tree;
    char u[4][48], o[32];
    int p = b->has_network_price;
    printf("  %-14s %ld (%d per node, %s; priced in the node)\n", "NICs", b->nics, b->nics_per_node, b->fabric->name);
    if (t->tiers == 1)
        printf("  %-14s one %s switch (%d ports) holds all %ld node ports\n", "fabric", b->sw->name, t->radix,
               t->endpoints);
    else
        printf("  %-14s rail-optimised %d-tier fat-tree of %s (%d ports), %s: %d down, %d up per leaf\n", "fabric",
               t->tiers, b->sw->name, t->radix, oversub_str(o, sizeof o, oversub), t->down, t->up);
    printf("  %-14s %ld: %ld leaf + %ld spine%s", "switches", t->switches, t->leaves, t->spines,
           t->tiers == 3 ? " (aggregation)" : "");
    if (t->tiers == 3)
        printf(" + %ld core in %ld pods", t->cores, t->pods);
    printf("  %s\n", usd_or_dash(u[0], 48, p, b->switches_usd));
    printf("  %-14s %ld: %ld node-leaf + %ld between switches  %s\n", "cables", t->cables, t->node_links,
           t->switch_links, usd_or_dash(u[1], 48, p, b->cables_usd));
    printf("  %-14s %ld (2 per cable)  %s\n", "transceivers", t->transceivers, usd_or_dash(u[2], 48, p, b->optics_usd));
    printf("  %-14s %s\n", "fabric total", usd_or_dash(u[3], 48, p, b->fabric_usd));
    if (t->tiers_raised)
        printf("  note: two tiers of %d-port switches reach %ld node ports at this oversubscription; %ld need "
               "three tiers\n", t->radix, t->max_endpoints_2, t->endpoints);
}

static void print_storage(const cfit_bom *b, const cfit_plan *best, const cfit_bom_options *o)
{
    char s[4][48];
    printf("\nstorage need\n");
    printf("  data loading: %s tokens/s x %g B/token x headroom %g = %.3g MB/s read\n",
           fmt_count(s[0], 48, best->tokens_per_s), b->bytes_per_token, o->data_headroom,
           b->data_read_bytes_per_s / 1e6);
    printf("  checkpoint: %.1f GB (14 B/param + 10 KB/rank) in %g s = %.2f GB/s write, and as much read back at "
           "a restart\n", b->checkpoint_bytes / 1e9, o->checkpoint_window_s, b->checkpoint_write_bytes_per_s / 1e9);
    printf("  %-22s %6s %10s %10s %-5s %16s\n", "option", "units", "read GB/s", "write GB/s", "meets", "capex");
    for (int i = 0; i < b->nstorage; i++) {
        const cfit_storage_fit *f = &b->storage[i];
        printf("  %-22s %6ld %10.1f %10.1f %-5s %16s%s\n", f->s->name, f->units,
               f->units * f->s->read_bytes_per_s / 1e9, f->units * f->s->write_bytes_per_s / 1e9,
               f->meets ? "yes" : "no", usd_or_dash(s[0], 48, f->has_price, f->capex_usd),
               f->s->per_node ? "  (per node)" : "");
    }
    char why[320];
    printf("  choice: %s\n", cli_bom_storage_why(b, why, sizeof why));
}

const char *cli_bom_storage_why(const cfit_bom *b, char *buf, size_t n)
{
    char data[192];
    if (b->data_tier >= 0)
        snprintf(data, sizeof data, "; data read from the nodes' %s (%.3g GB/s there, %.3g MB/s needed)",
                 b->storage[b->data_tier].s->name, b->storage[b->data_tier].units *
                 b->storage[b->data_tier].s->read_bytes_per_s / 1e9, b->data_read_bytes_per_s / 1e6);
    else
        snprintf(data, sizeof data, "; it serves the data read too (no node-local tier reads %.3g MB/s)",
                 b->data_read_bytes_per_s / 1e6);
    if (b->storage_choice < 0) {
        snprintf(buf, n, "none: no priced shared option meets the checkpoint write and restart read%s", data);
        return buf;
    }
    const cfit_storage_fit *f = &b->storage[b->storage_choice];
    snprintf(buf, n, "%ld x %s for checkpoints, the cheapest priced shared option that writes %.3g GB/s and reads "
             "%.3g GB/s back (%.3g and %.3g GB/s given)%s", f->units, f->s->name, b->checkpoint_write_bytes_per_s / 1e9,
             b->restart_read_bytes_per_s / 1e9, f->units * f->s->write_bytes_per_s / 1e9,
             f->units * f->s->read_bytes_per_s / 1e9, data);
    return buf;
}

static void print_bom(const cli_bom *x, const cfit_plan *best)
{
    const cfit_bom *b = &x->b;
    char u[4][48];
    printf("\nbill of materials (docs/sizing.md)\n");
    printf("  %-14s %ld x %s (%ld x %s)\n", "nodes", b->nodes, best->node->name, best->gpus, best->gpu->name);
    print_fabric(b, x->o.oversub);
    print_storage(b, best, &x->o);
    if (b->has_capex)
        printf("\n  capex: nodes %s + fabric %s + storage %s = %s (the cost block's capex)\n",
               fmt_cents(u[0], 48, b->node_capex_usd), fmt_cents(u[1], 48, b->fabric_usd),
               fmt_cents(u[2], 48, b->storage_usd), fmt_cents(u[3], 48, b->capex_usd));
    else
        printf("\n  capex: no price; supply --price %s=VALUE\n", b->missing);
}

static double per_gpu_gbps(const cfit_net_option *x, const cfit_plan *best)
{
    return x->fabric->bw_bytes_per_s * 8.0 * x->nics_per_node / best->node->gpus_per_node / x->oversub / 1e9;
}

/* "ib-ndr x 8, 1:1" */
static const char *option_name(char *buf, size_t n, const cfit_net_option *x)
{
    snprintf(buf, n, "%s x %d, %g:1", x->fabric->name, x->nics_per_node, x->oversub);
    return buf;
}

/* Why the least total beats the next: what its network costs against the GPU time it saves. */
static void why_cheapest(char *buf, size_t len, const cfit_net_option *rec, const cfit_net_option *next)
{
    char u[3][48], nm[96];
    double dnet = next->network_run_usd - rec->network_run_usd, dgpu = next->gpu_time_usd - rec->gpu_time_usd;
    int k = snprintf(buf, len, "%s less than the next (%s) because ", fmt_cents(u[0], 48, next->total_usd - rec->total_usd),
                     option_name(nm, sizeof nm, next));
    if (k < 0 || (size_t)k >= len)
        return;
    if (dnet < 0)
        snprintf(buf + k, len - k, "the %s more its network costs over the run saves %s of GPU time",
                 fmt_cents(u[1], 48, -dnet), fmt_cents(u[2], 48, dgpu));
    else if (dgpu > 0)
        snprintf(buf + k, len - k, "its network costs %s less over the run and it saves %s of GPU time",
                 fmt_cents(u[1], 48, dnet), fmt_cents(u[2], 48, dgpu));
    else if (dgpu == 0)
        snprintf(buf + k, len - k, "it has the same step on a network that costs %s less over the run",
                 fmt_cents(u[1], 48, dnet));
    else
        snprintf(buf + k, len - k, "its network costs %s less over the run, more than the %s of GPU time it loses",
                 fmt_cents(u[1], 48, dnet), fmt_cents(u[2], 48, -dgpu));
}

/* The recommendation's reason, one sentence (text and JSON); "" when there is none. */
static const char *net_reason(char *buf, size_t len, const cfit_net_result *n)
{
    char u[3][48], nm[2][96], why[320];
    buf[0] = '\0';
    if (n->recommended < 0)
        return buf;
    const cfit_net_option *rec = &n->opts[n->recommended];
    if (n->compared < 0)
        snprintf(why, sizeof why, "the only option with a total cost");
    else if (n->recommended > 0)
        snprintf(why, sizeof why, "%s (%.1f%%) more than the least (%s), inside the %g%% tie, which goes to the cheaper "
                 "network: %s less capex", fmt_cents(u[1], 48, rec->total_usd - n->opts[0].total_usd),
                 100 * (rec->total_usd / n->opts[0].total_usd - 1), option_name(nm[1], 96, &n->opts[0]),
                 100 * CFIT_NET_TIE_FRACTION, fmt_cents(u[2], 48, n->opts[0].network_capex_usd - rec->network_capex_usd));
    else
        why_cheapest(why, sizeof why, rec, &n->opts[n->compared]);
    snprintf(buf, len, "%s: %s total, %s", option_name(nm[0], 96, rec), fmt_cents(u[0], 48, rec->total_usd), why);
    return buf;
}

static void print_option_row(const cfit_net_option *x, size_t rank, const cfit_plan *best, const char *mark)
{
    char u[4][48], o[16], l[48];
    const cfit_layout *y = &x->plan.layout;
    snprintf(o, sizeof o, "%g:1", x->oversub);
    printf("%-2s%4zu %-10s %4d %7s %8.0f", mark, rank, x->fabric->name, x->nics_per_node, o, per_gpu_gbps(x, best));
    if (!x->found) {
        printf("  no fitting layout\n");
        return;
    }
    snprintf(l, sizeof l, "%d/%d/%d/%d%s", y->tp, y->pp, y->cp, y->dp, x->inherited ? "^" : "");
    printf(" %-12s %8.3f %6.1f %8.1f %8ld %14s %12s %14s %14s\n", l, x->plan.step_time_s, 100 * x->exposed_share,
           x->plan.time_to_train_s / 86400.0, x->switches, usd_or_dash(u[0], 48, x->has_capex, x->network_capex_usd),
           usd_or_dash(u[1], 48, x->has_network_run, x->network_run_usd),
           usd_or_dash(u[2], 48, x->has_gpu_cost, x->gpu_time_usd), usd_or_dash(u[3], 48, x->has_total, x->total_usd));
}

/* "$X less", "$X more" or "the same": a - b. */
static const char *more_less(char *buf, size_t n, double a, double b)
{
    char u[48];
    if (a == b)
        snprintf(buf, n, "the same");
    else
        snprintf(buf, n, "%s %s", fmt_cents(u, sizeof u, a > b ? a - b : b - a), a > b ? "more" : "less");
    return buf;
}

/* One line: the recommendation against another option (network capex, GPU time, total). */
static void print_against(const char *what, const cfit_net_result *n, int other)
{
    if (other < 0 || other == n->recommended || !n->opts[other].has_total)
        return;
    const cfit_net_option *a = &n->opts[n->recommended], *b = &n->opts[other];
    char u[3][64], nm[96];
    printf("  against %s (%s): network capex %s, GPU time %s, total %s\n", what, option_name(nm, sizeof nm, b),
           more_less(u[0], 64, a->network_capex_usd, b->network_capex_usd),
           more_less(u[1], 64, a->gpu_time_usd, b->gpu_time_usd), more_less(u[2], 64, a->total_usd, b->total_usd));
}

/* The option with the least network capex that has a total; -1 when none. */
static int cheapest_network(const cfit_net_result *n)
{
    int k = -1;
    for (size_t i = 0; i < n->n; i++)
        if (n->opts[i].has_total && (k < 0 || n->opts[i].network_capex_usd < n->opts[k].network_capex_usd))
            k = (int)i;
    return k;
}

static void print_network(const cli_bom *x, const cfit_plan_request *r, const cfit_plan *best)
{
    const cfit_net_result *n = &x->net;
    char u[48], why[512];
    const char *basis = cfit_cost_basis_name((cfit_cost_basis)r->cost_basis);
    printf("\nnetwork sizing: %ld x %s, %s, ranked by the total cost of the run on %s (docs/sizing.md)\n", best->gpus,
           best->gpu->name, r->model->name, basis);
    printf("  each option re-runs the search at this GPU count and keeps the fastest of its layout and those of its\n"
           "  fabric's options with fewer NICs or more oversubscription\n");
    printf("  %4s %-10s %4s %7s %8s %-12s %8s %6s %8s %8s %14s %12s %14s %14s\n", "rank", "fabric", "NICs", "oversub",
           "Gb/s/GPU", "tp/pp/cp/dp", "step s", "comm%", "train d", "switches", "network capex", "network run",
           "GPU time", "total");
    for (size_t i = 0; i < n->n; i++)
        print_option_row(&n->opts[i], i + 1, best,
                         (int)i == n->recommended ? "*" : (int)i == n->baseline ? "=" : "");
    printf("  (* recommended, = the plan's fabric with the node's NICs, 1:1; ^ the layout of an option with less\n"
           "   bandwidth, faster here than this option's own search found; comm%% = step time lost to communication\n"
           "   against the communication-free step, %.3f s)\n", n->comm_free_step_s);
    printf("  network run = capex x run years x %.1f%% a year (amortisation + maintenance); GPU time on %s at %s per "
           "GPU-hour; total = network run + GPU time\n", 100 * n->network_share_per_year, basis,
           n->has_rate ? fmt_cents(u, 48, n->usd_per_gpu_hour) : "-");
    if (n->recommended < 0) {
        if (n->missing[0])
            printf("recommendation: none (no option has a total cost; supply --price %s=VALUE)\n", n->missing);
        else
            printf("recommendation: none (no option has a fitting layout and a run time)\n");
        return;
    }
    printf("recommendation: %s\n", net_reason(why, sizeof why, n));
    print_against("the plan's fabric", n, n->baseline);
    print_against("the cheapest network", n, cheapest_network(n));
}

void cli_bom_print(const cli_bom *x, const cfit_plan_request *r, const cfit_plan *best)
{
    if (x->has_bom)
        print_bom(x, best);
    if (x->has_net)
        print_network(x, r, best);
}

/* ---- JSON ---- */

void cli_json_layout_dims(cfit_buf *b, const cfit_layout *l, int comma)
{
    cfit_buf_key_number(b, "tp", l->tp, comma);
    cfit_buf_key_number(b, "pp", l->pp, 1);
    cfit_buf_key_number(b, "dp", l->dp, 1);
    cfit_buf_key_number(b, "cp", l->cp, 1);
    cfit_buf_key_number(b, "vp", l->vp, 1);
    cfit_buf_key_string(b, "schedule", cfit_layout_schedule_name(l), 1);   /* "none" without a pipeline */
    cfit_buf_key_number(b, "micro_batch", l->mbs, 1);
}

static void json_tree(const cfit_bom *x, cfit_buf *b)
{
    const cfit_fattree *t = &x->tree;
    cfit_buf_puts(b, ", \"fattree\": {");
    cfit_buf_key_number(b, "tiers", t->tiers, 0);
    cfit_buf_printf(b, ", \"tiers_raised\": %s", t->tiers_raised ? "true" : "false");
    cfit_buf_key_number(b, "radix", t->radix, 1);
    cfit_buf_key_number(b, "leaf_down_ports", t->down, 1);
    cfit_buf_key_number(b, "leaf_up_ports", t->up, 1);
    cfit_buf_key_number(b, "max_endpoints_two_tier", (double)t->max_endpoints_2, 1);
    cfit_buf_key_number(b, "endpoints", (double)t->endpoints, 1);
    cfit_buf_key_number(b, "leaves", (double)t->leaves, 1);
    cfit_buf_key_number(b, "spines", (double)t->spines, 1);
    cfit_buf_key_number(b, "cores", (double)t->cores, 1);
    cfit_buf_key_number(b, "switches", (double)t->switches, 1);
    cfit_buf_key_number(b, "node_links", (double)t->node_links, 1);
    cfit_buf_key_number(b, "switch_links", (double)t->switch_links, 1);
    cfit_buf_key_number(b, "cables", (double)t->cables, 1);
    cfit_buf_key_number(b, "transceivers", (double)t->transceivers, 1);
    cfit_buf_puts(b, "}");
}

static void json_storage(const cli_bom *c, cfit_buf *b)
{
    const cfit_bom *x = &c->b;
    cfit_buf_puts(b, ", \"storage\": {");
    cfit_buf_key_number(b, "bytes_per_token", x->bytes_per_token, 0);
    cfit_buf_key_number(b, "data_headroom", c->o.data_headroom, 1);
    cfit_buf_key_number(b, "data_read_bytes_per_s", x->data_read_bytes_per_s, 1);
    cfit_buf_key_number(b, "checkpoint_bytes", x->checkpoint_bytes, 1);
    cfit_buf_key_number(b, "checkpoint_window_s", c->o.checkpoint_window_s, 1);
    cfit_buf_key_number(b, "checkpoint_write_bytes_per_s", x->checkpoint_write_bytes_per_s, 1);
    cfit_buf_key_number(b, "restart_read_bytes_per_s", x->restart_read_bytes_per_s, 1);
    if (x->storage_choice >= 0)
        cfit_buf_key_string(b, "choice", x->storage[x->storage_choice].s->name, 1);
    else
        cfit_buf_puts(b, ", \"choice\": null");
    if (x->data_tier >= 0)
        cfit_buf_key_string(b, "data_tier", x->storage[x->data_tier].s->name, 1);
    else
        cfit_buf_puts(b, ", \"data_tier\": null");
    char why[320];
    cfit_buf_key_string(b, "why", cli_bom_storage_why(x, why, sizeof why), 1);
    cfit_buf_puts(b, ", \"options\": [");
    for (int i = 0; i < x->nstorage; i++) {
        const cfit_storage_fit *f = &x->storage[i];
        cfit_buf_puts(b, i ? ", {" : "{");
        cfit_buf_key_string(b, "name", f->s->name, 0);
        cfit_buf_printf(b, ", \"per_node\": %s", f->s->per_node ? "true" : "false");
        cfit_buf_key_number(b, "units", (double)f->units, 1);
        cfit_buf_key_number(b, "read_bytes_per_s", f->units * f->s->read_bytes_per_s, 1);
        cfit_buf_key_number(b, "write_bytes_per_s", f->units * f->s->write_bytes_per_s, 1);
        cfit_buf_printf(b, ", \"meets\": %s", f->meets ? "true" : "false");
        cfit_buf_key_opt(b, "capex_usd", f->has_price, f->capex_usd);
        cfit_buf_puts(b, "}");
    }
    cfit_buf_puts(b, "]}");
}

static void json_bom(const cli_bom *c, cfit_buf *b)
{
    const cfit_bom *x = &c->b;
    int p = x->has_network_price;
    cfit_buf_puts(b, ", \"bom\": {");
    cfit_buf_key_number(b, "nodes", (double)x->nodes, 0);
    cfit_buf_key_number(b, "nics_per_node", x->nics_per_node, 1);
    cfit_buf_key_number(b, "nics", (double)x->nics, 1);
    cfit_buf_key_string(b, "fabric", x->fabric->name, 1);
    cfit_buf_key_string(b, "switch", x->sw->name, 1);
    cfit_buf_key_number(b, "oversub", c->o.oversub, 1);
    json_tree(x, b);
    cfit_buf_key_opt(b, "switches_usd", p, x->switches_usd);
    cfit_buf_key_opt(b, "optics_usd", p, x->optics_usd);
    cfit_buf_key_opt(b, "cables_usd", p, x->cables_usd);
    cfit_buf_key_opt(b, "fabric_usd", p, x->fabric_usd);
    cfit_buf_key_opt(b, "nics_usd", x->has_nic_price, x->nics_usd);
    cfit_buf_key_opt(b, "node_capex_usd", x->has_node_price, x->node_capex_usd);
    cfit_buf_key_opt(b, "storage_capex_usd", x->has_capex, x->storage_usd);
    cfit_buf_key_opt(b, "capex_usd", x->has_capex, x->capex_usd);
    json_storage(c, b);
    cfit_buf_puts(b, "}");
}

static void json_option(const cfit_net_option *x, int recommended, const cfit_plan *best, cfit_buf *b)
{
    const cfit_layout *l = &x->plan.layout;
    cfit_buf_key_string(b, "fabric", x->fabric->name, 0);
    cfit_buf_key_number(b, "nics_per_node", x->nics_per_node, 1);
    cfit_buf_key_number(b, "oversub", x->oversub, 1);
    cfit_buf_key_number(b, "gbps_per_gpu", per_gpu_gbps(x, best), 1);
    cfit_buf_printf(b, ", \"found\": %s, \"recommended\": %s", x->found ? "true" : "false",
                     recommended ? "true" : "false");
    if (x->found) {
        cfit_buf_puts(b, ", \"layout\": {");
        cli_json_layout_dims(b, l, 0);
        cfit_buf_key_number(b, "zero", l->zero, 1);
        cfit_buf_key_string(b, "recompute", cfit_recompute_name((cfit_recompute)l->recompute), 1);
        cfit_buf_printf(b, ", \"sequence_parallel\": %s}", l->sp ? "true" : "false");
    } else {
        cfit_buf_puts(b, ", \"layout\": null");
    }
    cfit_buf_printf(b, ", \"layout_inherited\": %s", x->inherited ? "true" : "false");
    cfit_buf_key_opt(b, "step_time_s", x->found, x->plan.step_time_s);
    cfit_buf_key_opt(b, "exposed_comm_s", x->found, x->exposed_comm_s);
    cfit_buf_key_opt(b, "exposed_comm_share", x->found, x->exposed_share);
    cfit_buf_key_opt(b, "time_to_train_s", x->found, x->plan.time_to_train_s);
    cfit_buf_key_number(b, "switches", (double)x->switches, 1);
    cfit_buf_key_opt(b, "network_capex_usd", x->has_capex, x->network_capex_usd);
    cfit_buf_key_opt(b, "network_run_usd", x->has_network_run, x->network_run_usd);
    cfit_buf_key_opt(b, "gpu_time_usd", x->has_gpu_cost, x->gpu_time_usd);
    cfit_buf_key_opt(b, "total_cost_usd", x->has_total, x->total_usd);
}

static void json_network(const cli_bom *c, const cfit_plan_request *r, const cfit_plan *best, cfit_buf *b)
{
    const cfit_net_result *n = &c->net;
    char why[512];
    cfit_buf_puts(b, ", \"network\": {");
    cfit_buf_key_number(b, "gpus", (double)best->gpus, 0);
    cfit_buf_key_string(b, "gpu", best->gpu->name, 1);
    cfit_buf_key_string(b, "cost_basis", cfit_cost_basis_name((cfit_cost_basis)r->cost_basis), 1);
    cfit_buf_key_opt(b, "usd_per_gpu_hour", n->has_rate, n->usd_per_gpu_hour);
    cfit_buf_key_opt(b, "network_share_per_year", n->has_share, n->network_share_per_year);
    cfit_buf_key_number(b, "tie_fraction", CFIT_NET_TIE_FRACTION, 1);
    cfit_buf_key_number(b, "comm_free_step_s", n->comm_free_step_s, 1);
    cfit_buf_key_opt(b, "recommended", n->recommended >= 0, n->recommended);
    if (n->recommended >= 0)
        cfit_buf_key_string(b, "reason", net_reason(why, sizeof why, n), 1);
    else
        cfit_buf_puts(b, ", \"reason\": null");
    cfit_buf_key_opt(b, "compared", n->compared >= 0, n->compared);
    cfit_buf_key_opt(b, "baseline", n->baseline >= 0, n->baseline);
    if (n->missing[0])
        cfit_buf_key_string(b, "missing_price", n->missing, 1);
    else
        cfit_buf_puts(b, ", \"missing_price\": null");
    cfit_buf_puts(b, ", \"options\": [");
    for (size_t i = 0; i < n->n; i++) {
        cfit_buf_puts(b, i ? ", {" : "{");
        json_option(&n->opts[i], (int)i == n->recommended, best, b);
        cfit_buf_puts(b, "}");
    }
    cfit_buf_puts(b, "]}");
}

void cli_bom_json(const cli_bom *x, const cfit_plan_request *r, const cfit_plan *best, cfit_buf *b)
{
    if (x->has_bom)
        json_bom(x, b);
    if (x->has_net)
        json_network(x, r, best, b);
}
