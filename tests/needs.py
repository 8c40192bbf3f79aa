#!/usr/bin/env python3
"""What each integration test needs, declared on its second line as '# needs: TAG...' ('# needs: -' for
nothing), and checked against what the script calls. scripts/run-tests.sh schedules and skips by these tags.

Tags: mpi (mpirun on this host), ceph (a Ceph cluster: RGW or CephFS), root (loop devices, mounts, FUSE,
network namespaces, containers), netns (network namespaces or a container network: veths on the host),
host-net (reads the host's interface counters, so it never runs beside a netns test; declared by hand),
deb (builds or waits for the Debian package of HEAD, packaging/deb-of-head.sh: one such test runs at a time, so
that the second does not hold a place while it waits on the first's build).

Usage: needs.py check ROOT     every tests/integration/*.sh declares exactly what it calls; exit 1 otherwise
       needs.py show ROOT      NAME<TAB>TAGS for every test (what run-tests.sh reads)
"""
import pathlib
import re
import sys

DERIVED = {
    "mpi": r"\brb_mpirun\b|\bMPIRUN\[|\bbg_mpirun_session\b|^\s*mpirun\b",
    "ceph": r"\brgw_up\b|\bcephfs_up\b|tests/servers/(rgw|cephfs)\.sh|scripts/servers\.sh up",
    "root": r"\bloopfs_up\b|\blosetup\b|\bcephfs_up\b|cluster_lib\.sh|\bip netns (add|exec)\b|\bpodman\b|\bunshare\b",
    "netns": r"cluster_lib\.sh|\bip netns add\b|\bpodman\b",
    "deb": r"packaging/(deb-of-head|image/build)\.sh",
}
BY_HAND = {"host-net"}
TAGS = set(DERIVED) | BY_HAND


def declared(text):
    lines = text.splitlines()
    if len(lines) < 2 or not lines[1].startswith("# needs:"):
        return None
    words = lines[1][len("# needs:"):].split()
    return set() if words == ["-"] else set(words)


def derived(text):
    body = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
    return {tag for tag, rx in DERIVED.items() if re.search(rx, body, re.M)}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("check", "show"):
        sys.exit(__doc__)
    scripts = sorted(pathlib.Path(sys.argv[2], "tests", "integration").glob("*.sh"))
    bad = 0
    for s in scripts:
        text = s.read_text()
        have, want = declared(text), derived(text)
        if sys.argv[1] == "show":
            print(f"{s.stem}\t{' '.join(sorted(have or ()))}")
            continue
        if have is None:
            print(f"{s.name}: line 2 is not '# needs: ...' (it calls: {' '.join(sorted(want)) or '-'})")
            bad += 1
            continue
        unknown = have - TAGS
        missing = want - have
        extra = have - want - BY_HAND
        for what, tags in (("unknown tag", unknown), ("calls but does not declare", missing),
                           ("declares but does not call", extra)):
            if tags:
                print(f"{s.name}: {what}: {' '.join(sorted(tags))}")
                bad += 1
    if sys.argv[1] == "check":
        print(f"needs: {len(scripts)} tests, {bad} problems")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
