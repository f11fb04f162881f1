#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Race warnings on real threaded programs against Helgrind's (issue 32):
# pigz -p 2 -c and zstd -T2 -c on 2 MB of generated text (a fixed word
# list, seeded), each R times (default 3) under
#   concsched run -s none --access -n 1
# (the warnings its report lists, and its wall time) and under
#   valgrind --tool=helgrind
# (its "Possible data race" contexts, and its wall time), with the native
# time. Prints a markdown table for docs/races.md. Needs root (uprobes),
# pigz, zstd and valgrind (make deps installs them).
#   tools/bench/race_warnings.sh
# OLD=path/to/another/concsched adds a column for it (a build before a
# change, same inputs). Helgrind runs against a private copy of libc: a
# concsched elsewhere on the machine with uprobes on libc's pthread
# functions would otherwise make valgrind stop on their breakpoints.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
CS=${CONCSCHED:-$here/build/concsched}
OLD=${OLD:-}
R=${R:-3}
[ "$(id -u)" = 0 ] || { echo "race_warnings: needs root (uprobes)" >&2; exit 2; }
[ -x "$CS" ] || { echo "race_warnings: build first: make" >&2; exit 2; }
for t in pigz zstd valgrind python3; do
	command -v $t >/dev/null || { echo "race_warnings: no $t (make deps installs it)" >&2; exit 2; }
done
T=$(mktemp -d /tmp/cs-racewarn-XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir "$T/lib"
cp "$(ldd "$(command -v pigz)" | awk '/libc.so/ { print $3 }')" "$T/lib/"
"$here/tools/bench/gen_text.py" "$T/text"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# warnings CS CMD...: "N race warnings, S s" of one campaign
warnings() {
	local cs=$1 t0 n
	shift
	rm -rf "$T/camp"
	t0=$(now)
	"$cs" run -s none --access -n 1 -o "$T/camp" -- "$@" >/dev/null 2>"$T/err" ||
		{ echo "failed"; return; }
	n=$("$cs" report "$T/camp" --json |
		python3 -c 'import json,sys; print(sum(w["kind"] == "race" for w in json.load(sys.stdin)["warnings"]))')
	echo "$n / $(secs "$t0") s"
}

helgrind() {
	local t0=$(now)
	LD_LIBRARY_PATH=$T/lib valgrind --tool=helgrind "$@" >/dev/null 2>"$T/hg"
	echo "$(grep -c 'Possible data race' "$T/hg") / $(secs "$t0") s"
}

native() {
	local t0=$(now)
	"$@" >/dev/null
	echo "$(secs "$t0") s"
}

echo "| program | round | native | concsched warnings / time${OLD:+ | before (OLD) warnings / time} | Helgrind races / time |"
echo "|---|---|---|---|${OLD:+---|}---|"
for prog in "pigz -p 2 -c" "zstd -T2 -c"; do
	for ((i = 1; i <= R; i++)); do
		# shellcheck disable=SC2086
		echo "| \`$prog\` | $i | $(native $prog "$T/text") | $(warnings "$CS" $prog "$T/text")${OLD:+ | $(warnings "$OLD" $prog "$T/text")} | $(helgrind $prog "$T/text") |"
	done
done
