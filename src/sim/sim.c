/* sim.c - the flow-level engine: max-min fair rates by progressive filling, step by step.
 *
 * A step is a set of flows (src host, dst host, bytes).  Each flow is split evenly over the
 * equal-cost candidate paths the topology's router returns - all of them up to
 * CFIT__SIM_MAX_PATHS, else that many drawn from even slices of the router's list: one subflow per
 * path, i.e. adaptive packet spraying rather than one hashed path per flow, so results do
 * not hinge on ECMP hash collisions.  Subflows share links by max-min fairness (progressive
 * filling, fill() below: O(subflows x path length x log), flat arrays); a flow's bytes follow
 * its subflows' rates.  A step lasts until its slowest flow is done - bytes / the sum of its
 * subflows' rates - plus lat_mult x the sum of its path's link latencies.  Rates are held for the whole step (static max-min): a flow whose
 * bottleneck is freed when faster flows finish is not sped up, so the time is an upper bound
 * of the fluid model, and exact when the slowest flows' bottleneck links carry only flows as
 * slow as they with as many bytes - every non-blocking case, and every ring step whose flows
 * share one path shape.  docs/sim.md "Flow model".
 */
#include "sim/sim_internal.h"
#include "sim/topo_internal.h"
#include "base/grow.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CFIT__SIM_MAX_PATHS 16      /* subflows per flow at most */
#define CFIT__SIM_ENUM_PATHS 1024    /* candidate paths asked of the router, to choose from */
#define CFIT__SIM_MAX_LEN 64        /* links per candidate path the buffer starts with (grown on demand) */
#define CFIT__SIM_ROUTE_LIMIT 4096   /* links per route at most: the buffer's growth stops here */
#define CFIT__SIM_CURVE_C 16       /* curve(): latency terms given one shared entry at most */
#define CFIT__SIM_UGAL_THRESHOLD 0.0   /* flows a minimal path may carry beyond the Valiant one's load */

/* fill()'s state of one used link, together so a frozen subflow's update touches one line. */
struct fill_link {
    double rem;                 /* capacity not yet given out in this filling */
    double wsum;                /* weight of the unfrozen subflows crossing */
    double lvl;                 /* fill level at which rem was last brought up to date */
    int cnt;                    /* unfrozen subflows crossing */
    int dmark;                  /* number of the pop that last touched it */
};

/* When a link was last used and where it sits in used then (its slot), side by side. */
struct link_mark {
    int step, slot;
};

struct cfit_sim_state {
    const cfit_topo *t;
    cfit__topo_scratch *route_ws;   /* the router's search arrays (topo_internal.h) */
    int n;                      /* ranks */
    const int *host;            /* rank -> host */
    cfit_diag *d;
    /* per link */
    int nlinks;
    struct fill_link *lk;       /* fill(): per used link, by its slot */
    struct link_mark *mark;     /* per link: step number that last used it, its slot then */
    int *used;                  /* links used by this step */
    int nused;
    double *link_bytes;         /* bytes carried over the whole collective */
    double *load;               /* flows of this step routed over the link (valid when marked) */
    double *pend;               /* flows still to be routed whose minimal path crosses it (UGAL) */
    int *pmark;                 /* step number that last set pend */
    int *dlist;                 /* fill(): slots touched by the current pop (lk.dmark = its number) */
    int popno;
    /* per subflow of the current step */
    int nf;
    size_t fcap;
    int *off, *len, *bneck;
    int *nsub;                  /* on a flow's first subflow: how many it has (they follow it) */
    double *left, *rate, *lat;
    double *w;                  /* weight: 1 / the flow's subflow count (a flow's share of a link) */
    unsigned char *frozen;
    int *hpos;                  /* by slot: position in the heap (-1: out) */
    int *inc_off, *inc;         /* link slot -> subflows crossing it */
    size_t inc_cap, incl_cap;
    struct heap_ent *heap;
    int nheap;
    size_t heapcap;
    int *pbuf, *plens;          /* the router's candidate paths for one flow */
    int max_len;                /* pbuf's room per path: CFIT__SIM_MAX_LEN, doubled up to CFIT__SIM_ROUTE_LIMIT */
    int *pool;                  /* every subflow's path, as slots: link used[pool[i]] */
    int npool;
    size_t poolcap;
    double *crate;              /* curve(): per flow its rate, then (from ccap on) its latency */
    size_t ccap;
    int stepno;
    int indexed;                /* the topology indexes its paths and no link has failed */
    int take_n[4], take[4], group[4], ntake;   /* pick_indexed: slices and group size per path count */
    double lat_mult;            /* of the current step */
    int slow_bneck;             /* bottleneck link of its slowest subflow, or -1 */
    /* a step solved in one block of its planes (step_planes) */
    int planes_p;               /* plane blocks of the current step: 1 = every subflow solved */
    unsigned char *shared;      /* per link: 1 outside the topology's planes (NULL: no planes) */
    double *pbytes;             /* bytes of block-0 plane links over such steps, not yet copied */
    int pbytes_p;               /* the blocks they stand for (0: none held) */
    int *fpath;
    size_t fpcap;         /* per flow of the step: 2 x its path count + 1 if it runs through planes */
    int fpath_n;                /* flows fpath holds (0: none, add_flow asks the topology) */
    double *cmin;               /* fill_tight(): per slot, the least level of a subflow crossing */
    cfit_sim_alltoallv a2av;    /* alltoallv's pattern (cfit_sim_state_set_alltoallv) */
    double count_bytes;         /* the size algbw divides by, when the schedule set one (alltoallv) */
    size_t cmin_cap;
    /* totals */
    double time_s, slowest_step_s;
    long steps, flows, solved;
    int bottleneck_tier;
};

/* The per-subflow arrays, all of s->fcap entries, with room for need subflows. */
static int grow_flows(cfit__sim *s, int need)
{
    size_t c = cfit__grow_cap(s->fcap, (size_t)need, sizeof(double));
    if (!c)
        return -1;
    if (c == s->fcap)
        return 0;
    void *arr[] = {&s->off, &s->len, &s->bneck, &s->nsub, &s->left, &s->rate, &s->lat, &s->frozen, &s->w};
    size_t sz[] = {sizeof(int), sizeof(int), sizeof(int), sizeof(int), sizeof(double), sizeof(double),
                   sizeof(double), 1, sizeof(double)};
    for (int i = 0; i < 9; i++) {
        size_t cap = s->fcap;
        if (cfit__grow(arr[i], &cap, c, sz[i]))
            return -1;
    }
    s->fcap = c;
    return 0;
}

/* The load of a path's busiest link: flows of the current step already routed over it
 * (a flow split over m paths counts 1/m on each). */
static double link_load(const cfit__sim *s, int l)
{
    return (s->mark[l].step == s->stepno ? s->load[l] : 0) + (s->pmark[l] == s->stepno ? s->pend[l] : 0);
}

static double path_load(const cfit__sim *s, const int *path, int len)
{
    double q = 0;
    for (int i = 0; i < len; i++) {
        double x = link_load(s, path[i]);
        q = x > q ? x : q;
    }
    return q;
}

/* Add (sign 1) or remove (-1) a flow's pending minimal demand: 1/nmin on each minimal path. */
static void pend_add(cfit__sim *s, const int *paths, const int *lens, int nmin, double sign)
{
    for (int p = 0; p < nmin; p++)
        for (int i = 0; i < lens[p]; i++) {
            int l = paths[(size_t)p * s->max_len + i];
            if (s->pmark[l] != s->stepno)
                s->pmark[l] = s->stepno, s->pend[l] = 0;
            s->pend[l] += sign / nmin;
        }
}

/* The least loaded of paths [from, to): its busiest link's load. */
static double set_load(const cfit__sim *s, const int *paths, const int *lens, int from, int to)
{
    double q = INFINITY;
    for (int i = from; i < to && q > 0; i++) {
        double x = path_load(s, paths + (size_t)i * s->max_len, lens[i]);
        q = x < q ? x : q;
    }
    return q;
}

