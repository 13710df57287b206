#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""End-to-end check of testpmd-cq's interactive prompt (-i).

Usage: check_prompt.py TESTPMD [app options]

Drives the prompt through a pipe and through a pseudo-terminal with the same
script (help, set rate, set mode, start, show stats, stop, a bad and a good
set policy, quit) and asserts on what it answers: completions counted while
the run goes, no lost wake-up, the report at stop, the policy error, exit
status 0 within a timeout. Through the terminal it also checks that TAB
completes a command and a mode, that quit during a run reports the run first,
and that Ctrl-D quits; through the pipe, that the end of input stops a running
run, reports it and exits 0; with two CQs on a poll group, that set mode
switches the running group and clear stats restarts show stats only.
"""
import os
import re
import select
import subprocess
import sys
import time

PROMPT = "testpmd-cq> "
# EAL start-up on a loaded two-CPU machine takes seconds.
STEP_TIMEOUT_S = 60
EXIT_TIMEOUT_S = 30
SHOW_RETRIES = 20
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


class Failed(Exception):
    pass


class Session:
    """One testpmd-cq -i process, fed through a pipe or a terminal."""

    def __init__(self, exe, opts, tty):
        self.tty = tty
        self.out = ""
        self.seen = ""
        cmd = [exe, "--", "-i"] + opts
        print("$", " ".join(cmd), "(through a %s)" % ("terminal" if tty else "pipe"),
              flush=True)
        if tty:
            master, slave = os.openpty()
            self.proc = subprocess.Popen(cmd, stdin=slave, stdout=slave,
                                         stderr=slave, close_fds=True)
            os.close(slave)
            self.rfd = self.wfd = master
        else:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT)
            self.rfd = self.proc.stdout.fileno()
            self.wfd = self.proc.stdin.fileno()

    def _read(self, timeout):
        r, _, _ = select.select([self.rfd], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.rfd, 65536)
        except OSError:  # a terminal whose other side closed
            data = b""
        if not data:
            return None
        text = ANSI.sub("", data.decode(errors="replace"))
        self.out += text
        sys.stdout.write(text)
        sys.stdout.flush()
        return True

    def expect(self, what, timeout=STEP_TIMEOUT_S):
        """Output up to and including what; fails after timeout."""
        end = time.monotonic() + timeout
        while what not in self.out:
            left = end - time.monotonic()
            if left <= 0:
                raise Failed("no %r within %d s" % (what, timeout))
            if self._read(left) is None:
                raise Failed("output ended before %r" % what)
        i = self.out.index(what) + len(what)
        got, self.out = self.out[:i], self.out[i:]
        self.seen += got
        return got

    def send(self, data):
        os.write(self.wfd, data.encode())

    def command(self, line):
        """Type line, return its answer (up to the next prompt)."""
        self.send(line + "\n")
        return self.expect(PROMPT)

    def close_input(self):
        if self.tty:
            raise Failed("a terminal has no end of input; send Ctrl-D")
        self.proc.stdin.close()

    def wait_exit(self):
        end = time.monotonic() + EXIT_TIMEOUT_S
        while self.proc.poll() is None:
            if time.monotonic() > end:
                self.proc.kill()
                raise Failed("still running %d s after quitting" % EXIT_TIMEOUT_S)
            if self._read(0.1) is None:
                time.sleep(0.05)
        while self._read(0) is True:
            pass
        self.seen += self.out
        if self.proc.returncode != 0:
            raise Failed("exit status %d, not 0" % self.proc.returncode)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def field(text, key):
    """The integer of a ' key : N' row of a table."""
    m = re.search(r"^ %s\s*: (\d+)" % re.escape(key), text, re.M)
    if m is None:
        raise Failed("no %s row in:\n%s" % (key, text))
    return int(m.group(1))


def must(cond, why):
    if not cond:
        raise Failed(why)


def script(s):
    """The issue's script, with assertions on every answer."""
    s.expect(PROMPT)
    helped = s.command("help")
    for cmd in ["start", "stop", "show stats", "clear stats", "set mode",
                "set policy", "set rate", "quit", "help"]:
        must(("  " + cmd) in helped, "help does not list %r" % cmd)
    must("rate 20000 /s" in s.command("set rate 20000"), "set rate not taken")
    must("mode interrupt" in s.command("set mode interrupt"), "set mode not taken")
    must("started" in s.command("start"), "start did not start")
    time.sleep(0.5)
    stats = s.command("show stats")
    # Other programs spinning on these two CPUs can delay the first posts.
    for _ in range(SHOW_RETRIES):
        if field(stats, "completions") > 0:
            break
        time.sleep(0.5)
        stats = s.command("show stats")
    must("running" in stats, "show stats does not see the run going")
    must(field(stats, "completions") > 0, "no completion counted while running")
    must(field(stats, "lost_wakeups") == 0, "lost wake-ups while running")
    for key in ["events", "cpu_pct", "latency_p50_ns", "latency_p99_ns"]:
        field(stats, key)
    report = s.command("stop")
    posted = field(report, "posted")
    must(posted > 0, "the run posted nothing")
    must(field(report, "completions") == posted, "completions differ from posts")
    must(field(report, "missing") == 0 and field(report, "order_errors") == 0,
         "delivery check failed")
    must(field(report, "lost_wakeups") == 0, "lost wake-ups in the report")
    must(field(report, "completions") >= field(stats, "completions"),
         "the report counts less than show stats did")
    bad = s.command("set policy bogus")
    must("unknown policy 'bogus'" in bad, "no error for a bad policy")
    must("policy spin:50" in s.command("set policy spin:50"),
         "set policy spin:50 not taken")
    # Every policy set policy takes is named by help, and is taken.
    for name, spec in [("spin[", "spin:50"), ("adaptive[", "adaptive"),
                       ("hybrid[", "hybrid"), ("target-p99:", "target-p99:100"),
                       ("latency-target[", "latency-target")]:
        must(name in helped, "help does not name the policy %r" % name)
        must(("policy " + spec) in s.command("set policy " + spec),
             "set policy %s not taken" % spec)


