#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 600
# Race warnings on the test-program corpus (run -s none --access, one
# test run each, host kernel): recall and false alarms of the
# happens-before detector (docs/races.md). Each race_ program's data race
# is warned about, in every schedule (the racing accesses are unordered
# whichever runs first); race_split_cs's bug is an atomicity violation
# with every access under its lock: no data race. The correct clean_
# programs give no warning, except clean_spinflag, whose flags are
# published with release stores and acquire loads: on x86 those are plain
# movs, which the detector cannot tell from plain accesses (Helgrind
# warns there too). The first_running flag of the race_ programs is the
# same kind (__atomic, plain movs) and is not counted here.
source "$(dirname "$0")/../lib.sh"
need_root
[ -x "$PROGS/race_no_lock" ] || skip_all "build first: make"
command -v python3 >/dev/null || skip_all "python3 missing (run: sudo make deps)"
plan 19
T=$(mktemp -d /tmp/cs-racecorpus-XXXXXX)
trap 'rm -rf "$T"' EXIT

# vars PROG [RUN-OPTION...]: the variables it was warned about, sorted,
# comma-separated, first_running left out.
vars() {
	local p=$1
	shift
	rm -rf "${T:?}/$p"
	# Exit 1 is the program's own bug showing in this run (the probes widen
	# its window now and then): its warnings are stored all the same.
	"$CS" run -s none --access -n 1 "$@" -o "$T/$p" -- "$PROGS/$p" >/dev/null 2>&1
	local rc=$?
	if [ "$rc" -gt 1 ]; then
		echo "run failed: $rc"
		return
	fi
	"$CS" report "$T/$p" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(",".join(sorted({w["variable"] for w in d["warnings"]
                       if w["kind"] == "race" and w["variable"] != "first_running"})))'
}

is "$(vars race_torn_pair)" "x,y" "race_torn_pair: the torn pair x, y"
is "$(vars race_wrong_lock)" "hits" "race_wrong_lock: hits, under two different locks"
is "$(vars race_no_lock)" "counter" "race_no_lock: counter"
# race_uaf: current in every run; the session's magic only in a run where
# the user reads it, i.e. loads current before the closer clears it. On a
# loaded machine the user can be preempted between its first_running store
# and that load, the closer runs first, and the user never touches the
# session (ci55, 2026-11-30, beside two VMs: "current" alone, once in
# about 60 runs of this file; 0 of 40 runs under four busy loops). So the
# check takes the first of up to 8 runs that warns of the magic: at a miss
# rate as high as 1 in 6 all 8 miss with (1/6)^8 = 6e-7.
like "$(first_like 8 ',heap block' vars race_uaf)" \
	"^current,heap block allocated at main\+0x[0-9a-f]+ \(race_uaf.c:[0-9]+\) \+0x10$" \
	"race_uaf: current and the session's magic (heap block by its calloc, offset)"
is "$(vars race_flag_token)" "token_free" "race_flag_token: token_free"
# bottom races only when the thief steals while the owner pops (timing);
# done (an __atomic flag, plain movs) in every run.
like "$(vars race_ws_deque)" "^(bottom,)?done$" "race_ws_deque: done, and bottom when they overlap"
is "$(vars race_split_cs)" "" "race_split_cs: an atomicity violation, no data race"
for p in clean_lockwrap clean_condhandoff clean_barrier clean_manythreads clean_recursive \
	clean_rwlock clean_once clean_relock_step; do
	is "$(vars $p)" "" "$p: no warning"
done
# Which of those four a run warns about varies: ci71 (2026-12-01, beside
# two busy VMs) saw acked, payload_a and payload_b but not ready, where 50
# runs on the host beside two VMs and four busy loops saw all four. Why is
# not established (the spinners' loads hit their sites thousands of times,
# so the probe cap and budget close them at a moment the load decides).
# These are known false alarms, not findings the program must produce:
# the check is that nothing else is warned about, a subset of the four.
like "$(vars clean_spinflag)" "^(acked,)?(payload_a,)?(payload_b,)?(ready)?$" \
	"clean_spinflag: only its release/acquire flags and what they publish (unseen ordering)"

# --suppressions: TSan's format and Helgrind's (first frame: the racing
# instruction's function).
printf '# TSan\nrace:^increment$\n' >"$T/tsan.supp"
is "$(vars race_no_lock --suppressions "$T/tsan.supp")" "" "TSan race:^increment\$ suppresses counter"
printf '{\n   writer\n   Helgrind:Race\n   fun:set_pair\n}\n' >"$T/hg.supp"
is "$(vars race_torn_pair --suppressions "$T/hg.supp")" "" "a Helgrind entry fun:set_pair suppresses x, y"
"$CS" run -s none --access -n 1 --suppressions "$T/none.supp" -o "$T/bad" -- "$PROGS/race_no_lock" \
	>/dev/null 2>"$T/err"
like "$?:$(cat "$T/err")" "^2:.*--suppressions .*none.supp: No such file" "a missing file: usage error, one line"
done_testing
