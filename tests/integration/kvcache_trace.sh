#!/usr/bin/env bash
# needs: mpi
# railbench load kvcache --trace: a Mooncake trace (JSON lines of timestamp, input_length, output_length, hash_ids)
# replayed open loop: each hash block a file of 512 tokens' KV bytes, read when its id was seen before, written
# otherwise; the hit rate equals the one computed here from the hash ids; from 2 ranks every block is written once;
# requests are measured from when they were due (coordinated omission corrected); a BurstGPT CSV writes and reads
# one entry per request; a line that does not parse is one error line naming it; nothing is left.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
BPT=131072
mkdir -p "$T/d"
echo keep >"$T/d/there.txt"
/usr/bin/python3 - "$T/mc.jsonl" <<'PY'
import json, random, sys
random.seed(7)
t, lines = 0, []
for i in range(80):
    t += random.randint(5, 30)
    n = random.randint(1, 5)
    shared = random.randint(0, n)
    ids = [random.randrange(12) for _ in range(shared)] + [1000 + 10 * i + k for k in range(n - shared)]
    lines.append(json.dumps({"timestamp": t, "input_length": 512 * n, "output_length": random.randint(10, 300),
                             "hash_ids": ids}))
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
# The hit rate from the hash ids alone: a block is a hit when its id appeared in an earlier request. An id new to
# the trace that comes twice in one request is written once; the second is a repeat (REPEATS).
read -r TOTAL SEEN UNIQUE REPEATS RATE < <(/usr/bin/python3 - "$T/mc.jsonl" <<'PY'
import json, sys
seen, total, hits, repeats = set(), 0, 0, 0
for line in open(sys.argv[1]):
    ids = json.loads(line)["hash_ids"]
    new = set()
    for h in ids:
        total += 1
        if h in seen:
            hits += 1
        elif h in new:
            repeats += 1
        new.add(h)
    seen |= new
print(total, hits, len(seen), repeats, repr(hits / total))
PY
)
[ "$REPEATS" -gt 0 ] || fail "the trace has no id twice in one request (the case is meant to be covered)"
ok "trace: $TOTAL blocks, $SEEN seen in an earlier request, $UNIQUE ids, $REPEATS repeats in one request, hit rate $RATE"

# One rank, one thread: every read finds its block, so the hit rate measured is the trace's.
"$RB" load kvcache "file://$T/d" --model llama3.1-8b --trace "$T/mc.jsonl" --speedup 4 --scale 1/64 --inflight 1 \
    --verify --keep --out "$T/one" >"$T/one.out" 2>"$T/one.err" || { cat "$T/one.err" >&2; fail "one rank"; }
R=$T/one/result.json
assert_jq "$R" ".summary.replay | .format == \"mooncake\" and .requests == 80 and .requests_done == 80 and
    .blocks_total == $TOTAL and .blocks_seen == $SEEN and .trace_hit_rate == $RATE and .hit_rate == $RATE" \
    "one rank: hit rate $RATE, from the trace and measured"
assert_jq "$R" ".summary.trials[0].counts | .blocks_written == $UNIQUE and .blocks_read == $SEEN and
    .block_misses == 0 and .block_repeats == $REPEATS and .bytes_written == $UNIQUE * (128 + 8 * $BPT) and
    .verify_failures == 0" \
    "one rank: each id written once as 8 tokens (512 at 1/64), every later one read"
prefix=$(jqr "$R" .summary.entry_dir_prefix)
prefix=${prefix%r} # rbkv-<run id>-: r<rank> for the ranks, blocks for the hash blocks
assert_eq "one rank: block files kept" "$UNIQUE" "$(find "$T/d/${prefix}blocks" -name 'b*.npy' | wc -l)"
/usr/bin/python3 -c "
import glob, sys, numpy as np
for f in glob.glob(sys.argv[1] + '/*.npy'):
    a = np.load(f); assert a.shape == (32, 2, 8, 8, 128) and a.dtype == np.dtype('<f2'), (f, a.shape)
" "$T/d/${prefix}blocks" || fail "block files are not (32, 2, 8, 8, 128) <f2"
ok "one rank: every block file loads as (32, 2, 8, 8, 128) <f2"
rm -r "$T/d/${prefix}"*

