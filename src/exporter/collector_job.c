/* collector_job.c - step timings pushed by training processes over a unix datagram socket.
 *
 * A thread receives datagrams on --job-socket (created owner-only, mode 0600); each holds
 * one or more report lines (jobline.c).  Good lines add to per (job, rank) counters and a
 * step-time histogram; bad lines are counted and dropped.  Scrapes read the totals under a
 * mutex.  At most MAX_SERIES (job, rank) pairs are kept; reports for more count as bad. */
#include "collectors.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_SERIES 1024

static const double bounds[] = {0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128};
#define NB (sizeof bounds / sizeof bounds[0])

typedef struct series {
    char job[CFIT_JOB_NAME_MAX + 1];
    long rank;
    unsigned long long steps;
    double step_s, data_s, allreduce_s, optimizer_s;
    uint64_t bucket[NB];          /* not cumulative */
    double last_report;           /* unix time */
} series;

typedef struct job_state {
    const cfit_exporter_config *cfg;
    int fd;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    pthread_t thread;
    int running;
    _Atomic int stop;
    pthread_mutex_t lock;
    series *s;
    size_t n;
    unsigned long long good, bad;
} job_state;

static void job_add(job_state *st, const cfit_job_report *r)
{
    series *x = NULL;
    for (size_t i = 0; i < st->n; i++)
        if (st->s[i].rank == r->rank && strcmp(st->s[i].job, r->job) == 0) {
            x = &st->s[i];
            break;
        }
    if (!x) {
        if (st->n == MAX_SERIES) {
            st->bad++;
            return;
        }
        x = &st->s[st->n++];
        memset(x, 0, sizeof *x);
        memcpy(x->job, r->job, sizeof x->job);
        x->rank = r->rank;
    }
    x->steps++;
    x->step_s += r->step_s;
    x->data_s += r->data_s;
    x->allreduce_s += r->allreduce_s;
    x->optimizer_s += r->optimizer_s;
    for (size_t b = 0; b < NB; b++)
        if (r->step_s <= bounds[b]) {
            x->bucket[b]++;
            break;
        }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    x->last_report = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
    st->good++;
}

/* Split a datagram into lines and account each. */
static void job_datagram(job_state *st, const char *buf, size_t len)
{
    pthread_mutex_lock(&st->lock);
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - buf) : len;
        if (end > i) {
            cfit_job_report r;
            cfit_diag d;
            if (cfit_job_parse_line(buf + i, end - i, &r, &d) == 0)
                job_add(st, &r);
            else
                st->bad++;
        }
        i = end + 1;
    }
    pthread_mutex_unlock(&st->lock);
}

static void *job_thread(void *arg)
{
    job_state *st = arg;
    char buf[65536];
    while (!st->stop) {
        struct pollfd p = {.fd = st->fd, .events = POLLIN};
        int r = poll(&p, 1, 200);
        if (r <= 0)
            continue;
        ssize_t got = recv(st->fd, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC);
        if (got < 0)
            continue;
        if ((size_t)got > sizeof buf) {   /* truncated: not a report */
            pthread_mutex_lock(&st->lock);
            st->bad++;
            pthread_mutex_unlock(&st->lock);
            continue;
        }
        job_datagram(st, buf, (size_t)got);
    }
    return NULL;
}

static int job_init(const cfit_exporter_config *cfg, void **state, cfit_diag *d)
{
    if (!cfg->job_socket)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "the job collector needs --job-socket PATH");
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(cfg->job_socket) >= sizeof a.sun_path)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--job-socket: path longer than %zu bytes",
                             sizeof a.sun_path - 1);
    struct stat sb;
    if (lstat(cfg->job_socket, &sb) == 0) {
        if (!S_ISSOCK(sb.st_mode))
            return cfit_diag_set(d, CFIT_EIO, NULL, 0, 0, "%s exists and is not a socket", cfg->job_socket);
        unlink(cfg->job_socket);   /* a stale socket from an earlier run */
    }
    job_state *st = calloc(1, sizeof *st);
    series *s = calloc(MAX_SERIES, sizeof *s);
    if (!st || !s) {
        free(st);
        free(s);
        return CFIT_ENOMEM;
    }
    st->s = s;
    st->cfg = cfg;
    snprintf(st->path, sizeof st->path, "%s", cfg->job_socket);
    memcpy(a.sun_path, st->path, strlen(st->path) + 1);
    st->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    mode_t old = umask(077);   /* owner-only from the moment it exists */
    int bad = st->fd < 0 || bind(st->fd, (struct sockaddr *)&a, sizeof a) != 0;
    int err = errno;
    umask(old);
    if (!bad && chmod(st->path, 0600) != 0)
        bad = 1, err = errno;
    if (bad) {
        if (st->fd >= 0)
            close(st->fd);
        free(st->s);
        free(st);
        return cfit_diag_set(d, CFIT_EIO, NULL, 0, 0, "cannot create the job socket %s: %s", cfg->job_socket,
                             strerror(err));
    }
    int rcvbuf = 4 << 20;
    (void)setsockopt(st->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    pthread_mutex_init(&st->lock, NULL);
    if (pthread_create(&st->thread, NULL, job_thread, st) != 0) {
        close(st->fd);
        unlink(st->path);
        pthread_mutex_destroy(&st->lock);
        free(st->s);
        free(st);
        return cfit_diag_set(d, CFIT_ESYS, NULL, 0, 0, "cannot start the job socket thread");
    }
    st->running = 1;
    *state = st;
    return 0;
}

