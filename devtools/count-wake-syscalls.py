#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What one sleep-and-wake costs in system calls: cqpoll against each
stack's own blocking wait (issue 36, item 4).

Runs each point briefly under strace -ff (open loop at --rate, 2000/s:
500 us apart, so that the receiver sleeps before each message; receiver
on CPU 0, sender on CPU 1), keeps the middle 80 % of the run (between the sender's
10th and 90th percentile post: sendto, or io_uring_enter submitting; so that
start-up and drain are left out),
and prints, for the receiver or poller thread, the system calls per message
and per sleep (a sleep: poll or epoll_wait with a timeout other than 0,
io_uring_enter with IORING_ENTER_GETEVENTS and min_complete > 0, or a
futex wait). Counts do
not depend on the machine's load; times do, and none are printed.

usage: devtools/count-wake-syscalls.py [--build=build] [--duration=1] [--rate=2000]
                                       [--transports=uring,ucx-tcp,ofi-tcp]

UCX over shared memory (ucx:posix) sends with no system call, so it has no
window to count in here.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

POINTS = {
    # transport: (testpmd-cq --dev, tpcq-peer --dev, blocking peer)
    "uring": ("uring", "uring", "uring-wait"),
    "ucx-tcp": ("ucx:tcp", "ucx:tcp", "ucx-wait"),
    "ofi-tcp": ("ofi:tcp", "ofi:tcp", "ofi-sread"),
}
# Start-up's calls, left out of the trace to keep it small.
QUIET = ("access,readlink,openat,mmap,munmap,mprotect,brk,close,"
         "lseek,getdents64,statfs,ioctl,prctl,clone3,rt_sigaction,"
         "madvise,rseq,set_robust_list,rt_sigprocmask,sched_setaffinity,"
         "sched_getaffinity,gettid,getpid,uname,prlimit64,getrandom,pread64,"
         "fcntl,mkdir,unlink,flock,statx,mlock,mincore,get_mempolicy,"
         "set_mempolicy,mbind,memfd_create,ftruncate,fallocate")
LINE = re.compile(r"^([\d.]+)\s+(\w+)\((.*)$")
TIMEOUT = re.compile(r", (-?\d+)\) += ")


def sleeps(call, args):
    """Did this call block (or may it have)?"""
    if call in ("poll", "epoll_wait", "epoll_pwait"):
        m = TIMEOUT.search(args)
        return m is not None and m.group(1) != "0"
    if call == "io_uring_enter":
        a = args.split(", ")
        return "IORING_ENTER_GETEVENTS" in args and len(a) >= 3 and a[2] != "0"
    # libfabric's waits (fi_cq_sread's, and the tcp provider's locks).
    return call == "futex" and "FUTEX_WAIT" in args


def posts(call, args):
    """A sender's post: a sendto, or an io_uring_enter that submits (the
    uring device's sender submits a NOP or a receive for each message)."""
    if call == "sendto":
        return True
    a = args.split(", ")
    return call == "io_uring_enter" and len(a) >= 3 and a[1] != "0" and \
        not sleeps(call, args)


def count(prefix):
    """Per thread (strace -ff: one file each): (time, call, args) rows."""
    rows = []
    d, base = os.path.split(prefix)
    for name in os.listdir(d):
        if not name.startswith(base + "."):
            continue
        tid = name.rsplit(".", 1)[1]
        with open(os.path.join(d, name)) as f:
            for line in f:
                m = LINE.match(line)
                if m:
                    rows.append((tid, float(m.group(1)), m.group(2), m.group(3)))
    sends = collections.Counter(t for t, _, c, a in rows if posts(c, a))
    if not sends:
        return None
    tx = sends.most_common(1)[0][0]
    ts = sorted(x for t, x, c, a in rows if t == tx and posts(c, a))
    lo, hi = ts[len(ts) // 10], ts[-max(1, len(ts) // 10)]
    msgs = sum(1 for x in ts if lo <= x <= hi)
    per = collections.defaultdict(collections.Counter)
    slept = collections.Counter()
    for t, x, c, a in rows:
        if lo <= x <= hi and t != tx:
            per[t][c] += 1
            slept[t] += sleeps(c, a)
    if not per or msgs == 0:
        return None
    # The receiver: the thread that slept most (else made the most calls).
    rx = max(per, key=lambda t: (slept[t], sum(per[t].values())))
    others = sum(sum(c.values()) for t, c in per.items() if t != rx)
    return msgs, per[rx], slept[rx], others


def run(args, label, cmd):
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "st")
        r = subprocess.run(["strace", "-ff", "-qq", "-ttt", "-e", "trace=!" + QUIET,
                            "-o", trace] + cmd, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            print("%-26s failed (exit %d): %s" % (label, r.returncode,
                                                  (r.stderr.strip().splitlines() or [""])[-1]))
            return
        got = count(trace)
    if got is None:
        print("%-24s no sender's post to count in" % label)
        return
    msgs, calls, slept, others = got
    total = sum(calls.values())
    print("%-24s %5d msgs %5.2f calls/msg %4.2f sleeps/msg %5.2f calls/sleep "
          "(other threads %.2f/msg): %s" % (
              label, msgs, total / msgs, slept / msgs, total / max(slept, 1),
              others / msgs,
                              ", ".join("%s %.2f" % (k, v / msgs)
                                        for k, v in calls.most_common(7))))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--build", default=os.path.join(top, "build"))
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--rate", type=int, default=2000)
    ap.add_argument("--transports", default=",".join(POINTS))
    args = ap.parse_args()
    app = os.path.join(args.build, "app", "testpmd-cq")
    for tr in args.transports.split(","):
        if tr not in POINTS:
            ap.error("unknown transport %s (one of %s)" % (tr, ", ".join(POINTS)))
        dev, pdev, peer = POINTS[tr]
        dur = "--duration=%g" % args.duration
        for mode in ("interrupt", "adaptive"):
            run(args, "%s cqpoll-%s" % (tr, mode),
                [os.path.join(app, "testpmd-cq"), "--dev=" + dev, "--mode=" + mode,
                 "--rate=%d" % args.rate, dur])
        run(args, "%s %s" % (tr, peer),
            [os.path.join(app, "tpcq-peer"), "--peer=" + peer, "--dev=" + pdev,
             "--cpus=0,1", "--engine=rate", "--rate=%d" % args.rate, dur])
    return 0


if __name__ == "__main__":
    sys.exit(main())
