/* cost.c - owning and renting costs, power, racks and cooling of a plan (docs/sizing.md).
 *
 * Every constant is a catalog price entry looked up by key; the code holds only the
 * arithmetic.  A missing entry makes the figures that need it unavailable and names the
 * key to supply.
 */
#include "clusterfit/cost.h"
#include "clusterfit/bom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOURS_PER_YEAR 8766.0   /* 365.25 days */
#define MONTHS_PER_YEAR 12.0

static const char *const basis_names[CFIT_BASIS_COUNT] = {"rent", "reserved", "spot", "own"};
static const char *const rent_prefix[CFIT_BASIS_OWN] = {"cloud.on_demand.", "cloud.reserved.", "cloud.spot."};

const char *cfit_cost_basis_name(cfit_cost_basis b)
{
    return b >= 0 && b < CFIT_BASIS_COUNT ? basis_names[b] : "?";
}

/* The price named prefix+name; records it as used.  NULL when absent. */
static const cfit_price *price(const cfit_catalog *c, cfit_cost *k, const char *prefix, const char *name)
{
    char key[2 * CFIT_NAME_MAX];
    snprintf(key, sizeof key, "%s%s", prefix, name);
    const cfit_price *p = cfit_catalog_price(c, key, NULL);
    if (!p)
        return NULL;
    for (int i = 0; i < k->nused; i++)
        if (k->used[i] == p)
            return p;
    if (k->nused < CFIT_COST_MAX_USED)
        k->used[k->nused++] = p;
    return p;
}

/* Look up several keys at once; on the first missing one, note it in missing and return 0. */
typedef struct need {
    const char *prefix, *name;
    double *out;
} need;

static int lookup_all(const cfit_catalog *c, cfit_cost *k, const need *nd, size_t n, char *missing, size_t len)
{
    int ok = 1;
    for (size_t i = 0; i < n; i++) {
        const cfit_price *p = price(c, k, nd[i].prefix, nd[i].name);
        if (p) {
            *nd[i].out = p->value;
        } else if (ok) {
            snprintf(missing, len, "%s%s", nd[i].prefix, nd[i].name);
            ok = 0;
        }
    }
    return ok;
}

static void cost_power(const cfit_catalog *c, const cfit_plan *p, cfit_cost *k)
{
    double factor = 0, pue = 0, rack_kw = 0, air = 0, rear = 0;
    const need nd[] = {{"power.node_over_gpu_tdp", "", &factor}, {"facility.pue", "", &pue},
                       {"facility.kw_per_rack", "", &rack_kw}, {"cooling.air_max_kw_per_rack", "", &air},
                       {"cooling.rear_door_max_kw_per_rack", "", &rear}};
    if (!lookup_all(c, k, nd, sizeof nd / sizeof nd[0], k->missing_own, sizeof k->missing_own))
        return;   /* owning needs these too, so the missing key is owning's */
    k->has_power = 1;
    k->node_power_kw = p->node->gpus_per_node * p->gpu->tdp_w * factor / 1000.0;
    k->power_kw_it = k->node_power_kw * (double)p->nodes;
    k->power_kw_facility = k->power_kw_it * pue;
    int per_rack = k->node_power_kw > 0 ? (int)floor(rack_kw / k->node_power_kw) : 1;
    k->nodes_per_rack = per_rack < 1 ? 1 : per_rack;
    k->racks = (p->nodes + k->nodes_per_rack - 1) / k->nodes_per_rack;
    k->rack_kw = k->nodes_per_rack * k->node_power_kw;
    k->cooling = k->rack_kw <= air ? "air" : k->rack_kw <= rear ? "rear-door" : "direct-liquid";
}

/* The capex from the bill of materials' one computation, its prices recorded as used. */
static int cost_capex(const cfit_catalog *c, const cfit_plan *p, const cfit_bom_options *o, cfit_cost *k,
                      char *missing, size_t len)
{
    cfit_bom b;
    cfit_diag d;
    memset(&b, 0, sizeof b);
    cfit_diag_clear(&d);
    if (cfit_bom_capex(c, p, o, &b, &d)) {
        snprintf(missing, len, "switches entry for %s", p->fabric->name);
        return 0;
    }
    price(c, k, "node.", p->gpu->name);
    price(c, k, "switch.", b.sw->name);
    price(c, k, "optic.", p->fabric->name);
    price(c, k, "cable.", p->fabric->name);
    if (b.capex_storage[0])
        price(c, k, "storage.", b.capex_storage);
    if (!b.has_capex) {
        snprintf(missing, len, "%s", b.missing);
        return 0;
    }
    k->ports = (double)b.nics;
    k->switches = b.tree.switches;
    k->transceivers = b.tree.transceivers;
    k->cables = b.tree.cables;
    k->tiers = b.tree.tiers;
    k->switches_usd = b.switches_usd;
    k->optics_usd = b.optics_usd;
    k->cables_usd = b.cables_usd;
    snprintf(k->storage, sizeof k->storage, "%s", b.has_storage_price ? b.capex_storage : "");
    k->storage_units = b.has_storage_price ? b.capex_storage_units : 0;
    k->node_capex_usd = b.node_capex_usd;
    k->network_capex_usd = b.fabric_usd;
    k->storage_capex_usd = b.storage_usd;
    k->capex_usd = b.capex_usd;
    return 1;
}

