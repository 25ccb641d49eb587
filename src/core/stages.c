/* stages.c - pipeline stages of a model that mixes dense and MoE layers (docs/model.md §5.8).
 *
 * DeepSeek-V3's first 3 layers are dense (first_k_dense_replace), Llama 4 Maverick alternates:
 * a stage's time and memory depend on which layers it holds.  The mean layer (perf.c) carries
 * what an MoE layer adds over a dense one (cfit__moe_delta); a stage's mean layer is the model's
 * moved to the stage's own MoE share.  The split itself is one Megatron-Core can run: the first
 * and last stages take any count (--decoder-first/last-pipeline-num-layers, each > 0) and the
 * middle stages an equal one (TransformerConfig.__post_init__, "Uneven PP").  A model with MTP
 * modules is split the same way, its last stage running them (docs/model.md §5.4).  With an
 * interleaved schedule (vp > 1) the split is each device's total over its vp chunks, on a
 * framework that takes a layout string (pipeline_layout: Megatron-Core's
 * --pipeline-model-parallel-layout, which emit.c writes; any chunk sizes, the embedding first, MTP
 * and loss in the last chunk); elsewhere interleaved stages keep the default split.
 */
#include "core/perf.h"

#include <stdlib.h>

int cfit__moe_prefix_init(cfit__ctx *ctx)
{
    const cfit_model *m = ctx->m;
    int L = m->layers, moe = cfit_model_moe_layers(m);
    ctx->moe_prefix = NULL;
    if (!ctx->moe || moe == L)
        return CFIT_EOK;
    ctx->moe_prefix = malloc(((size_t)L + 1) * sizeof *ctx->moe_prefix);
    if (!ctx->moe_prefix)
        return CFIT_ENOMEM;
    ctx->moe_prefix[0] = 0;
    for (int i = 0; i < L; i++)
        ctx->moe_prefix[i + 1] = ctx->moe_prefix[i] + cfit_model_layer_is_moe(m, i);
    return CFIT_EOK;
}

int cfit__moe_layers_in(const cfit__ctx *ctx, int from, int n)
{
    if (!ctx->moe)
        return 0;
    if (!ctx->moe_prefix)
        return n;   /* every layer is MoE */
    int L = ctx->m->layers, to = from + n;
    from = from < 0 ? 0 : from > L ? L : from;
    to = to < from ? from : to > L ? L : to;
    return ctx->moe_prefix[to] - ctx->moe_prefix[from];
}

int cfit__split_balanced(const cfit__ctx *ctx)
{
    return ctx->moe_prefix != NULL || ctx->mtp > 0;
}

int cfit__split_by_layout(const cfit__ctx *ctx)
{
    return ctx->fw->pipeline_layout && cfit__split_balanced(ctx);
}

void cfit__layer_cost_mixed(const cfit__ctx *ctx, const cfit__layer_cost *lc, double moe_share, cfit__layer_cost *out)
{
    *out = *lc;
    double x = moe_share - ctx->moe_frac;
    if (!ctx->moe_prefix || x == 0.0)
        return;
    const cfit__moe_delta *d = &lc->moe_delta;
    out->fwd_s += x * d->fwd_s;
    out->bwd_s += x * d->bwd_s;
    out->wgrad_s += x * d->wgrad_s;
    out->cb_s += x * d->cb_s;
    out->mb_s += x * d->mb_s;
    out->tp_s += x * d->tp_s;
    out->ep_s += x * d->ep_s;
    out->act_bytes += x * d->act_bytes;
    out->act_off_bytes += x * d->act_off_bytes;
    out->host_pass_s += x * d->host_pass_s;
    out->host_s = 0.0;
    double gpu = cfit__layer_time_s(out);
    out->host_s = out->host_pass_s > gpu ? out->host_pass_s - gpu : 0.0;
}

/* A stage's time per micro-batch from its layer counts: a layer takes its GPU time or the host's,
 * whichever is longer, and the GPU and host times move linearly with the MoE share (g0, h0 all
 * dense; g1, h1 all MoE), so n layers of which moe are MoE take
 * max(n g0 + moe (g1 - g0), n h0 + moe (h1 - h0)). */
typedef struct stage_rate {
    double g0, g1, h0, h1, logits_s;
} stage_rate;

static void rate_of(const cfit__ctx *ctx, const cfit__layer_cost *lc, stage_rate *r)
{
    cfit__layer_cost c;
    cfit__layer_cost_mixed(ctx, lc, 0.0, &c);
    c.host_s = 0.0;
    r->g0 = cfit__layer_time_s(&c);
    r->h0 = c.host_pass_s;
    cfit__layer_cost_mixed(ctx, lc, 1.0, &c);
    c.host_s = 0.0;
    r->g1 = cfit__layer_time_s(&c);
    r->h1 = c.host_pass_s;
    r->logits_s = lc->logits_s;
}

