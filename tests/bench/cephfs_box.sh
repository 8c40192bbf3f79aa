#!/usr/bin/env bash
# Which path feeds more samples per second to 2 hosts of the cluster in a box: `load train` over CephFS (ceph-fuse
# on each client, over rail 0) or `load get` of the same bytes from Ceph RGW (S3, over the same rail)? One Ceph
# (tests/servers/cephfs.sh: one memstore OSD holds both the file system's data pool and RGW's), the same N samples of
# SIZE bytes in both, 1 rank per host with 4 reads in flight each (train: --read-threads 4, 1 us of compute; get:
# -c 4), every read from the OSD (ceph-fuse without its object cache, --client_oc=false, and the page cache dropped
# before the epoch, --drop-cache host: the bytes each train epoch received on rail0 are printed to show it), alternating in rounds: samples/s of each and the ratio train/get, min/median/max
# (BENCHMARKS.md). Root. Env: RB (default build/railbench), BENCH_ROUNDS (3), BENCH_SAMPLES (512), BENCH_SIZE (256KiB).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
RB=${RB:-$here/build/railbench}
rounds=${BENCH_ROUNDS:-3}
n=${BENCH_SAMPLES:-512}
size=${BENCH_SIZE:-256KiB}
[ "$(id -u)" = 0 ] || { echo "cephfs_box: needs root (network namespaces, FUSE)" >&2; exit 3; }
mkdir -p "$here/build/tmp"
T=$(mktemp -d "$here/build/tmp/cephfs_box.XXXXXX")
chmod 711 "$T" # the Ceph daemons drop to the ceph user
name=rbcb$$
name=${name:0:10}
net=
for o in $(seq 200 250); do
    if ! grep -q "^10\.$o\." <<<"$(ip -o -4 addr show | awk '{print $4}'; ip -4 route show)"; then
        net=10.$o; break
    fi
done
[ -n "$net" ] || { echo "cephfs_box: no free 10.x.0.0/16" >&2; exit 3; }
cl() { "$here/scripts/cluster.sh" --name "$name" "$@"; }
trap 'cl down >/dev/null 2>&1; "$here/tests/servers/cephfs.sh" stop "$T/ceph" >/dev/null 2>&1; rm -rf "$T"' EXIT

cl up --clients 2 --rails 1 --net "$net" >/dev/null
RB_CEPH_ADDR=$(cl cephfs addr) "$here/tests/servers/cephfs.sh" start "$T/ceph" >"$T/ceph.env"
set -a
# shellcheck disable=SC1091
. "$T/ceph.env"
set +a
"$here/tests/servers/rgw.sh" bucket "$T/ceph" bench
mkdir "$CEPHFS_MNT/train"
"$RB" load put "file://$CEPHFS_MNT/train" --objects "$n" --size "$size" --keep -t 2 --quiet --out "$T/put-fs" >/dev/null
"$RB" load put s3://bench --endpoint "$RGW_ENDPOINT" --objects "$n" --size "$size" --keep -c 8 --quiet \
    --out "$T/put-s3" >/dev/null
cl cephfs mount "$CEPHFS_CONF" --client_oc=false >/dev/null
P=$(cl path cephfs)

train() { # ROUND -> samples/s of the epoch
    cl mpirun -np 2 --map-by node "$RB" load train "file://$P/train" --objects "$n" --sample-size "$size" -b 8 \
        --read-threads 4 --compute-time 1us --epochs 1 --drop-cache host --quiet --out "$T/train-$1" >/dev/null 2>"$T/err" ||
        { cat "$T/err" >&2; exit 1; }
    jq -er '.summary.train_epochs[0] | if .errors == 0 then .samples_per_s else error("errors") end' "$T/train-$1/result.json"
}
rail_rx() { # ROUND -> bytes the clients received on rail0 in the train epoch
    jq -er '[.summary.train_epochs[0].net_bytes[] | select(.interface == "rail0") | .rx_bytes] | add' "$T/train-$1/result.json"
}
get() { # ROUND -> objects/s
    cl mpirun -np 2 --map-by node -x AWS_ACCESS_KEY_ID -x AWS_SECRET_ACCESS_KEY "$RB" load get s3://bench \
        --endpoint "$RGW_ENDPOINT" --objects "$n" --size "$size" --pattern epoch --epochs 1 -t 1 -c 4 --quiet \
        --out "$T/get-$1" >/dev/null 2>"$T/err" || { cat "$T/err" >&2; exit 1; }
    jq -er '.summary.ops[0] | if .errors.total == 0 then .ops_per_s else error("errors") end' "$T/get-$1/result.json"
}

printf '%-6s %-6s %16s %16s %7s %18s\n' round first "train samples/s" "get samples/s" ratio "train rail0 rx MB"
ratios=()
for r in $(seq "$rounds"); do
    if [ $((r % 2)) = 1 ]; then first=train; a=$(train "$r"); b=$(get "$r"); else first=get; b=$(get "$r"); a=$(train "$r"); fi
    ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')
    ratios+=("$ratio")
    printf '%-6s %-6s %16.1f %16.1f %7s %18.1f\n' "$r" "$first" "$a" "$b" "$ratio" "$(rail_rx "$r" | awk '{ print $1 / 1e6 }')"
done
echo "cephfs_box: 2 hosts x 1 rank, $n samples of $size, $rounds rounds; ratio train over CephFS / get via RGW (samples/s):"
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 }
    END { printf "train/get min %.3f  median %.3f  max %.3f\n", v[1], (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[NR] }'
