/* netsize.c - network sizing: fabric x NICs x oversubscription ranked by the total cost of the
 * run (docs/sizing.md "Network sizing").
 *
 * Every option re-runs the layout search at the best plan's GPU type and count on its own
 * network.  A layout that runs on one network runs on any with more bandwidth of the same
 * fabric (memory does not depend on the network), so each option is then held to the fastest
 * of its own best layout and the layouts of the options it dominates (same fabric, no more
 * NICs, no less oversubscription): more bandwidth can only shorten the step.  The code only
 * reads plan results (step time, exposed communication, time to train) and catalog prices,
 * so it stays right whatever the performance model computes.
 */
#include "bom_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_COMPARE_BW 12.5e9                 /* the comparison covers 100 Gb/s ports and up */
#define SECONDS_PER_YEAR (365.25 * 86400.0)   /* Julian year, as cost.c's 8766 hours */

/* The options to compare, appended to res->opts (allocated for the most there can be), in an
 * order where an option comes after every option of its fabric that it dominates. */
static int list_options(const cfit_plan_request *r, const cfit_plan *best, cfit_net_result *res)
{
    static const double oversubs[] = {4.0, 2.0, 1.0};
    static const int per_gpu_div[] = {8, 4, 2, 1};   /* NICs per node = GPUs per node / this */
    enum { NOVERSUB = sizeof oversubs / sizeof oversubs[0], NDIV = sizeof per_gpu_div / sizeof per_gpu_div[0] };
    size_t nf = cfit_catalog_fabric_count(r->catalog);
    res->opts = calloc(nf * NDIV * NOVERSUB + 1, sizeof *res->opts);
    if (!res->opts)
        return CFIT_ENOMEM;
    int gpn = best->node->gpus_per_node;
    for (size_t i = 0; i < nf; i++) {
        const cfit_fabric *f = cfit_catalog_fabric_at(r->catalog, i);
        if (f->kind != CFIT_FABRIC_SCALEOUT || f->bw_bytes_per_s < MIN_COMPARE_BW ||
            !cfit_catalog_switch_for(r->catalog, f->name))
            continue;
        int last = 0;
        for (size_t k = 0; k < NDIV; k++) {
            int nics = gpn / per_gpu_div[k] < 1 ? 1 : gpn / per_gpu_div[k];
            if (nics == last)
                continue;
            last = nics;
            for (size_t j = 0; j < NOVERSUB; j++)
                res->opts[res->n++] = (cfit_net_option){
                    .fabric = f, .nics_per_node = nics, .oversub = oversubs[j], .order = (int)res->n};
        }
    }
    return CFIT_EOK;
}

/* r at best's GPU type and count on x's network. */
static cfit_plan_request option_request(const cfit_plan_request *r, const cfit_plan *best, const cfit_gpu *const *g,
                                        const cfit_net_option *x)
{
    cfit_plan_request rr = *r;
    rr.gpus = g;
    rr.ngpus = 1;
    rr.gpus_total = best->gpus;
    rr.budget_usd = 0;
    rr.top = 1;
    rr.progress = NULL;
    rr.fabric = x->fabric;
    rr.nics_per_node = x->nics_per_node;
    rr.oversub = x->oversub;
    return rr;
}

/* Network capex of x on fat-tree t: NICs + switches + optics + cables. */
static void price_option(const cfit_catalog *c, const cfit_plan *best, const cfit_switch *sw, const cfit_fattree *t,
                         cfit_net_option *x, cfit_net_result *res)
{
    cfit_bom b;
    memset(&b, 0, sizeof b);
    double nic_usd = 0;
    int ok = cfit__price_fabric(c, x->fabric, sw, t, &b);
    ok &= cfit__price_of(c, "nic.", x->fabric->name, &nic_usd, b.missing, sizeof b.missing);
    if (!ok && !res->missing[0])
        snprintf(res->missing, sizeof res->missing, "%s", b.missing);
    x->switches = t->switches;
    x->has_capex = ok;
    x->network_capex_usd = b.fabric_usd + (double)best->nodes * x->nics_per_node * nic_usd;
}

/* Search x's network at best's count and price it.  *drop is set for an oversubscribed option
 * whose ports all fit on one switch (no spine to oversubscribe). */