static double stage_s(const cfit__ctx *ctx, const stage_rate *r, int from, int n, int *moe)
{
    *moe = cfit__moe_layers_in(ctx, from, n);
    double gpu = n * r->g0 + *moe * (r->g1 - r->g0), host = n * r->h0 + *moe * (r->h1 - r->h0);
    return gpu > host ? gpu : host;
}

/* Whether the model's MoE layers are one run to its end (DeepSeek-V3's dense first layers, or
 * none): then a window's MoE count never falls as it moves later. */
static int moe_suffix(const cfit_model *m)
{
    return (m->moe_layer_step <= 1 && m->dense_layers.n == 0) || !cfit_model_is_moe(m);
}

/* The slowest middle stage of p - 2 stages of mid layers after `first` layers.  A stage's time is
 * the larger of two lines in its MoE count, so over stages whose counts only grow the slowest is
 * the first or the last of them. */
static double middle_s(const cfit__ctx *ctx, const stage_rate *r, int first, int mid, int p, int *moe_max)
{
    double worst = 0.0;
    *moe_max = 0;
    if (moe_suffix(ctx->m)) {
        int moe, last_moe;
        double t0 = stage_s(ctx, r, first, mid, &moe), t1 = stage_s(ctx, r, first + (p - 3) * mid, mid, &last_moe);
        *moe_max = last_moe > moe ? last_moe : moe;
        return t0 > t1 ? t0 : t1;
    }
    for (int k = 0; k < p - 2; k++) {
        int moe;
        double t = stage_s(ctx, r, first + k * mid, mid, &moe);
        worst = t > worst ? t : worst;
        *moe_max = moe > *moe_max ? moe : *moe_max;
    }
    return worst;
}

/* One candidate split: its slowest stage; kept in *best when faster (ties: nearer even). */
static void try_split(const cfit__ctx *ctx, const stage_rate *r, int p, int first, int mid, int last,
                      cfit__split *best, double *best_s)
{
    cfit__split s = {1, first, mid, last, 0, 0, 0};
    double t = stage_s(ctx, r, 0, first, &s.moe_first);
    double tl = stage_s(ctx, r, ctx->m->layers - last, last, &s.moe_last) + r->logits_s;
    double tm = p > 2 ? middle_s(ctx, r, first, mid, p, &s.moe_mid) : 0.0;
    t = tl > t ? tl : t;
    t = tm > t ? tm : t;
    int skew = abs(first - mid) + abs(last - mid), best_skew = abs(best->first - best->mid) + abs(best->last - best->mid);
    if (*best_s < 0 || t < *best_s * (1.0 - 1e-9) || (t <= *best_s * (1.0 + 1e-9) && skew < best_skew)) {
        *best = s;
        *best_s = t;
    }
}

/* The memo slot of (p, rates): FNV-1a over their bytes. */
static unsigned split_slot(int p, const stage_rate *r)
{
    double key[6] = {(double)p, r->g0, r->g1, r->h0, r->h1, r->logits_s};
    const unsigned char *b = (const unsigned char *)key;
    unsigned h = 2166136261u;
    for (size_t i = 0; i < sizeof key; i++)
        h = (h ^ b[i]) * 16777619u;
    return h & (CFIT__SPLIT_MEMO - 1);
}

void cfit__split_choose(const cfit__ctx *ctx, const cfit__layer_cost *lc, int p, int vp, int ends_together, cfit__split *s)
{
    int L = ctx->m->layers;
    *s = (cfit__split){0, 0, 0, 0, 0, 0, 0};
    /* with vp > 1 the split is each device's total, its chunks a pipeline layout's */
    if (!cfit__split_balanced(ctx) || p < 2 || ends_together || L < p || (vp > 1 && !cfit__split_by_layout(ctx)))
        return;
    stage_rate r;
    rate_of(ctx, lc, &r);
    /* the search costs many layouts of a few layer costs: the answers are memoised by their rates */
    struct cfit__split_memo *memo = &((cfit__ctx *)ctx)->split_memo[split_slot(p, &r)];
    if (memo->have && memo->p == p && memo->g0 == r.g0 && memo->g1 == r.g1 && memo->h0 == r.h0 && memo->h1 == r.h1 &&
        memo->logits_s == r.logits_s) {
        *s = memo->split;
        return;
    }
    double best_s = -1.0;
    if (p == 2) {   /* no middle stage; "even" is half each */
        for (int f = 1; f < L; f++)
            try_split(ctx, &r, p, f, L / 2, L - f, s, &best_s);
    } else {        /* middle stages of about L / p layers; the ends take the rest (each at least one) */
        int lo = L / p - 1 > 1 ? L / p - 1 : 1, hi = (L + p - 1) / p;
        for (int mid = lo; mid <= hi; mid++) {
            int rest = L - (p - 2) * mid;
            for (int f = 1; f < rest; f++)
                try_split(ctx, &r, p, f, mid, rest - f, s, &best_s);
        }
    }
    *memo = (struct cfit__split_memo){1, p, r.g0, r.g1, r.h0, r.h1, r.logits_s, *s};
}
