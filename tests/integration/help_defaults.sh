#!/usr/bin/env bash
# needs: -
# One default per option, and help, docs and the resolved config agree: every command the binary lists has
# its --help defaults compared with the option tables of the pages under docs/ (tests/help_defaults.py,
# docs/options.md "Option tables"); a mismatch planted in a copy of docs/ is caught; and for a sample of
# commands, a run given every default exactly as --help prints it resolves to the same config as a run given
# none.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
CHECK=$ROOT/tests/help_defaults.py

# 1. The docs as they are: no problem, and the comparison covered the whole binary.
python3 "$CHECK" "$RB" "$ROOT/docs" >"$T/check.out" || { cat "$T/check.out" >&2; fail "help and docs disagree"; }
read -r ncmd _ nrows _ _ _ ndef _ < <(tail -n 1 "$T/check.out" | tr -d ,)
[ "$ncmd" -ge 25 ] && [ "$nrows" -ge 150 ] && [ "$ndef" -ge 300 ] ||
    fail "the check covered too little: $(tail -n 1 "$T/check.out")"
ok "help and docs agree: $(tail -n 1 "$T/check.out")"

# 2. It can fail: one default changed in a copy of docs/, one row with a hand-written default, one default
#    claimed where --help shows none, a row gone, a section's "Other options are those of" gone; each is
#    named, with its page and line.
plant() { # WHAT SED-EXPRESSION EXPECTED-LINE-PATTERN
    rm -rf "$T/docs" && cp -r "$ROOT/docs" "$T/docs"
    sed -i "$2" "$T"/docs/*.md
    diff -rq "$ROOT/docs" "$T/docs" >/dev/null && fail "$1: the plant changed nothing"
    if python3 "$CHECK" "$RB" "$T/docs" >"$T/plant.out"; then fail "$1: not caught"; fi
    grep -Eq -- "$3" "$T/plant.out" || { cat "$T/plant.out" >&2; fail "$1: caught, but not as expected"; }
    ok "$1: caught: $(grep -E -- "$3" "$T/plant.out" | head -n 1)"
}
plant "get's --timeout 31s" 's/| per request (default `30s`;/| per request (default `31s`;/' \
    '^docs/load.md:[0-9]+: --timeout \(load put, load get\): --help says default `30s`, docs say `31s`$'
plant "block --rwmix without backticks" 's/fio.s `rwmixread=`, default `50%`)/fio'"'"'s `rwmixread=`, default 50)/' \
    '^docs/block.md:[0-9]+: --rwmix \(block\): --help says default `50%`, docs say none$'
plant "a default for --slo" 's/`lat p99<=1ms` (see \*SLO\*)/`lat p99<=1ms` (default `p99<=1ms`; see *SLO*)/' \
    "^docs/block.md:[0-9]+: --slo \(block\): docs say default \`p99<=1ms\`, --help shows none$"
plant "block's --ramp row gone" '/^| `--ramp D` |/d' \
    '^block --ramp: --help says default `0s`, and no docs row names it$'
plant "load list without load get's options" '/^## `railbench load list`/,/^## `railbench load tiers`/{/^Other options are those of/d}' \
    '^load list --region: --help says default `\$AWS_REGION, else us-east-1`, and no docs row names it$'
plant "get's --size given put's default" 's/(get default `0`: not known)/(get default `1MiB`: not known)/' \
    '^docs/load.md:[0-9]+: --size \(load get\): --help says default `0`, docs say `1MiB`$'

# 3. The resolved config: each sample command run once with its own arguments only, once with every other
#    option that --help shows a default for given as --help prints it (--opt=VALUE); both configs equal.
same_defaults() { # NAME COMMAND-WORDS... -- ARGS...
    local name=$1 words=() args=() extra=() k v short; shift
    while [ "$1" != -- ]; do words+=("$1"); shift; done
    shift
    args=("$@")
    while IFS=$'\t' read -r k v short; do
        [[ " ${args[*]} " == *" $k "* || " ${args[*]} " == *" $short "* ]] && continue
        if [ -n "$v" ]; then extra+=("$k=$v"); else extra+=("$k"); fi
    done < <(python3 "$CHECK" "$RB" "$ROOT/docs" --defaults "${words[@]}")
    [ "${#extra[@]}" -ge 1 ] || fail "$name: only ${#extra[@]} defaults to give"
    "$RB" "${words[@]}" "${args[@]}" --quiet --out "$T/$name-a" >/dev/null 2>"$T/$name-a.err" ||
        { cat "$T/$name-a.err" >&2; fail "$name: the run without defaults failed"; }
    "$RB" "${words[@]}" "${args[@]}" "${extra[@]}" --quiet --out "$T/$name-b" >/dev/null 2>"$T/$name-b.err" ||
        { cat "$T/$name-b.err" >&2; fail "$name: the run given ${extra[*]} failed"; }
    local strip='.config | del(.out)'
    diff <(jq -S "$strip" "$T/$name-a/result.json") <(jq -S "$strip" "$T/$name-b/result.json") >&2 ||
        fail "$name: giving --help's defaults (${extra[*]}) changed the resolved config"
    ok "$name: ${#extra[@]} defaults given as --help prints them resolve as none given"
}
same_defaults overhead fabric overhead -- --size 1MiB
same_defaults sim fabric sim allreduce -- --nodes 4
same_defaults counters fabric counters -- --duration 1s
same_defaults coll coll allreduce -- -b 8 -e 64 -n 2 -w 1
same_defaults block block -- --allow-root-fs --target "$T/blk" --size 4M --iodepth 1 --runtime 1s
mkdir -p "$T/www/d"
for i in 0 1; do head -c 4096 /dev/urandom >"$T/www/d/obj-0000000$i"; done
PORT=$(free_port)
nginx_start web "server { listen 127.0.0.1:$PORT; root $T/www; }"
wait_port "$PORT"
same_defaults get load get -- "http://127.0.0.1:$PORT/d" --objects 2 --count 4

# fabric overhead's --mtu default is 9000 bytes, shown so that it parses back to 9000 (9KB would, but reads
# like 9k = 9,216); the run records 9000.
assert_jq "$T/overhead-a/result.json" '.config.mtu == [9000]' "overhead: --mtu default recorded as 9000"
grep -q -- '--mtu BYTES,.*(default: 9000)$' <<<"$("$RB" fabric overhead --help)" || fail "overhead --help: --mtu not 9000"
ok "overhead --help shows --mtu default 9000"
