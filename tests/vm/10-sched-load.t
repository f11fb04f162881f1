#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 300
# The scheduler loads, governs a program and unloads (issue 4, step a):
# in one VM boot, sched_ext is `disabled` before, `enabled` with
# root/ops = concsched while a 4-thread program runs to completion under
# `concsched sched`, `disabled` after, and the exit info is printed. The
# same boot runs a 64-thread target and checks the argument errors that
# need a sched_ext kernel. The host part checks the no-sched_ext error.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/sched-lib.sh"
need_vm
plan 37

work=$(mktemp -d /tmp/sched-load.XXXXXX)
trap 'rm -rf "$work"' EXIT

# ---- host: no sched_ext here (KERNEL.md), a clear error ----
if [ -d /sys/kernel/sched_ext ]; then
	skip "host has sched_ext" "host without sched_ext: exit 2"
	skip "host has sched_ext" "host without sched_ext: says to use the VM"
else
	"$CS" sched -- "$PROGS/four_threads" >/dev/null 2>"$work/e"
	is "$?" 2 "host without sched_ext: exit 2"
	like "$(cat "$work/e")" "no sched_ext.*concsched vm" "host without sched_ext: says to use the VM"
fi

cat >"$work/guest.sh" <<EOF
#!/bin/sh
echo "== before"
cat /sys/kernel/sched_ext/state
echo "== four"
"$CS" sched -- "$PROGS/four_threads" 2>&1
echo "rc=\$?"
echo "== after"
cat /sys/kernel/sched_ext/state
echo "== sixtyfour"
"$CS" sched -- "$PROGS/threads" 64 2000 2>&1
echo "rc=\$?"
echo "== badwatchdog"
"$CS" sched --watchdog-ms 16000 -- "$PROGS/four_threads" 2>&1
echo "rc=\$?"
# Starvation by fair-class work (docs/sched.md "Starvation"). sched_ext
# ranks below the fair class; 7.x kernels give its tasks a deadline server
# (50 ms a second) that sometimes lets them through and sometimes not
# (measured: 3 of 4 runs starved past the timeout); older kernels have
# none. These sections turn the server off (its runtime to 0 in debugfs,
# restored after) so that the hogs starve the target in every run.
srv=/sys/kernel/debug/sched/ext_server
[ -d \$srv ] && for c in \$srv/cpu*; do cat \$c/runtime >/tmp/\$(basename \$c).rt; echo 0 >\$c/runtime; done
echo "== stall"
# Two fair-class CPU hogs, one pinned on each of the guest's two vCPUs:
# with --no-rescue the kernel ejects the scheduler, and the exit prints its
# debug dump. Unpinned, the fair balancer now and then left both hogs on one
# vCPU long enough for the target to run on the other (ci56, 2026-11-30,
# beside four other VMs: the target ran to its end, no stall); pinned, each
# vCPU has a runnable fair task throughout, and sched_ext's tasks, ranked
# below, run on neither.
taskset -c 0 sh -c 'while :; do :; done' & h1=\$!
taskset -c 1 sh -c 'while :; do :; done' & h2=\$!
"$CS" sched --no-rescue --timeout-ms 2000 --watchdog-ms 1000 -- "$PROGS/threads" 4 200000 2>&1
echo "rc=\$?"
echo "== rescue"
# The same starvation with the default limits: the target's main thread,
# starved in its exec (the controller waits for that exec), is moved to
# the fair class after 3750 ms, and the run ends normally (without the
# rescue the kernel ejects the scheduler, as above, here at 30 s).
"$CS" -v sched -- "$PROGS/threads" 4 200000 2>&1
echo "rc=\$?"
kill \$h1 \$h2
echo "== pinned"
# One CPU held by fair-class work, a target that may run only there (what
# stalled 55-attach: an exiting thread, migration-disabled, on a CPU the
# controller held), the other CPU idle: rescued the same way.
taskset -c 0 sh -c 'while :; do :; done' & h1=\$!
taskset -c 0 "$CS" sched --timeout-ms 3000 --watchdog-ms 1000 -- "$PROGS/threads" 4 200000 2>&1
echo "rc=\$?"
kill \$h1
[ -d \$srv ] && for c in \$srv/cpu*; do cat /tmp/\$(basename \$c).rt >\$c/runtime; done
echo "== missing"
"$CS" sched -- /no/such/prog 2>&1
echo "rc=\$?"
echo "== end"
cat /sys/kernel/sched_ext/state
EOF
chmod +x "$work/guest.sh"
sched_vm "$work/guest.sh" "$work/out" "$work/err"
is "$?" 0 "guest script ran"
o=$work/out

