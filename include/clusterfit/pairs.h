/* pairs.h - `bench pairs`: bandwidth and latency of every pair of hosts, measured in
 * rounds of disjoint pairs, and the links and hosts slower than the rest.
 *
 * One rank per host takes part (the lowest rank of each host identity), or every rank
 * with per_rank (and always when the whole job runs on one host).  Rounds follow the
 * circle method: with m participants (m+1 when m is odd, one idle per round), m-1 rounds
 * pair everyone with everyone exactly once; the pairs of a round run at the same time
 * and every rank meets at a barrier between rounds.  A pair measures bandwidth with
 * both directions busy (iters sendrecvs of size bytes each way; GB/s per direction from
 * the median exchange time) and latency as half the median round trip of an 8-byte
 * ping-pong; the medians keep one hiccup of a busy host from marking a link slow.  A
 * pair stops its bandwidth loop after a third of the comm's timeout (at least one timed
 * exchange), so the ranks idle that round do not time out at the next barrier.
 */
#ifndef CLUSTERFIT_PAIRS_H
#define CLUSTERFIT_PAIRS_H

#include "clusterfit/comm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cfit_pairs_opts {
    size_t size_bytes;      /* bandwidth message size (default 16 MiB) */
    int iters;              /* timed exchanges per pair (default 10) */
    int warmup;             /* untimed exchanges first (default 1) */
    int lat_iters;          /* timed ping-pongs (default 100) */
    int per_rank;           /* every rank is a "host" */
    double slow_threshold;  /* fraction of the median bandwidth below which a link is slow (0.8) */
    int confirm;            /* re-measurements of each suspect link, alone (default 3; 0 = none) */
    /* test hook (docs/bench-launch.md, CLUSTERFIT_PAIRS_INJECT): the bandwidth measured on link
     * inject_a - inject_b is multiplied by inject_factor (> 0), in the first pass only when
     * inject_once; inject_factor 0 = off */
    int inject_a, inject_b, inject_once;
    double inject_factor;
} cfit_pairs_opts;

typedef struct cfit_pairs_link {
    int a, b;               /* host indices, a < b */
    double bandwidth_gbs;   /* the first pass's; after cfit_pairs_confirm the re-measurements' median */
    double fraction_of_median;
    double first_gbs;       /* the first pass's (set by cfit_pairs_confirm) */
    int repeats;            /* re-measurements (0: not re-measured) */
    double min_gbs, max_gbs;/* spread of the first pass and the re-measurements */
} cfit_pairs_link;

typedef struct cfit_pairs_result {
    int nhosts;
    char **hosts;           /* [nhosts] labels: hostname, or "hostname:rankN" when several
                               participants share a hostname */
    int *host_rank;         /* [nhosts] the rank measuring for that host */
    double *bw_gbs;         /* [nhosts*nhosts], row-major; diagonal NaN */
    double *lat_s;          /* [nhosts*nhosts]; diagonal NaN */
    double median_bw_gbs, median_lat_s;
    cfit_pairs_link *slow;  /* links below the threshold, slowest first (confirmed ones, after
                               cfit_pairs_confirm) */
    int nslow;
    cfit_pairs_link *dismissed; /* suspects the re-measurements found at or above the threshold */
    int ndismissed;
    int *host_slow;         /* [nhosts] 1 when every link of the host is slow */
    int nslow_hosts;
} cfit_pairs_result;

CFIT_API void cfit_pairs_opts_init(cfit_pairs_opts *o);

/* Partner of participant i in round r of the circle method over m participants, or -1
 * when i sits the round out (m odd).  Rounds: cfit_pairs_rounds(m) = m-1 or m. */
CFIT_API int cfit_pairs_rounds(int m);
CFIT_API int cfit_pairs_partner(int m, int round, int i);

/* Collective over every rank of c.  Fills r on every rank (free with
 * cfit_pairs_result_free).  Returns 0 or the comm's negative error; CFIT_EINVALID with
 * nhosts < 2 when there is nothing to pair. */
CFIT_API int cfit_pairs_run(cfit_comm *c, const cfit_pairs_opts *o, cfit_pairs_result *r);

/* Re-measure every suspect link of r (r->slow, the same on every rank) o->confirm times, each
 * pair alone between barriers so no other pair shares the hosts, and a reference (the healthy link
 * nearest the median) the same way; a suspect stays slow only when the median of its
 * re-measurements is still below the threshold x the reference's median (then its bandwidth is
 * that median, its fraction of the reference's), else it moves to r->dismissed.  Slow hosts are recounted.  Collective; called by
 * cfit_pairs_run when o->confirm > 0.  Returns 0 or the comm's error. */
CFIT_API int cfit_pairs_confirm(cfit_comm *c, const cfit_pairs_opts *o, cfit_pairs_result *r);

/* Medians, slow links and slow hosts from the matrices (called by cfit_pairs_run;
 * exposed for tests).  Returns 0 or CFIT_ENOMEM. */
CFIT_API int cfit_pairs_analyse(cfit_pairs_result *r, double slow_threshold);

CFIT_API void cfit_pairs_result_free(cfit_pairs_result *r);

#ifdef __cplusplus
}
#endif
#endif
