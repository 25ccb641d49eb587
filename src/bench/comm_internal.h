/* comm_internal.h - what comm.c, bootstrap.c, launch.c and the transports share (internal to src/bench).
 *
 * Bootstrap produces a table of every rank (host label, host identity, pid, TCP data
 * address) and keeps one TCP "control" connection from each rank to rank 0 open for
 * set-up barriers (segment creation, TCP mesh).  comm.c then opens the transports the
 * table calls for: shm between ranks whose host identity (hostname, boot id and the
 * net/pid/mount namespaces) is equal, tcp otherwise (or as --transport forces).
 */
#ifndef CFIT_BENCH_COMM_INTERNAL_H
#define CFIT_BENCH_COMM_INTERNAL_H

#include <stdarg.h>
#include <sys/types.h>
#include "bench/comm.h"
#include "base/clock.h"

#define CFIT__HOST_MAX 256      /* hostname or printable host label */
#define CFIT__HOSTKEY_MAX 192   /* host identity: hostname|boot_id|net|pid|mnt */
#define CFIT__ADDR_MAX 64       /* numeric IPv4/IPv6 address */
#define CFIT__JOBID_MAX 48
#define CFIT__TOKEN_MAX 128   /* job token in a hello (bootstrap.c) */

/* One rank as bootstrap saw it. */
typedef struct cfit__peer_info {
    char host[CFIT__HOST_MAX];        /* hostname (gethostname) */
    char hostkey[CFIT__HOSTKEY_MAX];  /* equal keys = same machine and namespaces: shm possible */
    char addr[CFIT__ADDR_MAX];        /* numeric address its TCP data listener is reachable at */
    int port;                         /* TCP data listener port */
    int pid;                          /* process id (same host only meaningful) */
} cfit__peer_info;

/* The per-rank state of a job (opaque to callers of comm.h). */
struct cfit_comm {
    int rank, size;
    double timeout_s;
    char jobid[CFIT__JOBID_MAX];       /* unique per job, names shm segments */
    int owner_pid;                    /* --np launcher's pid (starts the job id), 0 = rank 0's */
    int local_only;                   /* --np job: every listener on loopback */
    char token[CFIT__TOKEN_MAX];      /* job token every hello carries ("" = none) */
    cfit__peer_info *peers;           /* [size] */
    char **labels;                    /* [size] host label shown to users ("host" or "host:rankN") */
    int ctl_fd;                       /* TCP control connection: to rank 0, or -1 on rank 0 */
    int *ctl_fds;                     /* rank 0 only: [size] connections from every rank (-1 for self) */
    int data_listen_fd;               /* TCP data listener (closed once the mesh is up) */
    const cfit_transport_ops **ops;   /* [size] transport carrying each peer (NULL for self) */
    void **tself;                     /* [size] that transport's state */
    const cfit_transport_ops *tr_ops[2];  /* the distinct transports in use */
    void *tr_self[2];
    int ntr;
    cfit_req *self_sends, *self_recvs;    /* messages to oneself, matched in order */
    int failed;                       /* a negative cfit_err once the comm is broken */
    int lost;                         /* the rank a failure names (lost, or waited for), -1 none */
    int reporter;                     /* the rank that saw it first */
    char note;                        /* how to tell the others: 'L' lost, 'T' timed out, 'F' other */
    double ctl_next;                  /* when to look at the control connections next */
    char err[512];                    /* text of that error */
};

