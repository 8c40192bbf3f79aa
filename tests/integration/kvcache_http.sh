#!/usr/bin/env bash
# needs: mpi
# railbench load kvcache against a plain http:// store (nginx WebDAV: PUT, GET, DELETE) from 2 ranks: each entry one
# object of 128 + tokens x 131,072 bytes, verified on every read, as nginx's access log counts them; the names
# looked up (HEAD) before the first write; each thread's requests on connections it keeps (nginx's $connection and
# $connection_requests: fewer connections than requests), the threads spread over two endpoints; an object fetched with curl is the entry's .npy file
# (numpy: the model's shape and '<f2', the seeded payload of its name after the header), as a file:// entry is;
# a file that was there is untouched and no object of the run is left.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
P2=$(free_port)
nginx_dav web "listen 127.0.0.1:$P2; access_log $T/web/logs/access.log kvc;" \
    "log_format kvc '\$connection \$connection_requests \"\$request\" \$status \$server_port';"
echo keep >"$DAV_ROOT/there.txt"
# Two endpoints (two ports of the one server): the ranks' threads spread over them.
rb_mpirun 2 "$RB" load kvcache "$DAV_URL" --endpoint "http://127.0.0.1:$DAV_PORT" --endpoint "http://127.0.0.1:$P2" \
    --option 1 --scale 1/64 --users 3 --inflight 3 --duration 3s --trials 1 \
    --verify --out "$T/run" >"$T/run.out" 2>"$T/run.err" || { cat "$T/run.err" >&2; fail "run"; }
R=$T/run/result.json
assert_jq "$R" '.summary.engine == "native" and (.summary.trials[0] | (.ranks | length) == 2 and
    ([.counts, .ranks[].counts] | all(.writes > 0 and .reads > 0 and .verify_failures == 0 and
    .bytes_written == .writes * 128 + .tokens_written * 131072 and .bytes_read == .reads * 128 + .tokens_read * 131072)))' \
    "2 ranks over WebDAV: $(jq .summary.trials[0].counts.writes "$R") entries, bytes = 128 x objects + 131,072 x tokens"
log=$T/web/logs/access.log
W=$(jq .summary.trials[0].counts.writes "$R")
RD=$(jq .summary.trials[0].counts.reads "$R")
assert_eq "nginx: a PUT of each entry" "$W" "$(grep -Ec '"PUT /dav/rbkv-[^ ]*-r[01]/u[0-9]+-c[0-9]+-t[0-9]+\.npy HTTP/1.1" 201' "$log")"
assert_eq "nginx: a GET of each read" "$RD" \
    "$(grep -Ec '"GET /dav/rbkv-[^ ]*-r[01]/u[0-9]+-c[0-9]+-t[0-9]+\.npy HTTP/1.1" 200' "$log")"
assert_eq "nginx: each rank's first name looked up (HEAD, not there) before the first write" 2 \
    "$(grep -Ec '"HEAD /dav/rbkv-[^ ]*-r[01]/u0-c0-t1\.npy HTTP/1.1" 404' "$log")"
assert_eq "nginx: a DELETE of each entry" "$W" "$(grep -Ec '"DELETE /dav/rbkv-[^ ]*\.npy HTTP/1.1" 204' "$log")"
# Connections: each of a rank's 3 threads keeps one per op (PUT, GET, DELETE) for the trial: at most 2 x 3 x 3.
grep -E '"(PUT|GET|DELETE) /dav/rbkv-[^ ]*\.npy HTTP/1.1"' "$log" >"$T/entry.log"
N=$(grep -c . "$T/entry.log")
C=$(awk '{print $1}' "$T/entry.log" | sort -u | grep -c .)
M=$(awk '$2 > m {m = $2} END {print m + 0}' "$T/entry.log")
assert_eq "nginx: the entries' requests" "$((2 * W + RD))" "$N"
if [ "$C" -gt 18 ] || [ "$C" -ge "$N" ] || [ "$M" -le 1 ]; then
    fail "connections kept: $N requests on $C connections (at most 18 expected), at most $M on one"
fi
ok "connections kept: $N requests on $C connections (at most 2 ranks x 3 threads x 3 ops = 18), up to $M on one"
assert_eq "threads on both endpoints (ports), each connection on one" "2 $C" \
    "$(awk '{print $NF}' "$T/entry.log" | sort -u | grep -c .) $(awk '{print $1, $NF}' "$T/entry.log" | sort -u | grep -c .)"
assert_eq "no object of the run left (WebDAV keeps the empty collections)" "there.txt" \
    "$(cd "$DAV_ROOT" && find . -type f -printf '%P\n')"
assert_eq "the file that was there" keep "$(cat "$DAV_ROOT/there.txt")"

# The bytes: an entry kept (--keep) fetched as an object is the .npy file the model gives, as a file:// entry is.
"$RB" load kvcache "$DAV_URL" --model llama3.1-8b --scale 1/256 --users 2 --inflight 1 --duration 1s --trials 1 \
    --keep --out "$T/k" >"$T/k.out" 2>&1 || { cat "$T/k.out" >&2; fail "--keep run on http://"; }
obj=$(cd "$DAV_ROOT" && find . -name 'u*.npy' -printf '%P\n' | sort | head -1)
[ -n "$obj" ] || fail "--keep: no entry kept under $DAV_ROOT"
curl -fsS -o "$T/obj.npy" "$DAV_URL/$obj" || fail "curl GET $DAV_URL/$obj"
mkdir "$T/fs"
"$RB" load kvcache "file://$T/fs" --model llama3.1-8b --scale 1/256 --users 2 --inflight 1 --duration 1s --trials 1 \
    --keep --out "$T/f" >"$T/f.out" 2>&1 || { cat "$T/f.out" >&2; fail "--keep run on file://"; }
fil=$(cd "$T/fs" && find . -name 'u*.npy' -printf '%P\n' | sort | head -1)
[ -n "$fil" ] || fail "--keep: no entry kept under $T/fs"
out=$(/usr/bin/python3 "$ROOT/tests/formats/check_kvnpy.py" 42 32 8 128 "$T/obj.npy" "$obj" "$T/fs/$fil" "$fil") ||
    fail "numpy: $out"
ok "numpy reads the object and the file alike: $(echo "$out" | tr '\n' ';')"
[ "$(basename "$obj")" != "$(basename "$fil")" ] || cmp -n 128 "$T/obj.npy" "$T/fs/$fil" ||
    fail "the same user's entry: object and file headers differ"
while read -r f; do curl -fsS -X DELETE "$DAV_URL/$f" >/dev/null; done < <(cd "$DAV_ROOT" && find . -name '*.npy' -printf '%P\n')
assert_eq "the kept objects removed (by the test)" "there.txt" "$(cd "$DAV_ROOT" && find . -type f -printf '%P\n')"
