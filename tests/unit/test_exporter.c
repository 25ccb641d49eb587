/* test_exporter.c - the exposition writer, the job line parser, the web config parser,
 * bcrypt checks and the watchdog's decision. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clusterfit/exporter.h"

static char *render(cfit_expo *e, cfit_expo_format f)
{
    char *out;
    size_t len;
    assert_int_equal(cfit_expo_render(e, f, &out, &len), 0);
    assert_int_equal(strlen(out), len);
    return out;
}

static void test_text_format(void **st)
{
    (void)st;
    cfit_expo *e = cfit_expo_new();
    assert_int_equal(cfit_expo_family(e, "x_bytes_total", CFIT_METRIC_COUNTER, "Bytes \\ moved\nhere."), 0);
    assert_int_equal(cfit_expo_family(e, "x_temp_celsius", CFIT_METRIC_GAUGE, "Temp."), 0);
    const char *l1[] = {"device", "a\"b\\c\nd", NULL};
    const char *l2[] = {"device", "eth0", NULL};
    /* samples out of family order are grouped when rendered */
    assert_int_equal(cfit_expo_sample(e, "x_bytes_total", l1, 1), 0);
    assert_int_equal(cfit_expo_sample(e, "x_temp_celsius", NULL, 0.5), 0);
    assert_int_equal(cfit_expo_sample(e, "x_bytes_total", l2, 1e20), 0);
    assert_int_equal(cfit_expo_family(e, "x_build_info", CFIT_METRIC_INFO, "Build."), 0);
    const char *l3[] = {"version", "1", NULL};
    assert_int_equal(cfit_expo_sample(e, "x_build_info", l3, 7), 0);
    char *out = render(e, CFIT_EXPO_TEXT);
    assert_string_equal(out,
                        "# HELP x_bytes_total Bytes \\\\ moved\\nhere.\n"
                        "# TYPE x_bytes_total counter\n"
                        "x_bytes_total{device=\"a\\\"b\\\\c\\nd\"} 1\n"
                        "x_bytes_total{device=\"eth0\"} 1e+20\n"
                        "# HELP x_temp_celsius Temp.\n"
                        "# TYPE x_temp_celsius gauge\n"
                        "x_temp_celsius 0.5\n"
                        "# HELP x_build_info Build.\n"
                        "# TYPE x_build_info gauge\n"
                        "x_build_info{version=\"1\"} 1\n");
    free(out);
    out = render(e, CFIT_EXPO_OPENMETRICS);
    assert_non_null(strstr(out, "# TYPE x_bytes counter\nx_bytes_total{"));
    assert_non_null(strstr(out, "# TYPE x_build info\nx_build_info{version=\"1\"} 1\n"));
    size_t n = strlen(out);
    assert_true(n > 6 && strcmp(out + n - 6, "# EOF\n") == 0);
    free(out);
    cfit_expo_free(e);
}

static void test_histogram_and_rollback(void **st)
{
    (void)st;
    cfit_expo *e = cfit_expo_new();
    assert_int_equal(cfit_expo_family(e, "h_seconds", CFIT_METRIC_HISTOGRAM, "H."), 0);
    double b[] = {0.5, 1};
    uint64_t cum[] = {2, 3};
    const char *l[] = {"job", "j", NULL};
    assert_int_equal(cfit_expo_histogram(e, "h_seconds", l, b, cum, 2, 2.25, 4), 0);
    cfit_expo_mark m = cfit_expo_mark_get(e);
    assert_int_equal(cfit_expo_family(e, "late_total", CFIT_METRIC_COUNTER, "L."), 0);
    assert_int_equal(cfit_expo_sample(e, "late_total", NULL, 3), 0);
    assert_int_equal(cfit_expo_histogram(e, "h_seconds", NULL, b, cum, 2, 1, 3), 0);
    cfit_expo_rollback(e, m);
    char *out = render(e, CFIT_EXPO_TEXT);
    assert_string_equal(out, "# HELP h_seconds H.\n# TYPE h_seconds histogram\n"
                             "h_seconds_bucket{job=\"j\",le=\"0.5\"} 2\n"
                             "h_seconds_bucket{job=\"j\",le=\"1\"} 3\n"
                             "h_seconds_bucket{job=\"j\",le=\"+Inf\"} 4\n"
                             "h_seconds_sum{job=\"j\"} 2.25\n"
                             "h_seconds_count{job=\"j\"} 4\n");
    free(out);
    double bad[] = {1, 0.5};
    assert_int_equal(cfit_expo_histogram(e, "h_seconds", NULL, bad, cum, 2, 1, 3), CFIT_EINVALID);
    cfit_expo_free(e);
}

