/* topo.c - the topology graph: builder, shortest-path ECMP routing, spec parsing, kinds table.
 *
 * A topology is a directed graph in CSR form (cables are link pairs 2c, 2c+1).  Routing by
 * default is every equal-cost shortest path: a BFS from the source host over non-failed links
 * that never passes through another GPU, with ties between equally short paths broken in favour
 * of fewer scale-out links (so two GPUs of one node talk over NVLink, not through their NICs).
 * The BFS work arrays are the caller's (a cfit__topo_scratch, which the simulator keeps in its
 * state) and are reused through a generation stamp, so a call costs what it visits, not the size
 * of the graph; a call without one allocates its own.  Routing never writes the topology.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/topo_internal.h"
#include "base/grow.h"

int cfit__topo_max_hosts = CFIT__TOPO_MAX_HOSTS;

static const cfit__topo_kind kinds[] = {
    {"fattree", cfit__topo_build_fattree},
    {"railopt", cfit__topo_build_railopt},
    {"dragonfly", cfit__topo_build_dragonfly},
    {"torus3d", cfit__topo_build_torus3d},
    {NULL, NULL},
};

void cfit_topo_params_init(cfit_topo_params *p)
{
    p->link_bw_bytes_per_s = 400e9 / 8.0;   /* 400 Gb/s NDR / 400GbE */
    p->link_latency_s = 1e-6;
    p->scaleup_bw_bytes_per_s = 450e9;      /* NVLink4, per direction */
    p->scaleup_latency_s = 1e-6;
    p->gpus_per_node = 8;
}

uint64_t cfit__topo_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* ---- building ---------------------------------------------------------------------------- */

cfit_topo *cfit__topo_alloc(const char *kind, const cfit_topo_params *p)
{
    cfit_topo *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    snprintf(t->kind, sizeof t->kind, "%s", kind);
    if (p)
        t->params = *p;
    else
        cfit_topo_params_init(&t->params);
    if (t->params.gpus_per_node < 1)
        t->params.gpus_per_node = 1;
    return t;
}

static int grow_vertices(cfit_topo *t, int need)
{
    size_t c2 = t->vert_cap, c3 = t->vert_cap;   /* t->vert_cap grows last, once all three have */
    if (cfit__grow(&t->vertex_host, &c2, (size_t)need, sizeof *t->vertex_host) ||
        cfit__grow(&t->host_vertex, &c3, (size_t)need, sizeof *t->host_vertex) ||
        cfit__grow(&t->vkind, &t->vert_cap, (size_t)need, sizeof *t->vkind))
        return -1;
    return 0;
}

int cfit__topo_reserve(cfit_topo *t, int nvert, int ncables)
{
    if (nvert < 0 || ncables < 0 || ncables > INT32_MAX / 2)
        return CFIT_ERANGE;
    if (grow_vertices(t, nvert) ||
        cfit__grow(&t->links, &t->link_cap, 2 * (size_t)ncables, sizeof *t->links))
        return CFIT_ENOMEM;
    return CFIT_EOK;
}

int cfit__topo_add_vertex(cfit_topo *t, cfit_vertex_kind k)
{
    if (t->nvert == INT32_MAX || grow_vertices(t, t->nvert + 1))
        return -1;
    int v = t->nvert++;
    t->vkind[v] = k;
    t->vertex_host[v] = -1;
    if (k == CFIT_VERTEX_GPU) {
        t->vertex_host[v] = t->nhosts;
        t->host_vertex[t->nhosts++] = v;
    }
    return v;
}

int cfit__topo_add_cable(cfit_topo *t, int a, int b, double bw_bytes_per_s, double latency_s, int tier)
{
    if (a < 0 || b < 0 || a >= t->nvert || b >= t->nvert || t->nlinks > INT32_MAX - 2 ||
        cfit__grow(&t->links, &t->link_cap, (size_t)t->nlinks + 2, sizeof *t->links))
        return -1;
    int id = t->nlinks;
    t->links[id] = (cfit_link){a, b, bw_bytes_per_s, latency_s, tier, 0};
    t->links[id + 1] = (cfit_link){b, a, bw_bytes_per_s, latency_s, tier, 0};
    t->nlinks += 2;
    return id;
}

