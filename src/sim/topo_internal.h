/* topo_internal.h - how topologies are built and routed inside libclusterfit.
 *
 * A topology file (topo_fattree.c, topo_railopt.c, topo_dragonfly.c, topo_torus.c) parses its
 * spec keys, builds the graph with the builder below, and may install its own router (torus
 * dimension order, dragonfly minimal/Valiant/UGAL); otherwise cfit__topo_route_shortest (all
 * equal-cost shortest paths by BFS over non-failed links, ECMP) is used.  Tests build small
 * graphs with the same builder.
 */
#ifndef CFIT_TOPO_INTERNAL_H
#define CFIT_TOPO_INTERNAL_H

#include "clusterfit/topo.h"

typedef int (*cfit__topo_router)(const cfit_topo *t, int src_host, int dst_host, int flow, int *paths,
                                 int *lens, int max, int max_len);

struct cfit_topo {
    char kind[16];                 /* "fattree", ... ("custom" for tests) */
    cfit_topo_params params;
    int nvert, vert_cap;
    cfit_vertex_kind *vkind;       /* per vertex */
    int nhosts;
    int *host_vertex;              /* host id -> vertex id */
    int *vertex_host;              /* vertex id -> host id, or -1 */
    int nlinks, link_cap;
    cfit_link *links;              /* directed; cable c = links 2c (a->b) and 2c+1 (b->a) */
    int *adj_off, *adj;            /* CSR of outgoing link ids per vertex (built by finish) */
    cfit__topo_router route;       /* NULL = cfit__topo_route_shortest */
    void *state;                   /* topology-specific (dimensions, groups, routing mode) */
    void (*free_state)(void *state);
    cfit_topo_info info;           /* filled by the topology (bisection, diameter) at build */
};

/* An empty topology of the given kind; NULL on out of memory. */
cfit_topo *cfit__topo_alloc(const char *kind, const cfit_topo_params *p);
/* Add a vertex; GPU vertices become hosts in the order added.  Returns the vertex id or -1. */
int cfit__topo_add_vertex(cfit_topo *t, cfit_vertex_kind k);
/* Add a cable a <-> b: two directed links with the same rate, latency and tier.  Returns the
 * id of the a->b link (b->a is id + 1) or -1 on out of memory. */
int cfit__topo_add_cable(cfit_topo *t, int a, int b, double bw_bytes_per_s, double latency_s, int tier);
/* Build the adjacency after the last vertex/cable; CFIT_EOK or CFIT_ENOMEM. */
int cfit__topo_finish(cfit_topo *t);
/* All equal-cost shortest paths (by hop count over non-failed links) from src to dst host,
 * up to max; with flow >= 0 only the one path flow hashes to (ECMP).  As cfit_topo_paths. */
int cfit__topo_route_shortest(const cfit_topo *t, int src_host, int dst_host, int flow, int *paths,
                              int *lens, int max, int max_len);

#endif