static void test_invalid_names(void **st)
{
    (void)st;
    cfit_expo *e = cfit_expo_new();
    assert_int_equal(cfit_expo_family(e, "bytes", CFIT_METRIC_COUNTER, ""), CFIT_EINVALID);
    assert_int_equal(cfit_expo_family(e, "build", CFIT_METRIC_INFO, ""), CFIT_EINVALID);
    assert_int_equal(cfit_expo_family(e, "9lives", CFIT_METRIC_GAUGE, ""), CFIT_EINVALID);
    assert_int_equal(cfit_expo_family(e, "a-b", CFIT_METRIC_GAUGE, ""), CFIT_EINVALID);
    assert_int_equal(cfit_expo_family(e, "g", CFIT_METRIC_GAUGE, ""), 0);
    assert_int_equal(cfit_expo_family(e, "g", CFIT_METRIC_GAUGE, ""), 0);
    assert_int_equal(cfit_expo_family(e, "g", CFIT_METRIC_HISTOGRAM, ""), CFIT_EINVALID);
    assert_int_equal(cfit_expo_sample(e, "nope", NULL, 1), CFIT_EUNKNOWN);
    const char *bl[] = {"le", "1", NULL}, *bl2[] = {"__x", "1", NULL}, *bl3[] = {"a:b", "1", NULL};
    assert_int_equal(cfit_expo_sample(e, "g", bl, 1), CFIT_EINVALID);
    assert_int_equal(cfit_expo_sample(e, "g", bl2, 1), CFIT_EINVALID);
    assert_int_equal(cfit_expo_sample(e, "g", bl3, 1), CFIT_EINVALID);
    cfit_expo_free(e);
}

static void test_values_and_negotiation(void **st)
{
    (void)st;
    char b[40];
    cfit_expo_format_value(b, sizeof b, NAN);
    assert_string_equal(b, "NaN");
    cfit_expo_format_value(b, sizeof b, -INFINITY);
    assert_string_equal(b, "-Inf");
    cfit_expo_format_value(b, sizeof b, 0.1);
    assert_string_equal(b, "0.1");
    cfit_expo_format_value(b, sizeof b, 123456789012.0);
    assert_string_equal(b, "123456789012");
    cfit_expo_format_value(b, sizeof b, 1.0 / 3);
    assert_true(strtod(b, NULL) == 1.0 / 3);
    assert_int_equal(cfit_expo_negotiate(NULL), CFIT_EXPO_TEXT);
    assert_int_equal(cfit_expo_negotiate("text/plain;version=0.0.4;q=0.5,*/*;q=0.1"), CFIT_EXPO_TEXT);
    assert_int_equal(cfit_expo_negotiate("application/openmetrics-text;version=1.0.0,text/plain;q=0.5"),
                     CFIT_EXPO_OPENMETRICS);
    assert_string_equal(cfit_expo_content_type(CFIT_EXPO_TEXT), "text/plain; version=0.0.4; charset=utf-8");
}

