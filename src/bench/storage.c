/* storage.c - the storage benchmark: write, sequential read and random read of one test file by
 * N threads through io_uring (queue depth per thread) or pread/pwrite (storage.h).
 *
 * Each pass starts every thread, times from the start of the first to the end of the last (and
 * the fsync, for writes), and counts only complete requests of block_bytes: a short transfer is
 * an error, since the file has exactly size_bytes.  The write goes to NAME.partial, renamed to
 * NAME after its fsync, so a file a later --keep run finds is always complete.
 */
#define _GNU_SOURCE   /* O_DIRECT */
#include "clusterfit/storage.h"
#include "base/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#ifdef CFIT_HAVE_LIBURING
#include <liburing.h>
#endif

#define FILE_STEM "clusterfit-bench-storage"
#define ALIGN 4096                 /* buffer and offset alignment O_DIRECT needs on every common device */
#define RANDOM_PASS_MAX_S 30.0     /* a random pass stops early after this long (slow disks, 4K blocks) */

void cfit_storage_opts_init(cfit_storage_opts *o)
{
    memset(o, 0, sizeof *o);
    o->client = -1;
    o->size_bytes = (uint64_t)8 << 30;
    o->block_bytes = (uint64_t)1 << 20;
    o->threads = 1;
    o->queue_depth = 1;
    o->engine = CFIT_IO_AUTO;
    o->seed = 1;
}

int cfit_storage_have_uring(void)
{
#ifdef CFIT_HAVE_LIBURING
    return 1;
#else
    return 0;
#endif
}

/* splitmix64: a small, well-mixed generator; the offsets only need to be deterministic. */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

typedef struct pass {
    const cfit_storage_opts *o;
    int fd;
    int write, random, uring;
    uint64_t file_blocks;
    double deadline;               /* absolute time a random pass stops at; 0 = none */
    int next_sync;                 /* the next pass before_pass is owed */
} pass;

/* Call before_pass for every pass up to and including `upto` not yet announced. */
static int sync_passes(pass *p, int upto, cfit_diag *d)
{
    int rc = 0;
    while (p->next_sync <= upto) {
        int k = p->next_sync++;
        if (p->o->before_pass && !rc && (rc = p->o->before_pass(p->o->pass_ctx, k)))
            cfit_diag_set(d, rc, NULL, 0, 0, "client %d: lost the other clients before pass %d", p->o->client, k);
    }
    return rc;
}

typedef struct worker {
    const pass *p;
    int index;
    uint64_t first, count;         /* sequential: blocks [first, first + count); random: requests */
    uint64_t rng;
    unsigned char *bufs;           /* queue_depth (or 1) aligned buffers of block_bytes */
    int nbufs;
    uint64_t ops;                  /* complete requests */
    unsigned polls;                /* calls of stopped(): the clock is read every 64th */
    int err;                       /* errno of the first failure, or -1 for a short transfer/stop */
    char msg[160];
    pthread_t tid;
} worker;

static int stopped(worker *w)
{
    const pass *p = w->p;
    if (p->o->stop && *p->o->stop)
        return 1;
    return p->deadline > 0 && (++w->polls & 63) == 0 && cfit__now() > p->deadline;
}

/* Offset of request i of this worker. */
static uint64_t offset_of(worker *w, uint64_t i)
{
    uint64_t b = w->p->random ? next_rand(&w->rng) % w->p->file_blocks : w->first + i;
    return b * w->p->o->block_bytes;
}

static void fail(worker *w, int err, const char *what, uint64_t off)
{
    w->err = err ? err : -1;
    snprintf(w->msg, sizeof w->msg, "%s at offset %llu: %s", what, (unsigned long long)off,
             err ? strerror(err) : "short transfer");
}

