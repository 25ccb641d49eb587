/* search.c - the layout search and GPU-count sizing (docs/plan.md, docs/model.md §5).
 *
 * For each candidate GPU type the search enumerates every (tp, cp, micro-batch,
 * recompute, sp) the constraints allow, costs one layer once for that tuple, then
 * costs every (pp, dp, vp, zero) around it.  Without a GPU count it sizes the count:
 * the smallest node count on a geometric ladder whose best plan meets the deadline, every
 * ladder count from a FLOP floor upward (deadline_scan: no monotonicity assumed).
 */
#include "clusterfit/plan.h"
#include "clusterfit/cost.h"
#include "clusterfit/schedule.h"
#include "core/perf.h"
#include "core/vp_split.h"
#include "base/clock.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_MBS 16
#define MAX_CP 32
#define MAX_NODES 65536L

const char *cfit_cuda_graphs_name(cfit_cuda_graphs g)
{
    static const char *const names[] = {"none", "scoped", "full"};
    return (unsigned)g < CFIT_GRAPHS_COUNT ? names[g] : "?";
}

void cfit_plan_request_init(cfit_plan_request *r)
{
    memset(r, 0, sizeof *r);
    r->precision = CFIT_PREC_BF16;
    r->days = 30.0;
    r->top = 5;
    r->grad_bytes = 2;
    r->unfused_attention = CFIT_SEARCH;
    r->moe_a2a_overlap = CFIT_SEARCH;
    r->fixed.tp = r->fixed.pp = r->fixed.dp = r->fixed.cp = r->fixed.vp = CFIT_SEARCH;
    r->fixed.mbs = r->fixed.zero = r->fixed.recompute = r->fixed.sp = CFIT_SEARCH;
    r->fixed.ep = r->fixed.etp = r->fixed.schedule = CFIT_SEARCH;
    r->offload = CFIT_SEARCH;   /* none, or searched when nothing fits (offload.h) */
}

static int seq_of(const cfit_plan_request *r)
{
    return r->seq_len > 0 ? r->seq_len : r->model->seq_len;
}

/* Default global batch: 4 Mi tokens per step, doubled for every doubling of the model
 * beyond 100 B parameters (Llama 3 405B trained with 16 Mi tokens), at least one
 * sequence.  docs/plan.md explains the choice. */
static long gbs_of(const cfit_plan_request *r)
{
    if (r->global_batch > 0)
        return r->global_batch;
    long tokens = 4L << 20;
    for (double p = cfit_model_params(r->model); p >= 2e11 && tokens < (1L << 30); p /= 2.0)
        tokens *= 2;
    long g = tokens / seq_of(r);
    return g > 0 ? g : 1;
}

long cfit_plan_fixed_gpus(const cfit_plan_request *r)
{
    const cfit_layout *f = &r->fixed;
    if (r->gpus_total)
        return r->gpus_total;
    if (f->tp > 0 && f->pp > 0 && f->cp > 0 && f->dp > 0)
        return (long)f->tp * f->pp * f->cp * f->dp;
    return 0;
}

static int all_fixed(const cfit_layout *f)
{
    return f->tp > 0 && f->pp > 0 && f->dp > 0 && f->cp > 0 && f->vp > 0 && f->mbs > 0 &&
           f->zero >= 0 && f->recompute >= 0 && f->sp >= 0;
}

/* The ranks of one pipeline stage a request fixes (tp x cp x dp, or the GPUs over pp); 0 when open. */
static long fixed_stage_ranks(const cfit_plan_request *r)
{
    const cfit_layout *f = &r->fixed;
    if (f->tp > 0 && f->cp > 0 && f->dp > 0)
        return (long)f->tp * f->cp * f->dp;
    if (r->gpus_total > 0 && f->pp > 0 && r->gpus_total % f->pp == 0)
        return r->gpus_total / f->pp;
    return 0;
}

/* Expert parallelism's constraints (Megatron-LM megatron/training/arguments.py and
 * megatron/core/parallel_state.py): EP needs experts and divides them; ETP splits the experts'
 * FFN; EP x ETP divides a stage's ranks (world / pp, the expert-DP size being the quotient);
 * MoE with TP needs sequence parallelism. */
static int validate_experts(const cfit_plan_request *r, cfit_diag *d)
{
    const cfit_model *m = r->model;
    const cfit_layout *f = &r->fixed;
    if (!cfit_model_is_moe(m)) {
        if (f->ep > 1)
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                                 "--ep %d needs an MoE model: '%s' has no experts", f->ep, m->name);
        if (f->etp > 1)
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                                 "--etp %d needs an MoE model (it splits the experts): '%s' has no experts", f->etp, m->name);
        if (f->recompute == CFIT_RECOMPUTE_EXPERTS)
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                                 "--recompute experts needs an MoE model: '%s' has no experts", m->name);
        return CFIT_EOK;
    }
    if (f->ep > 0 && m->num_experts % f->ep)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--ep %d must divide the model's %d experts",
                             f->ep, m->num_experts);
    if (f->etp > 0 && m->moe_ffn_hidden_size % f->etp)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--etp %d must divide the experts' moe_ffn_hidden_size %d",
                             f->etp, m->moe_ffn_hidden_size);
    long stage = fixed_stage_ranks(r), grid = (long)(f->ep > 0 ? f->ep : 1) * (f->etp > 0 ? f->etp : 1);
    if (stage > 0 && stage % grid)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--ep %d x --etp %d = %ld must divide the %ld ranks of a pipeline stage (tp x cp x dp)",
                             f->ep > 0 ? f->ep : 1, f->etp > 0 ? f->etp : 1, grid, stage);
    if (r->gpus_total > 0 && r->gpus_total % grid)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--ep %d x --etp %d = %ld must divide --gpus %ld",
                             f->ep > 0 ? f->ep : 1, f->etp > 0 ? f->etp : 1, grid, r->gpus_total);
    if (f->tp > 1 && f->sp == 0)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--tp %d with an MoE model needs --sp on (Megatron-LM: MoE with tensor parallelism "
                             "must use sequence parallelism)", f->tp);
    return CFIT_EOK;
}

