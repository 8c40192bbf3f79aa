#!/usr/bin/env bash
# railbench coll under mpirun -np 2, 3 and 4: every collective x every algorithm x types and ops, #wrong = 0 everywhere.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

# Two processes per core at -np 4: let idle ranks yield instead of spinning against each other.
MPIRUN+=(--mca mpi_yield_when_idle 1)

# Algorithms each collective runs (the rest must be reported as not applicable).
declare -A APPLIES=(
    [allreduce]="mpi ring rd rhd tree hier" [allgather]="mpi ring rd" [reducescatter]="mpi ring rhd"
    [broadcast]="mpi ring rhd tree" [reduce]="mpi ring rhd tree" [alltoall]="mpi ring" [sendrecv]="mpi"
    [gather]="mpi" [scatter]="mpi" [alltoallv]="mpi ring hier"
)
REDUCES="allreduce reducescatter reduce"
ROOTED="broadcast reduce gather scatter"

# check_run NAME NP NTYPES NOPS NSIZES NROOTS: every (collective, algorithm) has its rows, all exact.
check_run() {
    local name=$1 np=$2 ntypes=$3 nops=$4 nsizes=$5 nroots=$6 R=$T/$1/result.json coll algo want
    assert_jq "$R" ".mpi.size == $np" "$name: $np ranks"
    assert_jq "$R" '.summary.wrong_total == 0' "$name: wrong_total 0"
    assert_jq "$R" '[.summary.collective_rows[] | .oop.wrong, .ip.wrong] | all(. == 0)' \
        "$name: every row checked (not null) and exact, both halves"
    assert_jq "$R" '.checks[] | select(.name == "wrong") | .passed' "$name: check 'wrong' passed"
    grep -q '^# Out of bounds values : 0 OK$' "$T/$name.out" || fail "$name: closing line"
    for coll in "${!APPLIES[@]}"; do
        for algo in ${APPLIES[$coll]}; do
            want=$((ntypes * nsizes))
            [[ " $REDUCES " == *" $coll "* ]] && want=$((want * nops))
            [[ " $ROOTED " == *" $coll "* ]] && want=$((want * nroots))
            n=$(jq "[.summary.collective_rows[] | select(.coll == \"$coll\" and .algo == \"$algo\")] | length" "$R")
            [ "$n" = "$want" ] || fail "$name: $coll/$algo has $n rows, want $want"
            grep -q "^# railbench table: $coll, algorithm $algo\$" "$T/$name.out" ||
                fail "$name: no table for $coll/$algo"
        done
    done
    ok "$name: row counts per collective and algorithm"
    # 60 pairs, 28 applicable: the other 32 are listed with a reason, in the table too.
    assert_jq "$R" '.summary.not_applicable | length == 32 and all(.why | length > 10)' "$name: 32 pairs not applicable"
    [ "$(grep -c ': not applicable to ' "$T/$name.out")" = 32 ] || fail "$name: not-applicable lines"
    assert_jq "$R" '.summary.not_applicable | map(select(.coll == "broadcast" and .algo == "rd")) | length == 1' \
        "$name: broadcast/rd reported not applicable"
}

# np 2: every type and every op, three sizes.
rb_mpirun 2 "$RB" coll all --algo all -d all -o all -b 64 -e 6400 -f 10 -n 1 -w 1 -c 1 \
    --out "$T/np2" --quiet >"$T/np2.out"
check_run np2 2 10 5 3 1

# np 3 (not a power of two): counts that do not divide by 3, every root; int types and avg/prod.
rb_mpirun 3 "$RB" coll all --algo all -d int8 -o all -r all -b 5 -e 5000 -f 10 -n 1 -w 0 -c 2 \
    --out "$T/np3a" --quiet >"$T/np3a.out"
check_run np3a 3 1 5 4 3
rb_mpirun 3 "$RB" coll all --algo all -d all -o avg -b 7 -e 7000 -f 10 -n 1 -w 0 -c 1 --chunk 256 \
    --out "$T/np3b" --quiet >"$T/np3b.out"
check_run np3b 3 10 1 4 1

# np 4 as two nodes of two ranks (hier crosses both levels); small pipeline chunks so tree/chain pipeline.
# 48000 B takes hier's bandwidth path (node reduce-scatter, rail Rabenseifner, node allgather), the rest its latency path.
rb_mpirun 4 "$RB" coll all --algo all -d all -o all -r 3 --ranks-per-node 2 -b 48 -e 48000 -f 10 -n 1 -w 0 -c 1 \
    --chunk 1K --out "$T/np4" --quiet >"$T/np4.out"
check_run np4 4 10 5 4 1
assert_jq "$T/np4/result.json" '[.summary.collective_rows[] | select(.coll == "reduce") | .root] | all(. == 3)' \
    "np4: reduce rooted at -r 3"
assert_jq "$T/np4/result.json" '[.summary.collective_rows[] | select(.coll == "allreduce") | .root] | all(. == -1)' \
    "np4: allreduce root -1"

# Beyond the issue's 2, 3, 4: 5, 6 and 7 ranks fold 1, 2 and 3 ranks into the power of two;
# at 6, --ranks-per-node 3 gives hier two nodes of three ranks (and 2 would give three nodes).
rb_mpirun 5 "$RB" coll all --algo all -d int32 -o all -r all -b 40 -e 4000 -f 10 -n 1 -w 0 -c 1 --chunk 128 \
    --out "$T/np5" --quiet >"$T/np5.out"
check_run np5 5 1 5 3 5
rb_mpirun 6 "$RB" coll all --algo all -d all -o sum --ranks-per-node 3 -b 60 -e 6000 -f 10 -n 1 -w 0 -c 1 \
    --out "$T/np6" --quiet >"$T/np6.out"
check_run np6 6 10 1 3 1
rb_mpirun 6 "$RB" coll allreduce --algo hier -d bfloat16 -o all --ranks-per-node 2 -b 60 -e 60000 -f 10 -n 1 -w 0 \
    -c 1 --out "$T/np6h" --quiet >"$T/np6h.out"
assert_jq "$T/np6h/result.json" '.summary.wrong_total == 0 and (.summary.collective_rows | length) == 20' \
    "np6: hier over three nodes of two ranks, bfloat16, every op, exact"
rb_mpirun 7 "$RB" coll all --algo all -d half -o all -b 70 -e 7000 -f 10 -n 1 -w 0 -c 1 --chunk 100 \
    --out "$T/np7" --quiet >"$T/np7.out"
check_run np7 7 1 5 3 1
