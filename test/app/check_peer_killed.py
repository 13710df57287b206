#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""testpmd-cq with its libfabric peer killed mid-run (issue 22).

Usage: check_peer_killed.py [--expect-fail] BOUND_S TESTPMD [app options]

Runs TESTPMD with the options and checks that the run ends within BOUND_S
seconds (no hang: the options' --duration is longer), with a non-zero exit
status and a message that names the failed CQ and FI_SHUTDOWN. With
--expect-fail (the negative control: a run where the peer is not killed)
the same checks must fail.
"""
import re
import subprocess
import sys
import time

# testpmd-cq's own line, from the device that saw its CQ fail.
MESSAGE = re.compile(r"testpmd-cq: ofi:\w+: cq 0x[0-9a-f]+ .*failed: "
                     r"peer-closed \(FI_SHUTDOWN\)")


def check(bound_s, cmd):
    print("$", " ".join(cmd), flush=True)
    t0 = time.monotonic()
    try:
        run = subprocess.run(cmd, stdin=subprocess.DEVNULL, timeout=bound_s,
                             capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        print("FAIL: still running after %.1f s (a hang)" % bound_s)
        return 1
    took = time.monotonic() - t0
    print(run.stderr)
    bad = 0
    if run.returncode == 0:
        print("FAIL: exit status 0")
        bad = 1
    if MESSAGE.search(run.stderr) is None:
        print("FAIL: no message naming the CQ and FI_SHUTDOWN")
        bad = 1
    if "Sanitizer" in run.stderr or run.returncode < 0:
        print("FAIL: crashed (exit %d)" % run.returncode)
        bad = 1
    print("exit %d after %.2f s (bound %.1f s)" % (run.returncode, took, bound_s))
    return bad


def main(argv):
    expect_fail = len(argv) > 1 and argv[1] == "--expect-fail"
    if expect_fail:
        argv = argv[1:]
    if len(argv) < 3:
        print(__doc__)
        return 2
    bad = check(float(argv[1]), argv[2:])
    if expect_fail:
        print("negative control:", "caught" if bad else "NOT caught")
        return 0 if bad else 1
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
