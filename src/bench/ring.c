/* ring.c - the pipelined ring under all-reduce, reduce-scatter and all-gather.
 *
 * A ring schedule (coll.h) sends chunk send(s) to the next rank and receives chunk
 * recv(s) = send(s + 1) from the previous one at each step s.  Each chunk is cut into
 * slices of CFIT__RING_SLICE bytes, and the ring runs slice by slice rather than step by
 * step: as soon as slice k of step s has arrived and been reduced it is sent on as slice k
 * of step s + 1, while the receives of the next CFIT__RING_SLOTS slices are already posted.
 * Messages between two ranks are ordered (comm.h), so the receiver sees the slices in the
 * order (step, slice) the sender issued them: all of step 0 first, then each forward in
 * the order its receive completed, which is the same order.
 *
 * Buffer reuse: received data that is reduced lands in one of CFIT__RING_SLOTS slots and is
 * consumed before the slot's next receive is posted.  When the schedule writes its step
 * results into two alternating scratch buffers (reduce-scatter out of place), step s + 2
 * overwrites what step s + 1 is still sending, so it first waits for that send.
 */
#include "bench/coll.h"

#include <stdlib.h>
#include <string.h>

typedef struct ring_state {
    cfit__bcoll_ctx *x;
    const cfit__ring *r;
    size_t es, slice_elems;
    int kmax;          /* most slices in any chunk */
    cfit_req *sreq;    /* [steps][kmax]: sreq[s][k] sends slice k at step s */
    unsigned char *sposted;
    cfit_req rreq[CFIT__RING_SLOTS];
} ring_state;

static int slices(const ring_state *st, int chunk)
{
    size_t len = st->r->chunk_len(st->r, chunk);
    return (int)((len + st->slice_elems - 1) / st->slice_elems);
}

static size_t slice_len(const ring_state *st, int chunk, int k)
{
    size_t len = st->r->chunk_len(st->r, chunk), at = (size_t)k * st->slice_elems;
    return len - at < st->slice_elems ? len - at : st->slice_elems;
}

/* Cursor over the (step, slice) receive sequence. */
typedef struct cursor {
    int s, k;
} cursor;

static int chunk_at(const ring_state *st, int s)
{
    return st->r->step[s].chunk;
}

/* Move c to the next receive item; returns 0 past the end. */
static int advance(const ring_state *st, cursor *c)
{
    c->k++;
    while (c->s < st->r->steps && c->k >= slices(st, chunk_at(st, c->s))) {
        c->s++;
        c->k = 0;
    }
    return c->s < st->r->steps;
}

static int first_item(const ring_state *st, cursor *c)
{
    c->s = 0;
    c->k = -1;
    return advance(st, c);
}

static int send_slice(ring_state *st, int s, int k, const unsigned char *chunk_base, int chunk)
{
    int next = (st->x->rank + 1) % st->x->nranks;
    size_t at = (size_t)k * st->slice_elems * st->es;
    size_t idx = (size_t)s * (size_t)st->kmax + (size_t)k;
    st->sposted[idx] = 1;
    return cfit_comm_isend(st->x->comm, next, chunk_base + at, slice_len(st, chunk, k) * st->es, &st->sreq[idx]);
}

static int post_recv(ring_state *st, const cursor *c, int slot)
{
    int prev = (st->x->rank + st->x->nranks - 1) % st->x->nranks;
    const cfit__ring_step *step = &st->r->step[c->s];
    size_t n = slice_len(st, step->chunk, c->k) * st->es;
    unsigned char *dst = step->reduce ? st->r->tmp + (size_t)slot * CFIT__RING_SLICE
                                      : step->out + (size_t)c->k * st->slice_elems * st->es;
    return cfit_comm_irecv(st->x->comm, prev, dst, n, &st->rreq[slot]);
}

/* Slice c has arrived in `slot`: reduce it (or not) and forward it. */
static int consume(ring_state *st, const cursor *c, int slot)
{
    const cfit__ring_step *step = &st->r->step[c->s];
    size_t at = (size_t)c->k * st->slice_elems * st->es;
    size_t n = slice_len(st, step->chunk, c->k);
    if (step->reduce) {
        if (st->r->scratch_out && c->s >= 2) {
            size_t idx = (size_t)(c->s - 1) * (size_t)st->kmax + (size_t)c->k;
            int rc = st->sposted[idx] ? cfit_comm_wait(st->x->comm, &st->sreq[idx]) : 0;
            if (rc)
                return rc;
        }
        unsigned char *out = step->out + at;
        const unsigned char *in = st->r->tmp + (size_t)slot * CFIT__RING_SLICE;
        if (step->local == step->out)
            cfit__reduce_acc(st->x->dtype, st->x->op, out, in, n);
        else
            cfit__reduce3(st->x->dtype, st->x->op, out, step->local + at, in, n);
        if (step->finish)
            cfit__reduce_finish(st->x->dtype, st->x->op, out, n, st->x->nranks);
    }
    if (c->s + 1 < st->r->steps)
        return send_slice(st, c->s + 1, c->k, step->out, step->chunk);
    return 0;
}

static int wait_sends(ring_state *st)
{
    size_t total = (size_t)st->r->steps * (size_t)st->kmax;
    for (size_t i = 0; i < total; i++)
        if (st->sposted[i]) {
            int rc = cfit_comm_wait(st->x->comm, &st->sreq[i]);
            if (rc)
                return rc;
        }
    return 0;
}

static int run(ring_state *st)
{
    const cfit__ring *r = st->r;
    int rc = 0;
    for (int k = 0; k < slices(st, r->first_chunk) && !rc; k++)
        rc = send_slice(st, 0, k, r->first, r->first_chunk);
    cursor post, done;
    int have_post = first_item(st, &post), have_done = first_item(st, &done);
    /* Prime: up to SLOTS receives in flight. */
    int posted = 0;
    for (; have_post && posted < CFIT__RING_SLOTS && !rc; posted++) {
        rc = post_recv(st, &post, posted);
        have_post = advance(st, &post);
    }
    for (int j = 0; have_done && !rc; j++) {
        int slot = j % CFIT__RING_SLOTS;
        rc = cfit_comm_wait(st->x->comm, &st->rreq[slot]);
        if (!rc)
            rc = consume(st, &done, slot);
        if (!rc && have_post) {
            rc = post_recv(st, &post, slot);
            have_post = advance(st, &post);
        }
        have_done = advance(st, &done);
    }
    return rc ? rc : wait_sends(st);
}

int cfit__ring_run(cfit__bcoll_ctx *x, const cfit__ring *r)
{
    ring_state st;
    memset(&st, 0, sizeof st);
    st.x = x;
    st.r = r;
    st.es = cfit_dtype_size(x->dtype);
    st.slice_elems = CFIT__RING_SLICE / st.es;
    for (int c = 0; c < x->nranks; c++) {
        int k = slices(&st, c);
        st.kmax = k > st.kmax ? k : st.kmax;
    }
    if (r->steps <= 0 || st.kmax == 0)
        return 0;
    size_t total = (size_t)r->steps * (size_t)st.kmax;
    st.sreq = calloc(total, sizeof *st.sreq);
    st.sposted = calloc(total, 1);
    int rc = st.sreq && st.sposted ? run(&st) : CFIT_ENOMEM;
    free(st.sreq);
    free(st.sposted);
    return rc;
}
