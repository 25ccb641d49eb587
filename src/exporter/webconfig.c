/* webconfig.c - the web config file (--web.config.file) in Prometheus exporter-toolkit's format
 * (github.com/prometheus/exporter-toolkit, web/tls_config.go and web/handler.go), parsed with
 * libyaml (any YAML 1.1 that promtool check web-config reads: block or flow style, quoted,
 * folded and literal scalars, comments, the --- and ... markers).  The bcrypt check is in
 * auth.c and the TLS policy in tls.c.
 *
 *     tls_server_config:
 *       cert_file: server.crt        # PEM certificate chain
 *       key_file: server.key         # PEM private key
 *       min_version: TLS12           # TLS10..TLS13; default TLS12 (exporter-toolkit's)
 *       client_auth_type: RequireAndVerifyClientCert
 *       client_ca_file: ca.crt
 *     http_server_config:
 *       headers: {X-Frame-Options: deny}
 *     basic_auth_users:
 *       alice: $2b$10$...            # bcrypt hash (htpasswd -nBC 10 alice)
 *
 * Keys the toolkit knows but clusterfit does not implement are errors (never silently
 * ignored), as are unknown keys (with a did-you-mean) and keys given twice (yaml.v2's
 * UnmarshalStrict, which exporter-toolkit uses, refuses those too).
 */
#include "clusterfit/exporter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

void cfit_web_config_fini(cfit_web_config *wc)
{
    free(wc->cert_file);
    free(wc->key_file);
    free(wc->client_ca_file);
    for (size_t i = 0; i < wc->nheaders; i++) {
        free(wc->header_names[i]);
        free(wc->header_values[i]);
    }
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
    yaml_document_t *doc;
    cfit_diag *d;
    cfit_web_config *wc;
} wparse;

/* An error at a node's first character (libyaml's marks are 0-based). */
#define NERR(p, node, ...)                                                                          \
    cfit_diag_set((p)->d, CFIT_EPARSE, (p)->file, (int)(node)->start_mark.line + 1,                \
                  (int)(node)->start_mark.column + 1, __VA_ARGS__)

static yaml_node_t *node(const wparse *p, int id)
{
    return yaml_document_get_node(p->doc, id);
}

static const char *sval(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

/* A plain null (empty, ~, null): an absent section or value, as yaml.v2 reads it. */
static int is_null(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    const char *v = sval(n);
    return !v[0] || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL");
}

/* The text of a scalar node (what yaml.v2 puts in a Go string), refusing NUL bytes. */
static int scalar(wparse *p, const yaml_node_t *n, const char *what, const char **out)
{
    if (n->type != YAML_SCALAR_NODE)
        return NERR(p, n, "%s: expected a single value, not a %s", what,
                    n->type == YAML_MAPPING_NODE ? "mapping" : "list");
    if (memchr(n->data.scalar.value, '\0', n->data.scalar.length))
        return NERR(p, n, "%s: NUL byte in the value", what);
    *out = is_null(n) ? "" : sval(n);
    return 0;
}

/* yaml.v2's booleans (YAML 1.1), plain scalars only. */
static int boolean(wparse *p, const yaml_node_t *n, const char *what, int *out)
{
    static const char *const yes[] = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"};
    static const char *const no[] = {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"};
    if (n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
        for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
            if (!strcmp(sval(n), yes[i]))
                return *out = 1, 0;
            if (!strcmp(sval(n), no[i]))
                return *out = 0, 0;
        }
    return NERR(p, n, "%s: expected true or false", what);
}

static int in_list(const char *k, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(k, list[i]) == 0)
            return (int)i;
    return -1;
}

/* A section's keys: the ones clusterfit reads, and the ones exporter-toolkit knows that it
 * does not implement (an error naming docs/exporter.md, never ignored). */
typedef struct section {
    const char *where;
    const char *const *known;
    size_t nknown;
    const char *const *unsupported;
    size_t nunsupported;
    int (*entry)(wparse *p, int key, const yaml_node_t *k, const yaml_node_t *v);
} section;

static int unknown_key(wparse *p, const yaml_node_t *k, const section *s)
{
    const char *key = sval(k);
    if (in_list(key, s->unsupported, s->nunsupported) >= 0)
        return NERR(p, k, "'%s' is not supported by clusterfit's exporter (docs/exporter.md)", key);
    const char *near = cfit_suggest(key, s->known, s->nknown);
    if (near)
        return NERR(p, k, "unknown key '%s' in %s (did you mean '%s'?)", key, s->where, near);
    return NERR(p, k, "unknown key '%s' in %s", key, s->where);
}

/* 1 when the mapping's pair i repeats the key of an earlier pair. */
static int repeated(const wparse *p, const yaml_node_t *map, yaml_node_pair_t *pair)
{
    const yaml_node_t *k = node(p, pair->key);
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < pair; q++) {
        const yaml_node_t *o = node(p, q->key);
        if (o->type == YAML_SCALAR_NODE && o->data.scalar.length == k->data.scalar.length &&
            !memcmp(o->data.scalar.value, k->data.scalar.value, k->data.scalar.length))
            return 1;
    }
    return 0;
}

