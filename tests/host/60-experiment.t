#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# concsched experiment on the host with strategy none (no sched_ext):
# the example SPEC of docs/examples end to end, the index, a run killed
# midway and resumed, bad input, the report (CSV, JSON, HTML; coverage
# curves checked against the cells' campaign.db, the page rendered in
# headless chromium; the coverage comparisons of two strategies in text,
# JSON, --comparisons-csv and HTML), run --list (the study SPECs of
# docs/studies load), and shards 1/2 + 2/2 merged equal to the unsharded
# run. Needs root (uprobes).
# timeout: 300
source "$(dirname "$0")/../lib.sh"

need_root
[ -x "$CS" ] && [ -x "$PROGS/counter" ] || skip_all "build first (make)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 missing (run: sudo make deps)"
T=$(mktemp -d /tmp/cs-experiment-t.XXXXXX)
trap 'rm -rf "$T"' EXIT
plan 63

q() { sqlite3 "$1/experiment.db" "$2"; }
# cells DIR: the cells' results that do not depend on timing or sharding.
cells() { q "$1" "SELECT idx, program, strategy, seed, status, runs,
	ifnull(first_failure_run, 'censored') FROM cells ORDER BY idx"; }

# The example of docs/experiment.md: 2 programs x none x 2 seeds.
"$CS" experiment run "$ROOT/docs/examples/experiment.json" -o "$T/ex" >"$T/out" 2>&1
ok $? "the example spec runs end to end"
is "$(cells "$T/ex" | tr '\n' ' ')" \
	"0|counter|none|1|done|3|censored 1|counter|none|2|done|3|censored 2|counter-exit1|none|1|done|1|1 3|counter-exit1|none|2|done|1|1 " \
	"index: 4 cells in spec order; the passing program is censored, the other fails at run 1"
is "$(q "$T/ex" "SELECT count(*) FROM cells WHERE coverage LIKE '%\"sync\":%'")" 4 \
	"index: coverage per metric of every cell"
like "$(q "$T/ex" "SELECT value FROM meta WHERE key = 'spec_hash'")" '^[0-9a-f]{16}$' "index: spec hash"
is "$(ls "$T/ex/cells" | tr '\n' ' ')" \
	"counter-exit1-none-1 counter-exit1-none-2 counter-none-1 counter-none-2 " \
	"one campaign directory per cell"
"$CS" report "$T/ex/cells/counter-none-1" >/dev/null 2>&1
is "$?" 0 "a cell is an ordinary campaign (concsched report)"

# A slower spec to kill midway: 15 runs per passing cell (about 1.3 s a
# cell beside two busy VMs). Its time budget and run timeout, bounds only
# a hang would reach (a cell cut short by them is not redone whole), grow
# with the machine.
sed -e 's/"runs": 3/"runs": 15/' -e 's#\.\./\.\./build#'"$B"'#' \
	-e 's/"seconds": 60/"seconds": '"$(scaled 60)"'/' -e 's/"run_timeout": 10/"run_timeout": '"$(scaled 10)"'/g' \
	"$ROOT/docs/examples/experiment.json" >"$T/spec.json"
# cells_below DIR N [CONDITION]: true while DIR's index holds fewer than N
# cells (that meet CONDITION); polled read-only, so that sqlite3 does not
# create an empty experiment.db before the experiment does (as runs_below).
cells_below() {
	local n
	[ -s "$1/experiment.db" ] || return 0
	n=$(sqlite3 -readonly "$1/experiment.db" "SELECT count(*) FROM cells${3:+ WHERE $3}" 2>/dev/null)
	[ "${n:-0}" -lt "$2" ]
}
setsid "$CS" experiment run "$T/spec.json" -o "$T/k" >"$T/kout" 2>&1 &
pid=$!
# The kill comes once the first cell is done (not after a fixed time); the
# second takes over a second (15 runs), the poll 0.1 s.
gone_within "$(scaled 60)" cells_below "$T/k" 1 "status = 'done'"
{ kill -KILL -- -"$pid"; wait "$pid"; } 2>/dev/null
done1=$(q "$T/k" "SELECT count(*) FROM cells WHERE status = 'done'")
is "$done1" 1 "killed after the first cell: 1 cell done"
uuid0=$(sqlite3 "$T/k/cells/counter-none-1/campaign.db" "SELECT uuid FROM campaign")
"$CS" experiment run "$T/spec.json" -o "$T/k" >"$T/kout2" 2>&1
ok $? "resume"
is "$(q "$T/k" "SELECT group_concat(status) FROM cells")" "done,done,done,done" "resumed: every cell done"
is "$(sqlite3 "$T/k/cells/counter-none-1/campaign.db" "SELECT uuid FROM campaign")" "$uuid0" \
	"resume skipped the done cell (same campaign)"
is "$(grep -c '^cell ' "$T/kout2")" 3 "resume ran the 3 other cells"
is "$(q "$T/k" "SELECT runs FROM cells WHERE idx = 1")" 15 "the interrupted cell was redone whole"

# SIGTERM (as Ctrl-C): the cell in flight ends, is not counted, exit 130.
"$CS" experiment run "$T/spec.json" -o "$T/t" >"$T/tout" 2>"$T/terr" &
pid=$!
# The signal comes once the first cell is in the index as running: the
# experiment stores it after installing its SIGINT/SIGTERM handler
# (before that, SIGTERM kills it: exit 143). The cell runs on after the
# signal (only the experiment gets it) and is then not stored as done.
gone_within "$(scaled 60)" cells_below "$T/t" 1
kill -TERM "$pid"
wait "$pid"
is "$?" 130 "SIGTERM: exit 130"
like "$(cat "$T/terr")" "interrupted: run the same command again to resume" "SIGTERM: says how to resume"
is "$(q "$T/t" "SELECT count(*) FROM cells WHERE status = 'done'")" 0 "SIGTERM: the cell in flight is not done"

# Bad input: one line, exit 2.
err() { "$CS" experiment run "$@" -o "$T/bad" 2>"$T/err" >/dev/null; echo "$? $(wc -l <"$T/err")"; }
is "$(err "$T/none.json")" "2 1" "missing spec: one line, exit 2"
printf '{"programs": [\n  {"path": "x",}\n]}' >"$T/bad.json"
is "$(err "$T/bad.json")" "2 1" "invalid JSON: one line, exit 2"
like "$(cat "$T/err")" "bad.json:2:[0-9]+: invalid JSON" "invalid JSON: line and column"
sed 's/"strategy": "none"/"strategy": "bogus:1"/' "$T/spec.json" >"$T/bad.json"
is "$(err "$T/bad.json")" "2 1" "unknown strategy: one line, exit 2"
sed 's#programs/counter"#programs/no-such-program"#' "$T/spec.json" >"$T/bad.json"
is "$(err "$T/bad.json")" "2 1" "missing program: one line, exit 2"
sed 's/"seeds": \[1, 2\]/"seeds": [1, 3]/' "$T/spec.json" >"$T/other.json"
"$CS" experiment run "$T/other.json" -o "$T/k" >/dev/null 2>"$T/err"
is "$? $(wc -l <"$T/err")" "2 1" "another spec into an experiment directory: one line, exit 2"
"$CS" experiment report "$T" >/dev/null 2>"$T/err"
is "$? $(wc -l <"$T/err")" "2 1" "report of a directory without an experiment: one line, exit 2"

# Report: text, CSV, JSON, HTML.
"$CS" experiment report "$T/ex" --csv "$T/ex.csv" --json "$T/ex.json" --html "$T/ex.html" \
	>"$T/rep" 2>&1
ok $? "report"
like "$(cat "$T/rep")" "counter-exit1 / none: 2 campaigns, failure found in 2 \(100% by 3 runs\)" \
	"report text: found fraction"
like "$(cat "$T/rep")" "censored \(no failure within the budget\) counts as 4 runs" \
	"report text: says how censored campaigns count"
is "$(sed -n 2p "$T/ex.csv" | cut -d, -f1-8)" "counter,none,2,0,0,3,," "csv: censored medians are empty"
is "$(sed -n 3p "$T/ex.csv" | cut -d, -f1-9)" "counter-exit1,none,2,2,1,3,1,1,1" "csv: runs quartiles"
is "$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); g=j["groups"]; print(g[0]["found_by"], g[1]["found_by"], len(j["cells"]))' "$T/ex.json")" \
	"[0, 0, 0, 0] [0, 1, 1, 1] 4" "json: found-by-budget curves and cells"
is "$(grep -c '<polyline class="found-by"' "$T/ex.html")" 2 "html: one found-by curve per program x strategy"

# Coverage curves: per program x metric x strategy, covered tasks after
# run 1..budget; the median and IQR over the seeds, carried forward.
curves=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["coverage_curves"]
print(len({(x["program"], x["metric"]) for x in c}), len(c), sorted({x["program"] for x in c}),
      all(x["run"] == [1, 2, 3] and len(x["median"]) == len(x["q1"]) == len(x["q3"]) == 3 for x in c))' "$T/ex.json")
is "${curves#* }" "6 ['counter', 'counter-exit1'] True" \
	"json: coverage curves per program x metric x strategy, runs 1..3 (budget)"
is "$(grep -c '<svg class="coverage"' "$T/ex.html")" "${curves%% *}" "html: one coverage SVG per program x metric"
is "$(grep -o '<svg class="coverage"[^>]*data-program="counter-exit1"' "$T/ex.html" | wc -l)|$(grep -o '<svg class="coverage"[^>]*data-program="counter"' "$T/ex.html" | wc -l)" \
	"3|3" "html: the coverage SVGs of each program (sp, hbpair, sync)"
is "$(grep -c '<polygon class="iqr"' "$T/ex.html")|$(grep -c '<polyline class="median"' "$T/ex.html")" \
	"6|6" "html: per coverage SVG a band polygon and a median line per strategy"
like "$(grep -c 'keeps its last value' "$T/ex.html")" "^[1-9]" "html: says a stopped campaign is carried forward"
# The same numbers from the cells' campaign.db (run_new_tasks), by hand.
is "$(python3 - "$T/ex" "$T/ex.json" <<'PY'
import json, sqlite3, sys
def q(v, p):  # type 7
    v = sorted(v); h = (len(v) - 1) * p; lo = int(h)
    return v[lo] if lo + 1 >= len(v) else v[lo] + (h - lo) * (v[lo + 1] - v[lo])
j = json.load(open(sys.argv[2])); bad = 0
cells = {(c["program"], c["strategy"]): [] for c in j["cells"]}
for c in j["cells"]:
    cells[(c["program"], c["strategy"])].append(sys.argv[1] + "/" + c["dir"] + "/campaign.db")
for cv in j["coverage_curves"]:
    seeds = []
    for path in cells[(cv["program"], cv["strategy"])]:
        db = sqlite3.connect(path)
        new = dict(db.execute("SELECT run, new_tasks FROM run_new_tasks WHERE metric = ?", (cv["metric"],)).fetchall())
        runs = db.execute("SELECT count(*) FROM runs").fetchone()[0]
        cum, s = [], 0
        for r in range(1, 4):
            s += new.get(r, 0) if r <= runs else 0
            cum.append(s)
        seeds.append(cum)
    for r in range(3):
        v = [c[r] for c in seeds]
        bad += abs(q(v, .25) - cv["q1"][r]) > 1e-9 or abs(q(v, .5) - cv["median"][r]) > 1e-9 or abs(q(v, .75) - cv["q3"][r]) > 1e-9
ex = [cv for cv in j["coverage_curves"] if cv["program"] == "counter-exit1"]
print(bad, all(cv["median"][0] == cv["median"][2] > 0 for cv in ex if cv["metric"] == "sync"))
PY
)" "0 True" "json: the quartiles of the cells' cumulative run_new_tasks; counter-exit1 (failed at run 1) carried forward"
if command -v chromium >/dev/null; then
	screenshot "$T/ex.html" "$T/ex.png"
	# Count (tests/png_pixels.py, as tests/vm/49-schedule.t) non-white
	# pixels, distinct colours, and pixels of the first strategy's
	# translucent fill (#1f77b4 at opacity 0.25 on white: about
	# 199,221,236): its legend swatches (6 x 18 x 10 pixels) and its bands,
	# whose area depends on how the seeds differ.
	shot=$(python3 "$ROOT/tests/png_pixels.py" "$T/ex.png" c7ddec~3)
	set -- $shot
	ok "$([ "${1:-0}" -gt 10000 ] && [ "${2:-0}" -gt 20 ]; echo $?)" \
		"html in headless chromium: not blank (${1:-?} non-white pixels, ${2:-?} colours)"
	ok "$([ "${3:-0}" -gt 900 ]; echo $?)" \
		"html in headless chromium: the translucent band fill is rendered (${3:-?} pixels)"
