/* topo_torus.c - 3D torus (k-ary 3-cube generalised to X x Y x Z) with dimension-order routing.
 *
 * One node per switch position: position (x, y, z) is switch "sw<x + X*(y + Y*z)>" with six
 * torus ports (rings in X, Y and Z; a ring of 2 has two cables between its switches, a ring of 1
 * none) and the NICs of one node's gpus GPUs.  Routing is dimension order: X, then Y, then Z,
 * each the shorter way round; a tie (distance exactly n/2) gives both directions, so a route
 * has up to 2^3 paths.  Paths through failed links are dropped; when every dimension-order
 * path is broken the route falls back to all shortest paths over the working links.
 * Closed forms (k-ary n-cube): diameter 2 + sum(floor(n_i/2)) links (two NICs plus the torus
 * hops); bisection = 2*N/n_max cables across the largest dimension (wraparound doubles the
 * cut), capped by the hosts' own NICs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/topo_internal.h"

enum { K_X, K_Y, K_Z, K_GPUS, NKEYS };

static const cfit__topo_key keys[NKEYS] = {
    [K_X] = {"x", 1, 1u << 20, NULL},
    [K_Y] = {"y", 1, 1u << 20, NULL},
    [K_Z] = {"z", 1, 1u << 20, NULL},
    [K_GPUS] = {"gpus", 1, 1u << 20, NULL},
};

typedef struct torus {
    int n[3], gpus, sw0;
    int *ring;     /* ring[3*p + dim]: link id from p to its + neighbour in dim, or -1 */
    int *nic;      /* nic[h]: link id from GPU h to its switch */
} torus;

static void free_torus(void *s)
{
    torus *tr = s;
    if (tr) {
        free(tr->ring);
        free(tr->nic);
        free(tr);
    }
}

static int coord(const torus *tr, int p, int dim)
{
    return dim == 0 ? p % tr->n[0] : dim == 1 ? p / tr->n[0] % tr->n[1] : p / (tr->n[0] * tr->n[1]);
}

static int step(const torus *tr, int p, int dim, int dir)
{
    int c = coord(tr, p, dim), n = tr->n[dim];
    int stride = dim == 0 ? 1 : dim == 1 ? tr->n[0] : tr->n[0] * tr->n[1];
    return p + (((c + dir + n) % n) - c) * stride;
}

/* Write the dimension-order path choosing direction bit i for tied dimension i. */
static int dor_path(const cfit_topo *t, const torus *tr, int src_host, int dst_host, int choice,
                    int *path, int max_len)
{
    int a = t->links[tr->nic[src_host]].to - tr->sw0, b = t->links[tr->nic[dst_host]].to - tr->sw0;
    int len = 0, tie = 0;
    path[len++] = tr->nic[src_host];
    for (int dim = 0; dim < 3; dim++) {
        int n = tr->n[dim], fwd = ((coord(tr, b, dim) - coord(tr, a, dim)) % n + n) % n;
        int dir = fwd * 2 < n ? 1 : fwd * 2 > n ? -1 : ((choice >> tie++) & 1) ? -1 : 1;
        int hops = dir > 0 ? fwd : n - fwd;
        for (int i = 0; i < hops; i++) {
            if (len + 2 > max_len)
                return -1;
            int q = step(tr, a, dim, dir);
            path[len++] = dir > 0 ? tr->ring[3 * a + dim] : tr->ring[3 * q + dim] ^ 1;
            a = q;
        }
    }
    path[len++] = tr->nic[dst_host] ^ 1;
    return len;
}

static int ties(const torus *tr, const cfit_topo *t, int src_host, int dst_host)
{
    int a = t->links[tr->nic[src_host]].to - tr->sw0, b = t->links[tr->nic[dst_host]].to - tr->sw0;
    int n = 0;
    for (int dim = 0; dim < 3; dim++) {
        int fwd = ((coord(tr, b, dim) - coord(tr, a, dim)) % tr->n[dim] + tr->n[dim]) % tr->n[dim];
        n += fwd && fwd * 2 == tr->n[dim];
    }
    return n;
}

