#!/usr/bin/env bash
# needs: -
# railbench load train against nginx: AU > 95 % when compute dominates, < 90 % behind limit_rate (data wait explains it),
# cold then warm through a proxy_cache tier, exact samples/bytes per epoch, populate + verify, sharded objects, presets,
# find-max, Prometheus, bad input, SIGINT.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T" # nginx's workers run as nobody
PORT=$(free_port)
TIER=$(free_port)
W=$T/www
mkdir -p "$W/fast" "$W/slow" "$W/dav"
chmod 777 "$W/dav"
for i in $(seq 0 63); do
    n=$(printf %08d "$i")
    head -c 8192 /dev/urandom >"$W/fast/obj-$n"
    head -c 40960 /dev/urandom >"$W/slow/obj-$n"
done
# /slow/: nginx sends a 40 KiB object at limit_rate 64k in 0.5 s (its rate limiter works in whole steps), so a
# read takes ten times the 50 ms compute step of scenario 2 and 2.5 times the 200 ms one of scenario 7.
# A caching tier (nginx proxy_cache, the X-Cache-Status header) in front of the throttled /slow/.
nginx_start web "proxy_cache_path $T/cache keys_zone=tier:1m;
    server {
        listen 127.0.0.1:$TIER;
        location / { proxy_pass http://127.0.0.1:$PORT/slow/; proxy_cache tier; proxy_cache_valid 200 1h;
                     add_header X-Cache-Status \$upstream_cache_status; }
    }
    server {
        listen 127.0.0.1:$PORT;
        root $W;
        location / { autoindex on; autoindex_format json; }
        location /slow/ { limit_rate 64k; autoindex on; autoindex_format json; }
        location /dav/ { dav_methods PUT; create_full_put_path on; client_max_body_size 0;
                         autoindex on; autoindex_format json; }
    }"
wait_port "$PORT"
wait_port "$TIER"
URL=http://127.0.0.1:$PORT
S() { jq -c ".summary | $2" "$T/$1/result.json"; }
# within A B TOL: |A - B| <= TOL
within() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }

# 1. Fast local origin, compute-dominated steps (100 ms of compute against sub-millisecond reads): AU > 95 %.
"$RB" load train "$URL/fast" --objects 64 --batch-size 4 --compute-time 100ms -t 2 --epochs 2 --strict \
    --out "$T/fast" --prom-textfile "$T/prom" --quiet >/dev/null 2>"$T/fast.err"
R=$T/fast/result.json
assert_eq "fast: epochs" 2 "$(S fast '.train_epochs | length')"
assert_jq "$R" '[.summary.train_epochs[].au_pct] | all(. > 95)' "fast: AU > 95 % in every epoch"
assert_jq "$R" '.summary.au_mean_pct > 95 and .summary.passed == true and .summary.au_min_pct == 90' "fast: passed"
assert_eq "fast: steps, samples, bytes, requests per epoch" '[16,64,524288,64]' \
    "$(S fast '[.train_epochs[0] | .steps, .samples, .bytes, .requests]')"
assert_eq "fast: cold then warm, as configured (nothing counted)" '[[true,"cold","configured"],[false,"warm","configured"]]' \
    "$(S fast '[.train_epochs[] | [.cold, .cache, .cache_basis]]')"
assert_jq "$R" '.summary.train_epochs | all(.data_wait_p99_ns < 100000000)' \
    "fast: data waits below the compute time"
assert_jq "$R" '[.phases[].name] == ["epoch-1", "epoch-2"] and all(.phases[]; .count == 64 and .bytes == 524288)' \
    "fast: one harness phase per epoch with its requests and bytes"
