/* coll.h - reduction kernels, verifiable inputs and the collectives' table (internal to src/bench).
 *
 * Adding a new collective: its registry entry (clusterfit/collective.h: names, reduces, nccl-tests'
 * size and bus factor), then coll_NAME.c filling a cfit__bcoll (counts, data init/expected, run),
 * declared below and put in driver.c's table at its cfit_collective.  The driver does
 * the sweep, timing, checking and averaging; a collective only moves and reduces data with
 * the cfit_comm_* calls of comm.h.
 */
#ifndef CFIT_BENCH_COLL_H
#define CFIT_BENCH_COLL_H

#include <stddef.h>
#include <stdint.h>
#include "bench/comm.h"
#include "clusterfit/bench.h"
#include "clusterfit/collective.h"

/* ---- reduce.c: tight loops over n elements (restrict: the buffers must not overlap) ---- */

/* acc[i] = acc[i] op src[i].  avg reduces as sum (see cfit__reduce_finish). */
void cfit__reduce_acc(cfit_dtype t, cfit_redop op, void *restrict acc, const void *restrict src, size_t n);
/* dst[i] = a[i] op b[i]. */
void cfit__reduce3(cfit_dtype t, cfit_redop op, void *restrict dst, const void *restrict a,
                   const void *restrict b, size_t n);
/* The last step of a reduction over nranks: for avg, buf[i] /= nranks (integer division for
 * integer types; bf16 divided in fp32 and rounded); no-op for the other ops. */
void cfit__reduce_finish(cfit_dtype t, cfit_redop op, void *buf, size_t n, int nranks);
/* bf16 <-> fp32: widening is exact; narrowing rounds to nearest even (NaN stays NaN). */
float cfit__bf16_to_float(uint16_t h);
uint16_t cfit__float_to_bf16(float f);

/* ---- verify.c: inputs from (rank, index, seed) whose reduction is exact in every dtype ---- */

/* op for collectives that do not reduce: values spread over the whole type. */
#define CFIT__REDOP_NONE CFIT_REDOP_COUNT

/* buf[k] = the input of rank `rank` at global index first + k (op picks the value family). */
void cfit__verify_fill(cfit_dtype t, int op, int nranks, int rank, uint64_t seed, uint64_t first, void *buf,
                       size_t n);
/* buf[k] = the reduction over every rank's input at global index first + k (op != NONE). */
void cfit__verify_expect(cfit_dtype t, int op, int nranks, uint64_t seed, uint64_t first, void *buf, size_t n);
/* Elements of got that differ bit-for-bit from want. */
uint64_t cfit__verify_compare(cfit_dtype t, const void *got, const void *want, size_t n);
/* Flip the lowest bit of k elements spread over buf (the checker's own test). */
void cfit__verify_corrupt(cfit_dtype t, void *buf, size_t n, uint64_t k);

/* ---- opts.c ---- */

/* The size after `size` in the sweep o describes: 1 and *next set, or 0 past -e. */
int cfit__bench_next_size(const cfit_bench_opts *o, uint64_t size, uint64_t *next);

/* ---- one collective ---- */

/* What one call of a collective sees.  Buffers are the driver's; scratch holds at least the
 * collective's scratch() bytes for the largest size. */
typedef struct cfit__bcoll_ctx {
    cfit_comm *comm;
    int rank, nranks;
    cfit_dtype dtype;
    cfit_redop op;
    cfit_bench_algo algo;     /* all-reduce: which algorithm (never AUTO here) */
    unsigned char *scratch;   /* scratch() bytes, 64-byte aligned */
    void **window;            /* all-reduce shm: bases[nranks] of the windows holding every rank's
                                 send and receive buffers (driver.c), or NULL */
} cfit__bcoll_ctx;

