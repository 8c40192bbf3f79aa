#!/usr/bin/env bash
# needs: -
# report --mlperf: a submission-shaped set made for real (load train run 6 times on a local directory, scaled
# down: 500 samples of 1 KiB, batch 1, 2 ms of compute a step, so 500 steps an epoch, held against
# --mlperf-client-ram 64KiB), and checkpoint results, pass every rule (exit 0) with the mean of the 5 measured runs
# equal to one computed here from their result.json; then each break of a rule, made by a real run or planted in a
# copy of a real result, fails naming that rule (exit 1), and bad input (not a result, no provenance record, mixed
# workloads) is one error line, exit 2.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
mkdir -p "$T/data" "$T/ck" "$T/set" "$T/runs"
RAM=64KiB
train() { local out=$1; shift
    "$RB" load train "file://$T/data" --prefix s- --objects 500 --sample-size 1KiB -b 1 --compute-time 2ms \
        --quiet "$@" --out "$out" >"$out.out" 2>"$out.err" || { cat "$out.err" >&2; fail "train $out"; }; }
ckpt() { local out=$1; shift
    "$RB" load checkpoint "file://$T/ck" --quiet "$@" --out "$out" >"$out.out" 2>"$out.err" ||
        { cat "$out.err" >&2; fail "checkpoint $out"; }; }
mlperf() { "$RB" report --mlperf --mlperf-client-ram "$RAM" "$@"; }
# rule_line FILE RULE VERDICT: the table has the rule's line with that verdict.
rule_line() {
    grep -Eq "^\| $2 \| [a-z]+ \| $3 \|" "$1" || { cat "$1" >&2; fail "no $3 line for rule $2"; }
    ok "$2: $3 — $(grep -E "^\| $2 \| [a-z]+ \| $3 \|" "$1" | head -n 1 | cut -d'|' -f5 | cut -c1-110)"
}

# The data set first, then the warm-up and 5 runs with another workload's run (cosmoflow's preset at this scale)
# between run 3 and run 4 (outside the set's directory), and a run with another compute time after them.
train "$T/runs/populate" --populate
for i in 1 2 3; do train "$T/set/run$i"; done
train "$T/runs/cosmo" --workload cosmoflow --read-threads 1 --au-min 90
for i in 4 5 6; do train "$T/set/run$i"; done
train "$T/runs/other-compute" --compute-time 2100us
ckpt "$T/set/ck-write" --params 1000000 --mode write --name pair --writes 1 --reads 1
ckpt "$T/set/ck-read" --params 1000000 --mode read --name pair --writes 1 --reads 1 --after "$T/set/ck-write"
for d in "$T"/set/*/ "$T"/runs/*/; do
    [ -f "$d/provenance.json" ] || fail "$d: no provenance.json"
done
ok "every train and checkpoint result has provenance.json"
check_results "$T" || fail "a result or provenance record breaks its schema"
ok "provenance.json keeps schemas/provenance.schema.json"
mkdir -p "$T/p/badprov" && cp -r "$T/set/run1" "$T/p/badprov/"
jq '.core_config_sha256 = "xyz" | del(.hosts)' "$T/set/run1/provenance.json" >"$T/p/badprov/run1/provenance.json"
if check_results "$T/p/badprov" 2>"$T/badprov.err"; then fail "a broken provenance.json passes its schema"; fi
grep -q 'provenance.json: provenance.schema.json: core_config_sha256: .xyz. does not match' "$T/badprov.err" &&
    grep -q "provenance.schema.json: (top): 'hosts' is a required property" "$T/badprov.err" ||
    { cat "$T/badprov.err" >&2; fail "schema_check does not name what is wrong in provenance.json"; }
ok "schema_check names a broken provenance.json: $(head -n 1 "$T/badprov.err" | sed 's|.*/p/badprov/||')"
python3 - "$T/set/run1" <<'PY' || fail "provenance hash is not the SHA-256 of the canonical core configuration"
import hashlib, json, sys
p = json.load(open(sys.argv[1] + '/provenance.json'))
text = json.dumps(p['core_config'], sort_keys=True, separators=(',', ':'), ensure_ascii=False)
assert hashlib.sha256(text.encode()).hexdigest() == p['core_config_sha256']
r = json.load(open(sys.argv[1] + '/result.json'))
assert p['core_config']['batch_size'] == 1 and p['core_config']['dataset_samples'] == 500, p['core_config']
assert p['client_memory_bytes'] == sum(h['memory_bytes'] for h in r['hosts']) > 0
assert p['tool']['name'] == 'railbench' and p['rules_edition'] == 'v3.0' and p['started_at'] == r['started_at']
print(f"ok: provenance hash {p['core_config_sha256'][:12]} = SHA-256 of the canonical core configuration")
PY

