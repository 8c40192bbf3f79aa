#!/usr/bin/env python3
"""Every key a reader of result.json, intervals.jsonl or provenance.json reads is declared in that document's
schema, and the rows a report kind's tables walk are required.

Usage: reader_keys.py [ROOT]   (ROOT: the checkout, default .)
Reads as text reports/*.c and every other .c of the tree (tests apart) that parses a document it names (cJSON_Parse*
and "result.json", "intervals.jsonl" or RB_PROVENANCE_FILE: --config RUN, fabric sim --calibrate, load checkpoint
--after). A read is a call of rb_rundir_num, rb_rundir_str, rb_rundir_array,
cJSON_GetObjectItemCaseSensitive or cJSON_GetObjectItem, or of a function that only hands two of its parameters
to one (mlperf.c's item()). Its object is followed back to its document: a struct rb_rundir's summary, root,
phases or labels; a parse in a function naming one document; a call given a document's name (read_json(dir,
"result.json")); BUILT_AS's objects; a variable or struct member set from another read; an element of
cJSON_ArrayForEach or cJSON_GetArrayItem; a member added with cJSON_Add{Object,Array}ToObject; a parameter, from
each call of its function apart, across the files (a static function's calls in its own file). Its key is a
string literal, either side of a ternary, an element of a const array of literals (or a field of a const array
of structs), a parameter given one of those, a buffer snprintf filled from a format with %s and such keys, or
one of DYNAMIC's keys (those built at run time otherwise).

Each object path and key, e.g. summary.ops[].errors.total, must be declared (properties, items,
additionalProperties, through $ref and *Of): an intervals.jsonl line's by intervals.schema.json, a
provenance.json's by provenance.schema.json, a result.json's by the schema of a kind the file serves or by
result.schema.json. A file's kinds: its RB_REPORT_KIND, else FILE_KINDS, else (reports/) the kinds of the files
calling its functions when each of those has kinds; a kind's schema: the one whose "x-railbench-commands" names
it. A file serving no kind in particular (reports/rundir.c, hosts.c, report_cmd.c) reads any result: its keys are
checked against result.schema.json and, below summary (the kind's part), against every kind's schema. A summary
array a kind's table walks row by row (cJSON_ArrayForEach over it) must be in the schema's summary "required",
but for OPTIONAL_BY_HISTORY. A read this cannot follow is a problem, and so is a read outside any function it
recognises, a reader outside reports/ that FILE_KINDS does not list, and a stale entry of its tables; the only
reads it passes over are of NULL and of OWN_OUTPUT's objects, and IMPLEMENTATIONS' bodies (checked at their
calls). Prints one line per problem, then a count; exits 1 on any problem.
"""
import glob
import itertools
import json
import os
import re
import sys

# Keys made at run time, which the text does not show: (file, function, the expression read with) -> every key it
# takes (a list, or a function of the schemas). '*': any key (the object must declare additionalProperties).
DYNAMIC = {
    # slo_percentile() writes it: "<clat|lat>_ns.<p50|p90|p99|p999|p9999>", clat p99 when the SLO names no other.
    ('reports/kind_block.c', 'plot_iops', 'key'):
        [f'{lat}_ns.{p}' for lat in ('clat', 'lat') for p in ('p50', 'p90', 'p99', 'p999', 'p9999')],
    # a label's name the user gives (report --group-by, the label columns): any key of labels.
    ('reports/rundir.c', 'rb_rundir_label', 'key'): ['*'],
    # load_one(): each summary key the command's schema requires (build/gen/schema_commands.h's "needs").
    ('reports/report_cmd.c', 'load_one', 'key'): lambda schemas: sorted(
        {k for n in schemas.values() if n.get('x-railbench-commands')
         for k in n.get('properties', {}).get('summary', {}).get('required', [])}),
}

# Rows a table walks that a schema cannot require: results written before the key existed (and fixtures of
# tests/fixtures/report) lack them, or the kind holds one of two tables. (schema, summary key): why.
OPTIONAL_BY_HISTORY = {
    ('coll.schema.json', 'collective_rows'): 'coll moe records summary.moe instead',
    ('fabric-sim.schema.json', 'collective_rows'): 'fabric sim --calibrate records calibration.rows instead',
}

# The reads; a function that only hands two of its parameters to one of these is one too (Analysis.find_wrappers).
ACCESSORS = ('rb_rundir_num', 'rb_rundir_str', 'rb_rundir_array', 'cJSON_GetObjectItemCaseSensitive',
             'cJSON_GetObjectItem')

