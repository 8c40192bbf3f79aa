#!/usr/bin/env bash
# needs: mpi root
# Request phases (--phases) and the slowest requests named (--slowest): a delay injected at one phase of chosen
# requests shows in that phase alone, the phases' means sum to the latency's mean, and the slowest listed are the
# requests delayed on purpose. Servers: tests/servers/phases.py (a slow first byte or body by object name, a slow
# accept, a slow TLS handshake), and a body throttled by tc tbf in a network namespace made here.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
PY=/usr/bin/python3
SRV=$ROOT/tests/servers/phases.py
DELAY_MS=300
DELAY_NS=$((DELAY_MS * 1000000))
BOUND_NS=150000000 # what a phase no delay went into stays below (a loaded 2-core host included)
# A span ends when the client reads the byte, which may be a little after the server sent it: a delay between two
# sends shows as at least 98 % of itself (the span before it took the rest).
min_of() { echo $(($1 * 98 / 100)); }

# phase_p RESULT OP_INDEX SPAN FIELD: one figure of a span's summary (ns).
phase_p() { jq -r ".summary.ops[$2].request_phases.spans.$3.$4" "$1/result.json"; }

# assert_alone RESULT SPAN [FIELD]: SPAN's FIELD (p99 unless given) is at least the delay, every other span's p99
# below the bound.
assert_alone() {
    local res=$1 span=$2 field=${3:-p99} s v
    v=$(phase_p "$res" 0 "$span" "$field")
    [ "$v" -ge "$(min_of "$DELAY_NS")" ] || fail "$res: $span $field $v ns, below the injected $DELAY_NS ns"
    for s in $(jq -r '.summary.ops[0].request_phases.spans | keys[]' "$res/result.json"); do
        [ "$s" != "$span" ] || continue
        v=$(phase_p "$res" 0 "$s" p99)
        [ "$v" -lt "$BOUND_NS" ] || fail "$res: $s p99 $v ns: the delay injected at $span leaked into it"
    done
    ok "$(basename "$res"): the delay is in $span alone ($field $(phase_p "$res" 0 "$span" "$field") ns)"
}

# assert_sum RESULT: the spans' means sum to their requests' mean latency (exact up to the means' rounding), and
# those requests are every successful one (their latency mean is the run's).
assert_sum() {
    jq -e '.summary.ops[0] as $o | $o.request_phases as $p
        | ([$p.spans[].mean] | add) as $s
        | ($s - $p.total_ns.mean | fabs) < 1 and ($p.total_ns.mean - $o.latency_ns.mean | fabs) < 1
          and $p.requests == $o.requests - $o.errors.total' "$1/result.json" >/dev/null ||
        fail "$1: the spans' means do not sum to the latency's mean: $(jq -c '.summary.ops[0] |
            [([.request_phases.spans[].mean] | add), .request_phases.total_ns.mean, .latency_ns.mean]' "$1/result.json")"
    ok "$(basename "$1"): sum of the span means = mean latency ($(jq '.summary.ops[0].latency_ns.mean' "$1/result.json") ns)"
}

# 1. A slow first byte and a slow body, chosen by name; 40 objects, each read once, on each engine and loop.
PORT=$(free_port)
bg "$PY" "$SRV" --port "$PORT" --size 65536 --delay-ms "$DELAY_MS"
wait_port "$PORT" 30 "tests/servers/phases.py"
for i in $(seq 0 39); do
    case $i in
    7 | 21) echo "d/slowfb-$i" ;;
    12 | 33) echo "d/slowbody-$i" ;;
    *) echo "d/obj-$i" ;;
    esac
