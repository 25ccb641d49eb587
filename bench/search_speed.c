/* search_speed.c - how fast `clusterfit plan` searches layouts (issue target: >= 1e6
 * layouts/s on one core for llama3-405b on 16,384 h100-sxm, whole command < 2 s,
 * peak RSS < 100 MB; exit 1 when one is missed).
 *
 * Measures, in one run:
 *   1. the library search (cfit_plan_search), repeated until >= 1 s of CPU time, for the
 *      default batch (16 Mi tokens = 2048 sequences for this model, as Llama 3 trained) and
 *      for a 4 Mi-token batch (512 sequences);
 *   2. the reference: the same number of layouts costed one at a time through the public
 *      cfit_plan_evaluate(), which recomputes the per-layer cost for every layout (what a
 *      search without the layer-cost cache would do); the ratio is search / reference;
 *   3. one search with --topology (cross-node communication simulated) for llama3-70b on 1,024
 *      GPUs of a 2:1 fat-tree and for llama3-405b on 16,384 GPUs of fattree:k=48, against the
 *      same search without it;
 *   4. the whole command (fork + exec of the CLI given as argv[1]), wall time and peak RSS.
 * Usage: bench_search_speed [path/to/clusterfit]
 */
#include "clusterfit/plan.h"
#include "clusterfit/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double wall_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A request for `gpus` GPUs of type *g training m on 15 T tokens, nothing else fixed. */
static void make_request(cfit_plan_request *r, const cfit_catalog *cat, const cfit_gpu **g, const cfit_model *m,
                         long gpus)
{
    cfit_plan_request_init(r);
    r->catalog = cat;
    r->model = m;
    r->gpus = g;
    r->ngpus = 1;
    r->gpus_total = gpus;
    r->tokens = 15e12;
}

/* Searches of llama3-405b on 16384 h100-sxm for one CPU second under framework fw (NULL: the
 * default megatron-core; "torchtitan" searches four pipeline schedules). */
static int bench_search(const cfit_catalog *cat, long gbs, const char *fw, double *rate, double *ref_rate,
                        uint64_t *per_run)
{
    cfit_diag d;
    const cfit_gpu *g = cfit_catalog_gpu(cat, "h100-sxm", &d);
    const cfit_model *m = cfit_catalog_model(cat, "llama3-405b", &d);
    if (!g || !m) {
        fprintf(stderr, "search_speed: %s\n", d.msg);
        return 1;
    }
    cfit_plan_request r;
    make_request(&r, cat, &g, m, 16384);
    r.global_batch = gbs;
    if (fw && !(r.framework = cfit_catalog_framework(cat, fw, &d))) {
        fprintf(stderr, "search_speed: %s\n", d.msg);
        return 1;
    }
    uint64_t total = 0;
    int runs = 0;
    long batch = 0;
    cfit_plan best;
    double t0 = cpu_s();
    do {
        cfit_plan_result res;
        if (cfit_plan_search(&r, &res, &d)) {
            fprintf(stderr, "search_speed: %s\n", d.msg);
            return 1;
        }
        total += res.evaluated;
        *per_run = res.evaluated;
        batch = res.global_batch;
        best = res.plans[0];
        cfit_plan_result_fini(&res);
        runs++;
    } while (cpu_s() - t0 < 1.0);
    *rate = (double)total / (cpu_s() - t0);

    /* reference: cost the best layout through the public one-at-a-time API */
    uint64_t n = 0;
    volatile double sink = 0;
    t0 = cpu_s();
    do {
        for (int i = 0; i < 1000; i++) {
            cfit_plan p;
            cfit_plan_evaluate(&r, g, &best.layout, &p, &d);
            sink += p.step_time_s;
        }
        n += 1000;
    } while (cpu_s() - t0 < 1.0);
    *ref_rate = (double)n / (cpu_s() - t0);
    (void)sink;
    printf("  batch %5ld seqs%s%s: %8llu layouts per search, %6d searches, %10.0f layouts/s (search), "
           "%10.0f layouts/s (reference), ratio %.1fx\n",
           batch, fw ? ", framework " : "", fw ? fw : "", (unsigned long long)*per_run, runs,
           *rate, *ref_rate, *rate / *ref_rate);
    return 0;
}

/* One search with --topology SPEC (cross-node communication simulated, docs/plan.md): CPU
 * seconds, the factor applied to the best plan, and the seconds without the topology. */
