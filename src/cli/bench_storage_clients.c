/* bench_storage_clients.c - several storage clients in step (bench_storage_clients.h). */
#include "bench_storage_clients.h"

#include <math.h>
#include <string.h>

static int barrier_before(void *ctx, int pass)
{
    (void)pass;
    return cfit_comm_barrier(ctx);
}

static cfit_storage_test *test_of(cfit_storage_result *r, int k)
{
    return k == 0 ? &r->seq_write : k == 1 ? &r->seq_read : &r->rand_read;
}

/* Sum bytes and ops, take the longest time, and the extreme client rates, over the ranks. */
static int combine(cfit_comm *c, cfit_storage_result *res, storage_aggregate *agg)
{
    double sum[7], hi[10];   /* sum: bytes, ops x 3, failed; hi: seconds x 3, max rate x 3, -min rate x 3, unmeasured */
    for (int k = 0; k < 3; k++) {
        const cfit_storage_test *t = test_of(res, k);
        sum[2 * k] = t->bytes, sum[2 * k + 1] = t->ops;
        hi[k] = t->seconds, hi[3 + k] = t->bytes_per_s, hi[6 + k] = -t->bytes_per_s;
    }
    sum[6] = 0;
    hi[9] = !res->seq_write.measured;
    int rc = cfit_comm_allreduce_f64(c, sum, 7, 0);
    if (!rc)
        rc = cfit_comm_allreduce_f64(c, hi, 10, 1);
    if (rc)
        return rc;
    agg->clients = cfit_comm_size(c);
    for (int k = 0; k < 3; k++) {
        cfit_storage_test *t = test_of(res, k);
        t->bytes = sum[2 * k], t->ops = sum[2 * k + 1], t->seconds = hi[k];
        t->bytes_per_s = t->seconds > 0 ? t->bytes / t->seconds : 0;
        t->iops = t->seconds > 0 ? t->ops / t->seconds : 0;
        agg->client_max_bytes_per_s[k] = hi[3 + k];
        agg->client_min_bytes_per_s[k] = -hi[6 + k];
    }
    if (hi[9] > 0)   /* a client reused its file: the write pass is not the aggregate's */
        res->seq_write.measured = 0;
    return 0;
}

int storage_run_clients(cfit_comm *c, const cfit_storage_opts *o, cfit_storage_result *res, storage_aggregate *agg,
                        cfit_diag *d)
{
    cfit_storage_opts mine = *o;
    mine.client = cfit_comm_rank(c);
    mine.before_pass = barrier_before;
    mine.pass_ctx = c;
    memset(agg, 0, sizeof *agg);
    int err = cfit_storage_run(&mine, res, d);
    double failed = err != 0;
    int rc = cfit_comm_allreduce_f64(c, &failed, 1, 1);
    if (rc)
        return cfit_diag_set(d, rc, NULL, 0, 0, "client %d: lost the other clients", mine.client);
    if (err)
        return err;
    if (failed > 0)
        return cfit_diag_set(d, CFIT_ESYS, NULL, 0, 0, "another client failed (its rank says why)");
    rc = combine(c, res, agg);
    return rc ? cfit_diag_set(d, rc, NULL, 0, 0, "client %d: lost the other clients", mine.client) : 0;
}
