#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 600
# Showing a failing schedule (issue 14 item 4): a steered run records its
# schedule; `report DIR --schedule N` prints it as one column per thread
# (bank: its two tellers, their starts, the check of both before either
# debit), --json
# carries the same, and the HTML report draws it as an SVG swimlane that a
# real browser renders: headless Chromium's screenshot is not blank and
# shows one lane colour per thread of the schedule. Then minimize (item 3):
# the failing run shrinks to bank's one necessary preemption, is stored as
# a new run whose schedule report shows and which replays 10 of 10; a
# passing run has nothing to minimize.
source "$(dirname "$0")/../lib.sh"
need_vm
BANK=$B/examples/bank
[ -x "$BANK" ] || skip_all "build first: make"
command -v python3 >/dev/null || skip_all "python3 missing (run: sudo make deps)"
command -v chromium >/dev/null || skip_all "chromium missing (run: sudo make deps)"
plan 21
T=$(mktemp -d /tmp/cs-schedule-XXXXXX)
trap 'rm -rf "$T"' EXIT

# random finds bank's bug in about 1 run of 3 in the VM (fewer beside other
# VMs: 0 of 8 happened once in CI): campaigns until one holds failing and
# passing runs (tests/lib.sh campaign_mixed says how unlikely a miss is).
campaign_mixed "$T/c" 5 --vm -s random -n 20 -- "$BANK"
rc=$?
is "$rc" 0 "random on bank: failing and passing runs"
[ "$rc" = 0 ] || diag "$(tail -5 "$T/c.err")"
run=$("$CS" report "$T/c" --json | python3 -c '
import json, sys; print(json.load(sys.stdin)["failures"][0]["run"])')
"$CS" report "$T/c" --schedule "$run" >"$T/text" 2>&1
is "$?" 0 "report --schedule $run"
like "$(head -1 "$T/text")" "^run $run \\(assertion\\): 6 points, 2 threads, [0-9]+ switches, [0-9]+ preemptions" \
	"its header: the two tellers' starts and their 4 lock calls"
like "$(sed -n 2p "$T/text")" "^ +step +0\\.[12] +0\\.[12] *$" "a column per thread"
# A teller's start is a step at its start routine: teller, bank.c:40.
is "$(sed -n '3,8p' "$T/text" | grep -c 'teller bank.c:40')" 2 "each teller's start is a step"
# The failing order: both tellers check (line 26) before either debits (34).
is "$(sed -n '3,8p' "$T/text" | grep -v 'bank.c:40' | grep -o 'bank.c:[0-9]*' | tr '\n' ' ')" \
	"bank.c:26 bank.c:26 bank.c:34 bank.c:34 " "both checks before both debits"
like "$(grep '^ *end' "$T/text")" "end +assertion: assertion .balance >= 0" "the failure last"
"$CS" report "$T/c" --schedule "$run" --json >"$T/json"
is "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
calls = [s for s in d["steps"] if s["line"] != 40]
print(len(d["threads"]), len(d["steps"]), d["steps"][0]["function"], calls[3]["line"],
      sum(s["preemption"] for s in d["steps"]) == d["preemptions"])' "$T/json")" "2 6 teller 34 True" \
	"--json: the same threads, steps, sites and preemptions"
"$CS" report "$T/c" --schedule 99 >/dev/null 2>"$T/err"
is "$?" 2 "--schedule of a run that does not exist: exit 2"
like "$(cat "$T/err")" "has no run 99" "... with one line saying so"

"$CS" report "$T/c" --html "$T/r.html" >/dev/null 2>&1
like "$(grep -c '<svg class="swimlane" data-threads="2"' "$T/r.html")" "^[1-5]$" \
	"the HTML report has a 2-lane swimlane per failing run"
screenshot "$T/r.html" "$T/r.png"
# Count the pixels of each lane colour (schedule.c's palette) in the PNG
# (tests/png_pixels.py): the colours with more than 200 pixels.
px=($(python3 "$ROOT/tests/png_pixels.py" "$T/r.png" 1f77b4 ff7f0e 2ca02c d62728 9467bd 8c564b \
	e377c2 17becf))
n=0
for c in "${px[@]:2}"; do
	[ "$c" -gt 200 ] && n=$((n + 1))
done
lanes="${px[0]} $n"
ok "$([ "${lanes%% *}" -gt 10000 ] 2>/dev/null; echo $?)" "the screenshot is not blank (${lanes%% *} non-white pixels)"
is "${lanes##* }" 2 "the rendered page shows 2 lane colours: one per thread"

# --- minimize --------------------------------------------------------------
nruns=$("$CS" report "$T/c" --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["runs"]["list"]))')
before=$(sed -n 's/.* \([0-9]*\) preemptions$/\1/p' "$T/text" | head -1)
"$CS" minimize "$T/c" --run "$run" --vm >"$T/min" 2>"$T/min.err"
is "$?" 0 "minimize --run $run --vm"
new=$((nruns + 1))
# Minimize undoes one preemption at a time while the run still fails: it
# ends at a local minimum, not always at bank's least (1: the tellers'
# checks must interleave). With the tellers' starts among the points a
# 2-preemption schedule none of whose preemptions could be undone alone
# was seen (CI 2026-11-28, "2 preemptions, none can be undone (2
# candidates tried)"). So the check is what minimize promises: no more
# preemptions than before, at least one, and the schedule still has both
# checks before both debits.
left=$(sed -n "s/^run $run: $before preemptions -> \([0-9]*\).*/\1/p; s/^run $run: \([0-9]*\) preemptions, none can be undone.*/\1/p" "$T/min" | head -1)
diag "minimize: $before preemptions -> ${left:-?}"
ok "$([ -n "$left" ] && [ "$left" -ge 1 ] && [ "$left" -le "$before" ] && grep -q "run $new" "$T/min"; echo $?)" \
	"it reports the preemptions left (1 to $before: ${left:-none}) and the new run $new"
"$CS" report "$T/c" --schedule "$new" >"$T/mtext" 2>&1
like "$(head -1 "$T/mtext")" "^run $new \(assertion\): 6 points, 2 threads, [0-9]+ switches, ${left:-X} preemptions" \
	"report --schedule $new: the minimized schedule, ${left:-?} preemptions"
is "$(sed -n '3,8p' "$T/mtext" | grep -v 'bank.c:40' | grep -o 'bank.c:[0-9]*' | tr '\n' ' ')" \
	"bank.c:26 bank.c:26 bank.c:34 bank.c:34 " "still both checks before both debits"
"$CS" replay "$T/c" --run "$new" --vm --times 10 >"$T/mrep" 2>&1
like "$(tail -1 "$T/mrep")" "failed again in 10 of 10 replays" "the minimal schedule replays 10 of 10"
like "$(cat "$T/min")" "replay it: .*replay $T/c --run $new --vm" "it prints the replay command"
pass=$("$CS" report "$T/c" --json | python3 -c '
import json, sys
print(next((r["run"] for r in json.load(sys.stdin)["runs"]["list"] if r["outcome"] == "pass"), 0))')
"$CS" minimize "$T/c" --run "$pass" --vm >/dev/null 2>"$T/perr"
is "$?" 2 "minimize of a passing run: exit 2"
like "$(cat "$T/perr")" "passed: only a failing run has a schedule to minimize" "... with one line saying why"
done_testing
