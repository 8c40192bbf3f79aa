#!/usr/bin/env bash
# needs: -
# Man pages and bash completion are generated from the option tables that drive --help (scripts/gen-man.py
# reads RAILBENCH_HELP=json), installed by `make install`, and agree with --help on every option of every
# command (tests/man_completion.py): text and default in man, option names and choice values in completion.
# Planted differences in copies are caught.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
CHECK=$ROOT/tests/man_completion.py

# 1. What `make install` puts in place, read the way a user reads it.
make -s -C "$ROOT" install DESTDIR="$T/inst" PREFIX=/usr >"$T/install.out" 2>&1 ||
    { cat "$T/install.out" >&2; fail "make install"; }
for f in bin/railbench share/man/man1/railbench.1 share/man/man1/railbench-load.1 share/man/man1/railbench-coll.1 \
    share/man/man1/railbench-block.1 share/man/man1/railbench-fabric.1 share/man/man1/railbench-report.1 \
    share/bash-completion/completions/railbench share/railbench/grafana/dashboards share/railbench/ansible/run.yml; do
    [ -e "$T/inst/usr/$f" ] || fail "make install did not install /usr/$f"
done
ok "make install: binary, 6 man pages, bash completion, Grafana dashboards and Ansible playbooks"

MANPAGER=cat MANWIDTH=200 MANPATH=$T/inst/usr/share/man man railbench-load >"$T/man-load.txt" 2>"$T/man.err" ||
    { cat "$T/man.err" >&2; fail "man railbench-load"; }
grep -q '^RAILBENCH-LOAD(1)' "$T/man-load.txt" || fail "man railbench-load: no title"
# Every load option with its default, as --help prints it (the full comparison is step 2).
n=0
for c in put get delete stat mixed list tiers sweep train; do
    while read -r def; do
        grep -qF -- "$def" "$T/man-load.txt" || fail "man railbench-load lacks '$def' (load $c --help)"
        n=$((n + 1))
    done < <("$RB" load "$c" --help | grep -o '(default: [^)]*)\|default: [^)]*)$' | sort -u)
done
[ "$n" -ge 80 ] || fail "only $n defaults of load commands seen"
ok "man railbench-load shows every load default --help shows ($n checked)"
grep -q 'railbench-load(1)' <<<"$(MANPAGER=cat MANPATH=$T/inst/usr/share/man man railbench 2>/dev/null)" ||
    fail "man railbench does not point to railbench-load(1)"
ok "man railbench lists the commands and their pages"

# 2. Man pages and completion against --help, for every command: the installed copies.
python3 "$CHECK" "$RB" "$T/inst/usr/share/man" "$T/inst/usr/share/bash-completion/completions/railbench" \
    >"$T/check.out" || { cat "$T/check.out" >&2; fail "man, completion and --help disagree"; }
read -r ncmd _ npages _ _ nq _ < <(tail -n 1 "$T/check.out" | tr -d ,)
[ "$ncmd" -ge 25 ] && [ "$npages" -ge 6 ] && [ "$nq" -ge 100 ] || fail "the check covered too little: $(tail -n 1 "$T/check.out")"
ok "$(tail -n 1 "$T/check.out")"

# Completion as bash-completion loads it: by command name, from the completions directory.
out=$(bash -c "source '$T/inst/usr/share/bash-completion/completions/railbench'; complete -p railbench
    COMP_WORDS=(railbench load get --engine ''); COMP_CWORD=4; _railbench; echo \"\${COMPREPLY[*]}\"
    COMP_WORDS=(railbench coll allreduce --algo mpi,r); COMP_CWORD=4; _railbench; echo \"\${COMPREPLY[*]}\"
    COMP_WORDS=(railbench coll allreduce -d bf); COMP_CWORD=4; _railbench; echo \"\${COMPREPLY[*]}\"")
assert_eq "complete -p, --engine, --algo list, -d" \
    "complete -F _railbench railbench|auto curl native|mpi,ring mpi,rd mpi,rhd|bfloat16" "$(tr '\n' '|' <<<"$out" | sed 's/|$//')"

# Presets and subcommands are offered as words, not file names: checkpoint's --model, train's --workload,
# every word coll takes (collectives, all, the OSU-style tests, moe), every load subcommand.
out=$(bash -c "source '$T/inst/usr/share/bash-completion/completions/railbench'
    COMP_WORDS=(railbench load checkpoint --model ''); COMP_CWORD=4; _railbench; echo \"\${COMPREPLY[*]}\"
    COMP_WORDS=(railbench load train --workload ''); COMP_CWORD=4; _railbench; echo \"\${COMPREPLY[*]}\"
    COMP_WORDS=(railbench coll ''); COMP_CWORD=2; _railbench; echo \"\${COMPREPLY[*]}\"
    COMP_WORDS=(railbench load ''); COMP_CWORD=2; _railbench; echo \"\${COMPREPLY[*]}\"")
assert_eq "completion of load checkpoint --model" "llama3-8b llama3-70b llama3-405b llama3-1t" "$(sed -n 1p <<<"$out")"
assert_eq "completion of load train --workload" "resnet50 unet3d cosmoflow retinanet flux dlrm" "$(sed -n 2p <<<"$out")"
for w in allreduce alltoall alltoallv all latency bw bibw mbw_mr moe; do
    grep -qw -- "$w" <<<"$(sed -n 3p <<<"$out")" || fail "completion of coll lacks $w: $(sed -n 3p <<<"$out")"
