/* auth.c - basic-auth checks against the web config's bcrypt hashes through crypt(3)
 * (libxcrypt: $2b$, $2a$, $2y$), in the same time whatever the username (docs/exporter.md
 * "Basic auth"):
 *
 *   - the user is looked up by comparing the name with every configured name in constant time
 *     (no early exit);
 *   - an unknown user is checked against a dummy bcrypt setting with the cost of the configured
 *     hashes (the highest one), so it pays one bcrypt like a known user with a wrong password;
 *   - the hash crypt(3) returns is compared in constant time;
 *   - the Authorization header is decoded here, not by libmicrohttpd (whose 0.9.75 API returns C
 *     strings), so a NUL byte in the name or password is seen and refused. */
#include "clusterfit/exporter.h"

#include <crypt.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static _Atomic unsigned long hash_runs;

unsigned long cfit_web_hash_runs(void)
{
    return hash_runs;
}

/* 1 when a (len bytes) equals b (NUL-terminated), in time depending only on len and strlen(b). */
static int same_ct(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    unsigned char diff = (unsigned char)(alen != blen);
    for (size_t i = 0; i < alen; i++)
        diff |= (unsigned char)(a[i] ^ b[i < blen ? i : 0]);
    return diff == 0;
}

int cfit_web_user_index(const cfit_web_config *wc, const char *user)
{
    int found = -1;
    size_t ulen = strlen(user);
    for (size_t i = 0; i < wc->nusers; i++) {
        int hit = same_ct(user, ulen, wc->users[i]);
        found = hit && found < 0 ? (int)i : found;   /* every name is compared */
    }
    return found;
}

/* The bcrypt cost ("$2b$NN$...") of a hash, or 0. */
static int bcrypt_cost(const char *hash)
{
    if (strlen(hash) < 7 || hash[0] != '$' || hash[1] != '2' || hash[3] != '$' || hash[6] != '$' ||
        hash[4] < '0' || hash[4] > '9' || hash[5] < '0' || hash[5] > '9')
        return 0;
    return (hash[4] - '0') * 10 + (hash[5] - '0');
}

/* A bcrypt setting with the highest cost of the configured hashes (10 with none), into buf. */
static const char *dummy_setting(const cfit_web_config *wc, char *buf, size_t n)
{
    int cost = 0;
    for (size_t i = 0; i < wc->nusers; i++) {
        int c = bcrypt_cost(wc->hashes[i]);
        cost = c > cost ? c : cost;
    }
    /* 10 is the cost htpasswd -B and exporter-toolkit's docs use (httpd.apache.org/docs/2.4/programs/htpasswd.html) */
    return crypt_gensalt_rn("$2b$", (unsigned long)(cost ? cost : 10), NULL, 0, buf, (int)n);
}

/* 1 when crypt(password, hash) == hash, compared in constant time; one crypt either way. */
static int crypt_matches(const char *password, const char *hash)
{
    struct crypt_data *cd = calloc(1, sizeof *cd);
    if (!cd)
        return 0;
    hash_runs++;
    const char *got = crypt_r(password, hash, cd);
    int ok = got && got[0] != '*' && same_ct(got, strlen(got), hash);
    free(cd);
    return ok;
}

int cfit_web_check_password(const cfit_web_config *wc, const char *user, const char *password)
{
    int idx = cfit_web_user_index(wc, user);
    char setting[CRYPT_GENSALT_OUTPUT_SIZE];
    const char *hash = idx >= 0 ? wc->hashes[idx] : dummy_setting(wc, setting, sizeof setting);
    if (!hash)
        return 0;
    int ok = crypt_matches(password, hash);
    return ok && idx >= 0;
}

static int b64_value(char c)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = c ? strchr(tab, c) : NULL;
    return p ? (int)(p - tab) : -1;
}

/* Standard base64 (padding optional) of s into out (at most n-1 bytes, NUL added); length or -1. */
static long b64_decode(const char *s, char *out, size_t n)
{
    size_t len = strlen(s), o = 0;
    while (len > 0 && s[len - 1] == '=')
        len--;
    unsigned acc = 0, bits = 0;
    for (size_t i = 0; i < len; i++) {
        int v = b64_value(s[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o + 1 >= n)
                return -1;
            out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    out[o] = '\0';
    return (long)o;
}

int cfit_web_parse_basic(const char *header, char *user, size_t user_n, char *pass, size_t pass_n)
{
    if (!header || strncasecmp(header, "Basic ", 6) != 0)
        return -1;
    const char *p = header + 6;
    while (*p == ' ')
        p++;
    char buf[1024];
    long n = b64_decode(p, buf, sizeof buf);
    if (n < 0 || memchr(buf, '\0', (size_t)n))   /* a NUL would cut the name or password short */
        return -1;
    const char *colon = memchr(buf, ':', (size_t)n);
    if (!colon)
        return -1;
    size_t ul = (size_t)(colon - buf), pl = (size_t)n - ul - 1;
    if (ul >= user_n || pl >= pass_n)
        return -1;
    memcpy(user, buf, ul);
    user[ul] = '\0';
    memcpy(pass, colon + 1, pl);
    pass[pl] = '\0';
    return 0;
}
