#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 200
# How a campaign launches its targets (issue 18, kernel/launcher.h,
# docs/run.md "Launching the targets"): with -j 1 the controller, with
# -j N each worker from its own thread, clones each target sharing the
# controller's memory until its exec. What the target sees must not
# depend on it: its parent is concsched, it leads its own process group,
# and it starts with no signal blocked (a -j worker blocks SIGINT, SIGTERM
# and SIGHUP, and a launch used to pass that on). The children's stacks
# are unmapped once they have exec'd, so the controller does not grow
# launch by launch; nothing is left after the campaign, nor after kill -9
# of concsched (the target goes with it). With -j 2 each worker keeps to
# a CPU of its own; its targets, and their threads, may run on every CPU
# concsched may, as without it.
source "$(dirname "$0")/../lib.sh"
need_root
[ -x "$PROGS/launched" ] || skip_all "build first: make"
command -v sqlite3 >/dev/null || skip_all "sqlite3 missing (run: sudo make deps)"
plan 19
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
q() { sqlite3 "$1/campaign.db" "$2"; }
alive() { # alive PID: a process, not a zombie
	local s
	s=$(ps -o stat= -p "$1" 2>/dev/null)
	[ -n "$s" ] && [ "${s#Z}" = "$s" ]
}
check="cat \"\$CONCSCHED_OUT_FILE\" >>$T/out"
# The CPUs this shell, and so concsched, may run on.
allowed=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
ncpus=$(nproc)

for j in 1 2; do
	: >"$T/out"
	"$CS" run -s none -n 6 -j $j --check "$check" -o "$T/j$j" -- "$PROGS/launched" >/dev/null 2>"$T/err$j"
	is "$?" 0 "-j $j: 6 passing runs, exit 0"
	is "$(grep -c '^parent concsched$' "$T/out")" 6 "-j $j: each target's parent is concsched"
	is "$(grep -c '^group own$' "$T/out")" 6 "-j $j: each target leads its own process group"
	is "$(grep -c '^blocked 0000000000000000$' "$T/out")" 6 "-j $j: each target starts with no signal blocked"
	is "$(grep -c "^cpus main $allowed\$" "$T/out") $(grep -c "^cpus thread $allowed\$" "$T/out")" "6 12" \
		"-j $j: each target and each of its threads may run on every CPU concsched may ($allowed)"
done
like "$(q "$T/j2" "select count(*) || ' ' || sum(outcome = 'pass') from runs")" "^6 6$" \
	"-j 2: every run stored, all passing"

# A child shares the controller's memory until its exec, on a stack the
# controller maps for it and unmaps once the child has exec'd: 40
# launches leave the controller's mappings where they were (a block kept
# per launch adds two, its stack and its guard page: ~60 between the
# medians below), from one thread or from two workers at once. The
# medians, of launches 3-12 and of the last 10: each run destroys its
# probe links on threads of their own (kernel/links.h), whose stacks the
# C library keeps for the next ones, a few mappings the first runs add
# and a launch may see while they are alive.
median_maps() { awk '$1 == "parent-maps" { print $2 }' "$T/out" | "$@" | sort -n | sed -n 5p; }
for j in 1 2; do
	: >"$T/out"
	"$CS" run -s none -n 40 -j $j --check "$check" -o "$T/maps$j" -- "$PROGS/launched" >/dev/null 2>&1
	first=$(median_maps sed -n 3,12p)
	last=$(median_maps tail -n 10)
	grow=$((last - first))
	ok "$([ -n "$first" ] && [ -n "$last" ] && [ "$grow" -le 6 ]; echo $?)" \
		"40 launches at -j $j: the controller's mappings grew by $grow (median of the last 10 launches against launches 3-12; its children's stacks are unmapped)"
done

# Nothing of the campaign's is left: no target, no child still at its gate.
left=$(pgrep -x launched | wc -l)
gated=$(pgrep -x cs-gated | wc -l)
is "$left $gated" "0 0" "after the campaigns: no target and no gated child left"

# kill -9 of concsched with two workers: the targets go with it. They
# sleep 30 s; the run timeout only a hang would reach.
"$CS" run -s none -n 2 -j 2 --run-timeout "$(scaled 60)" -o "$T/k9" -- "$PROGS/launched" sleep >/dev/null 2>&1 &
cs=$!
# fewer_targets: true while concsched has fewer than two targets (each
# worker opens its probe session first); leaves them in $tgts.
fewer_targets() {
	tgts=$(pgrep -P "$cs" -x launched | tr '\n' ' ')
	[ "$(echo $tgts | wc -w)" -lt 2 ]
}
tgts=
gone_within "$(scaled 60)" fewer_targets
ok "$([ "$(echo $tgts | wc -w)" -ge 2 ]; echo $?)" "kill -9: both workers' targets (${tgts:-none}) are concsched's children"
# Its two workers (the threads named as the main one, but for it) each
# keep to a CPU, a different one where concsched has two or more.
pinned=$(for s in /proc/"$cs"/task/*/status; do
	[ "$s" = "/proc/$cs/task/$cs/status" ] && continue
	awk '/^Cpus_allowed_list:/ { print $2 }' "$s"
done | sort -u | tr '\n' ' ')
if [ "$ncpus" -ge 2 ]; then
	like "$pinned" '^[0-9]+ [0-9]+ $' "-j 2 on $ncpus CPUs: the workers keep to two CPUs, one each ($pinned)"
else
	is "$pinned" "$allowed " "-j 2 on one CPU: the workers run where concsched may ($pinned)"
fi
cat "/proc/$(echo $tgts | cut -d' ' -f1)/status" | awk '/^Cpus_allowed_list:/ { print $2 }' >"$T/tcpus"
is "$(cat "$T/tcpus")" "$allowed" "-j 2: a sleeping target may still run on every CPU ($allowed)"
# The kill comes now, while the targets sleep their 30 s (after another
# campaign, a loaded machine could let them end by themselves first).
kill -9 "$cs"
wait "$cs" 2>/dev/null
# any_alive PID...: true while one of them is a live process.
any_alive() {
	local p
	for p; do alive "$p" && return 0; done
	return 1
}
gone_within "$(scaled 30)" any_alive $tgts
ok $? "kill -9 of concsched: no target is left"
# The check command a worker runs is not kept to its CPU either.
: >"$T/out"
"$CS" run -s none -n 4 -j 2 -o "$T/chk" \
	--check "awk '/^Cpus_allowed_list:/ { print \$2 }' /proc/self/status >>$T/out" \
	-- "$PROGS/launched" >/dev/null 2>&1
is "$(sort -u "$T/out" | tr '\n' ' ')" "$allowed " "-j 2: the --check command may run on every CPU too"
done_testing