/* --recompute modules:LIST names only submodules the model has: moe, moe_act and shared_experts
 * an MoE model's (shared_experts one with shared experts), mla_up_proj an MLA model's. */
static int validate_modules(const cfit_plan_request *r, cfit_diag *d)
{
    const cfit_model *m = r->model;
    if (r->fixed.recompute != CFIT_RECOMPUTE_MODULES)
        return CFIT_EOK;
    unsigned mods = (unsigned)r->fixed.recompute_modules;
    if (mods == 0)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--recompute modules: needs at least one module");
    unsigned moe_only = mods & (CFIT_RECMOD_MOE | CFIT_RECMOD_MOE_ACT | CFIT_RECMOD_SHARED_EXPERTS);
    if (moe_only && !cfit_model_is_moe(m))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--recompute module %s needs an MoE model: '%s' has no experts",
                             moe_only & CFIT_RECMOD_MOE ? "moe" : moe_only & CFIT_RECMOD_MOE_ACT ? "moe_act" : "shared_experts",
                             m->name);
    if ((mods & CFIT_RECMOD_SHARED_EXPERTS) && m->shared_ffn_hidden_size <= 0)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--recompute module shared_experts needs shared experts: '%s' has none", m->name);
    if ((mods & CFIT_RECMOD_MLA_UP_PROJ) && !cfit_model_is_mla(m))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--recompute module mla_up_proj needs multi-head latent attention: '%s' has none", m->name);
    return CFIT_EOK;
}

int cfit_plan_stage_layers_mid(const cfit_plan *p, int layers)
{
    int pp = p->layout.pp;
    return pp > 2 && p->stage_layers_first > 0 ? (layers - p->stage_layers_first - p->stage_layers_last) / (pp - 2) : 0;
}

int cfit_plan_validate(const cfit_plan_request *r, cfit_diag *d)
{
    const cfit_model *m = r->model;
    const cfit_layout *f = &r->fixed;
    int seq = seq_of(r);
    long gbs = gbs_of(r);
    int rc = cfit_model_validate(m, d);
    if (!rc)
        rc = validate_experts(r, d);
    if (!rc)
        rc = validate_modules(r, d);
    if (!rc)
        rc = cfit__offload_validate(r, d);   /* --offload, --finetune, --lora-rank (offload.c) */
    if (rc)
        return rc;
    if (f->tp > 0 && (m->num_heads % f->tp || m->num_kv_heads % f->tp))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--tp %d must divide the model's %d attention heads and %d kv heads",
                             f->tp, m->num_heads, m->num_kv_heads);
    if (f->tp > 0 && m->ffn_hidden_size % f->tp)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--tp %d must divide ffn_hidden_size %d", f->tp, m->ffn_hidden_size);
    if (f->cp > 1 && seq % (2 * f->cp))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--cp %d needs a sequence length divisible by 2 x cp = %d, got %d",
                             f->cp, 2 * f->cp, seq);
    if (f->pp > m->layers)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--pp %d is more than the model's %d layers", f->pp, m->layers);
    if (f->vp > m->layers)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--vp %d is more than the model's %d layers", f->vp, m->layers);
    if (f->vp > 1 && f->pp == 1)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--vp %d needs --pp greater than 1", f->vp);
    /* Megatron may count the embedding and the loss as one pipeline layer each
     * (--account-for-embedding-in-pipeline-split, --account-for-loss-in-pipeline-split) */
    if (f->vp > 1 && f->pp > 1 && (long)f->pp * f->vp > m->layers + 2L)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--pp %d x --vp %d = %ld chunks is more than the model's %d layers + 2 "
                             "(every chunk needs a layer; the embedding and the loss may count as one each)",
                             f->pp, f->vp, (long)f->pp * f->vp, m->layers);
    if (f->zero > 3)
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "--zero must be 0, 1, 2 or 3, got %d", f->zero);
    if ((rc = cfit__schedule_validate(r, gbs, d)))   /* ZeRO with PP, --schedule: the framework's (schedule.c) */
        return rc;
    if (f->mbs > 0 && gbs % f->mbs)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "global batch %ld is not divisible by --mbs %d", gbs, f->mbs);
    if (f->mbs > 0 && f->dp > 0 && gbs % ((long)f->mbs * f->dp))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "global batch %ld is not divisible by --mbs %d x --dp %d = %ld",
                             gbs, f->mbs, f->dp, (long)f->mbs * f->dp);
    if (f->dp > 0 && gbs % f->dp)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "global batch %ld is not divisible by --dp %d", gbs, f->dp);
    long fixed_prod = 1;
    if (f->tp > 0) fixed_prod *= f->tp;
    if (f->pp > 0) fixed_prod *= f->pp;
    if (f->cp > 0) fixed_prod *= f->cp;
    if (f->dp > 0) fixed_prod *= f->dp;
    if (r->gpus_total > 0 && r->gpus_total % fixed_prod)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--gpus %ld is not divisible by the fixed parallel sizes (product %ld)",
                             r->gpus_total, fixed_prod);
    if (r->gpus_total > 0 && f->tp > 0 && f->pp > 0 && f->cp > 0 && f->dp > 0 &&
        r->gpus_total != fixed_prod)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--gpus %ld contradicts tp x pp x cp x dp = %ld", r->gpus_total, fixed_prod);
    int sizing = cfit_plan_fixed_gpus(r) == 0;
    if (sizing && r->days <= 0 && r->budget_usd <= 0)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "sizing needs a deadline (--days) or a budget (--budget)");
    if (r->budget_usd < 0 || r->cost_basis < 0 || r->cost_basis >= CFIT_BASIS_COUNT)
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "budget must be >= 0 and the cost basis one of rent, reserved, spot, own");
    if (sizing && r->tokens <= 0)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "sizing the GPU count for a deadline needs --tokens (or give --gpus)");
    if (r->nics_per_node < 0 || r->nics_per_node > 4096 || !(r->oversub >= 0 && r->oversub <= 64))
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "nics per node must be 0..4096 and oversubscription 0..64");
    return CFIT_EOK;
}

/* ---- ranking ---- */

