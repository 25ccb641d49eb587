/* coll_allgather.c - all-gather: a pipelined ring of n-1 steps.
 *
 * Every rank gives count elements (nccl-tests' per-rank count: the size over n rounded down
 * to 16 bytes) and gets everyone's, rank q's block at q x count.  At step s rank r receives
 * block r-s-1 from rank r-1 straight into its place and forwards it at the next step.  Each
 * rank receives (n-1)/n of the gathered array: the bus factor (n-1)/n.
 */
#include "bench/coll.h"

#include <stdlib.h>
#include <string.h>

static void counts(size_t elems, size_t esize, int nranks, int rank, cfit__bcoll_counts *c)
{
    size_t base = cfit__bcoll_block(elems, esize, nranks);
    c->send = c->param = base;
    c->recv = base * (size_t)nranks;
    c->send_inplace_off = base * (size_t)rank;
}

static size_t scratch(const cfit__bcoll_counts *c, size_t esize, int nranks)
{
    (void)c, (void)esize, (void)nranks;
    return 0;
}

static void init(const cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, uint64_t seed, void *send)
{
    cfit__verify_fill(x->dtype, CFIT__REDOP_NONE, x->nranks, x->rank, seed, 0, send, c->send);
}

static void expect(const cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, uint64_t seed, void *want)
{
    size_t es = cfit_dtype_size(x->dtype);
    for (int q = 0; q < x->nranks; q++)
        cfit__verify_fill(x->dtype, CFIT__REDOP_NONE, x->nranks, q, seed, 0, (unsigned char *)want + (size_t)q * c->send * es,
                          c->send);
}

static size_t block_off(const cfit__ring *r, int c) { return (size_t)c * r->block; }
static size_t block_len(const cfit__ring *r, int c) { (void)c; return r->block; }

static int run(cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, const void *send, void *recv)
{
    int n = x->nranks, me = x->rank;
    size_t es = cfit_dtype_size(x->dtype), bytes = c->send * es;
    unsigned char *out = recv;
    if (send != out + (size_t)me * bytes)
        memcpy(out + (size_t)me * bytes, send, bytes);
    if (n == 1)
        return 0;
    cfit__ring_step *steps = malloc(sizeof *steps * (size_t)(n - 1));
    if (!steps)
        return CFIT_ENOMEM;
    cfit__ring r = {.steps = n - 1, .step = steps, .block = c->send, .nchunks = n,
                    .chunk_off = block_off, .chunk_len = block_len, .first_chunk = me, .first = send};
    for (int s = 0; s < n - 1; s++) {
        int ch = ((me - s - 1) % n + n) % n;
        steps[s] = (cfit__ring_step){.chunk = ch, .out = out + (size_t)ch * bytes};
    }
    int rc = cfit__ring_run(x, &r);
    free(steps);
    return rc;
}

static const char *algo_name(const cfit__bcoll_ctx *x)
{
    (void)x;
    return "ring";
}

const cfit__bcoll cfit__bench_allgather = {
    .counts = counts,
    .scratch = scratch, .init = init, .expect = expect, .run = run, .algo_name = algo_name,
};
