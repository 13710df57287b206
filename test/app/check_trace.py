#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""testpmd-cq --trace='cqpoll.*' leaves a CTF trace that babeltrace2 reads,
with cqpoll's events in it.

Usage: check_trace.py TESTPMD [--trace=PATTERN] [--expect-none] -- ARGS...
  Runs TESTPMD --trace=PATTERN --trace-dir=TMP ARGS, then babeltrace2 on
  what it wrote. Pass: every event named by --expect=NAME[:FIELD=VALUE]
  appears. Negative control: --expect-none requires that no cqpoll event
  appears (e.g. with --trace='eal.*').
Exit 0 pass, 1 fail, 77 without babeltrace2.
"""
import collections
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) < 3 or "--" not in sys.argv:
        print(__doc__)
        return 2
    sep = sys.argv.index("--")
    exe, opts, args = sys.argv[1], sys.argv[2:sep], sys.argv[sep + 1:]
    pattern, expect_none, expect = "cqpoll.*", False, []
    for o in opts:
        if o.startswith("--trace="):
            pattern = o.split("=", 1)[1]
        elif o == "--expect-none":
            expect_none = True
        elif o.startswith("--expect="):
            expect.append(o.split("=", 1)[1])
        else:
            print("unknown option", o)
            return 2
    bt = shutil.which("babeltrace2")
    if bt is None:
        print("no babeltrace2 (devtools/install-deps.sh installs it): skipped")
        return 77
    with tempfile.TemporaryDirectory(prefix="tpcq-trace-") as tmp:
        cmd = [exe, "--trace=" + pattern, "--trace-dir=" + tmp] + args
        print("$", " ".join(cmd), flush=True)
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, timeout=120)
        if r.returncode != 0:
            print("testpmd-cq exited with", r.returncode)
            return 1
        traces = [os.path.join(tmp, d) for d in os.listdir(tmp)]
        if len(traces) != 1 or not os.path.exists(
                os.path.join(traces[0], "metadata")):
            print("expected one CTF trace (with metadata) in", tmp, "got",
                  traces)
            return 1
        out = subprocess.run([bt, traces[0]], capture_output=True, text=True,
                             timeout=120)
        if out.returncode != 0:
            print("babeltrace2 failed:", out.stderr)
            return 1
    events = collections.Counter()
    lines = out.stdout.splitlines()
    for line in lines:
        parts = line.split()
        if len(parts) > 2 and parts[2].startswith("cqpoll."):
            events[parts[2].rstrip(":")] += 1
    print("babeltrace2: %d events; cqpoll: %s" % (len(lines), dict(events)))
    if expect_none:
        if events:
            print("cqpoll events traced though the pattern was", pattern)
            return 1
        print("no cqpoll event with --trace=%s, as expected" % pattern)
        return 0
    for e in expect:
        name, _, field = e.partition(":")
        hit = [l for l in lines if (" %s: " % name) in l and
               (not field or field.replace("=", " = ") in l)]
        if not hit:
            print("no", name, "event" + (" with " + field if field else ""))
            return 1
        print(name, "e.g.:", hit[0])
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
