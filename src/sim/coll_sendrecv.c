/* coll_sendrecv.c - send-recv as nccl-tests runs it: every rank sends size bytes to rank+1
 * and receives from rank-1 (mod n), all at once; one step.  Bus factor 1.
 */
#include "sim/sim_internal.h"

#include <stdlib.h>

static int run(cfit__sim *s, cfit_algo a, double bytes)
{
    if (a != CFIT_ALGO_RING)
        return cfit__sim_no_algo(s, CFIT_COLL_SENDRECV, a, "ring, meaning the shift by one");
    int n = cfit__sim_ranks(s);
    int *src = malloc((size_t)n * 2 * sizeof *src);
    if (!src)
        return CFIT_ENOMEM;
    cfit__sim_shift(n, 1, src, src + n);
    int rc = cfit__sim_step(s, n, src, src + n, bytes, 1, 1);
    free(src);
    return rc;
}

const cfit__coll cfit__coll_sendrecv = {CFIT_COLL_SENDRECV, run};
