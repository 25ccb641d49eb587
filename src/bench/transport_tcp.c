/* transport_tcp.c - ranks over TCP: several connections per peer, large messages
 * striped across them, non-blocking sockets driven by one edge-triggered epoll set.
 *
 * Each message is cut the same way on both sides: into one contiguous part per
 * connection but no part below TCP_PART_MIN (so a message under 2 MiB goes whole), the
 * first part on connection (message number % connections), which spreads a stream of
 * smaller messages over all connections too.  Every connection keeps a FIFO of parts to
 * send and one of parts to receive, so the byte order on each connection is the same on
 * both ends without any header.  A
 * progress call first moves bytes on every connection with queued parts until the
 * kernel says EAGAIN, then (when nothing moved) sleeps in epoll_wait.  A connection
 * closed or reset by the peer fails the comm with CFIT_EPEER naming the rank.
 *
 * Set-up: the higher rank of every pair connects (CLUSTERFIT_TCP_CONNS connections,
 * default 4) to the lower rank's data listener and says who it is; the lower accepts.
 *
 * I/O threads (CLUSTERFIT_TCP_THREADS, default: as many as the cores left over per local
 * rank, at most one per connection): loopback and NIC TCP both cost a kernel copy per
 * byte on each end, so one thread that sends and receives and reduces is CPU-bound at
 * well under a stream's rate (nccl's socket transport has helper threads for the same
 * reason).  With threads, connection k of every peer belongs to thread k % threads, which
 * alone makes that connection's system calls; the caller's thread only queues parts and
 * collects completions.  One mutex guards the queues: the owner drops it around each
 * send()/recv() (only the owner pops a connection's parts, so the head part stays put),
 * and instead of touching the caller's requests it appends (request, bytes) credits that
 * the caller's progress() applies, so cfit_req stays single-threaded.  Idle threads spin
 * briefly (small-message latency) and then sleep in epoll_wait on their sockets and an
 * eventfd that a post rings.
 */
#define _GNU_SOURCE
#include "bench/comm_internal.h"
#include "base/grow.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define TCP_CONNS_DEFAULT 4
#define TCP_CONNS_MAX 64
#define TCP_PART_MIN ((size_t)1 << 20)   /* a striped message's parts are at least this */
#define TCP_ALIGN ((size_t)64 << 10)
#define TCP_HELLO_MAGIC 0x43464954u
#define TCP_SPIN 50                      /* non-blocking rounds before epoll_wait */
#define TCP_THREADS_MAX 64
#define TCP_THREAD_SPIN_S 100e-6         /* idle time spun (a sched_yield a round) before sleeping */
#define TCP_THREAD_NAP_MS 200            /* an idle thread's epoll_wait bound (lost-wake guard) */

typedef struct part {
    cfit_req *req;
    unsigned char *base;   /* req->buf + the part's offset */
    size_t len, done;
} part;

typedef struct partq {
    part *v;
    size_t head, n, cap;   /* circular */
} partq;

typedef struct conn {
    int fd, peer, idx;
    partq sq, rq;
} conn;

typedef struct tcp_t tcp_t;

/* Bytes an I/O thread moved for a request, applied by the caller's progress(). */
typedef struct credit {
    cfit_req *req;
    size_t n;
} credit;

typedef struct iothr {
    tcp_t *t;
    int idx, ep, wake;     /* its epoll set (its connections + wake), the eventfd posts ring */
    int sleeping;          /* in epoll_wait: a post must ring `wake` */
    uint64_t gen;          /* parts posted to its connections so far */
    pthread_t th;
    int started;
} iothr;

struct tcp_t {
    cfit_comm *c;
    int nconn, ep;         /* ep: the caller's epoll set (no threads) */
    conn *conns;           /* [size * nconn]; fd -1 for peers not over tcp */
    size_t queued;         /* parts queued on every connection */
    uint64_t *sseq, *rseq; /* [size] messages posted to / from each peer (picks connections) */
    /* I/O threads (nthr 0: none, the caller moves the bytes); the rest is guarded by mu */
    int nthr;
    iothr *thr;
    pthread_mutex_t mu;
    pthread_cond_t cv;     /* signalled when a part finishes or a thread fails */
    credit *cr;
    size_t ncr, capcr;
    int stop;
    int tfail;             /* CFIT_EPEER once an I/O thread failed (lost peer, or out of memory: see why) */
    int tfail_peer, tfail_idx;
    char tfail_why[128];
};

