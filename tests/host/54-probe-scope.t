#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 300
# A campaign's probes belong in its target's memory, not in every process
# that maps the probed file. Uprobes are per file: attached for every
# process, the kernel puts each breakpoint into every process that maps
# the file, which then traps on it (issue 32: 4,662 probes on libsqlite3
# slowed the controller's own SQLite store and an unrelated test).
# concsched run attaches the access probes (thousands of sites in a
# library) for the target's pid: the kernel's uprobe consumer filter keeps
# their breakpoints out of other processes. The sync probes (libc's
# pthread functions) stay attached for every process, once per campaign,
# and filter in BPF (docs/run.md "Probe scope"); with --no-follow-forks
# they are the target's process's too.
#
# tests/programs/probe_scope counts the bytes of libsharedsync.so's code
# and of libc's that differ in its memory from the files (a breakpoint is
# one), and of libc's those at its stdio output functions. The campaign's target stops in main after counting; meanwhile a
# bystander copy of it, not the target, counts its own. Every step waits
# for a file the other side made, not for a time.
source "$(dirname "$0")/../lib.sh"
need_root
[ -x "$PROGS/probe_scope" ] || skip_all "build first: make"
plan 15
T=$(mktemp -d)
trap 'touch "$T"/go-all "$T"/go-own; wait; rm -rf "$T"' EXIT

# Wait for file $1 while the campaign $2 runs: 0 once it is there, 1 if
# the campaign ended first.
wait_file() {
	while [ ! -e "$1" ]; do
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
}
# count FILE N: field N (1 libsharedsync, 2 libc) of a probe_scope count.
count() { awk -v n="$2" '{ print $n }' "$1" 2>/dev/null; }
# gt0 FILE N: that count is above 0.
gt0() { [ "$(count "$1" "$2")" -gt 0 ] 2>/dev/null; }
# The concsched processes on the machine whose sync probes for every
# process would put breakpoints in the bystander's libc: the commands that
# attach probes on this kernel (a `vm` or a `run --vm` puts none here:
# its probes are in the guest's; `report`, `merge` and the like none at
# all: ci74, 2026-12-01, beside another `make test` whose VM files ran
# them on the host, skipped two checks, failures under CI=true). The
# command is the first word after the global options: an `experiment run`
# attaches nothing itself (its cells are `run`s, counted on their own:
# ci88, 2026-12-01, beside a hunt's 61-gtest-experiment, whose `experiment
# run` the word " run " anywhere in the line counted).
others() {
	pgrep -a -x concsched | grep -v -e ' vm ' -e ' --vm' | awk -v self="$1" '$1 != self {
		for (i = 3; i <= NF && $i ~ /^-/; i++)
			;
		if ($i ~ /^(run|replay|minimize|attach|observe|estimate|sched|doctor)$/)
			n++
	} END { print n + 0 }'
}

# campaign NAME [OPTION...]: start a campaign on probe_scope, wait for its
# target's counts, run the bystander, let the target go. Leaves
# $T/NAME.{target,other,rc,log} and $T/NAME.alone (no other concsched ran
# around the bystander's count).
campaign() {
	local n=$1 pid
	shift
	"$CS" -v run -s none -n 1 --access --sites-object libsharedsync.so "$@" -o "$T/c-$n" \
		-- "$PROGS/probe_scope" "$T/$n.target" "$T/ready-$n" "$T/go-$n" >"$T/$n.log" 2>&1 &
	pid=$!
	if wait_file "$T/ready-$n" "$pid"; then
		[ "$(others "$pid")" = 0 ] && : >"$T/$n.alone"
		"$PROGS/probe_scope" "$T/$n.other"
		[ "$(others "$pid")" = 0 ] || rm -f "$T/$n.alone"
	fi
	touch "$T/go-$n"
	wait "$pid"
	echo $? >"$T/$n.rc"
	[ "$(cat "$T/$n.rc")" = 0 ] || diag "$(tail -n 20 "$T/$n.log")"
}
# sync_scope NAME: "every" and/or "own", what its campaign's log says of
# the pids its sync probes were attached for (the estimation run's and the
# run's), and how many runs kept the links of an earlier one.
sync_scope() {
	grep -oE 'sync probes: [0-9]+ entry .*\(pid -?[0-9]+\)' "$T/$1.log" |
		sed -E 's/.*\(pid -1\)/every/; s/.*\(pid [0-9]+\)/own/' | sort -u | tr '\n' ' '
	grep -c "sync probes: the campaign's links on .* serve this run" "$T/$1.log"
}

