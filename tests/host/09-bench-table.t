#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 60
# tools/bench/bugs/table.py, make bench-bugs' table, on raw lines worked out
# by hand: a campaign's later line replaces its earlier one (raw files of
# two runs concatenated), the medians over the seeds that found the bug,
# the portfolio against the best single strategy (found by all seeds but
# one) with a ratio above 2 in bold, the arms that found the portfolio's
# failures; old five-field lines still read; bad usage exits 2.
source "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip_all "python3 missing (run: sudo make deps)"
plan 10
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
TB=$ROOT/tools/bench/bugs/table.py

# race_a: random found it in seeds 1, 2, 3 at runs 4, 6, 8 (median 6);
# pcta at 2 and 3 in seeds 1, 2, not in 3 (2 of 3: all seeds but one,
# median 2.5). The portfolio's seed 1 ran twice: its later line (5 runs,
# arm map) replaces the first (9 runs, randoma); seeds 2 and 3 at 3 and
# 7 runs (pct:3a, map): median of 5, 3, 7 = 5; 5 / 2.5 = 2.0x, not bold.
# race_b: random at 1 run in all three seeds; the portfolio at 3, 4 and
# not found: 2 of 3, median 3.5: 3.5x, bold.
cat >"$T/raw" <<EOF
race_a random 1 4 1.0
race_a random 2 6 2.0
race_a random 3 8 3.0
race_a pcta 1 2 1.5
race_a pcta 2 3 2.5
race_a pcta 3 - 9.0
race_a portfolio 1 9 10.0 randoma
race_a portfolio 2 3 4.0 pct:3a
race_a portfolio 3 7 8.0 map
race_b random 1 1 0.5
race_b random 2 1 0.5
race_b random 3 1 0.5
race_b portfolio 1 3 3.0 random
race_b portfolio 2 4 4.0 random
race_b portfolio 3 - 50.0
race_a portfolio 1 5 6.0 map
EOF
"$TB" "$T/raw" 200 "1 2 3" >"$T/out" 2>"$T/err"
ok $? "the table is made (exit 0)"
a=$(grep '^| race_a |' "$T/out")
b=$(grep '^| race_b |' "$T/out")
like "$(grep '^| program |' "$T/out")" '^\| program \| random \| pcta \| portfolio \| portfolio / best \| the portfolio.s finding arms \|$' \
	"columns: the strategies in their first order, the ratio, the arms"
like "$a" '\| 3/3: 6 runs, 2\.0 s \| 2/3: 2\.5 runs, 2\.0 s \|' "race_a: random and pcta, medians over the seeds that found it"
like "$a" '\| 3/3: 5 runs, 6\.0 s \|' "race_a: the portfolio's seed 1 is its later line (5 runs, not 9)"
like "$a" '\| 2\.0x \(pcta, 2\.5 runs\) \|' "race_a: 5 / 2.5 = 2.0x against pcta (all seeds but one), not bold"
like "$a" '\| map 2, pct:3a 1 \|$' "race_a: the finding arms, the replaced line's randoma gone"
like "$b" '\| 2/3: 3\.5 runs, 3\.5 s \| \*\*3\.5x\*\* \(random, 1 runs\) \| random 2 \|$' \
	"race_b: 3.5x in bold, the arm of the two failures"
# Old raw files: five fields, no arm column.
grep -v portfolio "$T/raw" >"$T/old"
like "$(grep '^| program |' <("$TB" "$T/old" 200 "1 2 3"))" '^\| program \| random \| pcta \|$' \
	"five-field lines without the portfolio: no ratio, no arm column"
"$TB" "$T/raw" 2>/dev/null
is $? 2 "a missing argument: exit 2"
# (Into a file: grep -q leaves a pipe at its first match, and the
# writer's traceback for the broken pipe went to the test's stderr.)
"$TB" --help >"$T/help"
grep -q "RAW CAP" "$T/help"
ok $? "--help prints the usage"
