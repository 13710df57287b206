#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""cqpoll in DPDK telemetry, read as a DPDK user would: with DPDK's stock
client (dpdk-telemetry.py) when installed, else with the same protocol
spoken here (the v2 socket, one JSON reply per command).

Usage:
  check_telemetry.py app TELAPP [--headers=DIR]
      telemetry_app: right after rte_eal_init(), with no cqpoll object yet,
      "/" lists every /cqpoll/ command and each list is empty; then a group,
      a CQ and a handoff appear as id 0 with their names and counters. With
      --headers (lib/cqpoll), /cqpoll/group/stats and /cqpoll/cq/stats carry
      exactly the fields of struct cqpoll_group_stats and cqpoll_cq_stats,
      read from the public headers.
  check_telemetry.py testpmd TESTPMD [--stats-cmd=CMD --expect-no-stats]
      testpmd-cq with telemetry on by default: the file prefix it prints
      reaches the running group's and CQs' list, info and stats.
      Negative control: --stats-cmd replaces the group stats command and
      --expect-no-stats requires that no counters come back.
Exit 0 pass, 1 fail.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

CLIENT = shutil.which("dpdk-telemetry.py") or "/usr/bin/dpdk-telemetry.py"
KINDS = ("group", "cq", "handoff")


def runtime_dir(prefix):
    """DPDK's runtime directory of a file prefix, as the EAL and client see it."""
    base = os.environ.get("RUNTIME_DIRECTORY")
    if not base:
        base = "/var/run" if os.getuid() == 0 else os.environ.get(
            "XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(base, "dpdk", prefix)


def wait_socket(prefix, proc, timeout=15):
    sock = os.path.join(runtime_dir(prefix), "dpdk_telemetry.v2")
    deadline = time.monotonic() + timeout
    while not os.path.exists(sock):
        if proc.poll() is not None or time.monotonic() > deadline:
            return None
        time.sleep(0.05)
    return sock


def query_stock(prefix, cmds):
    r = subprocess.run([sys.executable, CLIENT, "-f", prefix],
                       input="\n".join(cmds) + "\n", capture_output=True,
                       text=True, timeout=60)
    answers = []
    for line in r.stdout.splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            answers.append(obj)
    if len(answers) != len(cmds):
        print(r.stdout + r.stderr, end="")
    return answers


def query_own(prefix, cmds):
    path = os.path.join(runtime_dir(prefix), "dpdk_telemetry.v2")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    answers = []
    try:
        s.connect(path)
        json.loads(s.recv(16384).decode())  # the greeting
        for cmd in cmds:
            s.send(cmd.encode())
            answers.append(json.loads(s.recv(1 << 20).decode()))
    finally:
        s.close()
    return answers


def query_many(prefix, cmds):
    """The replies to cmds, in one client session, in order (None: none)."""
    stock = os.access(CLIENT, os.X_OK)
    answers = query_stock(prefix, cmds) if stock else query_own(prefix, cmds)
    out = []
    for i, cmd in enumerate(cmds):
        ans = answers[i] if i < len(answers) else {}
        print("%s %s -> %s" % ("dpdk-telemetry.py" if stock else "socket",
                               cmd, json.dumps(ans)[:300]))
        out.append(ans.get(cmd.split(",")[0]))
    return out


def query(prefix, cmd):
    """The reply to one command."""
    return query_many(prefix, [cmd])[0]


class Failed(Exception):
    pass


def struct_fields(path, name):
    """Member names of struct NAME in the header at PATH (one per line,
    as cqpoll's headers declare them)."""
    with open(path) as f:
        text = f.read()
    m = re.search(r"struct %s \{(.*?)\n\};" % name, text, re.S)
    if m is None:
        raise Failed("struct %s not found in %s" % (name, path))
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    return [re.sub(r"\[.*\]", "", d.split()[-1]).rstrip(";")
            for d in body.split(";") if d.strip()]


# What telemetry adds to a struct's counters, from other calls: the group's
# failed members (cqpoll_group_failed_count()), the CQ's state
# (cqpoll_cq_state_get()). Anything else beyond the struct is a mistake.
TELEMETRY_EXTRAS = {
    "cqpoll_group_stats": ["failed_cqs"],
    "cqpoll_cq_stats": ["state", "state_errno", "state_cause"],
}


def check_fields(got, path, name):
    want = struct_fields(path, name)
    missing = [f for f in want if f not in got]
    extra = [f for f in got if f not in want and
             f not in TELEMETRY_EXTRAS.get(name, [])]
    check(not missing and not extra,
          "%s against struct %s: missing %s, not in the struct %s" %
          (list(got), name, missing, extra))


def check(cond, what):
    if not cond:
        raise Failed(what)


def run_app(exe, headers):
    prefix = "tpcqtelapp%d" % os.getpid()
    n = 100
    app = subprocess.Popen([exe, prefix, str(n)], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True)
    try:
        check(app.stdout.readline().strip() == "ready", "app did not start")
        check(wait_socket(prefix, app) is not None, "no telemetry socket")
        cmds = query(prefix, "/")
        check(isinstance(cmds, list), "/: no command list")
        for k in KINDS:
            for what in ("list", "info", "stats"):
                c = "/cqpoll/%s/%s" % (k, what)
                check(c in cmds, "%s not listed by / before any group" % c)
            check(query(prefix, "/cqpoll/%s/list" % k) == [],
                  "/cqpoll/%s/list not empty before any was made" % k)
        app.stdin.write("create\n")
        app.stdin.flush()
        check(app.stdout.readline().strip() == "created", "app setup failed")

        names = {"group": "tel-group", "cq": "tel-cq", "handoff": "tel-handoff"}
        for k in KINDS:
            check(query(prefix, "/cqpoll/%s/list" % k) == [0],
                  "/cqpoll/%s/list is not [0]" % k)
            info = query(prefix, "/cqpoll/%s/info,0" % k)
            check(isinstance(info, dict) and info.get("name") == names[k] and
                  info.get("id") == 0, "%s info: wrong name or id" % k)
            check(query(prefix, "/cqpoll/%s/info,1" % k) is None,
                  "%s info of an unknown id answered" % k)
            check(query(prefix, "/cqpoll/%s/stats,x" % k) is None,
                  "%s stats of a bad id answered" % k)
        info = query(prefix, "/cqpoll/group/info,0")
        check(info.get("mode") == "busy" and info.get("policy") == "adaptive"
              and info.get("lcore") == 0, "group info: mode, policy, lcore")
        info = query(prefix, "/cqpoll/cq/info,0")
        check(info.get("driver") == "sw" and info.get("arm") == "edge",
              "cq info: driver, arm")
        check(info.get("state") == "ok" and info.get("state_errno") == 0 and
              "state_cause" not in info, "cq info: state of a live cq")
        info = query(prefix, "/cqpoll/handoff/info,0")
        check(info.get("size") == 4096 and info.get("full") == "drop",
              "handoff info: size, full")
        st = query(prefix, "/cqpoll/group/stats,0")
        check(st.get("completions") == n and "timeout_recoveries" in st and
              st.get("failed_cqs") == 0, "group stats: completions, failed_cqs")
        if headers:
            check_fields(st, os.path.join(headers, "cqpoll_group_stats.h"),
                         "cqpoll_group_stats")
        st = query(prefix, "/cqpoll/cq/stats,0")
        check(st.get("completions") == n and st.get("state") == "ok",
              "cq stats: completions, state")
        if headers:
            check_fields(st, os.path.join(headers, "cqpoll_stats.h"),
                         "cqpoll_cq_stats")
        st = query(prefix, "/cqpoll/handoff/stats,0")
        check(st.get("enqueued") == n and st.get("in_ring") == n,
              "handoff stats: enqueued")
        app.stdin.write("exit\n")
        app.stdin.flush()
        check(app.wait(timeout=30) == 0, "app exit status")
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
        shutil.rmtree(runtime_dir(prefix), ignore_errors=True)


def run_testpmd(exe, stats_cmd, expect_stats):
    cmd = [exe, "--dev=sw", "--mode=adaptive", "--cqs=4", "--rate=20000",
           "--duration=5"]
    print("$", " ".join(cmd), flush=True)
    app = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    prefix = None
    lines = []
    try:
        for line in app.stderr:
            lines.append(line)
            if "telemetry on, file prefix " in line:
                prefix = line.split("file prefix ")[1].split()[0]
                break
        # Keep draining so that the app never blocks on a full pipe.
        drain = threading.Thread(target=lambda: lines.extend(app.stderr))
        drain.start()
        check(prefix is not None, "testpmd-cq printed no file prefix")
        check(wait_socket(prefix, app) is not None, "no telemetry socket")
        time.sleep(1)  # into the run: the group exists and has polled
        # One client session: a loaded machine may start Python slowly.
        groups, ginfo, cqs, cinfo, stats = query_many(prefix, [
            "/cqpoll/group/list", "/cqpoll/group/info,0", "/cqpoll/cq/list",
            "/cqpoll/cq/info,3", stats_cmd])
        check(groups == [0], "/cqpoll/group/list is not [0]")
        check(isinstance(ginfo, dict) and ginfo.get("name") == "testpmd-cq"
              and ginfo.get("mode") == "adaptive", "group info")
        check(cqs == [0, 1, 2, 3], "/cqpoll/cq/list is not [0, 1, 2, 3]")
        check(isinstance(cinfo, dict) and cinfo.get("name") == "cq3" and
              cinfo.get("driver") == "sw", "cq info")
        # Asked and answered: Ctrl-C ends the run (exit 1, "interrupted")
        # instead of waiting out its --duration.
        app.send_signal(signal.SIGINT)
        rc = app.wait(timeout=60)
        drain.join()
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
        sys.stderr.write("".join(lines))
    check(rc == 1 and any("interrupted after" in ln for ln in lines),
          "testpmd-cq exited with %s, not as interrupted" % rc)
    moving = isinstance(stats, dict) and stats.get("completions", 0) > 0 \
        and stats.get("polls", 0) > 0
    if not expect_stats:
        check(not moving, "counters through %s yet none were expected" %
              stats_cmd)
        print("no counters through", stats_cmd, "as expected")
        return
    check(moving, "group counters not moving: %r" % (stats,))
    print("telemetry OK: %d completions, %d polls" %
          (stats["completions"], stats["polls"]))


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("app", "testpmd"):
        print(__doc__)
        return 2
    print("client:", CLIENT if os.access(CLIENT, os.X_OK)
          else "none installed, the socket protocol spoken here")
    try:
        if sys.argv[1] == "app":
            headers = None
            for a in sys.argv[3:]:
                if a.startswith("--headers="):
                    headers = a.split("=", 1)[1]
                else:
                    print("unknown option", a)
                    return 2
            run_app(sys.argv[2], headers)
        else:
            stats_cmd = "/cqpoll/group/stats,0"
            expect = True
            for a in sys.argv[3:]:
                if a.startswith("--stats-cmd="):
                    stats_cmd = a.split("=", 1)[1]
                elif a == "--expect-no-stats":
                    expect = False
                else:
                    print("unknown option", a)
                    return 2
            run_testpmd(sys.argv[2], stats_cmd, expect)
    except Failed as e:
        print("FAIL:", e)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