# Two ranks, two threads each: requests split by index; each id still written once; a read that came before its
# writer finished is a miss, so reads + misses are the trace's seen blocks.
rb_mpirun 2 "$RB" load kvcache "file://$T/d" --model llama3.1-8b --trace "$T/mc.jsonl" --speedup 4 --scale 1/64 \
    --inflight 2 --out "$T/two" >"$T/two.out" 2>"$T/two.err" || { cat "$T/two.err" >&2; fail "two ranks"; }
R=$T/two/result.json
assert_jq "$R" ".summary.replay.trace_hit_rate == $RATE and .summary.replay.requests_done == 80 and
    (.summary.trials[0].ranks | length) == 2 and all(.summary.trials[0].ranks[]; .counts.requests == 40) and
    (.summary.trials[0].counts | .blocks_written == $UNIQUE and .blocks_read + .block_misses == $SEEN and
     .block_repeats == $REPEATS) and
    .summary.replay.hit_rate <= $RATE and .summary.files_left == 0" \
    "two ranks: 40 requests each, each id written once, hit rate $(jq .summary.replay.hit_rate "$R") of $RATE"
assert_eq "two ranks: nothing left" "there.txt" "$(ls "$T/d")"

# Open loop: every request due at once (--speedup 1e6), one thread: the last ones wait for the first, and that
# wait is in their latency (from when they were due), so the slowest request takes most of the whole run's I/O time.
"$RB" load kvcache "file://$T/d" --model llama3.1-8b --trace "$T/mc.jsonl" --speedup 1e6 --scale 1/64 --inflight 1 \
    --out "$T/co" >"$T/co.out" 2>"$T/co.err" || { cat "$T/co.err" >&2; fail "open loop"; }
assert_jq "$T/co/result.json" '.summary.trials[0].latency as $l | $l.request.count == 80 and
    $l.request.summary.max >= 0.9 * ($l.device_write.sum_ns + $l.device_read.sum_ns)' \
    "open loop: the last request's latency counts its wait ($(jq .summary.trials[0].latency.request.summary.max "$T/co/result.json") ns)"

# BurstGPT: one entry per request written, read 1 + output/32 times, removed.
printf 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n0.5,ChatGPT,1200,300,1500,Conversation log\n0.9,GPT-4,640,64,704,API log\n1.4,ChatGPT,3000,33,3033,Conversation log\n' >"$T/b.csv"
rb_mpirun 2 "$RB" load kvcache "file://$T/d" --model llama3.1-8b --trace "$T/b.csv" --scale 1/64 --inflight 2 \
    --verify --out "$T/burst" >"$T/burst.out" 2>"$T/burst.err" || { cat "$T/burst.err" >&2; fail "burstgpt"; }
assert_jq "$T/burst/result.json" '.summary.replay.format == "burstgpt" and .summary.replay.hit_rate == null and
    (.summary.trials[0].counts | .requests == 3 and .writes == 3 and .reads == 15 and .tokens_written == 74 and
    .deletes == 3 and .prefill_tokens == 4840 and .generated_tokens == 397)' \
    "BurstGPT: 3 entries (18 + 10 + 46 tokens at 1/64) written, read 10 + 3 + 2 times, removed"
assert_eq "BurstGPT: nothing left" "there.txt" "$(ls "$T/d")"

# A line that does not parse: one line naming the file and line, exit 2, nothing made.
printf '{"timestamp": 0, "input_length": 512, "output_length": 10, "hash_ids": [1]}\n{"timestamp": 5, "input_len\n' >"$T/bad.jsonl"
assert_exit 2 "trace line that does not parse" "$RB" load kvcache "file://$T/d" --model llama3.1-8b --trace "$T/bad.jsonl"
assert_stderr_line "^railbench: error: --trace $T/bad.jsonl:2: "
assert_exit 2 "--trials with --trace" "$RB" load kvcache "file://$T/d" --model llama3.1-8b --trace "$T/mc.jsonl" --trials 2
assert_stderr_line '^railbench: error: --trace: one replay'
assert_eq "bad input made nothing" "there.txt" "$(ls "$T/d")"
