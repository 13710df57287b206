#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""devtools/verdict.py, the decision rule of run-peers.py and run-wakeup.py,
on synthetic paired ratios: equal, 5 % apart, 30 % apart, with outliers,
too noisy, too few. It must decide where the data decide and stay undecided
where they do not.

Negative controls, each caught by the same cases: the rule before issue 36
(a gap wider than the max - min spread, else not judged), a point estimate
without an interval (decides on noise and on 4 pairs), and a mean with a
normal interval (dragged by outliers).

usage: check_verdict.py
"""
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "devtools"))
import verdict  # noqa: E402

# Fixed, symmetric relative offsets (no RNG: the cases are the same every run).
OFF9 = [-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0]
OFF12 = OFF9 + [0.1, -0.1, 0.3]


def around(center, rel, offs=OFF9):
    """Ratios center * (1 + rel * o)."""
    return [center * (1 + rel * o) for o in offs]


def with_outliers(xs, value, count):
    """@count of the rounds replaced by @value (a round in the other mode)."""
    return [value] * count + xs[count:]


# name, ratios, goal, lower is better, expected outcome
CASES = [
    ("equal, goal 1.1", around(1.0, 0.03), 1.1, True, verdict.PASS),
    ("equal, goal 1.0", around(1.0, 0.03), 1.0, True, verdict.AT),
    ("5% apart, goal 1.0", around(1.05, 0.01), 1.0, True, verdict.FAIL),
    ("5% apart, goal 1.1", around(1.05, 0.01), 1.1, True, verdict.PASS),
    ("30% apart, goal 1.1", around(1.30, 0.05), 1.1, True, verdict.FAIL),
    ("30% apart, 12 pairs", around(1.30, 0.05, OFF12), 1.1,
     True, verdict.FAIL),
    # 9 pairs make r(2)..r(8): one outlier a side is outvoted, 12 make
    # r(3)..r(10): two are.
    ("equal + 1 outlier at 5x, goal 1.1",
     with_outliers(around(1.0, 0.03), 5.0, 1), 1.1, True, verdict.PASS),
    ("equal + 2 outliers at 5x in 12, goal 1.1",
     with_outliers(around(1.0, 0.03, OFF12), 5.0, 2), 1.1, True, verdict.PASS),
    ("30% apart + 2 outliers at 0.2x in 12",
     with_outliers(around(1.30, 0.05, OFF12), 0.2, 2), 1.1, True, verdict.FAIL),
    ("30% apart + 3 outliers at 0.2x in 9",
     with_outliers(around(1.30, 0.05), 0.2, 3), 1.1, True, verdict.UNDECIDED),
    ("noisy 0.6x..1.6x, goal 1.1", around(1.1, 0.45), 1.1, True, verdict.UNDECIDED),
    ("4 pairs only, 30% apart", around(1.30, 0.05, [-1, 0, 0.5, 1]), 1.1, True,
     verdict.UNDECIDED),
    ("higher is better, 30% above 1.0", around(1.30, 0.05), 1.0, False, verdict.PASS),
    ("higher is better, 30% below 1.0", around(0.70, 0.05), 1.0, False, verdict.FAIL),
]


def naive_spread(ratios, goal, lower):
    """The rule before issue 36: judged only when the gap between the mean
    and the goal is wider than the max - min spread."""
    m = statistics.mean(ratios)
    if abs(m - goal) <= max(ratios) - min(ratios):
        return verdict.UNDECIDED
    return verdict.PASS if (m <= goal) == lower else verdict.FAIL


def naive_point(ratios, goal, lower):
    """The median against the goal, no interval."""
    m = statistics.median(ratios)
    return verdict.PASS if (m <= goal) == lower else verdict.FAIL


def naive_mean(ratios, goal, lower):
    """A mean with a normal 90 % interval: outliers drag it."""
    m = statistics.mean(ratios)
    h = 1.645 * statistics.stdev(ratios) / len(ratios) ** 0.5
    lo, hi = m - h, m + h
    if (hi <= goal) if lower else (lo >= goal):
        return verdict.PASS
    if (lo > goal) if lower else (hi < goal):
        return verdict.FAIL
    return verdict.UNDECIDED


def rule(ratios, goal, lower):
    return verdict.judge(ratios, goal, lower).outcome


def run(decide, quiet=False):
    wrong = 0
    for name, ratios, goal, lower, want in CASES:
        got = decide(ratios, goal, lower)
        if got != want:
            wrong += 1
        if not quiet:
            print("  %-42s want %-11s got %-11s %s" % (
                name, want, got, "ok" if got == want else "WRONG"))
            if decide is rule:
                print("      " + verdict.judge(ratios, goal, lower).text())
    return wrong


def main():
    bad = 0
    # The interval itself: 9 pairs give r(2)..r(8) at 96.1 %, 5 the extremes.
    lo, hi, cov = verdict.sign_interval(range(1, 10))
    if (lo, hi) != (2, 8) or abs(cov - (1 - 2 * 10 / 512)) > 1e-12:
        print("sign_interval(1..9) = %s, want (2, 8, 0.961)" % ((lo, hi, cov),))
        bad += 1
    if verdict.sign_interval(range(5))[:2] != (0, 4) or verdict.sign_interval(range(4)):
        print("sign_interval: 5 values give the extremes, 4 none")
        bad += 1
    combos = [([verdict.PASS, verdict.FAIL], verdict.PASS),
              ([verdict.FAIL, verdict.FAIL], verdict.FAIL),
              ([verdict.FAIL, verdict.AT], verdict.AT),
              ([verdict.FAIL, verdict.UNDECIDED], verdict.UNDECIDED)]
    for parts, want in combos:
        if verdict.any_of(parts) != want:
            print("any_of(%s) = %s, want %s" % (parts, verdict.any_of(parts), want))
            bad += 1
    print("the rule (%s):" % verdict.method_text())
    bad += run(rule)
    # Each naive rule must get at least one case wrong.
    for name, naive in (("gap over the spread (before issue 36)", naive_spread),
                        ("median, no interval", naive_point),
                        ("mean, normal interval", naive_mean)):
        w = run(naive, quiet=True)
        print("control %-40s %d case(s) wrong: %s" % (
            name, w, "caught" if w else "NOT CAUGHT"))
        if not w:
            run(naive)
            bad += 1
    print("check_verdict: %s" % ("FAIL" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
