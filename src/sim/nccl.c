/* nccl.c - NCCL's algorithms, protocols and tuner as a cost model (include/clusterfit/nccl.h).
 *
 * Structure and constants follow NCCL's tuning model (NVIDIA/nccl src/graph/tuning.cc, master of
 * 2026-06, commit 5067397): the base and per-hop latencies, the protocol efficiencies, the LL
 * bandwidth ceilings and the tree correction factors are NCCL's own numbers - properties of the
 * library, like a framework's, not of any measured run.  The bandwidth side is ours: NCCL takes
 * it from its topology search, which needs the machine; here each algorithm's bytes per resource
 * (a GPU's scale-up port, a node's NICs, a SHARP engine) are divided by what the catalog says
 * that resource achieves.  docs/sim.md "The NCCL model" has the derivations.
 */
#include "clusterfit/nccl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

enum { HW_NVLINK = 0, HW_PCI, HW_NET, HW_COUNT };

/* NCCL tuning.cc ncclTunerConstantsDefaults, microseconds, [algo][LL, LL128, Simple]; p2p is not
 * an NCCL tuner algorithm: it takes the ring's Simple figures (one step, all peers at once). */
static const double base_lat_us[CFIT_NCCL_ALGO_COUNT][CFIT_NCCL_PROTO_COUNT] = {
    {6.6, 14.0, 8.4}, /* ring */
    {6.8, 14.0, 8.4}, /* tree */
    {0, 0, 0},        /* nvls */
    {0, 0, 0},        /* nvlstree */
    {0, 0, 0},        /* collnetdirect */
    {0, 0, 0},        /* collnetchain */
    {8.0, 8.0, 8.0},  /* pat */
    {6.6, 14.0, 8.4}, /* p2p */
    {0, 0, 0},        /* msccl: its own floor (rccl_addon_time) */
    {0, 0, 0},        /* mscclpp */
};
static const double hw_lat_us[HW_COUNT][CFIT_NCCL_ALGO_COUNT][CFIT_NCCL_PROTO_COUNT] = {
    {{0.6, 1.9, 3.4}, {0.6, 1.25, 4.0}, {0, 0, 25}, {0, 0, 25}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 4.0}, {0.6, 1.9, 3.4}},
    {{1.0, 2.5, 5.7}, {1.0, 1.9, 4.0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 4.0}, {1.0, 2.5, 5.7}},
    {{2.7, 4.0, 14.0}, {5.0, 8.5, 14.0}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 31}, {0, 0, 30}, {0, 0, 14}, {2.7, 4.0, 14.0}},
};  /* msccl and mscclpp: zero (implicit), rccl_addon_time has their own floors */
/* llMaxBws, GB/s of bus bandwidth: one node by GPU generation; several nodes by CPU (Intel row:
 * the model assumes x86 Intel hosts, NCCL's 1 us network post overhead too). */
static const double ll_max_one_node_gbs[CFIT_ARCH_COUNT] = {
    [CFIT_ARCH_OTHER] = 87.7, [CFIT_ARCH_VOLTA] = 39.0, [CFIT_ARCH_AMPERE] = 87.7, [CFIT_ARCH_ADA] = 87.7,
    [CFIT_ARCH_HOPPER] = 141.0, [CFIT_ARCH_BLACKWELL] = 282.0, [CFIT_ARCH_CDNA3] = 141.0, [CFIT_ARCH_CDNA4] = 141.0,
    /* Turing (sm_75) takes NCCL's Volta row (compCapIndex: below 80 is Volta); CDNA2 as CDNA3 */
    [CFIT_ARCH_TURING] = 39.0, [CFIT_ARCH_CDNA2] = 141.0,
};
static const double ll_max_two_nodes_gbs = 39.0, ll_max_more_nodes_gbs = 20.4;
static const double net_overhead_us = 1.0;       /* getNetOverhead(), Intel x86; x3 with Simple */
/* treeCorrectionFactor[proto][log2(bytes / 64)], 64 B to 256 MiB: NCCL's measured tree shortfall */
static const double tree_correction[CFIT_NCCL_PROTO_COUNT][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
};
/* Channels NCCL runs for large messages on NVSwitch nodes with a NIC per GPU: comm_channels takes
 * it for every NVLink-class node. */
static const int typical_channels = 16;
/* The catalog's per-step latency of InfiniBand (5 us), which NCCL's network constants above were
 * measured on: a fabric's latency beyond it (EFA's SRD, TCP) is added to each network hop. */
static const double reference_net_latency_s = CFIT_NCCL_REFERENCE_NET_LATENCY_S;
/* Without GPU peer-to-peer NCCL's SHM transport stages every byte through host memory: the sender's
 * PCIe write and the receiver's read cross the CPU's root complex in both directions at once, which
 * CPUs handle poorly.  NVIDIA/nccl#384 (2 GPUs, PCIe 3.0 x16, NCCL_P2P_DISABLE=1): all-reduce
 * 3.9 GB/s busbw and all-gather 3.17 GB/s, while the one-directional broadcast and reduce reach
 * 10.3 and 9.6 GB/s (NCCL's maintainer: "some CPUs do not handle bidirectional traffic well").
 * That bound is the host's, not the link's, so a GPU's rate through host memory is that all-reduce,
 * 3.9 GB/s, whatever the PCIe generation (or the link's own rate where that is lower): RTX 4090
 * hosts on PCIe 4.0 measure 2.2-3.9 GB/s, no more than 2080 Ti ones on PCIe 3.0.  (CUDA's
 * p2pBandwidthLatencyTest, staged by copy engines, one direction at a time, shows more: 5.7 GB/s
 * on RTX 2080 Ti.) */
static const double host_path_bw = 3.9e9;
/* A point-to-point exchange across nodes (send-recv, all-to-all: NCCL's p2p path, its proxy posting
 * each chunk and the receiver flushing GPUDirect writes) takes at least 35 us on InfiniBand: the
 * 1 KiB and 64 KiB send-recv of 2 x 8 B200 on 8 x 400G NDR, 35.00 and 35.70 us, and 32.8-41.0 us
 * at 4 to 64 nodes (together-nccl-tests; bench/data/collectives.csv TOGB200SR3N2-1/2), where NCCL's
 * ring constants give 9.3.  A fabric slower than InfiniBand adds its extra latency. */
static const double p2p_net_floor_us = 35.0;

/* Chunks: NCCL moves a message through an algorithm's pipeline in chunks per channel (and, for
 * NVLS, per head), and shrinks the chunk for smaller messages (enqueue.cc calcCollChunking).  NVLS
 * channels: transport/nvls.cc NVLS_NCHANNELS_SM90 16, SM100 24 on one node (NVLS_NCHANNELS_SM100_NVL)
 * and 32 across nodes; chunk NCCL_NVLS_CHUNKSIZE 128 KiB, NVLSTree 64 KiB from 4 nodes
 * (NCCL_NVLSTREE_MAX_CHUNKSIZE's fallback).  Tree: one step of the protocol's buffer (NCCL_STEPS = 8
 * steps): Simple 4 MiB / 8, LL 512 KiB / 8 holding half data, LL128 4.9 MB / 8 holding 15/16 data
 * (device.h DEFAULT_*_BUFFSIZE). */
