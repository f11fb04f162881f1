#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Campaign throughput (make bench; issue 18): wall time of N runs of
# examples/bank under `concsched run -s none` on the host (sync probes,
# oracle, store; no scheduler) against N native runs of it; then NJ runs
# with -j 2 (two runs at once) against NJ with -j 1 (NJ large enough that
# the second worker's probe object, loaded once, is not what is measured).
# Measured one after the other in one go. Prints a markdown section for
# docs/perf.md; ratios, not assertions.
#   N=200 NJ=1000 tools/bench/throughput.sh
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
CS=$here/build/concsched
BANK=$here/build/examples/bank
N=${N:-200}
NJ=${NJ:-1000}
[ -x "$CS" ] && [ -x "$BANK" ] || { echo "throughput: build first: make" >&2; exit 2; }
T=$(mktemp -d /tmp/cs-tput-XXXXXX)
trap 'rm -rf "$T"' EXIT
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
total() { "$CS" report "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"]["total"])'; }
overlapped() { "$CS" report "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"]["overlapped"])'; }
campaign() { # campaign DIR JOBS RUNS: seconds
	local t0
	t0=$(now)
	"$CS" run -s none -n "$3" -j "$2" --keep-going -o "$1" -- "$BANK" >/dev/null 2>&1
	secs "$t0" "$(now)"
}
per_run() { awk -v s="$1" -v n="$2" 'BEGIN { printf "%.4f", s / n }'; }

t0=$(now)
for ((i = 0; i < N; i++)); do "$BANK" >/dev/null 2>&1; done
native=$(secs "$t0" "$(now)")
none=$(campaign "$T/none" 1 "$N")
runs=$(total "$T/none")
j1=$(campaign "$T/j1" 1 "$NJ")
runs1=$(total "$T/j1")
j2=$(campaign "$T/j2" 2 "$NJ")
runs2=$(total "$T/j2")
over2=$(overlapped "$T/j2")
cpus=$(nproc)

echo "### Campaign throughput: $N runs of examples/bank ($(date -u +%Y-%m-%d), $cpus CPUs)"
echo
echo "| | seconds | per run | vs native |"
echo "|---|---:|---:|---:|"
echo "| native, $N runs | $native | $(awk -v s="$native" -v n="$N" 'BEGIN { printf "%.4f", s / n }') | 1x |"
echo "| \`run -s none\`, $runs runs (host) | $none | $(awk -v s="$none" -v n="$runs" 'BEGIN { printf "%.4f", s / n }') | $(awk -v a="$none" -v b="$native" 'BEGIN { printf "%.1fx", a / b }') |"
echo
echo "| $NJ runs | seconds | per run | runs/s |"
echo "|---|---:|---:|---:|"
echo "| \`run -s none -j 1\`, $runs1 runs | $j1 | $(per_run "$j1" "$runs1") | $(awk -v s="$j1" -v n="$runs1" 'BEGIN { printf "%.0f", n / s }') |"
echo "| \`run -s none -j 2\`, $runs2 runs ($over2 ran beside another) | $j2 | $(per_run "$j2" "$runs2") | $(awk -v s="$j2" -v n="$runs2" 'BEGIN { printf "%.0f", n / s }') |"
echo
echo "Runs per second, \`-j 2\` against \`-j 1\` on $cpus CPUs: $(awk -v a="$j1" -v na="$runs1" -v b="$j2" -v nb="$runs2" 'BEGIN { printf "%.2fx", (nb / b) / (na / a) }') (issue 18's target: at least 1.7x on 2 CPUs)."