static int better(const cfit_plan *a, const cfit_plan *b)
{
    if (a->tokens_per_s != b->tokens_per_s)
        return a->tokens_per_s > b->tokens_per_s;
    return a->mem.total_bytes < b->mem.total_bytes;
}

typedef struct topk {
    cfit_plan *v;
    int n, k;
} topk;

static void topk_offer(topk *t, const cfit_plan *p)
{
    if (t->n == t->k && !better(p, &t->v[t->n - 1]))
        return;
    int i = t->n < t->k ? t->n++ : t->n - 1;
    while (i > 0 && better(p, &t->v[i - 1])) {
        t->v[i] = t->v[i - 1];
        i--;
    }
    t->v[i] = *p;
}

typedef struct search_state {
    topk top;
    cfit_plan closest;
    int has_closest;
    uint64_t evaluated, feasible;
    int offload_searched;   /* nothing fit without offload: the masks were searched too */
} search_state;

/* How far a plan is from fitting: its GPU memory shortfall, or its host memory's when offload
 * overfills the host (offload.h). */
static double shortfall_bytes(const cfit_memory *m)
{
    double gpu = m->total_bytes - m->capacity_bytes;
    double host = m->host_bytes > 0 ? m->host_bytes - m->host_capacity_bytes : gpu;
    double nvme = m->nvme_bytes > 0 ? m->nvme_bytes - m->nvme_capacity_bytes : gpu;
    host = host > nvme ? host : nvme;
    return gpu > host ? gpu : host;
}

/* Count a layout costed as far as its memory.  The time model runs only for a layout that is
 * kept: one that fits (ranked by tokens/s) or the closest to fitting so far (ranked by its
 * shortfall, which memory alone gives); most layouts a sizing tries are neither. */
static void consider(search_state *s, const cfit__plan_eval *e)
{
    s->evaluated++;
    if (e->fits) {
        cfit_plan p;
        s->feasible++;
        cfit__plan_finish(e, &p);
        topk_offer(&s->top, &p);
    } else if (!s->has_closest || shortfall_bytes(&e->mem) < shortfall_bytes(&s->closest.mem)) {
        cfit__plan_finish(e, &s->closest);
        s->has_closest = 1;
    }
}

/* Goodput of the plans a count's search keeps (goodput.h): it depends on the count, not the
 * layout, so applying it after the ranking by tokens/s ranks by wall time too. */
static void goodput_kept(const cfit_plan_request *r, search_state *s)
{
    for (int i = 0; i < s->top.n; i++)
        cfit_plan_goodput(r, &s->top.v[i]);
    if (s->has_closest)
        cfit_plan_goodput(r, &s->closest);
}

/* ---- enumeration ---- */

/* The layer costs of one (tp, cp, micro-batch, sp), per recompute mode, computed on
 * first use. */
typedef struct layer_costs {
    unsigned have;                               /* bit per cfit_recompute */
    cfit__layer_cost lc[CFIT_RECOMPUTE_COUNT];   /* none, selective, full, (block unused), experts */
} layer_costs;

static const cfit__layer_cost *layer_cost(const cfit__ctx *ctx, layer_costs *lcs, const cfit_layout *l,
                                          int rec)
{
    if (!(lcs->have & (1u << rec))) {
        cfit__layer_cost_compute(ctx, l->tp, l->cp, l->mbs, rec, l->sp, l->ep, l->etp, &lcs->lc[rec]);
        lcs->have |= 1u << rec;
    }
    return &lcs->lc[rec];
}

/* Cost one fully given layout as far as its memory (block recomputation needs the none and
 * full costs); cfit__plan_finish adds the time. */
static void cost_memory(const cfit__ctx *ctx, layer_costs *lcs, const cfit_layout *l, cfit__plan_eval *e)
{
    if (l->recompute == CFIT_RECOMPUTE_BLOCK)
        cfit__plan_memory_block(ctx, layer_cost(ctx, lcs, l, CFIT_RECOMPUTE_NONE),
                                layer_cost(ctx, lcs, l, CFIT_RECOMPUTE_FULL), l, e);
    else
        cfit__plan_memory(ctx, layer_cost(ctx, lcs, l, l->recompute), l, e);
}

static int cand(int fixed, int v)
{
    return fixed <= 0 || fixed == v;
}

/* Every recompute mode of one layout; block only where none does not fit and full does
 * (elsewhere it would repeat one of them). */
static void search_recompute(const cfit__ctx *ctx, layer_costs *lcs, cfit_layout l, search_state *s)
{
    int fixed = ctx->req->fixed.recompute;
    int none_fits = 1, full_fits = 0;
    for (int rec = 0; rec < CFIT_RECOMPUTE_COUNT; rec++) {
        if ((fixed >= 0 && rec != fixed) || (rec == CFIT_RECOMPUTE_EXPERTS && !ctx->moe) ||
            (rec == CFIT_RECOMPUTE_MODULES && fixed != rec))   /* a module list is given, never searched */
            continue;
        if (ctx->off_modules && (rec == CFIT_RECOMPUTE_FULL || rec == CFIT_RECOMPUTE_BLOCK ||
                                 (rec == CFIT_RECOMPUTE_EXPERTS && (ctx->off_modules & CFIT_OFFMOD_EXPERTS))))
            continue;   /* nothing stored to offload, or an MoE layer recomputed whole (offload.c) */
        if (rec == CFIT_RECOMPUTE_BLOCK && fixed < 0 && (none_fits || !full_fits))
            continue;
        l.recompute = rec;
        l.recompute_modules = rec == CFIT_RECOMPUTE_MODULES ? ctx->req->fixed.recompute_modules : 0;
        cfit__plan_eval e;
        cost_memory(ctx, lcs, &l, &e);
        if (rec == CFIT_RECOMPUTE_NONE)
            none_fits = e.fits;
        else if (rec == CFIT_RECOMPUTE_FULL)
            full_fits = e.fits;
        else if (rec == CFIT_RECOMPUTE_BLOCK && fixed < 0 && e.recompute_layers >= e.n_max)
            continue;                                    /* every layer: the full layout again */
        consider(s, &e);
    }
}

