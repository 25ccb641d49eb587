/* collective.c - the collective registry (collective.h): names, nccl-tests' size and bus factor,
 * ring steps, one entry per collective.
 *
 * It lives in src/base, below sim, bench and core, because all of them read it (the simulator's
 * busbw, the benchmark's algbw and busbw, the calibration readers' names and step counts) and
 * none may depend on another for it; the schedules stay with their engines (src/sim/coll_*.c,
 * src/bench/coll_*.c), each engine's table indexed by cfit_collective.
 *
 * Facts: nccl-tests (https://github.com/NVIDIA/nccl-tests) src/<nccl_name>.cu, GetCollByteCount
 * (what size counts) and GetBw (the bus factor), derived in its doc/PERFORMANCE.md.
 */
#include "clusterfit/collective.h"

#include <stdio.h>
#include <string.h>

static double per_one(int n) { (void)n; return 1; }
static double per_ranks(int n) { return n; }
static double per_peers(int n) { return n - 1; }        /* hypercube.cu: count x (n-1) */

static double bus_one(int n) { (void)n; return 1; }
static double bus_ring(int n) { return (double)(n - 1) / n; }
static double bus_allreduce(int n) { return 2.0 * (n - 1) / n; }

static int steps_allreduce(int n) { return 2 * (n - 1); }   /* reduce-scatter + all-gather */
static int steps_ring(int n) { return n - 1; }
static int steps_one(int n) { (void)n; return 1; }

/* The modelled collectives in cfit_collective order, then the unmodelled (no ring_steps). */
static const cfit_coll_info colls[] = {
    {CFIT_COLL_ALLREDUCE, "allreduce", "all_reduce", "all-reduce", 1, per_one, bus_allreduce, steps_allreduce, 1},
    {CFIT_COLL_ALLGATHER, "allgather", "all_gather", "all-gather", 0, per_ranks, bus_ring, steps_ring, 1},
    {CFIT_COLL_REDUCESCATTER, "reducescatter", "reduce_scatter", "reduce-scatter", 1, per_ranks, bus_ring,
     steps_ring, 1},
    {CFIT_COLL_ALLTOALL, "alltoall", "alltoall", "all-to-all", 0, per_ranks, bus_ring, steps_ring, 1},
    {CFIT_COLL_SENDRECV, "sendrecv", "sendrecv", "send-recv", 0, per_one, bus_one, steps_one, 1},
    /* alltoallv.cu (nccl-tests 2.19.6): size = what one rank sends in all (count x n x element),
     * busbw = algbw x (n-1)/n, algbw from the rank sending or receiving most; pairwise steps */
    {CFIT_COLL_ALLTOALLV, "alltoallv", "alltoallv", "all-to-all-v", 0, per_ranks, bus_ring, steps_ring, 0},
    {CFIT_COLL_COUNT, "broadcast", "broadcast", "broadcast", 0, per_one, bus_one, NULL, 0},
    {CFIT_COLL_COUNT, "reduce", "reduce", "reduce", 1, per_one, bus_one, NULL, 0},
    {CFIT_COLL_COUNT, "gather", "gather", "gather", 0, per_ranks, bus_ring, NULL, 0},
    {CFIT_COLL_COUNT, "scatter", "scatter", "scatter", 0, per_ranks, bus_ring, NULL, 0},
    {CFIT_COLL_COUNT, "hypercube", "hypercube", "hypercube all-gather", 0, per_peers, bus_one, NULL, 0},
};
#define NCOLLS ((int)(sizeof colls / sizeof colls[0]))

int cfit_coll_entries(void) { return NCOLLS; }

const cfit_coll_info *cfit_coll_entry(int i) { return i >= 0 && i < NCOLLS ? &colls[i] : NULL; }

const cfit_coll_info *cfit_coll_info_of(cfit_collective c)
{
    return (unsigned)c < CFIT_COLL_COUNT ? &colls[c] : NULL;
}

const char *cfit_collective_name(cfit_collective c)
{
    return (unsigned)c < CFIT_COLL_COUNT ? colls[c].name : "?";
}

double cfit_coll_bus_factor(cfit_collective c, int n)
{
    return (unsigned)c < CFIT_COLL_COUNT && n > 0 ? colls[c].bus_factor(n) : 0;
}

/* name is stem or stem + "_perf". */
static int is_binary_of(const char *name, const char *stem)
{
    size_t k = strlen(stem);
    return strncmp(name, stem, k) == 0 && (name[k] == '\0' || strcmp(name + k, "_perf") == 0);
}

const cfit_coll_info *cfit_coll_find(const char *name)
{
    for (int i = 0; name && i < NCOLLS; i++)
        if (strcmp(name, colls[i].name) == 0 || is_binary_of(name, colls[i].nccl_name))
            return &colls[i];
    return NULL;
}

const char *cfit_coll_list(char *buf, size_t len, int nccl, const char *also)
{
    size_t at = 0;
    int items = CFIT_COLL_COUNT + (also != NULL);
    if (len)
        buf[0] = '\0';
    for (int i = 0; i < items && at < len; i++) {
        const char *sep = i == 0 ? "" : i == items - 1 ? " or " : ", ";
        const char *name = i == CFIT_COLL_COUNT ? also : nccl ? colls[i].nccl_name : colls[i].name;
        int k = snprintf(buf + at, len - at, "%s%s%s", sep, name, nccl && i < CFIT_COLL_COUNT ? "_perf" : "");
        at += k > 0 ? (size_t)k : 0;
    }
    return buf;
}

int cfit_collective_parse(const char *name, cfit_collective *out, cfit_diag *d)
{
    const cfit_coll_info *e = cfit_coll_find(name);
    char list[160];
    cfit_coll_list(list, sizeof list, 0, NULL);
    if (e && e->id != CFIT_COLL_COUNT)
        return *out = e->id, CFIT_EOK;
    *out = CFIT_COLL_ALLREDUCE;
    if (e)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "collective '%s' is not modelled (use %s)", name, list);
    const char *names[CFIT_COLL_COUNT];
    for (int c = 0; c < CFIT_COLL_COUNT; c++)
        names[c] = colls[c].name;
    const char *near = name ? cfit_suggest(name, names, CFIT_COLL_COUNT) : NULL;
    if (near)
        return cfit_diag_set(d, CFIT_EUNKNOWN, NULL, 0, 0, "unknown collective '%s' (did you mean '%s'?)", name, near);
    return cfit_diag_set(d, CFIT_EUNKNOWN, NULL, 0, 0, "unknown collective '%s' (expected %s)", name ? name : "",
                         list);
}
