#!/usr/bin/env bash
# needs: -
# Native histograms and exemplars with a real Prometheus 2.42: load get's /metrics scraped in the protobuf format
# (histogram_quantile over the native series within RB_PROM_NATIVE_ERROR of result.json's p99); prom_serve's known
# latencies and exemplars scraped as protobuf (native) and, by a Prometheus without native histograms, as
# OpenMetrics (classic buckets), query_exemplars returning the slowest request's id from both.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
SERVE=$ROOT/build/tests/prom_serve
[ -x "$SERVE" ] || fail "$SERVE is not built (make build/tests/prom_serve)"
read -r LP SP PN PO N <<<"$(free_port 5 | tr '\n' ' ')"
ERR=1.015 # RB_PROM_NATIVE_ERROR: a native quantile against railbench's own (include/railbench/prom.h)

cat >"$T/native.yml" <<CONF
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: load
    static_configs: [{targets: ['127.0.0.1:$LP']}]
  - job_name: serve
    static_configs: [{targets: ['127.0.0.1:$SP']}]
CONF
cat >"$T/classic.yml" <<CONF
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: serve
    static_configs: [{targets: ['127.0.0.1:$SP']}]
CONF
bg prometheus --config.file="$T/native.yml" --storage.tsdb.path="$T/tsdb-native" --web.listen-address="127.0.0.1:$PN" \
    --enable-feature=native-histograms,exemplar-storage --log.level=warn
bg prometheus --config.file="$T/classic.yml" --storage.tsdb.path="$T/tsdb-classic" --web.listen-address="127.0.0.1:$PO" \
    --enable-feature=exemplar-storage --log.level=warn
for port in "$PN" "$PO"; do
    wait_port "$port" 60 prometheus
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null && break; sleep 0.2; done
done
# q PORT API QUERY [curl args]: a Prometheus HTTP API call.
q() { curl -sfG "http://127.0.0.1:$1/api/v1/$2" --data-urlencode "query=$3" "${@:4}"; }
# within A B F: A / B in [1/F, F].
within() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { r = a / b; exit !(b > 0 && r >= 1 / f && r <= f) }'; }

mkdir -p "$T/www/data"; chmod 755 "$T"
for i in $(seq 0 99); do head -c 4096 /dev/urandom >"$T/www/data/$(printf 'obj-%08d' "$i")"; done
nginx_start origin "server { listen 127.0.0.1:$N; root $T/www; }"
wait_port "$N"

# prom_serve: 2000 requests in 5 batches a second apart, then 40 s of serving; load get at the same time.
bg "$SERVE" "$SP" 2000 5 1000 40 >"$T/serve.json"
SRV=$LAST_PID
bg "$RB" load get "http://127.0.0.1:$N/data" --objects 100 --count 2000 --rate 250/s --phases --prom-listen "$LP" \
    --prom-linger 3s --out "$T/r1" --quiet
RUN=$LAST_PID
wait_port "$LP" 60 "load get's --prom-listen"
sleep 1
PB='application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited'
ct=$(curl -sf -o "$T/mid.pb" -w '%{content_type}' -H "Accept: $PB" "http://127.0.0.1:$LP/metrics")
assert_eq "Content-Type of a protobuf scrape" \
    "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited" "$ct"
[ "$(stat -c %s "$T/mid.pb")" -gt 1000 ] || fail "protobuf scrape of $(stat -c %s "$T/mid.pb") bytes"
ct=$(curl -sf -o "$T/mid.om" -w '%{content_type}' -H 'Accept: application/openmetrics-text;version=1.0.0' \
    "http://127.0.0.1:$LP/metrics")
assert_eq "Content-Type of an OpenMetrics scrape" "application/openmetrics-text; version=1.0.0; charset=utf-8" "$ct"
assert_eq "OpenMetrics scrape's last line" "# EOF" "$(tail -n 1 "$T/mid.om")"
grep -q '^# TYPE railbench_requests counter$' "$T/mid.om" || fail "OpenMetrics: no counter family railbench_requests"
curl -sf "http://127.0.0.1:$LP/metrics" >"$T/mid.prom"
promtool check metrics <"$T/mid.prom" || fail "promtool rejects the classic text scrape"
grep -q '^# TYPE railbench_requests_total counter$' "$T/mid.prom" || fail "classic text changed its counter family"
ok "one listener, three formats by Accept: protobuf, OpenMetrics (# EOF), classic text (promtool clean)"
wait "$RUN"
R=$T/r1/result.json
count=$(jq '.phases[0].count' "$R")
assert_eq "load get requests" 2000 "$count"
sleep 2