static const double nvls_max_chunk_bytes = 128 * 1024, nvls_tree_far_chunk_bytes = 64 * 1024;
static const double tree_simple_chunk_bytes = 524288, tree_ll_chunk_bytes = 32768, tree_ll128_chunk_bytes = 576000;
/* An all-to-all inside a node moves at 0.94 of the rate a ring gets from the same links: the median
 * ratio of seven single-node all-to-all runs at their largest size to that rate (GB200 and GB300
 * NVL72 trays, 8 and 64 GPUs, OCI GPU quickstarts and GCP's A4X; MI355X on its xGMI mesh, OCI:
 * 0.87-0.95; bench/data/collectives.csv A4XGB200-5, OCIGB200F/G, OCIGB300E/F, OCIMI355A2A,
 * OCIPOL1A2A), every peer's traffic crossing the switch (or mesh) at once where a ring's goes to
 * one neighbour.  Those rows are therefore not an independent test of it. */
static const double alltoall_node_efficiency = 0.94;
/* A send-recv inside a node runs on as many channels as NCCL gives one point-to-point operation
 * (enqueue.cc scheduleP2pTasksToPlan / addP2pToPlan), and each channel's block splits its warps
 * between the send and the receive (device/sendrecv.h), so one direction of a channel moves half
 * what a full channel does: NCCL's per-channel ceiling for its Simple kernels on one node
 * (perChMaxTreeBws, nccl_tree_gbs below; NVIDIA GPUs only: RCCL carries its own tables).
 * The communicator has 32 p2p channels on an NVLink-class node (pow2Up of its ring channels,
 * NCCL's logs on HGX boards: "32 p2p channels"), 2 on PCIe; a peer may take all of them (2 per
 * NVLink, paths.cc ncclTopoGetNchannels); one operation starts from the peer's share halved until
 * every rank fits (nChannelsMin x ranks <= 32), then doubles while its part exceeds 32 steps of
 * 512 KiB (NCCL_P2P_NVL_CHUNKSIZE; PCIe 128 KiB), up to the peer's maximum. */
static const int p2p_nvlink_channels = 32, p2p_pcie_channels = 2;

/* NCCL_MAX_NVLS_ARITY (device.h): the NVLS graph search stops at 32 heads (search.cc). */
static const int max_nvls_heads = 32;

static const char *const algo_names[CFIT_NCCL_ALGO_COUNT] = {
    "ring", "tree", "nvls", "nvlstree", "collnetdirect", "collnetchain", "pat", "p2p", "msccl", "mscclpp"};
static const char *const proto_names[CFIT_NCCL_PROTO_COUNT] = {"ll", "ll128", "simple"};

/* RCCL's add-ons on one node of 8 MI300-class GPUs, which its scheduler runs before NCCL's tuner
 * when they apply (docs/sim.md "RCCL's MSCCL and MSCCL++").  MSCCL: RCCL's algorithm files
 * tools/msccl-algorithms/allreduce-allpairs-8n-*.xml (8 ranks, out-of-place): LL up to 512 KiB,
 * Simple from 512 KiB to 16 MiB; each GPU reduces its eighth of the message from all 7 peers and
 * sends the result back, two all-pairs exchanges of S/8 per link (LL's flags double them).  MSCCL++:
 * init.cc MSCCLPP_THRESHOLD 1 MiB, built for gfx942 only (CMakeLists.txt), and only when every
 * rank has its own process (msccl_lifecycle.cc mscclppCommCompatible: allProcessHostsUnique);
 * one shot (every peer's whole buffer, one floor) or two shots (S/8 a link each way, two floors),
 * whichever is less.  Each peer has one xGMI link of the mesh: intra_bw / (GPUs - 1).  The floors
 * are the 1 KiB all-reduce of one source each: MSCCL 45.84 us (ROCm's MI300X acceptance guide,
 * one process driving 8 GPUs), MSCCL++ 13.11 us (the ROCm blog on RCCL and xGMI, a process per
 * GPU); bench/data/collectives.csv SADMI300-2, RBLOGXGMI-2. */
static const double msccl_max_bytes = 16777216, msccl_ll_max_bytes = 524288, mscclpp_max_bytes = 1048576;
static const double msccl_floor_s = 45.8e-6, mscclpp_floor_s = 13.1e-6;
static const int rccl_addon_gpus = 8;

/* One process driving g GPUs (nccl-tests -g g) launches g kernels per iteration from one host
 * thread, one device after another, so an iteration takes at least g launches (docs/sim.md "One
 * process, several GPUs").  Per launch: the median of one single-process 8-GPU log's three
 * smallest sizes over 8 - CUDA 35.76 us / 8 = 4.47 us (together-nccl-tests, H100, Ring:
 * 34.98 / 39.20 / 35.76 us at 8 B / 1 KiB / 64 KiB), HIP 44.35 us / 8 = 5.54 us (ROCm's MI300X
 * acceptance guide: 34.13 / 45.84 / 44.35 us); bench/data/collectives.csv TOGH100ARRING-1..3,
 * SADMI300-1..3.  With a process per GPU (mpirun -np 8) the same H100 takes 16.4 us at 1 KiB. */
static const double launch_cuda_s = 4.47e-6, launch_hip_s = 5.54e-6;

static double launch_bound_s(const cfit_nccl_system *s)
{
    if (s->gpus_per_process <= 1)
        return 0;
    int amd = s->arch == CFIT_ARCH_CDNA2 || s->arch == CFIT_ARCH_CDNA3 || s->arch == CFIT_ARCH_CDNA4;
    return s->gpus_per_process * (amd ? launch_hip_s : launch_cuda_s);
}

/* The run's time per iteration: the collective's, or the host's launches where those take longer
 * (NCCL's tuner picks by the collective's cost alone). */
static void apply_launch_bound(const cfit_nccl_system *s, double bytes, double bus, cfit_nccl_estimate *out)
{
    out->launch_s = launch_bound_s(s);
    if (out->launch_s > out->time_s)
        out->time_s = out->launch_s;
    out->algbw_bytes_per_s = out->time_s > 0 ? bytes / out->time_s : 0;
    out->busbw_bytes_per_s = out->algbw_bytes_per_s * bus;
}

const char *cfit_nccl_algo_name(cfit_nccl_algo a)
{
    return a >= 0 && a < CFIT_NCCL_ALGO_COUNT ? algo_names[a] : "?";
}

const char *cfit_nccl_proto_name(cfit_nccl_proto p)
{
    return p >= 0 && p < CFIT_NCCL_PROTO_COUNT ? proto_names[p] : "?";
}

int cfit_nccl_algo_parse(const char *name, cfit_nccl_algo *out, cfit_diag *d)
{
    for (int a = 0; a < CFIT_NCCL_ALGO_COUNT; a++)
        if (strcasecmp(name, algo_names[a]) == 0)
            return *out = (cfit_nccl_algo)a, CFIT_EOK;
    if (strcasecmp(name, "collnet") == 0)
        return *out = CFIT_NCCL_COLLNET_DIRECT, CFIT_EOK;
    return cfit_diag_set(d, CFIT_EUNKNOWN, NULL, 0, 0,
                         "unknown NCCL algorithm '%s' (ring, tree, nvls, nvlstree, collnetdirect, collnetchain, pat, "
                         "p2p, msccl, mscclpp or auto)", name);
}