# --- by default: access probes the target's, sync probes every process's --
campaign all
is "$(cat "$T/all.rc")" 0 "probe_scope: run --access --sites-object libsharedsync.so exits 0"
is "$(sqlite3 "$T/c-all/campaign.db" "select count(*) from runs")" 1 "... and stores its run"
like "$(cat "$T/all.log")" "access probes: [1-9][0-9]* sites? attached for pid [0-9]+" \
	"the access probes were attached for the target's pid"
gt0 "$T/all.target" 1
ok $? "the target's copy of the library has the access probes' breakpoints ($(count "$T/all.target" 1))"
is "$(count "$T/all.other" 1)" 0 \
	"a bystander mapping the library meanwhile has none in its copy: the access probes are the target's"
is "$(sync_scope all)" "every 1" \
	"the sync probes were attached for every process by the estimation run, and kept for the run"
gt0 "$T/all.target" 2
ok $? "... the target's libc has their breakpoints ($(count "$T/all.target" 2))"
gt0 "$T/all.other" 2
ok $? "... and so has the bystander's ($(count "$T/all.other" 2)): they filter in BPF, as before"
# The stdio output functions are decision points for steering only: an
# unsteered campaign leaves them alone, or every printf on the machine
# would trap meanwhile (400,000 fprintf calls: 0.03 s alone, 3-5 s beside
# such a campaign, 2026-11-28). Another concsched's probes would put
# breakpoints there too: then the count says nothing of this campaign.
if [ -e "$T/all.alone" ]; then
	is "$(count "$T/all.target" 3)" 0 \
		"... but none at the stdio output functions (-s none: nothing steers there)"
else
	skip "another concsched ran beside the campaign" "... but none at the stdio output functions"
fi

# --- --no-follow-forks: the sync probes are the target's process's too -----
# libc_clean NAME: a fresh process's libc is the file's (no uprobe of
# anyone's on it), polled within a limit that grows with the machine: the
# "all" campaign's links for every process go when its controller exits,
# and the kernel may take a moment (longer on a loaded machine). Something
# else's probes on libc (a unit test attaching uprobes, another tool) keep
# it dirty: then the bystander's count says nothing of this campaign (CI
# 2026-11-28 beside a helper's builds and tests: the bystander's libc had
# breakpoints although no other concsched ran).
libc_dirty() { ! { "$PROGS/probe_scope" "$T/$1" && [ "$(count "$T/$1" 2)" = 0 ]; }; }
libc_clean() { gone_within "$(scaled 30)" libc_dirty "$1"; }
libc_clean pre-own && pre_clean=1 || pre_clean=0
campaign own --no-follow-forks
"$PROGS/probe_scope" "$T/post-own"
[ "$pre_clean" = 1 ] && [ "$(count "$T/post-own" 2)" = 0 ] || rm -f "$T/own.alone"
is "$(cat "$T/own.rc")" 0 "--no-follow-forks: run exits 0"
is "$(sync_scope own)" "own 0" "the sync probes were attached for the target's pid, each run's own"
gt0 "$T/own.target" 2
ok $? "... the target's libc has their breakpoints (attached at its exec)"
if [ -e "$T/own.alone" ]; then
	is "$(count "$T/own.other" 2)" 0 "... a bystander's libc has none"
else
	skip "other uprobes were on libc around the campaign (another concsched's sync probes, a test's)" \
		"... a bystander's libc has none"
fi

# No breakpoint outlives its campaign.
"$PROGS/probe_scope" "$T/after"
is "$(count "$T/after" 1)" 0 "after the campaigns, a new process's copy of the library is the file's"
like "$(cat "$T/all.log")" "access: [0-9]+ sites? attached" "the campaign's access probes were on"
done_testing
