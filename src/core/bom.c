/* bom.c - bill of materials (fat-tree, optics, storage) and network sizing (docs/sizing.md).
 *
 * The fat-tree is rail-optimised: NIC k of every node goes to a leaf of rail k, so a rail
 * of n nodes needs ceil(n / down) leaves.  Leaves split their radix into down ports and
 * up ports by the oversubscription; a spine takes one port per leaf, so two tiers reach
 * radix leaves (radix x down endpoints, radix^2/2 non-blocking).  Beyond that a third tier
 * groups leaves into pods of radix/2 under aggregation switches that are non-blocking
 * towards a core.  Prices are catalog entries; the code holds only the arithmetic.
 */
#include "clusterfit/bom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CKPT_BYTES_PER_PARAM 14.0   /* bf16 weights 2 + fp32 master 4 + Adam m 4 + v 4 */
#define MIN_COMPARE_BW 12.5e9       /* the comparison covers 100 Gb/s ports and up */

void cfit_bom_options_init(cfit_bom_options *o)
{
    memset(o, 0, sizeof *o);
    o->tiers = 2;
    o->oversub = 1.0;
    o->data_headroom = 4.0;
    o->checkpoint_window_s = 300.0;
}

static long ceil_div(long a, long b)
{
    return (a + b - 1) / b;
}

/* Leaf port split: down = floor(radix x o / (o + 1)), up = ceil(down / o). */
static void leaf_split(int radix, double oversub, int *down, int *up)
{
    int d = (int)floor(radix * oversub / (oversub + 1.0) + 1e-9);
    d = d < 1 ? 1 : d >= radix ? radix - 1 : d;
    int u = (int)ceil(d / oversub - 1e-9);
    *down = d;
    *up = u < 1 ? 1 : u > radix - d ? radix - d : u;
}

/* Leaves and leaf uplinks of one rail of n nodes: full leaves use every up port, the
 * last one ceil(used down ports / oversub). */
static long rail_uplinks(long nodes, int down, int up, double oversub)
{
    long rest = nodes % down;
    return (nodes / down) * up + (rest ? (long)ceil(rest / oversub - 1e-9) : 0);
}

int cfit_fattree_size(long nodes, int nics, int radix, int tiers, double oversub, cfit_fattree *t, cfit_diag *d)
{
    memset(t, 0, sizeof *t);
    if (nodes < 1 || nics < 1 || radix < 2 || !(oversub >= 1.0 && oversub <= 64.0) || (tiers != 2 && tiers != 3))
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0,
                             "fat-tree needs nodes, nics >= 1, radix >= 2, oversubscription 1..64 and 2 or 3 tiers");
    t->endpoints = nodes * nics;
    t->radix = radix;
    leaf_split(radix, oversub, &t->down, &t->up);
    t->max_endpoints_2 = (long)radix * t->down;
    t->node_links = t->endpoints;
    if (t->endpoints <= radix) {   /* one switch holds every port */
        t->tiers = 1;
        t->leaves = t->leaves_per_rail = t->switches = 1;
        t->cables = t->node_links;
        t->transceivers = 2 * t->cables;
        return CFIT_EOK;
    }
    t->leaves_per_rail = ceil_div(nodes, t->down);
    t->leaves = nics * t->leaves_per_rail;
    long up_links = nics * rail_uplinks(nodes, t->down, t->up, oversub);
    t->tiers = tiers;
    if (tiers == 2 && t->leaves > radix) {
        t->tiers = 3;
        t->tiers_raised = 1;
    }
    if (t->tiers == 3 && t->leaves > (long)radix * (radix / 2))
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0,
                             "%ld node ports need %ld leaves; three tiers of %d-port switches reach %ld leaves "
                             "(%ld ports)", t->endpoints, t->leaves, radix, (long)radix * (radix / 2),
                             (long)radix * (radix / 2) * t->down);
    if (t->tiers == 2) {
        t->spines = ceil_div(up_links, radix);
        t->switch_links = up_links;
    } else {
        t->pods = ceil_div(t->leaves, radix / 2);
        t->spines = ceil_div(up_links, radix / 2);   /* aggregation: half down, half up */
        t->cores = ceil_div(up_links, radix);
        t->switch_links = 2 * up_links;
    }
    t->switches = t->leaves + t->spines + t->cores;
    t->cables = t->node_links + t->switch_links;
    t->transceivers = 2 * t->cables;
    return CFIT_EOK;
}