/* "ring,tree", "^nvls,nvlstree" (all but), "auto": NCCL_ALGO / NCCL_PROTO's list syntax. */
static int parse_list(const char *text, int count, int (*one)(const char *, int *, cfit_diag *), unsigned *mask,
                      cfit_diag *d)
{
    if (strcasecmp(text, "auto") == 0)
        return *mask = (1u << count) - 1, CFIT_EOK;
    int exclude = text[0] == '^';
    char buf[128];
    if (snprintf(buf, sizeof buf, "%s", text + exclude) >= (int)sizeof buf)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "list '%.40s...' is too long", text);
    unsigned m = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int v, rc = one(tok, &v, d);
        if (rc)
            return rc;
        m |= 1u << v;
    }
    if (!m)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "empty list '%s'", text);
    *mask = exclude ? ((1u << count) - 1) & ~m : m;
    return *mask ? CFIT_EOK : cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "'%s' excludes everything", text);
}

static int one_algo(const char *name, int *v, cfit_diag *d)
{
    cfit_nccl_algo a;
    int rc = cfit_nccl_algo_parse(name, &a, d);
    *v = (int)a;
    return rc;
}

static int one_proto(const char *name, int *v, cfit_diag *d)
{
    cfit_nccl_proto p;
    int rc = cfit_nccl_proto_parse(name, &p, d);
    *v = (int)p;
    return rc;
}

int cfit_nccl_algo_mask(const char *text, unsigned *mask, cfit_diag *d)
{
    return parse_list(text, CFIT_NCCL_ALGO_COUNT, one_algo, mask, d);
}

int cfit_nccl_proto_mask(const char *text, unsigned *mask, cfit_diag *d)
{
    return parse_list(text, CFIT_NCCL_PROTO_COUNT, one_proto, mask, d);
}

int cfit_nccl_proto_parse(const char *name, cfit_nccl_proto *out, cfit_diag *d)
{
    for (int p = 0; p < CFIT_NCCL_PROTO_COUNT; p++)
        if (strcasecmp(name, proto_names[p]) == 0)
            return *out = (cfit_nccl_proto)p, CFIT_EOK;
    return cfit_diag_set(d, CFIT_EUNKNOWN, NULL, 0, 0, "unknown NCCL protocol '%s' (ll, ll128, simple or auto)", name);
}

static int log2i(long v)
{
    int l = 0;
    while (v >>= 1)
        l++;
    return l;
}

static int nvlink_class(const cfit_nccl_system *s)
{
    return s->intra == CFIT_FAMILY_NVLINK || s->intra == CFIT_FAMILY_XGMI;
}

static int check_system(const cfit_nccl_system *s, cfit_diag *d)
{
    if (s->nodes < 1 || s->gpus_per_node < 1 || (long)s->nodes * s->gpus_per_node < 2)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "a collective needs 2 or more ranks (%d nodes x %d GPUs)",
                             s->nodes, s->gpus_per_node);
    if (s->gpus_per_node > 1 && !(s->intra_bw > 0))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "the node's GPUs have no scale-up bandwidth");
    if (s->nodes > 1 && (s->nics < 1 || !(s->nic_bw > 0)))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "%d nodes need a scale-out fabric and at least one NIC",
                             s->nodes);
    if (s->nodes > 1 && !(s->net_slowdown >= 1))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "the network slowdown must be at least 1");
    if (s->gpus_per_process < 0 || s->gpus_per_process > s->gpus_per_node)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "GPUs per process must be 1 to the node's %d, not %d",
                             s->gpus_per_node, s->gpus_per_process);
    return CFIT_EOK;
}

/* RCCL's add-ons (msccl, mscclpp): where they run, and with which protocol. */
static int rccl_addon_supported(const cfit_nccl_system *s, cfit_collective c, cfit_nccl_algo a, cfit_nccl_proto p,
                                cfit_diag *d)
{
    const char *an = cfit_nccl_algo_name(a);
    int cdna3 = s->arch == CFIT_ARCH_CDNA3, cdna = cdna3 || s->arch == CFIT_ARCH_CDNA4;
    if (c != CFIT_COLL_ALLREDUCE)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "%s is RCCL's all-reduce, not %s", an,
                             cfit_collective_name(c));
    if (s->intra != CFIT_FAMILY_XGMI || !(a == CFIT_NCCL_MSCCLPP ? cdna3 : cdna))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "%s is RCCL's, on AMD %s GPUs", an,
                             a == CFIT_NCCL_MSCCLPP ? "MI300X/MI325X (gfx942)" : "MI300- and MI350-class");
    if (s->nodes != 1 || s->gpus_per_node != rccl_addon_gpus)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "%s runs on one node of %d GPUs (RCCL's algorithms are "
                             "for 8 ranks)", an, rccl_addon_gpus);
    if (a == CFIT_NCCL_MSCCLPP && s->gpus_per_process > 1)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "mscclpp needs a process per GPU; RCCL turns MSCCL++ "
                             "off when one process drives %d GPUs", s->gpus_per_process);
    if (a == CFIT_NCCL_MSCCLPP ? p != CFIT_NCCL_LL : p == CFIT_NCCL_LL128)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "%s runs with %s", an,
                             a == CFIT_NCCL_MSCCLPP ? "its own packets (ll)" : "ll or simple");
    return CFIT_EOK;
}