/* UGAL at flow level (an adaptive router's choice per flow): paths [0, nmin) are minimal, the
 * rest non-minimal (Valiant).  A link's load counts the flows of this step routed over it and
 * those still to be routed whose minimal path crosses it (the queue a flow would join); the
 * flow goes minimal when q_min <= q_val + CFIT__SIM_UGAL_THRESHOLD, q the busiest link's
 * load on the least loaded path of each kind with the flow itself on it - BookSim's
 * q_min H_min <= q_val H_val + T, with bottleneck loads for queues and equal weights, since at
 * flow level a flow's finish is set by its bottleneck, not by its hop count (docs/sim.md).
 * Else the Valiant paths move to the front.  Returns how many paths the flow may use. */
static int ugal_choose(cfit__sim *s, int *paths, int *lens, int np, int nmin)
{
    pend_add(s, paths, lens, nmin, -1.0);   /* the flow's own demand, counted below instead */
    int nval = np - nmin, spread = nval < CFIT__SIM_MAX_PATHS ? nval : CFIT__SIM_MAX_PATHS;
    double qmin = set_load(s, paths, lens, 0, nmin) + 1.0 / nmin;
    double qval = set_load(s, paths, lens, nmin, np) + 1.0 / spread;
    if (qmin <= qval + CFIT__SIM_UGAL_THRESHOLD)
        return nmin;
    memmove(paths, paths + (size_t)nmin * s->max_len, sizeof *paths * (size_t)nval * (size_t)s->max_len);
    memmove(lens, lens + nmin, sizeof *lens * (size_t)nval);
    return nval;
}

/* Add one flow's subflows (one per candidate path). */
/* How many slices to split n indexed paths into: the router lists them in groups of g that
 * share their first switch hop (a fat-tree's paths through one aggregation switch), and slices
 * that cut groups unevenly load some uplinks more than others (16 slices of 1.5 groups ran a
 * shift on a full fattree:k=48 1.09x slow).  So: the most slices, at most
 * CFIT__SIM_MAX_PATHS, that hold whole groups or split every group alike; else the most. */
static int slices_for(int n, int g)
{
    int groups = g > 0 ? n / g : 0;
    if (g <= 0 || groups * g != n)
        return CFIT__SIM_MAX_PATHS;
    for (int take = CFIT__SIM_MAX_PATHS; take > 1; take--)
        if (groups % take == 0 || (take % groups == 0 && g % (take / groups) == 0))
            return take;
    return CFIT__SIM_MAX_PATHS;
}

/* The same choice for an indexed ECMP set of n > CFIT__SIM_MAX_PATHS paths (no link failed):
 * slices aligned with the router's groups (slices_for), in each the first path whose busiest
 * link carries the fewest subflows of this step: the topology's path_best where it has one,
 * else a look at each path that stops at the first idle one and passes over a group whose
 * shared links cannot beat the best. */
/* How many slices pick_indexed splits the n indexed paths from hs to hd into (and the group size
 * g it found, when g is not NULL): cached by path count, a router's group size following from it.
 * Uses pbuf as scratch. */
static int indexed_take(cfit__sim *s, int hs, int hd, int n, int *g_out)
{
    int tmp[CFIT__SIM_MAX_LEN], take = 0, g = 1;
    for (int i = 0; i < 4 && !take; i++)
        if (s->take_n[i] == n)
            take = s->take[i], g = s->group[i];
    if (!take) {
        int len0 = s->t->path_at(s->t, hs, hd, 0, s->pbuf);
        while (g < n && len0 > 1 && s->t->path_at(s->t, hs, hd, g, tmp) > 1 && tmp[1] == s->pbuf[1])
            g++;
        take = slices_for(n, g);
        int at = s->ntake++ % 4;
        s->take_n[at] = n, s->take[at] = take, s->group[at] = g;
    }
    if (g_out)
        *g_out = g;
    return take;
}

/* The same choice for an indexed ECMP set of n > CFIT__SIM_MAX_PATHS paths (no link failed):
 * slices aligned with the router's groups (slices_for), in each the first path whose busiest
 * link carries the fewest subflows of this step: the topology's path_best where it has one,
 * else a look at each path that stops at the first idle one and passes over a group whose
 * shared links cannot beat the best.  Only the first 1/blocks of the slices are picked (a step
 * solved in one of `blocks` plane blocks, step_planes); returns the number of slices of the set. */
static int pick_indexed(cfit__sim *s, int hs, int hd, int n, int blocks, int *paths, int *lens)
{
    int tmp[CFIT__SIM_MAX_LEN], g = 1, take = indexed_take(s, hs, hd, n, &g), upto = take / blocks;
    /* Indexed means no adaptive router, so a link's load is load[] alone, and add_flows keeps
     * load[] 0 on every link this step has not used (link_load without the marks). */
    const double *load = s->load;
    for (int j = 0; j < take && j < upto; j++) {
        int lo = (int)((long)j * n / take), hi = (int)((long)(j + 1) * n / take);
        int *best_p = paths + (size_t)j * s->max_len;
        double best = INFINITY;
        if (s->t->path_best) {   /* the topology knows which links its paths share */
            lens[j] = s->t->path_best(s->t, hs, hd, lo, hi, load, best_p);
            continue;
        }
        for (int i = lo; i < hi && best > 0; i++) {
            int len = s->t->path_at(s->t, hs, hd, i, tmp);
            /* its busiest link's load q, and q01 of its first two links, shared by its group */
            double q = 0, q01 = 0;
            for (int k = 0; k < len; k++) {
                double x = load[tmp[k]];
                q = x > q ? x : q;
                if (k == 1)
                    q01 = q;
            }
            /* no path of its group can beat it: its shared links are too busy, it has only
             * them, or they are its busiest */
            int skip = g > 1 && (len <= 2 || q01 >= best || q <= q01);
            if (q < best) {
                best = q, lens[j] = len;
                memcpy(best_p, tmp, sizeof *tmp * (size_t)len);
            }
            if (skip)
                i = (i / g + 1) * g - 1;
        }
    }
    return take;
}

/* The router's candidate paths from rank src to rank dst into pbuf (as cfit__topo_paths_split).
 * A path longer than the buffer's room (the router's CFIT_ERANGE) doubles the room, up to
 * CFIT__SIM_ROUTE_LIMIT links, and asks again; a route longer than that is CFIT_ERANGE with
 * s->d naming the pair, the route's length and the limit (docs/sim.md "Route length"). */
static int route_flow(cfit__sim *s, int src, int dst, int *nmin)
{
    int hs = s->host[src], hd = s->host[dst];
    for (;;) {
        int np = cfit__topo_paths_split(s->t, s->route_ws, hs, hd, s->pbuf, s->plens, CFIT__SIM_ENUM_PATHS, s->max_len, nmin);
        if (np != CFIT_ERANGE)
            return np;
        if (s->max_len >= CFIT__SIM_ROUTE_LIMIT) {
            int hops = cfit__topo_hops(s->t, s->route_ws, hs, hd);
            char len[48];
            if (hops > CFIT__SIM_ROUTE_LIMIT)
                snprintf(len, sizeof len, "%d links", hops);
            else
                snprintf(len, sizeof len, "more than %d links", CFIT__SIM_ROUTE_LIMIT);
            return cfit_diag_set(s->d, CFIT_ERANGE, NULL, 0, 0,
                                 "%s: the route from rank %d (host %d) to rank %d (host %d) takes %s, more than "
                                 "the simulator's limit of %d links per route",
                                 cfit_topo_kind_name(s->t), src, hs, dst, hd, len, CFIT__SIM_ROUTE_LIMIT);
        }
        int room = 2 * s->max_len < CFIT__SIM_ROUTE_LIMIT ? 2 * s->max_len : CFIT__SIM_ROUTE_LIMIT;
        int *q = realloc(s->pbuf, (size_t)CFIT__SIM_ENUM_PATHS * (size_t)room * sizeof *q);
        if (!q)
            return cfit_diag_set(s->d, CFIT_ENOMEM, NULL, 0, 0, "out of memory routing rank %d to rank %d", src,
                                 dst);
        s->pbuf = q, s->max_len = room;
    }
}

