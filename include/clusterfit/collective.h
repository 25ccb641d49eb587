/* collective.h - the collective registry: one entry per collective, shared by `sim`, `bench`,
 * the CLI and the calibration readers (calibration.c, nccl_log.c).
 *
 * Adding a new collective: a CFIT_COLL_ value below and its entry in src/base/collective.c
 * (names, reduces, nccl-tests' size and bus factor, ring steps), a schedule file
 * src/sim/coll_NAME.c and src/bench/coll_NAME.c, each one row in its table (sim.c, driver.c);
 * a collective only the simulators model has benched 0 and no bench row.
 *
 * Entries past CFIT_COLL_COUNT are nccl-tests collectives clusterfit does not model (broadcast,
 * reduce, ...): the log reader names them so a log of one is refused as unmodelled, not unknown.
 * Every fact is nccl-tests': src/<name>.cu GetCollByteCount / GetBw and doc/PERFORMANCE.md
 * (https://github.com/NVIDIA/nccl-tests).  The table is constant: safe from any thread.
 */
#ifndef CLUSTERFIT_COLLECTIVE_H
#define CLUSTERFIT_COLLECTIVE_H

#include "clusterfit/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cfit_collective {
    CFIT_COLL_ALLREDUCE = 0, CFIT_COLL_ALLGATHER, CFIT_COLL_REDUCESCATTER, CFIT_COLL_ALLTOALL,
    CFIT_COLL_SENDRECV, CFIT_COLL_ALLTOALLV, CFIT_COLL_COUNT
} cfit_collective;

typedef struct cfit_coll_info {
    cfit_collective id;            /* CFIT_COLL_COUNT: an nccl-tests collective clusterfit does not model */
    const char *name;              /* canonical, the CLI's and `bench --json`'s: "allreduce" */
    const char *nccl_name;         /* nccl-tests' source and binary stem: "all_reduce" (all_reduce_perf) */
    const char *title;             /* in prose: "all-reduce" */
    int reduces;                   /* takes a reduction op (nccl-tests prints a redop other than none) */
    /* nccl-tests' size / (count x element size) on n ranks: 1 where the size is one rank's
     * vector (all-reduce), n where it is the whole gathered or scattered array (all-gather) */
    double (*size_per_count)(int n);
    /* busbw / algbw on n ranks (nccl-tests' GetBw factor): all-reduce 2(n-1)/n, ... */
    double (*bus_factor)(int n);
    /* steps of its ring schedule on n ranks (all-reduce 2(n-1), all-gather n-1, send-recv 1);
     * what a calibration divides the smallest size's time by to get a per-step latency */
    int (*ring_steps)(int n);
    /* `clusterfit bench` moves its data (src/bench/coll_NAME.c); 0 for a collective only the
     * simulators model (alltoallv: its per-peer sizes are the simulator's, docs/sim.md) */
    int benched;
} cfit_coll_info;

/* The entry of c; NULL for a value outside 0 .. CFIT_COLL_COUNT - 1. */
CFIT_API const cfit_coll_info *cfit_coll_info_of(cfit_collective c);
/* The entry whose canonical name, nccl-tests stem ("all_reduce") or binary ("all_reduce_perf")
 * is name, modelled or not; NULL for any other name (or NULL). */
CFIT_API const cfit_coll_info *cfit_coll_find(const char *name);
/* The i-th entry (0 .. cfit_coll_entries() - 1: the modelled ones first, in cfit_collective
 * order, then the unmodelled), NULL past the end. */
CFIT_API const cfit_coll_info *cfit_coll_entry(int i);
CFIT_API int cfit_coll_entries(void);

CFIT_API const char *cfit_collective_name(cfit_collective c);   /* "allreduce", ...; "?" out of range */
/* A modelled collective by any name cfit_coll_find takes.  CFIT_EUNKNOWN with a did-you-mean,
 * or the list of valid names, in d->msg for other names; CFIT_EINVALID naming the modelled ones
 * for an nccl-tests collective clusterfit does not model. */
CFIT_API int cfit_collective_parse(const char *name, cfit_collective *out, cfit_diag *d);
/* nccl-tests' bus factor of c on n ranks (cfit_coll_info.bus_factor); 0 for n < 1 or c out of range. */
CFIT_API double cfit_coll_bus_factor(cfit_collective c, int n);
/* The modelled collectives' names joined for a message: "allreduce, allgather, ... or sendrecv"
 * (nccl = 1: "all_reduce_perf, all_gather_perf, ... or sendrecv_perf"), with also (unless NULL)
 * as the last item: "..., sendrecv or pairs".  Truncated to len; returns buf. */
CFIT_API const char *cfit_coll_list(char *buf, size_t len, int nccl, const char *also);

#ifdef __cplusplus
}
#endif
#endif
