#!/usr/bin/env python3
"""Compares every command's --help defaults with the option tables of the docs pages (docs/options.md,
"Option tables").

Usage: help_defaults.py RAILBENCH DOCS [--defaults CMD...]
  DOCS is the docs/ directory (every *.md under it is read) or one page.
  without --defaults: checks the pages against --help of every command the binary lists, prints one
  line per problem ("docs/PAGE.md:LINE: ...") and exits 1 when there is any;
  --defaults CMD...: prints, one per line, "--long TAB VALUE TAB -s" for each option of that command whose
  --help shows a default (VALUE empty for a flag, -s "--" without a short name), for the test to feed back.
"""
import glob
import os
import re
import subprocess
import sys

OPT_LINE = re.compile(r'^  (?:-(\w), )?\s*--([\w-]+)(?: (\S+))?(?:\s{2,}(.*))?$')
DEFAULT = re.compile(r'[(;] ?default: (.*)\)$')
# The top-level command words a section heading may name; main() takes them from the binary's --help, so a
# new command's page is checked with no change here.
TOP_WORDS = ['load', 'coll', 'fabric', 'block', 'report']


def top_words(rb):
    return re.findall(r'^  (\w+)\s{2,}', run_help(rb, []).split('commands:')[1], re.M)
DESCRIBED = re.compile(r'\(if not given: (.*)\)$')


def run_help(rb, words):
    p = subprocess.run([rb] + words + ['--help'], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f'{" ".join(words)} --help: exit {p.returncode}: {p.stderr.strip()}')
    return p.stdout


def commands(rb):
    """Every command word list the binary lists: top level, their subcommands, coll's collectives and tests."""
    out = []
    for top in top_words(rb):
        text = run_help(rb, [top])
        if 'commands:' in text and top != 'coll':
            out += [[top, sub] for sub in re.findall(r'^  (\w+)\s{2,}', text.split('commands:')[1], re.M)]
        elif top == 'coll':
            for alts in re.findall(r'railbench coll ([\w|]+)', text):
                out += [['coll', w] for w in alts.split('|')]
        else:
            out.append([top])
    return out


def parse_help(text):
    """{long: {'short': c, 'default': str or None, 'common': bool, 'help': str}} from one --help text."""
    opts, cur, common = {}, None, False
    for line in text.splitlines():
        if line.startswith('common options:'):
            common = True
        m = OPT_LINE.match(line)
        if m and m.group(2) != 'help':
            cur = {'short': m.group(1), 'help': m.group(4) or '', 'common': common, 'flag': not m.group(3)}
            opts[m.group(2)] = cur
        elif cur is not None and line.startswith(' ' * 20) and not cur['help']:
            cur['help'] = line.strip()
        elif not line.strip():
            cur = None
    for o in opts.values():
        d = DEFAULT.search(o['help'])
        w = DESCRIBED.search(o['help'])
        o['default'] = d.group(1) if d else w.group(1) if w else None
        o['parses'] = bool(d)  # a value that parses back, not a description of one worked out at run time
    return opts


def pages(docs):
    """(name shown in messages, path) of every page under DOCS (a directory) or of DOCS itself (one file)."""
    if not os.path.isdir(docs):
        return [(docs, docs)]
    base = os.path.dirname(os.path.abspath(docs).rstrip('/'))
    paths = sorted(glob.glob(os.path.join(docs, '**', '*.md'), recursive=True))
    return [(os.path.relpath(os.path.abspath(p), base), p) for p in paths]


def readme_rows(docs, refs=None):
    """(page:line, command words or 'common', first cell, meaning) of every option-table row of every page;
    into refs, each section's "Other options are those of `railbench CMD`" as (command words of the section,
    CMD words). A section is a heading naming a command (`railbench load get`); "Common options" and
    "Metrics: Prometheus and Grafana" hold the common options; any other heading of level 1 or 2 ends one."""
    rows = []
    for name, path in pages(docs):
        rows += page_rows(name, path, refs)
    return rows


def page_rows(name, path, refs):
    rows, cmds, in_table, in_fence = [], None, False, False
    for n, line in enumerate(open(path, encoding='utf-8'), 1):
        n = f'{name}:{n}'
        if line.startswith('```'):
            in_fence = not in_fence
        if in_fence or line.startswith('```'):
            continue  # a "# comment" in an example is no heading
        ref = re.match(r'Other options are those of `railbench ([^`]+)`, with the same defaults', line)
        if ref and refs is not None and cmds and cmds != 'common':
            refs.append((cmds, ref.group(1).split()))
        h = re.match(r'^(#{1,3}) (.*)', line)
        if h:
            m = re.search(r'`(?:railbench )?((?:' + '|'.join(TOP_WORDS) + r')\b[^`]*)`', h.group(2))
            if m and len(h.group(1)) > 1:  # a page's title (#) names its commands but holds no table
                words = m.group(1).split()
                cmds = [words[:-1] + [w] for w in words[-1].split('|')] if len(words) > 1 else [words]
                cmds = [c for c in cmds if not c[-1].isupper()]  # "coll COLLECTIVE" style placeholders
            elif len(h.group(1)) <= 2:
                cmds = 'common' if h.group(2) in ('Common options', 'Metrics: Prometheus and Grafana') else None
            continue
        if line.startswith('| option |'):
            in_table = True
            continue
        if not line.startswith('|'):
            in_table = False
            continue
        if in_table and cmds and not line.startswith('|---'):
            cells = [c.strip() for c in re.split(r'(?<!\\)\|', line.strip())[1:-1]]
            if len(cells) >= 2 and cells[0].startswith('`-'):
                rows.append((n, cmds, cells[0], ' | '.join(cells[1:])))
    return rows


