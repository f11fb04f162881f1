#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A warm-up order chosen from what one observed run shows, on the measured rates.

    tools/bench/portfolio_signals.py RATES OBSERVE_DIR

RATES: tools/bench/portfolio_rates.py's output. OBSERVE_DIR holds PROG.json, the output
of `concsched observe --json -- PROG` for each corpus program (docs/observe.md):

    mkdir -p /tmp/obs
    for p in $(ls build/tests/programs | grep -E '^(race|bad)_'); do
        sudo build/concsched observe --json -- build/tests/programs/$p > /tmp/obs/$p.json
    done

The signals, from the observed run's synchronization events only:
  cycle     two goodlock tasks take the same two locks in opposite orders
  unjoined  more pthread_create than pthread_join (the program exits unjoined)
  cond      a pthread_cond_wait
  locks     any lock, trylock, rdlock, wrlock or spin lock
and the warm-up each selects, the first signal that holds deciding:
  cycle     random, random --access, map, fpair, pct:3, pct:3 --access
  unjoined  pct:3, random --access, map, pct:3 --access, fpair, random
  cond      pct:3, pct:3, random --access, map, fpair, pct:3 --access, random
  locks     random --access, fpair, map, pct:3, pct:3 --access, random
  none      today's: random --access, map, random, pct:3 --access, fpair, pct:3
After the warm-up the runs follow today's shares (pct:3 --access 4, random --access 2,
the others 1; the arm furthest below its share next, the first in order on a tie: the
portfolio's floors without UCB1's reordering within them). Today's portfolio is the
same with today's warm-up (random --access, map, random, pct:3 --access, fpair, pct:3)
for every program.

For each program a run of arm a fails with a's rate, independently; the median runs to
the first failure is the first n whose hazards, -ln(1 - p), add up to ln 2. It is
compared with the best single strategy's geometric median (every strategy in RATES, tsa
and ga included: issue 30's reference). Prints one row per program and the programs
within 2x for each policy. No program runs: this is the arithmetic of
docs/studies/portfolio-blind-bound-2026-12-01.md applied to one rule set.
"""
import json
import math
import os
import re
import sys

from portfolio_bound import geo_median, hazard
from portfolio_oracle import read as read_rates  # {program: {strategy: p}}

SHARES = {"randoma": 2, "map": 1, "random": 1, "pcta": 4, "fpair": 1, "pct": 1}
TODAY = ["randoma", "map", "random", "pcta", "fpair", "pct"]
RULES = [
    ("cycle", ["random", "randoma", "map", "fpair", "pct", "pcta"]),
    ("unjoined", ["pct", "randoma", "map", "pcta", "fpair", "random"]),
    ("cond", ["pct", "pct", "randoma", "map", "fpair", "pcta", "random"]),
    ("locks", ["randoma", "fpair", "map", "pct", "pcta", "random"]),
    ("none", TODAY),
]


def signals(path):
    d = json.load(open(path))
    k = d["events"]["by_kind"]
    pairs = set()
    for t in d["metrics"].get("goodlock", {}).get("tasks", []):
        m = re.search(r" locks (\S+) -> (\S+) thread ", t["key"])
        if m:
            pairs.add((m.group(1), m.group(2)))
    return {
        "cycle": any((b, a) in pairs for a, b in pairs),
        "unjoined": k.get("create", 0) > k.get("join", 0),
        "cond": k.get("cond_wait", 0) > 0,
        "locks": any(k.get(x, 0) for x in ("lock", "trylock_ok", "trylock_fail", "rdlock",
                                            "wrlock", "spin_lock")),
        "none": True,
    }


def sequence(warm, n):
    seq = list(warm)
    order = list(dict.fromkeys(warm + TODAY))
    cnt = {a: seq.count(a) for a in SHARES}
    total = sum(SHARES.values())
    while len(seq) < n:
        k = len(seq)
        a = max(order, key=lambda a: (k * SHARES[a] / total - cnt[a], -order.index(a)))
        seq.append(a)
        cnt[a] += 1
    return seq


def median(p, seq):
    h = 0.0
    for i, a in enumerate(seq, 1):
        h += hazard(p.get(a, 0.0))
        if h >= math.log(2) - 1e-12:
            return i
    return math.inf


def main(argv):
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    if len(argv) != 2:
        print("usage: portfolio_signals.py RATES OBSERVE_DIR (--help)", file=sys.stderr)
        return 2
    rates = read_rates(argv[0])
    print("| program | signal | warm-up's first two | reference m | today | with the signal |")
    print("|---|---|---|---:|---:|---:|")
    within = {"today": [], "signal": []}
    progs = []
    for prog in sorted(rates):
        ref = geo_median(max(rates[prog].values()))
        obs = os.path.join(argv[1], prog + ".json")
        if ref == math.inf or not os.path.exists(obs):
            continue
        progs.append(prog)
        s = signals(obs)
        name, warm = next((nm, w) for nm, w in RULES if s[nm])
        mt = median(rates[prog], sequence(TODAY, 400))
        ms = median(rates[prog], sequence(warm, 400))
        for key, m in (("today", mt), ("signal", ms)):
            if m <= 2 * ref:
                within[key].append(prog)
        print(f"| {prog} | {name} | {', '.join(warm[:2])} | {ref} | {mt} ({mt / ref:.1f}x) "
              f"| {ms} ({ms / ref:.1f}x) |")
    print(f"\nwithin 2x of the best single strategy, of {len(progs)}: today's warm-up "
          f"{len(within['today'])}, the signal's {len(within['signal'])}")
    print("outside with the signal: "
          + (" ".join(p for p in progs if p not in within["signal"]) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