/* The subflows of one flow on its np chosen paths: the first `keep` of them (all, or plane block
 * 0's in a step solved in one block of P: keep = np / P), each with 1/np of the flow (w, bytes)
 * and counting 1/np on its plane links' load and P/np on its shared links' (what all P blocks'
 * subflows put there).  A flow outside the planes in such a step keeps every subflow at 1/P of
 * its weight and bytes, as the shared links it crosses keep 1/P of their rate (fill). */
static int add_subflows(cfit__sim *s, const int *paths, const int *lens, int np, int keep, int planar, double bytes)
{
    int P = s->planes_p;
    double scale = planar || P <= 1 ? 1.0 : 1.0 / P, shared_load = planar ? (double)P / np : 1.0 / np;
    if (grow_flows(s, s->nf + keep))
        return CFIT_ENOMEM;
    for (int p = 0; p < keep; p++) {
        const int *path = paths + (size_t)p * s->max_len;
        if (cfit__grow(&s->pool, &s->poolcap, s->npool + lens[p], sizeof(int)))
            return CFIT_ENOMEM;
        int f = s->nf++;
        s->off[f] = s->npool;
        s->len[f] = lens[p];
        s->left[f] = bytes / np * scale;
        s->w[f] = 1.0 / np * scale;
        s->bneck[f] = -1;
        double lat = 0;
        for (int i = 0; i < lens[p]; i++) {
            int l = path[i];
            struct link_mark *mk = &s->mark[l];
            if (mk->step != s->stepno) {   /* its first use in this step */
                mk->step = s->stepno, mk->slot = s->nused;
                s->used[s->nused++] = l;
                s->load[l] = 0;
            }
            lat += s->t->links[l].latency_s;
            s->pool[s->npool++] = mk->slot;
            s->load[l] += P > 1 && s->shared[l] ? shared_load : 1.0 / np;
        }
        s->lat[f] = lat;
        s->nsub[f] = p == 0 ? keep : 0;
    }
    return CFIT_EOK;
}

/* More paths than we split over: one path from each of `take` equal slices of the router's
 * list (the first `take` would share a few upper switches, every (np/take)-th the same
 * parallel cable), the one whose busiest link carries the fewest subflows of this step so far,
 * as an adaptive router balances its uplinks.  (A hashed pick inside each slice collided: a
 * shift on a full fattree:k=16 came out 1.15x slow.)  Returns how many paths remain. */
static int spread_paths(cfit__sim *s, int *paths, int *lens, int np)
{
    int take = np < CFIT__SIM_MAX_PATHS ? np : CFIT__SIM_MAX_PATHS;
    for (int j = 0; j < take && take < np; j++) {
        int lo = (int)((long)j * np / take), hi = (int)((long)(j + 1) * np / take), from = lo;
        double best = path_load(s, paths + (size_t)lo * s->max_len, lens[lo]);
        for (int i = lo + 1; i < hi && best > 0; i++) {
            double q = path_load(s, paths + (size_t)i * s->max_len, lens[i]);
            if (q < best)
                best = q, from = i;
        }
        memmove(paths + (size_t)j * s->max_len, paths + (size_t)from * s->max_len, sizeof(int) * (size_t)lens[from]);
        lens[j] = lens[from];
    }
    return take;
}

/* Add one flow's subflows (one per chosen path).  In a step solved in one plane block of P
 * (step_planes), a flow whose paths run through the planes keeps block 0's. */
static int add_flow(cfit__sim *s, int i, int src, int dst, double bytes)
{
    int *paths = s->pbuf, *lens = s->plens;
    int hs = s->host[src], hd = s->host[dst], P = s->planes_p, code = i < s->fpath_n ? s->fpath[i] : -1;
    int nmin = 0, nidx = code >= 0 ? code >> 1 : s->indexed ? s->t->path_count(s->t, hs, hd) : 0;
    int planar = P > 1 && nidx > 1;   /* P > 1: step_planes noted every flow (code >= 0) */
    if (planar && nidx <= CFIT__SIM_MAX_PATHS) {   /* all its paths split over: block 0's, indexed */
        int keep = nidx / P;
        for (int p = 0; p < keep; p++)
            lens[p] = s->t->path_at(s->t, hs, hd, p, paths + (size_t)p * s->max_len);
        return add_subflows(s, paths, lens, nidx, keep, 1, bytes);
    }
    int np = nidx > CFIT__SIM_MAX_PATHS ? pick_indexed(s, hs, hd, nidx, planar ? P : 1, paths, lens)
                                        : route_flow(s, src, dst, &nmin);
    if (np == CFIT_ERANGE)   /* route_flow said which route is too long */
        return np;
    paths = s->pbuf, lens = s->plens;   /* route_flow may have grown them */
    if (np > nmin && nmin > 0)
        np = ugal_choose(s, paths, lens, np, nmin);
    if (np < 0)
        return cfit_diag_set(s->d, np, NULL, 0, 0, "routing rank %d (host %d) to rank %d (host %d) failed: %s",
                             src, hs, dst, hd, cfit_strerror(np));
    if (np == 0)
        return cfit_diag_set(s->d, CFIT_EINVALID, NULL, 0, 0,
                             "failed links disconnect rank %d (host %d) from rank %d (host %d)", src, hs, dst, hd);
    np = spread_paths(s, paths, lens, np);
    return add_subflows(s, paths, lens, np, planar ? np / P : np, planar, bytes);
}

/* An indexed min-heap of links keyed by the fill level at which they saturate: one entry per
 * link (hpos: its position, -1 when out), so a re-keyed link moves instead of leaving a stale
 * entry behind. */
typedef struct heap_ent {
    double key;
    int link;
    int tier;                   /* its link's, for ties (heap_before) */
} heap_ent;

static void heap_put(cfit__sim *s, int i, heap_ent e)
{
    s->heap[i] = e;
    s->hpos[e.link] = i;
}

/* Whether a saturates before b: the lower level, then (a tie) the lower tier and link id, so the
 * links tied at one level pop in one order however the heap was filled: a flow limited alike
 * by its NIC and by the uplink above it names the NIC as its bottleneck, whether the engine
 * solved every plane or one block of them. */
static int heap_before(const cfit__sim *s, heap_ent a, heap_ent b)
{
    if (a.key != b.key)
        return a.key < b.key;
    return a.tier != b.tier ? a.tier < b.tier : s->used[a.link] < s->used[b.link];
}

static void heap_up(cfit__sim *s, int i)
{
    heap_ent e = s->heap[i];
    while (i > 0 && heap_before(s, e, s->heap[(i - 1) / 2])) {
        heap_put(s, i, s->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_put(s, i, e);
}

static void heap_down(cfit__sim *s, int i)
{
    heap_ent e = s->heap[i];
    int n = s->nheap;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && heap_before(s, s->heap[c + 1], s->heap[c]))
            c++;
        if (!heap_before(s, s->heap[c], e))
            break;
        heap_put(s, i, s->heap[c]);
        i = c;
    }
    heap_put(s, i, e);
}

/* Insert link l with key, or move it to key; the heap holds at most the step's used links. */
static void heap_set(cfit__sim *s, int l, double key)
{
    int i = s->hpos[l];
    if (i < 0) {
        i = s->nheap++;
        heap_put(s, i, (heap_ent){key, l, s->t->links[s->used[l]].tier});
        heap_up(s, i);
    } else {
        double old = s->heap[i].key;
        s->heap[i].key = key;
        if (key < old)
            heap_up(s, i);
        else
            heap_down(s, i);
    }
}

