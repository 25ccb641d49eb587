/* nccl.h - how long NCCL takes for a collective: its algorithms, protocols and tuner.
 *
 * The model follows the structure of NCCL's own cost model (src/graph/tuning.cc): for every
 * algorithm x protocol pair the hardware supports, time = latency + bytes / bandwidth, and the
 * tuner runs the pair with the least time; the time a run takes adds the pipeline fill of the
 * algorithm's chunks, which NCCL's tuner does not model.  The latencies are NCCL's published
 * constants (base latency per algorithm and protocol, per-hop latency per link class NVLink / PCI /
 * network);
 * the bandwidth of each algorithm comes from the bytes it moves over each resource - a GPU's
 * scale-up port, a node's NICs, the NVLink SHARP or switch SHARP engine - divided by what that
 * resource achieves (catalog rate x catalog efficiency), times the protocol's efficiency.
 * docs/sim.md "The NCCL model" derives every term and gives its source.
 *
 * Units: bytes, seconds, bytes per second per direction.
 */
#ifndef CLUSTERFIT_NCCL_H
#define CLUSTERFIT_NCCL_H

#include "clusterfit/base.h"
#include "clusterfit/catalog.h"
#include "clusterfit/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NCCL's algorithms, then RCCL's two add-ons on one 8-GPU AMD node (docs/sim.md "RCCL's MSCCL and
 * MSCCL++"): msccl, the all-pairs all-reduce of RCCL's MSCCL algorithm files, and mscclpp,
 * MSCCL++'s one-shot / two-shot all-reduce for small messages. */
typedef enum cfit_nccl_algo {
    CFIT_NCCL_RING = 0, CFIT_NCCL_TREE, CFIT_NCCL_NVLS, CFIT_NCCL_NVLS_TREE, CFIT_NCCL_COLLNET_DIRECT,
    CFIT_NCCL_COLLNET_CHAIN, CFIT_NCCL_PAT, CFIT_NCCL_P2P, CFIT_NCCL_MSCCL, CFIT_NCCL_MSCCLPP, CFIT_NCCL_ALGO_COUNT
} cfit_nccl_algo;

typedef enum cfit_nccl_proto { CFIT_NCCL_LL = 0, CFIT_NCCL_LL128, CFIT_NCCL_SIMPLE, CFIT_NCCL_PROTO_COUNT } cfit_nccl_proto;

/* The per-step network latency NCCL's network constants were measured with (InfiniBand, the
 * catalog's 5 us): a fabric's latency beyond it is added to each network hop. */
#define CFIT_NCCL_REFERENCE_NET_LATENCY_S 5e-6
/* The catalog's per-step latency of an NVLink fabric with the NVSwitch on the baseboard (nvlink4,
 * nvlink5: 2 us), which NCCL's NVLink hop latencies were measured on. */
#define CFIT_NCCL_REFERENCE_NVLINK_LATENCY_S 2e-6

#define CFIT_NCCL_ALL_ALGOS ((1u << CFIT_NCCL_ALGO_COUNT) - 1)
#define CFIT_NCCL_ALL_PROTOS ((1u << CFIT_NCCL_PROTO_COUNT) - 1)

/* NCCL's spellings (NCCL_ALGO / NCCL_PROTO values, lower case): "ring", "tree", "nvls",
 * "nvlstree", "collnetdirect", "collnetchain", "pat", "p2p", and RCCL's "msccl", "mscclpp"; "ll",
 * "ll128", "simple". */
CFIT_API const char *cfit_nccl_algo_name(cfit_nccl_algo a);
CFIT_API const char *cfit_nccl_proto_name(cfit_nccl_proto p);
/* Name (case-insensitive; "collnet" = collnetdirect) to enum; CFIT_EUNKNOWN with the valid
 * names in d->msg otherwise. */
CFIT_API int cfit_nccl_algo_parse(const char *name, cfit_nccl_algo *out, cfit_diag *d);
CFIT_API int cfit_nccl_proto_parse(const char *name, cfit_nccl_proto *out, cfit_diag *d);

/* NCCL_ALGO / NCCL_PROTO's list syntax to a mask (bit 1 << enum): "auto" (all), "ring,tree",
 * "^nvls,nvlstree" (all but those).  CFIT_EUNKNOWN / CFIT_EINVALID with d->msg on a bad list. */
CFIT_API int cfit_nccl_algo_mask(const char *text, unsigned *mask, cfit_diag *d);
CFIT_API int cfit_nccl_proto_mask(const char *text, unsigned *mask, cfit_diag *d);

/* The hardware one communicator runs on: `nodes` nodes with `gpus_per_node` ranks each. */
typedef struct cfit_nccl_system {
    int nodes;                      /* >= 1 */
    int gpus_per_node;              /* ranks per node, >= 1 */
    cfit_gpu_arch arch;             /* selects NCCL's per-generation limits */
    cfit_fabric_family intra;       /* scale-up link class: nvlink, xgmi (NVLink class) or pcie */
    double intra_bw;                /* per GPU per direction, achievable (rate x efficiency) */
    double nvls_bw;                 /* per GPU per direction through NVLink SHARP; 0 = no NVLS */
    int p2p_off;                    /* PCIe without peer-to-peer: copies go through host memory */
    int nics;                       /* scale-out NICs a node's ranks use (0 when nodes == 1) */
    double nic_bw;                  /* per NIC per direction, achievable */
    cfit_fabric_family net;         /* ib, roce, efa, ... */
    double net_extra_latency_s;     /* per network hop beyond NCCL's (InfiniBand-measured) constants */
    double intra_extra_latency_s;   /* per GPU-to-GPU hop beyond NCCL's NVLink constants (a scale-up
                                       fabric slower than the on-board NVSwitch they were measured on) */
    double sharp_bw;                /* per NIC per direction through switch SHARP; 0 = no CollNet */
    double net_slowdown;            /* >= 1: the fabric's contention on the inter-node traffic (1 =
                                       non-blocking; sim --topology sets it from the flow engine) */
    int gpus_per_process;           /* GPUs one process drives (nccl-tests -g); 0 or 1 = a process
                                       per GPU, as training runs; RCCL's MSCCL++ needs that */
} cfit_nccl_system;