done >"$T/list"
# native: its io_uring loop where the kernel allows it (auto), epoll: the native engine's epoll loop, curl: libcurl.
for e in native epoll curl; do
    args=(--engine "$e")
    [ "$e" != epoll ] || args=(--engine native --io-loop epoll)
    "$RB" load get "http://127.0.0.1:$PORT/" --filelist "$T/list" --pattern epoch --epochs 1 -c 4 "${args[@]}" \
        --phases --slowest 4 --out "$T/named-$e" >"$T/named-$e.out" 2>"$T/named-$e.err" ||
        { cat "$T/named-$e.err"; fail "$e: the run failed"; }
    assert_eq "$e: requests" 40 "$(jq '.summary.ops[0].requests' "$T/named-$e/result.json")"
    assert_sum "$T/named-$e"
    # The four slowest are the four delayed, each delayed in its own phase and not in the other.
    assert_eq "$e: slowest named" "d/slowbody-12 d/slowbody-33 d/slowfb-21 d/slowfb-7" \
        "$(jq -r '[.summary.ops[0].slowest[].object] | sort | join(" ")' "$T/named-$e/result.json")"
    jq -e --argjson d "$(min_of "$DELAY_NS")" --argjson b "$BOUND_NS" 'all(.summary.ops[0].slowest[];
        (.object | test("slowfb")) as $fb | .phases_ns as $p | .latency_ns >= $d
        and ([$p[]] | add) == .latency_ns
        and (if $fb then $p.first_byte >= $d and $p.body < $b else $p.body >= $d and $p.first_byte < $b end)
        and $p.connect < $b and $p.send < $b and $p.queue < $b)' "$T/named-$e/result.json" >/dev/null ||
        fail "$e: a slowest request's phases do not show its delay where it was injected: $(jq -c \
            '.summary.ops[0].slowest' "$T/named-$e/result.json")"
    jq -e '.summary.ops[0].slowest | map(.latency_ns) | . == (sort | reverse)' "$T/named-$e/result.json" >/dev/null ||
        fail "$e: the slowest are not listed slowest first"
    jq -e '.summary.ops[0].slowest[0].id | test("^r0-c[0-3]-[0-9]+$")' "$T/named-$e/result.json" >/dev/null ||
        fail "$e: the request id is not r<rank>-c<connection>-<seq>"
    # The table names them too, and has the phases' rows.
    grep -q '^| first_byte |' "$T/named-$e.out" || fail "$e: no first_byte row in the table"
    grep -q "^| r0-c[0-9]*-[0-9]* | GET | d/slowfb-7 |" "$T/named-$e.out" || fail "$e: d/slowfb-7 not in the slowest table"
    # p99 (nearest rank of 40: the slowest) of first_byte and body hold the delay; connect, tls, send, queue do not.
    for s in queue connect tls send; do
        v=$(phase_p "$T/named-$e" 0 "$s" p99)
        [ "$v" -lt "$BOUND_NS" ] || fail "$e: $s p99 $v ns"
    done
    for s in first_byte body; do
        v=$(phase_p "$T/named-$e" 0 "$s" p99)
        [ "$v" -ge "$(min_of "$DELAY_NS")" ] || fail "$e: $s p99 $v ns, below the injected delay"
    done
    ok "$e: slow first bytes and bodies in their own phases, the four slowest named"
done
# railbench report lists them from the result.
"$RB" report "$T/named-native" >"$T/report.out" 2>"$T/report.err" || { cat "$T/report.err"; fail "report"; }
grep -q 'd/slowbody-33' "$T/report.out" || { cat "$T/report.out"; fail "report: the slowest not listed"; }
grep -q "first_byte p99" "$T/report.out" || fail "report: no phase columns"
"$RB" report "$T/named-native" --html "$T/report.html" >/dev/null 2>&1 || fail "report --html"
grep -q 'data-plot="latency-phases"' "$T/report.html" || fail "report --html: no latency breakdown by percentile"
for s in first_byte body 'get p99 ('; do
    grep -q ">$s" "$T/report.html" || fail "report --html: the breakdown does not show \"$s\""
