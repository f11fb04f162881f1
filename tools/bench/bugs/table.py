#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The bench-bugs table (tools/bench/bugs/run prints it after its VM).

    tools/bench/bugs/table.py RAW CAP "SEEDS"

RAW: the raw lines "PROG STRATEGY SEED RUNS SECS [ARM]" (RUNS "-": not
found within CAP runs; ARM: the portfolio arm of the first failure), one
campaign per (PROG, STRATEGY, SEED), a later line replacing an earlier one
(raw files of several runs concatenated). Prints the markdown section for
docs/perf.md: per program and strategy, seeds that found the bug, median
runs and seconds to the first failure; with the portfolio, its median over
the best single strategy's, and the arms that found its failures.
"""
import statistics, sys

if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
    print(__doc__.strip())
    sys.exit(0)
if len(sys.argv) != 4:
    print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
    sys.exit(2)
raw, cap, seeds = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
# One campaign per (program, strategy, seed): a later line replaces an
# earlier one (raw files of several runs concatenated).
camp = {}
order_p, order_s = [], []
for line in open(raw):
    f = line.split()
    if len(f) not in (5, 6):
        continue
    prog, strat, seed, runs, secs = f[:5]
    if prog not in order_p: order_p.append(prog)
    if strat not in order_s: order_s.append(strat)
    camp[(prog, strat, seed)] = (runs, float(secs), f[5] if len(f) == 6 else None)
rows, arms = {}, {}
for (prog, strat, seed), (runs, secs, arm) in camp.items():
    rows.setdefault((prog, strat), []).append((runs, secs))
    if arm and runs != "-":
        a = arms.setdefault(prog, {})
        a[arm] = a.get(arm, 0) + 1
print(f"### Runs to the first failure, bug-class corpus ({len(seeds)} seeds, at most {cap} runs each)\n")
print("Each cell: seeds that found the bug / seeds run; median runs and median seconds to the")
print("first failure over the seeds that found it (seconds: the whole campaign, in the VM).\n")
# The portfolio against the best single strategy: the single strategy
# with the lowest median runs among those that found the bug in at least
# as many seeds as the portfolio needs (4 of 5, or all but one).
single = [s for s in order_s if s not in ("native", "none", "portfolio")]
versus = "portfolio" in order_s and single
print("| program | " + " | ".join(order_s) + (" | portfolio / best |" if versus else " |")
      + (" the portfolio's finding arms |" if arms else ""))
print("|---|" + "---:|" * (len(order_s) + (1 if versus else 0) + (1 if arms else 0)))


def found(prog, s):
    r = rows.get((prog, s), [])
    return r, [(int(n), t) for n, t in r if n != "-"]


for prog in order_p:
    cells = []
    for s in order_s:
        r, hit = found(prog, s)
        if not r:
            cells.append("")
        elif not hit:
            cells.append(f"0/{len(r)}")
        else:
            cells.append(f"{len(hit)}/{len(r)}: {statistics.median(n for n, _ in hit):g} runs, "
                         f"{statistics.median(t for _, t in hit):.1f} s")
    if versus:
        r, hit = found(prog, "portfolio")
        need = max(len(r) - 1, 1)
        best = None
        for s in single:
            rs, hs = found(prog, s)
            if rs and len(hs) >= max(len(rs) - 1, 1):
                m = statistics.median(n for n, _ in hs)
                if best is None or m < best[1]:
                    best = (s, m)
        if not r:
            cells.append("")
        elif best is None:
            cells.append("no single strategy found it in all seeds but one")
        elif len(hit) < need:
            cells.append(f"**found by {len(hit)}/{len(r)} seeds** (best: {best[0]})")
        else:
            ratio = statistics.median(n for n, _ in hit) / best[1]
            mark = "" if ratio <= 2 else "**"
            cells.append(f"{mark}{ratio:.1f}x{mark} ({best[0]}, {best[1]:g} runs)")
    if arms:
        a = arms.get(prog, {})
        cells.append(", ".join(f"{k} {v}" for k, v in sorted(a.items(), key=lambda kv: (-kv[1], kv[0]))))
    print(f"| {prog} | " + " | ".join(cells) + " |")
