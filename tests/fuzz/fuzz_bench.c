/* fuzz_bench.c - fuzz target for the launch parsers (src/bench/bootstrap_parse.c): HOST:PORT,
 * launcher integers (RANK, WORLD_SIZE, MASTER_PORT ...), the first host of a Slurm node list
 * and the rendezvous hello rank 0 reads from whoever connects (the input's bytes as a hello).
 *
 * Oracles beyond "no crash": a rejection is CFIT_EPARSE or CFIT_ERANGE with a message; an
 * accepted HOST:PORT has a port in 1..65535 and a non-empty host that fits, and prints back
 * (as HOST:PORT or [HOST]:PORT) to the same host and port; an accepted integer is in range
 * and prints back to itself; a node list's first host is a non-empty prefix-built name; a
 * hello is refused with CFIT_EPARSE or CFIT_EINVALID and a message, or accepted with a rank in
 * 1..size-1, a port in 1..65535, a digest length within DIGEST_MAX and terminated strings.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/comm_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

static void check_failure(int rc, const cfit_diag *d)
{
    check(rc == CFIT_EPARSE || rc == CFIT_ERANGE);
    check(d->msg[0] != '\0');
}

static void fuzz_hostport(const char *s)
{
    char host[64], again[64], text[96];
    int port = 0, port2 = 0;
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = cfit__parse_hostport(s, host, sizeof host, &port, &d);
    if (rc) {
        check_failure(rc, &d);
        return;
    }
    check(port >= 1 && port <= 65535 && host[0] != '\0' && strlen(host) < sizeof host);
    snprintf(text, sizeof text, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
    check(cfit__parse_hostport(text, again, sizeof again, &port2, &d) == 0);
    check(port2 == port && strcmp(again, host) == 0);
}

static void fuzz_envint(const char *s)
{
    long v = 0, again = 0;
    char text[32];
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = cfit__parse_envint(s, -5, 1L << 20, &v, &d);
    if (rc) {
        check_failure(rc, &d);
        return;
    }
    check(v >= -5 && v <= 1L << 20);
    snprintf(text, sizeof text, "%ld", v);
    check(cfit__parse_envint(text, -5, 1L << 20, &again, &d) == 0 && again == v);
}

static void fuzz_nodelist(const char *s)
{
    char host[32];
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = cfit__parse_nodelist_first(s, host, sizeof host, &d);
    if (rc) {
        check_failure(rc, &d);
        return;
    }
    check(host[0] != '\0' && strlen(host) < sizeof host && !strchr(host, ',') && !strchr(host, '['));
}

static void fuzz_hello(const uint8_t *data, size_t size)
{
    unsigned char buf[CFIT__HELLO_FIXED];
    size_t n = size < sizeof buf ? size : sizeof buf;
    memcpy(buf, data, n);
    cfit__hello h;
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = cfit__parse_hello(buf, n, 8, "tok", &h, &d);
    if (rc) {
        check(rc == CFIT_EPARSE || rc == CFIT_EINVALID);
        check(d.msg[0] != '\0');
        return;
    }
    check(h.rank >= 1 && h.rank < 8 && h.size == 8 && h.port >= 1 && h.port <= 65535);
    check(h.digest_len <= CFIT__DIGEST_MAX && strcmp(h.token, "tok") == 0);
    check(strlen(h.host) < sizeof h.host && strlen(h.hostkey) < sizeof h.hostkey);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_hello(data, size);
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    fuzz_hostport(s);
    fuzz_envint(s);
    fuzz_nodelist(s);
    free(s);
    return 0;
}