static void run_pread(worker *w)
{
    const pass *p = w->p;
    size_t bs = (size_t)p->o->block_bytes;
    for (uint64_t i = 0; i < w->count; i++) {
        if (stopped(w))
            return;
        uint64_t off = offset_of(w, i);
        ssize_t n = p->write ? pwrite(p->fd, w->bufs, bs, (off_t)off) : pread(p->fd, w->bufs, bs, (off_t)off);
        if (n < 0 && errno == EINTR) {
            i--;
            continue;
        }
        if (n != (ssize_t)bs) {
            fail(w, n < 0 ? errno : 0, p->write ? "write" : "read", off);
            return;
        }
        w->ops++;
    }
}

#ifdef CFIT_HAVE_LIBURING
static void run_uring(worker *w)
{
    const pass *p = w->p;
    unsigned bs = (unsigned)p->o->block_bytes;
    struct io_uring ring;
    int rc = io_uring_queue_init((unsigned)w->nbufs, &ring, 0);
    if (rc < 0) {
        fail(w, -rc, "io_uring setup", 0);
        return;
    }
    int *free_slot = malloc(sizeof(int) * (size_t)w->nbufs);
    uint64_t *slot_off = malloc(sizeof(uint64_t) * (size_t)w->nbufs);
    if (!free_slot || !slot_off) {
        fail(w, ENOMEM, "io_uring buffers", 0);
        goto out;
    }
    int nfree = w->nbufs, inflight = 0;
    for (int i = 0; i < w->nbufs; i++)
        free_slot[i] = i;
    uint64_t issued = 0;
    while (issued < w->count || inflight > 0) {
        int stop = stopped(w);
        while (!stop && issued < w->count && nfree > 0) {
            struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
            if (!sqe)
                break;
            int s = free_slot[--nfree];
            uint64_t off = offset_of(w, issued++);
            slot_off[s] = off;
            unsigned char *buf = w->bufs + (size_t)s * bs;
            if (p->write)
                io_uring_prep_write(sqe, p->fd, buf, bs, off);
            else
                io_uring_prep_read(sqe, p->fd, buf, bs, off);
            io_uring_sqe_set_data(sqe, (void *)(uintptr_t)s);
            inflight++;
        }
        if (stop && inflight == 0)
            break;
        rc = io_uring_submit_and_wait(&ring, 1);
        if (rc < 0 && rc != -EINTR) {
            fail(w, -rc, "io_uring submit", 0);
            break;
        }
        struct io_uring_cqe *cqe;
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe) {
            int s = (int)(uintptr_t)io_uring_cqe_get_data(cqe);
            if (cqe->res != (int)bs && !w->err)
                fail(w, cqe->res < 0 ? -cqe->res : 0, p->write ? "write" : "read", slot_off[s]);
            else if (!w->err)
                w->ops++;
            free_slot[nfree++] = s;
            inflight--;
            seen++;
        }
        io_uring_cq_advance(&ring, seen);
        if (w->err)
            issued = w->count;   /* drain what is in flight, issue nothing more */
    }
out:
    free(free_slot);
    free(slot_off);
    io_uring_queue_exit(&ring);
}
#endif

static void *worker_main(void *arg)
{
    worker *w = arg;
#ifdef CFIT_HAVE_LIBURING
    if (w->p->uring) {
        run_uring(w);
        return NULL;
    }
#endif
    run_pread(w);
    return NULL;
}

