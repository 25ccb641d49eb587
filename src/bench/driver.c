/* driver.c - the nccl-tests-style sweep: sizes, timing, checking and averaging over ranks.
 *
 * For each dtype and op asked for, and each size from -b to -e (times -f, or plus -i), the
 * driver runs the collective out of place then in place: -w untimed calls, then -n calls
 * timed together by the wall clock (time = elapsed / n, averaged over the ranks as
 * nccl-tests' default -a 1 does), then with -c one more call on freshly generated inputs
 * into a poisoned output, compared bit for bit with the exact expected result (verify.c);
 * the wrong elements of every rank are summed.  Each finished row goes to the caller's sink.
 * All-reduce with --algo auto and a shared-memory window first times both algorithms on each
 * size and runs the faster (choose_algo).
 */
#include "bench/coll.h"
#include "base/clock.h"

#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

/* Each collective's data movement, by cfit_collective (its names, whether it reduces and its
 * nccl-tests size and bus factor: the registry, clusterfit/collective.h). */
static const cfit__bcoll *const colls[CFIT_COLL_COUNT] = {
    &cfit__bench_allreduce, &cfit__bench_allgather, &cfit__bench_reducescatter,
    &cfit__bench_alltoall,  &cfit__bench_sendrecv,
};

size_t cfit__bcoll_block(size_t elems, size_t esize, int nranks)
{
    size_t per16 = 16 / esize;   /* elements in 16 bytes: 4, 2, 8 */
    return (elems / (size_t)nranks) & ~(per16 - 1);
}

/* Everything one rank's sweep uses. */
typedef struct sweep {
    cfit_comm *comm;
    const cfit_bench_opts *o;
    const cfit_bench_sink *sink;
    const cfit__bcoll *coll;
    const cfit_coll_info *info;   /* the registry's entry of coll */
    cfit__bcoll_ctx x;
    unsigned char *send, *recv, *want;
    size_t buf_bytes;
    int in_window;            /* send and recv live in the shm window (not malloc'd) */
    cfit_diag *d;
} sweep;

static int comm_fail(sweep *w, int rc)
{
    if (rc == CFIT_ENOMEM)
        return cfit_diag_set(w->d, rc, NULL, 0, 0, "out of memory");
    const char *msg = cfit_comm_error(w->comm);
    return cfit_diag_set(w->d, rc, NULL, 0, 0, "rank %d: %s", w->x.rank, msg && *msg ? msg : cfit_strerror(rc));
}

/* --algo auto with a window: time both all-reduce algorithms on this size (max(2, -w) calls each,
 * out of place, summed over ranks so every rank makes the same choice) and keep the faster. */
static int choose_algo(sweep *w, const cfit__bcoll_counts *c)
{
    int calls = w->o->warmup > 2 ? w->o->warmup : 2, rc = 0;
    double t[2] = {0, 0};
    static const cfit_bench_algo algos[2] = {CFIT_BENCH_ALGO_SHM, CFIT_BENCH_ALGO_RING};
    w->coll->init(&w->x, c, w->o->seed, w->send);
    for (int a = 0; a < 2 && !rc; a++) {
        w->x.algo = algos[a];
        rc = cfit_comm_barrier(w->comm);
        double t0 = cfit__now();
        for (int i = 0; i < calls && !rc; i++)
            rc = w->coll->run(&w->x, c, w->send, w->recv);
        t[a] = cfit__now() - t0;
    }
    if (rc || (rc = cfit_comm_allreduce_f64(w->comm, t, 2, 0)))
        return comm_fail(w, rc);
    w->x.algo = t[0] <= t[1] ? CFIT_BENCH_ALGO_SHM : CFIT_BENCH_ALGO_RING;
    return 0;
}

