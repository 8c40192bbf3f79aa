#!/usr/bin/env bash
# needs: mpi
# load train under mpirun -np 4 on a --filelist of 200,000 names: the names are held once per host in memory its
# ranks share (the host's Pss grows by about one copy of them, not four), and the epoch still reads every name once.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
chmod 755 "$T" # nginx's workers run as nobody
PORT=$(free_port)
mkdir -p "$T/www"
head -c 1024 /dev/urandom >"$T/www/one"
# Every name answers with the same 1 KiB file; the access log keeps the name asked for.
nginx_start web "log_format req '\$request_uri';
    server {
        listen 127.0.0.1:$PORT;
        root $T/www;
        access_log $T/web/logs/access.log req;
        location / { try_files /one =404; }
    }"
wait_port "$PORT"
URL=http://127.0.0.1:$PORT
N=200000
awk -v n=$N 'BEGIN { for (i = 0; i < n; i++) printf "train/shard-%04d/sample-%09d.jpeg\n", i % 1000, i }' >"$T/list"
# Stored per name: the name and its NUL, a 4-byte offset, an 8-byte size; 8 bytes per block of 65,536 names.
name_bytes=$(awk '{ s += length($0) } END { print s }' "$T/list")
expect=$((name_bytes + N * 13 + 8 * ((N + 65535) / 65536)))
train() { # OUT ARGS...: 4 ranks, 1 KiB objects, batches of 500
    local out=$1; shift
    rb_mpirun 4 "$RB" load train "$URL/d" "$@" --batch-size 500 --compute-time 1ms -c 16 --out "$T/$out" --quiet \
        >/dev/null 2>"$T/$out.err" || { cat "$T/$out.err"; fail "$out: load train failed"; }
}

# 1. The whole epoch from the file list: every name requested exactly once.
train fl --filelist "$T/list"
R=$T/fl/result.json
assert_eq "filelist: objects, requests, errors" "$N $N 0" \
    "$(jqr "$R" '"\(.summary.dataset.objects) \(.summary.train_epochs[0].requests) \(.summary.train_epochs[0].errors)"')"
sleep 0.5 # nginx writes its log line after the response
sed 's|^/d/||' "$T/web/logs/access.log" | sort >"$T/asked"
assert_eq "access log: requests" "$N" "$(wc -l <"$T/asked")"
assert_eq "access log: each name of the list exactly once" 0 "$(sort "$T/list" | comm -3 - "$T/asked" | wc -l)"

# 2. What the names take: the exact arena and index bytes, held per host, at most name length + 16 per object.
assert_eq "names_bytes = names + NULs + 12 per object + 8 per block" "$expect" "$(jqr "$R" .summary.dataset.names_bytes)"
assert_eq "names held" host "$(jqr "$R" .summary.dataset.names_held)"
[ "$expect" -le $((name_bytes + 16 * N)) ] || fail "names_bytes $expect over name length + 16 per object"
ok "names_bytes $expect <= $((name_bytes + 16 * N)) (name length + 16 per object)"

# 3. Memory: the same run over generated names (none stored) is the reference; the host's Pss (shared pages once)
#    grows by about one copy of the names. Four private copies (every rank its own) would be 4 x names_bytes.
train gen --objects "$N" --steps 2
pss=$(jqr "$R" '.hosts[0].pss_bytes')
ref=$(jqr "$T/gen/result.json" '.hosts[0].pss_bytes')
grow=$((pss - ref))
echo "host Pss: filelist $pss, generated $ref, grown by $grow for names_bytes $expect"
[ "$grow" -lt $((2 * expect)) ] || fail "host Pss grew by $grow, not under 2 x names_bytes ($((2 * expect))): the names are not shared"
[ "$grow" -gt $((expect / 2)) ] || fail "host Pss grew by $grow, under half of names_bytes ($expect): the figure misses the names"
ok "host Pss grew by $grow: between 0.5x and 2x names_bytes (4 private copies would be $((4 * expect)))"
