#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run two programs and fail unless they print the same lines
(policy-same-decisions: the adaptive policy against its reference build)."""
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        print("usage: check_same_output.py PROGRAM REFERENCE", file=sys.stderr)
        return 2
    outs = []
    for prog in sys.argv[1:]:
        r = subprocess.run([prog], capture_output=True, text=True, check=False)
        if r.returncode != 0:
            print(f"{prog}: exit {r.returncode}: {r.stderr.strip()}", file=sys.stderr)
            return 1
        outs.append(r.stdout.splitlines())
    if not outs[0]:
        print("no output", file=sys.stderr)
        return 1
    same = True
    for got, want in zip(outs[0], outs[1]):
        if got != want:
            print(f"differs:\n  {got}\n  {want} (reference)")
            same = False
    if len(outs[0]) != len(outs[1]):
        print(f"{len(outs[0])} lines against {len(outs[1])}")
        same = False
    if same:
        print(f"{len(outs[0])} traces x policies: the same decisions")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