/* ---- prices ---- */

static int price_of(const cfit_catalog *c, const char *prefix, const char *name, double *v, char *missing, size_t n)
{
    char key[2 * CFIT_NAME_MAX];
    snprintf(key, sizeof key, "%s%s", prefix, name);
    const cfit_price *p = cfit_catalog_price(c, key, NULL);
    if (p) {
        *v = p->value;
        return 1;
    }
    if (missing && !missing[0])
        snprintf(missing, n, "%s", key);
    return 0;
}

/* Switches, optics and cables of a tree; 1 when every price exists. */
static int price_fabric(const cfit_catalog *c, const cfit_fabric *f, const cfit_switch *sw, const cfit_fattree *t,
                        cfit_bom *b)
{
    double sw_usd = 0, optic_usd = 0, cable_usd = 0;
    int ok = price_of(c, "switch.", sw->name, &sw_usd, b->missing, sizeof b->missing);
    ok &= price_of(c, "optic.", f->name, &optic_usd, b->missing, sizeof b->missing);
    ok &= price_of(c, "cable.", f->name, &cable_usd, b->missing, sizeof b->missing);
    b->switches_usd = (double)t->switches * sw_usd;
    b->optics_usd = (double)t->transceivers * optic_usd;
    b->cables_usd = (double)t->cables * cable_usd;
    b->fabric_usd = b->switches_usd + b->optics_usd + b->cables_usd;
    return ok;
}

/* ---- storage ---- */

static void storage_need(const cfit_model *m, const cfit_plan *p, const cfit_bom_options *o, cfit_bom *b)
{
    b->bytes_per_token = o->bytes_per_token > 0 ? o->bytes_per_token : m->vocab_size <= 65536 ? 2.0 : 4.0;
    b->data_read_bytes_per_s = p->tokens_per_s * b->bytes_per_token * o->data_headroom;
    b->checkpoint_bytes = cfit_model_params(m) * CKPT_BYTES_PER_PARAM;
    b->checkpoint_write_bytes_per_s = b->checkpoint_bytes / o->checkpoint_window_s;
}

static void storage_fit(const cfit_catalog *c, const cfit_storage *s, cfit_bom *b, cfit_storage_fit *f)
{
    f->s = s;
    if (s->per_node) {
        f->units = b->nodes;
    } else {
        long r = (long)ceil(b->data_read_bytes_per_s / s->read_bytes_per_s - 1e-9);
        long w = (long)ceil(b->checkpoint_write_bytes_per_s / s->write_bytes_per_s - 1e-9);
        f->units = r > w ? r : w;
        f->units = f->units < 1 ? 1 : f->units;
    }
    f->meets = f->units * s->read_bytes_per_s >= b->data_read_bytes_per_s &&
               f->units * s->write_bytes_per_s >= b->checkpoint_write_bytes_per_s;
    double unit_usd = 0;
    f->has_price = price_of(c, "storage.", s->name, &unit_usd, NULL, 0);
    f->capex_usd = (double)f->units * unit_usd;
}

static void storage_all(const cfit_catalog *c, cfit_bom *b)
{
    b->storage_choice = -1;
    for (size_t i = 0; i < cfit_catalog_storage_count(c) && b->nstorage < CFIT_BOM_MAX_STORAGE; i++) {
        cfit_storage_fit *f = &b->storage[b->nstorage];
        storage_fit(c, cfit_catalog_storage_at(c, i), b, f);
        int better = b->storage_choice < 0 || f->capex_usd < b->storage[b->storage_choice].capex_usd;
        if (!f->s->per_node && f->has_price && f->meets && better)
            b->storage_choice = b->nstorage;
        b->nstorage++;
    }
}