/* Time one size in one placement; fills t.  0 or a cfit_err. */
static int measure(sweep *w, const cfit__bcoll_counts *c, int in_place, cfit_bench_timing *t)
{
    size_t es = cfit_dtype_size(w->x.dtype);
    const cfit_bench_opts *o = w->o;
    /* In place both live in the receive buffer at nccl-tests' offsets (reduce-scatter's
     * output is the rank's own block of its input, all-gather's input its own block of the
     * output). */
    void *send = in_place ? (void *)(w->recv + c->send_inplace_off * es) : (void *)w->send;
    unsigned char *recv = in_place ? w->recv + c->recv_inplace_off * es : w->recv;
    int rc = 0;
    w->coll->init(&w->x, c, o->seed, send);
    for (int i = 0; i < o->warmup && !rc; i++)
        rc = w->coll->run(&w->x, c, send, recv);
    if (!rc)
        rc = cfit_comm_barrier(w->comm);
    double t0 = cfit__now();
    for (int i = 0; i < o->iters && !rc; i++)
        rc = w->coll->run(&w->x, c, send, recv);
    double el = o->iters > 0 ? (cfit__now() - t0) / o->iters : 0.0;
    if (rc)
        return comm_fail(w, rc);
    if ((rc = cfit_comm_allreduce_f64(w->comm, &el, 1, 0)))
        return comm_fail(w, rc);
    t->time_s = el / w->x.nranks;
    double bytes = (double)c->param * (double)es * w->info->size_per_count(w->x.nranks);   /* nccl-tests' algbw */
    t->algbw_bytes_per_s = t->time_s > 0 ? bytes / t->time_s : 0.0;
    t->busbw_bytes_per_s = t->algbw_bytes_per_s * w->info->bus_factor(w->x.nranks);
    t->wrong = -1;
    if (!o->check)
        return 0;
    /* Check: fresh inputs, a poisoned output, one call, a bit-exact comparison. */
    memset(recv, 0xa5, c->recv * es);
    w->coll->init(&w->x, c, o->seed, send);
    if ((rc = w->coll->run(&w->x, c, send, recv)))
        return comm_fail(w, rc);
    w->coll->expect(&w->x, c, o->seed, w->want);
    if (o->corrupt && w->x.rank == 0)
        cfit__verify_corrupt(w->x.dtype, recv, c->recv, o->corrupt);
    uint64_t wrong = cfit__verify_compare(w->x.dtype, recv, w->want, c->recv);
    if ((rc = cfit_comm_allreduce_u64(w->comm, &wrong, 1)))
        return comm_fail(w, rc);
    t->wrong = (int64_t)wrong;
    return 0;
}

static int sweep_sizes(sweep *w)
{
    const cfit_bench_opts *o = w->o;
    size_t es = cfit_dtype_size(w->x.dtype);
    for (uint64_t size = o->min_bytes; size <= o->max_bytes;) {
        cfit__bcoll_counts c = {0};
        w->coll->counts((size_t)(size / es), es, w->x.nranks, w->x.rank, &c);
        cfit_bench_row row;
        memset(&row, 0, sizeof row);
        row.size_bytes = (uint64_t)(c.send > c.recv ? c.send : c.recv) * es;
        row.count = c.param;
        row.dtype = w->x.dtype;
        row.reduces = w->info->reduces;
        row.op = w->x.op;
        row.root = -1;
        if (w->x.window && o->algo == CFIT_BENCH_ALGO_AUTO) {
            int rc = choose_algo(w, &c);
            if (rc)
                return rc;
        }
        row.algo = w->coll->algo_name(&w->x);
        for (int ip = 0; ip < 2; ip++) {
            int rc = measure(w, &c, ip, &row.t[ip]);
            if (rc)
                return rc;
        }
        if (w->sink && w->sink->row)
            w->sink->row(w->sink->ctx, w->x.rank, &row);
        if (!cfit__bench_next_size(o, size, &size))
            break;
    }
    return 0;
}

/* Header facts: pids, hosts, the transports in use. */
static int job_info(sweep *w)
{
    int n = w->x.nranks, rc;
    uint64_t *v = calloc((size_t)n + 2, sizeof *v);
    int64_t *pids = calloc((size_t)n, sizeof *pids);
    const char **hosts = calloc((size_t)n, sizeof *hosts);
    if (!v || !pids || !hosts) {
        rc = CFIT_ENOMEM;
        goto out;
    }
    v[w->x.rank] = (uint64_t)getpid();
    for (int p = 0; p < n; p++)
        if (p != w->x.rank)
            v[n + (strcmp(cfit_comm_transport(w->comm, p), "shm") == 0 ? 0 : 1)]++;
    if ((rc = cfit_comm_allreduce_u64(w->comm, v, n + 2)))
        goto out;
    int distinct = 0;   /* by host identity: namespaces sharing a hostname are different hosts */
    for (int r = 0; r < n; r++) {
        pids[r] = (int64_t)v[r];
        hosts[r] = cfit_comm_host(w->comm, r);
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = strcmp(cfit_comm_host_id(w->comm, q), cfit_comm_host_id(w->comm, r)) == 0;
        distinct += !seen;
    }
    cfit_bench_job job = {.rank = w->x.rank, .nranks = n, .hosts = distinct, .pids = pids, .host = hosts,
                          .transport = n == 1 ? "none" : !v[n + 1] ? "shm" : !v[n] ? "tcp" : "mixed"};
    if (w->sink && w->sink->begin)
        w->sink->begin(w->sink->ctx, &job);
out:
    free(v), free(pids), free(hosts);
    return rc ? comm_fail(w, rc) : 0;
}

