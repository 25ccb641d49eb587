/* transport_shm.c - ranks on one host over POSIX shared memory: one SPSC byte ring per
 * ordered pair, futex wake-ups, dead-peer detection and shared windows.
 *
 * Every rank creates one segment /clusterfit-<jobid>-<rank> holding a header (its
 * doorbell futex word) and one ring per local sender; a sender copies into the ring
 * in the receiver's segment.  Rings are byte rings with 64-bit head (written by the
 * sender) and tail (written by the receiver) counters; a copy is published every
 * CHUNK bytes, so a large message streams with both sides copying at once.  A rank
 * that cannot move bytes spins briefly, then sleeps on its own doorbell with
 * FUTEX_WAIT; whoever moves a head or tail it depends on bumps the doorbell and wakes
 * it only when it announced that it sleeps (Dekker pair: waiting flag / doorbell).
 * Every rank unlinks its segment as soon as every local rank has mapped them all, so
 * a SIGKILL after set-up leaves nothing in /dev/shm; a --np launcher names every segment
 * /clusterfit-<launcher pid>-... and removes what a rank killed during set-up left
 * (launch.c).  While it sleeps without progress, a rank checks
 * that the peers it waits on are alive (kill(pid, 0), zombies count as dead); the first
 * dead rank any rank sees is recorded in the local leader's header, so every rank names
 * the same lost rank.
 */
#define _GNU_SOURCE
#include "bench/comm_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SHM_CHUNK ((size_t)256 << 10)      /* bytes copied between two publications */
#define SHM_RING_MAX ((size_t)1 << 20)     /* ring capacity per ordered pair, at most (fits a cache) */
#define SHM_RING_MIN ((size_t)256 << 10)
#define SHM_TOTAL ((size_t)256 << 20)      /* ring bytes of the whole host, about */
#define SHM_HDR 4096                       /* segment header, then the rings */
#define SHM_SPIN 4000                      /* polls before sleeping */
#define SHM_CHECK_S 0.2                    /* liveness check after this long without progress */
#define SHM_MAX_WINDOWS 1024

typedef struct seg_hdr {
    _Atomic uint32_t doorbell;   /* bumped whenever something this rank waits for changes */
    _Atomic uint32_t waiting;    /* 1 while the owner may sleep on doorbell */
    int32_t pid;
    _Atomic int32_t lost_rank;   /* leader's header: first rank seen dead, -1 none */
} seg_hdr;

typedef struct ring_hdr {
    _Atomic uint64_t head;       /* bytes written by the sender */
    char pad1[56];
    _Atomic uint64_t tail;       /* bytes consumed by the receiver */
    char pad2[56];
} ring_hdr;

typedef struct window_map {
    void *base;
    size_t bytes;
    char name[96];
    int own;                     /* name still to unlink */
} window_map;

typedef struct shm_t {
    cfit_comm *c;
    int nlocal, me;              /* local ranks; my local index */
    int *lidx;                   /* [size] local index of a rank, -1 when not over shm */
    int *lrank;                  /* [nlocal] rank of a local index */
    unsigned char **segs;        /* [nlocal] mapped segments */
    size_t seg_bytes, cap, slot;
    char name[96];               /* my segment's name */
    int unlinked;
    cfit_req **sendq, **recvq;   /* [size] FIFO per peer */
    int pending;                 /* queued requests */
    double last_move;
    window_map win[SHM_MAX_WINDOWS];
    int nwin;
} shm_t;

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

static seg_hdr *hdr_of(shm_t *s, int l) { return (seg_hdr *)s->segs[l]; }

/* The ring that carries from local index `from` to local index `to`. */
static ring_hdr *ring_of(shm_t *s, int to, int from)
{
    return (ring_hdr *)(s->segs[to] + SHM_HDR + (size_t)from * s->slot);
}

static unsigned char *ring_data(ring_hdr *r) { return (unsigned char *)r + 4096; }

static void notify(shm_t *s, int l)
{
    seg_hdr *h = hdr_of(s, l);
    atomic_fetch_add(&h->doorbell, 1);
    if (atomic_load(&h->waiting))
        futex(&h->doorbell, FUTEX_WAKE, 1, NULL);
}

