/* cli.c - option-table parsing, error printing and number formatting for the CLI. */
#include "cli.h"
#include "clusterfit/writer.h"
#include "clusterfit/workload.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void cli_usage(FILE *out, const cli_opt *opts, const char *usage, const char *description)
{
    fprintf(out, "usage: %s\n\n%s\n\noptions:\n", usage, description);
    for (const cli_opt *o = opts; o->name; o++) {
        char left[64];
        if (!o->help)   /* a removed option, kept only to say so */
            continue;
        if (o->short_name)
            snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->name, o->arg ? " " : "",
                     o->arg ? o->arg : "");
        else
            snprintf(left, sizeof left, "    --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        if (strlen(left) > 36)   /* a long option name gets its help on the next line */
            fprintf(out, "  %s\n  %-36s %s\n", left, "", o->help);
        else
            fprintf(out, "  %-36s %s\n", left, o->help);
    }
    fprintf(out, "  %-36s %s\n", "-h, --help", "show this help and exit");
}

static const cli_opt *find_long(const cli_opt *opts, const char *name, size_t len)
{
    for (const cli_opt *o = opts; o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
            return o;
    return NULL;
}

static int unknown_option(const cli_opt *opts, const char *arg)
{
    const char *names[128];
    size_t n = 0;
    for (const cli_opt *o = opts; o->name && n < 127; o++)
        names[n++] = o->name;
    names[n++] = "help";
    const char *key = arg;
    while (*key == '-')
        key++;
    char buf[128];
    snprintf(buf, sizeof buf, "%.*s", (int)strcspn(key, "="), key);
    const char *near = strlen(buf) >= 3 ? cfit_closest(buf, names, n) : NULL;   /* not for "-x" */
    if (near)
        return cli_error("unknown option '%s' (did you mean '--%s'?)", arg, near);
    return cli_error("unknown option '%s' (see --help)", arg);
}

static const cli_opt *find_short(const cli_opt *opts, char c)
{
    for (const cli_opt *p = opts; p->name; p++)
        if (p->short_name && p->short_name == c)
            return p;
    return NULL;
}

/* Where an option's value goes: its binding, else the handler (after its CLI_GIVEN rows are set). */
typedef struct deliver_to {
    const cli_bind *binds;
    cli_handler fn;
    void *ctx;
} deliver_to;

static int deliver(const deliver_to *to, const cli_opt *o, const char *value)
{
    cli_bind_mark(to->binds, o->id, to->ctx);
    const cli_bind *b = cli_bind_find(to->binds, o->id);
    return b ? cli_bind_store(b, to->ctx, o->name, value) : to->fn(to->ctx, o->id, o->name, value);
}

/* argv[*i] is "-XY...", X a flag: each letter is a flag until one takes a value, which is the
 * rest of the word or, when the word ends there, the next one (nccl-tests and getopt read
 * "-cb1M" and "-c1" alike). */
static int parse_bundle(int argc, char **argv, int *i, const cli_opt *opts, const deliver_to *to)
{
    const char *a = argv[*i];
    for (size_t j = 1; a[j]; j++) {
        const cli_opt *o = find_short(opts, a[j]);
        if (!o)
            return cli_error("unknown option '-%c' in '%s' (see --help)", a[j], a);
        const char *value = NULL;
        if (o->arg && a[j + 1])
            value = a + j + 1;
        else if (o->arg && *i + 1 >= argc)
            return cli_error("option '-%c' (--%s) needs a value (%s)", a[j], o->name, o->arg);
        else if (o->arg)
            value = argv[++*i];
        int rc = deliver(to, o, value);
        if (rc || o->arg)
            return rc;
    }
    return 0;
}

/* Whether an option's value names an input file: "FILE" or "NAME|FILE" (outputs are "FILE.html",
 * "KIND[:FILE]"). */
static int input_metavar(const char *arg)
{
    size_t n = arg ? strlen(arg) : 0;
    return n >= 4 && strcmp(arg + n - 4, "FILE") == 0 && (n == 4 || arg[n - 5] == '|');
}

/* Who reads standard input: no one yet, the positional FILE argument, or an option (by its long
 * name).  Standard input can feed one input only. */
typedef enum stdin_reader { STDIN_UNCLAIMED = 0, STDIN_POSITIONAL, STDIN_OPTION } stdin_reader;
typedef struct stdin_claim {
    stdin_reader by;
    const char *option;   /* the option's long name when by is STDIN_OPTION */
} stdin_claim;

/* How an error names a claimant: "--NAME", or "the FILE argument". */
static const char *claim_dashes(const stdin_claim *c)
{
    return c->by == STDIN_OPTION ? "--" : "";
}
static const char *claim_label(const stdin_claim *c)
{
    return c->by == STDIN_OPTION ? c->option : "the FILE argument";
}

/* An input named "-" reads standard input, which only one input can: a second is an error naming
 * both. */
static int claim_stdin(stdin_claim *claim, stdin_claim who, const char *value)
{
    if (strcmp(value, "-") != 0)
        return 0;
    if (claim->by != STDIN_UNCLAIMED)
        return cli_error("standard input can feed one input only: %s%s and %s%s both name '-'",
                         claim_dashes(claim), claim_label(claim), claim_dashes(&who), claim_label(&who));
    *claim = who;
    return 0;
}

int cli_parse(int argc, char **argv, const cli_opt *opts, cli_handler fn, void *ctx,
              const char *usage, const char *description)
{
    return cli_parse_bound(argc, argv, opts, NULL, fn, ctx, usage, description);
}

int cli_parse_bound(int argc, char **argv, const cli_opt *opts, const cli_bind *binds, cli_handler fn, void *ctx,
                    const char *usage, const char *description)
{
    const deliver_to to = {binds, fn, ctx};
    int only_positional = 0;
    stdin_claim stdin_by = {STDIN_UNCLAIMED, NULL};   /* the input that takes "-" */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int rc;
        if (only_positional || a[0] != '-' || a[1] == '\0') {
            if ((rc = claim_stdin(&stdin_by, (stdin_claim){STDIN_POSITIONAL, NULL}, a)))
                return rc;
            rc = fn(ctx, -1, NULL, a);
        } else if (strcmp(a, "--") == 0) {
            only_positional = 1;
            continue;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            cli_usage(stdout, opts, usage, description);
            return -1;
        } else {
            const cli_opt *o = NULL;
            const char *value = NULL;
            if (a[1] == '-') {
                const char *eq = strchr(a + 2, '=');
                size_t len = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
                o = find_long(opts, a + 2, len);
                if (eq)
                    value = eq + 1;
            } else {
                o = find_short(opts, a[1]);
                if (o && a[2] && !o->arg) {   /* bundled flags, getopt style: -qj, -qb1M */
                    if ((rc = parse_bundle(argc, argv, &i, opts, &to)))
                        return rc;
                    continue;
                }
                if (o && a[2])              /* an attached value: -b1M */
                    value = a + 2;
            }
            if (!o)
                return unknown_option(opts, a);
            if (o->arg && !value) {
                if (i + 1 >= argc)
                    return cli_error("option '--%s' needs a value (%s)", o->name, o->arg);
                value = argv[++i];
            } else if (!o->arg && value) {
                return cli_error("option '--%s' takes no value", o->name);
            }
            if (input_metavar(o->arg) && (rc = claim_stdin(&stdin_by, (stdin_claim){STDIN_OPTION, o->name}, value)))
                return rc;
            rc = deliver(&to, o, value);
        }
        if (rc)
            return rc;
    }
    return 0;
}

int cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("clusterfit: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_USAGE;
}

int cli_error_diag(const cfit_diag *d, int err)
{
    fputs("clusterfit: error: ", stderr);
    if (d->file[0]) {
        fprintf(stderr, "%s:", d->file);
        if (d->line > 0)
            fprintf(stderr, "%d:%d:", d->line, d->col);
        fputc(' ', stderr);
    }
    fprintf(stderr, "%s\n", d->msg[0] ? d->msg : cfit_strerror(err));
    return err == CFIT_EIO || err == CFIT_ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
}

int cli_model_plannable(const cfit_model *m, int seq)
{
    const char *f = cfit_model_unplanned_feature(m, seq);
    if (!f)
        return 0;
    char total[32], active[32];
    fmt_count(total, sizeof total, cfit_model_params(m));
    fmt_count(active, sizeof active, cfit_model_active_params(m));
    const char *what = strcmp(f, "MoE") == 0 ? "MoE models are" : strcmp(f, "MLA") == 0 ? "models with MLA attention are"
                       : strcmp(f, "head_dim") == 0 ? "models whose head_dim differs from hidden_size / num_heads are"
                       : "models with a sliding window shorter than the sequence are";
    return cli_error("--model '%s': %s not planned yet (issue 13): the planner costs dense layers only; "
                     "'clusterfit catalog show' prints its %s parameters (%s active per token) and FLOPs",
                     m->name, what, total, active);
}

