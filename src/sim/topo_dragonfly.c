/* topo_dragonfly.c - dragonfly (Kim, Dally, Scott, Abts, ISCA 2008) with minimal, Valiant and UGAL.
 *
 * g groups of a routers; the routers of a group are fully connected by local cables (tier 2);
 * each router has p host ports (GPU NICs; a node's gpus GPUs take consecutive ports) and h
 * global ports (tier 3).  g defaults to and is at most a*h + 1 (one global cable between every
 * pair of groups).  With fewer groups each pair gets L = floor(a*h / (g-1)) global cables, laid
 * out round by round so a pair's cables land on different routers; leftover ports stay empty.
 * Group i's global ports are numbered q = 0 .. a*h-1 (router q/h) and used in order.
 *
 * Routing (routing=min|valiant|ugal, default min):
 * - min: host, local hop to a router holding a global cable to the destination group, the
 *   global hop, a local hop to the destination router, host: at most 3 router-to-router hops
 *   and one global hop.  Every one of the L cables between the groups gives a path.
 * - valiant: first minimally to a random intermediate group (chosen by hashing src, dst and
 *   the flow), then minimally to the destination: at most 5 router hops, two global.
 * - ugal: UGAL (Kim et al.; BookSim's rule q_min H_min <= q_val H_val + T).  For the
 *   simulator, route_split hands it every minimal path then every Valiant one, and the engine
 *   picks one kind per flow by the load on each (sim.c ugal_choose): adversarial traffic spreads,
 *   uniform traffic stays minimal where its minimal links are not hot.  cfit_topo_paths with
 *   flow -1 returns both kinds; with a flow id a hop-weighted draw (minimal with probability
 *   H_val / (H_min + H_val), H_val = H_min + 3), as an oblivious stand-in for callers without
 *   loads.
 * Inside one group every routing is minimal.  Paths through failed links are dropped; when none
 * is left the route falls back to all shortest paths over the working links.
 * Bisection: halving the groups cuts L*floor(g/2)*ceil(g/2) global cables, about g^2/4, or
 * half the hosts' injection bandwidth for a balanced a = 2p = 2h (capped by the hosts' NICs).
 */
#include <stdio.h>
#include <stdlib.h>

#include "sim/topo_internal.h"

enum { K_P, K_A, K_H, K_G, K_GPUS, K_ROUTING, NKEYS };
enum { R_MIN, R_VALIANT, R_UGAL };

static const char *const routings[] = {"min", "valiant", "ugal", NULL};

static const cfit__topo_key keys[NKEYS] = {
    [K_P] = {"p", 1, 1u << 20, NULL},
    [K_A] = {"a", 1, 1u << 20, NULL},
    [K_H] = {"h", 1, 1u << 20, NULL},
    [K_G] = {"g", 1, 1u << 20, NULL},
    [K_GPUS] = {"gpus", 1, 1u << 20, NULL},
    [K_ROUTING] = {"routing", 0, 2, routings},
};

typedef struct dfly {
    int p, a, h, g, gpus, routing, rt0;
    int *nic;      /* nic[host]: link id GPU -> router */
    int *local;    /* local[r * a + s]: link id router r -> router s of the same group, r != s */
    int *global;   /* global[i * a*h + q]: link id from group i's port q, or -1 */
} dfly;

static void free_dfly(void *s)
{
    dfly *f = s;
    if (f) {
        free(f->nic);
        free(f->local);
        free(f->global);
        free(f);
    }
}

static int group_of(const dfly *f, int router) { return router / f->a; }

/* Append a local hop from router r to s (no-op when equal); returns the new length. */
static int add_local(const dfly *f, int r, int s, int *path, int len)
{
    if (r != s)
        path[len++] = f->local[(size_t)r * f->a + s % f->a];
    return len;
}

/* The k-th global link (port order) from group i to group j, or -1. */
static int global_link(const cfit_topo *t, const dfly *f, int i, int j, int k)
{
    int ports = f->a * f->h;
    for (int q = 0; q < ports; q++) {
        int l = f->global[(size_t)i * ports + q];
        if (l >= 0 && group_of(f, t->links[l].to - f->rt0) == j && k-- == 0)
            return l;
    }
    return -1;
}

static int links_between(const dfly *f)
{
    return f->g > 1 ? f->a * f->h / (f->g - 1) : 0;
}

