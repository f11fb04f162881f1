#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 120
# concsched estimate (seed 000's estimation phase) on the host kernel:
# Figure 2 has exactly 10 SP requirements, 2 of them by AC1.
source "$(dirname "$0")/../lib.sh"
need_root
[ -x "$PROGS/fig2" ] || skip_all "build first: make"
command -v python3 >/dev/null || skip_all "python3 missing (run: sudo make deps)"
plan 8
T=$(mktemp -d /tmp/cs-est-XXXXXX)
trap 'rm -rf "$T"' EXIT

out=$("$CS" estimate -- "$PROGS/fig2" 2>&1)
is "$?" 0 "estimate exits 0"
like "$out" '10 SP requirements from 1 observed run' "Figure 2: 10 requirements"
like "$out" 'AC1 kept 2' "two of them same-thread (AC1)"
like "$out" 'thread1\+0x[0-9a-f]+ \(fig2\.c:17\) -> thread2\+0x[0-9a-f]+ \(fig2\.c:29\)' \
	"pairs are named function+offset (file:line)"
"$CS" estimate --json --estimate-runs 2 -- "$PROGS/fig2" >"$T/e.json" 2>/dev/null
is "$?" 0 "--json --estimate-runs 2"
is "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["schema"], d["runs"], len(d["requirements"]), d["stats"]["requirements"])' "$T/e.json")" \
	"concsched.estimate/1 2 10 10" "JSON: schema, runs, the same 10 requirements"
"$CS" estimate -- /nonexistent 2>/dev/null
is "$?" 2 "missing program: exit 2"
"$CS" estimate --estimate-runs 0 -- "$PROGS/fig2" 2>/dev/null
is "$?" 2 "bad --estimate-runs: exit 2"
done_testing