static int broken(const cfit_topo *t, const int *path, int len)
{
    for (int i = 0; i < len; i++)
        if (t->links[path[i]].failed)
            return 1;
    return 0;
}

static int route(const cfit_topo *t, cfit__topo_scratch *ws, int src, int dst, int flow, int *paths, int *lens, int max,
                 int max_len)
{
    const torus *tr = t->state;
    if (src < 0 || dst < 0 || src >= t->nhosts || dst >= t->nhosts || src == dst || max < 1 ||
        max_len < 1)
        return CFIT_EINVALID;
    if (src / tr->gpus == dst / tr->gpus)   /* same node: over the scale-up switch */
        return cfit__topo_route_shortest(t, ws, src, dst, flow, paths, lens, max, max_len);
    int nchoice = 1 << ties(tr, t, src, dst), first = 0, np = 0;
    if (flow >= 0)
        first = (int)(cfit__topo_mix(((uint64_t)(unsigned)src << 32 | (unsigned)dst) ^
                                     cfit__topo_mix((uint64_t)flow)) % (uint64_t)nchoice);
    for (int i = 0; i < nchoice && np < max; i++) {
        int *p = paths + (size_t)np * max_len;
        int len = dor_path(t, tr, src, dst, (first + i) % nchoice, p, max_len);
        if (len < 0)
            return CFIT_ERANGE;
        if (broken(t, p, len))
            continue;
        lens[np++] = len;
        if (flow >= 0)
            break;
    }
    if (np == 0)
        return cfit__topo_route_shortest(t, ws, src, dst, flow, paths, lens, max, max_len);
    return np;
}

static int build(cfit_topo *t, torus *tr)
{
    const cfit_topo_params *p = &t->params;
    double bw = p->link_bw_bytes_per_s, lat = p->link_latency_s;
    int npos = tr->n[0] * tr->n[1] * tr->n[2], hosts = npos * tr->gpus, gpu0, rc;
    tr->ring = malloc((size_t)npos * 3 * sizeof *tr->ring);
    tr->nic = malloc((size_t)hosts * sizeof *tr->nic);
    if (!tr->ring || !tr->nic || cfit__topo_reserve(t, 2 * hosts + npos, 2 * hosts + 3 * npos))
        return CFIT_ENOMEM;
    if ((rc = cfit__topo_add_hosts(t, hosts, &gpu0)))
        return rc;
    tr->sw0 = t->nvert;
    for (int i = 0; i < npos; i++)
        if (cfit__topo_add_vertex(t, CFIT_VERTEX_SWITCH) < 0)
            return CFIT_ENOMEM;
    cfit__topo_name(t, "sw", tr->sw0, npos);
    for (int h = 0; h < hosts; h++)
        if ((tr->nic[h] = cfit__topo_add_cable(t, gpu0 + h, tr->sw0 + h / tr->gpus, bw, lat, 1)) < 0)
            return CFIT_ENOMEM;
    for (int q = 0; q < npos; q++)
        for (int dim = 0; dim < 3; dim++) {
            tr->ring[3 * q + dim] = -1;
            if (tr->n[dim] > 1 &&
                (tr->ring[3 * q + dim] = cfit__topo_add_cable(t, tr->sw0 + q,
                                                              tr->sw0 + step(tr, q, dim, 1), bw,
                                                              lat, 2)) < 0)
                return CFIT_ENOMEM;
        }
    return cfit__topo_finish(t);
}