/* Largest scratch any size of the sweep needs, over every dtype. */
static size_t scratch_bytes(const sweep *w)
{
    size_t most = 0;
    for (int t = 0; t < CFIT_DTYPE_COUNT; t++) {
        size_t es = cfit_dtype_size((cfit_dtype)t);
        cfit__bcoll_counts c = {0};
        w->coll->counts((size_t)(w->o->max_bytes / es), es, w->x.nranks, w->x.rank, &c);
        size_t s = w->coll->scratch(&c, es, w->x.nranks);
        most = s > most ? s : most;
    }
    return most;
}

static void *alloc_touched(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, bytes ? bytes : 64))
        return NULL;
    memset(p, 0, bytes);   /* fault the pages in before any timing */
    return p;
}

/* Would open_window ask for a window (before the ranks agree)?  Only with room for every
 * rank's window twice over in /dev/shm under --algo auto. */
static int window_wanted(const cfit_bench_opts *o, const cfit__bcoll *coll, int nranks, size_t half)
{
    if (coll != &cfit__bench_allreduce || nranks == 1 || o->algo == CFIT_BENCH_ALGO_RING)
        return 0;
    struct statvfs fs;
    int room = statvfs("/dev/shm", &fs) == 0 &&
               (double)fs.f_bavail * (double)fs.f_frsize >= 4.0 * (double)half * nranks;
    return room || o->algo == CFIT_BENCH_ALGO_SHM;
}

void cfit_bench_need_bytes(const cfit_bench_opts *o, int nranks, uint64_t *private_bytes, uint64_t *window_bytes)
{
    cfit_collective id;
    cfit_diag why;
    *private_bytes = *window_bytes = 0;
    if (cfit_collective_parse(o->collective, &id, &why) || nranks < 1)
        return;
    sweep w;
    memset(&w, 0, sizeof w);
    w.o = o;
    w.coll = colls[id];
    w.x.nranks = nranks;
    size_t buf = ((size_t)o->max_bytes + 4095) & ~(size_t)4095;
    *private_bytes = (uint64_t)buf * (o->check ? 3 : 2) + scratch_bytes(&w);
    *window_bytes = window_wanted(o, w.coll, nranks, buf) ? 2 * (uint64_t)buf : 0;
}

/* The shm window for all-reduce: this rank's send and receive buffers (the largest size
 * each), which then move into it so peers read them in place (coll_allreduce.c). */
static int open_window(sweep *w, void ***bases)
{
    const cfit_bench_opts *o = w->o;
    if (w->coll != &cfit__bench_allreduce || w->x.nranks == 1 || o->algo == CFIT_BENCH_ALGO_RING)
        return 0;
    size_t half = ((size_t)o->max_bytes + 4095) & ~(size_t)4095;
    /* Every rank must agree to ask (the call is collective): only when /dev/shm has room
     * for every rank's window twice over. */
    struct statvfs fs;
    uint64_t room = statvfs("/dev/shm", &fs) == 0 &&
                    (double)fs.f_bavail * (double)fs.f_frsize >= 4.0 * (double)half * w->x.nranks;
    int rc = cfit_comm_allreduce_u64(w->comm, &room, 1);
    if (rc)
        return comm_fail(w, rc);
    if (room != (uint64_t)w->x.nranks) {
        if (o->algo == CFIT_BENCH_ALGO_SHM)
            return cfit_diag_set(w->d, CFIT_ERANGE, NULL, 0, 0,
                                 "--algo shm: /dev/shm has no room for %d windows of 2 x %llu bytes", w->x.nranks,
                                 (unsigned long long)half);
        return 0;
    }
    *bases = calloc((size_t)w->x.nranks, sizeof **bases);
    if (!*bases)
        return CFIT_ENOMEM;
    rc = cfit_comm_window(w->comm, 2 * half, *bases);
    if (rc != 0 && rc != CFIT_EINVALID)
        return comm_fail(w, rc);
    if (rc == 0) {
        w->x.window = *bases;
        w->x.algo = CFIT_BENCH_ALGO_SHM;
        free(w->send), free(w->recv);
        w->send = (*bases)[w->x.rank];
        w->recv = w->send + half;
        memset(w->send, 0, 2 * half);   /* fault the pages in before any timing */
        w->in_window = 1;
        return 0;
    }
    if (o->algo == CFIT_BENCH_ALGO_SHM)
        return cfit_diag_set(w->d, CFIT_EINVALID, NULL, 0, 0,
                             "--algo shm needs every rank on one host and --transport shm or auto");
    return 0;
}

