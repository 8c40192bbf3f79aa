#!/usr/bin/env python3
"""Man pages and bash completion generated from the option tables that drive --help.

Usage: scripts/gen-man.py RAILBENCH OUTDIR
Writes OUTDIR/man1/railbench.1 and railbench-COMMAND.1 for every top-level command but version, and
OUTDIR/completion/railbench (bash). Everything comes from the binary itself: RAILBENCH_HELP=json makes
every --help print its usage, summary and options (with each default exactly as the text shows it) as JSON,
and a command group its commands (core/cli_show.c, core/command.c); nothing here lists an option.
The page date is SOURCE_DATE_EPOCH's (reproducible builds), else the last commit's, else today's.
"""
import datetime
import json
import os
import re
import subprocess
import sys

# The top-level commands with a page of their own: every one the binary lists but version (main() fills it).
GROUP_PAGES = []


def rb_json(rb, words):
    env = dict(os.environ, RAILBENCH_HELP='json')
    p = subprocess.run([rb] + words + ['--help'], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f'gen-man: {" ".join(["railbench"] + words)} --help: exit {p.returncode}: {p.stderr.strip()}')
    try:
        return json.loads(p.stdout)
    except ValueError:
        sys.exit(f'gen-man: {" ".join(["railbench"] + words)} --help: no JSON (RAILBENCH_HELP=json): '
                 f'{p.stdout[:200]!r}')


def tree(rb):
    """[(top word, summary, [(command words, spec)])] for every command the binary lists, in its order."""
    out = []
    for top in rb_json(rb, [])['commands']:
        word = top['name']
        j = rb_json(rb, [word])
        cmds = []
        if 'commands' in j:
            for sub in j['commands']:
                cmds.append(([word, sub['name']], rb_json(rb, [word, sub['name']])))
        elif word == 'coll':
            # Its usage names the collectives; its summary the OSU point-to-point tests (their own options).
            words = []
            for alts in re.findall(r'railbench coll ([\w|]+)', j['usage'] + ' ' + j['summary']):
                words += [w for w in alts.split('|') if w not in words]
            for w in words:
                cmds.append((['coll', w], rb_json(rb, ['coll', w])))
        else:
            cmds.append(([word], j))
        out.append((word, top['summary'], cmds))
    return out


def version(rb):
    p = subprocess.run([rb, 'version'], capture_output=True, text=True)
    m = re.match(r'railbench (\S+)', p.stdout)
    return m.group(1) if m else 'unknown'


def page_date():
    sde = os.environ.get('SOURCE_DATE_EPOCH')
    if sde and sde.isdigit():
        return datetime.datetime.fromtimestamp(int(sde), datetime.timezone.utc).strftime('%Y-%m-%d')
    p = subprocess.run(['git', 'log', '-1', '--format=%cs'], capture_output=True, text=True,
                       cwd=os.path.dirname(os.path.abspath(__file__)))
    return p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else datetime.date.today().isoformat()


def roff(text):
    """Text safe inside a roff line: backslashes, hyphens (so that man shows - and search finds it)."""
    text = text.replace('\\', '\\e').replace('-', '\\-')
    return '\\&' + text if text[:1] in ('.', "'") else text


def opt_tail(o):
    """What --help appends to an option's help: its choices and its default, in --help's own words."""
    choices = o['choices']
    if choices and o['list']:
        return f' (default: {o["default"]})' if o['default'] is not None else ''
    if choices and o['metavar'] != '|'.join(choices):
        return f' (one of {", ".join(choices)}' + (f'; default: {o["default"]})' if o['default'] is not None else ')')
    return f' (default: {o["default"]})' if o['default'] is not None else ''


def opt_item(o):
    """One .TP item: -s, --long METAVAR, then the help text with the default as --help shows it."""
    head = (f'\\fB\\-{o["short"]}\\fR, ' if o['short'] else '') + f'\\fB\\-\\-{roff(o["long"])}\\fR'
    if o['metavar']:
        head += f' \\fI{roff(o["metavar"])}\\fR'
    return f'.TP\n{head}\n{roff(o["help"] + opt_tail(o))}\n'


def same_options(a, b):
    return a['options'] == b['options']