def pipe_session(exe, opts):
    s = Session(exe, opts, tty=False)
    try:
        script(s)
        s.send("quit\n")
        s.wait_exit()
    finally:
        s.kill()


def pipe_eof_session(exe, opts):
    """End of input while a run goes: the run is stopped and reported."""
    s = Session(exe, opts, tty=False)
    try:
        s.expect(PROMPT)
        must("started" in s.command("start"), "start did not start")
        time.sleep(0.3)
        s.close_input()
        s.wait_exit()
        must(re.search(r"^ posted\s*: [1-9]", s.seen, re.M) is not None,
             "end of input did not report the running run")
    finally:
        s.kill()


def wait_completions(s):
    """show stats once completions were counted (see SHOW_RETRIES)."""
    for _ in range(SHOW_RETRIES):
        stats = s.command("show stats")
        if field(stats, "completions") > 0:
            return stats
        time.sleep(0.5)
    raise Failed("no completion counted while running")


def pipe_group_session(exe, opts):
    """Two CQs run on a poll group: set mode switches it live; clear stats."""
    s = Session(exe, opts + ["--cqs=2"], tty=False)
    try:
        s.expect(PROMPT)
        must("started" in s.command("start"), "start did not start")
        wait_completions(s)
        must("now, on the running poll group" in s.command("set mode poll"),
             "set mode did not switch the running group")
        must("cleared" in s.command("clear stats"), "clear stats refused")
        time.sleep(0.3)
        stats = wait_completions(s)
        must("since 'clear stats'" in stats and "mode poll" in stats,
             "show stats does not count from the clear, in the new mode")
        report = s.command("stop")
        must("mode changed 1 time" in report, "the live mode change is not reported")
        must(re.search(r"^ mode\s*: poll$", report, re.M) is not None,
             "the report does not show the mode set live")
        must(field(report, "completions") > field(stats, "completions"),
             "clear stats changed the report, or show stats did not restart")
        must(field(report, "lost_wakeups") == 0, "lost wake-ups in the report")
        s.send("quit\n")
        s.wait_exit()
    finally:
        s.kill()


def tty_session(exe, opts):
    s = Session(exe, opts, tty=True)
    try:
        script(s)
        # TAB completes a command: without it the line reads "shostats".
        s.send("sho\t")
        s.expect("show ")
        stats = s.command("stats")
        must(field(stats, "completions") > 0, "show stats after TAB failed")
        s.send("set mode int\t")
        s.expect("interrupt ")
        must("mode interrupt" in s.command(""), "set mode after TAB failed")
        must("Command not found" not in s.seen, "a completed line was refused")
        # quit while a run goes: the run is stopped and reported first.
        must("started" in s.command("start"), "second start did not start")
        # A loaded machine (or ASan) may take a while to post the first
        # completion: quit once the run is seen going.
        deadline = time.monotonic() + 20
        while field(s.command("show stats"), "completions") == 0:
            must(time.monotonic() < deadline, "the second run posted nothing")
            time.sleep(0.05)
        mark = len(s.seen)
        s.send("quit\n")
        s.wait_exit()
        must(re.search(r"^ posted\s*: [1-9]", s.seen[mark:], re.M) is not None,
             "quit did not report the running run")
    finally:
        s.kill()


def tty_ctrl_d_session(exe, opts):
    """Ctrl-D on an empty line quits."""
    s = Session(exe, opts, tty=True)
    try:
        s.expect(PROMPT)
        s.send("\x04")
        s.wait_exit()
    finally:
        s.kill()


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    exe, opts = sys.argv[1], sys.argv[2:]
    try:
        for run in [pipe_session, tty_session, pipe_eof_session,
                    tty_ctrl_d_session, pipe_group_session]:
            run(exe, opts)
            print("\nok:", run.__name__, flush=True)
    except Failed as e:
        print("\nFAILED:", e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