/* Run one pass with o->threads workers; fills t (and d on failure). */
static int run_pass(pass *p, unsigned char *bufs, size_t per_thread, cfit_storage_test *t, cfit_diag *d)
{
    const cfit_storage_opts *o = p->o;
    int n = o->threads;
    worker *ws = calloc((size_t)n, sizeof *ws);
    if (!ws)
        return cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
    uint64_t total_random = o->random_ops ? o->random_ops : p->file_blocks;
    for (int i = 0; i < n; i++) {
        worker *w = &ws[i];
        w->p = p;
        w->index = i;
        w->bufs = bufs + (size_t)i * per_thread;
        w->nbufs = p->uring ? o->queue_depth : 1;
        w->rng = o->seed + (uint64_t)i;
        if (p->random) {
            w->count = total_random / (uint64_t)n + ((uint64_t)i < total_random % (uint64_t)n);
        } else {   /* contiguous slices, the first ones one block longer */
            uint64_t q = p->file_blocks / (uint64_t)n, r = p->file_blocks % (uint64_t)n;
            w->first = (uint64_t)i * q + ((uint64_t)i < r ? (uint64_t)i : r);
            w->count = q + ((uint64_t)i < r);
        }
    }
    double t0 = cfit__now();
    p->deadline = p->random ? t0 + RANDOM_PASS_MAX_S : 0;
    int started = 0, rc = CFIT_EOK;
    for (; started < n; started++)
        if (pthread_create(&ws[started].tid, NULL, worker_main, &ws[started]) != 0)
            break;
    if (started < n) {   /* the threads already running finish their share */
        rc = cfit_diag_set(d, CFIT_ESYS, NULL, 0, 0, "cannot start thread %d of %d", started + 1, n);
    }
    for (int i = 0; i < started; i++)
        pthread_join(ws[i].tid, NULL);
    if (!rc && p->write && fdatasync(p->fd) != 0)
        rc = cfit_diag_set(d, CFIT_ESYS, NULL, 0, 0, "fsync: %s", strerror(errno));
    double t1 = cfit__now();
    uint64_t ops = 0;
    for (int i = 0; i < started; i++) {
        ops += ws[i].ops;
        if (!rc && ws[i].err)
            rc = cfit_diag_set(d, CFIT_ESYS, NULL, 0, 0, "thread %d: %s", i, ws[i].msg);
    }
    free(ws);
    if (!rc && o->stop && *o->stop)
        rc = cfit_diag_set(d, CFIT_ESYS, NULL, 0, 0, "interrupted");
    if (rc)
        return rc;
    t->measured = 1;
    t->ops = (double)ops;
    t->bytes = (double)ops * (double)o->block_bytes;
    t->seconds = t1 - t0;
    t->bytes_per_s = t->seconds > 0 ? t->bytes / t->seconds : 0;
    t->iops = t->seconds > 0 ? t->ops / t->seconds : 0;
    return CFIT_EOK;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void note(cfit_storage_result *res, const char *fmt, ...)
{
    if (res->nnotes >= (int)(sizeof res->notes / sizeof res->notes[0]))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->notes[res->nnotes++], sizeof res->notes[0], fmt, ap);
    va_end(ap);
}

/* Open with O_DIRECT when res->direct, falling back to buffered (with a note) when refused. */
static int open_file(const char *path, int flags, cfit_storage_result *res, cfit_diag *d)
{
    int fd = -1;
    if (res->direct) {
        fd = open(path, flags | O_DIRECT, 0644);
        if (fd < 0 && errno == EINVAL) {
            res->direct = 0;
            note(res, "the filesystem of %s refused O_DIRECT (EINVAL: tmpfs, FUSE, some network filesystems); "
                      "buffered I/O used", path);
        } else if (fd < 0) {
            return cfit_diag_set(d, CFIT_ESYS, path, 0, 0, "cannot open '%s': %s", path, strerror(errno));
        }
    }
    if (fd < 0)
        fd = open(path, flags, 0644);
    if (fd < 0)
        return cfit_diag_set(d, CFIT_ESYS, path, 0, 0, "cannot open '%s': %s", path, strerror(errno));
    return fd;
}

