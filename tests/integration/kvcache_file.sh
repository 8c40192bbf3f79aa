#!/usr/bin/env bash
# needs: mpi root
# railbench load kvcache on file:// (a directory on disk and one on tmpfs), 2 ranks: MLPerf Storage's option 1
# scaled down; the entries numpy loads have llama3.1-8b's shape and dtype and the size their tokens give; the bytes
# counted are the tokens' bytes; each trial's figures are the sums and maxima of the ranks' own; option 2's CPU tier
# hits and demotes; a file that was there is untouched and nothing the run made is left; bad input is one line.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
NPY=/usr/bin/python3
BPT=131072 # llama3.1-8b: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes
rbmpi() { local name=$1 np=$2; shift 2
    rb_mpirun "$np" "$RB" "$@" --out "$T/$name" >"$T/$name.out" 2>"$T/$name.err" \
        || { cat "$T/$name.err" >&2; fail "$name: railbench failed"; }; }
SHM=$(mktemp -d /dev/shm/kvcache_file.XXXXXX)
AT_EXIT+=("rm -rf '$SHM'")

# The figures every run must keep: bytes are the tokens' bytes and 128 header bytes per file; no CPU tier: every
# prefill is one file written; a trial's bandwidths and tokens/s are the ranks' summed, its device p95s their maximum.
check_figures() { # RESULT WHAT
    local R=$1/result.json
    assert_jq "$R" "[.summary.trials[] | .counts, .ranks[].counts] | all(
        .bytes_written == .writes * 128 + .tokens_written * $BPT and .bytes_read == .reads * 128 + .tokens_read * $BPT
        and .writes > 0 and .reads > 0 and .verify_failures == 0)" "$2: bytes = 128 x files + $BPT x tokens, each rank and trial"
    assert_jq "$R" '[.summary.trials[] | . as $t | (.ranks | length) == 2 and
        ([.ranks[].counts.bytes_read] | add) == $t.counts.bytes_read and
        ([.ranks[].counts.turns] | add) == $t.counts.turns and
        (([.ranks[].read_bytes_per_s] | add) - $t.read_bytes_per_s | fabs) < 1e-6 * $t.read_bytes_per_s and
        (([.ranks[].write_bytes_per_s] | add) - $t.write_bytes_per_s | fabs) < 1e-6 * $t.write_bytes_per_s and
        (([.ranks[].tokens_per_s] | add) - $t.tokens_per_s | fabs) < 1e-6 * $t.tokens_per_s and
        ([.ranks[].device_read_p95_ns] | max) == $t.device_read_p95_ns and
        ([.ranks[].device_write_p95_ns] | max) == $t.device_write_p95_ns and
        $t.device_read_p95_merged_ns <= $t.device_read_p95_ns and
        $t.latency.device_read.count == $t.counts.reads and $t.latency.device_write.count == $t.counts.writes and
        all(.ranks[]; ((.counts.bytes_read / .elapsed_s) - .read_bytes_per_s | fabs) < 1e-6 * .read_bytes_per_s and
            (((.counts.prefill_tokens + .counts.generated_tokens) / .elapsed_s) - .tokens_per_s | fabs)
             < 1e-6 * .tokens_per_s)] | all' \
        "$2: each trial's GB/s and tokens/s are the ranks' sums, its device p95s their maximum"
    assert_jq "$R" '.summary.mean.host_device_ratio > 0 and .summary.mean.host_device_ratio < 1' \
        "$2: host time measured apart from device time ($(jq .summary.mean.host_device_ratio "$R"))"
}

for where in "$T/disk" "$SHM/kv"; do
    mkdir -p "$where/foreign"
    head -c 100000 /dev/urandom >"$where/foreign/data.npy"
    echo keep >"$where/rbkv-note.txt"
    sum0=$(cd "$where" && find . -type f -exec sha256sum {} + | sort)
    name=$(basename "$where")
    # --keep: the last trial's open conversations stay, for numpy to read.
    rbmpi "$name-keep" 2 load kvcache "file://$where" --option 1 --scale 1/64 --users 3 --duration 2s --trials 2 \
        --gap 1s --verify --keep
    R=$T/$name-keep/result.json
    assert_jq "$R" '.summary.option == 1 and .summary.model.name == "llama3.1-8b" and .summary.model.bytes_per_token
        == 131072 and .summary.users_per_rank == 3 and .summary.inflight_per_rank == 16 and .summary.cpu_tier_bytes == 0
        and (.summary.trials | length) == 2 and .summary.kept' "$name: option 1, scaled, 2 trials"
    check_figures "$T/$name-keep" "$name"
    prefix=$(jqr "$R" .summary.entry_dir_prefix)
    "$NPY" - "$where" "$prefix" "$BPT" <<'PY' || fail "$name: the entries are not llama3.1-8b's NumPy arrays"
