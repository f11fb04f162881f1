#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Whole-run cost (make bench): the slowdown of one run of a target under
# concsched against the same run without it, on two tests/programs targets
# (the unprotected counter and the NullAppender port), measured in one go:
#   host: native, sync probes (`run -s none`), sync + access probes
#         (`run -s none --access`, shared sites only after the estimation run);
#   VM (sched_ext, one boot): native, `run -s none`, `run -s random` (steered
#         at synchronization points), `run -s map` (access
#         probes + MAP-directed parking), timed inside the guest so the boot
#         is not counted.
# Seconds per run include launch, probe attach/detach, harvest and the store
# commit. Prints a markdown section for docs/perf.md; ratios, not assertions.
#   tools/bench/run_cost.sh         K (default 20) runs per row
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
CS=$here/build/concsched
PROGS=$here/build/tests/programs
K=${K:-20}
KN=$((K * 10)) # native runs are cheap: more of them for a stable mean
T=$(mktemp -d /tmp/cs-runcost-XXXXXX)
trap 'rm -rf "$T"' EXIT
for p in counter null_appender; do
	[ -x "$PROGS/$p" ] || { echo "run_cost: build first (make): no $PROGS/$p" >&2; exit 2; }
done
# target name -> command line
targets=("counter racy 200" "null_appender")

now() { date +%s.%N; }
per() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.4f", (b - a) / n }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }'; }

# ---- host --------------------------------------------------------------------
declare -A H
for t in "${targets[@]}"; do
	read -r -a argv <<<"$t"
	name=${argv[0]}
	cmd=("$PROGS/$name" "${argv[@]:1}")
	t0=$(now)
	for ((i = 0; i < KN; i++)); do "${cmd[@]}" >/dev/null 2>&1; done
	H[$name.native]=$(per "$t0" "$(now)" $KN)
	t0=$(now)
	"$CS" run -s none -n "$K" --keep-going -o "$T/h-$name-none" -- "${cmd[@]}" >/dev/null 2>&1
	H[$name.none]=$(per "$t0" "$(now)" "$K")
	t0=$(now)
	"$CS" run -s none --access -n "$K" --keep-going -o "$T/h-$name-acc" -- "${cmd[@]}" \
		>/dev/null 2>&1
	H[$name.access]=$(per "$t0" "$(now)" "$K")
done

# ---- VM: one boot, timed inside the guest ------------------------------------
cat >"$T/guest.sh" <<EOF
up() { cut -d' ' -f1 /proc/uptime; }
for t in "counter racy 200" null_appender; do
	set -- \$t; name=\$1; shift
	a=\$(up); i=0
	while [ \$i -lt $KN ]; do $PROGS/\$name "\$@" >/dev/null 2>&1; i=\$((i + 1)); done
	echo "\$name native \$a \$(up) $KN"
	for s in none random map; do
		a=\$(up)
		$CS run -s \$s -n $K --keep-going -o /tmp/c-\$name-\$s -- $PROGS/\$name "\$@" \
			>/dev/null 2>&1
		echo "\$name \$s \$a \$(up) $K"
	done
done
EOF
"$CS" vm --timeout 1800 --carry "$T/guest.sh" --carry "$PROGS/counter" \
	--carry "$PROGS/null_appender" -- sh "$T/guest.sh" >"$T/vm.out" 2>"$T/vm.err"
rc=$?
declare -A V
while read -r name what a b n; do
	V[$name.$what]=$(per "$a" "$b" "$n")
done <"$T/vm.out"

echo "## Whole-run cost: native vs probes vs \`map\` ($(date -u +%F))"
echo
echo "Host: $(uname -r), $(nproc) vCPUs, no sched_ext. VM: sched_ext guest under"
echo "qemu TCG (no KVM), timed inside the guest (boot excluded). $K runs per"
echo "concsched row, $KN native runs. Seconds per run (ratio to native on the same"
echo "kernel). \`counter racy 200\`: two threads, 200 unprotected increments each;"
echo "\`null_appender\`: one read-check-dereference against one write."
[ $rc = 0 ] || echo "(the VM part failed: exit $rc; $(head -1 "$T/vm.err"))"
echo
echo "| target | host native | host \`none\` (sync probes) | host \`none --access\` | VM native | VM \`none\` | VM \`random\` (steered) | VM \`map\` |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for t in "${targets[@]}"; do
	name=${t%% *}
	hn=${H[$name.native]} vn=${V[$name.native]:-0}
	printf '| `%s` | %s | %s (%s) | %s (%s) | %s | %s (%s) | %s (%s) | %s (%s) |\n' "$t" \
		"$hn" "${H[$name.none]}" "$(ratio "${H[$name.none]}" "$hn")" \
		"${H[$name.access]}" "$(ratio "${H[$name.access]}" "$hn")" \
		"${V[$name.native]:--}" "${V[$name.none]:--}" "$(ratio "${V[$name.none]:-0}" "$vn")" \
		"${V[$name.random]:--}" "$(ratio "${V[$name.random]:-0}" "$vn")" \
		"${V[$name.map]:--}" "$(ratio "${V[$name.map]:-0}" "$vn")"
done
exit $rc
