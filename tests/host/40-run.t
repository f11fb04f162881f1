#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 300
# concsched run / replay on the host kernel: strategy none (probes only,
# no sched_ext needed), the oracles, the store, saturation, --json,
# --check/--expect-exit, a campaign killed with SIGKILL, and bad input.
source "$(dirname "$0")/../lib.sh"
need_root
[ -x "$PROGS/fig2" ] && [ -x "$PROGS/deadlock" ] && [ -x "$PROGS/selflock" ] && [ -x "$PROGS/recursive_cycle" ] || skip_all "build first: make"
command -v python3 >/dev/null || skip_all "python3 missing (run: sudo make deps)"
plan 52
T=$(mktemp -d /tmp/cs-run-XXXXXX)
trap 'rm -rf "$T"' EXIT
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# --- a clean campaign: fixed number of runs -------------------------------
"$CS" run -s none -n 5 -o "$T/fig2" -- "$PROGS/fig2" >"$T/out" 2>"$T/err"
is "$?" 0 "5 passing runs: exit 0"
"$CS" report "$T/fig2" --json >"$T/fig2.json"
is "$(jget "$T/fig2.json" 'd["runs"]["total"]')" 5 "the store holds 5 runs"
is "$(jget "$T/fig2.json" '[m["covered"] for m in d["metrics"] if m["name"]=="sp"][0]')" 3 \
	"Figure 2: the 3 SP pairs one run shows"
like "$(cat "$T/err")" 'runs: +5 \(pass 5\)' "final summary on stderr"
is "$(cat "$T/out")" "" "nothing on stdout without --json"

# --- the sync probes attach once per campaign and serve every run ------------
# The deadlock runs below end once their lock cycle's threads stayed
# blocked 2 s (or at the run timeout, if that comes first): a run timeout
# that grows with the machine is one only a target that never reaches its
# cycle (a hang) would meet, and costs nothing when the product is right.
dl_timeout=$(scaled 10)
"$CS" -v run -s none -n 3 --keep-going --run-timeout "$dl_timeout" -o "$T/dl3" -- "$PROGS/deadlock" \
	>/dev/null 2>"$T/err"
is "$(grep -c "the campaign's links on .* serve this run" "$T/err")" 2 \
	"runs 2 and 3 use the links run 1 attached"
is "$(grep -c '^  run [0-9]*: deadlock' <("$CS" report "$T/dl3"))" 3 \
	"each of the 3 runs saw its lock cycle through them (a deadlock, not a hang)"

# --- --json ----------------------------------------------------------------
"$CS" run -s none -n 2 --json -o "$T/js" -- "$PROGS/fig2" >"$T/js.out" 2>/dev/null
is "$?" 0 "--json campaign exits 0"
is "$(jget "$T/js.out" 'd["schema"]')" "concsched-report/1" "--json prints the report schema"

# --- --max-failures: a campaign ends at its K-th failing run ---------------
# fig2 exits 0, so every run fails --expect-exit 7: the campaign of at most
# 20 runs stops at run 3.
"$CS" run -s none -n 20 --max-failures 3 --expect-exit 7 -o "$T/mf" -- "$PROGS/fig2" >/dev/null 2>&1
is "$?" 1 "--max-failures 3: a failure was found (exit 1)"
is "$("$CS" report "$T/mf" --json | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["runs"]["total"], len(d["failures"]))')" \
	"3 3" "... and the campaign stopped at its third failing run"
"$CS" run -s none -n 2 --max-failures 0 -o "$T/mf0" -- "$PROGS/fig2" >/dev/null 2>"$T/err"
like "$?:$(cat "$T/err")" '^2:.*--max-failures 0: a number of failing runs, at least 1' \
	"--max-failures 0: exit 2, one line"