import glob, os, sys
import numpy as np
where, prefix, bpt = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = sorted(glob.glob(os.path.join(where, prefix + "*", "*.npy")))
assert len(files) > 0, "no entry kept"
ranks = set()
for f in files:
    a = np.load(f, mmap_mode="r")
    assert a.dtype == np.dtype("<f2"), (f, a.dtype)
    assert a.shape[0] == 32 and a.shape[1] == 2 and a.shape[3] == 8 and a.shape[4] == 128, (f, a.shape)
    assert os.path.getsize(f) == 128 + a.shape[2] * bpt, (f, os.path.getsize(f), a.shape)
    assert 512 // 64 <= a.shape[2] <= 25000 // 64, (f, a.shape)  # the user kinds' context tokens, scale 1/64
    assert np.unique(np.asarray(a[0, 0, :, 0, :]).view(np.uint16)).size > 1
    ranks.add(os.path.basename(os.path.dirname(f)))
assert len(ranks) == 2, ranks
print("ok: %d entries of shape (32, 2, tokens, 8, 128) <f2, each 128 + tokens x %d bytes, from 2 ranks" % (len(files), bpt))
PY
    rm -r "$where/$prefix"0 "$where/$prefix"1
    # Without --keep: nothing the run made stays; what was there is untouched.
    rbmpi "$name-run" 2 load kvcache "file://$where" --option 1 --scale 1/64 --users 4 --duration 2s --trials 1 --gap 0
    check_figures "$T/$name-run" "$name"
    assert_jq "$T/$name-run/result.json" '.summary.files_left == 0 and (.summary.kept | not) and
        (.checks[] | select(.name == "entries_removed") | .passed)' "$name: every entry removed"
    assert_eq "$name: only the files that were there" "$sum0" "$(cd "$where" && find . -type f -exec sha256sum {} + | sort)"
    assert_eq "$name: no directory of the run" "" "$(find "$where" -name 'rbkv-2*')"
done

# Option 2: a CPU tier (4 GiB scaled by 1/512: 8 MiB per rank, 1 MiB per thread) takes the entries that fit and
# demotes its least recently used ones to storage at 0.8 full; reads hit it first.
rbmpi cpu 2 load kvcache "file://$T/disk" --option 2 --scale 1/512 --users 8 --inflight 8 --duration 2s --trials 1
R=$T/cpu/result.json
assert_jq "$R" '.summary.option == 2 and .summary.cpu_tier_bytes == 8388608 and .summary.trials[0].counts as $c |
    $c.cpu_writes > 0 and $c.cpu_hits > 0 and $c.cpu_misses > 0 and $c.demotions > 0 and $c.storage_hits > 0 and
    $c.cpu_hits + $c.cpu_misses == $c.cpu_reads + $c.reads + $c.storage_misses and
    $c.bytes_written == $c.writes * 128 + $c.tokens_written * 131072' \
    "option 2: CPU tier hits $(jq .summary.trials[0].counts.cpu_hits "$R"), demotions $(jq .summary.trials[0].counts.demotions "$R")"
assert_eq "option 2: nothing left" "" "$(find "$T/disk" -name 'rbkv-2*')"
# The timeline: a point per interval with each tier's and op's operations over both ranks; they add up to the counts.
assert_jq "$R" '.summary.trials[0] | (.timeline | length) >= 2 and
    ([.timeline[].cpu_read.count] | add) == .counts.cpu_reads and ([.timeline[].storage_write.count] | add) == .counts.writes
    and ([.timeline[].storage_read.count] | add) == .counts.reads and ([.timeline[].cpu_write.count] | add) == .counts.cpu_writes
    and all(.timeline[]; .cpu_read.count == 0 or .cpu_read.p95_ns > 0)' \
    "option 2: latency by tier and op in $(jq '.summary.trials[0].timeline | length' "$R") intervals, adding up to the counts"
"$RB" report "$T/cpu" --html "$T/cpu.html" >"$T/report.out" 2>&1 || { cat "$T/report.out" >&2; fail "report"; }
grep -q '^| *trial *| read GB/s' "$T/report.out" || fail "report: no kvcache table"
for fig in kvcache-ranks kvcache-latency; do grep -q "$fig" "$T/cpu.html" || fail "report: no figure $fig"; done
ok "report: the trial table, bandwidth per rank and latency by tier and op over time"
mkdir -p "$T/prom"
"$RB" load kvcache "file://$T/disk" --option 2 --scale 1/512 --users 4 --inflight 4 --duration 2s --trials 1 \
    --prom-textfile "$T/prom" --out "$T/promrun" --quiet >/dev/null 2>&1 || fail "prom run"
assert_eq "Prometheus: the latency gauges by tier and op" 4 \
    "$(grep -c '^railbench_kvcache_latency_seconds{tier="\(storage\|cpu\)",op="\(read\|write\)",quantile="0.95"' "$T/prom/railbench.prom")"

