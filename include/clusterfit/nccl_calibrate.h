/* nccl_calibrate.h - the network terms of NCCL's cost model (nccl.h) solved from a measured run.
 *
 * A measured collective (an nccl-tests log or `clusterfit bench COLLECTIVE --json`, read by
 * calibration.h) gives two numbers about the network: the busbw of its largest size and its fixed
 * time (the fit's alpha, the time at size 0).  The model has two network terms per node: the
 * achievable rate of one NIC (cfit_nccl_system.nic_bw) and the latency each network hop adds
 * beyond NCCL's InfiniBand constants (net_extra_latency_s).  cfit_nccl_fit_network() sets both so
 * that the model, run on the measured run's own hardware and shape with NCCL's tuner (every
 * algorithm and protocol), reproduces the two numbers: a bisection on each term (the model's
 * busbw only grows with nic_bw, its time only grows with the extra latency), alternated until
 * both hold.  In the ring's network-bound regime this is nic_bw = busbw / NICs per node;
 * docs/sim.md "Calibration" derives it and the other cases.
 *
 * Units: bytes, seconds, bytes per second per direction.
 */
#ifndef CLUSTERFIT_NCCL_CALIBRATE_H
#define CLUSTERFIT_NCCL_CALIBRATE_H

#include "clusterfit/calibration.h"
#include "clusterfit/nccl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a run measured (calibration.h fills these: bw_size_bytes, bw_bytes_per_s; lat_size_bytes
 * and latency_s x steps, which is the fit's alpha for an nccl-tests log). */
typedef struct cfit_nccl_measured {
    cfit_collective coll;          /* the collective it ran */
    double bw_size_bytes;          /* the size its busbw was taken at (> 0) */
    double busbw_bytes_per_s;      /* busbw measured there (> 0) */
    double lat_size_bytes;         /* the size its fixed time was taken at (0: a fit's intercept) */
    double lat_time_s;             /* the time there (> 0) */
} cfit_nccl_measured;

typedef struct cfit_nccl_network_fit {
    double nic_bw;                 /* per NIC per direction, solved (bytes/s) */
    double net_extra_latency_s;    /* per network hop beyond NCCL's constants, solved (>= 0) */
    double sharp_bw;               /* per NIC through switch SHARP: nic_bw x the catalog's SHARP/plain
                                      ratio of the fabric (0 when it has no SHARP) */
    int latency_floor;             /* 1: the measured time is at or below the model's with no extra
                                      latency, so the extra stays 0 (NCCL's constants already cover it) */
    double model_busbw_bytes_per_s;/* the model's busbw at bw_size_bytes with the solved terms */
    double model_lat_time_s;       /* the model's time at lat_size_bytes with the solved terms */
} cfit_nccl_network_fit;

/* Solve the network terms on sys, the measured run's system (nodes >= 2, its NICs; the other
 * terms are kept, nic_bw and sharp_bw give the SHARP ratio).  Errors, d->msg saying why:
 * CFIT_EINVALID - one node, a bad measurement, or a busbw the model cannot reach with any NIC
 * rate (the node, not the network, limits it: d->msg names the model's ceiling) or only below
 * 1 MB/s per NIC (the largest size is latency, not bandwidth). */
CFIT_API int cfit_nccl_fit_network(const cfit_nccl_system *sys, const cfit_nccl_measured *m, cfit_nccl_network_fit *out,
                          cfit_diag *d);

/* Put the solved terms into s (a system on the same fabric): nic_bw, net_extra_latency_s and,
 * where s has SHARP, sharp_bw. */
CFIT_API void cfit_nccl_apply_network(cfit_nccl_system *s, const cfit_nccl_network_fit *f);

/* The run a calibration file measured, on catalog hardware, with its network terms solved: the
 * file's hosts as nodes and its ranks / hosts per node (the same count on every host, at most the
 * node's GPUs), GPU g on scale-up fabric up in node type `node`, scale-out fabric net, nics > 0
 * the NICs its ranks used (else the node's share, as cfit_nccl_system_from_catalog), p2p_off >= 0
 * overriding the node's P2P.  Fills *run (the solved terms applied) and *fit.  A `bench pairs`
 * file or a collective the model has no NCCL path for is CFIT_EINVALID, like the solve's own
 * refusals, with d->msg saying why (no "FILE:" prefix: the caller names the file). */
CFIT_API int cfit_nccl_fit_calibration(const cfit_calibration *cal, const cfit_gpu *g, const cfit_fabric *up,
                              const cfit_node *node, const cfit_fabric *net, int nics, int p2p_off,
                              cfit_nccl_system *run, cfit_nccl_network_fit *fit, cfit_diag *d);

/* The solved terms in the catalog's units: a NIC's achievable rate (fit->nic_bw) and the per-step
 * latency whose excess over NCCL's InfiniBand constants is the solved extra latency
 * (CFIT_NCCL_REFERENCE_NET_LATENCY_S + net_extra_latency_s), for a planner that takes a fabric's
 * rate and latency. */
CFIT_API double cfit_nccl_fit_step_latency_s(const cfit_nccl_network_fit *fit);

#ifdef __cplusplus
}
#endif
#endif
