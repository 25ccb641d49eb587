/* rules.h - `clusterfit rules`: the options and plan figures (cmd_rules.c) the alert set
 * (rules_alerts.c) is written from. */
#ifndef CFIT_CLI_RULES_H
#define CFIT_CLI_RULES_H

#include <stdio.h>

/* A warning and a critical threshold of one condition; critical is NAN (no critical alert) when
 * it was not given and its default is not stricter than the warning given. */
typedef struct rules_level {
    double warning, critical;
    int critical_set;         /* given on the command line */
} rules_level;

typedef struct rules_cli {
    const char *plan_file, *job, *runbook;
    rules_level gpu_util;     /* utilisation below (critical < warning) */
    rules_level net;          /* share of link speed above (critical > warning) */
    rules_level data;         /* data-loading share of the step above */
    rules_level ar;           /* all-reduce (exposed communication with a plan) share above */
    rules_level straggler;    /* a rank's step time over the job's median above */
    double margin;
    double gpu_for_s, for_s, window_s;
    /* from the plan */
    int have_plan;
    double step_s;            /* plans[0].step_time_s */
    double exposed_comm_s;    /* communication not hidden behind compute (bound_s.communication) */
    double dp_comm_s;         /* breakdown_s.dp_comm */
    char plan_desc[256];      /* "GPU x COUNT", as the plan names it */
} rules_cli;

/* Write the rule groups (YAML, through libyaml's emitter) to f.  0, or an exit status with the
 * error printed. */
int rules_print(const rules_cli *c, FILE *f);

#endif
