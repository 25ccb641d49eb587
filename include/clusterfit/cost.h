/* cost.h - what a plan costs to own or rent, and the power and cooling it needs.
 *
 * Every figure comes from a catalog "prices" entry (data/prices.json, each with a value, a
 * unit, a YYYY-MM date and a source) or from the plan; docs/sizing.md gives every formula.
 * Keys: node.GPU (capex of one node of the GPU's default node type), cloud.on_demand.GPU,
 * cloud.reserved.GPU, cloud.spot.GPU (per GPU-hour), the fabric and storage prices of the bill of
 * materials (switch.NAME, optic.FABRIC, cable.FABRIC, storage.NAME: the capex is bom.h's
 * cfit_bom_capex, one computation for both), and the facility constants energy.usd_per_kwh, facility.pue, facility.kw_per_rack,
 * colo.usd_per_kw_month, maintenance.fraction_per_year, amortisation.years,
 * power.node_over_gpu_tdp, cooling.air_max_kw_per_rack, cooling.rear_door_max_kw_per_rack.
 * A price that is absent makes the figures that need it unavailable (has_* = 0), and
 * missing_* names the first key to supply.  Currency: US dollars; power: kW.
 */
#ifndef CLUSTERFIT_COST_H
#define CLUSTERFIT_COST_H

#include "clusterfit/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The cost a sizing ranks by and a --budget bounds. */
typedef enum cfit_cost_basis {
    CFIT_BASIS_RENT = 0,     /* cloud on-demand */
    CFIT_BASIS_RESERVED,     /* cloud reserved / capacity block */
    CFIT_BASIS_SPOT,         /* cloud spot */
    CFIT_BASIS_OWN,          /* owning: amortised capex + energy + maintenance + colocation for the run */
    CFIT_BASIS_COUNT
} cfit_cost_basis;

/* "rent", "reserved", "spot", "own". */
CFIT_API const char *cfit_cost_basis_name(cfit_cost_basis b);

#define CFIT_COST_MAX_USED 24

struct cfit_bom_options;
struct cfit_plan_request;

typedef struct cfit_cost {
    /* power and cooling (has_power) */
    int has_power;
    double node_power_kw;            /* one node at load: GPUs per node x TDP x power.node_over_gpu_tdp */
    double power_kw_it;              /* all nodes */
    double power_kw_facility;        /* x facility.pue */
    int nodes_per_rack;              /* floor(facility.kw_per_rack / node_power_kw), at least 1 */
    long racks;
    double rack_kw;                  /* density of a full rack: nodes_per_rack x node_power_kw */
    const char *cooling;             /* "air", "rear-door" or "direct-liquid" */
    /* owning (has_own) */
    int has_own;
    double ports;                    /* scale-out ports (NICs): nodes x NICs per node, in the node price */
    long switches, transceivers, cables;   /* the fat-tree of the bill of materials */
    int tiers;                       /* its switch tiers */
    double switches_usd, optics_usd, cables_usd;
    char storage[CFIT_NAME_MAX];     /* the storage tier bought (the one the plan checkpoints to) */
    long storage_units;
    double node_capex_usd, network_capex_usd, storage_capex_usd, capex_usd;   /* network = the fabric:
                                        switches + optics + cables; capex = nodes + network + storage,
                                        cfit_bom_capex's figure (== the bill of materials' capex) */
    double amortised_usd, energy_usd, maintenance_usd, colo_usd;   /* over the training run */
    double own_run_usd;              /* their sum */
    double own_fixed_usd_per_year;   /* capex / life + maintenance + colocation */
    double own_energy_usd_per_year;  /* energy when busy all year */
    /* renting: GPU-hours x price per GPU-hour (has_rent[basis], basis < CFIT_BASIS_OWN) */
    double gpu_hours;
    int has_rent[CFIT_BASIS_OWN];
    double rent_usd[CFIT_BASIS_OWN];
    /* the utilisation u at which owning (fixed + u x energy per year) costs what renting on
     * demand does (u x GPUs x 8766 h x price); < 0 when owning never pays (has_break_even) */
    int has_break_even;
    double break_even_utilisation;
    /* the same against each rent basis (on-demand, reserved, spot) */
    int has_break_even_basis[CFIT_BASIS_OWN];
    double break_even_basis[CFIT_BASIS_OWN];
    /* the owned cluster's expected busy fraction (price "owned.utilisation", --utilisation; 1 when
     * absent): the run carries the idle share, amortisation, maintenance and colocation / u */
    double utilisation;
    /* the first missing key for owning and for each rent basis; "" when none */
    char missing_own[2 * CFIT_NAME_MAX];
    char missing_rent[CFIT_BASIS_OWN][2 * CFIT_NAME_MAX];
    /* every price entry the figures used, in order of first use */
    const cfit_price *used[CFIT_COST_MAX_USED];
    int nused;
} cfit_cost;

/* Cost a plan with the catalog's prices (time_to_train_s must be > 0 for run costs; power
 * and capex need only the plan).  Never fails: missing prices leave figures unavailable. */
CFIT_API void cfit_cost_compute(const cfit_catalog *c, const cfit_plan *p, cfit_cost *out);
/* The same with the fabric built for bill-of-materials options o (tiers, oversubscription, NICs;
 * NULL = cfit_bom_options_init's), as `plan --bom` builds it, so the two capex figures agree. */
CFIT_API void cfit_cost_compute_with(const cfit_catalog *c, const cfit_plan *p, const struct cfit_bom_options *o,
                            cfit_cost *out);
/* The same with the options a request implies (its oversubscription and NICs, two tiers): what
 * sizing and --budget rank by. */
CFIT_API void cfit_cost_compute_for(const struct cfit_plan_request *r, const cfit_plan *p, cfit_cost *out);

/* The cost of the run on a basis; returns 1 and sets *usd when available, else 0. */
CFIT_API int cfit_cost_of(const cfit_cost *k, cfit_cost_basis b, double *usd);

/* The key to supply for a basis ("cloud.on_demand.b200", or the first missing owning
 * price); "" when nothing is missing. */
CFIT_API const char *cfit_cost_missing(const cfit_cost *k, cfit_cost_basis b, char *buf, size_t n);

/* Check that key is a price key the cost model reads (a catalog entry, or one of the
 * patterns above with a catalog GPU or scale-out fabric).  Returns CFIT_EOK, or
 * CFIT_EUNKNOWN with d->msg naming the closest key. */
CFIT_API int cfit_cost_key_check(const cfit_catalog *c, const char *key, cfit_diag *d);

/* Override or add one price (--price KEY=VALUE): the key must pass cfit_cost_key_check and
 * value must pass cfit_price_value_ok (catalog.h: > 0; PUE >= 1).  An existing entry keeps its unit; a new one gets the unit
 * its key pattern implies.  The entry's date becomes "" and its source "--price".  Errors:
 * CFIT_EUNKNOWN (d names the closest key), CFIT_ERANGE, CFIT_ENOMEM. */
CFIT_API int cfit_cost_price_set(cfit_catalog *c, const char *key, double value, cfit_diag *d);

#ifdef __cplusplus
}
#endif
#endif