static int search_option(const cfit_plan_request *r, const cfit_plan *best, const cfit_bom_options *o,
                         cfit_net_option *x, cfit_net_result *res, int *drop, cfit_diag *d)
{
    const cfit_switch *sw = cfit_catalog_switch_for(r->catalog, x->fabric->name);
    cfit_fattree t;
    int sized = cfit_fattree_size(best->nodes, x->nics_per_node, sw->ports, o->tiers, x->oversub, &t, NULL) == CFIT_EOK;
    *drop = sized && t.tiers == 1 && x->oversub > 1.0;
    if (*drop)
        return CFIT_EOK;
    const cfit_gpu *g = best->gpu;
    cfit_plan_request rr = option_request(r, best, &g, x);
    cfit_plan_result pr;
    int rc = cfit_plan_search(&rr, &pr, d);
    if (rc)
        return rc;
    x->found = pr.nplans > 0;
    if (x->found)
        x->plan = pr.plans[0];
    cfit_plan_result_fini(&pr);
    if (sized)   /* beyond three tiers: no capex */
        price_option(r->catalog, best, sw, &t, x, res);
    return CFIT_EOK;
}

/* b has at least a's bandwidth: the same fabric, no fewer NICs, no more oversubscription. */
static int dominates(const cfit_net_option *b, const cfit_net_option *a)
{
    return a != b && a->fabric == b->fabric && b->nics_per_node >= a->nics_per_node && b->oversub <= a->oversub;
}

/* Hold opts[i] to the fastest of its plan and, on its network, the plans of the earlier
 * options it dominates (already held, so the chain is transitive). */
static int hold_to_best(const cfit_plan_request *r, const cfit_plan *best, cfit_net_result *res, size_t i,
                        cfit_diag *d)
{
    cfit_net_option *x = &res->opts[i];
    const cfit_gpu *g = best->gpu;
    cfit_plan_request rr = option_request(r, best, &g, x);
    for (size_t j = 0; j < i; j++) {
        const cfit_net_option *a = &res->opts[j];
        if (!a->found || !dominates(x, a) || (x->found && !memcmp(&a->plan.layout, &x->plan.layout, sizeof x->plan.layout)))
            continue;
        cfit_plan p;
        int rc = cfit_plan_evaluate(&rr, g, &a->plan.layout, &p, d);
        if (rc)
            return rc;
        if (p.fits && (!x->found || p.step_time_s < x->plan.step_time_s)) {
            x->plan = p;
            x->found = 1;
            x->inherited = 1;
        }
    }
    return CFIT_EOK;
}

/* Exposed communication against one communication-free step for the whole comparison: the
 * least step - comm_exposed_s of any option's plan.  One reference for every row, so the
 * share orders as the step does. */
static void set_exposed(cfit_net_result *res)
{
    int have = 0;
    for (size_t i = 0; i < res->n; i++) {
        const cfit_plan *p = &res->opts[i].plan;
        double free_s = p->step_time_s - p->comm_exposed_s;
        if (res->opts[i].found && (!have || free_s < res->comm_free_step_s))
            res->comm_free_step_s = free_s;
        have |= res->opts[i].found;
    }
    for (size_t i = 0; i < res->n; i++) {
        cfit_net_option *x = &res->opts[i];
        if (!x->found)
            continue;
        x->exposed_comm_s = x->plan.step_time_s - res->comm_free_step_s;
        x->exposed_share = x->plan.step_time_s > 0 ? x->exposed_comm_s / x->plan.step_time_s : 0;
    }
}

/* The basis rate per GPU-hour: the cloud price when renting; when owning, the run's owning
 * cost without its network share (the network is priced per option). */
static void basis_rate(const cfit_plan_request *r, const cfit_plan *best, const cfit_bom_options *o,
                       cfit_net_result *res)
{
    cfit_cost k;
    double usd = 0;
    cfit_cost_compute_with(r->catalog, best, o, &k);
    res->has_rate = cfit_cost_of(&k, (cfit_cost_basis)r->cost_basis, &usd) && k.gpu_hours > 0;
    if (!res->has_rate) {
        cfit_cost_missing(&k, (cfit_cost_basis)r->cost_basis, res->missing, sizeof res->missing);
        return;
    }
    if (r->cost_basis == CFIT_BASIS_OWN && k.capex_usd > 0)
        usd -= (k.amortised_usd + k.maintenance_usd) * k.network_capex_usd / k.capex_usd;
    res->usd_per_gpu_hour = usd / k.gpu_hours;
}

/* The network's share per year of its capex: amortisation plus maintenance. */
static void network_share(const cfit_catalog *c, cfit_net_result *res)
{
    double life = 0, maint = 0;
    int ok = cfit__price_of(c, "amortisation.years", "", &life, res->missing, sizeof res->missing);
    ok &= cfit__price_of(c, "maintenance.fraction_per_year", "", &maint, res->missing, sizeof res->missing);
    res->has_share = ok && life > 0;
    res->network_share_per_year = res->has_share ? 1.0 / life + maint : 0;
}

