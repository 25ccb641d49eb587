/* confidence.c - the plan's model check: clusterfit's error on the nearest published runs
 * (include/clusterfit/confidence.h, docs/plan.md "Model check"). */
#include "clusterfit/confidence.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct near_run {
    const cfit_fidelity *f;
    double d_gpus, d_params;        /* |log ratio| of GPU count and of parameters to the plan's */
} near_run;

static int by_distance(const void *a, const void *b)
{
    const near_run *x = a, *y = b;
    if (x->d_gpus != y->d_gpus)
        return x->d_gpus < y->d_gpus ? -1 : 1;
    if (x->d_params != y->d_params)
        return x->d_params < y->d_params ? -1 : 1;
    return strcmp(x->f->name, y->f->name);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The runs (MoE ones when moe) on a GPU of architecture arch into v (n entries at most); how many. */
static size_t runs_of_arch(const cfit_catalog *c, cfit_gpu_arch arch, int moe, long gpus, double params,
                           near_run *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < cfit_catalog_fidelity_count(c) && k < n; i++) {
        const cfit_fidelity *f = cfit_catalog_fidelity_at(c, i);
        const cfit_gpu *g = cfit_catalog_gpu(c, f->gpu, NULL);
        if (!g || g->arch != arch || !f->moe != !moe)
            continue;
        v[k].f = f;
        v[k].d_gpus = fabs(log((double)f->gpus / (double)gpus));
        v[k].d_params = params > 0 ? fabs(log(f->params / params)) : 0;
        k++;
    }
    return k;
}

static void summarise(const near_run *v, size_t n, cfit_confidence *out)
{
    double err[CFIT_CONFIDENCE_RUNS];
    out->gpus_min = out->gpus_max = v[0].f->gpus;
    for (size_t i = 0; i < n; i++) {
        err[i] = fabs(v[i].f->error);
        out->ids[i] = v[i].f->name;
        out->gpus_min = v[i].f->gpus < out->gpus_min ? v[i].f->gpus : out->gpus_min;
        out->gpus_max = v[i].f->gpus > out->gpus_max ? v[i].f->gpus : out->gpus_max;
    }
    qsort(err, n, sizeof err[0], by_value);
    out->runs = (int)n;
    out->median_abs_error = n % 2 ? err[n / 2] : (err[n / 2 - 1] + err[n / 2]) / 2;
    out->max_abs_error = err[n - 1];
}

void cfit_plan_confidence(const cfit_catalog *c, const cfit_gpu *gpu, long gpus, double params, int moe,
                          cfit_confidence *out)
{
    memset(out, 0, sizeof *out);
    out->arch = gpu->arch;
    size_t cap = cfit_catalog_fidelity_count(c);
    near_run *v = cap ? malloc(cap * sizeof *v) : NULL;
    if (!v)
        return;                      /* no runs (or no memory): reported as none of this family */
    long g = gpus > 0 ? gpus : 1;
    size_t n = runs_of_arch(c, gpu->arch, moe, g, params, v, cap);
    out->moe_runs = moe && n;
    if (moe && !n) {
        n = runs_of_arch(c, gpu->arch, 0, g, params, v, cap);
        out->dense_for_moe = n > 0;
    }
    if (n) {
        qsort(v, n, sizeof v[0], by_distance);
        summarise(v, n < CFIT_CONFIDENCE_RUNS ? n : CFIT_CONFIDENCE_RUNS, out);
    }
    free(v);
}
