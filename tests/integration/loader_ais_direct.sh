#!/usr/bin/env bash
# needs: -
# ais:// --ais-direct against the AIStore stand-in's cluster mode (tests/servers/peer.py: a proxy and 3 targets
# that place objects by AIStore's HRW): requests go straight to the owning target (0 redirects, 0 misdirected,
# requests per target as HRW says) with the same bytes as through the proxy (one redirect per request); a stale
# map's wrong guesses are redirected by the target and counted; errors are counted alike; load mixed direct;
# bad input. The stand-in is written from AIStore's source and docs (AIStore itself cannot run here).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
PEER=$ROOT/tests/servers/peer.py
mapfile -t ports < <(free_port 9)
P=${ports[0]} T1=${ports[1]} T2=${ports[2]} T3=${ports[3]} T4=${ports[4]}
bg python3 "$PEER" --port "$P" --ais-targets "$T1,$T2,$T3"
for p in "$P" "$T1" "$T2" "$T3"; do wait_port "$p" 30 "the AIStore stand-in (proxy and targets)"; done
EP=(--endpoint "http://127.0.0.1:$P")
stats() { curl -fsS "http://127.0.0.1:$1/peer/stats"; }
ops() { jq -c ".summary.ops[0] | $2" "$T/$1/result.json"; }
# owners PORT BUCKET PREFIX TARGETS...: {"t<port>": objects} the stand-in holds under BUCKET/PREFIX, placed by
# peer.py's HRW over TARGETS (ports), as AIStore's Smap.HrwName2T places them.
owners() {
    local port=$1 bucket=$2 prefix=$3
    shift 3
    stats "$port" | python3 -c '
import collections, json, sys
sys.path.insert(0, sys.argv[1])
import peer
bucket, prefix, ports = sys.argv[2], sys.argv[3], [int(p) for p in sys.argv[4:]]
targets = [("t%d" % p, p) for p in ports]
names = [k[len(bucket) + 1:] for k in json.load(sys.stdin)["held"] if k.startswith(bucket + "/" + prefix)]
print(json.dumps(dict(sorted(collections.Counter(peer.hrw_owner(targets, "ais", bucket, n)[0] for n in names).items()))))
' "$ROOT/tests/servers" "$bucket" "$prefix" "$@"
}
# delta BEFORE AFTER: per-target requests AFTER - BEFORE (JSON objects of /peer/stats), the zeros left out.
delta() {
    python3 -c 'import json,sys; a,b=json.loads(sys.argv[1])["target_requests"],json.loads(sys.argv[2])["target_requests"]
print(json.dumps({k: b[k] - a.get(k, 0) for k in sorted(b) if b[k] - a.get(k, 0)}))' "$1" "$2"
}
# times N JSON: every value of JSON multiplied by N.
times() { python3 -c 'import json,sys; print(json.dumps({k: v * int(sys.argv[1]) for k, v in json.loads(sys.argv[2]).items()}))' "$@"; }

# 1. PUT 90 objects straight to their targets: no redirect, none misdirected, each target got what HRW gives it.
s0=$(stats "$P")
"$RB" load put ais://bkt/d/ "${EP[@]}" --ais-direct --objects 90 --size 3k -c 8 --keep --out "$T/p1" --quiet >/dev/null
s1=$(stats "$P")
assert_eq "direct PUT: requests" 90 "$(ops p1 .requests)"
assert_eq "direct PUT: errors" 0 "$(ops p1 .errors.total)"
assert_eq "direct PUT: redirects" 0 "$(ops p1 .extra.redirects)"
assert_eq "direct PUT: misdirected (the stand-in's count)" 0 "$(jq .misdirected <<<"$s1")"
want=$(owners "$P" bkt d/ "$T1" "$T2" "$T3")
assert_jq <(echo "$want") '(keys | length) == 3 and ([.[]] | add) == 90' "HRW spreads the 90 objects over the 3 targets"
assert_eq "direct PUT: requests per target = HRW's placement" "$want" "$(delta "$s0" "$s1")"

# 2. Verified GETs, each object twice (2 epochs): direct, then through the proxy. The same bytes and requests per
#    target; direct 0 redirects, the proxy's one per request.
"$RB" load get ais://bkt/d/ "${EP[@]}" --ais-direct --objects 90 --size 3k --pattern epoch --epochs 2 --verify -c 8 \
    --out "$T/g1" --quiet >/dev/null
s2=$(stats "$P")
"$RB" load get ais://bkt/d/ "${EP[@]}" --objects 90 --size 3k --pattern epoch --epochs 2 --verify -c 8 \
    --out "$T/g2" --quiet >/dev/null