static void cost_own(const cfit_catalog *c, const cfit_plan *p, const cfit_bom_options *o, cfit_cost *k)
{
    double kwh = 0, colo = 0, maint = 0, life = 0;
    const need nd[] = {{"energy.usd_per_kwh", "", &kwh}, {"colo.usd_per_kw_month", "", &colo},
                       {"maintenance.fraction_per_year", "", &maint}, {"amortisation.years", "", &life}};
    char missing[sizeof k->missing_own] = "", rest[sizeof k->missing_own] = "";
    int ok = cost_capex(c, p, o, k, missing, sizeof missing);
    ok &= lookup_all(c, k, nd, sizeof nd / sizeof nd[0], rest, sizeof rest);
    if (!ok && !k->missing_own[0])
        memcpy(k->missing_own, missing[0] ? missing : rest, sizeof missing);
    if (!ok || !k->has_power || life <= 0)
        return;
    k->has_own = 1;
    const cfit_price *busy = price(c, k, "owned.utilisation", "");
    k->utilisation = busy ? busy->value : 1.0;
    k->own_fixed_usd_per_year = k->capex_usd / life + k->capex_usd * maint +
                                k->power_kw_it * colo * MONTHS_PER_YEAR;
    k->own_energy_usd_per_year = k->power_kw_facility * HOURS_PER_YEAR * kwh;
    double years = p->time_to_train_s / 3600.0 / HOURS_PER_YEAR, held = years / k->utilisation;
    k->amortised_usd = k->capex_usd / life * held;   /* the idle share of the life is the run's too */
    k->energy_usd = k->own_energy_usd_per_year * years;
    k->maintenance_usd = k->capex_usd * maint * held;
    k->colo_usd = k->power_kw_it * colo * MONTHS_PER_YEAR * held;
    k->own_run_usd = k->amortised_usd + k->energy_usd + k->maintenance_usd + k->colo_usd;
}

static void cost_rent(const cfit_catalog *c, const cfit_plan *p, cfit_cost *k)
{
    k->gpu_hours = p->time_to_train_s / 3600.0 * (double)p->gpus;
    for (int b = 0; b < CFIT_BASIS_OWN; b++) {
        const cfit_price *pr = price(c, k, rent_prefix[b], p->gpu->name);
        if (!pr) {
            snprintf(k->missing_rent[b], sizeof k->missing_rent[b], "%s%s", rent_prefix[b], p->gpu->name);
            continue;
        }
        k->has_rent[b] = 1;
        k->rent_usd[b] = k->gpu_hours * pr->value;
    }
}

/* Per rent basis: the utilisation at which owning a year (fixed + u x energy) costs renting
 * u of the year; -1 when rent is below the energy alone. */
static void cost_break_even(const cfit_catalog *c, const cfit_plan *p, cfit_cost *k)
{
    if (!k->has_own)
        return;
    for (int b = 0; b < CFIT_BASIS_OWN; b++) {
        char key[2 * CFIT_NAME_MAX];
        snprintf(key, sizeof key, "%s%s", rent_prefix[b], p->gpu->name);
        const cfit_price *pr = cfit_catalog_price(c, key, NULL);
        if (!pr)
            continue;
        double margin = (double)p->gpus * HOURS_PER_YEAR * pr->value - k->own_energy_usd_per_year;
        k->has_break_even_basis[b] = 1;
        k->break_even_basis[b] = margin > 0 ? k->own_fixed_usd_per_year / margin : -1.0;
    }
    k->has_break_even = k->has_break_even_basis[CFIT_BASIS_RENT];
    k->break_even_utilisation = k->break_even_basis[CFIT_BASIS_RENT];
}

void cfit_cost_compute_with(const cfit_catalog *c, const cfit_plan *p, const cfit_bom_options *o, cfit_cost *out)
{
    cfit_bom_options dflt;
    cfit_bom_options_init(&dflt);
    memset(out, 0, sizeof *out);
    out->cooling = "";
    cost_power(c, p, out);
    cost_own(c, p, o ? o : &dflt, out);
    cost_rent(c, p, out);
    cost_break_even(c, p, out);
}

void cfit_cost_compute(const cfit_catalog *c, const cfit_plan *p, cfit_cost *out)
{
    cfit_cost_compute_with(c, p, NULL, out);
}