static void test_job_lines(void **st)
{
    (void)st;
    cfit_job_report r;
    cfit_diag d;
    const char *ok = "job=llama-70b rank=3 step=1.25 data=0.05 allreduce=0.2 optimizer=0.03\n";
    assert_int_equal(cfit_job_parse_line(ok, strlen(ok), &r, &d), 0);
    assert_string_equal(r.job, "llama-70b");
    assert_int_equal(r.rank, 3);
    assert_true(r.step_s == 1.25 && r.data_s == 0.05 && r.allreduce_s == 0.2 && r.optimizer_s == 0.03);
    const char *min = "rank=0\tstep=2 job=a";
    assert_int_equal(cfit_job_parse_line(min, strlen(min), &r, &d), 0);
    assert_true(r.data_s == 0 && r.step_s == 2);
    static const struct { const char *line; int col; const char *msg; } bad[] = {
        {"job=a rank=1", 1, "missing step"},
        {"job=a rank=1 step=-1", 14, "step: expected seconds"},
        {"job=a rank=1 step=nan", 14, "step: expected seconds"},
        {"job=a rank=1 step=1s", 14, "step: expected seconds"},
        {"job=a rank=x step=1", 7, "rank: expected"},
        {"job=a rank=99999999999 step=1", 7, "rank:"},
        {"job=a b rank=1 step=1", 7, "expected KEY=VALUE"},
        {"job=a rank=1 step=1 steps=2", 21, "unknown key"},
        {"job=a rank=1 step=1 step=2", 21, "key given twice"},
        {"job=a\"b rank=1 step=1", 6, "job: only"},
        {"job= rank=1 step=1", 1, "job: expected 1 to 64"},
        {"", 1, "missing job"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(cfit_job_parse_line(bad[i].line, strlen(bad[i].line), &r, &d), CFIT_EPARSE);
        assert_int_equal(d.col, bad[i].col);
        if (!strstr(d.msg, bad[i].msg))
            fail_msg("line '%s': message '%s' lacks '%s'", bad[i].line, d.msg, bad[i].msg);
    }
}

static const char HASH[] = "$2b$04$i8DBDwdLN5Mbh8ZUsUL7JuIC2Z0Ii25Dr.OT2NQH.ohaXrhTjmNf2";   /* "secret" */

static void test_web_config(void **st)
{
    (void)st;
    cfit_web_config wc;
    cfit_diag d;
    char text[512];
    snprintf(text, sizeof text,
             "# exporter web config\n---\ntls_server_config:\n  cert_file: tls/server.crt\n"
             "  key_file: \"/etc/key.pem\"   # absolute\nbasic_auth_users:\n  alice: '%s'\n  bob: %s\n",
             HASH, HASH);
    assert_int_equal(cfit_web_config_parse(text, strlen(text), "/etc/cf/web.yml", &wc, &d), 0);
    assert_string_equal(wc.cert_file, "/etc/cf/tls/server.crt");
    assert_string_equal(wc.key_file, "/etc/key.pem");
    assert_int_equal(wc.nusers, 2);
    assert_string_equal(wc.users[1], "bob");
    assert_int_equal(cfit_web_check_password(&wc, "alice", "secret"), 1);
    assert_int_equal(cfit_web_check_password(&wc, "alice", "Secret"), 0);
    assert_int_equal(cfit_web_check_password(&wc, "carol", "secret"), 0);
    cfit_web_config_fini(&wc);

    static const struct { const char *text; int line, col; const char *msg; } bad[] = {
        {"tls_server_config:\n  cert_fil: a\n", 2, 3, "did you mean 'cert_file'"},
        {"tls_server_config:\n  curve_preferences: [X25519]\n", 2, 3, "not supported"},
        {"rate_limit:\n  burst: 1\n", 1, 1, "not supported"},
        {"basic_auth_users:\n  alice: plain\n", 2, 10, "bcrypt"},
        {"basic_auth_users:\n\talice: x\n", 2, 1, "cannot start any token"},
        {"tls_server_config:\n  cert_file: 'a\n", 3, 1, "quoted scalar (which starts at 2:14)"},
        {"  cert_file: a\n", 1, 3, "unknown key 'cert_file' in the web config"},
        {"tls_server_config:\n  cert_file: a\n", 1, 1, "both cert_file and key_file"},
        {"tls_server_config:\n  cert_file: a\n    key_file: b\n", 3, 13, "mapping values are not allowed"},
        {"users\n", 1, 1, "expected a mapping"},
        {"tls_server_config: {cert_file: a, key_file: b, min_version: TLS14}\n", 1, 61, "unknown TLS version 'TLS14'"},
        {"tls_server_config: {cert_file: a, key_file: b, min_version: TLS13, max_version: TLS12}\n", 1, 1,
         "min_version TLS13 is above max_version TLS12"},
        {"tls_server_config: {cert_file: a, key_file: b, client_auth_type: RequireAndVerifyClientCrt}\n", 1, 66,
         "did you mean 'RequireAndVerifyClientCert'"},
        {"tls_server_config: {cert_file: a, key_file: b, client_ca_file: ca}\n", 1, 1, "without a client_auth_type"},
        {"tls_server_config: {cert_file: a, key_file: b, client_auth_type: VerifyClientCertIfGiven}\n", 1, 1,
         "needs client_ca_file"},
        {"tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites:\n    - TLS_RSA_WITH_RC4_128_SHA\n", 5, 7,
         "unknown cipher suite 'TLS_RSA_WITH_RC4_128_SHA'"},
        {"tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: TLS_AES_128_GCM_SHA256\n", 4, 18,
         "expected a list"},
        {"tls_server_config: {cert_file: a, key_file: b, max_version: TLS12, cipher_suites: [TLS_AES_128_GCM_SHA256]}\n",
         1, 1, "names only TLS 1.3 suites"},
        {"http_server_config:\n  headers:\n    Server: x\n", 3, 5, "'Server' can not be configured"},
        {"http_server_config:\n  headers:\n    X-Frame-Options: allow\n", 3, 22, "expected deny or sameorigin"},
        {"http_server_config:\n  headers:\n    X-XSS-Protection: \"1\\r\\nX: y\"\n", 3, 23, "line break"},
        {"http_server_config: {http2: true}\n", 1, 29, "HTTP/1.1 only"},
        {"basic_auth_users:\n  alice: x\n  alice: y\n", 2, 10, "bcrypt"},
        {"tls_server_config: {}\ntls_server_config: {}\n", 2, 1, "'tls_server_config' given twice"},
        {"tls_server_config: {cert_file: a, key_file: b}\n---\nbasic_auth_users: {}\n", 3, 1, "second YAML document"},
        {"tls_server_config:\n  prefer_server_cipher_suites: maybe\n", 2, 32, "expected true or false"},
        {"tls_server_config: [a]\n", 1, 20, "expected a mapping"},
        {"basic_auth_users:\n  a: \"\\0\"\n", 2, 6, "NUL byte"},
        {"a: b\x01\n", 1, 5, "control characters"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(cfit_web_config_parse(bad[i].text, strlen(bad[i].text), "w.yml", &wc, &d), CFIT_EPARSE);
        if (d.line != bad[i].line || d.col != bad[i].col || !strstr(d.msg, bad[i].msg))
            fail_msg("case %zu: got %d:%d '%s', want %d:%d '%s'", i, d.line, d.col, d.msg, bad[i].line,
                     bad[i].col, bad[i].msg);
        assert_string_equal(d.file, "w.yml");
    }
}

/* What promtool check web-config accepts: flow style, the ... end marker, folded and literal
 * scalars, anchors; and the TLS settings read into the config. */
static void test_web_config_yaml(void **st)
{
    (void)st;
    cfit_web_config wc;
    cfit_diag d;
    static const char flow[] = "tls_server_config: {cert_file: s.crt, key_file: s.key}\n...\n";
    assert_int_equal(cfit_web_config_parse(flow, strlen(flow), "/w/web.yml", &wc, &d), 0);
    assert_string_equal(wc.cert_file, "/w/s.crt");
    assert_int_equal(wc.min_version, 12);
    assert_int_equal(wc.max_version, 13);
    assert_int_equal(wc.prefer_server_cipher_suites, 1);
    assert_int_equal(wc.client_auth, CFIT_WEB_NO_CLIENT_CERT);
    cfit_web_config_fini(&wc);
    static const char full[] =
        "---\ntls_server_config:\n  cert_file: &c >-\n    s.crt\n  key_file: |-\n    s.key\n"
        "  client_ca_file: \"ca.crt\"   # CAs\n  client_auth_type: RequireAndVerifyClientCert\n"
        "  min_version: TLS13\n  max_version: TLS13\n  prefer_server_cipher_suites: false\n"
        "  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256]\n"
        "http_server_config:\n  http2: false\n  headers:\n    X-Frame-Options: sameorigin\n"
        "    Strict-Transport-Security: >-\n      max-age=31536000;\n      includeSubDomains\n"
        "basic_auth_users: {}\n...\n";
    if (cfit_web_config_parse(full, strlen(full), "web.yml", &wc, &d))
        fail_msg("%d:%d: %s", d.line, d.col, d.msg);
    assert_string_equal(wc.cert_file, "s.crt");
    assert_string_equal(wc.key_file, "s.key");
    assert_string_equal(wc.client_ca_file, "ca.crt");
    assert_int_equal(wc.client_auth, CFIT_WEB_REQUIRE_AND_VERIFY_CLIENT_CERT);
    assert_int_equal(wc.min_version, 13);
    assert_int_equal(wc.prefer_server_cipher_suites, 0);
    assert_int_equal(wc.nsuites, 2);
    assert_string_equal(cfit_tls_suite_name(wc.suites[0]), "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
    assert_int_equal(wc.nheaders, 2);
    assert_string_equal(wc.header_values[1], "max-age=31536000; includeSubDomains");
    char prio[1024];
    assert_int_equal(cfit_tls_priorities(&wc, prio, sizeof prio), 0);
    assert_string_equal(prio, "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:-KX-ALL:-MAC-ALL:+AES-128-GCM:+AEAD"
                              ":+AES-256-GCM:+CHACHA20-POLY1305");
    cfit_web_config_fini(&wc);
    static const char empty[] = "# nothing\n";
    assert_int_equal(cfit_web_config_parse(empty, strlen(empty), "web.yml", &wc, &d), 0);
    assert_null(wc.cert_file);
    assert_int_equal(cfit_tls_priorities(&wc, prio, sizeof prio), 0);
    assert_string_equal(prio, "NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.3:%SERVER_PRECEDENCE");
    cfit_web_config_fini(&wc);
    assert_int_equal(cfit_tls_suite_index("TLS_RSA_WITH_RC4_128_SHA"), -1);
    for (int i = 0; i < CFIT_WEB_MAX_SUITES; i++)
        assert_int_equal(cfit_tls_suite_index(cfit_tls_suite_name(i)), i);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median wall times of n checks each of an unknown user and a known user with a wrong password,
 * interleaved so that a change in the machine's load hits both alike. */
static void median_checks_s(const cfit_web_config *wc, int n, double *unknown_s, double *known_s)
{
    double t[2][31];
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 2; k++) {
            double t0 = now_s();
            assert_int_equal(cfit_web_check_password(wc, k ? "alice" : "mallory", "wrong"), 0);
            t[k][i] = now_s() - t0;
        }
    qsort(t[0], (size_t)n, sizeof t[0][0], cmp_double);
    qsort(t[1], (size_t)n, sizeof t[1][0], cmp_double);
    *unknown_s = t[0][n / 2];
    *known_s = t[1][n / 2];
}

/* Issue 16: an unknown user costs one bcrypt of the configured cost like a known user with a
 * wrong password (counted, and timed by medians with a wide tolerance for a loaded machine);
 * NUL bytes in the Authorization header are refused. */
static void test_auth_constant_time(void **st)
{
    (void)st;
    static const char H6[] = "$2b$06$HDAtvIPT.dAsknaSo6M5le.oneH524aZCqRMACNaDTwGC3dlYM5yC";   /* "secret" */
    cfit_web_config wc = {.nusers = 2};
    wc.users[0] = "alice", wc.hashes[0] = (char *)H6;
    wc.users[1] = "bob", wc.hashes[1] = (char *)H6;
    assert_int_equal(cfit_web_check_password(&wc, "alice", "secret"), 1);
    assert_int_equal(cfit_web_user_index(&wc, "bob"), 1);
    assert_int_equal(cfit_web_user_index(&wc, "bo"), -1);
    assert_int_equal(cfit_web_user_index(&wc, "bobby"), -1);
    unsigned long r0 = cfit_web_hash_runs();
    assert_int_equal(cfit_web_check_password(&wc, "mallory", "secret"), 0);
    assert_int_equal(cfit_web_hash_runs() - r0, 1);   /* the unknown user paid a bcrypt too */
    assert_int_equal(cfit_web_check_password(&wc, "alice", "wrong"), 0);
    assert_int_equal(cfit_web_hash_runs() - r0, 2);
    double unknown, known;   /* the counts above are the exact check; this one is loose for loaded machines */
    median_checks_s(&wc, 31, &unknown, &known);
    if (unknown < known / 3 || unknown > 3 * known)
        fail_msg("unknown user %.3f ms vs known user, wrong password %.3f ms", unknown * 1e3, known * 1e3);

    char user[64], pass[64];
    assert_int_equal(cfit_web_parse_basic("Basic YWxpY2U6c2VjcmV0", user, sizeof user, pass, sizeof pass), 0);
    assert_string_equal(user, "alice");
    assert_string_equal(pass, "secret");
    assert_int_equal(cfit_web_parse_basic("basic YWxpY2U6c2VjcmV0", user, sizeof user, pass, sizeof pass), 0);
    /* "alice:secret\0junk" and "alice\0x:secret" */
    assert_int_equal(cfit_web_parse_basic("Basic YWxpY2U6c2VjcmV0AGp1bms=", user, sizeof user, pass, sizeof pass), -1);
    assert_int_equal(cfit_web_parse_basic("Basic YWxpY2UAeDpzZWNyZXQ=", user, sizeof user, pass, sizeof pass), -1);
    assert_int_equal(cfit_web_parse_basic("Basic YWxpY2U=", user, sizeof user, pass, sizeof pass), -1);   /* no ':' */
    assert_int_equal(cfit_web_parse_basic("Basic !!!", user, sizeof user, pass, sizeof pass), -1);
    assert_int_equal(cfit_web_parse_basic("Bearer abc", user, sizeof user, pass, sizeof pass), -1);
    assert_int_equal(cfit_web_parse_basic(NULL, user, sizeof user, pass, sizeof pass), -1);
}

/* ---- job socket (issue 16 part 5) ---- */

static cfit_exporter *job_exporter(cfit_exporter_config *cfg)
{
    int enable[8] = {0};
    for (size_t i = 0; cfit_collectors[i]; i++)
        enable[i] = strcmp(cfit_collectors[i]->name, "job") == 0;
    return cfit_exporter_new(cfg, enable);
}

static void job_send(const char *path, const char *line)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    assert_true(sendto(fd, line, strlen(line), 0, (struct sockaddr *)&a, sizeof a) == (ssize_t)strlen(line));
    close(fd);
}

static char *job_scrape(cfit_exporter *x)
{
    char *out;
    size_t len;
    assert_int_equal(cfit_exporter_scrape(x, CFIT_EXPO_TEXT, &out, &len), 0);
    return out;
}

/* Scrape until the scrape holds want (the receiving thread is asynchronous). */
static char *job_scrape_until(cfit_exporter *x, const char *want)
{
    for (int i = 0; i < 200; i++) {
        char *out = job_scrape(x);
        if (strstr(out, want))
            return out;
        free(out);
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    char *out = job_scrape(x);
    fail_msg("scrape lacks '%s':\n%s", want, out);
    return NULL;
}

static void expect_in(const char *out, const char *line, int present)
{
    if ((strstr(out, line) != NULL) != present)
        fail_msg("scrape %s '%s':\n%s", present ? "lacks" : "holds", line, out);
}

static void test_job_series_bound_and_straggler(void **st)
{
    (void)st;
    char dir[] = "/tmp/cfit-job.XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/job.sock", dir);
    cfit_exporter_config cfg = {.job_socket = path, .job_max_series = 3, .job_stale_s = 1.5};
    cfit_exporter *x = job_exporter(&cfg);
    assert_null(cfit_exporter_collector_error(x, "job"));
    job_send(path, "job=a rank=0 step=1 allreduce=0.5\njob=a rank=1 step=1 allreduce=0.4\n"
                   "job=a rank=2 step=1.6 allreduce=0.1\n");
    char *out = job_scrape_until(x, "clusterfit_job_reports_total 3\n");
    expect_in(out, "clusterfit_job_series 3\n", 1);
    /* busy times 0.5, 0.6, 1.5: median 0.6 */
    expect_in(out, "clusterfit_job_step_time_ratio_to_median{training_job=\"a\",rank=\"1\"} 1\n", 1);
    expect_in(out, "clusterfit_job_step_time_ratio_to_median{training_job=\"a\",rank=\"2\"} 2.5\n", 1);
    free(out);
    nanosleep(&(struct timespec){0, 20000000}, NULL);
    job_send(path, "job=a rank=1 step=1 allreduce=0.4\njob=a rank=2 step=1.6 allreduce=0.1\n");
    free(job_scrape_until(x, "clusterfit_job_reports_total 5\n"));
    nanosleep(&(struct timespec){0, 20000000}, NULL);
    job_send(path, "job=b rank=0 step=2\n");   /* past the limit: a/0, heard from longest ago, makes room */
    out = job_scrape_until(x, "clusterfit_job_reports_total 6\n");
    expect_in(out, "clusterfit_job_bad_lines_total 0\n", 1);
    expect_in(out, "clusterfit_job_series_evicted_total 1\n", 1);
    expect_in(out, "training_job=\"a\",rank=\"0\"", 0);
    expect_in(out, "clusterfit_job_steps_total{training_job=\"b\",rank=\"0\"} 1\n", 1);
    expect_in(out, "clusterfit_job_step_time_ratio_to_median{training_job=\"b\",rank=\"0\"} 1\n", 1);
    free(out);
    nanosleep(&(struct timespec){1, 800000000}, NULL);   /* past stale-after: every pair dropped */
    out = job_scrape(x);
    expect_in(out, "clusterfit_job_series 0\n", 1);
    expect_in(out, "clusterfit_job_series_evicted_total 4\n", 1);
    free(out);
    cfit_exporter_free(x);
    assert_int_equal(access(path, F_OK), -1);   /* removed at exit */
    rmdir(dir);
}

static void test_job_socket_takeover(void **st)
{
    (void)st;
    char dir[] = "/tmp/cfit-jobs.XXXXXX", path[64], moved[80];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/job.sock", dir);
    snprintf(moved, sizeof moved, "%s/old.sock", dir);
    cfit_exporter_config cfg = {.job_socket = path};
    cfit_exporter *a = job_exporter(&cfg);
    assert_null(cfit_exporter_collector_error(a, "job"));
    cfit_exporter *b = job_exporter(&cfg);   /* a live socket: refused, left alone */
    const char *why = cfit_exporter_collector_error(b, "job");
    assert_non_null(why);
    assert_non_null(strstr(why, "served by another live process"));
    cfit_exporter_free(b);
    job_send(path, "job=a rank=0 step=1\n");   /* a still hears its reporters */
    free(job_scrape_until(a, "clusterfit_job_reports_total 1\n"));

    /* a successor took the path: a's exit must not delete the successor's socket */
    assert_int_equal(rename(path, moved), 0);
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    cfit_exporter_free(a);
    assert_int_equal(access(path, F_OK), 0);
    close(fd);   /* now a stale socket: nobody listens; a new exporter replaces it */
    cfit_exporter *c = job_exporter(&cfg);
    assert_null(cfit_exporter_collector_error(c, "job"));
    cfit_exporter_free(c);
    unlink(moved);
    rmdir(dir);
}

/* Issue 16: gzip only when Accept-Encoding allows it; the body is a gzip member zlib inflates. */
static void test_gzip(void **st)
{
    (void)st;
    assert_int_equal(cfit_http_accepts_gzip("gzip"), 1);
    assert_int_equal(cfit_http_accepts_gzip("deflate, GZIP;q=0.5"), 1);
    assert_int_equal(cfit_http_accepts_gzip("br, gzip ; q=1.0"), 1);
    assert_int_equal(cfit_http_accepts_gzip("gzip;q=0"), 0);
    assert_int_equal(cfit_http_accepts_gzip("gzip; q=0.000, br"), 0);
    assert_int_equal(cfit_http_accepts_gzip("x-gzip2, identity"), 0);
    assert_int_equal(cfit_http_accepts_gzip(""), 0);
    assert_int_equal(cfit_http_accepts_gzip(NULL), 0);
    char in[4096], *z;
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = "clusterfit_gpu_up 1\n"[i % 20];
    size_t zn;
    assert_int_equal(cfit_http_gzip(in, sizeof in, &z, &zn), 0);
    assert_true(zn > 18 && zn < sizeof in / 4);
    assert_int_equal((unsigned char)z[0], 0x1f);   /* RFC 1952 magic */
    assert_int_equal((unsigned char)z[1], 0x8b);
    free(z);
}

static void test_watchdog_decide(void **st)
{
    (void)st;
    cfit_watchdog_config c = {.idle_below = 0.8, .for_s = 600};
    cfit_gpu_sample s[2] = {{.index = 0, .up = 1, .utilization_ratio = 0.1},
                            {.index = 1, .up = 1, .utilization_ratio = 0.5}};
    double since = -1, mx;
    assert_int_equal(cfit_watchdog_decide(&c, s, 2, 100, &since, &mx), CFIT_WD_IDLE);
    assert_true(since == 100 && mx == 0.5);
    assert_int_equal(cfit_watchdog_decide(&c, s, 2, 699, &since, &mx), CFIT_WD_IDLE);
    assert_int_equal(cfit_watchdog_decide(&c, s, 2, 700, &since, &mx), CFIT_WD_ACT);
    assert_int_equal(cfit_watchdog_decide(&c, s, 2, 701, &since, &mx), CFIT_WD_IDLE);   /* re-armed */
    s[1].utilization_ratio = 0.9;
    assert_int_equal(cfit_watchdog_decide(&c, s, 2, 800, &since, &mx), CFIT_WD_BUSY);
    assert_true(since < 0);
    s[1].up = 0;   /* a lost GPU does not count as busy or idle */
    s[1].utilization_ratio = 0.9;
    assert_int_equal(cfit_watchdog_decide(&c, s, 2, 900, &since, &mx), CFIT_WD_IDLE);
    s[0].up = 0;
    assert_int_equal(cfit_watchdog_decide(&c, s, 2, 1000, &since, &mx), CFIT_WD_NO_GPUS);
    assert_int_equal(cfit_watchdog_decide(&c, s, 0, 1000, &since, &mx), CFIT_WD_NO_GPUS);
}

static void test_collectors_table(void **st)
{
    (void)st;
    assert_non_null(cfit_collector_find("gpu"));
    assert_non_null(cfit_collector_find("job"));
    assert_null(cfit_collector_find("cpu"));
    /* a fixture-less exporter still scrapes: collectors that cannot read report failure */
    cfit_exporter_config cfg = {.sysfs = "/nonexistent", .procfs = "/nonexistent", .nvml_library = "/nonexistent.so"};
    cfit_exporter *x = cfit_exporter_new(&cfg, NULL);
    char *out;
    size_t len;
    assert_int_equal(cfit_exporter_scrape(x, CFIT_EXPO_TEXT, &out, &len), 0);
    assert_non_null(strstr(out, "clusterfit_scrape_collector_success{collector=\"disk\"} 0\n"));
    assert_non_null(strstr(out, "clusterfit_scrape_collector_success{collector=\"netdev\"} 0\n"));
    assert_non_null(strstr(out, "clusterfit_scrape_collector_success{collector=\"gpu\"} 1\n"));
    assert_non_null(strstr(out, "clusterfit_gpu_nvml_up 0\n"));
    free(out);
    cfit_exporter_free(x);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A collector that fails halfway has its samples rolled back; the others are served. */
static void test_failing_collector_rolled_back(void **st)
{
    (void)st;
    char dir[] = "/tmp/cfit-proc.XXXXXX", path[128];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/diskstats", dir);
    write_file(path, "   8       0 sda 5000 10 80000 2500 6000 20 96000 3000 0 4000 5500\n"
                     "   8      16 sdb 12 garbage\n");
    cfit_exporter_config cfg = {.sysfs = "/nonexistent", .procfs = dir};
    int enable[8] = {0};
    for (size_t i = 0; cfit_collectors[i]; i++)
        enable[i] = strcmp(cfit_collectors[i]->name, "disk") == 0 || strcmp(cfit_collectors[i]->name, "infiniband") == 0;
    cfit_exporter *x = cfit_exporter_new(&cfg, enable);
    char *out;
    size_t len;
    assert_int_equal(cfit_exporter_scrape(x, CFIT_EXPO_TEXT, &out, &len), 0);
    assert_non_null(strstr(out, "clusterfit_scrape_collector_success{collector=\"disk\"} 0\n"));
    assert_non_null(strstr(out, "clusterfit_scrape_collector_success{collector=\"infiniband\"} 1\n"));
    assert_null(strstr(out, "clusterfit_disk_"));   /* sda's samples went with the failure */
    free(out);
    /* fixed: the next scrape serves it */
    write_file(path, "   8       0 sda 5000 10 80000 2500 6000 20 96000 3000 0 4000 5500\n");
    assert_int_equal(cfit_exporter_scrape(x, CFIT_EXPO_OPENMETRICS, &out, &len), 0);
    assert_non_null(strstr(out, "clusterfit_disk_read_bytes_total{device=\"sda\"} 40960000\n"));
    assert_non_null(strstr(out, "# TYPE clusterfit_disk_read_bytes counter\n"));
    free(out);
    cfit_exporter_free(x);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_format),
        cmocka_unit_test(test_histogram_and_rollback),
        cmocka_unit_test(test_invalid_names),
        cmocka_unit_test(test_values_and_negotiation),
        cmocka_unit_test(test_job_lines),
        cmocka_unit_test(test_web_config),
        cmocka_unit_test(test_web_config_yaml),
        cmocka_unit_test(test_auth_constant_time),
        cmocka_unit_test(test_job_series_bound_and_straggler),
        cmocka_unit_test(test_job_socket_takeover),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_watchdog_decide),
        cmocka_unit_test(test_collectors_table),
        cmocka_unit_test(test_failing_collector_rolled_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
