#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 300
# A campaign's probes belong in its target's memory, not in every process
# that maps the probed file. Uprobes are per file: attached for every
# process, the kernel puts each breakpoint into every process that maps
# the file, which then traps on it (issue 32: 4,662 probes on libsqlite3
# slowed the controller's own SQLite store and an unrelated test).
# concsched run attaches them for the target's pid (the kernel's uprobe
# consumer filter keeps them out of other processes): the access probes
# always, the sync probes (libc) unless the target may fork a child they
# would miss.
#
# tests/programs/probe_scope counts the bytes of libsharedsync.so's code
# and of libc's that differ in its memory from the files (a breakpoint is
# one). The campaign's target stops in main after counting; meanwhile a
# bystander copy of it, not the target, counts its own. Every step waits
# for a file the other side made, not for a time.
source "$(dirname "$0")/../lib.sh"
need_root
for p in probe_scope probe_scope_fork fork_by_syscall; do
	[ -x "$PROGS/$p" ] || skip_all "build first: make"
done
plan 16
T=$(mktemp -d)
trap 'touch "$T"/go-probe_scope "$T"/go-probe_scope_fork; wait; rm -rf "$T"' EXIT

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
# The concsched processes on the machine: another campaign's sync probes
# for every process would put breakpoints in the bystander's libc.
others() { pgrep -x concsched | grep -vc "^$1\$"; }

# campaign PROG: start the campaign, wait for its target's counts, run
# the bystander, let the target go. Leaves $T/PROG.{target,other,rc} and
# $T/PROG.alone (no other concsched ran around the bystander's count).
campaign() {
	local p=$1 pid
	"$CS" run -s none -n 1 --access --sites-object libsharedsync.so -o "$T/c-$p" \
		-- "$PROGS/$p" "$T/$p.target" "$T/ready-$p" "$T/go-$p" >"$T/$p.log" 2>&1 &
	pid=$!
	if wait_file "$T/ready-$p" "$pid"; then
		[ "$(others "$pid")" = 0 ] && : >"$T/$p.alone"
		"$PROGS/probe_scope" "$T/$p.other"
		[ "$(others "$pid")" = 0 ] || rm -f "$T/$p.alone"
	fi
	touch "$T/go-$p"
	wait "$pid"
	echo $? >"$T/$p.rc"
	[ "$(cat "$T/$p.rc")" = 0 ] || diag "$(cat "$T/$p.log")"
}

campaign probe_scope
is "$(cat "$T/probe_scope.rc")" 0 "probe_scope: run --access --sites-object libsharedsync.so exits 0"
is "$(sqlite3 "$T/c-probe_scope/campaign.db" "select count(*) from runs")" 1 "... and stores its run"
gt0 "$T/probe_scope.target" 1
ok $? "the target's copy of the library has the access probes' breakpoints ($(count "$T/probe_scope.target" 1))"
gt0 "$T/probe_scope.target" 2
ok $? "... its libc the sync probes' ($(count "$T/probe_scope.target" 2))"
is "$(count "$T/probe_scope.other" 1)" 0 \
	"a bystander mapping the library meanwhile has none in its copy: the probes are the target's"
if [ -e "$T/probe_scope.alone" ]; then
	is "$(count "$T/probe_scope.other" 2)" 0 "... nor in its libc"
else
	skip "another concsched ran meanwhile (its probes may be in every libc)" "... nor in its libc"
fi

# A target that names fork() has its sync probes for every process (its
# child has its own memory); the access probes stay its own (they act for
# its process alone).
campaign probe_scope_fork
is "$(cat "$T/probe_scope_fork.rc")" 0 "probe_scope_fork: run exits 0 (its child forked at the end)"
gt0 "$T/probe_scope_fork.target" 1
ok $? "the forking target's copy of the library has the breakpoints"
gt0 "$T/probe_scope_fork.target.child" 2
ok $? "... its child's libc the sync probes'"
is "$(count "$T/probe_scope_fork.other" 1)" 0 "a bystander's copy of the library has none"
gt0 "$T/probe_scope_fork.other" 2
ok $? "... its libc has the sync probes': they are for every process"

# A target that forks with no fork function named (syscall(SYS_fork), as a
# library might): its first run's sync probes were its process's and
# missed the child, which run says once; the next runs' are for every
# process, attached once and kept.
"$CS" -v run -s none -n 3 -o "$T/c-sys" -- "$PROGS/fork_by_syscall" >/dev/null 2>"$T/sys.err"
is "$?" 0 "fork_by_syscall: 3 passing runs"
is "$(grep -c 'fork_by_syscall forked: this run.s sync probes were for its own process' "$T/sys.err")" 1 \
	"the fork is said once"
is "$(grep -oE 'sync probes: [0-9]+ entry .*\(pid -?[0-9]+\)' "$T/sys.err" | sed -E 's/.*\(pid ([0-9]+)\)/own/; s/.*\(pid -1\)/every/' | tr '\n' ' ')$(grep -c "the campaign's links on .* serve this run" "$T/sys.err")" \
	"own every 1" "run 1 attached them for its process, run 2 for every process, run 3 kept run 2's"

# No breakpoint outlives its campaign.
"$PROGS/probe_scope" "$T/after"
is "$(count "$T/after" 1)" 0 "after the campaigns, a new process's copy of the library is the file's"
like "$(cat "$T/probe_scope.log")" "access: [0-9]+ sites? attached" "the campaign's access probes were on"
done_testing
