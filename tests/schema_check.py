#!/usr/bin/env python3
"""Validates result.json files against the result contract in schemas/ (JSON Schema, draft 7).

Usage: schema_check.py SCHEMAS_DIR PATH...
  PATH is a result.json, a provenance.json, report --mlperf's JSON, or a directory searched for result.json
  and provenance.json files (recursively).
Every result.json is checked against SCHEMAS_DIR/result.schema.json (what every command records) and against
the kind schema whose "x-railbench-commands" names its recorded command ("coll" names "coll allreduce"; the
longest name that matches wins, as in reports/kinds.c); a command that no schema names is a problem too. A document whose "schema" is one of DOCUMENTS (a provenance record,
report --mlperf's verdict) is checked against that schema alone. Every line of the intervals.jsonl beside a
result.json (or found in a directory searched without one) is checked against SCHEMAS_DIR/intervals.schema.json;
a last line that is cut short (no newline, not JSON: a killed run) is allowed. Prints one line per problem, then
"N results, M problems"; exits 1 on
any problem, 2 on a usage error. Results that are not railbench's (no "schema" key) are skipped.
"""
import json
import os
import re
import sys

import jsonschema


def load(path):
    with open(path, encoding='utf-8') as f:
        return json.load(f)


def schema_of(kinds, command):
    """The (name, schema) pairs whose "x-railbench-commands" name command with the longest name that matches:
    a command itself, or a command and what follows a space ("coll" names "coll allreduce")."""
    best, mine = -1, []
    for n, s in kinds:
        for c in s.get('x-railbench-commands', {}):
            if command == c or command.startswith(c + ' '):
                if len(c) > best:
                    best, mine = len(c), []
                if len(c) == best:
                    mine.append((n, s))
    return mine


# tests/mpi/mpi_harness.c records what the harness gives every command under this name; it is no railbench
# command, so no kind schema names it: its results are held against the envelope alone.
TEST_HARNESS = 'test harness'

# Documents that are not results: their "schema" value picks their schema file, and no kind is theirs.
DOCUMENTS = {
    'mlps-run-provenance/1': 'provenance.schema.json',
    'railbench.mlperf-check/1': 'mlperf-check.schema.json',
}


def results(paths):
    """The result.json files under paths; a copy of this checkout's tests/fixtures (a test's clone of the
    source tree) holds results planted for the report tests, not results of the run, and is left out."""
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in sorted(os.walk(p)):
                rel = os.sep + os.path.relpath(root, p) + os.sep
                if os.sep + os.path.join('tests', 'fixtures') + os.sep in rel:
                    continue
                for name in ('result.json', 'provenance.json'):
                    if name in files:
                        yield os.path.join(root, name)
                if 'result.json' not in files and 'intervals.jsonl' in files:
                    yield os.path.join(root, 'intervals.jsonl')
        else:
            yield p


def interval_problems(path, schema):
    """Problems of intervals.jsonl at path, one per bad line (at most 5 named)."""
    try:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    except OSError as e:
        return [f'{path}: cannot read: {e}']
    lines = text.split('\n')
    cut = lines[-1] != ''  # the last line has no newline
    out = []
    validator = jsonschema.Draft7Validator(schema)
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except ValueError as e:
            if not (cut and i == len(lines)):
                out.append(f'{path}:{i}: not JSON: {e}')
            continue
        for e in validator.iter_errors(doc):
            out.append(f'{path}:{i}: intervals.schema.json: {"/".join(map(str, e.absolute_path)) or "(top)"}: '
                       f'{e.message[:300]}')
        if len(out) >= 5:
            out.append(f'{path}: further lines not checked')
            break
    return out


def problems_of(path, envelope, kinds, documents):
    try:
        doc = load(path)
    except (OSError, ValueError) as e:
        return [f'{path}: not JSON: {e}'], None
    if not isinstance(doc, dict) or 'schema' not in doc:
        return [], None
    out = []
    if doc['schema'] in DOCUMENTS:
        name = DOCUMENTS[doc['schema']]
        for e in jsonschema.Draft7Validator(documents[name]).iter_errors(doc):
            out.append(f'{path}: {name}: {"/".join(map(str, e.absolute_path)) or "(top)"}: {e.message[:300]}')
        return out, name
    for e in jsonschema.Draft7Validator(envelope).iter_errors(doc):
        out.append(f'{path}: result.schema.json: {"/".join(map(str, e.absolute_path)) or "(top)"}: {e.message}')
    command = doc.get('command')
    if command == TEST_HARNESS:
        return out, TEST_HARNESS
    mine = schema_of(kinds, command) if isinstance(command, str) else []
    if len(mine) != 1:
        out.append(f'{path}: command "{command}": named by {len(mine)} kind schemas '
                   f'({", ".join(n for n, _ in mine) or "none"}); expected exactly one')
        return out, None
    name, schema = mine[0]
    for e in jsonschema.Draft7Validator(schema).iter_errors(doc):
        out.append(f'{path}: {name}: {"/".join(map(str, e.absolute_path)) or "(top)"}: {e.message[:300]}')
    return out, name


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    sdir = sys.argv[1]
    envelope = load(os.path.join(sdir, 'result.schema.json'))
    documents = {n: load(os.path.join(sdir, n)) for n in DOCUMENTS.values()}
    kinds = [(n, load(os.path.join(sdir, n))) for n in sorted(os.listdir(sdir))
             if n.endswith('.schema.json') and n not in ('result.schema.json', 'intervals.schema.json')
             and n not in documents]
    for n, s in [('result.schema.json', envelope)] + kinds + list(documents.items()):
        jsonschema.Draft7Validator.check_schema(s)
    n = 0
    problems = []
    intervals = load(os.path.join(sdir, 'intervals.schema.json'))
    jsonschema.Draft7Validator.check_schema(intervals)
    for path in results(sys.argv[2:]):
        beside = os.path.join(os.path.dirname(path), 'intervals.jsonl')
        if os.path.basename(path) == 'intervals.jsonl':
            problems += interval_problems(path, intervals)
            continue
        p, kind = problems_of(path, envelope, kinds, documents)
        n += kind is not None or bool(p)
        problems += p
        if os.path.basename(path) == 'result.json' and (kind is not None or p) and os.path.exists(beside):
            problems += interval_problems(beside, intervals)
    for p in problems:
        print(p)
    print(f'{n} results, {len(problems)} problems')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