/* Each pair of mapping n (a null is an empty section) through s->entry; known < 0 for a
 * free-form section (users, headers) whose every key goes to entry. */
static int each_pair(wparse *p, const yaml_node_t *n, const section *s)
{
    if (is_null(n))
        return 0;
    if (n->type != YAML_MAPPING_NODE)
        return NERR(p, n, "%s: expected a mapping of keys to values", s->where);
    for (yaml_node_pair_t *pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
        const yaml_node_t *k = node(p, pair->key), *v = node(p, pair->value);
        const char *key = "";
        int rc = scalar(p, k, s->where, &key);
        if (rc)
            return rc;
        if (repeated(p, n, pair))
            return NERR(p, k, "'%s' given twice in %s", key, s->where);
        int idx = s->known ? in_list(key, s->known, s->nknown) : 0;
        if (idx < 0)
            return unknown_key(p, k, s);
        if ((rc = s->entry(p, idx, k, v)))
            return rc;
    }
    return 0;
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

static int file_name(wparse *p, const yaml_node_t *k, const yaml_node_t *v, char **dst)
{
    const char *val = "";
    int rc = scalar(p, v, sval(k), &val);
    if (rc)
        return rc;
    if (!val[0])
        return NERR(p, v, "%s: expected a file name", sval(k));
    return resolve(p->file, val, dst);
}

/* ---- tls_server_config ----------------------------------------------------------------- */

enum { T_CERT, T_KEY, T_CA, T_AUTH, T_MIN, T_MAX, T_SUITES, T_PREFER };
static const char *const tls_keys[] = {"cert_file", "key_file", "client_ca_file", "client_auth_type",
                                       "min_version", "max_version", "cipher_suites",
                                       "prefer_server_cipher_suites"};
static const char *const tls_unsupported[] = {"cert", "key", "client_ca", "client_allowed_sans",
                                              "curve_preferences"};

/* Go's tls.ClientAuthType names as exporter-toolkit accepts them ("RequireClientCert" is its
 * old spelling of RequireAnyClientCert). */
static const struct { const char *name; cfit_web_client_auth v; } auth_names[] = {
    {"NoClientCert", CFIT_WEB_NO_CLIENT_CERT},
    {"RequestClientCert", CFIT_WEB_REQUEST_CLIENT_CERT},
    {"RequireAnyClientCert", CFIT_WEB_REQUIRE_ANY_CLIENT_CERT},
    {"RequireClientCert", CFIT_WEB_REQUIRE_ANY_CLIENT_CERT},
    {"VerifyClientCertIfGiven", CFIT_WEB_VERIFY_CLIENT_CERT_IF_GIVEN},
    {"RequireAndVerifyClientCert", CFIT_WEB_REQUIRE_AND_VERIFY_CLIENT_CERT},
};

static int client_auth(wparse *p, const yaml_node_t *v)
{
    const char *val = "", *names[sizeof auth_names / sizeof *auth_names];
    int rc = scalar(p, v, "client_auth_type", &val);
    if (rc)
        return rc;
    for (size_t i = 0; i < sizeof auth_names / sizeof *auth_names; i++) {
        names[i] = auth_names[i].name;
        if (!strcmp(val, names[i]) || (!val[0] && i == 0)) {
            p->wc->client_auth = auth_names[i].v;
            return 0;
        }
    }
    const char *near = cfit_closest(val, names, sizeof names / sizeof *names);
    return NERR(p, v, "client_auth_type: unknown '%s'%s%s%s (NoClientCert, RequestClientCert, RequireAnyClientCert, "
                "VerifyClientCertIfGiven, RequireAndVerifyClientCert)", val, near ? " (did you mean '" : "",
                near ? near : "", near ? "'?)" : "");
}

static int tls_version(wparse *p, const yaml_node_t *k, const yaml_node_t *v, int *out)
{
    static const char *const names[] = {"TLS10", "TLS11", "TLS12", "TLS13"};
    const char *val = "";
    int rc = scalar(p, v, sval(k), &val);
    if (rc)
        return rc;
    int i = in_list(val, names, 4);
    if (i < 0)
        return NERR(p, v, "%s: unknown TLS version '%s' (TLS10, TLS11, TLS12 or TLS13)", sval(k), val);
    *out = 10 + i;
    return 0;
}

static int cipher_suites(wparse *p, const yaml_node_t *v)
{
    cfit_web_config *wc = p->wc;
    if (is_null(v))
        return 0;
    if (v->type != YAML_SEQUENCE_NODE)
        return NERR(p, v, "cipher_suites: expected a list of Go cipher suite names");
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
        const yaml_node_t *e = node(p, *it);
        const char *name = "";
        int rc = scalar(p, e, "cipher_suites", &name);
        if (rc)
            return rc;
        int idx = cfit_tls_suite_index(name);
        if (idx < 0)
            return NERR(p, e, "cipher_suites: unknown cipher suite '%s' (the names of Go's tls.CipherSuites(), "
                        "docs/exporter.md)", name);
        int seen = 0;
        for (size_t j = 0; j < wc->nsuites; j++)
            seen |= wc->suites[j] == idx;
        if (!seen)
            wc->suites[wc->nsuites++] = idx;
    }
    return 0;
}

