#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check that the three marks of an EXPERIMENTAL function agree.

usage: devtools/check-experimental.py [--control] [--cc CC...]

For every function and variable that a version map exports
(lib/cqpoll/version.map, lib/cqpoll_dpdk/version.map) and that a header of
lib/ or drivers/ declares, these three say the same (doc/guides/abi.md):

  - its node is EXPERIMENTAL;
  - its declaration carries __cqpoll_experimental (cqpoll_compat.h);
  - its documentation comment says "@warning EXPERIMENTAL".

No declaration carries the attribute, and no documentation comment the
mark, unless its symbol is in the EXPERIMENTAL node; a header whose @file
comment says "@warning EXPERIMENTAL" declares only EXPERIMENTAL functions;
every symbol of the EXPERIMENTAL node is declared in a header. The driver
SDK node (CQPOLL_SDK_*) is named after VERSION's major.minor, so that a
driver library built against another libcqpoll version is refused at load
time.

--control runs the check on copies of the tree's text with one mark taken
away or added at a time, and fails unless each copy fails the check: the
check must see each kind of disagreement.

--cc CC... also compiles a call of an EXPERIMENTAL function with CC: it
must fail with -Werror without CQPOLL_ALLOW_EXPERIMENTAL_API, and build
with it.
"""

import os
import re
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAPS = ['lib/cqpoll/version.map', 'lib/cqpoll_dpdk/version.map']
HEADER_DIRS = ['lib', 'drivers']
ATTR = '__cqpoll_experimental'
MARK = '@warning EXPERIMENTAL'


def read_tree():
    """{relative path: text} of the maps, VERSION and the headers."""
    files = {}
    for m in MAPS + ['VERSION']:
        with open(os.path.join(TOP, m)) as f:
            files[m] = f.read()
    for d in HEADER_DIRS:
        for root, _, names in os.walk(os.path.join(TOP, d)):
            for n in sorted(names):
                if n.endswith('.h'):
                    p = os.path.join(root, n)
                    with open(p) as f:
                        files[os.path.relpath(p, TOP)] = f.read()
    return files


def parse_map(text):
    """{symbol: node} of the global entries of a version script."""
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    nodes = {}
    for m in re.finditer(r'([A-Za-z0-9_.]+)\s*\{(.*?)\}', text, re.S):
        node, body = m.group(1), m.group(2)
        scope = None
        for tok in re.findall(r'[A-Za-z_][A-Za-z0-9_*]*:?|;', body):
            if tok in ('global:', 'local:'):
                scope = tok
            elif tok != ';' and scope == 'global:':
                nodes[tok] = node
    return nodes


def strip_balanced(s, start):
    """Index past the parenthesised group that starts at s[start] == '('."""
    depth = 0
    for i in range(start, len(s)):
        if s[i] == '(':
            depth += 1
        elif s[i] == ')':
            depth -= 1
            if depth == 0:
                return i + 1
    return len(s)


def declarations(text):
    """(name, statement, doc comment or '') of each top-level declaration."""
    out = []
    i, n = 0, len(text)
    doc = ''
    stmt_start = None
    depth = 0
    while i < n:
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            if depth == 0 and stmt_start is None:
                doc = text[i:j] if text.startswith('/**', i) and \
                    not text.startswith('/**<', i) else doc
            i = j
            continue
        if text.startswith('//', i):
            i = text.find('\n', i)
            i = n if i < 0 else i
            continue
        c = text[i]
        if c == '#' and stmt_start is None and \
                (i == 0 or text[text.rfind('\n', 0, i) + 1:i].strip() == ''):
            # A preprocessor line, with its continuations.
            while True:
                j = text.find('\n', i)
                if j < 0:
                    i = n
                    break
                if text[j - 1] != '\\':
                    i = j + 1
                    break
                i = j + 1
            doc = '' if not text[i:].lstrip().startswith(('/*', '#')) else doc
            continue
        if c.isspace():
            i += 1
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == '\\' else 1
            i = j + 1
            continue
        if stmt_start is None:
            stmt_start = i
        if c == '{':
            if depth == 0 and re.match(r'extern\s*"C"\s*$', text[stmt_start:i]):
                # The C++ linkage block holds the header's declarations.
                stmt_start = None
                i += 1
                continue
            depth += 1
        elif c == '}':
            if depth == 0:
                # The end of the C++ linkage block.
                stmt_start = None
                i += 1
                continue
            depth -= 1
            if depth == 0:
                stmt = text[stmt_start:i + 1]
                # A function body ends the statement; a struct needs its ';'.
                if not re.match(r'\s*(typedef\s+)?(struct|union|enum)\b', stmt) and \
                        not re.search(r'=\s*\{', stmt):
                    out.append((stmt, doc))
                    stmt_start, doc = None, ''
        elif c == ';' and depth == 0:
            out.append((text[stmt_start:i + 1], doc))
            stmt_start, doc = None, ''
        i += 1
    decls = []
    for stmt, doc in out:
        name = decl_name(stmt)
        if name:
            decls.append((name, stmt, doc))
    return decls


def decl_name(stmt):
    """The name a function or variable declaration declares, or None."""
    if re.match(r'\s*(typedef|struct|union|enum)\b', stmt) and \
            not re.match(r'\s*(struct|union|enum)\s+\w+\s*\**\s*\w+\s*\(', stmt) and \
            not re.match(r'\s*(struct|union|enum)\s+\w+\s+\*?\s*\w+\s*;', stmt):
        return None
    s = stmt
    k = s.find('__attribute__')
    while k >= 0:
        p = s.find('(', k)
        s = s[:k] + ' ' + s[strip_balanced(s, p):]
        k = s.find('__attribute__')
    head = s.split('{', 1)[0]
    m = re.search(r'([A-Za-z_]\w*)\s*\(', head)
    if m:
        if re.search(r'\(\s*\*', head[:m.end() + 2]):
            return None
        return m.group(1)
    m = re.search(r'([A-Za-z_]\w*)\s*(\[[^\]]*\])?\s*;\s*$', head)
    return m.group(1) if m and re.match(r'\s*extern\b', head) else None


def file_doc(text):
    m = re.search(r'/\*\*(?:(?!\*/).)*@file.*?\*/', text, re.S)
    return m.group(0) if m else ''


def check(files):
    errors = []
    nodes = {}
    for m in MAPS:
        nodes.update(parse_map(files[m]))
    ver = files['VERSION'].strip().split('.')
    sdk = [n for n in set(nodes.values()) if n.startswith('CQPOLL_SDK_')]
    for n in sdk:
        if n != 'CQPOLL_SDK_%s.%s' % (ver[0], ver[1]):
            errors.append('version.map: node %s is not named after VERSION %s '
                          '(CQPOLL_SDK_%s.%s)' % (n, '.'.join(ver), ver[0], ver[1]))
    declared = {}
    for path, text in sorted(files.items()):
        if not path.endswith('.h'):
            continue
        fdoc = file_doc(text)
        file_marked = MARK in fdoc
        for name, stmt, doc in declarations(text):
            node = nodes.get(name)
            if node is None:
                if ATTR in stmt:
                    errors.append('%s: %s carries %s but no version map exports it'
                                  % (path, name, ATTR))
                continue
            declared.setdefault(name, []).append(path)
            exp = node == 'EXPERIMENTAL'
            has_attr = ATTR in stmt
            has_mark = MARK in doc
            if exp and not has_attr:
                errors.append('%s: %s is EXPERIMENTAL in the map but its '
                              'declaration lacks %s' % (path, name, ATTR))
            if exp and not has_mark:
                errors.append('%s: %s is EXPERIMENTAL in the map but its '
                              'documentation lacks "%s"' % (path, name, MARK))
            if not exp and has_attr:
                errors.append('%s: %s carries %s but is in node %s'
                              % (path, name, ATTR, node))
            if not exp and has_mark:
                errors.append('%s: %s is documented EXPERIMENTAL but is in node %s'
                              % (path, name, node))
            if not exp and file_marked:
                errors.append('%s: the file is documented EXPERIMENTAL but %s '
                              'is in node %s' % (path, name, node))
    for name, node in sorted(nodes.items()):
        if node == 'EXPERIMENTAL' and name not in declared:
            errors.append('version.map: EXPERIMENTAL %s is declared in no header '
                          'of lib/ or drivers/' % name)
    return errors


def first_experimental(files):
    """(path, name) of the first EXPERIMENTAL function declared."""
    nodes = parse_map(files[MAPS[0]])
    # The core's headers first: they need no stack's headers to compile.
    for path, text in sorted(files.items(),
                             key=lambda kv: (not kv[0].startswith('lib/'), kv[0])):
        if path.endswith('.h'):
            for name, stmt, doc in declarations(text):
                if nodes.get(name) == 'EXPERIMENTAL' and '(' in stmt:
                    return path, name
    return None, None


def control(files):
    path, name = first_experimental(files)
    if path is None:
        return ['control: no EXPERIMENTAL function to take marks from']
    stable = next((n for n, node in sorted(parse_map(files[MAPS[0]]).items())
                   if node.startswith('CQPOLL_0.')), None)
    text = files[path]
    m = re.search(r'%s\s*\n?[^;{]*?\b%s\s*\(' % (ATTR, name), text)
    cases = []
    if m:
        cases.append(('the attribute taken from %s' % name,
                      {path: text[:m.start()] + text[m.start() + len(ATTR):]}))
    for d in declarations(text):
        if d[0] == name and MARK in d[2]:
            k = text.find(d[2])
            cases.append(('the doc mark taken from %s' % name,
                          {path: text[:k] + d[2].replace(MARK, '@warning')
                           + text[k + len(d[2]):]}))
    mp = files[MAPS[0]]
    cases.append(('%s moved to a versioned node' % name,
                  {MAPS[0]: re.sub(r'(EXPERIMENTAL\s*\{[^}]*?)\n\s*%s;' % name,
                                   r'\1', mp, count=1).replace(
                      'CQPOLL_0.1 {\n\tglobal:\n',
                      'CQPOLL_0.1 {\n\tglobal:\n\t\t%s;\n' % name, 1)}))
    if stable:
        for p, t in sorted(files.items()):
            if p.endswith('.h'):
                mm = re.search(r'\n([^\n;{}]*\b%s\s*\()' % stable, t)
                if mm:
                    cases.append(('%s on the stable %s' % (ATTR, stable),
                                  {p: t[:mm.start() + 1] + ATTR + ' ' + t[mm.start() + 1:]}))
                    break
    cases.append(('the SDK node named after another version',
                  {'VERSION': '9.9.0\n'}))
    errors = []
    for what, change in cases:
        mutated = dict(files)
        mutated.update(change)
        if not check(mutated):
            errors.append('control: %s went unnoticed' % what)
        else:
            print('control: %s is caught: %s' % (what, check(mutated)[0]))
    if len(cases) < 5:
        errors.append('control: only %d of 5 mutations could be made' % len(cases))
    return errors


def compile_check(cc):
    path, name = first_experimental(read_tree())
    if name is None:
        return ['compile: no EXPERIMENTAL function']
    hdr = os.path.basename(path)
    incs = sorted({os.path.dirname(os.path.join(TOP, p)) for p in read_tree()
                   if p.endswith('.h')})
    src = ('#include "%s"\nvoid *cqpoll_experimental_use(void);\n'
           'void *cqpoll_experimental_use(void) { return (void *)&%s; }\n'
           % (hdr, name))
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        c = os.path.join(tmp, 'use.c')
        with open(c, 'w') as f:
            f.write(src)
        base = cc + ['-std=c11', '-D_GNU_SOURCE', '-Wall', '-Werror',
                     '-fsyntax-only'] + ['-I' + d for d in incs]
        # cqpoll_config.h of a build is not needed by installed headers.
        r = subprocess.run(base + [c], capture_output=True, text=True)
        if r.returncode == 0:
            errors.append('compile: %s used without CQPOLL_ALLOW_EXPERIMENTAL_API '
                          'built with -Werror' % name)
        elif 'EXPERIMENTAL' not in r.stderr:
            errors.append('compile: without the opt-in the build failed, but not '
                          'on the marker: %s' % r.stderr.strip()[:300])
        else:
            print('compile: %s without the opt-in: refused' % name)
        r = subprocess.run(base + ['-DCQPOLL_ALLOW_EXPERIMENTAL_API', c],
                           capture_output=True, text=True)
        if r.returncode != 0:
            errors.append('compile: %s with CQPOLL_ALLOW_EXPERIMENTAL_API: %s'
                          % (name, r.stderr.strip()[:300]))
        else:
            print('compile: %s with the opt-in: builds' % name)
    return errors


def main(argv):
    ctl = '--control' in argv
    cc = None
    if '--cc' in argv:
        cc = argv[argv.index('--cc') + 1:]
    files = read_tree()
    errors = control(files) if ctl else check(files)
    if cc:
        errors += compile_check(cc)
    for e in errors:
        print(e)
    if errors:
        print('check-experimental: FAILED (%d)' % len(errors))
        return 1
    nodes = {}
    for m in MAPS:
        nodes.update(parse_map(files[m]))
    n = sum(1 for v in nodes.values() if v == 'EXPERIMENTAL')
    print('check-experimental: %s' % ('control OK' if ctl else
          '%d EXPERIMENTAL symbols: node, %s and doc mark agree' % (n, ATTR)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
