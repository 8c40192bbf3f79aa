#!/usr/bin/env bash
# needs: -
# Kernel TLS on the native engine, and what it leaves OpenSSL to allocate per request. This machine's kernel has no
# `tls` module, so the test boots a user-mode Linux 6.1 guest (Debian's user-mode-linux: its kernel builds `tls` as a
# module) on this machine's own files (hostfs) and runs nginx and railbench inside it, over the guest's loopback:
# 1 KiB GETs over TLS 1.2 and over TLS 1.3, first without the module (OpenSSL encrypts: allocations per request
# as on this machine, 2 and 4), then with it loaded (the kernel encrypts what is sent: every connection counted in
# `tls.kernel_tls`; on TLS 1.2 the kernel decrypts too and the engine allocates nothing per request; OpenSSL 3.0
# still reads TLS 1.3 records itself, one allocation each). Allocations are counted by tests/alloc_shim.c on the
# worker threads, for N1 and N2 requests (start-up and teardown cancel out in the difference).
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

N1=50
N2=550
if [ "${1:-}" = --guest ]; then
    # Inside the guest (PID 1's child, tests/lib.sh's own T): $2 is the host test's T, where the results go.
    OUT=$2 MOD=$3
    self_signed_cert ec
    # The guest forks slowly: 100 objects of 1 KiB (obj-00000000 ... obj-00000099) from one read, one split.
    mkdir -p "$T/www/1k"
    head -c $((100 * 1024)) /dev/urandom | (cd "$T/www/1k" && split -b 1024 -d -a 8 - obj-)
    [ "$(find "$T/www/1k" -name 'obj-000000[0-9][0-9]' -size 1024c | wc -l)" = 100 ] || fail "the 100 objects of 1 KiB"
    read -r P12 P13 <<<"$(free_port 2 | tr '\n' ' ')"
    tls_server() { # PORT VERSION
        echo "server { listen 127.0.0.1:$1 ssl; root $T/www; keepalive_requests 1000000; ssl_protocols TLSv$2;
            ssl_certificate $T/cert.pem; ssl_certificate_key $T/key.pem; }"
    }
    nginx_start web "$(tls_server "$P12" 1.2) $(tls_server "$P13" 1.3)"
    wait_port "$P12" 60 "nginx (TLS 1.2) in the guest"
    wait_port "$P13" 60 "nginx (TLS 1.3) in the guest"
    run() { # LABEL PORT REQUESTS: GETs on the native engine under the counting shim
        ALLOC_COUNT_OUT=$OUT/allocs-$1-$3 LD_PRELOAD=$OUT/shim.so "$RB" load get "https://127.0.0.1:$2/1k" --insecure \
            --objects 100 --count "$3" --engine native -c 4 --interval 1h --out "$OUT/r-$1-$3" --quiet >/dev/null
    }
    for v in 12 13; do
        port=P$v
        run "user-$v" "${!port}" "$N1"
        run "user-$v" "${!port}" "$N2"
    done
    # The kernel's TLS module and the AEAD it asks the crypto API for (gcm(aes)), loaded by path (no kmod here), in
    # this order, by one Python (each start of one is slow in the guest).
    python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY)
    if libc.syscall(313, fd, b"", 0) != 0:  # finit_module (x86-64)
        sys.exit("finit_module %s: %s" % (path, os.strerror(ctypes.get_errno())))
    os.close(fd)' "$MOD"/{crypto/gf128mul,crypto/ghash-generic,crypto/ctr,crypto/gcm,crypto/seqiv,net/tls/tls}.ko
    grep -qw tls /proc/sys/net/ipv4/tcp_available_ulp || fail "the tls module loaded, but the kernel offers no tls ULP"
    for v in 12 13; do
        port=P$v
        run "kernel-$v" "${!port}" "$N1"
        run "kernel-$v" "${!port}" "$N2"
    done
    ok "guest: 8 runs"
    exit 0
fi

