/* sizing_speed.c - how fast `clusterfit plan` sizes clusters (issue 3 target: sizing across all
 * catalog GPUs for llama3-405b, 15T tokens, 90 days finishes in < 5 s on one core).
 *
 * Measures, in one run and on one core (the library is single-threaded):
 *   1. the sizing: cfit_plan_search over every catalog GPU type with a 90-day deadline, with
 *      the cost of each GPU type's plan (cfit_cost_compute), repeated until >= 1 s of CPU time;
 *   2. the same with --budget sizing (no deadline, a $200M on-demand budget);
 *   3. the reference: the fixed-count search of one GPU type (16,384 h100-sxm), the unit the
 *      sizing repeats once per count it tries; the ratio sizing / reference says how many such
 *      searches a sizing costs.
 * Usage: bench_sizing_speed
 */
#include "clusterfit/cost.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Mean CPU seconds of one search (and its costing) for r, over >= 1 s. */
static double time_search(const cfit_plan_request *r, uint64_t *evaluated)
{
    cfit_diag d;
    int runs = 0;
    double t0 = cpu_s();
    do {
        cfit_plan_result res;
        if (cfit_plan_search(r, &res, &d)) {
            fprintf(stderr, "sizing_speed: %s\n", d.msg);
            exit(1);
        }
        for (size_t i = 0; i < res.ngpu; i++) {
            cfit_cost k;
            if (res.per_gpu[i].found)
                cfit_cost_compute(r->catalog, &res.per_gpu[i].best, &k);
        }
        *evaluated = res.evaluated;
        cfit_plan_result_fini(&res);
        runs++;
    } while (cpu_s() - t0 < 1.0);
    return (cpu_s() - t0) / runs;
}

int main(void)
{
    cfit_diag d;
    cfit_catalog *cat = cfit_catalog_new(&d);
    if (!cat) {
        fprintf(stderr, "sizing_speed: %s\n", d.msg);
        return 1;
    }
    size_t n = cfit_catalog_gpu_count(cat);
    const cfit_gpu **gpus = calloc(n, sizeof *gpus);
    if (!gpus)
        return 1;
    for (size_t i = 0; i < n; i++)
        gpus[i] = cfit_catalog_gpu_at(cat, i);
    cfit_plan_request r;
    cfit_plan_request_init(&r);
    r.catalog = cat;
    r.model = cfit_catalog_model(cat, "llama3-405b", NULL);
    r.tokens = 15e12;
    r.gpus = gpus;
    r.ngpus = n;
    r.days = 90;
    uint64_t ev_deadline, ev_budget, ev_ref;
    double t_deadline = time_search(&r, &ev_deadline);
    r.days = 0;
    r.budget_usd = 200e6;
    double t_budget = time_search(&r, &ev_budget);

    cfit_plan_request ref = r;
    const cfit_gpu *h100 = cfit_catalog_gpu(cat, "h100-sxm", NULL);
    ref.gpus = &h100;
    ref.ngpus = 1;
    ref.days = 90;
    ref.budget_usd = 0;
    ref.gpus_total = 16384;
    double t_ref = time_search(&ref, &ev_ref);

    printf("sizing llama3-405b, 15T tokens, %zu GPU types, one core:\n", n);
    printf("  %-44s %8.3f s  %10llu layouts  %6.1f x reference  (target < 5 s: %s)\n",
           "deadline 90 days (+ cost of each type)", t_deadline, (unsigned long long)ev_deadline,
           t_deadline / t_ref, t_deadline < 5.0 ? "met" : "MISSED");
    printf("  %-44s %8.3f s  %10llu layouts  %6.1f x reference\n", "budget $200M on-demand", t_budget,
           (unsigned long long)ev_budget, t_budget / t_ref);
    printf("  %-44s %8.3f s  %10llu layouts  (reference)\n", "fixed count: 16384 h100-sxm", t_ref,
           (unsigned long long)ev_ref);
    free(gpus);
    cfit_catalog_free(cat);
    return t_deadline < 5.0 ? 0 : 1;
}