void cfit_cost_compute_for(const cfit_plan_request *r, const cfit_plan *p, cfit_cost *out)
{
    cfit_bom_options o;
    cfit_bom_options_init(&o);
    o.oversub = r->oversub >= 1.0 ? r->oversub : 1.0;
    o.nics_per_node = r->nics_per_node;
    cfit_cost_compute_with(r->catalog, p, &o, out);
}

int cfit_cost_of(const cfit_cost *k, cfit_cost_basis b, double *usd)
{
    if (b == CFIT_BASIS_OWN) {
        *usd = k->own_run_usd;
        return k->has_own;
    }
    if (b < 0 || b >= CFIT_BASIS_OWN || !k->has_rent[b])
        return 0;
    *usd = k->rent_usd[b];
    return 1;
}

const char *cfit_cost_missing(const cfit_cost *k, cfit_cost_basis b, char *buf, size_t n)
{
    buf[0] = '\0';
    if (b == CFIT_BASIS_OWN && !k->has_own)
        snprintf(buf, n, "%s", k->missing_own);
    else if (b >= 0 && b < CFIT_BASIS_OWN && !k->has_rent[b])
        snprintf(buf, n, "%s", k->missing_rent[b]);
    return buf;
}

/* ---- key checking ---- */

static const char *const global_keys[] = {
    "owned.utilisation", "energy.usd_per_kwh", "facility.pue", "facility.kw_per_rack", "colo.usd_per_kw_month",
    "maintenance.fraction_per_year", "amortisation.years", "power.node_over_gpu_tdp",
    "cooling.air_max_kw_per_rack", "cooling.rear_door_max_kw_per_rack"};

/* Every key the model reads: the globals, four per GPU, and
 * any catalog entry.  names must hold keys_max pointers into storage. */
static size_t all_keys(const cfit_catalog *c, char (*store)[2 * CFIT_NAME_MAX], const char **names, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof global_keys / sizeof global_keys[0] && n < max; i++)
        names[n++] = global_keys[i];
    for (size_t i = 0; i < cfit_catalog_gpu_count(c); i++) {
        const char *g = cfit_catalog_gpu_at(c, i)->name;
        const char *pre[] = {"node.", rent_prefix[0], rent_prefix[1], rent_prefix[2]};
        for (size_t j = 0; j < 4 && n < max; j++, n++) {
            snprintf(store[n], sizeof store[n], "%s%s", pre[j], g);
            names[n] = store[n];
        }
    }
    for (size_t i = 0; i < cfit_catalog_price_count(c) && n < max; i++)
        names[n++] = cfit_catalog_price_at(c, i)->name;
    return n;
}

int cfit_cost_key_check(const cfit_catalog *c, const char *key, cfit_diag *d)
{
    size_t max = 16 + 4 * cfit_catalog_gpu_count(c) + cfit_catalog_fabric_count(c) + cfit_catalog_price_count(c);
    char (*store)[2 * CFIT_NAME_MAX] = calloc(max, sizeof *store);
    const char **names = calloc(max, sizeof *names);
    if (!store || !names) {
        free(store);
        free(names);
        return cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
    }
    size_t n = all_keys(c, store, names, max);
    int rc = CFIT_EOK;
    size_t i = 0;
    while (i < n && strcmp(names[i], key) != 0)
        i++;
    if (i == n) {
        const char *near = cfit_suggest(key, names, n);
        rc = cfit_diag_set(d, CFIT_EUNKNOWN, NULL, 0, 0, "unknown price key '%s'%s%s%s (see 'clusterfit catalog list prices')",
                           key, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
    }
    free(store);
    free(names);
    return rc;
}

int cfit_cost_price_set(cfit_catalog *c, const char *key, double value, cfit_diag *d)
{
    static const struct { const char *prefix; cfit_price_unit unit; } units[] = {
        {"node.", CFIT_UNIT_USD_PER_NODE}, {"cloud.", CFIT_UNIT_USD_PER_GPU_HOUR}, {"owned.", CFIT_UNIT_RATIO}};
    int rc = cfit_cost_key_check(c, key, d);
    if (rc)
        return rc;
    cfit_price p;
    memset(&p, 0, sizeof p);
    const cfit_price *old = cfit_catalog_price(c, key, NULL);
    if (old)
        p.unit = old->unit;
    for (size_t i = 0; !old && i < sizeof units / sizeof units[0]; i++)
        if (strncmp(key, units[i].prefix, strlen(units[i].prefix)) == 0)
            p.unit = units[i].unit;
    char why[160];
    if (!(value <= 1e12))
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "price '%s' must be at most 1e12, got %g", key, value);
    if (!cfit_price_value_ok(key, p.unit, value, why, sizeof why))
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "price '%s' %s", key, why);
    snprintf(p.name, sizeof p.name, "%s", key);
    p.value = value;
    snprintf(p.source, sizeof p.source, "--price");
    if (cfit_catalog_price_put(c, &p))
        return cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
    return CFIT_EOK;
}