static void heap_remove_at(cfit__sim *s, int i)
{
    s->hpos[s->heap[i].link] = -1;
    heap_ent last = s->heap[--s->nheap];
    if (i < s->nheap) {
        heap_put(s, i, last);
        heap_up(s, i);
        heap_down(s, s->hpos[last.link]);
    }
}

int cfit__sim_planes_off;

/* Of subflow f's own links (crossed by it alone: a NIC in a permutation step) the one that
 * saturates first, the first such on its path.  Such a link's level changes only when f freezes,
 * so fill() queues only that one: the others can never pop first (-1 when f has none). */
static int tightest_own(const cfit__sim *s, int f)
{
    const struct fill_link *lk = s->lk;
    const int *p = s->pool + s->off[f];
    int best = -1;
    for (int i = 0; i < s->len[f]; i++)
        if (lk[p[i]].cnt == 1 && (best < 0 || lk[p[i]].rem < lk[best].rem))
            best = p[i];
    return best;
}

/* The max-min solution without the filling, when it is plain: every subflow's level c (the
 * least fair share cap / weight of the links on its path) is that of a link it shares only with
 * subflows of the same c.  Such a link saturates at c with all its subflows on it, each no
 * faster than that link lets it, so the rates c x w are feasible and each subflow has a
 * saturated link where it is among the fastest: the max-min solution (unique), which the
 * filling below would reach, freezing each subflow at c.  Its bottleneck is the first such
 * link in the filling's order (heap_before: tier, then link id).  Every permutation step
 * whose links carry no more than they can (NICs limit) and every step with one level of
 * contention is plain; 0 (nothing changed that fill() relies on) when the step is not. */
static int fill_tight(cfit__sim *s)
{
    struct fill_link *lk = s->lk;
    int nu = s->nused;
    if (cfit__grow(&s->cmin, &s->cmin_cap, nu, sizeof *s->cmin))
        return 0;
    for (int i = 0; i < nu; i++)   /* lvl: the link's fair share, restored to 0 below */
        lk[i].lvl = lk[i].rem / lk[i].wsum, s->cmin[i] = INFINITY;
    for (int f = 0; f < s->nf; f++) {
        const int *p = s->pool + s->off[f];
        double c = INFINITY;
        for (int i = 0; i < s->len[f]; i++)
            c = lk[p[i]].lvl < c ? lk[p[i]].lvl : c;
        for (int i = 0; i < s->len[f]; i++)
            s->cmin[p[i]] = c < s->cmin[p[i]] ? c : s->cmin[p[i]];
        s->rate[f] = c;
    }
    int ok = 1;
    for (int f = 0; f < s->nf && ok; f++) {
        const int *p = s->pool + s->off[f];
        double c = s->rate[f];
        int best = -1, btier = -1;   /* best's tier, looked up only when a second link ties */
        for (int i = 0; i < s->len[f]; i++) {
            int l = p[i];
            if (lk[l].lvl != c || s->cmin[l] != c)
                continue;
            if (best < 0) {
                best = l;
                continue;
            }
            if (btier < 0)
                btier = s->t->links[s->used[best]].tier;
            int lt = s->t->links[s->used[l]].tier;
            if (heap_before(s, (heap_ent){c, l, lt}, (heap_ent){c, best, btier}))
                best = l, btier = lt;
        }
        ok = best >= 0;
        s->rate[f] = c * s->w[f], s->bneck[f] = ok ? s->used[best] : -1;
    }
    for (int i = 0; i < nu && !ok; i++)
        lk[i].lvl = 0;
    return ok;
}

/* Max-min fair rates for the step's subflows by progressive filling.  Raising every unfrozen
 * rate by delta lowers every link's fair share rem/cnt by the same delta, so each link has a
 * fixed saturation level (level + rem/cnt) that changes only when a subflow crossing it
 * freezes: links sit in a heap by that level, and the filling pops the next one to saturate,
 * freezes its unfrozen subflows (found through a link -> subflow index) and updates the links
 * on their paths.  O(subflows x path length x log) in all, whatever the number of levels. */
static int fill(cfit__sim *s)
{
    int nu = s->nused;
    if (cfit__grow(&s->inc_off, &s->inc_cap, nu + 1, sizeof *s->inc_off) ||
        cfit__grow(&s->inc, &s->incl_cap, s->npool, sizeof *s->inc))
        return CFIT_ENOMEM;
    /* Links go by slot (index in used: dense, in order of first use), so the heap and the
     * per-link state touch few cache lines; the order of every operation is by link as before. */
    struct fill_link *lk = s->lk;
    const int *sp = s->pool;
    int *cur = s->hpos;   /* a cursor per slot while the index is built; heap positions after */
    s->popno = 0;
    for (int i = 0; i < nu; i++) {
        int l = s->used[i];
        double cap = s->t->links[l].bw_bytes_per_s;   /* a shared link: 1/P of it for block 0 */
        lk[i] = (struct fill_link){s->planes_p > 1 && s->shared[l] ? cap / s->planes_p : cap, 0, 0, 0, 0};
    }
    for (int f = 0; f < s->nf; f++) {
        s->frozen[f] = 0;
        for (int i = s->off[f]; i < s->off[f] + s->len[f]; i++) {
            int l = sp[i];
            lk[l].cnt++;
            lk[l].wsum += s->w[f];
        }
    }
    if (!cfit__sim_planes_off && fill_tight(s))
        return CFIT_EOK;
    s->inc_off[0] = 0;
    for (int i = 0; i < nu; i++) {
        s->inc_off[i + 1] = s->inc_off[i] + lk[i].cnt;
        cur[i] = s->inc_off[i + 1];
    }
    for (int f = 0; f < s->nf; f++)   /* each link's subflows last to first */
        for (int i = s->off[f]; i < s->off[f] + s->len[f]; i++)
            s->inc[--cur[sp[i]]] = f;
    if (cfit__grow(&s->heap, &s->heapcap, nu, sizeof *s->heap))
        return CFIT_ENOMEM;
    s->nheap = 0;
    for (int i = 0; i < nu; i++)
        s->hpos[i] = -1;
    for (int i = 0; i < nu; i++)
        if (lk[i].cnt > 1 || (lk[i].cnt == 1 && tightest_own(s, s->inc[s->inc_off[i]]) == i))
            heap_set(s, i, lk[i].rem / lk[i].wsum);
    while (s->nheap > 0) {
        heap_ent e = s->heap[0];
        heap_remove_at(s, 0);
        int l = e.link, nd = 0;
        double level = e.key;
        s->popno++;
        for (int k = s->inc_off[l]; k < s->inc_off[l + 1]; k++) {
            int f = s->inc[k];
            if (s->frozen[f])
                continue;
            s->frozen[f] = 1, s->rate[f] = level * s->w[f], s->bneck[f] = s->used[l];
            const int *p = sp + s->off[f];
            for (int i = 0; i < s->len[f]; i++) {
                struct fill_link *m = &lk[p[i]];
                m->rem -= (level - m->lvl) * m->wsum;
                m->lvl = level;
                m->wsum -= s->w[f];
                m->cnt--;
                if (m->dmark != s->popno)   /* re-keyed once, after this link's freezes */
                    m->dmark = s->popno, s->dlist[nd++] = p[i];
            }
        }
        for (int i = 0; i < nd; i++) {
            int m = s->dlist[i];
            if (m == l)
                continue;
            if (lk[m].cnt > 0 && lk[m].wsum > 0)
                heap_set(s, m, level + (lk[m].rem > 0 ? lk[m].rem : 0) / lk[m].wsum);
            else if (s->hpos[m] >= 0)
                heap_remove_at(s, s->hpos[m]);
        }
    }
    return CFIT_EOK;
}