static int bench_topology(const cfit_catalog *cat, const char *model, long gpus, const char *spec)
{
    cfit_diag d;
    const cfit_gpu *g = cfit_catalog_gpu(cat, "h100-sxm", &d);
    const cfit_model *m = cfit_catalog_model(cat, model, &d);
    cfit_topo_params tp;
    cfit_topo_params_init(&tp);
    cfit_topo *t = NULL;
    if (!g || !m || cfit_topo_new(spec, &tp, &t, &d)) {
        fprintf(stderr, "search_speed: %s\n", d.msg);
        return 1;
    }
    cfit_plan_request r;
    make_request(&r, cat, &g, m, gpus);
    double secs[2], slow = 1;
    for (int with = 0; with < 2; with++) {
        r.topology = with ? t : NULL;
        cfit_plan_result res;
        double t0 = cpu_s();
        if (cfit_plan_search(&r, &res, &d)) {
            fprintf(stderr, "search_speed: %s\n", d.msg);
            cfit_topo_free(t);
            return 1;
        }
        secs[with] = cpu_s() - t0;
        if (with && res.nplans > 0)
            slow = res.plans[0].fabric_slowdown;
        cfit_plan_result_fini(&res);
    }
    printf("  --topology %s, %s on %ld h100-sxm: %.3f s per search (%.3f s without), best plan's factor %.3g\n",
           spec, model, gpus, secs[1], secs[0], slow);
    cfit_topo_free(t);
    return 0;
}

/* One search of an MoE model with expert parallelism free (issue 13): deepseek-v3 on 2,048
 * h100-sxm, every (ep, etp) costed; CPU seconds into *secs (target < 2 s). */
static int bench_moe(const cfit_catalog *cat, double *secs)
{
    cfit_diag d;
    const cfit_gpu *g = cfit_catalog_gpu(cat, "h100-sxm", &d);
    const cfit_model *m = cfit_catalog_model(cat, "deepseek-v3", &d);
    if (!g || !m) {
        fprintf(stderr, "search_speed: %s\n", d.msg);
        return 1;
    }
    cfit_plan_request r;
    make_request(&r, cat, &g, m, 2048);
    cfit_plan_result res;
    double t0 = cpu_s();
    if (cfit_plan_search(&r, &res, &d)) {
        fprintf(stderr, "search_speed: %s\n", d.msg);
        return 1;
    }
    *secs = cpu_s() - t0;
    const cfit_layout *l = res.nplans ? &res.plans[0].layout : NULL;
    printf("  MoE, deepseek-v3 on 2048 h100-sxm, ep and etp searched: %.3f s per search, %llu layouts, "
           "best ep %d etp %d\n", *secs, (unsigned long long)res.evaluated, l ? l->ep : 0, l ? l->etp : 0);
    cfit_plan_result_fini(&res);
    return 0;
}

static int bench_command(const char *bin, double *wall, long *rss_kb)
{
    fflush(stdout);
    double t0 = wall_s();
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout))
            _exit(127);
        execl(bin, bin, "plan", "--model", "llama3-405b", "--gpu", "h100-sxm", "--gpus", "16384",
              "--tokens", "15T", (char *)NULL);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
        getrusage(RUSAGE_CHILDREN, &ru) != 0) {
        fprintf(stderr, "search_speed: '%s plan' failed\n", bin);
        return 1;
    }
    *wall = wall_s() - t0;
    *rss_kb = ru.ru_maxrss;
    return 0;
}

int main(int argc, char **argv)
{
    cfit_diag d;
    cfit_catalog *cat = cfit_catalog_new(&d);
    if (!cat) {
        fprintf(stderr, "search_speed: %s\n", d.msg);
        return 1;
    }
    printf("# search speed: llama3-405b on 16384 h100-sxm, nothing fixed, one core\n");
    double rate, ref, rate2, ref2, rate3, ref3;
    uint64_t n1, n2, n3;
    int rc = bench_search(cat, 0, NULL, &rate, &ref, &n1) || bench_search(cat, 512, NULL, &rate2, &ref2, &n2) ||
             bench_search(cat, 0, "torchtitan", &rate3, &ref3, &n3) ||
             bench_topology(cat, "llama3-70b", 1024, "fattree:k=16,oversub=2") ||
             bench_topology(cat, "llama3-405b", 16384, "fattree:k=48");
    double moe_s = 0;
    rc = rc || bench_moe(cat, &moe_s);
    cfit_catalog_free(cat);
    if (rc)
        return 1;
    const char *bin = argc > 1 ? argv[1] : "build/release/clusterfit";
    double wall = 0;
    long rss = 0;
    if (access(bin, X_OK) == 0 && bench_command(bin, &wall, &rss) == 0)
        printf("  whole command '%s plan --model llama3-405b --gpu h100-sxm --gpus 16384': %.3f s wall, "
               "peak RSS %.1f MB\n", bin, wall, rss / 1024.0);
    else
        printf("  whole command: skipped (no executable at '%s')\n", bin);
    rate2 = rate3 < rate2 ? rate3 : rate2;   /* the target holds for every search: schedules in the space too */
    int ok = rate >= 1e6 && rate2 >= 1e6 && (wall == 0 || (wall < 2.0 && rss < 100 * 1024));
    printf("targets: >= 1000000 layouts/s: %s; command < 2 s and RSS < 100 MB: %s; MoE search < 2 s: %s\n",
           rate >= 1e6 && rate2 >= 1e6 ? "met" : "MISSED",
           wall == 0 ? "not measured" : (wall < 2.0 && rss < 100 * 1024 ? "met" : "MISSED"),
           moe_s < 2.0 ? "met" : "MISSED");
    return ok && moe_s < 2.0 ? 0 : 1;   /* exit 1: a target was missed */
}
