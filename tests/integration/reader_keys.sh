#!/usr/bin/env bash
# needs: -
# The result contract declared once: every key a reader of result.json or intervals.jsonl reads (reports/*.c and the
# readers elsewhere) is in its schema (tests/reader_keys.py), the rows the kinds' tables walk are required, and a
# result's kind comes from the schemas' "x-railbench-commands" alone.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$ROOT"

python3 tests/reader_keys.py . >"$T/keys.out" || { cat "$T/keys.out" >&2; fail "a reader's key is not in its schema"; }
read -r nkeys _ <<<"$(tail -n 1 "$T/keys.out")"
[ "$nkeys" -ge 590 ] || fail "only $nkeys keys found (the readers hold about 610)"
nfiles=$(sed -E 's/.* read by ([0-9]+) reader files.*/\1/' "$T/keys.out")
[ "$nfiles" -ge 19 ] || fail "keys read by $nfiles files (the kinds, load_phases, hosts, rundir, report_cmd, mlperf...)"
grep -Eq ', ([0-9]+) declared; ([0-9]+) table rows required; 0 problems$' "$T/keys.out" || fail "summary line"
[ "$(sed -E 's/.*, ([0-9]+) declared;.*/\1/' "$T/keys.out")" = "$nkeys" ] || fail "not every key read is declared"
ok "$(tail -n 1 "$T/keys.out")"

# A copy of what the test reads, to break on purpose.
copy() {
    rm -rf "$T/c" && mkdir -p "$T/c/include"
    cp -r schemas reports core loader fabric collectives block "$T/c/" && cp -r include/railbench "$T/c/include/"
}

# 1. A key no schema declares, read from a row the kind walks: named with its path.
copy
sed -i 's|rb_rundir_num(op, "requests")|rb_rundir_num(op, "requests_total")|' "$T/c/reports/kind_load.c"
grep -q 'requests_total' "$T/c/reports/kind_load.c" || fail "the planted read is not in the copy"
rc=0; python3 tests/reader_keys.py "$T/c" >"$T/p1" || rc=$?
[ "$rc" = 1 ] || fail "undeclared key: exit $rc, expected 1"
grep -qx 'reports/kind_load.c: reads summary.ops\[\].requests_total: declared by none of load.schema.json, result.schema.json' "$T/p1" ||
    { cat "$T/p1" >&2; fail "undeclared key not named"; }
[ "$(grep -c 'declared by none' "$T/p1")" = 1 ] || fail "one planted key, one problem"
ok "a key no schema declares is named: summary.ops[].requests_total"

# 2. The rows a table walks stop being required: named.
copy
jq '.properties.summary.required -= ["ops"]' schemas/load.schema.json >"$T/c/schemas/load.schema.json"
rc=0; python3 tests/reader_keys.py "$T/c" >"$T/p2" || rc=$?
[ "$rc" = 1 ] || fail "rows not required: exit $rc"
grep -q '^reports/kind_load.c: walks summary.ops row by row: load.schema.json does not require it' "$T/p2" ||
    { cat "$T/p2" >&2; fail "rows not required: not named"; }
ok "a table's rows the schema does not require are named"

# 3. A read whose object cannot be followed back: named, not skipped.
copy
sed -i 's|rb_rundir_num(op, "requests")|rb_rundir_num(rb_report_mystery(op), "requests")|' "$T/c/reports/kind_load.c"
rc=0; python3 tests/reader_keys.py "$T/c" >"$T/p3" || rc=$?
[ "$rc" = 1 ] && grep -q '^reports/kind_load.c: tables(): cannot tell the object or key of rb_rundir_num(rb_report_mystery(op), "requests")$' "$T/p3" ||
    { cat "$T/p3" >&2; fail "an unresolvable read is not named"; }
ok "a read that cannot be followed is a problem"

