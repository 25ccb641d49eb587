/* coll_reducescatter.c - reduce-scatter: a pipelined ring of n-1 steps.
 *
 * Every rank gives n blocks of count elements (count = nccl-tests' per-rank count: the size
 * over n rounded down to 16 bytes); rank r gets the reduction of everyone's block r.  At
 * step s rank r receives the partial result of block r-s-2 from rank r-1, adds its own
 * block and passes it on; at the last step the block is r's own, and it lands in the
 * output.  Partial results go to two scratch blocks used in turn (ring.c waits for a
 * block's send before reusing it), so the input is never written.  Each rank sends and
 * receives (n-1)/n of the whole array: the bus factor (n-1)/n.
 */
#include "bench/coll.h"

#include <stdlib.h>
#include <string.h>

static void counts(size_t elems, size_t esize, int nranks, int rank, cfit__bcoll_counts *c)
{
    size_t base = cfit__bcoll_block(elems, esize, nranks);
    c->send = base * (size_t)nranks;
    c->recv = c->param = base;
    c->send_inplace_off = 0;
    c->recv_inplace_off = base * (size_t)rank;
}

static size_t scratch(const cfit__bcoll_counts *c, size_t esize, int nranks)
{
    (void)nranks;
    return CFIT__RING_TMP_BYTES + 2 * c->recv * esize;
}

static void init(const cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, uint64_t seed, void *send)
{
    cfit__verify_fill(x->dtype, (int)x->op, x->nranks, x->rank, seed, 0, send, c->send);
}

static void expect(const cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, uint64_t seed, void *want)
{
    cfit__verify_expect(x->dtype, (int)x->op, x->nranks, seed, (uint64_t)x->rank * c->recv, want, c->recv);
}

static size_t block_off(const cfit__ring *r, int c) { return (size_t)c * r->block; }
static size_t block_len(const cfit__ring *r, int c) { (void)c; return r->block; }

/* In place, recv is the rank's own block of send (nccl-tests' recvInplaceOffset). */
static int run(cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, const void *send, void *recv)
{
    int n = x->nranks, me = x->rank;
    size_t es = cfit_dtype_size(x->dtype), bytes = c->recv * es;
    const unsigned char *in = send;
    if (n == 1) {
        if (in != recv)
            memmove(recv, in, bytes);
        return 0;
    }
    cfit__ring_step *steps = malloc(sizeof *steps * (size_t)(n - 1));
    if (!steps)
        return CFIT_ENOMEM;
    unsigned char *part[2] = {x->scratch + CFIT__RING_TMP_BYTES, x->scratch + CFIT__RING_TMP_BYTES + bytes};
    int first = (me + n - 1) % n;
    cfit__ring r = {.steps = n - 1, .step = steps, .block = c->recv, .nchunks = n, .tmp = x->scratch,
                    .chunk_off = block_off, .chunk_len = block_len, .first_chunk = first,
                    .first = in + (size_t)first * bytes, .scratch_out = 1};
    for (int s = 0; s < n - 1; s++) {
        int ch = ((me - s - 2) % n + 2 * n) % n;
        int last = s == n - 2;
        steps[s] = (cfit__ring_step){.chunk = ch, .reduce = 1, .finish = last, .local = in + (size_t)ch * bytes,
                                     .out = last ? (unsigned char *)recv : part[s % 2]};
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

const cfit__bcoll cfit__bench_reducescatter = {
    .counts = counts,
    .scratch = scratch, .init = init, .expect = expect, .run = run, .algo_name = algo_name,
};
