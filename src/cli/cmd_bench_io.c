/* cmd_bench_io.c - `clusterfit bench storage` and `clusterfit bench memory`: parse options, run
 * src/bench/storage.c or memory.c, print a table or JSON, and judge a storage need (--need, --plan). */
#include "cli.h"
#include "clusterfit/writer.h"
#include "clusterfit/json.h"
#include "clusterfit/memory.h"
#include "clusterfit/storage.h"
#include "bench_report.h"
#include "bench_launch.h"
#include "bench_storage_clients.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared ---- */

static int opt_size(const char *name, const char *value, uint64_t *out)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    return cfit_parse_size(value, out, &d) ? cli_error("--%s: %s", name, d.msg) : 0;
}

static void json_bool(cfit_buf *b, const char *key, int v)
{
    cfit_buf_printf(b, ", \"%s\": %s", key, v ? "true" : "false");
}

/* ---- bench storage ---- */

enum {
    S_PATH = 1, S_SIZE, S_BLOCK, S_THREADS, S_QD, S_DIRECT, S_ENGINE, S_NEED, S_PLAN, S_KEEP, S_RANDOM_OPS,
    S_SEED, S_JSON, S_REPORT, S_CLIENTS
};

static const cli_opt storage_opts[] = {
    {"path", 0, "DIR", "required: directory on the filesystem to test (the test file is created there)", S_PATH},
    {"size", 0, "BYTES", "test file size, K M G T = powers of 1024 (default 8G; well above RAM for buffered I/O)", S_SIZE},
    {"block", 0, "BYTES", "I/O size, a multiple of 4K (default 1M)", S_BLOCK},
    {"threads", 0, "N", "threads issuing I/O (default 1)", S_THREADS},
    {"queue-depth", 0, "N", "io_uring requests in flight per thread (default 16; pread: 1)", S_QD},
    {"direct", 0, NULL, "O_DIRECT: bypass the page cache (falls back to buffered, with a note, where refused)", S_DIRECT},
    {"engine", 0, "auto|io_uring|pread", "I/O engine (default auto: io_uring when available)", S_ENGINE},
    {"need", 0, "GB/s", "read rate the sequential and random reads must both reach; a plain number is GB/s,\n"
                        "                                       or a rate such as 2GB/s or 25G (bits); exit 3 if missed", S_NEED},
    {"plan", 0, "FILE", "take the need from `clusterfit plan --bom --json` output: bom.storage's\n"
                        "                                       data_read_bytes_per_s and checkpoint_write_bytes_per_s (- = stdin)", S_PLAN},
    {"clients", 0, "N", "N local client processes at once, one file each; rates are the aggregate\n"
                        "                                       (under mpirun/srun every rank is a client)", S_CLIENTS},
    {"keep", 0, NULL, "keep the test file, and reuse one of the right size (its write is then skipped)", S_KEEP},
    {"random-ops", 0, "N", "random reads in all (default: size / block; a pass stops after 30 s)", S_RANDOM_OPS},
    {"seed", 0, "N", "seed of the random offsets (default 1)", S_SEED},
    {"json", 0, NULL, "print one JSON object (docs/json.md) instead of the table", S_JSON},
    {"report", 0, "FILE.html", "also write an HTML report: the rates beside the need (docs/report.md)", S_REPORT},
    {NULL, 0, NULL, NULL, 0},
};

typedef struct storage_cli {
    cfit_storage_opts o;
    double need_read, need_write;   /* bytes/s, 0 = none */
    const char *need_source;        /* "--need" or the --plan FILE */
    const char *plan_file;
    int need_given, json;
    const char *report;             /* --report FILE.html */
    long clients;                   /* --clients N (0 = one, or the launcher's ranks) */
    storage_aggregate agg;          /* agg.clients > 1: the results are the aggregate */
} storage_cli;

/* The options whose values are stored as given (cli_bind), and the mark of --need; storage_opt has
 * --size and --block (sizes), --engine (io_uring's alias uring) and --need's value (GB/s or a rate). */
