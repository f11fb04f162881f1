#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Steered campaign throughput in the VM (make bench; issue 18 item 3): wall
# time of N steered runs of examples/bank with -j 2 (two runs at once, each
# its target steered as if alone: docs/run.md, "Steered runs at once")
# against N with -j 1, under random and pct:2, ROUNDS times interleaved, in
# one VM boot (2 vCPUs), timed inside the guest (boot excluded; the
# campaign's set-up, scheduler load included). --keep-going, no replay
# check: bank fails often, and a check loads a scheduler of its own. Prints
# a markdown section for docs/perf.md; ratios, not assertions.
#   N=200 ROUNDS=3 tools/bench/throughput_vm.sh
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
CS=$here/build/concsched
BANK=$here/build/examples/bank
N=${N:-200}
ROUNDS=${ROUNDS:-3}
STRATS=${STRATS:-"random pct:2"}
[ -x "$CS" ] && [ -x "$BANK" ] || { echo "throughput_vm: build first: make" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

cat >"$T/guest.sh" <<EOF
up() { cut -d' ' -f1 /proc/uptime; }
echo "kernel \$(uname -r)"
r=1
while [ \$r -le $ROUNDS ]; do
	for s in $STRATS; do
		for j in 1 2; do
			rm -rf /tmp/c
			a=\$(up)
			$CS run -s \$s -j \$j -n $N --keep-going --replay-check 0 -o /tmp/c \
				-- $BANK >/dev/null 2>&1
			b=\$(up)
			runs=\$($CS report /tmp/c | sed -n 's/^runs: *\([0-9]*\).*/\1/p')
			fails=\$($CS report /tmp/c | sed -n 's/^failures: *\([0-9]*\).*/\1/p')
			beside=\$($CS report /tmp/c | sed -n 's/^at once: *\([0-9]*\) of.*/\1/p')
			echo "\$r \$s \$j \$a \$b \${runs:-0} \${fails:-0} \${beside:-0}"
		done
	done
	r=\$((r + 1))
done
EOF
"$CS" vm --timeout 3600 --carry "$T/guest.sh" --carry "$BANK" -- sh "$T/guest.sh" \
	>"$T/vm.out" 2>"$T/vm.err"
rc=$?

echo "### Steered runs at once in the VM: $N runs of examples/bank ($(date -u +%F))"
echo
echo "qemu TCG guest, 2 vCPUs, kernel $(sed -n 's/^kernel //p' "$T/vm.out")"
echo "(sched_ext); timed inside the guest, the campaign's set-up included;"
echo "\`--keep-going --replay-check 0\`; $ROUNDS rounds, interleaved."
[ $rc = 0 ] || echo "(the VM failed: exit $rc; $(tail -1 "$T/vm.err"))"
echo
echo "| round | strategy | \`-j 1\` | \`-j 2\` | runs/s, \`-j 2\` / \`-j 1\` |"
echo "|---:|---|---|---|---:|"
declare -A S R F B
while read -r r s j a b runs fails beside; do
	S[$r.$s.$j]=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", b - a }')
	R[$r.$s.$j]=$runs
	F[$r.$s.$j]=$fails
	B[$r.$s.$j]=$beside
done < <(grep -v '^kernel ' "$T/vm.out")
for ((r = 1; r <= ROUNDS; r++)); do
	for s in $STRATS; do
		s1=${S[$r.$s.1]:-0} s2=${S[$r.$s.2]:-0} n1=${R[$r.$s.1]:-0} n2=${R[$r.$s.2]:-0}
		printf '| %d | %s | %s s, %s runs, %s failing | %s s, %s runs, %s failing, %s beside another | %s |\n' \
			"$r" "$s" "$s1" "$n1" "${F[$r.$s.1]:-0}" "$s2" "$n2" "${F[$r.$s.2]:-0}" \
			"${B[$r.$s.2]:-0}" \
			"$(awk -v a="$s1" -v na="$n1" -v b="$s2" -v nb="$n2" \
				'BEGIN { if (a > 0 && b > 0 && na > 0) printf "%.2fx", (nb / b) / (na / a); else print "-" }')"
	done
done
exit $rc
