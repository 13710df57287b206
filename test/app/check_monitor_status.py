#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# testpmd-cq says at start-up whether the power-monitor tier is on, as the
# CPU flags say (waitpkg or monitorx in /proc/cpuinfo), and why not.
# usage: check_monitor_status.py TESTPMD_CQ
import subprocess, sys
r = subprocess.run([sys.argv[1], "--dev=sw", "--rate=1000", "--duration=0.2"],
                   stdin=subprocess.DEVNULL, capture_output=True, text=True,
                   timeout=120)
print(r.stderr)
flags = set()
for line in open("/proc/cpuinfo"):
    if line.startswith("flags"):
        flags |= set(line.split(":", 1)[1].split())
on = "waitpkg" in flags or "monitorx" in flags
want = "power-monitor tier: on" if on else \
    "power-monitor tier: off: this CPU has neither WAITPKG"
if r.returncode != 0 or want not in r.stderr:
    print("expected exit 0 and", repr(want))
    sys.exit(1)