# The documents read back: (how a function names its file, how a call's argument names it). A reader's parse is of
# the one document its function names; a call given a document's name (read_json(dir, "result.json")) returns its
# root.
DOCUMENTS = {
    'result.json': (r'"[^"\n]*\bresult\.json"', r'"result\.json"'),
    'intervals.jsonl': (r'"[^"\n]*\bintervals\.jsonl"', r'"intervals\.jsonl"'),
    'provenance.json': (r'\bRB_PROVENANCE_FILE\b', r'RB_PROVENANCE_FILE'),
}
# The schema of each document but result.json (whose schemas are its kind's and the envelope).
DOCUMENT_SCHEMA = {'intervals.jsonl': 'intervals.schema.json', 'provenance.json': 'provenance.schema.json'}

# struct rb_rundir's members (reports/rundir_int.h), in any file: member -> path in result.json.
RUNDIR_MEMBERS = {'summary': 'summary', 'root': '', 'phases': 'phases', 'labels': 'labels'}

# Objects a reader builds and reads as a document: (file, function, variable) -> the document it stands for.
BUILT_AS = {
    # the record rebuilt from intervals.jsonl when result.json is unusable: reports read it as a result.json.
    ('reports/rundir.c', 'rb_rundir_load', 'root'): 'result.json',
}

# Struct members holding a reader's own output, not a document read back: (file, member) -> what it is.
OWN_OUTPUT = {
    ('reports/mlperf.c', 'rules'): 'the verdict report --mlperf builds, [{rule, applies_to, run, passed, detail}]',
}

# Functions whose reads are their callers': (file, function) -> why.
IMPLEMENTATIONS = {
    ('reports/rundir.c', 'at_path'): 'the dotted-path walk of rb_rundir_num, _str and _array: what it reads is '
                                     'each of their calls\' object and path, checked at the call',
}

# Readers outside reports/ (a .c file that parses a document it names), and reports/ files whose kinds neither
# RB_REPORT_KIND nor their callers tell: file -> the kinds whose results it reads (empty: any result, read by the
# envelope and, below summary, by whichever kind's schema declares the key).
FILE_KINDS = {
    'core/cli_apply.c': (),                  # --config RUN: any saved result's command and config
    'fabric/calibrate.c': ('coll', 'sim'),   # fabric sim --calibrate RUN: a coll (or fabric sim) result's rows
    'loader/ckpt/ckpt_phase.c': ('ckpt',),   # load checkpoint --after RUN: the write run's end
    'reports/mlperf.c': ('train', 'ckpt'),   # report --mlperf: load train and load checkpoint results
}

ENVELOPE = 'result.schema.json'
# A C string or character literal.
LITERAL = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')


def literal_len(s, i):
    """The length of the string or character literal at s[i] (1 when there is none)."""
    m = LITERAL.match(s, i)
    return len(m.group(0)) if m else 1


def strip_comments(text):
    """The text without comments (strings kept as they are)."""
    return re.sub(LITERAL.pattern + r'|/\*.*?\*/|//[^\n]*',
                  lambda m: m.group(0) if m.group(0)[0] in '"\'' else '\n' * m.group(0).count('\n'), text, flags=re.S)


def split_top(s, sep=','):
    """s split at sep outside parentheses, brackets, braces and strings."""
    parts, depth, cur, i = [], 0, '', 0
    while i < len(s):
        c = s[i]
        if c in '"\'':
            n = literal_len(s, i)
            cur += s[i:i + n]
            i += n
            continue
        if c in '([{':
            depth += 1
        elif c in ')]}':
            depth -= 1
        if c == sep and depth == 0:
            parts.append(cur)
            cur = ''
        else:
            cur += c
        i += 1
    parts.append(cur)
    return [p.strip() for p in parts]


def balanced_end(text, i, ends=''):
    """The index from i of the first bracket that closes one not opened after i, or of a character of ends
    outside brackets and literals; len(text) when there is none."""
    depth, j = 0, i
    while j < len(text):
        c = text[j]
        if c in '"\'':
            j += literal_len(text, j)
            continue
        if c in '([{':
            depth += 1
        elif c in ')]}':
            depth -= 1
            if depth < 0:
                return j
        elif c in ends and depth == 0:
            return j
        j += 1
    return j


def call_args(text, at):
    """The argument text of the call whose '(' is at text[at], and the index past its ')'."""
    end = balanced_end(text, at + 1)
    return text[at + 1:end], end + 1


def expr_at(text, i):
    """The expression starting at text[i], up to a ',' or ';' outside brackets and strings, or an unmatched ')'."""
    return text[i:balanced_end(text, i, ',;')]


