#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What any portfolio of the six arms can reach on the corpus, from per-arm failure rates.

    tools/bench/portfolio_bound.py [--ratio R] [--drop ARM,...] [--arms ARM,...]
                                   [--reference arms|all] [--smallest] [--prefix K] RATES

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

--arms sets the arms (default the portfolio's six; tsa and ga may be added); --drop
removes some. --reference all measures each program against the best of every strategy
in RATES (issue 30's "best single strategy": tsa and ga too), not only the best arm; the
programs no arm finds are then left out too. The smallest-ratio search (slow when the
ratio is far above 2) runs only with --smallest.

--prefix K: the exact answer for the first K runs instead (every sequence of K arms is
tried): the programs whose checkpoint floor(R m) is at most K, and the fewest of them any
sequence leaves outside R, with one such sequence. The dynamic programming above keeps
only the best states; this is the proof that no sequence does better on those programs.

Example:
    tools/bench/portfolio_bound.py /tmp/rates.txt
    tools/bench/portfolio_bound.py --drop pct /tmp/rates.txt
    tools/bench/portfolio_bound.py --reference all --arms pcta,randoma,map,fpair,random,pct,tsa,ga /tmp/rates.txt
"""
import math
import random
import sys
from itertools import combinations_with_replacement, product

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


def read(path, arms, reference="arms"):
    """{program: [p of each arm]} and {program: the reference p} (the best arm's, or
    with reference "all" the best of every strategy in the file)."""
    progs, best = {}, {}
    for line in open(path):
        f = line.split()
        if len(f) != 8:
            continue
        v = progs.setdefault(f[0], [0.0] * len(arms))
        if f[1] in arms:
            v[arms.index(f[1])] = float(f[2])
        if f[1] in arms or reference == "all":
            best[f[0]] = max(best.get(f[0], 0.0), float(f[2]))
    keep = {p: v for p, v in progs.items() if max(v) > 0}
    return keep, {p: best[p] for p in keep}


def checkpoint(ratio, p_ref):
    """The runs by which a program must fail with probability 1/2 to be within ratio."""
    return max(1, math.floor(ratio * geo_median(p_ref) + 1e-9))


def increments(d, k):
    """Every way to add d runs among k arms."""
    for combo in combinations_with_replacement(range(k), d):
        inc = [0] * k
        for a in combo:
            inc[a] += 1
        yield tuple(inc)


def best_sequence(progs, ref, arms, ratio):
    """Count vectors at each checkpoint keeping the most programs within ratio of ref."""
    k = len(arms)
    need = {}
    for p in progs:
        need.setdefault(checkpoint(ratio, ref[p]), []).append(p)
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


def prefix_bound(progs, ref, arms, ratio, K):
    """(programs with checkpoint <= K, fewest missed by any K-run sequence, a sequence)."""
    short = []
    for p, v in progs.items():
        L = checkpoint(ratio, ref[p])
        if L <= K:
            short.append((p, L, [hazard(x) for x in v]))
    best = None
    for seq in product(range(len(arms)), repeat=K):
        miss = [p for p, L, h in short if sum(h[a] for a in seq[:L]) < LN2 - 1e-12]
        if best is None or len(miss) < len(best[1]):
            best = (seq, miss)
            if not miss:
                break
    return sorted(p for p, _, _ in short), sorted(best[1]), [arms[a] for a in best[0]]


def fixed_fractions(progs, ref, arms, tries=20000, seed=1):
    rng = random.Random(seed)
    k = len(arms)

    def worst(f):
        r = 0
        for p, v in progs.items():
            q = sum(fa * pa for fa, pa in zip(f, v))
            r = max(r, geo_median(q) / geo_median(ref[p]))
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
    ratio, drop, path, arms, reference, smallest, prefix = 2.0, [], None, list(ARMS), "arms", False, 0
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
        elif argv[i] == "--arms":
            arms = argv[i + 1].split(",")
            i += 2
        elif argv[i] == "--reference":
            reference = argv[i + 1] if i + 1 < len(argv) else ""
            if reference not in ("arms", "all"):
                print("portfolio_bound.py: --reference takes arms or all", file=sys.stderr)
                return 2
            i += 2
        elif argv[i] == "--smallest":
            smallest = True
            i += 1
        elif argv[i] == "--prefix":
            prefix = int(argv[i + 1])
            i += 2
        elif argv[i].startswith("-"):
            print(f"portfolio_bound.py: unknown option {argv[i]} (--help)", file=sys.stderr)
            return 2
        else:
            path = argv[i]
            i += 1
    if not path:
        print("usage: portfolio_bound.py [--ratio R] [--drop ARM,...] [--arms ARM,...] "
              "[--reference arms|all] [--smallest] [--prefix K] RATES", file=sys.stderr)
        return 2
    arms = [a for a in arms if a not in drop]
    progs, ref = read(path, arms, reference)
    print(f"arms: {' '.join(arms)}; {len(progs)} programs; reference: the best "
          + ("arm" if reference == "arms" else "strategy in the rates") + "\n")
    print("| program | best arm | p | m (geometric median) | reference m | hazards "
          + " ".join(arms) + " |")
    print("|---|---|---:|---:|---:|---|")
    for p, v in sorted(progs.items()):
        b = max(range(len(arms)), key=lambda a: v[a])
        print(f"| {p} | {arms[b]} | {v[b]:.3f} | {geo_median(v[b])} | {geo_median(ref[p])} | "
              + " ".join(f"{abs(hazard(x)):.2f}" for x in v) + " |")
    if prefix:
        short, miss, seq = prefix_bound(progs, ref, arms, ratio, prefix)
        print(f"\nThe first {prefix} runs: {len(short)} programs need their failure by then "
              f"(median within {ratio:g}x); every sequence of {prefix} arms leaves at least "
              f"{len(miss)} of them outside, e.g. {' '.join(seq)}: {' '.join(miss) or 'none'}")
        return 0
    score, path_ = best_sequence(progs, ref, arms, ratio)
    print(f"\nA sequence keeping the most programs within {ratio:g}x: {score} of {len(progs)}")
    for L, c, kept in path_:
        print(f"  first {L} runs: " + ", ".join(f"{arms[a]} {n}" for a, n in enumerate(c) if n)
              + (f"; keeps {' '.join(kept)}" if kept else ""))
    lost = sorted(set(progs) - {p for _, _, k in path_ for p in k})
    print(f"  not within {ratio:g}x: {' '.join(lost) if lost else 'none'}")
    if smallest:
        r = 1.0
        while r < 20:
            s, _ = best_sequence(progs, ref, arms, r)
            if s == len(progs):
                break
            r = round(r + 0.1, 1)
        print(f"\nThe smallest ratio one sequence keeps on every program: {r:g}x")
    f, worst, even = fixed_fractions(progs, ref, arms)
    print("\nThe best fixed random allocation: "
          + ", ".join(f"{a} {x:.2f}" for a, x in zip(arms, f))
          + f": at most {worst:.2f}x on every program (an even split: {even:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
