#!/usr/bin/env bash
# needs: deb
# The Debian package: `dpkg-buildpackage -us -uc -b` in a clone of this commit builds
# railbench_<version>_amd64.deb, the version derived from git describe (debian/version.sh), once per commit
# (packaging/deb-of-head.sh under build/image: container_image's make image uses the same build); lintian finds no
# error or warning; the package holds the binary, six man pages, the bash completion, the Grafana dashboards and
# the Ansible playbooks under /usr/share/railbench, and declares the runtime libraries and Open MPI. Unpacked
# (not installed: this machine is shared), its binary runs and reports the version, its man pages render.
# The install in a pristine Debian 12 root is docs/setup.md's fresh-root run.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

# 1. The version mapping.
for pair in v0.1.0=0.1.0 v0.1.0-12-g1a2b3c4=0.1.0+12.g1a2b3c4 v0.1.0-12-g1a2b3c4-dirty=0.1.0+12.g1a2b3c4+dirty; do
    assert_eq "debian/version.sh ${pair%%=*}" "${pair#*=}" "$("$ROOT/debian/version.sh" "${pair%%=*}")"
done
dpkg --compare-versions 0.1.0+12.g1a2b3c4 gt 0.1.0 && dpkg --compare-versions 0.1.0+12.g1a2b3c4 lt 0.1.1 ||
    fail "0.1.0+12.g1a2b3c4 does not sort between 0.1.0 and 0.1.1"
ok "snapshot versions sort after their tag and before the next"

# 2. Build from a clone of HEAD (what is committed; the build writes its products beside the source). A build
# of this commit that is there already (make image's, or this test's last run) is the same package.
describe=$(git -C "$ROOT" describe --tags --match 'v[0-9]*' --always HEAD)
want=$("$ROOT/debian/version.sh" "$(git -C "$ROOT" describe --tags --match 'v[0-9]*' HEAD 2>/dev/null || true)")
[ -n "$want" ] || want=$(dpkg-parsechangelog -l "$ROOT/debian/changelog" -S Version)
deb=$("$ROOT/packaging/deb-of-head.sh" "$ROOT/build/image") || fail "dpkg-buildpackage failed"
assert_eq "the package of HEAD" "railbench_${want}_amd64.deb" "$(basename "$deb")"
grep -q "^dpkg-buildpackage: info: binary-only upload" "$(dirname "$deb")/build.log" ||
    { tail -n 30 "$(dirname "$deb")/build.log" >&2; fail "no dpkg-buildpackage -b in $(dirname "$deb")/build.log"; }
ok "built $(basename "$deb") by dpkg-buildpackage -us -uc -b in a clone of $(git -C "$ROOT" rev-parse --short HEAD)"

# 3. lintian: no errors, no warnings.
lintian --fail-on error,warning "$deb" >"$T/lintian.out" 2>&1 || { cat "$T/lintian.out" >&2; fail "lintian"; }
ok "lintian: no error or warning"

# 4. What it holds and declares.
dpkg-deb -c "$deb" | awk '{print $NF}' >"$T/files"
for f in ./usr/bin/railbench ./usr/share/man/man1/railbench.1.gz ./usr/share/man/man1/railbench-load.1.gz \
    ./usr/share/man/man1/railbench-coll.1.gz ./usr/share/man/man1/railbench-block.1.gz \
    ./usr/share/man/man1/railbench-fabric.1.gz ./usr/share/man/man1/railbench-report.1.gz \
    ./usr/share/bash-completion/completions/railbench ./usr/share/railbench/grafana/dashboards/railbench-load.json \
    ./usr/share/railbench/ansible/bench.yml ./usr/share/doc/railbench/copyright; do
    grep -qxF "$f" "$T/files" || fail "the package lacks $f"
done
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libcurl4 libcjson1 libmicrohttpd12 libhwloc15 libhttp-parser2.9 libopenmpi3 openmpi-bin; do
    grep -q "\b$lib\b" <<<"$depends" || fail "Depends lacks $lib: $depends"
done
assert_eq "package version" "$want" "$(dpkg-deb -f "$deb" Version)"
ok "files and Depends: $depends"

# 5. Unpacked, it runs: the version it reports is the checkout's git describe; a result records it.
dpkg-deb -x "$deb" "$T/x"
line=$("$T/x/usr/bin/railbench" version | head -n 1)
assert_eq "railbench version" "railbench $describe" "$line"
"$T/x/usr/bin/railbench" fabric overhead --quiet --out "$T/run" >/dev/null
assert_jq "$T/run/result.json" ".version == \"${line#railbench }\"" "result.json records version ${line#railbench }"
grep -q 'path: /usr/share/railbench/grafana/dashboards$' "$T/x/usr/share/railbench/grafana/provisioning/dashboards/railbench.yml" ||
    fail "the packaged Grafana provisioning does not point at /usr/share/railbench/grafana/dashboards"
ok "the packaged Grafana provisioning loads the dashboards from /usr/share/railbench"
grep -q -- '--inflight N' <<<"$(MANPAGER=cat MANPATH=$T/x/usr/share/man man railbench-load 2>/dev/null)" ||
    fail "the packaged railbench-load(1) does not render"
ok "the packaged man pages render"

