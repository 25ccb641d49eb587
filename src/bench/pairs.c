/* pairs.c - `bench pairs` measurement: circle-method rounds of disjoint pairs, per-pair
 * bandwidth (both directions busy) and latency, medians and slow links/hosts. */
#include "clusterfit/pairs.h"
#include "bench/comm_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cfit_pairs_opts_init(cfit_pairs_opts *o)
{
    o->size_bytes = (size_t)16 << 20;
    o->iters = 10;
    o->warmup = 1;
    o->lat_iters = 100;
    o->per_rank = 0;
    o->slow_threshold = 0.8;
    o->confirm = 3;
    o->inject_a = o->inject_b = o->inject_once = 0;
    o->inject_factor = 0;
}

int cfit_pairs_rounds(int m)
{
    return m < 2 ? 0 : (m % 2 ? m : m - 1);
}

int cfit_pairs_partner(int m, int round, int i)
{
    int big = m % 2 ? m + 1 : m;   /* with a dummy participant big-1 when m is odd */
    int mod = big - 1, j;
    if (i < 0 || i >= m || round < 0 || round >= mod)
        return -1;
    if (i == big - 1)
        j = round;
    else if (i == round)
        j = big - 1;
    else
        j = ((2 * round - i) % mod + mod) % mod;
    return j < m ? j : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    if (n <= 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int cmp_link(const void *a, const void *b)
{
    const cfit_pairs_link *x = a, *y = b;
    if (x->bandwidth_gbs != y->bandwidth_gbs)
        return x->bandwidth_gbs < y->bandwidth_gbs ? -1 : 1;
    return x->a != y->a ? x->a - y->a : x->b - y->b;
}

/* A host is slow when every one of its links is in r->slow. */
static void count_slow_hosts(cfit_pairs_result *r)
{
    int n = r->nhosts;
    r->nslow_hosts = 0;
    for (int h = 0; h < n && n > 1; h++) {
        int slow = 0;
        for (int s = 0; s < r->nslow; s++)
            slow += r->slow[s].a == h || r->slow[s].b == h;
        r->host_slow[h] = slow == n - 1;
        r->nslow_hosts += r->host_slow[h];
    }
}

int cfit_pairs_analyse(cfit_pairs_result *r, double thr)
{
    int n = r->nhosts, links = n * (n - 1) / 2, k = 0;
    double *bw = malloc((size_t)(links > 0 ? links : 1) * sizeof *bw);
    double *lat = malloc((size_t)(links > 0 ? links : 1) * sizeof *lat);
    free(r->slow);
    free(r->host_slow);
    r->slow = calloc((size_t)(links > 0 ? links : 1), sizeof *r->slow);
    r->host_slow = calloc((size_t)(n > 0 ? n : 1), sizeof *r->host_slow);
    if (!bw || !lat || !r->slow || !r->host_slow) {
        free(bw);
        free(lat);
        return CFIT_ENOMEM;
    }
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++, k++) {
            bw[k] = r->bw_gbs[a * n + b];
            lat[k] = r->lat_s[a * n + b];
        }
    r->median_bw_gbs = median(bw, links);
    r->median_lat_s = median(lat, links);
    r->nslow = 0;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            double v = r->bw_gbs[a * n + b];
            if (r->median_bw_gbs > 0 && v < thr * r->median_bw_gbs) {
                cfit_pairs_link *l = &r->slow[r->nslow++];
                l->a = a, l->b = b, l->bandwidth_gbs = v, l->fraction_of_median = v / r->median_bw_gbs;
            }
        }
    qsort(r->slow, (size_t)r->nslow, sizeof *r->slow, cmp_link);
    count_slow_hosts(r);
    free(bw);
    free(lat);
    return 0;
}

void cfit_pairs_result_free(cfit_pairs_result *r)
{
    if (!r)
        return;
    for (int h = 0; r->hosts && h < r->nhosts; h++)
        free(r->hosts[h]);
    free(r->hosts);
    free(r->host_rank);
    free(r->bw_gbs);
    free(r->lat_s);
    free(r->slow);
    free(r->dismissed);
    free(r->host_slow);
    memset(r, 0, sizeof *r);
}