done
assert_eq "completion of load" "put get delete stat mixed list meta tiers sweep train checkpoint kvcache" "$(sed -n 4p <<<"$out")"
ok "completion offers presets (--model, --workload), coll's 16 words and load's 11 subcommands"

# Every data path in the help texts: railbench --help and every load command that takes a URL name file://.
grep -qE '^  load +.*put, get, delete, stat, mixed, list, meta, tiers, sweep, train, checkpoint \(http, s3, ais, file://\)$' <<<"$("$RB" --help)" ||
    fail "railbench --help: load does not name its subcommands and file://"
for c in put get delete stat mixed list sweep train checkpoint; do
    grep -q 'file:///PATH' <<<"$("$RB" load "$c" --help | sed -n 3p)" || fail "load $c --help does not name file:///PATH"
done
grep -q 'backend URL .*file:///PATH' <<<"$("$RB" load tiers --help)" || fail "load tiers --help: --backend does not name file:///PATH"
ok "railbench --help and the load commands' --help name file://"

# An unknown subcommand of every group: one line, exit 2, the nearest name and the whole list.
unknown() { # ARGS... -- EXPECTED-LINE
    local args=() a
    while [ "$1" != -- ]; do args+=("$1"); shift; done
    a=$("$RB" "${args[@]}" 2>&1 >/dev/null) && fail "railbench ${args[*]}: exit 0"
    "$RB" "${args[@]}" >/dev/null 2>&1 || [ $? -eq 2 ] || fail "railbench ${args[*]}: not exit 2"
    assert_eq "railbench ${args[*]}" "$2" "$a"
}
unknown coll allredcue -- 'railbench: error: unknown collective "allredcue" for "railbench coll"; did you mean "allreduce"? (use allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv, gather, scatter, alltoallv, all, latency, bw, bibw, mbw_mr, moe; see railbench coll --help)'
unknown coll mbw-mr -- 'railbench: error: unknown collective "mbw-mr" for "railbench coll"; did you mean "mbw_mr"? (use allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv, gather, scatter, alltoallv, all, latency, bw, bibw, mbw_mr, moe; see railbench coll --help)'
unknown load chekpoint -- 'railbench: error: unknown command "chekpoint" for "railbench load"; did you mean "checkpoint"? (use put, get, delete, stat, mixed, list, meta, tiers, sweep, train, checkpoint, kvcache; see railbench load --help)'
unknown fabric sim allredcue -- 'railbench: error: unknown collective "allredcue" for "railbench fabric sim"; did you mean "allreduce"? (use allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv, gather, scatter, alltoallv, all, moe; see railbench fabric sim --help)'
unknown fabric chek -- 'railbench: error: unknown command "chek" for "railbench fabric"; did you mean "check"? (use topo, map, sim, overhead, counters, check; see railbench fabric --help)'
unknown repotr -- 'railbench: error: unknown command "repotr" for "railbench"; did you mean "report"? (use block, coll, fabric, load, report, version; see railbench --help)'
unknown frobnicate -- 'railbench: error: unknown command "frobnicate" for "railbench" (use block, coll, fabric, load, report, version; see railbench --help)'
ok "unknown subcommands of railbench, load, fabric, coll and fabric sim: did you mean, and the full list"

# 3. It can fail: a default changed in a man page, an option gone from one, an option and a choice value gone
#    from the completion; each is named.
plant() { # WHAT FILE(relative to inst/usr/share) SED EXPECTED-PATTERN
    rm -rf "$T/plant" && cp -r "$T/inst/usr/share" "$T/plant"
    sed -i "$3" "$T/plant/$2"
    cmp -s "$T/inst/usr/share/$2" "$T/plant/$2" && fail "$1: the plant changed nothing"
    if python3 "$CHECK" "$RB" "$T/plant/man" "$T/plant/bash-completion/completions/railbench" >"$T/plant.out"; then
        fail "$1: not caught"
    fi
    grep -Eq -- "$4" "$T/plant.out" || { cat "$T/plant.out" >&2; fail "$1: caught, but not as expected"; }
    ok "$1: caught: $(grep -E -- "$4" "$T/plant.out" | head -n 1 | cut -c1-150)"
}
plant "get's --timeout 31s in the man page" man/man1/railbench-load.1 's/per\\-request timeout (0: none) (default: 30s)/per\\-request timeout (0: none) (default: 31s)/' \
    '^load (put|get|.*) --timeout: --help .*\(default: 30s\)" but railbench-load.1 .*\(default: 31s\)"$'
plant "block's --ramp gone from the man page" man/man1/railbench-block.1 '/^\\fB\\-\\-ramp\\fR/,+1d' \
    '^block --ramp: in --help, not in railbench-block.1$'
plant "--verify gone from get's completion" bash-completion/completions/railbench \
    "s/^\(  \['railbench load get'\]=.*\) --verify/\1/" '^completion: load get: options: .* missing'
plant "native gone from --engine's values" bash-completion/completions/railbench \
    "s/^\(  \['railbench load get --engine'\]=\)'auto curl native'/\1'auto curl'/" \
    "^completion: load get --engine: values: offers \[\] too many, \['native'\] missing$"
