/* coll_allgather.c - ring all-gather: n-1 steps, each rank passes size/n to its successor.
 *
 * size is nccl-tests' size for all-gather: the whole gathered array (n x the per-rank part).
 * Cost (Thakur, Rabenseifner, Gropp 2005): (n-1) alpha + ((n-1)/n) size beta.
 */
#include "sim/sim_internal.h"

#include <stdlib.h>

/* Shared with reduce-scatter: the same ring, the same bytes. */
int cfit__coll_ring_pass(cfit__sim *s, double bytes, long steps);
int cfit__coll_ring_pass(cfit__sim *s, double bytes, long steps)
{
    int n = cfit__sim_ranks(s);
    int *src = malloc((size_t)n * 2 * sizeof *src);
    if (!src)
        return CFIT_ENOMEM;
    cfit__sim_shift(n, 1, src, src + n);
    int rc = cfit__sim_step(s, n, src, src + n, bytes / n, steps, 1);
    free(src);
    return rc;
}

static int run(cfit__sim *s, cfit_algo a, double bytes)
{
    if (a != CFIT_ALGO_RING)
        return cfit__sim_no_algo(s, CFIT_COLL_ALLGATHER, a, "ring");
    return cfit__coll_ring_pass(s, bytes, cfit__sim_ranks(s) - 1);
}

const cfit__coll cfit__coll_allgather = {CFIT_COLL_ALLGATHER, run};