assert_jq "$R" '.summary.accelerators == 1 and .summary.find_max == null' "fast: one accelerator, no search"
# samples/s = samples / epoch time, so it is bounded by what 100 ms steps allow: at most 4 samples per 0.1 s.
assert_jq "$R" '.summary.train_epochs | all(.samples_per_s <= 40.001 and .samples_per_s > 0)' "fast: samples/s under the compute bound"
grep -q 'PASS' "$T/fast/table.md" || fail "table.md has no PASS"
ok "table.md says PASS"
P=$T/prom/railbench.prom
grep -Eq '^railbench_train_au_ratio\{epoch="2",accelerators="1",run="[^"]*"\} 0\.9[5-9]' "$P" || fail "no AU gauge for epoch 2 in $P"
grep -Eq '^railbench_requests_total\{op="GET",phase="epoch-1",code_class="2xx",run="[^"]*"\} 64$' "$P" || fail "no request counter"
ok "Prometheus: AU gauge per epoch and the phase's request counter"
au1=$(awk -F' ' '/^railbench_train_au_ratio\{epoch="1"/ { print $2 }' "$P")
within "$au1" "$(S fast '.train_epochs[0].au_pct / 100')" 1e-9 || fail "AU gauge $au1 differs from the summary"
ok "AU gauge = summary AU"
# The 5x memory rule: 512 KiB of data is far below five times this host's memory.
grep -q "smaller than 5 x the client hosts' memory" "$T/fast.err" || fail "no data set size warning"
assert_jq "$R" '.summary.dataset.page_cache_may_hide_storage == true and .summary.dataset.bytes == 524288
    and .summary.dataset.client_memory_bytes == ([.hosts[].memory_bytes] | add)' "data set vs memory recorded"

# 2. Throttled origin: each 40 KiB read takes 0.5 s against 50 ms of compute. AU < 90 %, --strict exits 1,
#    and the data wait accounts for the lost time: AU = compute / (compute + wait) per step.
assert_exit 1 "throttled: --strict" "$RB" load train "$URL/slow" --objects 12 --batch-size 2 -c 2 --compute-time 50ms \
    --strict --out "$T/slow" --quiet
R=$T/slow/result.json
assert_jq "$R" '.summary.train_epochs[0].au_pct < 90 and .summary.au_mean_pct < 30 and .summary.passed == false' \
    "throttled: AU below 90 % (designed about 10 %)"
assert_jq "$R" '.checks[] | select(.name == "au_min") | .passed == false' "throttled: au_min check failed"
assert_jq "$R" '.summary.train_epochs[0].data_wait_p50_ns > 4 * 50000000' "throttled: median data wait > 4 x compute"
# The compute a step measured (step_time.compute_ns: the 50 ms asked for plus the sleep's overshoot, which a
# loaded machine makes several ms) is what AU counts as compute; the model uses it, not the 50 ms asked for.
au=$(S slow '.train_epochs[0].au_pct')
wait_mean=$(S slow '.train_epochs[0].step_time.data_wait_ns')
compute=$(S slow '.train_epochs[0].step_time.compute_ns')
sync=$(S slow '.train_epochs[0].step_time.sync_wait_ns')
awk -v c="$compute" 'BEGIN { exit !(c >= 50e6 && c < 500e6) }' || fail "measured compute per step $compute ns, not from 50 ms up"
model=$(awk -v w="$wait_mean" -v c="$compute" -v s="$sync" 'BEGIN { print 100 * c / (c + w + s) }')
within "$au" "$model" 2 || fail "AU $au is not compute / (compute + mean data wait + sync) = $model"
ok "AU $au % = compute $compute ns / (compute + mean wait $wait_mean ns + sync) = $model % within 2 points"
grep -q 'In epoch 1 (AU [0-9.]* %) each accelerator waited [0-9.]*ms on average (p99 [0-9.]*ms) per step for its batch against 50.0ms of compute; the step.s barrier took [0-9.]*[mun]*s on average' \
    "$T/slow/table.md" || fail "table.md does not explain the failure"
assert_jq "$R" '.summary.train_epochs[0].sync_ns.max >= 0' "synchronisation time recorded apart from the data wait"
ok "table.md explains it: $(grep waited "$T/slow/table.md")"

# 2b. Through the tier: epoch 1 is cold (every read a MISS fetched from the throttled origin, AU < 90 %),
#     epoch 2 warm (every read a HIT from the tier, AU > 95 %) — the same command, the same objects.
"$RB" load train "http://127.0.0.1:$TIER/" --objects 16 --batch-size 2 -c 2 --compute-time 50ms --epochs 2 \
    --cache-header X-Cache-Status --out "$T/tier" --quiet >/dev/null 2>&1
assert_eq "tier: cold, misses, hits per epoch" '[[true,16,0],[false,0,16]]' \
    "$(S tier '[.train_epochs[] | [.cold, .cache_miss, .cache_hit]]')"
assert_eq "tier: labels measured from the HIT/MISS counts" '[["cold","measured"],["warm","measured"]]' \
    "$(S tier '[.train_epochs[] | [.cache, .cache_basis]]')"
