#!/usr/bin/env bash
# needs: mpi
# railbench load get over 10^8 and 10^9 generated objects: O(1) names and permutation, fast start, RSS under 64 MiB.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T" # nginx's workers run as nobody
PORT=$(free_port)
W=$T/www
mkdir -p "$W"
head -c 1024 /dev/urandom >"$W/one"
mkdir -p "$W/ls"
for i in $(seq 0 6); do head -c $((100 + i)) /dev/urandom >"$W/ls/f-$i"; done
# Every name answers with the same 1 KiB file: the 10^8 names need not exist.
nginx_start web "server {
        listen 127.0.0.1:$PORT;
        root $W;
        location / { try_files /one =404; }
        location /ls/ { autoindex on; autoindex_format json; }
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

# 3. A --filelist over 3 ranks: each rank stores only its share (line k with k % 3 == rank); 2 epochs read each name twice.
for i in $(seq 0 9); do echo "list/name-$i 1024"; done >"$T/list"
rb_mpirun 3 "$RB" load get "$URL" --filelist "$T/list" --pattern epoch --epochs 2 -c 2 \
    --log-requests "$T/fl.csv" --out "$T/fl" --quiet >/dev/null
assert_eq "filelist: requests" 20 "$(jq -r '.summary.ops[0].requests' "$T/fl/result.json")"
twice=$(tail -n +2 "$T/fl.csv" | cut -d, -f4 | sort | uniq -c | awk '$1 == 2' | wc -l)
assert_eq "filelist: names read exactly twice" 10 "$twice"
bad=$(tail -n +2 "$T/fl.csv" | awk -F, '{ n = $4; sub(/.*name-/, "", n); if ((n % 3) != $1) print }' | wc -l)
assert_eq "filelist: every name read by its rank only" 0 "$bad"

# 4. A listing over 3 ranks: rank 0 lists and scatters the shares; 1 epoch reads each object once, bytes exact.
rb_mpirun 3 "$RB" load get "$URL/ls" --pattern epoch --epochs 1 -c 2 --log-requests "$T/ls.csv" --out "$T/ls" \
    --quiet >/dev/null
assert_eq "listing: requests" 7 "$(jq -r '.summary.ops[0].requests' "$T/ls/result.json")"
assert_eq "listing: bytes" $((7 * 100 + 21)) "$(jq -r '.summary.ops[0].bytes' "$T/ls/result.json")"
assert_eq "listing: distinct names" 7 "$(tail -n +2 "$T/ls.csv" | cut -d, -f4 | sort -u | wc -l)"
assert_eq "listing: ranks that read" 3 "$(tail -n +2 "$T/ls.csv" | cut -d, -f1 | sort -u | wc -l)"
ok "loader_objects_big"