/* The vp range [*lo, *hi] schedule sc runs at pp stages: at pp 1 only 1F1B's vp 1 (no pipeline;
 * none with a fixed --schedule); else the framework's schedules (or the fixed one) at their chunk
 * counts, interleaving from 2 to the layers per stage.  0 when sc is not tried at pp. */
static int schedule_vps(const cfit__ctx *ctx, int sc, int pp, int *lo, int *hi)
{
    const cfit_layout *f = &ctx->req->fixed;
    int chunks = cfit_schedule_chunks((cfit_schedule)sc);
    if (pp == 1) {
        *lo = *hi = 1;
        return sc == CFIT_SCHED_1F1B && f->schedule <= CFIT_SCHED_DEFAULT;
    }
    *lo = chunks ? chunks : 2;
    *hi = chunks ? chunks : (f->vp > 0 ? f->vp : ctx->m->layers / pp);
    if (f->schedule > CFIT_SCHED_DEFAULT)
        return sc == f->schedule;
    return (ctx->fw->schedules & CFIT_SCHED_BIT(sc)) != 0;
}

/* Every ZeRO stage of layout l: above the framework's zero_with_pp none with pipelines; with one
 * DP rank nothing to shard unless fixed (an MoE model's experts shard over expert DP). */
static void search_zero(const cfit__ctx *ctx, layer_costs *lcs, cfit_layout l, search_state *s)
{
    const cfit_layout *f = &ctx->req->fixed;
    for (int zero = 0; zero <= 3; zero++) {
        int floor;   /* the lowest stage the offload mask runs on (offload.c) */
        if ((f->zero >= 0 && zero != f->zero) || (l.pp > 1 && zero > ctx->fw->zero_with_pp) ||
            !cfit__offload_zero_ok(ctx, ctx->host.offload, zero, &floor) ||
            (zero > floor && l.dp == 1 && f->zero < 0 &&                          /* nothing to shard */
             (!ctx->moe || (long)l.tp * l.cp == (long)l.ep * l.etp)))            /* (experts: over expert DP) */
            continue;
        l.zero = zero;
        search_recompute(ctx, lcs, l, s);
    }
}

/* A searched vp of a layout-balanced split (a pipeline_layout framework, cfit__split_balanced):
 * any vp runs there, and neighbouring ones cost alike (the bubble falls as 1/vp, the sends grow
 * with it), so the search takes a grid of two per octave, 2, 3, 4, 6, 8, 12, ... (the vp of the
 * published Megatron runs: 2, 3, 4, 6, 8, 12, 24). */
static int layout_vp_on_grid(int vp)
{
    while (vp > 3 && vp % 2 == 0)
        vp /= 2;
    return vp == 2 || vp == 3;
}

/* Every (pp, dp, schedule, vp, ZeRO) around one (tp, cp, micro-batch, sp, ep, etp): the expert grid
 * ep x etp must divide a stage's tp x cp x dp ranks (Megatron-Core parallel folding). */
static void search_pp(const cfit__ctx *ctx, long N, int tp, int c, int mbs, int sp, int ep, int etp,
                      layer_costs *lcs, search_state *s)
{
    const cfit_layout *f = &ctx->req->fixed;
    const cfit_model *m = ctx->m;
    long gbs = ctx->gbs;
    int by_layout = cfit__split_by_layout(ctx);
    for (int pp = 1; pp <= m->layers; pp++) {
        if (!cand(f->pp, pp) || N % ((long)tp * c * pp))
            continue;
        long dp = N / ((long)tp * c * pp);
        if ((f->dp > 0 && dp != f->dp) || gbs % (mbs * dp) || ((long)tp * c * dp) % ((long)ep * etp))
            continue;
        long m_mb = gbs / (mbs * dp);
        for (int sc = CFIT_SCHED_1F1B; sc < CFIT_SCHED_COUNT; sc++) {
            int lo, hi;
            if (!schedule_vps(ctx, sc, pp, &lo, &hi))
                continue;
            for (int vp = lo; vp <= hi; vp++) {
                /* every chunk holds a layer; chunks may be uneven (DESIGN §7); a fixed vp: the
                 * embedding and the loss may count as one each.  A searched vp > 1 only where every
                 * stage holds whole virtual stages where the framework requires it (Megatron-Core:
                 * whole_virtual_stages, vp_split.h), unless the split is balanced by a pipeline
                 * layout (stages.c: a model mixing layer kinds or with MTP modules; then on a grid) */
                if (!cand(f->vp, vp) ||
                    (f->vp <= 0 && vp > 1 && ctx->fw->whole_virtual_stages && !by_layout &&
                     !cfit__vp_split_even(m->layers, pp, vp)) ||
                    (f->vp <= 0 && vp > 1 && by_layout && !layout_vp_on_grid(vp)) ||
                    (pp > 1 && !cfit_schedule_check((cfit_schedule)sc, pp, vp, m_mb, m->layers + (f->vp > 0 ? 2 : 0), NULL, 0)))
                    continue;
                search_zero(ctx, lcs, (cfit_layout){tp, pp, (int)dp, c, vp, mbs, 0, CFIT_RECOMPUTE_NONE, sp, ep, etp,
                                                    pp > 1 ? sc : CFIT_SCHED_DEFAULT, 0}, s);
            }
        }
    }
}

/* Expert parallel candidates: the fixed size, else powers of two dividing the experts (ep) or,
 * for etp, at most tp and dividing the experts' FFN width; 1 alone for a dense model. */
static int expert_sizes(const cfit__ctx *ctx, int fixed, int limit, int divides, int *out)
{
    int n = 0;
    if (!ctx->moe) {
        out[n++] = 1;
        return n;
    }
    if (fixed > 0) {
        out[n++] = fixed;
        return n;
    }
    for (int v = 1; v <= limit && n < 24; v *= 2)
        if (divides % v == 0)
            out[n++] = v;
    return n;
}