done
# --phases: those two tables alone; a run that recorded neither has none to show (exit 2, one line).
"$RB" report "$T/named-native" --phases >"$T/report-ph.out" 2>&1 || { cat "$T/report-ph.out"; fail "report --phases"; }
assert_eq "report --phases: its tables" "Request phases Slowest requests" "$(grep '^## ' "$T/report-ph.out" | grep -v '^## Runs' |
    sed 's/^## \(Request phases\|Slowest requests\).*/\1/' | tr '\n' ' ' | sed 's/ $//')"
"$RB" load get "http://127.0.0.1:$PORT/" --filelist "$T/list" --count 5 --slowest 0 --out "$T/none" >/dev/null 2>&1 ||
    fail "the run with --slowest 0 failed"
assert_eq "--slowest 0: no slowest" false "$(jq '.summary.ops[0] | has("slowest")' "$T/none/result.json")"
assert_exit 2 "report --phases of a run without either" "$RB" report "$T/none" --phases
assert_stderr_line 'error: --phases: no run here recorded request phases or slowest requests'
ok "railbench report lists the phases and the slowest; its HTML has the breakdown by percentile"

# The metrics: each span's histogram {op, phase, step} (classic buckets here); promtool accepts the exposition. The two
# slow first bytes are above every bucket below the delay; the 38 others below 134 ms.
mkdir "$T/prom"
"$RB" load get "http://127.0.0.1:$PORT/" --filelist "$T/list" --pattern epoch --epochs 1 -c 4 --phases \
    --prom-textfile "$T/prom" --out "$T/metrics" >/dev/null 2>&1 || fail "the run with --prom-textfile failed"
P=$T/prom/railbench.prom
grep -q '^# TYPE railbench_request_step_seconds histogram$' "$P" || fail "metrics: no histogram family railbench_request_step_seconds"
fb='railbench_request_step_seconds_bucket\{op="GET",phase="get",step="first_byte"'
assert_eq "metrics: first_byte requests (+Inf bucket)" 40 "$(awk -v re="^$fb,le=\"\\+Inf\"" '$0 ~ re { print $2 }' "$P")"
assert_eq "metrics: first_byte below 134 ms" 38 "$(awk -v re="^$fb,le=\"0.134217728\"" '$0 ~ re { print $2 }' "$P")"
v=$(awk -v re="^$fb,le=\"" -v d="$(min_of "$DELAY_NS")" '$0 ~ re { split($0, a, "le=\""); split(a[2], b, "\"");
    if (b[1] != "+Inf" && b[1] * 1e9 < d && $2 > m) m = $2 } END { print m + 0 }' "$P")
assert_eq "metrics: first_byte in the buckets below the delay" 38 "$v"
s=$(awk '/^railbench_request_step_seconds_sum\{op="GET",phase="get",step="first_byte"/ { print $2 }' "$P")
jq -en --argjson s "${s:-null}" --argjson d "$(min_of "$DELAY_NS")" '$s * 1e9 >= 2 * $d' >/dev/null ||
    fail "metrics: first_byte's sum ${s:-absent} s holds not both delays"
assert_eq "metrics: steps" "body connect first_byte queue send tls" "$(grep -o 'step="[a-z_]*"' "$P" |
    sort -u | sed 's/step="\(.*\)"/\1/' | tr '\n' ' ' | sed 's/ $//')"
if command -v promtool >/dev/null; then
    promtool check metrics <"$P" || fail "promtool rejects the metrics"
fi
ok "metrics: railbench_request_step_seconds histograms, first_byte's sum $s s"

# Without --phases: no spans, no clock read more; --slowest still names them (their phases null).
"$RB" load get "http://127.0.0.1:$PORT/" --filelist "$T/list" --pattern epoch --epochs 1 -c 4 --engine native \
    --out "$T/off" >/dev/null 2>&1 || fail "the run without --phases failed"
