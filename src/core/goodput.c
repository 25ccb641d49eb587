/* goodput.c - the failure model, checkpoint size and timing, restarts and Daly's goodput
 * (goodput.h; docs/model.md "Failures, checkpoints and goodput").
 *
 * Rates are catalog entries (data/failures.json, each with its source); the code holds the
 * arithmetic and two sourced constants: the per-rank state a checkpoint carries besides the model
 * (RNG and data-loader position) and the time from an interruption to the relaunched job.
 */
#include "clusterfit/goodput.h"
#include "clusterfit/bom.h"
#include "clusterfit/plan.h"
#include "clusterfit/workload.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* bf16 weights 2 + fp32 master weights 4 + Adam first and second moments 4 + 4 bytes per parameter
 * (Rajbhandari et al., "ZeRO", SC 2020, sec. 3.1: mixed-precision Adam state is 16 B/param, of which
 * the fp16/bf16 gradients, 2, are not saved; Megatron-LM and PyTorch DCP save the other 14). */
#define CKPT_BYTES_PER_PARAM 14.0

/* Per rank: PyTorch's CPU generator state (torch.get_rng_state(): 5056 bytes of MT19937), the CUDA
 * Philox seed and offset (16 bytes), Python's and NumPy's MT19937 states (2,500 bytes each as
 * pickled) and the data loader's sample index (8 bytes); about 10 KB, listed to be complete. */
#define CKPT_RANK_STATE_BYTES (5056.0 + 16.0 + 2500.0 + 2500.0 + 8.0)

/* From an interruption to the relaunched job running again, before the checkpoint is read:
 * the median automatic-retry interval, 11 min (IQR 10-11 min), measured over 12 retry chains
 * (73 attempts) on a 504-GPU B200 production cluster: "From Detection to Recovery: Operational
 * Analysis on LLM Pre-Training with 504 GPUs", arXiv:2605.09370 (SKT, Upstage, Lablup, NVIDIA
 * Korea, VAST Data).  It covers detection (an XID error or the collective watchdog), draining
 * and rescheduling onto healthy nodes, and process and communicator start-up. */
#define DETECT_RESCHEDULE_S 660.0

#define DEFAULT_WINDOW_S 300.0   /* the bill of materials' default (cfit_bom_options_init) */

double cfit_goodput_young_s(double write_s, double mtbi_s)
{
    return sqrt(2.0 * write_s * mtbi_s);
}

double cfit_goodput_daly_s(double write_s, double mtbi_s)
{
    if (!(write_s < 2.0 * mtbi_s))
        return mtbi_s;
    double x = write_s / (2.0 * mtbi_s);
    return sqrt(2.0 * write_s * mtbi_s) * (1.0 + sqrt(x) / 3.0 + x / 9.0) - write_s;
}

double cfit_goodput_fraction(double interval_s, double write_s, double restart_s, double mtbi_s)
{
    if (!(interval_s > 0))
        return 0.0;
    if (!isfinite(mtbi_s))
        return interval_s / (interval_s + write_s);
    double wall_per_work = mtbi_s * exp(restart_s / mtbi_s) * expm1((interval_s + write_s) / mtbi_s) / interval_s;
    return wall_per_work > 1.0 ? 1.0 / wall_per_work : 1.0;
}

/* Units of a failure entry in a job: GPUs, nodes or NICs. */
static double units_of(const cfit_failure *f, long gpus, long nodes, int nics)
{
    switch (f->per) {
    case CFIT_PER_NODE: return (double)nodes;
    case CFIT_PER_NIC: return (double)nodes * nics;
    default: return (double)gpus;
    }
}

int cfit_failure_rates(const cfit_catalog *c, const cfit_gpu *gpu, long gpus, long nodes, int nics,
                       double rate_per_hour[CFIT_FAIL_CLASS_COUNT])
{
    memset(rate_per_hour, 0, CFIT_FAIL_CLASS_COUNT * sizeof *rate_per_hour);
    if (!c)
        return 0;
    size_t n = cfit_catalog_failure_count(c);
    int arch = CFIT_FAILURE_ANY_ARCH;
    for (size_t i = 0; i < n; i++)
        if (cfit_catalog_failure_at(c, i)->arch == (int)gpu->arch)
            arch = (int)gpu->arch;
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        const cfit_failure *f = cfit_catalog_failure_at(c, i);
        if (f->arch != arch || f->klass < 0 || f->klass >= CFIT_FAIL_CLASS_COUNT)
            continue;
        rate_per_hour[f->klass] += f->per_hour * units_of(f, gpus, nodes, nics);
        any = 1;
    }
    return any;
}

double cfit_checkpoint_bytes(const cfit_model *m, long gpus)
{
    return cfit_model_params(m) * CKPT_BYTES_PER_PARAM + (double)gpus * CKPT_RANK_STATE_BYTES;
}

static double unexpected_per_hour(const double *rate)
{
    double sum = 0;
    for (int k = 0; k < CFIT_FAIL_CLASS_COUNT; k++)
        if (k != CFIT_FAIL_PLANNED)
            sum += rate[k];
    return sum;
}

/* The storage tier the bill of materials buys for the plan, and the rates a checkpoint moves at:
 * the tier's units, capped by the nodes' scale-out links.  Without a shared tier in the catalog the
 * write takes the sizing window. */
