#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check what the driver libraries import from libcqpoll.

usage: devtools/check-sdk-imports.py [--control] BUILDDIR

Each driver library built in BUILDDIR (libcqpoll_ibv, _uring, _ofi, _ucx,
libcqpoll_dpdk) may import from libcqpoll only the public API (the
CQPOLL_0.N and EXPERIMENTAL nodes) and the driver SDK, whose node is
CQPOLL_SDK_<VERSION's major.minor> (doc/guides/driver-sdk.md); never an
INTERNAL symbol, which only the verification kit may use.

Then the refusal the SDK node exists for: libcqpoll is linked again from
its objects, once with its own version script and once with the SDK node
renamed as another libcqpoll version would name it, and each driver library
that imports SDK symbols is loaded against each. It must load against the
first (the relink is sound) and be refused by the dynamic loader against the
second, naming the node: a driver library built against another libcqpoll
version never runs with it.

--control is the negative control of the imports check: libcqpoll is
relinked with the SDK's symbols back in the INTERNAL node (as they were
before the SDK node), each driver library that uses them is relinked from
its objects against it, and the check must reject every one of those.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVER_LIBS = ['libcqpoll_ibv', 'libcqpoll_uring', 'libcqpoll_ofi',
               'libcqpoll_ucx', 'libcqpoll_dpdk']


def imports(path):
    """{symbol: version node} of the undefined dynamic symbols of path."""
    out = subprocess.run(['objdump', '-T', path], capture_output=True,
                         text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        if '*UND*' not in line:
            continue
        f = line.split()
        if len(f) >= 2 and f[-1].startswith('cqpoll_'):
            syms[f[-1]] = f[-2].strip('()')
    return syms


def judge(imp, sdk):
    """The imports of a driver library that are neither public nor the SDK's."""
    return sorted('%s@%s' % (s, n) for s, n in imp.items()
                  if n == 'INTERNAL' or (n.startswith('CQPOLL_SDK_') and n != sdk))


def find_lib(build, name, so):
    hits = [p for p in glob.glob(os.path.join(build, '**', name + '.so.' + so + '*'),
                                 recursive=True)
            if os.path.isfile(p) and not p.endswith('.p')
            and re.search(r'\.so\.[0-9.]+$', p)]
    return sorted(hits, key=len)[0] if hits else None


def relink(build, so, mapfile, outdir):
    """libcqpoll.so.SO in outdir, linked from BUILDDIR's objects."""
    objs = sorted(glob.glob(os.path.join(build, 'libcqpoll.so.*.p', '*.o')))
    if not objs:
        return None, 'no objects of libcqpoll in %s' % build
    libs = ['-lpthread']
    r = subprocess.run(['pkg-config', '--libs', 'numa'], capture_output=True, text=True)
    if r.returncode == 0:
        libs += r.stdout.split()
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, 'libcqpoll.so.' + so)
    cmd = ['cc', '-shared', '-o', out, '-Wl,-soname,libcqpoll.so.' + so,
           '-Wl,--version-script=' + mapfile] + objs + libs
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()[:500]
    return out, None