assert_eq "no request_phases without --phases" false "$(jq '.summary.ops[0] | has("request_phases")' "$T/off/result.json")"
assert_eq "default --slowest 10" 10 "$(jq '.summary.ops[0].slowest | length' "$T/off/result.json")"
assert_eq "phases null without --phases" null "$(jq '.summary.ops[0].slowest[0].phases_ns' "$T/off/result.json")"
assert_exit 2 "--slowest past its most" "$RB" load get "http://127.0.0.1:$PORT/" --objects 1 --slowest 100000 --out "$T/bad"
assert_stderr_line 'error: --slowest 100000: expected 0 to 1000'

# Open loop: 10 requests due 50 ms apart on one connection, each answered 300 ms late: each waits for the one
# before it, from its intended send to its start: queue (up to 9 x 250 ms), apart from its own slow first byte. The
# rate falls short of its target on purpose: the run says so (exit 1, check rate).
for i in $(seq 0 9); do echo "d/slowfb-q$i"; done >"$T/qlist"
rc=0
"$RB" load get "http://127.0.0.1:$PORT/" --filelist "$T/qlist" --pattern epoch --epochs 1 -c 1 --rate 20/s --phases \
    --out "$T/queue" >/dev/null 2>"$T/queue.err" || rc=$?
[ "$rc" = 1 ] && grep -q 'open loop achieved' "$T/queue.err" || { cat "$T/queue.err"; fail "open loop: exit $rc"; }
assert_eq "open loop: requests" 10 "$(jq '.summary.ops[0].request_phases.requests' "$T/queue/result.json")"
assert_sum "$T/queue"
v=$(phase_p "$T/queue" 0 queue p99)
[ "$v" -ge 1500000000 ] || fail "open loop: queue p99 $v ns, expected the waits for the slot (up to 2.25 s)"
[ "$(phase_p "$T/queue" 0 queue min)" -lt "$BOUND_NS" ] || fail "open loop: the first request waited for a slot"
v=$(phase_p "$T/queue" 0 first_byte min)
[ "$v" -ge "$(min_of "$DELAY_NS")" ] || fail "open loop: first_byte min $v ns"
for s in connect send body; do
    [ "$(phase_p "$T/queue" 0 "$s" p99)" -lt "$BOUND_NS" ] || fail "open loop: $s p99 $(phase_p "$T/queue" 0 "$s" p99)"
done
jq -e '.summary.ops[0] | .latency_uncorrected_ns.p99 < .latency_ns.p99' "$T/queue/result.json" >/dev/null ||
    fail "open loop: the latency from the intended send is not above the one from the send"
ok "open loop: the wait for the slot in queue (p99 $(phase_p "$T/queue" 0 queue p99) ns), the server's in first_byte"

# 2. A slow accept: the listen queue is full, the SYN is dropped and sent again (Linux: 1 s later): connect.
APORT=$(free_port)
bg "$PY" "$SRV" --port "$APORT" --size 4096 --accept-delay-ms 100
sleep 0.5
"$RB" load get "http://127.0.0.1:$APORT/" --objects 5 --count 5 -c 1 --phases --out "$T/accept" >/dev/null \
    2>"$T/accept.err" || { cat "$T/accept.err"; fail "slow accept: the run failed"; }
DELAY_NS=800000000 assert_alone "$T/accept" connect p50
assert_sum "$T/accept"
"$RB" load get "http://127.0.0.1:$APORT/" --objects 5 --count 5 -c 1 --engine curl --phases --out "$T/accept-curl" \
    >/dev/null 2>"$T/accept-curl.err" || { cat "$T/accept-curl.err"; fail "slow accept on curl: the run failed"; }
DELAY_NS=800000000 assert_alone "$T/accept-curl" connect p50
assert_sum "$T/accept-curl"

