#!/usr/bin/env bash
# needs: mpi
# load train --checkpoint-every against nginx WebDAV: a synchronous checkpoint every K steps lowers AU by what the
# trainer stalled on it (AU without checkpoints x the stall's share of the trainer's time, within 8 points: the
# writes also contend with the reads), an async one (snapshot, writer thread) stalls less; every checkpoint file is
# written and deleted at the end.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T"
nginx_dav ck
run() { local name=$1; shift
    rb_mpirun 2 "$RB" load train "$DAV_URL/" --prefix data- --objects 64 --sample-size 4KiB -b 2 --compute-time 30ms \
        --epochs 2 "$@" --out "$T/$name" >"$T/$name.out" 2>"$T/$name.err" || { cat "$T/$name.err" >&2; fail "$name"; }; }
au() { jq -r '[.summary.train_epochs[].au_pct] | add / length' "$T/$1/result.json"; }
run pop --populate --epochs 1
run a
run s --checkpoint-every 8 --checkpoint-size 8MiB
run y --checkpoint-every 8 --checkpoint-size 8MiB --checkpoint-async
A=$(au a); S=$(au s); Y=$(au y)
FS=$(jqr "$T/s/result.json" .summary.checkpoint.stall_fraction)
FY=$(jqr "$T/y/result.json" .summary.checkpoint.stall_fraction)
echo "AU: none $A, sync $S (stall share $FS), async $Y (stall share $FY)"
assert_jq "$T/s/result.json" '.summary.checkpoint.checkpoints >= 3 and .summary.checkpoint.failed == 0 and
    .summary.checkpoint.mode == "sync"' "sync: a checkpoint every 8 steps, none failed"
python3 - "$A" "$S" "$FS" <<'PY' || fail "sync: AU drop does not match the stall"
import sys
a, s, f = map(float, sys.argv[1:])
want = a * (1 - f)
print(f"ok: sync AU {s:.1f} %, expected from the stall {want:.1f} % (AU without checkpoints {a:.1f} %)")
sys.exit(0 if abs(s - want) <= 8 and s < a else 1)
PY
assert_jq "$T/y/result.json" '.summary.checkpoint.mode == "async" and .summary.checkpoint.failed == 0' "async ran"
python3 -c "import sys; sys.exit(0 if float('$FY') < float('$FS') else 1)" || fail "async stalled no less than sync"
ok "async stalls less than sync ($FY < $FS of the trainer's time)"
assert_eq "checkpoint files left on the server" 0 "$(find "$DAV_ROOT" -path '*rbckpt-train-*' -type f | wc -l)"