# 3b. Readers outside the kinds: load_phases.c (a row it reaches through a parameter, from two callers),
# rundir.c's intervals.jsonl reader, mlperf.c (through its item()) and fabric/calibrate.c (a coll or fabric sim
# result, through its num()) each read a key no schema declares; a new reader of result.json in core/ that
# FILE_KINDS does not list reads an undeclared key, and another in a function the script does not parse.
copy
sed -i 's|rb_rundir_num(e, "latency_ns")|rb_rundir_num(e, "latency_total_ns")|' "$T/c/reports/load_phases.c"
sed -i 's|rb_rundir_num(line, "t_s")|rb_rundir_num(line, "t_secs")|' "$T/c/reports/rundir.c"
sed -i 's|item(s, "cache_flush")|item(s, "cache_flushed")|' "$T/c/reports/mlperf.c"
sed -i 's|num(it, "ranks_per_node")|num(it, "rpn")|' "$T/c/fabric/calibrate.c"
grep -q 'latency_total_ns' "$T/c/reports/load_phases.c" && grep -q 't_secs' "$T/c/reports/rundir.c" &&
    grep -q 'cache_flushed' "$T/c/reports/mlperf.c" && grep -q '"rpn"' "$T/c/fabric/calibrate.c" ||
    fail "the planted reads are not in the copy"
cat >"$T/c/core/replay_read.c" <<'C'
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "railbench/file.h"

static double gap(const cJSON *o) { return cJSON_GetNumberValue(cJSON_GetObjectItem(o, "gap_s")); }

double rb_replay_speed(const char *dir)
{
    char path[4200], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/result.json", dir);
    if (rb_file_read(path, 1u << 20, &text, &len) != 0)
        return -1;
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    double v = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "replay_speed")) + gap(j);
    cJSON_Delete(j);
    return v;
}
C
rc=0; python3 tests/reader_keys.py "$T/c" >"$T/p3b" || rc=$?
[ "$rc" = 1 ] || { cat "$T/p3b" >&2; fail "planted readers: exit $rc, expected 1"; }
cat >"$T/want3b" <<'W'
core/replay_read.c: a read outside any function this script recognises: cJSON_GetObjectItem(o, "gap_s")
core/replay_read.c: parses a document it names: FILE_KINDS does not say which kinds' results it reads
core/replay_read.c: reads replay_speed: declared by none of result.schema.json
fabric/calibrate.c: reads summary.collective_rows[].rpn: declared by none of coll.schema.json, fabric-sim.schema.json, result.schema.json
reports/load_phases.c: reads summary.ops[].slowest[].latency_total_ns: declared by none of load.schema.json, result.schema.json
reports/load_phases.c: reads summary.total.slowest[].latency_total_ns: declared by none of load.schema.json, result.schema.json
reports/mlperf.c: reads summary.cache_flushed: declared by none of checkpoint.schema.json, result.schema.json, train.schema.json
reports/rundir.c: reads intervals.jsonl t_secs: declared by none of intervals.schema.json
W
head -n -1 "$T/p3b" | diff "$T/want3b" - >&2 || fail "planted readers: not the 8 problems expected"
grep -Eq '^[0-9]+ keys read by 20 reader files, [0-9]+ declared; [0-9]+ table rows required; 8 problems$' "$T/p3b" ||
    fail "planted readers: $(tail -n 1 "$T/p3b")"
ok "undeclared keys of load_phases.c (2 rows), rundir.c's intervals.jsonl reader, mlperf.c and calibrate.c, a reader FILE_KINDS does not list, a read outside a function: 8 problems"

# 4. A kind no schema names, and a command two schemas declare.
copy
jq '."x-railbench-commands" = {"load sweep": null}' schemas/sweep.schema.json >"$T/c/schemas/sweep.schema.json"
rc=0; python3 tests/reader_keys.py "$T/c" >"$T/p4" || rc=$?
[ "$rc" = 1 ] && grep -qx 'reports/kind_sweep.c: kind sweep: no schema names it in "x-railbench-commands"' "$T/p4" ||
    { cat "$T/p4" >&2; fail "a kind no schema names: not said"; }
jq '."x-railbench-commands" = {"load get": "sweep"}' schemas/sweep.schema.json >"$T/c/schemas/sweep.schema.json"
rc=0; python3 scripts/gen-schema-commands.py "$T/c/schemas" "$T/c/h.h" 2>"$T/g4" || rc=$?
[ "$rc" = 2 ] || fail "a command declared twice: gen-schema-commands.py exit $rc, expected 2"
[ "$(cat "$T/g4")" = 'error: sweep.schema.json: command "load get" is declared by load.schema.json too' ] ||
    { cat "$T/g4" >&2; fail "a command declared twice: message"; }