/* Minimal segment from router r to router s through global link k of the pair (groups differ). */
static int min_segment(const cfit_topo *t, const dfly *f, int r, int s, int k, int *path, int len)
{
    int l = global_link(t, f, group_of(f, r), group_of(f, s), k);
    int x = t->links[l].from - f->rt0, y = t->links[l].to - f->rt0;
    len = add_local(f, r, x, path, len);
    path[len++] = l;
    return add_local(f, y, s, path, len);
}

static int router_of(const cfit_topo *t, const dfly *f, int host)
{
    return t->links[f->nic[host]].to - f->rt0;
}

static int broken(const cfit_topo *t, const int *path, int len)
{
    for (int i = 0; i < len; i++)
        if (t->links[path[i]].failed)
            return 1;
    return 0;
}

/* Write a path (nic, segments, nic); kind 0 minimal via global k, kind 1 Valiant via group m
 * with global links k1, k2.  Returns its length. */
static int make_path(const cfit_topo *t, const dfly *f, int src, int dst, int valiant, int m, int k1,
                     int k2, int *path)
{
    int r = router_of(t, f, src), s = router_of(t, f, dst), len = 0;
    path[len++] = f->nic[src];
    if (group_of(f, r) == group_of(f, s)) {
        len = add_local(f, r, s, path, len);
    } else if (!valiant) {
        len = min_segment(t, f, r, s, k1, path, len);
    } else {
        /* to the intermediate group's landing router, then on to the destination */
        int l = global_link(t, f, group_of(f, r), m, k1);
        int y = t->links[l].to - f->rt0;
        len = min_segment(t, f, r, y, k1, path, len);
        len = min_segment(t, f, y, s, k2, path, len);
    }
    path[len++] = f->nic[dst] ^ 1;
    return len;
}

/* Intermediate group number i (0-based) among the groups other than gs and gd. */
static int middle(const dfly *f, int gs, int gd, int i)
{
    int lo = gs < gd ? gs : gd, hi = gs < gd ? gd : gs;
    (void)f;
    return i + (i >= lo) + (i + (i >= lo) >= hi);
}

/* 1 when src and dst are routed minimally whatever the mode (same node or group), else 0;
 * CFIT_EINVALID / CFIT_ERANGE for bad arguments. */
static int local_route(const cfit_topo *t, int src, int dst, int max, int max_len)
{
    const dfly *f = t->state;
    if (src < 0 || dst < 0 || src >= t->nhosts || dst >= t->nhosts || src == dst || max < 1 ||
        max_len < 1)
        return CFIT_EINVALID;
    int gs = group_of(f, router_of(t, f, src)), gd = group_of(f, router_of(t, f, dst));
    if (src / f->gpus == dst / f->gpus || gs == gd)
        return 1;
    if (max_len < 8)   /* nic, local, global, local, local, global, local, nic */
        return CFIT_ERANGE;
    return 0;
}

/* Paths between hosts of different groups: minimal ones (want_min), then Valiant ones
 * (want_val); with flow >= 0 the one the flow hashes to (UGAL's hop-weighted draw when both
 * kinds are wanted).  0 when every such path crosses a failed link. */
static int route_sets(const cfit_topo *t, int src, int dst, int flow, int want_min, int want_val, int *paths,
                      int *lens, int max, int max_len)
{
    const dfly *f = t->state;
    int gs = group_of(f, router_of(t, f, src)), gd = group_of(f, router_of(t, f, dst));
    uint64_t h = cfit__topo_mix(((uint64_t)(unsigned)src << 32 | (unsigned)dst) ^
                                cfit__topo_mix((uint64_t)(flow < 0 ? 0 : flow)));
    int L = links_between(f), mids = f->g - 2, np = 0;
    want_val = want_val && mids > 0;
    if (flow >= 0 && want_min && want_val) {   /* UGAL: hop-count weighted choice */
        int tmp[16];
        int hmin = make_path(t, f, src, dst, 0, 0, (int)(h % (uint64_t)L), 0, tmp);
        int hval = hmin + 3;   /* Valiant adds a global and up to two local hops */
        want_val = (cfit__topo_mix(h) % (uint64_t)(hmin + hval)) >= (uint64_t)hval;
        want_min = !want_val;
    }
    for (int i = 0; want_min && i < L && np < max; i++) {
        int k = flow >= 0 ? (int)((h + (uint64_t)i) % (uint64_t)L) : i;
        int *p = paths + (size_t)np * max_len, len = make_path(t, f, src, dst, 0, 0, k, 0, p);
        if (!broken(t, p, len)) {
            lens[np++] = len;
            if (flow >= 0)
                return np;
        }
    }
    for (int i = 0; want_val && i < mids && np < max; i++) {
        uint64_t hm = cfit__topo_mix(h + (uint64_t)i);
        int m = middle(f, gs, gd, (int)((h + (uint64_t)i) % (uint64_t)mids));
        int *p = paths + (size_t)np * max_len;
        int len = make_path(t, f, src, dst, 1, m, (int)(hm % (uint64_t)L),
                            (int)((hm >> 32) % (uint64_t)L), p);
        if (!broken(t, p, len)) {
            lens[np++] = len;
            if (flow >= 0)
                return np;
        }
    }
    return np;
}