else
	skip "chromium missing (run: sudo make deps)" "html in headless chromium: not blank"
	skip "chromium missing (run: sudo make deps)" "html in headless chromium: the translucent band fill is rendered"
fi

# Two strategies (both unsteered, told apart by name): a comparison.
sed 's#"strategies": \[ { "strategy": "none", "name": "none" } \]#"strategies": ["none", {"strategy": "none", "name": "none-b", "options": ["--no-follow-forks"]}]#' \
	"$T/spec.json" | sed 's/"runs": 15/"runs": 3/' >"$T/two.json"
"$CS" experiment run "$T/two.json" -o "$T/two" -q &&
	"$CS" experiment report "$T/two" --json - --html "$T/two.html" >"$T/two.out"
ok $? "two strategies: run and report --json -"
is "$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["comparisons"]; print([(x["program"], x["a"], x["b"], x["paired"], x["mann_whitney_p"], x["a12"]) for x in c])' "$T/two.out")" \
	"[('counter', 'none', 'none-b', True, 1, 0.5), ('counter-exit1', 'none', 'none-b', True, 1, 0.5)]" \
	"json: per program a comparison; equal samples: p 1, A12 0.5; seeds pair"
is "$(grep -o '<polygon class="iqr"[^>]*data-strategy="[^"]*"' "$T/two.html" | sed 's/.*data-strategy=//' | sort | uniq -c | awk '{print $1, $2}' | tr '\n' ' ')" \
	'6 "none" 6 "none-b" ' "html, two strategies: a band polygon per strategy in each coverage SVG"

# Coverage comparisons: the stopping metric's coverage at the budget per
# program and pair of strategies (more is better), next to the failure ones.
"$CS" experiment report "$T/two" --comparisons-csv "$T/two-cmp.csv" >"$T/two.txt"
ok $? "two strategies: report --comparisons-csv"
like "$(cat "$T/two.txt")" "comparisons of runs to first failure \(fewer is better; A12 = P\(the first needs more runs\)" \
	"text: the failure comparisons say fewer is better and what A12 is"
like "$(cat "$T/two.txt")" "comparisons of coverage at the budget \(tasks of the stopping metric covered by run 3; more is better; A12 = P\(the first covers more\)" \
	"text: the coverage comparisons say more is better and what A12 is"
like "$(cat "$T/two.txt")" "counter-exit1 \(sp\): none vs none-b: median [0-9.]+ vs [0-9.]+; Mann-Whitney U [0-9.]+, p [0-9.e-]+; A12 [0-9.]+; Wilcoxon W\+ [0-9.]+ \(n [0-9]+\), p " \
	"text: a coverage comparison line (medians, U, p, A12, Wilcoxon: the seeds pair)"
is "$(cut -d, -f1-6 "$T/two-cmp.csv" | tr '\n' ' ')" \
	"program,measure,metric,better,a,b counter,runs_to_failure,,fewer,none,none-b counter-exit1,runs_to_failure,,fewer,none,none-b counter,coverage_at_budget,sp,more,none,none-b counter-exit1,coverage_at_budget,sp,more,none,none-b " \
	"comparisons csv: both measures per program, the metric and which way is better"
is "$(awk -F, 'NR > 1 { print $14 }' "$T/two-cmp.csv" | sort -u | tr '\n' '|')" \
	"P(a covers more)|P(a needs more runs)|" "comparisons csv: a12_means column"
# The JSON's coverage comparisons against the cells' campaign.db by hand:
# sp tasks covered by run 3, U, A12 = P(a covers more), the median.
is "$(python3 - "$T/two" "$T/two.out" <<'PY'
import json, sqlite3, sys
j = json.load(open(sys.argv[2]))
cov = {}
for c in j["cells"]:
    db = sqlite3.connect(sys.argv[1] + "/" + c["dir"] + "/campaign.db")
    v = db.execute("SELECT ifnull(sum(new_tasks), 0) FROM run_new_tasks WHERE metric = 'sp' AND run <= 3").fetchone()[0]
    cov.setdefault((c["program"], c["strategy"]), []).append(v)
def med(v):
    v = sorted(v); n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
bad, out = 0, []
for x in j["coverage_comparisons"]:
    a, b = cov[(x["program"], x["a"])], cov[(x["program"], x["b"])]
    u = sum((p > q) + 0.5 * (p == q) for p in a for q in b)
    bad += abs(u - x["mann_whitney_u"]) > 1e-9 or abs(u / len(a) / len(b) - x["a12"]) > 1e-9
    bad += med(a) != x["median_a"] or med(b) != x["median_b"] or not 0 <= x["mann_whitney_p"] <= 1
    out.append((x["program"], x["metric"], x["a"], x["b"], x["paired"], x["better"],
                x["wilcoxon_w_plus"] is not None))
print(bad, out)
PY
)" "0 [('counter', 'sp', 'none', 'none-b', True, 'more', True), ('counter-exit1', 'sp', 'none', 'none-b', True, 'more', True)]" \
	"json: coverage_comparisons (sp at the budget from the cells' campaign.db: U, A12, medians; paired, Wilcoxon)"
is "$(grep -c '<table class="coverage-comparisons"' "$T/two.html")|$(grep -o '<tr><td>counter[^<]*</td><td>sp</td>' "$T/two.html" | wc -l)" \
	"1|2" "html: the coverage comparisons table, a row per program"

# run --list: the cells and their command lines, nothing run.
"$CS" experiment run --list --shard 2/2 "$ROOT/docs/examples/experiment.json" -o "$T/l" >"$T/list"
is "$?|$(grep -c '^cell ' "$T/list")|$(ls -d "$T/l" 2>/dev/null | wc -l)" "0|2|0" \
	"run --list --shard 2/2: the shard's 2 cells, no directory made"
like "$(sed -n 2p "$T/list")" "^cell 1 counter-none-2: concsched run --strategy=none --runs=3 --time=60 --seed=2 --expect-exit=0 --run-timeout=10 --out=$T/l/cells/counter-none-2 -- /.*/programs/counter locked 20\$" \
	"run --list: a cell's command line"
"$CS" experiment run --list "$T/bad.json" >/dev/null 2>"$T/err"
is "$?|$(wc -l <"$T/err")" "2|1" "run --list of a bad spec: one line, exit 2"
# The study SPECs of docs/studies load (run later, in the VM).
for sp in tsa:120:"--strategy=tsa --estimate-runs 1 --runs=12 --time=300 --seed=1 .*--vm .* -- /.*/study_list" \
	noise:162:"--strategy=random-all@150/sleep:2000-20000,ht --runs=30 --seed=1 .*--run-timeout=3 --access --vm .* -- /.*/race_torn_pair"; do
	IFS=: read -r name ncells want <<<"$sp"
	"$CS" experiment run --list "$ROOT/docs/studies/experiment-$name.json" >"$T/list" 2>"$T/err"
	is "$?|$(grep -c '^cell ' "$T/list")|$(head -1 "$T/list" | sed 's/.*= //')" "0|$ncells|$ncells cells" \
		"docs/studies/experiment-$name.json loads: $ncells cells"
	like "$(sed -n 2p "$T/list")" "$want" "docs/studies/experiment-$name.json: the first cell's command line"
done

# Shards 1/2 and 2/2 merged equal the unsharded run's cells.
"$CS" experiment run "$ROOT/docs/examples/experiment.json" -o "$T/s1" --shard 1/2 -q &&
	"$CS" experiment run "$ROOT/docs/examples/experiment.json" -o "$T/s2" --shard 2/2 -q
ok $? "shards 1/2 and 2/2"
is "$(q "$T/s1" "SELECT group_concat(idx) FROM cells")|$(q "$T/s2" "SELECT group_concat(idx) FROM cells")" \
	"0,2|1,3" "shard I/N takes the cells whose index % N == I-1"
"$CS" experiment merge "$T/s1" "$T/s2" -o "$T/m" >/dev/null
ok $? "merge"
is "$(cells "$T/m")" "$(cells "$T/ex")" "merged shards equal the unsharded run's cells"
is "$(ls "$T/m/cells" | tr '\n' ' ')" "$(ls "$T/ex/cells" | tr '\n' ' ')" "merged: every cell's campaign"
is "$("$CS" experiment merge "$T/s1" -o "$T/m")" "$T/s1: 0 new cells
merged into $T/m" "merging again adds nothing"
"$CS" experiment merge "$T/k" -o "$T/m" >/dev/null 2>"$T/err"
is "$?|$(wc -l <"$T/err")" "2|1" "another spec's directory is refused (one line, exit 2)"
like "$(cat "$T/err")" "holds an experiment of another spec" "  ... saying the specs differ"

done_testing
