/* sim_speed.c - how fast the flow-level simulator runs a ring all-reduce on a fat-tree (issue 4
 * targets: 16,384 ranks in < 2 s and 65,536 ranks in < 30 s on one core, growing near-linearly).
 *
 * For 1K, 4K, 16K and 64K ranks (fat-tree k = 16, 26, 42, 64: the smallest even k with enough
 * GPUs, 8 per node) it builds the topology, then times cfit_sim_collective for a 256 MiB ring
 * all-reduce with linear placement, in CPU seconds on one core (the library is single-threaded).
 * Prints the simulation time, the flows of the schedule per second (a ring repeats one step's
 * flow pattern 2(n-1) times and the engine solves it once, so also the flows solved per second),
 * and the growth per 4x ranks: near 4 is linear, 16 quadratic.  The reference, measured in the
 * same run, is the 1K case: each line says how many times its cost it is.  A random placement at
 * 4K shows the cost when many flows cross the core (each route then searches most of the tree).
 * All-to-all of 1K ranks on k=16 runs with and without its mirrored-step shortcut.
 * Expert-parallel all-to-all (issue 13 target: 4,096 ranks x 1 MiB on fattree:k=32 in < 2 s, and
 * 8,192 finishing): 1K ranks on k=32 by the reference solve (every subflow, progressive filling
 * always: cfit__sim_planes_off) and by the engine's plane-block solve, same simulated time
 * asserted, then 4K and 8K ranks by the engine, each with its ratio to the 1K reference.
 * Last, the NCCL engine's tuner (issue 12 target: a 16,384-GPU `sim --algo auto` sweep from 1 KiB
 * to 16 GiB in < 1 s): every algorithm x protocol at the 25 sizes 1 KiB ... 16 GiB on 2,048 nodes
 * of 8 GPUs with NVLS and 8 NICs, against the 16K-rank flow ring of the same run.
 * Usage: bench_sim_speed
 */
#include "clusterfit/nccl.h"
#include "clusterfit/sim.h"

extern int cfit__sim_mirror_off;   /* the library's test hooks (src/sim/sim_internal.h) */
extern int cfit__sim_planes_off;

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static cfit_topo *fattree(int k, double *build_s)
{
    char spec[64];
    snprintf(spec, sizeof spec, "fattree:k=%d", k);
    cfit_topo_params p;
    cfit_topo_params_init(&p);
    cfit_topo *t = NULL;
    cfit_diag d;
    double t0 = cpu_s();
    if (cfit_topo_new(spec, &p, &t, &d)) {
        fprintf(stderr, "sim_speed: %s: %s\n", spec, d.msg);
        exit(1);
    }
    *build_s = cpu_s() - t0;
    return t;
}

/* Mean CPU seconds of one simulation over >= 0.5 s (at least one run). */
static double time_sim(const cfit_topo *t, int ranks, const int *place, cfit_sim_result *r)
{
    cfit_diag d;
    int runs = 0;
    double t0 = cpu_s(), el;
    cfit_sim_state *s = cfit_sim_state_new(t, &d);   /* the caller's state, reused as plan reuses it */
    do {
        if (!s || cfit_sim_run(s, CFIT_COLL_ALLREDUCE, CFIT_ALGO_RING, ranks, place, 256.0 * (1 << 20), r, NULL, &d)) {
            fprintf(stderr, "sim_speed: %s\n", d.msg);
            exit(1);
        }
        runs++;
    } while ((el = cpu_s() - t0) < 0.5);
    cfit_sim_state_free(s);
    return el / runs;
}

/* CPU seconds of one all-to-all of `bytes` on n linear ranks of t; its simulated time in *sim_s. */
static double time_alltoall(const cfit_topo *t, int n, double bytes, double *sim_s)
{
    cfit_diag d;
    cfit_sim_result r;
    double t0 = cpu_s();
    if (cfit_sim_collective(t, CFIT_COLL_ALLTOALL, CFIT_ALGO_RING, n, NULL, bytes, &r, &d)) {
        fprintf(stderr, "sim_speed: %s\n", d.msg);
        exit(1);
    }
    *sim_s = r.time_s;
    return cpu_s() - t0;
}

/* Issue 13's expert-parallel all-to-all on fattree:k=32, 1 MiB per rank; 1 when its targets hold. */
static int ep_alltoall(void)
{
    double build, ref_sim, fast_sim, sim4k, sim8k;
    cfit_topo *t = fattree(32, &build);
    cfit__sim_planes_off = 1;
    double ref = time_alltoall(t, 1024, 1 << 20, &ref_sim);
    cfit__sim_planes_off = 0;
    double fast = time_alltoall(t, 1024, 1 << 20, &fast_sim);
    double s4k = time_alltoall(t, 4096, 1 << 20, &sim4k), s8k = time_alltoall(t, 8192, 1 << 20, &sim8k);
    cfit_topo_free(t);
    int same = fabs(fast_sim - ref_sim) <= 1e-12 * ref_sim, ok = same && s4k < 2;
    printf("# all-to-all, fattree:k=32, 1 MiB: 1024 ranks %.3f s by the reference solve, %.3f s by the engine "
           "(%.1fx), simulated %.6f s %s; 4096 ranks %.3f s (%.2f x the 1K reference), simulated %.6f s; "
           "8192 ranks %.3f s (%.2f x), simulated %.6f s; target 4K < 2 s: %s\n",
           ref, fast, ref / fast, fast_sim, same ? "both ways" : "DIFFERENT", s4k, s4k / ref, sim4k, s8k,
           s8k / ref, sim8k, ok ? "met" : "MISSED");
    return ok;
}

