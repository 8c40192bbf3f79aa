#!/usr/bin/env bash
# Installs the Debian and npm packages railbench and its tests need; idempotent.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)

pkgs=(
  build-essential pkg-config git cppcheck clang shellcheck
  libcurl4-openssl-dev libcjson-dev libmicrohttpd-dev libhwloc-dev hwloc libcmocka-dev
  libopenmpi-dev openmpi-bin
  fio nginx prometheus prometheus-pushgateway wrk curl jq python3
  iproute2 iputils-ping openssh-server openssh-client ansible ansible-lint
  nodejs chromium graphviz
  slurm-wlm munge
  ceph-mon ceph-osd radosgw ceph-common python3-boto3
)
# Some Node.js builds bundle npm and conflict with Debian's npm package.
command -v npm >/dev/null 2>&1 || pkgs+=(npm)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "deps.sh: missing packages: ${missing[*]} (run as root to install them)" >&2
    exit 3
  fi
  echo "deps.sh: installing ${missing[*]}"
  # Keep package scripts from starting nginx/prometheus/ssh daemons: tests start
  # exactly the servers they need, on free ports.
  policy=/usr/sbin/policy-rc.d
  made_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod +x "$policy"; made_policy=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  [ $made_policy -eq 1 ] && rm -f "$policy"
fi

# s3rver, pinned by tests/servers/package-lock.json.
if [ -f "$here/tests/servers/package-lock.json" ] && [ ! -x "$here/tests/servers/node_modules/.bin/s3rver" ]; then
  echo "deps.sh: installing s3rver (npm ci)"
  (cd "$here/tests/servers" && npm ci --no-audit --no-fund --loglevel=error)
fi
# @grafana/schema and the TypeScript compiler that checks the dashboards against it, pinned by tests/grafana/package-lock.json.
if [ -f "$here/tests/grafana/package-lock.json" ] && { [ ! -d "$here/tests/grafana/node_modules/@grafana/schema" ] ||
    [ ! -f "$here/tests/grafana/node_modules/typescript/package.json" ]; }; then
  echo "deps.sh: installing @grafana/schema (npm ci)"
  (cd "$here/tests/grafana" && npm ci --no-audit --no-fund --loglevel=error)
fi
exit 0