/* Participants: the lowest rank of each host identity (or every rank), and their labels. */
static int choose_hosts(cfit_comm *c, const cfit_pairs_opts *o, cfit_pairs_result *r)
{
    int size = cfit_comm_size(c), n = 0;
    r->host_rank = malloc((size_t)size * sizeof *r->host_rank);
    r->hosts = calloc((size_t)size, sizeof *r->hosts);
    if (!r->host_rank || !r->hosts)
        return CFIT_ENOMEM;
    int ids = 0;   /* distinct host identities */
    for (int p = 0; p < size; p++) {
        int first = 1;
        for (int q = 0; q < p && first; q++)
            first = strcmp(cfit_comm_host_id(c, q), cfit_comm_host_id(c, p)) != 0;
        ids += first;
    }
    int per_rank = o->per_rank || ids == 1;
    for (int p = 0; p < size; p++) {
        int first = 1;
        for (int q = 0; q < p && first && !per_rank; q++)
            first = strcmp(cfit_comm_host_id(c, q), cfit_comm_host_id(c, p)) != 0;
        if (first)
            r->host_rank[n++] = p;
    }
    r->nhosts = n;
    for (int h = 0; h < n; h++) {
        const char *name = cfit_comm_host(c, r->host_rank[h]);
        int shared = 0;
        for (int g = 0; g < n; g++)
            shared += g != h && strcmp(cfit_comm_host(c, r->host_rank[g]), name) == 0;
        size_t len = strlen(name) + 24;
        r->hosts[h] = malloc(len);
        if (!r->hosts[h])
            return CFIT_ENOMEM;
        if (shared)
            snprintf(r->hosts[h], len, "%s:rank%d", name, r->host_rank[h]);
        else
            snprintf(r->hosts[h], len, "%s", name);
    }
    return 0;
}

/* One pair: bandwidth then latency; `low` is the lower-index side, whose timing counts.
 * Both use the median iteration (robust to a hiccup of a busy host). */
static int measure_pair(cfit_comm *c, const cfit_pairs_opts *o, int peer, int low, unsigned char *sbuf,
                        unsigned char *rbuf, double *bw_gbs, double *lat_s)
{
    int n = o->iters > o->lat_iters ? o->iters : o->lat_iters, rc = 0;
    double *t = malloc((size_t)n * sizeof *t);
    if (!t)
        return CFIT_ENOMEM;
    /* ranks idle this round wait at the next barrier, where --timeout applies: the pair
     * stops after a third of it (at least one timed exchange; the lower side decides and
     * says so in one byte after each exchange, outside the timing) */
    double start = cfit__now(), budget = c->timeout_s / 3;
    int timed = 0;
    for (int i = 0; i < o->warmup + o->iters && !rc; i++) {
        double t0 = cfit__now();
        rc = cfit_comm_sendrecv(c, peer, sbuf, o->size_bytes, peer, rbuf, o->size_bytes);
        if (i >= o->warmup)
            t[timed++] = cfit__now() - t0;
        if (rc || i + 1 == o->warmup + o->iters)
            break;
        unsigned char go = timed == 0 || cfit__now() - start < budget;
        rc = low ? cfit_comm_send(c, peer, &go, 1) : cfit_comm_recv(c, peer, &go, 1);
        if (!go)
            break;
    }
    if (!rc) {
        double mt = median(t, timed);
        *bw_gbs = (double)o->size_bytes / (mt > 0 ? mt : 1e-9) / 1e9;
    }
    unsigned char ping[8] = {0};
    int warm = o->lat_iters / 10 + 1;
    for (int i = 0; i < warm + o->lat_iters && !rc; i++) {
        double t0 = cfit__now();
        if (low) {
            rc = cfit_comm_send(c, peer, ping, sizeof ping);
            if (!rc)
                rc = cfit_comm_recv(c, peer, ping, sizeof ping);
        } else {
            rc = cfit_comm_recv(c, peer, ping, sizeof ping);
            if (!rc)
                rc = cfit_comm_send(c, peer, ping, sizeof ping);
        }
        if (i >= warm)
            t[i - warm] = cfit__now() - t0;
    }
    if (!rc)
        *lat_s = median(t, o->lat_iters) / 2;
    free(t);
    return rc;
}

