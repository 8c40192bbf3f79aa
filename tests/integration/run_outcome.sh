#!/usr/bin/env bash
# needs: -
# Every run ends with one line that states its outcome (core/harness.c): completed; completed but a check failed
# (which, and why); interrupted by SIGINT (in which phase, and what was kept: the results, the objects a put wrote);
# the exit status unchanged (0, 1, 1). Against nginx WebDAV.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
unset OMPI_MCA_ess_singleton_isolated # singletons as a user's: with Open MPI's daemon (tests/lib.sh)
chmod 755 "$T"
nginx_dav web
URL=http://127.0.0.1:$DAV_PORT/dav
last() { tail -n 1 "$1"; }

# 1. Completed.
"$RB" load put "$URL/o" --objects 8 --size 4k --keep --out "$T/c1" >/dev/null 2>"$T/c1.err"
assert_eq "c1: last line" "outcome: completed (exit 0)" "$(last "$T/c1.err")"
assert_eq "c1: the line before it" "results: $T/c1" "$(tail -n 2 "$T/c1.err" | head -n 1)"

# 2. A failed check: GETs of names that are not there (404) over --max-error-rate 0; exit 1, the check named.
assert_exit 1 "c2: 404s" "$RB" load get "$URL/none" --objects 4 --count 8 --out "$T/c2"
last "$T/stderr" | grep -Eq '^outcome: completed, but a check failed: error_rate: 8 of 8 requests failed.* \(exit 1\)$' ||
    fail "c2: last line: $(last "$T/stderr")"
ok "c2: $(last "$T/stderr")"
# --quiet: a completed run prints nothing on stderr; a failed one still ends with its outcome.
"$RB" load get "$URL/o" --objects 8 --count 8 --quiet --out "$T/q1" >/dev/null 2>"$T/q1.err"
assert_eq "q1: --quiet, completed: stderr lines" 0 "$(wc -l <"$T/q1.err")"
assert_exit 1 "q2: --quiet, 404s" "$RB" load get "$URL/none" --objects 4 --count 8 --quiet --out "$T/q2"
last "$T/stderr" | grep -Eq '^outcome: completed, but a check failed: error_rate: 8 of 8 requests failed.* \(exit 1\)$' ||
    fail "q2: last line: $(last "$T/stderr")"
ok "q2: --quiet, failed: $(last "$T/stderr")"

# 3. SIGINT in the middle of a put: exit 1; the outcome names the signal, the phase, the results and the objects
#    the put wrote and left (no cleanup after a signal), the same count as result.json.
# interrupt DIR: SIGINT to the run in the background ($!) once it has written an interval to DIR; sets rc.
interrupt() {
    local pid=$! _
    for _ in $(seq 100); do
        [ -s "$1/intervals.jsonl" ] && break
        sleep 0.1
    done
    kill -INT "$pid"
    rc=0
    wait "$pid" || rc=$?
}
"$RB" load put "$URL/i" --objects 200000 --size 4k -c 4 --out "$T/c3" >/dev/null 2>"$T/c3.err" &
interrupt "$T/c3"
assert_eq "c3: exit status" 1 "$rc"
written=$(jqr "$T/c3/result.json" .summary.left_behind.objects)
[ "$written" -gt 0 ] || fail "c3: nothing written before the signal"
last "$T/c3.err" | grep -Eq "^outcome: interrupted by SIGINT during phase \"put\" \([0-9.]+ s in\); kept: the results up to then in $T/c3, and $written to [0-9]+ objects written to http://[^ ]+ under \"rb-[^\"]+-obj-\" \(exit 1\)$" ||
    fail "c3: last line: $(last "$T/c3.err")"
ok "c3: $(last "$T/c3.err")"
# PUTs in flight at the signal are abandoned uncounted, yet nginx may have stored them: objects_max bounds them.
files=$(find "$DAV_ROOT/i" -type f | wc -l)
most=$(jqr "$T/c3/result.json" .summary.left_behind.objects_max)
[ "$files" -ge "$written" ] && [ "$files" -le "$most" ] || fail "c3: $files files left, outside [$written, $most]"
ok "c3: $files files left, in [$written, $most]"
assert_jq "$T/c3/result.json" '[.checks[] | select(.name == "completed")][0].passed == false' "c3: completed check failed"

# 3b. SIGINT in load tiers --fresh (its tier is another path of the same server; the run stops in its put): the
#     outcome names the objects its fresh names left in the backend, as result.json's left_behind counts them.
"$RB" load tiers --backend "$URL/ti" --tier "$URL/tt" --fresh --sizes 4KiB --objects 200000 -c 4 --out "$T/c3t" \
    >/dev/null 2>"$T/c3t.err" &
interrupt "$T/c3t"
assert_eq "c3t: exit status" 1 "$rc"
left=$(jqr "$T/c3t/result.json" .summary.left_behind.objects)
pfx=$(jqr "$T/c3t/result.json" .summary.left_behind.prefix)
last "$T/c3t.err" | grep -Fq "; kept: the results up to then in $T/c3t, and up to $left objects in $URL/ti under \"$pfx\" (exit 1)" ||
    fail "c3t: last line: $(last "$T/c3t.err")"
ok "c3t: $(last "$T/c3t.err")"

# 4. Default result directories: two runs started at once in one directory get two (the second -2).
mkdir -p "$T/cwd"
(cd "$T/cwd" && {
    "$RB" fabric counters --duration 200ms --interval 100ms --quiet >/dev/null &
    "$RB" fabric counters --duration 200ms --interval 100ms --quiet >/dev/null
    wait
})
assert_eq "two runs at once: result.json files" 2 "$(find "$T/cwd/railbench-results" -name result.json | wc -l)"
# Started in the same second they would share a name: the second takes -2 (a busy host can start them a second apart).
mapfile -t dirs < <(ls "$T/cwd/railbench-results")
assert_eq "two runs at once: directories" 2 "${#dirs[@]}"
[ "${dirs[0]%-2}" != "${dirs[1]%-2}" ] || [ "${dirs[1]}" = "${dirs[0]}-2" ] || fail "not two names or no -2: ${dirs[*]}"
ok "two runs at once: $(ls "$T/cwd/railbench-results" | xargs)"

# 5. A run refused at a usage check made after its directory existed (a --filelist that cannot be read) leaves
#    nothing behind: not its directory, not railbench-results, not the parents of an --out.
mkdir -p "$T/cwd2"
(cd "$T/cwd2" && assert_exit 2 "unreadable --filelist" "$RB" load get "$URL/o" --filelist "$T/nofile")
grep -q 'error: .*nofile' "$T/stderr" || fail "no error line naming the file"
assert_eq "refused run: entries left in its working directory" 0 "$(find "$T/cwd2" -mindepth 1 | wc -l)"
assert_exit 2 "refused run with --out a/b/c" "$RB" load get "$URL/o" --filelist "$T/nofile" --out "$T/a/b/c"
[ ! -e "$T/a" ] || fail "the refused run left $(find "$T/a")"
ok "refused run: no $T/a"
