/* topo_fattree.c - k-ary three-level fat-tree (Al-Fares, Loukissas, Vahdat, SIGCOMM 2008).
 *
 * k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 core switches, k^3/4 host ports.
 * Each host port is one GPU's NIC (one NIC per GPU, as on DGX/HGX nodes); a node's gpus GPUs
 * take consecutive ports and share one scale-up switch, the last node may be partial.  Edge e
 * of a pod links to every aggregation switch of the pod; aggregation a links to cores
 * a*k/2 .. a*k/2 + k/2 - 1; core c links to aggregation c/(k/2) of every pod.
 * oversub=N tapers the tree at the leaf: each edge switch keeps k/2 host ports but only
 * u = k/(2N) uplinks, so a pod has u aggregation switches (each k/2 down, k/2 up) and there are
 * u*k/2 cores; the edge layer is N:1, everything above it non-blocking, the bisection is
 * hosts*bw/(2N), and pods see u*k/2 equal-cost paths between them ((k/2)^2 at N = 1).
 * Routing: all equal-cost shortest paths (ECMP), written straight from the structure (up to a
 * common ancestor and down); paths through failed links are dropped, and when none is left the
 * route falls back to the generic shortest-path search over the working links.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/topo_internal.h"

enum { K_K, K_OVERSUB, K_GPUS, NKEYS };

static const cfit__topo_key keys[NKEYS] = {
    [K_K] = {"k", 2, 1u << 20, NULL},
    [K_OVERSUB] = {"oversub", 1, 1u << 20, NULL},
    [K_GPUS] = {"gpus", 1, 1u << 20, NULL},
};

typedef struct ft {
    int k, half, up;            /* radix, k/2, uplinks per edge switch */
    int gpu0, edge0, agg0, core0;   /* first vertex of each layer */
    int gpus;                   /* GPUs per node */
    int nic0, ea0, ac0;         /* first link id of NIC, edge-agg and agg-core cables */
    int half_sh, gpus_sh;       /* log2 of half and gpus when powers of 2, else -1 (by_half, by_gpus) */
} ft;

/* x / half and x / gpus for x >= 0: a shift when they are powers of 2 (the per-flow path count
 * and path of a simulation step divide host ids several times each). */
static int by_half(const ft *f, int x) { return f->half_sh >= 0 ? x >> f->half_sh : x / f->half; }
static int by_gpus(const ft *f, int x) { return f->gpus_sh >= 0 ? x >> f->gpus_sh : x / f->gpus; }

static int log2_exact(int v)
{
    int sh = 0;
    while (v > 1 && (v & 1) == 0)
        v >>= 1, sh++;
    return v == 1 ? sh : -1;
}

/* Path number i of the structured ECMP set from host a to host b; returns its length. */
static int ft_path(const ft *f, int a, int b, int i, int *path)
{
    int es = by_half(f, a), ed = by_half(f, b), ps = by_half(f, es), pd = by_half(f, ed), len = 0;
    path[len++] = f->nic0 + 2 * a;
    if (es != ed) {
        int agg = ps == pd ? i : i / f->half, j = i % f->half;
        path[len++] = f->ea0 + 2 * (es * f->up + agg);
        if (ps != pd) {
            path[len++] = f->ac0 + 2 * ((ps * f->up + agg) * f->half + j);
            path[len++] = f->ac0 + 2 * ((pd * f->up + agg) * f->half + j) + 1;
        }
        path[len++] = f->ea0 + 2 * (ed * f->up + agg) + 1;
    }
    path[len++] = f->nic0 + 2 * b + 1;
    return len;
}

static int route(const cfit_topo *t, cfit__topo_scratch *ws, int src, int dst, int flow, int *paths, int *lens, int max,
                 int max_len)
{
    const ft *f = t->state;
    if (src < 0 || dst < 0 || src >= t->nhosts || dst >= t->nhosts || src == dst || max < 1 ||
        max_len < 1 || !paths || !lens)
        return CFIT_EINVALID;
    if (src / f->gpus == dst / f->gpus)   /* same node: over the scale-up switch */
        return cfit__topo_route_shortest(t, ws, src, dst, flow, paths, lens, max, max_len);
    int es = src / f->half, ed = dst / f->half, np = 0;
    int n = es == ed ? 1 : es / f->half == ed / f->half ? f->up : f->up * f->half;
    if (max_len < 6)
        return CFIT_ERANGE;
    int first = 0, tmp[6];
    if (flow >= 0)
        first = (int)(cfit__topo_mix(((uint64_t)(unsigned)src << 32 | (unsigned)dst) ^
                                     cfit__topo_mix((uint64_t)flow)) % (uint64_t)n);
    for (int i = 0; i < n && np < max; i++) {
        int *p = flow >= 0 ? tmp : paths + (size_t)np * max_len;
        int len = ft_path(f, src, dst, (first + i) % n, p), ok = 1;
        for (int j = 0; j < len; j++)
            ok &= !t->links[p[j]].failed;
        if (!ok)
            continue;
        if (flow >= 0)
            memcpy(paths, tmp, (size_t)len * sizeof *tmp);
        lens[np++] = len;
        if (flow >= 0)
            break;
    }
    if (np == 0)
        return cfit__topo_route_shortest(t, ws, src, dst, flow, paths, lens, max, max_len);
    return np;
}

