/* launch.c - start a job: fork --np local ranks, or take rank and size from the
 * environment mpirun/srun/torchrun set, then bootstrap and connect the transports.
 *
 * With --np the parent listens on a free loopback port and hands that socket to rank 0
 * (no race for the port); children get PR_SET_PDEATHSIG so they never outlive it.  The
 * parent's cfit_launch_wait() reaps them, reports a rank killed by a signal, kills the
 * rest once timeout_s has passed after the first failure, and removes any shared memory
 * segment of the job left behind by a rank killed during set-up.
 */
#define _GNU_SOURCE
#include "bench/comm_internal.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_RDV_PORT 29500

static struct {
    pid_t *pids;
    int n;
    double timeout_s;
} g_job;

static int rank_start(const cfit_launch *opt, int rank, int size, const char *host, int port, int lfd,
                      cfit_comm **out, cfit_diag *d)
{
    cfit_comm *c = calloc(1, sizeof *c);
    if (!c) {
        if (lfd >= 0)
            close(lfd);
        return cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
    }
    c->ctl_fd = -1;
    c->data_listen_fd = -1;
    c->lost = -1;
    c->reporter = -1;
    c->timeout_s = opt->timeout_s > 0 ? opt->timeout_s : 60.0;
    int rc = cfit__bootstrap(c, rank, size, host, port, lfd, opt->args_digest, d);
    if (!rc)
        rc = cfit__comm_connect(c, opt->transport, d);
    if (rc) {
        cfit_comm_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* Rank and size from the first launcher whose variables are set. */
static int env_rank(int *rank, int *size, int *launcher, cfit_diag *d)
{
    static const char *const vars[][2] = {
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"PMI_RANK", "PMI_SIZE"},
        {"SLURM_PROCID", "SLURM_NTASKS"},
        {"RANK", "WORLD_SIZE"},
    };
    *rank = 0, *size = 1, *launcher = 0;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *r = getenv(vars[i][0]), *s = getenv(vars[i][1]);
        if (!r && !s)
            continue;
        if (!r || !s)
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "%s is set but %s is not", r ? vars[i][0] : vars[i][1],
                                 r ? vars[i][1] : vars[i][0]);
        long sv, rv;
        cfit_diag pd;
        cfit_diag_clear(&pd);
        if (cfit__parse_envint(s, 1, 1L << 20, &sv, &pd))
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "%s: %s", vars[i][1], pd.msg);
        if (cfit__parse_envint(r, 0, sv - 1, &rv, &pd))
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "%s: %s", vars[i][0], pd.msg);
        *rank = (int)rv, *size = (int)sv, *launcher = i < 3;   /* mpirun, mpiexec, srun */
        return 0;
    }
    return 0;
}

/* --rendezvous, else MASTER_ADDR/MASTER_PORT, else (under mpirun, mpiexec or srun) the first
 * node of the Slurm allocation when the environment names one, else 127.0.0.1:29500. */
static int env_rendezvous(const cfit_launch *opt, int launcher, char *host, size_t host_n, int *port, cfit_diag *d)
{
    cfit_diag pd;
    cfit_diag_clear(&pd);
    if (opt->rendezvous) {
        if (cfit__parse_hostport(opt->rendezvous, host, host_n, port, &pd))
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--rendezvous: %s", pd.msg);
        return 0;
    }
    snprintf(host, host_n, "127.0.0.1");
    *port = DEFAULT_RDV_PORT;
    const char *addr = getenv("MASTER_ADDR"), *mport = getenv("MASTER_PORT");
    if (addr && *addr) {
        if (strlen(addr) >= host_n)
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "MASTER_ADDR is too long");
        snprintf(host, host_n, "%s", addr);
    } else if (launcher) {
        const char *list = getenv("SLURM_STEP_NODELIST");
        if (!list)
            list = getenv("SLURM_JOB_NODELIST");
        if (!list)
            list = getenv("SLURM_NODELIST");
        if (list && cfit__parse_nodelist_first(list, host, host_n, &pd))
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "SLURM node list: %s", pd.msg);
    }
    if (mport) {
        long p;
        if (cfit__parse_envint(mport, 1, 65535, &p, &pd))
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "MASTER_PORT: %s", pd.msg);
        *port = (int)p;
    }
    return 0;
}

static int loopback_listener(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 4096) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

