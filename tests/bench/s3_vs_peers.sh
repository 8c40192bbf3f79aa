#!/usr/bin/env bash
# GETs from Ceph RGW by railbench (SigV4-signed) vs wrk (the same objects made public-read, unsigned: the raw
# HTTP floor) vs a boto3 thread pool (signed; what Python data loaders use), at one object size and
# concurrency, in one run: throughput, p99, client CPU and the ratios.
# Usage: tests/bench/s3_vs_peers.sh [SECONDS]   (BENCH_SIZE_KIB, BENCH_OBJECTS, BENCH_INFLIGHT, BENCH_ROUNDS)
# Each tool runs ROUNDS times, alternating, and keeps its best run (the least disturbed on a shared machine).
# One client thread each (railbench -t 1, wrk -t 1; boto3's threads share one interpreter lock), so
# "per client core" is throughput divided by the CPU seconds the client process used.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
SECS=${1:-${BENCH_SECONDS:-5}}
SIZE_KIB=${BENCH_SIZE_KIB:-1024}
N=${BENCH_OBJECTS:-64}
C=${BENCH_INFLIGHT:-8}
ROUNDS=${BENCH_ROUNDS:-2}
SIZE=$((SIZE_KIB * 1024))
rgw_up
rgw_bucket bench public-read
"$RB" load put s3://bench/peers/ --endpoint "$RGW_ENDPOINT" --keep --objects "$N" --size "$SIZE" -c 8 --out "$T/put" \
    --quiet >/dev/null
[ "$(jq '.summary.ops[0].objects' "$T/put/result.json")" = "$N" ] || fail "could not put $N objects"
# Unsigned reads work only because of the bucket policy; check one before measuring.
[ "$(curl -s -o /dev/null -w '%{size_download}' "$RGW_ENDPOINT/bench/peers/obj-00000000")" = "$SIZE" ] ||
    fail "public-read GET of an object did not return $SIZE bytes"

# cpu_s FILE: user+system seconds from bash's `time` (TIMEFORMAT %U %S) written to FILE.
cpu_s() { awk '{ print $1 + $2 }' "$1"; }
TIMEFORMAT='%U %S'

# Each run prints: bytes_per_s req_per_s p99_ms cpu_s
# rb_run ROUND [URL]: signed s3:// GETs, or with a URL the same objects unsigned through the http:// target
# (the same client against the same unsigned requests as wrk: what is left of the gap is the server's).
rb_run() {
    local d=$T/rb-$1${2:+-http} target=(s3://bench/peers/ --endpoint "$RGW_ENDPOINT")
    [ -z "${2:-}" ] || target=("$2")
    { time "$RB" load get "${target[@]}" --objects "$N" --size "$SIZE" -t 1 \
        -c "$C" --duration "${SECS}s" --out "$d" --quiet >/dev/null 2>&1; } 2>"$d.time"
    jq -r --arg cpu "$(cpu_s "$d.time")" '.summary.ops[0] | if .errors.total > 0 then error("railbench saw errors")
        else "\(.throughput_bytes_per_s) \(.ops_per_s) \(.latency_ns.p99 / 1e6) \($cpu)" end' "$d/result.json"
}

cat >"$T/objs.lua" <<EOF
local i = 0
request = function()
    i = (i + 1) % $N
    return wrk.format("GET", string.format("/bench/peers/obj-%08d", i))
end
done = function(summary, latency, requests)
    io.write(string.format("RESULT %d %d %d %.3f %d\n", summary.requests, summary.bytes, summary.duration,
        latency:percentile(99) / 1000, summary.errors.status + summary.errors.read + summary.errors.connect))
end
EOF
wrk_run() {
    local f=$T/wrk-$1
    { time wrk -t 1 -c "$C" -d "${SECS}s" -s "$T/objs.lua" "$RGW_ENDPOINT" >"$f.out" 2>&1; } 2>"$f.time"
    # bytes counts response headers too; throughput is requests x object size, as for the others.
    awk -v size="$SIZE" -v cpu="$(cpu_s "$f.time")" '/^RESULT/ {
        if ($6 > 0) { print "wrk saw errors" > "/dev/stderr"; exit 1 }
        s = $4 / 1e6; printf "%.0f %.1f %.3f %s\n", $2 * size / s, $2 / s, $5, cpu }' "$f.out"
}

