#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 300
# The probe cap (issue 12 item 6: cost bounded on programs with millions of
# accesses). Each thread's first N hits of a site in a run (--probe-cap,
# default 2000) are probed; past them the BPF side writes no event for
# that thread there, by count. Once two threads went past their cap at a
# site (or the site had 4 N hits in all) the site closes: no hit of it is
# probed, and the controller takes its uprobe away for the rest of the
# run, so its hits stop trapping. tests/programs/stencil (a correct
# numeric kernel, 1.3 million probed accesses in 4096 80) then ends long
# before its run timeout, where without the cap it runs past it
# (47-access-slow.t). The report names the sites (an "unprobed" warning),
# the run records its cap for replay, and the cut is exact: counter racy
# 1500 hits each of its hot sites 1500 times in each of its 2 threads, so
# a cap of 1000 sees 2 x 1000 events at each of them and a cap of 2000 all
# 3000 (without the probe budget, which at 10x a cap of 1000 would close
# them sooner: 55-probe-budget.t). The stencil's campaign too runs without
# the budget: with it, the probe rotation would leave its hot grid out of
# some runs (access_rotate.c), and each run here must meet the cap.
source "$(dirname "$0")/../lib.sh"
need_root
P=$PROGS/stencil
[ -x "$P" ] || skip_all "build first: make"
command -v python3 >/dev/null && command -v sqlite3 >/dev/null || skip_all "python3 or sqlite3 missing (run: sudo make deps)"
plan 17
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# --- stencil under the default cap ---------------------------------------------
"$CS" run -s none --access -n 2 --probe-budget 0 -o "$T/s" -- "$P" 4096 80 >/dev/null 2>"$T/s.err"
is "$?" 0 "stencil under --access: exit 0, its own check of the grid passed"
"$CS" report "$T/s" --json >"$T/s.json"
is "$(jget "$T/s.json" '[(r["outcome"], r["summary"].startswith("slow")) for r in d["runs"]["list"]]')" \
	"[('pass', False), ('pass', False)]" "both runs pass, and neither is slow: they ended before their run timeout"
is "$(jget "$T/s.json" 'sorted(set(s["function"] for w in d["warnings"] if w["kind"] == "unprobed" for s in w["sites"]))')" \
	"['main', 'relax']" "the unprobed warnings name the hot sites: relax's sweep, main's set-up and check"
like "$(jget "$T/s.json" '[w["variable"] for w in d["warnings"] if w["kind"] == "unprobed"][0]')" \
	"^hits past the probe cap \(2000 probed per thread and run; then its uprobe is taken away\): not seen, not steered$" \
	"... and say what was not seen"
is "$(jget "$T/s.json" 'sorted(set(w["runs"] for w in d["warnings"] if w["kind"] == "unprobed"))')" "[2]" \
	"each run went past the cap at those sites"
like "$(cat "$T/s.err")" "concsched: access: sites went past the probe cap [0-9]+ times in 2 runs \(2000 hits probed per thread, site and run" \
	"the campaign says the cap was reached, and where to read more"
is "$(sqlite3 "$T/s/campaign.db" "SELECT group_concat(json_extract(strategy_config, '\$.access.probe_cap')) FROM runs")" \
	"2000,2000" "each run records its probe cap (a replay probes the same)"
pgrep -f "$P 4096" >/dev/null
is "$?" 1 "no stencil left running"

# --- the cut is by count ----------------------------------------------------------
acc() { sed -n 's/.*sites attached per run ([^)]*), \([0-9]*\) accesses (0 dropped).*/\1/p' "$1"; }
for cap in 1000 2000; do
	"$CS" run -s none --access -n 2 --probe-cap $cap --probe-budget 0 -o "$T/c$cap" -- "$PROGS/counter" racy 1500 \
		>/dev/null 2>"$T/c$cap.err"
done
a1=$(acc "$T/c1000.err") a2=$(acc "$T/c2000.err")
nsites=$(jget <("$CS" report "$T/c1000" --json) 'len([w for w in d["warnings"] if w["kind"] == "unprobed"])')
diag "counter racy 1500, 2 runs: ${a1:-?} accesses under a cap of 1000, ${a2:-?} under 2000; ${nsites:-?} sites capped"
ok "$([ "${nsites:-0}" -ge 1 ]; echo $?)" "counter's hot sites went past the cap (${nsites:-?})"
is "$((${a2:-0} - ${a1:-0}))" "$((2 * ${nsites:-0} * 1000))" \
	"a cap of 2000 sees exactly 1000 more events a run at each site capped at 1000 (1000 per thread there)"
"$CS" run -s none --access -n 2 --probe-cap 0 -o "$T/c0" -- "$PROGS/counter" racy 1500 >/dev/null 2>"$T/c0.err"
is "$(jget <("$CS" report "$T/c0" --json) 'len([w for w in d["warnings"] if w["kind"] == "unprobed"])')" 0 \
	"--probe-cap 0: no cap, no unprobed warning"
is "$(grep -c 'probe cap' "$T/c0.err")" 0 "... and no word of it"
is "$(acc "$T/c0.err")" "$a2" "... and every hit is an event, as under a cap of 2000, which no thread reaches there"

# --- what is refused ----------------------------------------------------------------
"$CS" run -s none --probe-cap 100 -n 1 -o "$T/x" -- "$PROGS/counter" racy 10 >/dev/null 2>"$T/x.err"
is "$?" 2 "--probe-cap without --access: exit 2"
like "$(cat "$T/x.err")" "--probe-cap bounds the probing of access sites: add --access" "... says what to add"
"$CS" run -s none --access --probe-cap 100 -n 1 -o "$T/y" -- "$PROGS/counter" racy 10 >/dev/null 2>"$T/y.err"
is "$?" 2 "--probe-cap below the steering cap: exit 2"
like "$(cat "$T/y.err")" "--probe-cap 100 is below the steering cap \(500\): a site must be probed to be steered" \
	"... says why"
done_testing
