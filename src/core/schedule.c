/* schedule.c - pipeline schedules: names, the rules each one imposes on a layout, and its bubble,
 * in-flight activations and parameter copies (docs/model.md §5.8 derives every term).
 *
 * Sources: 1F1B and interleaved 1F1B - Narayanan et al., SC21 (arXiv 2104.04473) §2.2;
 * ZB-H1, ZB-H2 and ZB-V - Qi et al., "Zero Bubble Pipeline Parallelism" (arXiv 2401.10241) §2-§6
 * (Table 1: ZB-H2's bubble (p-1)(T_F + T_B - 2 T_W), its memory (2p - 1) M_B);
 * InterleavedZeroBubble - torch.distributed.pipelining's ScheduleInterleavedZeroBubble, torchtitan's
 * name for it ("implementing the ZB1P schedule in the paper ... supports multiple stages per rank");
 * DualPipe and DualPipeV - DeepSeek-V3 technical report (arXiv 2412.19437) §3.2.1, Table 2, and
 * github.com/deepseek-ai/DualPipe (README's table; dualpipe.py and dualpipev.py assert their
 * micro-batch rules).
 */
#include "clusterfit/schedule.h"
#include "core/perf.h"

#include <stdio.h>
#include <string.h>

static const char *const names[CFIT_SCHED_COUNT] = {"default", "1f1b", "interleaved", "zb-h1", "zb-v", "dualpipe",
                                                    "dualpipev", "zb-h2", "interleaved-zb"};

const char *cfit_schedule_name(cfit_schedule s)
{
    return s >= 0 && s < CFIT_SCHED_COUNT ? names[s] : "?";
}

int cfit_schedule_parse(const char *name, cfit_schedule *out, cfit_diag *d)
{
    for (int i = CFIT_SCHED_1F1B; i < CFIT_SCHED_COUNT; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (cfit_schedule)i;
            return CFIT_EOK;
        }
    const char *near = cfit_suggest(name, names + 1, CFIT_SCHED_COUNT - 1);
    if (near)
        return cfit_diag_set(d, CFIT_EUNKNOWN, NULL, 0, 0, "unknown schedule '%s' (did you mean '%s'?)", name, near);
    return cfit_diag_set(d, CFIT_EUNKNOWN, NULL, 0, 0,
                         "unknown schedule '%s' (expected 1f1b, interleaved, zb-h1, zb-v, dualpipe, dualpipev, zb-h2 or "
                         "interleaved-zb)", name);
}

const char *cfit_schedule_list(unsigned mask, char *buf, size_t n)
{
    size_t used = 0;
    if (n)
        buf[0] = '\0';
    for (int i = CFIT_SCHED_1F1B; i < CFIT_SCHED_COUNT && used < n; i++)
        if (mask & CFIT_SCHED_BIT(i)) {
            int w = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", names[i]);
            used += w > 0 ? (size_t)w : 0;
        }
    if (n && !buf[0])
        snprintf(buf, n, "none");
    return buf;
}

cfit_schedule cfit_layout_schedule(const cfit_layout *l)
{
    int s = l->schedule;
    if (s <= CFIT_SCHED_DEFAULT || s >= CFIT_SCHED_COUNT)
        return l->vp > 1 ? CFIT_SCHED_INTERLEAVED : CFIT_SCHED_1F1B;
    return (cfit_schedule)s;
}

const char *cfit_layout_schedule_name(const cfit_layout *l)
{
    return l->pp > 1 ? names[cfit_layout_schedule(l)] : "none";
}

int cfit_schedule_chunks(cfit_schedule s)
{
    switch (s) {
    case CFIT_SCHED_INTERLEAVED: case CFIT_SCHED_INTERLEAVED_ZB: return 0;
    case CFIT_SCHED_ZB_V: case CFIT_SCHED_DUALPIPE: case CFIT_SCHED_DUALPIPEV: return 2;
    default: return 1;
    }
}

/* The micro-batch rules: interleaving needs m a multiple of pp (Megatron-LM schedules.py);
 * DualPipe an even pp and an even m >= 2 pp, DualPipeV m >= 2 pp (their step() asserts); ZB-V
 * m >= pp, the fewest its V fills (Qi et al. §6); torch.distributed.pipelining's interleaved
 * schedules run rounds of max(1, m / pp) and need m a multiple of that (ScheduleInterleaved1F1B's
 * docstring; ScheduleInterleavedZeroBubble computes the same number_of_rounds). */
