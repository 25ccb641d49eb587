/* bench.h - collective benchmarks over real transports: the library side of `clusterfit bench`.
 *
 * A benchmark job is N ranks (processes), each holding a communicator (struct cfit_comm,
 * made by the launch code in src/bench/comm.h).  Every rank calls cfit_bench_run() with the
 * same options; it sweeps message sizes the way nccl-tests does (-b/-e/-f or -i, -n iters,
 * -w warmup, -c check), times each collective out-of-place then in-place, checks the
 * result bit-exactly against inputs built so that the exact answer is known, and hands
 * each row (times averaged over ranks, wrong elements summed over ranks) to a sink.  The
 * library never prints: the CLI turns rows into nccl-tests' table or JSON (docs/bench.md).
 */
#ifndef CLUSTERFIT_BENCH_H
#define CLUSTERFIT_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include "clusterfit/base.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cfit_comm;

/* Element types, as nccl-tests names them (bf16 is stored in 16 bits and reduced in fp32,
 * rounded to nearest even). */
typedef enum cfit_dtype {
    CFIT_DTYPE_FLOAT,
    CFIT_DTYPE_DOUBLE,
    CFIT_DTYPE_INT32,
    CFIT_DTYPE_INT64,
    CFIT_DTYPE_BF16,
    CFIT_DTYPE_COUNT
} cfit_dtype;

/* Reduction operators.  avg = sum, then divided by the number of ranks (integer division
 * for integer types). */
typedef enum cfit_redop {
    CFIT_REDOP_SUM,
    CFIT_REDOP_PROD,
    CFIT_REDOP_MIN,
    CFIT_REDOP_MAX,
    CFIT_REDOP_AVG,
    CFIT_REDOP_COUNT
} cfit_redop;

/* Names: "float", "double", "int32", "int64", "bf16"; "sum", "prod", "min", "max", "avg".
 * The parsers also accept the aliases nccl-tests accepts: float32/fp32, float64/fp64,
 * int, bfloat16.
 * They return 0, or CFIT_EUNKNOWN with d->msg naming the choices (d may be NULL). */
CFIT_API const char *cfit_dtype_name(cfit_dtype t);
CFIT_API size_t cfit_dtype_size(cfit_dtype t);
CFIT_API int cfit_dtype_parse(const char *name, cfit_dtype *out, cfit_diag *d);
CFIT_API const char *cfit_redop_name(cfit_redop op);
CFIT_API int cfit_redop_parse(const char *name, cfit_redop *out, cfit_diag *d);

/* Which all-reduce algorithm to run (other collectives have one). */
typedef enum cfit_bench_algo {
    CFIT_BENCH_ALGO_AUTO,  /* the shm window where every rank shares one host, else the ring */
    CFIT_BENCH_ALGO_RING,  /* pipelined ring reduce-scatter + all-gather over the transports */
    CFIT_BENCH_ALGO_SHM    /* shared-memory window (fails with CFIT_EINVALID if there is none) */
} cfit_bench_algo;

/* What to run.  cfit_bench_opts_init() fills nccl-tests' defaults. */
typedef struct cfit_bench_opts {
    const char *collective;  /* a modelled collective, as cfit_collective_parse takes it (collective.h) */
    uint64_t min_bytes;      /* -b (default 32 MiB) */
    uint64_t max_bytes;      /* -e (default 32 MiB) */
    uint64_t step_bytes;     /* -i: additive step, used when step_factor is 0 (default 1 MiB) */
    uint64_t step_factor;    /* -f: multiplicative step, >= 2; 0 = use step_bytes (default 0) */
    int iters;               /* -n timed iterations per size (default 20) */
    int warmup;              /* -w untimed iterations before each timing (default 5) */
    int check;               /* -c: 1 = run once more on known inputs and count wrong elements */
    int all_dtypes;          /* -d all: every dtype in enum order; else dtype */
    cfit_dtype dtype;        /* -d (default float) */
    int all_ops;             /* -o all: every op in enum order; else op */
    cfit_redop op;           /* -o (default sum) */
    cfit_bench_algo algo;    /* --algo (all-reduce only) */
    uint64_t seed;           /* input generator seed (default 1) */
    uint64_t corrupt;        /* test hook: flip this many result elements on rank 0 before each check */
} cfit_bench_opts;

CFIT_API void cfit_bench_opts_init(cfit_bench_opts *o);