static const cli_bind storage_binds[] = {
    CLI_STRING(S_PATH, storage_cli, o.dir),
    CLI_STRING(S_REPORT, storage_cli, report),
    CLI_STRING(S_PLAN, storage_cli, plan_file),
    CLI_FLAG(S_DIRECT, storage_cli, o.direct),
    CLI_FLAG(S_KEEP, storage_cli, o.keep),
    CLI_FLAG(S_JSON, storage_cli, json),
    CLI_INT(S_THREADS, storage_cli, o.threads, 1, 1024),
    CLI_INT(S_QD, storage_cli, o.queue_depth, 1, 4096),
    CLI_INT(S_CLIENTS, storage_cli, clients, 1, 1024),
    CLI_UCOUNT(S_RANDOM_OPS, storage_cli, o.random_ops),
    CLI_INT(S_SEED, storage_cli, o.seed, 0, 4294967295L),   /* a uint64_t: stored as a long, >= 0 */
    CLI_GIVEN(S_NEED, storage_cli, need_given),
    {.id = 0},
};

static int storage_opt(void *vc, int id, const char *name, const char *value)
{
    storage_cli *c = vc;
    cfit_diag d;
    cfit_diag_clear(&d);
    switch (id) {
    case -1: return cli_error("bench storage: unexpected argument '%s' (see --help)", value);
    case S_SIZE: return opt_size(name, value, &c->o.size_bytes);
    case S_BLOCK: return opt_size(name, value, &c->o.block_bytes);
    case S_ENGINE:
        if (strcmp(value, "auto") == 0)
            c->o.engine = CFIT_IO_AUTO;
        else if (strcmp(value, "io_uring") == 0 || strcmp(value, "uring") == 0)
            c->o.engine = CFIT_IO_URING;
        else if (strcmp(value, "pread") == 0)
            c->o.engine = CFIT_IO_PREAD;
        else
            return cli_error("--%s: '%s' is not auto, io_uring or pread", name, value);
        return 0;
    case S_NEED: {
        double r;
        if (cfit_parse_real(value, &r, &d) == CFIT_EOK) {   /* a plain number: GB/s */
            if (!(r > 0 && r < 1e6))
                return cli_error("--%s: %s GB/s is out of range (above 0, below 1e6)", name, value);
            c->need_read = r * 1e9;
            return 0;
        }
        cfit_diag_clear(&d);
        if (cfit_parse_rate(value, &r, &d))
            return cli_error("--%s: %s", name, d.msg);
        c->need_read = r;
        return 0;
    }
    }
    return 0;
}

