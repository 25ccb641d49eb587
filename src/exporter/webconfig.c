/* webconfig.c - the web config file (--web.config.file), a YAML subset of the Prometheus
 * exporter-toolkit format (the bcrypt check is in auth.c, so this parser links without libcrypt).
 *
 *     tls_server_config:
 *       cert_file: server.crt        # PEM certificate chain
 *       key_file: server.key         # PEM private key
 *     basic_auth_users:
 *       alice: $2b$10$...            # bcrypt hash (htpasswd -nBC 10 alice)
 *
 * Two levels of block mappings, spaces for indentation, # comments, plain, 'single' or
 * "double" quoted scalars.  Keys the toolkit knows but clusterfit does not implement are
 * errors (never silently ignored), as are unknown keys (with a did-you-mean).
 */
#include "clusterfit/exporter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cfit_web_config_fini(cfit_web_config *wc)
{
    free(wc->cert_file);
    free(wc->key_file);
    for (size_t i = 0; i < wc->nusers; i++) {
        free(wc->users[i]);
        free(wc->hashes[i]);
    }
    memset(wc, 0, sizeof *wc);
}

static char *dupn(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

typedef struct wparse {
    const char *file;
    int line;
    cfit_diag *d;
} wparse;

#define WERR(p, col, ...) cfit_diag_set((p)->d, CFIT_EPARSE, (p)->file, (p)->line, (col), __VA_ARGS__)

/* Parse the scalar in s[0..n) (already trimmed of a comment and spaces) into *out. */
static int scalar(wparse *p, const char *s, size_t n, int col, char **out)
{
    if (n > 0 && (s[0] == '\'' || s[0] == '"')) {
        char q = s[0];
        char *buf = malloc(n + 1);
        if (!buf)
            return CFIT_ENOMEM;
        size_t o = 0, i = 1;
        for (; i < n; i++) {
            if (s[i] == q) {
                if (q == '\'' && i + 1 < n && s[i + 1] == '\'') {   /* '' inside single quotes */
                    buf[o++] = '\'';
                    i++;
                    continue;
                }
                break;
            }
            if (q == '"' && s[i] == '\\' && i + 1 < n) {
                char c = s[++i];
                if (c != '"' && c != '\\') {
                    free(buf);
                    return WERR(p, col + (int)i, "only \\\" and \\\\ escapes are supported");
                }
                buf[o++] = c;
                continue;
            }
            buf[o++] = s[i];
        }
        if (i >= n) {
            free(buf);
            return WERR(p, col, "unterminated quoted string");
        }
        if (i + 1 != n) {
            free(buf);
            return WERR(p, col + (int)i + 1, "unexpected text after the closing quote");
        }
        buf[o] = '\0';
        *out = buf;
        return 0;
    }
    if (n > 0 && strchr("{[&*!|>%@`", s[0]))
        return WERR(p, col, "only plain or quoted scalars are supported here");
    *out = dupn(s, n);
    return *out ? 0 : CFIT_ENOMEM;
}

/* Length of the line content before a comment (a # at the start or after a space, outside quotes). */
static size_t strip_comment(const char *s, size_t n)
{
    char q = 0;
    for (size_t i = 0; i < n; i++) {
        if (q) {
            if (s[i] == q)
                q = 0;
        } else if (s[i] == '\'' || s[i] == '"') {
            q = s[i];
        } else if (s[i] == '#' && (i == 0 || s[i - 1] == ' ')) {
            n = i;
            break;
        }
    }
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\r'))
        n--;
    return n;
}

enum { SEC_NONE, SEC_TLS, SEC_USERS };

static const char *const top_keys[] = {"tls_server_config", "basic_auth_users"};
static const char *const unsupported_top[] = {"http_server_config", "rate_limit"};
static const char *const tls_keys[] = {"cert_file", "key_file"};
static const char *const unsupported_tls[] = {"cert", "key", "client_auth_type", "client_ca_file",
                                              "client_allowed_sans", "min_version", "max_version",
                                              "cipher_suites", "curve_preferences",
                                              "prefer_server_cipher_suites"};

static int in_list(const char *k, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(k, list[i]) == 0)
            return 1;
    return 0;
}

static int unknown_key(wparse *p, int col, const char *key, const char *const *known, size_t n,
                       const char *const *unsupported, size_t nu, const char *where)
{
    if (in_list(key, unsupported, nu))
        return WERR(p, col, "'%s' is not supported by clusterfit's exporter (docs/exporter.md)", key);
    const char *near = cfit_closest(key, known, n);
    if (near)
        return WERR(p, col, "unknown key '%s' in %s (did you mean '%s'?)", key, where, near);
    return WERR(p, col, "unknown key '%s' in %s", key, where);
}

static int resolve(const char *file, const char *path, char **out)
{
    const char *slash = file ? strrchr(file, '/') : NULL;
    if (path[0] == '/' || !slash) {
        *out = dupn(path, strlen(path));
    } else {
        size_t dl = (size_t)(slash - file) + 1, pl = strlen(path);
        *out = malloc(dl + pl + 1);
        if (*out) {
            memcpy(*out, file, dl);
            memcpy(*out + dl, path, pl + 1);
        }
    }
    return *out ? 0 : CFIT_ENOMEM;
}

static int is_bcrypt(const char *h)
{
    return strlen(h) == 60 && h[0] == '$' && h[1] == '2' && (h[2] == 'a' || h[2] == 'b' || h[2] == 'y') &&
           h[3] == '$';
}