static int path_count(const cfit_topo *t, int src, int dst)
{
    const ft *f = t->state;
    if (by_gpus(f, src) == by_gpus(f, dst))
        return 0;
    int es = by_half(f, src), ed = by_half(f, dst);
    return es == ed ? 1 : by_half(f, es) == by_half(f, ed) ? f->up : f->up * f->half;
}

static int path_at(const cfit_topo *t, int src, int dst, int i, int *path)
{
    return ft_path(t->state, src, dst, i, path);
}

/* The planes (topo_internal.h): aggregation index a, f->up of them.  Same-pod paths are one per
 * agg (path i through agg i), cross-pod paths half per agg (i / half); a pair under one edge
 * switch (one path) or in one node (none indexed) crosses no plane link. */
static int link_plane(const cfit_topo *t, int l)
{
    const ft *f = t->state;
    if (l >= f->ac0)
        return (l - f->ac0) / 2 / f->half % f->up;
    return l >= f->ea0 ? (l - f->ea0) / 2 % f->up : -1;
}

static int plane_link(const cfit_topo *t, int l, int d)
{
    const ft *f = t->state;
    int base = l >= f->ac0 ? f->ac0 : f->ea0, idx = (l - base) / 2, dir = (l - base) & 1;
    int unit = l >= f->ac0 ? f->half : 1;   /* links per agg: its half core cables, or one edge cable */
    int a = idx / unit % f->up, to = (a + d) % f->up;
    return base + 2 * (idx + (to - a) * unit) + dir;
}

static double max2(double a, double b) { return a > b ? a : b; }
static double min2(double a, double b) { return a < b ? a : b; }

/* The first of paths lo .. hi - 1 whose busiest link carries the least load[]: written to path,
 * its length returned.  A pair's paths share the NICs, and all paths through one
 * aggregation switch its edge-aggregation links, so a switch whose shared links already load
 * as much as the best so far is passed over whole, and within one the least load is found
 * first (a min over its paths' two core links, no branch) and the first path with it then. */
static int path_best(const cfit_topo *t, int a, int b, int lo, int hi, const double *load, int *path)
{
    const ft *f = t->state;
    int es = by_half(f, a), ed = by_half(f, b), ps = by_half(f, es), pd = by_half(f, ed), half = f->half;
    double q0 = max2(max2(0, load[f->nic0 + 2 * a]), load[f->nic0 + 2 * b + 1]), best = q0;
    int at = lo;
    if (es != ed) {
        const double *ua = load + f->ea0 + 2 * es * f->up, *ub = load + f->ea0 + 2 * ed * f->up + 1;
        const double *ca = load + f->ac0 + 2 * ps * f->up * half, *cb = load + f->ac0 + 2 * pd * f->up * half + 1;
        best = INFINITY;
        for (int i = lo; i < hi && best > 0;) {
            int agg = ps == pd ? i : i / half, j = ps == pd ? 0 : i % half;
            int end = ps == pd ? i + 1 : i + half - j;   /* the paths through this agg */
            double base = max2(max2(q0, ua[2 * agg]), ub[2 * agg]);
            end = end < hi ? end : hi;
            if (ps == pd && base < best) {
                best = base, at = i;
            } else if (ps != pd && base < best) {   /* the least of its paths, then the first such */
                const double *c = ca + 2 * (agg * half + j), *d = cb + 2 * (agg * half + j);
                double m[4] = {INFINITY, INFINITY, INFINITY, INFINITY};   /* four chains, one min */
                int r = 0, n = end - i;
                for (; r + 4 <= n; r += 4)
                    for (int u = 0; u < 4; u++)
                        m[u] = min2(m[u], max2(c[2 * (r + u)], d[2 * (r + u)]));
                for (; r < n; r++)
                    m[0] = min2(m[0], max2(c[2 * r], d[2 * r]));
                double v = max2(base, min2(min2(m[0], m[1]), min2(m[2], m[3])));
                if (v < best) {
                    r = 0;
                    while (max2(max2(base, c[2 * r]), d[2 * r]) != v)
                        r++;
                    best = v, at = i + r;
                }
            }
            i = end;
        }
    }
    return ft_path(f, a, b, at, path);
}

