/* bom.c - bill of materials: fat-tree, optics, storage (docs/sizing.md); netsize.c compares networks.
 *
 * The fat-tree is rail-optimised: NIC k of every node goes to a leaf of rail k, so a rail
 * of n nodes needs ceil(n / down) leaves.  Leaves split their radix into down ports and
 * up ports by the oversubscription; a spine takes one port per leaf, so two tiers reach
 * radix leaves (radix x down endpoints, radix^2/2 non-blocking).  Beyond that a third tier
 * groups leaves into pods of radix/2 under aggregation switches that are non-blocking
 * towards a core.  Prices are catalog entries; the code holds only the arithmetic.
 */
#include "bom_internal.h"
#include "clusterfit/goodput.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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

int cfit__price_of(const cfit_catalog *c, const char *prefix, const char *name, double *v, char *missing, size_t n)
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

int cfit__price_fabric(const cfit_catalog *c, const cfit_fabric *f, const cfit_switch *sw, const cfit_fattree *t,
                        cfit_bom *b)
{
    double sw_usd = 0, optic_usd = 0, cable_usd = 0;
    int ok = cfit__price_of(c, "switch.", sw->name, &sw_usd, b->missing, sizeof b->missing);
    ok &= cfit__price_of(c, "optic.", f->name, &optic_usd, b->missing, sizeof b->missing);
    ok &= cfit__price_of(c, "cable.", f->name, &cable_usd, b->missing, sizeof b->missing);
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
    b->checkpoint_bytes = cfit_checkpoint_bytes(m, p->gpus);
    b->checkpoint_write_bytes_per_s = b->checkpoint_bytes / o->checkpoint_window_s;
    b->restart_read_bytes_per_s = b->checkpoint_bytes / o->checkpoint_window_s;
}

/* The read a shared tier must serve: the restart read, and the data read when no node-local tier
 * holds the data (NVIDIA SuperPOD RA-11333-001 Table 5: NLP "datasets generally fit within local
 * cache"). */
static double shared_read_bytes_per_s(const cfit_bom *b)
{
    double data = b->data_tier >= 0 ? 0.0 : b->data_read_bytes_per_s;
    return data > b->restart_read_bytes_per_s ? data : b->restart_read_bytes_per_s;
}

static void storage_fit(const cfit_catalog *c, const cfit_storage *s, cfit_bom *b, cfit_storage_fit *f)
{
    f->s = s;
    double read = s->per_node ? b->data_read_bytes_per_s : shared_read_bytes_per_s(b);
    if (s->per_node) {
        f->units = b->nodes;
    } else {
        long r = (long)ceil(read / s->read_bytes_per_s - 1e-9);
        long w = (long)ceil(b->checkpoint_write_bytes_per_s / s->write_bytes_per_s - 1e-9);
        long k = s->max_nodes > 0 ? (b->nodes + s->max_nodes - 1) / s->max_nodes : 1;   /* clients per unit */
        f->units = r > w ? r : w;
        f->units = f->units < k ? k : f->units;
    }
    f->meets = f->units * s->read_bytes_per_s >= read &&
               (s->per_node || f->units * s->write_bytes_per_s >= b->checkpoint_write_bytes_per_s);
    double unit_usd = 0;
    f->has_price = cfit__price_of(c, "storage.", s->name, &unit_usd, NULL, 0);
    f->capex_usd = (double)f->units * unit_usd;
}

/* The node-local tier that holds the data, if one reads fast enough: the first per-node option. */
static void data_tier(const cfit_catalog *c, cfit_bom *b)
{
    b->data_tier = -1;
    for (size_t i = 0; i < cfit_catalog_storage_count(c); i++) {
        const cfit_storage *s = cfit_catalog_storage_at(c, i);
        if (s->per_node && (double)b->nodes * s->read_bytes_per_s >= b->data_read_bytes_per_s) {
            b->data_tier = (int)i;   /* index in the catalog = index in b->storage (storage_all) */
            return;
        }
    }
}

static void storage_all(const cfit_catalog *c, cfit_bom *b)
{
    b->storage_choice = -1;
    data_tier(c, b);
    if (b->data_tier >= CFIT_BOM_MAX_STORAGE)
        b->data_tier = -1;
    for (size_t i = 0; i < cfit_catalog_storage_count(c) && b->nstorage < CFIT_BOM_MAX_STORAGE; i++) {
        cfit_storage_fit *f = &b->storage[b->nstorage];
        storage_fit(c, cfit_catalog_storage_at(c, i), b, f);
        int better = b->storage_choice < 0 || f->capex_usd < b->storage[b->storage_choice].capex_usd;
        if (!f->s->per_node && f->has_price && f->meets && better)
            b->storage_choice = b->nstorage;
        b->nstorage++;
    }
}

void cfit_bom_storage(const cfit_catalog *c, const cfit_model *m, const cfit_plan *p, const cfit_bom_options *o,
                      cfit_bom *b)
{
    memset(b, 0, sizeof *b);
    b->nodes = p->nodes;
    storage_need(m, p, o, b);
    storage_all(c, b);
}

/* The tier the plan checkpoints to and its capex. */
static void capex_storage(const cfit_catalog *c, const cfit_plan *p, cfit_bom *b)
{
    double unit_usd = 0;
    snprintf(b->capex_storage, sizeof b->capex_storage, "%s", p->goodput.storage);
    b->capex_storage_units = p->goodput.storage_units;
    b->has_storage_price = b->capex_storage[0] && cfit__price_of(c, "storage.", b->capex_storage, &unit_usd, NULL, 0);
    b->storage_usd = b->has_storage_price ? (double)b->capex_storage_units * unit_usd : 0.0;
}

int cfit_bom_capex(const cfit_catalog *c, const cfit_plan *p, const cfit_bom_options *o, cfit_bom *b, cfit_diag *d)
{
    b->nodes = p->nodes;
    b->fabric = p->fabric;
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
    double nic_usd = 0, node_usd = 0;
    b->has_node_price = cfit__price_of(c, "node.", p->gpu->name, &node_usd, b->missing, sizeof b->missing);
    b->has_network_price = cfit__price_fabric(c, p->fabric, b->sw, &b->tree, b);
    b->has_nic_price = cfit__price_of(c, "nic.", p->fabric->name, &nic_usd, NULL, 0);
    b->nics_usd = (double)b->nics * nic_usd;
    b->node_capex_usd = (double)b->nodes * node_usd;
    capex_storage(c, p, b);
    b->has_capex = b->has_network_price && b->has_node_price;
    b->capex_usd = b->node_capex_usd + b->fabric_usd + b->storage_usd;
    return CFIT_EOK;
}

int cfit_bom_compute(const cfit_catalog *c, const cfit_model *m, const cfit_plan *p, const cfit_bom_options *o,
                     cfit_bom *b, cfit_diag *d)
{
    cfit_bom_storage(c, m, p, o, b);
    return cfit_bom_capex(c, p, o, b, d);
}