int main(void)
{
    static const int ks[] = {16, 26, 42, 64}, ranks[] = {1024, 4096, 16384, 65536};
    printf("# ring all-reduce, 256 MiB, linear placement, fat-tree with 8 GPUs per node; CPU seconds, one core\n");
    printf("# %6s %4s %8s %9s %10s %13s %13s %8s %8s\n", "ranks", "k", "build_s", "sim_s", "sim_time_s",
           "flows/s", "solved/s", "x_prev", "x_1K");
    double ref = 0, prev = 0, ring16k = 0;
    int ok = 1;
    for (int i = 0; i < 4; i++) {
        double build;
        cfit_topo *t = fattree(ks[i], &build);
        cfit_sim_result r;
        double s = time_sim(t, ranks[i], NULL, &r);
        if (i == 0)
            ref = s;
        if (ranks[i] == 16384)
            ring16k = s;
        char grow[16] = "";
        if (i > 0)
            snprintf(grow, sizeof grow, "%.2f", s / prev);
        printf("  %6d %4d %8.3f %9.4f %10.4f %13.3e %13.3e %8s %8.1f\n", ranks[i], ks[i], build, s, r.time_s,
               (double)r.flows / s, (double)r.flows_solved / s, grow, s / ref);
        if ((ranks[i] == 16384 && s >= 2) || (ranks[i] == 65536 && s >= 30))
            ok = 0;
        prev = s;
        cfit_topo_free(t);
    }
    double build;
    cfit_topo *t = fattree(26, &build);
    int hosts = cfit_topo_hosts(t), *place = malloc((size_t)hosts * sizeof *place);
    if (!place)
        return 1;
    unsigned x = 12345;
    for (int h = 0; h < hosts; h++)
        place[h] = h;
    for (int h = hosts - 1; h > 0; h--) {
        x = x * 1103515245u + 12345u;
        int j = (int)((x >> 8) % (unsigned)(h + 1)), tmp = place[h];
        place[h] = place[j], place[j] = tmp;
    }
    cfit_sim_result r;
    double s = time_sim(t, 4096, place, &r);
    printf("# random placement, 4096 ranks, k=26: %.4f s (%.1f x the 1K linear case), simulated time %.4f s\n", s,
           s / ref, r.time_s);
    cfit_topo_free(t);
    /* all-to-all: n - 1 different steps; on a fat-tree step n - k is step k mirrored and solved
     * once (cfit__sim_step_mirror); the reference is the same run with the shortcut off */
    t = fattree(16, &build);
    double a2a[2], a2a_time[2];
    for (int off = 0; off < 2; off++) {
        cfit_diag d;
        cfit__sim_mirror_off = off;
        double t0 = cpu_s();
        if (cfit_sim_collective(t, CFIT_COLL_ALLTOALL, CFIT_ALGO_RING, 1024, NULL, 64.0 * (1 << 20), &r, &d)) {
            fprintf(stderr, "sim_speed: %s\n", d.msg);
            return 1;
        }
        a2a[off] = cpu_s() - t0;
        a2a_time[off] = r.time_s;
    }
    cfit__sim_mirror_off = 0;
    printf("# all-to-all, 1024 ranks, k=16, 64 MiB: %.3f s with mirrored steps, %.3f s without (%.2fx); "
           "simulated time %.6f s, %s\n", a2a[0], a2a[1], a2a[1] / a2a[0], a2a_time[0],
           a2a_time[0] == a2a_time[1] ? "the same both ways" : "DIFFERENT");
    int a2a_ok = a2a_time[0] == a2a_time[1] && ep_alltoall();
    /* the NCCL engine: a whole auto sweep, repeated to be measurable */
    cfit_nccl_system sys = {.nodes = 2048, .gpus_per_node = 8, .arch = CFIT_ARCH_HOPPER, .intra = CFIT_FAMILY_NVLINK,
                            .intra_bw = 369e9, .nvls_bw = 274.5e9, .nics = 8, .nic_bw = 47e9,
                            .net = CFIT_FAMILY_IB, .net_slowdown = 1};
    enum { REPS = 1000 };
    double t0 = cpu_s(), sink = 0;
    for (int rep = 0; rep < REPS; rep++)
        for (double b = 1024; b <= 16.0 * (1 << 30); b *= 2) {
            cfit_nccl_estimate e;
            if (cfit_nccl_best(&sys, CFIT_COLL_ALLREDUCE, CFIT_NCCL_ALL_ALGOS, CFIT_NCCL_ALL_PROTOS, b, &e, NULL))
                return 1;
            sink += e.time_s;
        }
    double sweep = (cpu_s() - t0) / REPS;
    int nccl_ok = sweep < 1.0 && sink > 0;
    printf("# NCCL engine: 16,384-GPU auto sweep 1 KiB - 16 GiB (25 sizes): %.3g s (%.3g x the 16K flow ring); "
           "target < 1 s: %s\n", sweep, sweep / ring16k, nccl_ok ? "met" : "MISSED");
    ok = ok && nccl_ok;
    printf("# targets: 16K ranks < 2 s, 64K ranks < 30 s: %s\n", ok ? "met" : "MISSED");
    free(place);
    cfit_topo_free(t);
    return ok && a2a_ok ? 0 : 1;
}
