#!/usr/bin/env bash
# needs: mpi
# railbench load under mpirun -np 2: merged counts equal the sum of the ranks', epochs partition the objects,
# and the merged p99 equals the p99 of every logged request within the histogram's error.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T"
PORT=$(free_port)
mkdir -p "$T/www/set"
for i in $(seq 0 39); do head -c 4096 /dev/urandom >"$T/www/set/obj-$(printf %08d "$i")"; done
nginx_start web "server { listen 127.0.0.1:$PORT; root $T/www; location / { autoindex on; autoindex_format json; } }"
wait_port "$PORT"
URL=http://127.0.0.1:$PORT/set

# 1. Two ranks x two threads, 3 epochs over 40 listed objects: each rank reads its 20 objects 3 times.
rb_mpirun 2 "$RB" load get "$URL" --pattern epoch --epochs 3 -t 2 -c 4 --log-requests "$T/req.csv" \
    --out "$T/m1" --quiet >/dev/null
R=$T/m1/result.json
assert_jq "$R" '.mpi.size == 2' "two ranks"
assert_eq "merged requests" 120 "$(jq '.summary.ops[0].requests' "$R")"
assert_eq "merged bytes" $((120 * 4096)) "$(jq '.summary.ops[0].bytes' "$R")"
r0=$(awk -F, 'NR > 1 && $1 == 0' "$T/req.csv" | wc -l)
r1=$(awk -F, 'NR > 1 && $1 == 1' "$T/req.csv" | wc -l)
assert_eq "rank 0 requests" 60 "$r0"
assert_eq "rank 1 requests" 60 "$r1"
assert_eq "merged = sum of ranks" "$(jq '.summary.ops[0].requests' "$R")" $((r0 + r1))
# Partitioned: no object is read by both ranks, and every object exactly 3 times.
both=$(awk -F, 'NR > 1 { r[$4] = r[$4] "," $1 } END { for (o in r) if (r[o] ~ /0/ && r[o] ~ /1/) n++; print n + 0 }' "$T/req.csv")
assert_eq "objects read by both ranks" 0 "$both"
assert_eq "objects read 3 times" 40 "$(awk -F, 'NR > 1 { c[$4]++ } END { for (o in c) if (c[o] == 3) n++; print n }' "$T/req.csv")"
# The merged p99 against the nearest-rank p99 of all logged latencies (histogram error < 1 %).
exact=$(awk -F, 'NR > 1 { print $11 }' "$T/req.csv" | sort -n | awk '{ v[NR] = $1 } END { i = int(NR * 0.99); if (i < NR * 0.99) i++; print v[i] }')
merged=$(jq '.summary.ops[0].latency_ns.p99' "$R")
awk -v a="$merged" -v b="$exact" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.01 * b) }' ||
    fail "merged p99 $merged vs logged p99 $exact: more than 1 % apart"
ok "merged p99 $merged ns = logged p99 $exact ns within 1 %"
max_logged=$(awk -F, 'NR > 1 { print $11 }' "$T/req.csv" | sort -n | tail -1)
assert_eq "merged max = largest logged latency" "$max_logged" "$(jq '.summary.ops[0].latency_ns.max' "$R")"

# 2. A count split across ranks and threads (101 = 51 + 50, then per thread): the total is exact.
rb_mpirun 2 "$RB" load get "$URL" --objects 40 --count 101 -t 3 -c 2 --out "$T/m2" --quiet >/dev/null
assert_eq "split count" 101 "$(jq '.summary.ops[0].requests' "$T/m2/result.json")"
sum=$(jq -s 'map(select(.phase == "get") | .count) | add' "$T/m2/intervals.jsonl")
assert_eq "sum of interval counts" 101 "$sum"

# 3. Unreachable endpoint under mpirun: one line, exit 3.
dead=$(free_port)
assert_exit 3 "refused under mpirun" rb_mpirun 2 "$RB" load get "http://127.0.0.1:$dead/x" --objects 2 --out "$T/m3"
grep -c "cannot connect to endpoint" "$T/stderr" | grep -qx 1 || { cat "$T/stderr"; fail "expected the message once"; }
ok "message once: $(grep 'cannot connect' "$T/stderr")"
