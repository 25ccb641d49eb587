/* emit_opt.h - `plan --emit`: which launch configurations to write, and writing them. */
#ifndef CFIT_EMIT_OPT_H
#define CFIT_EMIT_OPT_H

#include "clusterfit/frameworks.h"

#define CLI_EMIT_MAX 8

typedef struct cli_emit {
    struct {
        cfit_emit_kind kind;
        const char *file;   /* NULL: stdout; else points into the option value */
        int file_len;
    } item[CLI_EMIT_MAX];
    int n;
} cli_emit;

/* Add "KIND[:FILE][,KIND[:FILE]...]" from one --emit; prints an error and returns 2 on a bad value. */
int cli_emit_add(cli_emit *e, const char *value);
/* Before the search: with --json, configs without :FILE (or with :-) are refused (stdout holds the JSON);
 * KIND:- must be the only configuration on stdout. */
int cli_emit_validate(const cli_emit *e, int json);
/* 1 when a KIND:- sends one configuration alone to stdout (the plan tables are then not printed). */
int cli_emit_stdout_bare(const cli_emit *e);
/* After the tables: write each configuration for the best plan (res->plans[0]); returns 0 or
 * an exit code (1 when a file cannot be written, 2 when there is no plan). */
int cli_emit_write(const cli_emit *e, const cfit_plan_request *r, const cfit_plan_result *res);

#endif
