/* sim_internal.h - the flow-level engine as the collective schedules see it.
 *
 * Adding a new collective: its registry entry (clusterfit/collective.h), then coll_NAME.c
 * defining a cfit__coll (a function that emits the schedule's steps through cfit__sim_step),
 * declared below and put in sim.c's table at its cfit_collective.
 */
#ifndef CFIT_SIM_INTERNAL_H
#define CFIT_SIM_INTERNAL_H

#include "clusterfit/sim.h"

typedef struct cfit_sim_state cfit__sim;   /* the engine is the caller's state (sim.h) */

/* Simulate one step: flow i goes from rank src[i] to rank dst[i] with `bytes` bytes; the
 * step's time (slowest flow + lat_mult x its path latency) is added `repeat` times to the
 * collective (schedules whose steps repeat the same flow pattern - a ring's 2(n-1) steps -
 * simulate it once).  Returns CFIT_EOK, CFIT_ENOMEM, or CFIT_EINVALID with the diagnostic
 * naming the two ranks when failed links leave no path between them. */
int cfit__sim_step(cfit__sim *s, int nflows, const int *src, const int *dst, double bytes,
                   long repeat, double lat_mult);

/* The step and its mirror (flow i reversed: dst[i] to src[i], same order): when the topology's
 * paths are mirror images (fat-tree indexed paths, no failed link, no adaptive routing) the
 * mirror has the same max-min solution on the reversed links, so it is solved once and counted
 * twice (its bytes on the reversed links); otherwise both are simulated.  Errors as above. */
int cfit__sim_step_mirror(cfit__sim *s, int nflows, const int *src, const int *dst, double bytes, double lat_mult);
/* Test hook: nonzero makes cfit__sim_step_mirror simulate both steps always. */
extern int cfit__sim_mirror_off;
/* Test hook: nonzero makes every step solve all its subflows, never one plane block of a
 * topology with planes (sim.c step_planes), by the progressive filling always (never
 * fill_tight's plain case): the reference the shortcuts are tested against. */
extern int cfit__sim_planes_off;

/* The same with bytes[i] on flow i (alltoallv), and its mirror with rev_bytes[i] on flow i
 * reversed: the rates do not depend on the bytes, so a mirror is solved once. */
int cfit__sim_step_v(cfit__sim *s, int nflows, const int *src, const int *dst, const double *bytes, double lat_mult);
int cfit__sim_step_mirror_v(cfit__sim *s, int nflows, const int *src, const int *dst, const double *bytes,
                            const double *rev_bytes, double lat_mult);
/* The size algbw divides by instead of the collective's bytes (alltoallv: the busiest rank's). */
void cfit__sim_count_bytes(cfit__sim *s, double bytes);
/* alltoallv's pattern, as the state was set (cfit_sim_state_set_alltoallv). */
const cfit_sim_alltoallv *cfit__sim_alltoallv(const cfit__sim *s);

/* One step of arbitrary flows between hosts (bytes per flow), outside any collective: the
 * step time (slowest flow's finish + its path latency).  For tests of the fairness model. */
int cfit__sim_flows(const cfit_topo *t, int nflows, const int *src_host, const int *dst_host, const double *bytes,
                    double *time_s, cfit_diag *d);

int cfit__sim_ranks(const cfit__sim *s);
int cfit__sim_host(const cfit__sim *s, int rank);       /* host id of a rank */
int cfit__sim_gpus_per_node(const cfit__sim *s);        /* topology's scale-up domain size */
cfit_diag *cfit__sim_diag(cfit__sim *s);

/* Flows of the ring step rank i -> rank (i + shift) mod n, written to src/dst (n each). */
void cfit__sim_shift(int n, int shift, int *src, int *dst);

typedef struct cfit__coll {
    cfit_collective id;
    /* Emit the schedule of algorithm a for bytes (nccl-tests size) on the engine's ranks;
     * CFIT_EINVALID with a message if a is not defined for this collective. */
    int (*run)(cfit__sim *s, cfit_algo a, double bytes);
} cfit__coll;

extern const cfit__coll cfit__coll_allreduce, cfit__coll_allgather, cfit__coll_reducescatter,
    cfit__coll_alltoall, cfit__coll_sendrecv, cfit__coll_alltoallv;

/* The common refusal: "algorithm X is not defined for collective Y (use ...)". */
int cfit__sim_no_algo(cfit__sim *s, cfit_collective c, cfit_algo a, const char *which);

#endif
