/* bootstrap_parse.c - the text the launcher reads: HOST:PORT, rank/size variables and
 * the first host of a Slurm node list (fuzzed by tests/fuzz/fuzz_bench.c). */
#include "bench/comm_internal.h"

#include <ctype.h>
#include <string.h>

int cfit__parse_envint(const char *text, long min, long max, long *out, cfit_diag *d)
{
    const char *p = text;
    int neg = 0;
    if (*p == '-' && min < 0) {
        neg = 1;
        p++;
    }
    if (!isdigit((unsigned char)*p))
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "'%.64s' is not a whole number", text);
    long v = 0;
    for (; isdigit((unsigned char)*p); p++) {
        int digit = *p - '0';
        if (v > (2147483647L - digit) / 10)
            return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "'%.64s' is out of range (%ld to %ld)",
                                 text, min, max);
        v = v * 10 + digit;
    }
    if (*p)
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "'%.64s' is not a whole number", text);
    if (neg)
        v = -v;
    if (v < min || v > max)
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "'%.64s' is out of range (%ld to %ld)",
                             text, min, max);
    *out = v;
    return 0;
}

int cfit__parse_hostport(const char *text, char *host, size_t host_n, int *port, cfit_diag *d)
{
    const char *h = text, *colon;
    size_t hlen;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':')
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0,
                                 "'%.64s' is not [ADDRESS]:PORT (IPv6 needs brackets)", text);
        h = text + 1;
        hlen = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (!colon)
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "'%.64s' is not HOST:PORT", text);
        hlen = (size_t)(colon - text);
        if (memchr(text, ':', hlen))
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0,
                                 "'%.64s' is not HOST:PORT (write an IPv6 address as [ADDRESS]:PORT)", text);
    }
    if (hlen == 0)
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "'%.64s' has no host before the port", text);
    if (hlen >= host_n)
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "host name in '%.64s' is too long", text);
    for (size_t i = 0; i < hlen; i++) {
        unsigned char ch = (unsigned char)h[i];
        if (!isalnum(ch) && ch != '.' && ch != '-' && ch != '_' && ch != ':' && ch != '%')
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "'%.64s': '%c' cannot be part of a host name",
                                 text, isprint(ch) ? ch : '?');
    }
    long p;
    cfit_diag pd;
    cfit_diag_clear(&pd);
    int rc = cfit__parse_envint(colon + 1, 1, 65535, &p, &pd);
    if (rc)
        return cfit_diag_set(d, rc, NULL, 0, 0, "port in '%.64s': %s", text, pd.msg);
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    *port = (int)p;
    return 0;
}

int cfit_launch_rendezvous_check(const char *hostport, cfit_diag *d)
{
    char host[CFIT__HOST_MAX];
    int port;
    return cfit__parse_hostport(hostport, host, sizeof host, &port, d);
}

/* "gpu[001-004,9],cpu1" -> "gpu001"; "a1,a2" -> "a1"; "node7" -> "node7". */
int cfit__parse_nodelist_first(const char *text, char *host, size_t host_n, cfit_diag *d)
{
    size_t prefix = strcspn(text, "[,");
    size_t num = 0;
    const char *digits = NULL;
    if (text[prefix] == '[') {
        digits = text + prefix + 1;
        num = strspn(digits, "0123456789");
        char after = digits[num];
        if (num == 0 || (after != '-' && after != ',' && after != ']') || !strchr(digits, ']'))
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "malformed node list '%.64s'", text);
    }
    if (prefix == 0 && num == 0)
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "empty node list '%.64s'", text);
    if (prefix + num >= host_n)
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "first host of '%.64s' is too long", text);
    for (size_t i = 0; i < prefix; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (!isalnum(ch) && ch != '.' && ch != '-' && ch != '_')
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "malformed node list '%.64s'", text);
    }
    memcpy(host, text, prefix);
    if (num)
        memcpy(host + prefix, digits, num);
    host[prefix + num] = '\0';
    return 0;
}

/* ---- the rendezvous hello (bootstrap.c sends and reads it) -------------------------------- */

uint32_t cfit__get_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void cfit__get_str(char *dst, const unsigned char *p, size_t field)
{
    memcpy(dst, p, field);
    dst[field - 1] = '\0';
}

/* magic, version, rank, size, pid, port, host, hostkey, token, digest length */
#define AT_HOST 24
#define AT_HOSTKEY (AT_HOST + CFIT__HOST_MAX)
#define AT_TOKEN (AT_HOSTKEY + CFIT__HOSTKEY_MAX)

static int hello_framing(const unsigned char *buf, size_t len, cfit_diag *d)
{
    if (len < CFIT__HELLO_FIXED)
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "a hello of %zu bytes (at least %d)", len,
                             CFIT__HELLO_FIXED);
    if (cfit__get_be32(buf) != CFIT__HELLO_MAGIC)
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "not a clusterfit hello (magic 0x%08x)",
                             (unsigned)cfit__get_be32(buf));
    if (cfit__get_be32(buf + 4) != CFIT__HELLO_VERSION)
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "a hello of protocol version %u (this clusterfit "
                             "speaks %u)", (unsigned)cfit__get_be32(buf + 4), CFIT__HELLO_VERSION);
    uint32_t dlen = cfit__get_be32(buf + CFIT__HELLO_FIXED - 4);
    if (dlen > CFIT__DIGEST_MAX)
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "an argument digest of %u bytes (at most %d)",
                             (unsigned)dlen, CFIT__DIGEST_MAX);
    uint32_t port = cfit__get_be32(buf + 20);
    if (port < 1 || port > 65535)
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "data port %u is not 1..65535", (unsigned)port);
    return 0;
}

int cfit__parse_hello(const unsigned char *buf, size_t len, int size, const char *token, cfit__hello *h,
                      cfit_diag *d)
{
    memset(h, 0, sizeof *h);
    int rc = hello_framing(buf, len, d);
    if (rc)
        return rc;
    uint32_t r = cfit__get_be32(buf + 8), sz = cfit__get_be32(buf + 12);
    cfit__get_str(h->token, buf + AT_TOKEN, CFIT__TOKEN_MAX);
    if (strcmp(h->token, token) != 0)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "wrong job token (a process of another job%s)",
                             token[0] ? "" : ", or one started with CLUSTERFIT_JOB_TOKEN set");
    if (sz != (uint32_t)size)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "it says the job has %u ranks, rank 0 says %d",
                             (unsigned)sz, size);
    if (r < 1 || r >= (uint32_t)size)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "it claims rank %u, not one of 1..%d", (unsigned)r,
                             size - 1);
    h->rank = (int)r;
    h->size = (int)sz;
    h->pid = (int)cfit__get_be32(buf + 16);
    h->port = (int)cfit__get_be32(buf + 20);
    h->digest_len = cfit__get_be32(buf + CFIT__HELLO_FIXED - 4);
    cfit__get_str(h->host, buf + AT_HOST, CFIT__HOST_MAX);
    cfit__get_str(h->hostkey, buf + AT_HOSTKEY, CFIT__HOSTKEY_MAX);
    return 0;
}