[ ! -e "$T/c/h.h" ] || fail "a header written from a bad declaration"
ok "a kind no schema names is said; a command two schemas declare: one error line, exit 2, no header"

# 5. The generated table is what the build compiled: the same commands as the schemas, longest first to match.
python3 scripts/gen-schema-commands.py schemas "$T/h.h"
cmp -s "$T/h.h" build/gen/schema_commands.h || fail "build/gen/schema_commands.h is not the schemas' (make not run?)"
grep -q '{"coll latency", NULL, "coll.schema.json", ""}' "$T/h.h" || fail "coll latency: no kind (phases)"
grep -q '{"load get", "load", "load.schema.json", "ops"}' "$T/h.h" || fail "load get: kind load, needs ops"
n=$(python3 -c 'import json,glob; print(sum(len(json.load(open(p)).get("x-railbench-commands", {})) for p in glob.glob("schemas/*.schema.json")))')
[ "$(grep -c '^    {"' "$T/h.h")" = "$n" ] || fail "the header holds $(grep -c '^    {"' "$T/h.h") commands, the schemas $n"
ok "the C table is made from the schemas: $n commands"

# 6. schema_check.py picks the schema by the same rule: "coll latency" (an OSU test) is coll's, checked there.
mkdir -p "$T/r/osu"
jq '.command = "coll latency" | .summary = {osu_rows: [], test: "latency", ranks: 2, window: 1}' \
    tests/fixtures/report/coll/result.json >"$T/r/osu/result.json"
check_results "$T/r" || fail "coll latency does not keep coll.schema.json"
grep -q '^1 results, 0 problems$' "$T/.schema-check.out" || fail "coll latency: $(cat "$T/.schema-check.out")"
jq '.command = "load sweeps"' tests/fixtures/report/sweep/result.json >"$T/r/osu/result.json"
! check_results "$T/r" 2>"$T/p6" || fail "a command no schema declares passed"
grep -q 'command "load sweeps": named by 0 kind schemas' "$T/p6" || { cat "$T/p6" >&2; fail "load sweeps: message"; }
rm -rf "$T/r"
ok "schema_check.py: coll latency checked against coll.schema.json; load sweeps is no kind's"

# 7. The kind is the command's: fabric check --plan-only (a "fabric check" result that counts hosts and links
# instead of listing them) gets check's plan table, not the phases; coll latency (its schema: no kind) the phases.
"$RB" fabric check --plan-only --hosts 8 --rails 2 --out "$T/plan" >"$T/plan.out" 2>&1
assert_exit 0 "report of a plan" "$RB" report "$T/plan"
grep -q '^## Plan (--plan-only: nothing measured)$' "$T/stdout" || { cat "$T/stdout" >&2; fail "no plan table"; }
# 8 hosts: 7 rounds of 4 pairs; 28 pairs on each of 2 rails.
grep -Eq '^\| +8 \| +2 \| +7 \| +4 \| +56 \| +[0-9.]+ \|$' "$T/stdout" || { cat "$T/stdout" >&2; fail "plan row"; }
! grep -q '^## Rail 0\|^## Phases\|^## Findings' "$T/stdout" || fail "a plan shows measurement tables"
! grep -q 'warning' "$T/stderr" || fail "a plan warned: $(cat "$T/stderr")"
mkdir -p "$T/osu"
jq '.command = "coll latency" | .summary = {osu_rows: [], test: "latency", ranks: 2, window: 1}' \
    tests/fixtures/report/coll/result.json >"$T/osu/result.json"
assert_exit 0 "report of coll latency" "$RB" report "$T/osu"
grep -q '^## Phases$' "$T/stdout" && ! grep -q '^## Collectives' "$T/stdout" || { cat "$T/stdout" >&2; fail "coll latency"; }
ok "fabric check --plan-only: the plan table (8 hosts, 2 rails: 7 rounds, 4 pairs each, 56 links); coll latency: its phases"
