#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The real-software corpus, compressors (make bench-real; issue 32 item
# 3, the part done): pigz, pbzip2, lbzip2, xz and zstd with two threads
# each on 2 MB of generated text (a fixed word list, seeded). For each:
# the native time; `concsched run -s none` and `run -s none --access`
# (one test run each, N campaigns, default 1) with their time, failures
# and race warnings, every run checked by a round trip (--check: the
# output decompressed must equal the input; a crash or a hang fails the
# run too); and Helgrind on the same command (its "Possible data race"
# contexts). Prints a markdown table (docs/races.md). Host only (strategy
# none needs no sched_ext); the steered VM campaigns and the servers of
# the issue (sqlite3, memcached, redis) are not here yet.
# Needs root (uprobes) and the packages of make deps.
#   tools/bench/real.sh          N=3 tools/bench/real.sh
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
CS=${CONCSCHED:-$here/build/concsched}
N=${N:-1}
[ "$(id -u)" = 0 ] || { echo "real: needs root (uprobes)" >&2; exit 2; }
[ -x "$CS" ] || { echo "real: build first: make" >&2; exit 2; }
for t in pigz pbzip2 lbzip2 xz zstd valgrind python3; do
	command -v $t >/dev/null || { echo "real: no $t (make deps installs it)" >&2; exit 2; }
done
T=$(mktemp -d /tmp/cs-real-XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir "$T/lib"
# Helgrind runs against a private copy of libc: another concsched's
# uprobes on libc would stop valgrind on their breakpoints.
cp "$(ldd "$(command -v pigz)" | awk '/libc.so/ { print $3 }')" "$T/lib/"
"$here/tools/bench/gen_text.py" "$T/text"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# campaign RUN-OPTS... -- CMD...: "failures / race warnings / seconds"
campaign() {
	local t0 out
	rm -rf "$T/camp"
	t0=$(now)
	"$CS" run -o "$T/camp" "$@" >/dev/null 2>"$T/err"
	out=$("$CS" report "$T/camp" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(len(d["failures"]), sum(w["kind"] == "race" for w in d["warnings"]))') ||
		{ echo "error: $(tail -1 "$T/err")"; return; }
	echo "${out% *} / ${out#* } / $(secs "$t0") s"
}

row() { # DECOMPRESS CMD...
	local dec=$1 t0 hg
	shift
	local chk="$dec <\"\$CONCSCHED_OUT_FILE\" | cmp -s - $T/text"
	t0=$(now)
	"$@" "$T/text" >"$T/native.out"
	local nat
	nat=$(secs "$t0")
	$dec <"$T/native.out" | cmp -s - "$T/text" || nat="$nat (round trip FAILED)"
	for ((i = 1; i <= N; i++)); do
		t0=$(now)
		LD_LIBRARY_PATH=$T/lib valgrind --tool=helgrind "$@" "$T/text" >/dev/null 2>"$T/hg"
		hg="$(grep -c 'Possible data race' "$T/hg") / $(secs "$t0") s"
		echo "| \`$* FILE\` | $i | $nat s | $(campaign -s none -n 1 --check "$chk" -- "$@" "$T/text") | $(campaign -s none --access -n 1 --check "$chk" -- "$@" "$T/text") | $hg |"
	done
}

echo "| command | campaign | native | run -s none: failures / warnings / time | run -s none --access: failures / race warnings / time | Helgrind: races / time |"
echo "|---|---|---|---|---|---|"
row "pigz -dc" pigz -p 2 -c
row "pbzip2 -dc" pbzip2 -p2 -c
row "lbzip2 -dc" lbzip2 -n 2 -c
row "xz -dc" xz -T2 -c
row "zstd -dc" zstd -T2 -c