static double injected(const cfit_pairs_opts *o, int a, int b, int first);

int cfit_pairs_run(cfit_comm *c, const cfit_pairs_opts *o, cfit_pairs_result *r)
{
    memset(r, 0, sizeof *r);
    int rc = choose_hosts(c, o, r);
    if (rc)
        return rc;
    int n = r->nhosts, me = -1;
    if (n < 2)
        return CFIT_EINVALID;
    for (int h = 0; h < n; h++)
        if (r->host_rank[h] == cfit_comm_rank(c))
            me = h;
    size_t cells = (size_t)n * (size_t)n;
    double *m = calloc(2 * cells, sizeof *m);   /* bandwidth then latency, summed over ranks */
    unsigned char *sbuf = NULL, *rbuf = NULL;
    if (me >= 0) {
        sbuf = malloc(o->size_bytes ? o->size_bytes : 1);
        rbuf = malloc(o->size_bytes ? o->size_bytes : 1);
    }
    if (!m || (me >= 0 && (!sbuf || !rbuf))) {
        free(m), free(sbuf), free(rbuf);
        return CFIT_ENOMEM;
    }
    if (me >= 0) {
        memset(sbuf, 0x5a, o->size_bytes);
        memset(rbuf, 0, o->size_bytes);
    }
    rc = cfit_comm_barrier(c);
    for (int round = 0; round < cfit_pairs_rounds(n) && !rc; round++) {
        int p = me >= 0 ? cfit_pairs_partner(n, round, me) : -1;
        if (p >= 0) {
            double bw = 0, lat = 0;
            rc = measure_pair(c, o, r->host_rank[p], me < p, sbuf, rbuf, &bw, &lat);
            bw *= injected(o, me, p, 1);
            if (!rc && me < p) {
                m[me * n + p] = m[p * n + me] = bw;
                m[cells + (size_t)(me * n + p)] = m[cells + (size_t)(p * n + me)] = lat;
            }
        }
        if (!rc)
            rc = cfit_comm_barrier(c);
    }
    if (!rc)
        rc = cfit_comm_allreduce_f64(c, m, (int)(2 * cells), 0);
    free(sbuf);
    free(rbuf);
    if (!rc) {
        r->bw_gbs = malloc(cells * sizeof *r->bw_gbs);
        r->lat_s = malloc(cells * sizeof *r->lat_s);
        if (!r->bw_gbs || !r->lat_s)
            rc = CFIT_ENOMEM;
    }
    if (!rc) {
        for (size_t i = 0; i < cells; i++) {
            int diag = i / (size_t)n == i % (size_t)n;
            r->bw_gbs[i] = diag ? NAN : m[i];
            r->lat_s[i] = diag ? NAN : m[cells + i];
        }
        rc = cfit_pairs_analyse(r, o->slow_threshold);
    }
    free(m);
    if (!rc && o->confirm > 0 && r->nslow > 0)
        rc = cfit_pairs_confirm(c, o, r);
    return rc;
}

/* ---- confirming suspects ---- */

/* The test hook's factor for link (a, b) in the first pass (first = 1) or a re-measurement. */
static double injected(const cfit_pairs_opts *o, int a, int b, int first)
{
    int on = o->inject_factor > 0 && ((a == o->inject_a && b == o->inject_b) || (a == o->inject_b && b == o->inject_a));
    return on && (first || !o->inject_once) ? o->inject_factor : 1.0;
}

/* Re-measure suspect link l alone `o->confirm` times; the low side writes each bandwidth into
 * v[0..confirm-1] (zeros elsewhere: the caller sums over ranks). */
static int remeasure(cfit_comm *c, const cfit_pairs_opts *o, const cfit_pairs_result *r, const cfit_pairs_link *l,
                     int me, unsigned char *sbuf, unsigned char *rbuf, double *v)
{
    cfit_pairs_opts one = *o;
    one.lat_iters = 1;   /* bandwidth only */
    int rc = 0;
    for (int k = 0; k < o->confirm && !rc; k++) {
        rc = cfit_comm_barrier(c);
        if (!rc && (me == l->a || me == l->b)) {
            int peer = me == l->a ? l->b : l->a;
            double bw = 0, lat = 0;
            rc = measure_pair(c, &one, r->host_rank[peer], me == l->a, sbuf, rbuf, &bw, &lat);
            if (!rc && me == l->a)
                v[k] = bw * injected(o, l->a, l->b, 0);
        }
    }
    return rc ? rc : cfit_comm_barrier(c);
}