static int micro_batches_ok(cfit_schedule s, int pp, long m, char *why, size_t n)
{
    const char *rule = NULL;
    long rounds = m / pp > 1 ? m / pp : 1;
    if (s == CFIT_SCHED_INTERLEAVED && m % pp)
        rule = "interleaved 1F1B needs the micro-batches per step to be a multiple of pp";
    else if (s == CFIT_SCHED_INTERLEAVED_ZB && m % rounds)
        rule = "interleaved-zb needs the micro-batches per step to be a multiple of its rounds, max(1, m / pp)";
    else if ((s == CFIT_SCHED_DUALPIPE || s == CFIT_SCHED_DUALPIPEV) && m < 2L * pp)
        rule = "DualPipe and DualPipeV need at least 2 x pp micro-batches per step";
    else if (s == CFIT_SCHED_DUALPIPE && m % 2)
        rule = "DualPipe needs an even number of micro-batches per step (half run each way)";
    else if (s == CFIT_SCHED_ZB_V && m < pp)
        rule = "ZB-V needs at least pp micro-batches per step";
    if (rule && why)
        snprintf(why, n, "%s (pp %d, %ld micro-batches)", rule, pp, m);
    return rule == NULL;
}

int cfit_schedule_check(cfit_schedule s, int pp, int vp, long m, int chunks_max, char *why, size_t n)
{
    int chunks = cfit_schedule_chunks(s);
    if (pp < 2) {
        if (why)
            snprintf(why, n, "--schedule %s needs --pp greater than 1", cfit_schedule_name(s));
        return 0;
    }
    if (chunks ? vp != chunks : vp < 2) {
        if (why && chunks)
            snprintf(why, n, "--schedule %s runs %d model chunk%s per device (--vp %d), got --vp %d",
                     cfit_schedule_name(s), chunks, chunks == 1 ? "" : "s", chunks, vp);
        else if (why)
            snprintf(why, n, "--schedule %s needs --vp 2 or more (model chunks per device), got --vp %d",
                     cfit_schedule_name(s), vp);
        return 0;
    }
    if (s == CFIT_SCHED_DUALPIPE && pp % 2) {
        if (why)
            snprintf(why, n, "--schedule dualpipe needs an even --pp (its two directions pair stages), got %d", pp);
        return 0;
    }
    if ((long)pp * vp > chunks_max) {
        if (why)
            snprintf(why, n, "--pp %d x %d chunks per device = %ld chunks is more than the model's %d", pp, vp,
                     (long)pp * vp, chunks_max);
        return 0;
    }
    return m <= 0 || micro_batches_ok(s, pp, m, why, n);
}

static double nonneg(double x)
{
    return x > 0 ? x : 0.0;
}

/* The bubble of one step (docs/model.md §5.8), F + B = t_mb_s, B = b_s (full backward), W = w_s,
 * in the DeepSeek-V3 report's Table 2 notation; chunk times are half the device's for the V
 * shapes and DualPipeV (two chunks of half a stage each). */
double cfit_schedule_bubble_s(cfit_schedule s, int p, int vp, double t_mb_s, double b_s, double w_s)
{
    if (p <= 1)
        return 0.0;
    switch (s) {
    case CFIT_SCHED_INTERLEAVED: return (p - 1.0) / vp * t_mb_s;
    case CFIT_SCHED_ZB_H1: return (p - 1.0) * nonneg(t_mb_s - 2.0 * w_s);
    case CFIT_SCHED_ZB_H2: return (p - 1.0) * nonneg(t_mb_s - 3.0 * w_s);             /* F + B_input - 2W */
    case CFIT_SCHED_INTERLEAVED_ZB: return (p - 1.0) / vp * nonneg(t_mb_s - 2.0 * w_s);   /* ZB1P's slots, 1/v each */
    case CFIT_SCHED_ZB_V: return (p - 1.0) * nonneg(t_mb_s - 3.0 * w_s) / 2.0;
    case CFIT_SCHED_DUALPIPE: return (p / 2.0 - 1.0) * nonneg(t_mb_s + b_s - 3.0 * w_s);
    case CFIT_SCHED_DUALPIPEV: return (p - 1.0) * nonneg(t_mb_s + b_s - 3.0 * w_s) / 2.0;
    default: return (p - 1.0) * t_mb_s;
    }
}

/* Micro-batches of one stage's activations the first (stage 0) or last device keeps: 1F1B and
 * ZB-H1 p - stage (Narayanan §2.2; Qi §2.1: ZB-H1 keeps 1F1B's), interleaving x (1 + (p-1)/(p v))
 * (Korthikanti et al. 2022 §4.2.3); ZB-V p on every device (Qi §6), DualPipe p + 1 and DualPipeV
 * p + 1/2 (Table 2's PP + 1 chunks, a DualPipeV chunk half a stage); ZB-H2 2p - 1 on the first
 * device (Qi Table 1), ramping down to 1 on the last as 1F1B's (an assumption: Table 1 gives the
 * peak only); interleaved-zb interleaving's (ZB1P keeps 1F1B's memory, Qi §2.1); never more than m. */
