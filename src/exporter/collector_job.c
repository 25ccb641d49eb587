/* collector_job.c - step timings pushed by training processes over a unix datagram socket.
 *
 * A thread receives datagrams on --job-socket (created owner-only, mode 0600); each holds
 * one or more report lines (jobline.c).  Good lines add to per (job, rank) counters and a
 * step-time histogram; bad lines are counted and dropped.  Scrapes read the totals under a
 * mutex.  A pair not heard from for job_stale_s is dropped; at most job_max_series pairs are
 * kept, and a new pair past that replaces the one heard from longest ago.  A socket another
 * live process serves is never replaced, and the socket is removed at exit only while it is
 * still the one this exporter bound (same device and inode). */
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

#define DEFAULT_MAX_SERIES 1024
#define DEFAULT_STALE_S 600.0

static const double bounds[] = {0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128};
#define NB (sizeof bounds / sizeof bounds[0])

typedef struct series {
    char job[CFIT_JOB_NAME_MAX + 1];
    long rank;
    unsigned long long steps;
    double step_s, data_s, allreduce_s, optimizer_s;
    uint64_t bucket[NB];          /* not cumulative */
    double last_report;           /* unix time */
    double last_seen_s;           /* monotonic time of the last report (eviction) */
    double last_busy_s;           /* the last step's time outside all-reduce (straggler signal) */
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
    size_t n, max;
    double stale_s;
    dev_t dev;                    /* the socket file this exporter bound */
    ino_t ino;
    unsigned long long good, bad, evicted;
} job_state;

/* Drop series i (order is not kept). */
static void job_drop(job_state *st, size_t i)
{
    st->s[i] = st->s[--st->n];
    st->evicted++;
}

/* Drop the pairs not heard from since now_s - stale_s. */
static void job_expire(job_state *st, double now_s)
{
    for (size_t i = st->n; i-- > 0;)
        if (now_s - st->s[i].last_seen_s > st->stale_s)
            job_drop(st, i);
}

/* The series of (job, rank), made when new: past the limit the pair heard from longest ago
 * makes room. */
static series *job_series(job_state *st, const cfit_job_report *r, double now_s)
{
    for (size_t i = 0; i < st->n; i++)
        if (st->s[i].rank == r->rank && strcmp(st->s[i].job, r->job) == 0)
            return &st->s[i];
    job_expire(st, now_s);
    if (st->n == st->max) {
        size_t oldest = 0;
        for (size_t i = 1; i < st->n; i++)
            if (st->s[i].last_seen_s < st->s[oldest].last_seen_s)
                oldest = i;
        job_drop(st, oldest);
    }
    series *x = &st->s[st->n++];
    memset(x, 0, sizeof *x);
    memcpy(x->job, r->job, sizeof x->job);
    x->rank = r->rank;
    return x;
}

static void job_add(job_state *st, const cfit_job_report *r)
{
    double now_s = cfit__now();
    series *x = job_series(st, r, now_s);
    x->steps++;
    x->step_s += r->step_s;
    x->data_s += r->data_s;
    x->allreduce_s += r->allreduce_s;
    x->optimizer_s += r->optimizer_s;
    x->last_busy_s = r->step_s > r->allreduce_s ? r->step_s - r->allreduce_s : 0;
    for (size_t b = 0; b < NB; b++)
        if (r->step_s <= bounds[b]) {
            x->bucket[b]++;
            break;
        }
    x->last_report = cfit__unix_s();
    x->last_seen_s = now_s;
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

/* Make path free for bind: nothing there, or a stale socket (connect refused) which is removed.
 * A socket that answers belongs to a live exporter: refused. */
static int claim_path(const char *path, const struct sockaddr_un *a, cfit_diag *d)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return 0;
    if (!S_ISSOCK(sb.st_mode))
        return cfit_diag_set(d, CFIT_EIO, NULL, 0, 0, "%s exists and is not a socket", path);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return cfit_diag_set(d, CFIT_EIO, NULL, 0, 0, "cannot make a socket: %s", strerror(errno));
    int rc = connect(fd, (const struct sockaddr *)a, sizeof *a);
    int err = errno;
    close(fd);
    if (rc == 0)
        return cfit_diag_set(d, CFIT_EIO, NULL, 0, 0,
                             "%s is served by another live process (another exporter?): not replacing it; "
                             "stop that one or give another --job-socket", path);
    if (err != ECONNREFUSED)
        return cfit_diag_set(d, CFIT_EIO, NULL, 0, 0, "cannot tell whether %s is in use (%s): not replacing it",
                             path, strerror(err));
    unlink(path);   /* nobody listens: a stale socket from an earlier run */
    return 0;
}

