#!/usr/bin/env bash
# needs: mpi
# railbench load kvcache against a plain http:// store (nginx WebDAV: PUT, GET, DELETE) from 2 ranks: each entry one
# object of 128 + tokens x 131,072 bytes, verified on every read, as nginx's access log counts them; the names
# looked up (HEAD) before the first write; a file that was there is untouched and no object of the run is left.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
nginx_dav web "access_log $T/web/logs/access.log;"
echo keep >"$DAV_ROOT/there.txt"
rb_mpirun 2 "$RB" load kvcache "$DAV_URL" --option 1 --scale 1/64 --users 3 --inflight 3 --duration 3s --trials 1 \
    --verify --out "$T/run" >"$T/run.out" 2>"$T/run.err" || { cat "$T/run.err" >&2; fail "run"; }
R=$T/run/result.json
assert_jq "$R" '.summary.engine == "native" and (.summary.trials[0] | (.ranks | length) == 2 and
    ([.counts, .ranks[].counts] | all(.writes > 0 and .reads > 0 and .verify_failures == 0 and
    .bytes_written == .writes * 128 + .tokens_written * 131072 and .bytes_read == .reads * 128 + .tokens_read * 131072)))' \
    "2 ranks over WebDAV: $(jq .summary.trials[0].counts.writes "$R") entries, bytes = 128 x objects + 131,072 x tokens"
log=$T/web/logs/access.log
W=$(jq .summary.trials[0].counts.writes "$R")
assert_eq "nginx: a PUT of each entry" "$W" "$(grep -Ec '"PUT /dav/rbkv-[^ ]*-r[01]/u[0-9]+-c[0-9]+-t[0-9]+\.npy HTTP/1.1" 201' "$log")"
assert_eq "nginx: a GET of each read" "$(jq .summary.trials[0].counts.reads "$R")" \
    "$(grep -Ec '"GET /dav/rbkv-[^ ]*-r[01]/u[0-9]+-c[0-9]+-t[0-9]+\.npy HTTP/1.1" 200' "$log")"
assert_eq "nginx: each rank's first name looked up (HEAD, not there) before the first write" 2 \
    "$(grep -Ec '"HEAD /dav/rbkv-[^ ]*-r[01]/u0-c0-t1\.npy HTTP/1.1" 404' "$log")"
assert_eq "nginx: a DELETE of each entry" "$W" "$(grep -Ec '"DELETE /dav/rbkv-[^ ]*\.npy HTTP/1.1" 204' "$log")"
assert_eq "no object of the run left (WebDAV keeps the empty collections)" "there.txt" \
    "$(cd "$DAV_ROOT" && find . -type f -printf '%P\n')"
assert_eq "the file that was there" keep "$(cat "$DAV_ROOT/there.txt")"