cat >"$T/boto.py" <<'EOF'
import sys, threading, time, boto3, botocore.config
endpoint, n, size, conc, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                  config=botocore.config.Config(s3={"addressing_style": "path"}, max_pool_connections=conc,
                                                retries={"max_attempts": 1}))
lat, errors, lock = [], [0], threading.Lock()
def worker(k):
    mine, i, end = [], k, time.monotonic() + secs
    while time.monotonic() < end:
        t0 = time.monotonic()
        try:
            body = s3.get_object(Bucket="bench", Key="peers/obj-%08d" % (i % n))["Body"].read()
            if len(body) != size:
                raise ValueError("short body")
            mine.append(time.monotonic() - t0)
        except Exception:
            with lock:
                errors[0] += 1
        i += conc
    with lock:
        lat.extend(mine)
start = time.monotonic()
ts = [threading.Thread(target=worker, args=(k,)) for k in range(conc)]
[t.start() for t in ts]
[t.join() for t in ts]
wall = time.monotonic() - start
if errors[0] or not lat:
    sys.exit("boto3 saw %d errors" % errors[0])
lat.sort()
p99 = lat[max(0, -(-99 * len(lat) // 100) - 1)]  # nearest rank, as railbench reports
print("%.0f %.1f %.3f" % (len(lat) * size / wall, len(lat) / wall, p99 * 1000))
EOF
boto_run() {
    local f=$T/boto-$1 r
    { time python3 "$T/boto.py" "$RGW_ENDPOINT" "$N" "$SIZE" "$C" "$SECS" >"$f.out"; } 2>"$f.time"
    r=$(cat "$f.out")
    echo "$r $(cpu_s "$f.time")"
}

# best A B: the line with the higher first field.
best() { if [ -z "$1" ] || awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); exit !(y[1] > x[1]) }'; then echo "$2"; else echo "$1"; fi; }
w='' r='' u='' b=''
for i in $(seq "$ROUNDS"); do
    w=$(best "$w" "$(wrk_run "$i")")
    r=$(best "$r" "$(rb_run "$i")")
    u=$(best "$u" "$(rb_run "$i" "$RGW_ENDPOINT/bench/peers")")
    b=$(best "$b" "$(boto_run "$i")")
done

printf '%-22s %8s %10s %9s %9s %8s %15s\n' client signed "MiB/s" "req/s" "p99 ms" "CPU s" "MiB/s per core"
line() { awk -v n="$1" -v s="$2" -v r="$3" 'BEGIN { split(r, x, " ");
    printf "%-22s %8s %10.1f %9.1f %9.2f %8.2f %15.1f\n", n, s, x[1] / 1048576, x[2], x[3], x[4], x[1] / 1048576 / x[4] }'; }
line "wrk (public-read)" no "$w"
line "railbench" yes "$r"
line "railbench http://" no "$u"
line "boto3 thread pool" yes "$b"
awk -v w="$w" -v r="$r" -v u="$u" -v b="$b" 'BEGIN { split(w, W, " "); split(r, R, " "); split(u, U, " ");
    split(b, B, " ");
    printf "railbench / wrk throughput:            %.3f  (goal >= 0.95)\n", R[1] / W[1];
    printf "railbench http:// / wrk throughput:    %.3f  (both unsigned)\n", U[1] / W[1];
    printf "railbench / wrk p99:                   %.3f\n", R[3] / W[3];
    printf "railbench / boto3 throughput:          %.3f\n", R[1] / B[1];
    printf "railbench / boto3 per client core:     %.3f  (goal >= 3)\n", (R[1] / R[4]) / (B[1] / B[4]) }'
echo "object $SIZE_KIB KiB, $N objects, $C in flight, one client thread each, best of $ROUNDS alternating ${SECS}s runs;" \
    "Ceph RGW $(radosgw --version | awk '{ print $3 }') (memstore OSD) on this host"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