static int route(const cfit_topo *t, cfit__topo_scratch *ws, int src, int dst, int flow, int *paths, int *lens, int max,
                 int max_len)
{
    const dfly *f = t->state;
    int rc = local_route(t, src, dst, max, max_len);
    if (rc == 0) {
        int mids = f->g - 2;
        rc = route_sets(t, src, dst, flow, f->routing != R_VALIANT || mids < 1, f->routing != R_MIN, paths, lens,
                        max, max_len);
        if (rc != 0)
            return rc;
    } else if (rc < 0) {
        return rc;
    }
    return cfit__topo_route_shortest(t, ws, src, dst, flow, paths, lens, max, max_len);
}

/* routing=ugal for the simulator: the minimal paths, then the Valiant ones, *nmin minimal. */
static int route_split(const cfit_topo *t, cfit__topo_scratch *ws, int src, int dst, int *paths, int *lens, int max, int max_len,
                       int *nmin)
{
    int rc = local_route(t, src, dst, max, max_len);
    *nmin = 0;
    if (rc == 0) {
        int nm = route_sets(t, src, dst, -1, 1, 0, paths, lens, max, max_len);
        int nv = nm < max ? route_sets(t, src, dst, -1, 0, 1, paths + (size_t)nm * max_len, lens + nm, max - nm,
                                       max_len)
                          : 0;
        if (nm + nv > 0) {
            *nmin = nm;
            return nm + nv;
        }
    } else if (rc < 0) {
        return rc;
    }
    rc = cfit__topo_route_shortest(t, ws, src, dst, -1, paths, lens, max, max_len);
    *nmin = rc > 0 ? rc : 0;
    return rc;
}

static int wire_globals(cfit_topo *t, dfly *f)
{
    const cfit_topo_params *p = &t->params;
    int ports = f->a * f->h, L = links_between(f);
    int *next = calloc((size_t)(unsigned)f->g, sizeof *next);
    if (!next)
        return CFIT_ENOMEM;
    for (int round = 0; round < L; round++)
        for (int i = 0; i < f->g; i++)
            for (int j = i + 1; j < f->g; j++) {
                int qi = next[i]++, qj = next[j]++;
                int l = cfit__topo_add_cable(t, f->rt0 + i * f->a + qi / f->h,
                                             f->rt0 + j * f->a + qj / f->h, p->link_bw_bytes_per_s,
                                             p->link_latency_s, 3);
                if (l < 0) {
                    free(next);
                    return CFIT_ENOMEM;
                }
                f->global[(size_t)i * ports + qi] = l;
                f->global[(size_t)j * ports + qj] = l + 1;
            }
    free(next);
    return CFIT_EOK;
}

static int build(cfit_topo *t, dfly *f)
{
    const cfit_topo_params *p = &t->params;
    double bw = p->link_bw_bytes_per_s, lat = p->link_latency_s;
    int routers = f->a * f->g, hosts = routers * f->p, gpu0, rc;
    size_t ports = (size_t)f->g * f->a * f->h;
    f->nic = malloc((size_t)hosts * sizeof *f->nic);
    f->local = malloc((size_t)routers * f->a * sizeof *f->local);
    f->global = malloc(ports * sizeof *f->global);
    if (!f->nic || !f->local || !f->global ||
        cfit__topo_reserve(t, 2 * hosts + routers,
                           2 * hosts + routers * (f->a - 1) / 2 + (int)(ports / 2)))
        return CFIT_ENOMEM;
    for (size_t i = 0; i < ports; i++)
        f->global[i] = -1;
    if ((rc = cfit__topo_add_hosts(t, hosts, &gpu0)))
        return rc;
    f->rt0 = t->nvert;
    for (int i = 0; i < routers; i++)
        if (cfit__topo_add_vertex(t, CFIT_VERTEX_SWITCH) < 0)
            return CFIT_ENOMEM;
    cfit__topo_name(t, "r", f->rt0, routers);
    for (int hst = 0; hst < hosts; hst++)
        if ((f->nic[hst] = cfit__topo_add_cable(t, gpu0 + hst, f->rt0 + hst / f->p, bw, lat, 1)) < 0)
            return CFIT_ENOMEM;
    for (int grp = 0; grp < f->g; grp++)
        for (int r = 0; r < f->a; r++)
            for (int s = r + 1; s < f->a; s++) {
                int x = grp * f->a + r, y = grp * f->a + s;
                int l = cfit__topo_add_cable(t, f->rt0 + x, f->rt0 + y, bw, lat, 2);
                if (l < 0)
                    return CFIT_ENOMEM;
                f->local[(size_t)x * f->a + s] = l;
                f->local[(size_t)y * f->a + r] = l + 1;
            }
    if ((rc = wire_globals(t, f)))
        return rc;
    return cfit__topo_finish(t);
}

