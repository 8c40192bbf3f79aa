#!/usr/bin/env bash
# needs: mpi
# railbench load checkpoint on ais:// (AIStore's native API: proxy -> target redirects) against the AIStore
# stand-in of tests/servers/peer.py (AIStore itself cannot run here): 2 ranks of llama3-8b write 2 checkpoints
# that the stand-in holds file by file (--keep), then read them back verified with the ranks shifted; a run without
# --keep deletes what it wrote.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
P=$(free_port)
bg python3 "$ROOT/tests/servers/peer.py" --port "$P"
wait_port "$P"
rb_mpirun 2 "$RB" load checkpoint ais://ckpt --endpoint "http://127.0.0.1:$P" --model llama3-8b --scale 1/20000 \
    --writes 2 --reads 2 --verify --recovery-rank-shift --name a --keep --out "$T/a" >"$T/a.out" 2>"$T/a.err" ||
    { cat "$T/a.err" >&2; fail "load checkpoint on ais:// failed"; }
R=$T/a/result.json
B=$(jqr "$R" .summary.checkpoint_bytes)
assert_jq "$R" "([.summary.writes[], .summary.reads[]] | all(.bytes == $B and .errors == 0)) and (.summary.reads | length) == 2" \
    "2 writes and 2 verified reads of $B bytes"
held=$(curl -s "http://127.0.0.1:$P/peer/stats" | jq '[.held[] | select(startswith("ckpt/a/global_step"))] | length')
assert_eq "files the stand-in holds (2 checkpoints x 16)" 32 "$held"
assert_jq "$R" '.summary.recovery_rank_shift == 1' "reads shifted"


# Restore in parallel ranged GETs: with --read-part-size 64KiB every file above 64 KiB comes back as Range requests
# of 64 KiB (the last shorter), up to -c of them in flight; the stand-in counts the ranges it answered (206). The
# expected count is the formula's file sizes (llama3-8b, ZeRO 3: 8 model and 8 optimizer files) cut in 64 KiB parts.
assert_eq "ranged GETs before a ranged read" 0 "$(curl -s "http://127.0.0.1:$P/peer/stats" | jq .ranged_gets)"
rb_mpirun 2 "$RB" load checkpoint ais://ckpt --endpoint "http://127.0.0.1:$P" --model llama3-8b --scale 1/20000 \
    --writes 1 --reads 1 --verify --recovery-rank-shift --name b --read-part-size 64KiB -c 4 --out "$T/b" \
    >"$T/b.out" 2>"$T/b.err" || { cat "$T/b.err" >&2; fail "ranged checkpoint read on ais:// failed"; }
WANT_PARTS=$(python3 "$ROOT/tests/integration/checkpoint_formula.py" 4096 32 14336 128256 32 8 1 1 8 3 20000 |
    awk '$2 > 65536 {n += int(($2 + 65535) / 65536)} END {print n + 0}')
R=$T/b/result.json
assert_eq "Range GETs the stand-in answered (206)" "$WANT_PARTS" "$(curl -s "http://127.0.0.1:$P/peer/stats" | jq .ranged_gets)"
assert_jq "$R" ".phases[] | select(.name == \"read-1\") | .parts.count == $WANT_PARTS and .parts.errors.total == 0 and
    .count == 16 and .errors.total == 0" "read-1: 16 files (one record each) in $WANT_PARTS verified parts"
assert_jq "$R" ".summary.reads[0].bytes == $(jqr "$R" .summary.checkpoint_bytes) and .summary.reads[0].errors == 0" \
    "the ranged read moved the checkpoint's bytes"
assert_eq "files left of checkpoint b (no --keep)" 0 \
    "$(curl -s "http://127.0.0.1:$P/peer/stats" | jq '[.held[] | select(startswith("ckpt/b/"))] | length')"

# A server that ignores Range (the peer's plain path answers every GET with 200 and its own body): each file's first
# part comes back 200, class other; the read is incomplete (complete false, no bytes counted, the slowest rank's
# throughput absent: "–"), and the run exits 1.
rc=0
rb_mpirun 2 "$RB" load checkpoint "http://127.0.0.1:$P/plain/" --model llama3-8b --scale 1/20000 --writes 1 \
    --reads 1 --read-part-size 64KiB --out "$T/ign" >"$T/ign.out" 2>"$T/ign.err" || rc=$?
assert_eq "a server that ignores Range: exit" 1 "$rc"
assert_jq "$T/ign/result.json" '(.phases[] | select(.name == "read-1") | .errors.other == 16 and .count == 16) and
    (.summary.reads[0] | .complete == false and .bytes == 0 and .min_rank_throughput_bytes_per_s == null) and
    .summary.read_mean.checkpoints == 0' "16 files failed as other; the read counts no bytes and no mean"
grep -q 'Requested range was not delivered' "$T/ign.err" || fail "the 200 to a Range GET is not named: $(cat "$T/ign.err")"
grep -Eq '^\| read  \|    1 \|.*\| +– \|' "$T/ign/table.md" || fail "table: no – for the failed read: $(cat "$T/ign/table.md")"

# A folder named without its "/": ais://ckpt/ck and http://.../ckpt/hk are folders, so the files are ck/n/... and
# hk/n/... (never "ckn...", the URL glued to the name), and every message names exactly that folder.
held_under() { curl -s "http://127.0.0.1:$P/peer/stats" | jq --arg p "$1" '[.held[] | select(startswith($p))] | length'; }
for u in "ais://ckpt/ck" "http://127.0.0.1:$P/target/v1/objects/ckpt/hk"; do
    k=${u##*/} ep=()
    [[ $u != ais://* ]] || ep=(--endpoint "http://127.0.0.1:$P")
    "$RB" load checkpoint "$u" "${ep[@]}" --params 1000000 --tp 2 --dp 2 --writes 1 --reads 0 \
        --name n --keep --out "$T/f-$k" >"$T/f-$k.out" 2>"$T/f-$k.err" || { cat "$T/f-$k.err" >&2; fail "$u: failed"; }
    assert_eq "$u: files under ckpt/$k/n/global_step1/ (4 optimizer files, 2 model files)" 6 \
        "$(held_under "ckpt/$k/n/global_step1/")"
    assert_eq "$u: files under ckpt/${k}n" 0 "$(held_under "ckpt/${k}n")"
    grep -q "kept 6 objects this run wrote under $u/n/ (--keep)" "$T/f-$k.err" || { cat "$T/f-$k.err"; fail "$u: message"; }
    grep -q "the checkpoints stay under $u/n/ (--name n)" "$T/f-$k.err" || { cat "$T/f-$k.err"; fail "$u: message"; }
done