int cfit__topo_finish(cfit_topo *t)
{
    free(t->adj_off);
    free(t->adj);
    t->adj_off = calloc((size_t)t->nvert + 1, sizeof *t->adj_off);
    t->adj = malloc(((size_t)t->nlinks + 1) * sizeof *t->adj);
    if (!t->adj_off || !t->adj)
        return CFIT_ENOMEM;
    for (int l = 0; l < t->nlinks; l++)
        t->adj_off[t->links[l].from + 1]++;
    for (int v = 0; v < t->nvert; v++)
        t->adj_off[v + 1] += t->adj_off[v];
    int *fill = malloc(((size_t)t->nvert + 1) * sizeof *fill);
    if (!fill)
        return CFIT_ENOMEM;
    memcpy(fill, t->adj_off, ((size_t)t->nvert + 1) * sizeof *fill);
    for (int l = 0; l < t->nlinks; l++)
        t->adj[fill[t->links[l].from]++] = l;
    free(fill);
    t->info.hosts = t->nhosts;
    t->info.switches = t->nvert - t->nhosts;
    t->info.links = t->nlinks / 2;
    return CFIT_EOK;
}

int cfit__topo_add_hosts(cfit_topo *t, int nhosts, int *first_gpu)
{
    int g = t->params.gpus_per_node, first = t->nvert;
    for (int h = 0; h < nhosts; h++)
        if (cfit__topo_add_vertex(t, CFIT_VERTEX_GPU) < 0)
            return CFIT_ENOMEM;
    cfit__topo_name(t, "gpu", first, nhosts);
    *first_gpu = first;
    if (g <= 1)
        return CFIT_EOK;
    int nodes = (nhosts + g - 1) / g, sw0 = t->nvert;
    for (int n = 0; n < nodes; n++)
        if (cfit__topo_add_vertex(t, CFIT_VERTEX_SWITCH) < 0)
            return CFIT_ENOMEM;
    cfit__topo_name(t, "nvs", sw0, nodes);
    for (int h = 0; h < nhosts; h++)
        if (cfit__topo_add_cable(t, first + h, sw0 + h / g, t->params.scaleup_bw_bytes_per_s,
                                 t->params.scaleup_latency_s, 0) < 0)
            return CFIT_ENOMEM;
    return CFIT_EOK;
}

void cfit__topo_name(cfit_topo *t, const char *prefix, int first, int count)
{
    if (t->nnames >= (int)(sizeof t->names / sizeof t->names[0]))
        return;
    struct cfit__topo_names *n = &t->names[t->nnames++];
    snprintf(n->prefix, sizeof n->prefix, "%s", prefix);
    n->first = first;
    n->count = count;
}

int cfit__topo_find_vertex(const cfit_topo *t, const char *name)
{
    for (int i = 0; i < t->nnames; i++) {
        const struct cfit__topo_names *n = &t->names[i];
        size_t len = strlen(n->prefix);
        const char *num = name + len;
        if (strncmp(name, n->prefix, len) || *num < '0' || *num > '9' || (num[0] == '0' && num[1]))
            continue;
        long v = 0;
        for (; *num >= '0' && *num <= '9' && v <= INT32_MAX; num++)
            v = 10 * v + (*num - '0');
        if (!*num && v < n->count)
            return n->first + (int)v;
    }
    return -1;
}

void cfit_topo_free(cfit_topo *t)
{
    if (!t)
        return;
    if (t->free_state)
        t->free_state(t->state);
    free(t->vkind);
    free(t->host_vertex);
    free(t->vertex_host);
    free(t->links);
    free(t->adj_off);
    free(t->adj);
    free(t);
}

/* ---- accessors --------------------------------------------------------------------------- */

const char *cfit_topo_kind_name(const cfit_topo *t) { return t->kind; }
int cfit_topo_hosts(const cfit_topo *t) { return t->nhosts; }
int cfit_topo_vertices(const cfit_topo *t) { return t->nvert; }
int cfit_topo_switches(const cfit_topo *t) { return t->nvert - t->nhosts; }
int cfit_topo_links(const cfit_topo *t) { return t->nlinks; }

