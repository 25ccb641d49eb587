/* comm.h - ranks, transports and launch for `clusterfit bench` (public: include/clusterfit/comm.h).
 *
 * A benchmark job is `size` ranks (processes).  Each rank holds one cfit_comm: its rank
 * number, the job size, and one transport per peer, chosen by cfit_comm_launch() from
 * --transport (shm within a host, tcp between hosts, auto = shm when both ranks run on
 * the same host, tcp otherwise).  Transports are a table of function pointers filled by
 * one file each (transport_shm.c, transport_tcp.c, declared in src/bench/comm.h); collectives (coll_*.c) only use the
 * cfit_comm_* functions below and never know which transport carries a message.
 *
 * Message model: point-to-point, ordered per (sender, receiver) pair, no tags.  A
 * receive of n bytes matches the next n bytes the peer sent to this rank; both sides
 * must agree on n (collectives always do).  Non-blocking isend/irecv post a request;
 * cfit_comm_wait()/cfit_comm_waitall() drive progress of every posted request of
 * this comm until the given ones complete, so a ring step (isend to next, irecv from
 * previous, waitall) never deadlocks however large the message.
 *
 * Errors: every function returns 0 or a negative cfit_err.  CFIT_EPEER when a peer
 * closed its connection or its process died (the message names the rank);
 * CFIT_ETIMEOUT when no progress was made for comm->timeout_s seconds; CFIT_ESYS for
 * a failed system call (errno text in the message).  After an error the comm is
 * unusable except for cfit_comm_close(); cfit_comm_error() gives the message
 * ("rank 3 lost: connection closed", "no progress from rank 1 for 60 s").
 */
#ifndef CLUSTERFIT_COMM_H
#define CLUSTERFIT_COMM_H

#include <stddef.h>
#include <stdint.h>
#include "clusterfit/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cfit_transport_kind {
    CFIT_TRANSPORT_AUTO = 0,  /* shm for ranks on the same host, tcp otherwise */
    CFIT_TRANSPORT_SHM,       /* every peer over POSIX shared memory (one host only) */
    CFIT_TRANSPORT_TCP        /* every peer over TCP, even on the same host */
} cfit_transport_kind;

typedef struct cfit_comm cfit_comm;

/* A posted non-blocking operation.  Owned by the caller (stack or array); must stay
 * alive and unmoved until it completes. */
typedef struct cfit_req {
    int peer;            /* the other rank */
    int is_send;         /* 1 send, 0 receive */
    unsigned char *buf;  /* caller's buffer */
    size_t len;          /* bytes to move */
    size_t done;         /* bytes moved so far (transport progress) */
    int complete;        /* 1 once done == len */
    struct cfit_req *next;  /* transport's queue link */
} cfit_req;

/* How the job is launched (the CLI fills this from flags and the environment). */
typedef struct cfit_launch {
    int np;                        /* --np N: fork N local ranks; 0 = take rank/size from env */
    cfit_transport_kind transport; /* --transport */
    double timeout_s;              /* --timeout: no-progress limit per operation (default 60) */
    const char *rendezvous;        /* --rendezvous HOST:PORT overrides MASTER_ADDR/PORT; NULL = env */
    const char *args_digest;       /* text every rank must agree on (normalised argv); checked
                                      at bootstrap, mismatch -> CFIT_EINVALID naming the rank */
    uint64_t shm_bytes_per_rank;   /* shared memory each rank maps beyond its ring segment (windows) */
    uint64_t mem_bytes_per_rank;   /* private buffers of each rank; with the above, checked by a --np
                                      launcher against /dev/shm and MemAvailable before it forks */
} cfit_launch;

/* Start the job and return this process's comm.  With np > 0 the calling process forks
 * np ranks and returns in each child with its comm (*is_parent = 0); the parent gets
 * *comm = NULL and *is_parent = 1 and must call cfit_launch_wait().  With np == 0 rank
 * and size come from the environment, in this order: OMPI_COMM_WORLD_RANK/SIZE (Open
 * MPI), PMI_RANK/PMI_SIZE (MPICH/Hydra), SLURM_PROCID/SLURM_NTASKS (srun), RANK/
 * WORLD_SIZE (torchrun); peers are found through a TCP rendezvous at rank 0
 * (MASTER_ADDR/MASTER_PORT, or --rendezvous, default 127.0.0.1:29500; under mpirun/srun
 * without MASTER_ADDR, the rendezvous host is the first host of the job when the
 * environment names it, else 127.0.0.1).  No environment at all = a single rank.
 * Errors fill d (port in use, rendezvous unreachable within timeout_s, argument
 * mismatch) and return a negative cfit_err. */
