#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A program's man page (section 1) from its own --help, so that the page
and the help cannot drift apart.

The help's layout, as testpmd-cq and cqpoll-lab print it: a "Usage:" line
(and lines under it), paragraphs at column 0, "Heading:" lines alone, and
options as "  --opt=X    text" with the text continued at column 29; lines
indented less than the text and not starting with '-' are entries under an
option (a device, an engine) or the rest of a long option's name.
A paragraph "Exit status: ..." becomes EXIT STATUS, after the options. The page adds NAME,
SEE ALSO and the guide to read.

usage: gen-man1.py --prog PROGRAM --name NAME --summary TEXT --version V
                   --out FILE [--guide PATH] [--see-also PAGE(S)...]
"""

import argparse
import re
import subprocess

TEXT_COL = 29


def esc(text):
    """Text for roff: backslashes and minus signs escaped."""
    return text.replace('\\', '\\e').replace('-', '\\-')


def text_line(line):
    """A line of filled text, safe from being read as a request."""
    line = esc(line.strip())
    return '\\&' + line if line[:1] in ('.', "'") else line


def indent_of(line):
    return len(line) - len(line.lstrip(' '))


def split_spec(body):
    """'--opt=X    text' -> ('--opt=X', 'text'); no gap: (body, '')."""
    m = re.match(r'(\S(?:.*?\S)?)(?: {2,}(\S.*))?$', body)
    return m.group(1), (m.group(2) or '')


def convert(help_text, prog_path, name):
    out = []
    lines = help_text.replace(prog_path, name).split('\n')
    i = 0
    # SYNOPSIS: the usage line and those indented under it.
    syn = []
    while i < len(lines) and (lines[i].startswith('Usage:') or
                              (syn and lines[i].startswith(' '))):
        syn.append(lines[i][len('Usage:'):].strip() if not syn else lines[i].strip())
        i += 1
    out.append('.SH SYNOPSIS')
    out.append('.nf')
    out.extend(text_line(s) for s in syn)
    out.append('.fi')
    out.append('.SH DESCRIPTION')
    para = []      # column-0 lines of the paragraph being read
    in_opt = False  # inside an option's .TP
    sub = False     # inside entries under an option (.RS)
    spec = None     # an option's name, until its text starts
    exit_status = []  # its own section, after the options

    def flush():
        nonlocal para
        if not para:
            return
        first = para[0]
        if len(para) == 1 and first.endswith(':') and len(first) < 72:
            title = first[:-1]
            if title == 'Options':
                out.append('.SH OPTIONS')
            else:
                out.append('.SS "' + esc(title) + '"')
        elif first.startswith('Exit status:'):
            para[0] = first[len('Exit status:'):]
            exit_status.extend(text_line(p) for p in para if p.strip())
        else:
            out.append('.PP')
            out.extend(text_line(p) for p in para)
        para = []

    def tag():
        """The pending option's .TP line."""
        nonlocal spec
        if spec is not None:
            out.append('.TP')
            out.append('\\fB' + esc(spec) + '\\fR')
            spec = None

    def close_option():
        nonlocal in_opt, sub
        tag()
        if sub:
            out.append('.RE')
        in_opt = sub = False

    for line in lines[i:]:
        if not line.strip():
            flush()
            continue
        ind = indent_of(line)
        body = line.strip()
        if ind == 0:
            close_option()
            para.append(body)
            continue
        flush()
        if ind == 2 and body.startswith('-'):
            close_option()
            spec, text = split_spec(body)
            in_opt = True
            if text:
                tag()
                out.append(text_line(text))
            continue
        if ind >= TEXT_COL or not in_opt:
            tag()
            # Under an entry, its --arm= and faults: lines stay lines.
            if sub and re.match(r'(--|[a-z]+: )', body):
                out.append('.br')
            out.append(text_line(body))
            continue
        if spec is not None and not sub:
            # The rest of a long option's name (--policy=...|...).
            spec += body
            continue
        # An entry under the option: a device, an engine.
        tag()
        if not sub:
            out.append('.RS')
            sub = True
        spec, text = split_spec(body)
        if text:
            tag()
            out.append(text_line(text))
    flush()
    close_option()
    if exit_status:
        out.append('.SH "EXIT STATUS"')
        out.extend(exit_status)
    # No empty paragraph before a heading.
    res = []
    for line in out:
        if res and res[-1] == '.PP' and line.split(' ')[0] in ('.PP', '.SH', '.SS', '.TP'):
            res.pop()
        res.append(line)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--prog', required=True)
    ap.add_argument('--name', required=True)
    ap.add_argument('--summary', required=True)
    ap.add_argument('--version', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--guide', default='')
    ap.add_argument('--see-also', nargs='*', default=[])
    args = ap.parse_args()
    help_text = subprocess.run([args.prog, '--help'], check=True, capture_output=True,
                               text=True).stdout
    page = ['.\\" Generated by gen-man1.py from %s --help.' % args.name,
            '.TH "%s" 1 "" "cqpoll %s" "cqpoll Manual"' % (args.name, args.version),
            # Ragged right: option lists have words longer than a line.
            '.ad l',
            '.SH NAME',
            esc(args.name) + ' \\- ' + esc(args.summary)]
    page += convert(help_text.rstrip('\n'), args.prog, args.name)
    if args.see_also or args.guide:
        page.append('.SH "SEE ALSO"')
    if args.see_also:
        page.append(',\n'.join('\\fB' + esc(p.split('(')[0]) + '\\fR(' + p.split('(')[1]
                               for p in args.see_also))
    if args.guide:
        page += ['.PP', 'The guide: \\fI' + esc(args.guide) + '\\fR.']
    with open(args.out, 'w', encoding='utf-8') as f:
        f.write('\n'.join(page) + '\n')


if __name__ == '__main__':
    main()