int cfit_topo_host_vertex(const cfit_topo *t, int host)
{
    return host >= 0 && host < t->nhosts ? t->host_vertex[host] : -1;
}

cfit_vertex_kind cfit_topo_vertex_kind(const cfit_topo *t, int v)
{
    return v >= 0 && v < t->nvert ? t->vkind[v] : CFIT_VERTEX_SWITCH;
}

const cfit_link *cfit_topo_link(const cfit_topo *t, int id)
{
    return id >= 0 && id < t->nlinks ? &t->links[id] : NULL;
}

int cfit_topo_describe(const cfit_topo *t, cfit_topo_info *out)
{
    if (!t || !out)
        return CFIT_EINVALID;
    *out = t->info;
    out->hosts = t->nhosts;
    out->switches = t->nvert - t->nhosts;
    out->links = t->nlinks / 2;
    return CFIT_EOK;
}

/* ---- shortest-path ECMP routing -------------------------------------------------------------- */

/* Per-vertex BFS state, valid only where stamp == gen. */
struct cfit__topo_scratch {
    int cap;
    unsigned gen;
    unsigned *stamp;
    int *dist;       /* hops from the source */
    int *out;        /* scale-out links on the best path (tie-break) */
    double *count;   /* number of best paths from the source */
    int *queue;
    int *stack;      /* path enumeration: link ids (cap) and next-predecessor cursors (cap) */
};

static struct cfit__topo_scratch *scratch_new(int nvert)
{
    size_t n = (size_t)nvert + 1;
    struct cfit__topo_scratch *s = calloc(1, sizeof *s + n * (sizeof(unsigned) + 5 * sizeof(int) +
                                                             sizeof(double)));
    if (!s)
        return NULL;
    s->cap = nvert;
    s->count = (double *)(s + 1);
    s->stamp = (unsigned *)(s->count + n);
    s->dist = (int *)(s->stamp + n);
    s->out = s->dist + n;
    s->queue = s->out + n;
    s->stack = s->queue + n;   /* 2n ints: links and cursors */
    return s;
}

cfit__topo_scratch *cfit__topo_scratch_new(const cfit_topo *t) { return scratch_new(t->nvert); }

void cfit__topo_scratch_free(cfit__topo_scratch *s) { free(s); }

/* Ready ws for a search on t (a new generation, so no stamp needs clearing), or, when ws is NULL
 * or too small for t, a scratch of the call's own: *owned = 1, for scratch_give to free.
 * NULL on out of memory. */
static struct cfit__topo_scratch *scratch_take(const cfit_topo *t, cfit__topo_scratch *ws, int *owned)
{
    *owned = !ws || ws->cap < t->nvert;
    if (*owned)
        ws = scratch_new(t->nvert);
    if (ws && ++ws->gen == 0) {
        memset(ws->stamp, 0, (size_t)ws->cap * sizeof(unsigned));
        ws->gen = 1;
    }
    return ws;
}

static void scratch_give(struct cfit__topo_scratch *s, int owned)
{
    if (owned)
        free(s);
}

static int is_out(const cfit_link *l) { return l->tier > 0; }

/* BFS by (hops, scale-out links) from src to dst over non-failed links, not through other
 * GPUs; stops after the level holding dst.  Returns dist[dst] or -1. */
static int bfs(const cfit_topo *t, struct cfit__topo_scratch *s, int src, int dst)
{
    int head = 0, tail = 0, found = -1;
    s->stamp[src] = s->gen;
    s->dist[src] = 0;
    s->out[src] = 0;
    s->count[src] = 1.0;
    s->queue[tail++] = src;
    while (head < tail) {
        int u = s->queue[head++];
        if (found >= 0 && s->dist[u] >= found)
            break;
        for (int i = t->adj_off[u]; i < t->adj_off[u + 1]; i++) {
            const cfit_link *l = &t->links[t->adj[i]];
            int v = l->to;
            if (l->failed || (v != dst && t->vkind[v] == CFIT_VERTEX_GPU))
                continue;   /* other GPUs are never on a route: do not even queue them */
            int d = s->dist[u] + 1, o = s->out[u] + is_out(l);
            if (s->stamp[v] != s->gen) {
                s->stamp[v] = s->gen;
                s->dist[v] = d;
                s->out[v] = o;
                s->count[v] = s->count[u];
                s->queue[tail++] = v;
                if (v == dst)
                    found = d;
            } else if (s->dist[v] == d && o < s->out[v]) {
                s->out[v] = o;
                s->count[v] = s->count[u];
            } else if (s->dist[v] == d && o == s->out[v]) {
                s->count[v] += s->count[u];
            }
        }
    }
    return found;
}

