/* topo_railopt.c - rail-optimised two-tier fat-tree (NVIDIA DGX SuperPOD reference architecture).
 *
 * Nodes of gpus GPUs are grouped into scalable units (SU) of su_nodes nodes (default 32).  Each
 * SU has one leaf switch per rail (gpus leaves): GPU i of every node in the SU plugs its NIC
 * into the SU's rail-i leaf, so same-rail traffic inside an SU is one leaf hop away and
 * everything else crosses the spines.  Each leaf has su_nodes uplinks (non-blocking, 1:1),
 * spread round-robin over the spines (default SUs*gpus/2, as the SuperPOD's 4 spines per SU of
 * 8 rails); parallel leaf-spine cables are separate ECMP paths.  nodes=N builds ceil(N/su_nodes)
 * SUs (the last may be partial, its leaves keep all their uplinks); su=S builds S full SUs.
 * Routing: all equal-cost shortest paths.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sim/topo_internal.h"

enum { K_NODES, K_SU, K_SU_NODES, K_GPUS, K_SPINES, NKEYS };

static const cfit__topo_key keys[NKEYS] = {
    [K_NODES] = {"nodes", 1, 1u << 20, NULL},
    [K_SU] = {"su", 1, 1u << 20, NULL},
    [K_SU_NODES] = {"su_nodes", 1, 1u << 20, NULL},
    [K_GPUS] = {"gpus", 1, 1u << 20, NULL},
    [K_SPINES] = {"spines", 1, 1u << 20, NULL},
};

typedef struct ro {
    int nodes, gpus, su_nodes, sus, spines;
    int nic0, up0;              /* first link id of the NIC and of the leaf-spine cables */
} ro;

/* Structured ECMP (the same paths as the shortest-path search, without searching): a GPU's
 * NIC, then for two leaves every pair of their uplinks that meet at one spine.  Same node:
 * the scale-up switch; failed links dropped, none left: the generic search. */
static int route(const cfit_topo *t, cfit__topo_scratch *ws, int src, int dst, int flow, int *paths, int *lens, int max, int max_len)
{
    const ro *r = t->state;
    if (src < 0 || dst < 0 || src >= t->nhosts || dst >= t->nhosts || src == dst || max < 1 || max_len < 4)
        return src == dst || max < 1 ? CFIT_EINVALID : cfit__topo_route_shortest(t, ws, src, dst, flow, paths, lens,
                                                                                    max, max_len);
    if (src / r->gpus == dst / r->gpus)
        return cfit__topo_route_shortest(t, ws, src, dst, flow, paths, lens, max, max_len);
    int la = src / r->gpus / r->su_nodes * r->gpus + src % r->gpus;
    int lb = dst / r->gpus / r->su_nodes * r->gpus + dst % r->gpus;
    int up = r->nic0 + 2 * src, down = r->nic0 + 2 * dst + 1, np = 0, seen = 0;
    uint64_t pick = flow >= 0 ? cfit__topo_mix(((uint64_t)(unsigned)src << 32 | (unsigned)dst) ^
                                               cfit__topo_mix((uint64_t)flow))
                              : 0;
    if (la == lb) {
        if (t->links[up].failed || t->links[down].failed)
            return cfit__topo_route_shortest(t, ws, src, dst, flow, paths, lens, max, max_len);
        paths[0] = up, paths[1] = down, lens[0] = 2;
        return 1;
    }
    int total = 0;   /* with a flow id: count the paths first, then take the hashed one */
    for (int pass = flow >= 0 ? 0 : 1; pass < 2 && np < max; pass++) {
        int want = pass == 0 ? -1 : flow >= 0 && total > 0 ? (int)(pick % (uint64_t)total) : -1;
        seen = 0;
        for (int j = 0; j < r->su_nodes && np < max; j++) {
            int s = (int)(((long long)la * r->su_nodes + j) % r->spines), a = r->up0 + 2 * (la * r->su_nodes + j);
            for (int i = 0; i < r->su_nodes && np < max; i++) {
                if ((int)(((long long)lb * r->su_nodes + i) % r->spines) != s)
                    continue;
                int b = r->up0 + 2 * (lb * r->su_nodes + i) + 1;
                if (t->links[up].failed || t->links[down].failed || t->links[a].failed || t->links[b].failed)
                    continue;
                if (pass == 0) {
                    total++;
                    continue;
                }
                if (want >= 0 && seen++ != want)
                    continue;
                int *p = paths + (size_t)np * max_len;
                p[0] = up, p[1] = a, p[2] = b, p[3] = down;
                lens[np++] = 4;
                if (want >= 0)
                    return np;
            }
        }
    }
    return np > 0 ? np : cfit__topo_route_shortest(t, ws, src, dst, flow, paths, lens, max, max_len);
}

/* Indexed paths (topo_internal.h) when every leaf has the same number m of cables to each
 * spine (su_nodes a multiple of spines): path i takes uplink i / m of the source leaf and the
 * (i mod m)-th cable of the destination leaf to the same spine, the router's order. */
static int path_count(const cfit_topo *t, int src, int dst)
{
    const ro *r = t->state;
    if (src / r->gpus == dst / r->gpus || r->su_nodes % r->spines)
        return 0;
    int la = src / r->gpus / r->su_nodes * r->gpus + src % r->gpus;
    int lb = dst / r->gpus / r->su_nodes * r->gpus + dst % r->gpus;
    return la == lb ? 1 : r->su_nodes * (r->su_nodes / r->spines);
}