/* With I/O threads the mutex is held except around system calls and sleeps. */
static void io_lock(tcp_t *t)
{
    if (t->nthr)
        pthread_mutex_lock(&t->mu);
}

static void io_unlock(tcp_t *t)
{
    if (t->nthr)
        pthread_mutex_unlock(&t->mu);
}

static int q_push(partq *q, part p)
{
    if (q->n == q->cap) {
        size_t cap = cfit__grow_cap(q->cap, q->n + 1, sizeof(part));   /* circular: copied, not realloc'd */
        part *v = cap ? malloc(cap * sizeof *v) : NULL;
        if (!v)
            return CFIT_ENOMEM;
        for (size_t i = 0; i < q->n; i++)
            v[i] = q->v[(q->head + i) % q->cap];
        free(q->v);
        q->v = v;
        q->cap = cap;
        q->head = 0;
    }
    q->v[(q->head + q->n) % q->cap] = p;
    q->n++;
    return 0;
}

static void q_pop(partq *q)
{
    q->head = (q->head + 1) % q->cap;
    q->n--;
}

/* Parts a message is cut into: one per connection, each at least TCP_PART_MIN. */
static int parts_for(const tcp_t *t, size_t len)
{
    size_t k = len / TCP_PART_MIN;
    return k < 1 ? 1 : k > (size_t)t->nconn ? t->nconn : (int)k;
}

/* Both ends cut a message alike and start on connection (message number % nconn): the
 * sender counts its sends to the peer, the receiver its receives from it. */
static int tcp_post(void *self, cfit_req *req)
{
    tcp_t *t = self;
    io_lock(t);
    uint64_t ring = 0;   /* threads to wake */
    int rc = 0;
    int k = parts_for(t, req->len);
    uint64_t *seq = req->is_send ? &t->sseq[req->peer] : &t->rseq[req->peer];
    int first = (int)(*seq % (uint64_t)t->nconn);
    (*seq)++;
    size_t per = (req->len + (size_t)k - 1) / (size_t)k;
    per = (per + TCP_ALIGN - 1) / TCP_ALIGN * TCP_ALIGN;
    for (int i = 0; i < k; i++) {
        size_t off = (size_t)i * per;
        if (off >= req->len)
            break;
        part p = {req, req->buf + off, req->len - off < per ? req->len - off : per, 0};
        conn *cn = &t->conns[req->peer * t->nconn + (first + i) % t->nconn];
        if (q_push(req->is_send ? &cn->sq : &cn->rq, p)) {
            rc = CFIT_ENOMEM;
            break;
        }
        t->queued++;
        if (t->nthr) {
            iothr *w = &t->thr[cn->idx % t->nthr];
            w->gen++;
            if (w->sleeping) {
                w->sleeping = 0;
                ring |= (uint64_t)1 << w->idx;
            }
        }
    }
    io_unlock(t);
    for (int j = 0; ring; j++, ring >>= 1)
        if (ring & 1)
            (void)!write(t->thr[j].wake, &(uint64_t){1}, sizeof(uint64_t));
    return rc;
}

/* k more bytes of q's head part moved.  Without threads the request is updated here;
 * an I/O thread leaves a credit (merged with the last one for the same request). */
static int part_done(tcp_t *t, partq *q, size_t k)
{
    part *p = &q->v[q->head];
    p->done += k;
    if (!t->nthr) {
        p->req->done += k;
        if (p->req->done == p->req->len)
            p->req->complete = 1;
    } else if (t->ncr && t->cr[t->ncr - 1].req == p->req) {
        t->cr[t->ncr - 1].n += k;
    } else {
        if (cfit__grow(&t->cr, &t->capcr, t->ncr + 1, sizeof *t->cr))
            return CFIT_ENOMEM;
        t->cr[t->ncr++] = (credit){p->req, k};
    }
    if (p->done == p->len) {
        q_pop(q);
        t->queued--;
        if (t->nthr)
            pthread_cond_signal(&t->cv);
    }
    return 0;
}

/* A connection failed.  The caller's thread tells the comm; an I/O thread records it
 * (first failure wins) for the caller's next progress(). */
static int lost(tcp_t *t, const conn *cn, const char *why)
{
    if (!t->nthr)
        return cfit__comm_lost(t->c, cn->peer, "rank %d lost: %s (tcp connection %d)", cn->peer, why, cn->idx);
    if (!t->tfail) {
        t->tfail = CFIT_EPEER;
        t->tfail_peer = cn->peer;
        t->tfail_idx = cn->idx;
        snprintf(t->tfail_why, sizeof t->tfail_why, "%s", why);
        pthread_cond_broadcast(&t->cv);
    }
    return CFIT_EPEER;
}

