#!/usr/bin/env bash
# Runs unit test binaries, fuzzers and (with "all") every tests/integration/*.sh; ends with
# "tests: N passed, M failed[, K skipped]".
# Usage: run-tests.sh unit|fuzz|all BIN...   Filter integration tests with TESTS=regex.
# Unit test binaries and fuzzers (build/fuzz/fuzzers/*) run TEST_JOBS at a time (default: the number of cores, at
# most 2). A fuzzer runs from a copy of tests/fuzz/corpus/<name>: with "fuzz", FUZZ_SECONDS each; with "all", the
# fixed number of inputs tests/fuzz/runs.tsv gives it (what it ran in 10 s on a 2-core machine: the same work
# whatever runs beside it), queued with the integration tests among the short ones, where it fills cores the
# tests leave idle while they wait on servers and timers (FUZZ_SECONDS for a fuzzer runs.tsv does not list).
# Integration tests run INTEGRATION_JOBS at a time (default: twice the cores, at most 4: they mostly wait on
# servers and timers; each has its own temp dir and free ports), longest first (durations of the last run, in
# build/test-logs/durations.tsv, else tests/integration/durations.tsv). Each declares on its second line what it needs (tests/needs.py): at most
# NETNS_JOBS (default 2) "netns" tests run at once, each on a 10.x.0.0/16 of its own (RB_TEST_CLUSTER_NET), and a
# "host-net" test (it reads the host's interface counters) never runs beside one; "deb" tests (they share one
# build of the Debian package) one at a time. Rates held to a band are only printed here (tests/lib.sh "band";
# tests/bench/bands.sh holds them, each test alone).
# TEST_WITHOUT="netns root"
# skips the tests that need any of the tags named (a machine without them), and says so.
set -u
mode=$1; shift
here=$(cd "$(dirname "$0")/.." && pwd)
logs=$here/build/test-logs
mkdir -p "$logs"
passed=0; failed=0; skipped=0; failures=()
declare -A took=() # integration test -> seconds, for durations.tsv
jobs_max=${TEST_JOBS:-}
if [ -z "$jobs_max" ]; then
    jobs_max=$(nproc 2>/dev/null || echo 1)
    [ "$jobs_max" -le 2 ] || jobs_max=2
fi
[[ $jobs_max =~ ^[1-9][0-9]*$ ]] || { echo "run-tests.sh: TEST_JOBS '$jobs_max': expected a whole number >= 1" >&2; exit 2; }
declare -A job_name=() job_start=()

