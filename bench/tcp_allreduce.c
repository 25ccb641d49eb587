/* tcp_allreduce.c - issue 5 target: clusterfit's all-reduce over TCP on loopback, 2 ranks, against
 * a single raw TCP stream measured in the same run (target: busbw >= 0.8 x the stream; exit 1 when
 * it is missed at any size).
 *
 * The stream: a forked sender writes 512 MiB in 4 MiB writes into one loopback connection with
 * default socket options; the receiver times from accept() to the last byte.  clusterfit: 2 forked
 * ranks with --transport tcp (the pipelined ring; 4 MiB to 64 MiB, float sum, out of place).  With
 * 2 ranks each rank sends and receives S bytes per all-reduce of S bytes (S/2 in the
 * reduce-scatter, S/2 in the all-gather) and the bus factor is 1, so busbw = S/t is directly the
 * per-direction rate a rank sustains, comparable to one stream's rate.  For context the program
 * also measures one connection carrying data both ways at once (what two ranks that each send and
 * receive can reach on this machine: loopback TCP costs CPU per byte on both ends, so on a machine
 * with few cores the duplex rate per direction is well below a one-way stream).  clusterfit runs
 * twice per round, without I/O threads (CLUSTERFIT_TCP_THREADS=0: each rank's one thread makes
 * every send, receive and reduction) and with 2 per rank; the target is judged on the default the
 * transport picks on this machine (threads only when cores are left over: docs/bench-launch.md).
 * All run in turn ROUNDS times (default 3); medians are compared.
 * Usage: bench_tcp_allreduce [ROUNDS]
 */
#include "bench_coll.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#define MINB ((uint64_t)4 << 20)
#define MAXB ((uint64_t)64 << 20)
#define ITERS 10
#define WARMUP 3

/* A listening socket on a kernel-chosen loopback port (its address in *a); -1 on failure. */
static int loopback_listener(struct sockaddr_in *a)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    *a = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof *a;
    if (ls >= 0 && (bind(ls, (struct sockaddr *)a, sizeof *a) || listen(ls, 1) ||
                    getsockname(ls, (struct sockaddr *)a, &al))) {
        close(ls);
        ls = -1;
    }
    return ls;
}

/* Fork a child connected to the listener at *a: returns 0 in the child with its socket in *s
 * (it exits 1 when it cannot connect), the child's pid in the parent, -1 when fork fails. */
static pid_t fork_client(const struct sockaddr_in *a, int *s)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        *s = socket(AF_INET, SOCK_STREAM, 0);
        if (*s < 0 || connect(*s, (const struct sockaddr *)a, sizeof *a))
            _exit(1);
    }
    return pid;
}

/* Wait for fork_client's child: 1 when it exited 0. */
static int child_ok(pid_t pid)
{
    int st = -1;
    return pid > 0 && waitpid(pid, &st, 0) == pid && st == 0;
}

/* One raw stream of `total` bytes over loopback; bytes/s, or 0 on failure. */
static double raw_stream(size_t total)
{
    struct sockaddr_in a;
    int ls = loopback_listener(&a);
    if (ls < 0)
        return 0;
    const size_t chunk = (size_t)4 << 20;
    char *buf = malloc(chunk);
    if (!buf) {
        close(ls);
        return 0;
    }
    memset(buf, 7, chunk);
    int s;
    pid_t pid = fork_client(&a, &s);
    if (pid == 0) {
        for (size_t sent = 0; sent < total;) {
            ssize_t w = write(s, buf, total - sent < chunk ? total - sent : chunk);
            if (w <= 0)
                _exit(1);
            sent += (size_t)w;
        }
        close(s);
        _exit(0);
    }
    s = pid > 0 ? accept(ls, NULL, NULL) : -1;
    double t0 = wall_s();
    size_t got = 0;
    for (ssize_t r; s >= 0 && got < total && (r = read(s, buf, chunk)) > 0;)
        got += (size_t)r;
    double el = wall_s() - t0;
    int ok = child_ok(pid);
    if (s >= 0)
        close(s);
    close(ls);
    free(buf);
    return got == total && ok ? (double)total / el : 0;
}

/* Send `total` bytes on s while receiving `total` from it (non-blocking, poll); 0 or -1. */
static int duplex(int s, char *out, char *in, size_t chunk, size_t total)
{
    size_t sent = 0, got = 0;
    fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK);
    while (sent < total || got < total) {
        struct pollfd p = {.fd = s, .events = (short)((sent < total ? POLLOUT : 0) | (got < total ? POLLIN : 0))};
        if (poll(&p, 1, 10000) <= 0)
            return -1;
        if ((p.revents & POLLOUT) && sent < total) {
            ssize_t w = write(s, out, total - sent < chunk ? total - sent : chunk);
            if (w > 0)
                sent += (size_t)w;
        }
        if (p.revents & (POLLIN | POLLHUP)) {
            ssize_t r = read(s, in, chunk);
            if (r == 0)
                return -1;
            if (r > 0)
                got += (size_t)r;
        }
    }
    return 0;
}

