#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# concsched experiment on the host with strategy none (no sched_ext):
# the example SPEC of docs/examples end to end, the index, a run killed
# midway and resumed, bad input, the report (CSV, JSON, HTML), and shards
# 1/2 + 2/2 merged equal to the unsharded run. Needs root (uprobes).
# timeout: 300
source "$(dirname "$0")/../lib.sh"

need_root
[ -x "$CS" ] && [ -x "$PROGS/counter" ] || skip_all "build first (make)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 missing (run: sudo make deps)"
T=$(mktemp -d /tmp/cs-experiment-t.XXXXXX)
trap 'rm -rf "$T"' EXIT
plan 17

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

# A slower spec to kill midway: 15 runs per passing cell.
sed -e 's/"runs": 3/"runs": 15/' -e 's#\.\./\.\./build#'"$B"'#' \
	"$ROOT/docs/examples/experiment.json" >"$T/spec.json"
setsid "$CS" experiment run "$T/spec.json" -o "$T/k" >"$T/kout" 2>&1 &
pid=$!
for _ in $(seq 100); do
	[ "$(q "$T/k" "SELECT count(*) FROM cells WHERE status = 'done'" 2>/dev/null)" = 1 ] && break
	sleep 0.1
done
kill -KILL -- -"$pid" 2>/dev/null
wait "$pid" 2>/dev/null
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

done_testing