/* Bytes a subflow carried over link l: as they are, or in a step solved in one plane block of
 * P, P times over a shared link and once per block over a plane link (held in pbytes for
 * block 0's link until flush_plane_bytes copies them to every block). */
static void add_link_bytes(cfit__sim *s, int l, double bytes)
{
    int P = s->planes_p;
    if (P <= 1)
        s->link_bytes[l] += bytes;
    else if (s->shared[l])
        s->link_bytes[l] += bytes * P;
    else
        s->pbytes[l] += bytes;
}

/* Copy the block-0 plane-link bytes held in pbytes to the same link of every block. */
static void flush_plane_bytes(cfit__sim *s)
{
    int P = s->pbytes_p;
    if (P <= 1)
        return;
    int per = s->t->planes / P;   /* planes per block */
    for (int l = 0; l < s->nlinks; l++) {
        double b = s->pbytes[l];
        if (b == 0)
            continue;
        for (int k = 0; k < P; k++)
            s->link_bytes[k ? s->t->plane_link(s->t, l, k * per) : l] += b;
        s->pbytes[l] = 0;
    }
    s->pbytes_p = 0;
}

/* The step time: the last flow's finish plus lat_mult x its (longest) path latency.  A flow's
 * subflows get their max-min rates, and its bytes follow them (adaptive spraying: a path with
 * more room carries more), so it finishes at bytes / the sum of its subflows' rates.  Notes
 * the slowest flow's bottleneck (its slowest subflow's) and adds the bytes to the links. */
enum { LINKS_OWN = 1, LINKS_REVERSED = 2 };   /* step_eval: which links its bytes go on */

static double step_eval(cfit__sim *s, long repeat, int links)
{
    double step = 0;
    int slow = -1;
    for (int f = 0; f < s->nf; f += s->nsub[f]) {
        double bytes = 0, rate = 0, lat = 0;
        int worst = f;
        for (int j = f; j < f + s->nsub[f]; j++) {
            bytes += s->left[j], rate += s->rate[j];
            lat = s->lat[j] > lat ? s->lat[j] : lat;
            if (s->rate[j] < s->rate[worst])
                worst = j;
        }
        for (int j = f; j < f + s->nsub[f]; j++) {
            const int *p = s->pool + s->off[j];   /* slots */
            double share = bytes * (rate > 0 ? s->rate[j] / rate : 1.0 / s->nsub[f]) * (double)repeat;
            for (int i = 0; i < s->len[j] && (links & LINKS_OWN); i++)
                add_link_bytes(s, s->used[p[i]], share);
            for (int i = 0; i < s->len[j] && (links & LINKS_REVERSED); i++)   /* a mirror step's */
                add_link_bytes(s, s->used[p[i]] ^ 1, share);
        }
        double end = (bytes > 0 ? bytes / rate : 0) + s->lat_mult * lat;
        if (end >= step)
            step = end, slow = worst;
    }
    s->slow_bneck = slow >= 0 ? s->bneck[slow] : -1;
    return step;
}

/* The step time: the last flow's finish plus lat_mult x its (longest) path latency.  A flow's
 * subflows get their max-min rates, and its bytes follow them (adaptive spraying: a path with
 * more room carries more), so it finishes at bytes / the sum of its subflows' rates.  Notes
 * the slowest flow's bottleneck (its slowest subflow's) and adds the bytes to the links (with
 * mirror, also the mirror step's to the reversed links). */
static int solve_step(cfit__sim *s, long repeat, int mirror, double *step_out)
{
    int rc = fill(s);
    if (rc)
        return rc;
    *step_out = step_eval(s, repeat, LINKS_OWN | (mirror ? LINKS_REVERSED : 0));
    return CFIT_EOK;
}

/* Give the step's flows bytes[q] each (flow q in the order added), split as add_subflows split
 * them: by each subflow's weight. */
static void set_flow_bytes(cfit__sim *s, const double *bytes)
{
    for (int f = 0, q = 0; f < s->nf; f += s->nsub[f], q++)
        for (int j = f; j < f + s->nsub[f]; j++)
            s->left[j] = bytes[q] * s->w[j];
}

static int gcd(int a, int b)
{
    while (b) {
        int r = a % b;
        a = b, b = r;
    }
    return a;
}


/* In how many plane blocks a step may be solved as one.  A topology with planes (a fat-tree's
 * aggregation index: topo_internal.h) maps onto itself when its planes are relabelled, and
 * the engine treats every plane alike: a flow through the planes puts the same number of
 * subflows in each block of planes / P (all its paths when it has at most
 * CFIT__SIM_MAX_PATHS, else pick_indexed's slices, which must fall whole into blocks: P divides
 * their number) and picks them by loads that every block's links carry alike (its shared
 * links' load counts every block).  So the max-min solution is the same in every block, up to
 * the relabelling: the engine solves block 0 with 1/P of each shared link and copies the rest.
 * P = the gcd of what each flow allows, as a power of 2, and only when every flow splits over a
 * power of 2 paths: then a shared link's capacity and weights in block 0 are its whole ones
 * over P exactly, its fill levels the same to the bit, and ties between links break as in the
 * whole (heap_before), so the result is the same, bottleneck tier included.  1 (solve every
 * subflow) without planes, with a failed link or adaptive routing, or with the test hook
 * cfit__sim_planes_off set. */
static int step_planes(cfit__sim *s, int nflows, const int *src, const int *dst)
{
    const cfit_topo *t = s->t;
    s->fpath_n = 0;
    if (!s->indexed || !s->shared || cfit__sim_planes_off)
        return 1;
    if (cfit__grow(&s->fpath, &s->fpcap, nflows, sizeof *s->fpath))
        return 1;   /* no room to note the flows: solve them all */
    int P = t->planes;
    for (int i = 0; i < nflows; i++) {   /* noted for add_flow, which would ask the same */
        int hs = s->host[src[i]], hd = s->host[dst[i]], n = t->path_count(t, hs, hd);
        int planar = n > 1;   /* topo_internal.h: a pair with 2+ indexed paths runs through the planes */
        s->fpath[i] = 2 * n + planar;
        int np = planar && P > 1 ? n > CFIT__SIM_MAX_PATHS ? indexed_take(s, hs, hd, n, NULL) : n : 0;
        if (np)   /* 1/np not a binary fraction: solve all (below) */
            P = np & (np - 1) ? 1 : gcd(P, np);
    }
    s->fpath_n = nflows;
    return P & -P;   /* a power of 2: block 0's shares of a shared link are exact */
}

/* Start a step and add its flows (bytes[i] each, or `bytes` when bytes_each is NULL), solved in
 * one plane block where the step allows it and `planes` is nonzero (step_planes).  With an
 * adaptive router every flow's minimal demand is registered first (ugal_choose). */
static int add_flows(cfit__sim *s, int nflows, const int *src, const int *dst, const double *bytes_each,
                     double bytes, int planes)
{
    s->fpath_n = 0;
    s->planes_p = planes ? step_planes(s, nflows, src, dst) : 1;
    if (s->planes_p > 1) {
        if (s->pbytes_p && s->pbytes_p != s->planes_p)
            flush_plane_bytes(s);
        s->pbytes_p = s->planes_p;
    }
    s->stepno++;
    for (int i = 0; i < s->nused; i++)   /* load[] is 0 off the step's used links (pick_indexed) */
        s->load[s->used[i]] = 0;
    s->nf = s->npool = s->nused = 0;
    for (int i = 0; i < nflows && s->t->route_split; i++) {
        int nmin = 0, np = route_flow(s, src[i], dst[i], &nmin);
        if (np == CFIT_ERANGE)
            return np;
        if (np > nmin && nmin > 0)
            pend_add(s, s->pbuf, s->plens, nmin, 1.0);
    }
    for (int i = 0; i < nflows; i++) {
        int rc = add_flow(s, i, src[i], dst[i], bytes_each ? bytes_each[i] : bytes);
        if (rc)
            return rc;
    }
    return CFIT_EOK;
}