static const struct part {
    const char *metric, *help;
    size_t offset;
} parts[] = {
    {"clusterfit_job_step_seconds_total", "Wall time of the reported training steps.", offsetof(series, step_s)},
    {"clusterfit_job_data_loading_seconds_total", "Time the reported steps spent waiting for input data.",
     offsetof(series, data_s)},
    {"clusterfit_job_allreduce_seconds_total", "Time the reported steps spent in gradient all-reduce.",
     offsetof(series, allreduce_s)},
    {"clusterfit_job_optimizer_seconds_total", "Time the reported steps spent in the optimizer update.",
     offsetof(series, optimizer_s)},
};

static int job_collect(void *state, cfit_expo *e, cfit_diag *d)
{
    (void)d;
    job_state *st = state;
    pthread_mutex_lock(&st->lock);
    int rc = cfit__emit(e, "clusterfit_job_reports_total", CFIT_METRIC_COUNTER,
                        "Job report lines accepted from the job socket.", NULL, (double)st->good);
    if (!rc)
        rc = cfit__emit(e, "clusterfit_job_bad_lines_total", CFIT_METRIC_COUNTER,
                        "Job report lines dropped as malformed (or beyond the series limit).", NULL, (double)st->bad);
    for (size_t i = 0; i < st->n && !rc; i++) {
        const series *x = &st->s[i];
        char rank[24];
        snprintf(rank, sizeof rank, "%ld", x->rank);
        const char *l[] = {"training_job", x->job, "rank", rank, NULL};
        rc = cfit__emit(e, "clusterfit_job_steps_total", CFIT_METRIC_COUNTER, "Training steps reported.", l,
                        (double)x->steps);
        for (size_t k = 0; k < sizeof parts / sizeof parts[0] && !rc; k++)
            rc = cfit__emit(e, parts[k].metric, CFIT_METRIC_COUNTER, parts[k].help, l,
                            *(const double *)((const char *)x + parts[k].offset));
        if (!rc)
            rc = cfit_expo_family(e, "clusterfit_job_step_duration_seconds", CFIT_METRIC_HISTOGRAM,
                                  "Distribution of reported step times.");
        uint64_t cum[NB], c = 0;
        for (size_t b = 0; b < NB; b++)
            cum[b] = c += x->bucket[b];
        if (!rc)
            rc = cfit_expo_histogram(e, "clusterfit_job_step_duration_seconds", l, bounds, cum, NB, x->step_s,
                                     x->steps);
        if (!rc)
            rc = cfit__emit(e, "clusterfit_job_last_report_timestamp_seconds", CFIT_METRIC_GAUGE,
                            "Unix time of the last report of this job and rank.", l, x->last_report);
    }
    pthread_mutex_unlock(&st->lock);
    return rc;
}

static void job_fini(void *state)
{
    job_state *st = state;
    if (!st)
        return;
    if (st->running) {
        st->stop = 1;
        pthread_join(st->thread, NULL);
    }
    close(st->fd);
    unlink(st->path);
    pthread_mutex_destroy(&st->lock);
    free(st->s);
    free(st);
}

const cfit_collector_ops cfit__collector_job = {
    .name = "job",
    .help = "training step timings pushed to --job-socket (on when --job-socket is given)",
    .default_on = 0,
    .init = job_init,
    .collect = job_collect,
    .fini = job_fini,
};