int cfit_nccl_supported(const cfit_nccl_system *s, cfit_collective c, cfit_nccl_algo a, cfit_nccl_proto p,
                        cfit_diag *d)
{
    const char *an = cfit_nccl_algo_name(a), *cn = cfit_collective_name(c);
    int multi = s->nodes > 1,
        p2p_coll = c == CFIT_COLL_ALLTOALL || c == CFIT_COLL_ALLTOALLV || c == CFIT_COLL_SENDRECV;
    if (a < 0 || a >= CFIT_NCCL_ALGO_COUNT || p < 0 || p >= CFIT_NCCL_PROTO_COUNT)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "no such NCCL algorithm or protocol");
    if (p2p_coll != (a == CFIT_NCCL_P2P))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             p2p_coll ? "%s runs on NCCL's point-to-point path only (algo p2p), not %s"
                                      : "%s has no %s algorithm (p2p is for alltoall, alltoallv and sendrecv)",
                             cn, an);
    if (a == CFIT_NCCL_MSCCL || a == CFIT_NCCL_MSCCLPP)
        return rccl_addon_supported(s, c, a, p, d);
    if (a == CFIT_NCCL_P2P && p == CFIT_NCCL_LL128)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "p2p runs with ll or simple, not ll128");
    if (a != CFIT_NCCL_RING && a != CFIT_NCCL_TREE && a != CFIT_NCCL_P2P && p != CFIT_NCCL_SIMPLE)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "%s runs only with the simple protocol", an);
    if (p == CFIT_NCCL_LL128 && s->gpus_per_node > 1 && !nvlink_class(s))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "ll128 needs NVLink between the node's GPUs (NCCL enables it only up to PATH_NVB)");
    if (p == CFIT_NCCL_LL128 && s->arch == CFIT_ARCH_OTHER)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "ll128 needs a known GPU generation (the gpu's arch)");
    /* RCCL: LL128 by default on gfx90a only (tuning.cc), on gfx950 across nodes (ROCm/rccl#1731) */
    if (p == CFIT_NCCL_LL128 && (s->arch == CFIT_ARCH_CDNA3 || (s->arch == CFIT_ARCH_CDNA4 && !multi)))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "RCCL runs ll128 on MI250X (gfx90a) and, across nodes, "
                             "on MI350-class GPUs (gfx950) only");
    int reduce_gather = c == CFIT_COLL_ALLGATHER || c == CFIT_COLL_REDUCESCATTER;
    switch (a) {
    case CFIT_NCCL_RING:
    case CFIT_NCCL_P2P:
        return CFIT_EOK;
    case CFIT_NCCL_TREE:
        return c == CFIT_COLL_ALLREDUCE ? CFIT_EOK
                                        : cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "tree is for allreduce only");
    case CFIT_NCCL_NVLS:
    case CFIT_NCCL_NVLS_TREE:
        if (!(s->nvls_bw > 0) || s->gpus_per_node < 2)
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                                 "%s needs NVLink SHARP (an NVSwitch with in-switch reduction, NVLink 4 or later) and "
                                 "2 or more GPUs per node; this node has %s",
                                 an, s->gpus_per_node < 2 ? "one GPU" : "none");
        if (a == CFIT_NCCL_NVLS_TREE)
            return !multi ? cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "nvlstree needs 2 or more nodes (nvls on one)")
                   : c != CFIT_COLL_ALLREDUCE ? cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "nvlstree is for allreduce only")
                                              : CFIT_EOK;
        if (reduce_gather && multi)
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "nvls runs %s within one node only", cn);
        if (multi && !(s->sharp_bw > 0))
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                                 "nvls across nodes needs CollNet (switch SHARP); use nvlstree");
        return CFIT_EOK;
    case CFIT_NCCL_COLLNET_DIRECT:
    case CFIT_NCCL_COLLNET_CHAIN:
        if (!multi || !(s->sharp_bw > 0))
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                                 "%s needs 2 or more nodes on a fabric whose switches reduce (SHARP); %s", an,
                                 multi ? "this fabric's have no sharp_efficiency in the catalog" : "this is one node");
        if (c != CFIT_COLL_ALLREDUCE)
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "%s is for allreduce only", an);
        if (a == CFIT_NCCL_COLLNET_DIRECT && s->gpus_per_node > 1 && !(s->nvls_bw > 0 || s->intra == CFIT_FAMILY_NVLINK))
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "collnetdirect needs an NVSwitch node");
        return CFIT_EOK;
    case CFIT_NCCL_PAT:
        if (!reduce_gather)
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "pat is for allgather and reducescatter only");
        if (s->gpus_per_node != 1 || !multi)
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "pat needs one GPU per node on 2 or more nodes");
        if (s->arch == CFIT_ARCH_OTHER)
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "pat needs a known GPU generation");
        return CFIT_EOK;
    default:
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "no such NCCL algorithm");
    }
}

/* NVLS channels NCCL opens (transport/nvls.cc), and the heads each spreads a message over: every
 * GPU of a node heads its slice on one node, the GPUs with a NIC across nodes. */
static double nvls_channels(const cfit_nccl_system *s)
{
    return s->arch == CFIT_ARCH_BLACKWELL ? (s->nodes > 1 ? 32 : 24) : 16;
}

static double nvls_heads(const cfit_nccl_system *s)
{
    int h = s->nodes > 1 && s->nics < s->gpus_per_node ? s->nics : s->gpus_per_node;
    h = h < max_nvls_heads ? h : max_nvls_heads;
    return h > 0 ? h : 1;
}

/* The NICs NVLSTree's traffic crosses nodes on.  Only the NVLS heads take part in the tree across
 * nodes (connect.cc connectNvls sets nvls.treeUp / treeDown on head ranks only; the other ranks
 * scatter to and gather from the heads over NVLink), and each head sends and receives on the NIC
 * the NVLS graph paired it with (search.cc getNvlsNetDev; ncclTopoSearchRecNet admits no duplicate
 * head).  So a node with more NIC-equipped GPUs than heads - an NVL72 rack's 72 NICs against
 * NCCL_MAX_NVLS_ARITY's 32 heads - leaves the others idle.  A GPU with several NICs keeps all of
 * them, as the node's other algorithms do here (network plugins that stripe a GPU's NICs). */
static double nvls_tree_nics(const cfit_nccl_system *s)
{
    double per_gpu = s->nics > s->gpus_per_node ? (double)s->nics / s->gpus_per_node : 1;
    double n = nvls_heads(s) * per_gpu;
    return n < s->nics ? n : s->nics;
}

/* The chunk NCCL moves per NVLS / NVLSTree step for a message of `bytes` (enqueue.cc
 * calcCollChunking: smaller chunks below fixed multiples of channels x heads x chunk). */
static double nvls_chunk_bytes(const cfit_nccl_system *s, cfit_nccl_algo a, double bytes)
{
    double ops = nvls_channels(s) * nvls_heads(s), c = nvls_max_chunk_bytes;
    if (a == CFIT_NCCL_NVLS_TREE) {
        if (s->nodes >= 4)
            c = nvls_tree_far_chunk_bytes;
        static const double times[] = {32, 16, 4, 1}, floor_bytes[] = {262144, 131072, 65536, 32768};
        for (int i = 0; i < 4; i++)
            if (bytes < times[i] * ops * c && c > floor_bytes[i])
                c = floor_bytes[i];
        return c;
    }
    static const double times[] = {64, 8, 2}, floor_bytes[] = {65536, 32768, 16384};
    for (int i = 0; i < 3; i++)
        if (bytes < times[i] * ops * c && c > floor_bytes[i])
            c = floor_bytes[i];
    return c;
}

static int ceil_log2i(long v)
{
    int l = 0;
    while ((1L << l) < v)
        l++;
    return l;
}

/* Pipeline fill: an algorithm whose chunks pass through a chain of stages - tree (up a chain of the
 * node's GPUs and the nodes' binary tree, then down), NVLS (scatter, reduce, broadcast, gather warp
 * groups: all_reduce.h runNvls*), NVLSTree (NVLS's four, then the tree across nodes) - finishes
 * after its bandwidth term by the time the first chunk takes to cross every stage but the slowest
 * (which the bandwidth term counts): the pipeline fills before it runs at the slowest stage's rate
 * and drains after.  A GPU-to-GPU hop is one stage, a network hop two (the sender's and the
 * receiver's proxy); NVLS's own stages move a chunk at the NVLink SHARP rate, a GPU hop at the
 * GPU's port rate, a network stage at the node's NICs' (or the switches' SHARP) rate.  Ring has no
 * fill: its ranks move their chunks in lockstep, a step per chunk, which its bandwidth term already
 * counts.  NCCL's tuner does not model the fill: it picks by latency + bandwidth alone
 * (cfit_nccl_best does the same), and the run pays the fill. */
