/* goodput.h - failures, checkpoints and restarts: the share of a training run that makes progress.
 *
 * A job of G GPUs on N nodes is interrupted at the sum of its components' rates (catalog "failures"
 * entries, per GPU-, node- or NIC-hour: data/failures.json), so its mean time between unexpected
 * interruptions is M = 1 / sum(rate x units).  It writes a checkpoint of its sharded training state
 * (every rank its shard, all at once) to the storage tier the bill of materials buys (bom.h) in
 * delta seconds, every tau seconds of computation, and after an interruption spends R seconds
 * restarting (detection and rescheduling, then reading the checkpoint back).  Daly's model
 * (J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps",
 * FGCS 22(3), 2006) gives the wall time per unit of work, M e^(R/M) (e^((tau + delta)/M) - 1) / tau;
 * its inverse is the goodput fraction.  The default interval is Daly's higher-order optimum, which
 * refines Young's first-order sqrt(2 delta M) (J. W. Young, "A first order approximation to the
 * optimum checkpoint interval", CACM 17(9), 1974).  docs/model.md derives every term.
 */
#ifndef CLUSTERFIT_GOODPUT_H
#define CLUSTERFIT_GOODPUT_H

#include "clusterfit/catalog.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the request overrides; 0 = modelled. */
typedef struct cfit_goodput_options {
    double mtbf_gpu_hours;       /* --mtbf: hours between interruptions of one GPU (the job's MTBI is
                                    this / GPUs); replaces the failure entries' unexpected rates */
    double checkpoint_every_s;   /* --checkpoint-every: compute time between checkpoints; 0 = Daly's optimum */
    double restart_s;            /* --restart-time: the whole restart; 0 = detection + rescheduling + read */
    double checkpoint_window_s;  /* the bill of materials' storage sizing window (--checkpoint-window);
                                    0 = its default, 300 s */
} cfit_goodput_options;

typedef struct cfit_goodput {
    int modelled;                    /* 0: no catalog or no failure entries for the GPU: fraction 1 */
    double rate_per_hour[CFIT_FAIL_CLASS_COUNT]; /* the job's interruptions per hour by class */
    double mtbi_hours;               /* mean time between unexpected interruptions (planned excluded) */
    double checkpoint_bytes;         /* weights + fp32 master + Adam moments + per-rank RNG and loader state */
    char storage[CFIT_NAME_MAX];     /* the storage tier written to; "" = none in the catalog */
    long storage_units;
    double write_bytes_per_s;        /* min(tier's units x write rate, nodes x NICs x fabric rate) */
    double read_bytes_per_s;
    double checkpoint_write_s;       /* delta */
    double checkpoint_read_s;
    double detect_reschedule_s;      /* part of the restart before the read */
    double restart_s;                /* R */
    double young_interval_s;         /* sqrt(2 delta M) */
    double daly_interval_s;          /* Daly's higher-order optimum */
    double checkpoint_interval_s;    /* tau used: --checkpoint-every or Daly's */
    double fraction;                 /* goodput: ideal time / wall time, in (0, 1] */
    double ideal_time_s;             /* tokens / tokens per second; 0 without tokens */
    double expected_interruptions;   /* unexpected, over the wall time */
    double planned_interruptions;
    double lost_gpu_hours;           /* (wall - ideal) x GPUs / 3600 */
} cfit_goodput;

/* Young's interval sqrt(2 delta M). */
CFIT_API double cfit_goodput_young_s(double write_s, double mtbi_s);
/* Daly's: sqrt(2 delta M) [1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9] - delta for delta < 2M, else M. */
CFIT_API double cfit_goodput_daly_s(double write_s, double mtbi_s);
/* Daly's goodput fraction tau / (M e^(R/M) (e^((tau + delta)/M) - 1)) (1 when M is infinite). */
CFIT_API double cfit_goodput_fraction(double interval_s, double write_s, double restart_s, double mtbi_s);

/* The job's interruptions per hour by class for gpu on gpus GPUs, nodes nodes of nics NICs each
 * (the GPU's arch's failure entries, else those of arch "any").  Returns 0 when the catalog has
 * none (rates all 0), else 1. */
CFIT_API int cfit_failure_rates(const cfit_catalog *c, const cfit_gpu *gpu, long gpus, long nodes, int nics,
                       double rate_per_hour[CFIT_FAIL_CLASS_COUNT]);

/* Bytes of one checkpoint of a model's training state on gpus ranks. */
CFIT_API double cfit_checkpoint_bytes(const cfit_model *m, long gpus);

#ifdef __cplusplus
}
#endif
#endif
