# SPDX-License-Identifier: BSD-3-Clause
"""perftest's ib_send_lat beside testpmd-cq: its arguments and its output.

The table ib_send_lat prints (perftest 6.x, src/perftest_parameters.h:
RESULT_FMT_LAT, then one REPORT_FMT_LAT row) is what is parsed; the banner
before it is not relied on. One device runs both ends over loopback: the
server first, then the client towards localhost.
"""
import re
import shutil
import subprocess
import time

HEADER_KEYS = ("#bytes", "#iterations", "t_min[usec]", "t_max[usec]",
               "t_typical[usec]", "t_avg[usec]", "t_stdev[usec]",
               "99% percentile[usec]", "99.9% percentile[usec]")
COLUMNS = ("bytes", "iterations", "t_min_us", "t_max_us", "t_typical_us",
           "t_avg_us", "t_stdev_us", "p99_us", "p99_9_us")


def build_args(binary, ibdev, size, iters, events, tcp_port, ib_port=1,
               gid_index=-1, server_name=None):
    """argv of one end: the server without server_name, else the client."""
    argv = [binary, "-d", ibdev, "-i", str(ib_port), "-s", str(size),
            "-n", str(iters), "-p", str(tcp_port), "-F"]
    if gid_index >= 0:
        argv += ["-x", str(gid_index)]
    if events:
        argv.append("-e")
    if server_name is not None:
        argv.append(server_name)
    return argv


def parse(text):
    """The result row of ib_send_lat's output as a dict; ValueError if none."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not all(k in line for k in HEADER_KEYS):
            continue
        for row in lines[i + 1:]:
            if not row.strip() or set(row.strip()) == {"-"}:
                continue
            fields = row.split()
            if len(fields) != len(COLUMNS):
                raise ValueError("result row has %d fields, expected %d: %r"
                                 % (len(fields), len(COLUMNS), row))
            try:
                vals = [int(fields[0]), int(fields[1])] + \
                    [float(f) for f in fields[2:]]
            except ValueError:
                raise ValueError("result row is not numeric: %r" % row)
            return dict(zip(COLUMNS, vals))
        break
    raise ValueError("no latency table (header %r) in the output"
                     % " ".join(HEADER_KEYS[:3]))


def version(binary="ib_send_lat"):
    path = shutil.which(binary)
    if path is None:
        return None
    try:
        r = subprocess.run([path, "--version"], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"Version:\s*(\S+)", r.stdout + r.stderr)
    return m.group(1) if m else None


def run_pair(ibdev, size, iters, events, tcp_port, ib_port, gid_index,
             timeout=60):
    """(dict, None) from the client's table, or (None, why)."""
    binary = shutil.which("ib_send_lat")
    if binary is None:
        return None, "ib_send_lat not found (apt-get install perftest)"
    srv = subprocess.Popen(build_args(binary, ibdev, size, iters, events,
                                      tcp_port, ib_port, gid_index),
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(1.0)
        cli = subprocess.run(build_args(binary, ibdev, size, iters, events,
                                        tcp_port, ib_port, gid_index,
                                        "localhost"),
                             stdin=subprocess.DEVNULL, capture_output=True,
                             text=True, timeout=timeout)
        out = cli.stdout + cli.stderr
        srv_out, _ = srv.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.communicate()
        return None, "ib_send_lat did not finish within %d s" % timeout
    if cli.returncode != 0:
        tail = " | ".join(out.strip().splitlines()[-3:])
        return None, "ib_send_lat exited %d: %s" % (cli.returncode, tail)
    try:
        return parse(out), None
    except ValueError as e:
        return None, "ib_send_lat output: %s" % e