static int check_opts(const cfit_storage_opts *o, cfit_diag *d)
{
    struct stat st;
    if (!o->dir || stat(o->dir, &st) != 0)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--path '%s': %s", o->dir ? o->dir : "",
                             o->dir ? strerror(errno) : "missing");
    if (!S_ISDIR(st.st_mode))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--path '%s' is not a directory", o->dir);
    if (o->block_bytes < ALIGN || o->block_bytes % ALIGN || o->block_bytes > ((uint64_t)1 << 30))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--block %llu bytes: must be a multiple of 4K "
                             "(O_DIRECT alignment), at most 1G", (unsigned long long)o->block_bytes);
    if (o->threads < 1 || o->threads > 1024 || o->queue_depth < 1 || o->queue_depth > 4096)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "threads must be 1..1024 and queue depth 1..4096");
    if (o->size_bytes % o->block_bytes)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--size %llu bytes is not a multiple of --block "
                             "%llu bytes", (unsigned long long)o->size_bytes, (unsigned long long)o->block_bytes);
    if (o->size_bytes / o->block_bytes < (uint64_t)o->threads)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--size holds %llu blocks, fewer than the %d threads",
                             (unsigned long long)(o->size_bytes / o->block_bytes), o->threads);
    /* every thread's buffers must fit comfortably in memory: at most 1 GiB in all */
    uint64_t depth = o->engine == CFIT_IO_PREAD ? 1 : (uint64_t)o->queue_depth;
    if (o->block_bytes * depth * (uint64_t)o->threads > ((uint64_t)1 << 30))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--block x --queue-depth x --threads is above 1 GiB "
                             "of buffers");
    if (o->engine == CFIT_IO_URING && !cfit_storage_have_uring())
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "this build has no io_uring (liburing was not found "
                             "at build time); use --engine pread or auto");
    return CFIT_EOK;
}

/* Decide the engine: io_uring when asked or possible (probed once here), else pread. */
static int choose_engine(const cfit_storage_opts *o, cfit_storage_result *res, cfit_diag *d)
{
    if (o->engine == CFIT_IO_PREAD || !cfit_storage_have_uring()) {
        res->engine = "pread";
        if (o->engine == CFIT_IO_AUTO)
            note(res, "built without liburing: pread/pwrite used, one request in flight per thread");
        return 0;
    }
#ifdef CFIT_HAVE_LIBURING
    struct io_uring ring;
    int rc = io_uring_queue_init((unsigned)o->queue_depth, &ring, 0);
    if (rc == 0) {
        io_uring_queue_exit(&ring);
        res->engine = "io_uring";
        return 1;
    }
    if (o->engine == CFIT_IO_URING)
        return cfit_diag_set(d, CFIT_ESYS, NULL, 0, 0, "io_uring setup: %s", strerror(-rc));
    res->engine = "pread";
    note(res, "io_uring refused by the kernel (%s): pread/pwrite used, one request in flight per thread",
         strerror(-rc));
#else
    (void)d;
#endif
    return 0;
}

/* Aligned buffers for every thread, filled with non-repeating bytes (no compressible zeros). */
static unsigned char *alloc_buffers(const cfit_storage_opts *o, int uring, size_t *per_thread)
{
    size_t depth = uring ? (size_t)o->queue_depth : 1;
    *per_thread = depth * (size_t)o->block_bytes;
    void *p = NULL;
    if (posix_memalign(&p, ALIGN, *per_thread * (size_t)o->threads) != 0)
        return NULL;
    uint64_t s = o->seed ^ 0x5eedULL;
    uint64_t *q = p;
    for (size_t i = 0; i < *per_thread * (size_t)o->threads / 8; i++)
        q[i] = next_rand(&s);
    return p;
}

/* Existing file of exactly size bytes? */
static int file_has_size(const char *path, uint64_t size)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == size;
}

static int write_file(pass *p, const char *path, const char *partial, unsigned char *bufs, size_t per_thread,
                      cfit_storage_result *res, cfit_diag *d)
{
    int fd = open_file(partial, O_WRONLY | O_CREAT | O_TRUNC, res, d);
    if (fd < 0)
        return fd;
    p->fd = fd;
    p->write = 1;
    p->random = 0;
    int rc = run_pass(p, bufs, per_thread, &res->seq_write, d);
    if (!rc && !res->direct)
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);   /* clean after the fsync: drop them */
    close(fd);
    if (!rc && rename(partial, path) != 0)
        rc = cfit_diag_set(d, CFIT_ESYS, path, 0, 0, "cannot rename '%s': %s", partial, strerror(errno));
    if (rc)
        unlink(partial);
    return rc;
}

