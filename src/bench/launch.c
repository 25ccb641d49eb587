/* launch.c - start a job: fork --np local ranks, or take rank and size from the
 * environment mpirun/srun/torchrun set, then bootstrap and connect the transports.
 *
 * With --np the parent listens on a free loopback port and hands that socket to rank 0
 * (no race for the port); children get PR_SET_PDEATHSIG so they never outlive it.  The
 * parent's cfit_launch_wait() reaps them, reports a rank killed by a signal (with a hint
 * when the kernel says OOM), kills the rest once timeout_s has passed after the first
 * failure.  The launcher owns the job's shared memory: every segment is named
 * /clusterfit-<launcher pid>-..., and after the last rank is reaped (normal end, error, a
 * rank's death, or SIGTERM/SIGINT/SIGHUP to the launcher, whose handler only kills the
 * ranks and sets a flag) it unlinks whatever carries that prefix.  Before forking it
 * checks the job's shared memory and buffers against /dev/shm and MemAvailable
 * (launch_guard.c).
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
    pid_t owner;                  /* the launcher */
    long oom_kills;               /* cgroup OOM kills at the start, -1 unknown */
    struct sigaction old[3];      /* dispositions before the launcher's handler */
    char token[CFIT__TOKEN_MAX];  /* the job token the ranks' hellos carry */
} g_job;

static volatile sig_atomic_t g_stop_signal;   /* the signal that stopped the launcher, 0 none */
static const int g_stop_signals[3] = {SIGTERM, SIGINT, SIGHUP};

/* Async-signal-safe: kill the ranks forked so far and let cfit_launch_wait clean up. */
static void on_stop_signal(int sig)
{
    if (getpid() != g_job.owner)
        return;   /* a child between fork and resetting its handlers */
    g_stop_signal = sig;
    for (int i = 0; i < g_job.n; i++)
        kill(g_job.pids[i], SIGKILL);
}

static void stop_handlers(int install)
{
    for (int i = 0; i < 3; i++) {
        if (!install) {
            sigaction(g_stop_signals[i], &g_job.old[i], NULL);
            continue;
        }
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(g_stop_signals[i], &sa, &g_job.old[i]);
    }
}

/* The job token every hello carries: CLUSTERFIT_JOB_TOKEN, else the launcher's job id (Slurm
 * job and step, Open MPI's job id, the PMIx namespace), else none.  The variables are the ones
 * srun, Open MPI's mpirun and any PMIx launcher set identically in every rank of a job; a token
 * longer than a hello's field is sent as its 64-bit FNV-1a hash. */
static void env_token(char *out, size_t n)
{
    const char *own = getenv("CLUSTERFIT_JOB_TOKEN"), *sj = getenv("SLURM_JOB_ID");
    const char *ompi = getenv("OMPI_MCA_ess_base_jobid"), *pmix = getenv("PMIX_NAMESPACE");
    const char *step = getenv("SLURM_STEP_ID");
    char t[1024];
    if (own && *own)
        snprintf(t, sizeof t, "token:%s", own);
    else if (sj && *sj)
        snprintf(t, sizeof t, "slurm:%s.%s", sj, step ? step : "");
    else if (ompi && *ompi)
        snprintf(t, sizeof t, "ompi:%s", ompi);
    else if (pmix && *pmix)
        snprintf(t, sizeof t, "pmix:%s", pmix);
    else
        t[0] = '\0';
    if (strlen(t) < n) {
        snprintf(out, n, "%s", t);
        return;
    }
    uint64_t h = 14695981039346656037ULL;   /* FNV-1a 64 (http://www.isthe.com/chongo/tech/comp/fnv/) */
    for (const char *q = t; *q; q++)
        h = (h ^ (unsigned char)*q) * 1099511628211ULL;
    snprintf(out, n, "fnv1a64:%016llx", (unsigned long long)h);
}