int cfit_bom_compute(const cfit_catalog *c, const cfit_model *m, const cfit_plan *p, const cfit_bom_options *o,
                     cfit_bom *b, cfit_diag *d)
{
    memset(b, 0, sizeof *b);
    b->fabric = p->fabric;
    b->nodes = p->nodes;
    b->nics_per_node = o->nics_per_node > 0 ? o->nics_per_node : p->node->nics_per_node;
    b->nics = b->nodes * b->nics_per_node;
    b->sw = cfit_catalog_switch_for(c, p->fabric->name);
    if (!b->sw)
        return cfit_diag_set(d, CFIT_EUNKNOWN, NULL, 0, 0,
                             "no switch entry for fabric '%s' (add one to \"switches\" with --catalog FILE)",
                             p->fabric->name);
    int rc = cfit_fattree_size(b->nodes, b->nics_per_node, b->sw->ports, o->tiers, o->oversub, &b->tree, d);
    if (rc)
        return rc;
    storage_need(m, p, o, b);
    storage_all(c, b);
    double nic_usd = 0, node_usd = 0;
    b->has_network_price = price_fabric(c, p->fabric, b->sw, &b->tree, b);
    b->has_nic_price = price_of(c, "nic.", p->fabric->name, &nic_usd, NULL, 0);
    b->nics_usd = (double)b->nics * nic_usd;
    b->has_node_price = price_of(c, "node.", p->gpu->name, &node_usd, b->missing, sizeof b->missing);
    b->node_capex_usd = (double)b->nodes * node_usd;
    b->has_capex = b->has_network_price && b->has_node_price;
    b->capex_usd = b->node_capex_usd + b->fabric_usd +
                   (b->storage_choice >= 0 ? b->storage[b->storage_choice].capex_usd : 0.0);
    return CFIT_EOK;
}

/* ---- network sizing ---- */

/* The options to compare, appended to res->opts (allocated for the most there can be). */
static int list_options(const cfit_plan_request *r, const cfit_plan *best, cfit_net_result *res)
{
    static const double oversubs[] = {1.0, 2.0};
    static const int per_gpu_div[] = {8, 4, 2, 1};   /* NICs per node = GPUs per node / this */
    size_t nf = cfit_catalog_fabric_count(r->catalog);
    res->opts = calloc(nf * 8 + 1, sizeof *res->opts);
    if (!res->opts)
        return CFIT_ENOMEM;
    int gpn = best->node->gpus_per_node;
    for (size_t i = 0; i < nf; i++) {
        const cfit_fabric *f = cfit_catalog_fabric_at(r->catalog, i);
        if (f->kind != CFIT_FABRIC_SCALEOUT || f->bw_bytes_per_s < MIN_COMPARE_BW ||
            !cfit_catalog_switch_for(r->catalog, f->name))
            continue;
        int last = 0;
        for (size_t k = 0; k < sizeof per_gpu_div / sizeof per_gpu_div[0]; k++) {
            int nics = gpn / per_gpu_div[k] < 1 ? 1 : gpn / per_gpu_div[k];
            if (nics == last)
                continue;
            last = nics;
            for (size_t j = 0; j < sizeof oversubs / sizeof oversubs[0]; j++)
                res->opts[res->n++] = (cfit_net_option){.fabric = f, .nics_per_node = nics, .oversub = oversubs[j]};
        }
    }
    return CFIT_EOK;
}

/* Re-run the search for one option at the GPU count of best.  *drop is set for an
 * oversubscribed option whose ports all fit on one switch (no spine to oversubscribe). */
static int evaluate_option(const cfit_plan_request *r, const cfit_plan *best, const cfit_bom_options *o,
                           cfit_net_option *x, int *drop, cfit_diag *d)
{
    const cfit_switch *sw = cfit_catalog_switch_for(r->catalog, x->fabric->name);
    cfit_fattree t;
    int sized = cfit_fattree_size(best->nodes, x->nics_per_node, sw->ports, o->tiers, x->oversub, &t, NULL) == CFIT_EOK;
    *drop = sized && t.tiers == 1 && x->oversub > 1.0;
    if (*drop)
        return CFIT_EOK;
    cfit_plan_request rr = *r;
    const cfit_gpu *g = best->gpu;
    rr.gpus = &g;
    rr.ngpus = 1;
    rr.gpus_total = best->gpus;
    rr.budget_usd = 0;
    rr.top = 1;
    rr.progress = NULL;
    rr.fabric = x->fabric;
    rr.nics_per_node = x->nics_per_node;
    rr.oversub = x->oversub;
    cfit_plan_result res;
    int rc = cfit_plan_search(&rr, &res, d);
    if (rc)
        return rc;
    x->found = res.nplans > 0;
    if (x->found) {
        x->plan = res.plans[0];
        x->exposed_share = x->plan.step_time_s > 0 ? x->plan.comm_exposed_s / x->plan.step_time_s : 0;
    }
    cfit_plan_result_fini(&res);
    if (!sized)
        return CFIT_EOK;   /* beyond three tiers: no capex */
    cfit_bom b;
    memset(&b, 0, sizeof b);
    double nic_usd = 0;
    int ok = price_fabric(r->catalog, x->fabric, sw, &t, &b);
    ok &= price_of(r->catalog, "nic.", x->fabric->name, &nic_usd, NULL, 0);
    x->switches = t.switches;
    x->has_capex = ok;
    x->network_capex_usd = b.fabric_usd + (double)best->nodes * x->nics_per_node * nic_usd;
    return CFIT_EOK;
}