/* Every (ep, etp) around one (tp, cp, micro-batch, sp), each costing its own layers. */
static void search_experts(const cfit__ctx *ctx, long N, int tp, int c, int mbs, int sp, search_state *s)
{
    const cfit_layout *f = &ctx->req->fixed;
    const cfit_model *m = ctx->m;
    int eps[24], etps[24];
    long grid = N / ((long)tp * c);   /* ranks of one stage's expert grid at pp = 1, at most */
    int nep = expert_sizes(ctx, f->ep, m->num_experts, m->num_experts, eps);
    int netp = expert_sizes(ctx, f->etp, tp, m->moe_ffn_hidden_size > 0 ? m->moe_ffn_hidden_size : 1, etps);
    for (int i = 0; i < nep; i++)
        for (int j = 0; j < netp; j++) {
            if (((long)tp * c * grid) % ((long)eps[i] * etps[j]))
                continue;
            layer_costs lcs;
            lcs.have = 0;
            search_pp(ctx, N, tp, c, mbs, sp, eps[i], etps[j], &lcs, s);
        }
}

static void search_layouts(const cfit__ctx *ctx, long N, search_state *s)
{
    ((cfit__ctx *)ctx)->job_gpus = N;   /* layer costs of CP across nodes depend on the job's size */
    const cfit_plan_request *r = ctx->req;
    const cfit_layout *f = &r->fixed;
    const cfit_model *m = ctx->m;
    long gbs = ctx->gbs;
    int max_tp = f->tp > 0 ? f->tp : ctx->domain;
    int cps[8], ncp = 0;
    if (f->cp > 0)
        cps[ncp++] = f->cp;
    else
        for (int c = 1; c <= MAX_CP; c *= 2)
            cps[ncp++] = c;
    for (int tp = 1; tp <= max_tp; tp++) {
        if (!cand(f->tp, tp) || N % tp || m->num_heads % tp || m->num_kv_heads % tp ||
            m->ffn_hidden_size % tp)
            continue;
        for (int ci = 0; ci < ncp; ci++) {
            int c = cps[ci];
            if (N % ((long)tp * c) || (c > 1 && ctx->seq % (2 * c)))
                continue;
            for (int mbs = 1; mbs <= (f->mbs > 0 ? f->mbs : MAX_MBS); mbs++) {
                if (!cand(f->mbs, mbs) || gbs % mbs)
                    continue;
                for (int sp = 0; sp <= 1; sp++) {
                    if (f->sp >= 0 ? sp != f->sp : (sp == 1 && tp == 1))
                        continue;
                    if (ctx->moe && tp > 1 && !sp)   /* Megatron: MoE with TP needs SP */
                        continue;
                    search_experts(ctx, N, tp, c, mbs, sp, s);
                }
            }
        }
    }
}

/* Whether the fallback tries offload mask `mask` in its pass `nvme`: host memory first (0), then,
 * when nothing fit there either, the masks that move something on to the node's NVMe (1). */
static int fallback_mask(const cfit__ctx *ctx, int mask, int nvme)
{
    /* --offload-modules and whole-layer activation offload exclude each other (offload.c) */
    return cfit_offload_mask_ok(mask) && ((mask & CFIT_OFFLOAD_NVME) != 0) == nvme &&
           !(ctx->off_modules && (mask & CFIT_OFFLOAD_ACTIVATIONS));
}

/* Every layout at N GPUs with the request's offload; when it leaves offload to the search and
 * nothing fits in GPU memory, every offload mask the node's host memory allows too, and then
 * those of its NVMe array. */
static void search_count(const cfit__ctx *ctx, long N, search_state *s)
{
    const cfit_plan_request *r = ctx->req;
    cfit__host *h = &((cfit__ctx *)ctx)->host;   /* the mask is the search's state, as job_gpus */
    h->offload = r->offload > 0 ? r->offload : 0;
    search_layouts(ctx, N, s);
    if (s->feasible == 0 && r->offload == CFIT_SEARCH && h->has_host) {
        s->offload_searched = 1;
        for (int nvme = 0; nvme <= h->has_nvme && s->feasible == 0; nvme++)
            for (int mask = 1; mask <= CFIT_OFFLOAD_MASK_MAX; mask++)
                if (fallback_mask(ctx, mask, nvme)) {
                    h->offload = mask;
                    search_layouts(ctx, N, s);
                }
    }
    goodput_kept(r, s);
}

/* A layout fixed but for its schedule: each schedule the framework (or --schedule) runs at its pp
 * and vp; when the micro-batch count breaks every one's rule, the 1F1B family's, costed as the
 * search would not. */
static void cost_fixed(const cfit__ctx *ctx, const cfit_layout *f, search_state *s)
{
    layer_costs lcs;
    lcs.have = 0;
    long m_mb = ctx->gbs / ((long)f->mbs * f->dp);
    int tried = 0;
    cfit__plan_eval e;
    for (int sc = CFIT_SCHED_1F1B; sc < CFIT_SCHED_COUNT; sc++) {
        int lo, hi;
        if (!schedule_vps(ctx, sc, f->pp, &lo, &hi) || f->vp < lo || f->vp > hi ||
            (f->pp > 1 && !cfit_schedule_check((cfit_schedule)sc, f->pp, f->vp, m_mb, ctx->m->layers + 2, NULL, 0)))
            continue;
        cfit_layout l = *f;
        l.schedule = f->pp > 1 ? sc : CFIT_SCHED_DEFAULT;
        cost_memory(ctx, &lcs, &l, &e);
        consider(s, &e);
        tried++;
    }
    if (!tried) {
        cfit_layout l = *f;
        l.schedule = CFIT_SCHED_DEFAULT;
        cost_memory(ctx, &lcs, &l, &e);
        consider(s, &e);
    }
}

/* A fully fixed layout: as given (offload none unless fixed), else, when it does not fit and
 * offload is left to the search, under the first offload mask (search order) that fits it; when
 * none does, the layout as given is reported. */