static int tls_entry(wparse *p, int key, const yaml_node_t *k, const yaml_node_t *v)
{
    cfit_web_config *wc = p->wc;
    switch (key) {
    case T_CERT: return file_name(p, k, v, &wc->cert_file);
    case T_KEY: return file_name(p, k, v, &wc->key_file);
    case T_CA: return file_name(p, k, v, &wc->client_ca_file);
    case T_AUTH: return client_auth(p, v);
    case T_MIN: return tls_version(p, k, v, &wc->min_version);
    case T_MAX: return tls_version(p, k, v, &wc->max_version);
    case T_SUITES: return cipher_suites(p, v);
    default: return boolean(p, v, "prefer_server_cipher_suites", &wc->prefer_server_cipher_suites);
    }
}

/* 1 when cipher_suites names a TLS 1.2-or-older suite (the TLS 1.3 ones have no "_WITH_"). */
static int suites_before_tls13(const cfit_web_config *wc)
{
    for (size_t i = 0; i < wc->nsuites; i++)
        if (strstr(cfit_tls_suite_name(wc->suites[i]), "_WITH_"))
            return 1;
    return 0;
}

/* exporter-toolkit's ConfigToTLSConfig checks, at the tls_server_config key. */
static int tls_check(wparse *p, const yaml_node_t *k)
{
    const cfit_web_config *wc = p->wc;
    if (!wc->cert_file || !wc->key_file)
        return NERR(p, k, "tls_server_config needs both cert_file and key_file");
    if (wc->min_version > wc->max_version)
        return NERR(p, k, "tls_server_config: min_version TLS%d is above max_version TLS%d", wc->min_version,
                    wc->max_version);
    if (wc->nsuites && wc->max_version <= 12 && !suites_before_tls13(wc))
        return NERR(p, k, "tls_server_config: cipher_suites names only TLS 1.3 suites, which max_version TLS%d "
                    "never negotiates (no handshake could succeed)", wc->max_version);
    if (wc->client_ca_file && wc->client_auth == CFIT_WEB_NO_CLIENT_CERT)
        return NERR(p, k, "tls_server_config: client_ca_file is set without a client_auth_type");
    if (!wc->client_ca_file && (wc->client_auth == CFIT_WEB_VERIFY_CLIENT_CERT_IF_GIVEN ||
                                wc->client_auth == CFIT_WEB_REQUIRE_AND_VERIFY_CLIENT_CERT))
        return NERR(p, k, "tls_server_config: client_auth_type %s needs client_ca_file (the CAs to verify against)",
                    wc->client_auth == CFIT_WEB_VERIFY_CLIENT_CERT_IF_GIVEN ? "VerifyClientCertIfGiven"
                                                                            : "RequireAndVerifyClientCert");
    return 0;
}

