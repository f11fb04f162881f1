#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 400
# concsched attach (issue 17, docs/attach.md) on a running TCP server with
# a latent check-then-act race (tests/programs/tcp_table.c) under a bounded
# client load (tcp_load). Without attach the race shows rarely if at all
# (a loaded host can hold a vCPU long enough now and then); with
# `attach -s rnd-s100:0.1 --duration 20` (a sleep of up to 100 ms at one
# point in ten: longer than the clients' phase) it shows more often
# (`-s random`'s configuration for seed 1 showed it 0 to 4 times, too
# close to the base window's count for a test; docs/attach.md); after the window
# the server answers and every thread is back in the fair class (policy 0,
# ext.enabled 0 in /proc/TID/sched). Then: SIGTERM of attach, kill -9 of
# attach (the scheduler's link dies with it: every thread leaves sched_ext,
# the server keeps serving), the target exiting, a --comm selection that
# picks up a process starting later, refusals. With --access: the
# server's accesses are probed and steered too, and the window has race
# warnings naming the unlocked check.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/sched-lib.sh"
need_vm
plan 49

work=$(mktemp -d /tmp/attach.XXXXXX)
trap 'rm -rf "$work"' EXIT

cat >"$work/guest.sh" <<EOF
#!/bin/sh
P="$PROGS"
# Per thread of pid \$1: "policy/ext.enabled", counted.
classes() {
	for t in /proc/\$1/task/*; do
		echo "\$(awk '/^policy/ { p = \$3 } /^ext.enabled/ { e = \$3 } END { print p "/" e }' \$t/sched 2>/dev/null)"
	done | grep '[0-9]/[0-9]' | sort | uniq -c | awk '{ printf "%s:%s ", \$2, \$1 }'
	echo
}
# wait_for COND-CMD TENTHS: poll until COND-CMD succeeds.
wait_for() {
	i=0
	while [ \$i -lt \$2 ]; do eval "\$1" && return 0; sleep 0.1; i=\$((i + 1)); done
	return 1
}
# attached FILE: wait until attach has switched its target.
attached() {
	wait_for "grep -q 'attached to pid' \$1" 300
}
\$P/tcp_table 7700 0 >/tmp/srv.out 2>/tmp/srv.err &
srv=\$!
sleep 0.5
echo "== base"
\$P/tcp_load 7700 2 1000 20
echo "races \$(grep -c RACE /tmp/srv.err)"
echo "== attach"
n0=\$(grep -c RACE /tmp/srv.err)
# As in the access window below, the load starts once attach has switched
# the server: started before, most of it was served before the points were
# in (CI 2026-11-28: 25 points, 3 delays, the race 0 times in the window).
"$CS" attach -p \$srv -s rnd-s100:0.1 --seed 1 --duration 20 --check "\$P/tcp_load 7700 1 1 0" --check-every 2 -o /tmp/camp >/tmp/att.out 2>/tmp/att.err &
cs=\$!
attached /tmp/att.err
\$P/tcp_load 7700 2 1000 20 >/tmp/load.out &
ld=\$!
wait \$cs
echo "attach_rc \$?"
cat /tmp/att.out
# What attach said besides "attached" (a scheduler the kernel ejected says
# why: CI 2026-11-28 lost one request to a "runnable task stall").
grep -v "attached to pid" /tmp/att.err | sed 's/^/att_err /'
"$CS" report /tmp/camp | grep -E "^runs:"
echo "state_after \$(cat /sys/kernel/sched_ext/state)"
wait \$ld
cat /tmp/load.out
echo "races \$((\$(grep -c RACE /tmp/srv.err) - n0))"
echo "classes \$(classes \$srv)"
\$P/tcp_load 7700 1 5 0
echo "== access"
n0=\$(grep -c RACE /tmp/srv.err)
# The load starts once the access probes are in: finding and attaching the
# sites takes seconds under TCG, and a load started before could be over.
"$CS" attach -p \$srv -s random --seed 3 --access --duration 10 -o /tmp/camp-acc >/tmp/att.out 2>/tmp/att.err &
cs=\$!
attached /tmp/att.err
\$P/tcp_load 7700 2 400 20 >/tmp/load.out &
ld=\$!
wait \$cs
echo "attach_rc \$?"
cat /tmp/att.out
grep -v "attached to pid" /tmp/att.err | sed 's/^/att_err /'
wait \$ld
cat /tmp/load.out
echo "races_access \$((\$(grep -c RACE /tmp/srv.err) - n0))"
echo "classes \$(classes \$srv)"
"$CS" report /tmp/camp-acc | grep -E "^ +race on" | head -5
\$P/tcp_load 7700 1 5 0
echo "== sigterm"
"$CS" attach -p \$srv -s random --duration 60 >/tmp/att-sigterm.out 2>&1 &
cs=\$!
attached /tmp/att-sigterm.out
echo "during \$(classes \$srv)"
echo "init_during \$(classes 1)"
kill -TERM \$cs
wait \$cs
echo "attach_rc \$?"
grep ended /tmp/att-sigterm.out
echo "classes \$(classes \$srv)"
echo "== stopped"
"$CS" attach -p \$srv -s rnd-s100:1 --duration 60 >/tmp/att-stopped.out 2>&1 &
cs=\$!
attached /tmp/att-stopped.out
kill -STOP \$cs
\$P/tcp_load 7700 2 5 10
kill -CONT \$cs
sleep 0.5
kill -TERM \$cs
wait \$cs
echo "attach_rc \$?"
grep -E "^strategy" /tmp/att-stopped.out
echo "classes \$(classes \$srv)"
echo "== kill9"
"$CS" attach -p \$srv -s random --duration 60 >/tmp/att-kill9.out 2>&1 &
cs=\$!
attached /tmp/att-kill9.out
\$P/tcp_load 7700 2 50 10 >/dev/null &
ld=\$!
sleep 1
echo "during \$(classes \$srv)"
kill -9 \$cs
wait \$ld
i=0
while [ "\$(cat /sys/kernel/sched_ext/state)" != disabled ] && [ \$i -lt 50 ]; do sleep 0.1; i=\$((i + 1)); done
echo "state \$(cat /sys/kernel/sched_ext/state)"
echo "classes \$(classes \$srv)"
\$P/tcp_load 7700 1 5 0
echo "== exit"
\$P/tcp_table 7701 3 >/dev/null 2>&1 &
srv2=\$!
sleep 0.3
"$CS" attach -p \$srv2 -s random --duration 60 >/tmp/att-exit.out 2>&1 &
cs=\$!
attached /tmp/att-exit.out
\$P/tcp_load 7701 1 3 0 >/dev/null
wait \$cs
echo "attach_rc \$?"
grep -E "ended|exited" /tmp/att-exit.out
echo "== comm"
"$CS" attach --comm tcp_table --duration 60 >/tmp/att-comm.out 2>&1 &
cs=\$!
attached /tmp/att-comm.out
\$P/tcp_table 7702 0 >/dev/null 2>&1 &
srv3=\$!
wait_for "grep -q 'attached to pid \$srv3 ' /tmp/att-comm.out" 100
\$P/tcp_load 7702 1 20 10 >/dev/null
echo "during \$(classes \$srv3)"
kill -TERM \$cs
wait \$cs
echo "attach_rc \$?"
grep -c "attached to pid \$srv3 (tcp_table)" /tmp/att-comm.out
echo "classes \$(classes \$srv3)"
kill \$srv3
echo "== cgroup"
cg=/sys/fs/cgroup/cs-attach
mkdir -p \$cg
\$P/tcp_table 7703 0 >/dev/null 2>&1 &
srv4=\$!
echo \$srv4 >\$cg/cgroup.procs
"$CS" attach --cgroup \$cg --duration 60 >/tmp/att-cgroup.out 2>&1 &
cs=\$!
attached /tmp/att-cgroup.out
\$P/tcp_load 7703 1 20 10 >/dev/null
echo "during \$(classes \$srv4)"
kill -INT \$cs
wait \$cs
echo "attach_rc \$?"
grep -c "attached to pid \$srv4 (tcp_table)" /tmp/att-cgroup.out
grep ended /tmp/att-cgroup.out
echo "classes \$(classes \$srv4)"
kill \$srv4
echo "== refuse"
"$CS" attach -p 1 --duration 1 2>&1; echo "rc \$?"
"$CS" attach -p 2 --duration 1 2>&1; echo "rc \$?"
echo "== end"
kill \$srv
wait \$srv
cat /tmp/srv.out
EOF
chmod +x "$work/guest.sh"
sched_vm "$work/guest.sh" "$work/out" "$work/err"
is "$?" 0 "guest script finished"
o=$work/out
s=$(section "$o" base)
like "$s" "ok 2000 failed 0" "base: the load is served"
b=$(printf '%s\n' "$s" | sed -n 's/^races //p')
s=$(section "$o" attach)
r=$(printf '%s\n' "$s" | sed -n 's/^races //p')
# Not "no race without attach": a loaded host (CI runs two TCG VMs on two
# cores) can hold a vCPU for the load's 10 ms phase and show the race now
# and then; attach must show it more often than the same load without it.
ok "$([ "${b:-1}" -lt "${r:-0}" ]; echo $?)" "base: the race is rarer without attach ($b times) than with it ($r times)"
like "$s" "attach_rc 0" "attach: exit status 0"
like "$s" "ended: the window of 20 s ended" "attach: the window ended at --duration"
like "$s" "checks: [0-9]+ run, 0 failed" "attach: the health checks passed"
like "$s" "strategy: rnd-s100:0.1 \(seed 1, [0-9]+ epochs\): [1-9][0-9]* points" "attach: points decided"
like "$s" "ok 2000 failed 0" "attach: the load is served"
ok "$([ "${r:-0}" -gt 0 ]; echo $?)" "attach: the race shows ($r times in the 20 s window)"
like "$s" "classes 0/0:[0-9]+ $" "attach: after detach every thread is SCHED_OTHER, not in sched_ext"
like "$s" "ok 5 failed 0" "attach: the server answers after detach"
like "$s" "runs: +1 \(pass 1\)" "attach: -o DIR stores the window as a run"
like "$s" "state_after disabled" "attach: the scheduler is unregistered after the window"
s=$(section "$o" access)
like "$s" "attach_rc 0" "access: exit status 0"
like "$s" "access: [1-9][0-9]* sites probed, [1-9][0-9]* accesses" "access: the server's accesses were probed"
like "$s" "[1-9][0-9]* points \([1-9][0-9]* at accesses\)" "access: accesses were decision points of the strategy"
# The check-then-act is no data race (users is only touched through
# __atomic builtins: docs/races.md): a race warning can only be the one
# the bug itself makes, two handlers writing the same slot's fd.
like "$s" "races: [0-9]+ warnings" "access: the race report of the window"
ok "$(printf '%s\n' "$s" | grep -q 'race on.*find_free'; [ $? -ne 0 ]; echo $?)" \
	"access: no warning on the atomic users field (find_free's relaxed loads)"
like "$s" "ok 800 failed 0" "access: the load is served"
like "$s" "classes 0/0:[0-9]+ $" "access: after detach every thread is back in the fair class"
like "$s" "ok 5 failed 0" "access: the server answers after detach"
ok "$(printf '%s\n' "$s" | grep -E '^ +race on' | grep -qv 'race on table'; [ $? -ne 0 ]; echo $?)" \
	"access: -o DIR stores the warnings (concsched report): any is on the table"
r=$(printf '%s\n' "$s" | sed -n 's/^races_access //p')
diag "access: the race showed $r times in the 10 s window"
s=$(section "$o" sigterm)
like "$s" "during 7/1:[0-9]+ $" "sigterm: threads in sched_ext during the window"
like "$s" "attach_rc 0" "sigterm: exit status 0"
like "$s" "ended: stopped by signal 15" "sigterm: the window ended on the signal"
like "$s" "classes 0/0:[0-9]+ $" "sigterm: every thread back to SCHED_OTHER"
like "$(section "$o" sigterm)" "init_during 0/0:1 $" "sigterm: meanwhile PID 1 stays out of sched_ext"
s=$(section "$o" stopped)
like "$s" "ok 10 failed 0" "stopped: with attach stopped, the watchdog lets parked threads go: served"
like "$s" "attach_rc 0" "stopped: attach goes on afterwards"
like "$s" "[1-9][0-9]* watchdog releases" "stopped: the watchdog released them"
like "$s" "classes 0/0:[0-9]+ $" "stopped: and restored"
s=$(section "$o" kill9)
like "$s" "during 7/1:" "kill9: threads in sched_ext before the kill"
like "$s" "state disabled" "kill9: sched_ext disabled after kill -9 of attach"
like "$s" "classes 7/0:[0-9]+ $" "kill9: every thread out of sched_ext (policy stays 7, class fair)"
like "$s" "ok 5 failed 0" "kill9: the server keeps serving"
s=$(section "$o" exit)
like "$s" "exited with status 0" "exit: the target's exit ends the window"
like "$s" "attach_rc 0" "exit: exit status 0"
s=$(section "$o" comm)
like "$s" "during 7/1:" "comm: a process starting later is switched into sched_ext"
like "$s" "attach_rc 0" "comm: exit status 0"
like "$s" "^1$" "comm: it was picked up"
like "$s" "classes 0/0:[0-9]+ $" "comm: and restored"
s=$(section "$o" cgroup)
like "$s" "during 7/1:" "cgroup: its process is switched into sched_ext"
like "$s" "attach_rc 0" "cgroup: exit status 0"
like "$s" "^1$" "cgroup: it was attached"
like "$s" "ended: stopped by signal 2" "cgroup: Ctrl-C ends the window"
like "$s" "classes 0/0:[0-9]+ $" "cgroup: and restored"
s=$(section "$o" refuse)
like "$s" "pid 1 \(.*\): refusing to steer init" "refuse: PID 1"
like "$s" "pid 2 \(kthreadd\): refusing to steer a kernel thread" "refuse: a kernel thread"
is "$(printf '%s\n' "$s" | grep -c '^rc 2$')" 2 "refuse: exit status 2"
[ "$_tap_fail" -gt 0 ] && diag "guest stdout:" "$(cat "$o")" "guest stderr:" "$(tail -30 "$work/err")"
done_testing