static void fixed_layout(const cfit__ctx *ctx, long N, search_state *s)
{
    const cfit_layout *f = &ctx->req->fixed;
    int given = ctx->req->offload;
    cfit__host *h = &((cfit__ctx *)ctx)->host;
    h->offload = given > 0 ? given : 0;
    ((cfit__ctx *)ctx)->job_gpus = N;
    cost_fixed(ctx, f, s);
    cfit_plan as_given = s->closest;   /* what is reported when no offload mask fits either */
    long evaluated = s->evaluated;
    int floor;
    for (int k = 0; s->top.n == 0 && given == CFIT_SEARCH && h->has_host && k < 2 * CFIT_OFFLOAD_MASK_MAX; k++) {
        int mask = k % CFIT_OFFLOAD_MASK_MAX + 1, nvme = k >= CFIT_OFFLOAD_MASK_MAX;   /* host pass, then NVMe */
        if (!fallback_mask(ctx, mask, nvme) || (nvme && !h->has_nvme) || !cfit__offload_zero_ok(ctx, mask, f->zero, &floor))
            continue;
        h->offload = mask;
        cost_fixed(ctx, f, s);
        s->offload_searched = 1;
    }
    if (s->top.n == 0) {   /* the probes found nothing: the layout as given, as the only one tried */
        s->closest = as_given;
        s->evaluated = evaluated;
    }
    if (s->top.n == 0 && s->has_closest) {   /* reported even when it does not fit */
        s->top.v[0] = s->closest;
        s->top.n = 1;
    }
    goodput_kept(ctx->req, s);
}

/* The cost of a plan on the request's basis; 0 when a price is missing. */
static int plan_cost(const cfit_plan_request *r, const cfit_plan *p, double *usd)
{
    if (!r->catalog || p->time_to_train_s <= 0)
        return 0;
    cfit_cost k;
    cfit_cost_compute_for(r, p, &k);
    return cfit_cost_of(&k, (cfit_cost_basis)r->cost_basis, usd);
}

static int affordable(const cfit_plan_request *r, const cfit_plan *p)
{
    double usd;
    return r->budget_usd <= 0 || (plan_cost(r, p, &usd) && usd <= r->budget_usd);
}

/* Node counts on a ladder of four steps per doubling: 1..8, 10, 12, 14, 16, 20, ... */
static long ladder(int i)
{
    if (i < 8)
        return i + 1;
    int oct = (i - 8) / 4, step = (i - 8) % 4;
    return (8L << oct) + (long)step * (2L << oct);
}

static int ladder_len(void)
{
    int i = 0;
    while (ladder(i) <= MAX_NODES)
        i++;
    return i;
}

static void state_init(search_state *s, cfit_plan *buf, int k)
{
    memset(s, 0, sizeof *s);
    s->top.v = buf;
    s->top.k = k;
}

/* Binary search over the ladder (budget-only sizing; deadline sizing scans, deadline_scan).
 * from < 0: the smallest index whose best plan fits and trains within deadline_s (-1 if none);
 * it assumes time to train falls as the count grows.  from >= 0: the largest index >= from with
 * a plan that fits (-1 if none). */
static int ladder_search(const cfit__ctx *ctx, cfit_plan *buf, int k, search_state *s, uint64_t *evaluated,
                         uint64_t *feasible, double deadline_s, int from)
{
    int largest = from >= 0;
    const cfit_plan_request *r = ctx->req;
    int lo = largest ? from : 0, hi = ladder_len() - 1, best_i = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        state_init(s, buf, k);
        search_count(ctx, ladder(mid) * ctx->gpn, s);
        *evaluated += s->evaluated;
        *feasible += s->feasible;
        int ok = s->top.n > 0 && (largest || s->top.v[0].time_to_train_s <= deadline_s);
        if (ok)
            best_i = mid;
        if (ok == !largest)
            hi = mid - 1;
        else
            lo = mid + 1;
        if (r->progress)
            r->progress(r->progress_ctx, -1.0);
    }
    return best_i;
}

/* The best plan's wall time at ladder index i (INFINITY when nothing fits there). */
static double time_at(const cfit__ctx *ctx, cfit_plan *buf, int k, search_state *s, uint64_t *evaluated,
                      uint64_t *feasible, int i)
{
    state_init(s, buf, k);
    search_count(ctx, ladder(i) * ctx->gpn, s);
    *evaluated += s->evaluated;
    *feasible += s->feasible;
    return s->top.n > 0 ? s->top.v[0].time_to_train_s : INFINITY;
}

/* Ladder steps the deadline scan starts below its FLOP floor (half a doubling): a margin for the
 * per-layer terms the floor leaves out being cheaper than it assumes, never for the GEMMs. */
#define FLOOR_MARGIN_STEPS 2

/* The ladder index below which no count can meet deadline_s, whatever the layout: every token
 * costs at least 6 x (active non-embedding parameters) GEMM FLOPs (forward and backward of each
 * linear layer, Kaplan et al. 2020, arXiv:2001.08361 section 2.1), which the model runs at no
 * more than the training precision's dense peak x the GPU's large-GEMM efficiency (gemm() in
 * perf.c: shape efficiencies only lower it), spread over N GPUs at best evenly; goodput only
 * lengthens the time.  The scan starts FLOOR_MARGIN_STEPS below that count. */
static int deadline_floor_index(const cfit__ctx *ctx, double deadline_s)
{
    const cfit_plan_request *r = ctx->req;
    double rate = ctx->peak * ctx->g->cal.gemm_efficiency[ctx->prec];
    double flops_per_token = 6.0 * fmax(0.0, cfit_model_active_params(ctx->m) - ctx->emb_params);
    if (!(rate > 0) || !(deadline_s > 0) || r->tokens <= 0)
        return 0;
    double min_nodes = (double)r->tokens * flops_per_token / (rate * deadline_s * ctx->gpn);
    int i = 0, n = ladder_len();
    while (i + 1 < n && ladder(i + 1) <= min_nodes)
        i++;
    return i >= FLOOR_MARGIN_STEPS ? i - FLOOR_MARGIN_STEPS : 0;
}

/* Deadline sizing (docs/sizing.md): the best plan's wall time is not monotone in the count (a count
 * whose factors the batch cannot absorb trains slower than a smaller one, or fits no layout; the
 * MTBI shrinks with the count until restarts dominate), so no count is skipped: every ladder count
 * from the FLOP floor upward, the first whose best plan meets deadline_s (its index in *meets_i).
 * When none does, the fastest count seen (fewer nodes on a tie), *meets_i = -1. */