class Source:
    """One reader's .c file: its functions (which of them static), const arrays and struct layouts."""

    def __init__(self, path, root):
        self.name = os.path.relpath(path, root)
        with open(path, encoding='utf-8') as f:
            self.text = strip_comments(f.read())
        self.root = root
        self.kinds = re.findall(r'RB_REPORT_KIND\((\w+),', self.text)
        self.functions, self.static, self.spans = {}, set(), []  # spans: (start, end) of each definition
        for m in re.finditer(r'^(static\s+)?(?:const\s+)?[A-Za-z_][\w \t\*]*?\b([a-z_]\w*)\s*\(([^;{)]*(?:\([^)]*\)[^;{)]*)*)\)\s*\n\{',
                             self.text, flags=re.M):
            end = self.text.find('\n}\n', m.end())
            params = []
            for p in split_top(m.group(3)):
                pm = re.search(r'(\w+)\s*(?:\[\])?$', p)
                if pm and p != 'void':
                    params.append(pm.group(1))
            self.functions[m.group(2)] = (params, self.scope_loops(self.text[m.end():end]))
            self.spans.append((m.start(), end))
            if m.group(1):
                self.static.add(m.group(2))
        self.structs = {}
        for m in re.finditer(r'struct\s+(\w+)\s*\{([^}]*)\}', self.text):
            self.structs[m.group(1)] = self.fields(m.group(2))
        self.arrays = self.arrays_in(self.text)  # file scope (a name a function declares too is the function's)
        self.local_arrays = {fn: self.arrays_in(body) for fn, (_, body) in self.functions.items()}

    @staticmethod
    def scope_loops(body):
        """body with each cJSON_ArrayForEach's element renamed inside its loop (v -> v__N): a name walked over
        two arrays in one function is two names."""
        n = 0
        while True:
            m = None
            for m in re.finditer(r'cJSON_ArrayForEach\s*\(\s*(\w+)\s*,', body):
                if '__' not in m.group(1):
                    break
            else:
                return body
            v = m.group(1)
            _, past = call_args(body, m.start() + m.group(0).index('('))
            j = past
            while body[j].isspace():
                j += 1
            if body[j] == '{':
                _, end = call_args(body.replace('{', '(').replace('}', ')'), j)
            else:
                end = body.index(';', j) + 1
            n += 1
            loop = re.sub(LITERAL.pattern + r'|\b' + v + r'\b',
                          lambda x: x.group(0) if x.group(0)[0] in '"\'' else f'{v}__{n}', body[m.start():end])
            body = body[:m.start()] + loop + body[end:]

    def arrays_in(self, text):
        """Const arrays declared in text: name -> (struct layout or None, initialiser text)."""
        out = {}
        for m in re.finditer(r'(?:static\s+)?const\s+(?:char\s*\*\s*const|struct\s+(\w+)|struct\s*\{([^}]*)\})\s*(\w+)\[\]\s*=\s*\{',
                             text):
            body, _ = call_args(text.replace('{', '(').replace('}', ')'), m.end() - 1)
            layout = self.structs.get(m.group(1)) if m.group(1) else self.fields(m.group(2)) if m.group(2) else None
            out[m.group(3)] = (layout, body)
        return out

    @staticmethod
    def fields(decl):
        """Field names of a struct body, in order."""
        out = []
        for d in decl.split(';'):
            d = d.strip()
            if not d:
                continue
            first = re.match(r'(?:const\s+)?(?:struct\s+\w+|unsigned\s+\w+|\w+)\s*(.*)', d, flags=re.S).group(1)
            for name in split_top(first):
                out.append(re.sub(r'[\s\*]|\[.*\]', '', name))
        return out

    def array(self, fn, name):
        """The const array name as function fn sees it, or None."""
        return self.local_arrays.get(fn, {}).get(name) or self.arrays.get(name)

    def array_values(self, fn, name, field=None):
        """The string literals of const array name (of field, for an array of structs), or None."""
        if not self.array(fn, name):
            return None
        layout, body = self.array(fn, name)
        macro = re.fullmatch(r'\s*(RB_\w+)\s*', body)
        if macro:
            return expand_list_macro(self.root, macro.group(1))
        if field is None:
            if layout:
                return None
            return re.findall(r'"((?:\\.|[^"\\])*)"', body)
        if not layout or field not in layout:
            return None
        k = layout.index(field)
        out = []
        for elem in split_top(body):
            items = split_top(elem.strip()[1:-1]) if elem.startswith('(') else []
            if k < len(items) and items[k].startswith('"'):
                out.append(items[k][1:-1])
        return out


def expand_list_macro(root, macro):
    """The names of an X-macro list of include/railbench/ that {MACRO} initialises an array of."""
    for h in glob.glob(os.path.join(root, 'include', 'railbench', '*.h')):
        with open(h, encoding='utf-8') as f:
            text = f.read()
        m = re.search(r'#define\s+' + macro + r'\s+(\w+)\(\w+\)', text)
        if not m:
            continue
        body = re.search(r'#define\s+' + m.group(1) + r'\(X\)((?:.*\\\n)*.*)', text).group(1)
        return re.findall(r'X\(\w+,\s*(\w+)\)', body)
    return None


