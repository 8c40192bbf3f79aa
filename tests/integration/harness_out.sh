#!/usr/bin/env bash
# The result directory: an --out holding an earlier result is refused unless --force (which empties it),
# and a run that fails after its directory exists records why in result.json, under one rank or three.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

D=$T/run
assert_exit 0 "first run into a new --out" "$RB" fabric counters --duration 1s --interval 1s --quiet --out "$D"
lines=$(wc -l <"$D/intervals.jsonl")

assert_exit 2 "second run into the same --out" "$RB" fabric counters --duration 1s --quiet --out "$D"
assert_stderr_line "^railbench: error: --out $D: holds an earlier result \\(result.json\\)"
assert_eq "intervals.jsonl untouched by the refused run" "$lines" "$(wc -l <"$D/intervals.jsonl")"
assert_eq "refused before anything was written: stdout empty" "0" "$(wc -c <"$T/stdout")"

touch "$D/stale-file"
mkdir -p "$D/stale-dir/sub"
assert_exit 0 "--force into the same --out" "$RB" fabric counters --duration 1s --interval 1s --quiet --force --out "$D"
[ ! -e "$D/stale-file" ] && [ ! -e "$D/stale-dir" ] || fail "--force left earlier files behind"
ok "--force emptied the directory first"
assert_eq "intervals.jsonl holds this run only" "$lines" "$(wc -l <"$D/intervals.jsonl")"

# A failure after the directory exists: the metrics port is taken (exit 3), and result.json says so.
port=$(free_port)
bg python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(); time.sleep(60)' "$port"
wait_port "$port"
assert_exit 3 "--prom-listen on a port in use" "$RB" fabric counters --duration 1s --quiet --prom-listen "127.0.0.1:$port" --out "$T/busy"
assert_jq "$T/busy/result.json" '.exit_status == 3' "result.json records exit status 3"
assert_jq "$T/busy/result.json" "[.checks[] | select(.name == \"completed\" and .passed == false and (.detail | test(\"$port\")))] | length == 1" \
    "result.json has a failed 'completed' check naming the port"

assert_exit 3 "the same under mpirun -np 3" rb_mpirun 3 "$RB" fabric counters --duration 1s --quiet --prom-listen "127.0.0.1:$port" --out "$T/busy3"
assert_jq "$T/busy3/result.json" '.exit_status == 3 and ([.checks[] | select(.name == "completed" and .passed == false)] | length == 1)' \
    "under MPI rank 0 records the failure too"
