#!/usr/bin/env bash
# needs: mpi
# railbench coll rejects bad input with one line naming the option, the value and the accepted form, exit 2.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

# bad WHAT PATTERN ARGS...: singleton run exits 2 with one matching stderr line and makes no result directory.
bad() {
    local what=$1 pattern=$2; shift 2
    assert_exit 2 "$what" "$RB" coll "$@" --out "$T/never"
    assert_stderr_line "$pattern"
    [ ! -e "$T/never" ] || fail "$what: a result directory was created"
}

bad "-b larger than -e" '^railbench: error: --minbytes: 1 MiB is larger than --maxbytes 4 KiB \(use -b <= -e\)$' \
    allreduce -b 1M -e 4K
bad "unknown type" '^railbench: error: --datatype: "float8" is not one of int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16, float16, float32, float64, all$' \
    allreduce -d float8
bad "root out of range" '^railbench: error: --root: 1 is out of range for 1 ranks \(use 0 to 0, or all\)$' broadcast -r 1
bad "root not a number" '^railbench: error: --root: "first" is not a rank \(use 0 to the number of ranks - 1, or all\)$' \
    reduce -r first
bad "unknown op" '^railbench: error: --op: "mean" is not one of sum, prod, max, min, avg, all$' allreduce -o mean
bad "unknown collective" '^railbench: error: unknown collective "allreduce2" for "railbench coll"; did you mean "allreduce"\? \(use allreduce, .*, all, latency, bw, bibw, mbw_mr, moe; see railbench coll --help\)$' allreduce2
bad "unknown algorithm" '^railbench: error: --algo: "nccl" is not an algorithm \(use mpi, ring, rd, rhd, tree, hier or all' \
    allreduce --algo ring,nccl
bad "no iterations" '^railbench: error: --iters: 0 is out of range \(use 1 or more' allreduce -n 0
bad "factor 0" '^railbench: error: --stepfactor: 0 is not a factor' allreduce -f 0
bad "-a 4" '^railbench: error: --average: "4" is not one of 0, 1, 2, 3$' allreduce -a 4
bad "size too large for MPI" '^railbench: error: --maxbytes: 4 GiB is too large \(at most 2147483647 bytes' allreduce -e 4G
bad "bad size" '^railbench: error: --minbytes: "8Q" is not a size' allreduce -b 8Q
bad "missing collective" '^railbench: error: coll: missing argument' -b 8
bad "-J into a missing directory" '^railbench: error: --output_json: cannot create ".*/nodir/x.json": No such file or directory' \
    allreduce -b 8 -e 8 -J "$T/nodir/x.json"

# Under mpirun the range check knows the job size; only rank 0 says so, every rank exits 2.
rc=0
rb_mpirun 3 "$RB" coll reduce -r 3 -b 8 -e 8 --out "$T/never" >"$T/mpi.out" 2>"$T/mpi.err" || rc=$?
assert_eq "mpirun -np 3 -r 3: exit" 2 "$rc"
[ "$(grep -c '^railbench' "$T/mpi.err")" = 1 ] || { cat "$T/mpi.err"; fail "expected one railbench line"; }
grep -q '^railbench: error: --root: 3 is out of range for 3 ranks (use 0 to 2, or all)$' "$T/mpi.err" || fail "message"
ok "mpirun -np 3 -r 3: one line"
[ ! -e "$T/never" ] || fail "a result directory was created"

# -r all is accepted and loops over every root.
rb_mpirun 3 "$RB" coll broadcast -r all -b 8 -e 8 -n 1 -w 0 --out "$T/all" --quiet >/dev/null
assert_jq "$T/all/result.json" '[.summary.collective_rows[].root] == [0, 1, 2]' "-r all: roots 0, 1, 2"