class Analysis:
    """Reads of every reader file, with the documents, objects and keys they resolve to."""

    def __init__(self, sources, schemas):
        self.sources = {s.name: s for s in sources}
        self.schemas = schemas
        self.defs = {}     # function name -> [the sources defining it]
        for s in sources:
            for f in s.functions:
                self.defs.setdefault(f, []).append(s)
        self.env = {}      # (file, function, name) -> value; (file, '.', member) -> what the file stores in it
        self.reads = set()  # ((origin file, document), object path, key)
        self.walks = set()  # ((origin file, document), object path, key) walked by cJSON_ArrayForEach
        self.unresolved = set()
        self.wrappers = {}  # (file, function) -> (object argument, key argument)
        self.find_wrappers()
        self.sites = self.index_calls()

    def target(self, s, name):
        """The source of the function a call of name in s means: s's own, else another file's that is not static."""
        if name in s.functions:
            return s
        return next((d for d in self.defs.get(name, []) if name not in d.static), None)

    def accessor(self, s, name):
        """(object argument, key argument) when a call of name in s is a read, else None."""
        if name in ACCESSORS:
            return (0, 1)
        d = self.target(s, name)
        return self.wrappers.get((d.name, name)) if d else None

    def accessor_calls(self, s, body):
        """[(name, args)] of the reads body makes."""
        return [(m.group(1), split_top(call_args(body, m.end() - 1)[0]))
                for m in re.finditer(r'\b(\w+)\s*\(', body) if self.accessor(s, m.group(1))]

    def find_wrappers(self):
        """Functions that do nothing but hand two of their parameters to one accessor (mlperf.c's item(o, k)) are
        accessors too: each call of one is a read, checked where it is made. To a fixed point (num() calls item())."""
        changed = True
        while changed:
            changed = False
            for s in self.sources.values():
                for fn, (params, body) in s.functions.items():
                    calls = self.accessor_calls(s, body)
                    if (s.name, fn) in self.wrappers or len(calls) != 1:
                        continue
                    name, args = calls[0]
                    o, k = self.accessor(s, name)
                    if max(o, k) < len(args) and args[o] in params and args[k] in params:
                        self.wrappers[(s.name, fn)] = (params.index(args[o]), params.index(args[k]))
                        changed = True

    @staticmethod
    def unwrap(e):
        """e without casts and enclosing parentheses."""
        while True:
            m = re.fullmatch(r'\((?:const\s+)?(?:cJSON|char)\s*\*\)\s*(.*)', e, flags=re.S)
            if m:
                e = m.group(1).strip()
            elif e.startswith('(') and call_args(e, 0)[1] == len(e):
                e = e[1:-1].strip()
            else:
                return e

    def resolve(self, s, fn, expr, record):
        """('json', {((origin, document), path)}) | ('key', {str}) | ('elem', (file, array)) | ('none', why) | None.
        ('none', why): an object that is no document (NULL, the reader's own output), so no read."""
        e = self.unwrap(expr.strip())
        parts = split_top(e, '?')
        if len(parts) == 2:
            return self.ternary(s, fn, parts, record)
        if re.fullmatch(r'(?:"(?:\\.|[^"\\])*"\s*)+', e):
            return ('key', {''.join(re.findall(r'"((?:\\.|[^"\\])*)"', e))})
        if e == 'NULL':
            return ('none', 'NULL')
        for member, path in RUNDIR_MEMBERS.items():
            if re.fullmatch(r'[\w\[\]>\-\.&]+(?:->|\.)' + member, e):
                return ('json', {((s.name, 'result.json'), path)})
        m = re.match(r'(\w+)\s*\(', e)
        if m and call_args(e, m.end() - 1)[1] == len(e):
            return self.call(s, fn, m.group(1), split_top(call_args(e, m.end() - 1)[0]), record)
        return self.resolve_name(s, fn, e)

    def ternary(self, s, fn, parts, record):
        """cond ? a : b: the union of a's and b's (the condition is read too)."""
        self.resolve(s, fn, parts[0], record)
        a, b = split_top(parts[1], ':')
        ra, rb = self.resolve(s, fn, a, record), self.resolve(s, fn, b, record)
        if ra and rb and ra[0] == rb[0] and ra[0] in ('key', 'json'):
            return (ra[0], ra[1] | rb[1])
        if not ra or not rb:
            return None  # one side cannot be followed: neither is taken for the whole
        return rb if ra[0] == 'none' else ra

    def resolve_name(self, s, fn, e):
        """A name, an array's element or field, a struct member: what it holds."""
        m = re.fullmatch(r'&\s*(\w+)\[[^\]]*\]', e)
        if m and s.array(fn, m.group(1)):
            return ('elem', (s.name, fn, m.group(1)))
        m = re.fullmatch(r'(\w+)\[[^\]]*\](?:\.(\w+))?', e)
        if m and s.array(fn, m.group(1)):
            v = s.array_values(fn, m.group(1), m.group(2))
            return ('key', set(v)) if v is not None else None
        m = re.fullmatch(r'(\w+)->(\w+)', e)
        v = self.env.get((s.name, fn, m.group(1))) if m else None
        if v and v[0] == 'elem':
            vals = self.sources[v[1][0]].array_values(v[1][1], v[1][2], m.group(2))
            return ('key', set(vals)) if vals is not None else None
        m = re.fullmatch(r'[\w\[\]>\-\.&]+(?:->|\.)(\w+)', e)
        if m:
            if (s.name, m.group(1)) in OWN_OUTPUT:
                return ('none', 'own output')
            return self.env.get((s.name, '.', m.group(1)))
        if re.fullmatch(r'\w+', e):
            if (s.name, fn, e) in BUILT_AS:
                return ('json', {((s.name, BUILT_AS[(s.name, fn, e)]), '')})
            if (s.name, fn, e) in DYNAMIC:
                keys = DYNAMIC[(s.name, fn, e)]
                return ('key', set(keys(self.schemas) if callable(keys) else keys))
            return self.env.get((s.name, fn, e))
        return None

    def document_of(self, s, fn, name, args):
        """The document whose root a call gives: cJSON_Parse* in a function that names one document's file alone,
        or any call given a document's file name ("result.json", RB_PROVENANCE_FILE); else None."""
        if name.startswith('cJSON_Parse'):
            named = [d for d, (in_text, _) in DOCUMENTS.items() if re.search(in_text, s.functions[fn][1])]
            return named[0] if len(named) == 1 else None
        for a in args:
            for d, (_, arg) in DOCUMENTS.items():
                if re.fullmatch(arg, a.strip()):
                    return d
        return None

    def call(self, s, fn, name, args, record):
        """A call's value; an accessor's read is recorded."""
        acc = self.accessor(s, name)
        if acc and max(acc) < len(args):
            return self.read(s, fn, name, args, acc, record)
        if name == 'cJSON_GetArrayItem' and len(args) == 2:
            base = self.resolve(s, fn, args[0], record)
            return ('json', {(o, p + '[]') for o, p in base[1]}) if base and base[0] == 'json' else base
        if re.fullmatch(r'cJSON_Add(?:Object|Array)ToObject', name) and len(args) == 2:
            # a member the reader adds to an object it builds: followed like a read, not checked as one
            return self.read(s, fn, name, args, (0, 1), False)
        for a in args:  # other calls: whatever their arguments read
            self.resolve(s, fn, a, record)
        doc = self.document_of(s, fn, name, args)
        return ('json', {((s.name, doc), '')}) if doc else None

    def read(self, s, fn, name, args, acc, record):
        """The read of args[acc[1]] below args[acc[0]]: recorded (with record) and, as an object, its value."""
        for i, a in enumerate(args):
            if i not in acc:
                self.resolve(s, fn, a, record)
        base, key = self.resolve(s, fn, args[acc[0]], record), self.resolve(s, fn, args[acc[1]], record)
        if base and base[0] == 'none':
            return base
        followed = base and base[0] == 'json' and key and key[0] == 'key'
        if record and not followed:
            self.unresolved.add((s.name, fn, f'{name}({", ".join(args)})'))
        elif record:
            self.reads |= {(origin, path, k) for origin, path in base[1] for k in key[1]}
        if name in ('rb_rundir_num', 'rb_rundir_str') or not followed:
            return None
        return ('json', {(o, f'{p}.{k}' if p else k) for o, p in base[1] for k in key[1]})

    def bind(self, s, fn, name, value):
        """name holds value too (the union of what it is given; an object rather than no document)."""
        old = self.env.get((s.name, fn, name))
        if value is None or (old and old[0] != 'none' and value[0] == 'none'):
            return
        if old and old[0] == value[0] and value[0] in ('json', 'key'):
            value = (value[0], old[1] | value[1])
        self.env[(s.name, fn, name)] = value

    def outside_functions(self):
        """[(file, text)] of the reads that lie in no function the script parsed (a definition it does not
        recognise): followed nowhere, so each is a problem."""
        out = []
        for s in self.sources.values():
            for m in re.finditer(r'\b(\w+)\s*\(', s.text):
                if self.accessor(s, m.group(1)) and not any(a <= m.start() < b for a, b in s.spans):
                    out.append((s.name, m.group(1) + '(' + call_args(s.text, m.end() - 1)[0] + ')'))
        return out

    def index_calls(self):
        """name -> [(source, caller, args)] of every call in every function's body (wrappers' apart: their reads
        are their callers')."""
        out = {}
        for s in self.sources.values():
            for fn, (_, body) in s.functions.items():
                if (s.name, fn) in self.wrappers:
                    continue
                for m in re.finditer(r'\b(\w+)\s*\(', body):
                    out.setdefault(m.group(1), []).append((s, fn, split_top(call_args(body, m.end() - 1)[0])))
        return out

    def calls_of(self, callee_src, callee):
        """[(source, caller, args)] of every call of callee_src's callee with as many arguments as it has
        parameters."""
        n = len(callee_src.functions[callee][0])
        return [(s, fn, args) for s, fn, args in self.sites.get(callee, [])
                if len(args) == n and self.target(s, callee) is callee_src]

    def locals_of(self, s, fn, body, record):
        """Binds fn's variables (assignments, cJSON_ArrayForEach, snprintf of keys) and the members it stores
        to; with record, notes the rows walked."""
        for m in re.finditer(r'cJSON_ArrayForEach\s*\(\s*(\w+)\s*,', body):
            it = split_top(call_args(body, m.start() + m.group(0).index('('))[0])[1]
            v = self.resolve(s, fn, it, False)
            if v and v[0] == 'none':
                self.bind(s, fn, m.group(1), v)
            if v and v[0] == 'json':
                self.bind(s, fn, m.group(1), ('json', {(o, p + '[]') for o, p in v[1]}))
                am = re.fullmatch(r'rb_rundir_array\s*\((.*)\)', it, flags=re.S)
                if record and am:
                    base = self.resolve(s, fn, split_top(am.group(1))[0], False)
                    key = self.resolve(s, fn, split_top(am.group(1))[1], False)
                    if base and base[0] == 'json' and key and key[0] == 'key':
                        self.walks |= {(o, p, k) for o, p in base[1] for k in key[1]}
        for m in re.finditer(r'\b(\w+)\s*(?<![=!<>+\-*/&|^%])=(?!=)', body):
            self.bind(s, fn, m.group(1), self.resolve(s, fn, expr_at(body, m.end()), False))
        for m in re.finditer(r'(?:->|\.)(\w+)\s*=(?!=)', body):  # a member, or a designated initialiser
            self.bind(s, '.', m.group(1), self.resolve(s, fn, expr_at(body, m.end()), False))
        for m in re.finditer(r'\bsnprintf\s*\(', body):
            self.bind_snprintf(s, fn, split_top(call_args(body, m.end() - 1)[0]))

    def bind_snprintf(self, s, fn, args):
        """snprintf(buf, len, "spans.%s.mean", spans[k]): buf holds every key the format makes of its arguments'
        keys (a format with conversions other than %s makes nothing followed)."""
        if len(args) < 3 or not re.fullmatch(r'"(?:\\.|[^"\\])*"', args[2]) or re.search(r'%[^s]', args[2]):
            return
        values = [self.resolve(s, fn, a, False) for a in args[3:]]
        if all(v and v[0] == 'key' for v in values):
            fmt = args[2][1:-1].replace('%s', '{}')
            self.bind(s, fn, args[0], ('key', {fmt.format(*p) for p in itertools.product(*[sorted(v[1]) for v in values])}))

    def pass_once(self):
        """One round of binding every variable, and every parameter from every call (their union)."""
        for s in self.sources.values():
            for fn, (params, body) in s.functions.items():
                self.locals_of(s, fn, body, False)
        for s in self.sources.values():
            for callee, (params, _) in s.functions.items():
                for cs, fn, args in self.calls_of(s, callee):
                    for p, a in zip(params, args):
                        self.bind(s, callee, p, self.resolve(cs, fn, a, False))

    def record(self):
        """Records every read: a function with parameters once per call (its arguments together, not the union
        of every call's), the others once; a wrapper's and IMPLEMENTATIONS' at their calls."""
        for s in self.sources.values():
            for fn, (params, body) in s.functions.items():
                if (s.name, fn) in self.wrappers or (s.name, fn) in IMPLEMENTATIONS:
                    continue
                if not self.accessor_calls(s, body) and 'cJSON_ArrayForEach' not in body:
                    continue  # reads nothing, walks nothing
                sites = self.calls_of(s, fn) if params else []
                contexts = [{p: self.resolve(cs, cfn, a, False) for p, a in zip(params, args)}
                            for cs, cfn, args in sites] or [None]
                saved = {k: v for k, v in self.env.items() if k[0] == s.name and k[1] == fn}
                for ctx in contexts:
                    self.record_in(s, fn, body, ctx)
                for k in [k for k in self.env if k[0] == s.name and k[1] == fn]:
                    del self.env[k]
                self.env.update(saved)

    def record_in(self, s, fn, body, ctx):
        """Records fn's reads with its parameters bound as ctx gives (None: as every call together)."""
        if ctx is not None:
            for k in [k for k in self.env if k[0] == s.name and k[1] == fn]:
                del self.env[k]
            for p, v in ctx.items():
                self.bind(s, fn, p, v)
            for _ in range(3):
                self.locals_of(s, fn, body, False)
        self.locals_of(s, fn, body, True)
        for name, args in self.accessor_calls(s, body):
            self.call(s, fn, name, args, True)


