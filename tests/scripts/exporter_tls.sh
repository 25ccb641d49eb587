#!/usr/bin/env bash
# exporter_tls.sh BINARY SRCDIR - the exporter's TLS and web config as exporter-toolkit defines
# them: TLS 1.0 and 1.1 refused by default (openssl s_client), min_version TLS13 refuses 1.2,
# client certificates required and verified against client_ca_file, cipher_suites enforced,
# http_server_config.headers sent; YAML variants promtool check web-config accepts are accepted;
# bad keys and values refused with FILE:LINE:COL and exit 2.  Skips (77) without openssl/curl.
set -uo pipefail
BIN=$1 src=$2
. "$src/tests/scripts/exporter_lib.bash"
for t in openssl curl; do
    command -v $t >/dev/null || { echo "SKIP: $t missing (scripts/deps.sh installs it)"; exit 77; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-tls.XXXXXX") || fail mktemp
PIDS=()
trap 'for p in "${PIDS[@]}"; do stop "$p"; done; rm -rf "$tmp"' EXIT
fx=$src/tests/fixtures
cd "$tmp" || fail "cd $tmp"

cert() {   # cert NAME SUBJECT [CA]: a key and a certificate, self-signed or signed by CA
    if [[ -z ${3:-} ]]; then
        openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.crt" -days 2 -subj "$2" >/dev/null 2>&1
    else
        openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" >/dev/null 2>&1 &&
            openssl x509 -req -in "$1.csr" -CA "$3.crt" -CAkey "$3.key" -CAcreateserial -out "$1.crt" -days 2 >/dev/null 2>&1
    fi || fail "openssl could not make the test certificate $1"
}
cert ca /CN=clusterfit-test-ca
cert server /CN=127.0.0.1
cert client /CN=client ca
cert rogue /CN=rogue

serve() {   # serve WEBCONFIG: (re)start the exporter on it
    [[ -n ${EXPORTER_PID:-} ]] && stop "$EXPORTER_PID"
    start_exporter "$tmp/log" --web.listen-address 127.0.0.1:0 --web.config.file "$1" --no-collector.gpu \
        --path.sysfs "$fx/sysfs" --path.procfs "$fx/procfs"
    PIDS+=("$EXPORTER_PID")
}
# protocol FLAG: the version s_client negotiates ("(NONE)" when the server refuses); the client
# side allows the old versions (SECLEVEL=0), so a refusal is the server's
protocol() {
    echo | timeout 10 openssl s_client -connect "127.0.0.1:$EXPORTER_PORT" "$1" -cipher 'DEFAULT@SECLEVEL=0' 2>/dev/null |
        sed -n 's/^New, \([^,]*\), Cipher is.*/\1/p'
}
code() { curl -ks -o /dev/null -w '%{http_code}' "$@" "https://127.0.0.1:$EXPORTER_PORT/-/healthy"; }

# defaults (flow style, the ... end marker): TLS 1.2 and 1.3 only
printf 'tls_server_config: {cert_file: server.crt, key_file: server.key}\n...\n' >flow.yml
serve flow.yml
for v in -tls1 -tls1_1; do
    [[ $(protocol $v) == "(NONE)" ]] || fail "openssl s_client $v negotiated $(protocol $v) (TLS >= 1.2 by default)"
done
[[ $(protocol -tls1_2) == TLSv1.2 ]] || fail "TLS 1.2 refused by default"
[[ $(protocol -tls1_3) == TLSv1.3 ]] || fail "TLS 1.3 refused by default"

# min_version TLS13 (block style, a folded scalar, a comment)
cat >min13.yml <<'YML'
---
tls_server_config:
  cert_file: >-
    server.crt
  key_file: "server.key"   # PEM
  min_version: TLS13
YML
serve min13.yml
[[ $(protocol -tls1_2) == "(NONE)" ]] || fail "min_version TLS13 still negotiates TLS 1.2"
[[ $(protocol -tls1_3) == TLSv1.3 ]] || fail "min_version TLS13 refuses TLS 1.3"

# client certificates
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_ca_file: ca.crt\n  client_auth_type: %s\n' \
    RequireAndVerifyClientCert >verify.yml
serve verify.yml
[[ $(code) == 000 ]] || fail "RequireAndVerifyClientCert served a client without a certificate"
[[ $(code --cert client.crt --key client.key) == 200 ]] || fail "RequireAndVerifyClientCert refused the CA's client"
[[ $(code --cert rogue.crt --key rogue.key) == 000 ]] || fail "RequireAndVerifyClientCert served a self-signed client"
[[ $(code --tls-max 1.2 --cert rogue.crt --key rogue.key) == 000 ]] || fail "TLS 1.2 served a self-signed client"
sed 's/RequireAndVerifyClientCert/VerifyClientCertIfGiven/' verify.yml >ifgiven.yml
serve ifgiven.yml
[[ $(code) == 200 ]] || fail "VerifyClientCertIfGiven refused a client without a certificate"
[[ $(code --cert rogue.crt --key rogue.key) == 000 ]] || fail "VerifyClientCertIfGiven served a self-signed client"
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: RequireAnyClientCert\n' >any.yml
serve any.yml
[[ $(code) == 000 ]] || fail "RequireAnyClientCert served a client without a certificate"
[[ $(code --cert rogue.crt --key rogue.key) == 200 ]] || fail "RequireAnyClientCert refused a self-signed client"

# cipher suites (TLS 1.2: configurable, as in Go) and headers
cat >suites.yml <<'YML'
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  max_version: TLS12
  cipher_suites:
    - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
    - TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
http_server_config:
  headers:
    X-Frame-Options: deny
    Strict-Transport-Security: >-
      max-age=31536000;
      includeSubDomains
YML
serve suites.yml
[[ $(code --ciphers ECDHE-RSA-AES128-GCM-SHA256) == 200 ]] || fail "a listed cipher suite refused"
[[ $(code --ciphers ECDHE-RSA-AES256-GCM-SHA384) == 000 ]] ||
    fail "ECDHE-RSA-AES256-GCM-SHA384 (not listed, its parts are) was negotiated"
[[ $(code --ciphers ECDHE-RSA-AES128-SHA) == 000 ]] || fail "an unlisted CBC suite was negotiated"
[[ $(protocol -tls1_3) == "(NONE)" ]] || fail "max_version TLS12 still negotiates TLS 1.3"
curl -ksS -D headers.txt -o /dev/null "https://127.0.0.1:$EXPORTER_PORT/metrics" || fail "curl /metrics with headers"
tr -d '\r' <headers.txt >h.txt
grep -qx 'X-Frame-Options: deny' h.txt || fail "X-Frame-Options not sent: $(cat h.txt)"
grep -qx 'Strict-Transport-Security: max-age=31536000; includeSubDomains' h.txt || fail "HSTS not sent: $(cat h.txt)"
[[ $(grep -c '^X-Content-Type-Options: nosniff$' h.txt) == 1 ]] || fail "X-Content-Type-Options not sent once"
stop "$EXPORTER_PID"

# promtool check web-config agrees on what is valid
if command -v promtool >/dev/null; then
    for f in flow.yml min13.yml verify.yml ifgiven.yml any.yml suites.yml; do
        promtool check web-config "$f" >/dev/null 2>&1 || fail "promtool check web-config rejects $f"
    done
fi

# bad keys and values: exit 2, FILE:LINE:COL
bad() {   # bad LINE:COL MESSAGE-PART TEXT
    printf '%s' "$3" >bad.yml
    "$BIN" exporter --web.config.file bad.yml --no-collector.gpu 2>err.txt >/dev/null
    local rc=$?
    [[ $rc == 2 ]] || fail "bad config ($2): exit $rc, want 2: $(cat err.txt)"
    grep -qF "clusterfit: error: bad.yml:$1: " err.txt && grep -qF "$2" err.txt ||
        fail "bad config: want bad.yml:$1 '$2', got: $(cat err.txt)"
}
bad 3:16 "unknown TLS version 'TLS09'" $'tls_server_config:\n  cert_file: server.crt\n  min_version: TLS09\n'
bad 2:3 "did you mean 'client_auth_type'" $'tls_server_config:\n  client_auth: NoClientCert\n'
bad 1:64 "unknown cipher suite" $'tls_server_config: {cert_file: a, key_file: b, cipher_suites: [RC4]}\n'
bad 1:1 "needs client_ca_file" $'tls_server_config: {cert_file: a, key_file: b, client_auth_type: RequireAndVerifyClientCert}\n'
bad 2:20 "expected deny or sameorigin" $'http_server_config: {headers: {\n  X-Frame-Options: allow-all}}\n'
bad 2:15 "mapping values are not allowed" $'tls_server_config:\n  cert_file: a: b\n'
echo "exporter_tls.sh: ok"
