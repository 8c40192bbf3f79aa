#!/usr/bin/env bash
# The figures `make test` only prints (tests/lib.sh "band"): rates against the rate the test itself set with tbf
# or nginx's limit_rate, slowdowns, ratios of times. Runs every integration test that has bands alone, BENCH_ROUNDS
# rounds (default 3; the tests in turn, in reverse order every other round), with RB_BANDS=1 so that a figure
# outside its band fails that run; then prints each band's min/median/max and in how many runs it held.
# The reference of each figure is the rate or the baseline its test set or measured in the same run. Before each
# run it waits (up to 3 minutes) for the 1-minute load average to fall below 2, which the runs before raise; a
# run that starts above 2 all the same is listed, and its figures are left out of the summary.
# Usage: tests/bench/bands.sh [TEST...]   (default: every tests/integration/*.sh that calls band). Needs root.
# Exit 1 when a run failed.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" -eq 0 ] || fail "needs root: the cluster tests build network namespaces"
ROUNDS=${BENCH_ROUNDS:-3}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || fail "BENCH_ROUNDS '$ROUNDS': expected a whole number >= 1"
if [ $# -gt 0 ]; then
    tests=("$@")
else
    mapfile -t tests < <(grep -l '^ *band "' "$ROOT"/tests/integration/*.sh | xargs -n 1 basename | sed 's/\.sh$//')
fi
[ ${#tests[@]} -gt 0 ] || fail "no test with bands"
for t in "${tests[@]}"; do [ -f "$ROOT/tests/integration/$t.sh" ] || fail "no test tests/integration/$t.sh"; done
LOG=$T/bands.tsv
: >"$LOG"
failed=0
echo "# ${tests[*]}: $ROUNDS rounds, each test alone with RB_BANDS=1"
for r in $(seq "$ROUNDS"); do
    order=("${tests[@]}")
    [ $((r % 2)) = 1 ] || mapfile -t order < <(printf '%s\n' "${tests[@]}" | tac)
    for t in "${order[@]}"; do
        for _ in $(seq 180); do in_band "$(cut -d' ' -f1 /proc/loadavg)" - 1.99 && break; sleep 1; done
        load=$(cut -d' ' -f1 /proc/loadavg)
        start=$SECONDS rc=0
        : >"$T/run.tsv"
        RB_BANDS=1 RB_BANDS_LOG=$T/run.tsv bash "$ROOT/tests/integration/$t.sh" >"$T/$t-$r.log" 2>&1 || rc=$?
        sed "s/^/$load\t/" "$T/run.tsv" >>"$LOG"
        printf 'round %d  %-26s load %5s  %4d s  %s%s\n' "$r" "$t" "$load" $((SECONDS - start)) \
            "$([ $rc = 0 ] && echo passed || echo "FAILED: $(grep -m 1 '^FAIL' "$T/$t-$r.log" || tail -n 1 "$T/$t-$r.log")")" \
            "$(in_band "$load" - 1.99 || echo "  (load above 2: not in the summary)")"
        [ $rc = 0 ] || failed=$((failed + 1))
    done
done
echo
python3 - "$LOG" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    load, t, what, v, lo, hi = line.rstrip("\n").split("\t")
    if float(load) < 2:
        rows.setdefault((t, what, lo, hi), []).append(float(v))
print(f"{'test':<26} {'band':<72} {'min':>8} {'median':>8} {'max':>8}  {'within':>10}  held")
for (t, what, lo, hi), vs in rows.items():
    held = sum((lo == "-" or v >= float(lo)) and (hi == "-" or v <= float(hi)) for v in vs)
    print(f"{t:<26} {what[:72]:<72} {min(vs):8.3f} {statistics.median(vs):8.3f} {max(vs):8.3f}  {lo + '..' + hi:>10}  {held}/{len(vs)}")
EOF
[ $failed = 0 ] || fail "$failed runs failed"
