/* schedule.h - pipeline-parallel schedules: their bubble, in-flight activations and parameter
 * copies (docs/model.md §5.8).
 *
 * A layout's schedule is cfit_layout.schedule; vp is the model chunks each device holds.  Schedule
 * 0 (CFIT_SCHED_DEFAULT) is the 1F1B family: 1f1b at vp 1, interleaved 1F1B at vp > 1, as before
 * schedules existed; in a request's fixed layout 0, like CFIT_SEARCH, leaves it to the search.  A framework entry lists the schedules it runs
 * (cfit_framework.schedules, a bit per cfit_schedule); the search tries only those.
 */
#ifndef CLUSTERFIT_SCHEDULE_H
#define CLUSTERFIT_SCHEDULE_H

#include <stddef.h>
#include "clusterfit/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cfit_schedule {
    CFIT_SCHED_DEFAULT = 0,     /* a layout's: the 1F1B family, 1f1b at vp 1, interleaved at vp > 1;
                                   a request's (as CFIT_SEARCH): searched */
    CFIT_SCHED_1F1B = 1,        /* PipeDream-Flush / Megatron 1F1B (Narayanan et al. 2021) */
    CFIT_SCHED_INTERLEAVED = 2, /* interleaved 1F1B, vp >= 2 chunks per device (same paper) */
    CFIT_SCHED_ZB_H1 = 3,       /* zero bubble ZB-H1: backward split into B and W (Qi et al. 2024) */
    CFIT_SCHED_ZB_V = 4,        /* zero bubble ZB-V: 2 chunks per device in a V (same paper) */
    CFIT_SCHED_DUALPIPE = 5,    /* DualPipe: bidirectional, 2 stages per device (DeepSeek-V3 report) */
    CFIT_SCHED_DUALPIPEV = 6,   /* DualPipeV: DualPipe cut in half, 2 chunks per device in a V */
    CFIT_SCHED_ZB_H2 = 7,       /* zero bubble ZB-H2: ZB-H1 with 2p - 1 micro-batches in flight (Qi et al.) */
    CFIT_SCHED_INTERLEAVED_ZB = 8, /* torchtitan's InterleavedZeroBubble: ZB1P on vp >= 2 chunks per device */
    CFIT_SCHED_COUNT
} cfit_schedule;

/* A framework's schedules as a bit mask: bit s - 1 for schedule s (the catalog's list order). */
#define CFIT_SCHED_BIT(s) (1u << ((unsigned)(s) - 1u))
/* The schedules a framework entry without a "schedules" list runs (Megatron-Core's). */
#define CFIT_SCHED_DEFAULT_MASK (CFIT_SCHED_BIT(CFIT_SCHED_1F1B) | CFIT_SCHED_BIT(CFIT_SCHED_INTERLEAVED))

/* "1f1b", "interleaved", "zb-h1", "zb-v", "dualpipe", "dualpipev", "zb-h2", "interleaved-zb";
 * "default", "?" out of range. */
CFIT_API const char *cfit_schedule_name(cfit_schedule s);
/* Schedule by name; CFIT_EUNKNOWN with d->msg naming the choices (and a did-you-mean). */
CFIT_API int cfit_schedule_parse(const char *name, cfit_schedule *out, cfit_diag *d);
/* The schedules of mask as "1f1b, interleaved" into buf (n bytes); "none" for an empty mask. */
CFIT_API const char *cfit_schedule_list(unsigned mask, char *buf, size_t n);

/* The schedule layout l runs: its schedule field, 1F1B with vp > 1 read as interleaved. */
CFIT_API cfit_schedule cfit_layout_schedule(const cfit_layout *l);
/* Its name, or "none" when pp is 1 (no pipeline). */
CFIT_API const char *cfit_layout_schedule_name(const cfit_layout *l);

/* The model chunks per device schedule s runs with: 1 (1f1b, zb-h1, zb-h2), 2 (zb-v, dualpipe,
 * dualpipev) or 0 for interleaved and interleaved-zb (any vp >= 2). */
CFIT_API int cfit_schedule_chunks(cfit_schedule s);

/* Whether schedule s can run pp stages of vp chunks with m micro-batches per step (m 0 =
 * unknown, not checked) on a model of chunks_max chunks at most.  When it cannot and why is not
 * NULL, why gets a sentence (no full stop) saying which rule fails. */
CFIT_API int cfit_schedule_check(cfit_schedule s, int pp, int vp, long m, int chunks_max, char *why, size_t n);

/* The first device also runs the last chunk (and the logits): ZB-V, DualPipe, DualPipeV. */
CFIT_API int cfit_schedule_ends_together(cfit_schedule s);

/* What schedule s holds on a device with pp stages of vp chunks and m micro-batches per step
 * (docs/model.md §5.8). */
typedef struct cfit_schedule_terms {
    double inflight_first, inflight_last;   /* activations the first and the last device hold, in
                            micro-batches of one stage (its layers x one micro-batch's stored
                            activations); 1 when pp is 1 */
    int param_copies;    /* stage parameter sets per device: 2 for DualPipe, else 1 */
    int sends;           /* activation sends per micro-batch per direction per device */
    int ends_together;   /* cfit_schedule_ends_together(s) and pp > 1 */
} cfit_schedule_terms;

CFIT_API void cfit_schedule_terms_of(cfit_schedule s, int pp, int vp, long m, cfit_schedule_terms *out);

/* The bubble of one step (docs/model.md §5.8).  t_mb_s: the slowest device's time for one
 * micro-batch's forward and backward through its stage (F + B, B the full backward, with its
 * exposed TP/CP/EP communication and point-to-point sends); b_s: its backward compute (B);
 * w_s: the weight-gradient part of b_s (W).  0 when pp is 1. */
CFIT_API double cfit_schedule_bubble_s(cfit_schedule s, int pp, int vp, double t_mb_s, double b_s, double w_s);

#ifdef __cplusplus
}
#endif
#endif
