#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Per-event cost against the tool users run instead (make bench; issue 18
# item 4): wall time of `concsched observe` on tests/programs/lock_heavy
# (8 threads x 3,000 rounds of mutex lock / unlock and trylock / unlock)
# against Helgrind on it and against the native run, one after the other,
# alternating, medians of R rounds (default 5). Prints a markdown section
# for docs/perf.md; a ratio, not an assertion. Needs root (uprobes).
#   tools/bench/observe_cost.sh      R rounds (default 5)
# OLD=path/to/another/concsched adds a column for it (a build before a
# change, measured in the same rounds). Helgrind runs against a private
# copy of libc: another concsched on the machine with uprobes on libc's
# pthread functions would otherwise stop valgrind on their breakpoints
# (SIGTRAP, exit 133).
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
CS=${CONCSCHED:-$here/build/concsched}
P=$here/build/tests/programs/lock_heavy
R=${R:-5}
[ "$(id -u)" = 0 ] || { echo "observe_cost: needs root (uprobes)" >&2; exit 2; }
[ -x "$CS" ] && [ -x "$P" ] || { echo "observe_cost: build first: make" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "observe_cost: no valgrind (make deps installs it)" >&2; exit 2; }
T=$(mktemp -d /tmp/cs-obscost-XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir "$T/lib"
cp "$(ldd "$P" | awk '/libc.so/ { print $3 }')" "$T/lib/"
now() { date +%s.%N; }
timed() { # NAME CMD...: append the seconds CMD took to $T/NAME; fail if it fails
	local name=$1 t0 rc
	shift
	t0=$(now)
	"$@" >"$T/out" 2>&1
	rc=$?
	awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f\n", b - a }' >>"$T/$name"
	[ $rc = 0 ] || { echo "observe_cost: $name failed (exit $rc):" >&2; tail -3 "$T/out" >&2; exit 1; }
}
median() { sort -n "$T/$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for ((r = 0; r < R; r++)); do
	timed native "$P"
	timed observe "$CS" observe -o "$T/report" -- "$P"
	[ -n "${OLD:-}" ] && timed old "$OLD" observe -o "$T/report" -- "$P"
	timed helgrind env LD_LIBRARY_PATH="$T/lib" valgrind --tool=helgrind --error-exitcode=3 -q "$P"
done
grep -q "^sp tasks:" "$T/report" || { echo "observe_cost: observe printed no coverage" >&2; exit 1; }
n=$(median native) o=$(median observe) h=$(median helgrind)
echo "### \`observe\` vs Helgrind on lock_heavy ($(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs)"
echo
echo "Medians of $R alternating rounds, seconds of wall time."
echo
echo "| | seconds | vs native | vs Helgrind |"
echo "|---|---:|---:|---:|"
echo "| native | $n | 1x | |"
echo "| Helgrind | $h | $(awk -v a="$h" -v b="$n" 'BEGIN { printf "%.1fx", a / b }') | 1x |"
echo "| \`concsched observe\` | $o | $(awk -v a="$o" -v b="$n" 'BEGIN { printf "%.1fx", a / b }') | $(awk -v a="$o" -v b="$h" 'BEGIN { printf "%.2fx", a / b }') |"
if [ -n "${OLD:-}" ]; then
	d=$(median old)
	echo "| \`observe\` of $OLD | $d | $(awk -v a="$d" -v b="$n" 'BEGIN { printf "%.1fx", a / b }') | $(awk -v a="$d" -v b="$h" 'BEGIN { printf "%.2fx", a / b }') |"
fi
echo
echo "Target (issue 18): \`observe\` at most 0.5x Helgrind's time."