typedef struct stages {
    double local, net;   /* stages on the node's side (GPU hops, NVLS) and on the network */
} stages;

static stages pipeline_stages(const cfit_nccl_system *s, cfit_nccl_algo a)
{
    int lg = ceil_log2i(s->nodes), g = s->gpus_per_node;
    switch (a) {
    case CFIT_NCCL_TREE: return (stages){2.0 * (g - 1), 4.0 * lg};
    case CFIT_NCCL_NVLS: return (stages){4, s->nodes > 1 ? 4 : 0};
    case CFIT_NCCL_NVLS_TREE: return (stages){4, 4.0 * lg};
    default: return (stages){0, 0};
    }
}

/* The chunk one channel moves per step, and the channels x heads moving chunks at once. */
static double pipeline_chunk_bytes(const cfit_nccl_system *s, cfit_nccl_algo a, cfit_nccl_proto p, double bytes,
                                   double channels, double *ops)
{
    if (a == CFIT_NCCL_NVLS || a == CFIT_NCCL_NVLS_TREE) {
        *ops = nvls_channels(s) * nvls_heads(s);
        return nvls_chunk_bytes(s, a, bytes);
    }
    *ops = channels;
    if (p == CFIT_NCCL_LL)
        return tree_ll_chunk_bytes;
    if (p == CFIT_NCCL_SIMPLE)
        return tree_simple_chunk_bytes;
    /* LL128 tree: calcCollChunking's two halving rules */
    double c = tree_ll128_chunk_bytes, ppn = s->gpus_per_node, steps = 1 + log2i(s->nodes) + 0.1 * ppn;
    while (floor(bytes / (*ops * c)) < steps * 64 / ppn && c > 131072)
        c /= 2;
    while (floor(bytes / (*ops * c)) < steps * 16 / ppn && c > 32768)
        c /= 2;
    return c;
}

/* What a GPU forwards at once on one channel: LL and LL128 receivers poll each line's flag and pass
 * the line on in the same trip of the kernel's loop, so a GPU stage moves a trip, not a step
 * (prims_ll.h LLGenericOp: NCCL_LL_MAX_NTHREADS 512 threads x one 8-byte data word; prims_ll128.h
 * GenericOp: 640 / 32 warps x a slice of 32 x 8 words less one flag word per 16-word line =
 * 1920 B).  Simple posts whole steps.  A network hop is a step whatever the protocol: the proxy
 * sends a step when the GPU posts it. */
static double gpu_granule_bytes(cfit_nccl_proto p, double step_bytes)
{
    double trip = p == CFIT_NCCL_LL ? 512.0 * 8 : p == CFIT_NCCL_LL128 ? 20.0 * 1920 : step_bytes;
    return trip < step_bytes ? trip : step_bytes;
}

/* spb: seconds per byte of the slowest resource; local_share and net_share: each side's seconds per
 * byte as a share of it (one of them 1).  Fill = the stages' chunk times but the slowest one. */
static double pipeline_fill_s(const cfit_nccl_system *s, cfit_nccl_algo a, cfit_nccl_proto p, double bytes, double spb,
                              double channels, double local_share, double net_share)
{
    stages st = pipeline_stages(s, a);
    if (st.local + st.net <= 1 || bytes <= 0)
        return 0;
    double ops, c = pipeline_chunk_bytes(s, a, p, bytes, channels, &ops);
    if (c * ops > bytes)
        c = bytes / ops;
    double local_s = gpu_granule_bytes(p, c) * ops * spb * local_share, net_s = c * ops * spb * net_share;
    double slowest = st.net > 0 && net_s > local_s ? net_s : st.local > 0 ? local_s : net_s;
    return st.local * local_s + st.net * net_s - slowest;
}

/* The largest of the given seconds-per-byte terms (0 terms are absent resources). */
static double worst(double a, double b)
{
    return a > b ? a : b;
}

/* Seconds per byte of nccl-tests size for algorithm a, before the protocol's efficiency, and
 * which resource sets it. */
static double per_byte(const cfit_nccl_system *s, cfit_collective c, cfit_nccl_algo a, int *net_bound,
                       double *local_share, double *net_share)
{
    double n = (double)s->nodes * s->gpus_per_node, g = s->gpus_per_node;
    int multi = s->nodes > 1, local = s->gpus_per_node > 1;
    double port = s->p2p_off && s->intra_bw > host_path_bw ? host_path_bw : s->intra_bw;
    double in = local ? 1.0 / port : 0;   /* one GPU's port */
    double net = multi ? s->net_slowdown / (s->nics * s->nic_bw) : 0;           /* one node's NICs */
    double nvls = s->nvls_bw > 0 ? 1.0 / s->nvls_bw : 0;
    double sharp = multi && s->sharp_bw > 0 ? s->net_slowdown / (s->nics * s->sharp_bw) : 0;
    double tree_up = s->nodes > 2 ? 2.0 : 1.0;   /* a double binary tree moves 2S per node, S with 2 nodes */
    double intra = 0, inter = 0;
    switch (a) {
    case CFIT_NCCL_RING: {
        double v = c == CFIT_COLL_ALLREDUCE ? 2 * (n - 1) / n : (n - 1) / n;
        intra = v * in, inter = v * net;
        break;
    }
    case CFIT_NCCL_TREE: intra = 2 * in, inter = tree_up * net; break;
    case CFIT_NCCL_NVLS:
        intra = c == CFIT_COLL_ALLREDUCE ? nvls : (n - 1) / n * nvls;
        inter = sharp;
        break;
    case CFIT_NCCL_NVLS_TREE:
        /* NCCL's tuner gives NVLS and NVLSTree one bus bandwidth (tuning.cc: both take bwIntra x
         * nvlsEfficiency x (nChannels - 1) / nChannels), so NVLSTree's node side carries the
         * node's NVLS busbw, not its algbw: the whole communicator's bus factor over the node's */
        intra = nvls * (multi ? (n - 1) / n * g / (g - 1) : 1.0);
        inter = multi ? tree_up * s->net_slowdown / (nvls_tree_nics(s) * s->nic_bw) : 0;
        break;
    case CFIT_NCCL_COLLNET_DIRECT: intra = 2 * (g - 1) / g * in, inter = sharp; break;
    case CFIT_NCCL_COLLNET_CHAIN: intra = 2 * in, inter = sharp; break;
    case CFIT_NCCL_PAT: inter = (n - 1) / n * net; break;
    case CFIT_NCCL_P2P:
        if (c == CFIT_COLL_SENDRECV) {    /* one GPU per node crosses, on its own NICs */
            double gpu_nics = s->nics > g ? s->nics / g : 1;
            intra = in, inter = multi ? s->net_slowdown / (gpu_nics * s->nic_bw) : 0;
        } else {                          /* all-to-all: (g-1)/n of S stays in the node */
            intra = (g - 1) / n * in / alltoall_node_efficiency, inter = g * (n - g) / n * net;
        }
        break;
    default: break;
    }
    *net_bound = inter > intra;
    double w = worst(intra, inter);
    *local_share = w > 0 ? intra / w : 0, *net_share = w > 0 ? inter / w : 0;
    return w;
}

