#!/usr/bin/env bash
# Runs unit test binaries and (with "all") every tests/integration/*.sh; ends with "tests: N passed, M failed".
# Usage: run-tests.sh unit|fuzz|all BIN...   Filter integration tests with TESTS=regex.
# Fuzzers (build/fuzz/fuzzers/*) run FUZZ_SECONDS each from a copy of tests/fuzz/corpus/<name>.
set -u
mode=$1; shift
here=$(cd "$(dirname "$0")/.." && pwd)
logs=$here/build/test-logs
mkdir -p "$logs"
passed=0; failed=0; failures=()

run_one() { # name, command...
    local name=$1; shift
    local log=$logs/$name.log start=$SECONDS
    mkdir -p "$(dirname "$log")"
    if "$@" >"$log" 2>&1; then
        passed=$((passed + 1)); printf 'PASS  %-40s %4ss\n' "$name" $((SECONDS - start))
    else
        failed=$((failed + 1)); failures+=("$name")
        printf 'FAIL  %-40s %4ss  (log: %s)\n' "$name" $((SECONDS - start)) "${log#$here/}"
        tail -n 25 "$log" | sed 's/^/      /'
    fi
}

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
    */fuzzers/*) run_one "fuzz/$(basename "$bin")" fuzz_one "$bin" ;;
    *) run_one "unit/$(basename "$bin")" "$bin" ;;
    esac
done

if [ "$mode" = all ]; then
    for t in "$here"/tests/integration/*.sh; do
        [ -e "$t" ] || continue
        name=integration/$(basename "$t" .sh)
        if [ -n "${TESTS:-}" ] && ! [[ $name =~ $TESTS ]]; then continue; fi
        run_one "$name" timeout --kill-after=10 "${TEST_TIMEOUT:-600}" bash "$t"
    done
fi

[ $failed -eq 0 ] || printf 'failed: %s\n' "${failures[*]}"
echo "tests: $passed passed, $failed failed"
[ $failed -eq 0 ]
