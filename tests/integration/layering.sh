#!/usr/bin/env bash
# needs: -
# Module dependencies point the declared way (docs/HACKING.md): every #include and every link edge of the
# tree passes tests/layering.py; a wrong include planted in a copy of the sources (loader/engine -> loader/cmd,
# fabric -> loader, core -> loader, objset -> proto, proto -> file) and a wrong link edge planted in a copy of the objects are each caught;
# so are a new load subcommand folder that includes another command (a folder the rule does not name is at the
# commands' level) and the rules of shape it also holds: a function over 120 lines, a file over 800, an entry point
# not named *_main; and a circle of files inside loader/engine (two planted objects that call each other).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
CHECK=$ROOT/tests/layering.py
OBJ=$ROOT/build/obj
[ -f "$OBJ/loader/engine/worker.o" ] || fail "build the tree first (make all): no $OBJ/loader/engine/worker.o"

# 1. The tree as it is: no problem, and both kinds of edges were read.
python3 "$CHECK" "$ROOT" "$OBJ" >"$T/check.out" || { cat "$T/check.out" >&2; fail "the tree breaks the dependency rule"; }
read -r ninc _ _ nlink _ _ nprob _ < <(tail -n 1 "$T/check.out")
[ "$ninc" -ge 300 ] && [ "$nlink" -ge 1000 ] && [ "$nprob" -eq 0 ] || fail "the check read too little: $(tail -n 1 "$T/check.out")"
ok "dependency rule kept: $(tail -n 1 "$T/check.out")"

# 2. Planted includes, each in a fresh copy of the sources: caught and named.
plant_source() { # WHAT FILE LINE EXPECTED-PATTERN
    rm -rf "$T/src" && mkdir "$T/src"
    cp -r "$ROOT"/core "$ROOT"/loader "$ROOT"/block "$ROOT"/collectives "$ROOT"/fabric "$ROOT"/reports "$ROOT"/include "$T/src/"
    mkdir -p "$(dirname "$T/src/$2")" && printf '%s\n' "$3" >>"$T/src/$2"
    if python3 "$CHECK" "$T/src" >"$T/plant.out"; then fail "$1: not caught"; fi
    grep -Eq -- "$4" "$T/plant.out" || { cat "$T/plant.out" >&2; fail "$1: caught, but not as expected"; }
    ok "$1: caught: $(grep -E -- "$4" "$T/plant.out" | head -n 1)"
}
plant_source "engine includes a command header" loader/engine/worker.c '#include "../cmd/loader_int.h"' \
    '^loader/engine/worker.c: includes loader/cmd/loader_int.h: loader/engine -> loader/cmd is against'
plant_source "fabric includes the loader's public header" fabric/topo.c '#include "railbench/bgload.h"' \
    '^fabric/topo.c: includes include/railbench/bgload.h: fabric -> loader/cmd is against'
plant_source "core includes a loader header" core/harness.c '#include "../loader/engine/engine_int.h"' \
    '^core/harness.c: includes loader/engine/engine_int.h: core -> loader/engine is against'
plant_source "objset includes a protocol header" loader/objset/objects.c '#include "../proto/target_int.h"' \
    '^loader/objset/objects.c: includes loader/proto/target_int.h: loader/objset -> loader/proto is against'
plant_source "the file protocol's row includes the file loop's header" loader/proto/target_file.c \
    '#include "../file/file_loop_int.h"' \
    '^loader/proto/target_file.c: includes loader/file/file_loop_int.h: loader/proto -> loader/file is against'
plant_source "a new load subcommand's folder includes another command's header" loader/newcmd/newcmd.c \
    '#include "../train/train_int.h"' \
    '^loader/newcmd/newcmd.c: includes loader/train/train_int.h: loader/newcmd -> loader/train is against'

# 3. The rules of shape: a planted 121-line function, a file over 800 lines and an entry point named the old way.
long_fn=$(printf 'static int planted_long(void)\n{\n    int x = 0;\n'; for _ in $(seq 118); do printf '    x++;\n'; done; printf '}')
plant_source "a function over 120 lines" fabric/topo.c "$long_fn" \
    '^fabric/topo.c:[0-9]+: planted_long is 121 lines long, over 120$'
plant_source "an entry point not named *_main" fabric/topo.c $'int rb_fabric_planted(int argc, char **argv)\n{\n    return argc + !argv;\n}' \
    '^fabric/topo.c: rb_fabric_planted is a command entry point: name it rb_<command>_<sub>_main$'
plant_source "a file over 800 lines" fabric/topo.c "$(for _ in $(seq 800); do printf '/* planted */\n'; done)" \
    '^fabric/topo.c: [0-9]+ lines, over 800: split it along a seam$'
grep -q '^longest function: 1[0-2][0-9] lines' "$T/check.out" || fail "no longest function measured: $(grep longest "$T/check.out")"
ok "$(grep '^longest function' "$T/check.out")"

