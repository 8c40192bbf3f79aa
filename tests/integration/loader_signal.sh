#!/usr/bin/env bash
# needs: -
# A signal under mpirun ends load get, load checkpoint and load train on every rank together, and rank 0 writes result.json,
# table.md and the outcome line (SIGTERM to mpirun, SIGINT to its process group as a terminal's Ctrl-C; 2 and 4
# ranks); a rank killed (kill -9) or stopped (SIGSTOP) is named in the record and the run ends with exit 3.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
# mpirun sends the ranks SIGTERM, then SIGKILL, each odls_base_sigkill_timeout after the last (1 s by default); the
# outcome line comes at the run's very end, and on this machine with three other tests beside it one second was seen
# to be too short for it. docs/many-hosts.md tells a loaded host's users to raise it; so does this test.
export OMPI_MCA_odls_base_sigkill_timeout=2

D=$T/data
mkdir -p "$D" "$T/ck"
"$RB" load put "file://$D" --objects 64 --size 64K --keep --quiet --out "$T/put" >/dev/null
assert_eq "objects put" 64 "$(find "$D" -type f | wc -l)"

# signal_run NP HOW DIR ARGS...: starts the run, signals it (HOW) once its first interval is written, waits (bounded).
signal_run() {
    local np=$1 how=$2 dir=$3
    shift 3
    mpirun_running "$np" "$dir" "$RB" "$@" --out "$dir"
    sleep 1
    signal_mpirun "$how"
}

# What every interrupted run leaves: the record, table.md, the outcome line, mpirun's exit 1.
check_interrupted() { # DIR WHAT
    [ -f "$1/result.json" ] || { cat "$T/run.err" >&2; fail "$2: no result.json (mpirun exit $WAIT_RC)"; }
    [ -s "$1/table.md" ] || fail "$2: no table.md"
    assert_jq "$1/result.json" '.checks[] | select(.name == "completed") | .passed == false' "$2: interrupted recorded"
    # The signal may fall in a phase (the last, marked) or between two (none marked: nothing was cut short).
    assert_jq "$1/result.json" '([.phases[:-1][] | select(.interrupted)] | length) == 0
        and (.phases[-1].interrupted == true or ([.checks[] | select(.name == "completed")][0].passed == false))' \
        "$2: only the last phase may be marked cut short"
    grep -Eq '^outcome: interrupted by SIG(INT|TERM) (during|after) phase .*\(exit 1\)$' "$T/run.err" ||
        { cat "$T/run.err" >&2; fail "$2: no outcome line"; }
    assert_eq "$2: mpirun's exit status" 1 "$WAIT_RC"
    [ "$TOOK" -lt 7000 ] || fail "$2: ended ${TOOK} ms after the signal" # SIGKILL is due 4 s after it
    ok "$2: ended ${TOOK} ms after the signal: $(grep '^outcome:' "$T/run.err")"
}

# At 2 ranks load get runs closed loop, as fast as the ranks can read; at 4 (two to a core here) and in the runs
# after these, at an open-loop --rate that leaves the cores to the tests beside this one: the signal's path is the same.
for np in 2 4; do
    rate=()
    [ "$np" = 2 ] || rate=(--rate 4000/s)
    for how in term-mpirun int-group; do
        g=$T/get-$how-$np
        signal_run "$np" "$how" "$g" load get "file://$D" --objects 64 --duration 60s "${rate[@]}"
        check_interrupted "$g" "load get, $how, $np ranks"
        # The phase's count is what the intervals counted: nothing measured is lost.
        assert_eq "load get, $how, $np ranks: requests in result.json = the intervals' sum" \
            "$(jq -s 'map(.count) | add' "$g/intervals.jsonl")" "$(jq '.phases[0].count' "$g/result.json")"

        c=$T/ck-$how-$np
        rm -rf "${T:?}/ck" && mkdir "$T/ck"
        signal_run "$np" "$how" "$c" load checkpoint "file://$T/ck" --model llama3-8b --scale 1/500 --writes 10 --reads 10
        check_interrupted "$c" "load checkpoint, $how, $np ranks"
        assert_jq "$c/result.json" '[.phases[] | select(.interrupted | not) | .name] | all(test("^(write|read)-[0-9]+$"))' \
            "load checkpoint, $how, $np ranks: the checkpoints before the signal kept whole"

        tr=$T/train-$how-$np
        signal_run "$np" "$how" "$tr" load train "file://$D" --objects 64 --sample-size 64K -b 2 --compute-time 20ms \
            --epochs 1000
        check_interrupted "$tr" "load train, $how, $np ranks"
        # The epochs before the signal are whole and make the AU mean; one the signal cut short (unless it fell between
        # two epochs) is shown, marked, and left out.
        assert_jq "$tr/result.json" '.summary.train_epochs as $e | [$e[] | select(.complete)] as $c | ($c | length) >= 1
            and ([$e[:-1][] | select(.complete | not)] | length) == 0
            and ($e | last | .complete or .interrupted == true)
            and ((([$c[] | .au_pct] | add) / ($c | length) - .summary.au_mean_pct) | fabs) < 1e-6' \
            "load train, $how, $np ranks: only the last epoch may be cut, and the AU mean is over the whole ones"
        if jq -e '.summary.train_epochs | last | .complete | not' "$tr/result.json" >/dev/null; then
            grep -Eq '^\| [0-9]+ \| [a-z]+.*\(interrupted\)' "$tr/table.md" ||
                fail "load train, $how, $np ranks: the cut epoch not marked in table.md: $(cat "$tr/table.md")"
        fi
    done