/* Read a `plan --bom --json` file's storage need.  Exit code after printing, or 0. */
static int load_plan_need(storage_cli *c)
{
    const char *path = cfit_input_name(c->plan_file);
    int err;
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_json *root = cfit_json_load(c->plan_file, &err, &d);
    if (!root)
        return cli_error_diag(&d, err);
    int rc = 0;
    const cfit_json *st = cfit_json_get(cfit_json_get(root, "bom"), "storage");
    if (root->type != CFIT_JSON_OBJECT || !st || st->type != CFIT_JSON_OBJECT) {
        rc = cli_error("%s:%d:%d: no bom.storage object: write the plan with `clusterfit plan --bom --json`", path,
                       root->line, root->col);
    } else {
        static const char *const keys[2] = {"data_read_bytes_per_s", "checkpoint_write_bytes_per_s"};
        double *dst[2] = {&c->need_read, &c->need_write};
        int found = 0;
        for (int i = 0; i < 2 && !rc; i++) {
            const cfit_json *v = cfit_json_get(st, keys[i]);
            if (!v || v->type == CFIT_JSON_NULL)
                continue;
            if (v->type != CFIT_JSON_NUMBER || !(v->number >= 0))
                rc = cli_error("%s:%d:%d: bom.storage.%s must be a number of bytes/s >= 0", path, v->line, v->col,
                               keys[i]);
            else
                *dst[i] = v->number, found++;
        }
        if (!rc && !found)
            rc = cli_error("%s:%d:%d: bom.storage has neither data_read_bytes_per_s nor checkpoint_write_bytes_per_s",
                           path, st->line, st->col);
    }
    cfit_json_free(root);
    c->need_source = path;
    return rc;
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* Verdicts: 1 met, 0 missed, -1 no such need. */
static int read_met(const storage_cli *c, const cfit_storage_result *r)
{
    if (c->need_read <= 0)
        return -1;
    return r->seq_read.bytes_per_s >= c->need_read && r->rand_read.bytes_per_s >= c->need_read;
}

static int write_met(const storage_cli *c, const cfit_storage_result *r)
{
    if (c->need_write <= 0)
        return -1;
    return r->seq_write.measured && r->seq_write.bytes_per_s >= c->need_write;
}

static void storage_table(const storage_cli *c, const cfit_storage_result *r)
{
    const cfit_storage_opts *o = &c->o;
    printf("# clusterfit bench storage: %s\n", r->path);
    printf("# file %.3f GB (%llu bytes), block %llu bytes, %d thread%s, engine %s", o->size_bytes / 1e9,
           (unsigned long long)o->size_bytes, (unsigned long long)o->block_bytes, o->threads,
           o->threads == 1 ? "" : "s", r->engine);
    if (strcmp(r->engine, "io_uring") == 0)
        printf(" (queue depth %d per thread)", o->queue_depth);
    printf(", %s\n", r->direct ? "O_DIRECT" : "buffered (page cache possible)");
    printf("%-10s %12s %10s %10s %10s %12s\n", "test", "bytes", "ops", "time s", "GB/s", "IOPS");
    const struct { const char *name; const cfit_storage_test *t; } rows[] = {
        {"seq-write", &r->seq_write}, {"seq-read", &r->seq_read}, {"rand-read", &r->rand_read}};
    for (int i = 0; i < 3; i++) {
        const cfit_storage_test *t = rows[i].t;
        if (!t->measured) {
            printf("%-10s %12s %10s %10s %10s %12s  (skipped: file reused)\n", rows[i].name, "-", "-", "-", "-", "-");
            continue;
        }
        printf("%-10s %12.0f %10.0f %10.3f %10.3f %12.0f%s\n", rows[i].name, t->bytes, t->ops, t->seconds,
               t->bytes_per_s / 1e9, t->iops, i > 0 && !r->direct ? "  buffered" : "");
    }
    for (int i = 0; i < r->nnotes; i++)
        printf("# note: %s\n", r->notes[i]);
    int rm = read_met(c, r), wm = write_met(c, r);
    if (rm >= 0)
        printf("# need (%s): read %.3f GB/s: %s (seq-read %.3f, rand-read %.3f GB/s)\n", c->need_source,
               c->need_read / 1e9, rm ? "met" : "NOT MET", r->seq_read.bytes_per_s / 1e9,
               r->rand_read.bytes_per_s / 1e9);
    if (wm >= 0)
        printf("# need (%s): checkpoint write %.3f GB/s: %s (seq-write %.3f GB/s)\n", c->need_source,
               c->need_write / 1e9, wm ? "met" : "NOT MET", r->seq_write.bytes_per_s / 1e9);
    if (c->agg.clients > 1) {
        printf("# %d clients at once, one file each: bytes summed over the clients / time from the common start to "
               "the last client's end\n", c->agg.clients);
        const char *names[3] = {"seq-write", "seq-read", "rand-read"};
        for (int k = 0; k < 3; k++)
            printf("#   %-9s per client %.3f to %.3f GB/s\n", names[k], c->agg.client_min_bytes_per_s[k] / 1e9,
                   c->agg.client_max_bytes_per_s[k] / 1e9);
    } else if (c->plan_file) {
        printf("# the plan's rates are for the whole job; this run measured one client of the storage "
               "(--clients N, or mpirun, measures several at once)\n");
    }
    printf("# file %s\n", r->kept ? "kept (--keep)" : "removed");
}

static void storage_json(const storage_cli *c, const cfit_storage_result *r)
{
    const cfit_storage_opts *o = &c->o;
    cfit_buf b;
    cfit_buf_init(&b);
    cfit_buf_puts(&b, "{");
    cfit_buf_key_string(&b, "clusterfit_version", CFIT_VERSION, 0);
    cfit_buf_key_string(&b, "benchmark", "storage", 1);
    cfit_buf_key_string(&b, "path", o->dir, 1);
    cfit_buf_key_string(&b, "file", r->path, 1);
    cfit_buf_key_number(&b, "size_bytes", (double)o->size_bytes, 1);
    cfit_buf_key_number(&b, "block_bytes", (double)o->block_bytes, 1);
    cfit_buf_key_number(&b, "threads", o->threads, 1);
    cfit_buf_key_number(&b, "clients", c->agg.clients > 1 ? c->agg.clients : 1, 1);
    cfit_buf_key_number(&b, "queue_depth", strcmp(r->engine, "io_uring") == 0 ? o->queue_depth : 1, 1);
    cfit_buf_key_string(&b, "engine", r->engine, 1);
    json_bool(&b, "direct", r->direct);
    json_bool(&b, "file_reused", r->reused);
    json_bool(&b, "file_kept", r->kept);
    cfit_buf_puts(&b, ", \"notes\": [");
    for (int i = 0; i < r->nnotes; i++) {
        cfit_buf_puts(&b, i ? ", " : "");
        cfit_buf_json_string(&b, r->notes[i]);
    }
    cfit_buf_puts(&b, "], \"results\": [");
    const struct { const char *name; const cfit_storage_test *t; } rows[] = {
        {"seq_write", &r->seq_write}, {"seq_read", &r->seq_read}, {"rand_read", &r->rand_read}};
    for (int i = 0; i < 3; i++) {
        const cfit_storage_test *t = rows[i].t;
        cfit_buf_puts(&b, i ? ", {" : "{");
        cfit_buf_key_string(&b, "test", rows[i].name, 0);
        json_bool(&b, "measured", t->measured);
        json_bool(&b, "buffered", !r->direct);
        cfit_buf_key_opt(&b, "bytes", t->measured, t->bytes);
        cfit_buf_key_opt(&b, "ops", t->measured, t->ops);
        cfit_buf_key_opt(&b, "time_s", t->measured, t->seconds);
        cfit_buf_key_opt(&b, "bytes_per_s", t->measured, t->bytes_per_s);
        cfit_buf_key_opt(&b, "bw_gbs", t->measured, t->bytes_per_s / 1e9);
        cfit_buf_key_opt(&b, "iops", t->measured, t->iops);
        cfit_buf_key_opt(&b, "client_min_bw_gbs", t->measured && c->agg.clients > 1, c->agg.client_min_bytes_per_s[i] / 1e9);
        cfit_buf_key_opt(&b, "client_max_bw_gbs", t->measured && c->agg.clients > 1, c->agg.client_max_bytes_per_s[i] / 1e9);
        cfit_buf_puts(&b, "}");
    }
    cfit_buf_puts(&b, "]");
    int rm = read_met(c, r), wm = write_met(c, r);
    if (rm < 0 && wm < 0) {
        cfit_buf_puts(&b, ", \"need\": null");
    } else {
        cfit_buf_puts(&b, ", \"need\": {");
        cfit_buf_key_string(&b, "source", c->need_source, 0);
        cfit_buf_key_opt(&b, "read_bytes_per_s", rm >= 0, c->need_read);
        cfit_buf_key_opt(&b, "write_bytes_per_s", wm >= 0, c->need_write);
        cfit_buf_puts(&b, rm < 0 ? ", \"read_met\": null" : rm ? ", \"read_met\": true" : ", \"read_met\": false");
        cfit_buf_puts(&b, wm < 0 ? ", \"write_met\": null" : wm ? ", \"write_met\": true" : ", \"write_met\": false");
        json_bool(&b, "met", rm != 0 && wm != 0);
        cfit_buf_puts(&b, "}");
    }
    cfit_buf_puts(&b, "}\n");
    cli_emit_json(&b);
}

/* Run the storage test (alone, or as one client of comm) and print on rank 0; the exit code. */
static int storage_once(storage_cli *c, cfit_comm *comm)
{
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;   /* no SA_RESTART: blocking I/O returns EINTR and the run ends */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    interrupted = 0;
    cfit_storage_opts o = c->o;
    o.stop = &interrupted;
    cfit_storage_result r;
    cfit_diag d;
    cfit_diag_clear(&d);
    int err = comm ? storage_run_clients(comm, &o, &r, &c->agg, &d) : cfit_storage_run(&o, &r, &d);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (err && err == CFIT_EINVALID && comm && cfit_comm_rank(comm) != 0)
        return EXIT_USAGE;   /* bad options fail alike on every client: rank 0 says why */
    if (err) {
        if (interrupted)
            return cli_error("bench storage: interrupted; the test file was %s", r.kept ? "kept" : "removed"), EXIT_RUNTIME;
        return err == CFIT_EINVALID ? cli_error("bench storage: %s", d.msg)
                                    : (cli_error("bench storage: %s", d.msg), EXIT_RUNTIME);
    }
    int rc = 0;
    if (comm && cfit_comm_rank(comm) != 0)
        return read_met(c, &r) == 0 || write_met(c, &r) == 0 ? EXIT_BENCH : EXIT_OK;
    if (c->json)
        storage_json(c, &r);
    else
        storage_table(c, &r);
    if (c->report && (rc = cli_storage_report(c->report, &r, c->need_read, c->need_write, c->need_source)))
        return rc;
    return read_met(c, &r) == 0 || write_met(c, &r) == 0 ? EXIT_BENCH : EXIT_OK;
}

static int storage_body(cfit_comm *comm, void *ctx)
{
    return storage_once(ctx, comm);
}

int cmd_bench_storage(int argc, char **argv)
{
    storage_cli c;
    memset(&c, 0, sizeof c);
    cfit_storage_opts_init(&c.o);
    c.o.queue_depth = 16;
    int rc = cli_parse_bound(argc, argv, storage_opts, storage_binds, storage_opt, &c,
                             "clusterfit bench storage --path DIR [options]",
                             "Measure a filesystem: sequential write (with fsync), sequential read and random read of a\n"
                             "test file by N threads, through io_uring or pread, with O_DIRECT or buffered.  Prints\n"
                             "GB/s (1e9 bytes/s) and IOPS, and with --need or --plan whether they meet a training\n"
                             "job's storage need (exit 3 if not).  docs/bench-storage.md explains the pitfalls.");
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if (!c.o.dir)
        return cli_error("bench storage: --path DIR is required (the directory to test)");
    if (c.need_given && c.plan_file)
        return cli_error("--need and --plan both give the need; use one");
    if (c.need_given)
        c.need_source = "--need";
    if (c.plan_file && (rc = load_plan_need(&c)))
        return rc;
    cfit_storage_opts o = c.o;
    o.fresh = c.need_write > 0;   /* a write need is judged on a write: never reuse a kept file then */
    c.o = o;
    if (c.clients > 1 || cfit_launch_env_size() > 1) {
        cfit_launch l;
        bench_launch_init(&l);
        l.np = c.clients > 1 ? (int)c.clients : 0;
        l.timeout_s = 7 * 86400.0;   /* a barrier waits for the slowest client's whole pass */
        bench_launch_digest(&l, argc, argv);
        return bench_run(&l, storage_body, &c);
    }
    return storage_once(&c, NULL);
}

/* ---- bench memory ---- */

enum { M_SIZE = 1, M_THREADS, M_NTIMES, M_JSON, M_REPORT };

static const cli_opt memory_opts[] = {
    {"size", 0, "BYTES", "bytes per array, K M G = powers of 1024 (default 4 x the last-level cache\n"
                         "                                       from sysfs, 128M when unknown)", M_SIZE},
    {"threads", 0, "N", "threads, each owning a slice of every array (default: online CPUs)", M_THREADS},
    {"ntimes", 0, "K", "iterations; the best of the last K-1 counts, like STREAM (default 10)", M_NTIMES},
    {"json", 0, NULL, "print one JSON object (docs/json.md) instead of the table", M_JSON},
    {"report", 0, "FILE.html", "also write an HTML report with the kernels as bars (docs/report.md)", M_REPORT},
    {NULL, 0, NULL, NULL, 0},
};

typedef struct memory_cli {
    cfit_memory_opts o;
    int json;
    const char *report;             /* --report FILE.html */
} memory_cli;

/* The options whose values are stored as given (cli_bind); memory_opt has --size (its range). */
static const cli_bind memory_binds[] = {
    CLI_INT(M_THREADS, memory_cli, o.threads, 1, 1024),
    CLI_INT(M_NTIMES, memory_cli, o.ntimes, 2, 100),
    CLI_FLAG(M_JSON, memory_cli, json),
    CLI_STRING(M_REPORT, memory_cli, report),
    {.id = 0},
};

static int memory_opt(void *vc, int id, const char *name, const char *value)
{
    memory_cli *c = vc;
    int rc;
    switch (id) {
    case -1: return cli_error("bench memory: unexpected argument '%s' (see --help)", value);
    case M_SIZE:
        rc = opt_size(name, value, &c->o.array_bytes);
        if (!rc && (c->o.array_bytes < 1024 || c->o.array_bytes > ((uint64_t)1 << 40)))
            return cli_error("--%s: %s is out of range (1K to 1T bytes per array)", name, value);
        return rc;
    }
    return 0;
}

static const char *const kernel_keys[CFIT_STREAM_KERNELS] = {"copy", "scale", "add", "triad"};

static void memory_table(const cfit_memory_result *r)
{
    printf("# clusterfit bench memory: STREAM, 3 arrays of %llu doubles (%.1f MiB each, %.1f MiB in all), "
           "%d thread%s, %d iterations (the first not counted)\n", (unsigned long long)r->elements,
           r->array_bytes / 1048576.0, 3.0 * r->array_bytes / 1048576.0, r->threads, r->threads == 1 ? "" : "s",
           r->ntimes);
    if (r->llc_bytes)
        printf("# last-level cache %.1f MiB in all: each array is %.1fx it%s\n", r->llc_bytes / 1048576.0,
               (double)r->array_bytes / r->llc_bytes,
               r->array_bytes < 4 * r->llc_bytes ? " (below STREAM's 4x: partly a cache measurement)" : "");
    else
        printf("# last-level cache unknown (no sysfs cache entries)\n");
    printf("%-8s %15s %12s %12s %12s\n", "Function", "Best Rate GB/s", "Avg time s", "Min time s", "Max time s");
    for (int i = 0; i < CFIT_STREAM_KERNELS; i++) {
        const cfit_memory_kernel *k = &r->k[i];
        char name[16];
        snprintf(name, sizeof name, "%s:", k->name);
        printf("%-8s %15.1f %12.6f %12.6f %12.6f\n", name, k->best_bytes_per_s / 1e9, k->avg_s, k->min_s, k->max_s);
    }
    if (r->wrong == 0)
        printf("# Solution Validates: avg error less than 1e-13 on all three arrays\n");
    else
        printf("# Solution FAILED validation: %llu elements off the expected values (avg rel error a %.3g, "
               "b %.3g, c %.3g)\n", (unsigned long long)r->wrong, r->avg_err[0], r->avg_err[1], r->avg_err[2]);
}

static void memory_json(const cfit_memory_result *r)
{
    cfit_buf b;
    cfit_buf_init(&b);
    cfit_buf_puts(&b, "{");
    cfit_buf_key_string(&b, "clusterfit_version", CFIT_VERSION, 0);
    cfit_buf_key_string(&b, "benchmark", "memory", 1);
    cfit_buf_key_number(&b, "array_bytes", (double)r->array_bytes, 1);
    cfit_buf_key_number(&b, "elements", (double)r->elements, 1);
    cfit_buf_key_number(&b, "threads", r->threads, 1);
    cfit_buf_key_number(&b, "ntimes", r->ntimes, 1);
    cfit_buf_key_opt(&b, "llc_bytes", r->llc_bytes > 0, (double)r->llc_bytes);
    cfit_buf_puts(&b, ", \"results\": [");
    for (int i = 0; i < CFIT_STREAM_KERNELS; i++) {
        const cfit_memory_kernel *k = &r->k[i];
        cfit_buf_puts(&b, i ? ", {" : "{");
        cfit_buf_key_string(&b, "function", kernel_keys[i], 0);
        cfit_buf_key_number(&b, "bytes_per_iteration", k->bytes, 1);
        cfit_buf_key_number(&b, "best_rate_gbs", k->best_bytes_per_s / 1e9, 1);
        cfit_buf_key_number(&b, "avg_time_s", k->avg_s, 1);
        cfit_buf_key_number(&b, "min_time_s", k->min_s, 1);
        cfit_buf_key_number(&b, "max_time_s", k->max_s, 1);
        cfit_buf_puts(&b, "}");
    }
    cfit_buf_puts(&b, "]");
    json_bool(&b, "validated", r->wrong == 0);
    cfit_buf_key_number(&b, "wrong", (double)r->wrong, 1);
    cfit_buf_puts(&b, "}\n");
    cli_emit_json(&b);
}

int cmd_bench_memory(int argc, char **argv)
{
    memory_cli c;
    memset(&c, 0, sizeof c);
    c.o.ntimes = 10;
    int rc = cli_parse_bound(argc, argv, memory_opts, memory_binds, memory_opt, &c,
                             "clusterfit bench memory [options]",
                             "Measure host memory bandwidth with STREAM's copy, scale, add and triad kernels (standard\n"
                             "accounting: 16 bytes per element for copy and scale, 24 for add and triad), best of K\n"
                             "iterations, and validate the arrays afterwards (exit 3 when wrong).\n"
                             "docs/bench-storage.md describes it.");
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    cfit_memory_result r;
    cfit_diag d;
    cfit_diag_clear(&d);
    int err = cfit_memory_run(&c.o, &r, &d);
    if (err)
        return err == CFIT_EINVALID ? cli_error("bench memory: %s", d.msg)
                                    : (cli_error("bench memory: %s", d.msg), EXIT_RUNTIME);
    if (c.json)
        memory_json(&r);
    else
        memory_table(&r);
    if (c.report && (rc = cli_memory_report(c.report, &r)))
        return rc;
    return r.wrong ? EXIT_BENCH : EXIT_OK;
}
