#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 1500
# The clean corpus (tests/programs/clean_*: correct programs with owner
# checks, trylock assertions, condvar hand-offs, spin-waits, barriers,
# many threads, recursive and reader-writer locks) under the steering
# strategies in one VM boot: no failure at all (issues 13, 30). Runs that
# were only slow under steering are counted, not failures.
# make test keeps a fast slice: every program runs 3 runs of the portfolio
# (run's default, the strategy a user gets: its estimation and the first
# arms of its warm-up, docs/strategies.md "portfolio"). Until 2026-11-28
# each program also ran 3 runs of ONE of random, tsa, pct and map in turn
# (CLEAN_ROTATE below): 498 s, the longest file of make test, of which the
# rotation 170-200 s. The single strategies' clean checks in make test are
# now 45-run-pct (clean_lockwrap, 30 runs), 58-run-jobs-steered (five
# clean programs under random, clean_lockwrap under pct, a locked counter
# under map, ga and fpair), 63, 65 (their clean twins) and 50 (noise); the
# full grid of every clean program under every strategy is the study
# recorded in docs/run.md:
# CLEAN_RUNS=30 with
# CLEAN_STRATEGIES="none random rnd-s10:0.2 tsa tsa-h pct map portfolio".
# map never runs clean_manythreads (32 threads x thousands of steered
# accesses: minutes per run under TCG, issue 12's cost bound).
# Knobs for the study (defaults are the make test slice):
#   CLEAN_RUNS=N             runs per program and strategy (default 3)
#   CLEAN_PROGS="p ..."      programs (default every tests/programs/clean_*)
#   CLEAN_STRATEGIES="s ..." every program under every one of these (the
#                            grid; unset: the slice above); pcta and
#                            randoma are pct and random with --access, as
#                            in make bench-bugs
#   CLEAN_ALWAYS="s ..."     the slice's strategies for every program
#                            (default portfolio)
#   CLEAN_ROTATE="s ..."     one of these per program in turn, the i-th
#                            program's the (i mod count)-th (default none;
#                            "random tsa pct map" was the slice until
#                            2026-11-28)
#   CLEAN_VM_TIMEOUT=SEC     the boot's vm -t limit (default 1450)
# tools/run-test kills the test after the "# timeout:" below; a longer
# study sets TEST_TIMEOUT (seconds) above CLEAN_VM_TIMEOUT, e.g.
#   CLEAN_RUNS=30 CLEAN_STRATEGIES="random tsa pct map" \
#     CLEAN_VM_TIMEOUT=3000 TEST_TIMEOUT=3100 \
#     prove -v --exec tools/run-test tests/vm/44-clean-corpus.t
source "$(dirname "$0")/../lib.sh"
need_vm
progs=$(cd "$PROGS" && ls clean_* 2>/dev/null | grep -v '\.' | sort | tr '\n' ' ')
[ -n "$progs" ] || skip_all "build first: make"
progs=${CLEAN_PROGS:-$progs}
for p in $progs; do
	[ -x "$PROGS/$p" ] || { echo "Bail out! CLEAN_PROGS: no program $PROGS/$p"; exit 1; }
done
command -v python3 >/dev/null || skip_all "python3 missing (run: sudo make deps)"
always=${CLEAN_ALWAYS-portfolio}
rotate=(${CLEAN_ROTATE-})
RUNS=${CLEAN_RUNS:-3}
VM_TIMEOUT=${CLEAN_VM_TIMEOUT:-$(scaled 1450)}
# pairs: one "program strategy" per line, in the order the guest runs them
pairs=
i=0
for p in $progs; do
	if [ -n "${CLEAN_STRATEGIES:-}" ]; then
		mine=$CLEAN_STRATEGIES
	else
		mine="$always"
		[ "${#rotate[@]}" -gt 0 ] && mine="$mine ${rotate[i % ${#rotate[@]}]}"
	fi
	i=$((i + 1))
	for s in $mine; do
		[ "$p $s" = "clean_manythreads map" ] || pairs="$pairs$p $s
"
	done
done
n=$(printf '%s' "$pairs" | grep -c .)
[ "$n" -gt 0 ] || skip_all "no program and strategy pair (CLEAN_PROGS, CLEAN_STRATEGIES)"
plan $n
T=$(mktemp -d /tmp/cs-clean-XXXXXX)
trap 'rm -rf "$T"' EXIT

"$CS" vm -t "$VM_TIMEOUT" -C "$PROGS" -o "$T/out" -- sh -c "
cd /out
printf '%s' '$pairs' | while read p s; do
	t0=\$(cut -d' ' -f1 /proc/uptime)
	case \$s in
	pcta) opt='-s pct --access' ;;
	randoma) opt='-s random --access' ;;
	*) opt=\"-s \$s\" ;;
	esac
	$CS run \$opt -n $RUNS --keep-going --seed 1 -o \$p-\$s -- $PROGS/\$p >/dev/null 2>\$p-\$s.err </dev/null
	rc=\$?
	echo \"\$p \$s secs \$(awk -v a=\$t0 -v b=\$(cut -d' ' -f1 /proc/uptime) 'BEGIN { print int(b - a + 0.5) }')\"
	echo \"\$p \$s exit \$rc\"
done" >"$T/guest" 2>"$T/guest.err"
while read -r p s; do
	[ -n "$p" ] || continue
	line=$(grep "^$p $s exit " "$T/guest")
	secs=$(sed -n "s/^$p $s secs //p" "$T/guest")
	sum=$("$CS" report "$T/out/$p-$s" --json 2>/dev/null </dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
slow = sum(1 for r in d["runs"]["list"] if r["summary"].startswith("slow under steering"))
print("%d runs, %d failures, %d slow" % (len(d["runs"]["list"]), len(d["failures"]), slow))
for f in d["failures"][:3]:
    print("  run %s: %s" % (f["run"], f["summary"]))')
	diag "$p $s: ${line##* } ${sum:-no campaign}, ${secs:-?} s"
	like "$line $sum" "exit 0 $RUNS runs, 0 failures" "$p under $s: $RUNS runs, no failure"
done <<<"$pairs"
done_testing
