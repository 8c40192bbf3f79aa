#!/usr/bin/env bash
# needs: -
# railbench load tiers with an ais:// tier: --evict and --evict-bucket through AIStore's API, tested against the
# AIStore stand-in of tests/servers/peer.py (AIStore itself cannot run here) caching an nginx origin. The
# stand-in counts its fetches from the origin, which shows whether a cold phase was cold.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../tiers_servers.sh"
PEER=$ROOT/tests/servers/peer.py
tiers_servers 0
P=$(free_port)
bg python3 "$PEER" --port "$P" --ais-backend "$BACKEND" --ais-evict-ms 300
wait_port "$P"
S=65536
stats() { curl -sf "http://127.0.0.1:$P/peer/stats"; }
fetches() { stats | jq .backend_fetches; }
tier=(--backend "$BACKEND" --tier ais://bench --tier-endpoint "http://127.0.0.1:$P" --tier-provider aws
      --objects 6 -c 3 --sizes 64KiB --quiet)

# 1. Fresh objects: the cold phase fetches each from the origin once, warm none. AIStore sends no cache-status
#    header, so the run says the phases are not verified by the tier's own account.
f0=$(fetches)
"$RB" load tiers "${tier[@]}" --fresh --keep --warm-epochs 2 --out "$T/a1" >/dev/null 2>"$T/a1.err"
assert_eq "fresh: fetches from the origin (cold only)" 6 $(( $(fetches) - f0 ))
assert_eq "fresh: bytes direct/cold/warm" "$((6 * S)) $((6 * S)) $((12 * S))" \
    "$(row "$T/a1/result.json" $S direct bytes) $(row "$T/a1/result.json" $S cold bytes) $(row "$T/a1/result.json" $S warm bytes)"
assert_jq "$T/a1/result.json" '.summary.cache_verified == false and .summary.checks_passed
    and ([.summary.tiers_rows[] | select(.how != "direct") | .verdict] == ["unverified", "unverified"])
    and ([.summary.tiers_rows[] | .cache_hit] == [null, null, null])' "not verified, not failed"
grep -q 'tier sent neither X-Cache-Status nor X-Cache' "$T/a1.err" || fail "no warning about the missing header"
ok "warns that the tier sends no cache status"
prefix=obj-$(jq -r .summary.fresh "$T/a1/result.json")-

# 2. Again without eviction: the tier still holds them, nothing is fetched (a warm "cold" phase).
f0=$(fetches)
"$RB" load tiers "${tier[@]}" --existing --prefix "$prefix" --out "$T/a2" >/dev/null 2>&1
assert_eq "no evict: fetches" 0 $(( $(fetches) - f0 ))

# 3. --evict: one evict-listrange with the template of exactly these names; the job is awaited; cold is cold again.
f0=$(fetches); n0=$(stats | jq '.evictions | length'); p0=$(stats | jq .status_polls)
"$RB" load tiers "${tier[@]}" --existing --prefix "$prefix" --evict --out "$T/a3" >/dev/null 2>&1
assert_eq "evict: fetches" 6 $(( $(fetches) - f0 ))
assert_eq "evict: one request" $((n0 + 1)) "$(stats | jq '.evictions | length')"
assert_eq "evict: action and template" "evict-listrange ${prefix}64KiB-{00000000..00000005} 6" \
    "$(stats | jq -r '.evictions[-1] | "\(.action) \(.value.template) \(.names)"')"
[ "$(stats | jq .status_polls)" -ge $((p0 + 2)) ] || fail "the job's status was not polled until it ended"
ok "job status polled until end_time was set ($(( $(stats | jq .status_polls) - p0 )) polls)"
assert_jq "$T/a3/result.json" '(.checks[] | select(.name == "evict") | .passed and (.detail | test("evict-listrange")))' \
    "evict check passed"

# 4. Names that cannot form a template (braces in the prefix) go as an object list.
"$RB" load tiers "${tier[@]}" --fresh --prefix 'x{y}-' --evict --out "$T/a4" >/dev/null 2>&1
fresh4=$(jq -r .summary.fresh "$T/a4/result.json")
assert_eq "evict list: names" "x{y}-$fresh4-64KiB-00000000 x{y}-$fresh4-64KiB-00000005 6" \
    "$(stats | jq -r '.evictions[-1] | "\(.value.objnames[0]) \(.value.objnames[-1]) \(.value.objnames | length)"')"

# 5. --evict-bucket: evict-remote-bck keeping the bucket's metadata; cold fetches everything again.
f0=$(fetches)
"$RB" load tiers "${tier[@]}" --existing --prefix "$prefix" --evict-bucket --out "$T/a5" >/dev/null 2>&1
assert_eq "evict-bucket: request" "evict-remote-bck true" "$(stats | jq -r '.evictions[-1] | "\(.action) \(.keep_bck_md)"')"
assert_eq "evict-bucket: fetches" 6 $(( $(fetches) - f0 ))

# 6. Eviction that fails or hangs ends the run before the cold phase: exit 3, one line naming it.
assert_exit 3 "evict refused (no AIStore there)" "$RB" load tiers --backend "$BACKEND" --tier ais://bench \
    --tier-endpoint "http://127.0.0.1:$ORIGIN_PORT" --objects 2 --sizes 4k --fresh --evict --quiet --out "$T/a6"
assert_stderr_line 'before cold-4KiB: AIStore evict-listrange: ais://bench: evict-listrange: HTTP 405'
P2=$(free_port)
bg python3 "$PEER" --port "$P2" --ais-backend "$BACKEND" --ais-evict-ms 60000
wait_port "$P2"
assert_exit 3 "evict job still running at --evict-timeout" "$RB" load tiers --backend "$BACKEND" --tier ais://bench \
    --tier-endpoint "http://127.0.0.1:$P2" --objects 2 --sizes 4k --fresh --evict --evict-timeout 1s --quiet --out "$T/a7"
assert_stderr_line 'eviction job peer-xact-1 did not finish in time'
assert_jq "$T/a7/result.json" '([.phases[].name] | index("cold-4KiB") == null) and .summary.checks_passed == false' "no cold phase"
