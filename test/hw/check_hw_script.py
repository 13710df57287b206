#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""devtools/hw-check.sh end to end, as the issue's "Done when" runs it.

  check_hw_script.py emulated  SRCDIR BUILDDIR: --emulated passes, every check
      of cqpoll-hw-check ran (report-missed skips with its reason), the rxe
      plan and the perftest comparison's code paths checked, testpmd-cq's
      latency rows measured;
  check_hw_script.py no-device SRCDIR BUILDDIR: without a device, exit 77 in
      under a minute, every check listed as skipped with a reason (skips, 77,
      where a device exists);
  check_hw_script.py crash SRCDIR BUILDDIR: negative control: a checker that
      reports a pass and then dies of a signal must make the run fail.
"""
import json
import os
import subprocess
import sys
import tempfile
import time


FAKE = """#!/bin/sh
# A cqpoll-hw-check that passes one check, then crashes.
case "$1" in
--list-checks) echo '{"check":"events","what":"x"}'; exit 0 ;;
--list-devices) exit 77 ;;
esac
for a in "$@"; do
    case "$a" in --json=*) j=${a#--json=} ;; esac
done
echo '{"device":"emulated","check":"events","status":"pass","reason":"ok","data":{}}' >"$j"
kill -SEGV $$
"""


def crash(src):
    with tempfile.TemporaryDirectory() as build:
        os.makedirs(os.path.join(build, "test/hw"))
        hwc = os.path.join(build, "test/hw/cqpoll-hw-check")
        with open(hwc, "w") as f:
            f.write(FAKE)
        os.chmod(hwc, 0o755)
        r = subprocess.run([os.path.join(src, "devtools/hw-check.sh"), "--emulated",
                            "--no-build", "--build-dir=" + build],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=120)
        print(r.stdout + r.stderr)
        rep = json.load(open(os.path.join(build, "hw-check/report.json")))
    died = [c for c in rep["checks"] if c["check"] == "cqpoll-hw-check"]
    if r.returncode != 1 or not died or "signal" not in died[0]["reason"]:
        print("FAIL: a crashed checker must fail the run (exit %d, %r)"
              % (r.returncode, died))
        return 1
    return 0


def main():
    mode, src, build = sys.argv[1:4]
    if mode == "crash":
        return crash(src)
    hwc = os.path.join(build, "test/hw/cqpoll-hw-check")
    names = [json.loads(l)["check"] for l in subprocess.run(
        [hwc, "--list-checks"], capture_output=True, text=True,
        check=True).stdout.splitlines()]
    with tempfile.TemporaryDirectory() as out:
        # Inside meson test: the tree is built, and ninja must not run under it.
        argv = [os.path.join(src, "devtools/hw-check.sh"), "--build-dir=" + build,
                "--no-build", "--out=" + out] + (["--emulated"] if mode == "emulated" else [])
        t0 = time.time()
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=300)
        took = time.time() - t0
        print(r.stdout[-3000:] + r.stderr[-2000:])
        print("took %.1f s" % took)
        rep = json.load(open(os.path.join(out, "report.json")))
        md = open(os.path.join(out, "report.md")).read()
    checks = {(c["device"], c["check"]): c for c in rep["checks"]}
    errors = []
    if mode == "emulated":
        if r.returncode != 0:
            errors.append("exit %d, expected 0" % r.returncode)
        for n in names:
            c = checks.get(("emulated", n))
            if c is None:
                errors.append("check %s missing" % n)
            elif c["status"] != ("skip" if n == "report-missed" else "pass"):
                errors.append("%s: %s: %s" % (n, c["status"], c["reason"]))
        for n in (("host", "rxe-link"), ("emulated", "perftest-compare")):
            if checks.get(n, {}).get("status") != "pass":
                errors.append("%s/%s did not pass" % n)
        tp = [l for l in rep["latency"] if l["tool"].startswith("testpmd-cq")]
        built = os.access(os.path.join(build, "app/testpmd-cq/testpmd-cq"), os.X_OK)
        if len(tp) != 6 or any(
                (l["status"] != "pass" or not l["p50_us"] > 0) if built else
                (l["status"] != "skip" or "not built" not in l["reason"])
                for l in tp):
            errors.append("testpmd-cq rows (testpmd-cq %s): %r"
                          % ("built" if built else "not built", tp))
    else:
        if r.returncode == 0 or rep["devices"]:
            print("this machine has RDMA devices: nothing to check here")
            return 77
        if r.returncode != 77:
            errors.append("exit %d, expected 77" % r.returncode)
        if took >= 60:
            errors.append("took %.0f s, expected under a minute" % took)
        for n in names:
            c = checks.get(("none", n))
            if c is None or c["status"] != "skip" or not c["reason"]:
                errors.append("check %s not listed as skipped with a reason: %r"
                              % (n, c))
        if any(c["status"] != "skip" for c in rep["checks"]):
            errors.append("a check did not skip")
        if any(l["status"] != "skip" or l.get("p50_us") is not None
               for l in rep["latency"]):
            errors.append("a latency row has a result without a device")
    for key in ("versions", "checks", "latency", "summary", "result"):
        if key not in rep:
            errors.append("report.json has no %s" % key)
    if "## Checks" not in md or "## Latency" not in md:
        errors.append("report.md lacks its sections")
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
