#!/usr/bin/env bash
# Runs unit test binaries, fuzzers and (with "all") every tests/integration/*.sh; ends with "tests: N passed, M failed".
# Usage: run-tests.sh unit|fuzz|all BIN...   Filter integration tests with TESTS=regex.
# Fuzzers (build/fuzz/fuzzers/*) run FUZZ_SECONDS each from a copy of tests/fuzz/corpus/<name>.
# Fuzzers and integration tests run TEST_JOBS at a time (default: the number of cores, at most 2; each test
# has its own temp dir and free ports); tests/integration/cluster_*.sh run alone, after the others (they build
# network namespaces on a /16 they find free, and two at once could pick the same one), and so does container_*.sh.
set -u
mode=$1; shift
here=$(cd "$(dirname "$0")/.." && pwd)
logs=$here/build/test-logs
mkdir -p "$logs"
passed=0; failed=0; failures=()
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
    unset "job_name[$pid]" "job_start[$pid]"
}

start_one() { # name, command...: runs it in the background once fewer than jobs_max run
    local name=$1; shift
    local log=$logs/$name.log
    while [ ${#job_name[@]} -ge "$jobs_max" ]; do reap_one; done
    mkdir -p "$(dirname "$log")"
    "$@" >"$log" 2>&1 &
    job_name[$!]=$name
    job_start[$!]=$SECONDS
}

wait_all() { while [ ${#job_name[@]} -gt 0 ]; do reap_one; done; }

fuzz_one() { # BIN: libFuzzer for FUZZ_SECONDS on a scratch copy of its seed corpus
    local bin=$1 name corpus
    name=$(basename "$bin")
    corpus=$(mktemp -d "$here/build/tmp/$name.XXXXXX")
    [ -d "$here/tests/fuzz/corpus/$name" ] && cp -r "$here/tests/fuzz/corpus/$name/." "$corpus/"
    "$bin" -max_total_time="${FUZZ_SECONDS:-10}" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$here/build/test-logs/fuzz/$name-" "$corpus"
    local rc=$?
    rm -rf "$corpus"
    return $rc
}

mkdir -p "$here/build/tmp" "$logs/fuzz"
for bin in "$@"; do
    case $bin in
    */fuzzers/*) start_one "fuzz/$(basename "$bin")" fuzz_one "$bin" ;;
    *) run_one "unit/$(basename "$bin")" "$bin" ;;
    esac
done

if [ "$mode" = all ]; then
    alone=()
    for t in "$here"/tests/integration/*.sh; do
        [ -e "$t" ] || continue
        name=integration/$(basename "$t" .sh)
        if [ -n "${TESTS:-}" ] && ! [[ $name =~ $TESTS ]]; then continue; fi
        case $name in
        # container_image.sh's podman network carries traffic on the host's interfaces, which tests that read
        # the host's counters (train_mpi.sh: "no interface but lo") would see: it runs alone too.
        integration/cluster_* | integration/container_*) alone+=("$t") ;;
        *) start_one "$name" timeout --kill-after=10 "${TEST_TIMEOUT:-600}" bash "$t" ;;
        esac
    done
    wait_all
    for t in "${alone[@]}"; do
        run_one "integration/$(basename "$t" .sh)" timeout --kill-after=10 "${TEST_TIMEOUT:-600}" bash "$t"
    done
fi
wait_all

[ $failed -eq 0 ] || printf 'failed: %s\n' "${failures[*]}"
echo "tests: $passed passed, $failed failed"
[ $failed -eq 0 ]
