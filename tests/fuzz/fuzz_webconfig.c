/* fuzz_webconfig.c - fuzz target for the exporter's web config parser (src/exporter/webconfig.c).
 *
 * Oracles beyond "no crash" (and, under ASan, no leak): a rejected file has a message and a
 * line inside the file (counting lines as YAML does: \n, \r, and the UTF-8 NEL/LS/PS breaks,
 * an upper bound here); an accepted one has cert and key both or neither, at most
 * CFIT_WEB_MAX_USERS distinct users, each with a 60-character bcrypt-looking hash, TLS versions
 * in TLS10..TLS13 with min <= max, known cipher suites and headers at most once each. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clusterfit/exporter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cfit_web_config wc;
    cfit_diag d;
    int rc = cfit_web_config_parse((const char *)data, size, "web.yml", &wc, &d);
    if (rc) {
        check(rc == CFIT_EPARSE && d.msg[0] && strcmp(d.file, "web.yml") == 0 && d.line >= 0);
        size_t lines = 1;
        for (size_t i = 0; i < size; i++)
            lines += data[i] == '\n' || data[i] == '\r' || data[i] == 0x85 || data[i] == 0xa8 || data[i] == 0xa9;
        check((size_t)d.line <= lines);
        return 0;
    }
    check((wc.cert_file == NULL) == (wc.key_file == NULL));
    check(wc.nusers <= CFIT_WEB_MAX_USERS);
    check(wc.min_version >= 10 && wc.min_version <= wc.max_version && wc.max_version <= 13);
    check(wc.nsuites <= CFIT_WEB_MAX_SUITES && wc.nheaders <= CFIT_WEB_MAX_HEADERS);
    for (size_t i = 0; i < wc.nsuites; i++) {
        check(cfit_tls_suite_name(wc.suites[i]) != NULL);
        for (size_t j = 0; j < i; j++)
            check(wc.suites[i] != wc.suites[j]);
    }
    for (size_t i = 0; i < wc.nheaders; i++)
        check(!strpbrk(wc.header_values[i], "\r\n"));
    char prio[1024];
    check(cfit_tls_priorities(&wc, prio, sizeof prio) == 0);
    for (size_t i = 0; i < wc.nusers; i++) {
        check(strlen(wc.hashes[i]) == 60 && wc.hashes[i][0] == '$' && wc.hashes[i][1] == '2');
        for (size_t j = 0; j < i; j++)
            check(strcmp(wc.users[i], wc.users[j]) != 0);
    }
    cfit_web_config_fini(&wc);
    return 0;
}