/* ---- http_server_config ---------------------------------------------------------------- */

/* The headers exporter-toolkit's web/handler.go lets a config set, and its allowed values
 * (NULL: any). */
static const struct { const char *name; const char *values[3]; } header_rules[] = {
    {"Strict-Transport-Security", {NULL}},
    {"X-Content-Type-Options", {"nosniff", NULL}},
    {"X-Frame-Options", {"deny", "sameorigin", NULL}},
    {"X-XSS-Protection", {NULL}},
    {"Content-Security-Policy", {NULL}},
};

static int header_entry(wparse *p, int key, const yaml_node_t *k, const yaml_node_t *v)
{
    (void)key;
    cfit_web_config *wc = p->wc;
    const char *name = sval(k), *val = "";
    int rc = scalar(p, v, name, &val), r = -1;
    if (rc)
        return rc;
    for (size_t i = 0; i < sizeof header_rules / sizeof *header_rules; i++)
        r = strcmp(name, header_rules[i].name) ? r : (int)i;
    if (r < 0)
        return NERR(p, k, "HTTP header '%s' can not be configured (Strict-Transport-Security, X-Content-Type-Options, "
                    "X-Frame-Options, X-XSS-Protection, Content-Security-Policy)", name);
    if (strpbrk(val, "\r\n"))
        return NERR(p, v, "%s: a line break in a header value", name);
    const char *const *ok = header_rules[r].values;
    int match = !ok[0];
    for (size_t i = 0; ok[i]; i++)
        match |= !strcmp(val, ok[i]);
    if (!match)
        return NERR(p, v, "invalid value for %s: expected %s%s%s, got '%s'", name, ok[0], ok[1] ? " or " : "",
                    ok[1] ? ok[1] : "", val);
    wc->header_names[wc->nheaders] = dupn(name, strlen(name));
    wc->header_values[wc->nheaders] = dupn(val, strlen(val));
    rc = wc->header_names[wc->nheaders] && wc->header_values[wc->nheaders] ? 0 : CFIT_ENOMEM;
    wc->nheaders++;   /* fini frees a half-made pair too */
    return rc;
}

static const char *const http_keys[] = {"headers", "http2"};
static const section headers_section = {"http_server_config.headers", NULL, 0, NULL, 0, header_entry};

static int http_entry(wparse *p, int key, const yaml_node_t *k, const yaml_node_t *v)
{
    (void)k;
    if (key == 0)
        return each_pair(p, v, &headers_section);
    int on = 0;
    int rc = boolean(p, v, "http2", &on);
    if (!rc && on)
        rc = NERR(p, v, "http2: true is not supported: clusterfit's exporter serves HTTP/1.1 only (docs/exporter.md)");
    return rc;
}

/* ---- basic_auth_users ------------------------------------------------------------------ */

static int is_bcrypt(const char *h)
{
    return strlen(h) == 60 && h[0] == '$' && h[1] == '2' && (h[2] == 'a' || h[2] == 'b' || h[2] == 'y') &&
           h[3] == '$';
}

static int user_entry(wparse *p, int key, const yaml_node_t *k, const yaml_node_t *v)
{
    (void)key;
    cfit_web_config *wc = p->wc;
    const char *name = sval(k), *val = "";
    int rc = scalar(p, v, name, &val);
    if (rc)
        return rc;
    if (wc->nusers == CFIT_WEB_MAX_USERS)
        return NERR(p, k, "more than %d users", CFIT_WEB_MAX_USERS);
    if (!is_bcrypt(val))
        return NERR(p, v, "user '%s': expected a bcrypt hash ($2b$..., 60 characters; htpasswd -nB)", name);
    wc->users[wc->nusers] = dupn(name, strlen(name));
    wc->hashes[wc->nusers] = dupn(val, strlen(val));
    rc = wc->users[wc->nusers] && wc->hashes[wc->nusers] ? 0 : CFIT_ENOMEM;
    wc->nusers++;
    return rc;
}

/* ---- the document ---------------------------------------------------------------------- */

static const section tls_section = {"tls_server_config", tls_keys, sizeof tls_keys / sizeof *tls_keys,
                                    tls_unsupported, sizeof tls_unsupported / sizeof *tls_unsupported, tls_entry};
