/* cli.h - shared pieces of the clusterfit command line: the option table parser,
 * error printing and number formatting.  Only src/cli prints. */
#ifndef CFIT_CLI_H
#define CFIT_CLI_H

#include <stddef.h>
#include <stdio.h>
#include "clusterfit/base.h"
#include "clusterfit/catalog.h"

#define EXIT_OK 0
#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define EXIT_BENCH 3   /* a benchmark ran but failed its check: wrong elements, --min-busbw, --need */

/* One option of a command: drives both parsing and --help. */
typedef struct cli_opt {
    const char *name;      /* long name without dashes, "tp" */
    char short_name;       /* or 0 */
    const char *arg;       /* argument placeholder ("N"), NULL for a flag */
    const char *help;      /* one line; NULL = not listed (a removed option kept to say so) */
    int id;                /* passed to the handler */
} cli_opt;

/* Called for each option (value NULL for flags) and for each positional argument
 * (id -1).  Returns 0 or an exit code (2 after printing an error). */
typedef int (*cli_handler)(void *ctx, int id, const char *name, const char *value);

/* An option whose value is bound (as git's OPT_INTEGER): the parser checks the value and stores
 * it in the field at offset in the handler's ctx, and calls no handler for it (cli_bind.c).
 * A CLI_BIND_GIVEN row binds no value: it marks that its option appeared, whether the option's
 * value is bound by another row or goes to the handler. */
typedef enum cli_bind_kind {
    CLI_BIND_FLAG,     /* an int set to 1 */
    CLI_BIND_STRING,   /* a const char * to the argument */
    CLI_BIND_INT,      /* an int or long in [min, max] (cli_int: K M B T suffixes) */
    CLI_BIND_COUNT,    /* a double holding a count (cli_count: K M B T = powers of 1000) */
    CLI_BIND_UCOUNT,   /* a uint64_t holding a count (cli_count) */
    CLI_BIND_REAL,     /* a double in [lo, hi] (cli_real) */
    CLI_BIND_ENUM,     /* an int set to the value of the name in names (NULL-terminated) */
    CLI_BIND_NAMED,    /* an int set to the i < count with name_of(i) the argument */
    CLI_BIND_GIVEN,    /* an int set to 1 when the option appears (its value is bound or handled apart) */
} cli_bind_kind;

typedef struct cli_name {
    const char *name;
    int value;
} cli_name;

typedef struct cli_bind {
    int id;                          /* the cli_opt it binds; a table ends with id 0 */
    cli_bind_kind kind;
    size_t offset, size;             /* the field in ctx */
    long min, max;                   /* CLI_BIND_INT */
    double lo, hi;                   /* CLI_BIND_REAL */
    const cli_name *names;           /* CLI_BIND_ENUM */
    const char *(*name_of)(int i);   /* CLI_BIND_NAMED, for i < count */
    int count;
} cli_bind;

#define CLI_FIELD_(type, field) .offset = offsetof(type, field), .size = sizeof(((type *)0)->field)
#define CLI_FLAG(id_, type, field) {.id = (id_), .kind = CLI_BIND_FLAG, CLI_FIELD_(type, field)}
#define CLI_STRING(id_, type, field) {.id = (id_), .kind = CLI_BIND_STRING, CLI_FIELD_(type, field)}
#define CLI_INT(id_, type, field, min_, max_) \
    {.id = (id_), .kind = CLI_BIND_INT, CLI_FIELD_(type, field), .min = (min_), .max = (max_)}
#define CLI_COUNT(id_, type, field) {.id = (id_), .kind = CLI_BIND_COUNT, CLI_FIELD_(type, field)}
#define CLI_UCOUNT(id_, type, field) {.id = (id_), .kind = CLI_BIND_UCOUNT, CLI_FIELD_(type, field)}
#define CLI_REAL(id_, type, field, lo_, hi_) \
    {.id = (id_), .kind = CLI_BIND_REAL, CLI_FIELD_(type, field), .lo = (lo_), .hi = (hi_)}
#define CLI_ENUM(id_, type, field, names_) {.id = (id_), .kind = CLI_BIND_ENUM, CLI_FIELD_(type, field), .names = (names_)}
#define CLI_NAMED(id_, type, field, name_of_, count_) \
    {.id = (id_), .kind = CLI_BIND_NAMED, CLI_FIELD_(type, field), .name_of = (name_of_), .count = (count_)}
/* The int field is set to 1 when option id appears (as `c->days_given = 1` in a handler); a row of
 * its own beside the option's value binding, or for an option the handler parses. */
#define CLI_GIVEN(id_, type, field) {.id = (id_), .kind = CLI_BIND_GIVEN, CLI_FIELD_(type, field)}

/* The value binding of option id in binds (NULL: none; CLI_GIVEN rows are not one), or NULL. */
const cli_bind *cli_bind_find(const cli_bind *binds, int id);
/* Set the field of every CLI_GIVEN row of option id in binds (NULL: none) to 1. */
void cli_bind_mark(const cli_bind *binds, int id, void *ctx);
/* Check value and store it where b says in ctx; 0, or 2 after "clusterfit: error: --NAME: ...". */
int cli_bind_store(const cli_bind *b, void *ctx, const char *name, const char *value);