static int wire(cfit_topo *t, ft *f, int hosts)
{
    const cfit_topo_params *p = &t->params;
    double bw = p->link_bw_bytes_per_s, lat = p->link_latency_s;
    int k = f->k, half = f->half;
    f->nic0 = t->nlinks;
    for (int h = 0; h < hosts; h++)
        if (cfit__topo_add_cable(t, f->gpu0 + h, f->edge0 + h / half, bw, lat, 1) < 0)
            return CFIT_ENOMEM;
    f->ea0 = t->nlinks;
    for (int pod = 0; pod < k; pod++)
        for (int e = 0; e < half; e++)
            for (int a = 0; a < f->up; a++)
                if (cfit__topo_add_cable(t, f->edge0 + pod * half + e, f->agg0 + pod * f->up + a, bw,
                                         lat, 2) < 0)
                    return CFIT_ENOMEM;
    f->ac0 = t->nlinks;
    for (int pod = 0; pod < k; pod++)
        for (int a = 0; a < f->up; a++)
            for (int j = 0; j < half; j++)
                if (cfit__topo_add_cable(t, f->agg0 + pod * f->up + a, f->core0 + a * half + j, bw,
                                         lat, 3) < 0)
                    return CFIT_ENOMEM;
    return CFIT_EOK;
}

static int build(cfit_topo *t, ft *f, uint64_t hosts)
{
    int k = f->k, half = f->half, up = f->up, rc;
    if (cfit__topo_reserve(t, (int)hosts * 2 + k * half + k * up + up * half,
                           (int)hosts * 2 + 2 * k * half * up))
        return CFIT_ENOMEM;
    if ((rc = cfit__topo_add_hosts(t, (int)hosts, &f->gpu0)))
        return rc;
    f->edge0 = t->nvert;
    for (int i = 0; i < k * half; i++)
        if (cfit__topo_add_vertex(t, CFIT_VERTEX_SWITCH) < 0)
            return CFIT_ENOMEM;
    f->agg0 = t->nvert;
    for (int i = 0; i < k * up; i++)
        if (cfit__topo_add_vertex(t, CFIT_VERTEX_SWITCH) < 0)
            return CFIT_ENOMEM;
    f->core0 = t->nvert;
    for (int i = 0; i < up * half; i++)
        if (cfit__topo_add_vertex(t, CFIT_VERTEX_SWITCH) < 0)
            return CFIT_ENOMEM;
    cfit__topo_name(t, "edge", f->edge0, k * half);
    cfit__topo_name(t, "agg", f->agg0, k * up);
    cfit__topo_name(t, "core", f->core0, up * half);
    if ((rc = wire(t, f, (int)hosts)))
        return rc;
    return cfit__topo_finish(t);
}

int cfit__topo_build_fattree(const char *body, const cfit_topo_params *p, cfit_topo **out, cfit_diag *d)
{
    static const char kind[] = "fattree";
    uint64_t v[NKEYS] = {0, 1, 0};
    int given[NKEYS];
    int rc = cfit__topo_parse_keys(kind, body, keys, NKEYS, v, given, d);
    if (rc)
        return rc;
    if (!given[K_K])
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "fattree: missing key 'k' (fattree:k=N)");
    uint64_t k = v[K_K], n = v[K_OVERSUB];
    if (k % 2)
        return cfit__topo_range(d, kind, "k", k, "k must be even (k/2 ports down, k/2 up)");
    if ((k / 2) % n)
        return cfit__topo_range(d, kind, "oversub", n, "oversub must divide k/2 = %llu",
                                (unsigned long long)(k / 2));
    uint64_t hosts = k * k * k / 4;
    char what[48];
    snprintf(what, sizeof what, "k=%llu", (unsigned long long)k);
    if ((rc = cfit__topo_check_size(d, kind, what, hosts, 2 * hosts + k * k * k / 4)))
        return rc;
    cfit_topo_params prm = *p;
    if (given[K_GPUS])
        prm.gpus_per_node = (int)v[K_GPUS];
    cfit_topo *t = cfit__topo_alloc(kind, &prm);
    ft *f = calloc(1, sizeof *f);
    if (!t || !f) {
        free(f);
        cfit_topo_free(t);
        return CFIT_ENOMEM;
    }
    *f = (ft){(int)k, (int)k / 2, (int)(k / 2 / n), 0, 0, 0, 0, t->params.gpus_per_node, 0, 0, 0,
              log2_exact((int)k / 2), log2_exact(t->params.gpus_per_node)};
    t->state = f;
    t->free_state = free;
    t->route = route;
    t->path_count = path_count;
    t->path_at = path_at;
    t->path_best = path_best;
    t->planes = (int)(k / 2 / n);
    t->link_plane = link_plane;
    t->plane_link = plane_link;
    t->mirror_paths = 1;   /* ft_path(b, a, i) climbs and descends through the same agg and core */
    if ((rc = build(t, f, hosts))) {
        cfit_topo_free(t);
        return cfit_diag_set(d, rc, NULL, 0, 0, "fattree: out of memory building k=%d", (int)k);
    }
    t->info.diameter = 6;   /* NIC, edge-agg, agg-core, core-agg, agg-edge, NIC */
    t->info.bisection_bytes_per_s = (double)(hosts / 2) * prm.link_bw_bytes_per_s / (double)n;
    *out = t;
    return CFIT_EOK;
}