static void storage_rates(const cfit_plan_request *r, const cfit_plan *p, cfit_goodput *g)
{
    cfit_bom_options o;
    cfit_bom_options_init(&o);
    if (r->goodput.checkpoint_window_s > 0)
        o.checkpoint_window_s = r->goodput.checkpoint_window_s;
    cfit_bom b;
    cfit_bom_storage(r->catalog, r->model, p, &o, &b);
    int pick = b.storage_choice;
    for (int i = 0; pick < 0 && i < b.nstorage; i++)   /* none priced: the fastest shared tier */
        if (!b.storage[i].s->per_node)
            pick = i;
    int nics = r->nics_per_node > 0 ? r->nics_per_node : p->node->nics_per_node;
    double link = (double)p->nodes * nics * p->fabric->bw_bytes_per_s;
    if (pick < 0) {
        g->write_bytes_per_s = g->read_bytes_per_s = g->checkpoint_bytes / o.checkpoint_window_s;
        return;
    }
    const cfit_storage_fit *f = &b.storage[pick];
    snprintf(g->storage, sizeof g->storage, "%s", f->s->name);
    g->storage_units = f->units;
    g->write_bytes_per_s = fmin((double)f->units * f->s->write_bytes_per_s, link);
    g->read_bytes_per_s = fmin((double)f->units * f->s->read_bytes_per_s, link);
}

/* The job's failure rates: the catalog's, or --mtbf's per-GPU figure for the unexpected ones. */
static int job_rates(const cfit_plan_request *r, const cfit_plan *p, cfit_goodput *g)
{
    int nics = r->nics_per_node > 0 ? r->nics_per_node : p->node->nics_per_node;
    int have = cfit_failure_rates(r->catalog, p->gpu, p->gpus, p->nodes, nics, g->rate_per_hour);
    if (r->goodput.mtbf_gpu_hours > 0) {
        double planned = g->rate_per_hour[CFIT_FAIL_PLANNED];
        memset(g->rate_per_hour, 0, sizeof g->rate_per_hour);
        g->rate_per_hour[CFIT_FAIL_GPU] = (double)p->gpus / r->goodput.mtbf_gpu_hours;
        g->rate_per_hour[CFIT_FAIL_PLANNED] = planned;
        have = 1;
    }
    double u = unexpected_per_hour(g->rate_per_hour);
    g->mtbi_hours = u > 0 ? 1.0 / u : 0.0;
    return have && u > 0;
}

/* Checkpoint timing, restart and interval (overrides first). */
static void timing(const cfit_plan_request *r, const cfit_plan *p, cfit_goodput *g)
{
    g->checkpoint_bytes = cfit_checkpoint_bytes(r->model, p->gpus);
    /* LoRA / QLoRA checkpoint their adapters only: the frozen base weights are not saved */
    g->checkpoint_bytes -= (cfit_model_params(r->model) - cfit_finetune_trainable_params(r)) * CKPT_BYTES_PER_PARAM;
    storage_rates(r, p, g);
    g->checkpoint_write_s = g->checkpoint_bytes / g->write_bytes_per_s;
    g->checkpoint_read_s = g->checkpoint_bytes / g->read_bytes_per_s;
    g->detect_reschedule_s = DETECT_RESCHEDULE_S;
    g->restart_s = r->goodput.restart_s > 0 ? r->goodput.restart_s : DETECT_RESCHEDULE_S + g->checkpoint_read_s;
    double mtbi_s = g->mtbi_hours * 3600.0;
    g->young_interval_s = cfit_goodput_young_s(g->checkpoint_write_s, mtbi_s);
    g->daly_interval_s = cfit_goodput_daly_s(g->checkpoint_write_s, mtbi_s);
    g->checkpoint_interval_s = r->goodput.checkpoint_every_s > 0 ? r->goodput.checkpoint_every_s : g->daly_interval_s;
}

/* Planned stops cost a final checkpoint and a restart each, without rework. */
static double with_planned(double fraction, double planned_per_s, double stop_s)
{
    double busy = 1.0 - planned_per_s * stop_s;
    return busy > 1e-6 ? fraction * busy : fraction * 1e-6;
}

void cfit_plan_goodput(const cfit_plan_request *r, cfit_plan *p)
{
    cfit_goodput *g = &p->goodput;
    memset(g, 0, sizeof *g);
    g->fraction = 1.0;
    g->ideal_time_s = r->tokens > 0 && p->tokens_per_s > 0 ? r->tokens / p->tokens_per_s : 0.0;
    g->modelled = r->catalog && r->model && job_rates(r, p, g);
    if (g->modelled) {
        timing(r, p, g);
        double f = cfit_goodput_fraction(g->checkpoint_interval_s, g->checkpoint_write_s, g->restart_s,
                                         g->mtbi_hours * 3600.0);
        g->fraction = with_planned(f, g->rate_per_hour[CFIT_FAIL_PLANNED] / 3600.0,
                                   g->restart_s + g->checkpoint_write_s);
    }
    double wall_s = g->ideal_time_s / g->fraction;
    g->expected_interruptions = wall_s / 3600.0 * unexpected_per_hour(g->rate_per_hour);
    g->planned_interruptions = wall_s / 3600.0 * g->rate_per_hour[CFIT_FAIL_PLANNED];
    g->lost_gpu_hours = (wall_s - g->ideal_time_s) * (double)p->gpus / 3600.0;
    p->time_to_train_s = wall_s;
}
