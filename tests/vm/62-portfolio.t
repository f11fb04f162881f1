#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 900
# -s portfolio (issue 30 item 1) in the VM: the runs shared among pct:3
# --access, random --access, map, fpair, random and pct:3. On race_split_cs (a
# check and an update in two critical sections: every arm finds it) the
# campaign fails with the program's assertion, each run records its arm,
# the failure line and the report name the arm that found it, and the
# failing run replays with that arm's ops. On a correct program (a locked
# counter) the warm-up runs each arm once in order, with access probing on
# (few accesses), two runs at once (-j 2) work, and nothing fails. On
# selflock (no variable two threads share) access probing goes off: only
# random and pct:3 run, no run probes an access, and its deadlock is
# found (each run is one: the first fails). On bad_lockorder (a
# lock-order cycle) tsa joins the arms and runs first, as on
# recursive_cycle, whose estimation run deadlocks.
source "$(dirname "$0")/../lib.sh"
need_vm
P=$PROGS/race_split_cs
[ -x "$P" ] && [ -x "$PROGS/counter" ] && [ -x "$PROGS/selflock" ] && [ -x "$PROGS/bad_lockorder" ] &&
	[ -x "$PROGS/recursive_cycle" ] ||
	skip_all "build first: make"
command -v sqlite3 >/dev/null || skip_all "sqlite3 missing (run: sudo make deps)"
plan 26
T=$(mktemp -d /tmp/cs-portfolio-XXXXXX)
trap 'rm -rf "$T"' EXIT
q() { sqlite3 "$1/campaign.db" "$2"; }

# At most 300 runs, stopping at the first failure. After the warm-up no
# arm falls below its share (PF_FLOOR; pct:3 --access 4 of 10, random
# --access 2, the others 1; checked by tests/unit/test_portfolio.c): of
# 300 runs each of the six arms gets at least 300 / 10 - 3 = 27, more
# than the 24 used below. Measured in the VM (2026-11-28, seed 1, 30 runs
# each with --keep-going, docs/studies/portfolio-2026-11-28.md): random 10,
# pct:3 7, fpair 13 failing runs of 30; random --access (with random's
# configuration at the synchronization points since 14d511f) 20 of 60
# (seeds 1-2, 2026-11-30, beside a make test; docs/studies/
# random-access-split-2026-11-30.md); pct:3 --access,
# whose change points are split between the synchronization points and
# the cross-thread accesses, 14 of 180 (three seeds, docs/studies/
# pct-focus-2026-11-28.md); map, erratic on synchronization bugs, is
# counted as 0. One-sided 95 % lower bounds per run: 0.193, 0.115, 0.279,
# 0.233, 0.0476. Runs fail independently given their arm, so 24 runs of
# each arm miss with at most ((1-0.193)(1-0.115)(1-0.279)(1-0.233)
# (1-0.0476))^24 = 0.376^24 = 6e-11.
"$CS" run --vm -s portfolio -n 300 --seed 1 -o "$T/a" -- "$P" >/dev/null 2>"$T/a.err"
is "$?" 1 "portfolio on race_split_cs: exit 1 (a failure)"
first=$(q "$T/a" "SELECT min(idx) FROM runs WHERE outcome != 'pass'")
n=$(q "$T/a" "SELECT count(*) FROM runs")
diag "first failure at run ${first:-none} of $n"
is "$(q "$T/a" "SELECT outcome FROM runs WHERE idx = ${first:-0}")" assertion \
	"the failure is the program's assertion (run ${first:-none})"
arm=$(q "$T/a" "SELECT json_extract(strategy_config, '\$.arm') FROM runs WHERE idx = ${first:-0}")
like "$arm" '^(map|random|pct:3|random --access|pct:3 --access|fpair)$' "the failing run records its arm ($arm)"
is "$(q "$T/a" "SELECT count(*) FROM runs WHERE json_extract(strategy_config, '\$.arm_strategy') IS NULL")" 0 \
	"every run records the strategy its arm re-makes"
like "$(cat "$T/a.err")" "run ${first:-0}: assertion .* \\(arm $arm\\)" "the failure line names the arm"
like "$("$CS" report "$T/a")" "arm: +$arm \\(the portfolio's sub-strategy" "the report names it too"

# The failing run again, made by its arm's ops: a pct arm's run replays
# its logged releases one thread at a time (serial by priorities: pct logs
# a release at every step, so at least one is applied), any other arm's
# against the recorded kind of failure.
"$CS" replay "$T/a" --run "${first:-1}" --vm --times 2 >"$T/rep" 2>&1
rc=$?
ok "$([ "$rc" = 0 ] || [ "$rc" = 1 ]; echo $?)" "replay of run ${first:-none} runs (exit $rc)"
case "$arm" in
pct:3*) like "$(cat "$T/rep")" "\\([1-9][0-9]* recorded decisions applied\\)" \
	"... pct's run: its logged releases applied" ;;
*) like "$(cat "$T/rep")" "run ${first:-0} \\(recorded: assertion\\)" "... with $arm's ops, against the recorded assertion" ;;
esac

"$CS" run --vm -s portfolio -n 12 -j 2 --keep-going --seed 2 -o "$T/c" \
	-- "$PROGS/counter" locked 20 >/dev/null 2>"$T/c.err"
