#!/usr/bin/env bash
# railbench load get over 10^8 and 10^9 generated objects: O(1) names and permutation, fast start, RSS under 64 MiB.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T" # nginx's workers run as nobody
PORT=$(free_port)
W=$T/www
mkdir -p "$W"
head -c 1024 /dev/urandom >"$W/one"
# Every name answers with the same 1 KiB file: the 10^8 names need not exist.
nginx_start web "server {
        listen 127.0.0.1:$PORT;
        root $W;
        location / { try_files /one =404; }
    }"
wait_port "$PORT"
URL=http://127.0.0.1:$PORT
MIB64=$((64 * 1024 * 1024))

# 1. 10^8 objects, epoch order, 100 requests: starts, finishes, every request 1 KiB, peak RSS under 64 MiB.
t0=$(date +%s%N)
"$RB" load get "$URL/big" --objects 100000000 --pattern epoch --count 100 -c 4 --out "$T/e8" --quiet >/dev/null
ms=$((($(date +%s%N) - t0) / 1000000))
assert_eq "1e8: requests" 100 "$(jq -r '.summary.ops[0].requests' "$T/e8/result.json")"
assert_eq "1e8: bytes" $((100 * 1024)) "$(jq -r '.summary.ops[0].bytes' "$T/e8/result.json")"
assert_eq "1e8: errors" 0 "$(jq -r '.summary.ops[0].errors.total' "$T/e8/result.json")"
rss=$(jq -r '.hosts[0].rss_max_bytes' "$T/e8/result.json")
[ "$rss" -gt 0 ] && [ "$rss" -lt "$MIB64" ] || fail "1e8: rss_max_bytes $rss is not under 64 MiB"
ok "1e8: rss_max_bytes $rss < 64 MiB, whole run ${ms} ms"
[ "$ms" -lt 20000 ] || fail "1e8: the run took ${ms} ms (a start in O(n) would)"

# 2. 10^9 objects over 2 ranks, 2 threads each: still under 64 MiB per host, and no object requested twice.
rb_mpirun 2 "$RB" load get "$URL/big" --objects 1000000000 --pattern epoch --count 200 -t 2 -c 4 \
    --log-requests "$T/e9.csv" --out "$T/e9" --quiet >/dev/null
assert_eq "1e9: requests" 200 "$(jq -r '.summary.ops[0].requests' "$T/e9/result.json")"
assert_jq "$T/e9/result.json" "[.hosts[].rss_max_bytes] | all(. > 0 and . < $MIB64)" "1e9 x 2 ranks: rss_max_bytes under 64 MiB"
names=$(tail -n +2 "$T/e9.csv" | cut -d, -f4 | sort -u | wc -l)
assert_eq "1e9: distinct names" 200 "$names"
# Rank r only reads indices i with i % 2 == r, with 9 digits (the width of 10^9 - 1).
bad=$(tail -n +2 "$T/e9.csv" | awk -F, '{ n = $4; sub(/.*obj-/, "", n); if (length(n) != 9 || (n % 2) != $1) print }' | wc -l)
assert_eq "1e9: every name in its rank's partition" 0 "$bad"
ok "loader_objects_big"