def man_group(word, summary, cmds, ver, date, common):
    name = f'railbench-{word}'
    out = [f'.TH {name.upper()} 1 "{date}" "railbench {ver}" "railbench manual"\n',
           f'.SH NAME\n{name} \\- {roff(summary)}\n', '.SH SYNOPSIS\n']
    groups = grouped(cmds)  # commands with identical options share one section (coll's collectives)
    for members, spec in groups:
        head = spec['usage'].split(' [')[0]
        out.append(f'.B {roff(head)}\n')
        rest = spec['usage'][len(head):].strip()
        if rest:
            out.append(f'{roff(rest)}\n')
        out.append('.br\n')
    out.append('.SH DESCRIPTION\n')
    out.append(f'{roff(summary[:1].upper() + summary[1:])}.\n')
    out.append('Each command below lists its options; a value shown as \\fB(default: X)\\fR is written exactly as '
               'it parses back. Options every command takes are under \\fBCOMMON OPTIONS\\fR. '
               'Sizes take B KiB MiB GiB TiB, KB MB GB TB (decimal) and k m g t (binary); durations ns us ms s m h.\n')
    for members, spec in groups:
        title = ' '.join(members[0][:-1] + ['|'.join(m[-1] for m in members)])
        out.append(f'.SH "RAILBENCH {roff(title.upper())}"\n')
        out.append(f'.B railbench {roff(title)}\n.PP\n{roff(spec["summary"])}\n')
        own = [o for o in spec['options'] if not o['common']]
        if own:
            out.append('.PP\nOptions:\n')
            out += [opt_item(o) for o in own]
    out.append('.SH "COMMON OPTIONS"\nEvery command of this page takes these (report: \\-\\-config and '
               '\\-\\-quiet only):\n' if word != 'report' else '.SH "COMMON OPTIONS"\n')
    out += [opt_item(o) for o in common]
    out.append(EXIT_STATUS)
    out.append(f'.SH "SEE ALSO"\n.BR railbench (1),\nthe page docs/{"fabric" if word == "fabric" else word}.md '
               'of the source tree, and\n.BR railbench\\ COMMAND\\ \\-\\-help .\n')
    return ''.join(out)


EXIT_STATUS = '''.SH "EXIT STATUS"
.TP
.B 0
success
.TP
.B 1
the run finished but a check asked for failed (error rate, #wrong, SLO, AU), or a signal cut it short
.TP
.B 2
bad usage or configuration: one line names the option, the value and the accepted form
.TP
.B 3
the run could not be carried out (unreachable endpoint, fio missing, MPI failure)
'''


def grouped(cmds):
    """Commands with identical usage and options, together: [([command words, ...], spec)]."""
    groups = []
    for words, spec in cmds:
        for g in groups:
            if same_options(g[1], spec) and g[1]['usage'] == spec['usage']:
                g[0].append(words)
                break
        else:
            groups.append(([words], spec))
    return groups


def man_top(tops, ver, date, common):
    out = [f'.TH RAILBENCH 1 "{date}" "railbench {ver}" "railbench manual"\n',
           '.SH NAME\nrailbench \\- benchmarks and load generation for the data paths of AI clusters\n',
           '.SH SYNOPSIS\n.B railbench\n\\fICOMMAND\\fR [\\fIoptions\\fR] [\\fIARGS\\fR]\n.br\n'
           '.B railbench\n\\fICOMMAND\\fR \\fB\\-\\-help\\fR\n',
           '.SH DESCRIPTION\n',
           'railbench measures object storage (direct, through a caching tier, cold and warm), block devices '
           'through fio, collectives over MPI ranks and the hosts\' disk and network counters, in one binary that '
           'runs as a single process or as MPI ranks under \\fBmpirun\\fR(1) or \\fBsrun\\fR(1); rank 0 merges '
           'what every rank measured (latency histograms exactly) and writes one result directory.\n',
           '.SH COMMANDS\n']
    for word, summary, cmds in tops:
        page = f'railbench\\-{word}(1)' if word in GROUP_PAGES else ''
        out.append(f'.TP\n.B railbench {roff(word)}\n{roff(summary)}' + (f'; see \\fB{page.split("(")[0]}\\fR(1)'
                                                                         if page else '') + '\n')
        if len(cmds) > 1:
            out.append('.RS\n')
            for members, spec in grouped(cmds):
                title = ' '.join(members[0][:-1] + ['|'.join(m[-1] for m in members)])
                out.append(f'.TP\n.B {roff(title)}\n{roff(spec["summary"].split(". ")[0].rstrip("."))}\n')
            out.append('.RE\n')
    out.append('.SH "COMMON OPTIONS"\n')
    out += [opt_item(o) for o in common]
    out.append('.SH FILES\n.TP\n.I railbench\\-results/<UTC time>\\-<command>/\n'
               'the result directory of a run (or \\fB\\-\\-out\\fR \\fIDIR\\fR): \\fBresult.json\\fR (the run '
               'record), \\fBintervals.jsonl\\fR (one line per interval per phase), \\fBtable.md\\fR (the summary)\n'
               '.TP\n.I /usr/share/railbench/\nGrafana dashboards and provisioning (\\fBgrafana/\\fR), Ansible '
               'playbooks (\\fBansible/\\fR), when installed from the package\n')
    out.append('.SH ENVIRONMENT\n.TP\n.B AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_PROFILE\n'
               'S3 credentials and signing region (never taken from the command line)\n'
               '.TP\n.B OMPI_ALLOW_RUN_AS_ROOT, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM\nOpen MPI refuses to run as root '
               'without both set to 1\n')
    out.append(EXIT_STATUS)
    out.append('.SH "SEE ALSO"\n' + ',\n'.join(f'.BR railbench\\-{w} (1)' for w in GROUP_PAGES) +
               ',\n.BR mpirun (1),\n.BR fio (1).\nThe README and docs/ of the source tree hold examples and the '
               'result.json reference.\n')
    return ''.join(out)