UML=/usr/bin/linux.uml
[ -x "$UML" ] || fail "$UML missing (Debian package user-mode-linux): run scripts/deps.sh"
KVER=$(basename "$(find /usr/lib/uml/modules -mindepth 1 -maxdepth 1 -type d | sort | tail -n 1)")
MOD=/usr/lib/uml/modules/$KVER/kernel
[ -f "$MOD/net/tls/tls.ko" ] || fail "no tls.ko under $MOD (user-mode-linux's modules)"
cc -O2 -shared -fPIC -o "$T/shim.so" "$ROOT/tests/alloc_shim.c"
chmod 755 "$T"
# PID 1 of the guest: its own /proc, /sys, /dev/shm and /run over the host's directories (the guest's mounts only),
# its loopback up, this script as the guest, then power off (the reboot system call), which ends the UML process.
cat >"$T/init.sh" <<EOF
#!/bin/bash
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
mount -t proc proc /proc && mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
ln -sfn /proc/self/fd /dev/fd
mkdir -p /dev/shm /dev/pts && mount -t tmpfs shm /dev/shm && mount -t devpts pts /dev/pts && mount -t tmpfs run /run
ip link set lo up
rc=0
timeout 480 bash "$ROOT/tests/integration/loader_ktls.sh" --guest "$T" "$MOD" >"$T/guest.log" 2>&1 || rc=\$?
echo "\$rc" >"$T/guest.rc"
python3 -c 'import ctypes; ctypes.CDLL(None).reboot(0x4321fedc)'
EOF
chmod 755 "$T/init.sh"
# shellcheck disable=SC2217 # (the redirections are bg's command's)
bg timeout --kill-after=10 540 "$UML" mem=1536M rootfstype=hostfs rootflags=/ rw init="$T/init.sh" \
    con0=fd:0,fd:1 con=null </dev/null >"$T/uml.log" 2>&1
wait "$LAST_PID" || true
[ -s "$T/guest.rc" ] || { tail -n 20 "$T/uml.log" >&2; fail "the user-mode Linux guest ended before its test did (its console above)"; }
cat "$T/guest.log"
[ "$(cat "$T/guest.rc")" = 0 ] || fail "the guest's part failed (exit $(cat "$T/guest.rc"))"
ok "user-mode Linux $KVER guest ran the 8 runs"

# Each run: every request answered with its 1 KiB, on connections all counted; kernel TLS on every one or none.
for label in user-12 user-13 kernel-12 kernel-13; do
    for n in $N1 $N2; do
        r=$T/r-$label-$n/result.json
        assert_jq "$r" ".summary.ops[0] | .requests == $n and .bytes == $n * 1024 and .errors.total == 0" \
            "$label, $n GETs: $n answers of 1 KiB, no error"
        if [[ $label == kernel-* ]]; then
            assert_jq "$r" '.summary.ops[0].tls | .handshakes >= 1 and .kernel_tls == .handshakes' \
                "$label, $n GETs: every connection on kernel TLS"
        else
            assert_jq "$r" '.summary.ops[0].tls | .handshakes >= 1 and .kernel_tls == 0' \
                "$label, $n GETs: no connection on kernel TLS without the module"
        fi
    done
done
# Allocations per further request, in thousandths (the difference of the two runs over N2 - N1 requests; a run's
# start-up and teardown vary by a few allocations, so none per request reads as a few thousandths either way).
per_req() { echo $((($(cat "$T/allocs-$1-$N2") - $(cat "$T/allocs-$1-$N1")) * 1000 / (N2 - N1))); }
check_allocs() { # LABEL MIN MAX (thousandths) WHAT
    local a
    a=$(per_req "$1")
    if [ "$a" -lt "$2" ] || [ "$a" -gt "$3" ]; then
        fail "$4: $a thousandths of an allocation per request, expected $2..$3"
    fi
    ok "$4: $a thousandths of an allocation per request"
}
check_allocs user-12 1990 2010 "TLS 1.2, OpenSSL encrypting: 2 per request (1 KiB GET, a record each way)"
check_allocs user-13 3990 4010 "TLS 1.3, OpenSSL encrypting: 4 per request"
check_allocs kernel-12 -10 10 "TLS 1.2 on kernel TLS: none per request"
check_allocs kernel-13 990 1010 "TLS 1.3 on kernel TLS: 1 per request (OpenSSL 3.0 reads TLS 1.3 records itself)"
