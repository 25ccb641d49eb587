/* bom.h - bill of materials of a plan and the network sizing that compares fabrics.
 *
 * The bill of materials counts nodes and NICs, builds a rail-optimised fat-tree (leaf,
 * spine and, when two tiers cannot reach the cluster, core switches) from a catalog
 * switch's radix, counts cables and optics, sizes storage for data loading and
 * checkpoints against the catalog's storage options, and prices it all from "prices"
 * entries (switch.NAME, optic.FABRIC, cable.FABRIC, nic.FABRIC, storage.NAME).  The
 * network comparison re-runs the layout search at the plan's GPU count for every
 * scale-out fabric, NIC count and oversubscription, ranks them by the total cost of the
 * run (the network's share plus the GPU time) and recommends the least, ties within 2%
 * to the cheaper network.  docs/sizing.md gives every formula.
 * Currency: US dollars; rates: bytes per second.
 */
#ifndef CLUSTERFIT_BOM_H
#define CLUSTERFIT_BOM_H

#include "clusterfit/cost.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cfit_bom_options {
    int tiers;                   /* 2 or 3 switch tiers; 2 is raised to 3 when it cannot reach */
    double oversub;              /* leaf downlinks per uplink, >= 1 (1 = non-blocking) */
    int nics_per_node;           /* 0 = the plan's node entry's */
    double bytes_per_token;      /* stored token id size; 0 = 2 (vocabulary <= 65536) or 4 */
    double data_headroom;        /* multiplies the data-loading read rate (default 4) */
    double checkpoint_window_s;  /* time to write one checkpoint (default 300) */
} cfit_bom_options;

/* Defaults: 2 tiers, non-blocking, the node's NICs, token size from the vocabulary,
 * headroom 4, a 5-minute checkpoint window. */
CFIT_API void cfit_bom_options_init(cfit_bom_options *o);

typedef struct cfit_fattree {
    long endpoints;          /* node ports: nodes x NICs per node */
    int radix;               /* switch ports at the fabric's rate */
    int down, up;            /* leaf ports to nodes and to the tier above */
    int tiers;               /* 1 (one switch holds every port), 2 or 3 */
    int tiers_raised;        /* 2 tiers were asked for but cannot reach the endpoints */
    long max_endpoints_2;    /* the most endpoints two tiers reach: radix x down */
    long leaves_per_rail;    /* ceil(nodes / down) */
    long leaves, spines, cores, pods;
    long switches;           /* leaves + spines + cores */
    long node_links;         /* node -> leaf cables (= endpoints) */
    long switch_links;       /* leaf -> spine (+ spine -> core) cables */
    long cables;             /* node_links + switch_links */
    long transceivers;       /* 2 per cable: every link is optical at both ends */
} cfit_fattree;

/* Size a rail-optimised fat-tree for nodes x nics ports on switches of radix ports.
 * Errors: CFIT_ERANGE when an argument is out of range or three tiers cannot reach
 * the endpoints (d says how many they reach). */
CFIT_API int cfit_fattree_size(long nodes, int nics, int radix, int tiers, double oversub, cfit_fattree *out,
                      cfit_diag *d);

#define CFIT_BOM_MAX_STORAGE 16

/* One storage option against the need. */
typedef struct cfit_storage_fit {
    const cfit_storage *s;
    long units;              /* per-node options: nodes; else enough for both rates (at least 1) */
    int meets;               /* per-node: the nodes' units deliver the data read; shared: the units
                                deliver the checkpoint write, the restart read and, without a data
                                tier, the data read */
    int has_price;
    double capex_usd;        /* units x storage.NAME, when has_price */
} cfit_storage_fit;

typedef struct cfit_bom {
    const cfit_fabric *fabric;
    const cfit_switch *sw;           /* NULL when the catalog has no switch for the fabric */
    long nodes;
    int nics_per_node;
    long nics;
    cfit_fattree tree;               /* when sw */
    /* storage need */
    double bytes_per_token;
    double data_read_bytes_per_s;    /* tokens/s x bytes per token x headroom */
    double checkpoint_bytes;         /* cfit_checkpoint_bytes (goodput.h): 14 B/param + per-rank state */
    double checkpoint_write_bytes_per_s;   /* checkpoint_bytes / window */
    double restart_read_bytes_per_s; /* checkpoint_bytes / window: reading it back at a restart */
    int data_tier;                   /* the per-node option that serves the data read (local NVMe; the
                                        dataset is staged there), -1 when none suffices: then the shared
                                        tier must serve it too */
    cfit_storage_fit storage[CFIT_BOM_MAX_STORAGE];
    int nstorage;
    int storage_choice;              /* cheapest priced shared option that meets the checkpoint write, the
                                        restart read and (without a data tier) the data read; -1 none */
    /* prices (has_network_price: switch, optic and cable prices all exist) */
    int has_network_price, has_nic_price, has_node_price;
    double switches_usd, optics_usd, cables_usd, nics_usd, node_capex_usd;
    double fabric_usd;               /* switches + optics + cables */
    char capex_storage[CFIT_NAME_MAX];   /* the storage tier the plan checkpoints to (p->goodput); "" none */
    long capex_storage_units;
    int has_storage_price;           /* capex_storage has a storage.NAME price */
    double storage_usd;              /* its units x storage.NAME (0 without a price) */
    double capex_usd;                /* nodes + fabric + storage (cfit_bom_capex), when has_capex */
    int has_capex;
    char missing[2 * CFIT_NAME_MAX]; /* the first missing price key; "" when none */
} cfit_bom;

