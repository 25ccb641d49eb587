/* sim_report.h - `clusterfit sim --report FILE.html` (sim_report.c, docs/report.md). */
#ifndef CFIT_SIM_REPORT_H
#define CFIT_SIM_REPORT_H

#include "clusterfit/sim.h"

typedef struct cli_sim_row {
    double size;              /* bytes, nccl-tests' size */
    cfit_sim_result r;
} cli_sim_row;

typedef struct cli_sim_report_in {
    const char *spec;                 /* --topology */
    const char *algo_label;           /* as the table prints it */
    cfit_collective coll;
    cfit_algo algo;
    int ranks;
    const int *place;                 /* placement (host of each rank) */
    int random_place;
    const cfit_topo *t;
    const cfit_topo_info *info;
    double link_bw_bytes_per_s;       /* scale-out link rate per direction (the NIC bound) */
    const cli_sim_row *rows;          /* the simulated sizes */
    int nrows;
    const double *link_bytes;         /* bytes each link carried at the largest size
                                         (cfit_sim_collective_links), or NULL */
} cli_sim_report_in;

/* Write the report to path: busbw vs size (every all-reduce algorithm when the collective is
 * allreduce), the switch tiers with the hottest links coloured by utilisation, the topology table.
 * Returns 0 or an exit code after printing. */
int cli_sim_report(const char *path, const cli_sim_report_in *in);

#endif
