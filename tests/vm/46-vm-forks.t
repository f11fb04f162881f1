#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 600
# Targets that fork, in the sched_ext VM (issue 15 items 5 and 6): the
# guest has cgroup v2 at /sys/fs/cgroup; under strategy none and under a
# steering strategy (its children are SCHED_EXT too) no forker process
# outlives the campaign, no run cgroup is left, no warning about cgroups,
# and one line says the target forked when it is not followed
# (--no-follow-forks). Followed (the default), a forked child's threads are
# steered: forkexec running examples/bank in its child finds bank's
# assertion under -s random, which unsteered children never show, and the
# failure replays as that assertion.
source "$(dirname "$0")/../lib.sh"
need_vm
F=$PROGS/forker
[ -x "$F" ] && [ -x "$PROGS/forkexec" ] && [ -x "$B/examples/bank" ] || skip_all "build first: make"
command -v python3 >/dev/null || skip_all "python3 missing (run: sudo make deps)"
plan 17
T=$(mktemp -d /tmp/cs-vmforks-XXXXXX)
trap 'rm -rf "$T"' EXIT

"$CS" vm -t "$(scaled 500)" -C "$F" -- sh -c "
echo fs \$(awk '\$2 == \"/sys/fs/cgroup\" { print \$3 }' /proc/mounts)
for s in none random; do
	$CS run -s \$s -n 3 --no-follow-forks -o /tmp/f-\$s -- $F --setsid >/dev/null 2>/tmp/err-\$s
	echo \"\$s exit \$?\"
	echo \"\$s left \$(pgrep -f '^$F' | wc -l)\"
	echo \"\$s cgroups \$(ls /sys/fs/cgroup/concsched | grep -c '^[0-9]*-[0-9]*\$')\"
	echo \"\$s forklines \$(grep -c '^concsched: forker forked; its children' /tmp/err-\$s)\"
	echo \"\$s warnings \$(grep -c '^concsched: warning' /tmp/err-\$s)\"
done
$CS run -s random -n 3 -o /tmp/f-follow -- $F --setsid >/dev/null 2>/tmp/err-follow
echo \"follow exit \$? left \$(pgrep -f '^$F' | wc -l) forklines \$(grep -c 'forked' /tmp/err-follow)\"
" >"$T/guest" 2>"$T/guest.err"
is "$(sed -n 's/^fs //p' "$T/guest")" cgroup2 "the guest's /sys/fs/cgroup is cgroup v2"
for s in none random; do
	like "$(grep "^$s " "$T/guest" | tr '\n' ' ')" "^$s exit 0 " "-s $s on forker: exit 0"
	is "$(sed -n "s/^$s left //p" "$T/guest")" 0 "-s $s: no forker process is left (not even setsid ones)"
	is "$(sed -n "s/^$s cgroups //p" "$T/guest")" 0 "-s $s: no run cgroup is left"
	is "$(sed -n "s/^$s forklines //p" "$T/guest")" 1 "-s $s: one line says forker forked"
	is "$(sed -n "s/^$s warnings //p" "$T/guest")" 0 "-s $s: no warning"
done
is "$(sed -n 's/^follow //p' "$T/guest")" "exit 0 left 0 forklines 0" \
	"followed (the default): exit 0, nothing left, no fork line"

# Steering reaches a forked child: bank's bug in forkexec's child. The
# followed campaign runs until its second failure (at most 400 runs: random
# fails bank about one run in three, 1 in 10 beside busy VMs, so fewer than
# 2 failures in 400 runs is below 1e-15); the unfollowed one 20 runs.
# How often each fails is a measurement (diag): unsteered, bank fails only
# now and then by itself (TCG timing: once in 20 runs in a CI run with
# other VMs beside it), which a comparison of counts cannot rule out.
for f in follow nofollow; do
	opt="--max-failures 2 -n 400"; [ $f = nofollow ] && opt="--no-follow-forks --keep-going -n 20"
	"$CS" run --vm -s random $opt --seed 3 -o "$T/$f" -- \
		"$PROGS/forkexec" "$B/examples/bank" >/dev/null 2>"$T/$f.err"
	echo "$f exit $?" >>"$T/bank"
done
nf=$("$CS" report "$T/follow" --json | python3 -c '
import json, sys; d = json.load(sys.stdin)
print(sum(1 for f in d["failures"] if f["kind"] == "assertion"), len(d["runs"]["list"]),
      d["failures"][0]["run"] if d["failures"] else 0)')
nn=$("$CS" report "$T/nofollow" --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["failures"]))')
like "$(cat "$T/bank" | tr '\n' ' ')" "follow exit 1 nofollow exit [01]" "forkexec bank: the followed campaign fails"
read -r nfa nfr nff <<<"$nf"
is "$nfa" 2 "followed: bank's assertion in the child, both failures ($nfa in $nfr runs)"
diag "--no-follow-forks: the unsteered child failed in $nn of 20 runs; followed: 2 in $nfr"
is "$(grep -c 'forked' "$T/nofollow.err")" 1 "--no-follow-forks: one line says the target forked"
# The replay carries the program forkexec is given (an argument naming a
# file): every replay runs bank, none ends in exec's 127.
"$CS" replay "$T/follow" --run "$nff" --vm --times 5 >"$T/rep" 2>&1
is "$(grep -c '^replay [0-5]/5: \(assertion\|pass\): ' "$T/rep")" 5 \
	"the replays ran bank in the child: each an assertion or a pass"
like "$(tail -1 "$T/rep")" "recorded: assertion\\) failed again in [1-5] of 5 replays" \
	"the child's failure replays as the same assertion ($(tail -1 "$T/rep"))"
done_testing
