#!/usr/bin/env bash
# needs: mpi
# The result directory is railbench's own: a run claims it with a marker (.railbench-result) first; a user's
# non-empty directory or a file as --out is refused (exit 2, one line), with or without --force; --force empties an
# earlier result of railbench's own files only, refuses when anything else is in it, and follows no link. Names
# from options stay below their target. A run that fails after its directory exists records why in result.json,
# under one rank or three.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

# tree DIR: every entry under DIR with its type and, for a file, its checksum; links as links (never followed).
tree() { (cd "$1" && find . -printf '%y %p %l\n' | sort && find . -type f -print0 | sort -z | xargs -0r sha256sum); }

# 1. The reported case: --out . in a project (src/, README, .git). Refused, then refused with --force; untouched.
P=$T/proj
mkdir -p "$P/src" "$P/.git/objects" "$T/d"
echo 'int main(void) { return 0; }' >"$P/src/main.c"
echo 'my project' >"$P/README"
echo 'ref: refs/heads/main' >"$P/.git/HEAD"
head -c 3000 /dev/urandom >"$P/.git/objects/pack"
tree "$P" >"$T/proj.before"
for force in "" --force; do
    rc=0
    (cd "$P" && "$RB" load put "file://$T/d" --objects 2 --size 4k --out . $force --quiet) >"$T/stdout" 2>"$T/stderr" || rc=$?
    assert_eq "--out . in a project ${force:-without --force}: exit" 2 "$rc"
    assert_stderr_line '^railbench: error: --out \.: not empty and not a railbench result \(it holds (src|README|\.git)\); give a new or empty directory$'
done
# Under mpirun the same, said once (rank 0 claims the directory; mpirun adds its own lines).
rc=0
(cd "$P" && rb_mpirun 2 "$RB" fabric counters --duration 1s --out . --force --quiet) >"$T/stdout" 2>"$T/stderr" || rc=$?
assert_eq "--out . under mpirun -np 2: exit" 2 "$rc"
assert_eq "--out . under mpirun -np 2: error lines" 1 "$(grep -c '^railbench: error: --out \.: not empty and not a railbench result' "$T/stderr")"
tree "$P" >"$T/proj.after"
diff "$T/proj.before" "$T/proj.after" || fail "the project changed"
ok "the project is unchanged (listing and checksums of $(grep -c . "$T/proj.before") lines)"
assert_eq "nothing was put into the target" 0 "$(find "$T/d" -mindepth 1 | wc -l)"
assert_eq "no marker in the project" 0 "$(find "$P" -name .railbench-result | wc -l)"

# 2. --out naming a file, or a path through one: exit 2, one line naming --out; the file unchanged.
echo 'mine' >"$T/afile"
assert_exit 2 "--out a file" "$RB" fabric counters --duration 1s --quiet --out "$T/afile"
assert_stderr_line "^railbench: error: --out $T/afile: not a directory; give a directory for the results\$"
assert_exit 2 "--out below a file" "$RB" fabric counters --duration 1s --quiet --out "$T/afile/sub"
assert_stderr_line "^railbench: error: --out $T/afile/sub: $T/afile is not a directory; give a directory for the results\$"
assert_eq "the file is unchanged" mine "$(cat "$T/afile")"

# 3. A new --out: the marker holds the run id; a second run is refused; intervals.jsonl untouched.
D=$T/run
assert_exit 0 "first run into a new --out" "$RB" fabric counters --duration 1s --interval 1s --quiet --out "$D"
grep -Eqx '[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}' "$D/.railbench-result" || fail "the marker holds $(cat "$D/.railbench-result")"
ok "the marker holds the run id $(cat "$D/.railbench-result")"
lines=$(wc -l <"$D/intervals.jsonl")
assert_exit 2 "second run into the same --out" "$RB" fabric counters --duration 1s --quiet --out "$D"
assert_stderr_line "^railbench: error: --out $D: holds an earlier result \\(result.json\\); give a new directory, or add --force"
assert_eq "intervals.jsonl untouched by the refused run" "$lines" "$(wc -l <"$D/intervals.jsonl")"
assert_eq "refused before anything was written: stdout empty" "0" "$(wc -c <"$T/stdout")"

