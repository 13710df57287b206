#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# testpmd-cq --dev=mlx5:mlx5_0 with no such device: a clear message and
# exit 1, not a crash; skips (77) where mlx5_0 exists.
# usage: check_hw_missing.py TESTPMD_CQ
import subprocess, sys
cmd = [sys.argv[1], "--", "--dev=mlx5:mlx5_0", "--duration=1"]
r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                   text=True, timeout=120)
print(r.stdout + r.stderr)
if r.returncode == 0:
    print("mlx5_0 exists: nothing to check")
    sys.exit(77)
want = "testpmd-cq: no RDMA device named mlx5_0 ("
if r.returncode != 1 or want not in r.stderr:
    print("expected exit 1 and", repr(want), "got exit", r.returncode)
    sys.exit(1)