static int deadline_scan(const cfit__ctx *ctx, cfit_plan *buf, int k, search_state *s, uint64_t *evaluated,
                         uint64_t *feasible, double deadline_s, int *meets_i)
{
    const cfit_plan_request *r = ctx->req;
    int n = ladder_len(), fastest = n - 1;
    double fastest_t = INFINITY;
    *meets_i = -1;
    for (int i = deadline_floor_index(ctx, deadline_s); i < n; i++) {
        double t = time_at(ctx, buf, k, s, evaluated, feasible, i);
        if (r->progress)
            r->progress(r->progress_ctx, -1.0);
        if (t <= deadline_s) {
            *meets_i = i;
            return i;
        }
        if (t < fastest_t)
            fastest = i, fastest_t = t;
    }
    return fastest;
}

/* Budget sizing stops after this many consecutive ladder counts over the budget (two doublings). */
#define BUDGET_STOP 8

/* Budget sizing: the ladder index >= from whose best plan trains fastest within the budget
 * (fewer nodes on a tie), or -1 if none.  Cost does not always grow with the count (a batch
 * that stops dividing, a layout that changes shape), so every count is tried upward from
 * `from` until BUDGET_STOP consecutive counts cost more than the budget or have no plan; a
 * missing price stops at once, as no count can then be priced.  docs/sizing.md states the rule. */
static int budget_scan(const cfit__ctx *ctx, cfit_plan *buf, int k, search_state *s, uint64_t *evaluated,
                       uint64_t *feasible, int from)
{
    const cfit_plan_request *r = ctx->req;
    int best_i = -1, misses = 0, n = ladder_len();
    double best_t = INFINITY;
    for (int i = from; i < n && misses < BUDGET_STOP; i++) {
        state_init(s, buf, k);
        search_count(ctx, ladder(i) * ctx->gpn, s);
        *evaluated += s->evaluated;
        *feasible += s->feasible;
        if (r->progress)
            r->progress(r->progress_ctx, -1.0);
        double usd;
        if (s->top.n > 0 && !plan_cost(r, &s->top.v[0], &usd))
            break;
        if (s->top.n == 0 || usd > r->budget_usd) {
            misses++;
            continue;
        }
        misses = 0;
        if (s->top.v[0].time_to_train_s < best_t) {
            best_t = s->top.v[0].time_to_train_s;
            best_i = i;
        }
    }
    return best_i;
}

/* Plan one GPU type: at the given count, or sized for the deadline or the budget. */
static int plan_gpu(const cfit_plan_request *r, const cfit_gpu *g, cfit_plan *buf, int k,
                    cfit_gpu_result *gr, uint64_t *evaluated, uint64_t *feasible, int *nbuf,
                    cfit_diag *d)
{
    cfit__ctx ctx;
    int rc = cfit__ctx_init(&ctx, r, g, d);
    if (rc)
        return rc;
    ctx.gbs = gbs_of(r);
    const cfit_layout *f = &r->fixed;
    search_state s;
    memset(gr, 0, sizeof *gr);
    gr->gpu = g;
    long fixedN = cfit_plan_fixed_gpus(r);
    if (fixedN) {
        state_init(&s, buf, k);
        if (all_fixed(f)) {
            fixed_layout(&ctx, fixedN, &s);
        } else {
            search_count(&ctx, fixedN, &s);
        }
    } else if (r->days > 0) {
        /* sizing: the smallest ladder count meeting the deadline, scanned upward (deadline_scan) */
        int best_i;
        int final_i = deadline_scan(&ctx, buf, k, &s, evaluated, feasible, r->days * 86400.0, &best_i);
        state_init(&s, buf, k);
        search_count(&ctx, ladder(final_i) * ctx.gpn, &s);
        gr->meets_deadline = best_i >= 0;
    } else {
        /* budget only: the smallest count that fits, then the fastest affordable one above it
         * (without a budget: the largest count with a plan) */
        int fit_i = ladder_search(&ctx, buf, k, &s, evaluated, feasible, INFINITY, -1);
        int final_i = fit_i >= 0 ? fit_i : ladder_len() - 1;
        if (fit_i >= 0) {
            int top_i = r->budget_usd > 0 ? budget_scan(&ctx, buf, k, &s, evaluated, feasible, fit_i)
                                          : ladder_search(&ctx, buf, k, &s, evaluated, feasible, INFINITY, fit_i);
            if (top_i >= 0)
                final_i = top_i;
        }
        state_init(&s, buf, k);
        search_count(&ctx, ladder(final_i) * ctx.gpn, &s);
        gr->meets_deadline = 1;
    }
    if (ctx.topo_rc) {   /* a simulation failed: no plan rests on a factor it did not compute */
        rc = cfit_diag_set(d, ctx.topo_rc, NULL, 0, 0, "%s", ctx.topo_diag.msg);
        cfit__ctx_fini(&ctx);
        return rc;
    }
    *evaluated += s.evaluated;
    *feasible += s.feasible;
    gr->found = s.top.n > 0 && s.top.v[0].fits;
    if (s.top.n > 0)
        gr->best = s.top.v[0];
    if (fixedN)
        gr->meets_deadline = gr->found && (r->tokens <= 0 || r->days <= 0 ||
                                           gr->best.time_to_train_s <= r->days * 86400.0);
    gr->has_cost = gr->found && plan_cost(r, &gr->best, &gr->cost_usd);
    gr->within_budget = gr->found && affordable(r, &gr->best);
    gr->closest = s.closest;
    gr->has_closest = s.has_closest;
    gr->offload_searched = s.offload_searched;
    if (!gr->found && s.top.n == 1 && !s.top.v[0].fits) {   /* fully fixed layout */
        gr->closest = s.top.v[0];
        gr->has_closest = 1;
    }
    *nbuf = s.top.n;
    cfit__ctx_fini(&ctx);
    return CFIT_EOK;
}

static int sizing_mode(const cfit_plan_request *r)
{
    return cfit_plan_fixed_gpus(r) == 0;
}