/* Link l (into v) lies on a best path: its tail is one hop closer with the right tie-break. */
static int on_dag(const cfit_topo *t, const struct cfit__topo_scratch *s, int src, int l, int v)
{
    const cfit_link *k = &t->links[l];
    int u = k->from;
    return !k->failed && s->stamp[u] == s->gen && s->dist[u] == s->dist[v] - 1 &&
           s->out[u] + is_out(k) == s->out[v] && (u == src || t->vkind[u] != CFIT_VERTEX_GPU);
}

/* The one path flow hashes to: walk back from dst choosing each predecessor with probability
 * proportional to its path count (so each best path is equally likely over flows). */
static void pick_path(const cfit_topo *t, const struct cfit__topo_scratch *s, int src, int dst,
                      uint64_t h, int *path)
{
    int v = dst, n = s->dist[dst];
    while (v != src) {
        h = cfit__topo_mix(h);
        double r = (double)(h >> 11) * 0x1.0p-53 * s->count[v], acc = 0.0;
        int pick = -1;
        for (int i = t->adj_off[v]; i < t->adj_off[v + 1]; i++) {
            int l = t->adj[i] ^ 1;   /* the reverse of an outgoing link comes into v */
            if (!on_dag(t, s, src, l, v))
                continue;
            pick = l;
            acc += s->count[t->links[l].from];
            if (r < acc)
                break;
        }
        path[--n] = pick;
        v = t->links[pick].from;
    }
}

/* Every best path, up to max, by depth-first search back from dst in adjacency order. */
static int all_paths(const cfit_topo *t, struct cfit__topo_scratch *s, int src, int dst, int *paths,
                     int *lens, int max, int max_len)
{
    int len = s->dist[dst], np = 0, depth = 0, v = dst;
    int *links = s->stack, *cursor = s->stack + s->cap + 1;
    cursor[0] = t->adj_off[dst];
    while (depth >= 0 && np < max) {
        if (v == src) {
            for (int i = 0; i < len; i++)
                paths[(size_t)np * max_len + i] = links[len - 1 - i];
            lens[np++] = len;
            v = t->links[links[--depth]].to;
            continue;
        }
        int found = -1;
        while (cursor[depth] < t->adj_off[v + 1]) {
            int l = t->adj[cursor[depth]++] ^ 1;
            if (on_dag(t, s, src, l, v)) {
                found = l;
                break;
            }
        }
        if (found < 0) {
            if (--depth >= 0)
                v = t->links[links[depth]].to;
            continue;
        }
        links[depth++] = found;
        v = t->links[found].from;
        cursor[depth] = t->adj_off[v];
    }
    return np;
}

int cfit__topo_route_shortest(const cfit_topo *t, cfit__topo_scratch *ws, int src_host, int dst_host, int flow, int *paths,
                              int *lens, int max, int max_len)
{
    if (!t || src_host < 0 || dst_host < 0 || src_host >= t->nhosts || dst_host >= t->nhosts ||
        src_host == dst_host || !paths || !lens || max < 1 || max_len < 1 || !t->adj_off)
        return CFIT_EINVALID;
    int owned, src = t->host_vertex[src_host], dst = t->host_vertex[dst_host], rc;
    struct cfit__topo_scratch *s = scratch_take(t, ws, &owned);
    if (!s)
        return CFIT_ENOMEM;
    int len = bfs(t, s, src, dst);
    if (len < 0) {
        rc = 0;
    } else if (len > max_len) {
        rc = CFIT_ERANGE;
    } else if (flow >= 0) {
        uint64_t h = cfit__topo_mix(((uint64_t)(unsigned)src_host << 32) ^ (unsigned)dst_host);
        pick_path(t, s, src, dst, cfit__topo_mix(h ^ (uint64_t)flow), paths);
        lens[0] = len;
        rc = 1;
    } else {
        rc = all_paths(t, s, src, dst, paths, lens, max, max_len);
    }
    scratch_give(s, owned);
    return rc;
}