/* Move bytes on one connection, sends then receives, until EAGAIN or nothing is queued.
 * With threads the caller holds the mutex, which is dropped around each system call. */
static int conn_io(tcp_t *t, conn *cn, size_t *moved)
{
    for (int rx = 0; rx < 2; rx++) {
        partq *q = rx ? &cn->rq : &cn->sq;
        while (q->n) {
            part *p = &q->v[q->head];
            unsigned char *at = p->base + p->done;
            size_t want = p->len - p->done;
            io_unlock(t);
            ssize_t k = rx ? recv(cn->fd, at, want, MSG_DONTWAIT)
                           : send(cn->fd, at, want, MSG_NOSIGNAL | MSG_DONTWAIT);
            int e = errno;
            io_lock(t);
            if (k > 0) {
                *moved += (size_t)k;
                if (part_done(t, q, (size_t)k))
                    return lost(t, cn, "out of memory");
            } else if (k == 0 && rx) {
                return lost(t, cn, "connection closed");
            } else if (e == EAGAIN || e == EWOULDBLOCK) {
                break;
            } else if (e != EINTR) {
                return lost(t, cn, e == EPIPE || e == ECONNRESET ? (rx ? "connection reset" : "connection closed")
                                                                  : strerror(e));
            }
        }
    }
    return 0;
}

