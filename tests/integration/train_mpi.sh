#!/usr/bin/env bash
# needs: host-net mpi
# railbench load train under mpirun -np 2: samples/s is the sum over ranks and AU their mean, each object is read
# once per epoch (three epochs, three GETs each in nginx's access log), a real MPI_Allreduce, throttling, SIGINT.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T"
PORT=$(free_port)
W=$T/www
mkdir -p "$W/fast" "$W/slow"
for i in $(seq 0 63); do
    n=$(printf %08d "$i")
    head -c 8192 /dev/urandom >"$W/fast/obj-$n"
    head -c 40960 /dev/urandom >"$W/slow/obj-$n"
done
# The access log names every object read; /slow/ takes 0.5 s per 40 KiB object (limit_rate 64k).
nginx_start web "log_format obj '\$uri';
    server {
        listen 127.0.0.1:$PORT;
        root $W;
        access_log $T/web/logs/access.log obj;
        location / { autoindex on; autoindex_format json; }
        location /slow/ { limit_rate 64k; }
    }"
wait_port "$PORT"
URL=http://127.0.0.1:$PORT
S() { jq -c ".summary | $2" "$T/$1/result.json"; }

# 1. Two ranks x two simulated accelerators, batch 4, three epochs over 64 objects: 4 steps of 16 samples each.
rb_mpirun 2 "$RB" load train "$URL/fast" --objects 64 --batch-size 4 --accelerators-per-rank 2 --compute-time 50ms \
    -t 2 --epochs 3 --seed 3 --out "$T/m1" --quiet >/dev/null 2>&1
R=$T/m1/result.json
assert_jq "$R" '.mpi.size == 2 and .summary.ranks == 2 and .summary.accelerators == 4' "2 ranks x 2 accelerators"
assert_eq "per epoch: steps, samples, requests, bytes" '[[4,64,64,524288],[4,64,64,524288],[4,64,64,524288]]' \
    "$(S m1 '[.train_epochs[] | [.steps, .samples, .requests, .bytes]]')"
assert_jq "$R" '.summary.train_epochs | all(.samples == ([.ranks[].samples] | add) and .bytes == ([.ranks[].bytes] | add))' \
    "samples and bytes = sums over ranks"
assert_jq "$R" '.summary.train_epochs | all(. as $e | ($e.samples_per_s - ([$e.ranks[].samples_per_s] | add) | fabs) < 1e-9 * $e.samples_per_s)' \
    "samples/s = sum of the ranks' samples/s"
assert_jq "$R" '.summary.train_epochs | all(. as $e | ($e.bytes_per_s - ([$e.ranks[].bytes_per_s] | add) | fabs) < 1e-9 * $e.bytes_per_s)' \
    "bytes/s = sum of the ranks' bytes/s"
assert_jq "$R" '.summary.train_epochs | all(. as $e | ($e.au_pct - ([$e.ranks[].au_pct] | add / 2) | fabs) < 1e-9)' "AU = mean of the ranks' AU"
assert_jq "$R" '.summary.train_epochs | all(.ranks | all(.samples == 32 and .steps == 4))' "each rank: 4 steps x 2 x 4 samples"
assert_jq "$R" '(.summary.au_mean_pct - ([.summary.train_epochs[].au_pct] | add / 3) | fabs) < 1e-9' "run AU = mean of epochs"
assert_jq "$R" '(.summary.samples_per_s - ([.summary.train_epochs[].samples_per_s] | add / 3) | fabs) < 1e-9' \
    "run samples/s = mean of epochs"
assert_jq "$R" '.summary.train_epochs | all(.ranks | all(.samples_per_s <= 2 * 4 / 0.05 + 0.001))' \
    "a rank's samples/s stays under the compute bound (2 x 4 samples per 50 ms step)"
# Every object exactly three times in three epochs of 64 reads each.
assert_eq "GETs in the access log" 192 "$(grep -c '^/fast/obj-' "$T/web/logs/access.log")"
assert_eq "each object 3 times" 64 "$(sort "$T/web/logs/access.log" | uniq -c | awk '$1 == 3' | wc -l)"
: >"$T/web/logs/access.log"
kill -USR1 "$NGINX_PID" # reopen the log

# 2. A real all-reduce of 2 MiB after each step instead of the barrier, on a data set rank 0 lists and shares
#    (nginx autoindex JSON): the same counts, the sizes from the listing, and the sync recorded.
rb_mpirun 2 "$RB" load train "$URL/fast" --batch-size 8 --compute-time 20ms --grad-bytes 2MiB \
    --out "$T/m2" --quiet >/dev/null 2>&1
assert_eq "all-reduce: sync, bytes, steps, samples" '["allreduce",2097152,4,64]' \
    "$(S m2 '[.workload.sync, .workload.grad_bytes, .train_epochs[0].steps, .train_epochs[0].samples]')"
assert_eq "listing shared by rank 0: objects, size source, bytes, read" '[64,"listing",524288,524288]' \
    "$(S m2 '[.dataset.objects, .dataset.bytes_source, .dataset.bytes, .train_epochs[0].bytes]')"