static int by_gpu_hours(const void *pa, const void *pb)
{
    const cfit_plan *a = pa, *b = pb;
    double ha = a->gpus / (a->tokens_per_s * a->goodput.fraction), hb = b->gpus / (b->tokens_per_s * b->goodput.fraction);
    if (!a->fits != !b->fits)
        return a->fits ? -1 : 1;
    return ha < hb ? -1 : ha > hb ? 1 : 0;
}

/* A plan with its cost, for ranking by cost (qsort has no context argument). */
typedef struct costed {
    cfit_plan p;
    double usd;
} costed;

static int by_cost(const void *pa, const void *pb)
{
    const costed *a = pa, *b = pb;
    return a->usd < b->usd ? -1 : a->usd > b->usd ? 1 : by_gpu_hours(&a->p, &b->p);
}

/* Sort plans by their cost on the request's basis when every one has a price; returns
 * 1 if it did, 0 (plans untouched) otherwise or when out of memory. */
static int sort_by_cost(const cfit_plan_request *r, cfit_plan *all, size_t n)
{
    costed *v = n ? malloc(n * sizeof *v) : NULL;
    int ok = v != NULL;
    for (size_t i = 0; i < n && ok; i++) {
        v[i].p = all[i];
        ok = plan_cost(r, &all[i], &v[i].usd);
    }
    if (ok) {
        qsort(v, n, sizeof *v, by_cost);
        for (size_t i = 0; i < n; i++)
            all[i] = v[i].p;
    }
    free(v);
    return ok;
}

static int by_throughput(const void *pa, const void *pb)
{
    const cfit_plan *a = pa, *b = pb;
    if (!a->fits != !b->fits)
        return a->fits ? -1 : 1;
    return better(a, b) ? -1 : better(b, a) ? 1 : 0;
}

int cfit_plan_search(const cfit_plan_request *r, cfit_plan_result *out, cfit_diag *d)
{
    memset(out, 0, sizeof *out);
    if (!r->model || !r->gpus || r->ngpus == 0 || r->top < 1)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "plan request needs a model, a gpu and top >= 1");
    int rc = cfit_plan_validate(r, d);
    if (rc)
        return rc;
    double t0_s = cfit__now();
    int k = r->top;
    out->per_gpu = calloc(r->ngpus, sizeof *out->per_gpu);
    cfit_plan *all = calloc(r->ngpus * (size_t)k, sizeof *all);
    cfit_plan *buf = calloc((size_t)k, sizeof *buf);
    if (!out->per_gpu || !all || !buf) {
        free(all);
        free(buf);
        cfit_plan_result_fini(out);
        return cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
    }
    size_t nall = 0;
    for (size_t i = 0; i < r->ngpus; i++) {
        int nbuf = 0;
        rc = plan_gpu(r, r->gpus[i], buf, k, &out->per_gpu[i], &out->evaluated, &out->feasible,
                      &nbuf, d);
        if (rc)
            break;
        for (int j = 0; j < nbuf; j++)   /* in sizing mode only plans that meet the goal rank */
            if (!sizing_mode(r) || ((r->days <= 0 || buf[j].time_to_train_s <= r->days * 86400.0) &&
                                    affordable(r, &buf[j])))
                all[nall++] = buf[j];
        if (r->progress)
            r->progress(r->progress_ctx, (double)(i + 1) / r->ngpus);
    }
    free(buf);
    if (rc) {
        free(all);
        cfit_plan_result_fini(out);
        return rc;
    }
    out->ngpu = r->ngpus;
    out->ranked_by_cost = sizing_mode(r) && r->days > 0 && sort_by_cost(r, all, nall);
    if (!out->ranked_by_cost)
        qsort(all, nall, sizeof *all, sizing_mode(r) && r->days > 0 ? by_gpu_hours : by_throughput);
    out->plans = all;
    out->nplans = nall < (size_t)k ? nall : (size_t)k;
    out->seconds = cfit__now() - t0_s;
    out->global_batch = gbs_of(r);
    out->seq_len = seq_of(r);
    return CFIT_EOK;
}

void cfit_plan_result_fini(cfit_plan_result *res)
{
    if (!res)
        return;
    free(res->plans);
    free(res->per_gpu);
    memset(res, 0, sizeof *res);
}

int cfit_plan_evaluate(const cfit_plan_request *r, const cfit_gpu *gpu, const cfit_layout *given,
                       cfit_plan *out, cfit_diag *d)
{
    cfit_layout norm = *given, *l = &norm;   /* ep, etp unset (0, CFIT_SEARCH) = 1: no expert parallelism */
    norm.ep = norm.ep > 1 ? norm.ep : 1;
    norm.etp = norm.etp > 1 ? norm.etp : 1;
    cfit__ctx ctx;
    int rc = cfit__ctx_init(&ctx, r, gpu, d);
    if (rc)
        return rc;
    ctx.gbs = gbs_of(r);
    if (l->recompute == CFIT_RECOMPUTE_MODULES)   /* the module list the layout carries */
        ctx.rec_modules = (unsigned)l->recompute_modules;
    if (!all_fixed(l))
        rc = cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "evaluate needs every layout field");
    else if (ctx.gbs % ((long)l->mbs * l->dp))
        rc = cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                           "global batch %ld is not divisible by mbs x dp = %ld", ctx.gbs,
                           (long)l->mbs * l->dp);
    if (!rc) {
        layer_costs lcs;
        lcs.have = 0;
        ctx.host.offload = r->offload > 0 ? r->offload : 0;
        ctx.job_gpus = (long)l->tp * l->pp * l->dp * l->cp;
        cfit__plan_eval e;
        cost_memory(&ctx, &lcs, l, &e);
        cfit__plan_finish(&e, out);
        cfit_plan_goodput(r, out);
        if (ctx.topo_rc)   /* a simulation failed: no plan rests on a factor it did not compute */
            rc = cfit_diag_set(d, ctx.topo_rc, NULL, 0, 0, "%s", ctx.topo_diag.msg);
    }
    cfit__ctx_fini(&ctx);
    return rc;
}
