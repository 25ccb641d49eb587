#!/usr/bin/env bash
# api_install.sh BINARY SRCDIR - the installed tree is usable on its own (issue 18).
#
# Installs the build beside BINARY into a temporary prefix (`cmake --install --prefix`), then
# builds a small C program against it twice: once with `pkg-config --cflags --libs clusterfit`
# (PKG_CONFIG_PATH pointing only at the installed clusterfit.pc) and once as a CMake project
# with find_package(clusterfit) and the clusterfit::clusterfit target.  The program sees only the
# installed include/clusterfit/ headers (-Werror -pedantic, so they stay clean C11), links the
# shared library and calls the public API (the catalog, and the text/JSON writer, JSON reader and
# HTML escaping the CLI uses); it must print what the library says.
set -euo pipefail

fail() { echo "api_install.sh: $*" >&2; exit 1; }
(($# == 2)) || fail "usage: api_install.sh BINARY SRCDIR"
bin=$1
build=$(cd "$(dirname "$bin")" && pwd)
command -v pkg-config >/dev/null || fail "pkg-config not found"
# The compiler and sanitizer the build used (an ASan library needs an ASan program).
cache_get() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
cc=$(cache_get CMAKE_C_COMPILER)
[[ -n $cc ]] || cc=${CC:-cc}
san=""
[[ $(cache_get CFIT_SANITIZE) == ON ]] && san="-fsanitize=address,undefined"
[[ $(cache_get CFIT_TSAN) == ON ]] && san="-fsanitize=thread"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log" >&2; fail "cmake --install failed"; }
pc=$(find "$tmp/prefix" -name clusterfit.pc)
[[ -n $pc ]] || fail "clusterfit.pc not installed"
libdir=$(dirname "$(find "$tmp/prefix" -name 'libclusterfit.so' | head -1)")
[[ -d $libdir ]] || fail "libclusterfit.so not installed"
[[ -f $tmp/prefix/include/clusterfit/base.h ]] || fail "include/clusterfit/base.h not installed"

mkdir -p "$tmp/app"
cat >"$tmp/app/main.c" <<'C'
#include <stdio.h>
#include "clusterfit/base.h"
#include "clusterfit/bench.h"
#include "clusterfit/catalog.h"
#include "clusterfit/collective.h"
#include "clusterfit/exporter.h"
#include "clusterfit/json.h"
#include "clusterfit/plan.h"
#include "clusterfit/report.h"
#include "clusterfit/sim.h"
#include "clusterfit/writer.h"

/* The writer, the reader and the report writer the CLI uses: "a<b" as a JSON string, read back,
 * then escaped for HTML. */
static void round_trip(void)
{
    cfit_buf b, x;
    cfit_diag d;
    int err;
    cfit_buf_init(&b);
    cfit_buf_init(&x);
    cfit_buf_json_string(&b, "a<b");
    cfit_json *j = cfit_buf_ok(&b) ? cfit_json_parse(b.data, b.len, NULL, &err, &d) : NULL;
    cfit_xml_text(&x, j && j->type == CFIT_JSON_STRING ? j->string : "?");
    printf(" json=%s html=%s", b.data ? b.data : "?", cfit_buf_ok(&x) ? x.data : "?");
    cfit_json_free(j);
    cfit_buf_fini(&b);
    cfit_buf_fini(&x);
}

int main(void)
{
    cfit_diag d;
    cfit_catalog *c = cfit_catalog_new(&d);
    if (!c) {
        fprintf(stderr, "%s\n", d.msg);
        return 1;
    }
    printf("%s %s gpus=%d", CFIT_VERSION, cfit_strerror(CFIT_ENOMEM), cfit_catalog_gpu_count(c) > 0);
    round_trip();
    printf("\n");
    cfit_catalog_free(c);
    return 0;
}
C
want='0.1.0 out of memory gpus=1 json="a<b" html=a&lt;b'
flags="-std=c11 -pedantic -Wall -Wextra -Werror $san"

export PKG_CONFIG_PATH=$(dirname "$pc")
# shellcheck disable=SC2046
"$cc" $flags -o "$tmp/app/pc" "$tmp/app/main.c" $(pkg-config --cflags --libs clusterfit) ||
    fail "build with pkg-config --cflags --libs clusterfit failed"
got=$(LD_LIBRARY_PATH=$libdir "$tmp/app/pc") || fail "pkg-config program failed"
[[ $got == "$want" ]] || fail "pkg-config program printed '$got', want '$want'"

cat >"$tmp/app/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(cfit_consumer LANGUAGES C)
find_package(clusterfit 0.1 REQUIRED CONFIG)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE clusterfit::clusterfit)
CM
cmake -S "$tmp/app" -B "$tmp/app/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$san" -DCMAKE_C_COMPILER="$cc" >"$tmp/cmake.log" 2>&1 &&
    cmake --build "$tmp/app/build" >>"$tmp/cmake.log" 2>&1 ||
    { cat "$tmp/cmake.log" >&2; fail "build with find_package(clusterfit) failed"; }
got=$(LD_LIBRARY_PATH=$libdir "$tmp/app/build/consumer") || fail "CMake program failed"
[[ $got == "$want" ]] || fail "CMake program printed '$got', want '$want'"
echo "api_install.sh: pkg-config and find_package(clusterfit) both build and run against $tmp/prefix"
