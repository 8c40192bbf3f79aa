#!/usr/bin/env bash
# needs: mpi
# railbench load sweep against an nginx whose capacity is fixed by design: every response is sent at 1 MiB/s
# (limit_rate; a 100 KiB object takes ~0.1 s) and the server admits 30 requests/s in total (limit_req, excess
# requests queued). So throughput scales with in-flight requests up to 3-4 and then only latency grows:
# the knee is at 4 in flight. One row per point, the knee against its rule, rates, bad input.
# Runs once per request engine (RB_ENGINE=curl or native runs one of them); both at once, each with its own nginx,
# port and directory (the server's limits are each server's own, so neither run's points depend on the other's),
# each bounded to 5 minutes, their output shown whole, curl's first.
set -euo pipefail
if [ -z "${RB_ENGINE:-}" ]; then
    out=$(mktemp -d "$(cd "$(dirname "$0")/../.." && pwd)/build/tmp/loader_sweep-engines.XXXXXX")
    pids=()
    for e in curl native; do
        RB_ENGINE=$e timeout -k 10 300 bash "$0" "$@" >"$out/$e.log" 2>&1 &
        pids+=("$!")
    done
    rc=0
    for i in 0 1; do wait "${pids[$i]}" || rc=1; done
    cat "$out/curl.log" "$out/native.log"
    rm -rf "$out"
    exit "$rc"
fi
. "$(dirname "$0")/../lib.sh"
echo "engine: $RB_ENGINE"
chmod 755 "$T"
PORT=$(free_port)
mkdir -p "$T/www/set"
for i in $(seq 0 15); do head -c 102400 /dev/urandom >"$T/www/set/obj-$(printf %08d "$i")"; done
nginx_start web "limit_req_zone \$server_name zone=cap:1m rate=30r/s;
    server {
        listen 127.0.0.1:$PORT;
        server_name sweep;
        root $T/www;
        location /set/ { limit_rate 1m; limit_req zone=cap burst=1000; }
    }"
wait_port "$PORT"
URL=http://127.0.0.1:$PORT/set

# 1. In flight 1, 2, 4, 8 for 3 s each: ~10, ~20, then capped at ~30 obj/s twice, latency doubling.
#    A point that a loaded machine starves (its threads not scheduled for part of its 3 s) can hide the knee;
#    such a run is shown and the sweep measured once more (every assertion below holds for the run kept).
for attempt in 1 2; do
    rm -rf "$T/s1"
    "$RB" load sweep --engine "$RB_ENGINE" "$URL" --objects 16 -c 1,2,4,8 --duration 3s --out "$T/s1" --quiet >/dev/null
    R=$T/s1/result.json
    [ "$(jq '.summary.knee.index' "$R")" = 2 ] && break
    echo "note: attempt $attempt: knee $(jq -c .summary.knee.index "$R"), points (obj/s, avg latency ns):" \
        "$(jq -c '[.summary.sweep_points[] | [.ops_per_s, .latency_avg_ns]]' "$R")"
done
assert_eq "one phase per point" "inflight-1 inflight-2 inflight-4 inflight-8" "$(jq -r '[.phases[].name] | join(" ")' "$R")"
assert_eq "one row per point" "1 2 4 8" "$(jq -r '[.summary.sweep_points[].inflight] | join(" ")' "$R")"
assert_jq "$R" '[.summary.sweep_points[] | .rate_per_s == null and .latency_p50_ns <= .latency_p99_ns
    and .bytes == .objects * 102400 and .errors == 0] | all' "closed loop rows, exact bytes, no errors"
assert_jq "$R" '[.summary.sweep_points[].ops_per_s] | max <= 33' "no point beats the server's 30 requests/s"
assert_eq "knee" "2 4 null inflight-4" "$(jq -r '.summary.knee | "\(.index) \(.inflight) \(.rate_per_s) \(.phase)"' "$R")"
# The knee obeys the rule: the next point adds < 10 % throughput for > 50 % latency, and no earlier point does.
jq -e '.summary.sweep_points as $p | .summary.knee.index as $k
    | ($p[$k + 1].throughput_bytes_per_s / $p[$k].throughput_bytes_per_s < 1.10)
      and ($p[$k + 1].latency_avg_ns / $p[$k].latency_avg_ns > 1.50)
      and ([range(0; $k) | select(($p[. + 1].throughput_bytes_per_s / $p[.].throughput_bytes_per_s < 1.10)
                                 and ($p[. + 1].latency_avg_ns / $p[.].latency_avg_ns > 1.50))] | length == 0)' "$R" >/dev/null ||
    fail "the knee does not follow the rule: $(jq -c '[.summary.sweep_points[] | [.throughput_bytes_per_s, .latency_avg_ns]]' "$R")"
