/* comm_stream.c - how fast the bench transports stream between two local ranks, against
 * references measured in the same run (issue 5: shm at memory speed, tcp close to a raw
 * loopback TCP stream).
 *
 * Measures, in one run:
 *   1. memcpy of 16 MiB buffers on one core (the shm path copies each byte twice: into
 *      the ring and out of it, on two cores, so one-way shm ~ memcpy speed is the bound);
 *   2. a raw TCP stream over loopback: one connection, 16 MiB send()/recv() calls;
 *   3. the shm transport, 2 forked ranks, one way: rank 0 sends COUNT messages of SIZE;
 *   4. the tcp transport the same way (4 striped connections, or CLUSTERFIT_TCP_CONNS).
 * and prints GB/s (1e9 bytes) and the ratios shm/memcpy and tcp/raw.
 * Usage: bench_comm_stream [SIZE_MIB [TOTAL_MIB]]   (default 16 and 2048)
 */
#define _GNU_SOURCE
#include "bench/comm.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static size_t g_size, g_total;

static double memcpy_gbs(void)
{
    char *a = malloc(g_size), *b = malloc(g_size);
    memset(a, 1, g_size), memset(b, 2, g_size);
    size_t n = g_total / g_size;
    double t = now();
    for (size_t i = 0; i < n; i++) {
        a[i % g_size] = (char)i;
        memcpy(b, a, g_size);
    }
    t = now() - t;
    double v = (double)(n * g_size) / t / 1e9 + b[n % g_size] * 0.0;
    free(a), free(b);
    return v;
}

static double raw_tcp_gbs(void)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (bind(ls, (struct sockaddr *)&sa, sizeof sa) || listen(ls, 1) || getsockname(ls, (struct sockaddr *)&sa, &len))
        return 0;
    char *buf = malloc(g_size);
    memset(buf, 3, g_size);
    pid_t pid = fork();
    if (pid == 0) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(s, (struct sockaddr *)&sa, sizeof sa))
            _exit(1);
        for (size_t done = 0; done < g_total;) {
            ssize_t k = send(s, buf, g_size < g_total - done ? g_size : g_total - done, 0);
            if (k <= 0)
                _exit(1);
            done += (size_t)k;
        }
        _exit(0);
    }
    int c = accept(ls, NULL, NULL);
    double t = now();
    size_t done = 0;
    while (done < g_total) {
        ssize_t k = recv(c, buf, g_size, 0);
        if (k <= 0)
            break;
        done += (size_t)k;
    }
    t = now() - t;
    waitpid(pid, NULL, 0);
    close(c), close(ls), free(buf);
    return (double)done / t / 1e9;
}

/* Two forked ranks over `kind`; the receiving rank's timing lands in *shared. */
static double comm_gbs(cfit_transport_kind kind, double *shared)
{
    cfit_launch l;
    memset(&l, 0, sizeof l);
    l.np = 2, l.transport = kind, l.timeout_s = 60, l.args_digest = "stream";
    cfit_comm *c;
    int parent;
    cfit_diag d;
    *shared = 0;
    if (cfit_launch_start(&l, &c, &parent, &d))
        return 0;
    if (parent) {
        cfit_launch_wait(NULL, NULL);
        return *shared;
    }
    char *buf = malloc(g_size);
    memset(buf, 4, g_size);
    size_t n = g_total / g_size;
    int me = cfit_comm_rank(c), rc = cfit_comm_barrier(c);
    for (int warm = 0; warm < 2 && !rc; warm++)
        rc = me == 0 ? cfit_comm_send(c, 1, buf, g_size) : cfit_comm_recv(c, 0, buf, g_size);
    double t = now();
    for (size_t i = 0; i < n && !rc; i++)
        rc = me == 0 ? cfit_comm_send(c, 1, buf, g_size) : cfit_comm_recv(c, 0, buf, g_size);
    t = now() - t;
    if (me == 1 && !rc)
        *shared = (double)(n * g_size) / t / 1e9;
    if (rc)
        fprintf(stderr, "rank %d: %s\n", me, cfit_comm_error(c));
    cfit_comm_close(c);
    free(buf);
    _exit(rc ? 1 : 0);
}

int main(int argc, char **argv)
{
    g_size = (size_t)(argc > 1 ? atol(argv[1]) : 16) << 20;
    g_total = (size_t)(argc > 2 ? atol(argv[2]) : 2048) << 20;
    if (g_size == 0 || g_total < g_size) {
        fprintf(stderr, "usage: bench_comm_stream [SIZE_MIB [TOTAL_MIB]]\n");
        return 2;
    }
    double *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    double mc = memcpy_gbs(), raw = raw_tcp_gbs();
    double shm = comm_gbs(CFIT_TRANSPORT_SHM, shared), tcp = comm_gbs(CFIT_TRANSPORT_TCP, shared);
    printf("one-way stream, %zu MiB messages, %zu MiB in all (GB = 1e9 bytes)\n", g_size >> 20, g_total >> 20);
    printf("  memcpy, one core        %6.2f GB/s\n", mc);
    printf("  shm transport, 2 ranks  %6.2f GB/s  = %.2f x memcpy\n", shm, mc > 0 ? shm / mc : 0);
    printf("  raw TCP loopback stream %6.2f GB/s\n", raw);
    printf("  tcp transport, 2 ranks  %6.2f GB/s  = %.2f x raw TCP\n", tcp, raw > 0 ? tcp / raw : 0);
    return shm > 0 && tcp > 0 ? 0 : 1;
}
