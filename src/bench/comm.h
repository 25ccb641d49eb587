/* comm.h - the transports under include/clusterfit/comm.h (internal to src/bench).
 *
 * The ranks, requests and launch API are public (clusterfit/comm.h); this header adds the
 * transport table each transport file fills and the tcp transport's thread default.
 */
#ifndef CFIT_BENCH_COMM_H
#define CFIT_BENCH_COMM_H

#include "clusterfit/comm.h"

/* One transport: connects this rank to some of its peers.  `self` is the transport's
 * private state.  post() queues a request (isend or irecv) for req->peer; progress()
 * moves bytes for every queued request without blocking longer than timeout_ms
 * (0 = poll), returning 0, or a negative cfit_err with the comm's error message set;
 * close() frees everything (and removes shm segments) and may be called after an
 * error.  window() is optional (NULL when unsupported): it maps a region of `bytes`
 * that every rank of the job can read and write, returning each rank's base address
 * in bases[0..size-1] (the shm all-reduce path reduce-scatters/all-gathers in place). */
typedef struct cfit_transport_ops {
    const char *name;  /* "shm", "tcp" */
    int (*post)(void *self, cfit_req *req);
    int (*progress)(void *self, int timeout_ms);
    int (*window)(void *self, size_t bytes, void **bases);
    void (*close)(void *self);
} cfit_transport_ops;

extern const cfit_transport_ops cfit_transport_shm;
extern const cfit_transport_ops cfit_transport_tcp;

/* I/O threads the tcp transport starts per rank unless CLUSTERFIT_TCP_THREADS says: the
 * CPUs this process may run on divided among the local_ranks ranks of its host, less one
 * for each rank's own thread (0 = no threads), but at least 2 when that leaves any, and
 * at most nconn (one per connection). */
int cfit_tcp_default_threads(int local_ranks, int nconn);

#endif
