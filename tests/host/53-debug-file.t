#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 300
# Separate debug files (docs/races.md "Names"): a stripped racy corpus
# program whose symbols and DWARF sit in a separate debug file, found by
# build ID under $CONCSCHED_DEBUG_ROOT or by .gnu_debuglink in the
# program's .debug/ directory, gets race warnings whose sites and heap
# allocation sites name function and file:line; without the debug file
# the same races are still found (the candidate-site finder disassembles
# .text, which strip keeps) and named object+offset.
source "$(dirname "$0")/../lib.sh"
need_root
[ -x "$PROGS/race_no_lock" ] || skip_all "build first: make"
command -v python3 >/dev/null || skip_all "python3 missing (run: sudo make deps)"
command -v objcopy >/dev/null || skip_all "objcopy missing (binutils)"
plan 6
T=$(mktemp -d /tmp/cs-debugfile-XXXXXX)
trap 'rm -rf "$T"' EXIT

# race_no_lock: --strip-all, its debug file under ROOT/.build-id/NN/REST.debug.
id=$(readelf -n "$PROGS/race_no_lock" | sed -n 's/.*Build ID: //p')
mkdir -p "$T/root/.build-id/${id:0:2}" "$T/empty" "$T/bin/.debug"
objcopy --only-keep-debug "$PROGS/race_no_lock" "$T/root/.build-id/${id:0:2}/${id:2}.debug"
strip --strip-all "$PROGS/race_no_lock" -o "$T/bin/race_no_lock"
# race_uaf: --strip-debug, its debug file linked from .debug/.
objcopy --only-keep-debug "$PROGS/race_uaf" "$T/bin/.debug/race_uaf.debug"
strip --strip-debug "$PROGS/race_uaf" -o "$T/bin/race_uaf"
objcopy --add-gnu-debuglink="$T/bin/.debug/race_uaf.debug" "$T/bin/race_uaf"
strip --strip-all "$T/bin/race_uaf"

# warnings PROG DEBUG-ROOT: "variable: site text | site text" per race
# warning, sorted, first_running left out.
warnings() {
	rm -rf "${T:?}/c"
	CONCSCHED_DEBUG_ROOT=$2 "$CS" run -s none --access -n 1 -o "$T/c" -- "$T/bin/$1" \
		>/dev/null 2>&1
	[ $? -gt 1 ] && echo "run failed" && return
	"$CS" report "$T/c" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("\n".join(sorted({w["variable"] + ": " + " | ".join(s["text"] for s in w["sites"])
                        for w in d["warnings"]
                        if w["kind"] == "race" and w["variable"] != "first_running"})))'
}

w=$(warnings race_no_lock "$T/root")
diag "$w"
like "$w" "^counter: increment [^ ]*race_no_lock.c:[0-9]+ \| increment [^ ]*race_no_lock.c:[0-9]+" \
	"by build ID: the race on counter names increment and race_no_lock.c:line"
is "$(printf '%s\n' "$w" | grep -Evc '^[a-z_]+: [a-z_]+ [^ ]+\.c:[0-9]+ \| [a-z_]+ [^ ]+\.c:[0-9]+$')" 0 \
	"by build ID: every warning names its variable, every site function and line"
w=$(warnings race_no_lock "$T/empty")
diag "$w"
like "$w" "^race_no_lock\+0x[0-9a-f]+: [^ ]*race_no_lock\+0x[0-9a-f]+ \| [^ ]*race_no_lock\+0x[0-9a-f]+" \
	"no debug file: the race is still found, named object+offset"
is "$(printf '%s\n' "$w" | grep -c "race_no_lock.c")" 0 "no debug file: no line"
# the first of up to 8 runs whose user read the session (52-race-corpus:
# a preempted user can find current cleared and skip it)
w=$(first_like 8 '^heap block' warnings race_uaf "$T/empty")
diag "$w"
like "$w" "heap block allocated at main\+0x[0-9a-f]+ \(race_uaf.c:[0-9]+\) \+0x10: [a-z_]+ [^ ]*race_uaf.c:[0-9]+ " \
	"by .gnu_debuglink in .debug/: the heap block by its allocation site, function and line"
like "$w" "^current: [a-z_]+ [^ ]*race_uaf.c:[0-9]+ \| [a-z_]+ [^ ]*race_uaf.c:[0-9]+" \
	"by .gnu_debuglink: the global current and its sites by name and line"
done_testing