/* Record a failure (first one wins) and return err. */
int cfit__comm_fail(cfit_comm *c, int err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The transports' constructors: connect this rank to every peer p with use[p] != 0.
 * Collective over the ranks that use the transport (they call it in the same order).
 * Return 0 or a negative cfit_err with c->err set. */
int cfit__shm_open(cfit_comm *c, const int *use, void **self);
/* Bytes of one rank's ring segment when nlocal ranks share the host over shm. */
size_t cfit__shm_segment_bytes(int nlocal);

/* The --np launcher's host checks (launch_guard.c). */
uint64_t cfit__shm_free_bytes(void);          /* /dev/shm's free bytes (statvfs), 0 unknown */
uint64_t cfit__mem_available_bytes(void);     /* MemAvailable, 0 unknown */
/* 0 when opt->np ranks' shared memory fits /dev/shm and all their memory fits MemAvailable;
 * else CFIT_ENOMEM with both needs and both numbers in d. */
int cfit__launch_fits(const cfit_launch *opt, cfit_diag *d);
void cfit__shm_remove_prefix(const char *prefix);   /* unlink /dev/shm/PREFIX* */
long cfit__cgroup_oom_kills(void);            /* this cgroup's memory.events oom_kill, -1 unknown */
/* Why a rank (pid) killed by SIGKILL may have died: "; the kernel log says ..." or "". */
void cfit__sigkill_hint(int pid, long oom_kills_before, char *out, size_t n);
int cfit__tcp_open(cfit_comm *c, const int *use, void **self);

/* Record that rank `lost` is gone (first failure wins) and return CFIT_EPEER. */
int cfit__comm_lost(cfit_comm *c, int lost, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Set-up barrier over the control connections (every rank of the job). */
int cfit__ctl_barrier(cfit_comm *c);

/* After set-up the control connections carry 9-byte notes (ctl.c): type, rank a, rank b
 * (big-endian):  'B' bye (closing normally);  'L' a b: rank a was lost, as rank b saw;
 * 'T' a b: rank b made no progress waiting for rank a for the timeout;  'F' a: rank a
 * failed otherwise.  A failing rank sends its note at close; rank 0 forwards the first
 * note it gets (or makes one when a rank's connection closes without 'B') to everyone.
 * ctl_check reads what arrived without blocking and fails the comm with the note's
 * story, so ranks busy with other peers learn of a loss within about 50 ms.
 * ctl_refine: after a rank saw a peer vanish, wait up to `s` seconds for a note that
 * names the rank lost first (the vanished peer may only have been reacting to it). */
int cfit__ctl_check(cfit_comm *c);
int cfit__ctl_refine(cfit_comm *c, double s);
void cfit__ctl_close(cfit_comm *c);

/* Bootstrap: fill c->rank/size/peers/jobid and the control connections.
 * listen_fd >= 0: rank 0 uses this already-listening rendezvous socket (--np).
 * Errors fill d and return a negative cfit_err (CFIT_EINVAL for mismatched arguments). */
int cfit__bootstrap(cfit_comm *c, int rank, int size, const char *host, int port, int listen_fd,
                    const char *digest, cfit_diag *d);

/* Open the transports the table calls for (after bootstrap). */
int cfit__comm_connect(cfit_comm *c, cfit_transport_kind kind, cfit_diag *d);

/* Text parsers (bootstrap_parse.c; fuzzed by tests/fuzz/fuzz_bench.c).
 * hostport: "HOST:PORT", "[V6ADDR]:PORT"; port 1..65535; host non-empty, at most
 *           host_n-1 bytes.  CFIT_EPARSE/ERANGE with d->msg set on failure.
 * envint:   a decimal integer in [min, max] with nothing else (no sign unless min < 0,
 *           no spaces); CFIT_EPARSE/ERANGE.
 * nodelist: the first host of a Slurm node list ("gpu[001-004,9],cpu1" -> "gpu001");
 *           CFIT_EPARSE when it is malformed. */
int cfit__parse_hostport(const char *text, char *host, size_t host_n, int *port, cfit_diag *d);
int cfit__parse_envint(const char *text, long min, long max, long *out, cfit_diag *d);
int cfit__parse_nodelist_first(const char *text, char *host, size_t host_n, cfit_diag *d);

/* The rendezvous hello a rank sends rank 0 (all integers big-endian u32, strings NUL-padded):
 * magic, version, rank, size, pid, data port, host[HOST_MAX], hostkey[HOSTKEY_MAX],
 * token[TOKEN_MAX], digest length, then that many bytes of argument digest. */
#define CFIT__HELLO_MAGIC 0x43464954u   /* "CFIT" */
#define CFIT__HELLO_VERSION 2u          /* 2: the job token */
#define CFIT__DIGEST_MAX 4096
#define CFIT__HELLO_FIXED (6 * 4 + CFIT__HOST_MAX + CFIT__HOSTKEY_MAX + CFIT__TOKEN_MAX + 4)

typedef struct cfit__hello {
    int rank, size, pid, port;
    uint32_t digest_len;             /* bytes of digest after the fixed part */
    char host[CFIT__HOST_MAX], hostkey[CFIT__HOSTKEY_MAX], token[CFIT__TOKEN_MAX];
} cfit__hello;

uint32_t cfit__get_be32(const unsigned char *p);
void cfit__get_str(char *dst, const unsigned char *p, size_t field);   /* copy, NUL-terminate */
/* The fixed part of a hello (len bytes at buf) for a job of size ranks and this token.  0 and
 * *h filled; CFIT_EPARSE when it is no clusterfit hello of this version (short, magic,
 * version, digest length over DIGEST_MAX, port); CFIT_EINVALID when it is one of another job
 * (token differs, another size, a rank outside 1..size-1).  d says why. */
int cfit__parse_hello(const unsigned char *buf, size_t len, int size, const char *token, cfit__hello *h,
                      cfit_diag *d);

/* Socket helpers (bootstrap.c).  sock_io moves exactly n bytes (write or read) before
 * the monotonic deadline: 0, CFIT_EPEER on EOF/reset, CFIT_ETIMEOUT, CFIT_ESYS (errno kept).
 * sock_connect resolves host and connects, retrying refused/unreachable attempts every
 * 100 ms until the deadline; on failure the last error text is in why.  Returns the fd or
 * a negative cfit_err. */
int cfit__sock_io(int fd, void *buf, size_t n, int is_write, double deadline);
int cfit__sock_connect(const char *host, int port, double deadline, char *why, size_t why_n);
/* Socket options for data connections: TCP_NODELAY and large buffers. */
void cfit__sock_tune(int fd);

/* The tcp tuning environment: CLUSTERFIT_TCP_BUF (a size, 4K..1G; *bytes 0 when unset),
 * checked by cfit__tcp_env_check() with CLUSTERFIT_TCP_CONNS (1..64) and
 * CLUSTERFIT_TCP_THREADS (0..64) before a rank starts, so a bad value is an error naming the
 * variable (CFIT_EPARSE/ERANGE), never a silent default. */
int cfit__tcp_buf_setting(int *bytes, cfit_diag *d);
int cfit__tcp_env_check(cfit_diag *d);


/* Is process pid (on this host) alive?  Zombies count as dead. */
int cfit__pid_alive(int pid);

#endif
