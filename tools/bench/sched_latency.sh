#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Scheduler mechanism latencies (issue 4 item 5), measured in one VM boot
# by the scheduler itself (bpf_ktime_get_ns in the BPF programs):
#  - probe -> parked: from the decision point to ops.enqueue parking the
#    thread (the kick's self-IPI and the preemption);
#  - release -> run: from the SEC("syscall") release program marking a
#    parked thread released to that thread running again (ops.running);
#  - delay lateness: running - (probe timestamp + n) for delays of n =
#    50 us, 200 us, 1 ms, 5 ms (bpf_timer with BPF_F_TIMER_ABS).
# Prints a markdown section for docs/perf.md naming the machine and the
# emulation mode.   sudo tools/bench/sched_latency.sh [SAMPLES]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
cs=$build/concsched
progs=$build/tests/programs
n=${1:-200}
[ "$(id -u)" = 0 ] || { echo "sched_latency.sh: needs root (VM, BPF)" >&2; exit 2; }
[ -x "$cs" ] && [ -x "$progs/marker_loop" ] || { echo "sched_latency.sh: build first: make" >&2; exit 2; }
work=$(mktemp -d /tmp/sched-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

cat >"$work/guest.sh" <<GUEST
#!/bin/sh
echo "== uname"
uname -r
echo "== release"
"$cs" sched --park-at marker -- "$progs/marker_loop" $n 1 200 2>/dev/null
for d in 50 200 1000 5000; do
	echo "== delay\$d"
	"$cs" sched --delay-at marker:\$d -- "$progs/marker_loop" $n 1 200 2>/dev/null
done
GUEST
chmod +x "$work/guest.sh"
"$cs" vm --verbose --timeout 900 --carry "$progs" -- "$work/guest.sh" >"$work/out" 2>"$work/err" || {
	echo "sched_latency.sh: the VM run failed:" >&2
	tail -5 "$work/err" >&2
	exit 1
}
accel=$(sed -n 's/^concsched: vm: \([a-z]*\),.*/\1/p' "$work/err" | head -1)
[ "$accel" = tcg ] && accel="TCG (-accel tcg,thread=single)"
json() { awk -v n="== $1" '$0 == n { on = 1; next } /^== / { on = 0 } on && /^\{/' "$work/out"; }
row() { # row LABEL JSON OBJ
	printf '%s' "$2" | grep -o "\"$3\":{[^}]*}" | sed 's/^[^{]*{//; s/[}"]//g' | awk -v l="$1" -F'[:,]' \
		'{ for (i = 1; i < NF; i += 2) v[$i] = $(i + 1); printf "| %s | %s | %.0f | %.0f | %.0f |\n", l, v["n"], v["p50"], v["p90"], v["max"] }'
}
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "## scheduler latencies (guest $(awk '$0 == "== uname" { getline; print; exit }' "$work/out"), $accel, 2 vCPUs; host $cpu, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%F))"
echo
echo "microseconds, measured in BPF; $n samples each"
echo
echo "| what | n | p50 | p90 | max |"
echo "|---|---:|---:|---:|---:|"
row "probe -> parked (synchronous park)" "$(json release)" probe_to_park_us
row "release -> run (park, userspace release)" "$(json release)" release_to_run_us
for d in 50 200 1000 5000; do
	row "delay ${d} us: lateness" "$(json delay$d)" delay_late_us
done
