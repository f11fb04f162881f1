#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 900
# Steered runs at once (issue 18 item 3, docs/run.md "Runs at once"), one
# VM boot: run -j 2 with random, pct, --serial and pct --access, each run's
# target a target of the campaign's one scheduler (its own serial token,
# all-parked notes, site policies, counters):
#  - bank under random (until its second failure, at most 400 runs: at 1
#    failing run in 10, fewer than 2 in 400 is below 1e-15) and pct:2: its
#    check-then-act assertion, with its sites, in runs that ran beside
#    another; the first failure is replayed
#    once the workers are done (the replay check unloads the scheduler they
#    share) and replays;
#  - --serial random: every run parked once per decision and needed no
#    watchdog (a run's counters are its target's: with one all-parked note
#    for the machine a run would wait for the other run's threads);
#  - tsa (each run its own engine state, the SP coverage shared) covers
#    Figure 2's 10 requirements in 30 runs two at once, and a hang whose
#    thread uses trylock is a hang, not a deadlock; map (likewise) finds
#    the NullAppender crash;
#  - correct programs never fail: clean_lockwrap under pct (20 runs, each
#    steered to its end), five clean_* programs under random, the locked
#    counter under pct:2 --access, map, ga and fpair;
#  - ^C: no target, no cgroup and no scheduler left.
source "$(dirname "$0")/../lib.sh"
need_vm
BANK=$B/examples/bank
for p in clean_lockwrap clean_condhandoff clean_rwlock clean_barrier clean_spinflag \
	clean_manythreads counter; do
	[ -x "$PROGS/$p" ] || skip_all "build first: make"
done
for p in null_appender fig2free hang_trylock; do
	[ -x "$PROGS/$p" ] || skip_all "build first: make"
done
[ -x "$BANK" ] || skip_all "build first: make"
command -v python3 >/dev/null || skip_all "python3 missing (run: sudo make deps)"
plan 40
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

CLEAN="clean_condhandoff clean_rwlock clean_barrier clean_spinflag clean_manythreads"
cat >"$T/guest.sh" <<EOF
#!/bin/sh
cd /tmp
# camp NAME [RUN ARGS...]: a campaign in /tmp/NAME: its exit status, its
# stderr's head and tail when that is not 0 or 1, its report's JSON (the guest has
# no python3: the host reads it), whether its first failure replayed
# sec: the guest's uptime in whole seconds, before every section
sec() { echo "at \$(cut -d. -f1 /proc/uptime)"; }
camp() {
	n=\$1
	shift
	"$CS" run -o /tmp/\$n "\$@" >/dev/null 2>/tmp/\$n.err
	rc=\$?
	echo "rc \$rc"
	# its head (a crash's report, an ejected scheduler's reason) and tail
	[ \$rc -gt 1 ] && { head -15 /tmp/\$n.err; echo ...; tail -25 /tmp/\$n.err; } | sed 's/^/stderr: /'
	echo "json \$("$CS" report /tmp/\$n --json | tr -d '\\n')"
	echo "replayed \$("$CS" report /tmp/\$n | grep -c 'replayed 1/1')"
}
sec
echo "== random"
camp rnd -s random -j 2 -n 400 --max-failures 2 --seed 5 -- "$BANK"
sec
echo "== serial"
"$CS" -v -v run -s rnd-y:0.1 --serial random -j 2 -n 8 --keep-going --replay-check 0 \
	-o /tmp/ser -- "$BANK" 2>&1 | grep 'run: .* decisions'
sec
echo "== pctclean"
# 60 s times the speed scale (expanded on the host): a bound only a run
# stalled under steering misses ("slow 0" below).
camp pcl -s pct -j 2 -n 20 --keep-going --run-timeout $(scaled 60) -- "$PROGS/clean_lockwrap"
sec
echo "== pctbank"
camp pb -s pct:2 -j 2 -n 200 -- "$BANK"
for p in $CLEAN; do
	sec
	echo "== clean \$p"
	camp c_\$p -s random -j 2 -n 10 --keep-going -- "$PROGS/\$p"