# --- --slice-us: recorded with the campaign (replay reads it), bounded ------
"$CS" run -s none -n 1 --slice-us 2000000 -o "$T/sl" -- "$PROGS/fig2" >/dev/null 2>&1
is "$("$CS" report "$T/sl" --json | python3 -c 'import json, sys; print(json.loads(json.load(sys.stdin)["campaign"]["config"])["slice_us"])')" \
	2000000 "--slice-us 2000000 is recorded in the campaign's configuration"
"$CS" run -s none -n 1 --slice-us 50 -o "$T/sl50" -- "$PROGS/fig2" >/dev/null 2>"$T/err"
like "$?:$(cat "$T/err")" '^2:concsched: --slice-us 50: a time slice in microseconds, 100 to 2000000$' \
	"--slice-us 50: exit 2, one line with the bounds"

# --- failures: exit code, --expect-exit, signal, --check -------------------
"$CS" run -s none -n 3 -o "$T/false" -- /bin/false 2>"$T/err"
is "$?" 1 "/bin/false: failure found, exit 1"
like "$(cat "$T/err")" 'run 1: .*exit' "stops at the first failure with its summary"
is "$("$CS" report "$T/false" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"]["total"])')" 1 \
	"no --keep-going: one run"
"$CS" run -s none -n 3 --expect-exit 1 -o "$T/false1" -- /bin/false 2>/dev/null
is "$?" 0 "--expect-exit 1 makes /bin/false pass"
"$CS" run -s none -n 3 --keep-going -o "$T/kg" -- /bin/false 2>/dev/null
is "$?" 1 "--keep-going: exit 1"
is "$("$CS" report "$T/kg" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"]["total"])')" 3 \
	"--keep-going runs all 3"
"$CS" run -s none -n 1 -o "$T/segv" -- /bin/sh -c 'kill -SEGV $$' 2>"$T/err"
is "$?" 1 "a crashing target is a failure"
like "$(cat "$T/err")" 'signal|SIGSEGV|Segmentation' "the fatal signal is named"
"$CS" run -s none -n 2 --check 'test "$CONCSCHED_EXIT" = 0 && exit 3' -o "$T/check" \
	-- "$PROGS/fig2" 2>"$T/err"
is "$?" 1 "--check failing is a failure"
like "$(cat "$T/err")" 'check' "the failure says the check failed"

# --- deadlock oracle -------------------------------------------------------
env -u SUDO_USER "$CS" run -s none -n 1 --run-timeout "$dl_timeout" -o "$T/dl" -- "$PROGS/deadlock" 2>"$T/err"
is "$?" 1 "deadlocking target: exit 1"
like "$(cat "$T/err")" 'deadlock: thread 0\.[12] .*holds .*taken at thread_[ab]\+0x[0-9a-f]+ \(deadlock\.c:(18|28)\).* waits for .*deadlock\.c:(20|30)' \
	"the deadlock names the cycle with sites"
is "$(sed -n 's/^ *replay: //p' "$T/err")" "$(cs_printed) replay $T/dl --run 1" \
	"the summary gives the replay command as it runs from here (as root: no sudo)"
pgrep -f "$PROGS/deadlock" >/dev/null
is "$?" 1 "the hung target was killed"
"$CS" replay "$T/dl" --run 1 --run-timeout "$dl_timeout" >"$T/rep" 2>&1
is "$?" 1 "replay of the deadlock fails again (exit 1)"
like "$(cat "$T/rep")" 'failed again in 1 of 1' "replay counts the reproduction"

# A lock cycle does not wait for the run timeout: confirmed once its
# threads stay blocked (2 s), the run ends as a deadlock.
start=$(date +%s)
"$CS" run -s none -n 1 --run-timeout 60 -o "$T/dl60" -- "$PROGS/deadlock" 2>"$T/err"
rc=$?
el=$(( $(date +%s) - start ))
is "$rc" 1 "a deadlock with a 60 s run timeout: exit 1"
diag "the 60 s run timeout's deadlock took ${el} s"
like "$(cat "$T/err")" "confirmed: the cycle's threads stayed blocked in lock requests [0-9.]+ s \(the run was not steered\) \(the cycle was found [0-9.e-]+ s into the run; run timeout 60 s\)" \
	"... confirmed before the run timeout, and says when the cycle was found"
