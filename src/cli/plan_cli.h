/* plan_cli.h - what cmd_plan.c shares with its two output halves: the parsed command line
 * (plan_cli) and the writers of the JSON document (plan_json.c) and of the tables
 * (plan_text.c). */
#ifndef CFIT_CLI_PLAN_CLI_H
#define CFIT_CLI_PLAN_CLI_H

#include <time.h>
#include "cli.h"
#include "emit_opt.h"
#include "plan_bom.h"
#include "clusterfit/calibration.h"
#include "clusterfit/nccl_calibrate.h"
#include "clusterfit/cost.h"
#include "clusterfit/plan.h"

typedef struct plan_cli {
    cli_catalog cc;
    const char *model;
    const char *gpu_list;
    const char *fabric;
    const char *framework;
    const char *topology;
    cfit_plan_request req;
    cfit_model model_file;
    int mtp;                          /* --mtp; -1 = the model's */
    cfit_model model_mtp;             /* the model with --mtp's modules (req.model points here then) */
    int json, quiet;
    int days_given;
    int budget_given;
    const char *prices[64];
    int nprices;
    double utilisation;               /* --utilisation; 0 = not given (owned.utilisation absent: 1) */
    double t0_s;                   /* cfit_now_s() when the search started */
    int progress_shown;
    cli_emit emit;
    cli_bom bom;
    const char *calibration_file;     /* --calibration */
    cfit_calibration cal;             /* as measured */
    cfit_calibration cal_model;       /* what the planner uses: a collective's network terms solved on
                                         the measured run (nccl_calibrate.h), a pairs file as measured */
    int cal_solved;                   /* 1: cal_model holds solved terms, cal_fit and the catalog's below */
    cfit_nccl_network_fit cal_fit;
    double cal_catalog_nic_bw, cal_catalog_extra_s;
    const char *report;               /* --report FILE.html */
} plan_cli;

/* The whole result as one JSON document on stdout (docs/json.md); 0, or 2 when a price
 * could not be applied. */
int plan_print_json(const plan_cli *c, const cfit_plan_result *res, int sizing);
/* The human tables: best plans, the best plan's details, cost, goal and recommendation. */
int plan_print_tables(const plan_cli *c, const cfit_plan_result *res, int sizing);
/* "full", or "block:K" with the layers per stage block recomputation reruns. */
const char *plan_recompute_str(char *buf, size_t n, const cfit_plan *p);
/* The knob that would make a plan that does not fit fit (a phrase). */
const char *plan_fix_hint(const cfit_plan *p);
/* How a cost basis reads in a sentence. */
const char *plan_basis_words(int basis);

/* plan_offload.c: --offload (which 0), --finetune (1), --lora-rank (2) into r; 0 or 2. */
int plan_opt_offload(cfit_plan_request *r, int which, const char *name, const char *value);
/* The fine-tuning line under the workload (nothing for pre-training). */
void plan_print_finetune(const cfit_plan_request *r);
/* A line when the search fell back to offload because nothing fit without it. */
void plan_print_offload_note(const cfit_plan_result *res);
/* The best plan's offload line and its NVMe tier (nothing without offload). */
void plan_print_offload(const cfit_plan_request *r, const cfit_plan *p);
/* The source column of memory row `row` (0 weights, 1 gradients, 2 optimizer) under fine-tuning
 * or offload, else dflt. */
const char *plan_mem_source(const cfit_plan_request *r, const cfit_plan *p, int row, const char *dflt);
/* Exit 2 explaining why even the closest offloaded layout does not fit (GPU or host memory). */
int plan_nothing_fits_offload(const cfit_plan *p);
/* A plan's "offload" and "finetune" objects (docs/json.md). */
struct cfit_buf;
void plan_json_offload(struct cfit_buf *b, const plan_cli *c, const cfit_plan *p);
/* plan_confidence.c: the model check line under the best plan, and each plan's "confidence". */
void plan_print_confidence(const plan_cli *c, const cfit_plan *p);
void plan_json_confidence(struct cfit_buf *b, const plan_cli *c, const cfit_plan *p);

#endif
