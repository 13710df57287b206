#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run a check of testpmd-cq on a real queue, skipping (77) where it cannot
exist here: io_uring disabled (sysctl, seccomp) or the libfabric provider
missing. The device is opened once, briefly, to tell: a device that opens
is then checked in full by the given command.

Usage: check_real_dev.py PYTHON CHECK_TESTPMD TESTPMD CHECKS... -- OPTIONS...
"""
import subprocess
import sys

SKIP = 77
# What testpmd-cq says when the queue cannot exist here, as opposed to a bug.
UNAVAILABLE = ("(io_uring disabled:", "no such libfabric provider",
               "(is the transport available here? ucx_info -d)")


def main():
    if len(sys.argv) < 5 or "--" not in sys.argv:
        print(__doc__)
        return 2
    python, check, exe = sys.argv[1:4]
    opts = sys.argv[sys.argv.index("--") + 1:]
    probe = [exe, "--"] + [o for o in opts if not o.startswith("--duration")] + \
        ["--duration=0.05"]
    r = subprocess.run(probe, stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=60)
    if r.returncode != 0 and any(u in r.stderr for u in UNAVAILABLE):
        print(r.stderr.strip())
        print("skip: the queue is unavailable here")
        return SKIP
    return subprocess.run([python, check, exe] + sys.argv[4:],
                          stdin=subprocess.DEVNULL).returncode


if __name__ == "__main__":
    sys.exit(main())
