/* tls.c - the web config's TLS policy on GnuTLS (libmicrohttpd's TLS library): protocol
 * versions, cipher suites and client certificates as exporter-toolkit's tls_server_config
 * defines them (docs/exporter.md "TLS").
 *
 *   - Versions: min_version..max_version (default TLS12..TLS13, exporter-toolkit's getConfig)
 *     become the priority string's +VERS-TLS1.x entries.
 *   - cipher_suites: Go names them by IANA name (crypto/tls, tls.CipherSuites()); GnuTLS
 *     selects by key exchange, cipher and MAC, so the priority string lists the parts of the
 *     named suites (ciphers in the file's order), and a handshake hook refuses any other
 *     combination those parts would allow.  As in
 *     Go, the TLS 1.3 suites are not configurable: TLS 1.3 keeps its three.
 *   - prefer_server_cipher_suites (default true): %SERVER_PRECEDENCE.
 *   - client_auth_type: the session's certificate request (IGNORE, REQUEST, REQUIRE) and, for the
 *     two verifying types, a verify callback run on receipt of the client's certificate that
 *     checks it against client_ca_file (libmicrohttpd's HTTPS_MEM_TRUST) and fails the
 *     handshake when it does not verify.
 */
#include "exporter/tls.h"

#include <gnutls/gnutls.h>
#include <stdio.h>
#include <string.h>

/* Go's secure cipher suites (crypto/tls cipher_suites.go, CipherSuites()), and their GnuTLS
 * parts (gnutls-cli --list; GnuTLS manual "Priority strings").  kx NULL: a TLS 1.3 suite. */
static const struct suite {
    const char *go, *kx, *cipher, *mac;
} suites[CFIT_WEB_MAX_SUITES] = {
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "RSA", "AES-128-CBC", "SHA1"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "RSA", "AES-256-CBC", "SHA1"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "RSA", "AES-128-GCM", "AEAD"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "RSA", "AES-256-GCM", "AEAD"},
    {"TLS_AES_128_GCM_SHA256", NULL, "AES-128-GCM", "AEAD"},
    {"TLS_AES_256_GCM_SHA384", NULL, "AES-256-GCM", "AEAD"},
    {"TLS_CHACHA20_POLY1305_SHA256", NULL, "CHACHA20-POLY1305", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA", "AES-128-CBC", "SHA1"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA", "AES-256-CBC", "SHA1"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA", "AES-128-CBC", "SHA1"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA", "AES-256-CBC", "SHA1"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA", "AES-128-GCM", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA", "AES-256-GCM", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA", "CHACHA20-POLY1305", "AEAD"},
};

const char *cfit_tls_suite_name(int i)
{
    return i >= 0 && i < CFIT_WEB_MAX_SUITES ? suites[i].go : NULL;
}

int cfit_tls_suite_index(const char *name)
{
    for (int i = 0; i < CFIT_WEB_MAX_SUITES; i++)
        if (!strcmp(name, suites[i].go))
            return i;
    return -1;
}

/* Append ":+item" to buf unless it is there already. */
static void add_item(char *buf, size_t n, const char *item)
{
    char tok[64];
    snprintf(tok, sizeof tok, ":+%s:", item);
    size_t len = strlen(buf);
    buf[len] = ':';   /* so the last item also ends with ':' for the search */
    buf[len + 1] = '\0';
    int have = strstr(buf, tok) != NULL;
    buf[len] = '\0';
    if (!have)
        snprintf(buf + len, n - len, "%.*s", (int)strlen(tok) - 1, tok);
}

/* The parts of the TLS 1.2-and-older suites named, then TLS 1.3's ciphers when it is on. */
static void suite_parts(const cfit_web_config *wc, char *buf, size_t n)
{
    static const char *const parts[] = {"-CIPHER-ALL", "-KX-ALL", "-MAC-ALL"};
    for (size_t i = 0; i < 3; i++)
        snprintf(buf + strlen(buf), n - strlen(buf), ":%s", parts[i]);
    for (size_t i = 0; i < wc->nsuites; i++) {
        const struct suite *s = &suites[wc->suites[i]];
        if (s->kx && wc->min_version <= 12) {
            add_item(buf, n, s->cipher);
            add_item(buf, n, s->kx);
            add_item(buf, n, s->mac);
        }
    }
    for (int i = 0; wc->max_version >= 13 && i < CFIT_WEB_MAX_SUITES; i++)
        if (!suites[i].kx) {
            add_item(buf, n, suites[i].cipher);
            add_item(buf, n, suites[i].mac);
        }
}

