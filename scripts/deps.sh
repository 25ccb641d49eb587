#!/usr/bin/env bash
# deps.sh - install what building and testing clusterfit needs on Debian 12 (DESIGN.md §3).
# Idempotent: asks dpkg which packages are missing and runs apt-get only for those.
# Run as root, or as a user with sudo.
set -euo pipefail

PACKAGES=(
    # build: gcc + make (build-essential), clang (second compiler, fuzzing), CMake/CTest,
    # pkg-config (tests/CMakeLists.txt finds cmocka with it)
    build-essential clang cmake pkg-config
    # unit tests
    libcmocka-dev
    # bench/fidelity scripts and the docs/json.md agreement test
    python3
    # clusterfit bench: mpirun launch + the MPI_Allreduce reference (tests, bench/), io_uring
    # for bench storage, ip/tc for the network-namespace tests
    libopenmpi-dev openmpi-bin liburing-dev iproute2
    # clusterfit exporter: HTTP/TLS server (libmicrohttpd on GnuTLS: the web config's TLS
    # versions, suites and client certificates), the web config file (libyaml), bcrypt basic
    # auth through crypt(3); tests: a real Prometheus server + promtool, openssl (test
    # certificates, s_client), curl (HTTP checks)
    libmicrohttpd-dev libgnutls28-dev libyaml-dev libcrypt-dev prometheus openssl curl
    # gzip-compressed scrapes (Accept-Encoding: gzip)
    zlib1g-dev
    # bench/exporter_bench.py: the reference exporter measured side by side
    prometheus-node-exporter
    # tests/scripts/report_render.sh: --report pages rendered in headless Chromium (issue 7)
    chromium
)

die() { echo "deps.sh: error: $*" >&2; exit 1; }

command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query not found: this script supports Debian 12 (apt/dpkg) only"

missing=()
for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ $status == "install ok installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
    echo "deps.sh: all ${#PACKAGES[@]} packages present"
    exit 0
fi

if ((EUID == 0)); then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
else
    die "missing packages (${missing[*]}) and not root; rerun as root or install sudo"
fi

echo "deps.sh: installing ${missing[*]}"
apt=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get)
"${apt[@]}" update || die "apt-get update failed (network or apt sources?)"
"${apt[@]}" install -y --no-install-recommends "${missing[@]}" ||
    die "apt-get install ${missing[*]} failed"

for pkg in "${missing[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ $status == "install ok installed" ]] || die "$pkg is still not installed after apt-get"
done
echo "deps.sh: done"