assert_jq "$T/tier/result.json" '.summary.train_epochs[0].au_pct < 90 and .summary.train_epochs[1].au_pct > 95' \
    "tier: cold AU < 90 %, warm AU > 95 % (got $(S tier '[.train_epochs[].au_pct | floor]'))"
assert_jq "$T/tier/result.json" '.phases[0].extra.cache_miss == 16 and .phases[1].extra.cache_hit == 16' \
    "tier: the phase records count the same"
grep -q 'In epoch 1 (AU' "$T/tier/table.md" || fail "table.md does not explain the cold epoch"
ok "tier: the table explains the cold epoch, not the warm one"

# 3. --populate (WebDAV PUT, sizes from --sample-size MEAN/STDEV), then verified epochs of sharded objects
#    (3 samples per object, read whole once): every object once per epoch, bytes equal to what is on disk.
#    PUTs and reads through the native engine, then reads through libcurl below.
"$RB" load train "$URL/dav/set" --objects 24 --populate --sample-size 3k/512 --samples-per-object 3 --batch-size 4 \
    --compute-time 10ms --verify --seed 9 --epochs 2 --engine native --out "$T/pop" --quiet >/dev/null 2>&1
disk=$(find "$W/dav/set" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
assert_eq "populate: files" 24 "$(find "$W/dav/set" -type f | wc -l)"
[ "$(find "$W/dav/set" -type f -printf '%s\n' | sort -u | wc -l)" -gt 12 ] || fail "object sizes do not vary"
ok "populate: sizes drawn from the distribution"
assert_eq "populate: bytes written = on disk" "$disk" "$(S pop '.populate.bytes')"
assert_eq "epochs: requests, bytes, samples, steps, errors" "[[24,$disk,72,18,0],[24,$disk,72,18,0]]" \
    "$(S pop '[.train_epochs[] | [.requests, .bytes, .samples, .steps, .errors]]')"
assert_eq "data set size from populate" "$disk" "$(S pop '.dataset.bytes')"
assert_eq "engine recorded" '"native"' "$(S pop .engine)"
"$RB" load train "$URL/dav/set" --objects 24 --samples-per-object 3 --batch-size 4 --compute-time 1ms --verify \
    --seed 9 --engine curl --out "$T/curl" --quiet >/dev/null 2>&1
assert_eq "curl engine: engine, requests, bytes, errors" "[\"curl\",24,$disk,0]" \
    "$(S curl '[.engine, .train_epochs[0].requests, .train_epochs[0].bytes, .train_epochs[0].errors]')"
# One corrupted object: --verify counts it (class checksum) and --max-error-rate 0 turns it into exit 1, on both engines.
printf 'XY' | dd of="$W/dav/set/obj-00000007" bs=1 seek=100 conv=notrunc status=none
for e in native curl; do
    assert_exit 1 "$e: corrupted object with --max-error-rate 0" "$RB" load train "$URL/dav/set" --objects 24 \
        --samples-per-object 3 --batch-size 4 --compute-time 1ms --verify --seed 9 --max-error-rate 0 --engine "$e" \
        --out "$T/bad-$e" --quiet
    assert_jq "$T/bad-$e/result.json" '.phases[0].errors.checksum == 1 and .summary.errors == 1' "$e: checksum error counted"
    assert_jq "$T/bad-$e/result.json" '.checks[] | select(.name == "error_rate") | .passed == false' "$e: error_rate check failed"
done

# 4. Objects found by listing (nginx autoindex JSON), --steps caps an epoch.
"$RB" load train "$URL/fast" --batch-size 2 --compute-time 5ms --steps 5 --out "$T/list" --quiet >/dev/null 2>&1
assert_eq "listing: objects, steps, samples, bytes" '[64,5,10,81920]' \
    "$(S list '[.dataset.objects, .train_epochs[0].steps, .train_epochs[0].samples, .train_epochs[0].bytes]')"

# 5. Presets: cosmoflow's batch, compute time, read threads and 70 % threshold; options given win over a preset.
"$RB" load train "$URL/fast" --objects 64 --workload cosmoflow --steps 20 --out "$T/cosmo" --quiet >/dev/null 2>&1
assert_eq "cosmoflow: batch, compute, threads, au-min, sample" '[1,3500000,4,70,2828486]' \
    "$(S cosmo '[.workload.batch_size, .workload.compute_ns, .workload.read_threads, .au_min_pct, .workload.sample_bytes]')"
assert_eq "cosmoflow: resolved config" '["1","3500us","70","4"]' \
    "$(jq -c '[.config["batch-size"], .config["compute-time"], .config["au-min"], .config["read-threads"]]' "$T/cosmo/result.json")"
# (--format raw: the objects here are plain payloads, not the npz files the preset reads by default)
"$RB" load train "$URL/fast" --objects 64 --workload unet3d --batch-size 2 --compute-time 5ms --steps 3 \
    --format raw --out "$T/unet" --quiet >/dev/null 2>&1
assert_eq "unet3d with --batch-size/--compute-time: theirs win" '[2,5000000,90,146600628,68341808]' \
    "$(S unet '[.workload.batch_size, .workload.compute_ns, .au_min_pct, .workload.sample_bytes, .workload.sample_stdev_bytes]')"
# A saved config reproduces the run's settings.
jq '.config | del(.out)' "$T/cosmo/result.json" >"$T/cosmo.json"
"$RB" load train "$URL/fast" --config "$T/cosmo.json" --objects 64 --out "$T/cosmo2" --quiet >/dev/null 2>&1
assert_eq "config fed back" "$(S cosmo .workload)" "$(S cosmo2 .workload)"

# 6. --find-max-accelerators on the fast origin, bounded at 4 per rank: doubling reaches the bound, which meets AU.
"$RB" load train "$URL/fast" --objects 64 --compute-time 50ms --steps 4 --find-max-accelerators \
    --max-accelerators-per-rank 4 --out "$T/fm1" --quiet >/dev/null 2>&1
assert_eq "find-max fast: tried" '[1,2,4]' "$(S fm1 '[.find_max.tried[].accelerators]')"
assert_eq "find-max fast: max" 4 "$(S fm1 .find_max.max_accelerators)"
assert_jq "$T/fm1/result.json" '.summary.accelerators == 4 and .summary.train_epochs[0].accelerators == 4' \
    "find-max: the reported epochs are the best trial's"

# 7. --find-max-accelerators behind the throttle: 4 read threads x 1 request deliver 8 samples/s; an accelerator
#    consumes 1 sample per 200 ms (5/s). One per rank keeps up with a wide margin; four (20/s) cannot.
"$RB" load train "$URL/slow" --objects 64 --compute-time 200ms -t 4 -c 1 --steps 10 --find-max-accelerators \
    --max-accelerators-per-rank 8 --out "$T/fm2" --quiet >/dev/null 2>&1
R=$T/fm2/result.json
assert_eq "find-max throttled: starts by doubling" '[1,2]' "$(S fm2 '[.find_max.tried[0:2][].accelerators]')"
assert_jq "$R" '.summary.find_max.max_accelerators >= 1 and .summary.find_max.max_accelerators < 4' \
    "find-max throttled: 1 to 3 accelerators (got $(S fm2 .find_max.max_accelerators))"
assert_jq "$R" '.summary.find_max.tried | all(.met == (.au_pct >= 90))' "find-max: each verdict follows its AU"
assert_jq "$R" '.summary.find_max as $f | $f.tried | map(select(.met)) | map(.accelerators) | max == $f.max_accelerators' \
    "find-max: the maximum is the largest count that met the threshold"
assert_jq "$R" '.summary.find_max as $f | $f.tried | all(.met or .accelerators > $f.max_accelerators)' \
    "find-max: every count above it failed"
assert_jq "$R" '.summary.find_max.tried[0].au_pct > 95' "find-max: one accelerator per rank is not starved"

# 8. Bad input: one line naming the problem, exit 2 (usage) or 3 (runtime).
assert_exit 2 "no compute time" "$RB" load train "$URL/fast" --objects 4
assert_stderr_line 'give --compute-time D'
assert_exit 2 "unknown workload" "$RB" load train "$URL/fast" --objects 4 --workload bert
assert_stderr_line 'workload "bert": expected resnet50, unet3d, cosmoflow, retinanet, flux or dlrm'
assert_exit 2 "zero batch" "$RB" load train "$URL/fast" --objects 4 --compute-time 1ms --batch-size 0
assert_stderr_line 'batch-size "0": expected'
assert_exit 2 "bad compute time" "$RB" load train "$URL/fast" --objects 4 --compute-time 5parsecs
assert_stderr_line 'compute-time "5parsecs"'
assert_exit 2 "bad sample size" "$RB" load train "$URL/fast" --objects 4 --compute-time 1ms --sample-size 4k/
assert_stderr_line 'sample-size "4k/"'
assert_exit 2 "AU over 100" "$RB" load train "$URL/fast" --objects 4 --compute-time 1ms --au-min 120
assert_stderr_line 'au-min "120"'
assert_exit 2 "search and a fixed count" "$RB" load train "$URL/fast" --objects 4 --compute-time 1ms \
    --find-max-accelerators --accelerators-per-rank 4
assert_stderr_line 'the search chooses the count'
assert_exit 2 "populate without a size" "$RB" load train "$URL/dav/x" --objects 4 --compute-time 1ms --populate
assert_stderr_line 'populate: give --sample-size'
assert_exit 2 "data set smaller than a step" "$RB" load train "$URL/fast" --objects 3 --batch-size 4 \
    --compute-time 1ms --out "$T/small"
assert_stderr_line 'data set is too small: 3 objects'
dead=$(free_port)
assert_exit 3 "refused connection" "$RB" load train "http://127.0.0.1:$dead/x" --objects 4 --compute-time 1ms
assert_stderr_line "cannot connect to endpoint http://127.0.0.1:$dead"
assert_exit 3 "listing a path without an index" "$RB" load train "$URL/nothing" --compute-time 1ms --out "$T/noidx"
assert_stderr_line 'listing failed: HTTP 404'

# 9. SIGINT in the second epoch: result.json keeps the first epoch whole and marks the second interrupted.
bg "$RB" load train "$URL/slow" --objects 16 --batch-size 2 -c 2 --compute-time 50ms --epochs 4 --interval 200ms \
    --out "$T/int" --quiet >/dev/null 2>&1
pid=$LAST_PID
for _ in $(seq 150); do grep -q '"epoch-2"' "$T/int/intervals.jsonl" 2>/dev/null && break; sleep 0.1; done
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
assert_eq "SIGINT: exit status" 1 "$rc"
R=$T/int/result.json
assert_jq "$R" '.summary.train_epochs[0].steps == 8 and (.summary.train_epochs[0] | has("interrupted") | not)' \
    "SIGINT: epoch 1 complete"
assert_jq "$R" '(.summary.train_epochs | length) == 2 and .summary.train_epochs[1].interrupted == true' \
    "SIGINT: epoch 2 recorded as interrupted"
assert_jq "$R" '.checks[] | select(.name == "completed") | .passed == false' "SIGINT: completed check failed"

# 10. Two endpoints (--endpoint twice: one nginx on two ports, each with its own access log): the two read
# threads' connections spread over them, each GET is logged by one, and together they saw every sample.
read -r E1 E2 <<<"$(free_port 2 | tr '\n' ' ')"
nginx_start two "server { listen 127.0.0.1:$E1; root $W; access_log $T/two/e1.log; autoindex on; autoindex_format json; }
    server { listen 127.0.0.1:$E2; root $W; access_log $T/two/e2.log; autoindex on; autoindex_format json; }"
wait_port "$E1" 30 "nginx on the first endpoint"
wait_port "$E2" 30 "nginx on the second endpoint"
"$RB" load train "$URL/fast" --endpoint "http://127.0.0.1:$E1" --endpoint "http://127.0.0.1:$E2" --objects 64 \
    --batch-size 4 -t 2 -c 1 --compute-time 20ms --epochs 1 --out "$T/two-ep" --quiet >/dev/null 2>"$T/two-ep.err" ||
    { cat "$T/two-ep.err" >&2; fail "load train over two endpoints"; }
assert_jq "$T/two-ep/result.json" '.summary.train_epochs[0].requests == 64' "two endpoints: 64 GETs in the epoch"
g1=$(grep -c 'GET /fast/obj-' "$T/two/e1.log" || true)
g2=$(grep -c 'GET /fast/obj-' "$T/two/e2.log" || true)
assert_eq "two endpoints: sample GETs over both access logs" 64 $((g1 + g2))
[ "$g1" -gt 0 ] && [ "$g2" -gt 0 ] || fail "two endpoints: the read threads used one endpoint only ($g1 and $g2 GETs)"
ok "two endpoints: $g1 and $g2 sample GETs"