int cli_int(const char *name, const char *value, long min, long max, long *out)
{
    uint64_t v;
    cfit_diag d;
    cfit_diag_clear(&d);
    if (strcmp(value, "0") == 0 && min <= 0) {
        *out = 0;
        return 0;
    }
    if (cfit_parse_count(value, &v, &d))
        return cli_error("--%s: %s", name, d.msg);
    if ((double)v < (double)min || (double)v > (double)max)
        return cli_error("--%s: %s is out of range (%ld to %ld)", name, value, min, max);
    *out = (long)v;
    return 0;
}

int cli_count(const char *name, const char *value, uint64_t *out)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    if (cfit_parse_count(value, out, &d))
        return cli_error("--%s: %s", name, d.msg);
    return 0;
}

int cli_real(const char *name, const char *value, double min, double max, double *out)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    if (cfit_parse_real(value, out, &d))
        return cli_error("--%s: %s", name, d.msg);
    if (*out < min || *out > max)
        return cli_error("--%s: %s is out of range (%g to %g)", name, value, min, max);
    return 0;
}

int cli_catalog_add(cli_catalog *cc, const char *path)
{
    if (cc->nfiles >= (int)(sizeof cc->files / sizeof cc->files[0]))
        return cli_error("--catalog: at most %d files", (int)(sizeof cc->files / sizeof cc->files[0]));
    cc->files[cc->nfiles++] = path;
    return 0;
}

int cli_catalog_open(cli_catalog *cc)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    cc->cat = cfit_catalog_new(&d);
    if (!cc->cat)
        return cli_error_diag(&d, CFIT_EPARSE);
    for (int i = 0; i < cc->nfiles; i++) {
        int rc = cfit_catalog_load_file(cc->cat, cc->files[i], &d);
        if (rc) {
            cfit_catalog_free(cc->cat);
            cc->cat = NULL;
            return cli_error_diag(&d, rc);
        }
    }
    return 0;
}

const char *fmt_bytes(char *buf, size_t n, double bytes)
{
    snprintf(buf, n, "%.1f GB", bytes / 1e9);
    return buf;
}

const char *fmt_time(char *buf, size_t n, double s)
{
    if (s >= 86400.0 * 2)
        snprintf(buf, n, "%.1f days", s / 86400.0);
    else if (s >= 3600.0)
        snprintf(buf, n, "%.1f h", s / 3600.0);
    else if (s >= 1.0)
        snprintf(buf, n, "%.2f s", s);
    else if (s >= 1e-3)
        snprintf(buf, n, "%.1f ms", s * 1e3);
    else
        snprintf(buf, n, "%.1f us", s * 1e6);
    return buf;
}

const char *fmt_count(char *buf, size_t n, double v)
{
    static const char *const suf[] = {"", " K", " M", " B", " T"};
    int i = 0;
    while (fabs(v) >= 1000.0 && i < 4) {
        v /= 1000.0;
        i++;
    }
    snprintf(buf, n, i ? "%.2f%s" : "%.0f%s", v, suf[i]);
    return buf;
}

/* "$1.23M": a money amount in a table cell. */
const char *fmt_usd(char *buf, size_t n, double usd)
{
    static const struct { double at; const char *suf; } steps[] = {{1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (usd >= steps[i].at) {
            snprintf(buf, n, "$%.2f%s", usd / steps[i].at, steps[i].suf);
            return buf;
        }
    snprintf(buf, n, "$%.2f", usd);
    return buf;
}

/* "$1,234,567.89": a money amount to the cent. */
const char *fmt_cents(char *buf, size_t n, double usd)
{
    char raw[64];
    snprintf(raw, sizeof raw, "%.2f", usd);
    size_t digits = strcspn(raw, "."), o = 0;
    buf[o++] = '$';
    for (size_t i = 0; raw[i] && o + 2 < n; i++) {
        buf[o++] = raw[i];
        if (i + 1 < digits && (digits - i - 1) % 3 == 0)
            buf[o++] = ',';
    }
    buf[o] = '\0';
    return buf;
}

const char *fmt_fit(char *buf, size_t n, int width, double v)
{
    for (int prec = 2; prec >= 0; prec--) {
        snprintf(buf, n, "%.*f", prec, v);
        if ((int)strlen(buf) <= width)
            return buf;
    }
    snprintf(buf, n, "%.*e", width > 7 ? width - 7 : 0, v);
    return buf;
}

int cli_emit_json(cfit_buf *b)
{
    int ok = cfit_buf_ok(b);
    if (ok)
        fputs(b->data, stdout);
    cfit_buf_fini(b);
    return ok ? 0 : cli_error("out of memory");
}
