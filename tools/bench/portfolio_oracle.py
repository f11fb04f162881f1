#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How often issue 30's acceptance, as measured, passes a policy that cannot be beaten.

    tools/bench/portfolio_oracle.py [--seeds N,...] [--trials T] [--rng S] RATES

RATES: tools/bench/portfolio_rates.py's output (every single strategy measured on a
program, the portfolio's arms and the others: tsa, ga). Issue 30 measures the portfolio
on each corpus program with N seeds (5), at most CAP runs each (200), and asks for the
bug in at least 4 of 5 seeds and a median of runs to the first failure within 2x of the
best single strategy's median, which is itself measured: the smallest of the single
strategies' N-seed medians.

The oracle is the policy that knows the program and runs its best strategy (the largest
per-run probability p) in every run: no portfolio can do better. This tool draws, per
trial and program, N campaigns of every single strategy (the first failing run of a
geometric with that strategy's p, censored at CAP) for the reference, and N fresh
campaigns of the best strategy for the oracle, and checks the acceptance on them. It
prints, for each N, the share of trials in which the oracle passes on every program, and
per program the share in which it passes there; then the same against the best
strategy's true median (the geometric median of its p: what the offline simulation's
ratios use), which the measurement's noise on the reference side does not touch.

Programs whose best p is 0 are left out. Deterministic for a given --rng.

Example:
    tools/bench/portfolio_rates.py docs/studies/bench-bugs-2026-11-26.txt ... > /tmp/rates.txt
    tools/bench/portfolio_oracle.py --seeds 5,11,21,51 /tmp/rates.txt
"""
import argparse
import math
import random
import sys

from portfolio_bound import geo_median  # the best arm's true median, as the bound uses it


def read(path):
    progs = {}
    for line in open(path):
        f = line.split()
        if len(f) != 8 or f[1] == "portfolio":
            continue
        progs.setdefault(f[0], {})[f[1]] = float(f[2])
    return {p: s for p, s in sorted(progs.items()) if max(s.values()) > 0}


def first_failure(rng, p, cap):
    """The run of a campaign's first failure, or None if none within cap runs."""
    if p <= 0:
        return None
    if p >= 1:
        return 1
    n = 1 + int(math.log(1.0 - rng.random()) / math.log(1.0 - p))
    return n if n <= cap else None


def median(xs):
    """The table maker's median: over the seeds that found the bug, None if none did."""
    ys = sorted(x for x in xs if x is not None)
    if not ys:
        return None
    m = len(ys)
    return ys[m // 2] if m % 2 else (ys[m // 2 - 1] + ys[m // 2]) / 2


def passes(rng, strategies, n, cap, against_truth):
    best = max(strategies, key=lambda s: strategies[s])
    need = math.ceil(0.8 * n)
    if against_truth:
        ref = geo_median(strategies[best])
    else:
        meds = []
        for p in strategies.values():
            runs = [first_failure(rng, p, cap) for _ in range(n)]
            if sum(r is not None for r in runs) >= need:
                meds.append(median(runs))
        if not meds:
            return True  # no single strategy qualifies: nothing to be within 2x of
        ref = min(meds)
    oracle = [first_failure(rng, strategies[best], cap) for _ in range(n)]
    return sum(r is not None for r in oracle) >= need and median(oracle) <= 2 * ref


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="5,11,21,51", help="seed counts to try (5,11,21,51)")
    ap.add_argument("--trials", type=int, default=2000, help="trials per seed count (2000)")
    ap.add_argument("--cap", type=int, default=200, help="runs per campaign at most (200)")
    ap.add_argument("--rng", type=int, default=1, help="the generator's seed (1)")
    ap.add_argument("rates")
    a = ap.parse_args()
    try:
        seeds = [int(x) for x in a.seeds.split(",")]
        progs = read(a.rates)
    except (ValueError, OSError) as e:
        print("portfolio_oracle: %s" % e, file=sys.stderr)
        return 2
    if not progs:
        print("portfolio_oracle: %s: no program with a failing strategy" % a.rates,
              file=sys.stderr)
        return 2
    rng = random.Random(a.rng)
    print("%d programs; %d trials per seed count; cap %d runs" % (len(progs), a.trials, a.cap))
    for against_truth in (False, True):
        print()
        print("reference: %s" % ("the best strategy's true median" if against_truth else
                                 "the smallest measured median of the single strategies"))
        header = "%-22s %-8s %6s" % ("program", "best", "p")
        for n in seeds:
            header += " %8s" % ("N=%d" % n)
        print(header)
        per = {n: {p: 0 for p in progs} for n in seeds}
        every = {n: 0 for n in seeds}
        for n in seeds:
            for _ in range(a.trials):
                ok_all = True
                for prog, strategies in progs.items():
                    if passes(rng, strategies, n, a.cap, against_truth):
                        per[n][prog] += 1
                    else:
                        ok_all = False
                every[n] += ok_all
        for prog, strategies in progs.items():
            best = max(strategies, key=lambda s: strategies[s])
            line = "%-22s %-8s %6.3f" % (prog, best, strategies[best])
            for n in seeds:
                line += " %8.3f" % (per[n][prog] / a.trials)
            print(line)
        line = "%-22s %-8s %6s" % ("every program", "", "")
        for n in seeds:
            line += " %8.3f" % (every[n] / a.trials)
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
