#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 600
# Strategy tsa (seed 000's Algorithm 1) under the scheduler in the VM:
# on Figure 2 without its forced order, tsa covers all 10 estimated SP
# requirements within 30 runs, the report shows the estimation precision
# and which rules released threads, and a tsa run replays.
source "$(dirname "$0")/../lib.sh"
need_vm
P=$PROGS/fig2free
[ -x "$P" ] || skip_all "build first: make"
command -v python3 >/dev/null || skip_all "python3 missing (run: sudo make deps)"
plan 9
T=$(mktemp -d /tmp/cs-tsa-XXXXXX)
trap 'rm -rf "$T"' EXIT
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

"$CS" run --vm -s tsa --estimate-runs 3 -n 30 --keep-going -o "$T/tsa" -- "$P" >/dev/null 2>"$T/err"
is "$?" 0 "tsa campaign on fig2free: no failure, exit 0"
like "$(cat "$T/err")" 'tsa: [0-9]+ SP requirements from 3 observed runs' "estimation announced"
"$CS" report "$T/tsa" --json >"$T/tsa.json"
sp='[m for m in d["metrics"] if m["name"]=="sp"][0]'
is "$(jget "$T/tsa.json" "$sp[\"estimated\"]")" 10 "10 requirements stored"
is "$(jget "$T/tsa.json" "$sp[\"covered_estimated\"]")" 10 "all 10 covered"
is "$(jget "$T/tsa.json" "$sp[\"false_positives\"]")" 0 "no false positives left"
like "$(jget "$T/tsa.json" 'd["releases"]["rule1"]')" '^[1-9]' "rule 1 released threads"
like "$("$CS" report "$T/tsa")" 'releases: +rule 1 [0-9]+, rule 2 [0-9]+, rule 3 [0-9]+, random 0' \
	"text report: release rules (tsa never releases at random)"
"$CS" replay "$T/tsa" --run 1 --vm >"$T/rep" 2>&1
is "$?" 0 "a tsa run replays (it passed, so exit 0)"
like "$(cat "$T/rep")" 'replay 1/1: pass' "replay outcome printed"
done_testing
