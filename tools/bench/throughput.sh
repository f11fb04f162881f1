#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Campaign throughput (make bench; issue 18): wall time of N runs of
# examples/bank under `concsched run -s none` on the host (sync probes,
# oracle, store; no scheduler) against N native runs of it, measured one
# after the other in one go. Prints a markdown section for docs/perf.md;
# a ratio, not an assertion.
#   tools/bench/throughput.sh        N (default 200) runs each
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
CS=$here/build/concsched
BANK=$here/build/examples/bank
N=${N:-200}
[ -x "$CS" ] && [ -x "$BANK" ] || { echo "throughput: build first: make" >&2; exit 2; }
T=$(mktemp -d /tmp/cs-tput-XXXXXX)
trap 'rm -rf "$T"' EXIT
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

t0=$(now)
for ((i = 0; i < N; i++)); do "$BANK" >/dev/null 2>&1; done
native=$(secs "$t0" "$(now)")
t0=$(now)
"$CS" run -s none -n "$N" --keep-going -o "$T/none" -- "$BANK" >/dev/null 2>&1
none=$(secs "$t0" "$(now)")
runs=$("$CS" report "$T/none" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"]["total"])')

echo "### Campaign throughput: $N runs of examples/bank ($(date -u +%Y-%m-%d))"
echo
echo "| | seconds | per run | vs native |"
echo "|---|---:|---:|---:|"
echo "| native, $N runs | $native | $(awk -v s="$native" -v n="$N" 'BEGIN { printf "%.4f", s / n }') | 1x |"
echo "| \`run -s none\`, $runs runs (host) | $none | $(awk -v s="$none" -v n="$runs" 'BEGIN { printf "%.4f", s / n }') | $(awk -v a="$none" -v b="$native" 'BEGIN { printf "%.1fx", a / b }') |"