int cfit_tls_priorities(const cfit_web_config *wc, char *buf, size_t n)
{
    int len = snprintf(buf, n, "NORMAL:-VERS-ALL");
    for (int v = wc->min_version; v <= wc->max_version; v++)
        len += snprintf(buf + len, n - (size_t)len, ":+VERS-TLS1.%d", v - 10);
    if (wc->prefer_server_cipher_suites)
        len += snprintf(buf + len, n - (size_t)len, ":%%SERVER_PRECEDENCE");
    if ((size_t)len >= n)
        return -1;
    if (wc->nsuites)
        suite_parts(wc, buf, n);
    return strlen(buf) + 1 >= n ? -1 : 0;
}

/* 1 when the negotiated TLS 1.2-or-older suite is one the web config names (compared by its
 * GnuTLS key exchange, cipher and MAC names, the table's). */
static int suite_allowed(gnutls_session_t s, const cfit_web_config *wc)
{
    const char *kx = gnutls_kx_get_name(gnutls_kx_get(s)), *cipher = gnutls_cipher_get_name(gnutls_cipher_get(s)),
               *mac = gnutls_mac_get_name(gnutls_mac_get(s));
    for (size_t i = 0; kx && cipher && mac && i < wc->nsuites; i++) {
        const struct suite *e = &suites[wc->suites[i]];
        if (e->kx && !strcmp(kx, e->kx) && !strcmp(cipher, e->cipher) && !strcmp(mac, e->mac))
            return 1;
    }
    return 0;
}

/* On the client's Finished (read under the new keys, so the cipher is known; the server's
 * Finished is not sent yet): refuse a suite that only the union of the named suites' parts
 * allows. */
static int suite_hook(gnutls_session_t s, unsigned htype, unsigned when, unsigned incoming, const gnutls_datum_t *msg)
{
    (void)when;
    (void)msg;
    const cfit_web_config *wc = gnutls_db_get_ptr(s);
    if (!wc || !wc->nsuites || htype != GNUTLS_HANDSHAKE_FINISHED || incoming ||
        gnutls_protocol_get_version(s) >= GNUTLS_TLS1_3)
        return 0;
    return suite_allowed(s, wc) ? 0 : GNUTLS_E_NO_CIPHER_SUITES;
}

/* On receipt of the client's certificate: for the verifying client_auth_types, it must chain to
 * client_ca_file (GnuTLS's verify_peers2 against the credentials' trust list).  An empty
 * certificate message passes unless one is required (GNUTLS_CERT_REQUIRE refuses it too). */
static int verify_client(gnutls_session_t s)
{
    const cfit_web_config *wc = gnutls_db_get_ptr(s);
    if (!wc)
        return -1;
    cfit_web_client_auth a = wc->client_auth;
    int required = a == CFIT_WEB_REQUIRE_ANY_CLIENT_CERT || a == CFIT_WEB_REQUIRE_AND_VERIFY_CLIENT_CERT;
    int verify = a == CFIT_WEB_VERIFY_CLIENT_CERT_IF_GIVEN || a == CFIT_WEB_REQUIRE_AND_VERIFY_CLIENT_CERT;
    unsigned n = 0, status = 0;
    if (!gnutls_certificate_get_peers(s, &n) || n == 0)
        return required ? -1 : 0;
    if (!verify)
        return 0;
    return gnutls_certificate_verify_peers2(s, &status) == 0 && status == 0 ? 0 : -1;
}

void cfit__tls_session_setup(void *session, const cfit_web_config *wc)
{
    gnutls_session_t s = session;
    static const gnutls_certificate_request_t req[] = {
        [CFIT_WEB_NO_CLIENT_CERT] = GNUTLS_CERT_IGNORE,
        [CFIT_WEB_REQUEST_CLIENT_CERT] = GNUTLS_CERT_REQUEST,
        [CFIT_WEB_REQUIRE_ANY_CLIENT_CERT] = GNUTLS_CERT_REQUIRE,
        [CFIT_WEB_VERIFY_CLIENT_CERT_IF_GIVEN] = GNUTLS_CERT_REQUEST,
        [CFIT_WEB_REQUIRE_AND_VERIFY_CLIENT_CERT] = GNUTLS_CERT_REQUIRE,
    };
    /* libmicrohttpd keeps its connection in the session's user pointer; the database pointer
     * is unused (no session cache is set up), so the policy travels there. */
    gnutls_db_set_ptr(s, (void *)wc);
    gnutls_certificate_server_set_request(s, req[wc->client_auth]);
    if (wc->client_auth != CFIT_WEB_NO_CLIENT_CERT)
        gnutls_session_set_verify_function(s, verify_client);
    if (wc->nsuites)
        gnutls_handshake_set_hook_function(s, GNUTLS_HANDSHAKE_FINISHED, GNUTLS_HOOK_PRE, suite_hook);
}