int cfit__topo_hops(const cfit_topo *t, cfit__topo_scratch *ws, int src_host, int dst_host)
{
    if (!t || src_host < 0 || dst_host < 0 || src_host >= t->nhosts || dst_host >= t->nhosts ||
        src_host == dst_host || !t->adj_off)
        return CFIT_EINVALID;
    int owned;
    struct cfit__topo_scratch *s = scratch_take(t, ws, &owned);
    if (!s)
        return CFIT_ENOMEM;
    int len = bfs(t, s, t->host_vertex[src_host], t->host_vertex[dst_host]);
    scratch_give(s, owned);
    return len < 0 ? 0 : len;
}

/* The router's paths with the caller's scratch (NULL: the router's own for the call). */
static int paths_with(const cfit_topo *t, cfit__topo_scratch *ws, int src, int dst, int flow, int *paths, int *lens,
                      int max, int max_len)
{
    if (!t)
        return CFIT_EINVALID;
    cfit__topo_router r = t->route ? t->route : cfit__topo_route_shortest;
    return r(t, ws, src, dst, flow, paths, lens, max, max_len);
}

int cfit_topo_paths(const cfit_topo *t, int src, int dst, int flow, int *paths, int *lens, int max,
                    int max_len)
{
    return paths_with(t, NULL, src, dst, flow, paths, lens, max, max_len);
}

int cfit_topo_gpus_per_node(const cfit_topo *t)
{
    return t && t->params.gpus_per_node > 0 ? t->params.gpus_per_node : 1;
}

int cfit__topo_paths_split(const cfit_topo *t, cfit__topo_scratch *ws, int src, int dst, int *paths, int *lens,
                           int max, int max_len, int *nmin)
{
    if (t && t->route_split)
        return t->route_split(t, ws, src, dst, paths, lens, max, max_len, nmin);
    int np = paths_with(t, ws, src, dst, -1, paths, lens, max, max_len);
    *nmin = np > 0 ? np : 0;
    return np;
}

/* ---- specs ----------------------------------------------------------------------------------- */

int cfit__topo_range(cfit_diag *d, const char *kind, const char *key, uint64_t val, const char *rule,
                     ...)
{
    char why[256];
    va_list ap;
    va_start(ap, rule);
    vsnprintf(why, sizeof why, rule, ap);
    va_end(ap);
    return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "%s: %s=%llu: %s", kind, key,
                         (unsigned long long)val, why);
}

int cfit__topo_check_size(cfit_diag *d, const char *kind, const char *what, uint64_t hosts,
                          uint64_t cables)
{
    if (hosts > (uint64_t)cfit__topo_max_hosts)
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0,
                             "%s: %s gives %llu GPUs, more than the limit of %d", kind, what,
                             (unsigned long long)hosts, cfit__topo_max_hosts);
    if (cables > 16 * (uint64_t)cfit__topo_max_hosts)
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0,
                             "%s: %s gives %llu cables, more than the limit of %llu", kind, what,
                             (unsigned long long)cables,
                             (unsigned long long)(16 * (uint64_t)cfit__topo_max_hosts));
    if (hosts < 2)
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "%s: %s gives %llu GPUs, need at least 2",
                             kind, what, (unsigned long long)hosts);
    return CFIT_EOK;
}

static int find_key(const cfit__topo_key *keys, int nkeys, const char *name, size_t len)
{
    for (int i = 0; i < nkeys; i++)
        if (strlen(keys[i].name) == len && !strncmp(keys[i].name, name, len))
            return i;
    return -1;
}