def walk(schema, doc, tokens):
    """Whether the path tokens are declared below schema (doc resolves $ref)."""
    if not isinstance(schema, dict):
        return False
    if '$ref' in schema:
        target = doc
        for part in schema['$ref'].lstrip('#/').split('/'):
            target = target[part]
        return walk(target, doc, tokens)
    for alt in ('allOf', 'anyOf', 'oneOf'):
        if any(walk(b, doc, tokens) for b in schema.get(alt, [])):
            return True
    if not tokens:
        return True
    t, rest = tokens[0], tokens[1:]
    if t == '[]':
        return walk(schema.get('items'), doc, rest)
    if t in schema.get('properties', {}):
        return walk(schema['properties'][t], doc, rest)
    for pat, sub in schema.get('patternProperties', {}).items():
        if t != '*' and re.search(pat, t):  # '*' (any key): additionalProperties alone declares it
            return walk(sub, doc, rest)
    if isinstance(schema.get('additionalProperties'), dict) and schema['additionalProperties']:
        return walk(schema['additionalProperties'], doc, rest)
    return False


def tokens_of(path):
    """'summary.ops[].errors' -> ['summary', 'ops', '[]', 'errors']."""
    out = []
    for part in path.split('.'):
        name = part.rstrip('[]')
        if name:
            out.append(name)
        out += ['[]'] * (part[len(name):].count('[]'))
    return out


