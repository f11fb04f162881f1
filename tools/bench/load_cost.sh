#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Probe objects' load cost (issue 18): per program, the verifier's time and
# the instructions it processed, and the whole load's wall time (medians of
# 5 loads). Every campaign, `observe` and `-j` worker pays this once. Needs
# root. Prints markdown tables for docs/perf.md.
#   sudo tools/bench/load_cost.sh [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
bin=$build/bench/load_cost
[ "$(id -u)" = 0 ] || { echo "load_cost.sh: needs root (BPF)" >&2; exit 2; }
[ -x "$bin" ] || { echo "load_cost.sh: build first: make" >&2; exit 2; }
echo "## Probe objects' load ($(uname -r), $(nproc) CPUs, $(date -u +%F))"
for o in sync access; do
	echo
	echo "\`$o.bpf.o\`:"
	echo
	"$bin" "$build/bpf/$o.bpf.o" "${1:-5}"
done
