#!/usr/bin/env bash
# needs: mpi
# railbench load kvcache on ais:// (AIStore's native API: proxy -> target redirects) against the AIStore stand-in of
# tests/servers/peer.py (AIStore itself cannot run here): 2 ranks, each entry one object PUT, GET verified and
# DELETEd; the bytes counted are the tokens' bytes; the stand-in holds nothing of the run at the end.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
P=$(free_port)
bg python3 "$ROOT/tests/servers/peer.py" --port "$P"
wait_port "$P"
rb_mpirun 2 "$RB" load kvcache ais://kvc --endpoint "http://127.0.0.1:$P" --option 1 --scale 1/128 --users 2 \
    --inflight 2 --duration 2s --trials 1 --verify --out "$T/a" >"$T/a.out" 2>"$T/a.err" ||
    { cat "$T/a.err" >&2; fail "load kvcache on ais:// failed"; }
R=$T/a/result.json
assert_jq "$R" '.summary.trials[0] | (.ranks | length) == 2 and ([.counts, .ranks[].counts] | all(.writes > 0 and
    .reads > 0 and .verify_failures == 0 and .bytes_written == .writes * 128 + .tokens_written * 131072 and
    .bytes_read == .reads * 128 + .tokens_read * 131072))' \
    "2 ranks on ais://: $(jq .summary.trials[0].counts.writes "$R") entries written, $(jq .summary.trials[0].counts.reads "$R") read verified"
held() { curl -s "http://127.0.0.1:$P/peer/stats" | jq '[.held[] | select(startswith("kvc/rbkv-"))] | length'; }
assert_eq "objects of the run the stand-in still holds" 0 "$(held)"
# With --keep the last trial's open conversations stay: the stand-in holds them under the run's prefix.
"$RB" load kvcache ais://kvc --endpoint "http://127.0.0.1:$P" --option 1 --scale 1/128 --users 2 --inflight 2 \
    --duration 2s --trials 1 --keep --out "$T/k" >"$T/k.out" 2>&1 || { cat "$T/k.out" >&2; fail "--keep run"; }
kept=$(held)
[ "$kept" -gt 0 ] || fail "--keep: the stand-in holds no entry of the run"
ok "--keep: $kept entries held under $(jqr "$T/k/result.json" .summary.entry_dir_prefix)0/"