/* One "key: value" line inside a section. */
static int section_entry(wparse *p, cfit_web_config *wc, int sec, const char *key, int kcol, char *val,
                         int vcol)
{
    if (sec == SEC_TLS) {
        if (!in_list(key, tls_keys, 2))
            return unknown_key(p, kcol, key, tls_keys, 2, unsupported_tls,
                               sizeof unsupported_tls / sizeof *unsupported_tls, "tls_server_config");
        char **dst = strcmp(key, "cert_file") == 0 ? &wc->cert_file : &wc->key_file;
        if (*dst)
            return WERR(p, kcol, "'%s' given twice", key);
        if (!val[0])
            return WERR(p, vcol, "%s: expected a file name", key);
        return resolve(p->file, val, dst);
    }
    for (size_t i = 0; i < wc->nusers; i++)
        if (strcmp(wc->users[i], key) == 0)
            return WERR(p, kcol, "user '%s' given twice", key);
    if (wc->nusers == CFIT_WEB_MAX_USERS)
        return WERR(p, kcol, "more than %d users", CFIT_WEB_MAX_USERS);
    if (!is_bcrypt(val))
        return WERR(p, vcol, "user '%s': expected a bcrypt hash ($2b$..., 60 characters; htpasswd -nB)", key);
    wc->users[wc->nusers] = dupn(key, strlen(key));
    wc->hashes[wc->nusers] = dupn(val, strlen(val));
    if (!wc->users[wc->nusers] || !wc->hashes[wc->nusers]) {
        free(wc->users[wc->nusers]);
        free(wc->hashes[wc->nusers]);
        return CFIT_ENOMEM;
    }
    wc->nusers++;
    return 0;
}

static int parse_line(wparse *p, cfit_web_config *wc, const char *s, size_t n, int *sec, int *indent)
{
    size_t ind = 0;
    while (ind < n && s[ind] == ' ')
        ind++;
    if (ind < n && s[ind] == '\t')
        return WERR(p, (int)ind + 1, "tabs are not allowed for indentation");
    n = strip_comment(s, n);
    if (n <= ind)
        return 0;   /* blank or comment */
    if (n - ind == 3 && memcmp(s + ind, "---", 3) == 0 && ind == 0)
        return 0;   /* document start */
    const char *colon = NULL;
    char q = 0;
    for (size_t i = ind; i < n; i++) {
        if (q) {
            if (s[i] == q)
                q = 0;
        } else if (s[i] == '\'' || s[i] == '"') {
            q = s[i];
        } else if (s[i] == ':' && (i + 1 == n || s[i + 1] == ' ')) {
            colon = s + i;
            break;
        }
    }
    int kcol = (int)ind + 1;
    if (!colon)
        return WERR(p, kcol, "expected 'key: value'");
    char *key;
    int rc = scalar(p, s + ind, (size_t)(colon - s) - ind, kcol, &key);
    if (rc)
        return rc;
    size_t v = (size_t)(colon - s) + 1;
    while (v < n && s[v] == ' ')
        v++;
    if (ind == 0) {
        *indent = 0;
        if (!in_list(key, top_keys, 2))
            rc = unknown_key(p, kcol, key, top_keys, 2, unsupported_top, 2, "the web config");
        else if (v < n)
            rc = WERR(p, (int)v + 1, "%s: expected its entries on the following lines, indented", key);
        else
            *sec = strcmp(key, "tls_server_config") == 0 ? SEC_TLS : SEC_USERS;
        free(key);
        return rc;
    }
    if (*sec == SEC_NONE)
        rc = WERR(p, kcol, "unexpected indentation");
    else if (*indent && (size_t)*indent != ind)
        rc = WERR(p, kcol, "inconsistent indentation (%d spaces above, %zu here)", *indent, ind);
    if (rc) {
        free(key);
        return rc;
    }
    *indent = (int)ind;
    char *val;
    rc = scalar(p, s + v, n - v, (int)v + 1, &val);
    if (!rc) {
        rc = section_entry(p, wc, *sec, key, kcol, val, (int)v + 1);
        free(val);
    }
    free(key);
    return rc;
}

int cfit_web_config_parse(const char *text, size_t len, const char *file, cfit_web_config *wc, cfit_diag *d)
{
    memset(wc, 0, sizeof *wc);
    cfit_diag_clear(d);
    wparse p = {file, 0, d};
    int sec = SEC_NONE, indent = 0, rc = 0;
    size_t i = 0;
    while (i < len && !rc) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len;
        p.line++;
        if (memchr(text + i, '\0', end - i))
            rc = WERR(&p, 1, "NUL byte in the file");
        else
            rc = parse_line(&p, wc, text + i, end - i, &sec, &indent);
        i = end + 1;
    }
    if (!rc && (!wc->cert_file) != (!wc->key_file))
        rc = cfit_diag_set(d, CFIT_EPARSE, file, 0, 0, "tls_server_config needs both cert_file and key_file");
    if (rc)
        cfit_web_config_fini(wc);
    return rc;
}

int cfit_web_config_load(const char *path, cfit_web_config *wc, cfit_diag *d)
{
    memset(wc, 0, sizeof *wc);
    FILE *f = fopen(path, "rb");
    if (!f)
        return cfit_diag_set(d, CFIT_EIO, path, 0, 0, "cannot open");
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, 1 << 20, f) : 0;
    int big = buf && n == (1 << 20), bad = ferror(f);
    fclose(f);
    if (!buf)
        return CFIT_ENOMEM;
    int rc = bad ? cfit_diag_set(d, CFIT_EIO, path, 0, 0, "cannot read")
           : big ? cfit_diag_set(d, CFIT_EPARSE, path, 0, 0, "larger than 1 MiB")
                 : cfit_web_config_parse(buf, n, path, wc, d);
    free(buf);
    return rc;
}