static int run_all(sweep *w)
{
    const cfit_bench_opts *o = w->o;
    int rc = job_info(w);
    for (int t = 0; t < CFIT_DTYPE_COUNT && !rc; t++) {
        if (o->all_dtypes ? 0 : t != (int)o->dtype)
            continue;
        for (int op = 0; op < CFIT_REDOP_COUNT && !rc; op++) {
            if (!w->info->reduces ? op != 0 : o->all_ops ? 0 : op != (int)o->op)
                continue;
            w->x.dtype = (cfit_dtype)t;
            w->x.op = w->info->reduces ? (cfit_redop)op : CFIT_REDOP_SUM;
            rc = sweep_sizes(w);
        }
    }
    return rc;
}

/* The buffers of every rank on this host must fit in 90% of its memory; all ranks agree, so a
 * sweep too large for any host fails everywhere with CFIT_ERANGE instead of waking the OOM
 * killer on one host while the others wait. */
static int memory_check(sweep *w, double per_rank)
{
    const char *me = cfit_comm_host_id(w->comm, w->x.rank);
    int local = 0;
    for (int r = 0; r < w->x.nranks; r++)
        local += strcmp(cfit_comm_host_id(w->comm, r), me) == 0;
    double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    double need = per_rank * local;
    uint64_t over = phys > 0 && need > 0.9 * phys;
    int rc = cfit_comm_allreduce_u64(w->comm, &over, 1);
    if (rc)
        return comm_fail(w, rc);
    if (over)
        return cfit_diag_set(w->d, CFIT_ERANGE, NULL, 0, 0,
                             "-e %llu needs %.1f GB of buffers for the ranks on %s, more than 90%% of its %.1f GB "
                             "of memory (or of another host's)",
                             (unsigned long long)w->o->max_bytes, need / 1e9, cfit_comm_host(w->comm, w->x.rank),
                             phys / 1e9);
    return 0;
}

int cfit_bench_run(struct cfit_comm *comm, const cfit_bench_opts *o, const cfit_bench_sink *sink, cfit_diag *d)
{
    sweep w;
    memset(&w, 0, sizeof w);
    w.comm = comm;
    w.o = o;
    w.sink = sink;
    w.d = d;
    cfit_collective id;
    cfit_diag why;
    if (cfit_collective_parse(o->collective, &id, &why))   /* a bad option: CFIT_EINVALID, as the others */
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "%s", why.msg);
    w.coll = colls[id];
    w.info = cfit_coll_info_of(id);
    if (!w.coll)   /* a collective only the simulators model (registry: benched 0) */
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "%s is not benchmarked (clusterfit sim models it)",
                             w.info->name);
    if (o->min_bytes > o->max_bytes)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "-e %llu is smaller than -b %llu",
                             (unsigned long long)o->max_bytes, (unsigned long long)o->min_bytes);
    w.x.comm = comm;
    w.x.rank = cfit_comm_rank(comm);
    w.x.nranks = cfit_comm_size(comm);
    w.x.algo = CFIT_BENCH_ALGO_RING;
    w.buf_bytes = ((size_t)o->max_bytes + 4095) & ~(size_t)4095;
    size_t sb = scratch_bytes(&w);
    int rc = memory_check(&w, (double)w.buf_bytes * (o->check ? 3 : 2) + (double)sb);
    if (rc)
        return rc;
    w.send = alloc_touched(w.buf_bytes);
    w.recv = alloc_touched(w.buf_bytes);
    w.want = o->check ? alloc_touched(w.buf_bytes) : NULL;
    w.x.scratch = alloc_touched(sb);
    void **bases = NULL;
    if (!w.send || !w.recv || (o->check && !w.want) || !w.x.scratch)
        rc = cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "cannot allocate the buffers for %llu bytes",
                           (unsigned long long)o->max_bytes);
    if (!rc && (rc = open_window(&w, &bases)) == CFIT_ENOMEM)
        cfit_diag_set(d, rc, NULL, 0, 0, "out of memory");
    if (!rc)
        rc = run_all(&w);
    free(bases);
    if (!w.in_window)
        free(w.send), free(w.recv);
    free(w.want), free(w.x.scratch);
    return rc;
}
