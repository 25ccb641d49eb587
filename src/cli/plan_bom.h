/* plan_bom.h - `plan --bom` and `plan --network`: options, running, tables and JSON. */
#ifndef CFIT_PLAN_BOM_H
#define CFIT_PLAN_BOM_H

#include "clusterfit/writer.h"
#include "clusterfit/bom.h"

enum { CLI_BOM_FLAG = 1, CLI_BOM_NETWORK, CLI_BOM_TIERS, CLI_BOM_OVERSUB, CLI_BOM_GONE_THRESHOLD, CLI_BOM_WINDOW };

typedef struct cli_bom {
    int bom, network;              /* what was asked for */
    cfit_bom_options o;
    int has_bom, has_net;          /* filled by cli_bom_run */
    cfit_bom b;
    cfit_net_result net;
} cli_bom;

void cli_bom_init(cli_bom *x);
/* One option by CLI_BOM_* id; prints an error and returns 2 on a bad value. */
int cli_bom_opt(cli_bom *x, int id, const char *name, const char *value);
/* Compute what was asked for the best plan; returns 0 or an exit code after printing. */
int cli_bom_run(cli_bom *x, const cfit_plan_request *r, const cfit_plan *best);
void cli_bom_print(const cli_bom *x, const cfit_plan_request *r, const cfit_plan *best);
/* Append ', "bom": {...}' and/or ', "network": {...}' (docs/json.md). */
void cli_bom_json(const cli_bom *x, const cfit_plan_request *r, const cfit_plan *best, cfit_buf *b);
void cli_bom_fini(cli_bom *x);
/* One line: the storage choice and why (the needs it meets, where the data is read from). */
const char *cli_bom_storage_why(const cfit_bom *b, char *buf, size_t n);
/* The layout's "tp", "pp", "dp", "cp", "vp", "micro_batch" keys (plans[] and network options);
 * comma: whether the first needs one. */
void cli_json_layout_dims(cfit_buf *b, const cfit_layout *l, int comma);

#endif
