/* coll_alltoall.c - all-to-all: pairwise exchange.
 *
 * Every rank gives n blocks of count elements (nccl-tests' per-rank count: the size over n
 * rounded down to 16 bytes); block q goes to rank q, and block q of the output comes from
 * rank q.  Step s = 0..n-1 pairs rank r with rank (s - r) mod n, a pairing that is its own
 * inverse for any n (the partner of the partner is r), so both sides of a pair exchange at
 * the same step; a rank paired with itself copies locally.  Every exchange is posted at once
 * and the transports overlap them.  In place, the input is first copied to scratch (an
 * incoming block would otherwise overwrite one not yet sent).  Each rank sends and receives
 * (n-1)/n of its array: the bus factor (n-1)/n.
 */
#include "bench/coll.h"

#include <stdlib.h>
#include <string.h>

static void counts(size_t elems, size_t esize, int nranks, int rank, cfit__bcoll_counts *c)
{
    size_t base = cfit__bcoll_block(elems, esize, nranks);
    c->param = base;
    c->send = c->recv = base * (size_t)nranks;
    c->send_inplace_off = 0;
    (void)rank;
}

static size_t scratch(const cfit__bcoll_counts *c, size_t esize, int nranks)
{
    (void)nranks;
    return c->send * esize;
}

static void init(const cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, uint64_t seed, void *send)
{
    cfit__verify_fill(x->dtype, CFIT__REDOP_NONE, x->nranks, x->rank, seed, 0, send, c->send);
}

/* Block q of the output is block `rank` of rank q's input. */
static void expect(const cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, uint64_t seed, void *want)
{
    size_t es = cfit_dtype_size(x->dtype);
    for (int q = 0; q < x->nranks; q++)
        cfit__verify_fill(x->dtype, CFIT__REDOP_NONE, x->nranks, q, seed, (uint64_t)x->rank * c->param,
                          (unsigned char *)want + (size_t)q * c->param * es, c->param);
}

static int run(cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, const void *send, void *recv)
{
    int n = x->nranks, me = x->rank;
    size_t bytes = c->param * cfit_dtype_size(x->dtype);
    const unsigned char *in = send;
    unsigned char *out = recv;
    if (in == out && n > 1) {
        memcpy(x->scratch, in, bytes * (size_t)n);
        in = x->scratch;
    }
    memmove(out + (size_t)me * bytes, in + (size_t)me * bytes, bytes);
    if (n == 1 || bytes == 0)
        return 0;
    cfit_req *req = calloc((size_t)(2 * (n - 1)), sizeof *req);
    if (!req)
        return CFIT_ENOMEM;
    int nreq = 0, rc = 0;
    for (int s = 0; s < n && !rc; s++) {
        int peer = ((s - me) % n + n) % n;
        if (peer == me)
            continue;
        rc = cfit_comm_irecv(x->comm, peer, out + (size_t)peer * bytes, bytes, &req[nreq++]);
        if (!rc)
            rc = cfit_comm_isend(x->comm, peer, in + (size_t)peer * bytes, bytes, &req[nreq++]);
    }
    if (!rc)
        rc = cfit_comm_waitall(x->comm, req, nreq);
    free(req);
    return rc;
}

static const char *algo_name(const cfit__bcoll_ctx *x)
{
    (void)x;
    return "pairwise";
}

const cfit__bcoll cfit__bench_alltoall = {
    .counts = counts,
    .scratch = scratch, .init = init, .expect = expect, .run = run, .algo_name = algo_name,
};
