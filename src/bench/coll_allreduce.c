/* coll_allreduce.c - all-reduce: a pipelined ring, or a shared-memory window on one host.
 *
 * ring  reduce-scatter then all-gather around the ring, 2(n-1) steps of count/n elements,
 *       run slice by slice (ring.c): each rank sends and receives 2(n-1)/n of the vector,
 *       which is why nccl-tests' bus factor is 2(n-1)/n.
 * shm   when cfit_comm_window() maps every rank's window (all ranks on one host, shm
 *       transport), the driver places each rank's send and receive buffers in its window
 *       (nccl-tests' registered buffers), at the same offsets on every rank, so a rank reads
 *       its peers' buffers in place, with no copy in: (1) a barrier (every input is ready),
 *       (2) each rank reduces its 1/n slice from the n send buffers, in cache-sized blocks,
 *       into its own receive buffer, (3) after a second barrier each rank copies the other
 *       ranks' result slices from their receive buffers, (4) a third barrier, so no rank
 *       touches its buffers again (the next call, the driver's check) while a peer reads
 *       them.  Memory traffic per rank for S bytes: reads S + S(n-1)/n, writes S, against
 *       2S + S/n more for a copy into a separate window.
 * With --algo auto and a window, the driver times both on each size and runs the faster
 * (docs/bench.md); --algo ring|shm forces one.
 */
#include "bench/coll.h"

#include <stdlib.h>
#include <string.h>

#define SHM_BLOCK ((size_t)32 << 10)   /* bytes reduced per block: stays in L1/L2 across inputs */

static void counts(size_t elems, size_t esize, int nranks, int rank, cfit__bcoll_counts *c)
{
    (void)esize, (void)nranks, (void)rank;
    c->send = c->recv = c->param = elems;
    c->send_inplace_off = 0;
}

static size_t scratch(const cfit__bcoll_counts *c, size_t esize, int nranks)
{
    (void)c, (void)esize, (void)nranks;
    return CFIT__RING_TMP_BYTES;
}

static void init(const cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, uint64_t seed, void *send)
{
    cfit__verify_fill(x->dtype, (int)x->op, x->nranks, x->rank, seed, 0, send, c->send);
}

static void expect(const cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, uint64_t seed, void *want)
{
    cfit__verify_expect(x->dtype, (int)x->op, x->nranks, seed, 0, want, c->recv);
}

/* Chunk c of n over elems elements: balanced, boundaries on 16-element multiples. */
static size_t slice_off(size_t elems, int n, int c)
{
    if (c >= n)
        return elems;
    return (elems / 16) * (size_t)c / (size_t)n * 16;
}

static size_t ring_off(const cfit__ring *r, int c) { return slice_off(r->elems, r->nchunks, c); }
static size_t ring_len(const cfit__ring *r, int c) { return ring_off(r, c + 1) - ring_off(r, c); }

static int run_ring(cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, const void *send, void *recv)
{
    int n = x->nranks, me = x->rank;
    size_t es = cfit_dtype_size(x->dtype);
    cfit__ring_step *steps = malloc(sizeof *steps * (size_t)(2 * (n - 1)));
    if (!steps)
        return CFIT_ENOMEM;
    cfit__ring r = {.steps = 2 * (n - 1), .step = steps, .elems = c->recv, .nchunks = n, .tmp = x->scratch,
                    .chunk_off = ring_off, .chunk_len = ring_len, .first_chunk = me};
    r.first = (const unsigned char *)send + ring_off(&r, me) * es;
    for (int s = 0; s < r.steps; s++) {
        int ch = ((me - s - 1) % n + n) % n;
        size_t off = ring_off(&r, ch) * es;
        steps[s] = (cfit__ring_step){.chunk = ch, .reduce = s <= n - 2, .finish = s == n - 2,
                                     .local = (const unsigned char *)send + off, .out = (unsigned char *)recv + off};
    }
    int rc = cfit__ring_run(x, &r);
    free(steps);
    return rc;
}

static int run_shm(cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, const void *send, void *recv)
{
    int n = x->nranks, me = x->rank;
    size_t es = cfit_dtype_size(x->dtype);
    const unsigned char *base = x->window[me];
    const unsigned char *in = send;
    unsigned char *out = recv;
    /* The driver put both buffers in the window: the same offsets address every rank's. */
    size_t so = (size_t)(in - base), ro = (size_t)((const unsigned char *)out - base);
    int rc = cfit_comm_barrier(x->comm);
    if (rc)
        return rc;
    /* (2) my slice, block by block, from every rank's send buffer */
    size_t a = slice_off(c->recv, n, me) * es, b = slice_off(c->recv, n, me + 1) * es;
    for (size_t at = a; at < b; at += SHM_BLOCK) {
        size_t len = b - at < SHM_BLOCK ? b - at : SHM_BLOCK, m = len / es;
        int first = 1;
        for (int q = 0; q < n; q++) {
            if (q == me)
                continue;
            const unsigned char *w = (const unsigned char *)x->window[q] + so + at;
            if (first && in != out)
                cfit__reduce3(x->dtype, x->op, out + at, in + at, w, m);
            else
                cfit__reduce_acc(x->dtype, x->op, out + at, w, m);
            first = 0;
        }
        cfit__reduce_finish(x->dtype, x->op, out + at, m, n);
    }
    if ((rc = cfit_comm_barrier(x->comm)))
        return rc;
    /* (3) everyone else's slice from their receive buffers */
    for (int j = 0; j < n; j++) {
        size_t ja = slice_off(c->recv, n, j) * es, jb = slice_off(c->recv, n, j + 1) * es;
        if (j != me)
            memcpy(out + ja, (const unsigned char *)x->window[j] + ro + ja, jb - ja);
    }
    return cfit_comm_barrier(x->comm);
}

static int run(cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, const void *send, void *recv)
{
    if (x->nranks == 1) {
        if (send != recv)
            memcpy(recv, send, c->recv * cfit_dtype_size(x->dtype));
        return 0;
    }
    if (x->algo == CFIT_BENCH_ALGO_SHM && x->window)
        return run_shm(x, c, send, recv);
    return run_ring(x, c, send, recv);
}

static const char *algo_name(const cfit__bcoll_ctx *x)
{
    return x->algo == CFIT_BENCH_ALGO_SHM && x->window ? "shm" : "ring";
}

const cfit__bcoll cfit__bench_allreduce = {
    .counts = counts,
    .scratch = scratch, .init = init, .expect = expect, .run = run, .algo_name = algo_name,
};
