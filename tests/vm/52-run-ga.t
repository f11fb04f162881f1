#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 600
# -s ga (issue 12 item 3) in the VM: seed 004's genetic search over noise
# configurations, each individual run RUNS times with --access (implied),
# its fitness from the runs' WGoldiLockSC, warnings, failures and time. On
# race_torn_pair with ga:2,4 (2 runs per individual, 4 individuals): 16
# runs are two generations, each run records its configuration and its
# place in the search, each has a note with its fitness, the report shows
# one line per generation (text, JSON, HTML); the same seed gives the same
# first generation; a correct program under ga never fails; a bad option is
# refused in one line.
source "$(dirname "$0")/../lib.sh"
need_vm
P=$PROGS/race_torn_pair
[ -x "$P" ] && [ -x "$PROGS/counter" ] || skip_all "build first: make"
command -v python3 >/dev/null && command -v sqlite3 >/dev/null || skip_all "python3 or sqlite3 missing (run: sudo make deps)"
plan 14
T=$(mktemp -d /tmp/cs-ga-XXXXXX)
trap 'rm -rf "$T"' EXIT

"$CS" run -s ga:0 -n 1 -o "$T/bad" -- "$P" >/dev/null 2>"$T/bad.err"
is "$?" 2 "ga:0: exit 2"
like "$(cat "$T/bad.err")" "ga:RUNS\\[,POP\\]: RUNS per evaluation 1-100" "... with the valid ranges"

"$CS" run --vm -s ga:2,4 -n 16 --keep-going --seed 3 -o "$T/a" -- "$P" >"$T/a.out" 2>"$T/a.err"
rc=$?
ok "$([ "$rc" = 0 ] || [ "$rc" = 1 ]; echo $?)" "ga:2,4 campaign of 16 runs ends (exit $rc)"
like "$(cat "$T/a.err")" "ga: 4 individuals per generation, 2 runs each \\(8 runs a generation\\)" \
	"it says how the search is laid out"
db=$T/a/campaign.db
is "$(sqlite3 "$db" "SELECT count(*) FROM runs")" 16 "16 runs"
is "$(sqlite3 "$db" "SELECT group_concat(json_extract(strategy_config, '\$.ga.generation') || '.' || json_extract(strategy_config, '\$.ga.individual') || '.' || json_extract(strategy_config, '\$.ga.run'), ' ') FROM (SELECT strategy_config FROM runs ORDER BY idx LIMIT 8)")" \
	"0.0.1 0.0.2 0.1.1 0.1.2 0.2.1 0.2.2 0.3.1 0.3.2" \
	"generation 0: each individual twice, in order"
is "$(sqlite3 "$db" "SELECT count(*) FROM runs a JOIN runs b ON b.idx = a.idx + 1 WHERE a.idx <= 8 AND json_extract(a.strategy_config, '\$.ga.run') = 1 AND json_extract(a.strategy_config, '\$.noise') = json_extract(b.strategy_config, '\$.noise')")" 4 \
	"each individual's two runs run its one configuration"
is "$(sqlite3 "$db" "SELECT count(*) FROM strategy_notes WHERE json_extract(note, '\$.fitness') IS NOT NULL")" 16 \
	"every run has a note with its fitness"
"$CS" report "$T/a" >"$T/rep"
is "$(grep -c 'ga generation [01]: best fitness' "$T/rep")" 2 "the report shows both generations"
"$CS" report "$T/a" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(len(d["search"]), d["search"][0].startswith("ga generation 0: best fitness "))' >"$T/j"
is "$(cat "$T/j")" "2 True" "... and its JSON"
"$CS" report "$T/a" --html "$T/a.html" >/dev/null 2>&1
like "$(cat "$T/a.html")" "<h2>Search</h2>" "... and its HTML"

"$CS" run --vm -s ga:2,4 -n 8 --keep-going --seed 3 -o "$T/b" -- "$P" >/dev/null 2>&1
first() { sqlite3 "$1/campaign.db" "SELECT group_concat(json_extract(strategy_config, '\$.noise'), ' ') FROM (SELECT strategy_config FROM runs ORDER BY idx LIMIT 8)"; }
is "$(first "$T/b")" "$(first "$T/a")" "the same seed gives the same first generation"

"$CS" run --vm -s ga:2,3 -n 6 --keep-going --seed 3 -o "$T/clean" -- "$PROGS/counter" locked 20 \
	>/dev/null 2>&1
is "$?" 0 "a correct program (a locked counter) under ga: exit 0"
is "$(sqlite3 "$T/clean/campaign.db" "SELECT count(*) || ' ' || (SELECT count(*) FROM failures) FROM runs")" "6 0" \
	"... 6 runs, no failure"
done_testing