# A thread that takes a default mutex it holds: a cycle of one, a deadlock
# even with no synchronization point steered (before: a hang, "no lock
# cycle found", since nothing else marked the request as blocked).
"$CS" run -s none -n 1 --run-timeout 30 -o "$T/self" -- "$PROGS/selflock" 2>"$T/err"
like "$(cat "$T/err")" "deadlock: thread 0\.1 \(tid [0-9]+\) holds m \(0x[0-9a-f]+\) \(taken at worker\+0x[0-9a-f]+ \(selflock\.c:18\)\) and waits for m \(0x[0-9a-f]+\) at worker\+0x[0-9a-f]+ \(selflock\.c:19\)" \
	"a self-deadlock is a deadlock on its own lock"
# A request the probe did not record as blocked (it saw no holder: a
# recursive mutex's inner unlock; or the holder still inside its call,
# bad_lockorder's estimation run in the CI of b024b41) is read from the
# probe's state of the call in flight: a deadlock, not a hang, and the
# request enters the run's model (what the portfolio's signal reads).
"$CS" -v run -s none -n 1 --run-timeout 30 -o "$T/rcyc" -- "$PROGS/recursive_cycle" 2>"$T/err"
is "$?" 1 "recursive_cycle: exit 1"
"$CS" report "$T/rcyc" --json >"$T/rcyc.json" 2>/dev/null
like "$(jget "$T/rcyc.json" 'd["failures"][0]["kind"] + ": " + d["failures"][0]["detail"]')" "^deadlock: .*holds journal \(0x[0-9a-f]+\) \(taken at journal_thread\+0x[0-9a-f]+ \(recursive_cycle\.c:48\)\) and waits for registry \(0x[0-9a-f]+\) at journal_thread\+0x[0-9a-f]+ \(recursive_cycle\.c:50\)" \
	"... a deadlock, with the unrecorded request's lock and site"
like "$(cat "$T/err")" "thread [0-9]+ blocked in a lock request the probe did not record \(0x[0-9a-f]+\): added to the run's model" \
	"... and that request enters the run's model"
# A trylock loop that never ends has no cycle: it is still a hang at the timeout.
"$CS" run -s none -n 1 --run-timeout 3 -o "$T/try" -- "$PROGS/hang_trylock" 2>"$T/err"
like "$(cat "$T/err")" "timed out \(hang\)" "a hang with trylocks is not taken for a deadlock"

# A replay gets the timeout its run had (adaptive: 20x the slowest clean
# run, at least 2 s), not the campaign's first 30 s. Run 2's is computed
# from run 1's recorded duration: fig2 takes 0.06 s on a quiet machine
# (2 s) and up to 0.2 s beside two busy VMs (3.9 s in ci87), so a fixed
# 2 s is a claim about the clock, not about the product.
"$CS" run -s none -n 2 -o "$T/adapt" -- "$PROGS/fig2" >/dev/null 2>&1
"$CS" report "$T/adapt" --json >"$T/adapt.json" 2>/dev/null
"$CS" replay "$T/adapt" --run 2 --json >"$T/adapt2.json" 2>/dev/null
is "$(python3 -c '
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]["list"]
got = json.load(open(sys.argv[2]))["run_timeout_s"]
want = max(2.0, 20 * runs[0]["duration_s"])
print("ok" if abs(got - want) <= 1e-3 * want else "%g s, want max(2, 20 x %g s) = %g s"
      % (got, runs[0]["duration_s"], want))' "$T/adapt.json" "$T/adapt2.json")" ok \
	"replay of run 2 uses its own adaptive run timeout: max(2 s, 20x run 1's)"
is "$("$CS" replay "$T/adapt" --run 1 --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_timeout_s"])')" 30 \
	"... run 1's was the 30 s before any clean run"

