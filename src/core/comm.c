/* comm.c - the planner's collectives: NCCL's cost model (clusterfit/nccl.h) on each group's shape.
 *
 * A TP, CP, PP or DP group of n ranks, k of them in one scale-up link group, is one NCCL
 * communicator of ceil(n/k) "nodes" (link groups) of k ranks.  Every group of a layout runs at
 * once, so a group's ranks get their own scale-up ports and their own share of the node's NICs:
 * the system gives each rank one NIC of the per-GPU share the planner computes (fabric rate x
 * efficiency x NICs per node / GPUs per node / oversubscription, or --calibration's rate), which
 * makes a node's NIC bandwidth in the model k x that share (the last node's ranks' when the group
 * does not fill it).  A --topology's simulated contention is the system's net_slowdown (it slows
 * NCCL's inter-node bytes only).  The time is NCCL's tuner's: the least over every algorithm x
 * protocol the hardware supports (cfit_nccl_best_quiet), at the real message size.
 *
 * The search asks for the same few (collective, shape, factor, size) many times - one per layout
 * costed - so each answer is memoised in ctx in an open-addressing table keyed on exactly those
 * values: the planner's times are the model's own, never interpolated.
 */
#include "core/perf.h"
#include "clusterfit/calibration.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MEMO_MAX_ENTRIES (1 << 20)   /* a search asks for a few thousand; beyond this, no caching */

struct cfit__comm_memo {
    double bytes, slow, time_s;
    int coll, nodes, gpn, nics, used;
};

int cfit__comm_init(cfit__ctx *ctx, cfit_diag *d)
{
    const cfit_plan_request *r = ctx->req;
    cfit_fabric net = *ctx->out;
    if (r->calibration) {   /* a measured NIC: its rate is achieved as is, its latency replaces the catalog's */
        net.bw_bytes_per_s = r->calibration->bw_bytes_per_s;
        net.efficiency = 1.0;
        net.latency_s = r->calibration->latency_s;
    }
    /* two nodes so that the network fields are filled; every group sets its own shape */
    int rc = cfit_nccl_system_from_catalog(ctx->g, ctx->up, ctx->node, &net, 2, ctx->gpn, 0, &ctx->nccl, d);
    if (rc)
        return rc;
    ctx->nccl.nic_bw = ctx->nic_bw;   /* per rank: its share of the node's NICs (perf.c) */
    ctx->nccl.sharp_bw *= ctx->nic_share;
    return CFIT_EOK;
}

void cfit__comm_fini(cfit__ctx *ctx)
{
    free(ctx->memo);
    ctx->memo = NULL;
    ctx->nmemo = ctx->memo_cap = 0;
}

static uint64_t bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static uint64_t memo_hash(const struct cfit__comm_memo *k)
{
    uint64_t h = bits(k->bytes) * 0x9E3779B97F4A7C15ull;
    h ^= bits(k->slow) * 0xC2B2AE3D27D4EB4Full;
    h ^= ((uint64_t)(uint32_t)k->coll << 56) ^ ((uint64_t)(uint32_t)k->nodes << 24) ^
         ((uint64_t)(uint32_t)k->nics << 12) ^ (uint64_t)(uint32_t)k->gpn;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 29);
}

static int memo_same(const struct cfit__comm_memo *a, const struct cfit__comm_memo *b)
{
    return a->used && a->bytes == b->bytes && a->slow == b->slow && a->coll == b->coll && a->nodes == b->nodes &&
           a->gpn == b->gpn && a->nics == b->nics;
}

/* The slot of key k in a table of cap (a power of two) slots: its entry, or the empty slot it goes in. */
static struct cfit__comm_memo *memo_slot(struct cfit__comm_memo *tab, int cap, const struct cfit__comm_memo *k)
{
    size_t i = (size_t)memo_hash(k) & (size_t)(cap - 1);
    while (tab[i].used && !memo_same(&tab[i], k))
        i = (i + 1) & (size_t)(cap - 1);
    return &tab[i];
}

