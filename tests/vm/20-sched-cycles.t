#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 600
# 60 consecutive scheduler load/unload cycles without a guest crash
# (issue 4, step d; KERNEL.md Q6: under multi-threaded TCG this panicked,
# so `concsched vm` uses -accel tcg,thread=single). Each cycle verifies and
# loads the BPF programs, registers the scheduler, runs a 2-thread program
# under it, unregisters and frees everything (`concsched sched --cycles`).
# make test runs 60 cycles (about 2 s each in a loaded TCG guest; the
# MTTCG panic of KERNEL.md Q6 came within 25 cycles in 3 of 3 boots); the
# long soak is SCHED_CYCLES=200 (docs/testing.md "Longer runs").
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/sched-lib.sh"
need_vm
plan 6

work=$(mktemp -d /tmp/sched-cycles.XXXXXX)
trap 'rm -rf "$work"' EXIT
cycles=${SCHED_CYCLES:-60}

cat >"$work/guest.sh" <<EOF
#!/bin/sh
echo "== cycles"
"$CS" sched --cycles $cycles -- "$PROGS/threads" 2 200 2>/dev/null
echo "rc=\$?"
echo "== after"
cat /sys/kernel/sched_ext/state
echo "== healthy"
"$CS" sched -- "$PROGS/four_threads" 2>&1 | grep -c '^thread [0-3] tid'
EOF
chmod +x "$work/guest.sh"
SCHED_VM_TIMEOUT=560 sched_vm "$work/guest.sh" "$work/out" "$work/err"
is "$?" 0 "guest survived and the script finished"
o=$work/out
is "$(section "$o" cycles | grep -c '^{.*"exit_code":0,.*"sched_ext_state_during":"enabled".*"sched_ext_state_after":"disabled"')" \
	"$cycles" "$cycles cycles: enabled during, exit 0, disabled after each"
like "$(section "$o" cycles)" "rc=0" "concsched sched --cycles exits 0"
is "$(section "$o" cycles | grep -c '"ejected":true')" 0 "the kernel never ejected the scheduler"
is "$(section "$o" after)" disabled "sched_ext disabled at the end"
is "$(section "$o" healthy)" 4 "a fresh run still works"
[ "$_tap_fail" -gt 0 ] && diag "guest stderr:" "$(tail -20 "$work/err")"
done_testing