CFIT_API int cfit_launch_start(const cfit_launch *opt, cfit_comm **comm, int *is_parent, cfit_diag *d);

/* The world size a launcher's environment gives (the variables above), or 0 when none is set. */
CFIT_API int cfit_launch_env_size(void);

/* Parent of a --np job: wait for every child; returns the exit status the parent should
 * exit with (0 when all exited 0, else the first non-zero status; a child killed by a
 * signal is reported naming its rank, and the parent kills the rest once timeout_s
 * passes so nothing hangs).  Each such event is passed to report(ctx, message) as one
 * lowercase line without a prefix (the library never prints); report may be NULL. */
CFIT_API int cfit_launch_wait(void (*report)(void *ctx, const char *msg), void *ctx);

CFIT_API int cfit_comm_rank(const cfit_comm *c);
CFIT_API int cfit_comm_size(const cfit_comm *c);
/* Host name this rank runs on (for pairs, output "# Rank 0 ... on HOST"). */
CFIT_API const char *cfit_comm_host(const cfit_comm *c, int rank);
/* Identity of the machine a rank runs on: equal for two ranks exactly when they share
 * the host, its network namespace, process ids and /dev/shm (auto picks shm then).
 * Ranks in different network namespaces share a hostname but not this. */
CFIT_API const char *cfit_comm_host_id(const cfit_comm *c, int rank);
/* Name of the transport to peer ("shm" or "tcp"). */
CFIT_API const char *cfit_comm_transport(const cfit_comm *c, int peer);
CFIT_API const char *cfit_comm_error(const cfit_comm *c);

CFIT_API int cfit_comm_isend(cfit_comm *c, int peer, const void *buf, size_t n, cfit_req *r);
CFIT_API int cfit_comm_irecv(cfit_comm *c, int peer, void *buf, size_t n, cfit_req *r);
CFIT_API int cfit_comm_wait(cfit_comm *c, cfit_req *r);
CFIT_API int cfit_comm_waitall(cfit_comm *c, cfit_req *reqs, int n);
/* Drive progress once without blocking (to overlap computation with transfers): 1 when r
 * is complete, 0 when not yet, or a negative cfit_err.  No timeout applies. */
CFIT_API int cfit_comm_test(cfit_comm *c, cfit_req *r);
/* Blocking conveniences built on the above. */
CFIT_API int cfit_comm_send(cfit_comm *c, int peer, const void *buf, size_t n);
CFIT_API int cfit_comm_recv(cfit_comm *c, int peer, void *buf, size_t n);
CFIT_API int cfit_comm_sendrecv(cfit_comm *c, int to, const void *sbuf, size_t sn,
                       int from, void *rbuf, size_t rn);
CFIT_API int cfit_comm_barrier(cfit_comm *c);
/* Small helpers for the driver: broadcast from root, sum/max of doubles/u64 to all. */
CFIT_API int cfit_comm_bcast(cfit_comm *c, int root, void *buf, size_t n);
CFIT_API int cfit_comm_allreduce_f64(cfit_comm *c, double *v, int n, int op_max);
CFIT_API int cfit_comm_allreduce_u64(cfit_comm *c, uint64_t *v, int n);
/* Shared window of `bytes` across all ranks (shm transport, all ranks on one host);
 * CFIT_EINVALID when the job's transports cannot provide one. */
CFIT_API int cfit_comm_window(cfit_comm *c, size_t bytes, void **bases);

/* Close: frees everything, removes shm segments.  NULL is ignored. */
CFIT_API void cfit_comm_close(cfit_comm *c);

/* Check a --rendezvous value (HOST:PORT, [IPv6]:PORT) the way cfit_launch_start() will read it:
 * 0, or CFIT_EINVALID with d saying what is wrong. */
CFIT_API int cfit_launch_rendezvous_check(const char *hostport, cfit_diag *d);

#ifdef __cplusplus
}
#endif
#endif
