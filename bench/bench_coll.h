/* bench_coll.h - helpers shared by the collective benchmarks in bench/ (header only: each program
 * in bench/ is built on its own): run clusterfit's all-reduce with N forked ranks and collect its rows,
 * measure STREAM copy bandwidth with several processes at once, medians, wall clock.
 */
#ifndef CFIT_BENCH_COLL_UTIL_H
#define CFIT_BENCH_COLL_UTIL_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/comm.h"
#include "clusterfit/bench.h"

#define MAX_SIZES 16

static inline double wall_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_dbl);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One out-of-place row as rank 0 saw it. */
typedef struct coll_row {
    double size_bytes, time_s, busbw_gbs;
    long wrong;
} coll_row;

typedef struct row_pipe {
    int fd;
} row_pipe;

static void pipe_row(void *ctx, int rank, const cfit_bench_row *row)
{
    row_pipe *p = ctx;
    if (rank != 0)
        return;
    coll_row r = {(double)row->size_bytes, row->t[0].time_s, row->t[0].busbw_bytes_per_s / 1e9, (long)row->t[0].wrong};
    if (write(p->fd, &r, sizeof r) != (ssize_t)sizeof r)
        _exit(1);
}

/* clusterfit all-reduce (float sum) on np forked ranks over `transport` with `algo`, sizes
 * minb..maxb times 4, out of place rows into out[]; returns the rows, or -1 on failure. */
static inline int run_clusterfit(int np, cfit_transport_kind transport, cfit_bench_algo algo, uint64_t minb, uint64_t maxb,
                          int iters, int warmup, coll_row *out)
{
    int fds[2];
    if (pipe(fds))
        return -1;
    cfit_launch l = {.np = np, .transport = transport, .timeout_s = 120, .args_digest = "bench"};
    cfit_comm *c = NULL;
    int parent = 0;
    cfit_diag d;
    cfit_diag_clear(&d);
    fflush(NULL);
    if (cfit_launch_start(&l, &c, &parent, &d)) {
        fprintf(stderr, "launch: %s\n", d.msg);
        return -1;
    }
    if (!parent) {
        close(fds[0]);
        cfit_bench_opts o;
        cfit_bench_opts_init(&o);
        o.min_bytes = minb, o.max_bytes = maxb, o.step_factor = 4;
        o.iters = iters, o.warmup = warmup, o.check = 1, o.algo = algo;
        row_pipe p = {fds[1]};
        cfit_bench_sink sink = {.ctx = &p, .row = pipe_row};
        int rc = cfit_bench_run(c, &o, &sink, &d);
        if (rc)
            fprintf(stderr, "rank %d: %s\n", cfit_comm_rank(c), d.msg);
        cfit_comm_close(c);
        _exit(rc ? 1 : 0);
    }
    close(fds[1]);
    int n = 0;
    coll_row r;
    while (n < MAX_SIZES && read(fds[0], &r, sizeof r) == (ssize_t)sizeof r)
        out[n++] = r;
    close(fds[0]);
    int status = cfit_launch_wait(NULL, NULL);
    return status ? -1 : n;
}

/* STREAM copy with `procs` processes at once, each copying its own 2 x 64 MiB arrays for
 * about `secs` seconds; STREAM accounting (2 x bytes per copy: read + write).  Returns the
 * aggregate bytes/s of all processes. */
static inline double stream_copy(int procs, double secs)
{
    const size_t bytes = (size_t)64 << 20;
    int go[2], res[2];
    if (pipe(go) || pipe(res))
        return 0;
    for (int p = 0; p < procs; p++) {
        pid_t pid = fork();
        if (pid < 0)
            return 0;
        if (pid == 0) {
            close(go[1]);
            char *a = malloc(bytes), *b = malloc(bytes);
            if (!a || !b)
                _exit(1);
            memset(a, 1, bytes), memset(b, 2, bytes);
            char ch;
            if (read(go[0], &ch, 1) < 0)   /* returns 0 when the parent closes: everyone starts */
                _exit(1);
            double t0 = wall_s(), el, moved = 0;
            int k = 0;
            do {
                memcpy(k % 2 ? a : b, k % 2 ? b : a, bytes);
                k++;
                moved += 2.0 * (double)bytes;
            } while ((el = wall_s() - t0) < secs);
            double bw = moved / el;
            if (write(res[1], &bw, sizeof bw) != (ssize_t)sizeof bw)
                _exit(1);
            _exit(0);
        }
    }
    close(go[0]);
    struct timespec pause = {0, 200000000};   /* let every child allocate and touch its arrays */
    nanosleep(&pause, NULL);
    close(go[1]);
    close(res[1]);
    double sum = 0, bw;
    while (read(res[0], &bw, sizeof bw) == (ssize_t)sizeof bw)
        sum += bw;
    close(res[0]);
    while (wait(NULL) > 0)
        ;
    return sum;
}

#endif