/* Parse argv[1..] of a command against opts (terminated by a NULL name).  -h/--help
 * prints usage and returns -1 (the caller exits 0).  Unknown options are an error
 * with a did-you-mean (exit 2). */
int cli_parse(int argc, char **argv, const cli_opt *opts, cli_handler fn, void *ctx,
              const char *usage, const char *description);
/* cli_parse with the values of the options in binds stored in ctx instead of passed to fn. */
int cli_parse_bound(int argc, char **argv, const cli_opt *opts, const cli_bind *binds, cli_handler fn, void *ctx,
                    const char *usage, const char *description);
void cli_usage(FILE *out, const cli_opt *opts, const char *usage, const char *description);

/* "clusterfit: error: FILE:LINE:COL: msg" or "clusterfit: error: msg"; returns 2
 * (or 1 for CFIT_EIO / CFIT_ENOMEM). */
int cli_error_diag(const cfit_diag *d, int err);
/* Exit 2 when the planner cannot cost model m at sequence length seq yet (MoE, MLA, ...),
 * naming what it has and where its counts are shown; 0 otherwise. */
int cli_model_plannable(const cfit_model *m, int seq);
int cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Parse an option value; on failure print "clusterfit: error: --NAME: msg" and
 * return 2. */
int cli_int(const char *name, const char *value, long min, long max, long *out);
int cli_count(const char *name, const char *value, uint64_t *out);
int cli_real(const char *name, const char *value, double min, double max, double *out);

/* Options shared by catalog-using commands: load embedded + --catalog files. */
typedef struct cli_catalog {
    const char *files[16];
    int nfiles;
    cfit_catalog *cat;
} cli_catalog;
int cli_catalog_add(cli_catalog *cc, const char *path);
int cli_catalog_open(cli_catalog *cc);   /* returns 0 or an exit code after printing */

/* Human formatting: "80.0 GB", "1.23 s", "12.3 days" into buf. */
const char *fmt_bytes(char *buf, size_t n, double bytes);
const char *fmt_time(char *buf, size_t n, double s);
const char *fmt_count(char *buf, size_t n, double v);   /* 1.5 K, 70.6 B, 1.00 T */
const char *fmt_usd(char *buf, size_t n, double usd);    /* "$1.23M" */
const char *fmt_cents(char *buf, size_t n, double usd);  /* "$1,234,567.89" */
/* A number in at most width characters, as nccl-tests' getFloatStr: %.2f, then fewer decimals,
 * then exponent form (the time/algbw/busbw columns of sim and bench). */
const char *fmt_fit(char *buf, size_t n, int width, double v);

int cmd_plan(int argc, char **argv);
int cmd_catalog(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_exporter(int argc, char **argv);
int cmd_rules(int argc, char **argv);
/* bench subcommands (one file each; listed in cmd_bench.c's table) */
int cmd_bench_storage(int argc, char **argv);   /* cmd_bench_io.c */
int cmd_bench_memory(int argc, char **argv);    /* cmd_bench_io.c */
/* `bench NAME` for a modelled collective of the registry (collective.h); cmd_bench_coll.c */
int cmd_bench_collective(const char *name, int argc, char **argv);
int cmd_bench_pairs(int argc, char **argv);

/* --report FILE.html (issue 7, docs/report.md): write the page built in b, then free b (in every
 * case); 0, or an exit code after printing (b ran out of memory, the file cannot be written). */
struct cfit_buf;
int cli_report_write(const char *path, struct cfit_buf *b);   /* plan_report.c */
/* Print a built --json document to stdout and release it; 0, or "out of memory" (exit 1) when
 * building it ran out. */
int cli_emit_json(struct cfit_buf *b);
struct cfit_plan_request;
struct cfit_plan_result;
/* Write len bytes of data to path ("-": standard output); 0, or 1 after "clusterfit: error: WHAT:
 * cannot write 'PATH': why" when a write, flush or close fails (output.c). */
int cli_write_output(const char *what, const char *path, const char *data, size_t len);
/* Flush and close standard output and error: a failed write anywhere in the run (a full disk,
 * a closed pipe end, /dev/full) turns exit status rc into 1 with "cannot write standard output". */
int cli_finish(int rc);
struct cfit_bom_options;
/* o: the bill-of-materials options the capex is built with (as the text and JSON). */
int cli_plan_report(const char *path, const struct cfit_plan_request *r, const struct cfit_bom_options *o,
                    const struct cfit_plan_result *res, int sizing);   /* plan_report.c */
struct cfit_plan;
/* "model check: published hopper runs at 512-2048 GPUs (...): median |error| 6%, max 14%": how the
 * model did on the published runs nearest plan p (plan_confidence.c, docs/plan.md). */
const char *plan_confidence_line(char *buf, size_t n, const struct cfit_plan_request *r,
                                 const struct cfit_plan *p);

#endif
