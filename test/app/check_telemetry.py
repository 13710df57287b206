#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""testpmd-cq --telemetry: read the poll group's counters with DPDK's stock
telemetry client while the run goes on.

Usage: check_telemetry.py TESTPMD [--group-cmd=CMD --expect-no-stats]
Exit 0: /cqpoll/groups lists "testpmd-cq" and /cqpoll/group_stats,testpmd-cq
gives nonzero completions and polls; 77: no dpdk-telemetry.py; 1 otherwise.
Negative control: --group-cmd replaces the stats command, and
--expect-no-stats inverts the last check: the run and /cqpoll/groups must
still be right, but the counters must be missing.
"""
import json
import os
import shutil
import subprocess
import sys
import time

CLIENT = shutil.which("dpdk-telemetry.py") or "/usr/bin/dpdk-telemetry.py"
GROUP = "testpmd-cq"


def runtime_dir(prefix):
    """DPDK's runtime directory of a file prefix, as the EAL and client see it."""
    base = os.environ.get("RUNTIME_DIRECTORY")
    if not base:
        base = "/var/run" if os.getuid() == 0 else os.environ.get(
            "XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(base, "dpdk", prefix)


def query(prefix, cmds):
    """Answers of the client to cmds, one JSON object per command."""
    r = subprocess.run([sys.executable, CLIENT, "-f", prefix],
                       input="\n".join(cmds) + "\n", capture_output=True,
                       text=True, timeout=30)
    print("$ dpdk-telemetry.py -f", prefix, "<<", cmds)
    print(r.stdout + r.stderr, end="")
    answers = {}
    for line in r.stdout.splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            answers.update(obj)
    return answers


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    exe = sys.argv[1]
    stats_cmd = "/cqpoll/group_stats," + GROUP
    expect_stats = True
    for a in sys.argv[2:]:
        if a.startswith("--group-cmd="):
            stats_cmd = a.split("=", 1)[1]
        elif a == "--expect-no-stats":
            expect_stats = False
        else:
            print("unknown option", a)
            return 2
    if not os.access(CLIENT, os.X_OK):
        print("no dpdk-telemetry.py: skipped")
        return 77

    cpus = sorted(os.sched_getaffinity(0))[:2]
    prefix = "tpcqtel%d" % os.getpid()
    cmd = [exe, "-l", ",".join(map(str, cpus)), "--no-pci", "--no-huge",
           "--file-prefix=" + prefix, "--log-level=lib.eal:error", "--",
           "--telemetry", "--dev=sw", "--mode=adaptive", "--cqs=4",
           "--rate=20000", "--duration=3"]
    print("$", " ".join(cmd), flush=True)
    app = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)
    try:
        sock = os.path.join(runtime_dir(prefix), "dpdk_telemetry.v2")
        deadline = time.monotonic() + 10
        while not os.path.exists(sock) and app.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1)  # into the run: the group exists and has polled
        answers = query(prefix, ["/cqpoll/groups", stats_cmd])
        rc = app.wait(timeout=60)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
        shutil.rmtree(runtime_dir(prefix), ignore_errors=True)

    if rc != 0:
        print("testpmd-cq exited with", rc)
        return 1
    groups = answers.get("/cqpoll/groups")
    if not isinstance(groups, list) or GROUP not in groups:
        print("/cqpoll/groups: no", repr(GROUP), "in", repr(groups))
        return 1
    stats = answers.get("/cqpoll/group_stats")
    if not expect_stats:
        if isinstance(stats, dict) and stats.get("completions", 0) > 0:
            print("counters through", stats_cmd, "yet none were expected")
            return 1
        print("no counters through", stats_cmd, "as expected")
        return 0
    if not isinstance(stats, dict):
        print("/cqpoll/group_stats: no counters:", repr(stats))
        return 1
    if stats.get("completions", 0) <= 0 or stats.get("polls", 0) <= 0:
        print("group counters not moving:", stats)
        return 1
    print("telemetry OK: %d completions, %d polls" %
          (stats["completions"], stats["polls"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
