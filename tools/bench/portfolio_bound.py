#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What any portfolio of the six arms can reach on the corpus, from per-arm failure rates.

    tools/bench/portfolio_bound.py [--ratio R] [--drop ARM,...] RATES

RATES: tools/bench/portfolio_rates.py's output. Before a campaign's first failure every
run ends the same way ("no failure"), so a policy that learns nothing about the bug from
its rewards (coverage, not bugs: docs/studies/portfolio-2026-11-29.md) runs a sequence
of arms fixed in advance: the chance that the first n runs all pass is the product of
(1 - p) over the arms of those n runs, whatever their order. Program P's median under a
sequence is within R times the best arm's (the geometric median m_P of the largest p)
when the first floor(R m_P) runs' hazards, -ln(1 - p), add up to at least ln 2.

It prints, per program, the best arm and m_P, then:
  * the sequence (by its counts per arm at each program's checkpoint) that keeps the
    most programs within R (dynamic programming over the count vectors), and which
    programs it cannot keep;
  * the smallest R for which one sequence keeps every program within R;
  * the best fixed random allocation (each run's arm drawn with fixed fractions):
    its largest ratio over the programs, by a search over the simplex.
An oracle that knows the program runs its best arm: ratio 1. Programs whose best p is
0 (no arm found the bug) are left out.

Example:
    tools/bench/portfolio_bound.py /tmp/rates.txt
    tools/bench/portfolio_bound.py --drop pct /tmp/rates.txt
"""
import math
import random
import sys
from itertools import combinations_with_replacement

ARMS = ("pcta", "randoma", "map", "fpair", "random", "pct")
LN2 = math.log(2)


def hazard(p):
    return -math.log(1 - min(p, 0.999))


def geo_median(p):
    if p <= 0:
        return math.inf
    if p >= 0.5:
        return 1
    return math.ceil(math.log(0.5) / math.log(1 - p) - 1e-9)


def read(path, arms):
    progs = {}
    for line in open(path):
        f = line.split()
        if len(f) != 8 or f[1] not in arms:
            continue
        progs.setdefault(f[0], [0.0] * len(arms))[arms.index(f[1])] = float(f[2])
    return {p: v for p, v in progs.items() if max(v) > 0}


def increments(d, k):
    """Every way to add d runs among k arms."""
    for combo in combinations_with_replacement(range(k), d):
        inc = [0] * k
        for a in combo:
            inc[a] += 1
        yield tuple(inc)


def best_sequence(progs, arms, ratio):
    """Count vectors at each checkpoint keeping the most programs within ratio."""
    k = len(arms)
    need = {}
    for p, v in progs.items():
        L = max(1, math.floor(ratio * geo_median(max(v)) + 1e-9))
        need.setdefault(L, []).append(p)
    checkpoints = sorted(need)
    # state: count vector -> (programs kept, path)
    states = {tuple([0] * k): (0, [])}
    last = 0
    for L in checkpoints:
        nxt = {}
        for c, (score, path) in states.items():
            for inc in increments(L - last, k):
                c2 = tuple(a + b for a, b in zip(c, inc))
                kept = [p for p in need[L]
                        if sum(n * hazard(progs[p][a]) for a, n in enumerate(c2)) >= LN2 - 1e-12]
                s2 = score + len(kept)
                if c2 not in nxt or s2 > nxt[c2][0]:
                    nxt[c2] = (s2, path + [(L, c2, kept)])
        # keep the best states only, to bound the work
        top = max(s for s, _ in nxt.values())
        states = {c: sp for c, sp in nxt.items() if sp[0] >= top - 1}
        last = L
    score, path = max(states.values(), key=lambda sp: sp[0])
    return score, path


def fixed_fractions(progs, arms, tries=20000, seed=1):
    rng = random.Random(seed)
    k = len(arms)

    def worst(f):
        r = 0
        for v in progs.values():
            q = sum(fa * pa for fa, pa in zip(f, v))
            r = max(r, geo_median(q) / geo_median(max(v)))
        return r

    best_f, best_r = [1 / k] * k, worst([1 / k] * k)
    for _ in range(tries):
        if rng.random() < 0.5:
            f = [rng.expovariate(1) for _ in range(k)]
        else:
            f = [max(1e-6, x + rng.gauss(0, 0.05)) for x in best_f]
        s = sum(f)
        f = [x / s for x in f]
        r = worst(f)
        if r < best_r:
            best_f, best_r = f, r
    return best_f, best_r, worst([1 / k] * k)


def main(argv):
    ratio, drop, path = 2.0, [], None
    i = 0
    while i < len(argv):
        if argv[i] in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        if argv[i] == "--ratio":
            ratio = float(argv[i + 1])
            i += 2
        elif argv[i] == "--drop":
            drop = argv[i + 1].split(",")
            i += 2
        else:
            path = argv[i]
            i += 1
    if not path:
        print("usage: portfolio_bound.py [--ratio R] [--drop ARM,...] RATES", file=sys.stderr)
        return 2
    arms = [a for a in ARMS if a not in drop]
    progs = read(path, arms)
    print(f"arms: {' '.join(arms)}; {len(progs)} programs\n")
    print("| program | best arm | p | m (geometric median) | hazards " + " ".join(arms) + " |")
    print("|---|---|---:|---:|---|")
    for p, v in sorted(progs.items()):
        b = max(range(len(arms)), key=lambda a: v[a])
        print(f"| {p} | {arms[b]} | {v[b]:.3f} | {geo_median(v[b])} | "
              + " ".join(f"{abs(hazard(x)):.2f}" for x in v) + " |")
    score, path_ = best_sequence(progs, arms, ratio)
    print(f"\nA sequence keeping the most programs within {ratio:g}x: {score} of {len(progs)}")
    for L, c, kept in path_:
        print(f"  first {L} runs: " + ", ".join(f"{arms[a]} {n}" for a, n in enumerate(c) if n)
              + (f"; keeps {' '.join(kept)}" if kept else ""))
    lost = sorted(set(progs) - {p for _, _, k in path_ for p in k})
    print(f"  not within {ratio:g}x: {' '.join(lost) if lost else 'none'}")
    r = 1.0
    while r < 20:
        s, _ = best_sequence(progs, arms, r)
        if s == len(progs):
            break
        r = round(r + 0.1, 1)
    print(f"\nThe smallest ratio one sequence keeps on every program: {r:g}x")
    f, worst, even = fixed_fractions(progs, arms)
    print("\nThe best fixed random allocation: "
          + ", ".join(f"{a} {x:.2f}" for a, x in zip(arms, f))
          + f": at most {worst:.2f}x on every program (an even split: {even:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
