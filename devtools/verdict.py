# SPDX-License-Identifier: BSD-3-Clause
"""The one decision rule of cqpoll's comparisons (issues 36 and 37).

Both devtools/run-peers.py (cqpoll against the peers' own waits) and
devtools/run-wakeup.py (bench_wakeup's scenarios) judge a goal stated as a
ratio (e.g. "cqpoll interrupt p50 <= 1.1x the stack's blocking wait") from
paired samples: one ratio per round, the two points of a pair measured back
to back so that the machine's state (its wake-up mode, another process's
work) enters both sides of a ratio and cancels.

The estimate is the median of the per-round ratios, with a distribution-free
interval for it: the sign-test (binomial order-statistic) interval. With n
ratios sorted r(1) <= ... <= r(n), [r(k), r(n+1-k)] holds the true median
with probability 1 - 2 P(Binomial(n, 1/2) < k) whatever the ratios'
distribution; k is the largest that keeps that at or above LEVEL (90 %), so
the interval's coverage is stated exactly (e.g. 9 rounds: r(2)..r(8), 96.1 %).
Outliers move neither the median nor the interval's ends beyond the k-th
ratio from each side, and it needs no assumption of symmetry or normality:
the reason to prefer it to a mean with a t interval on a shared CPU. Fewer
than 5 ratios cannot make a 90 % interval (2 / 2^4 > 10 %): undecided.

Outcomes, for a goal "ratio <= g" (or ">= g"):
  PASS          the whole interval is on the goal's side of g
  FAIL          the whole interval is on the wrong side
  at the goal   it straddles g but lies within +-10 % of g: a result
  undecided     it straddles g and reaches further: printed with it

Both also write their section of the results page the same way, so that is
here too: the load-average guard (a page is a verdict on a quiet machine,
or marked LOADED), the run's conditions (commit, start time, load, command)
and the section's place on the page.
"""
import math
import os
import statistics
import subprocess
import sys
import time

LEVEL = 0.90          # two-sided confidence level of the interval, at least
AT_GOAL = 0.10        # "at the goal": the interval within g * (1 +- this)
MIN_PAIRS = 5         # the fewest ratios a LEVEL interval can be made from

PASS, FAIL, AT, UNDECIDED = "PASS", "FAIL", "at the goal", "undecided"


def _binom_cdf_below(k, n):
    """P(Binomial(n, 1/2) < k)."""
    return sum(math.comb(n, i) for i in range(k)) / 2.0 ** n


def sign_interval(values, level=LEVEL):
    """(lo, hi, coverage) of the median of @values, or None if too few.

    The order statistics r(k), r(n+1-k) with the largest k such that
    1 - 2 P(B < k) >= level, B ~ Binomial(n, 1/2)."""
    v = sorted(values)
    n = len(v)
    k = 0
    while k + 1 <= n // 2 and 1 - 2 * _binom_cdf_below(k + 1, n) >= level:
        k += 1
    if k == 0:
        return None
    return v[k - 1], v[n - k], 1 - 2 * _binom_cdf_below(k, n)


class Judged:
    """A goal judged on paired ratios: outcome, median, interval, coverage."""

    def __init__(self, ratios, goal, lower_is_better=True):
        self.ratios = [r for r in ratios if r is not None and math.isfinite(r)]
        self.goal = goal
        self.lower = lower_is_better
        self.n = len(self.ratios)
        self.median = statistics.median(self.ratios) if self.ratios else float("nan")
        ci = sign_interval(self.ratios) if self.n >= MIN_PAIRS else None
        self.lo, self.hi, self.coverage = ci if ci else (float("nan"),) * 3
        self.outcome = self._decide(ci)

    def _decide(self, ci):
        if ci is None:
            return UNDECIDED
        lo, hi, _ = ci
        g = self.goal
        good_side = hi <= g if self.lower else lo >= g
        bad_side = lo > g if self.lower else hi < g
        if good_side:
            return PASS
        if bad_side:
            return FAIL
        if lo >= g * (1 - AT_GOAL) and hi <= g * (1 + AT_GOAL):
            return AT
        return UNDECIDED

    def text(self):
        """e.g. '1.04x [0.98, 1.09] (90 % interval, 9 pairs; goal <= 1.1x): PASS'."""
        if self.n < MIN_PAIRS:
            return "%s (%d pairs: a %d %% interval needs >= %d)" % (
                UNDECIDED, self.n, round(LEVEL * 100), MIN_PAIRS) + \
                (", median %.2fx" % self.median if self.n else "")
        return "%.2fx [%.2f, %.2f] (%.1f %% interval, %d pairs; goal %s %.2fx): %s" % (
            self.median, self.lo, self.hi, 100 * self.coverage, self.n,
            "<=" if self.lower else ">=", self.goal, self.outcome)


