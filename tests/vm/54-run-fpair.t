#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 600
# -s fpair (issue 12 item 4) in the VM: seed 002's bug-driven function
# pairs. On race_torn_pair (the writer's set_pair and the reader's
# read_pair share x and y with no lock: a high pair): the first run only
# profiles, the high group is targeted before the low one, runs record
# their target and whether the two functions ran at once, and holding one
# thread inside a function of the pair until the other is inside the other
# and interleaving their accesses (the pair's k-th covered attempt makes
# the choices of the bits of k) shows the torn read; the failing run
# replays. A correct program (every
# access under one lock: its pairs are dropped) never fails.
# Every campaign and replay runs in one VM boot (until 2026-11-29 each was
# a `run --vm` or `replay --vm` of its own: six boots, 145 s in CI); the
# campaigns come back through the guest's /out and the host checks them.
source "$(dirname "$0")/../lib.sh"
need_vm
P=$PROGS/race_torn_pair
[ -x "$P" ] && [ -x "$PROGS/counter" ] && [ -x "$PROGS/bad_selfdeadlock" ] || skip_all "build first: make"
command -v python3 >/dev/null && command -v sqlite3 >/dev/null || skip_all "python3 or sqlite3 missing (run: sudo make deps)"
plan 18
T=$(mktemp -d /tmp/cs-fpair-XXXXXX)
trap 'rm -rf "$T"' EXIT
q() { sqlite3 "$T/a/campaign.db" "$1"; }

# The guest runs the campaigns into /out (the host's $T) and each replay
# on a copy of its campaign (a replay notes its count in the campaign it
# replays; the host's checks read each campaign as it ended).
# 120 runs: fpair showed the torn read in 5 of 40 runs (docs/perf.md), so
# none in 120 has a chance of (35/40)^120 = 1e-7 (40 runs left it at 5e-3).
# bad_selfdeadlock until its first failure, at most 200 runs (fpair found
# it at run 1-2 in every measured campaign, docs/perf.md; a miss at even 1
# in 10 a run is 0.9^200 = 7e-10).
cat >"$T/guest.sh" <<EOF
#!/bin/sh
cd /tmp
"$CS" run -s fpair -n 120 --keep-going --seed 1 -o /out/a -- "$P" >/dev/null 2>/out/a.err
# the first run whose replay check the campaign said replayed
chk=\$(grep -o -E "run [0-9]+: (replayed: assertion again \\(1 of 1\\)|did not fail again in its recorded order, but does with steps)" \\
	/out/a.err | head -1 | cut -d' ' -f2 | tr -d :)
echo "chk \$chk"
cp -r /out/a /tmp/ra
[ -n "\$chk" ] && "$CS" replay /tmp/ra --run "\$chk" --times 5 >/out/rep 2>&1
"$CS" replay /tmp/ra --run 1 --times 1 >/out/rep1 2>&1
"$CS" run -s fpair -n 200 --seed 2 -o /out/sd -- "$PROGS/bad_selfdeadlock" >/dev/null 2>/out/sd.err
sd=\$("$CS" report /out/sd | sed -n 's/^  run \\([0-9]*\\): .*/\\1/p' | head -1)
echo "sd \$sd"
cp -r /out/sd /tmp/rsd
"$CS" replay /tmp/rsd --run "\${sd:-1}" --times 5 >/out/sdrep 2>&1
"$CS" run -s fpair -n 10 --keep-going --seed 1 -o /out/clean -- "$PROGS/counter" locked 20 \\
	>/dev/null 2>/out/clean.err
echo "clean \$?"
EOF
chmod +x "$T/guest.sh"
"$CS" vm --timeout "$(scaled 540)" --carry "$PROGS" --out "$T" -- "$T/guest.sh" >"$T/out" 2>"$T/err"
is "$?" 0 "guest script ran"

is "$(q "SELECT count(*) FROM runs")" 120 "fpair: 120 runs"
is "$(q "SELECT coalesce(json_extract(strategy_config, '\$.fpair'), 'null') FROM runs WHERE idx = 1")" null \
	"run 1 has no target: it profiles"
groups=$(q "SELECT group_concat(g, '') FROM (SELECT substr(json_extract(strategy_config, '\$.fpair.group'), 1, 1) AS g FROM runs WHERE idx > 1 ORDER BY idx)")
diag "targets' groups, run 2 on: $groups"
like "$groups" "^h+l" "the high group is targeted first, then the low one"
met=$(q "SELECT count(*) FROM strategy_notes WHERE json_extract(note, '\$.met') = 1")
diag "targets met (both functions at once): $met of $(q "SELECT count(*) FROM strategy_notes")"
ok "$([ "${met:-0}" -ge 1 ]; echo $?)" "some runs ran their pair at once ($met)"
like "$(cat "$T/a.err")" "fpair: [0-9]+ function pairs kept; 119 runs targeted a pair, $met of them ran it concurrently" \
	"the campaign's summary counts them"
# The report's search: lines, one per pair at its first meet (through the
# runs' notes): as many as distinct pairs met.
pairs=$(q "SELECT count(DISTINCT json_extract(note, '\$.f') || ' ' || json_extract(note, '\$.g')) FROM strategy_notes WHERE json_extract(note, '\$.met') = 1")
is "$("$CS" report "$T/a" 2>/dev/null | grep -Ec '^(search: +| +)fpair: functions f[0-9]+ and f[0-9]+ ran concurrently')" "$pairs" \
	"report: a search: line per function pair met ($pairs)"
