#!/usr/bin/env bash
# exporter_metrics_doc.sh BINARY SRCDIR - docs/metrics.md lists exactly the metric names the
# exporter's sources define, with the right type, and every family a fixture scrape serves; likewise
# the DCGM_FI_* names of --compat dcgm and the doc's mapping table.
set -uo pipefail
bin=$1 src=$2
fail() { echo "exporter_metrics_doc.sh: $*" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfit-mdoc.XXXXXX") || fail mktemp
trap 'rm -rf "$tmp"' EXIT
doc=$src/docs/metrics.md
# | `name` | type | ...
sed -n 's/^| `\(clusterfit_[a-z_]*\)` | \([a-z]*\) |.*/\1 \2/p' "$doc" | sort >"$tmp/doc"
[[ -s $tmp/doc ]] || fail "no metric rows in $doc"
grep -ohE '"clusterfit_[a-z_]+"' "$src"/src/exporter/*.c | tr -d '"' | sort -u >"$tmp/code"
cut -d' ' -f1 "$tmp/doc" | sort -u >"$tmp/docnames"
diff -u --label code --label docs/metrics.md "$tmp/code" "$tmp/docnames" || fail "docs/metrics.md and src/exporter disagree"
# types: every TYPE line of a fixture scrape (with the fake NVML when available) matches the doc
args=(--path.sysfs "$src/tests/fixtures/sysfs" --path.procfs "$src/tests/fixtures/procfs" --collector.gpu.pcie)
[[ -n ${CFIT_FAKENVML:-} ]] && args+=(--nvml-library "$CFIT_FAKENVML")
FAKENVML_FIXTURE=$src/tests/fixtures/nvml/healthy.txt "$bin" exporter --once "${args[@]}" >"$tmp/scrape" 2>/dev/null ||
    fail "exporter --once failed"
sed -n 's/^# TYPE \([a-z_]*\) \([a-z]*\)$/\1 \2/p' "$tmp/scrape" | sort >"$tmp/types"
# the doc says "info" where the text format says gauge
sed 's/ info$/ gauge/' "$tmp/doc" | sort >"$tmp/doctypes"
missing=$(comm -23 "$tmp/types" "$tmp/doctypes")
[[ -z $missing ]] || fail "served but not documented with this type: $missing"
# --compat dcgm: the DCGM names the code writes are the mapping table's rows, with the types served
sed -nE 's/^\| `(DCGM_FI_[A-Z_]+)` \| (gauge|counter) \|.*/\1 \2/p' "$doc" | sort >"$tmp/dcgmdoc"
[[ -s $tmp/dcgmdoc ]] || fail "no DCGM mapping rows in $doc"
grep -ohE '"DCGM_FI_[A-Z_]+"' "$src"/src/exporter/*.c | tr -d '"' | grep -vx DCGM_FI_DRIVER_VERSION | sort -u >"$tmp/dcgmcode"   # that one is a label
diff -u --label code --label docs/metrics.md "$tmp/dcgmcode" <(cut -d' ' -f1 "$tmp/dcgmdoc" | sort -u) ||
    fail "docs/metrics.md's DCGM table and src/exporter disagree"
FAKENVML_FIXTURE=$src/tests/fixtures/nvml/healthy.txt "$bin" exporter --once --compat dcgm "${args[@]}" >"$tmp/dscrape" 2>/dev/null ||
    fail "exporter --once --compat dcgm failed"
sed -n 's/^# TYPE \(DCGM_[A-Z_]*\) \([a-z]*\)$/\1 \2/p' "$tmp/dscrape" | sort >"$tmp/dtypes"
missing=$(comm -23 "$tmp/dtypes" "$tmp/dcgmdoc")
[[ -z $missing ]] || fail "DCGM metric served but not documented with this type: $missing"
echo "exporter_metrics_doc.sh: ok ($(wc -l <"$tmp/doc") metrics documented)"