/* A --np job's token: random, so no other process on the host can guess it. */
static void np_token(char *out, size_t n)
{
    unsigned long long r[2] = {0, 0};
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f || fread(r, sizeof r, 1, f) != 1) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r[0] = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)ts.tv_sec << 20);
        r[1] = (unsigned long long)getpid();
    }
    if (f)
        fclose(f);
    snprintf(out, n, "np:%d:%016llx%016llx", (int)getpid(), r[0], r[1]);
}

static int rank_start(const cfit_launch *opt, int rank, int size, const char *host, int port, int lfd,
                      int owner, cfit_comm **out, cfit_diag *d)
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
    c->owner_pid = owner;
    c->local_only = owner != 0;
    snprintf(c->token, sizeof c->token, "%s", g_job.token);
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

static const char *const env_vars[][2] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "PMI_SIZE"},
    {"SLURM_PROCID", "SLURM_NTASKS"},
    {"RANK", "WORLD_SIZE"},
};

/* Rank and size from the first launcher whose variables are set. */
static int env_rank(int *rank, int *size, int *launcher, cfit_diag *d)
{
    *rank = 0, *size = 1, *launcher = 0;
    for (size_t i = 0; i < sizeof env_vars / sizeof env_vars[0]; i++) {
        const char *r = getenv(env_vars[i][0]), *s = getenv(env_vars[i][1]);
        if (!r && !s)
            continue;
        if (!r || !s)
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "%s is set but %s is not", r ? env_vars[i][0] : env_vars[i][1],
                                 r ? env_vars[i][1] : env_vars[i][0]);
        long sv, rv;
        cfit_diag pd;
        cfit_diag_clear(&pd);
        if (cfit__parse_envint(s, 1, 1L << 20, &sv, &pd))
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "%s: %s", env_vars[i][1], pd.msg);
        if (cfit__parse_envint(r, 0, sv - 1, &rv, &pd))
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "%s: %s", env_vars[i][0], pd.msg);
        *rank = (int)rv, *size = (int)sv, *launcher = i < 3;   /* mpirun, mpiexec, srun */
        return 0;
    }
    return 0;
}

/* --rendezvous, else MASTER_ADDR/MASTER_PORT, else (under mpirun, mpiexec or srun) the first
 * node of the Slurm allocation when the environment names one, else 127.0.0.1:29500. */
int cfit_launch_env_size(void)
{
    int rank, size, launcher;
    cfit_diag d;
    for (size_t i = 0; i < sizeof env_vars / sizeof env_vars[0]; i++)
        if (getenv(env_vars[i][0]) || getenv(env_vars[i][1]))
            return env_rank(&rank, &size, &launcher, &d) == 0 ? size : 1;
    return 0;
}

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