s3=$(stats "$P")
assert_eq "direct GET: requests" 180 "$(ops g1 .requests)"
assert_eq "direct GET: bytes" $((180 * 3072)) "$(ops g1 .bytes)"
assert_eq "direct GET: errors (verified)" 0 "$(ops g1 .errors.total)"
assert_eq "direct GET: redirects" 0 "$(ops g1 .extra.redirects)"
assert_eq "proxy GET: redirects (one per request)" 180 "$(ops g2 .extra.redirects)"
assert_eq "bytes: direct = through the proxy" "$(ops g2 .bytes)" "$(ops g1 .bytes)"
assert_eq "direct GET: requests per target = 2 x HRW's" "$(times 2 "$want")" "$(delta "$s1" "$s2")"
assert_eq "proxy GET: requests per target = 2 x HRW's" "$(times 2 "$want")" "$(delta "$s2" "$s3")"
assert_eq "misdirected after both" 0 "$(jq .misdirected <<<"$s3")"

# 3. Errors from the targets: GETs of 20 names nobody wrote, direct and through the proxy: 20 http_4xx each.
"$RB" load get ais://bkt/none/ "${EP[@]}" --ais-direct --objects 20 --pattern epoch --epochs 1 --max-error-rate 100 --out "$T/n1" --quiet \
    >/dev/null 2>&1 || true
"$RB" load get ais://bkt/none/ "${EP[@]}" --objects 20 --pattern epoch --epochs 1 --max-error-rate 100 --out "$T/n2" --quiet \
    >/dev/null 2>&1 || true
assert_eq "direct: absent objects" 20 "$(ops n1 .errors.http_4xx)"
assert_eq "proxy: absent objects" 20 "$(ops n2 .errors.http_4xx)"
assert_eq "direct: their redirects" 0 "$(ops n1 .extra.redirects)"

# 4. load mixed straight to the targets, and the same mix through the proxy (one request in flight per thread, so
#    the same draws): equal requests, bytes and error classes per op; 0 redirects against one per request.
for m in d p; do
    extra=()
    [ "$m" = d ] && extra=(--ais-direct)
    "$RB" load mixed ais://bkt/m/ "${EP[@]}" "${extra[@]}" --objects 30 --size 2k -t 2 -c 1 --count 300 \
        --out "$T/m$m" --quiet >/dev/null
done
rows() { jq -c '[.summary.ops[] | {op, requests, bytes, errors}]' "$T/$1/result.json"; }
assert_eq "mixed: per-op requests, bytes and classes, direct = proxy" "$(rows mp)" "$(rows md)"
assert_eq "mixed direct: redirects" 0 "$(jq '.phases[] | select(.name == "mixed") | .extra.redirects' "$T/md/result.json")"
assert_eq "mixed via proxy: redirects" 300 "$(jq '.phases[] | select(.name == "mixed") | .extra.redirects' "$T/mp/result.json")"
assert_eq "mixed: what both runs wrote is deleted" "[]" "$(stats "$P" | jq -c '[.held[] | select(startswith("bkt/m/"))]')"

# 5. A stale map: the cluster has 4 targets, the map the proxy serves shows 3. Requests for objects the missing
#    target owns go to another target, which redirects them to the owner: each one counted as a redirect, and the
#    bytes still right.
Q=${ports[5]} U1=${ports[6]} U2=${ports[7]} U3=${ports[8]}
bg python3 "$PEER" --port "$Q" --ais-targets "$U1,$U2,$U3,$T4" --ais-smap-omit 1
for p in "$Q" "$U1" "$U2" "$U3" "$T4"; do wait_port "$p" 30 "the stale-map stand-in"; done
"$RB" load put ais://bkt/s/ --endpoint "http://127.0.0.1:$Q" --ais-direct --objects 60 --size 1k -c 4 --keep \
    --out "$T/s1" --quiet >/dev/null
st=$(owners "$Q" bkt s/ "$U1" "$U2" "$U3" "$T4")
moved=$(jq ".t$T4 // 0" <<<"$st")
[ "$moved" -gt 0 ] || fail "stale map: HRW gives the hidden target none of 60 objects ($st)"
assert_eq "stale map: PUT errors" 0 "$(ops s1 .errors.total)"
assert_eq "stale map: redirects = objects the hidden target owns" "$moved" "$(ops s1 .extra.redirects)"
assert_eq "stale map: misdirected (the stand-in's count)" "$moved" "$(stats "$Q" | jq .misdirected)"
"$RB" load get ais://bkt/s/ --endpoint "http://127.0.0.1:$Q" --ais-direct --objects 60 --size 1k --pattern epoch \
    --epochs 1 --verify --out "$T/s2" --quiet >/dev/null
assert_eq "stale map: GET bytes" $((60 * 1024)) "$(ops s2 .bytes)"
assert_eq "stale map: GET redirects" "$moved" "$(ops s2 .extra.redirects)"