/* The estimate for one algorithm x protocol at one size. */
typedef struct cfit_nccl_estimate {
    cfit_nccl_algo algo;
    cfit_nccl_proto proto;
    double time_s;                  /* latency_s + bytes moved / bandwidth + fill_s (on the channels
                                       NCCL runs the size on), or launch_s where that is longer */
    double latency_s;               /* the size-independent part */
    double fill_s;                  /* the pipeline's fill: (stages - 1) chunk times of tree, NVLS,
                                       NVLSTree (0 for ring, p2p, PAT, CollNet); NCCL's tuner does
                                       not model it, so cfit_nccl_best picks by tuner_time_s */
    double tuner_time_s;            /* what NCCL's tuner costs the pair at, and picks by: latency_s
                                       without intra_extra_latency_s (NCCL's own NVLink constants) +
                                       the bandwidth term on all channels, no fill (a small message
                                       runs on fewer channels, enqueue.cc; the tuner does not see it) */
    double algbw_bytes_per_s;       /* nccl-tests algbw: size / time_s */
    double busbw_bytes_per_s;       /* algbw x the collective's bus factor */
    int net_bound;                  /* 1: the bandwidth term is set by the network, 0: by the node */
    double launch_s;                /* one process driving several GPUs (gpus_per_process > 1): the
                                       host's kernel launches per iteration, gpus_per_process x
                                       launch cost; time_s is at least this (0 otherwise) */
} cfit_nccl_estimate;

/* Whether algorithm a with protocol p runs collective c on s; when not, and d is given, d->msg
 * says why ("nvls needs NVLink SHARP (NVSwitch gen3 or later); ...").  NCCL's rules: NVLS,
 * NVLSTree and CollNet only with Simple; NVLS on one node (or with CollNet across nodes),
 * NVLSTree across nodes; CollNet needs switch SHARP; PAT for all-gather / reduce-scatter with
 * one GPU per node; tree, NVLS*, CollNet for all-reduce (NVLS also all-gather and reduce-scatter
 * on one node); all-to-all and send-recv run NCCL's point-to-point path (p2p) only; LL128 only
 * over NVLink-class links, and on AMD GPUs only where RCCL enables it (CDNA2; CDNA4 across nodes);
 * msccl and mscclpp only for all-reduce on one node of 8 CDNA3/CDNA4 GPUs (mscclpp: CDNA3, a
 * process per GPU), msccl with ll or simple, mscclpp with ll (its packets), each within its size
 * range (cfit_nccl_time refuses other sizes). */
CFIT_API int cfit_nccl_supported(const cfit_nccl_system *s, cfit_collective c, cfit_nccl_algo a, cfit_nccl_proto p,
                        cfit_diag *d);

/* The estimate of one pair.  Errors: CFIT_EINVALID (bad system, bytes < 0, or the pair not
 * supported, with d->msg as above). */
CFIT_API int cfit_nccl_time(const cfit_nccl_system *s, cfit_collective c, cfit_nccl_algo a, cfit_nccl_proto p,
                   double bytes, cfit_nccl_estimate *out, cfit_diag *d);

/* NCCL's tuner: the supported pair among algo_mask x proto_mask (bit 1 << enum) with the least
 * time by NCCL's own cost (tuner_time_s: latency + bandwidth, as tuning.cc has it); out->time_s
 * still includes the fill and the fewer channels the chosen pair pays.  CFIT_EINVALID when the masks leave no supported
 * pair (d->msg names the supported ones). */
CFIT_API int cfit_nccl_best(const cfit_nccl_system *s, cfit_collective c, unsigned algo_mask, unsigned proto_mask,
                   double bytes, cfit_nccl_estimate *out, cfit_diag *d);

/* cfit_nccl_best's choice without its diagnostics, for callers that ask many times (the planner):
 * the same pair (the first of least time in enum order), several times cheaper as refused pairs
 * are skipped unformatted.  CFIT_EINVALID on a bad system or size, or when the masks leave no
 * supported pair (cfit_nccl_best then says why). */
CFIT_API int cfit_nccl_best_quiet(const cfit_nccl_system *s, cfit_collective c, unsigned algo_mask, unsigned proto_mask,
                         double bytes, cfit_nccl_estimate *out);

/* The system of `nodes` nodes of `gpus_per_node` ranks of catalog GPU g, scale-up fabric up,
 * node type node (its NIC count, P2P) and scale-out fabric net (NULL when nodes == 1 is fine).
 * nics > 0 is the NICs a node's ranks use; else, with fewer ranks per node than the node holds,
 * they use their share of its NICs (at least one), and all of them otherwise.  Errors: CFIT_EINVALID (counts < 1). */
CFIT_API int cfit_nccl_system_from_catalog(const cfit_gpu *g, const cfit_fabric *up, const cfit_node *node,
                                  const cfit_fabric *net, int nodes, int gpus_per_node, int nics,
                                  cfit_nccl_system *out, cfit_diag *d);

#ifdef __cplusplus
}
#endif
#endif
