# Shared helpers for tests/integration/*.sh: temp dirs, free ports, servers we start and stop, assertions.
# Source it after `set -euo pipefail`. Every server started here is stopped by PID on exit.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RB=$ROOT/build/railbench
mkdir -p "$ROOT/build/tmp"
T=$(mktemp -d "$ROOT/build/tmp/$(basename "$0" .sh).XXXXXX")
PIDS=()
# Commands run at exit before the PIDs are stopped (unmount what a test mounted), newest first.
AT_EXIT=()
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Shared-memory transport without ptrace-based single copy (not permitted in containers).
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1
# A run without mpirun is an MPI singleton, and Open MPI starts a daemon (orted) beside each one: a tenth of a second
# of CPU that the suite's hundreds of singleton runs spend for nothing. Here they run isolated, without it; a user's run
# has it, and so do the runs of tests/integration/run_outcome.sh (every way a run ends, signals included).
export OMPI_MCA_ess_singleton_isolated=1
# Open MPI's session directories under this test's own T, not the machine's /tmp/ompi.HOST.UID: isolated singletons
# all name theirs jf.0/1/0 there, so the singletons of tests running side by side made and removed the same
# directories (a start failed with "orte_ess_init failed"); and those a killed run leaves go with T.
mkdir -p "$T/ompi"
export OMPI_MCA_orte_tmpdir_base=$T/ompi

# check_results PATH...: every result.json under PATH against the result contract, schemas/ (result.schema.json
# and the kind schema naming its command; tests/schema_check.py). Prints the problems; returns 1 when there are any.
check_results() {
    python3 "$ROOT/tests/schema_check.py" "$ROOT/schemas" "$@" >"$T/.schema-check.out" 2>&1 ||
        { grep -v ' problems$' "$T/.schema-check.out" >&2; return 1; }
}

# running PID: PID exists and has not exited. A server started by a script that has ended (rgw.sh's daemons) is an
# orphan: when it exits it stays a zombie (state Z) until PID 1 collects it, seconds on some machines.
running() { kill -0 "$1" 2>/dev/null && ! grep -qs '^State:[[:space:]]*[ZX]' "/proc/$1/status"; }