assert_eq "listing requests" 1 "$(grep -c '^/fast/$' "$T/web/logs/access.log")"
assert_jq "$T/m2/result.json" '.summary.train_epochs[0] | . as $e | ($e.samples_per_s - ([$e.ranks[].samples_per_s] | add) | fabs) < 1e-9 * $e.samples_per_s' \
    "all-reduce: samples/s = sum over ranks"
# Per-step breakdown: 3 steps after the first on each rank, each with its all-reduce; one after the other, so
# the step is their sum (slack: 1 % and 1 ms for the clock reads between the parts).
assert_jq "$T/m2/result.json" '.summary.train_epochs[0].step_time | .steps == 6 and .allreduces == 6 and .fetches == 8' \
    "all-reduce: 6 steps and 6 all-reduces timed, 8 batches fetched"
assert_jq "$T/m2/result.json" '.summary.train_epochs[0].step_time | (.step_ns - (.data_wait_ns + .compute_ns + .allreduce_ns) | fabs) < 0.01 * .step_ns + 1e6' \
    "all-reduce: step time = data wait + compute + all-reduce"

# 3. Throttled under two ranks: every rank starves (a read takes 10 x the compute), --strict exits 1.
assert_exit 1 "throttled: --strict under mpirun" rb_mpirun 2 "$RB" load train "$URL/slow" --objects 16 --batch-size 2 \
    -c 2 --compute-time 50ms --strict --out "$T/m3" --quiet
assert_jq "$T/m3/result.json" '.summary.train_epochs[0].ranks | length == 2 and all(.au_pct < 90)' "throttled: each rank's AU < 90 %"
assert_jq "$T/m3/result.json" '.summary.train_epochs[0].data_wait_p50_ns > 4 * 50000000' "throttled: data wait > 4 x compute"

# 4. Bad input under mpirun: one line, from the first rank only.
assert_exit 2 "too small under mpirun" rb_mpirun 2 "$RB" load train "$URL/fast" --objects 5 --batch-size 4 \
    --compute-time 1ms --out "$T/m4"
grep -c 'data set is too small' "$T/stderr" | grep -qx 1 || { cat "$T/stderr"; fail "expected the message once"; }
ok "message once: $(grep 'too small' "$T/stderr")"
assert_exit 2 "unknown workload under mpirun" rb_mpirun 2 "$RB" load train "$URL/fast" --workload bert
grep -c 'expected resnet50' "$T/stderr" | grep -qx 1 || { cat "$T/stderr"; fail "expected the message once"; }
ok "usage message once"

# 5. SIGINT to mpirun during the second epoch: every rank stops after the same step, and the result keeps epoch 1.
bg "${MPIRUN[@]}" -np 2 "$RB" load train "$URL/slow" --objects 32 --batch-size 2 -c 2 --compute-time 50ms --epochs 5 \
    --interval 200ms --out "$T/int" --quiet >/dev/null 2>&1
pid=$LAST_PID
for _ in $(seq 150); do grep -q '"epoch-2"' "$T/int/intervals.jsonl" 2>/dev/null && break; sleep 0.1; done
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" != 0 ] || fail "mpirun exited 0 after SIGINT"
ok "SIGINT: mpirun exit $rc"
R=$T/int/result.json
assert_jq "$R" '.summary.train_epochs[0] | .steps == 8 and (.ranks | all(.steps == 8))' "SIGINT: epoch 1 complete on both ranks"
assert_jq "$R" '.summary.train_epochs[1].interrupted == true' "SIGINT: epoch 2 interrupted"
assert_jq "$R" '.summary.train_epochs[1].ranks | (map(.steps) | max) - (map(.steps) | min) <= 1' \
    "SIGINT: the ranks stopped within a step of each other"
assert_jq "$R" '.checks[] | select(.name == "completed") | .passed == false' "SIGINT: completed check failed"

# 6. --overlap: reads alone, the all-reduce alone, then both; on loopback the counts and the record's shape (the
#    factors on a shaped rail are cluster_interference.sh's).
rb_mpirun 2 "$RB" load train "$URL/fast" --objects 64 --batch-size 4 --compute-time 20ms --grad-bytes 1MiB --overlap \
    --interval 100ms --out "$T/ov" >"$T/ov.out" 2>&1
R=$T/ov/result.json
I='.summary.interference'
assert_jq "$R" '[.phases[].name] == ["storage-alone", "collective-alone", "overlapped"]' "--overlap: three phases"
assert_jq "$R" "$I | [.storage_alone, .overlapped] | all(.step | .fetches == 16 and .fetch_bytes == 524288 and .steps == 14)" \
    "--overlap: reads alone and overlapped fetch 16 batches (512 KiB) over 14 timed steps"
assert_jq "$R" "$I | .collective_alone.step | .fetches == 0 and .fetch_bytes_per_s == null and .allreduces == 14" \
    "--overlap: the all-reduce alone reads nothing (fetch throughput null, not 0) and times 14 all-reduces"
