/* memory.c - STREAM copy/scale/add/triad with pthreads, first touch and validation (memory.h).
 *
 * The calling thread is worker 0; the others are started once and meet it at a barrier before
 * and after every kernel, so the time of a kernel is the slowest slice's (worker 0 reads the clock
 * after the first barrier and after the second).
 */
#include "clusterfit/memory.h"
#include "bench/comm_internal.h"   /* cfit__mem_available_bytes */
#include "base/clock.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SCALAR 3.0
#define MAX_NTIMES 100          /* a grows 15x per iteration: 15^100 is still far from overflow */
#define DEFAULT_ARRAY ((uint64_t)128 << 20)

static const char *const kernel_names[CFIT_STREAM_KERNELS] = {"Copy", "Scale", "Add", "Triad"};
static const int kernel_words[CFIT_STREAM_KERNELS] = {2, 2, 3, 3};   /* 8-byte words per element */

/* ---- last-level cache from sysfs ---- */

static int read_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* "32768K" / "1M" / "512" -> bytes; 0 when unreadable. */
static uint64_t parse_cache_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return 0;
    switch (*end) {
    case 'K': return (uint64_t)v << 10;
    case 'M': return (uint64_t)v << 20;
    case 'G': return (uint64_t)v << 30;
    default: return *end ? 0 : (uint64_t)v;
    }
}

uint64_t cfit_memory_llc_bytes(const char *sysfs_root)
{
    enum { MAX_KEYS = 256 };
    static char keys[MAX_KEYS][128];   /* shared_cpu_list of each instance seen at the top level */
    int nkeys = 0, top = 0, missing = 0;
    uint64_t total = 0;
    char path[512], buf[128];
    for (int cpu = 0; cpu < 8192 && missing < 64; cpu++) {
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cache", sysfs_root, cpu);
        if (access(path, F_OK) != 0) {
            missing++;
            continue;
        }
        missing = 0;
        for (int idx = 0; idx < 16; idx++) {
            snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cache/index%d/level", sysfs_root, cpu, idx);
            if (read_line(path, buf, sizeof buf) != 0)
                break;
            int level = atoi(buf);
            snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cache/index%d/type", sysfs_root, cpu, idx);
            if (read_line(path, buf, sizeof buf) == 0 && strcmp(buf, "Instruction") == 0)
                continue;
            if (level < top)
                continue;
            snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cache/index%d/size", sysfs_root, cpu, idx);
            if (read_line(path, buf, sizeof buf) != 0)
                continue;
            uint64_t size = parse_cache_size(buf);
            char key[128];
            snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", sysfs_root,
                     cpu, idx);
            if (read_line(path, key, sizeof key) != 0)
                snprintf(key, sizeof key, "cpu%d", cpu);
            if (level > top) {   /* a higher level: start over */
                top = level;
                nkeys = 0;
                total = 0;
            }
            int seen = 0;
            for (int k = 0; k < nkeys && !seen; k++)
                seen = strcmp(keys[k], key) == 0;
            if (!seen && nkeys < MAX_KEYS) {
                snprintf(keys[nkeys++], sizeof keys[0], "%s", key);
                total += size;
            }
        }
    }
    return total;
}

/* ---- validation ---- */

uint64_t cfit_memory_validate(const double *a, const double *b, const double *c, size_t n, int ntimes,
                              double *avg_err)
{
    double aj = 1.0, bj = 2.0, cj = 0.0;
    aj = 2.0 * aj;   /* STREAM doubles a before the timed loop */
    for (int k = 0; k < ntimes; k++) {
        cj = aj;
        bj = SCALAR * cj;
        cj = aj + bj;
        aj = bj + SCALAR * cj;
    }
    const double expect[3] = {aj, bj, cj};
    const double *arr[3] = {a, b, c};
    uint64_t wrong = 0;
    for (int v = 0; v < 3; v++) {
        double sum = 0.0;
        for (size_t j = 0; j < n; j++) {
            double e = fabs(arr[v][j] - expect[v]) / fabs(expect[v]);
            if (!(e <= 1e-13))   /* NaN counts as wrong */
                wrong++;
            sum += isfinite(e) ? e : 1.0;
        }
        if (avg_err)
            avg_err[v] = n ? sum / (double)n : 0.0;
    }
    return wrong;
}

/* ---- the run ---- */

typedef struct stream {
    double *a, *b, *c;
    size_t n;
    int nth, ntimes;
    pthread_barrier_t bar;
    double *times;               /* [kernel * ntimes + k] */
} stream;

typedef struct member {
    stream *s;
    int id;
    pthread_t tid;
} member;

static void kernel(double *restrict a, double *restrict b, double *restrict c, size_t lo, size_t hi, int which)
{
    switch (which) {
    case CFIT_STREAM_COPY:
        for (size_t j = lo; j < hi; j++)
            c[j] = a[j];
        break;
    case CFIT_STREAM_SCALE:
        for (size_t j = lo; j < hi; j++)
            b[j] = SCALAR * c[j];
        break;
    case CFIT_STREAM_ADD:
        for (size_t j = lo; j < hi; j++)
            c[j] = a[j] + b[j];
        break;
    default:
        for (size_t j = lo; j < hi; j++)
            a[j] = b[j] + SCALAR * c[j];
        break;
    }
}