is "$(section "$o" before)" disabled "sched_ext disabled before"
four=$(json_of "$o" four)
is "$(section "$o" four | grep -c '^thread [0-3] tid')" 4 "four threads ran under the scheduler"
like "$(section "$o" four)" "joined 4" "and were joined"
like "$(section "$o" four)" "rc=0" "program and concsched exit 0"
is "$(jget "$four" exit_code)" 0 "summary: exit code 0"
is "$(jget "$four" sched_ext_state_during)" enabled "sched_ext enabled during the run"
is "$(jget "$four" sched_ext_ops_during)" concsched "root/ops is concsched"
ok "$([ "$(jget "$four" enqueues)" -gt 0 ] && [ "$(jget "$four" dispatches)" -gt 0 ]; echo $?)" \
	"the scheduler enqueued and dispatched the target's threads"
is "$(jget "$four" exit_kind)" 64 "exit kind 64 (unregistered)"
is "$(jget "$four" ejected)" false "not ejected by the kernel"
like "$(section "$o" four)" "scheduler exit: unregistered \(kind 64" "exit info printed"
is "$(jget "$four" sched_ext_state_after)" disabled "disabled right after unload"
is "$(section "$o" after)" disabled "sched_ext disabled after"

six=$(json_of "$o" sixtyfour)
like "$(section "$o" sixtyfour)" "threads 64 total 128000" "64-thread target: correct total"
is "$(jget "$six" exit_code)" 0 "64-thread target exits 0"
is "$(jget "$six" sched_ext_state_during)" enabled "64-thread target ran under sched_ext"

like "$(section "$o" badwatchdog | tr '\n' ' ')" "watchdog 16000 ms must stay well under.*rc=2" \
	"watchdog above timeout/2 rejected, exit 2"
st=$(section "$o" stall)
like "$st" "scheduler exit: runnable task stall \(kind 1026" "stall: the kernel ejected the scheduler"
like "$st" "the kernel's debug dump of that exit" "stall: the exit prints the kernel's debug dump"
like "$st" "concsched target 0: threads [1-9][0-9]* runnable [0-9]+ parked 0 released 0" \
	"stall: the dump has the scheduler's per-target state (cs_dump)"
like "$st" "concsched: tid [0-9]+ target 0" "stall: and the state of the target's threads (cs_dump_task)"
rs=$(section "$o" rescue)
resc=$(printf '%s\n' "$rs" | grep '^{' | tail -1)
like "$rs" "threads 4 total 800000" "rescue: the starved target ran to the end"
like "$rs" "rc=0" "rescue: exit 0"
is "$(jget "$resc" ejected)" false "rescue: the scheduler was not ejected"
is "$(jget "$resc" exit_kind)" 64 "rescue: it was unregistered at the end (kind 64)"
ok "$([ "$(jget "$resc" rescued)" -ge 1 ] 2>/dev/null; echo $?)" \
	"rescue: a starved thread was moved to the fair class (rescued >= 1)"
like "$rs" "starved thread [0-9]+ .*waited [0-9]+ ms to run on CPU [0-9]+.*moved to the fair class" \
	"rescue: the verbose log says which thread, how long, where"
like "$rs" "stall timeout 30000 ms, starvation rescue at 3750 ms, parks at most 1000 ms" \
	"rescue: the defaults: the kernel's largest stall timeout, the rescue at 3750 ms"
waited=$(printf '%s\n' "$rs" | sed -n 's/.*starved thread [0-9]* .*waited \([0-9]*\) ms.*/\1/p' | head -1)
ok "$([ "${waited:-0}" -ge 3750 ]; echo $?)" \
	"rescue: the thread was moved after waiting at least 3750 ms (waited ${waited:-?} ms)"
pn=$(section "$o" pinned)
pin=$(printf '%s\n' "$pn" | grep '^{' | tail -1)
like "$pn" "rc=0" "pinned: the target pinned to a held CPU ran to the end, exit 0"
is "$(jget "$pin" ejected)" false "pinned: the scheduler was not ejected"
ok "$([ "$(jget "$pin" rescued)" -ge 1 ] 2>/dev/null; echo $?)" \
	"pinned: its starved thread was moved to the fair class"
like "$(section "$o" missing)" "rc=2" "missing program: exit 2"
is "$(section "$o" end)" disabled "guest ends with sched_ext disabled"
[ "$_tap_fail" -gt 0 ] && diag "guest stdout:" "$(cat "$o")" "guest stderr:" "$(tail -20 "$work/err")"
done_testing
