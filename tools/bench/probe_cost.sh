#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sync-probe costs (issue 3 item 7): ns per call of each probed pthread
# function with no probe, a bare uprobe (empty BPF program), a bare
# uprobe + uretprobe, and concsched's sync probes, in one run (medians of
# 5 alternating rounds). Needs root. Prints a markdown table for docs/perf.md.
#   sudo tools/bench/probe_cost.sh [CALLS-PER-CELL]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${BUILD:-$root/build}/bench/probe_cost
[ "$(id -u)" = 0 ] || { echo "probe_cost.sh: needs root (uprobes)" >&2; exit 2; }
[ -x "$bin" ] || { echo "probe_cost.sh: build first: make" >&2; exit 2; }
echo "## sync probes ($(uname -r), $(nproc) CPUs, $(ldd --version | head -1 | sed 's/.* //') glibc, $(date -u +%F))"
echo
echo "ns per call (the probed call plus its unprobed partner, e.g. the unlock after a lock)"
echo
"$bin" "${1:-2000}"
