#!/usr/bin/env bash
# railbench load checkpoint on ais:// (AIStore's native API: proxy -> target redirects) against the AIStore
# stand-in of tests/servers/peer.py (AIStore itself cannot run here): 2 ranks of llama3-8b write 2 checkpoints
# that the stand-in holds file by file, then read them back verified with the ranks shifted.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
P=$(free_port)
bg python3 "$ROOT/tests/servers/peer.py" --port "$P"
wait_port "$P"
rb_mpirun 2 "$RB" load checkpoint ais://ckpt --endpoint "http://127.0.0.1:$P" --model llama3-8b --scale 1/20000 \
    --writes 2 --reads 2 --verify --recovery-rank-shift --name a --out "$T/a" >"$T/a.out" 2>"$T/a.err" ||
    { cat "$T/a.err" >&2; fail "load checkpoint on ais:// failed"; }
R=$T/a/result.json
B=$(jqr "$R" .summary.checkpoint_bytes)
assert_jq "$R" "([.summary.writes[], .summary.reads[]] | all(.bytes == $B and .errors == 0)) and (.summary.reads | length) == 2" \
    "2 writes and 2 verified reads of $B bytes"
held=$(curl -s "http://127.0.0.1:$P/peer/stats" | jq '[.held[] | select(startswith("ckpt/a/global_step"))] | length')
assert_eq "files the stand-in holds (2 checkpoints x 16)" 32 "$held"
assert_jq "$R" '.summary.recovery_rank_shift == 1' "reads shifted"