/* Move what fits of the first queued send to peer p; returns bytes moved. */
static size_t pump_send(shm_t *s, int p)
{
    size_t moved = 0;
    int to = s->lidx[p];
    ring_hdr *rg = ring_of(s, to, s->me);
    unsigned char *data = ring_data(rg);
    while (s->sendq[p]) {
        cfit_req *r = s->sendq[p];
        uint64_t head = atomic_load_explicit(&rg->head, memory_order_relaxed);
        uint64_t tail = atomic_load_explicit(&rg->tail, memory_order_acquire);
        size_t space = s->cap - (size_t)(head - tail), n = r->len - r->done;
        if (n > space)
            n = space;
        if (n > SHM_CHUNK)
            n = SHM_CHUNK;
        if (n == 0)
            break;
        size_t off = (size_t)(head & (s->cap - 1)), first = s->cap - off < n ? s->cap - off : n;
        memcpy(data + off, r->buf + r->done, first);
        memcpy(data, r->buf + r->done + first, n - first);
        atomic_store_explicit(&rg->head, head + n, memory_order_release);
        notify(s, to);
        r->done += n;
        moved += n;
        if (r->done == r->len) {
            r->complete = 1;
            s->sendq[p] = r->next;
            s->pending--;
        }
    }
    return moved;
}

static size_t pump_recv(shm_t *s, int p)
{
    size_t moved = 0;
    int from = s->lidx[p];
    ring_hdr *rg = ring_of(s, s->me, from);
    unsigned char *data = ring_data(rg);
    while (s->recvq[p]) {
        cfit_req *r = s->recvq[p];
        uint64_t tail = atomic_load_explicit(&rg->tail, memory_order_relaxed);
        uint64_t head = atomic_load_explicit(&rg->head, memory_order_acquire);
        size_t avail = (size_t)(head - tail), n = r->len - r->done;
        if (n > avail)
            n = avail;
        if (n > SHM_CHUNK)
            n = SHM_CHUNK;
        if (n == 0)
            break;
        size_t off = (size_t)(tail & (s->cap - 1)), first = s->cap - off < n ? s->cap - off : n;
        memcpy(r->buf + r->done, data + off, first);
        memcpy(r->buf + r->done + first, data, n - first);
        atomic_store_explicit(&rg->tail, tail + n, memory_order_release);
        notify(s, from);
        r->done += n;
        moved += n;
        if (r->done == r->len) {
            r->complete = 1;
            s->recvq[p] = r->next;
            s->pending--;
        }
    }
    return moved;
}

static size_t pump(shm_t *s)
{
    size_t moved = 0;
    for (int l = 0; l < s->nlocal; l++) {
        int p = s->lrank[l];
        if (l == s->me)
            continue;
        if (s->recvq[p])
            moved += pump_recv(s, p);
        if (s->sendq[p])
            moved += pump_send(s, p);
    }
    return moved;
}

static int shm_post(void *self, cfit_req *req)
{
    shm_t *s = self;
    cfit_req **q = req->is_send ? &s->sendq[req->peer] : &s->recvq[req->peer];
    while (*q)
        q = &(*q)->next;
    req->next = NULL;
    *q = req;
    s->pending++;
    if (s->pending == 1)
        s->last_move = cfit__now();
    return 0;
}

/* Any peer we wait on dead?  Records and names the first dead rank of the host. */
static int check_peers(shm_t *s)
{
    for (int l = 0; l < s->nlocal; l++) {
        int p = s->lrank[l];
        if (l == s->me || (!s->sendq[p] && !s->recvq[p]))
            continue;
        if (cfit__pid_alive(s->c->peers[p].pid))
            continue;
        if (pump(s))
            return 0;   /* it left data behind: take it first */
        int expected = -1;
        _Atomic int32_t *lost = &hdr_of(s, 0)->lost_rank;
        atomic_compare_exchange_strong(lost, &expected, p);
        int named = atomic_load(lost);
        if (named != p)
            return cfit__comm_lost(s->c, named, "rank %d lost: its process died (rank %d, which "
                                   "this rank waited for, exited after it)", named, p);
        return cfit__comm_lost(s->c, p, "rank %d lost: its process (pid %d) died", p, s->c->peers[p].pid);
    }
    return 0;
}