# 4. A planted link edge: a fabric object calling the engine.
rm -rf "$T/obj" && cp -r "$OBJ" "$T/obj"
printf 'struct rb_engine;\nvoid rb_engine_free(struct rb_engine *e);\nvoid plant(void) { rb_engine_free(0); }\n' >"$T/plant.c"
cc -c -o "$T/obj/fabric/plant.o" "$T/plant.c"
if python3 "$CHECK" "$ROOT" "$T/obj" >"$T/plant.out"; then fail "link edge fabric -> loader/engine: not caught"; fi
grep -q '^fabric/plant.c: uses rb_engine_free, defined in loader/engine: fabric -> loader/engine is against' "$T/plant.out" ||
    { cat "$T/plant.out" >&2; fail "link edge: caught, but not as expected"; }
ok "link edge fabric -> loader/engine: caught"

# 5. No circle inside loader/engine: the tree has none but the allowed one, and two planted objects that call each
# other (a circle of 2 files) are caught, named.
grep -q '^circles inside modules: ' "$T/check.out" || fail "no circles counted: $(head -n 3 "$T/check.out")"
ok "$(grep '^circles inside modules' "$T/check.out")"
rm -f "$T/obj/fabric/plant.o"
printf 'void planted_b(void);\nvoid planted_a(void) { planted_b(); }\n' >"$T/plant_a.c"
printf 'void planted_a(void);\nvoid planted_b(void) { planted_a(); }\n' >"$T/plant_b.c"
cc -c -o "$T/obj/loader/engine/planted_a.o" "$T/plant_a.c"
cc -c -o "$T/obj/loader/engine/planted_b.o" "$T/plant_b.c"
if python3 "$CHECK" "$ROOT" "$T/obj" >"$T/plant.out"; then fail "a circle inside loader/engine: not caught"; fi
grep -qx 'loader/engine: a circle of 2 files that use each other: loader/engine/planted_a.c, loader/engine/planted_b.c' \
    "$T/plant.out" || { cat "$T/plant.out" >&2; fail "a circle inside loader/engine: caught, but not as expected"; }
ok "a circle inside loader/engine: caught"

# The code map of docs/HACKING.md names every source file and lists every public header
# (tests/hacking_map.py); a new file left off the map, a header left off the public list and a file the map
# names that is gone are each caught in a copy.
MAP=$ROOT/tests/hacking_map.py
python3 "$MAP" "$ROOT" >"$T/map.out" || { cat "$T/map.out" >&2; fail "docs/HACKING.md's map and the tree disagree"; }
read -r nsrc _ _ nhdr _ _ nmap _ < <(tail -n 1 "$T/map.out")
[ "$nsrc" -ge 250 ] && [ "$nhdr" -ge 21 ] && [ "$nmap" -eq 0 ] || fail "the map check read too little: $(tail -n 1 "$T/map.out")"
ok "docs/HACKING.md's map: $(tail -n 1 "$T/map.out")"
rm -rf "$T/map" && mkdir -p "$T/map/docs"
cp -r "$ROOT"/core "$ROOT"/loader "$ROOT"/block "$ROOT"/collectives "$ROOT"/fabric "$ROOT"/reports "$ROOT"/include "$T/map/"
cp "$ROOT/docs/HACKING.md" "$T/map/docs/"
: >"$T/map/loader/engine/native_gs.c"
sed -i 's/, ckpt\.h (checkpoint sizing,/, (checkpoint sizing,/' "$T/map/docs/HACKING.md"
rm "$T/map/fabric/sim_moe.c"
if python3 "$MAP" "$T/map" >"$T/map.out"; then fail "a map that drifted passed"; fi
grep -qx "docs/HACKING.md: loader/engine/native_gs.c is not on the map" <(sed "s|^$T/map/||" "$T/map.out") &&
    grep -q "include/railbench/ckpt.h is not listed as public surface$" "$T/map.out" &&
    grep -q "the map names sim_moe.c, which is no file" "$T/map.out" ||
    { cat "$T/map.out" >&2; fail "the drifted map's problems were not named"; }
assert_eq "problems of the drifted map" "3" "$(tail -n 1 "$T/map.out" | awk '{print $7}')"
ok "a file off the map, a header off the public list and a gone file are named"

# 5. What each integration test needs (tests/needs.py): the tree declares it truly; a copy of a test that starts
# RGW without declaring ceph, and one that declares a tag nobody knows, are both named.
python3 "$ROOT/tests/needs.py" check "$ROOT" >"$T/needs.out" || { cat "$T/needs.out" >&2; fail "a test's '# needs:' line is not what it calls"; }
ok "$(tail -n 1 "$T/needs.out")"
mkdir -p "$T/nd/tests/integration"
printf '#!/usr/bin/env bash\n# needs: -\nrgw_up\n' >"$T/nd/tests/integration/a.sh"
printf '#!/usr/bin/env bash\n# needs: gpu\n' >"$T/nd/tests/integration/b.sh"
if python3 "$ROOT/tests/needs.py" check "$T/nd" >"$T/nd.out"; then fail "planted needs lines not caught"; fi
grep -q '^a.sh: calls but does not declare: ceph$' "$T/nd.out" && grep -q '^b.sh: unknown tag: gpu$' "$T/nd.out" ||
    { cat "$T/nd.out" >&2; fail "planted needs lines caught, but not as expected"; }
ok "an undeclared ceph and an unknown tag are named"