/* NCCL's per-channel ceilings (tuning.cc perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws;
 * GB/s per channel), by compute capability (Volta, Ampere, Hopper, Blackwell) and 1 / 2 / 3+ nodes. */
static const double nccl_ring_ll128_gbs[4][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
static const double nccl_tree_ll128_gbs[4][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
static const double nccl_tree_gbs[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};

/* The row of those tables for a GPU generation, NCCL's compCapIndex (Turing takes Volta's row, Ada
 * Ampere's); -1 for AMD and other GPUs: RCCL carries its own tables. */
static int nccl_compcap_index(cfit_gpu_arch arch)
{
    switch (arch) {
    case CFIT_ARCH_VOLTA:
    case CFIT_ARCH_TURING: return 0;
    case CFIT_ARCH_AMPERE:
    case CFIT_ARCH_ADA: return 1;
    case CFIT_ARCH_HOPPER: return 2;
    case CFIT_ARCH_BLACKWELL: return 3;
    default: return -1;
    }
}

/* The per-channel ceiling NCCL's tuner puts on a ring or tree's bus bandwidth: busBw = min(busBw x
 * its refinement, nChannels x ceiling) for a ring with LL128 and a tree all-reduce (every protocol;
 * LL128 by its own row), which at NCCL's conversion to algorithm bandwidth (a ring's n / 2(n-1), a
 * tree's 1/2) is nccl-tests busbw x 1 (ring) or x n / (n - 1) (tree). 0: none. */
static double channel_ceiling_gbs(const cfit_nccl_system *s, cfit_collective c, cfit_nccl_algo a, cfit_nccl_proto p)
{
    int cc = nccl_compcap_index(s->arch), ni = s->nodes <= 2 ? s->nodes - 1 : 2;
    if (cc < 0)
        return 0;
    if (a == CFIT_NCCL_RING && p == CFIT_NCCL_LL128)
        return nccl_ring_ll128_gbs[cc][ni];
    if (a == CFIT_NCCL_TREE && c == CFIT_COLL_ALLREDUCE)
        return p == CFIT_NCCL_LL128 ? nccl_tree_ll128_gbs[cc][ni] : nccl_tree_gbs[cc][ni];
    return 0;
}

/* Protocol (and algorithm) efficiency on the bandwidth term: NCCL's model refinements. */
static double proto_efficiency(const cfit_nccl_system *s, cfit_nccl_algo a, cfit_nccl_proto p)
{
    switch (a) {
    case CFIT_NCCL_RING:
    case CFIT_NCCL_P2P:
        return p == CFIT_NCCL_LL ? 0.5 : p == CFIT_NCCL_LL128 ? 0.92 : 1.0;
    case CFIT_NCCL_TREE:
        return 0.92 * (p == CFIT_NCCL_LL ? 1.0 / 3.8 : p == CFIT_NCCL_LL128 ? (s->nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0) : 1.0);
    case CFIT_NCCL_PAT: return 0.75;
    case CFIT_NCCL_COLLNET_DIRECT: return s->arch >= CFIT_ARCH_HOPPER && s->arch <= CFIT_ARCH_BLACKWELL ? 0.85 : 1.0;
    default: return 1.0;
    }
}

/* Ring and tree channels of the communicator: NVLink-class nodes take the model's typical 16
 * (HGX A100 logs 24, nccl-tests#100; fewer channels would move the rule below by one size at
 * most); PCIe nodes 2, one channel the topology search finds (nccl#1358: "nChannels 1" on a
 * PCIe pair) duplicated by connect.cc ("Duplicate channels"). */
static double comm_channels(const cfit_nccl_system *s)
{
    return nvlink_class(s) ? typical_channels : 2;
}

/* The latency the run pays (run = 1) or the one NCCL's tuner sees (run = 0): the tuner knows neither
 * a slower NVLink fabric's hops (s->intra_extra_latency_s) nor that an LL128 ring across nodes pays
 * the network hop on every step. */
static double latency_us(const cfit_nccl_system *s, cfit_collective c, cfit_nccl_algo a, cfit_nccl_proto p,
                         double bytes, int run)
{
    int n = s->nodes * s->gpus_per_node, nodes = s->nodes, g = s->gpus_per_node;
    int intra_hw = nvlink_class(s) ? HW_NVLINK : HW_PCI;
    double intra = hw_lat_us[intra_hw][a][p] + (run ? s->intra_extra_latency_s * 1e6 : 0);
    /* one GPU per node exposes the network latency fully: NCCL uses the tree's figure */
    double inter = (g == 1 ? hw_lat_us[HW_NET][CFIT_NCCL_TREE][p] : hw_lat_us[HW_NET][a][p]) +
                   s->net_extra_latency_s * 1e6 * (p == CFIT_NCCL_SIMPLE ? 2 : 1);
    double lat = base_lat_us[a][p];
    switch (a) {
    case CFIT_NCCL_RING: {
        int steps = c == CFIT_COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
        int inter_steps = nodes == 1 ? 0 : c == CFIT_COLL_ALLREDUCE ? 2 * (nodes - 1) : nodes - 1;
        if (nodes > 1) {
            double ov = net_overhead_us * (p == CFIT_NCCL_SIMPLE ? 3 : 1);
            intra = intra > ov ? intra : ov;
        }
        double path = (steps - inter_steps) * intra + inter_steps * inter;
        /* Every step of a ring across nodes is a message on each channel's network connection,
         * sent once the step before it has arrived: with LL128 the run pays the network hop
         * (NCCL's own 4 us) per step, not only on the inter_steps of NCCL's sum (docs/sim.md
         * "Latency"). The fabric's extra latency stays on the path: it is not a per-step cost. */
        if (run && nodes > 1 && p == CFIT_NCCL_LL128) {
            double hop = hw_lat_us[HW_NET][a][p], per_step = hop > intra ? hop : intra;
            if (steps * per_step > path)
                path = steps * per_step;
        }
        lat += path;
        if (p == CFIT_NCCL_SIMPLE && nodes > 1 && c == CFIT_COLL_ALLREDUCE && bytes / (comm_channels(s) * n) >= 64)
            lat *= s->arch == CFIT_ARCH_VOLTA ? 1.9 : 1.4;   /* the ring's plateau */
        return lat;
    }
    case CFIT_NCCL_TREE: return lat + 2 * ((g - 1) * intra + log2i(nodes) * inter);
    case CFIT_NCCL_COLLNET_DIRECT: return lat + 2 * ((g > 1 ? 1 : 0) * intra + (g - 1) * 0.4) + inter;
    case CFIT_NCCL_COLLNET_CHAIN: return lat + 2 * (g - 1) * intra + inter;
    case CFIT_NCCL_NVLS: return intra + (nodes > 1 ? inter : 0);
    case CFIT_NCCL_NVLS_TREE: return lat + intra + 2 * log2i(nodes) * inter;
    case CFIT_NCCL_PAT: return lat + log2i(nodes) * (inter / 3.5) + n * 2.8;
    case CFIT_NCCL_P2P:
        if (nodes > 1) {   /* NCCL's point-to-point path across nodes: its measured floor */
            double floor_us = p2p_net_floor_us + s->net_extra_latency_s * 1e6;
            return lat + inter > floor_us ? lat + inter : floor_us;
        }
        return lat + intra;
    default: return lat;
    }
}

/* The channels NCCL runs a ring or tree collective of `bytes` on: enqueue.cc topoGetAlgoInfo drops
 * a channel while bytes < channels x threads x threshold.  Threads: device.h NCCL_LL_MAX_NTHREADS
 * 512, NCCL_LL128_MAX_NTHREADS 640, NCCL_SIMPLE_MAX_NTHREADS 512; thresholds (bytes per thread):
 * comm.h NCCL_LL_THREAD_THRESHOLD 8, times the ranks for ring LL (tuning.cc), LL128 8, Simple 64.
 * Each channel moves its share at the per-channel rate, so the bandwidth term grows by
 * comm_channels / channels_run, and the pipeline has that many chunks in flight.  (NCCL then halves
 * the last channel's threads; that regime is latency-bound, and the model leaves it out.)  NCCL's
 * tuner does not see it when it picks (tuner_time_s). */
static double channels_run(const cfit_nccl_system *s, cfit_nccl_algo a, cfit_nccl_proto p, double bytes)
{
    static const double max_threads[CFIT_NCCL_PROTO_COUNT] = {512, 640, 512};
    static const double thread_threshold_bytes[CFIT_NCCL_PROTO_COUNT] = {8, 8, 64};
    double per_thread = thread_threshold_bytes[p] *
                        (a == CFIT_NCCL_RING && p == CFIT_NCCL_LL ? s->nodes * s->gpus_per_node : 1);
    double nc = comm_channels(s);
    while (bytes < nc * max_threads[p] * per_thread && nc >= 2)
        nc--;
    return nc;
}

/* msccl and mscclpp at `bytes` (their structure is in the constants' comment above). */
static int rccl_addon_time(const cfit_nccl_system *s, cfit_nccl_algo a, cfit_nccl_proto p, double bytes,
                           cfit_nccl_estimate *out, cfit_diag *d)
{
    double g = s->gpus_per_node, link = s->intra_bw / (g - 1), floor_s, move_s;
    if (a == CFIT_NCCL_MSCCL) {
        if (bytes > msccl_max_bytes)
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "msccl's algorithms cover all-reduces up to 16 MiB");
        if ((p == CFIT_NCCL_LL) != (bytes <= msccl_ll_max_bytes))
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                                 "msccl runs %s at this size (ll up to 512 KiB, simple above)",
                                 bytes <= msccl_ll_max_bytes ? "ll" : "simple");
        floor_s = msccl_floor_s;
        move_s = 2 * bytes / (g * link) * (p == CFIT_NCCL_LL ? 2 : 1);
    } else {
        if (bytes > mscclpp_max_bytes)
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "mscclpp runs all-reduces up to 1 MiB");
        double one = mscclpp_floor_s + bytes / link, two = 2 * mscclpp_floor_s + 2 * bytes / (g * link);
        floor_s = one <= two ? mscclpp_floor_s : 2 * mscclpp_floor_s;
        move_s = one <= two ? bytes / link : 2 * bytes / (g * link);
    }
    memset(out, 0, sizeof *out);
    out->algo = a, out->proto = p;
    out->latency_s = floor_s;
    out->time_s = out->tuner_time_s = floor_s + move_s;
    apply_launch_bound(s, bytes, cfit_coll_bus_factor(CFIT_COLL_ALLREDUCE, (int)g), out);
    return CFIT_EOK;
}

