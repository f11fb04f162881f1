#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/study/null_appender.sh — runs to the first failure of strategy map
# on tests/programs/null_appender (docs/metrics.md "NullAppender"): one
# campaign per seed, -n 30, in one VM boot; prints the runs to the first
# SIGSEGV for each seed and the median.
#
#   tools/study/null_appender.sh [SEEDS]      (default "1 2 3 4 5 6 7 8 9 10")
#
# Environment: CONCSCHED (default build/concsched), NA_STRATEGY (default map),
# NA_RUNS (default 30).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cs=${CONCSCHED:-$root/build/concsched}
prog=$root/build/tests/programs/null_appender
seeds=${1:-1 2 3 4 5 6 7 8 9 10}
strategy=${NA_STRATEGY:-map}
runs=${NA_RUNS:-30}
out=$(mktemp -d /tmp/cs-na-XXXXXX)
trap 'rm -rf "$out"' EXIT
"$cs" vm -t 1800 -C "$prog" -o "$out" -- sh -c "
for s in $seeds; do
	$cs run -s $strategy -n $runs --seed \$s -o /out/na-\$s -- $prog >/dev/null 2>&1
done" >/dev/null 2>"$out/vm.err" || true
for s in $seeds; do
	first=$("$cs" report "$out/na-$s" --json 2>/dev/null |
		python3 -c 'import json,sys; d=json.load(sys.stdin); f=d["failures"]; print(f[0]["run"] if f else "none")' ||
		echo "none")
	echo "seed $s: first failure at run $first"
done | tee "$out/table"
awk '$NF != "none" { v[n++] = $NF } END {
	if (!n) { print "no seed found it"; exit }
	for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	m = n % 2 ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2
	printf "%d of %d seeds found it; median %s runs, max %s\n", n, NR, m, v[n - 1] }' "$out/table"
