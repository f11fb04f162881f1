#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 240
# The sync probes load and record the same Figure 2 tasks on the VM's
# sched_ext kernel (7.x), where the scheduler uses them as decision points.
source "$(dirname "$0")/../lib.sh"
need_vm
[ -x "$PROGS/fig2" ] || skip_all "build first: make"
plan 3
out=$("$CS" vm -t "$(scaled 120)" -- "$CS" observe -- "$PROGS/fig2" 2>&1)
is "$?" 0 "observe in the VM exits 0"
like "$out" 'sp tasks: 3' "three SP pairs, as on the host"
like "$out" 'hbpair tasks: 5' "five HBPairs, as on the host"
done_testing