ok "$([ "$(q "SELECT max(json_extract(strategy_config, '\$.fpair.choices')) FROM runs")" -ge 2 ]; echo $?)" \
	"a pair's later covered attempts make other choices (choices = its covered attempts)"
fails=$(q "SELECT count(*) FROM failures WHERE kind = 'assertion'")
# A failure we report must replay: the campaign replays a failing run
# before it goes on (--replay-check, default once), the first of each kind
# and summary, and notes it. (The probes widen windows in the VM: now and
# then a run fails on its own, the profiling run 1 among them; a run whose
# threads were let go at nearly the same time may have made its last
# accesses in the other order than its passes say: the check then tries
# adjacent steps swapped and keeps the order that fails.)
first=$(q "SELECT min(f.run) FROM failures f JOIN strategy_notes n ON n.run = f.run WHERE json_extract(n.note, '\$.met') = 1")
diag "torn reads: $fails in 120 runs (first fpair made: run ${first:-none}; all: $(q "SELECT group_concat(run) FROM failures"))"
ok "$([ "${fails:-0}" -ge 1 ] && [ "$fails" = "$(q "SELECT count(*) FROM failures")" ]; echo $?)" \
	"race_torn_pair fails with its assertion under fpair ($fails of 120)"
chk=$(q "SELECT min(run) FROM replays WHERE reproduced = times AND times > 0")
diag "checked: $(q "SELECT group_concat(run || ':' || reproduced || '/' || times, ' ') FROM replays")"
grep -E "run [0-9]+: (replayed|did not fail again)" "$T/a.err" | while read -r l; do diag "$l"; done
ok "$([ -n "$chk" ] && grep -Eq "run $chk: (replayed: assertion again \(1 of 1\)|did not fail again in its recorded order, but does with steps)" "$T/a.err"; echo $?)" \
	"the campaign replayed its failure before going on (run ${chk:-none}) and said so"
# The guest replayed the first run whose check said it replayed (its line
# is the one above: normally the same run).
gchk=$(sed -n 's/^chk //p' "$T/out")
if [ -n "$gchk" ]; then
	k=$(sed -n 's/.*failed again in \([0-9]*\) of 5 replays.*/\1/p' "$T/rep" | tail -1)
	diag "run $gchk replayed: ${k:-?}/5"
	[ "${k:-0}" -ge 4 ] || diag "its replay printed:" "$(tail -12 "$T/rep")"
	ok "$([ "${k:-0}" -ge 4 ]; echo $?)" "the checked run $gchk replays (${k:-?} of 5)"
else
	ok 1 "a checked failing run (none replayed in the campaign's check)"
fi

# Run 1 only profiled: nothing to re-make, and replay says so.
like "$(cat "$T/rep1")" "run 1 has no scheduling decision to replay: .*only as often as the program fails by itself" \
	"replay of the profiling run (no decision): a note says a reproduction is chance"

# fpair decides at accesses, but its runs park at synchronization points
# too (and let them go at once): the observed schedule holds the pthread
# calls' order, so a failure that an order of lock requests and accesses
# makes (bad_selfdeadlock: a worker sees the other active while it holds
# table_lock, and takes it again) replays in that order.
# The campaign ran until its first failure (the bound is above); the guest
# replayed that run, the first deadlock when the check below passes.
sd=$(sqlite3 "$T/sd/campaign.db" "SELECT min(run) FROM failures WHERE kind = 'deadlock'")
diag "bad_selfdeadlock under fpair: first deadlock at run ${sd:-none}"
ok "$([ -n "$sd" ] && [ "$sd" = "$(sed -n 's/^sd //p' "$T/out")" ]; echo $?)" \
	"fpair finds bad_selfdeadlock's self-deadlock (its first failure)"
"$CS" report "$T/sd" --schedule "${sd:-1}" --json >"$T/sd.json" 2>/dev/null
is "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sorted(set(s["line"] for s in d["steps"] if s["function"] == "worker") & {30, 45}))' "$T/sd.json")" \
	"[30, 45]" "its schedule holds the lock requests (bad_selfdeadlock.c:45, and :30 that never returns)"
k=$(sed -n 's/.*failed again in \([0-9]*\) of 5 replays.*/\1/p' "$T/sdrep" | tail -1)
diag "run ${sd:-1} replayed: ${k:-?}/5"
ok "$([ "${k:-0}" -ge 5 ]; echo $?)" "the self-deadlock replays in its recorded order (${k:-?} of 5)"

is "$(sed -n 's/^clean //p' "$T/out")" 0 "a correct program (a locked counter) under fpair: exit 0"
is "$(sqlite3 "$T/clean/campaign.db" "SELECT count(*) || ' ' || (SELECT count(*) FROM failures) FROM runs")" "10 0" \
	"... 10 runs, no failure"
like "$(cat "$T/clean.err")" "fpair: [0-9]+ function pairs kept" "... its pairs profiled"
[ "$_tap_fail" -gt 0 ] && diag "guest stdout:" "$(cat "$T/out")" "guest stderr:" "$(tail -20 "$T/err")"
done_testing
