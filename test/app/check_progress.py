#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""cqpoll-lab's progress line: shown on stderr seed by seed when stderr is a
terminal (a pty here), erased at the end; none with --quiet, none when
stderr is a pipe; stdout the same bytes in all three. The two quiet cases
are the check's controls: its predicate must find no progress there.

usage: check_progress.py CQPOLL_LAB
"""
import os
import subprocess
import sys

LAB = sys.argv[1]
ARGS = ['--duration=0.05', '--rate=2000', '--sim-seeds=3']
SCHED = ['--sim-sched', '--sim-seeds=2']


def run(args, tty):
    """(stdout, stderr) of the lab, its stderr a pty or a pipe."""
    if not tty:
        p = subprocess.run([LAB] + args, capture_output=True, check=True)
        return p.stdout, p.stderr
    master, slave = os.openpty()
    p = subprocess.Popen([LAB] + args, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    err = b''
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the pty
            break
        if not chunk:
            break
        err += chunk
    out = p.stdout.read()
    if p.wait() != 0:
        sys.exit('FAIL: %s exited %d' % (' '.join(args), p.returncode))
    os.close(master)
    return out, err


def progress(err, last):
    """The progress lines, in order, up to `last`, and erased at the end."""
    return (b'\r\x1b[Kcqpoll-lab: ' in err and last in err and
            err.endswith(b'\r\x1b[K'))


fails = 0
for name, args, last in (('policies', ARGS, b'trace poisson, seed 3 of 3'),
                         ('sim-sched', SCHED, b'diurnal at high load, seed 2 of 2')):
    out_tty, err_tty = run(args, True)
    out_quiet, err_quiet = run(args + ['--quiet'], True)
    out_pipe, err_pipe = run(args, False)
    checks = [
        ('a terminal shows the progress', progress(err_tty, last)),
        ('control: --quiet on a terminal shows none', not progress(err_quiet, last)
         and err_quiet == b''),
        ('control: a pipe shows none', not progress(err_pipe, last) and err_pipe == b''),
        ('stdout the same in all three', out_tty == out_quiet == out_pipe and out_tty),
    ]
    for what, ok in checks:
        print('%s: %s: %s' % ('ok' if ok else 'FAIL', name, what))
        fails += not ok
sys.exit(1 if fails else 0)