/* Cheapest capex under the threshold (ties: faster); without one, the fastest. */
static void recommend(cfit_net_result *res)
{
    res->recommended = res->cheapest = -1;
    for (size_t i = 0; i < res->n; i++) {
        const cfit_net_option *x = &res->opts[i];
        if (!x->found || !x->has_capex)
            continue;
        const cfit_net_option *c = res->cheapest >= 0 ? &res->opts[res->cheapest] : NULL;
        if (!c || x->network_capex_usd < c->network_capex_usd)
            res->cheapest = (int)i;
        const cfit_net_option *rec = res->recommended >= 0 ? &res->opts[res->recommended] : NULL;
        if (x->exposed_share < res->threshold &&
            (!rec || x->network_capex_usd < rec->network_capex_usd ||
             (x->network_capex_usd == rec->network_capex_usd && x->plan.step_time_s < rec->plan.step_time_s)))
            res->recommended = (int)i;
    }
    res->under_threshold = res->recommended >= 0;
    for (size_t i = 0; i < res->n && !res->under_threshold; i++) {
        const cfit_net_option *x = &res->opts[i];
        if (x->found && (res->recommended < 0 || x->plan.step_time_s < res->opts[res->recommended].plan.step_time_s))
            res->recommended = (int)i;
    }
}

/* GPU time of each option valued at best's cost basis per GPU-hour. */
static void value_gpu_time(const cfit_plan_request *r, const cfit_plan *best, cfit_net_result *res)
{
    cfit_cost k;
    double usd = 0;
    cfit_cost_compute(r->catalog, best, &k);
    res->has_rate = cfit_cost_of(&k, (cfit_cost_basis)r->cost_basis, &usd) && k.gpu_hours > 0;
    res->usd_per_gpu_hour = res->has_rate ? usd / k.gpu_hours : 0;
    for (size_t i = 0; i < res->n; i++) {
        cfit_net_option *x = &res->opts[i];
        x->has_gpu_cost = res->has_rate && x->found;
        x->gpu_time_usd = x->plan.time_to_train_s / 3600.0 * (double)x->plan.gpus * res->usd_per_gpu_hour;
    }
}

int cfit_network_compare(const cfit_plan_request *r, const cfit_plan *best, const cfit_bom_options *o,
                         double threshold, cfit_net_result *res, cfit_diag *d)
{
    memset(res, 0, sizeof *res);
    res->threshold = threshold;
    res->baseline = -1;
    if (list_options(r, best, res))
        return cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
    size_t kept = 0;
    for (size_t i = 0; i < res->n; i++) {
        int drop = 0;
        cfit_net_option x = res->opts[i];
        int rc = evaluate_option(r, best, o, &x, &drop, d);
        if (rc) {
            cfit_net_result_fini(res);
            return rc;
        }
        if (drop)
            continue;
        if (x.fabric == best->fabric && x.nics_per_node == best->node->nics_per_node && x.oversub == 1.0)
            res->baseline = (int)kept;
        res->opts[kept++] = x;
    }
    res->n = kept;
    recommend(res);
    value_gpu_time(r, best, res);
    return CFIT_EOK;
}

void cfit_net_result_fini(cfit_net_result *res)
{
    free(res->opts);
    res->opts = NULL;
    res->n = 0;
}