# report NAME RC SECONDS: counts the outcome and prints its line (the log's last 25 lines when it failed).
report() {
    local name=$1 rc=$2 secs=$3 log=$logs/$1.log
    [[ $name != integration/* ]] || took[${name#integration/}]=$secs
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1)); printf 'PASS  %-40s %4ss\n' "$name" "$secs"
    else
        failed=$((failed + 1)); failures+=("$name")
        printf 'FAIL  %-40s %4ss  (log: %s)\n' "$name" "$secs" "${log#"$here"/}"
        tail -n 25 "$log" | sed 's/^/      /'
    fi
}

run_one() { # name, command...: runs it now, in the foreground
    local name=$1; shift
    local log=$logs/$name.log start=$SECONDS rc=0
    mkdir -p "$(dirname "$log")"
    "$@" >"$log" 2>&1 || rc=$?
    report "$name" "$rc" $((SECONDS - start))
}

# reap_one: waits for one background test to end and reports it.
reap_one() {
    local pid rc=0
    wait -n -p pid "${!job_name[@]}" || rc=$?
    report "${job_name[$pid]}" "$rc" $((SECONDS - ${job_start[$pid]}))
    unset "job_name[$pid]" "job_start[$pid]" "job_net[$pid]"
}

start_one() { # name, command...: runs it in the background once fewer than jobs_max run
    local name=$1; shift
    local log=$logs/$name.log
    while [ ${#job_name[@]} -ge "$jobs_max" ]; do reap_one; done
    mkdir -p "$(dirname "$log")"
    "$@" >"$log" 2>&1 &
    last_pid=$!
    job_name[$!]=$name
    job_start[$!]=$SECONDS
}

wait_all() { while [ ${#job_name[@]} -gt 0 ]; do reap_one; done; }

fuzz_one() { # BIN [RUNS]: libFuzzer on a scratch copy of its seed corpus, for RUNS inputs, else FUZZ_SECONDS
    local bin=$1 name corpus budget
    name=$(basename "$bin")
    budget=-max_total_time="${FUZZ_SECONDS:-10}"
    [ -z "${2:-}" ] || budget=-runs=$2
    corpus=$(mktemp -d "$here/build/tmp/$name.XXXXXX")
    [ -d "$here/tests/fuzz/corpus/$name" ] && cp -r "$here/tests/fuzz/corpus/$name/." "$corpus/"
    "$bin" "$budget" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$here/build/test-logs/fuzz/$name-" "$corpus"
    local rc=$?
    rm -rf "$corpus"
    return $rc
}

mkdir -p "$here/build/tmp" "$logs/fuzz"
declare -A fuzz_bin=() fuzz_runs=()
[ -f "$here/tests/fuzz/runs.tsv" ] && while IFS=$'\t' read -r f n; do fuzz_runs[$f]=$n; done < <(grep -v '^#' "$here/tests/fuzz/runs.tsv")
for bin in "$@"; do
    case $bin in
    */fuzzers/*)
        if [ "$mode" = all ]; then fuzz_bin[$(basename "$bin")]=$bin
        else start_one "fuzz/$(basename "$bin")" fuzz_one "$bin"; fi ;;
    *) start_one "unit/$(basename "$bin")" "$bin" ;;
    esac
done

if [ "$mode" = all ]; then
    ijobs=${INTEGRATION_JOBS:-}
    if [ -z "$ijobs" ]; then
        ijobs=$(( $(nproc 2>/dev/null || echo 1) * 2 ))
        [ "$ijobs" -le 4 ] || ijobs=4
    fi
    netns_max=${NETNS_JOBS:-2}
    for v in "$ijobs" "$netns_max"; do
        [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "run-tests.sh: INTEGRATION_JOBS/NETNS_JOBS '$v': expected a whole number >= 1" >&2; exit 2; }
    done
    wait_all
    jobs_max=$ijobs
    declare -A needs=() secs=() job_net=()
    while IFS=$'\t' read -r t tags; do needs[$t]=$tags; done < <(python3 "$here/tests/needs.py" show "$here")
    # The last run's durations, else those of a run on a 2-core machine kept beside the tests (a fresh clone).
    dur=$logs/durations.tsv
    [ -f "$dur" ] || dur=$here/tests/integration/durations.tsv
    [ -f "$dur" ] && while IFS=$'\t' read -r t d; do secs[$t]=$d; done <"$dur"
    queue=()
    # Fuzzers: by the time they took (11 s at two at a time), among the short tests.
    for f in "${!fuzz_bin[@]}"; do queue+=("11 fuzz:$f"); done
    for t in "$here"/tests/integration/*.sh; do
        [ -e "$t" ] || continue
        t=$(basename "$t" .sh)
        if [ -n "${TESTS:-}" ] && ! [[ integration/$t =~ $TESTS ]]; then continue; fi
        lacking=
        for tag in ${TEST_WITHOUT:-}; do [[ " ${needs[$t]} " != *" $tag "* ]] || lacking+=" $tag"; done
        if [ -n "$lacking" ]; then
            skipped=$((skipped + 1)); printf 'SKIP  %-40s needs%s (TEST_WITHOUT)\n' "integration/$t" "$lacking"
            continue
        fi
        # The longest first; a test not timed yet counts as long when it builds namespaces, else as average.
        d=${secs[$t]:-}
        [ -n "$d" ] || { [[ " ${needs[$t]} " == *" netns "* ]] && d=90 || d=30; }
        queue+=("$d $t")
    done
    [ ${#queue[@]} -eq 0 ] || mapfile -t queue < <(printf '%s\n' "${queue[@]}" | sort -k1,1nr -k2 | awk '{print $2}')

    # has TAG: a running test needs TAG. free_net: a 10.x no running test holds and no interface or route uses.
    has() { local p; for p in "${!job_name[@]}"; do [[ " ${needs[${job_name[$p]#integration/}]:-} " != *" $1 "* ]] || return 0; done; return 1; }
    count() { local p n=0; for p in "${!job_name[@]}"; do [[ " ${needs[${job_name[$p]#integration/}]:-} " != *" $1 "* ]] || n=$((n + 1)); done; echo $n; }
    free_net() {
        local o
        for o in $(seq 200 250); do
            [[ " ${job_net[*]} " != *" 10.$o "* ]] || continue
            ip -o -4 addr show 2>/dev/null | awk '{print $4}' | grep -q "^10\.$o\." && continue
            ip -4 route show 2>/dev/null | grep -q "^10\.$o\." && continue
            echo "10.$o"; return 0
        done
        return 1
    }
    can_start() {
        local tags=" ${needs[$1]:-} "
        [ ${#job_name[@]} -lt "$jobs_max" ] || return 1
        [[ $tags != *" deb "* ]] || ! has deb || return 1
        if [[ $tags == *" netns "* ]]; then
            [ "$(count netns)" -lt "$netns_max" ] && ! has host-net
        elif [[ $tags == *" host-net "* ]]; then
            ! has netns
        fi
    }
    while [ ${#queue[@]} -gt 0 ]; do
        started=
        for i in "${!queue[@]}"; do
            t=${queue[$i]}
            can_start "$t" || continue
            if [[ $t == fuzz:* ]]; then
                f=${t#fuzz:}
                start_one "fuzz/$f" fuzz_one "${fuzz_bin[$f]}" "${fuzz_runs[$f]:-}"
            elif [[ " ${needs[$t]:-} " == *" netns "* ]]; then
                net=$(free_net) || { [ ${#job_name[@]} -gt 0 ] && break; echo "run-tests.sh: no free 10.x.0.0/16 between 10.200 and 10.250" >&2; exit 3; }
                start_one "integration/$t" env RB_TEST_CLUSTER_NET="$net" timeout --kill-after=10 "${TEST_TIMEOUT:-600}" bash "$here/tests/integration/$t.sh"
                job_net[$last_pid]=$net
            else
                start_one "integration/$t" timeout --kill-after=10 "${TEST_TIMEOUT:-600}" bash "$here/tests/integration/$t.sh"
            fi
            unset "queue[$i]"; queue=("${queue[@]}")
            started=1
            break
        done
        [ -n "$started" ] || reap_one
    done
fi
wait_all

# Durations for the next run's order: this run's, and the last known of the tests it did not run.
if [ ${#took[@]} -gt 0 ]; then
    [ -f "$logs/durations.tsv" ] && while IFS=$'\t' read -r t d; do [ -n "${took[$t]:-}" ] || took[$t]=$d; done <"$logs/durations.tsv"
    for t in "${!took[@]}"; do printf '%s\t%s\n' "$t" "${took[$t]}"; done | sort >"$logs/durations.tsv.tmp" &&
        mv "$logs/durations.tsv.tmp" "$logs/durations.tsv"
fi
[ $failed -eq 0 ] || printf 'failed: %s\n' "${failures[*]}"
if [ $skipped -gt 0 ]; then
    echo "tests: $passed passed, $failed failed, $skipped skipped (TEST_WITHOUT=${TEST_WITHOUT:-})"
else
    echo "tests: $passed passed, $failed failed"
fi
[ $failed -eq 0 ]