static int fork_ranks(const cfit_launch *opt, cfit_comm **comm, int *is_parent, cfit_diag *d)
{
    int port;
    int lfd = loopback_listener(&port);
    if (lfd < 0)
        return cfit_diag_set(d, CFIT_ESYS, NULL, 0, 0, "cannot listen on a loopback port: %s", strerror(errno));
    free(g_job.pids);
    g_job.pids = calloc((size_t)opt->np, sizeof *g_job.pids);
    if (!g_job.pids) {
        close(lfd);
        return cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
    }
    g_job.n = 0;
    g_job.timeout_s = opt->timeout_s > 0 ? opt->timeout_s : 60.0;
    pid_t parent = getpid();
    fflush(NULL);
    for (int i = 0; i < opt->np; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            int e = errno;
            for (int k = 0; k < g_job.n; k++)
                kill(g_job.pids[k], SIGKILL);
            cfit_launch_wait(NULL, NULL);
            close(lfd);
            return cfit_diag_set(d, CFIT_ESYS, NULL, 0, 0, "cannot fork rank %d: %s", i, strerror(e));
        }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent)
                _exit(1);
            free(g_job.pids);
            g_job.pids = NULL;
            g_job.n = 0;
            if (i != 0) {
                close(lfd);
                lfd = -1;
            }
            *is_parent = 0;
            *comm = NULL;
            return rank_start(opt, i, opt->np, "127.0.0.1", port, lfd, comm, d);
        }
        g_job.pids[g_job.n++] = pid;
    }
    close(lfd);
    *is_parent = 1;
    *comm = NULL;
    return 0;
}

int cfit_launch_start(const cfit_launch *opt, cfit_comm **comm, int *is_parent, cfit_diag *d)
{
    *comm = NULL;
    *is_parent = 0;
    int rc = cfit__tcp_env_check(d);
    if (rc)
        return rc;
    if (opt->np > 0)
        return fork_ranks(opt, comm, is_parent, d);
    int rank, size, launcher, port;
    char host[CFIT__HOST_MAX];
    rc = env_rank(&rank, &size, &launcher, d);
    if (!rc && size > 1)
        rc = env_rendezvous(opt, launcher, host, sizeof host, &port, d);
    if (rc)
        return rc;
    if (size == 1)
        snprintf(host, sizeof host, "127.0.0.1"), port = 0;
    return rank_start(opt, rank, size, host, port, -1, comm, d);
}

/* Remove /dev/shm/clusterfit-<pid of rank 0>-* (segments of this job a killed rank left). */
static void remove_segments(pid_t rank0)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "clusterfit-%d-", (int)rank0);
    DIR *dir = opendir("/dev/shm");
    if (!dir)
        return;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            char name[300];
            snprintf(name, sizeof name, "/%s", e->d_name);
            shm_unlink(name);
        }
    }
    closedir(dir);
}

int cfit_launch_wait(void (*report)(void *ctx, const char *msg), void *ctx)
{
    char msg[256];
    int status = 0, left = g_job.n, first_failed = -1;
    double deadline = 0;
    int *done = calloc((size_t)(g_job.n > 0 ? g_job.n : 1), sizeof *done);
    if (!done)
        return 1;
    while (left > 0) {
        int reaped = 0;
        for (int i = 0; i < g_job.n; i++) {
            int st;
            if (done[i] == 1 || waitpid(g_job.pids[i], &st, WNOHANG) <= 0)
                continue;
            int killed_by_us = done[i] == 2;
            done[i] = 1, left--, reaped = 1;
            int code = 0;
            if (WIFSIGNALED(st)) {
                code = 1;
                if (!killed_by_us && report) {
                    snprintf(msg, sizeof msg, "rank %d (pid %d) was killed by signal %d (%s)", i,
                             (int)g_job.pids[i], WTERMSIG(st), strsignal(WTERMSIG(st)));
                    report(ctx, msg);
                }
            } else if (WIFEXITED(st)) {
                code = WEXITSTATUS(st);
            }
            if (code && !status) {
                status = code;
                first_failed = i;
                deadline = cfit__now() + g_job.timeout_s + 5.0;
            }
        }
        if (left > 0 && deadline > 0 && cfit__now() > deadline) {
            for (int i = 0; i < g_job.n; i++)
                if (!done[i]) {
                    if (report) {
                        snprintf(msg, sizeof msg, "rank %d did not exit within %g s after rank %d failed; killing it",
                                 i, g_job.timeout_s + 5.0, first_failed);
                        report(ctx, msg);
                    }
                    kill(g_job.pids[i], SIGKILL);
                    done[i] = 2;
                }
            deadline = cfit__now() + 3600;   /* reaped on the next rounds */
        }
        if (!reaped && left > 0) {
            struct timespec ts = {0, 20000000};
            nanosleep(&ts, NULL);
        }
    }
    if (g_job.n > 0)
        remove_segments(g_job.pids[0]);
    free(done);
    free(g_job.pids);
    g_job.pids = NULL;
    g_job.n = 0;
    return status;
}