/* Bind st->fd to st->path, owner-only from the moment it exists; remember its inode. */
static int bind_socket(job_state *st, const struct sockaddr_un *a, cfit_diag *d)
{
    st->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    mode_t old = umask(077);
    int bad = st->fd < 0 || bind(st->fd, (const struct sockaddr *)a, sizeof *a) != 0;
    int err = errno;
    umask(old);
    struct stat sb;
    if (!bad && (chmod(st->path, 0600) != 0 || lstat(st->path, &sb) != 0))
        bad = 1, err = errno;
    if (bad) {
        if (st->fd >= 0)
            close(st->fd);
        return cfit_diag_set(d, CFIT_EIO, NULL, 0, 0, "cannot create the job socket %s: %s", st->path, strerror(err));
    }
    st->dev = sb.st_dev;
    st->ino = sb.st_ino;
    int rcvbuf = 4 << 20;
    (void)setsockopt(st->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    return 0;
}

/* Remove the socket file only while it is still the one bound here (not a successor's). */
static void unlink_if_ours(const job_state *st)
{
    struct stat sb;
    if (lstat(st->path, &sb) == 0 && sb.st_dev == st->dev && sb.st_ino == st->ino)
        unlink(st->path);
}

static void job_free(job_state *st)
{
    free(st->s);
    free(st);
}

static int job_init(const cfit_exporter_config *cfg, void **state, cfit_diag *d)
{
    if (!cfg->job_socket)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "the job collector needs --job-socket PATH");
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(cfg->job_socket) >= sizeof a.sun_path)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--job-socket: path longer than %zu bytes",
                             sizeof a.sun_path - 1);
    memcpy(a.sun_path, cfg->job_socket, strlen(cfg->job_socket) + 1);
    int rc = claim_path(cfg->job_socket, &a, d);
    if (rc)
        return rc;
    job_state *st = calloc(1, sizeof *st);
    size_t max = cfg->job_max_series ? cfg->job_max_series : DEFAULT_MAX_SERIES;
    series *s = st ? calloc(max, sizeof *s) : NULL;
    if (!s) {
        free(st);
        return CFIT_ENOMEM;
    }
    st->s = s;
    st->max = max;
    st->stale_s = cfg->job_stale_s > 0 ? cfg->job_stale_s : DEFAULT_STALE_S;
    st->cfg = cfg;
    snprintf(st->path, sizeof st->path, "%s", cfg->job_socket);
    if ((rc = bind_socket(st, &a, d))) {
        job_free(st);
        return rc;
    }
    pthread_mutex_init(&st->lock, NULL);
    if (pthread_create(&st->thread, NULL, job_thread, st) != 0) {
        close(st->fd);
        unlink_if_ours(st);
        pthread_mutex_destroy(&st->lock);
        job_free(st);
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

/* One (job, rank) pair's counters, histogram and last report time. */
static int emit_series(cfit_expo *e, const series *x)
{
    char rank[24];
    snprintf(rank, sizeof rank, "%ld", x->rank);
    const char *l[] = {"training_job", x->job, "rank", rank, NULL};
    int rc = cfit__emit(e, "clusterfit_job_steps_total", CFIT_METRIC_COUNTER, "Training steps reported.", l,
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
        rc = cfit_expo_histogram(e, "clusterfit_job_step_duration_seconds", l, bounds, cum, NB, x->step_s, x->steps);
    if (!rc)
        rc = cfit__emit(e, "clusterfit_job_last_report_timestamp_seconds", CFIT_METRIC_GAUGE,
                        "Unix time of the last report of this job and rank.", l, x->last_report);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of n values (sorted in place). */
static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int cmp_series_job(const void *a, const void *b)
{
    return strcmp((*(const series *const *)a)->job, (*(const series *const *)b)->job);
}

static const char STRAGGLER[] = "clusterfit_job_step_time_ratio_to_median";

/* The ratios of one job's ranks (g[0..n), scratch n doubles). */
static int emit_job_ratios(cfit_expo *e, const series *const *g, size_t n, double *scratch)
{
    for (size_t i = 0; i < n; i++)
        scratch[i] = g[i]->last_busy_s;
    double med = median_of(scratch, n);
    int rc = 0;
    for (size_t i = 0; i < n && !rc && med > 0; i++) {
        char rank[24];
        snprintf(rank, sizeof rank, "%ld", g[i]->rank);
        const char *l[] = {"training_job", g[i]->job, "rank", rank, NULL};
        rc = cfit_expo_sample(e, STRAGGLER, l, g[i]->last_busy_s / med);
    }
    return rc;
}

/* Each rank's last step time outside all-reduce over the median of its job's ranks. */
static int emit_stragglers(const job_state *st, cfit_expo *e)
{
    int rc = cfit_expo_family(e, STRAGGLER, CFIT_METRIC_GAUGE,
                              "A rank's last step time outside all-reduce over the median of its job's ranks "
                              "(above 1: slower than most).");
    if (rc || !st->n)
        return rc;
    const series **by_job = malloc(st->n * sizeof *by_job);
    double *scratch = malloc(st->n * sizeof *scratch);
    if (!by_job || !scratch) {
        free(by_job);
        free(scratch);
        return CFIT_ENOMEM;
    }
    for (size_t i = 0; i < st->n; i++)
        by_job[i] = &st->s[i];
    qsort(by_job, st->n, sizeof *by_job, cmp_series_job);
    for (size_t a = 0, b; a < st->n && !rc; a = b) {
        for (b = a + 1; b < st->n && strcmp(by_job[b]->job, by_job[a]->job) == 0; b++)
            ;
        rc = emit_job_ratios(e, by_job + a, b - a, scratch);
    }
    free(by_job);
    free(scratch);
    return rc;
}

static int job_collect(void *state, cfit_expo *e, cfit_diag *d)
{
    (void)d;
    job_state *st = state;
    pthread_mutex_lock(&st->lock);
    job_expire(st, cfit__now());
    int rc = cfit__emit(e, "clusterfit_job_reports_total", CFIT_METRIC_COUNTER,
                        "Job report lines accepted from the job socket.", NULL, (double)st->good);
    if (!rc)
        rc = cfit__emit(e, "clusterfit_job_bad_lines_total", CFIT_METRIC_COUNTER,
                        "Job report lines dropped as malformed.", NULL, (double)st->bad);
    if (!rc)
        rc = cfit__emit(e, "clusterfit_job_series", CFIT_METRIC_GAUGE,
                        "(job, rank) pairs kept (at most --job-socket.max-series).", NULL, (double)st->n);
    if (!rc)
        rc = cfit__emit(e, "clusterfit_job_series_evicted_total", CFIT_METRIC_COUNTER,
                        "(job, rank) pairs dropped: not heard from for --job-socket.stale-after, or the oldest "
                        "past --job-socket.max-series.", NULL, (double)st->evicted);
    for (size_t i = 0; i < st->n && !rc; i++)
        rc = emit_series(e, &st->s[i]);
    if (!rc)
        rc = emit_stragglers(st, e);
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
    unlink_if_ours(st);
    pthread_mutex_destroy(&st->lock);
    job_free(st);
}

const cfit_collector_ops cfit__collector_job = {
    .name = "job",
    .help = "training step timings pushed to --job-socket (on when --job-socket is given)",
    .default_on = 0,
    .enabled_by = "job-socket",
    .init = job_init,
    .collect = job_collect,
    .fini = job_fini,
};