# 3. A slow TLS handshake: the server waits on each ClientHello before its ServerHello: tls.
self_signed_cert
TPORT=$(free_port)
bg "$PY" "$SRV" --port "$TPORT" --size 4096 --tls-cert "$T/cert.pem" --tls-key "$T/key.pem" --tls-delay-ms "$DELAY_MS"
wait_port "$TPORT" 30 "tests/servers/phases.py over TLS"
"$RB" load get "https://127.0.0.1:$TPORT/" --insecure --objects 5 --count 5 -c 1 --engine native --phases \
    --out "$T/tls" >/dev/null 2>"$T/tls.err" || { cat "$T/tls.err"; fail "slow TLS: the run failed"; }
assert_alone "$T/tls" tls p50
assert_sum "$T/tls"
# The handshakes counted apart are the same ones, inside the latency now.
jq -e '.summary.ops[0] | .tls.handshakes == 5 and .latency_ns.min >= .tls.handshake_ns.min' "$T/tls/result.json" \
    >/dev/null || fail "slow TLS: handshakes $(jq -c '.summary.ops[0].tls' "$T/tls/result.json")"
# libcurl: its APPCONNECT time less its CONNECT time.
"$RB" load get "https://127.0.0.1:$TPORT/" --insecure --objects 5 --count 5 -c 1 --engine curl --phases \
    --out "$T/tls-curl" >/dev/null 2>"$T/tls-curl.err" || { cat "$T/tls-curl.err"; fail "slow TLS on curl: the run failed"; }
assert_alone "$T/tls-curl" tls p50
assert_sum "$T/tls-curl"