rc=$?
is "$rc" 0 "a correct program (a locked counter), -j 2: exit 0"
[ "$rc" = 0 ] || diag "$(tail -5 "$T/c.err")"
is "$(q "$T/c" "SELECT count(*), sum(outcome != 'pass') FROM runs")" "12|0" "... 12 runs, none fails"
like "$(cat "$T/c.err")" "portfolio: arms random --access, map, random, pct:3 --access, fpair, pct:3" \
	"access probing on: six arms"
is "$(q "$T/c" "SELECT count(DISTINCT json_extract(strategy_config, '\$.arm')) FROM runs")" 6 \
	"the warm-up ran each arm (the six begun first; -j 2 ends them in any order)"
is "$(q "$T/c" "SELECT count(*) FROM runs WHERE json_extract(strategy_config, '\$.arm') LIKE 'pct:3%' AND json_extract(strategy_config, '\$.serial') != 'prio'")" 0 \
	"every pct run ran serial by priorities (its arm's mode, per run)"
# A synchronization arm's run probes no access, and its configuration
# says so: its "sites" is empty, so its replay probes none either.
is "$(q "$T/c" "SELECT count(*) > 0, sum(json_extract(strategy_config, '\$.access.sites') != '') FROM runs WHERE json_extract(strategy_config, '\$.arm') IN ('random', 'pct:3')")" \
	"1|0" "the synchronization arms' runs record no probed site"

"$CS" run --vm -s portfolio -n 2 --seed 1 -o "$T/s" -- "$PROGS/selflock" >/dev/null 2>"$T/s.err"
is "$?" 1 "selflock: exit 1 (its deadlock), not a crash"
like "$(cat "$T/s.err")" "portfolio: access probing off: the estimation run found no variable a write may race on" \
	"no shared variable: access probing off, in one line"
like "$(cat "$T/s.err")" "portfolio: arms random, pct:3;" "... only the synchronization arms"
# Its estimation run deadlocks too, before main joins its thread: the
# signal is then "more threads created than joined" (pct:3 first), else
# "locks" (random first); both synchronization arms find a self-deadlock
# in their first run (docs/strategies.md "portfolio").
like "$(q "$T/s" "SELECT outcome, json_extract(strategy_config, '\$.arm'), json_extract(strategy_config, '\$.access') IS NULL FROM runs")" \
	'^deadlock\|(random|pct:3)\|1$' "... run 1 is a synchronization arm's, probes no access, and finds the deadlock"
like "$(cat "$T/s.err")" "warm-up (random, pct:3 \(the estimation run: locks\)|pct:3, random \(the estimation run: more threads created than joined\))" \
	"... the warm-up's order follows the estimation run's signal, named on the campaign's line"

# bad_lockorder: its estimation run shows the cycle (as acquisitions, or,
# in a run that deadlocked, as the requests that never returned), so tsa
# is an arm and runs first. At most 300 runs, stopping at the first
# failure: with tsa's share each arm of share 1 gets at least
# 300 / 11 - 3 = 24 runs (strat_portfolio.h). Measured in the VM as
# single strategies (docs/studies/bench-bugs-2026-11-2*.txt): tsa failed
# in 17 of its 21 runs (15 campaigns at run 1, 2 at run 3), random in 30
# of 71; one-sided 95 % lower bounds 0.616 and 0.323, so 24 runs of each
# miss with at most ((1 - 0.616)(1 - 0.323))^24 = 9e-15.
"$CS" run --vm -s portfolio -n 300 --seed 1 -o "$T/l" -- "$PROGS/bad_lockorder" >/dev/null 2>"$T/l.err"
is "$?" 1 "bad_lockorder: exit 1 (its deadlock)"
first=$(q "$T/l" "SELECT min(idx) FROM runs WHERE outcome != 'pass'")
diag "first failure at run ${first:-none}, arm $(q "$T/l" "SELECT json_extract(strategy_config, '\$.arm') FROM runs WHERE idx = ${first:-0}")"
is "$(q "$T/l" "SELECT outcome FROM runs WHERE idx = ${first:-0}")" deadlock \
	"... the first failure is a deadlock (run ${first:-none})"
like "$(cat "$T/l.err")" "portfolio: arms [^;]*, tsa;" "... tsa is an arm"
like "$(cat "$T/l.err")" "warm-up tsa, random(, [^;]*)? \(the estimation run: a lock-order cycle\)" \
	"... the warm-up runs tsa, then random, named by the estimation run's cycle"
is "$(q "$T/l" "SELECT json_extract(strategy_config, '\$.arm') || '|' || json_extract(strategy_config, '\$.arm_strategy') FROM runs WHERE idx = 1")" "tsa|tsa" \
	"... run 1 is tsa's, and records it"

# recursive_cycle deadlocks in every run, the estimation run included,
# with one request the probe cannot see as blocked (a recursive mutex's
# inner unlock hides its holder): the cycle still shows, from the call in
# flight (run_timeout.c), so tsa runs first. Before, such an estimation
# run read as "more threads created than joined" (bad_lockorder above in
# the CI of b024b41, where the holder was still inside its call).
"$CS" run --vm -s portfolio -n 1 --seed 1 -o "$T/r" -- "$PROGS/recursive_cycle" >/dev/null 2>"$T/r.err"
is "$?" 1 "recursive_cycle: exit 1 (its deadlock)"
like "$(cat "$T/r.err")" "warm-up tsa, random(, [^;]*)? \(the estimation run: a lock-order cycle\)" \
	"... the estimation run's deadlock shows the cycle: tsa first"