static int check(const uint64_t *v, const int *given, dfly *f, uint64_t gpus, cfit_diag *d)
{
    static const char kind[] = "dragonfly";
    if (!given[K_P])
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0,
                             "dragonfly: missing key 'p' (dragonfly:p=4,a=8,h=4)");
    uint64_t p = v[K_P], a = given[K_A] ? v[K_A] : 2 * p, h = given[K_H] ? v[K_H] : p;
    uint64_t gmax = a * h + 1, g = given[K_G] ? v[K_G] : gmax;
    if (g > gmax)
        return cfit__topo_range(d, kind, "g", g, "g must be at most a*h+1 = %llu",
                                (unsigned long long)gmax);
    uint64_t routers = a * g;   /* a, h <= 2^20 and g <= a*h+1: no overflow */
    uint64_t hosts = routers > (1u << 24) ? 1ull << 40 : routers * p;   /* 2^40: far over the limit */
    char what[96];
    snprintf(what, sizeof what, "p=%llu,a=%llu,h=%llu,g=%llu", (unsigned long long)p,
             (unsigned long long)a, (unsigned long long)h, (unsigned long long)g);
    uint64_t cables = hosts <= (1u << 30) ? 2 * hosts + routers * (a - 1) / 2 + g * a * h / 2 : hosts;
    int rc = cfit__topo_check_size(d, kind, what, hosts, cables);
    if (rc)
        return rc;
    *f = (dfly){(int)p, (int)a, (int)h, (int)g, (int)gpus, (int)v[K_ROUTING], 0, NULL, NULL, NULL};
    return CFIT_EOK;
}

int cfit__topo_build_dragonfly(const char *body, const cfit_topo_params *p, cfit_topo **out,
                               cfit_diag *d)
{
    static const char kind[] = "dragonfly";
    uint64_t v[NKEYS] = {0, 0, 0, 0, 0, R_MIN};
    int given[NKEYS], rc;
    dfly *f = calloc(1, sizeof *f);
    if (!f)
        return CFIT_ENOMEM;
    if ((rc = cfit__topo_parse_keys(kind, body, keys, NKEYS, v, given, d)) ||
        (rc = check(v, given, f, given[K_GPUS] ? v[K_GPUS] : (uint64_t)p->gpus_per_node, d))) {
        free(f);
        return rc;
    }
    cfit_topo_params prm = *p;
    prm.gpus_per_node = f->gpus;
    cfit_topo *t = cfit__topo_alloc(kind, &prm);
    if (!t) {
        free(f);
        return CFIT_ENOMEM;
    }
    t->state = f;
    t->free_state = free_dfly;
    t->route = route;
    if (f->routing == R_UGAL)
        t->route_split = route_split;
    if ((rc = build(t, f))) {
        cfit_topo_free(t);
        return cfit_diag_set(d, rc, NULL, 0, 0, "dragonfly: out of memory");
    }
    long long g = f->g, L = links_between(f), hosts = t->nhosts;
    double cut = g > 1 ? (double)(L * (g / 2) * ((g + 1) / 2))
                       : (double)((long long)(f->a / 2) * ((f->a + 1) / 2));
    double nics = (double)(hosts / 2);
    if (cut == 0.0)   /* a single router: non-blocking, only the NICs limit */
        cut = nics;
    t->info.bisection_bytes_per_s = (cut < nics ? cut : nics) * prm.link_bw_bytes_per_s;
    t->info.diameter = 2 + (g > 1 ? 1 + 2 * (f->a > 1) : f->a > 1);
    *out = t;
    return CFIT_EOK;
}