/* The bill of materials of plan p for model m (tokens/s from the plan).  Errors:
 * CFIT_EUNKNOWN when no switch entry serves the plan's fabric, CFIT_ERANGE from the
 * fat-tree; d says which. */
CFIT_API int cfit_bom_compute(const cfit_catalog *c, const cfit_model *m, const cfit_plan *p, const cfit_bom_options *o,
                     cfit_bom *out, cfit_diag *d);

/* The capex of plan p as bought, the one computation that both the cost block (cost.h) and the
 * bill of materials use: nodes x node.GPU (the node's NICs are in its price) + the fat-tree for
 * options o (switches x switch.NAME + transceivers x optic.FABRIC + cables x cable.FABRIC) + the
 * storage tier the plan's goodput checkpoints to (p->goodput.storage, its units x storage.NAME).
 * Fills the fabric, NIC, tree, price and capex fields of out (not the storage need).  Errors:
 * CFIT_EUNKNOWN when no switch entry serves the plan's fabric, CFIT_ERANGE from the fat-tree. */
CFIT_API int cfit_bom_capex(const cfit_catalog *c, const cfit_plan *p, const cfit_bom_options *o, cfit_bom *out,
                   cfit_diag *d);

/* The storage part alone (need, options, choice; the other fields of out are zero): what the
 * goodput model (goodput.h) writes checkpoints to. */
CFIT_API void cfit_bom_storage(const cfit_catalog *c, const cfit_model *m, const cfit_plan *p, const cfit_bom_options *o,
                      cfit_bom *out);

/* ---- network sizing ---- */

#define CFIT_NET_TIE_FRACTION 0.02   /* totals within 2% of the least count as tied (issue 12) */

typedef struct cfit_net_option {
    const cfit_fabric *fabric;
    int nics_per_node;
    double oversub;
    int order;                       /* place in the enumeration (fabric, NICs, oversubscription) */
    int found;                       /* a fitting layout exists */
    cfit_plan plan;                  /* the fastest, on this option's network, of its own search's best
                                        and the layouts of the options of its fabric it dominates */
    int inherited;                   /* plan's layout is one found for an option with less bandwidth */
    double exposed_comm_s;           /* step - the comparison's communication-free step */
    double exposed_share;            /* exposed_comm_s / step_time_s */
    int has_capex;
    double network_capex_usd;        /* NICs + switches + optics + cables */
    long switches;
    int has_network_run;
    double network_run_usd;          /* capex x run years x network_share_per_year */
    int has_gpu_cost;
    double gpu_time_usd;             /* GPU-hours of the run x the basis rate */
    int has_total;
    double total_usd;                /* network_run_usd + gpu_time_usd */
} cfit_net_option;

typedef struct cfit_net_result {
    cfit_net_option *opts;           /* ranked: least total first (ties: less network capex, then
                                        order); options without a total last, in order */
    size_t n;
    double comm_free_step_s;         /* the least (step - comm_exposed_s) over the options' plans */
    int recommended;                 /* the least network capex among the options whose total is
                                        within CFIT_NET_TIE_FRACTION of opts[0]'s; -1 when none */
    int compared;                    /* the option the recommendation's reason is against: opts[1]
                                        when the recommendation is opts[0], else opts[0]; -1 none */
    int baseline;                    /* the node's own fabric and NICs, non-blocking; -1 if absent */
    int has_rate;
    double usd_per_gpu_hour;         /* the cost basis per GPU-hour, the network left out (own) */
    int has_share;
    double network_share_per_year;   /* 1 / amortisation.years + maintenance.fraction_per_year */
    char missing[2 * CFIT_NAME_MAX]; /* the first missing price key when no option has a total */
} cfit_net_result;

/* Compare scale-out fabrics of 100 Gb/s and up that have a switch entry, at 1/8, 1/4,
 * 1/2 and 1 NIC per GPU, non-blocking, 2:1 and 4:1, for the GPU type and count of best.
 * Each option re-runs the search (r's fixed dimensions kept) at that count, then also
 * evaluates the layouts of the options of its fabric with fewer NICs or more
 * oversubscription and keeps the fastest, so more bandwidth never shows a longer step.
 * Options are ranked by the total cost of the run on r's cost basis (docs/sizing.md).
 * Errors from the search; out is valid only on CFIT_EOK.  Free with cfit_net_result_fini. */
CFIT_API int cfit_network_compare(const cfit_plan_request *r, const cfit_plan *best, const cfit_bom_options *o,
                         cfit_net_result *out, cfit_diag *d);
CFIT_API void cfit_net_result_fini(cfit_net_result *res);

#ifdef __cplusplus
}
#endif
#endif