/* The channels one send-recv of `bytes` runs on inside a node of n ranks (the rule above). */
static int p2p_sendrecv_channels(const cfit_nccl_system *s, double bytes)
{
    int nvl = nvlink_class(s), total = nvl ? p2p_nvlink_channels : p2p_pcie_channels, n = s->gpus_per_node;
    double step = nvl ? 524288.0 : 131072.0, min_part = step / 8, max_part = step * 32;
    int max_ch = total, min_ch = max_ch;
    while (min_ch * n > total && min_ch > 1)
        min_ch /= 2;
    double parts = ceil(bytes / min_part);
    int ch = parts < min_ch ? (parts < 1 ? 1 : (int)parts) : min_ch;
    double part = bytes / ch > min_part ? bytes / ch : min_part;
    while (part > max_part && ch <= max_ch / 2) {
        ch *= 2;
        part = bytes / ch;
    }
    return ch;
}

int cfit_nccl_time(const cfit_nccl_system *s, cfit_collective c, cfit_nccl_algo a, cfit_nccl_proto p,
                   double bytes, cfit_nccl_estimate *out, cfit_diag *d)
{
    int rc = check_system(s, d);
    if (rc)
        return rc;
    if (!(bytes >= 0) || c < 0 || c >= CFIT_COLL_COUNT)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "bad collective or size");
    if ((rc = cfit_nccl_supported(s, c, a, p, d)))
        return rc;
    if (a == CFIT_NCCL_MSCCL || a == CFIT_NCCL_MSCCLPP)
        return rccl_addon_time(s, a, p, bytes, out, d);
    int n = s->nodes * s->gpus_per_node, net_bound = 0;
    double local_share, net_share;
    double spb = per_byte(s, c, a, &net_bound, &local_share, &net_share) / proto_efficiency(s, a, p);
    if (a == CFIT_NCCL_TREE && c == CFIT_COLL_ALLREDUCE) {
        int l = log2i((long)(bytes / 64));
        if (bytes >= 64 && l < 24)
            spb /= tree_correction[p][l];
    }
    double bus = cfit_coll_bus_factor(c, n);
    if (p == CFIT_NCCL_LL && (a == CFIT_NCCL_RING || a == CFIT_NCCL_TREE)) {
        double cap = (s->nodes == 1 ? ll_max_one_node_gbs[s->arch] : s->nodes == 2 ? ll_max_two_nodes_gbs
                                                                                    : ll_max_more_nodes_gbs) * 1e9;
        if (spb < bus / cap)
            spb = bus / cap;
    }
    double ceiling = channel_ceiling_gbs(s, c, a, p);
    if (ceiling > 0) {
        double cap = comm_channels(s) * ceiling * 1e9 * (a == CFIT_NCCL_TREE ? (n - 1.0) / n : 1.0);
        if (spb < bus / cap)
            spb = bus / cap;
    }
    double tuner_spb = spb, channels = 0;
    int cc = nccl_compcap_index(s->arch);
    if (a == CFIT_NCCL_P2P && c == CFIT_COLL_SENDRECV && s->nodes == 1 && s->gpus_per_node > 1 && !s->p2p_off &&
        cc >= 0) {
        channels = p2p_sendrecv_channels(s, bytes);
        double cap = channels * nccl_tree_gbs[cc][0] / 2 * 1e9;   /* one node's Simple ceiling, one direction */
        if (spb < 1.0 / cap)
            spb = 1.0 / cap;
    }
    if (a == CFIT_NCCL_RING || a == CFIT_NCCL_TREE) {
        channels = channels_run(s, a, p, bytes);
        spb *= comm_channels(s) / channels;
    }
    memset(out, 0, sizeof *out);
    out->algo = a, out->proto = p;
    out->latency_s = latency_us(s, c, a, p, bytes, 1) * 1e-6;
    out->fill_s = pipeline_fill_s(s, a, p, bytes, spb, channels, local_share, net_share);
    out->time_s = out->latency_s + bytes * spb + out->fill_s;
    double tuner_latency_s = latency_us(s, c, a, p, bytes, 0) * 1e-6;
    out->tuner_time_s = tuner_latency_s + bytes * tuner_spb;
    apply_launch_bound(s, bytes, bus, out);
    out->net_bound = net_bound;
    return CFIT_EOK;
}