# On exit: stop the servers; a test that passed also has every result.json it made checked against its schema
# (a test that plants broken results on purpose sets SCHEMA_SKIP=1 after checking its own with check_results).
cleanup() {
    local rc=$? pid i
    for ((i = ${#AT_EXIT[@]} - 1; i >= 0; i--)); do eval "${AT_EXIT[i]}" || true; done
    # rgw_up's Ceph daemons one at a time, newest first, as rgw.sh stop does: the monitor last, so that the OSD's
    # "mark me down" on its way out is answered at once (with the monitor gone first, the OSD waits 5 s for it).
    if [ -f "$T/rgw/pids" ]; then
        for pid in $(tac "$T/rgw/pids"); do
            kill "$pid" 2>/dev/null || continue
            for _ in $(seq 100); do running "$pid" || break; sleep 0.05; done
        done
    fi
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        for _ in $(seq 50); do running "$pid" || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    if [ "$rc" -eq 0 ] && [ -z "${SCHEMA_SKIP:-}" ]; then
        if check_results "$T"; then
            grep -q '^0 results' "$T/.schema-check.out" || echo "ok: $(tail -n 1 "$T/.schema-check.out") against schemas/"
        else
            echo "FAIL: a result.json does not keep the result contract (schemas/)" >&2
            rc=1
        fi
    fi
    [ -n "${KEEP_TMP:-}" ] || rm -rf "$T"
    exit "$rc"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

# A band is a figure the machine's speed decides (a rate against the rate the test set with tbf or
# limit_rate, a slowdown, a ratio of times), held to LO..HI ('-': no bound on that side). Another test's
# load on the same cores moves it, so `make test` only prints it; tests/bench/bands.sh runs the tests that
# have bands alone with RB_BANDS=1, where a figure outside its band fails, and appends every figure to
# RB_BANDS_LOG (TEST<TAB>WHAT<TAB>VALUE<TAB>LO<TAB>HI) for its min/median/max.
# in_band VALUE LO HI: whether LO <= VALUE <= HI.
in_band() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !((lo == "-" || v + 0 >= lo + 0) && (hi == "-" || v + 0 <= hi + 0)) }'; }
# holding_bands: whether this run holds its bands (RB_BANDS=1), so a test measures once more where it would.
holding_bands() { [ "${RB_BANDS:-}" = 1 ]; }
# band WHAT VALUE LO HI: records the figure; fails outside LO..HI when holding_bands.
band() {
    local what=$1 v=$2 lo=$3 hi=$4
    awk -v v="$v" 'BEGIN { exit !(v != "" && v == v + 0) }' || fail "band: $what = '$v', not a number"
    [ -z "${RB_BANDS_LOG:-}" ] || printf '%s\t%s\t%s\t%s\t%s\n' "$(basename "$0" .sh)" "$what" "$v" "$lo" "$hi" >>"$RB_BANDS_LOG"
    if in_band "$v" "$lo" "$hi"; then
        ok "band: $what = $v (within $lo .. $hi)"
    elif holding_bands; then
        fail "band: $what = $v, outside $lo .. $hi"
    else
        echo "band: $what = $v, outside $lo .. $hi (held by tests/bench/bands.sh, not by make test)"
    fi
}

# free_port [N]: prints N (default 1) distinct TCP ports on 127.0.0.1 that nothing listens on now, one a line.
free_port() {
    python3 "$ROOT/scripts/free-port.py" "$@"
}

# self_signed_cert [ec]: a self-signed certificate for 127.0.0.1 (its IP in the SAN) in $T/cert.pem, its key in
# $T/key.pem, readable by the servers' unprivileged workers (nginx). RSA 2048, or with ec a P-256 key (a handshake
# a slow guest kernel makes in a fraction of the time).
self_signed_cert() {
    local key=(rsa:2048)
    [ "${1:-}" != ec ] || key=(ec -pkeyopt ec_paramgen_curve:prime256v1)
    openssl req -x509 -newkey "${key[@]}" -nodes -keyout "$T/key.pem" -out "$T/cert.pem" -days 1 -subj /CN=127.0.0.1 \
        -addext subjectAltName=IP:127.0.0.1 2>/dev/null || fail "openssl could not make a self-signed certificate"
    chmod 644 "$T/key.pem"
}

# wait_port PORT [SECONDS [WHAT]]: waits until something accepts on 127.0.0.1:PORT (60 s unless given: two
# tests at a time on a loaded host start slowly); the failure names WHAT (the server that should be there).
wait_port() {
    local port=$1 limit=${2:-60} what=${3:-a server} i
    for i in $(seq $((limit * 10))); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
        sleep 0.1
    done
    fail "$what: nothing listens on 127.0.0.1:$port after ${limit}s"
}

# bg CMD...: starts CMD in the background, records its PID for cleanup, sets LAST_PID.
bg() {
    "$@" &
    LAST_PID=$!
    PIDS+=("$LAST_PID")
}

# rb_mpirun NP PROGRAM ARGS...: runs PROGRAM under mpirun on this host.
# For a background run whose PID you need, use: bg "${MPIRUN[@]}" -np N PROGRAM ARGS...
# --stdin none: no test feeds its ranks stdin, and mpirun's forwarding of it can crash mpirun itself (SIGSEGV in
# orte_iof_hnp_read_local_handler when a rank exits early, open-mpi/ompi#7483: 1 in 150 usage-error runs here).
MPIRUN=(mpirun --stdin none --oversubscribe --mca btl self,vader,tcp)
rb_mpirun() {
    local np=$1; shift
    "${MPIRUN[@]}" -np "$np" "$@"
}

# rank_pid MPIRUN_PID RANK: the PID of one rank mpirun started on this host (its child, or grandchild when
# MPIRUN_PID is a wrapper such as setsid that forked, with OMPI_COMM_WORLD_RANK), waiting up to 30 s for it; nothing
# when there is none.
rank_pid() {
    local p c _
    for _ in $(seq 300); do
        for p in $(for c in "$1" $(pgrep -P "$1" || true); do pgrep -P "$c" || true; done); do
            grep -qx "OMPI_COMM_WORLD_RANK=$2" < <(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null) && { echo "$p"; return 0; }
        done
        sleep 0.1
    done
}

# bg_mpirun_session NP ARGS...: mpirun in a session (and process group) of its own, as a terminal's foreground job
# is; LAST_PID is mpirun's PID and its process group. Its stdout and stderr go to $T/run.out and $T/run.err.
bg_mpirun_session() {
    local np=$1; shift
    bg setsid "${MPIRUN[@]}" -np "$np" "$@" >"$T/run.out" 2>"$T/run.err"
}

# wait_bounded PID SECONDS: waits for background PID at most SECONDS (then SIGKILLs it and fails); its exit status
# in WAIT_RC (call it directly, not in $(...): only this shell can wait for its child). Unlike timeout(1) in front of mpirun, it adds no process that a signal to the group also reaches
# (timeout passes SIGINT on, and a second SIGINT makes mpirun exit at once without waiting for its ranks).
wait_bounded() {
    local pid=$1 limit=$2 i rc=0
    for ((i = 0; i < limit * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -9 "$pid" 2>/dev/null || true
        fail "PID $pid still running after ${limit}s"
    fi
    wait "$pid" || rc=$?
    WAIT_RC=$rc
}

# mpirun_running NP DIR ARGS...: bg_mpirun_session NP ARGS..., then waits up to 60 s for the run's first line in
# DIR/intervals.jsonl (a row, a tick); MP is mpirun's PID.
mpirun_running() {
    local np=$1 dir=$2 _
    shift 2
    bg_mpirun_session "$np" "$@"
    MP=$LAST_PID
    for _ in $(seq 600); do
        [ -s "$dir/intervals.jsonl" ] && return 0
        kill -0 "$MP" 2>/dev/null || { cat "$T/run.err" >&2; fail "mpirun ended before $dir had an interval"; }
        sleep 0.1
    done
    cat "$T/run.err" >&2
    fail "no interval written in $dir after 60 s"
}

# signal_mpirun HOW: term-mpirun (SIGTERM to mpirun $MP), int-group (SIGINT to its process group, as a terminal's
# Ctrl-C), hup-mpirun (SIGHUP); waits for mpirun (60 s at most): WAIT_RC, and TOOK, ms from the signal to its end.
signal_mpirun() {
    local t0
    t0=$(date +%s%N)
    case $1 in
    term-mpirun) kill -TERM "$MP" ;;
    int-group) kill -INT -- "-$MP" ;;
    hup-mpirun) kill -HUP "$MP" ;;
    *) fail "signal_mpirun: $1?" ;;
    esac
    wait_bounded "$MP" 60
    TOOK=$((($(date +%s%N) - t0) / 1000000))
}

# stop_rank RANK SECONDS: SIGSTOP to rank RANK of mpirun $MP, waits for mpirun at most SECONDS, then resumes and
# kills the stopped rank (by PID). R_PID is its PID, WAIT_RC mpirun's status, TOOK seconds from SIGSTOP to the end.
stop_rank() {
    local t0
    R_PID=$(rank_pid "$MP" "$1")
    [ -n "$R_PID" ] || fail "no rank $1 under mpirun $MP"
    t0=$(date +%s)
    kill -STOP "$R_PID"
    wait_bounded "$MP" "$2"
    kill -CONT "$R_PID" 2>/dev/null || true
    kill -9 "$R_PID" 2>/dev/null || true
    TOOK=$(($(date +%s) - t0))
}

# jqr FILE FILTER: prints jq -r output, failing on jq errors.
jqr() { jq -er "$2" "$1"; }

# assert_eq WHAT EXPECTED ACTUAL
assert_eq() {
    [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
    ok "$1 = $3"
}

# assert_jq FILE FILTER WHAT: the jq filter must print true.
assert_jq() {
    local v
    v=$(jq -e "$2" "$1" 2>&1) || fail "$3: jq '$2' on $1 gave: $v"
    ok "$3"
}

# assert_exit EXPECTED WHAT CMD...: runs CMD, checks its status; its stderr goes to $T/stderr.
assert_exit() {
    local expected=$1 what=$2 rc=0; shift 2
    "$@" >"$T/stdout" 2>"$T/stderr" || rc=$?
    [ "$rc" = "$expected" ] || { cat "$T/stderr" >&2; fail "$what: exit $rc, expected $expected"; }
    ok "$what: exit $rc"
}

# assert_stderr_line PATTERN: stderr of the last assert_exit is one line matching PATTERN (grep -E).
assert_stderr_line() {
    local n
    n=$(grep -c . "$T/stderr" || true)
    [ "$n" = 1 ] || { cat "$T/stderr" >&2; fail "expected one stderr line, got $n"; }
    grep -Eq -- "$1" "$T/stderr" || { cat "$T/stderr" >&2; fail "stderr does not match /$1/"; }
    ok "message: $(cat "$T/stderr")"
}

# nginx_user: prints nginx's `user` directive that keeps its workers the invoking user. Started as root,
# nginx would otherwise switch its workers to nobody/www-data, who cannot read a checkout under /root (0700).
nginx_user() {
    [ "$(id -u)" -ne 0 ] || echo "user $(id -un) $(id -gn);"
}

# nginx_start NAME CONF_BODY: starts nginx with the given http{} body in $T/NAME; sets NGINX_PID.
nginx_start() {
    local name=$1 body=$2 dir=$T/$1
    mkdir -p "$dir/logs" "$dir/tmp"
    cat >"$dir/nginx.conf" <<CONF
$(nginx_user)
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    keepalive_requests 1000000;
    $body
}
CONF
    bg nginx -p "$dir" -c "$dir/nginx.conf" -g 'daemon off;'
    NGINX_PID=$LAST_PID
}

# nginx_dav NAME [DIRECTIVES [HTTP_DIRECTIVES]]: nginx in $T/NAME serving $T/NAME/www with a WebDAV /dav/ (PUT and
# DELETE, autoindex JSON for listings) on a free port; extra server DIRECTIVES (e.g. an access_log) go in as given,
# HTTP_DIRECTIVES (e.g. a log_format) into http{}.
# Sets DAV_PORT, DAV_ROOT (the directory behind /dav/) and DAV_URL (http://127.0.0.1:PORT/dav).
nginx_dav() {
    local www=$T/$1/www
    DAV_PORT=$(free_port)
    DAV_ROOT=$www/dav
    mkdir -p "$DAV_ROOT"
    chmod 777 "$DAV_ROOT"
    nginx_start "$1" "${3:-} server {
        listen 127.0.0.1:$DAV_PORT;
        root $www;
        ${2:-}
        location /dav/ { dav_methods PUT DELETE; create_full_put_path on; client_max_body_size 0;
                         autoindex on; autoindex_format json; }
    }"
    wait_port "$DAV_PORT" 60 "nginx WebDAV ($1)"
    DAV_URL=http://127.0.0.1:$DAV_PORT/dav
}

