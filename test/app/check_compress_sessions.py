#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# testpmd-cq --cqe-compress=enhanced on mlx5-emu: exit 0 and the device did
# compress (a run without a compressed session proves nothing).
# usage: check_compress_sessions.py TESTPMD_CQ
import re, subprocess, sys
cmd = [sys.argv[1], "--", "--dev=mlx5-emu", "--mode=interrupt",
       "--rate=200000", "--duration=1", "--cqe-compress=enhanced"]
r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                   text=True, timeout=120)
print(r.stdout + r.stderr)
m = re.search(r"mlx5-emu: (\d+) CQEs written, (\d+) compressed sessions", r.stdout)
if r.returncode != 0 or m is None or int(m.group(2)) == 0:
    print("expected exit 0 and compressed sessions, got exit", r.returncode)
    sys.exit(1)