def row_options(cell, helps):
    """The long names of the options a row's first cell names (short letters mapped through --help)."""
    names = set()
    for seg in re.findall(r'`([^`]*)`', cell):
        for tok in re.findall(r'(?<![\w-])(--?[A-Za-z0-9][\w-]*)', seg):
            if tok.startswith('--'):
                names.add(tok[2:])
            else:
                for h in helps:
                    names |= {k for k, o in h.items() if o['short'] == tok[1:]}
    return names


def check(rb, readme, stats):
    all_cmds = commands(rb)
    helps = {tuple(c): parse_help(run_help(rb, c)) for c in all_cmds}
    common = {k: o for k, o in helps[('block',)].items() if o['common']}
    problems = []
    # 1. --help itself: a default written by hand into the help text instead of the generated "(default: X)".
    for c, h in helps.items():
        for k, o in h.items():
            body = DESCRIBED.sub('', DEFAULT.sub('', o['help']))
            if re.search(r'\(default[ )]|default: ', body):
                problems.append(f'{" ".join(c)} --{k}: --help writes a default by hand: "{o["help"]}"')
    # 2. Each docs row against the --help of the commands of its section.
    refs = []
    rows = readme_rows(readme, refs)
    by_cmd = {}  # a docs problem -> the commands it holds for (one line for all collectives)
    stats['commands'], stats['rows'] = len(helps), len(rows)
    named = {tuple(c) for _, cmds, _, _ in rows if cmds != 'common' for c in cmds}

    def expand(cmds):
        """"railbench coll" stands for each collective: every command under it that no other section names."""
        return [c for c in cmds if tuple(c) in helps] + [
            list(k) for c in cmds if tuple(c) not in helps for k in helps if k[:len(c)] == tuple(c) and k not in named]
    covered = {}  # command (or 'common') -> the options its sections' rows name
    for n, cmds, cell, meaning in rows:
        if cmds != 'common':
            cmds = expand(cmds)
        for c in ['common'] if cmds == 'common' else [tuple(c) for c in cmds]:
            covered.setdefault(c, set()).update(row_options(cell, [common if c == 'common' else helps[c]]))
        group = [('common', common)] if cmds == 'common' else [(' '.join(c), helps.get(tuple(c))) for c in cmds]
        group = [(name, h) for name, h in group if h is not None]
        if not group:
            problems.append(f'{n}: the section names no command the binary lists ({cmds})')
            continue
        names = row_options(cell, [h for _, h in group])
        quals = {name.split()[-1] for name, _ in group}
        # "default `X`", or qualified: "`--opt` default `X`" (rows naming several options), "put default `X`".
        written = re.findall(r'(?:`(--?[\w-]+)[^`]*` |\b(\w+) )?default `([^`]*)`', meaning)
        for name in sorted(names):
            having = [(cn, h[name]) for cn, h in group if name in h]
            if not having:
                problems.append(f'{n}: --{name}: no command of the section has it')
                continue
            for cn, o in having:
                stats['compared'] += o['default'] is not None
                seen = len(problems)
                forms = {'--' + name} | ({'-' + o['short']} if o['short'] else set())
                mine = [v for oq, _, v in written if oq in forms] or \
                    [v for oq, wq, v in written if not oq and wq == cn.split()[-1]] or \
                    ([v for oq, wq, v in written if not oq and wq not in quals] if len(names) == 1 else [])
                if o['default'] is None and mine:
                    problems.append(f'{n}: --{name} ({{}}): docs say default `{mine[0]}`, --help shows none')
                elif o['default'] is not None and mine != [o['default']]:
                    problems.append(f'{n}: --{name} ({{}}): --help says default `{o["default"]}`, docs say '
                                    + (', '.join(f'`{v}`' for v in mine) if mine else 'none')
                                    + (f' (a row naming several options writes `--{name}` default `X`)'
                                       if len(names) > 1 and not mine else ''))
                if len(problems) > seen:
                    by_cmd.setdefault(problems.pop(), []).append(cn)
    problems += [msg.format(', '.join(cns)) for msg, cns in by_cmd.items()]
    # 3. Every default --help shows has a row: in the command's section, or in the section of the command whose
    #    options the section says it shares, with the same default there.
    shared = {tuple(c): tuple(r) for cmds, r in refs for c in expand(cmds)}
    for k, o in common.items():
        if o['default'] is not None and k not in covered.get('common', ()):
            problems.append(f'common --{k}: --help says default `{o["default"]}`, and no docs row names it')
    for c, h in helps.items():
        for k, o in h.items():
            if o['default'] is None or o['common'] or k in covered.get(c, ()):
                continue
            r = shared.get(c)
            if r and k in helps.get(r, {}) and k in covered.get(r, ()):
                if helps[r][k]['default'] != o['default']:
                    problems.append(f'{" ".join(c)} --{k}: default `{o["default"]}`, but its section says its other '
                                    f'options are those of {" ".join(r)}, whose default is `{helps[r][k]["default"]}`')
                continue
            problems.append(f'{" ".join(c)} --{k}: --help says default `{o["default"]}`, and no docs row names it')
    return problems


def main():
    rb, readme = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3 and sys.argv[3] == '--defaults':
        for k, o in parse_help(run_help(rb, sys.argv[4:])).items():
            if o['parses'] and not o['common']:
                print(f'--{k}\t{"" if o["flag"] else o["default"]}\t-{o["short"] or "-"}')
        return 0
    TOP_WORDS[:] = top_words(rb) or TOP_WORDS
    stats = {'compared': 0}
    problems = check(rb, readme, stats)
    for p in problems:
        print(p)
    print(f'{stats["commands"]} commands, {stats["rows"]} docs option rows, {stats["compared"]} defaults compared, '
          f'{len(problems)} problems')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
