#!/usr/bin/env python3
"""Man pages, bash completion and --help agree on every option of every command.

Usage: man_completion.py RAILBENCH MANDIR COMPLETION
  MANDIR holds man1/railbench*.1 (scripts/gen-man.py's output, or an installed share/man); COMPLETION is the bash
  completion file. For every command the binary lists (tests/help_defaults.py's walk of --help):
  - its man page (railbench-GROUP(1), as man renders it) has a section naming the command, holding every
    option --help shows, with the same short letter, metavar and help text, default included, and no other;
    the common options are in the page's COMMON OPTIONS with the same text;
  - bash completion (sourced into bash; `complete -p railbench` must name its function) offers the command
    words at each level, every option of the command for "-", and for an option with a fixed set of values
    exactly those values.
Prints one line per problem and a count; exits 1 when there is any.
"""
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import help_defaults  # noqa: E402  (the walk over commands and the parse of --help text)

# An option's tag line, "-s, --long METAVAR"; man puts the text of a short tag on the same line.
OPT_HEAD = re.compile(r'^ {7}(?:-(\w), )?--([\w-]+)((?: \S.*)?)$')


def help_options(rb, words):
    """{long: (short, metavar, help text)} of one command's --help text, -h/--help included."""
    out, cur = {}, None
    for line in help_defaults.run_help(rb, words).splitlines():
        m = re.match(r'^  (?:-(\w), )?\s*--([\w-]+)(?: (\S+))?(?:\s{2,}(.*))?$', line)
        if m:
            cur = m.group(2)
            out[cur] = [m.group(1), m.group(3), m.group(4) or '']
        elif cur and line.startswith(' ' * 20) and not out[cur][2]:
            out[cur][2] = line.strip()
        elif not line.strip():
            cur = None
    return {k: tuple(v) for k, v in out.items()}


def man_sections(path):
    """{section title: {long: (short, "METAVAR help")}} of a man page as man renders it (ASCII, no wrapping)."""
    env = dict(os.environ, LC_ALL='C.UTF-8', MANWIDTH='4000')
    p = subprocess.run(['man', '-E', 'ascii', '-l', path], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f'man -l {path}: exit {p.returncode}: {p.stderr.strip()}')
    secs, title, cur, lines = {}, None, None, p.stdout.splitlines()
    for i, line in enumerate(lines):
        if line and not line.startswith(' '):
            title, cur = line.strip(), None
            secs.setdefault(title, {})
            continue
        m = OPT_HEAD.match(line)
        if m and title is not None:
            nxt = lines[i + 1] if i + 1 < len(lines) else ''
            cur = m.group(2)
            text = m.group(3) + ' ' + (nxt.strip() if nxt.startswith(' ' * 14) else '')
            secs[title][cur] = (m.group(1), norm(text))  # "METAVAR help text (default: X)"
    return secs


def norm(text):
    return ' '.join(text.split())


def check_man(rb, mandir, cmds, problems):
    pages = {}
    for words in cmds:
        group = words[0]
        page = os.path.join(mandir, 'man1', f'railbench-{group}.1' if group != 'version' else 'railbench.1')
        if not os.path.exists(page):
            page = page + '.gz'
        if not os.path.exists(page):
            problems.append(f'{" ".join(words)}: no man page {page}')
            continue
        secs = pages.setdefault(page, man_sections(page))
        opts = help_options(rb, words)
        title = [t for t in secs if t.startswith('RAILBENCH ') and len(t.split()) == len(words) + 1 and
                 t.split()[1:len(words)] == [w.upper() for w in words[:-1]] and
                 words[-1].upper() in t.split()[len(words)].split('|')]
        common = secs.get('COMMON OPTIONS', {})
        if group == 'version':
            continue  # no options but the common ones' --help: railbench(1) lists those
        if len(title) != 1:
            problems.append(f'{" ".join(words)}: {os.path.basename(page)} has {len(title)} sections naming it')
            continue
        sec = secs[title[0]]
        for k, (short, mv, text) in opts.items():
            where = sec if k in sec else common if k in common else None
            if k == 'help':
                continue
            if where is None:
                problems.append(f'{" ".join(words)} --{k}: in --help, not in {os.path.basename(page)}')
                continue
            mshort, mtext = where[k]
            want = norm(f'{mv or ""} {text}')
            if (mshort, mtext) != (short, want):
                problems.append(f'{" ".join(words)} --{k}: --help "{"-" + short + " " if short else ""}{want}" but '
                                f'{os.path.basename(page)} "{"-" + mshort + " " if mshort else ""}{mtext}"')
        for k in sec:
            if k not in opts:
                problems.append(f'{" ".join(words)} --{k}: in {os.path.basename(page)}, not in --help')
    return len(pages)


BASH_QUERY = r'''
source "$1"
complete -p railbench
shift
while IFS= read -r line; do
    eval "COMP_WORDS=($line)"
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
    _railbench
    printf '%s\t%s\n' "$line" "${COMPREPLY[*]}"
done
'''


def check_completion(rb, completion, cmds, problems):
    """Asks the completion function (in one bash) for every command level, option list and value list."""
    queries, expect = [], {}

    def ask(words, cur, want, what):
        q = ' '.join(shlex.quote(w) for w in ['railbench'] + words + [cur])
        queries.append(q)
        expect[q] = (set(want), what)

    top = [w for w in re.findall(r'^  (\w+)\s{2,}', help_defaults.run_help(rb, []).split('commands:')[1], re.M)]
    ask([], '', top, 'railbench: commands')
    groups = {}
    for words in cmds:
        if len(words) > 1:
            groups.setdefault(words[0], []).append(words[1])
    for g, subs in groups.items():
        ask([g], '', subs, f'railbench {g}: commands')
    for words in cmds:
        opts = help_options(rb, words)
        names = {'--' + k for k in opts} | {'-' + s for s, _, _ in opts.values() if s}
        ask(words, '-', names, f'{" ".join(words)}: options')
        for k, (short, mv, text) in opts.items():
            m = re.search(r'\(one of ([^;)]*)', text)
            choices = m.group(1).split(', ') if m else mv.split('|') if mv and '|' in mv else None
            if choices:
                ask(words + ['--' + k], '', choices, f'{" ".join(words)} --{k}: values')
    p = subprocess.run(['bash', '-c', BASH_QUERY, 'bash', completion], input='\n'.join(queries) + '\n',
                       capture_output=True, text=True)
    out = p.stdout.splitlines()
    if p.returncode != 0 or not out or out[0] != 'complete -F _railbench railbench':
        problems.append(f'completion: complete -p railbench says {out[:1]} (exit {p.returncode}: {p.stderr.strip()})')
        return 0
    got = dict(line.split('\t', 1) for line in out[1:] if '\t' in line)
    for q, (want, what) in expect.items():
        have = set(got.get(q, '').split())
        if have != want:
            problems.append(f'completion: {what}: offers {sorted(have - want)} too many, {sorted(want - have)} missing')
    return len(expect)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    rb, mandir, completion = sys.argv[1:]
    cmds = help_defaults.commands(rb)
    problems = []
    npages = check_man(rb, mandir, cmds, problems)
    nq = check_completion(rb, completion, cmds, problems)
    for p in problems:
        print(p)
    print(f'{len(cmds)} commands, {npages} man pages, {nq} completion queries, {len(problems)} problems')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