/* GPU time, the network's share over the run and their sum, per option. */
static void value_options(const cfit_plan_request *r, const cfit_plan *best, const cfit_bom_options *o,
                          cfit_net_result *res)
{
    basis_rate(r, best, o, res);
    network_share(r->catalog, res);
    for (size_t i = 0; i < res->n; i++) {
        cfit_net_option *x = &res->opts[i];
        double run_s = x->plan.time_to_train_s;
        x->has_gpu_cost = res->has_rate && x->found && run_s > 0;
        x->gpu_time_usd = run_s / 3600.0 * (double)x->plan.gpus * res->usd_per_gpu_hour;
        x->has_network_run = res->has_share && x->has_capex && x->found && run_s > 0;
        x->network_run_usd = x->network_capex_usd * run_s / SECONDS_PER_YEAR * res->network_share_per_year;
        x->has_total = x->has_gpu_cost && x->has_network_run;
        x->total_usd = x->has_total ? x->gpu_time_usd + x->network_run_usd : 0;
    }
}

/* Least total first (ties: the cheaper network), options without a total last; then order. */
static int by_total(const void *pa, const void *pb)
{
    const cfit_net_option *a = pa, *b = pb;
    if (a->has_total != b->has_total)
        return a->has_total ? -1 : 1;
    if (a->has_total && a->total_usd != b->total_usd)
        return a->total_usd < b->total_usd ? -1 : 1;
    if (a->has_total && a->network_capex_usd != b->network_capex_usd)
        return a->network_capex_usd < b->network_capex_usd ? -1 : 1;
    return (a->order > b->order) - (a->order < b->order);
}

/* Rank, find the baseline, and recommend the cheapest network among the tied least totals. */
static void rank(const cfit_plan *best, cfit_net_result *res)
{
    qsort(res->opts, res->n, sizeof *res->opts, by_total);
    res->baseline = res->recommended = res->compared = -1;
    for (size_t i = 0; i < res->n; i++) {
        const cfit_net_option *x = &res->opts[i];
        if (x->fabric == best->fabric && x->nics_per_node == best->node->nics_per_node && x->oversub == 1.0)
            res->baseline = (int)i;
    }
    if (res->n == 0 || !res->opts[0].has_total)
        return;
    double band = res->opts[0].total_usd * (1.0 + CFIT_NET_TIE_FRACTION);
    res->recommended = 0;
    for (size_t i = 1; i < res->n && res->opts[i].has_total && res->opts[i].total_usd <= band; i++)
        if (res->opts[i].network_capex_usd < res->opts[res->recommended].network_capex_usd)
            res->recommended = (int)i;
    if (res->recommended > 0)
        res->compared = 0;
    else if (res->n > 1 && res->opts[1].has_total)
        res->compared = 1;
}

/* Search every option, then hold each to the best of what it dominates. */
static int evaluate_all(const cfit_plan_request *r, const cfit_plan *best, const cfit_bom_options *o,
                        cfit_net_result *res, cfit_diag *d)
{
    size_t kept = 0;
    for (size_t i = 0; i < res->n; i++) {
        int drop = 0;
        cfit_net_option x = res->opts[i];
        int rc = search_option(r, best, o, &x, res, &drop, d);
        if (rc)
            return rc;
        if (!drop)
            res->opts[kept++] = x;
    }
    res->n = kept;
    for (size_t i = 0; i < res->n; i++) {
        int rc = hold_to_best(r, best, res, i, d);
        if (rc)
            return rc;
    }
    return CFIT_EOK;
}

int cfit_network_compare(const cfit_plan_request *r, const cfit_plan *best, const cfit_bom_options *o,
                         cfit_net_result *res, cfit_diag *d)
{
    memset(res, 0, sizeof *res);
    res->baseline = res->recommended = res->compared = -1;
    if (list_options(r, best, res))
        return cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
    int rc = evaluate_all(r, best, o, res, d);
    if (rc) {
        cfit_net_result_fini(res);
        return rc;
    }
    set_exposed(res);
    value_options(r, best, o, res);
    rank(best, res);
    if (res->recommended >= 0)
        res->missing[0] = '\0';
    return CFIT_EOK;
}

void cfit_net_result_fini(cfit_net_result *res)
{
    free(res->opts);
    res->opts = NULL;
    res->n = 0;
}