# 4. --force with a user's file and directory in the result: refused naming one; nothing removed.
echo 'mine' >"$D/notes.txt"
mkdir -p "$D/mine/sub" && echo 'deep' >"$D/mine/sub/f"
tree "$D" >"$T/run.before"
assert_exit 2 "--force over a result holding a user's files" "$RB" fabric counters --duration 1s --quiet --force --out "$D"
assert_stderr_line "^railbench: error: --out $D: --force removes only what railbench writes, and (notes.txt|mine) is not that; move it away or give another --out\$"
tree "$D" >"$T/run.after"
diff "$T/run.before" "$T/run.after" || fail "--force changed a directory it refused"
ok "--force refused: the result and the user's files are unchanged"
rm -r "$D/notes.txt" "$D/mine"

# 5. A link in the result (points -> the project): refused, and the project it names is untouched.
ln -s "$P" "$D/points"
assert_exit 2 "--force over a result holding a link" "$RB" fabric counters --duration 1s --quiet --force --out "$D"
assert_stderr_line "^railbench: error: --out $D: --force removes only what railbench writes, and points \\(a symbolic link\\) is not that"
tree "$P" >"$T/proj.after"
diff "$T/proj.before" "$T/proj.after" || fail "the project behind the link changed"
ok "the project behind the link is unchanged"
rm "$D/points"

# 6. --force over railbench's own files only (block's points/<rank>/, a temporary file a killed run left): emptied,
# then this run's files alone.
mkdir -p "$D/points/0" && echo '[job]' >"$D/points/0/4k-randread-qd1-j1.fio"
echo '{' >"$D/result.json.tmp.4242.0"
old_id=$(cat "$D/.railbench-result")
assert_exit 0 "--force into the same --out" "$RB" fabric counters --duration 1s --interval 1s --quiet --force --out "$D"
assert_eq "what the result holds after --force" ".railbench-result intervals.jsonl result.json table.md" \
    "$(ls -A "$D" | tr '\n' ' ' | sed 's/ $//')"
assert_eq "intervals.jsonl holds this run only" "$lines" "$(wc -l <"$D/intervals.jsonl")"
[ "$(cat "$D/.railbench-result")" != "$old_id" ] || fail "the marker still names the earlier run"
ok "the marker names the new run"

# 7. A result an older railbench wrote (no marker): a result when it holds only railbench's files.
O=$T/older
mkdir "$O" && cp "$D/result.json" "$D/intervals.jsonl" "$D/table.md" "$O/"
assert_exit 2 "an older result without --force" "$RB" fabric counters --duration 1s --quiet --out "$O"
assert_stderr_line "^railbench: error: --out $O: holds an earlier result \\(result.json\\)"
assert_exit 0 "an older result with --force" "$RB" fabric counters --duration 1s --quiet --force --out "$O"
[ -s "$O/.railbench-result" ] && ! cmp -s "$O/result.json" "$D/result.json" || fail "the older result was not replaced"
ok "the older result was replaced by this run's, with the marker"
echo 'mine' >"$T/older2.txt"
mkdir "$T/older2" && cp "$D/result.json" "$T/older2.txt" "$T/older2/"
assert_exit 2 "result.json beside a user's file, no marker, --force" "$RB" fabric counters --duration 1s --quiet --force \
    --out "$T/older2"
assert_stderr_line "not empty and not a railbench result \\(it holds (older2.txt|result.json)\\)"
assert_eq "the user's file stays" mine "$(cat "$T/older2/older2.txt")"

# 8. An empty directory is taken; the default directory gets the marker too; report reads a result with it.
mkdir "$T/empty"
assert_exit 0 "an empty existing --out" "$RB" fabric counters --duration 1s --quiet --out "$T/empty"
[ -s "$T/empty/.railbench-result" ] && [ -s "$T/empty/result.json" ] || fail "the empty --out holds no result"
mkdir "$T/cwd"
(cd "$T/cwd" && "$RB" fabric counters --duration 1s --quiet) >/dev/null 2>&1 || fail "a run into the default directory"
assert_eq "the default directory has its marker" 1 "$(find "$T/cwd/railbench-results" -name .railbench-result | wc -l)"
assert_exit 0 "report on results with the marker" "$RB" report "$D" "$T/empty"
assert_eq "report: a row per result" 2 "$(grep -c 'fabric counters' "$T/stdout")"

