/* coll_alltoallv.c - the uneven all-to-all: the pairwise exchange of coll_alltoall.c with a
 * size per pair (clusterfit/sim.h cfit_sim_alltoallv, docs/sim.md "alltoallv").
 *
 * In step k = 1..n-1 rank i sends rank (i + k) mod n its part.  The max-min rates of a step do
 * not depend on the bytes, so step n - k (step k's flows reversed, in its order) is solved with
 * step k on a topology with mirrored paths and only timed apart (cfit__sim_step_mirror_v): the
 * parts differ (distance n - k, the other rank's load).  The per-peer sizes are nccl-tests'
 * generated pattern (src/alltoallv.cu AlltoAllvGetPeerBytesDistanceWeighted, nccl-tests
 * 2.19.6, https://github.com/NVIDIA/nccl-tests) times the receiver's expert load; algbw divides
 * the busiest rank's bytes (sent or received, its own part counted) by the time, as its GetBw.
 */
#include "sim/sim_internal.h"

#include <math.h>
#include <stdlib.h>

/* nccl-tests' part for distance d (its own part at d = 0), rounded down to 16 bytes as it does. */
static double part_bytes(double spread, int n, double size, int d)
{
    double uniform = size / n, dist = (double)d * size / ((double)n * (n - 1) / 2.0);
    return floor(((1.0 - spread) * uniform + spread * dist) / 16.0) * 16.0;
}

/* The receiver's load: rank 0 the hottest (imbalance x the mean), the others alike. */
static double load(const cfit_sim_alltoallv *v, int n, int j)
{
    return j == 0 ? v->imbalance : (n - v->imbalance) / (n - 1);
}

double cfit_sim_alltoallv_bytes(const cfit_sim_alltoallv *v, int n, double size, int i, int j)
{
    if (n < 2 || i == j)
        return 0;
    return part_bytes(v->spread, n, size, (int)(((long)j - i + n) % n)) * load(v, n, j);
}

/* Rank 0 receives load_0 x every part (its own included): the most any rank sends or
 * receives, since a sender's bytes are the same parts with at most one of them at load_0. */
double cfit_sim_alltoallv_busiest(const cfit_sim_alltoallv *v, int n, double size)
{
    double sum = 0;
    for (int d = 0; d < n; d++)
        sum += part_bytes(v->spread, n, size, d);
    return n < 2 ? size : sum * (v->imbalance > 1 ? v->imbalance : 1);
}

/* Step k's parts (flow i: rank i to i + k) and its mirror's (rank i + k to i). */
static void step_bytes(const cfit_sim_alltoallv *v, int n, double size, int k, double *fwd, double *rev)
{
    for (int i = 0; i < n; i++) {
        int j = (int)(((long)i + k) % n);
        fwd[i] = cfit_sim_alltoallv_bytes(v, n, size, i, j);
        rev[i] = cfit_sim_alltoallv_bytes(v, n, size, j, i);
    }
}

static int run(cfit__sim *s, cfit_algo a, double bytes)
{
    if (a != CFIT_ALGO_RING)
        return cfit__sim_no_algo(s, CFIT_COLL_ALLTOALLV, a, "ring, meaning the pairwise exchange");
    const cfit_sim_alltoallv *v = cfit__sim_alltoallv(s);
    int n = cfit__sim_ranks(s);
    if (v->imbalance > n)
        return cfit_diag_set(cfit__sim_diag(s), CFIT_EINVALID, NULL, 0, 0,
                             "alltoallv: an imbalance of %g is more than the %d ranks (the hottest rank would "
                             "receive more than all of it)", v->imbalance, n);
    int *src = malloc((size_t)n * 2 * sizeof *src);
    double *fwd = malloc((size_t)n * 2 * sizeof *fwd);
    int rc = src && fwd ? CFIT_EOK : CFIT_ENOMEM;
    for (int k = 1; 2 * k <= n && !rc; k++) {
        cfit__sim_shift(n, k, src, src + n);
        step_bytes(v, n, bytes, k, fwd, fwd + n);
        rc = 2 * k < n ? cfit__sim_step_mirror_v(s, n, src, src + n, fwd, fwd + n, 1)
                       : cfit__sim_step_v(s, n, src, src + n, fwd, 1);
    }
    cfit__sim_count_bytes(s, cfit_sim_alltoallv_busiest(v, n, bytes));
    free(src);
    free(fwd);
    return rc;
}

const cfit__coll cfit__coll_alltoallv = {CFIT_COLL_ALLTOALLV, run};
