/* coll_reducescatter.c - ring reduce-scatter: n-1 steps, each rank passes size/n onward.
 *
 * size is nccl-tests' size for reduce-scatter: the whole input array (n x the per-rank result).
 * Cost (Thakur, Rabenseifner, Gropp 2005, pairwise/ring): (n-1) alpha + ((n-1)/n) size beta
 * (+ the same gamma for the reduction, not modelled: the network is the subject here).
 */
#include "sim/sim_internal.h"

int cfit__coll_ring_pass(cfit__sim *s, double bytes, long steps);

static int run(cfit__sim *s, cfit_algo a, double bytes)
{
    if (a != CFIT_ALGO_RING)
        return cfit__sim_no_algo(s, CFIT_COLL_REDUCESCATTER, a, "ring");
    return cfit__coll_ring_pass(s, bytes, cfit__sim_ranks(s) - 1);
}

const cfit__coll cfit__coll_reducescatter = {CFIT_COLL_REDUCESCATTER, run};
