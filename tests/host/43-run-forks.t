#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 180
# Targets that fork (issue 15 items 5 and 6): every run's target is in a
# cgroup v2 of its own, so a child that outlives main (or leaves the
# process group) is killed at the end of the run and the cgroup removed;
# without cgroup v2 the process group is killed and a warning says so
# once; run follows forked children by default (a child that execs fig2
# gives fig2's coverage), and with --no-follow-forks says once per campaign
# that the target forked and that its children are not steered.
source "$(dirname "$0")/../lib.sh"
need_root
F=$PROGS/forker
[ -x "$F" ] && [ -x "$PROGS/fig2" ] && [ -x "$PROGS/forkexec" ] && [ -x "$PROGS/launched" ] || skip_all "build first: make"
plan 28
T=$(mktemp -d /tmp/cs-forks-XXXXXX)
# Whatever a failing check leaves: only this build's forker processes.
cleanup() {
	local p
	for p in $(pgrep -f "^$F"); do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
# Forker processes still there (a failing check names them).
left() {
	local n
	n=$(pgrep -f "^$F" | wc -l | tr -d ' ')
	[ "$n" = 0 ] || diag "$(ps -o pid,ppid,pgid,stat,lstart,args -p "$(pgrep -d, -f "^$F")")" \
		"$(for p in $(pgrep -f "^$F"); do grep -H ^0:: /proc/$p/cgroup; done)"
	echo "$n"
}
fork_lines() { grep -c "^concsched: forker forked; its children's threads are not steered" "$1"; }
cgroot=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] && cgroot=/sys/fs/cgroup

# --- with cgroup v2 ----------------------------------------------------------
if [ -n "$cgroot" ]; then
	"$CS" run -s none -n 3 --no-follow-forks -o "$T/f" -- "$F" >/dev/null 2>"$T/err" &
	pid=$!
	wait $pid
	is "$?" 0 "run -s none -n 3 -- forker: exit 0"
	is "$(left)" 0 "no forker process is left after the campaign"
	compgen -G "$cgroot/concsched/$pid-*" >/dev/null
	is "$?" 1 "its cgroups ($cgroot/concsched/$pid-N) are gone"
	grep -q "^concsched: warning" "$T/err"
	is "$?" 1 "no warning with cgroup v2"
	is "$(fork_lines "$T/err")" 1 "one line says the target forked, once for 3 runs"

	"$CS" run -s none -n 2 -o "$T/s" -- "$F" --setsid >/dev/null 2>"$T/err"
	is "$?" 0 "a child that leaves the process group (setsid)"
	is "$(left)" 0 "... is killed too (the cgroup holds it)"

	# The target runs in the run's cgroup: --check reads what it printed.
	"$CS" run -s none -n 1 -o "$T/c" \
		--check 'grep -Eq "^0::/(.*/)?concsched/[0-9]+-[0-9]+$" "$CONCSCHED_OUT_FILE"' \
		-- /bin/cat /proc/self/cgroup >/dev/null 2>"$T/err"
	is "$?" 0 "the target runs in concsched/PID-N"

	# A cgroup left by a concsched killed with SIGKILL goes at the next run.
	sleep 30 &
	dead=$!
	kill -9 $dead
	wait $dead 2>/dev/null
	mkdir -p "$cgroot/concsched/$dead-1"
	"$CS" run -s none -n 1 -o "$T/g" -- "$PROGS/fig2" >/dev/null 2>&1
	[ -e "$cgroot/concsched/$dead-1" ]
	is "$?" 1 "the cgroup of a concsched that is gone is removed by the next run"

	# -j 2: each worker keeps its cgroup while its runs leave nothing, and
	# a run whose child outlives it has that cgroup killed and replaced
	# (a child cloned into a killed cgroup dies at birth on 6.18).
	"$CS" run -s none -n 6 -j 2 -o "$T/j" -- "$F" --setsid >/dev/null 2>"$T/err" &
	pid=$!
	wait $pid
	is "$?" 0 "-j 2 -- forker --setsid: exit 0"
	is "$("$CS" report "$T/j" --json | python3 -c '
import json, sys
r = json.load(sys.stdin)["runs"]["list"]
print(len(r), sum(x["outcome"] == "pass" for x in r))')" "6 6" \
		"... all 6 runs stored and passing: each run after a killed cgroup starts in a new one"
	is "$(left)" 0 "... no forker is left"
	grep -q "^concsched: warning" "$T/err"
	is "$?" 1 "... and no warning (two workers' first cgroups at once)"
	compgen -G "$cgroot/concsched/$pid-*" >/dev/null
	is "$?" 1 "... nor a cgroup of the campaign"

	# A run killed at its timeout (its cgroup killed): the next run's
	# child must not be cloned into that cgroup (it would die at birth:
	# outcome "signal").
	for j in 1 2; do
		"$CS" run -s none -n 3 -j $j --keep-going --run-timeout 1 -o "$T/t$j" \
			-- "$PROGS/launched" sleep >/dev/null 2>&1
		is "$("$CS" report "$T/t$j" --json | python3 -c '
import json, sys
print(" ".join(x["outcome"] for x in json.load(sys.stdin)["runs"]["list"]))')" \
			"timeout timeout timeout" "-j $j: runs after a run killed at its timeout time out too"
	done
else
	for i in $(seq 16); do skip "no cgroup v2 mounted" "cgroup check $i"; done
fi

# --- without cgroup v2: the process group, said once -----------------------
CONCSCHED_CGROUP_ROOT=$T "$CS" run -s none -n 3 --no-follow-forks -o "$T/n" -- "$F" >/dev/null 2>"$T/err"
is "$?" 0 "without cgroup v2 (CONCSCHED_CGROUP_ROOT=a plain directory): exit 0"
is "$(left)" 0 "no forker is left: its process group was killed"
is "$(grep -c "^concsched: warning: no cgroup v2 at $T; .*process group" "$T/err")" 1 \
	"one warning says so, once for 3 runs"
[ ! -e "$T/concsched" ]
ok $? "nothing was created in the plain directory"

# --- followed children (the default) ----------------------------------------
# SP tasks covered (a campaign without any has no sp entry)
sp() {
	local n
	n=$("$CS" report "$1" --json 2>/dev/null | grep -A3 '"name": "sp"' |
		sed -n 's/.*"covered": \([0-9]*\).*/\1/p' | head -1)
	echo "${n:-0}"
}
"$CS" run -s none -n 2 -o "$T/fe" -- "$PROGS/forkexec" "$PROGS/fig2" >/dev/null 2>"$T/err"
is "$?" 0 "forkexec fig2 (fork, exec in the child)"
is "$(sp "$T/fe")" 3 "followed: the exec'd child's 3 Figure 2 SP tasks"
is "$(fork_lines "$T/err")" 0 "and no line about forks"
"$CS" run -s none -n 2 --no-follow-forks -o "$T/nf" -- "$PROGS/forkexec" "$PROGS/fig2" \
	>/dev/null 2>"$T/err"
is "$(sp "$T/nf")" 0 "--no-follow-forks: nothing of the child"
is "$(grep -c '^concsched: forkexec forked; its children' "$T/err")" 1 "--no-follow-forks: one line says so"

# --- a target that does not fork -------------------------------------------
"$CS" run -s none -n 2 -o "$T/p" -- "$PROGS/fig2" >/dev/null 2>"$T/err"
is "$?" 0 "fig2 (threads, no fork)"
is "$(fork_lines "$T/err")" 0 "no fork line for a target that does not fork"
grep -q "^concsched: warning" "$T/err"
is "$?" 1 "no warning either"
done_testing
