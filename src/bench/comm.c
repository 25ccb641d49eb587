/* comm.c - the transport-independent half of comm.h: requests, progress, blocking
 * helpers, barrier/bcast/small all-reduce, windows, errors and close.
 *
 * Every request goes to the transport chosen for its peer (or to the self queue when
 * a rank sends to itself).  cfit_comm_wait() drives the progress of every transport in
 * use until the waited requests complete; it fails with CFIT_ETIMEOUT when none of them
 * moved a byte for timeout_s.  With one transport the progress call blocks (futex or
 * epoll) for up to 50 ms at a time; with two it blocks up to 1 ms in the one the waited
 * requests use, or polls both.  Every 50 ms a wait also reads the control connections,
 * so a rank lost anywhere in the job ends every rank's wait (comm_internal.h).
 */
#define _GNU_SOURCE
#include "bench/comm_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The state letter of /proc/PID/stat ('R', 'S', 'T', 'Z', ...), or '?' when unknown. */
static char pid_state(int pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return '?';
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');   /* "pid (comm) S ..." */
    return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

int cfit__pid_alive(int pid)
{
    if (pid <= 0)
        return 1;   /* unknown: assume alive, the timeout still applies */
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return 0;
    char st = pid_state(pid);   /* '?': permission or no /proc: trust kill() */
    return st != 'Z' && st != 'X';
}

/* A rank of this host that is stopped (SIGSTOP, a debugger): the likely cause of a stall
 * that a wait only sees through the rank it waits for.  -1 when none.  A rank stopped by a
 * signal ('T') is preferred to one in a tracing stop ('t'): a healthy rank can pass through
 * 't' briefly, e.g. while LeakSanitizer stops its threads to scan them as it exits. */
static int stopped_rank(const cfit_comm *c)
{
    for (int pass = 0; pass < 2; pass++)
        for (int p = 0; p < c->size; p++) {
            if (p == c->rank || strcmp(c->peers[p].hostkey, c->peers[c->rank].hostkey) != 0)
                continue;
            char st = c->peers[p].pid > 0 ? pid_state(c->peers[p].pid) : '?';
            if (st == (pass ? 't' : 'T'))
                return p;
        }
    return -1;
}

/* The first failure's text and code (later ones are ignored); 1 when this one was recorded. */
static int vfail(cfit_comm *c, int err, const char *fmt, va_list ap)
{
    if (c->failed)
        return 0;
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    c->failed = err;
    return 1;
}

int cfit__comm_fail(cfit_comm *c, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(c, err, fmt, ap);
    va_end(ap);
    return c->failed;
}

int cfit__comm_lost(cfit_comm *c, int lost, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int first = vfail(c, CFIT_EPEER, fmt, ap);
    va_end(ap);
    if (first) {
        c->lost = lost;
        c->reporter = c->rank;
        c->note = 'L';
    }
    return c->failed;
}

int cfit_comm_rank(const cfit_comm *c) { return c->rank; }
int cfit_comm_size(const cfit_comm *c) { return c->size; }

const char *cfit_comm_host(const cfit_comm *c, int rank)
{
    if (rank < 0 || rank >= c->size)
        return "?";
    return c->labels && c->labels[rank] ? c->labels[rank] : c->peers[rank].host;
}

const char *cfit_comm_host_id(const cfit_comm *c, int rank)
{
    return rank < 0 || rank >= c->size ? "?" : c->peers[rank].hostkey;
}

const char *cfit_comm_transport(const cfit_comm *c, int peer)
{
    if (peer < 0 || peer >= c->size)
        return "?";
    if (peer == c->rank || !c->ops[peer])
        return "self";
    return c->ops[peer]->name;
}

const char *cfit_comm_error(const cfit_comm *c)
{
    return c->failed ? c->err : "no error";
}

static void req_init(cfit_req *r, int peer, int is_send, const void *buf, size_t n)
{
    r->peer = peer;
    r->is_send = is_send;
    r->buf = (unsigned char *)(uintptr_t)buf;
    r->len = n;
    r->done = 0;
    r->complete = n == 0;
    r->next = NULL;
}

static void queue_push(cfit_req **head, cfit_req *r)
{
    while (*head)
        head = &(*head)->next;
    *head = r;
}

/* Match messages a rank sent to itself with its receives, in order. */
static void self_progress(cfit_comm *c)
{
    while (c->self_sends && c->self_recvs) {
        cfit_req *s = c->self_sends, *r = c->self_recvs;
        size_t n = s->len - s->done < r->len - r->done ? s->len - s->done : r->len - r->done;
        memcpy(r->buf + r->done, s->buf + s->done, n);
        s->done += n;
        r->done += n;
        if (s->done == s->len) {
            s->complete = 1;
            c->self_sends = s->next;
        }
        if (r->done == r->len) {
            r->complete = 1;
            c->self_recvs = r->next;
        }
    }
}

static int post(cfit_comm *c, int peer, int is_send, const void *buf, size_t n, cfit_req *r)
{
    req_init(r, peer, is_send, buf, n);
    if (c->failed)
        return c->failed;
    if (peer < 0 || peer >= c->size)
        return cfit__comm_fail(c, CFIT_EINVALID, "rank %d does not exist (job of %d ranks)", peer, c->size);
    if (n == 0)
        return 0;
    if (peer == c->rank) {
        queue_push(is_send ? &c->self_sends : &c->self_recvs, r);
        self_progress(c);
        return 0;
    }
    int rc = c->ops[peer]->post(c->tself[peer], r);
    return rc ? cfit__comm_fail(c, rc, "rank %d: %s", peer, cfit_strerror(rc)) : 0;
}

int cfit_comm_isend(cfit_comm *c, int peer, const void *buf, size_t n, cfit_req *r)
{
    return post(c, peer, 1, buf, n, r);
}

int cfit_comm_irecv(cfit_comm *c, int peer, void *buf, size_t n, cfit_req *r)
{
    return post(c, peer, 0, buf, n, r);
}

/* One round of progress on every transport; transport `block` (index, or -1) may wait
 * up to timeout_ms for something to happen, the others are only polled. */
static int progress_all(cfit_comm *c, int block, int timeout_ms)
{
    self_progress(c);
    for (int t = 0; t < c->ntr; t++) {
        int rc = c->tr_ops[t]->progress(c->tr_self[t], t == block ? timeout_ms : 0);
        if (rc)
            return c->failed ? c->failed : cfit__comm_fail(c, rc, "%s transport: %s",
                                                           c->tr_ops[t]->name, cfit_strerror(rc));
    }
    return 0;
}

/* The transport every incomplete request of reqs uses (its index), -1 when none or several. */
static int waited_transport(const cfit_comm *c, const cfit_req *reqs, int n)
{
    int found = -1;
    for (int i = 0; i < n; i++) {
        if (reqs[i].complete || reqs[i].peer == c->rank)
            continue;
        int t = c->ntr > 1 && c->ops[reqs[i].peer] == c->tr_ops[1];
        if (found >= 0 && found != t)
            return -1;
        found = t;
    }
    return found;
}

int cfit_comm_waitall(cfit_comm *c, cfit_req *reqs, int n)
{
    double last_t = cfit__now();
    size_t last_done = (size_t)-1;
    long idle = 0;
    for (;;) {
        if (c->failed)
            return c->failed;
        size_t done = 0;
        int first = -1;
        for (int i = 0; i < n; i++) {
            done += reqs[i].done;
            if (!reqs[i].complete && first < 0)
                first = i;
        }
        if (first < 0)
            return 0;
        double now = cfit__now();
        if (done != last_done) {
            last_done = done;
            last_t = now;
            idle = 0;
        } else if (now - last_t > c->timeout_s) {
            int stopped = stopped_rank(c), rc;
            if (stopped >= 0)
                rc = cfit__comm_fail(c, CFIT_ETIMEOUT, "no progress for %g s: rank %d is stopped (SIGSTOP or "
                                     "a debugger)", c->timeout_s, stopped);
            else
                rc = cfit__comm_fail(c, CFIT_ETIMEOUT, "no progress from rank %d for %g s", reqs[first].peer,
                                     c->timeout_s);
            c->lost = stopped >= 0 ? stopped : reqs[first].peer;   /* the others hear whom it waited for */
            c->reporter = c->rank;
            c->note = 'T';
            return rc;
        }
        if (now >= c->ctl_next) {
            c->ctl_next = now + 0.05;
            int crc = cfit__ctl_check(c);
            if (crc)
                return crc;
        }
        /* one transport: block in it up to 50 ms.  Two: block up to 1 ms in the one the
         * waited requests use (polling the other), or poll both when they use both,
         * sleeping 1 ms at a time once idle for a while */
        int block = c->ntr == 1 ? 0 : waited_transport(c, reqs, n);
        int rc = progress_all(c, block, c->ntr == 1 ? 50 : 1);
        if (rc == CFIT_EPEER && c->reporter == c->rank)
            return cfit__ctl_refine(c, 0.2);   /* maybe that peer only reacted to another loss */
        if (rc)
            return rc;
        if (c->ntr > 1 && block < 0 && ++idle > 2000) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
}

int cfit_comm_test(cfit_comm *c, cfit_req *r)
{
    if (c->failed)
        return c->failed;
    if (r->complete)
        return 1;
    int rc = progress_all(c, -1, 0);
    return rc ? rc : r->complete;
}

int cfit_comm_wait(cfit_comm *c, cfit_req *r)
{
    return cfit_comm_waitall(c, r, 1);
}

int cfit_comm_send(cfit_comm *c, int peer, const void *buf, size_t n)
{
    cfit_req r;
    int rc = cfit_comm_isend(c, peer, buf, n, &r);
    return rc ? rc : cfit_comm_wait(c, &r);
}

int cfit_comm_recv(cfit_comm *c, int peer, void *buf, size_t n)
{
    cfit_req r;
    int rc = cfit_comm_irecv(c, peer, buf, n, &r);
    return rc ? rc : cfit_comm_wait(c, &r);
}

int cfit_comm_sendrecv(cfit_comm *c, int to, const void *sbuf, size_t sn,
                       int from, void *rbuf, size_t rn)
{
    cfit_req r[2];
    int rc = cfit_comm_irecv(c, from, rbuf, rn, &r[0]);
    if (!rc)
        rc = cfit_comm_isend(c, to, sbuf, sn, &r[1]);
    return rc ? rc : cfit_comm_waitall(c, r, 2);
}

/* Dissemination barrier: ceil(log2 size) rounds of one-byte exchanges. */
int cfit_comm_barrier(cfit_comm *c)
{
    unsigned char out = 1, in = 0;
    for (int k = 1; k < c->size; k <<= 1) {
        int rc = cfit_comm_sendrecv(c, (c->rank + k) % c->size, &out, 1,
                                    (c->rank - k + c->size) % c->size, &in, 1);
        if (rc)
            return rc;
    }
    return c->failed;
}

/* Binomial tree from root over ranks renumbered so root is 0. */
int cfit_comm_bcast(cfit_comm *c, int root, void *buf, size_t n)
{
    if (root < 0 || root >= c->size)
        return cfit__comm_fail(c, CFIT_EINVALID, "bcast root %d does not exist", root);
    int me = (c->rank - root + c->size) % c->size;
    int mask = 1;
    while (mask < c->size) {
        if (me & mask) {
            int rc = cfit_comm_recv(c, ((me - mask) + root) % c->size, buf, n);
            if (rc)
                return rc;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (me + mask < c->size) {
            int rc = cfit_comm_send(c, (me + mask + root) % c->size, buf, n);
            if (rc)
                return rc;
        }
    }
    return c->failed;
}

typedef void (*combine_fn)(void *acc, const void *in, int n, int op);

static void combine_f64(void *acc, const void *in, int n, int op_max)
{
    double *a = acc;
    const double *b = in;
    for (int i = 0; i < n; i++)
        a[i] = op_max ? (b[i] > a[i] ? b[i] : a[i]) : a[i] + b[i];
}

static void combine_u64(void *acc, const void *in, int n, int op)
{
    (void)op;
    uint64_t *a = acc;
    const uint64_t *b = in;
    for (int i = 0; i < n; i++)
        a[i] += b[i];
}

/* Binomial reduce to rank 0, then bcast: fine for the driver's few values. */
static int small_allreduce(cfit_comm *c, void *v, int n, size_t elem, combine_fn fn, int op)
{
    if (n <= 0)
        return c->failed;
    size_t bytes = (size_t)n * elem;
    void *tmp = malloc(bytes);
    if (!tmp)
        return cfit__comm_fail(c, CFIT_ENOMEM, "out of memory");
    int rc = 0;
    for (int mask = 1; mask < c->size && !rc; mask <<= 1) {
        if (c->rank & mask) {
            rc = cfit_comm_send(c, c->rank - mask, v, bytes);
            break;
        }
        if (c->rank + mask < c->size) {
            rc = cfit_comm_recv(c, c->rank + mask, tmp, bytes);
            if (!rc)
                fn(v, tmp, n, op);
        }
    }
    free(tmp);
    return rc ? rc : cfit_comm_bcast(c, 0, v, bytes);
}

int cfit_comm_allreduce_f64(cfit_comm *c, double *v, int n, int op_max)
{
    return small_allreduce(c, v, n, sizeof *v, combine_f64, op_max);
}

int cfit_comm_allreduce_u64(cfit_comm *c, uint64_t *v, int n)
{
    return small_allreduce(c, v, n, sizeof *v, combine_u64, 0);
}

int cfit_comm_window(cfit_comm *c, size_t bytes, void **bases)
{
    if (c->failed)
        return c->failed;
    for (int p = 0; p < c->size; p++)
        if (p != c->rank && c->ops[p] != &cfit_transport_shm)
            return CFIT_EINVALID;   /* not an error of the comm: the caller falls back */
    for (int t = 0; t < c->ntr; t++)
        if (c->tr_ops[t] == &cfit_transport_shm && c->tr_ops[t]->window) {
            int rc = c->tr_ops[t]->window(c->tr_self[t], bytes, bases);
            return rc ? (c->failed ? c->failed : cfit__comm_fail(c, rc, "shm window: %s", cfit_strerror(rc))) : 0;
        }
    return CFIT_EINVALID;
}

void cfit_comm_close(cfit_comm *c)
{
    if (!c)
        return;
    cfit__ctl_close(c);
    for (int t = 0; t < c->ntr; t++)
        c->tr_ops[t]->close(c->tr_self[t]);
    if (c->ctl_fd >= 0)
        close(c->ctl_fd);
    if (c->ctl_fds) {
        for (int p = 0; p < c->size; p++)
            if (c->ctl_fds[p] >= 0)
                close(c->ctl_fds[p]);
        free(c->ctl_fds);
    }
    if (c->data_listen_fd >= 0)
        close(c->data_listen_fd);
    if (c->labels) {
        for (int p = 0; p < c->size; p++)
            free(c->labels[p]);
        free(c->labels);
    }
    free(c->peers);
    free(c->ops);
    free(c->tself);
    free(c);
}