/* Element counts of one size, as nccl-tests' getCollByteCount computes them. */
typedef struct cfit__bcoll_counts {
    size_t send, recv;        /* elements in this rank's send and receive buffers */
    size_t param;             /* the count printed (and passed to the call) */
    size_t send_inplace_off;  /* in place: send = buffer + this many elements */
    size_t recv_inplace_off;  /* in place: recv = buffer + this many elements (nccl-tests'
                                 recvInplaceOffset: reduce-scatter writes the rank's own block) */
} cfit__bcoll_counts;

typedef struct cfit__bcoll {
    void (*counts)(size_t elems, size_t esize, int nranks, int rank, cfit__bcoll_counts *c);
    /* scratch bytes needed for a call with these counts (0 if none) */
    size_t (*scratch)(const cfit__bcoll_counts *c, size_t esize, int nranks);
    /* fill this rank's send buffer (c->send elements) with verifiable inputs */
    void (*init)(const cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, uint64_t seed, void *send);
    /* the exact expected receive buffer (c->recv elements) */
    void (*expect)(const cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, uint64_t seed, void *want);
    /* run once; in place, send and recv are one buffer + send_/recv_inplace_off.  0 or a cfit_err. */
    int (*run)(cfit__bcoll_ctx *x, const cfit__bcoll_counts *c, const void *send, void *recv);
    /* name of the algorithm run() uses for this ctx */
    const char *(*algo_name)(const cfit__bcoll_ctx *x);
} cfit__bcoll;

extern const cfit__bcoll cfit__bench_allreduce;
extern const cfit__bcoll cfit__bench_allgather;
extern const cfit__bcoll cfit__bench_reducescatter;
extern const cfit__bcoll cfit__bench_alltoall;
extern const cfit__bcoll cfit__bench_sendrecv;

/* nccl-tests' per-rank block: count/nranks rounded down to a multiple of 16 bytes. */
size_t cfit__bcoll_block(size_t elems, size_t esize, int nranks);

/* ---- ring.c: the pipelined ring both all-reduce and reduce-scatter/all-gather use ---- */

/* One ring schedule of `steps` steps.  At step s this rank sends chunk send_chunk(s) to the
 * next rank and receives chunk recv_chunk(s) = send_chunk(s + 1) from the previous one; a
 * received chunk is either reduced (local op received -> out) or copied straight to out, and
 * is then forwarded at the next step.  Chunks are cut into slices so the next slice's
 * receive is in flight while the current one is reduced. */
typedef struct cfit__ring_step {
    int chunk;              /* chunk received at this step */
    int reduce;             /* 1: out = local op received; 0: received data lands in out */
    int finish;             /* after reducing, apply cfit__reduce_finish (avg) */
    const unsigned char *local;  /* reduce: this rank's operand for the chunk (may equal out) */
    unsigned char *out;          /* where the chunk's result goes (forwarded from here) */
} cfit__ring_step;

typedef struct cfit__ring {
    int steps;
    const cfit__ring_step *step;
    const unsigned char *first;  /* the chunk sent at step 0 */
    int first_chunk;
    size_t (*chunk_off)(const struct cfit__ring *r, int chunk);  /* in elements */
    size_t (*chunk_len)(const struct cfit__ring *r, int chunk);
    size_t elems, block;    /* for chunk_off/len: total elements, or a fixed block */
    int nchunks;            /* chunks the elements are cut into (the ranks) */
    unsigned char *tmp;     /* receive slots: CFIT__RING_SLOTS x CFIT__RING_SLICE bytes */
    int scratch_out;        /* out regions are reused every other step: wait their sends */
} cfit__ring;

#define CFIT__RING_SLICE ((size_t)1 << 20)    /* bytes per pipelined message */
#define CFIT__RING_SLOTS 8                    /* receives in flight */
#define CFIT__RING_TMP_BYTES (CFIT__RING_SLICE * CFIT__RING_SLOTS)

int cfit__ring_run(cfit__bcoll_ctx *x, const cfit__ring *r);

#endif
