/* topo.h - data-centre topologies as graphs of GPUs, switches and directed links.
 *
 * A topology is built from a spec string ("fattree:k=16,oversub=2", "railopt:nodes=128,gpus=8",
 * "dragonfly:p=4,a=8,h=4,routing=ugal", "torus3d:8x8x8") and link parameters.  Every GPU is a
 * host; each node's GPUs hang off one scale-up switch (the NVLink domain) with scale-up links,
 * and the node's NICs connect to the scale-out fabric.  Links are directed (a cable is two
 * links, one per direction) and carry a capacity in bytes per second and a latency.  The
 * simulator (sim.h) sees only this interface: hosts, links, and candidate paths between hosts.
 *
 * Adding a new topology: write topo_NAME.c filling a cfit__topo_kind (builder + router), and
 * add it to the table in topo.c.
 */
#ifndef CLUSTERFIT_TOPO_H
#define CLUSTERFIT_TOPO_H

#include <stddef.h>
#include "clusterfit/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Link rates and latencies the spec does not carry; cfit_topo_params_init gives defaults
 * (400 Gb/s scale-out, 450 GB/s scale-up, 8 GPUs per node, 1 us per switch hop). */
typedef struct cfit_topo_params {
    double link_bw_bytes_per_s;      /* scale-out link, per direction */
    double link_latency_s;           /* per scale-out hop */
    double scaleup_bw_bytes_per_s;   /* GPU <-> its node's scale-up switch, per direction */
    double scaleup_latency_s;
    int gpus_per_node;               /* GPUs under one scale-up switch (1 = none) */
} cfit_topo_params;

CFIT_API void cfit_topo_params_init(cfit_topo_params *p);

typedef enum cfit_vertex_kind { CFIT_VERTEX_GPU = 0, CFIT_VERTEX_SWITCH = 1 } cfit_vertex_kind;

typedef struct cfit_link {
    int from, to;                    /* vertex ids */
    double bw_bytes_per_s;
    double latency_s;
    int tier;                        /* 0 scale-up, 1 leaf/edge, 2 spine/aggregation, 3 core/global */
    int failed;                      /* 1 after cfit_topo_fail_* */
} cfit_link;

typedef struct cfit_topo cfit_topo;

/* Build a topology.  Errors: CFIT_EPARSE (malformed spec: unknown kind or key, missing value)
 * or CFIT_ERANGE (a value breaking the topology's rule, e.g. odd k, or sizes that overflow),
 * with d->msg naming the key and the rule.  Free with cfit_topo_free. */
CFIT_API int cfit_topo_new(const char *spec, const cfit_topo_params *params, cfit_topo **out, cfit_diag *d);
CFIT_API void cfit_topo_free(cfit_topo *t);

CFIT_API const char *cfit_topo_kind_name(const cfit_topo *t);   /* "fattree", "railopt", ... */
CFIT_API int cfit_topo_hosts(const cfit_topo *t);               /* GPUs; host h is vertex cfit_topo_host_vertex(t, h) */
CFIT_API int cfit_topo_host_vertex(const cfit_topo *t, int host);
CFIT_API int cfit_topo_gpus_per_node(const cfit_topo *t);       /* GPUs under one scale-up switch (>= 1) */
CFIT_API int cfit_topo_vertices(const cfit_topo *t);
CFIT_API cfit_vertex_kind cfit_topo_vertex_kind(const cfit_topo *t, int v);
CFIT_API int cfit_topo_switches(const cfit_topo *t);
CFIT_API int cfit_topo_links(const cfit_topo *t);               /* directed links */
CFIT_API const cfit_link *cfit_topo_link(const cfit_topo *t, int id);

/* Up to max candidate paths from host src to host dst (src != dst), each a list of link ids
 * written to paths[i * max_len ...] with its length in lens[i]; failed links are avoided.
 * Returns the number of paths (0 when no path remains), or a negative cfit_err (CFIT_ERANGE
 * when a path is longer than max_len links: ask again with more room).  Multiple
 * paths are the ECMP / adaptive choices of the topology's routing; flow = flow id lets a
 * router hash a flow onto one ECMP path deterministically (pass -1 for all). */
CFIT_API int cfit_topo_paths(const cfit_topo *t, int src, int dst, int flow, int *paths, int *lens, int max,
                    int max_len);

/* Closed-form-checkable figures (cfit_topo_describe fills them). */
typedef struct cfit_topo_info {
    int hosts, switches, links;       /* links: cables (each two directed links) */
    int diameter;                     /* scale-out links on the longest route between hosts (NIC cables included) */
    double bisection_bytes_per_s;     /* per direction, across the worst balanced cut */
} cfit_topo_info;

CFIT_API int cfit_topo_describe(const cfit_topo *t, cfit_topo_info *out);

/* Fail n scale-out links at random (cables, both directions) with seed, or the links a spec
 * names ("leaf3-spine1,..." — the format is the topology's, docs/sim.md).  Returns CFIT_EOK,
 * CFIT_EPARSE/CFIT_ERANGE for a bad spec. */
CFIT_API int cfit_topo_fail_random(cfit_topo *t, int n, unsigned seed, cfit_diag *d);
CFIT_API int cfit_topo_fail_spec(cfit_topo *t, const char *spec, cfit_diag *d);

#ifdef __cplusplus
}
#endif
#endif
