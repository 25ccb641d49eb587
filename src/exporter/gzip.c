/* gzip.c - gzip-compressed scrapes: does the client's Accept-Encoding allow gzip (RFC 9110
 * section 12.5.3: a coding with q=0 is not acceptable), and the gzip member of a body (zlib's
 * deflate with the gzip wrapper, RFC 1952). */
#include "clusterfit/exporter.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/* 1 when the q parameter of one coding (text after the name, up to its comma) is not 0. */
static int q_nonzero(const char *p, const char *end)
{
    const char *q = p;
    while (q < end && (q = memchr(q, ';', (size_t)(end - q)))) {
        q++;
        while (q < end && *q == ' ')
            q++;
        if (end - q >= 2 && (q[0] == 'q' || q[0] == 'Q') && q[1] == '=')
            return strtod(q + 2, NULL) > 0;
    }
    return 1;
}

int cfit_http_accepts_gzip(const char *accept_encoding)
{
    const char *p = accept_encoding;
    while (p && *p) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        size_t name = strcspn(p, " ;,");
        if (name == 4 && strncasecmp(p, "gzip", 4) == 0)
            return q_nonzero(p + 4, end);
        p = end;
    }
    return 0;
}

int cfit_http_gzip(const char *in, size_t n, char **out, size_t *out_n)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    /* level 1: a scrape is compressed once per request on the serving thread; windowBits 15 + 16
     * asks zlib for the gzip wrapper (zlib.h, deflateInit2) */
    if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return CFIT_ENOMEM;
    size_t cap = deflateBound(&z, (uLong)n);
    char *buf = malloc(cap);
    if (!buf) {
        deflateEnd(&z);
        return CFIT_ENOMEM;
    }
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)n;
    z.next_out = (Bytef *)buf;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    *out_n = z.total_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(buf);
        return CFIT_ENOMEM;
    }
    *out = buf;
    return 0;
}