def load_schemas(root):
    """name -> schema of schemas/*.schema.json, and kind -> the names of the schemas whose commands it tables."""
    sdir = os.path.join(root, 'schemas')
    schemas = {}
    for n in os.listdir(sdir):
        if n.endswith('.schema.json'):
            with open(os.path.join(sdir, n), encoding='utf-8') as f:
                schemas[n] = json.load(f)
    schemas_of_kind = {}
    for n, s in schemas.items():
        for kind in (s.get('x-railbench-commands') or {}).values():
            if kind:
                schemas_of_kind.setdefault(kind, set()).add(n)
    return schemas, schemas_of_kind


def reader_files(root):
    """reports/*.c, and every other .c of the tree (tests and build apart) that parses a document it names."""
    out = sorted(glob.glob(os.path.join(root, 'reports', '*.c')))
    paths = []
    # os.walk follows no symbolic link (a test's scratch tree under build/ may link back to the checkout).
    for top, dirs, files in os.walk(root):
        if top == root:
            dirs[:] = [d for d in dirs if d not in ('reports', 'tests', 'build') and not d.startswith('.')]
        paths += [os.path.join(top, f) for f in files if f.endswith('.c')]
    for path in sorted(paths):
        with open(path, encoding='utf-8') as f:
            text = strip_comments(f.read())
        if 'cJSON_Parse' in text and any(re.search(t, text) for t, _ in DOCUMENTS.values()):
            out.append(path)
    return out