done
sec
echo "== access"
camp acc -s pct:2 --access -j 2 -n 10 -- "$PROGS/counter" locked 20
sec
echo "== tsa"
camp tsa -s tsa -j 2 --estimate-runs 3 -n 30 --keep-going -- "$PROGS/fig2free"
sec
echo "== trylock"
camp try -s tsa -j 2 -n 2 --keep-going --run-timeout 2 -- "$PROGS/hang_trylock"
sec
echo "== map"
camp map -s map -j 2 -n 200 -- "$PROGS/null_appender"
for st in map ga:2,3 fpair; do
	sec
	echo "== locked \$st"
	camp l_\$st -s \$st -j 2 -n 6 --keep-going -- "$PROGS/counter" locked 20
done
sec
echo "== int"
"$CS" run -s random -j 2 -n 100000 --keep-going -o /tmp/int -- "$PROGS/clean_rwlock" \
	>/dev/null 2>/tmp/int.err &
pid=\$!
sleep 3
kill -INT \$pid
wait \$pid
echo "rc \$?"
i=0
while [ \$i -lt 100 ] && cat /proc/[0-9]*/comm 2>/dev/null | grep -q -x -e clean_rwlock -e cs-gated; do
	sleep 0.1
	i=\$((i + 1))
done
echo "left \$(cat /proc/[0-9]*/comm 2>/dev/null | grep -c -x -e clean_rwlock -e cs-gated)"
echo "cgroups \$(find /sys/fs/cgroup -type d -path '*/concsched/*-*' 2>/dev/null | wc -l)"
echo "state \$(cat /sys/kernel/sched_ext/state)"
sec
EOF
chmod +x "$T/guest.sh"
"$CS" vm --timeout "$(scaled 850)" --carry "$PROGS" --carry "$BANK" -- "$T/guest.sh" >"$T/out" 2>"$T/err"
is "$?" 0 "guest script ran"
o=$T/out
# Each section's seconds in the guest (what a trim of this file reads).
# 2026-11-29, beside four other VMs: 787 s in all (318 s on a quiet
# machine); with fewer runs per campaign (8 instead of 20 in pctclean, 6
# instead of 10 for the clean programs, 4 instead of 6 for the locked
# counter) 755 s, within the load's noise (pctclean 131 -> 108 s, the
# locked counter under map 54 -> 61 s): a campaign's own cost in the
# guest (its scheduler's and probes' load, its estimation run, the two
# reports) is most of each section, so the runs stayed as they were.
diag "sections: $(awk '/^at / { if (name != "") { printf "%s%s %d s", sep, name, $2 - t; sep = ", " } t = $2; name = "" }
	/^== / { name = substr($0, 4) }' "$o")"
section() { awk -v n="== $1" '$0 == n { on = 1; next } /^== / { on = 0 } on' "$o"; }
# summary NAME: "runs R pass P beside B failures F bank K slow S warnings W"
# (K: failures that are bank's assertion at bank.c:57, S: runs slow under
# steering, W: the runs of each of the report's warnings, added up: the
# report groups a warning that repeats run after run, so two slow runs
# are one warning of 2 runs, as in a run by hand on 2026-12-01 beside two
# other VMs) from the section's report, then its other lines
summary() {
	section "$1" | sed -n 's/^json //p' | python3 -c '
import json, sys
d = json.load(sys.stdin)
r = d["runs"]
f = d["failures"]
bank = [x for x in f if x["kind"] == "assertion" and "bank.c:57" in x["summary"]]
slow = sum(1 for x in r["list"] if x["summary"].startswith("slow under steering"))
print("runs", r["total"], "pass", r["outcomes"].get("pass", 0), "beside", r.get("overlapped", 0),
      "failures", len(f), "bank", len(bank), "slow", slow, "warnings", sum(w["runs"] for w in d["warnings"]))
print("kinds", ",".join(sorted(set(x["kind"] for x in f))) or "-")
sp = [m for m in d["metrics"] if m["name"] == "sp"][0]
print("sp", sp.get("estimated"), sp.get("covered_estimated"))
for x in r["list"]:
    if x["summary"].startswith("slow under steering"):
        print("slow run %d: %s" % (x["run"], x["summary"]))' 2>&1
	section "$1" | grep -v '^json '
}

s=$(summary random)
like "$s" "^rc 1$" "random -j 2 on bank: a failure, exit 1"
# The run beside the second failure ends and is stored too: it may fail
# as well (3 failures, seen once on 2026-11-28).
like "$s" "^runs [0-9]+ pass [0-9]+ beside [1-9][0-9]* failures ([23]) bank \1 slow 0 " \
	"random -j 2: runs beside each other until the second failure; each is the assertion at bank.c:57"