static int read_passes(pass *p, const char *path, unsigned char *bufs, size_t per_thread, cfit_storage_result *res,
                       cfit_diag *d)
{
    int fd = open_file(path, O_RDONLY, res, d);
    if (fd < 0)
        return fd;
    p->fd = fd;
    p->write = 0;
    int rc = CFIT_EOK;
    for (int random = 0; random < 2 && !rc; random++) {
        if ((rc = sync_passes(p, 1 + random, d)))
            break;
        if (!res->direct)
            posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        p->random = random;
        rc = run_pass(p, bufs, per_thread, random ? &res->rand_read : &res->seq_read, d);
    }
    close(fd);
    uint64_t want = p->o->random_ops ? p->o->random_ops : p->file_blocks;
    if (!rc && res->rand_read.ops < (double)want)
        note(res, "the random pass stopped after %.0f s: %.0f of %llu requests", RANDOM_PASS_MAX_S,
             res->rand_read.ops, (unsigned long long)want);
    return rc;
}

static int storage_run(const cfit_storage_opts *o, cfit_storage_result *res, cfit_diag *d, int *synced)
{
    memset(res, 0, sizeof *res);
    int rc = check_opts(o, d);
    if (rc)
        return rc;
    char partial[sizeof res->path + 16];
    if (o->client >= 0)
        snprintf(res->path, sizeof res->path, "%s/%s.%d.dat", o->dir, FILE_STEM, o->client);
    else
        snprintf(res->path, sizeof res->path, "%s/%s.dat", o->dir, FILE_STEM);
    snprintf(partial, sizeof partial, "%s.partial", res->path);
    res->direct = o->direct;
    res->reused = o->keep && !o->fresh && file_has_size(res->path, o->size_bytes);
    if (!res->reused) {
        struct statvfs vs;
        struct stat st;
        uint64_t old = stat(res->path, &st) == 0 ? (uint64_t)st.st_size : 0;   /* replaced, so it frees */
        if (statvfs(o->dir, &vs) == 0 && (uint64_t)vs.f_bavail * vs.f_frsize + old < o->size_bytes)
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "'%s' has %.2f GB free; --size needs %.2f GB",
                                 o->dir, ((double)vs.f_bavail * vs.f_frsize + (double)old) / 1e9,
                                 (double)o->size_bytes / 1e9);
    }
    int uring = choose_engine(o, res, d);
    if (uring < 0)
        return uring;
    size_t per_thread;
    unsigned char *bufs = alloc_buffers(o, uring, &per_thread);
    if (!bufs)
        return cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "cannot allocate %d x %llu bytes of aligned buffers",
                             o->threads, (unsigned long long)per_thread);
    pass p = {o, -1, 0, 0, uring, o->size_bytes / o->block_bytes, 0, 0};
    *synced = 1;   /* from here every pass is announced, also on failure */
    rc = sync_passes(&p, 0, d);
    if (!rc && !res->reused)
        rc = write_file(&p, res->path, partial, bufs, per_thread, res, d);
    else
        note(res, "reused %s from an earlier --keep run: the write pass was skipped", res->path);
    if (!rc)
        rc = read_passes(&p, res->path, bufs, per_thread, res, d);
    int rc_sync = sync_passes(&p, 2, d);   /* a failed client still meets the others' barriers */
    rc = rc ? rc : rc_sync;
    free(bufs);
    if (!res->direct)
        note(res, "buffered I/O: reads may come from the page cache (memory, not the disk) even though the "
                  "file's pages were dropped before each pass; use --direct where the filesystem allows");
    /* kept: asked for, and complete (written without error, or found complete) */
    res->kept = o->keep && (!rc || res->reused);
    if (!res->kept)
        unlink(res->path);
    return rc;
}

int cfit_storage_run(const cfit_storage_opts *o, cfit_storage_result *res, cfit_diag *d)
{
    int synced = 0;
    int rc = storage_run(o, res, d, &synced);
    for (int k = 0; !synced && o->before_pass && k < 3; k++)   /* failed before the first pass: */
        if (o->before_pass(o->pass_ctx, k))                     /* the other clients still meet us */
            break;
    return rc;
}