# The compliant set: every rule passes.
assert_exit 0 "compliant set" mlperf "$T/set" -o "$T/ok.md"
for r in runs consecutive config_hash dataset_size steps_per_epoch au mean_of_5 provenance ckpt_page_cache \
    ckpt_read_gap ckpt_fsync; do rule_line "$T/ok.md" "$r" PASS; done
grep -q 'FAIL' "$T/ok.md" && { cat "$T/ok.md" >&2; fail "a FAIL line in the compliant set"; }
grep -q '^verdict: PASS' "$T/ok.md" || fail "no PASS verdict"
assert_exit 0 "compliant set, JSON" mlperf "$T/set" --format json -o "$T/ok.json"
check_results "$T/ok.json" || fail "report --mlperf's JSON breaks schemas/mlperf-check.schema.json"
python3 - "$T/ok.json" "$T/set" "$T/ok.md" <<'PY' || fail "the reported figure is not the mean of the 5 measured runs"
import json, sys
doc = json.load(open(sys.argv[1]))
runs = [json.load(open(f'{sys.argv[2]}/run{i}/result.json'))['summary'] for i in range(1, 7)]
roles = [r['role'] for r in doc['runs'] if r['command'] == 'load train']
assert roles == ['warm-up'] + ['measured'] * 5, roles
want = sum(s['samples_per_s'] for s in runs[1:]) / 5
au = sum(s['au_mean_pct'] for s in runs[1:]) / 5
bps = sum(sum(e['bytes_per_s'] for e in s['train_epochs']) / len(s['train_epochs']) for s in runs[1:]) / 5
f = doc['figure']
assert f['runs'] == 5 and abs(f['samples_per_s_mean'] - want) <= 1e-9 * want, (f, want)
assert abs(f['au_pct_mean'] - au) <= 1e-9 * au and abs(f['bytes_per_s_mean'] - bps) <= 1e-9 * bps, (f, au, bps)
md = open(sys.argv[3]).read()
assert f'mean of 5 measured run(s): {want:.1f} samples/s' in md, md
assert doc['passed'] is True and all(r['passed'] for r in doc['rules'])
print(f"ok: figure = mean of runs 2-6: {want:.1f} samples/s, AU {au:.2f} %, {bps / 2**20:.3f} MiB/s")
PY

# Each break fails naming its rule, exit 1.
S=("$T"/set/run{1..6})
assert_exit 1 "4 runs instead of 6" mlperf "${S[@]:0:4}" -o "$T/b.md"
rule_line "$T/b.md" runs FAIL
assert_exit 1 "the warm-up alone" mlperf "${S[0]}" -o "$T/b.md"
rule_line "$T/b.md" mean_of_5 FAIL
grep -q 'mean of 0 measured run(s): – samples/s (none), – MiB/s, AU – %' "$T/b.md" || fail "no figure is not –"
grep -Eqiw 'nan|inf' "$T/b.md" && fail "a figure not measured printed as nan or inf"
assert_exit 1 "another workload between the runs" mlperf "${S[@]}" "$T/runs/cosmo" -o "$T/b.md"
rule_line "$T/b.md" consecutive FAIL
grep -q 'cosmo (workload cosmoflow' "$T/b.md" || fail "consecutive does not name the cosmoflow run"
assert_exit 1 "a configuration hash differing" mlperf "${S[@]:0:5}" "$T/runs/other-compute" -o "$T/b.md"
rule_line "$T/b.md" config_hash FAIL
rule_line "$T/b.md" provenance PASS
assert_exit 1 "data set below 5 x RAM" "$RB" report --mlperf --mlperf-client-ram 1MiB "$T/set" -o "$T/b.md"
rule_line "$T/b.md" dataset_size FAIL
grep -q 'data set 500 KiB against 5 x 1 MiB' "$T/b.md" || fail "dataset_size does not give the figures"

