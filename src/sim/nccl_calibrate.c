/* nccl_calibrate.c - solve the NCCL model's network terms from a measured run (nccl_calibrate.h).
 *
 * Both solves are bisections on the model itself (cfit_nccl_best with every algorithm and
 * protocol, as NCCL's tuner ran the measured job), so they hold whatever pair the tuner picks:
 * the busbw at the largest size only grows with the NIC rate (every pair's bandwidth term is
 * non-increasing in it, the tuner takes the least time), the time at the smallest size only
 * grows with the per-hop latency.  The two terms interact a little (the largest size still pays
 * the latency, the smallest a little bandwidth), so the solves alternate until both hold.
 */
#include "clusterfit/nccl_calibrate.h"

#include <math.h>
#include <string.h>

enum { BISECT_STEPS = 80, ROUNDS = 6 };

/* Search ranges: 1 MB/s to 100 TB/s per NIC, 0 to 1 s per hop. */
static const double min_nic_bw = 1e6, max_nic_bw = 1e14, max_extra_s = 1.0;

typedef struct solve {
    cfit_nccl_system s;
    double sharp_ratio;            /* catalog sharp_bw / nic_bw */
    const cfit_nccl_measured *m;
} solve;

static void set_bw(solve *v, double nic_bw)
{
    v->s.nic_bw = nic_bw;
    v->s.sharp_bw = nic_bw * v->sharp_ratio;
}

/* The tuner's estimate at bytes; -1 on failure (d set). */
static int best(const solve *v, double bytes, cfit_nccl_estimate *e, cfit_diag *d)
{
    return cfit_nccl_best(&v->s, v->m->coll, CFIT_NCCL_ALL_ALGOS, CFIT_NCCL_ALL_PROTOS, bytes, e, d);
}

static int busbw_at(solve *v, double nic_bw, double *busbw, cfit_diag *d)
{
    cfit_nccl_estimate e;
    set_bw(v, nic_bw);
    int rc = best(v, v->m->bw_size_bytes, &e, d);
    *busbw = e.busbw_bytes_per_s;
    return rc;
}

/* The NIC rate whose busbw at the largest size is the measured one (geometric bisection). */
static int solve_bw(solve *v, cfit_diag *d)
{
    double lo = min_nic_bw, hi = max_nic_bw, want = v->m->busbw_bytes_per_s, got;
    int rc = busbw_at(v, hi, &got, d);
    if (rc)
        return rc;
    if (got < want)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "the measured %.4g GB/s busbw at %.0f B is above the model's %.4g GB/s with any NIC rate: "
                             "the node, not the network, limits the model there, so the NIC rate cannot be read from it "
                             "(did the run use another node type? --node)",
                             want / 1e9, v->m->bw_size_bytes, got / 1e9);
    if ((rc = busbw_at(v, lo, &got, d)))
        return rc;
    if (got > want)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "the measured %.4g GB/s busbw at %.0f B is below what a 1 MB/s NIC gives in the model: "
                             "the largest size measured latency, not bandwidth (run up to 1 GB or more, -e 1G)",
                             want / 1e9, v->m->bw_size_bytes);
    for (int i = 0; i < BISECT_STEPS; i++) {
        double mid = sqrt(lo * hi);
        if ((rc = busbw_at(v, mid, &got, d)))
            return rc;
        *(got < want ? &lo : &hi) = mid;
    }
    set_bw(v, hi);
    return CFIT_EOK;
}

static int time_at(solve *v, double extra_s, double *t, cfit_diag *d)
{
    cfit_nccl_estimate e;
    v->s.net_extra_latency_s = extra_s;
    int rc = best(v, v->m->lat_size_bytes, &e, d);
    *t = e.time_s;
    return rc;
}

/* The per-hop latency whose time at the smallest size is the measured one; 0 (and *floor) when
 * the model with none is already as slow. */
static int solve_latency(solve *v, int *floor, cfit_diag *d)
{
    double lo = 0, hi = max_extra_s, want = v->m->lat_time_s, got;
    int rc = time_at(v, 0, &got, d);
    *floor = !rc && got >= want;
    if (rc || *floor)
        return rc;
    for (int i = 0; i < BISECT_STEPS; i++) {
        double mid = (lo + hi) / 2;
        if ((rc = time_at(v, mid, &got, d)))
            return rc;
        *(got < want ? &lo : &hi) = mid;
    }
    v->s.net_extra_latency_s = (lo + hi) / 2;
    return CFIT_EOK;
}

