#!/usr/bin/env bash
# needs: mpi
# Prometheus exporter: a real Prometheus scrapes rank 0 every second during an mpirun; textfile; Pushgateway; errors.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
PROG=$ROOT/build/tests/mpi_harness
P=$(free_port); PP=$(free_port); PG=$(free_port)

cat >"$T/prometheus.yml" <<CONF
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: railbench
    static_configs: [{targets: ['127.0.0.1:$P']}]
CONF
bg prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
    --web.listen-address="127.0.0.1:$PP" --log.level=warn
wait_port "$PP"
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PP/-/ready" >/dev/null && break; sleep 0.2; done

# An nginx origin with 100 objects of 4 KiB, answering a cache status (--cache-header needs one to count).
mkdir -p "$T/www/data"; chmod 755 "$T"
for i in $(seq 0 99); do head -c 4096 /dev/urandom >"$T/www/data/$(printf 'obj-%08d' "$i")"; done
N=$(free_port)
nginx_start origin "server { listen 127.0.0.1:$N; root $T/www; add_header X-Cache-Status HIT; }"
wait_port "$N"

# mpirun -np 2 load get, open loop at 200/s for 8 s; linger 3 s for the last scrape.
bg "${MPIRUN[@]}" -np 2 "$RB" load get "http://127.0.0.1:$N/data" --objects 100 --rate 200/s --duration 8s \
    --cache-header X-Cache-Status --prom-listen "$P" --prom-linger 3s --prom-textfile "$T/textfile" \
    --label site=lab --out "$T/r1" --quiet
RUN=$LAST_PID
wait_port "$P"
sleep 2
curl -sf "http://127.0.0.1:$P/metrics" >"$T/mid.prom"
promtool check metrics <"$T/mid.prom" || fail "promtool rejects a mid-run scrape of load get"
ok "promtool check metrics passes on a mid-run scrape of load get"
grep -q '^railbench_run_info{command="load get",version="[^"]*",run="r1",site="lab"} 1$' "$T/mid.prom" || fail "no run_info with run=r1 and site=lab"
grep -q '^railbench_inflight_requests{phase="get",run="r1",site="lab"} ' "$T/mid.prom" || fail "no in-flight gauge"
grep -q '^railbench_ttfb_seconds_bucket{op="GET",phase="get"' "$T/mid.prom" || fail "no TTFB histogram"
wait "$RUN"
R=$T/r1/result.json
count=$(jq '.phases[0].count' "$R")
[ "$count" -ge 1000 ] || fail "only $count requests in 8 s at 200/s"
assert_jq "$R" '.phases[0].errors.total == 0' "no errors"

q() { curl -sfG "http://127.0.0.1:$PP/api/v1/$1" --data-urlencode "query=$2" "${@:3}"; }
# Let Prometheus take the scrapes of the lingering exporter.
sleep 2
now=$(date +%s)
q query_range 'sum(railbench_requests_total)' --data-urlencode "start=$((now - 30))" \
    --data-urlencode "end=$now" --data-urlencode step=1 >"$T/range.json"
vals=$(jq -r '.data.result[0].values | map(.[1] | tonumber) | unique | length' "$T/range.json")
[ "$vals" -ge 3 ] || fail "railbench_requests_total took only $vals distinct values during the run"
ok "railbench_requests_total rose through $vals distinct values"
last=$(jq -r '.data.result[0].values[-1][1]' "$T/range.json")
assert_eq "Prometheus' last railbench_requests_total equals result.json count" "$count" "$last"
# Instant queries at the last sample's time: once the exporter is gone its series are stale.
at=$(jq -r '.data.result[0].values[-1][0]' "$T/range.json")
assert_eq "requests_total series (2xx, 4xx, 5xx, error), each with the site label" 4 "$(q query 'count(railbench_requests_total{site="lab"})' --data-urlencode "time=$at" | jq -r '.data.result[0].value[1]')"

p99_ns=$(jq '.phases[0].latency_ns.p99' "$R")
p99_prom=$(q query 'histogram_quantile(0.99, sum by (le) (railbench_request_duration_seconds_bucket))' --data-urlencode "time=$at" | jq -r '.data.result[0].value[1]')
awk -v a="$p99_prom" -v b="$p99_ns" 'BEGIN { r = a * 1e9 / b; exit !(r > 1/1.25 && r < 1.25) }' \
    || fail "histogram_quantile p99 $p99_prom s vs result p99 $p99_ns ns: more than one bucket apart"
