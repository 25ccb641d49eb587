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
} ro;

static int build(cfit_topo *t, const ro *r)
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
        if (cfit__topo_add_cable(t, gpu0 + h, leaf0 + su * r->gpus + rail, bw, lat, 1) < 0)
            return CFIT_ENOMEM;
    }
    for (int l = 0; l < leaves; l++)
        for (int j = 0; j < r->su_nodes; j++) {
            int s = (int)(((long long)l * r->su_nodes + j) % r->spines);
            if (cfit__topo_add_cable(t, leaf0 + l, spine0 + s, bw, lat, 2) < 0)
                return CFIT_ENOMEM;
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
    *r = (ro){(int)nodes, (int)gpus, (int)su_nodes, (int)sus, (int)spines};
    return CFIT_EOK;
}

int cfit__topo_build_railopt(const char *body, const cfit_topo_params *p, cfit_topo **out, cfit_diag *d)
{
    uint64_t v[NKEYS] = {0, 0, 0, 0, 0};
    int given[NKEYS], rc;
    ro r = {0, 0, 0, 0, 0};
    if ((rc = cfit__topo_parse_keys("railopt", body, keys, NKEYS, v, given, d)))
        return rc;
    if (!given[K_GPUS])
        v[K_GPUS] = (uint64_t)p->gpus_per_node;
    if ((rc = check(v, given, &r, d)))
        return rc;
    cfit_topo_params prm = *p;
    prm.gpus_per_node = r.gpus;
    cfit_topo *t = cfit__topo_alloc("railopt", &prm);
    if (!t)
        return CFIT_ENOMEM;
    if ((rc = build(t, &r))) {
        cfit_topo_free(t);
        return cfit_diag_set(d, rc, NULL, 0, 0, "railopt: out of memory building %d nodes", r.nodes);
    }
    int hosts = r.nodes * r.gpus;
    t->info.diameter = r.sus * r.gpus > 1 ? 4 : 2;   /* NIC, leaf-spine, spine-leaf, NIC */
    t->info.bisection_bytes_per_s = (double)(hosts / 2) * prm.link_bw_bytes_per_s;
    *out = t;
    return CFIT_EOK;
}