/* Keep or dismiss suspect s given its re-measurements v[0..k-1], against base_gbs, the median of a
 * healthy link's re-measurements made the same way (alone): a pair measured alone is faster than
 * in the rounds, so the rounds' median would dismiss real slow links on a loaded machine. */
static void judge(cfit_pairs_result *r, double thr, const cfit_pairs_link *s, double *v, int k, double base_gbs)
{
    cfit_pairs_link l = *s;
    l.first_gbs = s->bandwidth_gbs;
    l.repeats = k;
    l.min_gbs = l.max_gbs = s->bandwidth_gbs;
    for (int i = 0; i < k; i++)
        l.min_gbs = fmin(l.min_gbs, v[i]), l.max_gbs = fmax(l.max_gbs, v[i]);
    l.bandwidth_gbs = median(v, k);
    l.fraction_of_median = base_gbs > 0 ? l.bandwidth_gbs / base_gbs : 0;
    if (l.bandwidth_gbs < thr * base_gbs)
        r->slow[r->nslow++] = l;
    else
        r->dismissed[r->ndismissed++] = l;
}

/* The reference: the link whose first-pass bandwidth is nearest the median among those not slow
 * (every link is suspect: the first one, which then judges against itself). */
static cfit_pairs_link reference_link(const cfit_pairs_result *r, double thr)
{
    int n = r->nhosts;
    cfit_pairs_link best = r->slow[0];
    double gap = INFINITY;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            double v = r->bw_gbs[a * n + b];
            if (v >= thr * r->median_bw_gbs && fabs(v - r->median_bw_gbs) < gap) {
                gap = fabs(v - r->median_bw_gbs);
                best.a = a, best.b = b, best.bandwidth_gbs = v;
            }
        }
    return best;
}

int cfit_pairs_confirm(cfit_comm *c, const cfit_pairs_opts *o, cfit_pairs_result *r)
{
    int n = r->nhosts, me = -1, ns = r->nslow, k = o->confirm;
    for (int h = 0; h < n; h++)
        if (r->host_rank[h] == cfit_comm_rank(c))
            me = h;
    double *v = calloc((size_t)(ns + 1) * (size_t)k, sizeof *v);   /* the suspects, then the reference */
    cfit_pairs_link *was = malloc((size_t)(ns + 1) * sizeof *was);
    unsigned char *sbuf = malloc(o->size_bytes ? o->size_bytes : 1), *rbuf = malloc(o->size_bytes ? o->size_bytes : 1);
    free(r->dismissed);
    r->dismissed = calloc((size_t)ns, sizeof *r->dismissed);
    int rc = v && was && sbuf && rbuf && r->dismissed ? 0 : CFIT_ENOMEM;
    if (!rc) {
        memcpy(was, r->slow, (size_t)ns * sizeof *was);
        was[ns] = reference_link(r, o->slow_threshold);
        memset(sbuf, 0x5a, o->size_bytes);
    }
    for (int s = 0; s <= ns && !rc; s++)
        rc = remeasure(c, o, r, &was[s], me, sbuf, rbuf, v + (size_t)s * (size_t)k);
    if (!rc)
        rc = cfit_comm_allreduce_f64(c, v, (ns + 1) * k, 0);
    if (!rc) {
        double base = median(v + (size_t)ns * (size_t)k, k);
        r->nslow = r->ndismissed = 0;
        for (int s = 0; s < ns; s++)
            judge(r, o->slow_threshold, &was[s], v + (size_t)s * (size_t)k, k, base);
        qsort(r->slow, (size_t)r->nslow, sizeof *r->slow, cmp_link);
        count_slow_hosts(r);
    }
    free(v), free(was), free(sbuf), free(rbuf);
    return rc;
}