static double inflight(cfit_schedule s, int p, int vp, long m, int last)
{
    double k;
    switch (s) {
    case CFIT_SCHED_ZB_V: k = p; break;
    case CFIT_SCHED_DUALPIPE: k = p + 1.0; break;
    case CFIT_SCHED_DUALPIPEV: k = p + 0.5; break;
    case CFIT_SCHED_ZB_H2: k = last ? 1.0 : 2.0 * p - 1.0; break;
    default: k = last ? 1.0 : p; break;
    }
    k = k < (double)m ? k : (double)m;
    if (s == CFIT_SCHED_INTERLEAVED || s == CFIT_SCHED_INTERLEAVED_ZB)
        k *= 1.0 + (p - 1.0) / ((double)p * vp);
    return k;
}

int cfit_schedule_ends_together(cfit_schedule s)
{
    return s == CFIT_SCHED_ZB_V || s == CFIT_SCHED_DUALPIPE || s == CFIT_SCHED_DUALPIPEV;
}

void cfit_schedule_terms_of(cfit_schedule s, int pp, int vp, long m, cfit_schedule_terms *out)
{
    memset(out, 0, sizeof *out);
    out->param_copies = s == CFIT_SCHED_DUALPIPE ? 2 : 1;
    out->sends = s == CFIT_SCHED_DUALPIPE ? 1 : (vp > 1 ? vp : 1);
    out->ends_together = pp > 1 && cfit_schedule_ends_together(s);
    out->inflight_first = pp > 1 ? inflight(s, pp, vp, m, 0) : 1.0;
    out->inflight_last = pp > 1 ? inflight(s, pp, vp, m, 1) : 1.0;
}

/* ---- the request's pipeline rules (cfit_plan_validate) ---- */

const cfit_framework *cfit__plan_framework(const cfit_plan_request *r)
{
    if (r->framework || !r->catalog)
        return r->framework;
    return cfit_catalog_framework(r->catalog, "megatron-core", NULL);
}

/* ZeRO stages above the framework's zero_with_pp shard what pipeline stages accumulate. */
static int validate_zero(const cfit_framework *fw, const cfit_layout *f, cfit_diag *d)
{
    int max = fw ? fw->zero_with_pp : 1;
    if (f->zero <= max || f->pp <= 1)
        return CFIT_EOK;
    return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                         "--zero %d cannot be combined with --pp %d: framework '%s' combines at most ZeRO-%d with "
                         "pipeline parallelism (ZeRO-2/3 shard the gradients pipeline stages accumulate)",
                         f->zero, f->pp, fw ? fw->name : "megatron-core", max);
}

/* A fixed schedule the framework runs, on a fixed pp, vp and micro-batch count where given. */
static int validate_fixed(const cfit_framework *fw, const cfit_layout *f, long m, int chunks_max, cfit_diag *d)
{
    unsigned mask = fw ? fw->schedules : CFIT_SCHED_DEFAULT_MASK;
    char list[128], why[256];
    cfit_schedule s = (cfit_schedule)f->schedule;
    if (!(mask & CFIT_SCHED_BIT(s)))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "framework '%s' does not run --schedule %s (it runs: %s)",
                             fw ? fw->name : "megatron-core", cfit_schedule_name(s), cfit_schedule_list(mask, list, sizeof list));
    int pp = f->pp > 0 ? f->pp : 2, chunks = cfit_schedule_chunks(s);
    int vp = f->vp > 0 ? f->vp : (chunks ? chunks : 2);
    if (f->pp > 0 || f->vp > 0) {
        if (!cfit_schedule_check(s, pp, vp, f->pp > 0 ? m : 0, f->pp > 0 ? chunks_max : 1 << 30, why, sizeof why))
            return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "%s", why);
    }
    return CFIT_EOK;
}

int cfit__schedule_validate(const cfit_plan_request *r, long gbs, cfit_diag *d)
{
    const cfit_framework *fw = cfit__plan_framework(r);
    const cfit_layout *f = &r->fixed;
    if (fw && !fw->cuda_graphs && r->cuda_graphs != CFIT_GRAPHS_NONE)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--cuda-graphs %s: framework '%s' replays no CUDA graphs (its entry has no cuda_graphs; "
                             "the Megatron-Core entries do)", cfit_cuda_graphs_name((cfit_cuda_graphs)r->cuda_graphs),
                             fw->name);
    if (fw && fw->schedules == 0 && f->pp > 1)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--pp %d: framework '%s' runs no pipeline parallelism (its entry lists no schedules)",
                             f->pp, fw->name);
    int rc = validate_zero(fw, f, d);
    if (rc)
        return rc;
    if (f->schedule <= CFIT_SCHED_DEFAULT)
        return CFIT_EOK;
    if (f->schedule >= CFIT_SCHED_COUNT)
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "schedule %d is out of range", f->schedule);
    long m = f->mbs > 0 && f->dp > 0 ? gbs / ((long)f->mbs * f->dp) : 0;
    return validate_fixed(fw, f, m, r->model->layers + (f->vp > 0 ? 2 : 0), d);
}