# The native series: a histogram sample (no _bucket series), its count is result.json's, its p99 within ERR.
now=$(date +%s)
q "$PN" query_range 'histogram_count(railbench_request_duration_seconds{job="load"})' \
    --data-urlencode "start=$((now - 40))" --data-urlencode "end=$now" --data-urlencode step=1 >"$T/range.json"
at=$(jq -r '.data.result[0].values[-1][0]' "$T/range.json")
assert_eq "native histogram count at the last scrape" "$count" "$(jq -r '.data.result[0].values[-1][1]' "$T/range.json")"
assert_eq "classic _bucket series from the protobuf scrape" 0 \
    "$(q "$PN" query 'count(railbench_request_duration_seconds_bucket{job="load"}) or vector(0)' --data-urlencode "time=$at" | jq -r '.data.result[0].value[1]')"
q "$PN" query 'railbench_request_duration_seconds{job="load"}' --data-urlencode "time=$at" >"$T/native.json"
assert_jq "$T/native.json" '.data.result[0].histogram[1].buckets | length > 10' "native buckets in the sample"
p99_ns=$(jq '.phases[0].latency_ns.p99' "$R")
p99=$(q "$PN" query 'histogram_quantile(0.99, railbench_request_duration_seconds{job="load"})' --data-urlencode "time=$at" | jq -r '.data.result[0].value[1]')
within "$p99" "$(awk -v n="$p99_ns" 'BEGIN { print n / 1e9 }')" "$ERR" ||
    fail "native histogram_quantile(0.99) = $p99 s, result.json p99 = $p99_ns ns: not within $ERR"
ok "load get: native histogram_quantile(0.99) = $p99 s, result.json p99 = $p99_ns ns (within $ERR)"
rate_p99=$(q "$PN" query 'histogram_quantile(0.99, sum(rate(railbench_request_duration_seconds{job="load"}[1m])))' --data-urlencode "time=$at" | jq -r '.data.result[0].value[1]')
awk -v a="$rate_p99" 'BEGIN { exit !(a > 0) }' || fail "histogram_quantile over sum(rate(native)) is $rate_p99"

# Its request phases (--phases), published at the end of its phase: each step a native histogram too; at the last
# scrape that has it, it counts every request, and histogram_quantile(0.99) of a step is within ERR of result.json's
# p99 of it.
for st in first_byte body; do
    sel="railbench_request_step_seconds{job=\"load\",step=\"$st\"}"
    q "$PN" query_range "histogram_count($sel)" --data-urlencode "start=$((now - 40))" \
        --data-urlencode "end=$(date +%s)" --data-urlencode step=1 >"$T/range-$st.json"
    sat=$(jq -r '.data.result[0].values[-1][0] // empty' "$T/range-$st.json")
    [ -n "$sat" ] || fail "native $st histogram: not scraped: $(head -c 400 "$T/range-$st.json")"
    assert_eq "native $st histogram: requests" "$count" "$(jq -r '.data.result[0].values[-1][1]' "$T/range-$st.json")"
    want=$(jq ".summary.ops[0].request_phases.spans.$st.p99" "$R")
    got=$(q "$PN" query "histogram_quantile(0.99, $sel)" --data-urlencode "time=$sat" | jq -r '.data.result[0].value[1]')
    within "$got" "$(awk -v n="$want" 'BEGIN { print n / 1e9 }')" "$ERR" ||
        fail "native histogram_quantile(0.99) of $st = $got s, result.json's p99 = $want ns: not within $ERR"
    ok "request phase $st: native histogram_quantile(0.99) = $got s, result.json p99 = $want ns (within $ERR)"
done
assert_eq "classic _bucket series of the steps from the protobuf scrape" 0 \
    "$(q "$PN" query 'count(railbench_request_step_seconds_bucket{job="load"}) or vector(0)' --data-urlencode "time=$sat" | jq -r '.data.result[0].value[1]')"