/* Try every connection with queued parts until EAGAIN; bytes moved in *moved. */
static int try_all(tcp_t *t, size_t *moved)
{
    int total = t->c->size * t->nconn;
    for (int i = 0; i < total; i++) {
        conn *cn = &t->conns[i];
        if (cn->fd >= 0 && (cn->sq.n || cn->rq.n)) {
            int rc = conn_io(t, cn, moved);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* Apply the I/O threads' credits to the requests (mutex held); bytes applied. */
static size_t apply_credits(tcp_t *t)
{
    size_t moved = 0;
    for (size_t i = 0; i < t->ncr; i++) {
        cfit_req *r = t->cr[i].req;
        r->done += t->cr[i].n;
        moved += t->cr[i].n;
        if (r->done == r->len)
            r->complete = 1;
    }
    t->ncr = 0;
    return moved;
}

/* progress() with I/O threads: collect what they moved, else wait for a part to finish. */
static int threaded_progress(tcp_t *t, int timeout_ms)
{
    pthread_mutex_lock(&t->mu);
    size_t moved = apply_credits(t);
    /* spin a little first: the reply to a small message is microseconds away.  Bounded in
     * time, not rounds: on a loaded CPU each sched_yield may give a whole time slice away */
    double until = cfit__now() + TCP_THREAD_SPIN_S;
    while (!moved && !t->tfail && t->queued && timeout_ms > 0 && cfit__now() < until) {
        pthread_mutex_unlock(&t->mu);
        sched_yield();
        pthread_mutex_lock(&t->mu);
        moved = apply_credits(t);
    }
    if (!moved && !t->tfail && t->queued && timeout_ms > 0) {
        struct timespec ts;
        cfit__monotonic_after_ms(&ts, timeout_ms);
        pthread_cond_timedwait(&t->cv, &t->mu, &ts);
        apply_credits(t);
    }
    int fail = t->tfail, peer = t->tfail_peer, idx = t->tfail_idx;
    char why[sizeof t->tfail_why];
    memcpy(why, t->tfail_why, sizeof why);
    pthread_mutex_unlock(&t->mu);
    if (fail == CFIT_EPEER)
        return cfit__comm_lost(t->c, peer, "rank %d lost: %s (tcp connection %d)", peer, why, idx);
    return fail;
}

/* An I/O thread: move bytes on its connections while any are queued; when there is
 * nothing it can do, spin a while, then sleep until a socket or a post wakes it. */
static void *io_main(void *arg)
{
    iothr *w = arg;
    tcp_t *t = w->t;
    int total = t->c->size * t->nconn;
    double idle_since = -1;
    pthread_mutex_lock(&t->mu);
    while (!t->stop && !t->tfail) {
        uint64_t gen = w->gen;
        size_t moved = 0;
        int rc = 0;
        for (int i = 0; i < total && !rc; i++) {
            conn *cn = &t->conns[i];
            if (cn->fd >= 0 && cn->idx % t->nthr == w->idx && (cn->sq.n || cn->rq.n))
                rc = conn_io(t, cn, &moved);
        }
        if (rc)
            break;
        if (moved || gen != w->gen) {
            idle_since = -1;
            continue;
        }
        double now = cfit__now();
        if (idle_since < 0)
            idle_since = now;
        if (now - idle_since < TCP_THREAD_SPIN_S) {
            pthread_mutex_unlock(&t->mu);
            sched_yield();
            pthread_mutex_lock(&t->mu);
            continue;
        }
        idle_since = -1;
        w->sleeping = 1;
        pthread_mutex_unlock(&t->mu);
        struct epoll_event ev[16];
        (void)epoll_wait(w->ep, ev, 16, TCP_THREAD_NAP_MS);
        uint64_t v;
        (void)!read(w->wake, &v, sizeof v);
        pthread_mutex_lock(&t->mu);
        w->sleeping = 0;
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

static int tcp_progress(void *self, int timeout_ms)
{
    tcp_t *t = self;
    if (t->nthr)
        return threaded_progress(t, timeout_ms);
    if (!t->queued)
        return 0;
    size_t moved = 0;
    /* a few non-blocking rounds first: a reply that is microseconds away costs no sleep */
    for (int spin = 0; spin < TCP_SPIN && !moved && t->queued; spin++) {
        int rc = try_all(t, &moved);
        if (rc)
            return rc;
    }
    if (moved || !t->queued || timeout_ms <= 0)
        return 0;
    struct epoll_event ev[64];
    int n = epoll_wait(t->ep, ev, 64, timeout_ms);
    for (int i = 0; i < n; i++) {
        conn *cn = ev[i].data.ptr;
        if (cn->sq.n || cn->rq.n) {
            int rc = conn_io(t, cn, &moved);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static void tcp_close(void *self)
{
    tcp_t *t = self;
    if (!t)
        return;
    if (t->thr) {
        pthread_mutex_lock(&t->mu);
        t->stop = 1;
        pthread_mutex_unlock(&t->mu);
        for (int j = 0; j < t->nthr; j++)
            if (t->thr[j].started) {
                (void)!write(t->thr[j].wake, &(uint64_t){1}, sizeof(uint64_t));
                pthread_join(t->thr[j].th, NULL);
            }
        for (int j = 0; j < t->nthr; j++) {
            if (t->thr[j].ep >= 0)
                close(t->thr[j].ep);
            if (t->thr[j].wake >= 0)
                close(t->thr[j].wake);
        }
        pthread_mutex_destroy(&t->mu);
        pthread_cond_destroy(&t->cv);
        free(t->thr);
        free(t->cr);
    }
    for (int i = 0; t->conns && i < t->c->size * t->nconn; i++) {
        if (t->conns[i].fd >= 0)
            close(t->conns[i].fd);
        free(t->conns[i].sq.v);
        free(t->conns[i].rq.v);
    }
    if (t->ep >= 0)
        close(t->ep);
    free(t->conns);
    free(t->sseq);
    free(t->rseq);
    free(t);
}

static uint32_t job_hash(const char *jobid)
{
    uint32_t h = 2166136261u;
    for (const char *p = jobid; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return h;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8),
    p[3] = (unsigned char)v;
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Environment variable `name` as a whole number in [min, max]: 0 with *out (unset: dflt),
 * or an error naming the variable. */
static int env_count(const char *name, long min, long max, long dflt, long *out, cfit_diag *d)
{
    const char *e = getenv(name);
    *out = dflt;
    if (!e)
        return 0;
    int rc = cfit__parse_envint(e, min, max, out, d);
    return rc ? cfit_diag_set(d, rc, NULL, 0, 0, "%s: %s", name, d->msg) : 0;
}

int cfit__tcp_env_check(cfit_diag *d)
{
    long v;
    int bytes;
    int rc = env_count("CLUSTERFIT_TCP_CONNS", 1, TCP_CONNS_MAX, 0, &v, d);
    if (!rc)
        rc = env_count("CLUSTERFIT_TCP_THREADS", 0, TCP_THREADS_MAX, 0, &v, d);
    return rc ? rc : cfit__tcp_buf_setting(&bytes, d);
}

/* CLUSTERFIT_TCP_CONNS (1..64, the same on every rank), else 4 (cfit__tcp_env_check() has
 * refused a bad value before the rank started). */
static int conns_setting(void)
{
    long v;
    cfit_diag d;
    return env_count("CLUSTERFIT_TCP_CONNS", 1, TCP_CONNS_MAX, TCP_CONNS_DEFAULT, &v, &d) ? TCP_CONNS_DEFAULT : (int)v;
}

int cfit_tcp_default_threads(int local_ranks, int nconn)
{
    cpu_set_t set;
    int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    int spare = cores / (local_ranks > 0 ? local_ranks : 1) - 1;
    /* two threads as soon as there is a CPU to spare: one thread would still make a rank's
     * sends and receives one after the other */
    int n = spare < 1 ? 0 : spare < 2 ? 2 : spare;
    return n > nconn ? nconn : n;
}

/* I/O threads: CLUSTERFIT_TCP_THREADS (0..64, at most one per connection), else the
 * default for the ranks on this host. */
static int threads_setting(const cfit_comm *c, int nconn)
{
    long v;
    cfit_diag d;
    if (!env_count("CLUSTERFIT_TCP_THREADS", 0, TCP_THREADS_MAX, -1, &v, &d) && v >= 0)   /* -1: unset */
        return (int)v > nconn ? nconn : (int)v;
    int local = 0;
    for (int p = 0; p < c->size; p++)
        local += strcmp(c->peers[p].hostkey, c->peers[c->rank].hostkey) == 0;
    return cfit_tcp_default_threads(local, nconn);
}

/* Start the I/O threads: each its epoll set over its connections and a wake eventfd. */
static int start_threads(tcp_t *t)
{
    cfit_comm *c = t->c;
    t->thr = calloc((size_t)t->nthr, sizeof *t->thr);
    if (!t->thr)
        return cfit__comm_fail(c, CFIT_ENOMEM, "out of memory");
    for (int j = 0; j < t->nthr; j++)
        t->thr[j].ep = t->thr[j].wake = -1;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, &ca);
    pthread_condattr_destroy(&ca);
    for (int j = 0; j < t->nthr; j++) {
        iothr *w = &t->thr[j];
        *w = (iothr){.t = t, .idx = j, .ep = epoll_create1(EPOLL_CLOEXEC),
                     .wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)};
        if (w->ep < 0 || w->wake < 0)
            return cfit__comm_fail(c, CFIT_ESYS, "epoll/eventfd: %s", strerror(errno));
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
        if (epoll_ctl(w->ep, EPOLL_CTL_ADD, w->wake, &ev) != 0)
            return cfit__comm_fail(c, CFIT_ESYS, "epoll_ctl: %s", strerror(errno));
    }
    for (int i = 0; i < c->size * t->nconn; i++) {
        conn *cn = &t->conns[i];
        if (cn->fd < 0)
            continue;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = cn};
        if (epoll_ctl(t->thr[cn->idx % t->nthr].ep, EPOLL_CTL_ADD, cn->fd, &ev) != 0)
            return cfit__comm_fail(c, CFIT_ESYS, "epoll_ctl: %s", strerror(errno));
    }
    for (int j = 0; j < t->nthr; j++) {
        int e = pthread_create(&t->thr[j].th, NULL, io_main, &t->thr[j]);
        if (e)
            return cfit__comm_fail(c, CFIT_ESYS, "pthread_create: %s", strerror(e));
        t->thr[j].started = 1;
    }
    return 0;
}

/* Connect to every lower tcp peer, then accept the higher ones. */
static int mesh(tcp_t *t, const int *use)
{
    cfit_comm *c = t->c;
    double deadline = cfit__now() + c->timeout_s;
    uint32_t jh = job_hash(c->jobid);
    int expect = 0;
    for (int p = 0; p < c->size; p++) {
        if (!use[p])
            continue;
        if (p > c->rank) {
            expect += t->nconn;
            continue;
        }
        for (int k = 0; k < t->nconn; k++) {
            char why[128];
            int fd = cfit__sock_connect(c->peers[p].addr, c->peers[p].port, deadline, why, sizeof why);
            if (fd < 0)
                return cfit__comm_fail(c, CFIT_EPEER, "cannot connect to rank %d at %s:%d: %s", p,
                                       c->peers[p].addr, c->peers[p].port, why);
            unsigned char h[16];
            put_u32(h, TCP_HELLO_MAGIC), put_u32(h + 4, jh), put_u32(h + 8, (uint32_t)c->rank);
            put_u32(h + 12, (uint32_t)(k | t->nconn << 16));
            t->conns[p * t->nconn + k].fd = fd;
            if (cfit__sock_io(fd, h, sizeof h, 1, deadline))
                return cfit__comm_fail(c, CFIT_EPEER, "rank %d lost while connecting", p);
        }
    }
    while (expect > 0) {
        double left = deadline - cfit__now();
        if (left <= 0)
            return cfit__comm_fail(c, CFIT_ETIMEOUT, "%d tcp connections from higher ranks missing after %g s",
                                   expect, c->timeout_s);
        struct pollfd pfd = {c->data_listen_fd, POLLIN, 0};
        if (poll(&pfd, 1, left > 1 ? 1000 : (int)(left * 1000) + 1) <= 0)
            continue;
        int fd = accept4(c->data_listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        unsigned char h[16];
        int p, k, n;
        if (cfit__sock_io(fd, h, sizeof h, 0, cfit__now() + 5 < deadline ? cfit__now() + 5 : deadline) ||
            get_u32(h) != TCP_HELLO_MAGIC || get_u32(h + 4) != jh) {
            close(fd);
            continue;
        }
        p = (int)get_u32(h + 8), k = (int)(get_u32(h + 12) & 0xffff), n = (int)(get_u32(h + 12) >> 16);
        if (n != t->nconn) {
            close(fd);
            return cfit__comm_fail(c, CFIT_EINVALID, "rank %d uses %d tcp connections per peer, rank %d uses %d "
                                   "(set CLUSTERFIT_TCP_CONNS alike everywhere)", p, n, c->rank, t->nconn);
        }
        if (p <= c->rank || p >= c->size || !use[p] || k >= t->nconn || t->conns[p * t->nconn + k].fd >= 0) {
            close(fd);
            continue;
        }
        t->conns[p * t->nconn + k].fd = fd;
        expect--;
    }
    return 0;
}

int cfit__tcp_open(cfit_comm *c, const int *use, void **out)
{
    *out = NULL;
    int nuse = 0;
    for (int p = 0; p < c->size; p++)
        nuse += use[p] != 0;
    if (!nuse)
        return 0;
    tcp_t *t = calloc(1, sizeof *t);
    if (!t)
        return cfit__comm_fail(c, CFIT_ENOMEM, "out of memory");
    t->c = c;
    t->ep = -1;
    t->nconn = conns_setting();
    t->conns = calloc((size_t)c->size * (size_t)t->nconn, sizeof *t->conns);
    t->sseq = calloc((size_t)c->size, sizeof *t->sseq);
    t->rseq = calloc((size_t)c->size, sizeof *t->rseq);
    if (!t->conns || !t->sseq || !t->rseq) {
        free(t->conns);
        free(t->sseq);
        free(t->rseq);
        free(t);
        return cfit__comm_fail(c, CFIT_ENOMEM, "out of memory");
    }
    for (int i = 0; i < c->size * t->nconn; i++) {
        t->conns[i].fd = -1;
        t->conns[i].peer = i / t->nconn;
        t->conns[i].idx = i % t->nconn;
    }
    int rc = mesh(t, use);
    for (int i = 0; !rc && i < c->size * t->nconn; i++)
        if (t->conns[i].fd >= 0)
            cfit__sock_tune(t->conns[i].fd);
    int nthr = rc ? 0 : threads_setting(c, t->nconn);
    if (!rc && nthr) {
        t->nthr = nthr;
        rc = start_threads(t);
    } else if (!rc) {
        t->ep = epoll_create1(EPOLL_CLOEXEC);
        if (t->ep < 0)
            rc = cfit__comm_fail(c, CFIT_ESYS, "epoll_create1: %s", strerror(errno));
    }
    for (int i = 0; !rc && !nthr && i < c->size * t->nconn; i++) {
        conn *cn = &t->conns[i];
        if (cn->fd < 0)
            continue;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = cn};
        if (epoll_ctl(t->ep, EPOLL_CTL_ADD, cn->fd, &ev) != 0)
            rc = cfit__comm_fail(c, CFIT_ESYS, "epoll_ctl: %s", strerror(errno));
    }
    if (rc) {
        tcp_close(t);
        return rc;
    }
    *out = t;
    return 0;
}

const cfit_transport_ops cfit_transport_tcp = {
    .name = "tcp",
    .post = tcp_post,
    .progress = tcp_progress,
    .window = NULL,
    .close = tcp_close,
};
