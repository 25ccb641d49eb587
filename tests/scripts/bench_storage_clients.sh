#!/usr/bin/env bash
# bench_storage_clients.sh BINARY SRCDIR - `bench storage --clients N` (issue 17 part 3): N client
# processes run each pass at once, one file each; the results are the aggregate (bytes summed,
# time to the last client's end) with each client's range, judged against the need (MET / NOT
# MET, exit 3), and every client's file is removed; a bad option ends every client at once.
set -uo pipefail
bin=$1
. "$(dirname "$0")/bench_lib.bash"
command -v python3 >/dev/null 2>&1 || { echo "skip: no python3"; exit 77; }
dir=$tmp/fs
mkdir -p "$dir"

timeout 120 "$bin" bench storage --path "$dir" --size 16M --clients 3 --need 0.001 --json >"$tmp/c3.json" 2>"$tmp/c3.err" ||
    fail "--clients 3: exit $?"
python3 - "$tmp/c3.json" <<'PY' || fail "--clients 3: JSON is not the aggregate of 3 clients"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["clients"] == 3, d["clients"]
for r in d["results"]:
    assert r["measured"], r
    assert r["bytes"] >= 3 * 16 * 2**20 - 1, r            # every client's file, summed
    assert r["client_min_bw_gbs"] <= r["client_max_bw_gbs"], r
    assert abs(r["bytes_per_s"] - r["bytes"] / r["time_s"]) <= 1e-6 * r["bytes_per_s"], r
    assert r["client_max_bw_gbs"] * 1e9 <= r["bytes_per_s"] * 3 * 1.000001, r   # no client above the whole
assert d["need"]["met"] is True, d["need"]
PY
[[ -z "$(ls -A "$dir")" ]] || fail "--clients 3 left files: $(ls "$dir")"
timeout 120 "$bin" bench storage --path "$dir" --size 16M --clients 2 --need 100000 >"$tmp/miss.txt" 2>"$tmp/miss.err"
rc=$?
((rc == 3)) || fail "--clients 2 with an unreachable need: exit $rc, want 3"
grep -q "NOT MET" "$tmp/miss.txt" || fail "--clients 2: no NOT MET verdict"
grep -q "^# 2 clients at once" "$tmp/miss.txt" || fail "--clients 2: no aggregate line"
[[ -z "$(ls -A "$dir")" ]] || fail "--clients 2 left files"
# a bad option fails on every client before the first pass: exit 2 at once, one message, no client
# left waiting at a barrier
timeout 60 "$bin" bench storage --path "$dir" --size 16M --block 3K --clients 3 >/dev/null 2>"$tmp/bad.txt"
rc=$?
((rc == 2)) || fail "--clients 3 --block 3K: exit $rc, want 2"
(($(grep -c 'must be a multiple of 4K' "$tmp/bad.txt") == 1)) || fail "--block 3K: not one message: $(cat "$tmp/bad.txt")"
echo "bench_storage_clients.sh: ok"
