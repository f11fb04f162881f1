#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 900
# Strategy pct (Burckhardt et al.'s PCT; a step is a synchronization point)
# under the scheduler's priority serial mode in the VM: a correct program
# (clean_lockwrap) never fails in 30 runs steered from start to end, the
# bank example's check-then-act race (a bug of depth 2 in those steps) is
# found within 100 runs of pct:2, and pct runs replay, passing or failing,
# as they were recorded.
source "$(dirname "$0")/../lib.sh"
need_vm
P=$PROGS/clean_lockwrap
BANK=$B/examples/bank
[ -x "$P" ] && [ -x "$BANK" ] || skip_all "build first: make"
command -v python3 >/dev/null || skip_all "python3 missing (run: sudo make deps)"
plan 10
T=$(mktemp -d /tmp/cs-pct-XXXXXX)
trap 'rm -rf "$T"' EXIT

# 1,600 steps a run (about 5 s under TCG): past the adaptive run timeout
# (20x the observed run) steering would stop; keep every run steered: 60 s,
# times the machine's speed scale (tests/lib.sh), so a loaded machine's
# slower runs stay steered too.
"$CS" run --vm -s pct -n 30 --keep-going --run-timeout "$(scaled 60)" -o "$T/clean" -- "$P" >/dev/null \
	2>"$T/clean.err"
is "$?" 0 "pct on clean_lockwrap: exit 0"
like "$(cat "$T/clean.err")" 'pct: depth 3, 2 change points over k = [1-9][0-9]* steps' \
	"the depth and the estimated k are announced"
s=$(campaign_summary "$T/clean")
diag "clean_lockwrap: $s"
like "$s" '^30 runs, 0 failures, first -, 0 slow' "30 runs, no failure, each steered to its end"

# Until the first failure, at most 200 runs: PCT's bound for depth 2 with
# n = 3 threads (main counted) and k = 4 steps is 1/(n k) = 1/12 a run, so
# a miss is below (11/12)^200 = 3e-8.
"$CS" run --vm -s pct:2 -n 200 -o "$T/bank" -- "$BANK" >/dev/null 2>"$T/bank.err"
is "$?" 1 "pct:2 on bank finds the failure: exit 1"
s=$(campaign_summary "$T/bank")
diag "bank: $(echo "$s" | head -1)"
like "$s" 'overdrawn: check-then-act race' "it is the overdrawn assertion"
first=$(summary_first "$s")

"$CS" replay "$T/clean" --run 1 --vm >"$T/rep" 2>&1
is "$?" 0 "a pct run replays (it passed, so exit 0)"
like "$(cat "$T/rep")" 'replay 1/1: pass' "replay outcome printed"
if [ -n "$first" ]; then
	"$CS" replay "$T/bank" --run "$first" --vm >"$T/rep2" 2>&1
	is "$?" 1 "the failing bank run $first replays: exit 1"
	like "$(cat "$T/rep2")" 'replay 1/1: assertion' "it fails again the same way"
	like "$(cat "$T/rep2")" 'failed again in 1 of 1 replays' "replay summary"
else
	for i in 1 2 3; do skip "no failing bank run" "the failing bank run replays"; done
fi
done_testing