static const section http_section = {"http_server_config", http_keys, 2, NULL, 0, http_entry};
static const section users_section = {"basic_auth_users", NULL, 0, NULL, 0, user_entry};

static const char *const top_keys[] = {"tls_server_config", "http_server_config", "basic_auth_users"};
static const char *const top_unsupported[] = {"rate_limit"};

static int top_entry(wparse *p, int key, const yaml_node_t *k, const yaml_node_t *v)
{
    if (key == 1)
        return each_pair(p, v, &http_section);
    if (key == 2)
        return each_pair(p, v, &users_section);
    int rc = each_pair(p, v, &tls_section);
    int empty = v->type != YAML_MAPPING_NODE || v->data.mapping.pairs.start == v->data.mapping.pairs.top;
    return rc ? rc : empty ? 0 : tls_check(p, k);   /* {} or null: plain HTTP, as exporter-toolkit */
}

static const section top_section = {"the web config", top_keys, 3, top_unsupported, 1, top_entry};

/* The 1-based line and column of byte offset off (line breaks \n, \r\n and \r, as YAML's). */
static void position(const char *text, size_t len, size_t off, int *line, int *col)
{
    *line = *col = 1;
    for (size_t i = 0; i < off && i < len; i++, ++*col)
        if (text[i] == '\n' || (text[i] == '\r' && (i + 1 >= len || text[i + 1] != '\n')))
            ++*line, *col = 0;
}

/* libyaml's own error (syntax, bad characters), at its mark; a reader error (bad UTF-8, control
 * characters) has a byte offset instead, and a mark at the end of a file without a final line
 * break is one line past it (libyaml adds the break): both are placed in the text here. */
static int parser_error(const wparse *p, const yaml_parser_t *ps, const char *text, size_t len)
{
    if (ps->error == YAML_MEMORY_ERROR)
        return CFIT_ENOMEM;
    int line = (int)ps->problem_mark.line + 1, col = (int)ps->problem_mark.column + 1;
    int end_line, end_col;
    position(text, len, len, &end_line, &end_col);
    if (ps->error == YAML_READER_ERROR)
        position(text, len, ps->problem_offset, &line, &col);
    else if (line > end_line)   /* mark.index counts characters, not bytes: compare lines */
        line = end_line, col = end_col;
    const char *what = ps->problem ? ps->problem : "invalid YAML";
    if (!ps->context)
        return cfit_diag_set(p->d, CFIT_EPARSE, p->file, line, col, "%s", what);
    return cfit_diag_set(p->d, CFIT_EPARSE, p->file, line, col, "%s %s (which starts at %d:%d)", what, ps->context,
                         (int)ps->context_mark.line + 1, (int)ps->context_mark.column + 1);
}

/* Load the first document; a second one that holds anything is refused (yaml.v2 would read
 * only the first, silently). */
static int load(wparse *p, const char *text, size_t len)
{
    yaml_parser_t ps;
    if (!yaml_parser_initialize(&ps))
        return CFIT_ENOMEM;
    yaml_parser_set_input_string(&ps, (const unsigned char *)text, len);
    int rc = yaml_parser_load(&ps, p->doc) ? 0 : parser_error(p, &ps, text, len);
    if (!rc) {
        yaml_document_t next;
        if (!yaml_parser_load(&ps, &next)) {
            rc = parser_error(p, &ps, text, len);
        } else {
            yaml_node_t *root = yaml_document_get_root_node(&next);
            if (root && !is_null(root))
                rc = NERR(p, root, "a second YAML document: the web config is one document");
            yaml_document_delete(&next);
        }
        if (rc)
            yaml_document_delete(p->doc);
    }
    yaml_parser_delete(&ps);
    return rc;
}

int cfit_web_config_parse(const char *text, size_t len, const char *file, cfit_web_config *wc, cfit_diag *d)
{
    memset(wc, 0, sizeof *wc);
    wc->min_version = 12;   /* exporter-toolkit's getConfig defaults */
    wc->max_version = 13;
    wc->prefer_server_cipher_suites = 1;
    cfit_diag_clear(d);
    yaml_document_t doc;
    wparse p = {file, &doc, d, wc};
    int rc = load(&p, text, len);
    if (rc)
        return cfit_web_config_fini(wc), rc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    rc = root ? each_pair(&p, root, &top_section) : 0;   /* an empty file: no TLS, no users */
    yaml_document_delete(&doc);
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