diag "random -j 2: $(printf '%s\n' "$s" | grep '^runs')"
like "$s" "^replayed 1$" "random -j 2: the first failure was replayed after the runs (replayed 1/1)"

s=$(section serial)
is "$(printf '%s\n' "$s" | grep -c 'run: ')" 8 "--serial random -j 2: 8 runs"
bad=$(printf '%s\n' "$s" | awk '/run: / {
	d = $0; sub(/ decisions.*/, "", d); sub(/.* /, "", d)
	p = $0; sub(/ parks,.*/, "", p); sub(/.* /, "", p)
	w = $0; sub(/ watchdog.*/, "", w); sub(/.* /, "", w)
	if (p != d || w != 0 || d == 0) bad++
} END { print bad + 0 }')
is "$bad" 0 "--serial random -j 2: every run parked once per decision (its own counters), no watchdog"

s=$(summary pctclean)
like "$s" "^rc 0$" "pct -j 2 on clean_lockwrap: exit 0"
like "$s" "^runs 20 pass 20 beside [1-9][0-9]* failures 0 bank 0 slow 0 " \
	"pct -j 2: 20 passing runs beside each other, each steered to its end"

s=$(summary pctbank)
like "$s" "^rc 1$" "pct:2 -j 2 on bank: a failure, exit 1"
like "$s" "^runs [0-9]+ pass [0-9]+ beside [0-9]+ failures ([1-9][0-9]*) bank \1 " \
	"pct:2 -j 2: the assertion at bank.c:57"
like "$s" "^replayed 1$" "pct:2 -j 2: the failure replays (replayed 1/1)"

for p in $CLEAN; do
	s=$(summary "clean $p")
	like "$s" "^rc 0$" "$p, random -j 2: exit 0"
	# A run past the adaptive run timeout under steering is "slow", a
	# warning and not a failure (seen once in about 60 campaigns here, more
	# often on a loaded machine): counted, never failed.
	like "$s" "^runs 10 pass 10 beside [1-9][0-9]* failures 0 bank 0 slow ([0-9]+) warnings \1$" \
		"$p, random -j 2: 10 passing runs beside each other, no warning but slow runs"
	printf '%s\n' "$s" | grep '^slow run' | while read -r l; do diag "$p: $l"; done
done

s=$(summary access)
like "$s" "^rc 0$" "pct:2 --access -j 2 on the locked counter: exit 0"
like "$s" "^runs 10 pass 10 beside [1-9][0-9]* failures 0 " "... 10 passing runs"

s=$(summary tsa)
like "$s" "^rc 0$" "tsa -j 2 on fig2free: exit 0"
like "$s" "^runs 30 pass 30 beside [1-9][0-9]* failures 0 " "tsa -j 2: 30 passing runs beside each other"
like "$s" "^sp 10 10$" "tsa -j 2: all 10 estimated SP requirements covered (the runs share the coverage)"
s=$(summary trylock)
like "$s" "^rc 1$" "tsa -j 2 on hang_trylock: a failure, exit 1"
like "$s" "^kinds timeout$" "tsa -j 2: a hang (timeout), never a deadlock"

s=$(summary map)
like "$s" "^rc 1$" "map -j 2 on null_appender: a failure, exit 1"
like "$s" "^kinds signal$" "map -j 2: the NullAppender crash (a signal)"
for st in map ga:2,3 fpair; do
	s=$(summary "locked $st")
	like "$s" "^rc 0$" "$st -j 2 on the locked counter: exit 0"
	like "$s" "^runs 6 pass 6 beside [1-9][0-9]* failures 0 " "$st -j 2: 6 passing runs beside each other"
done

s=$(section int)
like "$s" "^rc 130$" "^C: exit 130"
like "$s" "^left 0$" "^C: no target left"
like "$s" "^cgroups 0$" "^C: no run cgroup left"
like "$s" "^state disabled$" "^C: the scheduler is unloaded"

[ "$_tap_fail" -gt 0 ] && diag "guest stdout:" "$(cut -c1-300 "$o")" "guest stderr:" "$(tail -20 "$T/err")"
done_testing
