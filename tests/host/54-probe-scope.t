#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 300
# A campaign's probes belong in its target's memory, not in every process
# that maps the probed file. Uprobes are per file: attached for every
# process, the kernel puts each breakpoint into every process that maps
# the library, which then traps on it (issue 32: 4,662 probes on
# libsqlite3 slowed the controller's own SQLite store and an unrelated
# test). concsched run attaches them for the target's pid (the kernel's
# uprobe consumer filter keeps them out of other processes) unless the
# target may fork a child they would miss: then for every process.
#
# tests/programs/probe_scope counts the bytes of libsharedsync.so's code
# that differ in its memory from the file (a breakpoint is one). The
# campaign's target stops in main after counting; meanwhile a bystander
# copy of it, not the target, counts its own. Every step waits for a file
# the other side made, not for a time.
source "$(dirname "$0")/../lib.sh"
need_root
for p in probe_scope probe_scope_fork; do
	[ -x "$PROGS/$p" ] || skip_all "build first: make"
done
plan 8
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

# The count in file $1 is above 0.
gt0() { [ "$(cat "$1" 2>/dev/null || echo 0)" -gt 0 ] 2>/dev/null; }

# campaign PROG: start the campaign, wait for its target's count, run the
# bystander, let the target go. Leaves $T/PROG.{target,other,rc}.
campaign() {
	local p=$1 pid
	"$CS" run -s none -n 1 --access --sites-object libsharedsync.so -o "$T/c-$p" \
		-- "$PROGS/$p" "$T/$p.target" "$T/ready-$p" "$T/go-$p" >"$T/$p.log" 2>&1 &
	pid=$!
	if wait_file "$T/ready-$p" "$pid"; then
		"$PROGS/probe_scope" "$T/$p.other"
	fi
	touch "$T/go-$p"
	wait "$pid"
	echo $? >"$T/$p.rc"
}

campaign probe_scope
is "$(cat "$T/probe_scope.rc")" 0 "probe_scope: run --access --sites-object libsharedsync.so exits 0"
[ "$(cat "$T/probe_scope.rc")" = 0 ] || diag "$(cat "$T/probe_scope.log")"
gt0 "$T/probe_scope.target"
ok $? "the target's copy of the library has the probes' breakpoints ($(cat "$T/probe_scope.target" 2>/dev/null))"
is "$(cat "$T/probe_scope.other" 2>/dev/null)" 0 \
	"a bystander mapping the library meanwhile has none: the probes are the target's process's"
is "$(sqlite3 "$T/c-probe_scope/campaign.db" "select count(*) from runs")" 1 "... and stored it"

# A target that names fork() is probed system-wide: its child is reached.
campaign probe_scope_fork
is "$(cat "$T/probe_scope_fork.rc")" 0 "probe_scope_fork: run exits 0 (its child forked at the end)"
[ "$(cat "$T/probe_scope_fork.rc")" = 0 ] || diag "$(cat "$T/probe_scope_fork.log")"
gt0 "$T/probe_scope_fork.target"
ok $? "the forking target's copy has the breakpoints"
gt0 "$T/probe_scope_fork.other"
ok $? "a bystander has them too: a target that may fork is probed for every process"

# No breakpoint outlives its campaign.
"$PROGS/probe_scope" "$T/after"
is "$(cat "$T/after")" 0 "after the campaigns, a new process's copy of the library is the file's"
done_testing