done
rm -rf "${T:?}/ck"

# A rank stopped (SIGSTOP) during a 6 s load get: the others wait for its tick 10 s, then rank 0 names it and ends
# the run (exit 3) instead of reporting "completed" 50 s later.
mpirun_running 2 "$T/stop" "$RB" load get "file://$D" --objects 64 --duration 6s --rate 2000/s --out "$T/stop"
stop_rank 1 40
R1=$R_PID took=$TOOK
assert_eq "mpirun's exit status with a stopped rank" 3 "$WAIT_RC"
[ "$took" -le $((6 + 10 + 4)) ] || fail "a stopped rank held the run ${took}s (6 s run, 10 s rank timeout)"
assert_jq "$T/stop/result.json" ".lost_ranks == [{\"rank\": 1, \"pid\": $R1, \"host\": \"$(hostname)\", \"state\": \"stopped\"}]" \
    "the stopped rank named: rank 1, pid $R1, stopped"
assert_jq "$T/stop/result.json" '.exit_status == 3 and (.checks[] | select(.name == "completed") | .passed == false)' \
    "not completed, exit 3"
assert_jq "$T/stop/result.json" '.phases[0].name == "get" and .phases[0].cut_short and .phases[0].count > 0' \
    "the phase kept as far as its ticks went"
grep -q "^outcome: failed: rank 1 (pid $R1 on .*, stopped) did not answer for 1[0-9]\.[0-9] s.*(exit 3)$" "$T/run.err" ||
    { cat "$T/run.err" >&2; fail "no outcome line naming rank 1"; }
ok "stopped rank: ended ${took}s after SIGSTOP: $(grep '^outcome:' "$T/run.err")"

# A rank killed (kill -9): mpirun sends the others SIGTERM 2 s later; rank 0 names the dead rank within the 2 s
# before SIGKILL (mpirun exits 137, the killed rank's status; the record says 3).
# Which of rank 0's two watches names it depends on where the SIGTERM finds rank 0: between ticks, the tick
# watch ("did not answer"); inside an MPI call, the record watchdog ("did not take part").
mpirun_running 2 "$T/k9" "$RB" load get "file://$D" --objects 64 --duration 60s --rate 2000/s --out "$T/k9"
R1=$(rank_pid "$MP" 1)
[ -n "$R1" ] || fail "no rank 1 under mpirun $MP"
kill -9 "$R1"
wait_bounded "$MP" 30
assert_eq "mpirun's exit status after kill -9 of a rank" 137 "$WAIT_RC"
assert_jq "$T/k9/result.json" ".lost_ranks == [{\"rank\": 1, \"pid\": $R1, \"host\": \"$(hostname)\", \"state\": \"gone\"}] and .exit_status == 3" \
    "the dead rank named: rank 1, pid $R1, gone; exit 3 recorded"
assert_jq "$T/k9/result.json" '.phases[0].count > 0' "what was measured kept"
grep -Eq "^outcome: interrupted by SIGTERM .*rank 1 \(pid $R1 on .*, gone\) did not (answer|take part).*\(exit 3\)$" "$T/run.err" ||
    { cat "$T/run.err" >&2; fail "no outcome line naming rank 1"; }
ok "$(grep '^outcome:' "$T/run.err")"

# A checkpoint rank killed (kill -9) mid-write: the record names it, and what the ranks wrote stays (nobody can
# agree on a cleanup), named in result.json and in the outcome with the commands that remove it.
rm -rf "${T:?}/ck" && mkdir "$T/ck"
mpirun_running 2 "$T/ck9" "$RB" load checkpoint "file://$T/ck" --model llama3-8b --scale 1/500 --writes 50 --reads 0 \
    --out "$T/ck9"
sleep 1
R1=$(rank_pid "$MP" 1)
[ -n "$R1" ] || fail "no rank 1 under mpirun $MP"
kill -9 "$R1"
wait_bounded "$MP" 30
F=$(cd "$T/ck" && ls)
assert_jq "$T/ck9/result.json" ".lost_ranks[0].rank == 1 and .exit_status == 3 and .left_behind == {\"folder\": \"file://$T/ck/$F/\", \"removed\": false}" \
    "checkpoint, rank 1 killed: the rank and the folder left named"
grep -Eq "^outcome: .*rank 1 \(pid $R1 on .*, gone\) did not (answer|take part).*and what the ranks wrote under file://$T/ck/$F/ .*railbench load delete file://$T/ck --prefix $F/ removes the files, then rm -r $T/ck/$F for its directories\) \(exit 3\)$" \
    "$T/run.err" || { cat "$T/run.err" >&2; fail "checkpoint, rank 1 killed: the outcome does not name what is left"; }
[ "$(find "$T/ck" -type f | wc -l)" -gt 0 ] || fail "checkpoint, rank 1 killed: no file written before the kill"
"$RB" load delete "file://$T/ck" --prefix "$F/" --quiet --out "$T/ck9-delete" >/dev/null 2>&1 ||
    fail "the outcome's load delete failed"
rm -r "${T:?}/ck/$F"
assert_eq "checkpoint, rank 1 killed: left after the outcome's two commands" 0 "$(find "$T/ck" -mindepth 1 | wc -l)"
ok "checkpoint, rank 1 killed: $(grep '^outcome:' "$T/run.err" | cut -c1-160)..."