/* Account one solved step (time, counts, bottleneck). */
static void account(cfit__sim *s, int nflows, double step, long repeat)
{
    s->time_s += step * (double)repeat;
    s->steps += repeat;
    s->flows += (long)nflows * repeat;
    if (step > s->slowest_step_s) {
        s->slowest_step_s = step;
        s->bottleneck_tier = s->slow_bneck >= 0 ? s->t->links[s->slow_bneck].tier : -1;
    }
}

int cfit__sim_step(cfit__sim *s, int nflows, const int *src, const int *dst, double bytes, long repeat,
                   double lat_mult)
{
    s->lat_mult = lat_mult;
    int rc0 = add_flows(s, nflows, src, dst, NULL, bytes, 1);
    if (rc0)
        return rc0;
    double step;
    int rc = solve_step(s, repeat, 0, &step);
    if (rc)
        return rc;
    account(s, nflows, step, repeat);
    s->solved += nflows;
    return CFIT_EOK;
}

int cfit__sim_mirror_off;

int cfit__sim_step_mirror(cfit__sim *s, int nflows, const int *src, const int *dst, double bytes, double lat_mult)
{
    if (!s->indexed || !s->t->mirror_paths || cfit__sim_mirror_off) {
        int rc = cfit__sim_step(s, nflows, src, dst, bytes, 1, lat_mult);
        return rc ? rc : cfit__sim_step(s, nflows, dst, src, bytes, 1, lat_mult);
    }
    s->lat_mult = lat_mult;
    double step;
    int rc = add_flows(s, nflows, src, dst, NULL, bytes, 1);
    if (!rc)
        rc = solve_step(s, 1, 1, &step);
    if (!rc) {
        account(s, nflows, step, 1);
        s->solved += nflows;
        account(s, nflows, step, 1);
    }
    return rc;
}

int cfit__sim_step_v(cfit__sim *s, int nflows, const int *src, const int *dst, const double *bytes, double lat_mult)
{
    s->lat_mult = lat_mult;
    double step;
    int rc = add_flows(s, nflows, src, dst, bytes, 0, 1);
    if (!rc)
        rc = fill(s);
    if (rc)
        return rc;
    set_flow_bytes(s, bytes);
    step = step_eval(s, 1, LINKS_OWN);
    account(s, nflows, step, 1);
    s->solved += nflows;
    return CFIT_EOK;
}

int cfit__sim_step_mirror_v(cfit__sim *s, int nflows, const int *src, const int *dst, const double *bytes,
                            const double *rev_bytes, double lat_mult)
{
    if (!s->indexed || !s->t->mirror_paths || cfit__sim_mirror_off) {
        int rc = cfit__sim_step_v(s, nflows, src, dst, bytes, lat_mult);
        return rc ? rc : cfit__sim_step_v(s, nflows, dst, src, rev_bytes, lat_mult);
    }
    int rc = cfit__sim_step_v(s, nflows, src, dst, bytes, lat_mult);
    if (rc)
        return rc;
    set_flow_bytes(s, rev_bytes);   /* the same rates on the reversed links (cfit__sim_step_mirror) */
    account(s, nflows, step_eval(s, 1, LINKS_REVERSED), 1);
    return CFIT_EOK;
}

void cfit__sim_count_bytes(cfit__sim *s, double bytes) { s->count_bytes = bytes; }

const cfit_sim_alltoallv *cfit__sim_alltoallv(const cfit__sim *s) { return &s->a2av; }

int cfit__sim_ranks(const cfit__sim *s) { return s->n; }
int cfit__sim_host(const cfit__sim *s, int rank) { return s->host[rank]; }
cfit_diag *cfit__sim_diag(cfit__sim *s) { return s->d; }

int cfit__sim_gpus_per_node(const cfit__sim *s)
{
    return s->t->params.gpus_per_node > 0 ? s->t->params.gpus_per_node : 1;
}

void cfit__sim_shift(int n, int shift, int *src, int *dst)
{
    for (int i = 0; i < n; i++) {
        src[i] = i;
        dst[i] = (int)(((long)i + shift) % n);
    }
}

/* ---- the schedules and the algorithm names ---- */

static const char *const algo_names[CFIT_ALGO_COUNT] = {"ring", "tree", "rabenseifner", "hierarchical"};

/* Each collective's schedule, by cfit_collective (its names and bus factor: collective.h). */
static const cfit__coll *const colls[CFIT_COLL_COUNT] = {
    &cfit__coll_allreduce, &cfit__coll_allgather, &cfit__coll_reducescatter, &cfit__coll_alltoall,
    &cfit__coll_sendrecv, &cfit__coll_alltoallv,
};

const char *cfit_algo_name(cfit_algo a)
{
    return (unsigned)a < CFIT_ALGO_COUNT ? algo_names[a] : "?";
}

int cfit_algo_parse(const char *name, cfit_algo *out, cfit_diag *d)
{
    for (int i = 0; i < CFIT_ALGO_COUNT; i++)
        if (strcmp(algo_names[i], name) == 0)
            return *out = (cfit_algo)i, CFIT_EOK;
    *out = CFIT_ALGO_RING;
    const char *near = cfit_suggest(name, algo_names, CFIT_ALGO_COUNT);
    if (near)
        return cfit_diag_set(d, CFIT_EUNKNOWN, NULL, 0, 0, "unknown algorithm '%s' (did you mean '%s'?)", name, near);
    return cfit_diag_set(d, CFIT_EUNKNOWN, NULL, 0, 0, "unknown algorithm '%s'", name);
}

int cfit__sim_no_algo(cfit__sim *s, cfit_collective c, cfit_algo a, const char *which)
{
    return cfit_diag_set(s->d, CFIT_EINVALID, NULL, 0, 0, "algorithm %s is not defined for %s (use %s)",
                         cfit_algo_name(a), cfit_collective_name(c), which);
}

/* ---- the public entry ---- */

/* ---- the state ---- */

static void sim_fini(cfit__sim *s)
{
    free(s->lk), free(s->pend), free(s->pmark), free(s->dlist), free(s->load), free(s->w), free(s->mark), free(s->used), free(s->link_bytes);
    free(s->off), free(s->len), free(s->bneck), free(s->nsub), free(s->left), free(s->rate);
    free(s->lat), free(s->frozen), free(s->pool), free(s->pbuf), free(s->plens), free(s->crate);
    free(s->hpos), free(s->inc_off), free(s->inc), free(s->heap), free(s->shared), free(s->pbytes), free(s->fpath), free(s->cmin);
    cfit__topo_scratch_free(s->route_ws);
}

/* The arrays every solve on t uses (the per-subflow ones grow on demand). */
static int sim_init(cfit__sim *s, const cfit_topo *t)
{
    memset(s, 0, sizeof *s);
    s->t = t, s->bottleneck_tier = -1;
    s->a2av = (cfit_sim_alltoallv)CFIT_SIM_ALLTOALLV_DEFAULT;
    s->nlinks = cfit_topo_links(t);
    size_t nl = (size_t)(s->nlinks > 0 ? s->nlinks : 1);
    s->lk = malloc(nl * sizeof *s->lk);
    s->used = malloc(nl * sizeof *s->used);
    s->mark = calloc(nl, sizeof *s->mark);
    s->link_bytes = calloc(nl, sizeof *s->link_bytes);
    s->load = calloc(nl, sizeof *s->load);
    s->pend = calloc(nl, sizeof *s->pend);
    s->pmark = calloc(nl, sizeof *s->pmark);
    s->dlist = malloc(nl * sizeof *s->dlist);
    s->hpos = malloc(nl * sizeof *s->hpos);
    s->route_ws = cfit__topo_scratch_new(t);
    s->max_len = CFIT__SIM_MAX_LEN;
    s->pbuf = malloc((size_t)CFIT__SIM_ENUM_PATHS * CFIT__SIM_MAX_LEN * sizeof *s->pbuf);
    s->plens = malloc((size_t)CFIT__SIM_ENUM_PATHS * sizeof *s->plens);
    if (t->planes > 1 && t->link_plane && t->plane_link) {   /* step_planes */
        s->shared = malloc(nl);
        s->pbytes = calloc(nl, sizeof *s->pbytes);
        if (!s->shared || !s->pbytes)
            return CFIT_ENOMEM;
        for (int l = 0; l < s->nlinks; l++)
            s->shared[l] = t->link_plane(t, l) < 0;
    }
    return s->lk && s->pend && s->pmark && s->dlist && s->load && s->used && s->mark && s->link_bytes && s->pbuf &&
                   s->plens && s->hpos && s->route_ws
               ? CFIT_EOK
               : CFIT_ENOMEM;
}

