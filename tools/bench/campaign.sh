#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Campaign benchmark (make bench): on the bundled example, how many runs
# each approach needs to show the bug (plain native reruns, concsched's
# strategies), and what a run costs (native vs under the probes vs steered
# in the VM). Prints a markdown section for docs/perf.md. Ratios, measured
# in one go; nothing here is a pass/fail timing assertion.
#   tools/bench/campaign.sh            N_NATIVE (default 2000) caps native reruns
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
CS=$here/build/concsched
BANK=$here/build/examples/bank
NMAX=${N_NATIVE:-2000}
T=$(mktemp -d /tmp/cs-bench-XXXXXX)
trap 'rm -rf "$T"' EXIT
now() { date +%s.%N; }
dt() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# Native reruns until the first failure.
t0=$(now); n=0; found=-
while [ $n -lt "$NMAX" ]; do
	n=$((n + 1))
	if ! "$BANK" >/dev/null 2>&1; then found=$n; break; fi
done
t1=$(now)
native_per_run=$(awk -v s="$(dt "$t0" "$t1")" -v n=$n 'BEGIN { printf "%.4f", s / n }')

# Under the probes (host): 50 runs of strategy none.
t0=$(now)
"$CS" run -s none -n 50 --keep-going -o "$T/none" -- "$BANK" >/dev/null 2>&1
t1=$(now)
none_per_run=$(awk -v s="$(dt "$t0" "$t1")" 'BEGIN { printf "%.4f", s / 50 }')
read -r none_fail none_nfail < <("$CS" report "$T/none" --json 2>/dev/null | python3 -c '
import json,sys; d=json.load(sys.stdin); f=d["failures"]
print(f[0]["run"] if f else "-", len(f))')

# Steered in the VM: 30 runs per strategy (--keep-going): first failure,
# failing runs, and the cost per run net of the VM boot.
t0=$(now); "$CS" vm -- true >/dev/null 2>&1; boot=$(dt "$t0" "$(now)")
NV=30
rows=""
for s in portfolio random rnd-y:0.1 rnd-s10:0.1 serial:random tsa; do
	opt=(-s "$s"); [ "$s" = serial:random ] && opt=(-s random --serial random)
	t0=$(now)
	"$CS" run --vm "${opt[@]}" -n $NV --keep-going -o "$T/$s" -- "$BANK" >/dev/null 2>&1
	t1=$(now)
	read -r first nfail < <("$CS" report "$T/$s" --json 2>/dev/null | python3 -c '
import json,sys; d=json.load(sys.stdin); f=d["failures"]
print(f[0]["run"] if f else "-", len(f))')
	per=$(awk -v s="$(dt "$t0" "$t1")" -v b="$boot" -v n=$NV 'BEGIN { printf "%.3f", (s - b) / n }')
	rows="$rows| \`$s\` (VM, steered) | $first | $nfail of $NV | $per |"$'\n'
done

echo "## Campaign: runs to the bank bug, and cost per run ($(date -u +%F))"
echo
echo "examples/bank (two tellers, check-then-act). Host: $(uname -r), $(nproc) vCPUs;"
echo "VM: sched_ext kernel under qemu TCG (no KVM). Per-run cost includes launch,"
echo "probe attach/detach, harvest and the store commit; VM rows exclude the VM boot ($boot s)."
echo
echo "| approach | first failing run | failing runs | seconds per run |"
echo "|---|---:|---:|---:|"
echo "| native reruns | ${found/-/none in $NMAX} | - | $native_per_run |"
echo "| \`none\` (host, probes only) | $none_fail | $none_nfail of 50 | $none_per_run |"
printf '%s' "$rows"
echo
echo "Per-run overhead of the probes on the host: $(awk -v a="$none_per_run" -v b="$native_per_run" 'BEGIN { printf "%.1fx", a / b }') the native run."
