/* storage.h - `clusterfit bench storage`: sequential write, sequential read and random read of a
 * test file, by N threads, through io_uring or pread, direct (O_DIRECT) or buffered.
 *
 * The run creates DIR/clusterfit-bench-storage.dat of size_bytes with large sequential writes and
 * an fsync (that pass is the sequential-write measurement), then reads it back sequentially (each
 * thread its own contiguous slice) and at random block-aligned offsets (a fixed seed per thread,
 * so two runs read the same blocks).  With keep set and a file of exactly size_bytes already
 * there, it is reused and the write pass is skipped; without keep the file is removed on every
 * exit path, errors and interruption included.
 *
 * Buffered reads may be served from the page cache (they then measure memory, not the disk): the
 * run asks the kernel to drop the file's cached pages (posix_fadvise DONTNEED after fsync) before
 * each read pass and says so in the result, but only O_DIRECT guarantees device reads.  When the
 * filesystem refuses O_DIRECT (tmpfs, some FUSE and network filesystems: EINVAL at open) the run
 * falls back to buffered I/O with a note; when io_uring is missing at build time or refused at run
 * time (old kernel, seccomp) it falls back to pread/pwrite with a note.
 */
#ifndef CLUSTERFIT_STORAGE_H
#define CLUSTERFIT_STORAGE_H

#include <signal.h>
#include <stdint.h>
#include "clusterfit/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cfit_io_engine {
    CFIT_IO_AUTO = 0,   /* io_uring when built with liburing and the kernel allows it, else pread */
    CFIT_IO_URING,      /* io_uring or an error */
    CFIT_IO_PREAD       /* pread/pwrite, one request in flight per thread */
} cfit_io_engine;

typedef struct cfit_storage_opts {
    const char *dir;            /* directory the test file is created in (must exist) */
    uint64_t size_bytes;        /* test file size: a multiple of block_bytes x threads is not needed,
                                   but of block_bytes is */
    uint64_t block_bytes;       /* I/O size, a multiple of 4096 */
    int threads;                /* >= 1 */
    int queue_depth;            /* io_uring requests in flight per thread, >= 1 (pread: 1) */
    int direct;                 /* ask for O_DIRECT */
    cfit_io_engine engine;
    int keep;                   /* keep the file afterwards; reuse one of the right size */
    int fresh;                  /* write the file even when keep finds one (to measure the write) */
    uint64_t random_ops;        /* random reads in all; 0 = size_bytes / block_bytes */
    uint64_t seed;              /* random offsets: thread t uses seed + t */
    volatile sig_atomic_t *stop;/* polled between requests: non-zero ends the run (may be NULL) */
    int client;                 /* >= 0: one of several clients; the file is clusterfit-bench-storage.CLIENT.dat */
    /* called before each pass (0 seq-write, 1 seq-read, 2 rand-read), also for a skipped or failed
     * one, so several clients keep in step (a barrier); non-zero ends the run with that error */
    int (*before_pass)(void *ctx, int pass);
    void *pass_ctx;
} cfit_storage_opts;

typedef struct cfit_storage_test {
    int measured;               /* 0 when skipped (write pass of a reused file) */
    double bytes;               /* bytes moved */
    double ops;                 /* requests of block_bytes */
    double seconds;             /* wall time of the pass, fsync included for the write */
    double bytes_per_s, iops;
} cfit_storage_test;

typedef struct cfit_storage_result {
    char path[4096];            /* the test file */
    const char *engine;         /* "io_uring" or "pread" (what ran) */
    int direct;                 /* O_DIRECT was used */
    int reused;                 /* the file was kept from an earlier run */
    int kept;                   /* the file is still there afterwards */
    char notes[6][256];         /* fallbacks and caveats (at most 5 kinds), "" when unused */
    int nnotes;
    cfit_storage_test seq_write, seq_read, rand_read;
} cfit_storage_result;

CFIT_API void cfit_storage_opts_init(cfit_storage_opts *o);   /* 8 GiB, 1 MiB, 1 thread, depth 1, auto */

/* Whether this build has io_uring support (liburing found by CMake). */
CFIT_API int cfit_storage_have_uring(void);

/* Run the benchmark.  Returns CFIT_EOK with res filled, or CFIT_EINVALID (bad options: block not
 * a multiple of 4096, size not a multiple of the block or smaller than one block per thread,
 * not enough free space, DIR not a directory), CFIT_ESYS (a system call failed: d says which and
 * errno's text; "interrupted" when *stop was set) or CFIT_ENOMEM, with d set.  The test file is
 * removed on failure unless it was reused with keep. */
CFIT_API int cfit_storage_run(const cfit_storage_opts *o, cfit_storage_result *res, cfit_diag *d);

#ifdef __cplusplus
}
#endif
#endif
