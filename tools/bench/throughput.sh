#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Campaign throughput (make bench; issue 18): wall time of N runs of
# examples/bank under `concsched run -s none` on the host (sync probes,
# oracle, store; no scheduler) against N native runs of it; then NJ runs
# with -j 2 (two runs at once) against NJ with -j 1, ROUNDS times
# interleaved (a shared 2-CPU host is noisy): the campaigns' wall time, and
# their steady rate, runs per second from the start of the 100th run to
# the start of the last (from the store: without the campaign's set-up,
# which -j 2 pays once per worker, in parallel). Prints a markdown section
# for docs/perf.md; ratios, not assertions.
#   N=200 NJ=1000 ROUNDS=3 tools/bench/throughput.sh
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
CS=$here/build/concsched
BANK=$here/build/examples/bank
N=${N:-200}
NJ=${NJ:-1000}
ROUNDS=${ROUNDS:-3}
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
# Runs per second from the 100th run's start to the last run's start.
steady() {
	sqlite3 "$1/campaign.db" "SELECT started_ns FROM runs ORDER BY started_ns" | awk '
		NR == 100 { t0 = $1 } { t = $1; n = NR }
		END { if (n > 100 && t > t0) printf "%.0f", (n - 100) / ((t - t0) / 1e9); else print 0 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "-" }'; }
median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
cpus=$(nproc)
rows=""
walls=""
steadys=""
for ((r = 1; r <= ROUNDS; r++)); do
	j1=$(campaign "$T/j1-$r" 1 "$NJ")
	runs1=$(total "$T/j1-$r")
	s1=$(steady "$T/j1-$r")
	j2=$(campaign "$T/j2-$r" 2 "$NJ")
	runs2=$(total "$T/j2-$r")
	s2=$(steady "$T/j2-$r")
	over2=$(overlapped "$T/j2-$r")
	w=$(awk -v a="$j1" -v na="$runs1" -v b="$j2" -v nb="$runs2" 'BEGIN { printf "%.2f", (nb / b) / (na / a) }')
	st=$(ratio "$s1" "$s2")
	walls="$walls $w"
	steadys="$steadys $st"
	rows="$rows| $r | $j1 s, $runs1 runs ($(awk -v s="$j1" -v n="$runs1" 'BEGIN { printf "%.0f", n / s }')/s) | $j2 s, $runs2 runs ($(awk -v s="$j2" -v n="$runs2" 'BEGIN { printf "%.0f", n / s }')/s; $over2 beside another) | ${w}x | $s1 / $s2 = ${st}x |
"
	rm -rf "$T/j1-$r" "$T/j2-$r"
done

echo "### Campaign throughput: $N runs of examples/bank ($(date -u +%Y-%m-%d), $cpus CPUs)"
echo
echo "| | seconds | per run | vs native |"
echo "|---|---:|---:|---:|"
echo "| native, $N runs | $native | $(awk -v s="$native" -v n="$N" 'BEGIN { printf "%.4f", s / n }') | 1x |"
echo "| \`run -s none\`, $runs runs (host) | $none | $(awk -v s="$none" -v n="$runs" 'BEGIN { printf "%.4f", s / n }') | $(awk -v a="$none" -v b="$native" 'BEGIN { printf "%.1fx", a / b }') |"
echo
echo "\`run -s none\`, $NJ runs, $ROUNDS rounds interleaved:"
echo
echo "| round | \`-j 1\` | \`-j 2\` | runs/s, \`-j 2\` / \`-j 1\` | steady runs/s, \`-j 1\` / \`-j 2\` |"
echo "|---:|---|---|---:|---:|"
printf '%s' "$rows"
echo
echo "Runs per second, \`-j 2\` against \`-j 1\` on $cpus CPUs, median of $ROUNDS: $(echo $walls | median)x for the whole campaigns, $(echo $steadys | median)x steady (issue 18's target: at least 1.7x on 2 CPUs)."
