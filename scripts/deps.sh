#!/usr/bin/env bash
# Installs the Debian and npm packages every make target and test needs; idempotent.
# Usage: scripts/deps.sh          install what is missing (as root; otherwise name what is missing, exit 3)
#        scripts/deps.sh --list   print the Debian packages, one a line (tests/integration/deps_complete.sh)
# Adding a tool: put its Debian package in pkgs below; deps_complete fails while a script calls a tool
# whose package this list does not bring in.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)

pkgs=(
  # build, make check (gcc's ASan/UBSan), make fuzz (clang with its sanitizer and libFuzzer runtimes), make lint
  build-essential pkg-config git clang libclang-rt-14-dev cppcheck shellcheck
  libcurl4-openssl-dev libcjson-dev libmicrohttpd-dev libhwloc-dev hwloc libcmocka-dev
  libopenmpi-dev openmpi-bin
  # servers and tools the tests, demo and benchmarks start or call
  fio nginx prometheus prometheus-pushgateway wrk curl jq python3
  # tests/bench/fabric_check_iperf3.sh: the reference fabric check is held against
  iperf3
  iproute2 iputils-ping openssh-server openssh-client ansible ansible-lint
  nodejs chromium graphviz
  slurm-wlm munge time
  ceph-mon ceph-osd radosgw ceph-common python3-boto3
  libhttp-parser-dev
  # tests/schema_check.py: every result.json the integration tests make, against schemas/
  python3-jsonschema
  # the native engine: SigV4's SHA-256/HMAC (libcrypto) and HTTPS (libssl)
  libssl-dev
  # the Debian package (dpkg-buildpackage with debhelper, checked by lintian), the man pages (man, nroff) and
  # the bash completion it installs (tests/integration/man_completion.sh, deb_package.sh)
  debhelper lintian man-db bash-completion
  # the file protocol: io_uring engine (liburing), CephFS as the shared file system (ceph-mds, ceph-fuse,
  # fuse3's fusermount3), XFS and ext4 on loop devices (xfsprogs, e2fsprogs; losetup from mount)
  liburing-dev ceph-mds ceph-fuse fuse3 xfsprogs e2fsprogs mount
  # tests/integration/fabric_check.sh: which TCP_NODELAY each end of a data connection set (strace of setsockopt);
  # tests/integration/loader_io_loop_engine.sh: system calls per request of the native engine's two loops (strace -c)
  strace
  # tests/bench/engine_cpu.sh with BENCH_PERF=1: system calls and context switches per request (perf stat)
  linux-perf
  # tests/bench/phases_instr.sh: instructions per request with and without --phases (callgrind, load-independent)
  valgrind
  # tests/integration/loader_ktls.sh: a user-mode Linux guest whose kernel has the tls module (kernel TLS)
  user-mode-linux
  # make image and tests/integration/container_image.sh: a Debian 12 root (mmdebstrap), the image built and run
  # rootful with the runc runtime (podman, runc; catatonit for kube play's pause image; the CNI plugins,
  # fuse-overlayfs; uidmap and slirp4netns for rootless use); tests/k8s/validate.py: manifests against the
  # Kubernetes API's models (python3-kubernetes)
  podman runc catatonit mmdebstrap containernetworking-plugins fuse-overlayfs uidmap slirp4netns python3-kubernetes
  # --format jpeg (libjpeg-turbo's encoder and decoder); Prometheus native histograms in the protobuf exposition
  # format (protobuf-c and its compiler); independent readers of what railbench writes: numpy (.npy, .npz) and
  # Pillow (JPEG) under Debian's /usr/bin/python3
  libjpeg62-turbo-dev libprotobuf-c-dev protobuf-c-compiler python3-numpy python3-pil
  # --format npz: the zip members' CRC-32 (zlib)
  zlib1g-dev
)
# Debian's nodejs needs Debian's npm package; a Node.js build that bundles its own npm (NodeSource's nodejs
# package) conflicts with it. So: npm, unless an npm is installed that some other package brought.
npm_path=$(command -v npm 2>/dev/null || true)
if [ -z "$npm_path" ] || dpkg-query -S "$(readlink -f "$npm_path")" 2>/dev/null | grep -q '^npm:'; then
  pkgs+=(npm)
fi

if [ "${1:-}" = --list ]; then
  printf '%s\n' "${pkgs[@]}"
  exit 0
fi
[ $# -eq 0 ] || { echo "deps.sh: unknown argument '$1'; usage: scripts/deps.sh [--list]" >&2; exit 2; }

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "deps.sh: missing packages: ${missing[*]} (run as root to install them)" >&2
    exit 3
  fi
  echo "deps.sh: installing ${#missing[@]} Debian packages (the first time takes a few minutes): ${missing[*]}"
  # Keep package scripts from starting nginx/prometheus/ssh daemons: tests start
  # exactly the servers they need, on free ports.
  policy=/usr/sbin/policy-rc.d
  made_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod +x "$policy"; made_policy=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  # munge's and ceph's postinst scripts run commands as their own system users, which need / searchable.
  # A root made by a chroot tool can be mode 0700 (a real system's / is 0755): make it searchable.
  [ -n "$(find / -maxdepth 0 -perm -o+x)" ] || chmod go+rx /
  apt_log=$(mktemp /tmp/railbench-deps.XXXXXX)
  rc=0
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$apt_log" 2>&1 || rc=$?
  [ $made_policy -eq 1 ] && rm -f "$policy"
  if [ $rc -ne 0 ]; then
    tail -n 30 "$apt_log" >&2
    echo "deps.sh: apt-get failed (exit $rc); its whole output: $apt_log" >&2
    exit 3
  fi
  rm -f "$apt_log"
fi

# npm packages pinned by a package-lock.json in a directory under tests/ (s3rver in tests/servers, ...):
# `npm ci` there when node_modules is missing or older than the lock file.
for lock in "$here"/tests/*/package-lock.json; do
  [ -e "$lock" ] || continue
  dir=$(dirname "$lock")
  [ "$dir/node_modules/.package-lock.json" -nt "$lock" ] && continue
  echo "deps.sh: installing the npm packages of ${dir#"$here"/} (npm ci)"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
done
exit 0