/* "8x8x8" as the first item, then keys; or x=, y=, z= keys. */
static int parse(const char *body, uint64_t *v, int *given, cfit_diag *d)
{
    static const char kind[] = "torus3d";
    char dims[96], text[96];
    size_t n = strcspn(body, ",");
    const char *rest = body;
    if (n < sizeof dims && !memchr(body, '=', n) && n > 0) {
        memcpy(dims, body, n);
        dims[n] = '\0';
        memcpy(text, dims, n + 1);
        rest = body + n + (body[n] == ',');
        if (!*rest && body[n] == ',')
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "%s: empty item in '%s'", kind, body);
    }
    int rc = cfit__topo_parse_keys(kind, rest, keys, NKEYS, v, given, d);
    if (rc || rest == body)
        return rc;
    char *s = dims;
    for (int i = 0; i < 3; i++) {
        char *x = strchr(s, 'x');
        if ((i < 2) != (x != NULL))
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0,
                                 "%s: dimensions '%s': use XxYxZ, e.g. torus3d:8x8x8", kind, text);
        if (x)
            *x = '\0';
        if (given[i])
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "%s: key '%s' given twice", kind,
                                 keys[i].name);
        char one[128];
        snprintf(one, sizeof one, "%s=%s", keys[i].name, s);
        uint64_t val[NKEYS];
        int g[NKEYS];
        if ((rc = cfit__topo_parse_keys(kind, one, keys, NKEYS, val, g, d)))
            return rc;
        v[i] = val[i];
        given[i] = 1;
        s = x ? x + 1 : s;
    }
    return CFIT_EOK;
}

int cfit__topo_build_torus3d(const char *body, const cfit_topo_params *p, cfit_topo **out, cfit_diag *d)
{
    static const char kind[] = "torus3d";
    uint64_t v[NKEYS] = {1, 1, 1, 0};
    int given[NKEYS], rc;
    if ((rc = parse(body, v, given, d)))
        return rc;
    if (!given[K_X] || !given[K_Y] || !given[K_Z])
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0,
                             "torus3d: missing dimensions (torus3d:XxYxZ, e.g. torus3d:8x8x8)");
    uint64_t gpus = given[K_GPUS] ? v[K_GPUS] : (uint64_t)p->gpus_per_node;
    uint64_t npos = v[K_X] * v[K_Y], hosts;
    npos = npos > (1u << 30) ? (1ull << 40) : npos * v[K_Z];   /* saturate: no overflow */
    hosts = npos > (1u << 30) ? (1ull << 40) : npos * gpus;
    char what[96];
    snprintf(what, sizeof what, "%llux%llux%llu with %llu GPUs each", (unsigned long long)v[K_X],
             (unsigned long long)v[K_Y], (unsigned long long)v[K_Z], (unsigned long long)gpus);
    if ((rc = cfit__topo_check_size(d, kind, what, hosts, 2 * hosts + 3 * npos)))
        return rc;
    cfit_topo_params prm = *p;
    prm.gpus_per_node = (int)gpus;
    cfit_topo *t = cfit__topo_alloc(kind, &prm);
    torus *tr = calloc(1, sizeof *tr);
    if (!t || !tr) {
        free(tr);
        cfit_topo_free(t);
        return CFIT_ENOMEM;
    }
    *tr = (torus){{(int)v[K_X], (int)v[K_Y], (int)v[K_Z]}, (int)gpus, 0, NULL, NULL};
    t->state = tr;
    t->free_state = free_torus;
    t->route = route;
    if ((rc = build(t, tr))) {
        cfit_topo_free(t);
        return cfit_diag_set(d, rc, NULL, 0, 0, "torus3d: out of memory building %s", what);
    }
    int nmax = tr->n[0], diam = 2;
    for (int i = 0; i < 3; i++) {
        nmax = tr->n[i] > nmax ? tr->n[i] : nmax;
        diam += tr->n[i] / 2;
    }
    double cut = nmax > 1 ? 2.0 * (double)npos / nmax : (double)(hosts / 2);
    double nics = (double)(hosts / 2);
    t->info.diameter = diam;
    t->info.bisection_bytes_per_s = (cut < nics ? cut : nics) * prm.link_bw_bytes_per_s;
    *out = t;
    return CFIT_EOK;
}
