#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# testpmd-cq's group debug lines: with --log-level=lib.cqpoll:debug the
# transitions, sleeps and wake-ups show; at the default level none does.
# usage: check_log.py TESTPMD_CQ True|False [TESTPMD_CQ_ARGS...]
import subprocess, sys
want = sys.argv[2] == "True"
r = subprocess.run([sys.argv[1]] + sys.argv[3:] + ["--dev=sw", "--cqs=2",
                   "--mode=interrupt", "--rate=2000", "--duration=0.3"],
                   stdin=subprocess.DEVNULL, capture_output=True, text=True,
                   timeout=120)
lines = [l for l in r.stderr.splitlines() if l.startswith("CQPOLL: group ")]
print("\n".join(lines[:6]))
seen = all(any(k in l for l in lines) for k in
           ("transition, poll-and-arm on", "every cq empty and armed, sleeping",
            "woken by a cq event"))
print("exit", r.returncode, "debug lines", len(lines))
if r.returncode != 0 or seen != want or (not want and lines):
    print("expected the transitions" if want else "expected no debug lines")
    sys.exit(1)
