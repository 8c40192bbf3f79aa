#!/usr/bin/env bash
# needs: -
# --config RUN repeats a run: every command kind run once, then again from its own result (the run directory
# or its result.json), must resolve to the same options and positional arguments; what does not carry over
# (--out, secrets) is named; a result of another command is refused.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../tiers_servers.sh"
tiers_servers 50m

# same_config A B: the resolved configs of two runs are equal but for where they wrote and what they read.
same_config() {
    local strip='.config | del(.out, .config, .force)'
    [ "$(jq -S "$strip" "$1/result.json")" = "$(jq -S "$strip" "$2/result.json")" ] ||
        { diff <(jq -S "$strip" "$1/result.json") <(jq -S "$strip" "$2/result.json") >&2; fail "$3: configs differ"; }
    ok "$3: same resolved config and arguments on the rerun"
}

# ran NAME DIR STATUS: a run passed, or failed only its open-loop `rate` check (the achieved rate depends on
# what else the machine runs; the rate is not what this test is about, the config is).
ran() {
    [ "$3" -eq 0 ] && return 0
    [ "$3" -eq 1 ] && [ -s "$2/result.json" ] &&
        [ "$(jq -c '[.checks[] | select(.passed | not) | .name] | unique' "$2/result.json")" = '["rate"]' ] &&
        { echo "note: $1: only the rate check failed (a loaded machine); the config is still compared"; return 0; }
    fail "$1 failed (exit $3)"
}

# rerun NAME CMD...: runs CMD --out A, then the same command word(s) with only --config A --out B.
rerun() {
    local name=$1 words=$2 rc=0; shift 2
    "$RB" "$@" --quiet --out "$T/$name-a" >/dev/null || rc=$?
    ran "$name: first run" "$T/$name-a" "$rc"
    rc=0
    # shellcheck disable=SC2086
    "$RB" $words --config "$T/$name-a" --quiet --out "$T/$name-b" >/dev/null || rc=$?
    ran "$name: rerun" "$T/$name-b" "$rc"
    same_config "$T/$name-a" "$T/$name-b" "$name"
}

rerun put "load put" load put "$BACKEND/rr" --keep --overwrite --objects 4 --size 64KiB -c 2 --label team=storage
rerun get "load get" load get "$BACKEND/rr" --objects 4 --count 12 --verify --size 64KiB --rate 200/s
rerun tiers "load tiers" load tiers --backend "$BACKEND" --tier "$TIER" --objects 4 --sizes 64KiB --fresh --prefix rr-t-
rerun sweep "load sweep" load sweep "$BACKEND/rr" --objects 4 --inflight 1,2 --duration 1s
rerun train "load train" load train "$BACKEND/rr" --objects 4 --compute-time 5ms --batch-size 2 --epochs 1
rerun stat "load stat" load stat "$BACKEND/rr" --objects 4 --until-steady 100/2s --duration 20s
rerun list "load list" load list "$BACKEND/rr/" --count 2
rerun coll "coll allreduce" coll allreduce -b 8 -e 64 -f 2 -n 2 -w 1 --algo ring
rerun block "block" block --allow-root-fs --target "$T/blk" --size 4M --bs 4k --iodepth 1 --runtime 1s
rerun counters "fabric counters" fabric counters --duration 1s
rerun topo "fabric topo" fabric topo --kind rail-optimized --nodes 4
rerun sim "fabric sim" fabric sim allreduce --nodes 4
rerun overhead "fabric overhead" fabric overhead --size 1MiB

# The positional argument came from the result: the rerun read the same objects.
assert_jq "$T/get-b/result.json" '.config.args == ["'"$BACKEND"'/rr"] and .summary.ops[0].requests == 12' \
    "load get rerun: URL from the result, 12 requests again"
assert_jq "$T/get-b/result.json" '.config.rate == 200' "load get rerun: --rate 200/s again"
assert_jq "$T/put-b/result.json" '.labels.team == "storage"' "load put rerun: labels carried over"

# The command line still wins over the result.
rc=0; "$RB" load get --config "$T/get-a/result.json" --count 4 --quiet --out "$T/get-c" >/dev/null || rc=$?
ran "load get --config --count 4" "$T/get-c" "$rc"
assert_jq "$T/get-c/result.json" '.config.count == 4 and .summary.ops[0].requests == 4' "--count on the command line wins"

# delete after every read of rr/: the rerun finds the objects gone (404s, counted as http_4xx); --max-error-rate 100,
# carried into the rerun, lets it pass.
rerun delete "load delete" load delete "$BACKEND/rr" --objects 4 --max-error-rate 100
assert_eq "delete: the first run deleted all 4" 0 "$(jq .summary.ops[0].errors.total "$T/delete-a/result.json")"
assert_eq "delete rerun: 4 already gone" 4 "$(jq .summary.ops[0].errors.http_4xx "$T/delete-b/result.json")"

# A result of another command is refused, naming both.
assert_exit 2 "a coll result given to load get" "$RB" load get --config "$T/coll-a" --out "$T/x"
assert_stderr_line 'the result of "coll allreduce", not of "load get"'
[ ! -e "$T/x" ] || fail "a refused rerun made its directory"
