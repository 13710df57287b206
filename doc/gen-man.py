#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Man pages (section 3) of the installed API, from doxygen's XML.

Doxygen's own man output names pages after headers and after every struct
member, so that "man 3 free" or "man 3 sleep" would open a cqpoll page
instead of glibc's, and it titles pages by source path. This writes instead
one page per documented function, type (struct, union, enum, typedef) and
macro of the installed headers whose name is its own cqpoll_ or CQPOLL_
name, with the #include a program writes (<cqpoll.h> for what cqpoll.h
includes), a link page per enum constant to its enum's page, a page per
header with its file-level documentation (what the header as a whole says:
a driver's mapping of its completions, what to include first), named by the
header (cqpoll_uring.h(3)), and cqpoll(3), the index of them all. Nothing
else: no page can take a name from another package's man3.

Every page of an EXPERIMENTAL function (its symbol in the version maps'
EXPERIMENTAL node) or of a header whose file-level documentation says it is
EXPERIMENTAL gets a STABILITY section saying so.

usage: gen-man.py --doxygen DOXYGEN --doxyfile DOXYFILE --xml XMLDIR
                  --out OUTDIR --version VERSION --umbrella cqpoll.h
                  --indirect H... --version-maps MAP... --headers H...
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

PREFIX = re.compile(r'^(cqpoll_|CQPOLL_)')
MACRO = '\x00'  # marks a line that is a roff request, not text


def esc(text):
    """Text for roff: backslashes and minus signs escaped."""
    return text.replace('\\', '\\e').replace('-', '\\-')


class Roff:
    """Doxygen description XML to roff; parameters and return values are
    collected apart for their own sections."""

    def __init__(self):
        self.params = []   # (name, roff)
        self.returns = []  # roff
        self.list_depth = 0

    def inline(self, e):
        out = [esc(e.text or '')]
        for c in e:
            out.append(self.node(c))
            out.append(esc(c.tail or ''))
        return ''.join(out)

    def node(self, e):
        tag = e.tag
        if tag in ('computeroutput', 'bold'):
            return '\\fB' + self.inline(e) + '\\fR'
        if tag == 'emphasis':
            return '\\fI' + self.inline(e) + '\\fR'
        if tag == 'ref':
            return '\\fB' + self.inline(e) + '\\fR'
        if tag == 'ulink':
            text = self.inline(e)
            url = e.get('url', '')
            return text if esc(url) == text else text + ' <' + esc(url) + '>'
        if tag == 'linebreak':
            return '\n' + MACRO + '.br\n'
        if tag == 'para':
            return '\n' + MACRO + '.PP\n' + self.inline(e) + '\n'
        if tag in ('itemizedlist', 'orderedlist'):
            return self.lst(e, tag == 'orderedlist')
        if tag in ('programlisting', 'verbatim'):
            return self.code(e)
        if tag == 'parameterlist':
            for item in e.findall('parameteritem'):
                names = ', '.join(esc(''.join(n.itertext()).strip())
                                  for n in item.iter('parametername'))
                desc = item.find('parameterdescription')
                body = self.body(desc) if desc is not None else ''
                if e.get('kind') == 'retval':
                    self.returns.append(MACRO + '.TP\n\\fB' + names + '\\fR\n' + body)
                else:
                    self.params.append((names, body))
            return ''
        if tag == 'simplesect':
            kind = e.get('kind')
            body = self.body(e)
            if kind == 'return':
                self.returns.append(body)
                return ''
            title = {'note': 'Note', 'warning': 'Warning', 'see': 'See also',
                     'pre': 'Precondition', 'post': 'Postcondition',
                     'attention': 'Attention', 'remark': 'Remark',
                     'since': 'Since', 'deprecated': 'Deprecated'}.get(kind, '')
            return '\n' + MACRO + '.PP\n' + ('\\fB' + title + ':\\fR ' if title else '') + \
                body.lstrip('\n').removeprefix(MACRO + '.PP\n')
        if tag == 'xrefsect':
            title = e.findtext('xreftitle') or ''
            desc = e.find('xrefdescription')
            return '\n' + MACRO + '.PP\n\\fB' + esc(title) + ':\\fR ' + \
                (self.body(desc).lstrip('\n').removeprefix(MACRO + '.PP\n') if desc is not None else '')
        if tag == 'table':
            rows = []
            for row in e.findall('row'):
                rows.append(' | '.join(''.join(c.itertext()).strip() for c in row.findall('entry')))
            return '\n' + MACRO + '.PP\n' + MACRO + '.nf\n' + '\n'.join(esc(r) for r in rows) + \
                '\n' + MACRO + '.fi\n'
        if tag in ('anchor', 'hruler', 'image'):
            return ''
        if tag in ('sp',):
            return ' '
        # heading, sect*, superscript, ...: their text.
        return self.inline(e)

    def lst(self, e, ordered):
        out = ['\n']
        if self.list_depth:
            out.append(MACRO + '.RS\n')
        self.list_depth += 1
        for i, item in enumerate(e.findall('listitem'), 1):
            out.append(MACRO + ('.IP %d. 4\n' % i if ordered else '.IP \\(bu 2\n'))
            first = True
            for c in item:
                s = self.node(c)
                if first and c.tag == 'para':
                    s = s.lstrip('\n').removeprefix(MACRO + '.PP\n')
                elif c.tag == 'para':
                    s = '\n' + MACRO + '.IP "" 2\n' + s.lstrip('\n').removeprefix(MACRO + '.PP\n')
                out.append(s)
                out.append(esc(c.tail or ''))
                first = False
            out.append('\n')
        self.list_depth -= 1
        out.append(MACRO + ('.RE\n' if self.list_depth else '.PP\n'))
        return ''.join(out)

    def code(self, e):
        lines = []
        if e.tag == 'verbatim':
            lines = (e.text or '').split('\n')
        else:
            for cl in e.findall('codeline'):
                lines.append(''.join(_code_text(cl)))
        return '\n' + MACRO + '.PP\n' + MACRO + '.RS 4\n' + MACRO + '.nf\n' + \
            '\n'.join('\\&' + esc(l) for l in lines) + '\n' + MACRO + '.fi\n' + MACRO + '.RE\n'

    def body(self, e):
        """A description element's children, as roff."""
        if e is None:
            return ''
        out = [esc((e.text or '').strip())]
        for c in e:
            out.append(self.node(c))
            out.append(esc(c.tail or ''))
        return ''.join(out)


def _code_text(e):
    if e.tag == 'sp':
        yield ' '
    if e.text:
        yield e.text
    for c in e:
        yield from _code_text(c)
        if c.tail:
            yield c.tail


def finish(text):
    """Assemble roff: request lines as they are, text lines made safe."""
    out = []
    for line in text.split('\n'):
        if line.startswith(MACRO):
            out.append(line[1:])
            continue
        line = line.strip()
        if not line:
            continue
        if line[0] in '.\'':
            line = '\\&' + line
        out.append(line)
    # No empty paragraphs: a .PP followed by another request that starts one.
    res = []
    for line in out:
        if res and res[-1] == '.PP' and line.split(' ')[0] in ('.PP', '.IP', '.TP', '.SH', '.SS'):
            res.pop()
        res.append(line)
    while res and res[-1] == '.PP':
        res.pop()
    return '\n'.join(res) + '\n'


def text_of(e):
    return re.sub(r'\s+', ' ', ''.join(e.itertext())).strip() if e is not None else ''


def documented(m):
    return bool(text_of(m.find('briefdescription')) or text_of(m.find('detaileddescription')))


def includes_of(path):
    """The headers a header includes, by base name."""
    names = []
    with open(path, encoding='utf-8') as f:
        for line in f:
            m = re.match(r'\s*#\s*include\s*[<"]([^>"]+)[>"]', line)
            if m:
                names.append(os.path.basename(m.group(1)))
    return names


def experimental_symbols(maps):
    """The symbols of the EXPERIMENTAL node of the version maps."""
    syms = set()
    for path in maps:
        with open(path, encoding='utf-8') as f:
            text = re.sub(r'/\*.*?\*/', '', f.read(), flags=re.S)
        for node, body in re.findall(r'(\w+)\s*\{(.*?)\}', text, flags=re.S):
            if node == 'EXPERIMENTAL':
                syms.update(n for n in re.findall(r'(\w+)\s*;', body))
    return syms


class Gen:
    def __init__(self, args):
        self.version = args.version
        self.out = args.out
        self.headers = {os.path.basename(h): h for h in args.headers}
        # The #include a program writes for each header: the umbrella for
        # what it includes (directly or not), the header itself otherwise;
        # an indirect header, never included directly, by its includer.
        self.include = {h: h for h in self.headers}
        seen, todo = set(), [args.umbrella]
        while todo:
            h = todo.pop()
            if h in seen or h not in self.headers:
                continue
            seen.add(h)
            self.include[h] = args.umbrella
            todo.extend(includes_of(self.headers[h]))
        for ind in args.indirect:
            ind = os.path.basename(ind)
            for h, path in self.headers.items():
                if h not in args.indirect and ind in includes_of(path):
                    self.include[ind] = self.include[h]
                    break
        self.pages = {}   # name -> (kind, header, brief, roff body)
        self.links = {}   # name -> target page
        self.files = {}   # header -> (brief, roff body): its file-level docs
        self.experimental = experimental_symbols(args.version_maps)
        self.experimental_headers = set()

    def add(self, name, kind, header, brief, body):
        if name in self.pages:
            # A function and the structure it fills may share a name
            # (cqpoll_ethdev_probe()): one page, the function first.
            k0, h0, b0, body0 = self.pages[name]
            if {k0, kind} != {'function', 'type'} or h0 != header:
                sys.exit('gen-man: two pages named %s' % name)
            first, second, sb = (body0, body, brief) if k0 == 'function' else (body, body0, b0)
            fb = b0 if k0 == 'function' else brief
            second = second.replace(MACRO + '.SH ', MACRO + '.SS ')
            self.pages[name] = ('function', header, fb, first + MACRO + '.SH "STRUCT ' +
                                name.upper() + '"\n' + esc(sb) + '\n' + second)
            return
        self.pages[name] = (kind, header, brief, body)

    def header_of(self, e):
        loc = e.find('location')
        if loc is None:
            return None
        h = os.path.basename(loc.get('declfile') or loc.get('file'))
        return h if h in self.headers else None

    def synopsis(self, header, decl):
        return MACRO + '.SH SYNOPSIS\n' + MACRO + '.nf\n' + \
            '\\fB#include <' + esc(self.include[header]) + '>\\fR\n' + MACRO + '\n' + \
            '\n'.join('\\&' + esc(l) for l in decl.split('\n')) + '\n' + MACRO + '.fi\n'

    def sections(self, r, desc, extra=''):
        s = ''
        if any(l.strip() and not l.startswith(MACRO) for l in desc.split('\n')):
            s += MACRO + '.SH DESCRIPTION\n' + desc + '\n'
        s += extra
        if r.params:
            s += MACRO + '.SH PARAMETERS\n'
            for n, b in r.params:
                s += MACRO + '.TP\n\\fI' + n + '\\fR\n' + b.lstrip('\n').removeprefix(MACRO + '.PP\n') + '\n'
        if r.returns:
            s += MACRO + '.SH RETURN VALUE\n' + '\n'.join(r.returns) + '\n'
        return s

    def member(self, m):
        kind = m.get('kind')
        name = m.findtext('name') or ''
        header = self.header_of(m)
        if header is None or not PREFIX.match(name):
            return
        if kind == 'enum':
            # Its constants are linked to its page whatever their docs say.
            for v in m.findall('enumvalue'):
                vn = v.findtext('name')
                if PREFIX.match(vn or ''):
                    self.links[vn] = name
        if not documented(m):
            return
        r = Roff()
        brief = text_of(m.find('briefdescription'))
        # The brief opens the description too: NAME is one line in whatis.
        desc = MACRO + '.PP\n' + esc(brief) + '\n' + r.body(m.find('detaileddescription'))
        extra = ''
        if kind == 'function':
            typ = text_of(m.find('type'))
            typ = re.sub(r'^(static\s+)?(inline\s+)?', '', typ)
            params = []
            for p in m.findall('param'):
                t = text_of(p.find('type'))
                d = p.findtext('declname') or ''
                a = p.findtext('array') or ''
                params.append((t + ('' if t.endswith('*') or not d else ' ') + d + a).strip())
            decl = '%s%s%s(%s);' % (typ, '' if typ.endswith('*') else ' ', name,
                                    ', '.join(params) or 'void')
            page_kind = 'function'
        elif kind == 'define':
            ps = [p.findtext('defname') for p in m.findall('param')]
            decl = '#define ' + name + ('(' + ', '.join(ps) + ')' if m.find('param') is not None else '')
            init = text_of(m.find('initializer'))
            if init and len(init) < 60 and m.find('param') is None:
                decl += ' ' + init
            page_kind = 'macro'
        elif kind == 'typedef':
            decl = text_of(m.find('definition'))
            args = m.findtext('argsstring') or ''
            if not args.startswith(')'):  # a function type's are in the definition
                decl += args
            decl = re.sub(r'(\w)\(\* (\w+)\) \(', r'\1 (*\2)(', decl) + ';'
            page_kind = 'type'
        elif kind == 'enum':
            vals = []
            extra = MACRO + '.SH VALUES\n'
            for v in m.findall('enumvalue'):
                vn = v.findtext('name')
                init = text_of(v.find('initializer'))
                vals.append('\t' + vn + (' ' + init if init else '') + ',')
                vr = Roff()
                vb = text_of(v.find('briefdescription'))
                vd = vr.body(v.find('detaileddescription'))
                extra += MACRO + '.TP\n\\fB' + esc(vn) + '\\fR\n' + esc(vb) + '\n' + vd + '\n'
            decl = 'enum ' + name + ' {\n' + '\n'.join(vals) + '\n};'
            page_kind = 'type'
        else:
            return
        self.add(name, page_kind, header,
                 brief, self.synopsis(header, decl) + self.sections(r, desc, extra))

    def compound(self, c):
        name = c.findtext('compoundname') or ''
        kind = c.get('kind')
        header = self.header_of(c)
        if header is None or not PREFIX.match(name) or not documented(c):
            return
        r = Roff()
        brief = text_of(c.find('briefdescription'))
        desc = MACRO + '.PP\n' + esc(brief) + '\n' + r.body(c.find('detaileddescription'))
        fields = []
        extra = ''
        for m in c.iter('memberdef'):
            if m.get('kind') != 'variable':
                continue
            t = text_of(m.find('type'))
            n = m.findtext('name')
            a = m.findtext('argsstring') or ''
            b = text_of(m.find('bitfield'))
            fields.append('\t' + t + ('' if t.endswith('*') else ' ') + n + a +
                          (' : ' + b if b else '') + ';')
            fr = Roff()
            fb = text_of(m.find('briefdescription'))
            fd = fr.body(m.find('detaileddescription'))
            if fb or fd.strip():
                extra += MACRO + '.TP\n\\fI' + esc(n) + '\\fR\n' + esc(fb) + '\n' + fd + '\n'
        if extra:
            extra = MACRO + '.SH FIELDS\n' + extra
        decl = kind + ' ' + name + ' {\n' + '\n'.join(fields) + '\n};'
        self.add(name, 'type', header, brief,
                 self.synopsis(header, decl) + self.sections(r, desc, extra))

    def file_doc(self, c):
        """A header's own documentation (@file), for its page."""
        header = os.path.basename(c.findtext('compoundname') or '')
        if header not in self.headers or not documented(c):
            return
        detailed = c.find('detaileddescription')
        for w in detailed.iter('simplesect'):
            if w.get('kind') == 'warning' and text_of(w).startswith('EXPERIMENTAL'):
                self.experimental_headers.add(header)
        r = Roff()
        brief = text_of(c.find('briefdescription'))
        body = MACRO + '.PP\n' + esc(brief) + '\n' + r.body(detailed)
        self.files[header] = (brief, body)

    def stability(self, name, header):
        """The STABILITY section of an EXPERIMENTAL page, or ''."""
        if header in self.experimental_headers:
            why = 'as all of \\fB<' + esc(header) + '>\\fR'
        elif name in self.experimental:
            why = 'its symbol is in the \\fBEXPERIMENTAL\\fR version node'
        else:
            return ''
        return (MACRO + '.SH STABILITY\n\\fBEXPERIMENTAL\\fR, ' + why +
                ': it may change or go in any version, without an ABI change.\n')

    def write(self):
        if os.path.isdir(self.out):
            shutil.rmtree(self.out)
        os.makedirs(self.out)
        by_header = {}
        for name, (kind, header, brief, body) in self.pages.items():
            by_header.setdefault(header, []).append(name)
        for name, (kind, header, brief, body) in sorted(self.pages.items()):
            see = sorted(n for n in by_header[header] if n != name)
            if header in self.files:
                see.insert(0, header)
            text = MACRO + '.TH "%s" 3 "" "cqpoll %s" "cqpoll Library Functions"\n' % (name, self.version)
            text += MACRO + '.SH NAME\n' + esc(name) + ' \\- ' + esc(brief.rstrip('.') or name) + '\n'
            text += body
            text += self.stability(name, header)
            text += MACRO + '.SH SEE ALSO\n' + ',\n'.join(
                '\\fB' + esc(n) + '\\fR(3)' for n in ['cqpoll'] + see) + '\n'
            with open(os.path.join(self.out, name + '.3'), 'w', encoding='utf-8') as f:
                f.write(finish(text))
        # A page per header: its file-level documentation and its pages.
        for header, (brief, body) in sorted(self.files.items()):
            if header in self.pages:
                sys.exit('gen-man: %s is both a header and a page' % header)
            text = MACRO + '.TH "%s" 3 "" "cqpoll %s" "cqpoll Library Functions"\n' % (header, self.version)
            text += MACRO + '.SH NAME\n' + esc(header) + ' \\- ' + esc(brief.rstrip('.') or header) + '\n'
            text += MACRO + '.SH SYNOPSIS\n' + MACRO + '.nf\n\\fB#include <' + \
                esc(self.include[header]) + '>\\fR\n' + MACRO + '.fi\n'
            text += MACRO + '.SH DESCRIPTION\n' + body + '\n'
            text += self.stability(header, header)
            text += MACRO + '.SH SEE ALSO\n' + ',\n'.join(
                '\\fB' + esc(n) + '\\fR(3)' for n in ['cqpoll'] + sorted(by_header.get(header, []))) + '\n'
            with open(os.path.join(self.out, header + '.3'), 'w', encoding='utf-8') as f:
                f.write(finish(text))
        for name, target in sorted(self.links.items()):
            if target not in self.pages:
                continue
            if name in self.pages:
                sys.exit('gen-man: %s is both a page and a link' % name)
            with open(os.path.join(self.out, name + '.3'), 'w', encoding='utf-8') as f:
                f.write('.so man3/%s.3\n' % target)
        # cqpoll(3): every page, by the header a program includes.
        text = MACRO + '.TH "cqpoll" 3 "" "cqpoll %s" "cqpoll Library Functions"\n' % self.version
        text += MACRO + '.SH NAME\ncqpoll \\- poll completion queues and sleep on their events ' \
            'without lost wake\\-ups\n'
        text += MACRO + '.SH DESCRIPTION\nOne page per function, type and macro of the ' \
            'installed headers, by the header a program includes. Link with \\fBpkg\\-config \\-\\-libs cqpoll\\fR ' \
            '(and \\fBcqpoll_ibv\\fR, \\fBcqpoll_uring\\fR, \\fBcqpoll_ofi\\fR, ' \
            '\\fBcqpoll_ucx\\fR, \\fBcqpoll_dpdk\\fR for the drivers and the DPDK component).\n'
        by_include = {}
        for name, (kind, header, brief, body) in self.pages.items():
            by_include.setdefault(self.include[header], []).append(name)
        for header in self.files:
            by_include.setdefault(self.include[header], []).append(header)
        for inc in sorted(by_include):
            text += MACRO + '.SS "#include <' + esc(inc) + '>"\n' + MACRO + '.nf\n'
            text += '\n'.join('\\fB' + esc(n) + '\\fR(3)' for n in sorted(by_include[inc])) + \
                '\n' + MACRO + '.fi\n'
        with open(os.path.join(self.out, 'cqpoll.3'), 'w', encoding='utf-8') as f:
            f.write(finish(text))
        return (len(self.pages), len(self.files),
                len([n for n, t in self.links.items() if t in self.pages]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--doxygen', required=True)
    ap.add_argument('--doxyfile', required=True)
    ap.add_argument('--xml', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--version', required=True)
    ap.add_argument('--umbrella', default='cqpoll.h')
    ap.add_argument('--indirect', nargs='*', default=[])
    ap.add_argument('--version-maps', nargs='*', default=[])
    ap.add_argument('--headers', nargs='+', required=True)
    args = ap.parse_args()
    args.indirect = [os.path.basename(h) for h in args.indirect]
    if os.path.isdir(args.xml):
        shutil.rmtree(args.xml)
    subprocess.run([args.doxygen, args.doxyfile], check=True)
    g = Gen(args)
    index = ET.parse(os.path.join(args.xml, 'index.xml')).getroot()
    for comp in index.findall('compound'):
        tree = ET.parse(os.path.join(args.xml, comp.get('refid') + '.xml')).getroot()
        for c in tree.findall('compounddef'):
            if c.get('kind') == 'file':
                g.file_doc(c)
                for m in c.iter('memberdef'):
                    g.member(m)
            elif c.get('kind') in ('struct', 'union'):
                g.compound(c)
    n, files, links = g.write()
    print('gen-man: %d pages, %d header pages, %d links to enum pages, and cqpoll(3), in %s'
          % (n, files, links, args.out))


if __name__ == '__main__':
    main()