def relink_driver(build, name, so, libdir, outdir):
    """NAME.so.SO in outdir, from BUILDDIR's objects, against libdir's libcqpoll."""
    # Not all at the top: libcqpoll_dpdk is built in lib/cqpoll_dpdk/, and
    # its ethdev objects' names start with a dot (.._.._drivers_ethdev_*.o).
    objs = sorted(o for d in glob.glob(os.path.join(build, '**', name + '.so.*.p'),
                                       recursive=True)
                  for o in glob.glob(os.path.join(d, '*.o'))
                  + glob.glob(os.path.join(d, '.*.o')))
    if not objs:
        return None, 'no objects of %s in %s' % (name, build)
    out = os.path.join(outdir, '%s.so.%s' % (name, so))
    # The stacks' symbols stay undefined: only libcqpoll's versions matter.
    r = subprocess.run(['cc', '-shared', '-o', out, '-Wl,-soname,%s.so.%s' % (name, so)]
                       + objs + ['-L' + libdir, '-l:libcqpoll.so.' + so],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()[:500]
    return out, None


def control(build, so, sdk):
    """0 if the check rejects driver libraries linked to an INTERNAL SDK."""
    with open(os.path.join(TOP, 'lib', 'cqpoll', 'version.map')) as f:
        vmap = f.read()
    m = re.search(r'%s\s*\{\s*global:(.*?)\};' % re.escape(sdk), vmap, re.S)
    if m is None:
        print('control FAILED: no node %s in version.map' % sdk)
        return 1
    syms = m.group(1)
    old = vmap[:m.start()] + vmap[m.end():]
    old = re.sub(r'(INTERNAL\s*\{\s*global:)', lambda g: g.group(1) + syms, old, count=1)
    caught = 0
    with tempfile.TemporaryDirectory() as tmp:
        mp = os.path.join(tmp, 'internal.map')
        with open(mp, 'w') as f:
            f.write(old)
        relinked, err = relink(build, so, mp, os.path.join(tmp, 'lib'))
        if relinked is None:
            print('control FAILED: relinking libcqpoll: %s' % err)
            return 1
        for name in DRIVER_LIBS:
            path = find_lib(build, name, so)
            if path is None or not any(n == sdk for n in imports(path).values()):
                continue
            lib, err = relink_driver(build, name, so, os.path.dirname(relinked),
                                     os.path.join(tmp, 'lib'))
            if lib is None:
                print('control FAILED: relinking %s: %s' % (name, err))
                return 1
            bad = judge(imports(lib), sdk)
            if not bad:
                print('control FAILED: %s linked against an INTERNAL SDK imports '
                      'nothing INTERNAL' % name)
                return 1
            print('control: %s linked against the INTERNAL SDK imports %s: rejected'
                  % (name, ', '.join(bad)))
            caught += 1
    if caught == 0:
        print('skip: no driver library uses the SDK')
        return 77
    print('control OK: %d driver libraries rejected' % caught)
    return 0


def load(lib, libdir):
    """(ok, message) of dlopen(lib) with libdir searched first."""
    env = dict(os.environ)
    env['LD_LIBRARY_PATH'] = libdir + (':' + env['LD_LIBRARY_PATH']
                                       if env.get('LD_LIBRARY_PATH') else '')
    r = subprocess.run([sys.executable, '-c',
                        'import ctypes, sys; ctypes.CDLL(sys.argv[1])', lib],
                       capture_output=True, text=True, env=env)
    return r.returncode == 0, (r.stderr.strip().splitlines() or [''])[-1]


def main(argv):
    ctl = argv[:1] == ['--control']
    argv = argv[1:] if ctl else argv
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2])
        return 2
    build = os.path.abspath(argv[0])
    with open(os.path.join(TOP, 'VERSION')) as f:
        ver = f.read().strip().split('.')
    with open(os.path.join(TOP, 'ABI_VERSION')) as f:
        so = f.read().strip().split('.')[0]
    sdk = 'CQPOLL_SDK_%s.%s' % (ver[0], ver[1])
    if ctl:
        return control(build, so, sdk)
    errors = []
    sdk_users = []
    checked = 0
    for name in DRIVER_LIBS:
        path = find_lib(build, name, so)
        if path is None:
            print('%s: not built' % name)
            continue
        checked += 1
        imp = imports(path)
        bad = judge(imp, sdk)
        used = sorted(s for s, n in imp.items() if n == sdk)
        if bad:
            errors.append('%s imports %s: neither the public API nor the driver '
                          'SDK (%s)' % (name, ', '.join(bad), sdk))
        else:
            print('%s: %d libcqpoll symbols, %d of the driver SDK (%s)'
                  % (name, len(imp), len(used), ', '.join(used) or 'none'))
        if used:
            sdk_users.append((name, path))
    if checked == 0:
        print('skip: no driver library built')
        return 77
    if sdk_users:
        with open(os.path.join(TOP, 'lib', 'cqpoll', 'version.map')) as f:
            vmap = f.read()
        other = 'CQPOLL_SDK_%s.%d' % (ver[0], int(ver[1]) + 1)
        with tempfile.TemporaryDirectory() as tmp:
            same, err = relink(build, so, os.path.join(TOP, 'lib', 'cqpoll',
                                                       'version.map'),
                               os.path.join(tmp, 'same'))
            mp = os.path.join(tmp, 'other.map')
            with open(mp, 'w') as f:
                f.write(vmap.replace(sdk + ' {', other + ' {'))
            moved, err2 = relink(build, so, mp, os.path.join(tmp, 'other'))
            if same is None or moved is None:
                errors.append('relinking libcqpoll: %s' % (err or err2))
            else:
                for name, path in sdk_users:
                    ok, msg = load(path, os.path.dirname(same))
                    if not ok:
                        errors.append('%s does not load against libcqpoll '
                                      'relinked as it is: %s' % (name, msg))
                        continue
                    ok, msg = load(path, os.path.dirname(moved))
                    if ok:
                        errors.append('%s loaded against a libcqpoll whose SDK '
                                      'node is %s' % (name, other))
                    elif sdk not in msg:
                        errors.append('%s refused, but not for its SDK node: %s'
                                      % (name, msg))
                    else:
                        print('%s: loads against this libcqpoll; refused by one '
                              'with %s: %s' % (name, other, msg))
    for e in errors:
        print('FAIL: ' + e)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