# 4. A body throttled by tc tbf (1 MiB at 4 Mbit/s: about 2 s) in a network namespace of its own (the server and
# the client in it, on its loopback): body.
cat >"$T/tbf.sh" <<EOF
set -e
ip link set lo mtu 1500 # (tbf drops a packet larger than its burst: loopback's 64 KiB ones would never pass)
ip link set lo up
tc qdisc add dev lo root tbf rate 4mbit burst 64kb latency 5s
"$PY" "$SRV" --port 8080 --size 1048576 &
pid=\$!
trap 'kill \$pid' EXIT
for i in \$(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null && break; sleep 0.1; done
"$RB" load get http://127.0.0.1:8080/ --objects 2 --count 2 -c 1 --timeout 60s --phases --out "$T/tbf"
EOF
if unshare -n true 2>/dev/null && unshare -n sh -c 'ip link set lo up && tc qdisc add dev lo root tbf rate 4mbit burst 32kb latency 5s' 2>/dev/null; then
    unshare -n bash "$T/tbf.sh" >"$T/tbf.out" 2>"$T/tbf.err" || { cat "$T/tbf.err"; fail "throttled body: the run failed"; }
    DELAY_NS=1000000000 assert_alone "$T/tbf" body p50
    assert_sum "$T/tbf"
else
    fail "cannot make a network namespace with tc tbf here (unshare -n, tc qdisc tbf)"
fi

# 5. Several ranks: the spans merged over them, the slowest gathered to rank 0 (each with its rank and host).
rb_mpirun 2 "$RB" load get "http://127.0.0.1:$PORT/" --filelist "$T/list" --pattern epoch --epochs 1 -c 2 --phases \
    --slowest 4 --out "$T/mpi" >/dev/null 2>"$T/mpi.err" || { cat "$T/mpi.err"; fail "two ranks: the run failed"; }
assert_eq "two ranks: requests split" 40 "$(jq '.summary.ops[0].request_phases.requests' "$T/mpi/result.json")"
assert_sum "$T/mpi"
assert_eq "two ranks: slowest named" "d/slowbody-12 d/slowbody-33 d/slowfb-21 d/slowfb-7" \
    "$(jq -r '[.summary.ops[0].slowest[].object] | sort | join(" ")' "$T/mpi/result.json")"
assert_eq "two ranks: each from its own rank" "0 1" \
    "$(jq -r '[.summary.ops[0].slowest[].rank] | unique | map(tostring) | join(" ")' "$T/mpi/result.json")"
jq -e --arg h "$(hostname)" 'all(.summary.ops[0].slowest[]; . as $e | $e.host == $h and ($e.id | startswith("r\($e.rank)-")))' \
    "$T/mpi/result.json" >/dev/null || fail "two ranks: a slowest request's host or id does not name its rank"

# 6. file:// on an ext4 loop device: open, first and last I/O, fsync, close. A put's fsync is its own span (0
# without --fsync), a read in several blocks has a last_io span; a stat is one call, not split.
loopfs_up fs 64M ext4
mkdir "$LOOP_MNT/p"
F=file://$LOOP_MNT/p
"$RB" load put "$F" --objects 30 --size 256KiB --keep --fsync close --phases --slowest 3 --out "$T/fput" >/dev/null \
    2>"$T/fput.err" || { cat "$T/fput.err"; fail "file put: the run failed"; }
assert_sum "$T/fput"
assert_eq "file: kind" file "$(jq -r '.summary.ops[0].request_phases.kind' "$T/fput/result.json")"
assert_eq "file: spans" "close first_io fsync last_io open queue" \
    "$(jq -r '.summary.ops[0].request_phases.spans | keys | join(" ")' "$T/fput/result.json")"
for s in open first_io fsync close; do
    v=$(phase_p "$T/fput" 0 "$s" p50)
    [ "$v" -gt 0 ] || fail "file put: $s p50 is $v"
done
v=$(phase_p "$T/fput" 0 fsync mean)
w=$(phase_p "$T/fput" 0 first_io mean)
jq -en "$v > $w" >/dev/null || fail "file put: fsync's mean $v ns is not above the write's $w ns"
jq -e 'all(.summary.ops[0].slowest[]; (.object | test("^obj-[0-9]{8}$")) and ([.phases_ns[]] | add) == .latency_ns)' \
    "$T/fput/result.json" >/dev/null || fail "file put: slowest $(jq -c '.summary.ops[0].slowest' "$T/fput/result.json")"
ok "file put: open, first write, fsync (mean $v ns) and close each in their span"
"$RB" load put "$F" --prefix nosync- --objects 30 --size 256KiB --keep --phases --out "$T/fput0" >/dev/null 2>&1 ||
    fail "file put without --fsync: the run failed"
assert_eq "file put without --fsync: fsync max" 0 "$(phase_p "$T/fput0" 0 fsync max)"
"$RB" load get "$F" --objects 30 --count 60 --block-size 16KiB --phases --out "$T/fget" >/dev/null 2>"$T/fget.err" ||
    { cat "$T/fget.err"; fail "file get: the run failed"; }
assert_sum "$T/fget"
assert_eq "file get: fsync max" 0 "$(phase_p "$T/fget" 0 fsync max)"
v=$(phase_p "$T/fget" 0 last_io p50)
[ "$v" -gt 0 ] || fail "file get in 16 blocks: last_io p50 is $v"
ok "file get in 16 blocks: the reads after the first in last_io (p50 $v ns)"
"$RB" load stat "$F" --objects 30 --count 60 --phases --out "$T/fstat" >"$T/fstat.out" 2>&1 || fail "file stat: the run failed"
assert_eq "file stat: not split" 0 "$(jq '.summary.ops[0].request_phases.requests' "$T/fstat/result.json")"
grep -q 'no request was split' "$T/fstat.out" || fail "file stat: the table does not say why it has no phases"
ok "file stat: one call, not split; the table says so"

# 7. load mixed: each op its own spans (summary.ops[].request_phases, the phase record's request_phases_by_op with
# histograms, a table block each), the total all of them. On file:// a get and a put are split, a delete and a stat
# are one call each (0 split); on the native engine against nginx's WebDAV every request is split.
# mixed_check RESULT OPS_SPLIT: every op row's split requests are its successes (or 0, for the ops not in
# OPS_SPLIT), its spans' means sum to its latency's mean; the total's requests are the ops' sum; the record's
# histograms per op count the same requests.
mixed_check() {
    local r=$1/result.json split=$2 op n ok_n
    for op in $(jq -r '.summary.ops[].op' "$r"); do
        n=$(jq --arg o "$op" '.summary.ops[] | select(.op == $o) | .request_phases.requests' "$r")
        ok_n=$(jq --arg o "$op" '.summary.ops[] | select(.op == $o) | .requests - .errors.total' "$r")
        if [[ " $split " == *" $op "* ]]; then
            [ "$ok_n" -gt 0 ] || fail "$1: no $op succeeded"
            assert_eq "$(basename "$1"): $op split" "$ok_n" "$n"
            jq -e --arg o "$op" '.summary.ops[] | select(.op == $o) | .request_phases as $p
                | ([$p.spans[].mean] | add) as $s | ($s - .latency_ns.mean | fabs) < 1
                  and ($p.total_ns.mean - .latency_ns.mean | fabs) < 1' "$r" >/dev/null ||
                fail "$1: $op's span means do not sum to its latency mean"
        else
            assert_eq "$(basename "$1"): $op split (one call)" 0 "$n"
        fi
        assert_eq "$(basename "$1"): $op's histograms in the record" "$n" \
            "$(jq --arg o "$op" '.phases[] | select(.name == "mixed") | .request_phases_by_op[$o].hist.total.count // 0' "$r")"
    done
    assert_eq "$(basename "$1"): total split = the ops' sum" "$(jq '[.summary.ops[].request_phases.requests] | add' "$r")" \
        "$(jq '.summary.total.request_phases.requests' "$r")"
}
mkdir "$LOOP_MNT/m"
"$RB" load mixed "file://$LOOP_MNT/m" --objects 40 --size 8k --count 600 -c 2 --phases --out "$T/fmix" \
    >"$T/fmix.out" 2>"$T/fmix.err" || { cat "$T/fmix.err"; fail "file mixed: the run failed"; }
mixed_check "$T/fmix" "GET PUT"
assert_eq "file mixed: a phase table for the prepare phase, each op split, the total" 4 "$(grep -c '^| request phase |' "$T/fmix.out")"
assert_eq "file mixed: GET's spans" "close first_io fsync last_io open queue" \
    "$(jq -r '.summary.ops[] | select(.op == "GET") | .request_phases.spans | keys | join(" ")' "$T/fmix/result.json")"
nginx_dav dav
"$RB" load mixed "$DAV_URL/" --objects 40 --size 8k --count 600 -c 2 --engine native --phases --out "$T/nmix" \
    >"$T/nmix.out" 2>"$T/nmix.err" || { cat "$T/nmix.err"; fail "mixed on WebDAV: the run failed"; }
mixed_check "$T/nmix" "GET PUT DELETE HEAD"
assert_eq "mixed on WebDAV: a phase table for the prepare phase, each op, the total" 6 "$(grep -c '^| request phase |' "$T/nmix.out")"
assert_eq "mixed on WebDAV: PUT's spans" "body connect first_byte queue send tls" \
    "$(jq -r '.summary.ops[] | select(.op == "PUT") | .request_phases.spans | keys | join(" ")' "$T/nmix/result.json")"
# report lists load mixed's slowest requests, kept over all its ops in summary.total
"$RB" report --phases "$T/nmix" >"$T/nmix.report" 2>&1 || { cat "$T/nmix.report"; fail "report --phases of load mixed failed"; }
N=$(jq '.summary.total.slowest | length' "$T/nmix/result.json")
[ "$N" -gt 0 ] || fail "load mixed kept no slowest requests"
assert_eq "report --phases: load mixed's slowest requests, one row each" "$N" "$(grep -c '^| mixed *| r[0-9]' "$T/nmix.report")"
ok "load mixed: each op's request phases (file: $(jq -c '[.summary.ops[] | {(.op): .request_phases.requests}] | add' \
    "$T/fmix/result.json"); WebDAV: $(jq -c '[.summary.ops[] | {(.op): .request_phases.requests}] | add' "$T/nmix/result.json"))"