#define CFIT_BENCH_MAX_BYTES ((uint64_t)16 << 30)  /* largest -b/-e: 16 GiB */
#define CFIT_BENCH_MAX_SIZES 4096                  /* most sizes one -b/-e/-i sweep may have */

/* Set one flag by its nccl-tests long name: minbytes, maxbytes, stepbytes (sizes with K M G T
 * suffixes, powers of 1024, at most 16G; stepbytes >= 1), stepfactor (1..1024; 1 = use
 * stepbytes), iters (1..1e6), warmup_iters (0..1e6), check (0..1e6, any N > 0 checks), seed
 * (0..2^31-1), datatype (a dtype name or "all"), op (an op name or "all"), algo (auto, ring,
 * shm).  Returns 0, or CFIT_EPARSE/CFIT_ERANGE/CFIT_EUNKNOWN with d->msg saying why (o is
 * then unchanged for that flag). */
CFIT_API int cfit_bench_opt(cfit_bench_opts *o, const char *name, const char *value, cfit_diag *d);
/* Checks that need several flags: min <= max, and an additive sweep of at most
 * CFIT_BENCH_MAX_SIZES sizes.  0 or CFIT_EINVALID/CFIT_ERANGE with d->msg. */
CFIT_API int cfit_bench_opts_check(const cfit_bench_opts *o, cfit_diag *d);

/* One timing of one size: out-of-place ([0]) or in-place ([1]). */
typedef struct cfit_bench_timing {
    double time_s;              /* wall clock of the iterations / iterations, averaged over ranks */
    double algbw_bytes_per_s;   /* nccl-tests' algbw: bytes / time */
    double busbw_bytes_per_s;   /* algbw x the collective's bus factor */
    int64_t wrong;              /* mismatching elements summed over ranks; -1 when not checked */
} cfit_bench_timing;

/* One printed row (one size of one dtype/op). */
typedef struct cfit_bench_row {
    uint64_t size_bytes;  /* nccl-tests' size: max(send, recv) bytes of one rank */
    uint64_t count;       /* nccl-tests' count: the elements the call is given (per rank for
                             allgather/reducescatter/alltoall) */
    cfit_dtype dtype;
    int reduces;          /* 0 for collectives without an op (redop printed "none") */
    cfit_redop op;
    int root;             /* -1: the collectives here have no root */
    const char *algo;     /* algorithm that ran: "ring", "shm", "pairwise", "shift" */
    cfit_bench_timing t[2];
} cfit_bench_row;

/* Facts about the job for the output header; valid during the begin() callback only. */
typedef struct cfit_bench_job {
    int rank, nranks;     /* this process and the job size */
    int hosts;            /* distinct hosts among the ranks (by cfit_comm_host_id: namespaces count) */
    const char *transport;  /* "shm", "tcp" or "mixed" (every rank pair's transport) */
    const int64_t *pids;  /* pids[r]: process id of rank r */
    const char *const *host;  /* host[r]: host name of rank r */
} cfit_bench_job;

/* Where results go.  Callbacks run on every rank (the CLI prints on rank 0); any may be NULL. */
typedef struct cfit_bench_sink {
    void *ctx;
    void (*begin)(void *ctx, const cfit_bench_job *job);
    void (*row)(void *ctx, int rank, const cfit_bench_row *row);
} cfit_bench_sink;

/* What one of nranks ranks on one host allocates for o: *private_bytes of its own buffers
 * (send, receive, the check's expected result and the schedule's scratch at -e) and
 * *window_bytes of shared memory for the all-reduce window (0 when none would be mapped:
 * not all-reduce, one rank, --algo ring, or --algo auto with /dev/shm too small for it).
 * A --np launcher checks nranks times their sum against the host before it forks. */
CFIT_API void cfit_bench_need_bytes(const cfit_bench_opts *o, int nranks, uint64_t *private_bytes, uint64_t *window_bytes);

/* Run the benchmark on this rank (every rank of the job calls it with the same options).
 * Returns 0 when every size ran (wrong elements are reported in the rows, not as an error),
 * CFIT_EINVALID/CFIT_ERANGE for options that cannot run (unknown collective, sizes too large
 * for memory, --algo shm without a window), CFIT_ENOMEM, or the communicator's error
 * (CFIT_EPEER, CFIT_ETIMEOUT, CFIT_ESYS) with d->msg saying which rank failed. */
CFIT_API int cfit_bench_run(struct cfit_comm *comm, const cfit_bench_opts *o, const cfit_bench_sink *sink,
                   cfit_diag *d);

#ifdef __cplusplus
}
#endif
#endif