/* In a child just forked: back to the default dispositions, die with the launcher. */
static int child_setup(pid_t parent)
{
    for (int k = 0; k < 3; k++)
        sigaction(g_stop_signals[k], &g_job.old[k], NULL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        return -1;
    free(g_job.pids);
    g_job.pids = NULL;
    g_job.n = 0;
    return 0;
}

static int fork_ranks(const cfit_launch *opt, cfit_comm **comm, int *is_parent, cfit_diag *d)
{
    int rc = cfit__launch_fits(opt, d);
    if (rc)
        return rc;
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
    g_job.owner = getpid();
    np_token(g_job.token, sizeof g_job.token);
    g_job.oom_kills = cfit__cgroup_oom_kills();
    g_stop_signal = 0;
    stop_handlers(1);
    fflush(NULL);
    for (int i = 0; i < opt->np && !g_stop_signal; i++) {
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
            if (child_setup(g_job.owner))
                _exit(1);
            if (i != 0) {
                close(lfd);
                lfd = -1;
            }
            *is_parent = 0;
            *comm = NULL;
            return rank_start(opt, i, opt->np, "127.0.0.1", port, lfd, (int)getppid(), comm, d);
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
    env_token(g_job.token, sizeof g_job.token);
    return rank_start(opt, rank, size, host, port, -1, 0, comm, d);
}

/* One reaped rank's exit code for the job; a rank a signal killed (not by the launcher) is
 * reported, with a hint when SIGKILL came from the OOM killer or /dev/shm is full. */
static int reaped_code(int i, int st, int killed_by_us, void (*report)(void *ctx, const char *msg), void *ctx)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (!WIFSIGNALED(st))
        return 0;
    if (!killed_by_us && !g_stop_signal && report) {
        char hint[256] = "", msg[512];
        if (WTERMSIG(st) == SIGKILL)
            cfit__sigkill_hint((int)g_job.pids[i], g_job.oom_kills, hint, sizeof hint);
        snprintf(msg, sizeof msg, "rank %d (pid %d) was killed by signal %d (%s)%s", i, (int)g_job.pids[i],
                 WTERMSIG(st), strsignal(WTERMSIG(st)), hint);
        report(ctx, msg);
    }
    return 1;
}

/* Kill every rank not reaped yet (done[i] = 2: killed by the launcher). */
static void kill_rest(int *done, int first_failed, void (*report)(void *ctx, const char *msg), void *ctx)
{
    char msg[256];
    for (int i = 0; i < g_job.n; i++) {
        if (done[i])
            continue;
        if (report && first_failed >= 0) {
            snprintf(msg, sizeof msg, "rank %d did not exit within %g s after rank %d failed; killing it", i,
                     g_job.timeout_s + 5.0, first_failed);
            report(ctx, msg);
        }
        kill(g_job.pids[i], SIGKILL);
        done[i] = 2;
    }
}

/* Every rank reaped: unlink the job's segments, restore the signal dispositions. */
static int finish_job(int status, void (*report)(void *ctx, const char *msg), void *ctx)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "clusterfit-%d-", (int)g_job.owner);
    if (g_job.owner > 0) {   /* a launch happened: its segments, its handlers */
        cfit__shm_remove_prefix(prefix);
        stop_handlers(0);
    }
    int sig = g_stop_signal;
    if (sig) {
        char msg[256];
        if (report) {
            snprintf(msg, sizeof msg, "interrupted by signal %d (%s): stopped %d rank%s and removed the job's "
                     "shared memory", sig, strsignal(sig), g_job.n, g_job.n == 1 ? "" : "s");
            report(ctx, msg);
        }
        status = 128 + sig;
    }
    free(g_job.pids);
    g_job.pids = NULL;
    g_job.n = 0;
    g_job.owner = 0;
    g_stop_signal = 0;
    return status;
}

int cfit_launch_wait(void (*report)(void *ctx, const char *msg), void *ctx)
{
    int status = 0, left = g_job.n, first_failed = -1, stopped = 0;
    double deadline = 0;
    int *done = calloc((size_t)(g_job.n > 0 ? g_job.n : 1), sizeof *done);
    if (!done) {
        for (int i = 0; i < g_job.n; i++)
            kill(g_job.pids[i], SIGKILL);
        for (int i = 0; i < g_job.n; i++)
            waitpid(g_job.pids[i], NULL, 0);
        return finish_job(1, report, ctx);
    }
    while (left > 0) {
        int reaped = 0;
        if (g_stop_signal && !stopped) {
            kill_rest(done, -1, NULL, NULL);   /* one forked as the signal came, too */
            stopped = 1;
        }
        for (int i = 0; i < g_job.n; i++) {
            int st;
            if (done[i] == 1 || waitpid(g_job.pids[i], &st, WNOHANG) <= 0)
                continue;
            int code = reaped_code(i, st, done[i] == 2, report, ctx);
            done[i] = 1, left--, reaped = 1;
            if (code && !status) {
                status = code;
                first_failed = i;
                deadline = cfit__now() + g_job.timeout_s + 5.0;
            }
        }
        if (left > 0 && deadline > 0 && cfit__now() > deadline) {
            kill_rest(done, first_failed, report, ctx);
            deadline = cfit__now() + 3600;   /* reaped on the next rounds */
        }
        if (!reaped && left > 0) {
            struct timespec ts = {0, 20000000};
            nanosleep(&ts, NULL);
        }
    }
    free(done);
    return finish_job(status, report, ctx);
}