def file_kinds(a):
    """file -> the kinds whose results it reads, or None (any result): its RB_REPORT_KIND, else FILE_KINDS, else
    (reports/) the kinds of the files calling its functions when every one of those has kinds."""
    kinds = {n: tuple(s.kinds) for n, s in a.sources.items() if s.kinds}
    kinds.update({n: k for n, k in FILE_KINDS.items() if n in a.sources})
    callers = {n: set() for n in a.sources}
    for n, s in a.sources.items():
        for fn in set(s.functions) - s.static:
            callers[n] |= {cs.name for cs, _, _ in a.sites.get(fn, []) if cs is not s and a.target(cs, fn) is s}
    changed = True
    while changed:
        changed = False
        for n in a.sources:
            if n not in kinds and callers[n] and all(kinds.get(c) for c in callers[n]):
                kinds[n] = tuple(sorted({k for c in callers[n] for k in kinds[c]}))
                changed = True
    return {n: kinds.get(n) or None for n in a.sources}


def schemas_for(origin, path, kinds_of, schemas, schemas_of_kind):
    """The schemas any of which must declare a read of path from origin (file, document), and their names."""
    f, doc = origin
    if doc in DOCUMENT_SCHEMA:
        return [DOCUMENT_SCHEMA[doc]], DOCUMENT_SCHEMA[doc]
    kinds = kinds_of[f]
    if kinds is None and tokens_of(path)[:1] == ['summary']:
        names = {ENVELOPE} | {n for ns in schemas_of_kind.values() for n in ns}
        return names, f'{ENVELOPE} nor any kind\'s schema'
    names = {ENVELOPE} | {n for k in kinds or () for n in schemas_of_kind.get(k, ())}
    return names, ', '.join(sorted(names))