static int unknown_key(const char *kind, const cfit__topo_key *keys, int nkeys, const char *key,
                       cfit_diag *d)
{
    const char *names[16];
    char list[160] = "";
    int n = nkeys < 16 ? nkeys : 16;
    for (int i = 0; i < n; i++) {
        names[i] = keys[i].name;
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", keys[i].name);
    }
    const char *hint = cfit_suggest(key, names, (size_t)n);
    if (hint)
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0,
                             "unknown key '%s' for %s (did you mean '%s'?)", key, kind, hint);
    return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "unknown key '%s' for %s (keys: %s)", key,
                         kind, list);
}

static int parse_value(const char *kind, const cfit__topo_key *k, const char *val, uint64_t *out,
                       cfit_diag *d)
{
    if (k->words) {
        for (int w = 0; k->words[w]; w++)
            if (!strcmp(k->words[w], val)) {
                *out = (uint64_t)w;
                return CFIT_EOK;
            }
        char list[160] = "";
        for (int w = 0; k->words[w]; w++) {
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s%s", w ? "|" : "", k->words[w]);
        }
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "%s: %s='%s': use %s", kind, k->name, val,
                             list);
    }
    cfit_diag sub;
    cfit_diag_clear(&sub);
    int rc = cfit_parse_count(val, out, &sub);
    if (rc)
        return cfit_diag_set(d, rc, NULL, 0, 0, "%s: %s: %s", kind, k->name, sub.msg);
    if (*out < k->min)
        return cfit__topo_range(d, kind, k->name, *out, "%s must be at least %llu", k->name,
                                (unsigned long long)k->min);
    if (*out > k->max)
        return cfit__topo_range(d, kind, k->name, *out, "%s must be at most %llu", k->name,
                                (unsigned long long)k->max);
    return CFIT_EOK;
}

int cfit__topo_parse_keys(const char *kind, const char *body, const cfit__topo_key *keys, int nkeys,
                          uint64_t *vals, int *given, cfit_diag *d)
{
    char item[128];
    for (int i = 0; i < nkeys; i++)
        given[i] = 0;
    for (const char *p = body; *p;) {
        size_t n = strcspn(p, ",");
        if (n >= sizeof item)
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "%s: item '%.20s...' is too long", kind,
                                 p);
        memcpy(item, p, n);
        item[n] = '\0';
        p += n + (p[n] == ',');
        if (n == 0 || (!*p && p[-1] == ','))
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "%s: empty item in '%s'", kind, body);
        char *eq = strchr(item, '=');
        if (eq)
            *eq = '\0';
        int k = find_key(keys, nkeys, item, strlen(item));
        if (k < 0)
            return unknown_key(kind, keys, nkeys, item, d);
        if (!eq || !eq[1])
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "%s: key '%s' needs a value (%s=N)",
                                 kind, item, item);
        if (given[k])
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "%s: key '%s' given twice", kind, item);
        int rc = parse_value(kind, &keys[k], eq + 1, &vals[k], d);
        if (rc)
            return rc;
        given[k] = 1;
    }
    return CFIT_EOK;
}

int cfit_topo_new(const char *spec, const cfit_topo_params *params, cfit_topo **out, cfit_diag *d)
{
    const char *names[sizeof kinds / sizeof kinds[0]];
    char kind[32];
    if (!out)
        return CFIT_EINVALID;
    *out = NULL;
    if (!spec)
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "empty topology spec");
    size_t n = strcspn(spec, ":");
    snprintf(kind, sizeof kind, "%.*s", (int)(n < sizeof kind ? n : sizeof kind - 1), spec);
    const char *body = spec[n] ? spec + n + 1 : "";
    size_t nk = 0;
    for (const cfit__topo_kind *k = kinds; k->name; k++) {
        names[nk++] = k->name;
        if (strlen(k->name) == n && !strncmp(k->name, spec, n)) {
            cfit_topo_params p;
            if (params)
                p = *params;
            else
                cfit_topo_params_init(&p);
            if (p.gpus_per_node < 1)
                p.gpus_per_node = 1;
            return k->build(body, &p, out, d);
        }
    }
    const char *hint = cfit_suggest(kind, names, nk);
    if (hint)
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0,
                             "unknown topology '%s' (did you mean '%s'?)", kind, hint);
    return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0,
                         "unknown topology '%s' (use fattree, railopt, dragonfly or torus3d)", kind);
}

