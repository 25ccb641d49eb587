/* sim.h - the flow-level collective simulator.
 *
 * A collective on `ranks` hosts of a topology becomes a schedule of steps; each step is a set
 * of concurrent flows (src host, dst host, bytes).  Flows of a step share links by max-min
 * fairness (progressive filling) over the paths the topology's routing gives; a step lasts as
 * long as its slowest flow plus the latency of its path.  docs/sim.md derives each schedule.
 */
#ifndef CLUSTERFIT_SIM_H
#define CLUSTERFIT_SIM_H

#include "clusterfit/collective.h"
#include "clusterfit/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cfit_algo {
    CFIT_ALGO_RING = 0, CFIT_ALGO_TREE, CFIT_ALGO_RABENSEIFNER, CFIT_ALGO_HIERARCHICAL, CFIT_ALGO_COUNT
} cfit_algo;

/* Collective names, bus factors and lookup: collective.h. */
CFIT_API const char *cfit_algo_name(cfit_algo a);               /* "ring", ... */
/* Name to enum; CFIT_EUNKNOWN (with a did-you-mean in d->msg) for other names. */
CFIT_API int cfit_algo_parse(const char *name, cfit_algo *out, cfit_diag *d);

/* The simulator's work arrays and routing scratch for one topology, owned by the caller and
 * reused across solves (the arrays grow to the largest step and stay).  The topology is only
 * read: it must outlive the state and not change while the state is in use.  A state holds
 * one solve at a time: threads each use their own (any number of states may share one
 * topology, which stays const); the functions below taking a topology instead make a
 * temporary state per call.  Results never depend on what a state solved before. */
typedef struct cfit_sim_state cfit_sim_state;

/* A state for t; NULL (CFIT_ENOMEM in d) on out of memory. */
CFIT_API cfit_sim_state *cfit_sim_state_new(const cfit_topo *t, cfit_diag *d);
/* Free a state; NULL is a no-op. */
CFIT_API void cfit_sim_state_free(cfit_sim_state *s);
/* The topology the state was made for. */
CFIT_API const cfit_topo *cfit_sim_state_topo(const cfit_sim_state *s);

/* alltoallv's per-peer sizes (docs/sim.md "alltoallv").  Of size S (nccl-tests' size: what one
 * rank sends in all) rank i sends rank j != i
 *   floor16((1 - spread) S/n + spread x d x S / (n(n-1)/2)) x load_j,   d = (j - i) mod n,
 * nccl-tests' generated pattern (alltoallv.cu, NCCL_TESTS_ALLTOALLV_SPREAD; floor16 rounds down
 * to 16 bytes) times the receiver's expert load: rank 0 holds the hottest experts and receives
 * `imbalance` times the mean (load_0 = imbalance), every other rank (n - imbalance)/(n - 1). */
typedef struct cfit_sim_alltoallv {
    double spread;                 /* 0 (every peer alike) .. 1 (more to farther ranks: nccl-tests' default) */
    double imbalance;              /* max / mean of the ranks' received load, 1 .. ranks (1 = balanced) */
} cfit_sim_alltoallv;
#define CFIT_SIM_ALLTOALLV_DEFAULT {1.0, 1.0}

/* Set the state's alltoallv pattern (a new state has CFIT_SIM_ALLTOALLV_DEFAULT; the functions
 * taking a topology use it).  CFIT_EINVALID for spread outside 0..1 or imbalance below 1 (an
 * imbalance above the ranks is refused by the run). */
CFIT_API int cfit_sim_state_set_alltoallv(cfit_sim_state *s, const cfit_sim_alltoallv *v, cfit_diag *d);
/* Bytes rank i sends rank j (i != j; 0 for i == j) of size S on n ranks, and the most one rank
 * sends or receives counting its own part (what nccl-tests' algbw divides by). */
CFIT_API double cfit_sim_alltoallv_bytes(const cfit_sim_alltoallv *v, int n, double size, int i, int j);
CFIT_API double cfit_sim_alltoallv_busiest(const cfit_sim_alltoallv *v, int n, double size);

#define CFIT_SIM_HOT_LINKS 4

typedef struct cfit_sim_result {
    double time_s;                 /* whole collective */
    double algbw_bytes_per_s;      /* bytes / time (nccl-tests algbw) */
    double busbw_bytes_per_s;      /* algbw x the collective's bus factor (nccl-tests) */
    long steps, flows;             /* schedule size */
    int hottest_link;              /* link id carrying the most bytes, -1 if none */
    double hottest_link_bytes;
    int bottleneck_tier;           /* tier of the link that limited the slowest step */
    int nhot;                      /* entries in hot_links (up to CFIT_SIM_HOT_LINKS) */
    int hot_links[CFIT_SIM_HOT_LINKS];          /* link ids by bytes carried, most first */
    double hot_link_bytes[CFIT_SIM_HOT_LINKS];
    long flows_solved;             /* flows the engine solved (a repeated step counts once) */
} cfit_sim_result;