/* Start a solve of n ranks (rank -> host) on the state: its totals, link bytes and path-group
 * cache reset, its arrays kept.  The step number runs on, so the per-link marks need no
 * clearing (until it nears overflow).  The topology's failed links may differ from the last
 * solve's (tests fail links between calls), so whether it may use indexed paths is redone. */
static int sim_begin(cfit__sim *s, int n, const int *host, cfit_diag *d)
{
    const cfit_topo *t = s->t;
    if (cfit_topo_links(t) != s->nlinks)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "the topology has %d links, its simulator state was made for %d", cfit_topo_links(t),
                             s->nlinks);
    s->n = n, s->host = host, s->d = d, s->bottleneck_tier = -1;
    s->time_s = s->slowest_step_s = 0, s->steps = s->flows = s->solved = 0;
    s->ntake = 0;
    memset(s->take_n, 0, sizeof s->take_n);
    memset(s->link_bytes, 0, (size_t)s->nlinks * sizeof *s->link_bytes);
    if (s->pbytes)
        memset(s->pbytes, 0, (size_t)s->nlinks * sizeof *s->pbytes);
    s->pbytes_p = 0, s->planes_p = 1, s->count_bytes = 0;
    if (s->stepno >= INT_MAX / 2) {
        for (int l = 0; l < s->nlinks; l++)
            s->mark[l].step = s->pmark[l] = 0;
        s->stepno = 0;
    }
    s->indexed = t->path_count && t->path_at && !t->route_split;
    for (int l = 0; l < s->nlinks && s->indexed; l++)
        s->indexed = !t->links[l].failed;
    return CFIT_EOK;
}

cfit_sim_state *cfit_sim_state_new(const cfit_topo *t, cfit_diag *d)
{
    cfit_sim_state *s = t ? malloc(sizeof *s) : NULL;
    if (s && sim_init(s, t) == CFIT_EOK)
        return s;
    if (s)
        sim_fini(s);
    free(s);
    cfit_diag_set(d, t ? CFIT_ENOMEM : CFIT_EINVALID, NULL, 0, 0,
                  t ? "out of memory for the simulator's state" : "no topology for the simulator's state");
    return NULL;
}

void cfit_sim_state_free(cfit_sim_state *s)
{
    if (s)
        sim_fini(s);
    free(s);
}

const cfit_topo *cfit_sim_state_topo(const cfit_sim_state *s) { return s ? s->t : NULL; }

int cfit_sim_state_set_alltoallv(cfit_sim_state *s, const cfit_sim_alltoallv *v, cfit_diag *d)
{
    if (!s || !v)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "no simulator state or alltoallv pattern");
    if (!(v->spread >= 0 && v->spread <= 1))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "alltoallv spread must be 0 to 1, got %g", v->spread);
    if (!(v->imbalance >= 1) || !isfinite(v->imbalance))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "alltoallv imbalance (max / mean load) must be at least 1, got %g", v->imbalance);
    s->a2av = *v;
    return CFIT_EOK;
}

int cfit__sim_flows(const cfit_topo *t, int nflows, const int *src_host, const int *dst_host, const double *bytes,
                    double *time_s, cfit_diag *d)
{
    int hosts = cfit_topo_hosts(t);
    int *ident = malloc((size_t)(hosts > 0 ? hosts : 1) * sizeof *ident);
    cfit_sim_state *s = ident ? cfit_sim_state_new(t, d) : NULL;
    int rc = s ? sim_begin(s, hosts, ident, d) : CFIT_ENOMEM;
    for (int h = 0; !rc && h < hosts; h++)
        ident[h] = h;
    if (!rc) {
        s->lat_mult = 1;
        rc = add_flows(s, nflows, src_host, dst_host, bytes, 0, 0);
    }
    if (!rc)
        rc = solve_step(s, 1, 0, time_s);
    cfit_sim_state_free(s);
    free(ident);
    return rc;
}

static int check_placement(const cfit_topo *t, int ranks, const int *placement, cfit_diag *d)
{
    int hosts = cfit_topo_hosts(t);
    unsigned char *seen = calloc((size_t)hosts, 1);
    if (!seen)
        return CFIT_ENOMEM;
    int rc = CFIT_EOK;
    for (int r = 0; r < ranks && !rc; r++) {
        int h = placement[r];
        if (h < 0 || h >= hosts)
            rc = cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "rank %d is placed on host %d, outside 0..%d", r, h,
                               hosts - 1);
        else if (seen[h])
            rc = cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "rank %d is placed on host %d, which already has a rank",
                               r, h);
        else
            seen[h] = 1;
    }
    free(seen);
    return rc;
}

/* The CFIT_SIM_HOT_LINKS links carrying the most bytes, most first. */
static void hot_links(const cfit__sim *s, cfit_sim_result *out)
{
    out->nhot = 0;
    for (int l = 0; l < s->nlinks; l++) {
        double b = s->link_bytes[l];
        if (b <= 0)
            continue;
        int i = out->nhot < CFIT_SIM_HOT_LINKS ? out->nhot++ : CFIT_SIM_HOT_LINKS;
        while (i > 0 && out->hot_link_bytes[i - 1] < b) {
            if (i < CFIT_SIM_HOT_LINKS)
                out->hot_links[i] = out->hot_links[i - 1], out->hot_link_bytes[i] = out->hot_link_bytes[i - 1];
            i--;
        }
        if (i < CFIT_SIM_HOT_LINKS)
            out->hot_links[i] = l, out->hot_link_bytes[i] = b;
    }
    out->hottest_link = out->nhot ? out->hot_links[0] : -1;
    out->hottest_link_bytes = out->nhot ? out->hot_link_bytes[0] : 0;
}

int cfit_sim_collective(const cfit_topo *t, cfit_collective c, cfit_algo a, int ranks, const int *placement,
                        double bytes, cfit_sim_result *out, cfit_diag *d)
{
    return cfit_sim_collective_links(t, c, a, ranks, placement, bytes, out, NULL, d);
}

int cfit_sim_collective_links(const cfit_topo *t, cfit_collective c, cfit_algo a, int ranks,
                              const int *placement, double bytes, cfit_sim_result *out,
                              double *link_bytes, cfit_diag *d)
{
    cfit_sim_state *s = cfit_sim_state_new(t, d);
    if (!s) {
        memset(out, 0, sizeof *out);
        out->hottest_link = out->bottleneck_tier = -1;
        return CFIT_ENOMEM;
    }
    int rc = cfit_sim_run(s, c, a, ranks, placement, bytes, out, link_bytes, d);
    cfit_sim_state_free(s);
    return rc;
}

/* The result of the solve the state holds (c on ranks ranks, bytes as nccl-tests counts them). */
static void sim_result(cfit__sim *s, cfit_collective c, int ranks, double bytes, cfit_sim_result *out,
                       double *link_bytes)
{
    flush_plane_bytes(s);
    out->time_s = s->time_s;
    double counted = s->count_bytes > 0 ? s->count_bytes : bytes;   /* alltoallv: the busiest rank's */
    out->algbw_bytes_per_s = s->time_s > 0 ? counted / s->time_s : 0;
    out->busbw_bytes_per_s = out->algbw_bytes_per_s * cfit_coll_bus_factor(c, ranks);
    out->steps = s->steps;
    out->flows = s->flows;
    out->flows_solved = s->solved;
    out->bottleneck_tier = s->bottleneck_tier;
    hot_links(s, out);
    if (link_bytes)
        memcpy(link_bytes, s->link_bytes, (size_t)s->nlinks * sizeof *link_bytes);
}