/* ---- failures -------------------------------------------------------------------------------- */

static void fail_cable(cfit_topo *t, int c)
{
    t->links[2 * c].failed = t->links[2 * c + 1].failed = 1;
}

/* Scale-out cables between two switches: the ones random failures choose from. */
static int fabric_cable(const cfit_topo *t, int c)
{
    const cfit_link *l = &t->links[2 * c];
    return l->tier > 0 && !l->failed && t->vkind[l->from] == CFIT_VERTEX_SWITCH &&
           t->vkind[l->to] == CFIT_VERTEX_SWITCH;
}

int cfit_topo_fail_random(cfit_topo *t, int n, unsigned seed, cfit_diag *d)
{
    if (!t)
        return CFIT_EINVALID;
    int ncables = t->nlinks / 2, m = 0;
    if (n < 0)
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "cannot fail %d links: need 0 or more", n);
    int *cand = malloc(((size_t)ncables + 1) * sizeof *cand);
    if (!cand)
        return CFIT_ENOMEM;
    for (int c = 0; c < ncables; c++)
        if (fabric_cable(t, c))
            cand[m++] = c;
    if (n > m) {
        free(cand);
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0,
                             "cannot fail %d links: %s has %d working switch-to-switch cables", n,
                             t->kind, m);
    }
    uint64_t s = seed;
    for (int i = 0; i < n; i++) {   /* partial Fisher-Yates with splitmix64 */
        s += 0x9e3779b97f4a7c15ull;
        int j = i + (int)(cfit__topo_mix(s) % (uint64_t)(m - i));
        int c = cand[j];
        cand[j] = cand[i];
        cand[i] = c;
        fail_cable(t, c);
    }
    free(cand);
    return CFIT_EOK;
}

static int fail_one(cfit_topo *t, const char *item, cfit_diag *d)
{
    char a[64], b[64];
    const char *dash = strchr(item, '-');
    if (!dash || dash == item || !dash[1] || strchr(dash + 1, '-') ||
        (size_t)(dash - item) >= sizeof a || strlen(dash + 1) >= sizeof b)
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0,
                             "failure '%s': use SWITCH-SWITCH, e.g. leaf3-spine1", item);
    snprintf(a, sizeof a, "%.*s", (int)(dash - item), item);
    snprintf(b, sizeof b, "%s", dash + 1);
    int va = cfit__topo_find_vertex(t, a), vb = cfit__topo_find_vertex(t, b);
    for (int i = 0; i < 2; i++) {
        if ((i ? vb : va) >= 0)
            continue;
        char list[160] = "";
        for (int k = 0; k < t->nnames; k++) {
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s%s0..%d", k ? ", " : "", t->names[k].prefix,
                     t->names[k].count - 1);
        }
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "failure '%s': no vertex '%s' in %s (%s)",
                             item, i ? b : a, t->kind, list);
    }
    for (int i = t->adj_off[va]; i < t->adj_off[va + 1]; i++) {
        int l = t->adj[i];
        if (t->links[l].to == vb && !t->links[l].failed) {
            fail_cable(t, l / 2);
            return CFIT_EOK;
        }
    }
    return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "failure '%s': no working cable between %s and %s",
                         item, a, b);
}

int cfit_topo_fail_spec(cfit_topo *t, const char *spec, cfit_diag *d)
{
    char item[160];
    if (!t || !spec)
        return CFIT_EINVALID;
    if (!*spec)
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "empty failure spec");
    for (const char *p = spec; *p;) {
        size_t n = strcspn(p, ",");
        snprintf(item, sizeof item, "%.*s", (int)(n < sizeof item ? n : sizeof item - 1), p);
        p += n + (p[n] == ',');
        if (n == 0 || (!*p && p[-1] == ','))
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "empty item in failure spec '%s'", spec);
        int rc = fail_one(t, item, d);
        if (rc)
            return rc;
    }
    return CFIT_EOK;
}
