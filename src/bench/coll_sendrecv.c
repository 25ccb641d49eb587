/* coll_sendrecv.c - send-recv: a ring shift, rank r sends its buffer to r+1 and receives r-1's.
 *
 * Each rank sends and receives the whole buffer once: algbw = busbw (bus factor 1).  In
 * place, the buffer is copied to scratch first so the incoming data cannot overwrite what is
 * still being sent.
 */
#include "bench/coll.h"

#include <string.h>

static void counts(size_t elems, size_t esize, int nranks, int rank, cfit__bcoll_counts *c)
{
    (void)esize, (void)nranks, (void)rank;
    c->send = c->recv = c->param = elems;
    c->send_inplace_off = 0;
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

static void expect(const cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, uint64_t seed, void *want)
{
    int from = (x->rank + x->nranks - 1) % x->nranks;
    cfit__verify_fill(x->dtype, CFIT__REDOP_NONE, x->nranks, from, seed, 0, want, c->recv);
}

static int run(cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, const void *send, void *recv)
{
    int n = x->nranks;
    size_t bytes = c->send * cfit_dtype_size(x->dtype);
    if (n == 1) {
        if (send != recv)
            memcpy(recv, send, bytes);
        return 0;
    }
    if (bytes == 0)
        return 0;
    if (send == recv) {
        memcpy(x->scratch, send, bytes);
        send = x->scratch;
    }
    cfit_req req[2];
    int rc = cfit_comm_irecv(x->comm, (x->rank + n - 1) % n, recv, bytes, &req[0]);
    if (!rc)
        rc = cfit_comm_isend(x->comm, (x->rank + 1) % n, send, bytes, &req[1]);
    return rc ? rc : cfit_comm_waitall(x->comm, req, 2);
}

static const char *algo_name(const cfit__bcoll_ctx *x)
{
    (void)x;
    return "shift";
}

const cfit__bcoll cfit__bench_sendrecv = {
    .counts = counts,
    .scratch = scratch, .init = init, .expect = expect, .run = run, .algo_name = algo_name,
};