int cfit_sim_run(cfit_sim_state *s, cfit_collective c, cfit_algo a, int ranks, const int *placement, double bytes,
                 cfit_sim_result *out, double *link_bytes, cfit_diag *d)
{
    memset(out, 0, sizeof *out);
    out->hottest_link = -1;
    out->bottleneck_tier = -1;
    if (!s)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "no simulator state");
    if ((unsigned)c >= CFIT_COLL_COUNT || (unsigned)a >= CFIT_ALGO_COUNT)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "unknown collective or algorithm");
    int hosts = cfit_topo_hosts(s->t);
    if (ranks < 2 || ranks > hosts)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "ranks must be 2 to %d (the topology's hosts), got %d",
                             hosts, ranks);
    if (!(bytes >= 0) || !isfinite(bytes))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "size must be a finite number of bytes >= 0");
    int *linear = NULL;
    int rc = CFIT_EOK;
    if (placement) {
        rc = check_placement(s->t, ranks, placement, d);
    } else if ((linear = malloc((size_t)ranks * sizeof *linear))) {
        for (int r = 0; r < ranks; r++)
            linear[r] = r;
    } else {
        rc = CFIT_ENOMEM;
    }
    if (!rc)
        rc = sim_begin(s, ranks, placement ? placement : linear, d);
    if (!rc)
        rc = colls[c]->run(s, a, bytes);
    if (!rc)
        sim_result(s, c, ranks, bytes, out, link_bytes);
    free(linear);
    return rc;
}

/* Per flow of the solved step: its rate (the sum of its subflows') and path latency (the
 * longest subflow's); the factors of cfit_sim_internode_curve from them. */
static int curve(cfit__sim *s, const cfit_sim_exchange *x, int nsizes, const double *bytes, double *factor)
{
    double bt = s->t->params.link_bw_bytes_per_s, bw = x->bw_bytes_per_s > 0 ? x->bw_bytes_per_s : bt;
    double lmax = 0;
    int nflow = 0, nkeep = 0, ndist = 0;
    if (cfit__grow(&s->crate, &s->ccap, s->nf + 1, 2 * sizeof *s->crate))
        return CFIT_ENOMEM;
    double *clat = s->crate + s->ccap;
    for (int f = 0; f < s->nf; f += s->nsub[f], nflow++) {
        double rate = 0, lat = 0;
        for (int j = f; j < f + s->nsub[f]; j++) {
            rate += s->rate[j];
            lat = s->lat[j] > lat ? s->lat[j] : lat;
        }
        s->crate[nflow] = rate, clat[nflow] = lat;
        lmax = lat > lmax ? lat : lmax;
    }
    /* A flow's time at b bytes is b / y + c, y = bw x rate / bt and c its latency term.  Of
     * flows with one c and y > 0 the one with the least y is the slowest (division and
     * addition round monotonically), so they share an entry (y at crate[e], c at clat[e], e <
     * ndist); the rest (y not > 0, or past CFIT__SIM_CURVE_C distinct c) keep their own (rate
     * at crate[e], c at clat[e], ndist <= e < nkeep).  Written in place: e <= f. */
    for (int f = 0; f < nflow; f++) {
        double rate = s->crate[f], y = bw * rate / bt, c = lmax > 0 ? x->latency_s * clat[f] / lmax : 0;
        int e = ndist, merge = rate > 0 && y > 0;
        if (merge)
            for (e = 0; e < ndist && clat[e] != c; e++)
                ;
        if (e < ndist) {
            s->crate[e] = y < s->crate[e] ? y : s->crate[e];
        } else if (merge && ndist == nkeep && ndist < CFIT__SIM_CURVE_C) {
            s->crate[ndist] = y, clat[ndist++] = c, nkeep++;
        } else {
            s->crate[nkeep] = rate, clat[nkeep++] = c;
        }
    }
    for (int i = 0; i < nsizes; i++) {
        double b = bytes[i] > 0 ? bytes[i] : 0, worst = 0;
        for (int e = 0; e < nkeep; e++) {
            double rate = s->crate[e];
            double tf = (e < ndist ? b / rate : rate > 0 ? b / (bw * rate / bt) : 0) + clat[e];
            worst = tf > worst ? tf : worst;
        }
        double ref = b / bw + x->latency_s;
        factor[i] = ref > 0 && worst > ref ? worst / ref : 1.0;
    }
    return CFIT_EOK;
}

int cfit_sim_internode_curve(const cfit_topo *t, const cfit_sim_exchange *x, int nsizes, const double *bytes,
                             double *factor, cfit_diag *d)
{
    for (int i = 0; i < nsizes; i++)
        factor[i] = 1;
    cfit_sim_state *s = cfit_sim_state_new(t, d);
    if (!s)
        return CFIT_ENOMEM;
    int rc = cfit_sim_state_curve(s, x, nsizes, bytes, factor, d);
    cfit_sim_state_free(s);
    return rc;
}

int cfit_sim_state_curve(cfit_sim_state *s, const cfit_sim_exchange *x, int nsizes, const double *bytes,
                         double *factor, cfit_diag *d)
{
    for (int i = 0; i < nsizes; i++)
        factor[i] = 1;
    if (!s)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "no simulator state");
    const cfit_topo *t = s->t;
    int gpn = t->params.gpus_per_node > 0 ? t->params.gpus_per_node : 1;
    int tnodes = t->nhosts / gpn;
    int k = x->k < gpn ? x->k : gpn;
    int nodes = x->nodes < tnodes ? x->nodes : tnodes;
    if (nodes < 2 || k < 1)
        return CFIT_EOK;
    int n = nodes * k;
    long group = x->group > 0 && x->group < n ? x->group : n;
    long shift = (x->stride > 0 ? x->stride : k) % group;
    if (shift == 0 && group == n)   /* a stride the clamped ranks divide: the next node instead */
        shift = k % n;
    if (shift == 0)
        return CFIT_EOK;
    int *place = malloc((size_t)n * 3 * sizeof *place);
    if (!place)
        return CFIT_ENOMEM;
    int *src = place + n, *dst = place + 2 * n, m = 0;
    for (int r = 0; r < n; r++) {
        place[r] = r / k * gpn + r % k;
        long base = r - r % group, end = base + group < n ? base + group : n;   /* a short last group */
        long to = base + (r - base + shift) % (end - base);
        if (to != r)
            src[m] = r, dst[m++] = (int)to;
    }
    int rc = sim_begin(s, n, place, d);
    if (!rc)
        rc = add_flows(s, m, src, dst, NULL, 1.0, 0);
    if (!rc)
        rc = fill(s);
    if (!rc)
        rc = curve(s, x, nsizes, bytes, factor);
    free(place);
    return rc;
}

int cfit_sim_internode_slowdown(const cfit_topo *t, int nodes, int k, double *factor, cfit_diag *d)
{
    cfit_sim_exchange x = {nodes, k, k, 0, 0, 0};   /* local rank j to j on the next node */
    double b = 1e9;
    return cfit_sim_internode_curve(t, &x, 1, &b, factor, d);
}

int cfit_sim_internode_sendrecv_slowdown(const cfit_topo *t, int nodes, int k, long stride, double *factor,
                                         cfit_diag *d)
{
    cfit_sim_exchange x = {nodes, k, stride, 0, 0, 0};
    double b = 1e9;
    return cfit_sim_internode_curve(t, &x, 1, &b, factor, d);
}
