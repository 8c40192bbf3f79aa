#!/usr/bin/env bash
# Runs every benchmark: compiled ones in build/bench/, then tests/bench/*.sh. Each prints ratios against a reference.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
for b in build/bench/*; do
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    "$b"
done
for s in tests/bench/*.sh; do
    [ -e "$s" ] || continue
    if [ -n "${BENCH:-}" ] && ! [[ $s =~ $BENCH ]]; then continue; fi
    echo "== $(basename "$s" .sh)"
    bash "$s"
done
