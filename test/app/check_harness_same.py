#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""testpmd-cq and tpcq-peer run the same instructions for the work on each
completion: tpcq_harness_got() and tpcq_harness_now() disassembled from
each program are the same instruction for instruction (addresses and
displacements to other code aside, which the link places).

usage: check_harness_same.py OBJDUMP TESTPMD_CQ TPCQ_PEER CONTROL

CONTROL: a program built with its own copy of harness.c at -O0 (what a
program compiling the harness itself, with its own flags, would run);
it must be told apart from testpmd-cq, or the comparison proves nothing.
"""
import re
import subprocess
import sys

FUNCS = ("tpcq_harness_got", "tpcq_harness_now")


def body(objdump, exe, func):
    """The instructions of @func in @exe, addresses and branch targets cut."""
    r = subprocess.run([objdump, "-d", "--no-show-raw-insn",
                        "--disassemble=" + func, exe],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return None
    out, inside = [], False
    for line in r.stdout.splitlines():
        if re.match(r"^[0-9a-f]+ <%s>:$" % re.escape(func), line):
            inside = True
            continue
        if inside:
            m = re.match(r"^\s+[0-9a-f]+:\s+(.*)$", line)
            if not m:
                if line.strip() == "":
                    break
                continue
            ins = m.group(1).split("#")[0].strip()
            # Branch and call targets: the link's placement, not the code.
            ins = re.sub(r"\b[0-9a-f]+ <([^>+]+)(\+0x[0-9a-f]+)?>",
                         lambda x: "<%s%s>" % (x.group(1), x.group(2) or ""), ins)
            ins = re.sub(r"-?0x[0-9a-f]+\(%rip\)", "(%rip)", ins)
            out.append(ins)
    return out or None


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    objdump, tp, peer, control = sys.argv[1:]
    bad = 0
    for f in FUNCS:
        a, b = body(objdump, tp, f), body(objdump, peer, f)
        ok = a is not None and a == b
        print("%s: testpmd-cq %s, tpcq-peer %s instructions: %s" % (
            f, len(a or []), len(b or []), "the same" if ok else "DIFFER"))
        bad += not ok
    c = body(objdump, control, FUNCS[0])
    a = body(objdump, tp, FUNCS[0])
    caught = c is not None and c != a
    print("control: %s at -O0, %d instructions: %s" % (
        FUNCS[0], len(c or []), "told apart" if caught else "NOT TOLD APART"))
    bad += not caught
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