ok "knee follows the rule (gain $(jq '.summary.knee.throughput_gain_pct | floor' "$R") %, latency +$(jq '.summary.knee.latency_growth_pct | floor' "$R") %)"
assert_eq "table rows" 4 "$(grep -c '^| inflight-' "$T/s1/table.md")"
grep -Eq '^\| inflight-4 \| 4 \|.*\| knee(, peak)? \|$' "$T/s1/table.md" || fail "table does not mark the knee"
grep -q '^knee: inflight-4 ' "$T/s1/table.md" || fail "table has no knee line"
ok "table marks the knee"
# The rule in words, and the peak (the most throughput of any point) beside the knee.
grep -q '^Rule: the knee is the last point before the first step that adds less than 10 % throughput for more than 50 % more average latency.$' \
    "$T/s1/table.md" || fail "table does not say what the knee means"
assert_jq "$R" '.summary.knee_rule.text | test("last point before the first step")' "knee rule in words in result.json"
assert_jq "$R" '.summary.sweep_points as $p | .summary.peak.index as $i
    | ($p[$i].throughput_bytes_per_s == ([$p[].throughput_bytes_per_s] | max))
    and (.summary.peak.throughput_bytes_per_s == $p[$i].throughput_bytes_per_s)' "peak is the fastest point"
grep -Eq "^peak: inflight-[48] " "$T/s1/table.md" || fail "table has no peak line"
grep -Eq '\| (knee, )?peak \|$' "$T/s1/table.md" || fail "table does not mark the peak"
ok "table shows the peak beside the knee"

# 2. Two points that both scale: no knee, reported as null.
"$RB" load sweep --engine "$RB_ENGINE" "$URL" --objects 16 -c 1,2 --duration 2s --out "$T/s2" --quiet >/dev/null
assert_jq "$T/s2/result.json" '.summary.knee == null and (.summary.sweep_points | length == 2)' "no knee while throughput still doubles"
grep -q '^knee: none up to inflight-2' "$T/s2/table.md" || fail "table does not say there is no knee"
ok "table says: no knee"

# 3. Rate steps (open loop), 8 connections: one row per rate; an open loop never exceeds its rate.
"$RB" load sweep --engine "$RB_ENGINE" "$URL" --objects 16 --rate 5,10,20 -c 8 --duration 2s --out "$T/s3" --quiet >/dev/null
assert_eq "rate rows" "5 10 20" "$(jq -r '[.summary.sweep_points[].rate_per_s] | join(" ")' "$T/s3/result.json")"
assert_jq "$T/s3/result.json" '.summary.open_loop and ([.summary.sweep_points[] | .inflight == 8
    and .ops_per_s <= .rate_per_s * 1.1 + 1 and .requests > 0] | all)' "open-loop rows within their rates"
assert_jq "$T/s3/result.json" '[.summary.sweep_points[] | .achieved_rate_per_s > 0 and .achieved_rate_per_s <= .rate_per_s * 1.1 + 1]
    | all' "open-loop rows give the achieved rate beside the target"

# 4. Under mpirun -np 2 the points are merged over ranks.
rb_mpirun 2 "$RB" load sweep --engine "$RB_ENGINE" "$URL" --objects 16 -c 1,2 --count 20 --out "$T/s4" --quiet >/dev/null
assert_eq "mpirun: requests per point (count split over ranks)" "20 20" "$(jq -r '[.summary.sweep_points[].requests] | join(" ")' "$T/s4/result.json")"
assert_eq "mpirun: in flight in total" "2 4" "$(jq -r '[.summary.sweep_points[].inflight_total] | join(" ")' "$T/s4/result.json")"

# 5. Bad input: one line, exit 2.
assert_exit 2 "decreasing in-flight list" "$RB" load sweep --engine "$RB_ENGINE" "$URL" --objects 4 -c 4,2
assert_stderr_line 'inflight: expected increasing values \(e.g. 1,2,4,8\), got 2 after 4'
assert_exit 2 "rates with an in-flight list" "$RB" load sweep --engine "$RB_ENGINE" "$URL" --objects 4 --rate 10,20 -c 1,2
assert_stderr_line 'rate steps run with one --inflight value'
assert_exit 2 "decreasing rates" "$RB" load sweep --engine "$RB_ENGINE" "$URL" --objects 4 --rate 20,10
assert_stderr_line 'rate 20,10: expected increasing rates'
assert_exit 2 "not a rate" "$RB" load sweep --engine "$RB_ENGINE" "$URL" --objects 4 --rate 10,fast
assert_stderr_line '"fast" is not a rate'
assert_exit 2 "knee gain over 100 %" "$RB" load sweep --engine "$RB_ENGINE" "$URL" --objects 4 --knee-gain 150
assert_stderr_line 'knee-gain'
assert_exit 2 "no URL" "$RB" load sweep --engine "$RB_ENGINE" --objects 4
