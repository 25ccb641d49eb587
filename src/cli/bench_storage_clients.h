/* bench_storage_clients.h - `bench storage --clients N` (and under mpirun/srun, every rank a
 * client): the passes run on every client at once, between barriers, and the result is the
 * aggregate (issue 17 part 3). */
#ifndef CFIT_BENCH_STORAGE_CLIENTS_H
#define CFIT_BENCH_STORAGE_CLIENTS_H

#include "clusterfit/comm.h"
#include "clusterfit/storage.h"

/* Per pass: the clients' bytes and operations summed, the time from the common start to the last
 * client's end, the rate = bytes / time; and the slowest and fastest client's own rate. */
typedef struct storage_aggregate {
    int clients;
    double client_min_bytes_per_s[3], client_max_bytes_per_s[3];   /* seq-write, seq-read, rand-read */
} storage_aggregate;

/* Run cfit_storage_run on this rank as client cfit_comm_rank(c), in step with the others, and
 * turn res (on every rank) into the aggregate.  Returns the run's error (any client's: then
 * d names the first failing client's reason on that client, "another client failed" elsewhere). */
int storage_run_clients(cfit_comm *c, const cfit_storage_opts *o, cfit_storage_result *res, storage_aggregate *agg,
                        cfit_diag *d);

#endif
