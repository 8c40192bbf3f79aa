#!/usr/bin/env bash
# needs: mpi
# Grafana dashboards: valid against Grafana's published schema (@grafana/schema), unique panel ids, datasource
# and run variables; then a real Prometheus scrapes real runs of every kind and every panel's query, as Grafana
# would send it, returns data carrying the labels the panel shows.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
D=$ROOT/reports/grafana/dashboards

for f in "$D"/*.json; do
    n=$(basename "$f")
    jq -e . "$f" >/dev/null || fail "$n is not valid JSON"
    assert_jq "$f" '[.panels[].id] | length == (unique | length)' "$n: panel ids unique"
    assert_jq "$f" '[.templating.list[].name] | contains(["datasource", "run"])' "$n: datasource and run variables"
    assert_jq "$f" '[.panels[].targets[].expr | [scan("railbench_[a-z_]+(\\{[^}]*\\})?")[0] // "" | test("run=~\"\\$run\"")] | all] | all' \
        "$n: every metric selector of every query filters by \$run"
    # Bars show one value per point: an instant table query, the point named by the panel's x field.
    assert_jq "$f" '[.panels[] | select(.type == "barchart") | .targets[] as $t | $t.instant == true and $t.range == false
        and $t.format == "table" and (.options.xField | type) == "string"] | all' "$n: bar charts use instant table queries"
done

# 1. The schema Grafana publishes: TypeScript types checked by the compiler (tests/grafana, installed by deps.sh).
[ -d "$ROOT/tests/grafana/node_modules/@grafana/schema" ] || fail "tests/grafana/node_modules missing: run scripts/deps.sh"
node "$ROOT/tests/grafana/check-dashboards.mjs" "$D"/*.json >"$T/schema.out" || { cat "$T/schema.out" >&2; fail "schema"; }
grep -q '^ok: 4 dashboards, [0-9]* panels satisfy @grafana/schema' "$T/schema.out" || fail "schema: $(cat "$T/schema.out")"
ok "$(cat "$T/schema.out")"
# The check can fail: a misspelt key, a string where a number goes, a legend mode Grafana does not have.
# One broken copy each, checked in one run of the compiler: each copy's errors carry its own name.
edits=() wants=()
while IFS='|' read -r edit want; do edits+=("$edit") wants+=("$want"); done <<'EDITS'
.titel = .title|'"titel"' does not exist
.panels[0].gridPos.x = "0"|Type 'string' is not assignable to type 'number'
.panels[1].options.legend.displayMode = "grid"|'"grid"' is not assignable
EDITS
for k in "${!edits[@]}"; do
    mkdir -p "$T/bad$k"
    jq "${edits[k]}" "$D/railbench-load.json" >"$T/bad$k/railbench-load.json"
done
rc=0
node "$ROOT/tests/grafana/check-dashboards.mjs" "$T"/bad[0-9]/railbench-load.json >"$T/bad.out" || rc=$?
[ "$rc" = 1 ] || fail "schema: the broken copies gave exit $rc, not 1: $(cat "$T/bad.out")"
for k in "${!edits[@]}"; do
    grep -F "$T/bad$k/railbench-load.json: " "$T/bad.out" | grep -qF "${wants[k]}" ||
        fail "schema: '${edits[k]}' did not give '${wants[k]}': $(cat "$T/bad.out")"
done
ok "the schema check rejects a misspelt key, a wrong type and an unknown legend mode"

# 2. Real runs, each serving /metrics on its own port while Prometheus scrapes every 250 ms (load get paced at
# 300/s so that a busy machine still answers the scrapes mid-run); --prom-linger
# keeps the final values up for the last scrapes.
chmod 755 "$T"; mkdir -p "$T/www/d"
for i in $(seq 0 15); do head -c 4096 /dev/urandom >"$T/www/d/$(printf 'obj-%08d' "$i")"; done
N=$(free_port)
nginx_start origin "server { listen 127.0.0.1:$N; root $T/www; add_header X-Cache-Status HIT; }"
wait_port "$N"
. "$ROOT/tests/tiers_servers.sh"
tiers_servers 20m
nginx_dav ckdav
kinds=(load tiers sweep train block coll hosts ckpt kvcache)
declare -A port
targets=""
mapfile -t ports < <(free_port 11)
for i in "${!kinds[@]}"; do k=${kinds[$i]}; port[$k]=${ports[$i]}; targets+="'127.0.0.1:${port[$k]}',"; done
PP=${ports[9]} PN=${ports[10]}
cat >"$T/prometheus.yml" <<CONF
global: {scrape_interval: 250ms, scrape_timeout: 240ms, evaluation_interval: 1s}
scrape_configs:
  - job_name: railbench
    static_configs: [{targets: [${targets%,}]}]
CONF
bg prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
    --web.listen-address="127.0.0.1:$PP" --log.level=warn
# A second one with native histograms (it scrapes protobuf and keeps no _bucket series): the native panels' server.
bg prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb-native" \
    --web.listen-address="127.0.0.1:$PN" --enable-feature=native-histograms,exemplar-storage --log.level=warn
for pp in "$PP" "$PN"; do
    wait_port "$pp"
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$pp/-/ready" >/dev/null && break; sleep 0.2; done
    # Prometheus hands new targets to its scrapers some seconds after it is ready: start once it has tried all 9.
    for i in $(seq 151); do
        [ "$(curl -sfG "http://127.0.0.1:$pp/api/v1/query" --data-urlencode 'query=count(up)' | jq -r '.data.result[0].value[1] // 0')" = 9 ] && break
        [ "$i" = 151 ] && fail "Prometheus did not list the 9 targets in 30 s: $(curl -sfG "http://127.0.0.1:$pp/api/v1/targets" | head -c 600)"
        sleep 0.2
    done
done
t0=$(date +%s)
prom() { echo --prom-listen "127.0.0.1:${port[$1]}" --prom-linger 2s --out "$T/r-$1" --quiet; }
# The runs are independent, each on a port of its own (the two load gets, which share one, one after the other):
# all at once, each bounded to 2 minutes; one that fails is named with its stderr.
declare -A RUNS=()
run_bg() { # NAME CMD...: CMD in the background, bounded, its stderr in $T/NAME.err
    local name=$1
    shift
    timeout -k 10 120 "$@" >/dev/null 2>"$T/$name.err" &
    RUNS[$name]=$!
}
# The two load gets one after the other, each bounded as run_bg's commands are.
(
    timeout -k 10 120 "$RB" load get "http://127.0.0.1:$N/d" --objects 16 --duration 4s --rate 300/s \
        --cache-header X-Cache-Status --phases $(prom load) >/dev/null
    # A second run on the same port (as a user who keeps one --prom-listen does): each series carries its run.
    timeout -k 10 120 "$RB" load get "http://127.0.0.1:$N/d" --objects 16 --count 50 --rate 100/s \
        --prom-listen "127.0.0.1:${port[load]}" --prom-linger 2s --out "$T/r-load2" --quiet >/dev/null
) 2>"$T/load.err" &
RUNS[load]=$!
run_bg tiers "$RB" load tiers --backend "$BACKEND" --tier "$TIER" --objects 8 -c 2 --sizes 64KiB,256KiB $(prom tiers)
run_bg sweep "$RB" load sweep "http://127.0.0.1:$N/d" --objects 16 -c 1,4 --duration 1s $(prom sweep)
run_bg train "$RB" load train "http://127.0.0.1:$N/d" --objects 16 --batch-size 2 --compute-time 20ms --epochs 2 $(prom train)
run_bg block "$RB" block --allow-root-fs --target "$T/blk" --size 16M --bs 4k,64k --iodepth 1,4 --runtime 1s $(prom block)
run_bg coll "${MPIRUN[@]}" -np 2 "$RB" coll allreduce -b 8 -e 64K -f 8 -n 20 -w 1 $(prom coll)
run_bg hosts "$RB" fabric counters --duration 2s $(prom hosts)
run_bg ckpt "$RB" load checkpoint "$DAV_URL/" --params 1000000 --writes 2 --reads 2 --verify $(prom ckpt)
mkdir -p "$T/kv"
run_bg kvcache "$RB" load kvcache "file://$T/kv" --layers 2 --kv-heads 2 --head-dim 64 --users 2 --duration 2s --trials 1 \
    $(prom kvcache)
for k in "${!RUNS[@]}"; do
    rc=0
    wait "${RUNS[$k]}" || rc=$?
    [ "$rc" = 0 ] || { cat "$T/$k.err" >&2; fail "the $k run: exit $rc"; }
done
t1=$(date +%s)
ok "10 runs scraped by Prometheus (load get twice on one port, tiers, sweep, train, block, coll, host counters, checkpoint, kvcache)"

# 3. Every target of every panel, with Grafana's variables bound: $run to every run, $__range to the whole test;
# a target over a native histogram (its name without _bucket, _sum or _count) asks the native Prometheus.
python3 - "$PP" "$PN" "$t0" "$t1" "$D"/*.json >"$T/panels.out" <<'PY' || { cat "$T/panels.out" >&2; fail "dashboard queries"; }
import json, math, re, sys, urllib.error, urllib.parse, urllib.request
classic, native, t0, t1, files = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) + 1, sys.argv[5:]
rng = "%ds" % (t1 - t0 + 5)
pp = classic
def query(path, **args):
    url = "http://127.0.0.1:%s/api/v1/%s?%s" % (pp, path, urllib.parse.urlencode(args))
    try:
        return json.load(urllib.request.urlopen(url, timeout=30))
    except urllib.error.HTTPError as e:
        sys.exit("FAIL: Prometheus answered HTTP %d to %s: %s" % (e.code, args.get("query"), e.read().decode()[:500]))
bad = 0
for f in files:
    d = json.load(open(f))
    for p in d["panels"]:
        for t in p["targets"]:
            expr = (t["expr"].replace("$__rate_interval", "2s").replace("$__range", rng)
                    .replace("$__interval", "1s").replace("$run", ".*"))
            pp = native if re.search(r"railbench_(request_duration|ttfb|request_step)_seconds\{", expr) else classic
            # The labels the panel shows: those of its legend, and the x field of a bar chart.
            want = set(re.findall(r"\{\{(\w+)\}\}", t.get("legendFormat", "")))
            if p["type"] == "barchart":
                want.add(p["options"]["xField"])
            if t.get("instant"):
                r = query("query", query=expr, time=t1)
                values = [s["value"][1] for s in r["data"]["result"]]
            else:
                r = query("query_range", query=expr, start=t0, end=t1, step=1)
                values = [v[1] for s in r["data"]["result"] for v in s["values"]]
            series = r["data"]["result"]
            finite = [float(v) for v in values if math.isfinite(float(v))]
            missing = sorted({k for s in series for k in want if k not in s["metric"]})
            name = "%s #%d %r %s%s" % (f.split("/")[-1], p["id"], p["title"], t["refId"], " (native)" if pp == native else "")
            if not series or not finite or missing:
                bad += 1
                print("FAIL %s: %d series, %d finite values, labels missing: %s; query: %s"
                      % (name, len(series), len(finite), missing, expr))
            else:
                print("ok %s: %d series with %s, values %.4g..%.4g"
                      % (name, len(series), ",".join(sorted(want)), min(finite), max(finite)))
sys.exit(1 if bad else 0)
PY
cat "$T/panels.out"
n=$(jq '[.panels[].targets[]] | length' "$D"/*.json | awk '{s += $1} END {print s}')
assert_eq "panel targets answered with data and their labels" "$n" "$(grep -c '^ok ' "$T/panels.out")"

# 4. Figures a panel shows, against the runs' own results.
q() { curl -sfG "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "query=$1" --data-urlencode "time=$t1"; }
au=$(q "max by (epoch) (last_over_time(railbench_train_au_ratio{epoch=\"2\"}[$((t1 - t0 + 5))s]))" | jq -r '.data.result[0].value[1]')
au_json=$(jq '.summary.train_epochs[1].au_pct' "$T/r-train/result.json")
awk -v a="$au" -v b="$au_json" 'BEGIN { exit !((a * 100 - b) ^ 2 < 1e-6) }' || fail "train AU panel $au vs result $au_json %"
ok "train AU of epoch 2 in Prometheus = result.json ($au_json %)"
iops=$(q "max by (bs, iodepth) (last_over_time(railbench_block_iops{bs=\"4k\",iodepth=\"4\"}[$((t1 - t0 + 5))s]))" | jq -r '.data.result[0].value[1]')
iops_json=$(jq '[.summary.block_points[] | select(.bs == 4096 and .iodepth == 4)][0].iops' "$T/r-block/result.json")
awk -v a="$iops" -v b="$iops_json" 'BEGIN { exit !((a - b) ^ 2 < 1e-6 * b * b) }' || fail "block IOPS panel $iops vs result $iops_json"
ok "block IOPS of 4k qd4 in Prometheus = result.json ($iops_json)"
# Two runs on one port: the run label keeps them apart (a join on the port alone matched both and failed).
for r in r-load r-load2; do
    got=$(q "sum(last_over_time(railbench_requests_total{run=\"$r\"}[$((t1 - t0 + 5))s]))" | jq -r '.data.result[0].value[1]')
    want=$(jq '[.summary.ops[].requests] | add' "$T/$r/result.json")
    assert_eq "requests of $r in Prometheus (the runs shared port ${port[load]})" "$want" "$got"
done
# The request phases panel's mean of a step: its histogram's sum over its count, result.json's mean of that span.
for st in first_byte body; do
    got=$(q "sum(last_over_time(railbench_request_step_seconds_sum{run=\"r-load\",step=\"$st\"}[$((t1 - t0 + 5))s])) / sum(last_over_time(railbench_request_step_seconds_count{run=\"r-load\",step=\"$st\"}[$((t1 - t0 + 5))s]))" | jq -r '.data.result[0].value[1]')
    want=$(jq ".summary.ops[0].request_phases.spans.$st.mean" "$T/r-load/result.json")
    awk -v a="$got" -v b="$want" 'BEGIN { exit !(b > 0 && (a * 1e9 - b) ^ 2 < 4) }' ||
        fail "request phases panel: $st mean $got s in Prometheus, $want ns in result.json"
    ok "request phases panel: $st mean in Prometheus = result.json ($want ns)"
done
