#!/usr/bin/env python3
"""Every key a report kind reads is declared in its schema, and the rows its tables walk are required.

Usage: reader_keys.py [ROOT]   (ROOT: the checkout, default .)
Reads reports/kind_*.c as text. A read is a call of rb_rundir_num, rb_rundir_str, rb_rundir_array,
cJSON_GetObjectItemCaseSensitive or cJSON_GetObjectItem: its object is followed back to where it came from (a
run's summary, root or phases; a variable set from another read; an element of cJSON_ArrayForEach or
cJSON_GetArrayItem; a parameter, from each call of its function apart, across the files), and its key is a string
literal, either side of a ternary, an element of a const array of literals (or a field of a const array of
structs), a parameter given one of those, or one of DYNAMIC's keys (those built with snprintf). Each object
path and key, e.g. summary.ops[].errors.total, must be declared (properties, items, additionalProperties,
through $ref and *Of) by the schema of the kind that reads it (the kinds of a file: its RB_REPORT_KIND; a kind's
schema: the one whose "x-railbench-commands" names it) or by result.schema.json; the envelope's keys (phases,
labels...) by result.schema.json. A summary array a table walks row by row (cJSON_ArrayForEach over it) must be
in the schema's summary "required", but for OPTIONAL_BY_HISTORY. A read this cannot follow is a problem too.
Prints one line per problem, then a count; exits 1 on any problem.
"""
import glob
import json
import os
import re
import sys

# Keys made with snprintf, which the text does not show: (file, the expression read with) -> every key it takes.
DYNAMIC = {
    # slo_percentile(): "<clat|lat>_ns.<p50|p90|p99|p999|p9999>", clat p99 when the SLO names no other.
    ('kind_block.c', 'key'): [f'{lat}_ns.{p}' for lat in ('clat', 'lat') for p in ('p50', 'p90', 'p99', 'p999', 'p9999')],
}

# Rows a table walks that a schema cannot require: results written before the key existed (and fixtures of
# tests/fixtures/report) lack them, or the kind holds one of two tables. (schema, summary key): why.
OPTIONAL_BY_HISTORY = {
    ('coll.schema.json', 'collective_rows'): 'coll moe records summary.moe instead',
    ('fabric-sim.schema.json', 'collective_rows'): 'fabric sim --calibrate records calibration.rows instead',
}

