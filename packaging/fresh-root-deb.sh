# The Debian package in a pristine Debian 12 root (docs/setup.md): passed to ../shared/tools/fresh-debian.sh as
#   ../shared/tools/fresh-debian.sh -- "$(cat packaging/fresh-root-deb.sh)"
# It runs in the clone (/root/src) of the fresh root; no single quotes (the tool wraps the text in them).
export DEBIAN_FRONTEND=noninteractive
git log -1 --oneline; git describe --tags
s=$SECONDS; apt-get update -qq && apt-get install -y -qq --no-install-recommends dpkg-dev >/dev/null && apt-get build-dep -y -qq ./ >/root/build-dep.log 2>&1; rc=$?; echo "STEP apt-get build-dep ./: exit $rc, $((SECONDS-s)) s"; [ $rc = 0 ] || { tail -20 /root/build-dep.log; exit $rc; }
s=$SECONDS; dpkg-buildpackage -us -uc -b >/root/build.log 2>&1; rc=$?; echo "STEP dpkg-buildpackage -us -uc -b: exit $rc, $((SECONDS-s)) s"; [ $rc = 0 ] || { tail -30 /root/build.log; exit $rc; }
ls -l /root/*.deb
rm -rf /root/src/build; cd /root
printf "#!/bin/sh\nexit 101\n" >/usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d
s=$SECONDS; apt-get install -y -qq ./railbench_*.deb >/root/install.log 2>&1; rc=$?; echo "STEP apt-get install ./railbench_*.deb: exit $rc, $((SECONDS-s)) s"; [ $rc = 0 ] || { tail -20 /root/install.log; exit $rc; }
cd /; command -v railbench; railbench version; rc=$?; echo "STEP railbench version: exit $rc"
apt-get install -y -qq man-db nginx >/root/install2.log 2>&1 || { tail /root/install2.log; exit 3; }
MANPAGER=cat man railbench | head -n 12; rc=${PIPESTATUS[0]}; echo "STEP man railbench: exit $rc"
MANPAGER=cat man railbench-load | grep -c "(default: "; echo "STEP man railbench-load: lines with a default above"
ls /usr/share/railbench /usr/share/bash-completion/completions/railbench
chmod 755 /   # the tool makes / with mktemp -d (0700); on a real machine / is 0755 (scripts/deps.sh does the same)
mkdir -p /tmp/www/data; for i in 0 1 2 3 4 5 6 7 8 9; do head -c 65536 /dev/urandom >/tmp/www/data/$(printf obj-%08d $i); done
port=38123; while (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; do port=$((port + 1)); done
printf "pid /tmp/ng.pid;\nerror_log /tmp/ng.err;\nevents {}\nhttp { access_log off; server { listen 127.0.0.1:$port; root /tmp/www; } }\n" >/tmp/ng.conf
nginx -c /tmp/ng.conf || exit 3
s=$SECONDS; railbench load get http://127.0.0.1:$port/data --objects 10 --count 200 --out /tmp/get; rc=$?; echo "STEP railbench load get against nginx on 127.0.0.1:$port: exit $rc, $((SECONDS-s)) s"
kill $(cat /tmp/ng.pid)
grep -o "\"version\": *\"[^\"]*\"" /tmp/get/result.json; grep -o "\"count\": *[0-9]*" /tmp/get/result.json | head -n 2
exit $rc