/* Both directions of one loopback connection at once, `total` bytes each way: the rate per
 * direction (bytes/s), what two ranks that each send and receive can reach; 0 on failure. */
static double raw_duplex(size_t total)
{
    struct sockaddr_in a;
    int ls = loopback_listener(&a);
    if (ls < 0)
        return 0;
    const size_t chunk = (size_t)1 << 20;
    char *out = malloc(chunk), *in = malloc(chunk);
    if (!out || !in) {
        free(out), free(in);
        close(ls);
        return 0;
    }
    memset(out, 7, chunk);
    int s;
    pid_t pid = fork_client(&a, &s);
    if (pid == 0)
        _exit(duplex(s, out, in, chunk, total) ? 1 : 0);
    s = pid > 0 ? accept(ls, NULL, NULL) : -1;
    double t0 = wall_s();
    int rc = s >= 0 ? duplex(s, out, in, chunk, total) : -1;
    double el = wall_s() - t0;
    int ok = child_ok(pid);
    if (s >= 0)
        close(s);
    close(ls);
    free(out), free(in);
    return rc == 0 && ok ? (double)total / el : 0;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    if (rounds < 1 || rounds > 50) {
        fprintf(stderr, "usage: bench_tcp_allreduce [ROUNDS 1..50]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    double ours[2][3][50], stream[50], both[50], size[3] = {0};
    static const char *const threads[2] = {"0", "2"};
    for (int r = 0; r < rounds; r++) {
        for (int m = 0; m < 2; m++) {
            coll_row rows[MAX_SIZES];
            setenv("CLUSTERFIT_TCP_THREADS", threads[m], 1);
            int n = run_clusterfit(2, CFIT_TRANSPORT_TCP, CFIT_BENCH_ALGO_AUTO, MINB, MAXB, ITERS, WARMUP, rows);
            unsetenv("CLUSTERFIT_TCP_THREADS");
            if (n != 3) {
                fprintf(stderr, "clusterfit all-reduce over tcp failed\n");
                return 1;
            }
            for (int i = 0; i < n; i++) {
                if (rows[i].wrong)
                    return fprintf(stderr, "clusterfit all-reduce: %ld wrong elements\n", rows[i].wrong), 1;
                ours[m][i][r] = rows[i].busbw_gbs, size[i] = rows[i].size_bytes;
            }
        }
        if ((stream[r] = raw_stream((size_t)512 << 20) / 1e9) <= 0)
            return fprintf(stderr, "raw TCP stream failed\n"), 1;
        if ((both[r] = raw_duplex((size_t)256 << 20) / 1e9) <= 0)
            return fprintf(stderr, "raw duplex TCP stream failed\n"), 1;
    }
    double st = median(stream, rounds);
    printf("tcp all-reduce over loopback, 2 ranks, float sum, out of place, %d iterations after %d warm-up, "
           "median of %d rounds; %ld CPUs\n", ITERS, WARMUP, rounds, sysconf(_SC_NPROCESSORS_ONLN));
    double du = median(both, rounds);
    printf("reference: one raw TCP stream, 512 MiB in 4 MiB writes: %.3f GB/s\n", st);
    printf("context: one connection sending 256 MiB each way at once: %.3f GB/s per direction (%.2f x the stream)\n",
           du, du / st);
    /* the transport's default: cores per local rank less one, at most one per connection */
    int def = cfit_tcp_default_threads(2, 4), dm = def > 0;
    printf("busbw with 0 and with 2 I/O threads per rank; the default here is %d (%ld CPUs, 2 ranks, 4 connections)\n",
           def, sysconf(_SC_NPROCESSORS_ONLN));
    printf("%10s  %14s  %14s  %14s  %14s\n", "size", "busbw 0 thr", "busbw 2 thr", "default/stream",
           "default/duplex");
    int met = 1;
    for (int i = 0; i < 3; i++) {
        double b0 = median(ours[0][i], rounds), b2 = median(ours[1][i], rounds), b = dm ? b2 : b0;
        met &= b >= 0.8 * st;
        printf("%8.0fMi  %14.3f  %14.3f  %14.2f  %14.2f\n", size[i] / 1048576, b0, b2, b / st, b / du);
    }
    printf("target: busbw >= 0.8 x the raw stream at every size (default threads): %s\n", met ? "met" : "MISSED");
    return met ? 0 : 1;   /* exit 1: the target was missed */
}