/* RCCL's scheduler runs MSCCL++, then MSCCL, before NCCL's tuner wherever they apply. */
static int scheduler_rank(cfit_nccl_algo a)
{
    return a == CFIT_NCCL_MSCCLPP ? 2 : a == CFIT_NCCL_MSCCL ? 1 : 0;
}

/* Whether the library takes a over b: RCCL's add-ons first, then NCCL's tuner by its own cost
 * (latency + bandwidth at full channels). */
static int tuner_prefers(const cfit_nccl_estimate *a, const cfit_nccl_estimate *b)
{
    int ra = scheduler_rank(a->algo), rb = scheduler_rank(b->algo);
    return ra != rb ? ra > rb : a->tuner_time_s < b->tuner_time_s;
}

int cfit_nccl_best(const cfit_nccl_system *s, cfit_collective c, unsigned algo_mask, unsigned proto_mask,
                   double bytes, cfit_nccl_estimate *out, cfit_diag *d)
{
    int rc = check_system(s, d);
    if (rc)
        return rc;
    int found = 0, why_simple = 0;
    char why[sizeof d->msg / 2] = "";
    if (!(algo_mask & CFIT_NCCL_ALL_ALGOS) || !(proto_mask & CFIT_NCCL_ALL_PROTOS))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "no algorithm or no protocol selected");
    for (int a = 0; a < CFIT_NCCL_ALGO_COUNT; a++)
        for (int p = 0; p < CFIT_NCCL_PROTO_COUNT; p++) {
            if (!(algo_mask & (1u << a)) || !(proto_mask & (1u << p)))
                continue;
            cfit_diag e;
            cfit_diag_clear(&e);
            cfit_nccl_estimate est;
            if (cfit_nccl_time(s, c, (cfit_nccl_algo)a, (cfit_nccl_proto)p, bytes, &est, &e)) {
                /* the reason of the first refused pair, preferring one with the protocol every
                 * algorithm runs (else "runs only with simple" hides "needs NVLink SHARP") */
                if (!why[0] || (p == CFIT_NCCL_SIMPLE && !why_simple)) {
                    snprintf(why, sizeof why, "%s/%s: %.200s", algo_names[a], proto_names[p], e.msg);
                    why_simple = p == CFIT_NCCL_SIMPLE;
                }
                continue;
            }
            if (!found || tuner_prefers(&est, out))
                *out = est;
            found = 1;
        }
    if (found)
        return CFIT_EOK;
    /* name what this hardware does run */
    char ok[256] = "";
    size_t len = 0;
    for (int a = 0; a < CFIT_NCCL_ALGO_COUNT; a++)
        for (int p = 0; p < CFIT_NCCL_PROTO_COUNT; p++)
            if (!cfit_nccl_supported(s, c, (cfit_nccl_algo)a, (cfit_nccl_proto)p, NULL) && len + 24 < sizeof ok)
                len += (size_t)snprintf(ok + len, sizeof ok - len, "%s%s/%s", len ? ", " : "", algo_names[a],
                                        proto_names[p]);
    return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "%s; this hardware runs %s with %s", why,
                         cfit_collective_name(c), len ? ok : "nothing");
}

/* A fabric's latency beyond the one NCCL's constants were measured on (never negative). */
static double latency_beyond(double latency_s, double reference_s)
{
    return latency_s > reference_s ? latency_s - reference_s : 0;
}

int cfit_nccl_system_from_catalog(const cfit_gpu *g, const cfit_fabric *up, const cfit_node *node,
                                  const cfit_fabric *net, int nodes, int gpus_per_node, int nics,
                                  cfit_nccl_system *out, cfit_diag *d)
{
    if (nodes < 1 || gpus_per_node < 1)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "nodes and GPUs per node must be at least 1");
    memset(out, 0, sizeof *out);
    out->nodes = nodes, out->gpus_per_node = gpus_per_node;
    out->arch = g->arch;
    out->intra = up ? up->family : CFIT_FAMILY_OTHER;
    double up_line = g->scaleup_bw_bytes_per_s > 0 ? g->scaleup_bw_bytes_per_s : up ? up->bw_bytes_per_s : 0;
    out->intra_bw = up ? up_line * up->efficiency : 0;
    out->nvls_bw = up && up->sharp_efficiency > 0 ? up_line * up->sharp_efficiency : 0;
    out->p2p_off = node ? node->p2p_off : 0;
    if (up && up->family == CFIT_FAMILY_NVLINK)
        out->intra_extra_latency_s = latency_beyond(up->latency_s, CFIT_NCCL_REFERENCE_NVLINK_LATENCY_S);
    out->net_slowdown = 1;
    if (nodes > 1 && net) {
        int node_gpus = node && node->gpus_per_node > 0 ? node->gpus_per_node : gpus_per_node;
        int node_nics = node ? node->nics_per_node : gpus_per_node;
        /* ranks on part of a node use the NICs beside their GPUs; nics > 0 says how many */
        long use = gpus_per_node < node_gpus ? (long)node_nics * gpus_per_node / node_gpus : node_nics;
        out->nics = nics > 0 ? nics : use > 0 ? (int)use : 1;
        out->nic_bw = net->bw_bytes_per_s * net->efficiency;
        out->net = net->family;
        out->net_extra_latency_s = latency_beyond(net->latency_s, reference_net_latency_s);
        out->sharp_bw = net->sharp_efficiency > 0 ? net->bw_bytes_per_s * net->sharp_efficiency : 0;
    }
    return CFIT_EOK;
}

int cfit_nccl_best_quiet(const cfit_nccl_system *s, cfit_collective c, unsigned algo_mask, unsigned proto_mask,
                         double bytes, cfit_nccl_estimate *out)
{
    int found = 0;
    for (int a = 0; a < CFIT_NCCL_ALGO_COUNT; a++)
        for (int p = 0; p < CFIT_NCCL_PROTO_COUNT; p++) {
            cfit_nccl_estimate est;
            if (!(algo_mask & (1u << a)) || !(proto_mask & (1u << p)) ||
                cfit_nccl_supported(s, c, (cfit_nccl_algo)a, (cfit_nccl_proto)p, NULL) ||
                cfit_nccl_time(s, c, (cfit_nccl_algo)a, (cfit_nccl_proto)p, bytes, &est, NULL))
                continue;
            if (!found || tuner_prefers(&est, out))
                *out = est;
            found = 1;
        }
    return found ? CFIT_EOK : CFIT_EINVALID;
}