# 6. Over https (the stand-in on TLS, a self-signed certificate): the connections to the proxy and to each target
#    are kept alive with their TLS state, as AIStore's clients keep them. With 4 in flight a worker holds at most
#    4 to the proxy and 4 to each target: at most 16 handshakes for 200 GETs through the proxy (they were 2 per
#    request) and 12 direct, each one a connection the stand-in accepted. libcurl: the same requests, bytes, redirects.
self_signed_cert
mapfile -t sp < <(free_port 4)
S=${sp[0]}
bg python3 "$PEER" --port "$S" --ais-targets "${sp[1]},${sp[2]},${sp[3]}" --tls-cert "$T/cert.pem" --tls-key "$T/key.pem"
for p in "${sp[@]}"; do wait_port "$p" 30 "the AIStore stand-in over https"; done
SEP=(--endpoint "https://127.0.0.1:$S" --insecure)
sstats() { curl -fsSk "https://127.0.0.1:$S/peer/stats"; }
# conns BEFORE AFTER WHO: connections accepted between two sstats by the proxy ("proxy", the second sstats's own
# left out) or by the targets ("targets").
conns() {
    python3 -c 'import json,sys; a,b=(json.loads(x)["connections"] for x in sys.argv[1:3])
d={k: b[k] - a.get(k, 0) for k in b}
print(d.get("proxy", 0) - 1 if sys.argv[3] == "proxy" else sum(v for k, v in d.items() if k != "proxy"))' "$@"
}
"$RB" load put ais://bkt/h/ "${SEP[@]}" --objects 40 --size 3k -c 4 --keep --out "$T/h0" --quiet >/dev/null
assert_eq "https PUT: requests, errors, redirects" '[40,0,40]' "$(ops h0 '[.requests, .errors.total, .extra.redirects]')"
for e in native curl; do
    c0=$(sstats)
    "$RB" load get ais://bkt/h/ "${SEP[@]}" --engine "$e" --objects 40 --size 3k --count 200 --verify -c 4 \
        --out "$T/h-$e" --quiet >/dev/null
    c1=$(sstats)
    [ "$e" = curl ] || { n0=$c0 n1=$c1; }
    assert_eq "https GET through the proxy ($e): requests, bytes, errors, redirects" "[200,$((200 * 3072)),0,200]" \
        "$(ops "h-$e" '[.requests, .bytes, .errors.total, .extra.redirects]')"
done
hs=$(ops h-native .tls.handshakes)
# (the proxy's one other connection is the run's probe of its endpoint, made by libcurl before the load)
assert_eq "https via the proxy: handshakes = connections the stand-in accepted, less the probe's" \
    "$(($(conns "$n0" "$n1" proxy) - 1 + $(conns "$n0" "$n1" targets)))" "$hs"
[ "$hs" -ge 4 ] && [ "$hs" -le 16 ] || fail "https via the proxy: $hs handshakes for 200 GETs, expected 4 to 16"
ok "https via the proxy: $hs handshakes for 200 GETs (keep-alive to the proxy and to each target)"
c0=$(sstats)
"$RB" load get ais://bkt/h/ "${SEP[@]}" --ais-direct --objects 40 --size 3k --count 200 --verify -c 4 --out "$T/h-direct" \
    --quiet >/dev/null
c1=$(sstats)
assert_eq "https direct: requests, bytes, errors, redirects" "[200,$((200 * 3072)),0,0]" \
    "$(ops h-direct '[.requests, .bytes, .errors.total, .extra.redirects]')"
hs=$(ops h-direct .tls.handshakes)
assert_eq "https direct: handshakes = connections the targets accepted" "$(conns "$c0" "$c1" targets)" "$hs"
[ "$hs" -ge 3 ] && [ "$hs" -le 12 ] || fail "https direct: $hs handshakes for 200 GETs, expected 3 to 12"
ok "https direct: $hs handshakes for 200 GETs"

# 7. Bad input: one error line, exit 2 (usage) or 3 (a proxy that serves no cluster map).
assert_exit 2 "--ais-direct on s3://" "$RB" load get s3://bkt/x --endpoint "http://127.0.0.1:$P" --ais-direct --objects 1
assert_stderr_line '--ais-direct: only an ais:// target has a cluster map'
assert_exit 2 "--ais-direct on libcurl" "$RB" load get ais://bkt/d/ "${EP[@]}" --ais-direct --objects 1 --engine curl
assert_stderr_line '--ais-direct: only the native engine'
PLAIN=$(free_port)
bg python3 "$PEER" --port "$PLAIN"
wait_port "$PLAIN" 30 "the single-node stand-in"
assert_exit 3 "a proxy without a cluster map" "$RB" load get ais://bkt/d/ --endpoint "http://127.0.0.1:$PLAIN" \
    --ais-direct --objects 1 --out "$T/bad"
assert_stderr_line "the cluster map from http://127.0.0.1:$PLAIN: the reply is not AIStore's cluster map"
mapfile -t hp < <(free_port 2)
HTTPS_MAP=${hp[0]} HT=${hp[1]}
bg python3 "$PEER" --port "$HTTPS_MAP" --ais-targets "$HT" --ais-smap-scheme https
wait_port "$HTTPS_MAP" 30 "the stand-in whose map names https:// targets"
assert_exit 3 "a map whose targets are of another scheme" "$RB" load get ais://bkt/d/ \
    --endpoint "http://127.0.0.1:$HTTPS_MAP" --ais-direct --objects 1 --out "$T/bad2"
assert_stderr_line "target t$HT is at https://127.0.0.1:$HT, not at http:// like the proxy"
echo "PASS loader_ais_direct"
