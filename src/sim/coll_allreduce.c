/* coll_allreduce.c - all-reduce schedules: ring, double binary tree, Rabenseifner, hierarchical.
 *
 * size is the per-rank vector (nccl-tests).  Closed forms on a non-blocking network with link
 * rate B and per-path latency a (docs/sim.md "Collectives"; Thakur, Rabenseifner, Gropp 2005):
 *   ring          reduce-scatter + all-gather: 2(n-1) steps of size/n: 2(n-1)(a + size/(nB))
 *   rabenseifner  recursive halving then doubling, n = 2^k: 2 lg n a + 2 (n-1)/n size/B; other n
 *                 first fold the r = n - 2^k extra ranks in (ranks 2i -> 2i+1, i < r, whole
 *                 vector) and hand the result back at the end (2i+1 -> 2i): MPICH's scheme
 *   tree          NCCL's double binary tree, pipelined: two heap-ordered binary trees over the
 *                 ranks (the second over the ranks reversed, so a leaf of one is inside the
 *                 other), each reducing then broadcasting size/2; in the pipelined steady state
 *                 every tree edge carries size/2 up and size/2 down at once, so it is one step of
 *                 4(n-1) flows plus a fill of 2 x depth path latencies: with m the most tree
 *                 flows on one rank's link, m size/(2B) + 2 floor(lg n) a (m = 4 for n >= 4)
 *   hierarchical  intra-node ring reduce-scatter (g-1 steps of size/g), inter-node ring
 *                 all-reduce of size/g among the nodes' same-local-rank GPUs (g rings at once,
 *                 2(N-1) steps of size/(gN)), intra-node ring all-gather; g ranks per node (the
 *                 topology's gpus_per_node groups hosts into nodes), every node the same g
 */
#include "sim/sim_internal.h"

#include <stdlib.h>
#include <string.h>

static int *ialloc(size_t n) { return malloc((n ? n : 1) * sizeof(int)); }

static int ring(cfit__sim *s, double bytes)
{
    int n = cfit__sim_ranks(s);
    int *src = ialloc((size_t)n * 2);
    if (!src)
        return CFIT_ENOMEM;
    cfit__sim_shift(n, 1, src, src + n);
    int rc = cfit__sim_step(s, n, src, src + n, bytes / n, 2L * (n - 1), 1);
    free(src);
    return rc;
}

static int tree(cfit__sim *s, double bytes)
{
    int n = cfit__sim_ranks(s);
    int *src = ialloc((size_t)n * 8), *dst = src + (size_t)n * 4;
    if (!src)
        return CFIT_ENOMEM;
    int m = 0;
    for (int pos = 1; pos < n; pos++) {
        int parent = (pos - 1) / 2;
        /* tree A: rank = position; tree B: rank = n-1-position */
        int ca = pos, pa = parent, cb = n - 1 - pos, pb = n - 1 - parent;
        src[m] = ca, dst[m++] = pa;   /* reduce up */
        src[m] = pa, dst[m++] = ca;   /* broadcast down */
        src[m] = cb, dst[m++] = pb;
        src[m] = pb, dst[m++] = cb;
    }
    int depth = 0;
    while ((2 << depth) <= n)
        depth++;
    int rc = cfit__sim_step(s, m, src, dst, bytes / 2, 1, 2.0 * depth);
    free(src);
    return rc;
}

/* Recursive halving (mask 1, 2, ...: size/2, size/4, ...) then recursive doubling back, among
 * the p = 2^k ranks ids[0..p-1]. */
static int halving_doubling(cfit__sim *s, const int *ids, int p, double bytes, int *src, int *dst)
{
    int k = 0;
    while ((1 << k) < p)
        k++;
    int rc = CFIT_EOK;
    for (int phase = 0; phase < 2 && !rc; phase++) {
        for (int j = 0; j < k && !rc; j++) {
            int step = phase == 0 ? j : k - 1 - j;
            int mask = 1 << step;
            for (int q = 0; q < p; q++)
                src[q] = ids[q], dst[q] = ids[q ^ mask];
            rc = cfit__sim_step(s, p, src, dst, bytes / (double)(2 << step), 1, 1);
        }
    }
    return rc;
}

static int rabenseifner(cfit__sim *s, double bytes)
{
    int n = cfit__sim_ranks(s);
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    int r = n - p;
    int *ids = ialloc((size_t)n * 3), *src = ids + n, *dst = ids + 2 * n;
    if (!ids)
        return CFIT_ENOMEM;
    int rc = CFIT_EOK;
    for (int i = 0; i < r; i++)
        src[i] = 2 * i, dst[i] = 2 * i + 1;
    if (r)
        rc = cfit__sim_step(s, r, src, dst, bytes, 1, 1);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (i >= 2 * r || (i & 1))
            ids[m++] = i;
    if (!rc)
        rc = halving_doubling(s, ids, p, bytes, src, dst);
    for (int i = 0; i < r; i++)
        src[i] = 2 * i + 1, dst[i] = 2 * i;
    if (r && !rc)
        rc = cfit__sim_step(s, r, src, dst, bytes, 1, 1);
    free(ids);
    return rc;
}

