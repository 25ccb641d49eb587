/* bench_launch.h - the launch options every `clusterfit bench` command over ranks shares
 * (--np, --transport, --timeout, --rendezvous) and the helper that runs a rank body.
 *
 * Using it in a command:
 *   1. put BENCH_LAUNCH_OPTS in the command's cli_opt table (before the NULL entry), and
 *      BENCH_LAUNCH_BINDS(ctx type, its cfit_launch field) in its cli_bind table (cli.h: --np);
 *   2. in the option handler: `if (id >= BENCH_LAUNCH_ID0) return bench_launch_opt(&l, id, name, value);`
 *      with `bench_launch_init(&l)` done before cli_parse_bound();
 *   3. after parsing: bench_launch_digest(&l, argc, argv) (every rank must agree on it), then
 *      `return bench_run(&l, body, ctx);` -- body runs on every rank and returns its exit code;
 *      on a comm error it returns bench_comm_error(c, rc).
 */
#ifndef CFIT_BENCH_LAUNCH_H
#define CFIT_BENCH_LAUNCH_H

#include "clusterfit/comm.h"

/* Option ids of the launch options: keep the command's own ids below BENCH_LAUNCH_ID0. */
enum {
    BENCH_LAUNCH_ID0 = 900,
    BENCH_OPT_NP = BENCH_LAUNCH_ID0,  /* --np N */
    BENCH_OPT_TRANSPORT,              /* --transport shm|tcp|auto */
    BENCH_OPT_TIMEOUT,                /* --timeout TIME */
    BENCH_OPT_RENDEZVOUS              /* --rendezvous HOST:PORT */
};

#define BENCH_LAUNCH_OPTS                                                                               \
    {"np", 0, "N", "fork N local ranks (default: one rank, or what mpirun/srun/torchrun env says)",     \
     BENCH_OPT_NP},                                                                                     \
    {"transport", 0, "shm|tcp|auto", "auto (default): shm within a host, tcp between hosts",            \
     BENCH_OPT_TRANSPORT},                                                                              \
    {"timeout", 0, "TIME", "a rank that makes no progress for TIME fails the run (default 60s)",       \
     BENCH_OPT_TIMEOUT},                                                                                \
    {"rendezvous", 0, "HOST:PORT", "rank 0's rendezvous (default MASTER_ADDR:MASTER_PORT or\n"         \
     "                                       127.0.0.1:29500; docs/bench-launch.md)", BENCH_OPT_RENDEZVOUS}

/* The launch options whose value is stored as given: rows of the command's cli_bind table (cli.h),
 * the cfit_launch at field of type. */
#define BENCH_LAUNCH_BINDS(type, field) CLI_INT(BENCH_OPT_NP, type, field.np, 1, 1024)

/* Defaults: np 0 (environment), auto transport, 60 s, no rendezvous override. */
void bench_launch_init(cfit_launch *l);

/* Handle one launch option not in BENCH_LAUNCH_BINDS (id BENCH_OPT_*, name without dashes, value).
 * Returns 0 or exit code 2 after printing the error. */
int bench_launch_opt(cfit_launch *l, int id, const char *name, const char *value);

/* The text every rank must agree on: argv[0..argc-1] joined with spaces, leaving out
 * --rendezvous and its value (which may name the host differently per rank).  Stored
 * in a static buffer that l->args_digest points to. */
void bench_launch_digest(cfit_launch *l, int argc, char **argv);

/* Launch (fork --np ranks or join from the environment), run body(comm, ctx) on every
 * rank, close the comm, and return the exit code this process should exit with: the
 * body's own on a rank; the ranks' (cfit_launch_wait) in the --np parent; 2 for a
 * launch error caused by bad input (argument mismatch, bad env/rendezvous text, port in
 * use), 1 for other launch failures. */
int bench_run(const cfit_launch *l, int (*body)(cfit_comm *c, void *ctx), void *ctx);

/* Print "clusterfit: error: rank R: <what the comm says>" and return 1 (the exit code
 * for a lost peer, a timeout or a system error). */
int bench_comm_error(const cfit_comm *c, int err);

#endif