static void *member_main(void *arg)
{
    member *m = arg;
    stream *s = m->s;
    size_t q = s->n / (size_t)s->nth, r = s->n % (size_t)s->nth, id = (size_t)m->id;
    size_t lo = id * q + (id < r ? id : r), hi = lo + q + (id < r);
    for (size_t j = lo; j < hi; j++) {   /* first touch by the owner */
        s->a[j] = 1.0;
        s->b[j] = 2.0;
        s->c[j] = 0.0;
    }
    for (size_t j = lo; j < hi; j++)
        s->a[j] = 2.0 * s->a[j];
    for (int k = 0; k < s->ntimes; k++)
        for (int w = 0; w < CFIT_STREAM_KERNELS; w++) {
            pthread_barrier_wait(&s->bar);
            double t0 = m->id == 0 ? cfit__now() : 0.0;
            kernel(s->a, s->b, s->c, lo, hi, w);
            pthread_barrier_wait(&s->bar);
            if (m->id == 0)
                s->times[w * s->ntimes + k] = cfit__now() - t0;
        }
    return NULL;
}

static void summarise(const stream *s, cfit_memory_result *res)
{
    for (int w = 0; w < CFIT_STREAM_KERNELS; w++) {
        cfit_memory_kernel *k = &res->k[w];
        k->name = kernel_names[w];
        k->bytes = (double)kernel_words[w] * sizeof(double) * (double)s->n;
        double sum = 0.0, mn = INFINITY, mx = 0.0;
        for (int i = 1; i < s->ntimes; i++) {   /* the first iteration is a warm-up */
            double t = s->times[w * s->ntimes + i];
            sum += t;
            mn = t < mn ? t : mn;
            mx = t > mx ? t : mx;
        }
        k->min_s = mn;
        k->max_s = mx;
        k->avg_s = sum / (s->ntimes - 1);
        k->best_bytes_per_s = mn > 0 ? k->bytes / mn : 0.0;
    }
}

int cfit_memory_run(const cfit_memory_opts *o, cfit_memory_result *res, cfit_diag *d)
{
    memset(res, 0, sizeof *res);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int nth = o->threads > 0 ? o->threads : (int)(cpus > 0 ? (cpus > 1024 ? 1024 : cpus) : 1);
    if (nth > 1024 || o->ntimes < 2 || o->ntimes > MAX_NTIMES)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "threads must be 1..1024 and ntimes 2..%d", MAX_NTIMES);
    res->llc_bytes = cfit_memory_llc_bytes("/sys");
    uint64_t bytes = o->array_bytes ? o->array_bytes : res->llc_bytes ? 4 * res->llc_bytes : DEFAULT_ARRAY;
    if (bytes > ((uint64_t)1 << 40))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "array size %llu bytes is above 1 TiB",
                             (unsigned long long)bytes);
    size_t n = (size_t)(bytes / sizeof(double));
    double need = 3.0 * (double)n * sizeof(double), avail = (double)cfit__mem_available_bytes();
    if (avail > 0 && need > avail)   /* refused before touching a page: the OOM killer would end it */
        return cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0,
                             "3 arrays of %.1f GB need %.1f GB, but the host has %.1f GB available (MemAvailable); "
                             "nothing was run (use a smaller --size)",
                             need / 3e9, need / 1e9, avail / 1e9);
    if (n < (size_t)nth)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "arrays of %zu elements are fewer than the %d threads",
                             n, nth);
    stream s;
    memset(&s, 0, sizeof s);
    s.n = n;
    s.nth = nth;
    s.ntimes = o->ntimes;
    void *p[3] = {NULL, NULL, NULL};
    int rc = CFIT_EOK;
    for (int i = 0; i < 3 && !rc; i++)
        if (posix_memalign(&p[i], 4096, n * sizeof(double)) != 0)
            rc = cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "cannot allocate 3 arrays of %.3g GB", n * 8.0 / 1e9);
    s.times = calloc((size_t)CFIT_STREAM_KERNELS * (size_t)o->ntimes, sizeof(double));
    member *ms = calloc((size_t)nth, sizeof *ms);
    if (!rc && (!s.times || !ms))
        rc = cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
    if (!rc && pthread_barrier_init(&s.bar, NULL, (unsigned)nth) != 0)
        rc = cfit_diag_set(d, CFIT_ESYS, NULL, 0, 0, "pthread_barrier_init: %s", strerror(errno));
    if (!rc) {
        s.a = p[0];
        s.b = p[1];
        s.c = p[2];
        int started = 1;
        for (int i = 0; i < nth; i++)
            ms[i] = (member){&s, i, 0};
        for (; started < nth; started++)
            if (pthread_create(&ms[started].tid, NULL, member_main, &ms[started]) != 0)
                break;
        if (started < nth) {
            /* the barrier counts nth members: without all of them nobody may pass it; the ones
             * started are blocked in the first barrier forever, so fail before joining them */
            return cfit_diag_set(d, CFIT_ESYS, NULL, 0, 0, "cannot start thread %d of %d", started + 1, nth);
        }
        member_main(&ms[0]);
        for (int i = 1; i < nth; i++)
            pthread_join(ms[i].tid, NULL);
        pthread_barrier_destroy(&s.bar);
        summarise(&s, res);
        res->elements = n;
        res->array_bytes = (uint64_t)n * sizeof(double);
        res->threads = nth;
        res->ntimes = o->ntimes;
        res->wrong = cfit_memory_validate(s.a, s.b, s.c, n, o->ntimes, res->avg_err);
    }
    free(ms);
    free(s.times);
    for (int i = 0; i < 3; i++)
        free(p[i]);
    return rc;
}