def bash_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def completion(tops):
    """A bash completion script: command words, options per command, the values of choice options."""
    words, opts, vals, lists = {}, {}, {}, []
    words['railbench'] = [w for w, _, _ in tops]
    for word, _, cmds in tops:
        if len(cmds) > 1 or cmds[0][0] != [word]:
            words['railbench ' + word] = [c[-1] for c, _ in cmds]
        for c, spec in cmds:
            key = ' '.join(['railbench'] + c)
            names = []
            for o in spec['options']:
                names.append('--' + o['long'])
                if o['short']:
                    names.append('-' + o['short'])
                choices = o['choices']
                if not choices and o['metavar'] and re.fullmatch(r'[\w.-]+(\|[\w.-]+)+', o['metavar']):
                    choices = o['metavar'].split('|')  # "--memory 0|1": the values the metavar names
                if choices:
                    vals[f'{key} --{o["long"]}'] = choices
                    if o['list']:
                        lists.append(f'{key} --{o["long"]}')
                    if o['short']:
                        vals[f'{key} -{o["short"]}'] = choices
                elif o['takes_value']:
                    vals[f'{key} --{o["long"]}'] = None  # a value: files
                    if o['short']:
                        vals[f'{key} -{o["short"]}'] = None
            opts[key] = names
    lines = ['# bash completion for railbench, generated by scripts/gen-man.py from the option tables of --help.',
             '# Commands, subcommands, options of each command and the values of options with a fixed set of values.',
             'declare -gA _railbench_words=(']
    lines += [f'  [{bash_quote(k)}]={bash_quote(" ".join(v))}' for k, v in words.items()]
    lines += [')', 'declare -gA _railbench_opts=(']
    lines += [f'  [{bash_quote(k)}]={bash_quote(" ".join(v))}' for k, v in opts.items()]
    lines += [')', '# "railbench COMMAND OPTION" -> its values; empty: the option takes a value that is not from a list',
              'declare -gA _railbench_vals=(']
    lines += [f'  [{bash_quote(k)}]={bash_quote(" ".join(v or []))}' for k, v in vals.items()]
    lines += [')', '# options whose value is a comma-separated list of those values',
              'declare -gA _railbench_lists=(']
    lines += [f'  [{bash_quote(k)}]=1' for k in lists]
    lines += [')', r'''
_railbench() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd=railbench i w
    # The command words typed so far: railbench, then words that name a command at each level.
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        [[ $w == -* ]] && break
        if [[ " ${_railbench_words[$cmd]-} " == *" $w "* ]]; then cmd="$cmd $w"; else break; fi
    done
    local key="$cmd $prev"
    if [[ -n ${_railbench_vals[$key]+set} ]]; then
        if [[ -n ${_railbench_lists[$key]-} && $cur == *,* ]]; then
            COMPREPLY=($(compgen -P "${cur%,*}," -W "${_railbench_vals[$key]}" -- "${cur##*,}"))
        elif [[ -n ${_railbench_vals[$key]} ]]; then
            COMPREPLY=($(compgen -W "${_railbench_vals[$key]}" -- "$cur"))
        else
            COMPREPLY=($(compgen -f -- "$cur"))
        fi
        return 0
    fi
    if [[ $cur == -* && -n ${_railbench_opts[$cmd]+set} ]]; then
        COMPREPLY=($(compgen -W "${_railbench_opts[$cmd]}" -- "$cur"))
    elif [[ -n ${_railbench_words[$cmd]+set} ]]; then
        COMPREPLY=($(compgen -W "${_railbench_words[$cmd]}" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
    return 0
}
complete -F _railbench railbench
''']
    return '\n'.join(lines)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rb, outdir = sys.argv[1], sys.argv[2]
    tops = tree(rb)
    GROUP_PAGES[:] = [w for w, _, _ in tops if w != 'version']
    ver, date = version(rb), page_date()
    block_spec = [spec for w, _, cmds in tops if w == 'block' for _, spec in cmds][0]
    common = [o for o in block_spec['options'] if o['common']]
    os.makedirs(os.path.join(outdir, 'man1'), exist_ok=True)
    os.makedirs(os.path.join(outdir, 'completion'), exist_ok=True)
    pages = {'railbench.1': man_top(tops, ver, date, common)}
    for word, summary, cmds in tops:
        if word in GROUP_PAGES:
            page_common = [o for o in cmds[0][1]['options'] if o['common']]
            pages[f'railbench-{word}.1'] = man_group(word, summary, cmds, ver, date, page_common)
    missing = [w for w in GROUP_PAGES if f'railbench-{w}.1' not in pages]
    if missing:
        sys.exit(f'gen-man: the binary lists no command {", ".join(missing)}')
    for name, text in pages.items():
        with open(os.path.join(outdir, 'man1', name), 'w', encoding='utf-8') as f:
            f.write(text)
    with open(os.path.join(outdir, 'completion', 'railbench'), 'w', encoding='utf-8') as f:
        f.write(completion(tops))
    return 0


if __name__ == '__main__':
    sys.exit(main())
