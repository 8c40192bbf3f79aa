#!/usr/bin/env bash
# Grafana dashboards: valid JSON, unique panel ids, datasource and run variables, and every metric a query
# uses appears in real scrapes of railbench runs.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
D=$ROOT/reports/grafana/dashboards

for f in "$D"/*.json; do
    n=$(basename "$f")
    jq -e . "$f" >/dev/null || fail "$n is not valid JSON"
    assert_jq "$f" '[.panels[].id] | length == (unique | length)' "$n: panel ids unique"
    assert_jq "$f" '[.templating.list[].name] | contains(["datasource", "run"])' "$n: datasource and run variables"
    assert_jq "$f" '[.panels[].targets[].expr | test("railbench_run_info\\{run=~\"\\$run\"\\}")] | all' "$n: every query filters by \$run"
done

# Metric names the dashboards query (histograms by their _bucket series).
jq -r '.panels[].targets[].expr' "$D"/*.json | grep -oE 'railbench_[a-z_]+' | sort -u >"$T/used"

# Real scrapes: the Prometheus textfile of each kind of run the dashboards show.
chmod 755 "$T"; mkdir -p "$T/www/d"
for i in 0 1 2 3; do head -c 4096 /dev/urandom >"$T/www/d/$(printf 'obj-%08d' "$i")"; done
P=$(free_port)
nginx_start origin "server { listen 127.0.0.1:$P; root $T/www; add_header X-Cache-Status HIT; }"
wait_port "$P"
"$RB" load get "http://127.0.0.1:$P/d" --objects 4 --count 40 --cache-header X-Cache-Status \
    --prom-textfile "$T/s-load" --out "$T/r-load" --quiet >/dev/null
"$RB" block --allow-root-fs --target "$T/blk" --size 16M --bs 4k --iodepth 1 --runtime 1s --prom-textfile "$T/s-block" \
    --out "$T/r-block" --quiet >/dev/null
rb_mpirun 2 "$RB" coll allreduce -b 8 -e 64K -f 8 -n 2 -w 1 --prom-textfile "$T/s-coll" --out "$T/r-coll" --quiet >/dev/null
"$RB" fabric counters --duration 1s --prom-textfile "$T/s-hosts" --out "$T/r-hosts" --quiet >/dev/null
for f in "$T"/s-*/railbench.prom; do promtool check metrics <"$f" || fail "promtool rejects $f"; done
ok "promtool accepts the load, block, coll and host scrapes"
cat "$T"/s*/railbench.prom | grep -oE '^railbench_[a-z_]+' | sort -u >"$T/scraped"
missing=$(comm -23 "$T/used" "$T/scraped" | grep -v '^railbench_run_info$' || true)
echo "dashboards use: $(tr '\n' ' ' <"$T/used")"
[ -z "$missing" ] || fail "dashboard metrics missing from every scrape: $missing"
ok "every metric used by a dashboard exists in a real scrape"