# 9. The marker's run id is the one the run's names carry (put's own prefix rb-<run id>-obj-).
mkdir "$T/d2"
"$RB" load put "file://$T/d2" --objects 1 --size 1k --quiet --out "$T/r-id" >/dev/null 2>&1
assert_eq "the marker's run id is the run's" "$(jqr "$T/r-id/result.json" .summary.run_prefix)" \
    "rb-$(cat "$T/r-id/.railbench-result")-obj-"

# 10. Names from options stay below the target: exit 2, one line naming the option and the value; nothing written.
mkdir -p "$T/t/inside"
assert_exit 2 "put --prefix ../outside/x-" "$RB" load put "file://$T/t/inside" --objects 2 --size 4k \
    --prefix ../outside/x- --quiet --out "$T/n1"
assert_stderr_line '^railbench: error: --prefix "\.\./outside/x-": has a "\.\." component; give a name below the target$'
printf 'ok 100\n../escape 100\n' >"$T/list"
assert_exit 2 "put --filelist with ../escape" "$RB" load put "file://$T/t/inside" --filelist "$T/list" --size 4k \
    --quiet --out "$T/n2"
assert_stderr_line "^railbench: error: --filelist $T/list:2: \"\\.\\./escape\" has a \"\\.\\.\" component; give names below the target\$"
assert_exit 2 "checkpoint --name /abs" "$RB" load checkpoint "file://$T/t/inside" --params 1000 --name /abs --quiet
assert_stderr_line '^railbench: error: --name "/abs": starts with "/"; give a name below the target$'
assert_exit 2 "list --prefix a//b" "$RB" load list "file://$T/t/inside" --prefix a//b --quiet
assert_stderr_line '^railbench: error: --prefix "a//b": has an empty component \("//"\); give a name below the target$'
assert_eq "nothing written under the target's parent but inside/" "inside" "$(ls -A "$T/t")"
assert_eq "nothing written inside" 0 "$(find "$T/t/inside" -mindepth 1 | wc -l)"
[ ! -e "$T/n1" ] && [ ! -e "$T/n2" ] || fail "a refused run left its result directory"
ok "refused runs left no result directory"
# The --filelist refusal comes after the directory was claimed: an empty directory given as --out is empty again.
mkdir "$T/empty3"
assert_exit 2 "put --filelist with ../escape into an empty --out" "$RB" load put "file://$T/t/inside" \
    --filelist "$T/list" --size 4k --quiet --out "$T/empty3"
assert_eq "the refused run left the empty --out empty (no marker)" 0 "$(find "$T/empty3" -mindepth 1 | wc -l)"

# 11. A failure after the directory exists: the metrics port is taken (exit 3), and result.json says so.
port=$(free_port)
bg python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(); time.sleep(60)' "$port"
wait_port "$port"
assert_exit 3 "--prom-listen on a port in use" "$RB" fabric counters --duration 1s --quiet --prom-listen "127.0.0.1:$port" --out "$T/busy"
assert_jq "$T/busy/result.json" '.exit_status == 3' "result.json records exit status 3"
assert_jq "$T/busy/result.json" "[.checks[] | select(.name == \"completed\" and .passed == false and (.detail | test(\"$port\")))] | length == 1" \
    "result.json has a failed 'completed' check naming the port"

assert_exit 3 "the same under mpirun -np 3" rb_mpirun 3 "$RB" fabric counters --duration 1s --quiet --prom-listen "127.0.0.1:$port" --out "$T/busy3"
assert_jq "$T/busy3/result.json" '.exit_status == 3 and ([.checks[] | select(.name == "completed" and .passed == false)] | length == 1)' \
    "under MPI rank 0 records the failure too"