# A storage tier of 16 MiB per rank (8 MiB per thread): its least recently used entries are deleted to make room,
# and a later turn's reload of one is a miss (nothing read); what was evicted is deleted, so nothing is left.
rbmpi evict 2 load kvcache "file://$T/disk" --option 1 --scale 1/64 --users 4 --inflight 2 --storage-tier 16M \
    --duration 3s --trials 1
assert_jq "$T/evict/result.json" '.summary.storage_tier_bytes == 16777216 and .summary.trials[0].counts as $c |
    $c.evictions > 0 and $c.storage_misses > 0 and $c.storage_hits == $c.reads and $c.deletes >= $c.evictions' \
    "storage tier: $(jq .summary.trials[0].counts.evictions "$T/evict/result.json") evictions, $(jq .summary.trials[0].counts.storage_misses "$T/evict/result.json") misses"
assert_eq "storage tier: nothing left" "" "$(find "$T/disk" -name 'rbkv-2*')"

# --tp 2 keeps 4 of llama3.1-70b's 8 KV heads: 327,680 / 2 bytes per token; a model of its own from its shape.
rbmpi tp 1 load kvcache "file://$T/disk" --option 3 --tp 2 --scale 1/256 --duration 1s --trials 1 --keep
R=$T/tp/result.json
assert_jq "$R" '.summary.model.bytes_per_token == 163840 and .summary.model.layers == 80 and .summary.inflight_per_rank == 4' \
    "option 3 with --tp 2: 163,840 bytes per token"
f=$(find "$T/disk/$(jqr "$R" .summary.entry_dir_prefix)0" -name '*.npy' | head -1)
assert_eq "--tp 2: the entry's shape" "80 2 4 128" "$("$NPY" -c "import numpy as np,sys; s=np.load(sys.argv[1]).shape; print(s[0], s[1], s[3], s[4])" "$f")"
rm -r "$T/disk/$(jqr "$R" .summary.entry_dir_prefix)0"
rbmpi custom 1 load kvcache "file://$T/disk" --layers 2 --kv-heads 2 --head-dim 64 --users 2 --duration 1s --trials 1
assert_jq "$T/custom/result.json" '.summary.model.name == "custom" and .summary.model.bytes_per_token == 1024 and
    (.summary.option == null)' "--layers 2 --kv-heads 2 --head-dim 64: 1,024 bytes per token"

# Bad input: one line, exit 2 for usage, 3 for what the file system refuses; nothing made.
assert_exit 2 "unknown model" "$RB" load kvcache "file://$T/disk" --model llama9 --duration 1s
assert_stderr_line '^railbench: error: --model "llama9": expected llama3.1-8b'
assert_exit 2 "option 4" "$RB" load kvcache "file://$T/disk" --option 4
assert_stderr_line '^railbench: error: --option 4: expected 1'
assert_exit 2 "--tp 3" "$RB" load kvcache "file://$T/disk" --option 1 --tp 3
assert_stderr_line '^railbench: error: --tp 3: expected a divisor'
assert_exit 3 "an object target that does not answer" "$RB" load kvcache "http://127.0.0.1:1/b" --option 1 --out "$T/noanswer"
assert_stderr_line '^railbench: error: http://127.0.0.1:1/b: cannot connect'
assert_exit 2 "--scale 1/0" "$RB" load kvcache "file://$T/disk" --option 1 --scale 1/0
assert_stderr_line '^railbench: error: --scale "1/0"'
assert_exit 3 "missing directory" "$RB" load kvcache "file://$T/nowhere" --option 1 --duration 1s --out "$T/missing"
assert_stderr_line "$T/nowhere"
assert_eq "bad input made nothing" "" "$(find "$T/disk" -name 'rbkv-2*')"

# A full file system (ext4 of 16 MiB on a loop device; entries of up to 50 MiB at 1/64): one error line naming the
# file and ENOSPC, exit 3; the run's partial file and directories are gone, the file that was there stays.
loopfs_up small 16M ext4
echo keep >"$LOOP_MNT/there.txt"
rc=0
"$RB" load kvcache "file://$LOOP_MNT" --option 1 --scale 1/64 --users 16 --duration 5s --trials 1 --out "$T/full" \
    >"$T/full.out" 2>"$T/full.err" || rc=$?
assert_eq "full file system: exit" 3 "$rc"
grep -Eq '^railbench: error: load kvcache: (write|fsync|open) rbkv-.*\.npy: No space left on device \(the file system is full\)$' \
    "$T/full.err" || { cat "$T/full.err" >&2; fail "no ENOSPC line"; }
ok "full file system: $(grep -m1 'No space' "$T/full.err")"
assert_eq "full file system: what is left" "lost+found there.txt" "$(ls "$LOOP_MNT" | tr '\n' ' ' | sed 's/ $//')"
assert_jq "$T/full/result.json" '.summary.files_left == 0 and .exit_status == 3' "full file system: result recorded, nothing left"
