#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Access-probe costs (issue 7 item 8): attach time of 1,000 and 10,000
# sites, per-hit cost of an access probe vs a bare uprobe on the same
# instruction. Needs root. Prints a markdown table for docs/perf.md.
#   sudo tools/bench/access_cost.sh [LOOPS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${BUILD:-$root/build}/bench/access_cost
[ "$(id -u)" = 0 ] || { echo "access_cost.sh: needs root (uprobes)" >&2; exit 2; }
[ -x "$bin" ] || { echo "access_cost.sh: build first: make" >&2; exit 2; }
echo "## access probes ($(uname -r), $(nproc) CPUs, $(date -u +%F))"
echo
"$bin" "${1:-20000}"