# load get's slowest requests (--slowest, 10 by default) are the exemplars of its latency histogram from the end of
# its phase on: query_exemplars returns the slowest one's id, with its latency.
sid=$(jq -r '.summary.ops[0].slowest[0].id' "$R")
slat_ns=$(jq -r '.summary.ops[0].slowest[0].latency_ns' "$R")
[ -n "$sid" ] && [ "$sid" != null ] || fail "result.json names no slowest request"
q "$PN" query_exemplars 'railbench_request_duration_seconds{job="load"}' --data-urlencode "start=$((now - 120))" \
    --data-urlencode "end=$(($(date +%s) + 1))" >"$T/ex-load.json"
got=$(jq -r --arg id "$sid" '[.data[].exemplars[] | select(.labels.request_id == $id) | .value][0] // empty' "$T/ex-load.json")
[ -n "$got" ] || fail "query_exemplars (load get) has no exemplar of its slowest request $sid: $(head -c 600 "$T/ex-load.json")"
within "$got" "$(awk -v n="$slat_ns" 'BEGIN { printf "%.9f", n / 1e9 }')" 1.000001 ||
    fail "exemplar of $sid has value $got s, result.json says $slat_ns ns"
ok "load get: query_exemplars returns its slowest request, $sid ($got s), as result.json names it"

# prom_serve's known values: the same through the native series; the slowest request's id as an exemplar.
want=$(head -n 1 "$T/serve.json")
[ -n "$want" ] || fail "prom_serve printed nothing"
sp99_ns=$(jq -r .p99_ns <<<"$want"); slowest=$(jq -r .slowest_id <<<"$want"); slowest_s=$(jq -r .slowest_s <<<"$want")
p99=$(q "$PN" query 'histogram_quantile(0.99, railbench_request_duration_seconds{job="serve"})' | jq -r '.data.result[0].value[1]')
within "$p99" "$(awk -v n="$sp99_ns" 'BEGIN { print n / 1e9 }')" "$ERR" ||
    fail "prom_serve: native histogram_quantile(0.99) = $p99 s, its p99 = $sp99_ns ns: not within $ERR"
now=$(date +%s)
q "$PN" query_exemplars 'railbench_request_duration_seconds{job="serve"}' --data-urlencode "start=$((now - 120))" \
    --data-urlencode "end=$now" >"$T/ex-native.json"
got=$(jq -r --arg id "$slowest" '[.data[].exemplars[] | select(.labels.request_id == $id) | .value][0] // empty' "$T/ex-native.json")
[ -n "$got" ] || fail "query_exemplars (native) has no exemplar of $slowest: $(cat "$T/ex-native.json")"
within "$got" "$slowest_s" 1.000001 || fail "exemplar of $slowest has value $got, not $slowest_s"
ok "protobuf: histogram_quantile(0.99) = $p99 s (p99 $sp99_ns ns); query_exemplars returns the slowest, $slowest ($got s)"

# OpenMetrics to a Prometheus without native histograms: classic buckets, one exemplar per bucket series.
p99=$(q "$PO" query 'histogram_quantile(0.99, railbench_request_duration_seconds_bucket{job="serve"})' | jq -r '.data.result[0].value[1]')
within "$p99" "$(awk -v n="$sp99_ns" 'BEGIN { print n / 1e9 }')" 1.25 ||
    fail "OpenMetrics: classic histogram_quantile(0.99) = $p99 s, p99 = $sp99_ns ns: more than a bucket apart"
q "$PO" query_exemplars 'railbench_request_duration_seconds_bucket{job="serve"}' --data-urlencode "start=$((now - 120))" \
    --data-urlencode "end=$now" >"$T/ex-om.json"
le=$(jq -r --arg id "$slowest" '[.data[] | select(any(.exemplars[]; .labels.request_id == $id)) | .seriesLabels.le][0] // empty' "$T/ex-om.json")
[ -n "$le" ] || fail "query_exemplars (OpenMetrics) has no exemplar of $slowest"
awk -v s="$slowest_s" -v le="$le" 'BEGIN { exit !(s < le && s >= le / 1.25 - 1e-12) }' ||
    fail "the slowest exemplar ($slowest_s s) is on bucket le=$le, not its own"
buckets=$(jq '[.data[] | select(.exemplars | length > 0)] | length' "$T/ex-om.json")
[ "$buckets" -ge 20 ] || fail "OpenMetrics exemplars on only $buckets bucket series"
ok "OpenMetrics: classic p99 $p99 s; exemplars on $buckets bucket series, the slowest ($slowest) on le=$le"
kill "$SRV" 2>/dev/null || true