# --- saturation stops an open-ended campaign -------------------------------
"$CS" run -s none --saturation 5,0.5 -o "$T/sat" -- "$PROGS/fig2" 2>"$T/err"
is "$?" 0 "open-ended campaign ends"
like "$(cat "$T/err")" 'sp coverage saturated after [5-9] runs' "it stops at saturation of sp"

# --- --time ----------------------------------------------------------------
start=$(date +%s)
"$CS" run -s none --time 2 -o "$T/time" -- "$PROGS/fig2" 2>/dev/null
is "$?" 0 "--time campaign exits 0"
el=$(( $(date +%s) - start ))
# A bound only a campaign that ignores --time would miss.
ok $([ "$el" -le "$(scaled 20)" ]; echo $?) "--time 2 stops it (took ${el}s)"

# --- SIGKILL mid-campaign: the store stays readable, no probe left ---------
"$CS" run -s none -n 100000 --keep-going -o "$T/killed" -- "$PROGS/fig2" >/dev/null 2>&1 &
pid=$!
# The kill comes once runs are committed (not after a fixed sleep), and the
# links go when the kernel has released the dead process's files: polled,
# within a limit that grows with the machine's speed (tests/lib.sh).
gone_within "$(scaled 60)" runs_below "$T/killed" 3
kill -9 $pid
wait $pid 2>/dev/null
"$CS" report "$T/killed" --json >"$T/killed.json" 2>/dev/null
is "$?" 0 "report works on a campaign killed with SIGKILL"
n=$(jget "$T/killed.json" 'd["runs"]["total"]')
ok $([ "$n" -ge 1 ]; echo $?) "the killed campaign kept its committed runs ($n)"
is "$(bpf_settled link uprobe_multi 0 "$(scaled 20)")" 0 "no uprobe stays attached after the kill"

# --- bad input -------------------------------------------------------------
"$CS" run -s none -- /nonexistent/prog 2>"$T/err"
is "$?" 2 "missing program: exit 2"
"$CS" run -s bogus -- "$PROGS/fig2" 2>"$T/err"
is "$?" 2 "unknown strategy: exit 2"
if [ -d /sys/kernel/sched_ext ]; then
	skip "kernel has sched_ext" "a steering strategy without sched_ext asks for --vm"
else
	"$CS" run -s random -n 1 -o "$T/nosched" -- "$PROGS/fig2" 2>"$T/err"
	like "$?:$(cat "$T/err")" '^2:.*no sched_ext.*--vm' "a steering strategy without sched_ext asks for --vm"
fi

# --- the default strategy: the portfolio, random with --serial --------------
# The strategy a campaign would run shows in the sched_ext error on a host
# without sched_ext (the options are checked first); with sched_ext the VM
# tests run them (40-run-vm).
"$CS" run -s portfolio --serial random -n 1 -o "$T/pfser" -- "$PROGS/fig2" 2>"$T/err"
like "$?:$(cat "$T/err")" '^2:concsched: --serial does not combine with --strategy portfolio \(portfolio picks who runs\)$' \
	"-s portfolio --serial random: exit 2, one line"
if [ -d /sys/kernel/sched_ext ]; then
	skip "kernel has sched_ext" "without -s: the portfolio"
	skip "kernel has sched_ext" "without -s, --serial: random"
else
	"$CS" run -n 1 -o "$T/dflt" -- "$PROGS/fig2" 2>"$T/err"
	like "$?:$(cat "$T/err")" '^2:.*which --strategy portfolio needs' "without -s: the portfolio"
	"$CS" -v run --serial random -n 1 -o "$T/dflt" -- "$PROGS/fig2" 2>"$T/err"
	like "$?:$(tr "\n" " " <"$T/err")" '^2:.*the default portfolio does not combine with the options: strategy random.*which --strategy random needs' \
		"without -s, --serial: random, no error of its own"
fi
done_testing