/* Double the table (64 slots at first); 0 when it cannot (then answers are not stored). */
static int memo_grow(cfit__ctx *ctx)
{
    int cap = ctx->memo_cap ? 2 * ctx->memo_cap : 64;
    if (cap > 2 * MEMO_MAX_ENTRIES)
        return 0;
    struct cfit__comm_memo *tab = calloc((size_t)cap, sizeof *tab);
    if (!tab)
        return 0;
    for (int i = 0; i < ctx->memo_cap; i++)
        if (ctx->memo[i].used)
            *memo_slot(tab, cap, &ctx->memo[i]) = ctx->memo[i];
    free(ctx->memo);
    ctx->memo = tab;
    ctx->memo_cap = cap;
    return 1;
}

/* NCCL's least time for collective c over `nodes` link groups of `gpn` ranks; a failure (hardware
 * the model cannot run) is kept as the ctx's first error, so no plan rests on it. */
static double nccl_time_s(cfit__ctx *ctx, const struct cfit__comm_memo *k)
{
    cfit_nccl_system s = ctx->nccl;
    s.nodes = k->nodes;
    s.gpus_per_node = k->gpn;
    s.nics = k->nics;
    s.net_slowdown = k->slow;
    cfit_nccl_estimate e;
    cfit_collective c = (cfit_collective)k->coll;
    if (!cfit_nccl_best_quiet(&s, c, CFIT_NCCL_ALL_ALGOS, CFIT_NCCL_ALL_PROTOS, k->bytes, &e))
        return e.time_s;
    cfit_diag d;   /* the tuner's own words for why */
    cfit_diag_clear(&d);
    int rc = cfit_nccl_best(&s, c, CFIT_NCCL_ALL_ALGOS, CFIT_NCCL_ALL_PROTOS, k->bytes, &e, &d);
    if (!ctx->topo_rc && rc) {
        ctx->topo_rc = rc;
        cfit_diag_set(&ctx->topo_diag, rc, NULL, 0, 0, "the NCCL model cannot run %s over %d x %d ranks: %s",
                      cfit_collective_name(c), k->nodes, k->gpn, d.msg);
    }
    return 0.0;
}

static double memo_time_s(const cfit__ctx *cctx, cfit_collective c, int nodes, int gpn, int nics, double slow,
                          double bytes)
{
    cfit__ctx *ctx = (cfit__ctx *)cctx;   /* the memo is the only state a const ctx changes */
    struct cfit__comm_memo k = {bytes, slow >= 1 ? slow : 1.0, 0.0, (int)c, nodes, gpn, nics, 1};
    if (ctx->memo_cap) {
        struct cfit__comm_memo *e = memo_slot(ctx->memo, ctx->memo_cap, &k);
        if (e->used)
            return e->time_s;
    }
    k.time_s = nccl_time_s(ctx, &k);
    if (2 * (ctx->nmemo + 1) > ctx->memo_cap && !memo_grow(ctx))
        return k.time_s;   /* kept at most half full */
    *memo_slot(ctx->memo, ctx->memo_cap, &k) = k;
    ctx->nmemo++;
    return k.time_s;
}

double cfit__comm_group_s(const cfit__ctx *ctx, cfit_collective c, long n, int k, double slow, double bytes)
{
    if (n <= 1 || bytes <= 0)
        return 0.0;
    k = k < 1 ? 1 : (long)k > n ? (int)n : k;
    long nodes = (n + k - 1) / k;
    /* a group that does not fill its last link group still spans it, and that group's few ranks
     * have only their NIC shares: the least of any node's, which NCCL's rings and trees wait on */
    int last = (int)(n - (nodes - 1) * k);
    nodes = nodes > 1 << 30 ? 1 << 30 : nodes;
    return memo_time_s(ctx, c, (int)nodes, k, nodes > 1 ? last : 0, nodes > 1 ? slow : 1.0, bytes);
}

double cfit__comm_p2p_s(const cfit__ctx *ctx, double bytes, int intra, double slow)
{
    if (bytes <= 0)
        return 0.0;
    /* inside a link group: two ranks of one node; across: one rank on each of two nodes, on its own NIC share */
    return intra ? memo_time_s(ctx, CFIT_COLL_SENDRECV, 1, 2, 0, 1.0, bytes)
                 : memo_time_s(ctx, CFIT_COLL_SENDRECV, 2, 1, 1, slow, bytes);
}
