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

#include <stdint.h>

#include "clusterfit/topo.h"

/* Work arrays of the shortest-path search (per vertex), owned by the caller: the simulator keeps
 * one in its state (sim.h cfit_sim_state); NULL makes a router allocate its own for the call.
 * One scratch serves one call at a time; the topology itself is never written by routing. */
typedef struct cfit__topo_scratch cfit__topo_scratch;
cfit__topo_scratch *cfit__topo_scratch_new(const cfit_topo *t);   /* NULL on out of memory */
void cfit__topo_scratch_free(cfit__topo_scratch *s);              /* NULL is a no-op */

typedef int (*cfit__topo_router)(const cfit_topo *t, cfit__topo_scratch *ws, int src_host, int dst_host, int flow,
                                 int *paths, int *lens, int max, int max_len);

/* An adaptive router: every candidate path from src to dst with the *nmin minimal ones first
 * and the non-minimal ones after (the simulator picks one kind per flow by load, UGAL). */
typedef int (*cfit__topo_split_router)(const cfit_topo *t, cfit__topo_scratch *ws, int src_host, int dst_host, int *paths, int *lens,
                                       int max, int max_len, int *nmin);

struct cfit_topo {
    char kind[16];                 /* "fattree", ... ("custom" for tests) */
    cfit_topo_params params;
    int nvert;
    size_t vert_cap;               /* room in vkind, host_vertex and vertex_host */
    cfit_vertex_kind *vkind;       /* per vertex */
    int nhosts;
    int *host_vertex;              /* host id -> vertex id */
    int *vertex_host;              /* vertex id -> host id, or -1 */
    int nlinks;
    size_t link_cap;
    cfit_link *links;              /* directed; cable c = links 2c (a->b) and 2c+1 (b->a) */
    int *adj_off, *adj;            /* CSR of outgoing link ids per vertex (built by finish) */
    cfit__topo_router route;       /* NULL = cfit__topo_route_shortest */
    void *state;                   /* topology-specific (dimensions, groups, routing mode) */
    void (*free_state)(void *state);
    cfit_topo_info info;           /* filled by the topology (bisection, diameter) at build */
    /* Additions after the first contract (issue 4): */
    struct cfit__topo_names {      /* vertex names for cfit_topo_fail_spec: prefix + index */
        char prefix[8];            /* "edge", "spine", ...: vertex first + i is "<prefix>i" */
        int first, count;
    } names[8];
    int nnames;
    cfit__topo_split_router route_split;   /* adaptive routing (dragonfly UGAL), or NULL */
    /* Optional indexed ECMP set, so the simulator can look at a few of many paths without
     * listing them all: path_count(src, dst) = n > 0 when path_at(src, dst, i, path) writes
     * path i (0 <= i < n, returning its length) in the order the router lists them with no
     * link failed; 0 when the pair is not indexed (use the router). */
    int (*path_count)(const cfit_topo *t, int src_host, int dst_host);
    int (*path_at)(const cfit_topo *t, int src_host, int dst_host, int i, int *path);
    int mirror_paths;              /* 1: path_at(b, a, i) is path_at(a, b, i) reversed (each link id ^ 1) */
    /* Optional, with path_at: the first of paths lo .. hi - 1 (0 <= lo < hi <= path_count) whose
     * busiest link has the least load[link] (at least 0), written as path_at writes it; returns
     * its length.  The simulator's choice of a path within a slice (sim.c pick_indexed). */
    int (*path_best)(const cfit_topo *t, int src_host, int dst_host, int lo, int hi, const double *load,
                     int *path);
    /* Optional, with path_at (issue 13): `planes` switch planes that relabel onto each other (a
     * fat-tree's aggregation index a: agg a of every pod and the cores above it), so the
     * simulator may solve a step in one block of them (sim.c step_planes).  The promise: a
     * pair with path_count > 1 runs plane by plane, per = path_count / planes consecutive paths
     * in each, and a pair with 0 or 1 crosses no plane link; moving every plane link from plane
     * p to plane p + d (mod planes) maps the topology onto itself, path i of a pair onto its
     * path i + d x per, and path_best's choice onto its choice under the moved loads.
     * link_plane(l): link l's plane, -1 outside the planes (NICs, scale-up).
     * plane_link(l, d): plane link l's copy in plane link_plane(l) + d (mod planes). */
    int planes;
    int (*link_plane)(const cfit_topo *t, int link);
    int (*plane_link)(const cfit_topo *t, int link, int d);
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
int cfit__topo_route_shortest(const cfit_topo *t, cfit__topo_scratch *ws, int src_host, int dst_host, int flow, int *paths,
                              int *lens, int max, int max_len);

/* The links on a shortest route from src to dst host over the working links (NIC cables
 * included; what a route of the shortest-path router would take), 0 when failed links
 * disconnect them, or a negative cfit_err.  For error messages about routes that do not fit. */
int cfit__topo_hops(const cfit_topo *t, cfit__topo_scratch *ws, int src_host, int dst_host);

/* All candidate paths (as cfit_topo_paths with flow -1) with the minimal ones first: *nmin of
 * them, the rest non-minimal alternatives of an adaptive router (dragonfly routing=ugal);
 * *nmin = the count returned for every other topology.  Returns as cfit_topo_paths. */
int cfit__topo_paths_split(const cfit_topo *t, cfit__topo_scratch *ws, int src_host, int dst_host, int *paths, int *lens, int max,
                           int max_len, int *nmin);

/* Size limits every builder checks before allocating (CFIT_ERANGE beyond them).  The host
 * limit is a variable so a fuzz target can lower it; cables are capped at 16 per allowed host. */
#define CFIT__TOPO_MAX_HOSTS 1048576
extern int cfit__topo_max_hosts;   /* CFIT__TOPO_MAX_HOSTS unless a test lowers it */

/* Reserve room for nvert vertices and ncables cables (optional; avoids regrowth). */
int cfit__topo_reserve(cfit_topo *t, int nvert, int ncables);
/* Name vertices first .. first + count - 1 "<prefix>0" ...; prefix of at most 7 characters. */
void cfit__topo_name(cfit_topo *t, const char *prefix, int first, int count);
/* The id of vertex "<prefix><i>" or -1. */
int cfit__topo_find_vertex(const cfit_topo *t, const char *name);

/* splitmix64: the one mixing function routers and failure sampling use. */
uint64_t cfit__topo_mix(uint64_t x);

/* Spec keys.  A topology lists its keys; cfit__topo_parse_keys reads "k=v,k=v" (body: the
 * text after "kind:"), writes vals[i] for keys[i] (a count parsed with cfit_parse_count, or
 * the index of a word) and given[i] = 1.  Errors: CFIT_EPARSE for an unknown key (with a
 * did-you-mean), a missing '=' or value, a key given twice, a bad word; CFIT_ERANGE for a
 * count outside [min, max] -- every message names the kind and the key. */
typedef struct cfit__topo_key {
    const char *name;
    uint64_t min, max;             /* inclusive range of a count */
    const char *const *words;      /* NULL-terminated choices, or NULL for a count */
} cfit__topo_key;

int cfit__topo_parse_keys(const char *kind, const char *body, const cfit__topo_key *keys, int nkeys,
                          uint64_t *vals, int *given, cfit_diag *d);
/* CFIT_ERANGE with "KIND: KEY=VAL: RULE" (rule printf-style). */
int cfit__topo_range(cfit_diag *d, const char *kind, const char *key, uint64_t val, const char *rule,
                     ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* CFIT_ERANGE unless 2 <= hosts <= cfit__topo_max_hosts and cables <= 16 * that limit;
 * the message names what (e.g. "k=200") produced the size. */
int cfit__topo_check_size(cfit_diag *d, const char *kind, const char *what, uint64_t hosts,
                          uint64_t cables);

/* Attach host h's GPU vertices: for each node of gpus_per_node GPUs add a scale-up switch
 * (when gpus_per_node > 1) and cable each GPU to it (tier 0).  Adds nhosts GPU vertices
 * (ids returned from first_gpu) and the switches; returns CFIT_EOK or CFIT_ENOMEM. */
int cfit__topo_add_hosts(cfit_topo *t, int nhosts, int *first_gpu);

/* A topology kind: name and builder (body = spec text after "name:", "" if none). */
typedef int (*cfit__topo_builder)(const char *body, const cfit_topo_params *p, cfit_topo **out,
                                  cfit_diag *d);
typedef struct cfit__topo_kind {
    const char *name;
    cfit__topo_builder build;
} cfit__topo_kind;

int cfit__topo_build_fattree(const char *body, const cfit_topo_params *p, cfit_topo **out, cfit_diag *d);
int cfit__topo_build_railopt(const char *body, const cfit_topo_params *p, cfit_topo **out, cfit_diag *d);
int cfit__topo_build_dragonfly(const char *body, const cfit_topo_params *p, cfit_topo **out,
                               cfit_diag *d);
int cfit__topo_build_torus3d(const char *body, const cfit_topo_params *p, cfit_topo **out, cfit_diag *d);

#endif
