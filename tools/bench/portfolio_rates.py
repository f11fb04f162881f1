#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-run failure probabilities of the portfolio's arms, from bench-bugs raw lines.

    tools/bench/portfolio_rates.py [--cap N] [--zero half|zero] [--posterior SEED] RAW... > rates.txt

RAW files hold "PROG STRATEGY SEED RUNS-OR-- SECONDS" lines (tools/bench/bugs/run's
BB_RAW); later files and lines replace earlier ones per (program, strategy, seed), as
docs/perf.md's table was made. A line "# cap N" in a file sets the campaigns' cap
(runs at most) for the lines after it (default --cap, 200).

Each (program, strategy) gets the geometric MLE with censoring: p = F / R, F the
campaigns that failed, R the runs they observed (the failing run's number, or the cap
for a campaign without failure). A strategy that failed in none of its campaigns gets
p = 0 (--zero zero, the default) or half a failure, p = 0.5 / R (--zero half).
A strategy never measured on a program has no line: the simulator gives it p = 0.
--posterior SEED draws each p from its posterior instead, Beta(F + 1/2, R - F + 1/2)
(Jeffreys' prior; the likelihood of a censored geometric sample is the binomial's), one
draw per (program, strategy) from the generator seeded with SEED: rates as uncertain as
their few campaigns (one per strategy on issue 30's programs) make them.

Output, one line per (program, strategy), the portfolio's arms named as the bench
names them (pcta = pct:3 --access, randoma = random --access, map, fpair, random,
pct = pct:3) and the other single strategies too (tsa, ga):

    PROG STRATEGY P FOUND CAMPAIGNS RUNS SECS_PER_RUN MEDIAN_MEASURED

SECS_PER_RUN is the campaigns' seconds over their runs (estimation runs included; when
the kept lines have no seconds, "?", the replaced lines' for the pair);
MEDIAN_MEASURED the median runs to the first failure over the campaigns that found it
(the table maker's cell), "-" when none. portfolio lines are skipped. The simulator
(build/bench/portfolio_sim) reads this output; docs/studies/portfolio-sim-2026-11-29.md.
"""
import random
import statistics
import sys

ARMS = ("pcta", "randoma", "map", "fpair", "random", "pct", "tsa", "ga")


def main(argv):
    cap, zero, files, post = 200, "zero", [], None
    i = 0
    while i < len(argv):
        if argv[i] in ("-h", "--help"):
            print(__doc__.strip())
            print("\nExample:\n    tools/bench/portfolio_rates.py docs/studies/bench-bugs-2026-11-26.txt \\\n"
                  "        docs/studies/bench-bugs-explore-2026-11-26.txt \\\n"
                  "        docs/studies/bench-bugs-issue30-2026-11-27.txt > /tmp/rates.txt")
            return 0
        if argv[i] == "--cap":
            cap = int(argv[i + 1])
            i += 2
        elif argv[i] == "--posterior":
            post = random.Random(int(argv[i + 1]))
            i += 2
        elif argv[i] == "--zero":
            zero = argv[i + 1]
            i += 2
        else:
            files.append(argv[i])
            i += 1
    if not files or zero not in ("zero", "half"):
        print("usage: portfolio_rates.py [--cap N] [--zero half|zero] [--posterior SEED] RAW...",
              file=sys.stderr)
        return 2
    rows, order, alltimed = {}, [], {}
    for path in files:
        fcap = cap
        for line in open(path):
            f = line.split()
            if line.startswith("# cap ") and len(f) == 3:
                fcap = int(f[2])
                continue
            if len(f) not in (5, 6) or line.startswith("#") or f[1] not in ARMS:
                continue
            prog, strat, seed, runs, secs = f[:5]
            key = (prog, strat, seed)
            if key not in rows:
                order.append(key)
            try:
                s = float(secs)
            except ValueError:
                s = None
            rows[key] = (None if runs == "-" else int(runs), s, fcap)
            if s is not None:
                alltimed.setdefault(key[:2], []).append((rows[key][0] or fcap, s))
    per = {}
    for key in order:
        per.setdefault(key[:2], []).append(rows[key])
    for (prog, strat), camps in per.items():
        found = [r for r, _, _ in camps if r is not None]
        runs = sum(r if r is not None else c for r, _, c in camps)
        p = len(found) / runs if runs else 0.0
        if not found and zero == "half":
            p = 0.5 / runs
        if post:
            p = post.betavariate(len(found) + 0.5, runs - len(found) + 0.5)
        # Seconds: the campaigns kept; if none has them, every line read for the pair.
        timed = [(r if r is not None else c, s) for r, s, c in camps if s is not None]
        timed = timed or alltimed.get((prog, strat), [])
        spr = sum(s for _, s in timed) / sum(n for n, _ in timed) if timed else 0.0
        med = f"{statistics.median(found):g}" if found else "-"
        print(f"{prog} {strat} {p:.6f} {len(found)} {len(camps)} {runs} {spr:.3f} {med}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