# rgw_up: starts a single-host Ceph RGW (tests/servers/rgw.sh) under $T/rgw; its PIDs join PIDS. Exports
# RGW_ENDPOINT, RGW_VHOST_ENDPOINT, RGW_PORT, RGW_DIR, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
# rgw_bucket NAME [public-read] creates a bucket; RGW_LOG is its per-request (beast access) log.
# rgw_start: the same start in the background, for a test with other work before it needs RGW (start-up is
# mostly waiting on the daemons); rgw_up then waits for that start (5 minutes at most) instead of making its own.
# The daemons of a start no rgw_up waited for are stopped by PID at exit all the same.
rgw_start() {
    chmod go+x "$T" # the daemons drop to the ceph user
    "$ROOT/tests/servers/rgw.sh" start "$T/rgw" >"$T/rgw.env" 2>"$T/rgw.err" &
    RGW_START_PID=$!
    AT_EXIT+=(rgw_start_end)
}
rgw_start_end() {
    wait "$RGW_START_PID" 2>/dev/null || true
    [ ! -f "$T/rgw/pids" ] || mapfile -t -O "${#PIDS[@]}" PIDS <"$T/rgw/pids"
}
rgw_up() {
    local p
    if [ -n "${RGW_START_PID:-}" ]; then
        wait_bounded "$RGW_START_PID" 300
        [ "$WAIT_RC" = 0 ] || fail "Ceph RGW did not start: $(tail -n 1 "$T/rgw.err") (logs: $T/rgw/log)"
    else
        chmod 711 "$T" # the daemons drop to the ceph user
        "$ROOT/tests/servers/rgw.sh" start "$T/rgw" >"$T/rgw.env" 2>"$T/rgw.err" ||
            fail "Ceph RGW did not start: $(tail -n 1 "$T/rgw.err") (logs: $T/rgw/log)"
    fi
    set -a
    # shellcheck disable=SC1091
    . "$T/rgw.env"
    set +a
    for p in $RGW_PIDS; do PIDS+=("$p"); done
    RGW_LOG=$RGW_DIR/log/client.rgw.log
}
# rgw_keys BUCKET PREFIX: how many keys RGW lists under PREFIX (one signed ListObjectsV2 page with curl, up to
# 1,000; SigV4 wants the query's '/' percent-encoded). Fails unless RGW answered a listing.
rgw_keys() {
    local body
    body=$(curl -sS --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
        -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$RGW_ENDPOINT/$1?list-type=2&prefix=${2//\//%2F}")
    grep -q '<ListBucketResult' <<<"$body" || fail "listing $1/$2: $body"
    { grep -o '<Key>' <<<"$body" || true; } | wc -l
}
rgw_bucket() { "$ROOT/tests/servers/rgw.sh" bucket "$RGW_DIR" "$@" || fail "bucket $1 not created"; }
# rgw_seen PATH-REGEX STATUS: how many requests RGW's beast access log shows as "METHOD PATH HTTP/1.1" STATUS.
rgw_seen() { grep -Ec "beast: .*\"$1 HTTP/1.1\" $2 " "$RGW_LOG" || true; }
# rgw_mark NAME: an unsigned GET of /railbench-mark-NAME, waited for (up to 10 s) in RGW's access log. The log is
# written asynchronously but in order, so every request answered before the mark is logged above it.
rgw_mark() {
    local i
    curl -s -o /dev/null "$RGW_ENDPOINT/railbench-mark-$1" || fail "RGW did not answer the mark $1"
    for i in $(seq 50); do
        grep -q "beast: .*\"GET /railbench-mark-$1 HTTP/1.1\"" "$RGW_LOG" && return 0
        sleep 0.2
    done
    fail "RGW's log ($RGW_LOG) did not show the mark $1 within 10 s"
}
# rgw_between A B: how many requests RGW logged between the marks A and B.
rgw_between() {
    awk -v a="GET /railbench-mark-$1 HTTP" -v b="GET /railbench-mark-$2 HTTP" '
        !/beast: / { next }
        index($0, a) { on = 1; n = 0; next }
        index($0, b) { print n; found = 1; exit }
        on { n++ }
        END { if (!found) print "no marks" }' "$RGW_LOG"
}
# rgw_assert_seen WHAT EXPECTED PATH-REGEX STATUS: RGW's log reaches EXPECTED such lines (its log is written
# asynchronously, so give it up to 10 s to catch up; a count past EXPECTED fails at once).
rgw_assert_seen() {
    local n i
    for i in $(seq 50); do
        n=$(rgw_seen "$3" "$4")
        [ "$n" -lt "$2" ] || break
        [ "$i" = 50 ] || sleep 0.2
    done
    assert_eq "$1" "$2" "$n"
}

# serve_objects COUNT BYTES [HTTP_EXTRA [SERVER_EXTRA]]: COUNT random objects of BYTES bytes, $T/www/d/obj-00000000
# ..., served by nginx on a free port of 127.0.0.1 (NGINX_PID); the extras go into the http{} and server{} blocks
# (a log_format, an access_log). Sets PORT.
serve_objects() {
    local i
    chmod 755 "$T"
    mkdir -p "$T/www/d"
    for i in $(seq 0 $(($1 - 1))); do head -c "$2" /dev/urandom >"$T/www/d/$(printf 'obj-%08d' "$i")"; done
    PORT=$(free_port)
    nginx_start web "${3:-} server { listen 127.0.0.1:$PORT; root $T/www; ${4:-} }"
    wait_port "$PORT" 60 "nginx serving $T/www"
}

# loopfs_up NAME SIZE ext4|xfs: a file system on a loop device mounted at $T/NAME/mnt (tests/servers/loopfs.sh),
# unmounted and detached at exit. Sets LOOP_DEV, LOOP_NAME (the diskstats name) and LOOP_MNT.
loopfs_up() {
    "$ROOT/tests/servers/loopfs.sh" mount "$T/$1" "$2" "$3" >"$T/$1.env" || fail "loop file system $3 not mounted"
    AT_EXIT+=("'$ROOT/tests/servers/loopfs.sh' umount '$T/$1'")
    # shellcheck disable=SC1090
    . "$T/$1.env"
}

# cephfs_up: CephFS (tests/servers/cephfs.sh: rgw.sh's monitor and OSD, ceph-mds, a ceph-fuse mount) under $T/cephfs,
# unmounted and stopped at exit. Sets CEPHFS_MNT, CEPHFS_FUSE_PID, CEPHFS_CONF and rgw.sh's variables (RGW_ENDPOINT...).
cephfs_up() {
    chmod 711 "$T" # the daemons drop to the ceph user
    AT_EXIT+=("'$ROOT/tests/servers/cephfs.sh' stop '$T/cephfs' >/dev/null 2>&1")
    "$ROOT/tests/servers/cephfs.sh" start "$T/cephfs" >"$T/cephfs.env" || fail "CephFS did not start (logs: $T/cephfs/log)"
    set -a
    # shellcheck disable=SC1091
    . "$T/cephfs.env"
    set +a
}
