#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 600
# Targets that fork, in the sched_ext VM (issue 15 items 5 and 6): the
# guest has cgroup v2 at /sys/fs/cgroup; under strategy none and under a
# steering strategy (its children are SCHED_EXT too) no forker process
# outlives the campaign, no run cgroup is left, no warning about cgroups,
# and one line says the target forked.
source "$(dirname "$0")/../lib.sh"
need_vm
F=$PROGS/forker
[ -x "$F" ] || skip_all "build first: make"
plan 11
T=$(mktemp -d /tmp/cs-vmforks-XXXXXX)
trap 'rm -rf "$T"' EXIT

"$CS" vm -t 500 -C "$F" -- sh -c "
echo fs \$(awk '\$2 == \"/sys/fs/cgroup\" { print \$3 }' /proc/mounts)
for s in none random; do
	$CS run -s \$s -n 3 -o /tmp/f-\$s -- $F --setsid >/dev/null 2>/tmp/err-\$s
	echo \"\$s exit \$?\"
	echo \"\$s left \$(pgrep -f '^$F' | wc -l)\"
	echo \"\$s cgroups \$(ls /sys/fs/cgroup/concsched | grep -c '^[0-9]*-[0-9]*\$')\"
	echo \"\$s forklines \$(grep -c '^concsched: forker forked; its children' /tmp/err-\$s)\"
	echo \"\$s warnings \$(grep -c '^concsched: warning' /tmp/err-\$s)\"
done" >"$T/guest" 2>"$T/guest.err"
is "$(sed -n 's/^fs //p' "$T/guest")" cgroup2 "the guest's /sys/fs/cgroup is cgroup v2"
for s in none random; do
	like "$(grep "^$s " "$T/guest" | tr '\n' ' ')" "^$s exit 0 " "-s $s on forker: exit 0"
	is "$(sed -n "s/^$s left //p" "$T/guest")" 0 "-s $s: no forker process is left (not even setsid ones)"
	is "$(sed -n "s/^$s cgroups //p" "$T/guest")" 0 "-s $s: no run cgroup is left"
	is "$(sed -n "s/^$s forklines //p" "$T/guest")" 1 "-s $s: one line says forker forked"
	is "$(sed -n "s/^$s warnings //p" "$T/guest")" 0 "-s $s: no warning"
done
done_testing
