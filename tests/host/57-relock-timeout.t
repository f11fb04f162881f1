#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 300
# Issue 32: a correct program that re-locks a recursive mutex it holds
# (tests/programs/clean_relock_step, SQLite's sqlite3_step calling
# sqlite3_reset) and is still running at the run timeout is a hang, never
# a deadlock. Its runs hold ~4x the thread model's RUN_MAX_ACTIONS, and
# before the fix the analysis paired a thread's last *stored* action, a
# re-lock request long past, with the mutex it held at the timeout:
# "holds conns (...) and waits for conns (...)", 3 runs of 3 on the
# 2026-11-29 host. A real self-deadlock on a default mutex (selflock)
# stays a deadlock with its sites. Strategy none: no sched_ext needed.
source "$(dirname "$0")/../lib.sh"
need_root
[ -x "$PROGS/clean_relock_step" ] && [ -x "$PROGS/selflock" ] || skip_all "build first: make"
command -v python3 >/dev/null || skip_all "python3 missing (run: sudo make deps)"
plan 5
T=$(mktemp -d /tmp/cs-relock-XXXXXX)
trap 'rm -rf "$T"' EXIT
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# 4000 rounds of 8 threads (~200,000 lock events), then each pair's first
# thread to end waits 60 s in its last reset holding its connection's
# mutex twice over: still running at the 3 s run timeout.
"$CS" run -s none -n 3 --keep-going --run-timeout "$(scaled 3)" -o "$T/rl" -- \
	"$PROGS/clean_relock_step" 4000 60000 >/dev/null 2>"$T/err"
"$CS" report "$T/rl" --json >"$T/rl.json"
is "$(jget "$T/rl.json" 'sum(1 for f in d["failures"] if f["kind"] == "deadlock")')" 0 \
	"a recursive re-lock by its holder is no deadlock (3 runs past the run timeout)"
is "$(jget "$T/rl.json" 'sum(1 for f in d["failures"] if f["kind"] == "timeout")')" 3 \
	"... each run is a hang: slow, still running at the timeout"
like "$(cat "$T/err")" "run 1: timeout: timed out \(hang\).*no lock cycle found" \
	"... with no lock cycle"
grep 'deadlock' "$T/err" | diag

# The real thing: a default mutex taken again by its holder.
"$CS" run -s none -n 1 --run-timeout 30 -o "$T/self" -- "$PROGS/selflock" 2>"$T/err"
is "$?" 1 "selflock: a failure"
like "$(cat "$T/err")" "deadlock: thread 0\.1 \(tid [0-9]+\) holds m \(0x[0-9a-f]+\) \(taken at worker\+0x[0-9a-f]+ \(selflock\.c:18\)\) and waits for m \(0x[0-9a-f]+\) at worker\+0x[0-9a-f]+ \(selflock\.c:19\)" \
	"... a self-deadlock on a default mutex, with the sites of both requests"