assert_jq "$R" "$I | .storage_alone.step | .allreduces == 0 and .allreduce_ns == null" "--overlap: reads alone time no all-reduce"
assert_jq "$R" "$I | (.slowdown.storage - .storage_alone.step.fetch_bytes_per_s / .overlapped.step.fetch_bytes_per_s | fabs) < 1e-9" \
    "--overlap: storage slowdown = fetch throughput alone / overlapped"
assert_jq "$R" "$I | (.slowdown.collective - .overlapped.step.allreduce_ns / .collective_alone.step.allreduce_ns | fabs) < 1e-9" \
    "--overlap: collective slowdown = all-reduce time overlapped / alone"
assert_jq "$R" "$I | (.au_pct.halves_alone - ([.storage_alone.au_pct, .collective_alone.au_pct] | min) | fabs) < 1e-9 and .au_pct.overlapped == .overlapped.au_pct" \
    "--overlap: AU of the slower half alone and AU overlapped"
assert_jq "$R" '.summary.train_epochs | length == 1 and .[0].phase == "overlapped"' "--overlap: train_epochs is the overlapped phase"
# The tables of one run agree: the epoch row is the overlapped row (steps per rank, MiB/s over wall time); a phase
# that reads nothing has no MiB/s (–, not 0); the live progress prints a header only above a row.
epoch_row=$(grep '^| 1 (overlapped) | warm (configured) | 8 | 64 |' "$T/ov/table.md") ||
    fail "no epoch row '1 (overlapped) | warm (configured) | 8 steps'"
ov_row=$(grep '^| overlapped | 8 |' "$T/ov/table.md") || fail "no 'overlapped' row of 8 steps"
assert_eq "--overlap: epoch table's MiB/s = the overlapped row's" "$(cut -d'|' -f7 <<<"$epoch_row" | xargs)" \
    "$(cut -d'|' -f5 <<<"$ov_row" | xargs)"
assert_eq "--overlap: MiB/s in result.json" "$(jq -r '.summary.train_epochs[0].bytes_per_s' "$R")" \
    "$(jq -r "$I.overlapped.bytes_per_s" "$R")"
grep -q '^| collective alone | 8 | [0-9.]* | – |' "$T/ov/table.md" || fail "table.md: 'collective alone' row without MiB/s –"
grep -q '^| storage alone | 8 |' "$T/ov/table.md" || fail "table.md has no 'storage alone' row of 8 steps"
awk '/\| Phase +\|/ { h = NR } h && NR == h + 1 && !/^ +[0-9.]+s \|/ { print "header without a row at line " h; bad = 1 }
     END { exit bad }' "$T/ov.out" || fail "--overlap: a progress header with no row under it"
ok "--overlap: $(grep -c '| Phase ' "$T/ov.out") progress header(s), each above a row"
grep -q 'No interface but lo carried 1 MiB' "$T/ov/table.md" || fail "table.md does not say the traffic stayed on lo"
ok "--overlap: table rows and the loopback note"
assert_exit 2 "--overlap without --grad-bytes" "$RB" load train "$URL/fast" --objects 8 --compute-time 1ms --overlap
assert_stderr_line "^railbench: error: --overlap: give --grad-bytes SIZE"
assert_exit 2 "--overlap with --epochs 2" "$RB" load train "$URL/fast" --objects 8 --compute-time 1ms --overlap \
    --grad-bytes 1KiB --epochs 2
grep -q -- '--overlap runs three one-epoch phases' "$T/stderr" || fail "--epochs 2 message"
# The report: the interference table and the stacked step figure (isolated phases beside the overlapped one).
"$RB" report "$T/ov" --format json >"$T/ov-report.json"
assert_jq "$T/ov-report.json" '[.tables[] | select(.id == "train-interference") | .rows[] | .phase] == ["storage alone", "collective alone", "overlapped"]' \
    "report: interference table, a row per phase"
"$RB" report "$T/ov" --format html -o "$T/ov.html"
svg=$(tr '\n' ' ' <"$T/ov.html" | grep -o '<svg class="plot" data-plot="train-interference".*' | sed 's|</svg>.*||')
for want in '>storage alone</text>' '>collective alone</text>' '>overlapped</text>' '>data wait</text>' '>compute</text>' \
    '>sync wait</text>'; do
    grep -qF "$want" <<<"$svg" || fail "report: the step figure lacks $want"
done
# The all-reduce's whole time labels the sync segment (in its tooltip always, drawn where it fits).
for ph in collective_alone overlapped; do
    want=$(jq -r --arg p "$ph" '"sync wait: \($p | sub("_"; " ")), [0-9.]+ \\(all-reduce (\(.summary.interference[$p].step.allreduce_ns / 1e5 | floor / 10)|\(.summary.interference[$p].step.allreduce_ns / 1e5 | ceil / 10))(\\.0)? ms\\)"' "$R")
    grep -Eq "<title>$want</title>" <<<"$svg" || fail "report: no sync wait segment matching '$want'"
done
ok "report: step figure with the three phases stacked from their parts"
