#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 300
# --access exploration runs (issue 12): the estimation run finds the
# shared variables among the accesses it made, and later runs probe only
# their sites; so runs 4, 8, ... 32 (then every 16th) probe every
# candidate site, and what they find shared is probed from then on.
# tests/programs/late_share: its second worker writes `late` only from the
# campaign's second run on (a marker file the first run creates), so the
# estimation run sees one writer: not shared, not probed in runs 1-3; the
# exploration run 4 finds it, and runs 4-6 warn of its race. Each run
# records the sites it probed (exploration: all, "explore": true), so it
# replays with them. Not with -j N (the probed set is fixed after the
# estimation there).
source "$(dirname "$0")/../lib.sh"
need_root
P=$PROGS/late_share
[ -x "$P" ] || skip_all "build first: make"
command -v sqlite3 >/dev/null || skip_all "sqlite3 missing (run: sudo make deps)"
plan 11
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
q() { sqlite3 "$1/campaign.db" "$2"; }
cfg() { q "$1" "SELECT coalesce(json_extract(strategy_config, '\$.access.$2'), '-') FROM runs WHERE idx = $3"; }

"$CS" run -s none --access -n 6 -o "$T/a" -- "$P" "$T/marker" >"$T/a.out" 2>"$T/a.err"
is "$?" 0 "late_share under -s none --access: exit 0 (a race is a warning)"
like "$(cat "$T/a.err")" "access: [0-9]+ candidate sites, .* 2 shared variables, [0-9]+ sites on them" \
	"the estimation run finds total and again shared, not late (one writer then)"
like "$(cat "$T/a.err")" "access: exploration run 4 \\(every candidate probed\\) found 1 more shared variable, [1-9][0-9]* more sites? on them \\(probed from now on\\)" \
	"exploration run 4 finds late shared"
like "$(cat "$T/a.err")" "access: 1 exploration run \\(every candidate probed\\), 1 found more shared variables; 3 shared variables" \
	"the campaign's summary counts the exploration runs"
n=$(q "$T/a" "SELECT json_extract(strategy_config, '\$.access.candidates') FROM runs WHERE idx = 4")
is "$(cfg "$T/a" sites 4) $(cfg "$T/a" explore 4)" "0-$((n - 1)) 1" \
	"run 4 records every candidate site (0-$((n - 1))) and that it explored"
is "$(cfg "$T/a" sites 1) $(cfg "$T/a" explore 1)" "$(cfg "$T/a" sites 3) -" \
	"runs 1-3 probe the estimation's sites, and did not explore"
ok "$([ "$(cfg "$T/a" sites 5)" = "$(cfg "$T/a" sites 6)" ] && [ "$(cfg "$T/a" sites 5)" != "$(cfg "$T/a" sites 1)" ]; echo $?)" \
	"runs 5-6 probe more sites than runs 1-3 ($(cfg "$T/a" sites 1) -> $(cfg "$T/a" sites 5))"
like "$("$CS" report "$T/a")" "race on late: worker .*late_share\\.c:[0-9]+.*\\(3 runs, first run 4\\)" \
	"the race on late is seen from the exploration run on, in runs 4-6"

"$CS" replay "$T/a" --run 4 >"$T/rep" 2>&1
is "$?" 0 "the exploration run replays (with its sites)"

rm -f "$T/marker2"
"$CS" run -s none --access -n 6 -j 2 -o "$T/j" -- "$P" "$T/marker2" >/dev/null 2>"$T/j.err"
is "$(q "$T/j" "SELECT count(*) FROM runs WHERE json_extract(strategy_config, '\$.access.explore')")" 0 \
	"-j 2: no exploration run"
ok "$(grep -q "exploration run" "$T/j.err"; [ $? = 1 ]; echo $?)" "... and none said"
done_testing