static int check(const cfit_nccl_system *sys, const cfit_nccl_measured *m, cfit_diag *d)
{
    if (sys->nodes < 2)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "a run on one node crossed no network: it cannot calibrate the NIC rate or latency");
    if (!(m->bw_size_bytes > 0) || !(m->busbw_bytes_per_s > 0) || !(m->lat_time_s > 0) || !(m->lat_size_bytes >= 0) ||
        !isfinite(m->busbw_bytes_per_s) || !isfinite(m->lat_time_s) || m->coll < 0 || m->coll >= CFIT_COLL_COUNT)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "a measurement needs a collective, a busbw above 0 at a size above 0 and a time above 0");
    if (!(sys->nic_bw > 0))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "the system has no NIC rate to start from");
    return CFIT_EOK;
}

int cfit_nccl_fit_network(const cfit_nccl_system *sys, const cfit_nccl_measured *m, cfit_nccl_network_fit *out,
                          cfit_diag *d)
{
    int rc = check(sys, m, d);
    if (rc)
        return rc;
    solve v = {*sys, sys->sharp_bw > 0 ? sys->sharp_bw / sys->nic_bw : 0, m};
    int floor = 0;
    for (int r = 0; r < ROUNDS && !rc; r++)
        if (!(rc = solve_bw(&v, d)))
            rc = solve_latency(&v, &floor, d);
    if (rc)
        return rc;
    memset(out, 0, sizeof *out);
    out->nic_bw = v.s.nic_bw;
    out->sharp_bw = v.s.sharp_bw;
    out->net_extra_latency_s = v.s.net_extra_latency_s;
    out->latency_floor = floor;
    cfit_nccl_estimate e;
    if ((rc = best(&v, m->bw_size_bytes, &e, d)))
        return rc;
    out->model_busbw_bytes_per_s = e.busbw_bytes_per_s;
    if ((rc = best(&v, m->lat_size_bytes, &e, d)))
        return rc;
    out->model_lat_time_s = e.time_s;
    return CFIT_EOK;
}

void cfit_nccl_apply_network(cfit_nccl_system *s, const cfit_nccl_network_fit *f)
{
    s->nic_bw = f->nic_bw;
    s->net_extra_latency_s = f->net_extra_latency_s;
    if (s->sharp_bw > 0)
        s->sharp_bw = f->sharp_bw;
}

int cfit_nccl_fit_calibration(const cfit_calibration *cal, const cfit_gpu *g, const cfit_fabric *up,
                              const cfit_node *node, const cfit_fabric *net, int nics, int p2p_off,
                              cfit_nccl_system *run, cfit_nccl_network_fit *fit, cfit_diag *d)
{
    cfit_collective coll;
    if (strcmp(cal->benchmark, "pairs") == 0)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "a `bench pairs` run measures links, not a collective; the NCCL model is calibrated by "
                             "a collective (an nccl-tests log or `clusterfit bench COLLECTIVE --json`)");
    if (cfit_collective_parse(cal->benchmark, &coll, d))
        return CFIT_EINVALID;
    if (cal->hosts < 2 || cal->ranks % cal->hosts)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "%d ranks on %d hosts is not the same count on every host; the model needs one count "
                             "per node", cal->ranks, cal->hosts);
    int per_node = cal->ranks / cal->hosts;
    if (node && per_node > node->gpus_per_node)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "the run had %d ranks per host, more than the %d GPUs of a %s node; name the node type "
                             "it ran on", per_node, node->gpus_per_node, node->name);
    int rc = cfit_nccl_system_from_catalog(g, up, node, net, cal->hosts, per_node, nics, run, d);
    if (rc)
        return rc;
    if (p2p_off >= 0)
        run->p2p_off = p2p_off;
    /* a run whose threads each drove several GPUs paid their launches (sim.md "One process") */
    if (cal->gpus_per_process > 1 && cal->gpus_per_process <= per_node)
        run->gpus_per_process = cal->gpus_per_process;
    int log = strcmp(cal->source, "nccl-tests") == 0;
    cfit_nccl_measured m = {coll, cal->bw_size_bytes, cal->bw_bytes_per_s, cal->lat_size_bytes,
                            log ? cal->fit_alpha_s : cal->latency_s * cal->steps};
    if ((rc = cfit_nccl_fit_network(run, &m, fit, d)))
        return rc;
    cfit_nccl_apply_network(run, fit);
    return CFIT_EOK;
}

double cfit_nccl_fit_step_latency_s(const cfit_nccl_network_fit *fit)
{
    return CFIT_NCCL_REFERENCE_NET_LATENCY_S + fit->net_extra_latency_s;
}
