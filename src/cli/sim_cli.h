/* sim_cli.h - `clusterfit sim`'s options, shared by the flow engine (cmd_sim.c) and the NCCL
 * engine (sim_nccl.c). */
#ifndef CFIT_SIM_CLI_H
#define CFIT_SIM_CLI_H

#include "cli.h"
#include "clusterfit/calibration.h"
#include "clusterfit/catalog.h"
#include "clusterfit/nccl.h"
#include "clusterfit/nccl_calibrate.h"
#include "clusterfit/sim.h"
#include "clusterfit/topo.h"

#include <stdint.h>

enum { SIM_ENGINE_FLOW = 0, SIM_ENGINE_NCCL = 1 };

typedef struct sim_cli {
    const char *spec, *placement, *fail_spec;
    cfit_collective coll;
    cfit_algo algo;
    long ranks, gpn, factor;
    uint64_t size, minb, maxb;
    int have_size, have_range;
    long fail_n;
    unsigned fail_seed, place_seed;
    int random_place, describe, json;
    int manual;                       /* --link-bw, --latency, --scaleup-bw or --gpus-per-node given */
    const char *gpu, *fabric;
    cli_catalog cc;
    cfit_topo_params params;
    /* with --gpu: what the parameters were taken from (docs/sim.md "Catalog link parameters") */
    const cfit_gpu *g;
    const cfit_fabric *up, *out;
    double nic_share;                 /* NICs per GPU of the node, at most 1 */
    const char *report;               /* --report FILE.html */
    /* the NCCL engine (sim_nccl.c) */
    int engine;                       /* SIM_ENGINE_* */
    const char *engine_name;          /* --engine as given, NULL = chosen by the hardware options */
    const char *algo_name, *proto_name;   /* --algo, --proto as given (NULL = default) */
    const char *node;                 /* --node NAME */
    long nodes, nics;                 /* --nodes, --nics (0 = not given) */
    long ranks_per_node;              /* --gpus-per-node with the NCCL engine */
    int gpn_given;                    /* --gpus-per-node given */
    int p2p;                          /* --p2p: 0 not given, 1 yes, 2 no */
    int gpus_per_process;             /* --gpus-per-process (0 = not given: a process per rank) */
    const cfit_node *node_entry;      /* the node type: --node, or the GPU's default node */
    const char *calibration;          /* --calibration FILE (NCCL engine) */
    cfit_sim_alltoallv a2av;          /* --spread, --imbalance (alltoallv) */
    int a2av_given;
} sim_cli;

/* One modelled size of the NCCL engine. */
typedef struct sim_nccl_row {
    double size;
    cfit_nccl_estimate e;
} sim_nccl_row;

/* --calibration FILE in the NCCL engine (sim_nccl_cal.c, docs/sim.md "Calibration"): the file,
 * the network terms solved on the run it measured, and the model against its points. */
enum { SIM_CAL_OTHER_COLL = 1, SIM_CAL_OTHER_RANKS = 2, SIM_CAL_OTHER_NODES = 4 };
typedef struct sim_nccl_cal {
    cfit_calibration cal;             /* as read (calibration.h) */
    cfit_collective coll;             /* the collective it measured */
    int nodes, per_node;              /* its shape: hosts, ranks per host */
    cfit_nccl_system log_sys;         /* the model of that run, with the solved terms */
    cfit_nccl_network_fit fit;
    double catalog_nic_bw, catalog_extra_s;   /* what the solved terms replace */
    int mismatch;                     /* SIM_CAL_* bits: how the sim's asks differ from the run */
    int npoints;                      /* measured points with a size above 0 */
    double size[CFIT_CALIBRATION_MAX_POINTS], measured_gbs[CFIT_CALIBRATION_MAX_POINTS];
    sim_nccl_row model[CFIT_CALIBRATION_MAX_POINTS];   /* the calibrated model at each point's size */
    double rel_err[CFIT_CALIBRATION_MAX_POINTS];       /* model / measured busbw - 1 (from the times) */
    double median_abs_err;            /* median |rel_err|; -1 without points */
} sim_nccl_cal;

/* Load c->calibration, solve the network terms on the run it measured (the node type and NICs of
 * c, *sys's fabric) and put them into *sys; warn on stderr where the sim's collective, ranks or
 * nodes differ from the run's.  Returns 0 or an exit code after printing. */
int cli_sim_nccl_calibrate(const sim_cli *c, cfit_nccl_system *sys, sim_nccl_cal *k);
/* The "# calibration:" lines above the table, and the "calibration" member of --json. */
void cli_sim_nccl_cal_print(const sim_nccl_cal *k);
void cli_sim_nccl_cal_json(struct cfit_buf *b, const sim_nccl_cal *k);

/* sim --report FILE.html with the NCCL engine (sim_nccl_report.c, docs/report.md). */
typedef struct sim_nccl_report_in {
    const char *title;                /* the table's first line, without "# " */
    cfit_collective coll;
    int ranks;
    const cfit_nccl_system *sys;
    const sim_nccl_row *rows;         /* the modelled sizes */
    int nrows;
    const sim_nccl_cal *cal;          /* --calibration, or NULL */
} sim_nccl_report_in;
int cli_sim_nccl_report(const char *path, const sim_nccl_report_in *in);

/* The NCCL engine: resolve the hardware from the catalog, build the topology when one is given
 * (for its contention), model every size and print.  Returns 0 or an exit code after printing. */
int cli_sim_nccl(sim_cli *c);

/* Shared with the flow engine: build the topology, fail its links, describe it (0 or an exit
 * code after printing; *t is then NULL or to be freed by the caller), and the sizes of the sweep. */
int cli_sim_build(sim_cli *c, cfit_topo **t, cfit_topo_info *info);
int cli_sim_sizes(const sim_cli *c, double *lo, double *hi, int *nrows);
long cli_sim_elements(cfit_collective coll, double size, int ranks);

#endif