static int path_at(const cfit_topo *t, int src, int dst, int i, int *path)
{
    const ro *r = t->state;
    int la = src / r->gpus / r->su_nodes * r->gpus + src % r->gpus;
    int lb = dst / r->gpus / r->su_nodes * r->gpus + dst % r->gpus;
    int len = 0, m = r->su_nodes / r->spines;
    path[len++] = r->nic0 + 2 * src;
    if (la != lb) {
        int j = i / m, s = (int)(((long long)la * r->su_nodes + j) % r->spines);
        int first = (int)(((s - (long long)lb * r->su_nodes) % r->spines + r->spines) % r->spines);
        path[len++] = r->up0 + 2 * (la * r->su_nodes + j);
        path[len++] = r->up0 + 2 * (lb * r->su_nodes + first + (i % m) * r->spines) + 1;
    }
    path[len++] = r->nic0 + 2 * dst + 1;
    return len;
}

static int build(cfit_topo *t, ro *r)
{
    const cfit_topo_params *p = &t->params;
    double bw = p->link_bw_bytes_per_s, lat = p->link_latency_s;
    int hosts = r->nodes * r->gpus, leaves = r->sus * r->gpus, gpu0, rc;
    if (cfit__topo_reserve(t, 2 * hosts + leaves + r->spines, 2 * hosts + leaves * r->su_nodes))
        return CFIT_ENOMEM;
    if ((rc = cfit__topo_add_hosts(t, hosts, &gpu0)))
        return rc;
    int leaf0 = t->nvert;
    for (int i = 0; i < leaves + r->spines; i++)
        if (cfit__topo_add_vertex(t, CFIT_VERTEX_SWITCH) < 0)
            return CFIT_ENOMEM;
    int spine0 = leaf0 + leaves;
    cfit__topo_name(t, "leaf", leaf0, leaves);
    cfit__topo_name(t, "spine", spine0, r->spines);
    for (int h = 0; h < hosts; h++) {
        int node = h / r->gpus, rail = h % r->gpus, su = node / r->su_nodes;
        int id = cfit__topo_add_cable(t, gpu0 + h, leaf0 + su * r->gpus + rail, bw, lat, 1);
        if (id < 0)
            return CFIT_ENOMEM;
        if (h == 0)
            r->nic0 = id;
    }
    for (int l = 0; l < leaves; l++)
        for (int j = 0; j < r->su_nodes; j++) {
            int s = (int)(((long long)l * r->su_nodes + j) % r->spines);
            int id = cfit__topo_add_cable(t, leaf0 + l, spine0 + s, bw, lat, 2);
            if (id < 0)
                return CFIT_ENOMEM;
            if (l == 0 && j == 0)
                r->up0 = id;
        }
    return cfit__topo_finish(t);
}

static int check(const uint64_t *v, const int *given, ro *r, cfit_diag *d)
{
    static const char kind[] = "railopt";
    if (given[K_NODES] == given[K_SU])
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0,
                             "railopt: give one of nodes=N or su=S (scalable units)");
    uint64_t su_nodes = given[K_SU_NODES] ? v[K_SU_NODES] : 32;
    uint64_t nodes = given[K_NODES] ? v[K_NODES] : v[K_SU] * su_nodes;
    uint64_t sus = (nodes + su_nodes - 1) / su_nodes, gpus = v[K_GPUS];
    uint64_t leaves = sus * gpus, hosts = nodes * gpus;
    uint64_t spines = given[K_SPINES] ? v[K_SPINES] : (leaves / 2 ? leaves / 2 : 1);
    char what[96];
    snprintf(what, sizeof what, "%llu nodes x %llu GPUs", (unsigned long long)nodes,
             (unsigned long long)gpus);
    int rc = cfit__topo_check_size(d, kind, what, hosts, 2 * hosts + leaves * su_nodes);
    if (rc)
        return rc;
    if (spines > leaves * su_nodes)
        return cfit__topo_range(d, kind, "spines", spines,
                                "spines must be at most the %llu leaf uplinks",
                                (unsigned long long)(leaves * su_nodes));
    *r = (ro){(int)nodes, (int)gpus, (int)su_nodes, (int)sus, (int)spines, 0, 0};
    return CFIT_EOK;
}

int cfit__topo_build_railopt(const char *body, const cfit_topo_params *p, cfit_topo **out, cfit_diag *d)
{
    uint64_t v[NKEYS] = {0, 0, 0, 0, 0};
    int given[NKEYS], rc;
    ro r = {0, 0, 0, 0, 0, 0, 0};
    if ((rc = cfit__topo_parse_keys("railopt", body, keys, NKEYS, v, given, d)))
        return rc;
    if (!given[K_GPUS])
        v[K_GPUS] = (uint64_t)p->gpus_per_node;
    if ((rc = check(v, given, &r, d)))
        return rc;
    cfit_topo_params prm = *p;
    prm.gpus_per_node = r.gpus;
    cfit_topo *t = cfit__topo_alloc("railopt", &prm);
    ro *st = malloc(sizeof *st);
    if (!t || !st) {
        free(st);
        cfit_topo_free(t);
        return CFIT_ENOMEM;
    }
    t->state = st;
    t->free_state = free;
    if (!(rc = build(t, &r))) {
        *st = r;
        t->route = route;
        t->path_count = path_count;
        t->path_at = path_at;
    }
    if (rc) {
        cfit_topo_free(t);
        return cfit_diag_set(d, rc, NULL, 0, 0, "railopt: out of memory building %d nodes", r.nodes);
    }
    int hosts = r.nodes * r.gpus;
    t->info.diameter = r.sus * r.gpus > 1 ? 4 : 2;   /* NIC, leaf-spine, spine-leaf, NIC */
    t->info.bisection_bytes_per_s = (double)(hosts / 2) * prm.link_bw_bytes_per_s;
    *out = t;
    return CFIT_EOK;
}