/* Group ranks into nodes (host / gpus_per_node), nodes in order of their first rank: local[node
 * * g + j] = the j-th rank on that node.  CFIT_EINVALID unless every node holds the same g. */
static int group_nodes(cfit__sim *s, int **local_out, int *g_out, int *nodes_out)
{
    int n = cfit__sim_ranks(s), gpn = cfit__sim_gpus_per_node(s);
    int maxnode = 0;
    for (int r = 0; r < n; r++)
        if (cfit__sim_host(s, r) / gpn > maxnode)
            maxnode = cfit__sim_host(s, r) / gpn;
    int *count = calloc((size_t)maxnode + 1, sizeof *count), *slot = ialloc((size_t)maxnode + 1);
    int *local = ialloc((size_t)n);
    if (!count || !slot || !local) {
        free(count), free(slot), free(local);
        return CFIT_ENOMEM;
    }
    int nodes = 0;
    for (int r = 0; r < n; r++) {
        int node = cfit__sim_host(s, r) / gpn;
        if (count[node]++ == 0)
            slot[node] = nodes++;
    }
    int g = n / nodes, rc = CFIT_EOK;
    for (int node = 0; node <= maxnode && !rc; node++)
        if (count[node] && count[node] != g)
            rc = cfit_diag_set(cfit__sim_diag(s), CFIT_EINVALID, NULL, 0, 0,
                               "hierarchical all-reduce needs the same number of ranks on every node: node %d "
                               "has %d of the %d ranks on %d nodes",
                               node, count[node], n, nodes);
    if (!rc && g * nodes != n)
        rc = cfit_diag_set(cfit__sim_diag(s), CFIT_EINVALID, NULL, 0, 0,
                           "hierarchical all-reduce needs the same number of ranks on every node");
    memset(count, 0, ((size_t)maxnode + 1) * sizeof *count);
    for (int r = 0; r < n && !rc; r++) {
        int node = cfit__sim_host(s, r) / gpn;
        local[slot[node] * g + count[node]++] = r;
    }
    free(count), free(slot);
    if (rc) {
        free(local);
        return rc;
    }
    *local_out = local, *g_out = g, *nodes_out = nodes;
    return CFIT_EOK;
}

static int hierarchical(cfit__sim *s, double bytes)
{
    int *local, g, nodes;
    int rc = group_nodes(s, &local, &g, &nodes);
    if (rc)
        return rc;
    int n = cfit__sim_ranks(s);
    int *src = ialloc((size_t)n * 2), *dst = src ? src + n : NULL;
    if (!src) {
        free(local);
        return CFIT_ENOMEM;
    }
    int m = 0;
    for (int node = 0; node < nodes; node++)   /* intra-node rings */
        for (int j = 0; j < g; j++)
            src[m] = local[node * g + j], dst[m++] = local[node * g + (j + 1) % g];
    if (g > 1)   /* reduce-scatter */
        rc = cfit__sim_step(s, m, src, dst, bytes / g, g - 1, 1);
    if (!rc && nodes > 1) {
        int k = 0;
        for (int j = 0; j < g; j++)
            for (int node = 0; node < nodes; node++)
                src[k] = local[node * g + j], dst[k++] = local[((node + 1) % nodes) * g + j];
        rc = cfit__sim_step(s, k, src, dst, bytes / g / nodes, 2L * (nodes - 1), 1);
        m = 0;
        for (int node = 0; node < nodes; node++)
            for (int j = 0; j < g; j++)
                src[m] = local[node * g + j], dst[m++] = local[node * g + (j + 1) % g];
    }
    if (!rc && g > 1)   /* all-gather: the same rings */
        rc = cfit__sim_step(s, m, src, dst, bytes / g, g - 1, 1);
    free(src);
    free(local);
    return rc;
}

static int run(cfit__sim *s, cfit_algo a, double bytes)
{
    switch (a) {
    case CFIT_ALGO_RING: return ring(s, bytes);
    case CFIT_ALGO_TREE: return tree(s, bytes);
    case CFIT_ALGO_RABENSEIFNER: return rabenseifner(s, bytes);
    case CFIT_ALGO_HIERARCHICAL: return hierarchical(s, bytes);
    default: return cfit__sim_no_algo(s, CFIT_COLL_ALLREDUCE, a, "ring, tree, rabenseifner or hierarchical");
    }
}

const cfit__coll cfit__coll_allreduce = {CFIT_COLL_ALLREDUCE, run};