def judge(ratios, goal, lower_is_better=True):
    """Judged(@ratios against @goal): see the module's doc."""
    return Judged(ratios, goal, lower_is_better)


def any_of(outcomes):
    """A goal met when any of its parts is (e.g. "no peer dominates": p99 or
    CPU not beaten): PASS if one part passes, FAIL if every part fails, at
    the goal if one part is at it, else undecided."""
    if PASS in outcomes:
        return PASS
    if outcomes and all(o == FAIL for o in outcomes):
        return FAIL
    if AT in outcomes:
        return AT
    return UNDECIDED


def method_text():
    """The method, one sentence, for pages and reports."""
    return ("median of the per-round paired ratios with a sign-test "
            "(binomial order-statistic) interval of at least %d %% confidence; "
            "PASS when the whole interval is on the goal's side, FAIL when it is "
            "wholly on the other, 'at the goal' when it straddles the goal "
            "within +-%d %% of it, else undecided (interval printed)" %
            (round(LEVEL * 100), round(AT_GOAL * 100)))


# The results page: the guard, the conditions, the section's place.

QUIET_LOAD = 0.3      # load average per CPU above which a page is refused


def loaded(load, ncpu):
    """The machine was not quiet: load average over QUIET_LOAD per CPU."""
    return load > QUIET_LOAD * max(ncpu, 1)


def load_guard(tool, load, ncpu, force):
    """Whether --page may write the page at @load on @ncpu CPUs: not when
    loaded unless @force (then the section says LOADED); the refusal is
    said on stderr, prefixed with @tool."""
    if not loaded(load, ncpu) or force:
        return True
    print("%s: --page: load average %.2f on %d CPUs is over %.1f per "
          "CPU: not a quiet machine, the page is not rewritten (wait, or "
          "--force to write it marked LOADED)" % (tool, load, ncpu, QUIET_LOAD),
          file=sys.stderr)
    return False


def loaded_banner(load, ncpu):
    """The section's first lines when the run was loaded (else none)."""
    if not loaded(load, ncpu):
        return []
    return ["# LOADED: load average %.2f on %d CPUs before this run (over %.1f "
            "per CPU): not a verdict on a quiet machine" % (load, ncpu, QUIET_LOAD), ""]


def git_commit(top):
    """The checkout's commit as `git describe --always --dirty` names it."""
    r = subprocess.run(["git", "-C", top, "describe", "--always", "--dirty",
                        "--abbrev=12"], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else "unknown"


def run_conditions(top, script, t0, load_before):
    """What a section says of its run: commit, command (@script and this
    process's arguments), start (@t0, UTC), CPUs, load before and now."""
    return {"commit": git_commit(top),
            "command": " ".join([script] + sys.argv[1:]),
            "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t0)),
            "ncpu": os.cpu_count() or 1,
            "load_before": load_before, "load_after": os.getloadavg()[0]}


def write_section(page, sec, begin, end, after=(), before="## Policy lab"):
    """Put the lines @sec (from @begin to @end) on @page: where the section
    was; else right after the first of the markers @after found; else before
    the heading @before; else at the end. The page is replaced at once."""
    with open(page) as f:
        text = f.read()
    if begin in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
    else:
        mark = next((m for m in after if m in text), None)
        if mark is not None:
            head, tail = text.split(mark, 1)
            head += mark + "\n\n"
            tail = tail.lstrip("\n")
        elif before in text:
            head, tail = text.split(before, 1)
            tail = before + tail
        else:
            head, tail = text.rstrip("\n") + "\n\n", ""
    with open(page + ".tmp", "w") as f:
        f.write(head + "\n".join(sec) + "\n\n" + tail)
    os.replace(page + ".tmp", page)
