#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 600
# The steering cap (issue 12 item 6): under --access each access site's
# first N hits of a run are decision points, later ones 1 in 64, so a
# program with many accesses costs a bounded number of controller round
# trips. counter racy 2000 makes 2 threads x 2000 increments (a load and a
# store each) of one shared variable: under pct:2 --access --steer-cap 100
# a run's schedule has far fewer points than accesses, the run records its
# cap, the report names the sites that went past it (an "unsteered"
# warning), the campaign says how many hits went on unsteered, and the run
# replays under the same cap. --steer-cap without --access is refused.
source "$(dirname "$0")/../lib.sh"
need_vm
P=$PROGS/counter
[ -x "$P" ] || skip_all "build first: make"
command -v python3 >/dev/null && command -v sqlite3 >/dev/null || skip_all "python3 or sqlite3 missing (run: sudo make deps)"
plan 8
T=$(mktemp -d /tmp/cs-steercap-XXXXXX)
trap 'rm -rf "$T"' EXIT

"$CS" run -s pct:2 --steer-cap 10 -n 1 -o "$T/x" -- "$P" racy 10 >/dev/null 2>"$T/x.err"
is "$?" 2 "--steer-cap without --access: exit 2"
like "$(cat "$T/x.err")" "--steer-cap bounds the steering at access sites: add --access" "... says what to add"

"$CS" run --vm -s pct:2 --access --steer-cap 100 -n 2 --keep-going --seed 1 -o "$T/c" \
	-- "$P" racy 2000 >/dev/null 2>"$T/c.err"
is "$?" 0 "pct:2 --access --steer-cap 100 on counter racy 2000: exit 0 (races are warnings)"
is "$(sqlite3 "$T/c/campaign.db" "SELECT group_concat(json_extract(strategy_config, '\$.access.steer_cap')) FROM runs")" \
	"100,100" "each run records its cap"
pts=$("$CS" report "$T/c" --schedule 2 --json 2>/dev/null | python3 -c '
import json, sys
print(len(json.load(sys.stdin)["steps"]))' 2>/dev/null)
diag "run 2: ${pts:-?} points for 8000 accesses"
ok "$([ "${pts:-0}" -ge 200 ] && [ "$pts" -le 1000 ]; echo $?)" \
	"a run's schedule has the capped points, not one per access (${pts:-?} points)"
# Both of the program's loops' access sites go past the cap: counter_inc's
# load and store, and worker's loads of the loop's globals (counter.c:32).
# Which of them the report's line names first is timing (ci75, 2026-12-01).
like "$("$CS" report "$T/c")" "unsteered on hits past the steering cap \\(100 steered per run, then 1 in 64\\): (counter_inc|worker) .*counter\\.c" \
	"the report names the sites that went past the cap"
like "$(cat "$T/c.err")" "hits went on unsteered past the steering cap \\(100 per site and run" \
	"the campaign says how many hits went on unsteered"
"$CS" replay "$T/c" --run 2 --vm >"$T/rep" 2>&1
is "$?" 0 "run 2 replays under its cap (it passed: exit 0)"
done_testing