static int shm_progress(void *self, int timeout_ms)
{
    shm_t *s = self;
    if (!s->pending)
        return 0;
    int named = atomic_load_explicit(&hdr_of(s, 0)->lost_rank, memory_order_relaxed);
    if (named >= 0)
        return cfit__comm_lost(s->c, named, "rank %d lost: its process died", named);
    for (int i = 0; i < SHM_SPIN; i++) {
        if (pump(s)) {
            s->last_move = cfit__now();
            return 0;
        }
        if (!s->pending)
            return 0;
    }
    if (timeout_ms <= 0)
        return 0;
    seg_hdr *h = hdr_of(s, s->me);
    atomic_store(&h->waiting, 1);
    uint32_t seq = atomic_load(&h->doorbell);
    size_t moved = pump(s);
    if (!moved) {
        int ms = timeout_ms < 100 ? timeout_ms : 100;
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        futex(&h->doorbell, FUTEX_WAIT, seq, &ts);
        moved = pump(s);
    }
    atomic_store(&h->waiting, 0);
    double now = cfit__now();
    if (moved) {
        s->last_move = now;
        return 0;
    }
    return now - s->last_move > SHM_CHECK_S ? check_peers(s) : 0;
}

static size_t round_pow2(size_t v)
{
    size_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

/* Ring capacity per ordered pair when nlocal ranks share the host. */
static size_t ring_cap_bytes(int nlocal)
{
    size_t cap = SHM_TOTAL / ((size_t)nlocal * (size_t)nlocal);
    cap = cap > SHM_RING_MAX ? SHM_RING_MAX : cap < SHM_RING_MIN ? SHM_RING_MIN : cap;
    return round_pow2(cap);
}

size_t cfit__shm_segment_bytes(int nlocal)
{
    return SHM_HDR + (size_t)nlocal * (4096 + ring_cap_bytes(nlocal));
}

static int map_segment(const char *name, size_t bytes, int create, unsigned char **out)
{
    int fd = shm_open(name, create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
    if (fd < 0)
        return -1;
    /* posix_fallocate reserves the tmpfs pages now, so a full /dev/shm is ENOSPC here rather
     * than SIGBUS on the first touch of an unbacked page (ftruncate alone is sparse). */
    int fe = create ? posix_fallocate(fd, 0, (off_t)bytes) : 0;
    if (fe)
        errno = fe;
    if (fe || (create && ftruncate(fd, (off_t)bytes) != 0)) {
        int e = errno;
        close(fd);
        shm_unlink(name);
        errno = e;
        return -1;
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) {
        if (create)
            shm_unlink(name);
        errno = e;
        return -1;
    }
    *out = p;
    return 0;
}

static void shm_close(void *self)
{
    shm_t *s = self;
    if (!s)
        return;
    for (int w = 0; w < s->nwin; w++) {
        if (s->win[w].own)
            shm_unlink(s->win[w].name);
        if (s->win[w].base)
            munmap(s->win[w].base, s->win[w].bytes);
    }
    if (!s->unlinked && s->name[0])
        shm_unlink(s->name);
    for (int l = 0; s->segs && l < s->nlocal; l++)
        if (s->segs[l])
            munmap(s->segs[l], s->seg_bytes);
    free(s->segs);
    free(s->lidx);
    free(s->lrank);
    free(s->sendq);
    free(s->recvq);
    free(s);
}

int cfit__shm_open(cfit_comm *c, const int *use, void **out)
{
    *out = NULL;
    int nuse = 0;
    for (int p = 0; p < c->size; p++)
        nuse += use[p] != 0;
    shm_t *s = calloc(1, sizeof *s);
    if (!s)
        return cfit__comm_fail(c, CFIT_ENOMEM, "out of memory");
    s->c = c;
    s->lidx = malloc((size_t)c->size * sizeof *s->lidx);
    s->lrank = malloc((size_t)(nuse + 1) * sizeof *s->lrank);
    s->segs = calloc((size_t)(nuse + 1), sizeof *s->segs);
    s->sendq = calloc((size_t)c->size, sizeof *s->sendq);
    s->recvq = calloc((size_t)c->size, sizeof *s->recvq);
    if (!s->lidx || !s->lrank || !s->segs || !s->sendq || !s->recvq) {
        shm_close(s);
        return cfit__comm_fail(c, CFIT_ENOMEM, "out of memory");
    }
    for (int p = 0; p < c->size; p++) {
        s->lidx[p] = -1;
        if (use[p] || p == c->rank) {
            s->lidx[p] = s->nlocal;
            s->lrank[s->nlocal++] = p;
        }
    }
    s->me = s->lidx[c->rank];
    s->cap = ring_cap_bytes(s->nlocal);
    s->slot = 4096 + s->cap;
    s->seg_bytes = cfit__shm_segment_bytes(s->nlocal);
    int rc = 0;
    /* 1: everyone creates its segment (only ranks with shm peers, or a lone rank for windows) */
    int want = nuse > 0 || c->size == 1;
    if (want) {
        snprintf(s->name, sizeof s->name, "/clusterfit-%s-%d", c->jobid, c->rank);
        if (map_segment(s->name, s->seg_bytes, 1, &s->segs[s->me]) != 0) {
            rc = cfit__comm_fail(c, CFIT_ESYS, "cannot create shared memory %s (%zu bytes): %s", s->name,
                                 s->seg_bytes, strerror(errno));
            s->name[0] = '\0';
        } else {
            seg_hdr *h = hdr_of(s, s->me);
            h->pid = (int32_t)getpid();
            atomic_store(&h->lost_rank, -1);
        }
    }
    /* 2: map the others'; 3: unlink mine (every local rank has mapped it) */
    int brc = cfit__ctl_barrier(c);
    rc = rc ? rc : brc;
    for (int l = 0; !rc && want && l < s->nlocal; l++) {
        if (l == s->me)
            continue;
        char name[96];
        snprintf(name, sizeof name, "/clusterfit-%s-%d", c->jobid, s->lrank[l]);
        if (map_segment(name, s->seg_bytes, 0, &s->segs[l]) != 0)
            rc = cfit__comm_fail(c, CFIT_ESYS, "cannot map rank %d's shared memory %s: %s", s->lrank[l], name,
                                 strerror(errno));
    }
    brc = cfit__ctl_barrier(c);
    rc = rc ? rc : brc;
    if (s->name[0]) {
        shm_unlink(s->name);
        s->unlinked = 1;
    }
    if (rc || !want) {
        shm_close(s);
        return rc;
    }
    s->last_move = cfit__now();
    *out = s;
    return 0;
}

/* Collective over every rank (all on shm): each maps one region of `bytes`, everyone maps all. */
static int shm_window(void *self, size_t bytes, void **bases)
{
    shm_t *s = self;
    cfit_comm *c = s->c;
    if (s->nlocal != c->size || s->nwin + c->size > SHM_MAX_WINDOWS)
        return cfit__comm_fail(c, CFIT_EINVALID, "shm window: too many windows (at most %d mappings)",
                               SHM_MAX_WINDOWS);
    if (bytes == 0)
        bytes = 1;
    int first = s->nwin, rc = 0;
    window_map *mine = &s->win[s->nwin++];
    snprintf(mine->name, sizeof mine->name, "/clusterfit-%s-%d-w%d", c->jobid, c->rank, first);
    unsigned char *p = NULL;
    if (map_segment(mine->name, bytes, 1, &p) != 0) {
        rc = cfit__comm_fail(c, CFIT_ESYS, "cannot create shared memory %s (%zu bytes): %s", mine->name,
                             bytes, strerror(errno));
        mine->name[0] = '\0';
    } else {
        mine->own = 1;
        mine->base = p;
        mine->bytes = bytes;
    }
    int brc = cfit_comm_barrier(c);
    rc = rc ? rc : brc;
    for (int r = 0; r < c->size; r++) {
        if (r == c->rank) {
            bases[r] = mine->base;
            continue;
        }
        window_map *w = &s->win[s->nwin++];
        snprintf(w->name, sizeof w->name, "/clusterfit-%s-%d-w%d", c->jobid, r, first);
        unsigned char *q = NULL;
        if (!rc && map_segment(w->name, bytes, 0, &q) != 0)
            rc = cfit__comm_fail(c, CFIT_ESYS, "cannot map rank %d's shared memory %s: %s", r, w->name,
                                 strerror(errno));
        w->base = q;
        w->bytes = bytes;
        bases[r] = q;
    }
    brc = cfit_comm_barrier(c);
    rc = rc ? rc : brc;
    if (mine->own) {
        shm_unlink(mine->name);
        mine->own = 0;
    }
    return rc;
}

const cfit_transport_ops cfit_transport_shm = {
    .name = "shm",
    .post = shm_post,
    .progress = shm_progress,
    .window = shm_window,
    .close = shm_close,
};