/* Simulate one collective of `bytes` (per rank, as nccl-tests counts size) on the first
 * `ranks` entries of placement (host ids; NULL = hosts 0..ranks-1).  Errors: CFIT_EINVALID
 * (algorithm not defined for the collective, ranks < 2 or > hosts, a placement repeating a
 * host), CFIT_EUNKNOWN... CFIT_EINVALID with the ranks named when failed links disconnect
 * two ranks; CFIT_ERANGE naming the ranks, the route's length and the limit when a route is
 * longer than the simulator's 4096 links (docs/sim.md "Route length"). */
CFIT_API int cfit_sim_collective(const cfit_topo *t, cfit_collective c, cfit_algo a, int ranks,
                        const int *placement, double bytes, cfit_sim_result *out, cfit_diag *d);
/* The same, also filling link_bytes[0..cfit_topo_links(t)-1] (caller-owned) with the bytes
 * each directed link carried over the whole collective (what the hot links rank); link_bytes
 * may be NULL.  Utilisation of link l = link_bytes[l] / (its rate x out->time_s). */
CFIT_API int cfit_sim_collective_links(const cfit_topo *t, cfit_collective c, cfit_algo a, int ranks,
                              const int *placement, double bytes, cfit_sim_result *out,
                              double *link_bytes, cfit_diag *d);
/* The same on a caller-owned state (its topology). */
CFIT_API int cfit_sim_run(cfit_sim_state *s, cfit_collective c, cfit_algo a, int ranks, const int *placement, double bytes,
                 cfit_sim_result *out, double *link_bytes, cfit_diag *d);

/* How much slower the inter-node phase of a hierarchical all-reduce runs on t than on a
 * non-blocking fabric of t's scale-out link rate (what `plan --topology` multiplies its
 * inter-node all-reduce bandwidth term by): the first `nodes` nodes of t (host / gpus_per_node)
 * with k ranks each (local GPUs 0..k-1) run k concurrent rings across the nodes, one per
 * local rank; the factor is the link rate over the slowest ring flow's max-min rate, at least
 * 1.  nodes and k are clamped to what t holds (the factor of the largest group that fits);
 * *factor = 1 when fewer than 2 nodes remain.  Errors as cfit_sim_collective. */
CFIT_API int cfit_sim_internode_slowdown(const cfit_topo *t, int nodes, int k, double *factor, cfit_diag *d);

/* The same for pipeline point-to-point (what `plan --topology` multiplies a cross-node PP
 * send's bandwidth term by): ranks 0..n-1, k on each of the first `nodes` nodes, rank r sends
 * to r + stride mod n all at once (sendrecv with the stage stride tp*cp*dp in ranks; stride
 * taken mod n after clamping, 0 = k).  Same clamping, result and errors as above. */
CFIT_API int cfit_sim_internode_sendrecv_slowdown(const cfit_topo *t, int nodes, int k, long stride, double *factor,
                                         cfit_diag *d);

/* One exchange step of `plan --topology`: nodes x k ranks, k on each of the first `nodes`
 * nodes of t (local GPUs 0..k-1; both clamped to what t holds); every rank r sends at once to
 * base + (r - base + stride) mod group, base = r - r mod group (the last group may be short).
 * stride = k, group 0: the rings of a hierarchical all-reduce; a stage stride: pipeline sends;
 * stride tp, group tp x cp: context parallelism's ring attention. */
typedef struct cfit_sim_exchange {
    int nodes;                      /* nodes of t used */
    int k;                          /* ranks per node */
    long stride;                    /* ranks between a sender and its receiver (0 = k) */
    long group;                     /* consecutive ranks per group (0 = all) */
    double bw_bytes_per_s;          /* per-GPU rate the time is compared with (0 = t's link rate) */
    double latency_s;               /* per-message latency of the longest route (0 = none) */
} cfit_sim_exchange;

/* How much slower the exchange of bytes[i] per flow runs on t than with every flow alone at
 * bw_bytes_per_s, for nsizes sizes from one max-min solution: factor[i] = T(b) / (b / bw +
 * latency_s), T(b) the slowest flow's b / its rate + latency_s x its route latency / the longest
 * route's (rates scaled by bw / t's link rate), at least 1.  Small messages thus tend to 1 (the
 * latency dominates), large ones to the rate ratio.  factor[i] = 1 when fewer than 2 nodes
 * remain or no flow leaves its rank.  Errors as cfit_sim_collective; on an error the factors
 * are not a result (callers must not use them as 1). */
CFIT_API int cfit_sim_internode_curve(const cfit_topo *t, const cfit_sim_exchange *x, int nsizes, const double *bytes,
                             double *factor, cfit_diag *d);
/* The same on a caller-owned state (its topology): what `plan --topology` calls per exchange. */
CFIT_API int cfit_sim_state_curve(cfit_sim_state *s, const cfit_sim_exchange *x, int nsizes, const double *bytes,
                         double *factor, cfit_diag *d);

#ifdef __cplusplus
}
#endif
#endif
