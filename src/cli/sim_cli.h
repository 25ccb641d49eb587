/* sim_cli.h - `clusterfit sim`'s options, shared by the flow engine (cmd_sim.c) and the NCCL
 * engine (sim_nccl.c). */
#ifndef CFIT_SIM_CLI_H
#define CFIT_SIM_CLI_H

#include "cli.h"
#include "clusterfit/catalog.h"
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
    const cfit_node *node_entry;      /* the node type: --node, or the GPU's default node */
} sim_cli;

/* The NCCL engine: resolve the hardware from the catalog, build the topology when one is given
 * (for its contention), model every size and print.  Returns 0 or an exit code after printing. */
int cli_sim_nccl(sim_cli *c);

/* Shared with the flow engine: build the topology, fail its links, describe it (0 or an exit
 * code after printing; *t is then NULL or to be freed by the caller), and the sizes of the sweep. */
int cli_sim_build(sim_cli *c, cfit_topo **t, cfit_topo_info *info);
int cli_sim_sizes(const sim_cli *c, double *lo, double *hi, int *nrows);
long cli_sim_elements(cfit_collective coll, double size, int ranks);

#endif