def check_reads(a, kinds_of, schemas, schemas_of_kind, problems):
    """Every read declared by its document's schemas; returns how many are."""
    declared = 0
    for origin, path, key in sorted(a.reads):
        full = f'{path}.{key}' if path else key
        names, said = schemas_for(origin, full, kinds_of, schemas, schemas_of_kind)
        if any(walk(schemas[n], schemas[n], tokens_of(full)) for n in names if n in schemas):
            declared += 1
        else:
            what = full if origin[1] == 'result.json' else f'{origin[1]} {full}'
            problems.append(f'{origin[0]}: reads {what}: declared by none of {said}')
    return declared


def check_walks(a, kinds_of, schemas, schemas_of_kind, problems):
    """Every summary array a kind's table walks row by row required, but for OPTIONAL_BY_HISTORY; returns how
    many are."""
    required, used = 0, set()
    for (origin, doc), path, key in sorted(a.walks):
        if path != 'summary' or doc != 'result.json':
            continue
        for k in kinds_of[origin] or ():
            for n in sorted(schemas_of_kind.get(k, ())):
                summary = schemas[n].get('properties', {}).get('summary', {})
                if key not in summary.get('properties', {}):
                    continue  # another kind of the file reads it
                used.add((n, key))
                if key in summary.get('required', []):
                    required += 1
                elif (n, key) not in OPTIONAL_BY_HISTORY:
                    problems.append(f'{origin}: walks summary.{key} row by row: {n} does not require it '
                                    f'(nor does OPTIONAL_BY_HISTORY list it)')
    for n, key in sorted(set(OPTIONAL_BY_HISTORY) - used):
        problems.append(f'tests/reader_keys.py: OPTIONAL_BY_HISTORY lists {n} summary.{key}, which no table walks')
    for n, key in sorted(OPTIONAL_BY_HISTORY):
        if key in schemas.get(n, {}).get('properties', {}).get('summary', {}).get('required', []):
            problems.append(f'tests/reader_keys.py: OPTIONAL_BY_HISTORY lists {n} summary.{key}, which it requires')
    return required


def check_files(a, kinds_of, schemas_of_kind, problems):
    """Every kind named by a schema, every reader outside reports/ in FILE_KINDS, every FILE_KINDS entry a
    reader of known kinds."""
    for n, s in sorted(a.sources.items()):
        for k in s.kinds:
            if k != 'phases' and k not in schemas_of_kind:
                problems.append(f'{n}: kind {k}: no schema names it in "x-railbench-commands"')
        if not n.startswith('reports' + os.sep) and n not in FILE_KINDS:
            problems.append(f'{n}: parses a document it names: FILE_KINDS does not say which kinds\' results it reads')
    for n, kinds in sorted(FILE_KINDS.items()):
        if n not in a.sources:
            problems.append(f'tests/reader_keys.py: FILE_KINDS lists {n}, which is no reader')
        for k in kinds:
            if k not in schemas_of_kind:
                problems.append(f'tests/reader_keys.py: FILE_KINDS gives {n} kind {k}, which no schema names')


def check_tables(a, problems):
    """Every entry of DYNAMIC, BUILT_AS, IMPLEMENTATIONS and OWN_OUTPUT names a function or member there is."""
    for f, fn, *_ in list(DYNAMIC) + list(BUILT_AS) + list(IMPLEMENTATIONS):
        if fn not in getattr(a.sources.get(f), 'functions', {}):
            problems.append(f'tests/reader_keys.py: an exception names {f} {fn}(), which is no reader\'s function')
    for f, member in OWN_OUTPUT:
        if not re.search(r'->' + member + r'\b', getattr(a.sources.get(f), 'text', '')):
            problems.append(f'tests/reader_keys.py: OWN_OUTPUT names {f} ->{member}, which it does not use')


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    schemas, schemas_of_kind = load_schemas(root)
    sources = [Source(p, root) for p in reader_files(root)]
    a = Analysis(sources, schemas)
    for _ in range(10):  # to a fixed point: each round follows one more step of a chain
        before = dict(a.env)
        a.pass_once()
        if a.env == before:
            break
    a.record()
    problems = []
    for f, fn, text in sorted(a.unresolved):
        text = re.sub(r'(\w)__\d+\b', r'\1', text)  # a loop's element by its name in the source
        problems.append(f'{f}: {fn}(): cannot tell the object or key of {text[:160]}')
    for f, text in a.outside_functions():
        problems.append(f'{f}: a read outside any function this script recognises: {text[:160]}')
    kinds_of = file_kinds(a)
    check_files(a, kinds_of, schemas_of_kind, problems)
    check_tables(a, problems)
    declared = check_reads(a, kinds_of, schemas, schemas_of_kind, problems)
    required = check_walks(a, kinds_of, schemas, schemas_of_kind, problems)
    for p in problems:
        print(p)
    nfiles = len({o[0] for o, _, _ in a.reads})
    print(f'{len(a.reads)} keys read by {nfiles} reader files, {declared} declared; '
          f'{required} table rows required; {len(problems)} problems')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