# Planted in copies of real results: AU below the threshold, an epoch of 499 steps, a provenance record whose
# hash does not match, a result whose configuration no longer matches its provenance record.
plant() { local name=$1 file=$2 filter=$3
    rm -rf "$T/p/$name" && mkdir -p "$T/p/$name" && cp -r "${S[@]}" "$T/p/$name/"
    jq "$filter" "$T/p/$name/run4/$file" >"$T/p/$name/x" && mv "$T/p/$name/x" "$T/p/$name/run4/$file"; }
plant au result.json '.summary.au_mean_pct = 80.5'
assert_exit 1 "AU below the threshold" mlperf "$T/p/au" -o "$T/b.md"
rule_line "$T/b.md" au FAIL
grep -q '80.50 (below)' "$T/b.md" || fail "au does not name the run below"
plant steps result.json '.summary.train_epochs[0].steps = 499'
assert_exit 1 "an epoch of 499 steps" mlperf "$T/p/steps" -o "$T/b.md"
rule_line "$T/b.md" steps_per_epoch FAIL
grep -q 'fewest steps in an epoch: 499 (run4' "$T/b.md" || fail "steps_per_epoch does not name run4"
plant hash provenance.json '.core_config_sha256 = ("0" * 64)'
assert_exit 1 "provenance hash not matching" mlperf "$T/p/hash" -o "$T/b.md"
rule_line "$T/b.md" provenance FAIL
rule_line "$T/b.md" config_hash PASS
plant config result.json '.config.epochs = 2'
assert_exit 1 "result configuration changed after the run" mlperf "$T/p/config" -o "$T/b.md"
rule_line "$T/b.md" provenance FAIL
rule_line "$T/b.md" config_hash FAIL

# Checkpoints: reads right after the writes in one run, without a cache drop, of less than 3 x RAM (5 MiB
# stated: 13.4 MB written); a second
# invocation reading 45 s after the writes (planted); subset mode with a model other than llama3-8b.
ckpt "$T/runs/ck-both" --params 1000000 --writes 1 --reads 1
assert_exit 1 "checkpoint read at once, against 5 MiB of RAM" "$RB" report --mlperf --mlperf-client-ram 5MiB \
    "$T/runs/ck-both" -o "$T/b.md"
rule_line "$T/b.md" ckpt_page_cache FAIL
grep -q 'ck-both: cache none; 13.351 MiB written against 3 x 5 MiB' "$T/b.md" || fail "ckpt_page_cache figures"
mkdir -p "$T/p/gap" && cp -r "$T/set/ck-read" "$T/p/gap/"
jq '.read_gap_s = 45' "$T/set/ck-read/result.json" >"$T/p/gap/ck-read/result.json"
assert_exit 1 "checkpoint reads 45 s after the writes" mlperf "$T/p/gap/ck-read" -o "$T/b.md"
rule_line "$T/b.md" ckpt_read_gap FAIL
grep -q 'reads started 45.0 s after the writes ended' "$T/b.md" || fail "ckpt_read_gap figures"
ckpt "$T/runs/ck-subset" --model llama3-70b --subset --scale 1/1000000 --writes 1 --reads 1
assert_exit 1 "subset mode with llama3-70b" "$RB" report --mlperf --mlperf-client-ram 1KiB "$T/runs/ck-subset" \
    -o "$T/b.md"
rule_line "$T/b.md" ckpt_subset FAIL
rule_line "$T/b.md" ckpt_page_cache PASS

# Bad input: one error line, exit 2.
mkdir -p "$T/p/noprov" && cp -r "$T/set/run2" "$T/p/noprov/" && rm "$T/p/noprov/run2/provenance.json"
assert_exit 2 "a result without provenance" mlperf "${S[0]}" "$T/p/noprov/run2"
assert_stderr_line 'error: report --mlperf: .*/run2 has no provenance record \(.*provenance.json: No such file'
assert_exit 2 "not a result directory" mlperf "$T/data"
assert_stderr_line 'error: report --mlperf: .*/data is not a result directory'
assert_exit 2 "mixed workloads" mlperf "${S[0]}" "$T/runs/cosmo"
assert_stderr_line 'error: report --mlperf: mixed workloads: 1 run\(s\) of custom and as many of cosmoflow'
assert_exit 2 "--mlperf with --compare" "$RB" report --mlperf --compare "${S[0]}" "${S[1]}"
assert_stderr_line 'error: --mlperf: takes --format md\|json and --out only'
SCHEMA_SKIP=1 # the copies above break results on purpose; every real one was checked