ok "histogram_quantile(0.99) = $p99_prom s, result p99 = $p99_ns ns (within one bucket, 1.25x)"

promtool check metrics <"$T/textfile/railbench.prom" || fail "promtool rejects the textfile"
tf=$(awk '/^railbench_requests_total/ {s += $2} END {print s}' "$T/textfile/railbench.prom")
assert_eq "textfile requests_total sum" "$count" "$tf"

# A collective run scraped mid-run: busbw gauges appear as sizes finish, and the scrape lints clean.
PC=$(free_port)
bg "${MPIRUN[@]}" -np 2 "$RB" coll allreduce -b 1K -e 32M -f 2 -n 10 -w 2 --prom-listen "$PC" --prom-linger 2s \
    --out "$T/rc" --quiet
CRUN=$LAST_PID
wait_port "$PC"
for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$PC/metrics" >"$T/coll.prom" || true
    grep -q '^railbench_coll_busbw_bytes_per_second' "$T/coll.prom" && break
    sleep 0.1
done
promtool check metrics <"$T/coll.prom" || fail "promtool rejects a mid-run scrape of coll"
grep -q '^railbench_coll_busbw_bytes_per_second{coll="allreduce",algo="mpi",dtype="float",redop="sum",size="1024",run="rc"}' "$T/coll.prom" ||
    fail "no busbw gauge for the first size in the mid-run coll scrape"
ok "promtool check metrics passes on a mid-run scrape of coll; busbw gauges present"
wait "$CRUN"
want=$(jq '[.summary.collective_rows[] | select(.size_bytes == 1024)][0].oop.busbw_gbps * 1e9' "$T/rc/result.json")
got=$(curl -s "http://127.0.0.1:$PC/metrics" 2>/dev/null | awk '/size="1024"/ {print $2}' || true)
[ -z "$got" ] || awk -v a="$got" -v b="$want" 'BEGIN { exit !(a / b > 0.999 && a / b < 1.001) }' || fail "busbw gauge $got != result $want"

# Pushgateway: the final metrics arrive under job="railbench".
bg prometheus-pushgateway --web.listen-address="127.0.0.1:$PG" --log.level=warn
wait_port "$PG"
"$PROG" --out "$T/r2" --interval 200ms --per-collect 500 --pushgateway "http://127.0.0.1:$PG" --quiet
pushed=$(curl -sf "http://127.0.0.1:$PG/metrics" | awk '/^railbench_requests_total\{.*job="railbench"/ {s += $2} END {print s}')
assert_eq "pushed requests_total" 1000 "$pushed"

# Listener errors: port in use (exit 3), malformed address (exit 2). Default bind is loopback only.
assert_exit 3 "port in use" "$RB" fabric counters --duration 1s --prom-listen "$PP" --out "$T/r3"
assert_stderr_line "prom-listen.*Address already in use"
assert_exit 2 "bad listen address" "$RB" fabric counters --duration 1s --prom-listen "localhost:x" --out "$T/r4"
assert_stderr_line "prom-listen"
# --label run=ID (as the Ansible role passes) names the run in every series instead of the directory's name.
"$RB" fabric counters --duration 300ms --interval 100ms --label run=named --prom-textfile "$T/tf" --out "$T/r6" --quiet
grep -q '^railbench_run_info{command="fabric counters",version="[^"]*",run="named"} 1$' "$T/tf/railbench.prom" ||
    fail "--label run=named: run_info is not labelled run=named: $(grep run_info "$T/tf/railbench.prom")"
assert_eq "--label run=named: series with a second run label" 0 "$(grep -c 'run=.*run=' "$T/tf/railbench.prom" || true)"
assert_eq "--label run=named: series labelled with the directory's name" 0 "$(grep -c 'run="r6"' "$T/tf/railbench.prom" || true)"
bg "$RB" fabric counters --duration 3s --prom-listen "$P" --out "$T/r5" --quiet
wait_port "$P"
ss -ltn "sport = :$P" | grep -q "127.0.0.1:$P" || fail "listener is not on 127.0.0.1"
ok "listener bound to 127.0.0.1 only"
wait "$LAST_PID"