ACCESSORS = ('rb_rundir_num', 'rb_rundir_str', 'rb_rundir_array', 'cJSON_GetObjectItemCaseSensitive',
             'cJSON_GetObjectItem')
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
    """One reports/kind_*.c: its functions, const arrays and struct layouts."""

    def __init__(self, path, root):
        self.name = os.path.basename(path)
        with open(path, encoding='utf-8') as f:
            self.text = strip_comments(f.read())
        self.root = root
        self.kinds = re.findall(r'RB_REPORT_KIND\((\w+),', self.text)
        self.functions = {}
        for m in re.finditer(r'^(?:static\s+)?(?:const\s+)?[A-Za-z_][\w \t\*]*?\b([a-z_]\w*)\s*\(([^;{)]*(?:\([^)]*\)[^;{)]*)*)\)\s*\n\{',
                             self.text, flags=re.M):
            end = self.text.find('\n}\n', m.end())
            params = []
            for p in split_top(m.group(2)):
                pm = re.search(r'(\w+)\s*(?:\[\])?$', p)
                if pm and p != 'void':
                    params.append(pm.group(1))
            self.functions[m.group(1)] = (params, self.scope_loops(self.text[m.end():end]))
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
    """Reads of every kind file, with the objects and keys they resolve to."""

    def __init__(self, sources):
        self.sources = {s.name: s for s in sources}
        self.func_of = {}
        for s in sources:
            for f in s.functions:
                self.func_of[f] = s
        self.env = {}      # (file, function, name) -> value
        self.reads = set()  # (origin file, object path, key)
        self.walks = set()  # (origin file, object path, key) walked by cJSON_ArrayForEach
        self.unresolved = set()

    def resolve(self, s, fn, expr, record):
        """('json', {(origin, path)}) | ('key', {str}) | ('elem', (file, array)) | None."""
        e = expr.strip()
        while True:
            m = re.fullmatch(r'\((?:const\s+)?(?:cJSON|char)\s*\*\)\s*(.*)', e, flags=re.S)
            if m:
                e = m.group(1).strip()
                continue
            if e.startswith('(') and call_args(e, 0)[1] == len(e):
                e = e[1:-1].strip()
                continue
            break
        parts = split_top(e, '?')
        if len(parts) == 2:
            # cond ? a : b (the condition is read too)
            self.resolve(s, fn, parts[0], record)
            a, b = split_top(parts[1], ':')
            ra, rb = self.resolve(s, fn, a, record), self.resolve(s, fn, b, record)
            if ra and rb and ra[0] == rb[0] == 'key':
                return ('key', ra[1] | rb[1])
            if ra and rb and ra[0] == rb[0] == 'json':
                return ('json', ra[1] | rb[1])
            return ra or rb
        if re.fullmatch(r'(?:"(?:\\.|[^"\\])*"\s*)+', e):
            return ('key', {''.join(re.findall(r'"((?:\\.|[^"\\])*)"', e))})
        for member, path in (('summary', 'summary'), ('root', ''), ('phases', 'phases'), ('labels', 'labels')):
            if re.fullmatch(r'[\w\[\]>\-\.]+(?:->|\.)' + member, e):
                return ('json', {(s.name, path)})
        m = re.match(r'(\w+)\s*\(', e)
        if m and call_args(e, m.end() - 1)[1] == len(e):
            return self.call(s, fn, m.group(1), split_top(call_args(e, m.end() - 1)[0]), record)
        m = re.fullmatch(r'&\s*(\w+)\[[^\]]*\]', e)
        if m and s.array(fn, m.group(1)):
            return ('elem', (s.name, fn, m.group(1)))
        m = re.fullmatch(r'(\w+)\[[^\]]*\](?:\.(\w+))?', e)
        if m and s.array(fn, m.group(1)):
            v = s.array_values(fn, m.group(1), m.group(2))
            return ('key', set(v)) if v is not None else None
        m = re.fullmatch(r'(\w+)->(\w+)', e)
        if m:
            v = self.env.get((s.name, fn, m.group(1)))
            if v and v[0] == 'elem':
                vals = self.sources[v[1][0]].array_values(v[1][1], v[1][2], m.group(2))
                return ('key', set(vals)) if vals is not None else None
        if re.fullmatch(r'\w+', e):
            if (s.name, e) in {(f, n) for f, n in DYNAMIC}:
                return ('key', set(DYNAMIC[(s.name, e)]))
            return self.env.get((s.name, fn, e))
        return None

    def call(self, s, fn, name, args, record):
        """A call's value; an accessor's read is recorded."""
        if name in ACCESSORS and len(args) == 2:
            base, key = self.resolve(s, fn, args[0], record), self.resolve(s, fn, args[1], record)
            if record:
                if not base or base[0] != 'json' or not key or key[0] != 'key':
                    self.unresolved.add((s.name, fn, f'{name}({", ".join(args)})'))
                else:
                    for origin, path in base[1]:
                        for k in key[1]:
                            self.reads.add((origin, path, k))
            if name in ('rb_rundir_num', 'rb_rundir_str') or not base or base[0] != 'json' or not key or key[0] != 'key':
                return None
            return ('json', {(o, f'{p}.{k}' if p else k) for o, p in base[1] for k in key[1]})
        if name == 'cJSON_GetArrayItem' and len(args) == 2:
            base = self.resolve(s, fn, args[0], record)
            if base and base[0] == 'json':
                return ('json', {(o, p + '[]') for o, p in base[1]})
            return None
        for a in args:  # other calls: whatever their arguments read
            self.resolve(s, fn, a, record)
        return None

    def bind(self, s, fn, name, value):
        if value is None:
            return
        old = self.env.get((s.name, fn, name))
        if old and old[0] == value[0] and value[0] in ('json', 'key'):
            value = (value[0], old[1] | value[1])
        self.env[(s.name, fn, name)] = value

    def calls_of(self, callee):
        """[(source, caller, args)] of every call of callee with as many arguments as it has parameters."""
        params = self.func_of[callee].functions[callee][0]
        out = []
        for s in self.sources.values():
            for fn, (_, body) in s.functions.items():
                for m in re.finditer(r'\b' + callee + r'\s*\(', body):
                    args = split_top(call_args(body, m.end() - 1)[0])
                    if len(args) == len(params) and not re.search(r'\w', body[max(0, m.start() - 1):m.start()]):
                        out.append((s, fn, args))
        return out

    def locals_of(self, s, fn, body, record):
        """Binds fn's variables (assignments, cJSON_ArrayForEach); with record, notes the summary rows walked."""
        for m in re.finditer(r'cJSON_ArrayForEach\s*\(\s*(\w+)\s*,', body):
            it = split_top(call_args(body, m.start() + m.group(0).index('('))[0])[1]
            v = self.resolve(s, fn, it, False)
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

    def pass_once(self):
        """One round of binding every variable, and every parameter from every call (their union)."""
        for s in self.sources.values():
            for fn, (params, body) in s.functions.items():
                self.locals_of(s, fn, body, False)
        for callee in self.func_of:
            for s, fn, args in self.calls_of(callee):
                for p, a in zip(self.func_of[callee].functions[callee][0], args):
                    self.bind(self.func_of[callee], callee, p, self.resolve(s, fn, a, False))

    def record(self):
        """Records every read: a function with parameters once per call (its arguments together, not the union
        of every call's), the others once."""
        for s in self.sources.values():
            for fn, (params, body) in s.functions.items():
                sites = self.calls_of(fn) if params else []
                contexts = [{p: self.resolve(cs, cfn, a, False) for p, a in zip(params, args)}
                            for cs, cfn, args in sites] or [None]
                saved = {k: v for k, v in self.env.items() if k[0] == s.name and k[1] == fn}
                for ctx in contexts:
                    if ctx is not None:
                        for k in list(self.env):
                            if k[0] == s.name and k[1] == fn:
                                del self.env[k]
                        for p, v in ctx.items():
                            self.bind(s, fn, p, v)
                        for _ in range(3):
                            self.locals_of(s, fn, body, False)
                    self.locals_of(s, fn, body, True)
                    for m in re.finditer(r'\b(' + '|'.join(ACCESSORS) + r')\s*\(', body):
                        self.call(s, fn, m.group(1), split_top(call_args(body, m.end() - 1)[0]), True)
                for k in [k for k in self.env if k[0] == s.name and k[1] == fn]:
                    del self.env[k]
                self.env.update(saved)


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
        if re.search(pat, t):
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


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
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
    sources = [Source(p, root) for p in sorted(glob.glob(os.path.join(root, 'reports', 'kind_*.c')))]
    a = Analysis(sources)
    for _ in range(6):
        a.pass_once()
    a.record()
    problems = []
    for f, fn, text in sorted(a.unresolved):
        text = re.sub(r'(\w)__\d+\b', r'\1', text)  # a loop's element by its name in the source
        problems.append(f'reports/{f}: {fn}(): cannot tell the object or key of {text[:160]}')
    kinds_of = {s.name: s.kinds for s in sources}
    for s in sources:
        for k in s.kinds:
            if k != 'phases' and k not in schemas_of_kind:
                problems.append(f'reports/{s.name}: kind {k}: no schema names it in "x-railbench-commands"')
    declared = 0
    for origin, path, key in sorted(a.reads):
        full = f'{path}.{key}' if path else key
        names = set()
        for k in kinds_of[origin]:
            names |= schemas_of_kind.get(k, set())
        names.add(ENVELOPE)
        if any(walk(schemas[n], schemas[n], tokens_of(full)) for n in names):
            declared += 1
        else:
            problems.append(f'reports/{origin}: reads {full}: declared by none of {", ".join(sorted(names))}')
    required, used = 0, set()
    for origin, path, key in sorted(a.walks):
        if path != 'summary':
            continue
        for k in kinds_of[origin]:
            for n in sorted(schemas_of_kind.get(k, ())):
                summary = schemas[n].get('properties', {}).get('summary', {})
                if key not in summary.get('properties', {}):
                    continue  # another kind of the file reads it
                used.add((n, key))
                if key in summary.get('required', []):
                    required += 1
                elif (n, key) not in OPTIONAL_BY_HISTORY:
                    problems.append(f'reports/{origin}: walks summary.{key} row by row: {n} does not require it '
                                    f'(nor does OPTIONAL_BY_HISTORY list it)')
    for n, key in sorted(set(OPTIONAL_BY_HISTORY) - used):
        problems.append(f'tests/reader_keys.py: OPTIONAL_BY_HISTORY lists {n} summary.{key}, which no table walks')
    for n, key in sorted(OPTIONAL_BY_HISTORY):
        if key in schemas.get(n, {}).get('properties', {}).get('summary', {}).get('required', []):
            problems.append(f'tests/reader_keys.py: OPTIONAL_BY_HISTORY lists {n} summary.{key}, which it requires')
    for p in problems:
        print(p)
    print(f'{len(a.reads)} keys read by {len(sources)} kind files, {declared} declared; '
          f'{required} table rows required; {len(problems)} problems')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
