/* coll_alltoall.c - pairwise-exchange all-to-all: in step k = 1..n-1 rank i sends size/n to
 * rank (i + k) mod n.
 *
 * size is nccl-tests' size for all-to-all: what one rank sends in all (n x the per-peer part).
 * Cost (MPICH alltoall, long messages): (n-1) alpha + ((n-1)/n) size beta.  Step n - k moves
 * step k's flows reversed (rank i + k to i), listed in step k's order, so on a topology whose
 * paths are mirror images (fat-tree) the engine solves it once for both (cfit__sim_step_mirror):
 * n(n-1)/2 flows solved, still quadratic in ranks, unlike the rings.
 */
#include "sim/sim_internal.h"

#include <stdlib.h>

static int run(cfit__sim *s, cfit_algo a, double bytes)
{
    if (a != CFIT_ALGO_RING)
        return cfit__sim_no_algo(s, CFIT_COLL_ALLTOALL, a, "ring, meaning the pairwise exchange");
    int n = cfit__sim_ranks(s);
    int *src = malloc((size_t)n * 2 * sizeof *src);
    if (!src)
        return CFIT_ENOMEM;
    int rc = CFIT_EOK;
    for (int k = 1; 2 * k <= n && !rc; k++) {   /* step n - k: step k's flows reversed, in its order */
        cfit__sim_shift(n, k, src, src + n);
        rc = 2 * k < n ? cfit__sim_step_mirror(s, n, src, src + n, bytes / n, 1)
                       : cfit__sim_step(s, n, src, src + n, bytes / n, 1, 1);
    }
    free(src);
    return rc;
}

const cfit__coll cfit__coll_alltoall = {CFIT_COLL_ALLTOALL, run};
