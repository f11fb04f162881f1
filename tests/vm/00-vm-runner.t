#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 240
# concsched vm (userspace/vm/vm.c, docs/vm.md): three boots. The first checks
# stdout/stderr separation, exit status, carried files, a dynamically
# linked 4-thread program, the guest's sched_ext and BTF, and /out coming
# back; the second checks --timeout (124, bounded, qemu gone, /out kept);
# the third that a guest kernel panic is reported (125) with its log.
# Then stalled boots (--boot-limit, CONCSCHED_VM_BOOT_LIMIT). The rest
# are argument and environment errors that never boot.
source "$(dirname "$0")/../lib.sh"
need_vm
plan 46

work=$(mktemp -d /tmp/vm-runner-test.XXXXXX)
# qemu's command line holds its temp dir; a private TMPDIR lets pgrep find
# exactly our qemu even while other tests boot VMs.
export TMPDIR=$work/tmp
mkdir -p "$TMPDIR" "$work/carry/sub"
trap 'rm -rf "$work"' EXIT
echo "carried $$" >"$work/carry/sub/file.txt"
prog=$PROGS/four_threads

# ---- errors that never boot ----
"$CS" vm --help >"$work/help" 2>&1
is "$?" 0 "--help exits 0"
like "$(cat "$work/help")" 'Examples:' "--help has examples"
"$CS" vm >/dev/null 2>"$work/e"
is "$?" 2 "no command: exit 2"
"$CS" vm --cpus zero -- true >/dev/null 2>"$work/e"
is "$?" 2 "bad --cpus: exit 2"
CONCSCHED_VM_BOOT_LIMIT=soon "$CS" vm -- true >/dev/null 2>"$work/e"
is "$?" 2 "bad CONCSCHED_VM_BOOT_LIMIT: exit 2"
like "$(cat "$work/e")" 'CONCSCHED_VM_BOOT_LIMIT=soon: want seconds, 1 to 3600' \
	"bad CONCSCHED_VM_BOOT_LIMIT: one-line error"
"$CS" vm -- no-such-command-xyz >/dev/null 2>"$work/e"
is "$?" 2 "unknown command: exit 2"
like "$(cat "$work/e")" 'no-such-command-xyz: command not found' "unknown command: one-line error"
CONCSCHED_CACHE=$work/empty-cache "$CS" vm -- true >/dev/null 2>"$work/e"
is "$?" 2 "no VM kernel: exit 2"
like "$(cat "$work/e")" 'run: sudo make deps' "no VM kernel: says how to fix it"

# ---- boot 1: everything that should work ----
# The script is argv[0] and lives in the --carry'd directory (carried first
# as the command, the directory must still arrive whole: issue 34); the
# 4-thread program is carried with --carry, with its libraries from its ELF.
cat >"$work/carry/run.sh" <<EOF
#!/bin/sh
echo OUT-LINE; echo ERR-LINE >&2
cat $work/carry/sub/file.txt
$prog
$CS --version | sed 's/^/SELF: /'
echo "PWD=\$(pwd)"
cat "\$1"
[ -d /sys/kernel/sched_ext ] && echo SCHED-EXT-PRESENT
[ -s /sys/kernel/btf/vmlinux ] && echo BTF-PRESENT
echo "env=\$VMTEST_VAR"
echo payload >/out/result.txt; mkdir -p /out/nested; echo deep >/out/nested/n.txt
exit 3
EOF
chmod +x "$work/carry/run.sh"
echo "argument file $$" >"$work/argfile.txt"
t0=$(date +%s.%N)
"$CS" vm --verbose --carry "$work/carry" --out "$work/out" --env VMTEST_VAR=v1 \
	--carry "$prog" --keep-log "$work/console.log" -- "$work/carry/run.sh" "$work/argfile.txt" >"$work/out1" 2>"$work/err1"
rc=$?
t1=$(date +%s.%N)
out=$(cat "$work/out1")
err=$(cat "$work/err1")
is "$rc" 3 "exit status 3 propagates"
like "$out" '^OUT-LINE' "stdout comes back"
ok "$(grep -c ERR-LINE "$work/out1")" "stderr does not leak into stdout"
like "$err" 'ERR-LINE' "stderr comes back"
ok "$(grep -c OUT-LINE "$work/err1")" "stdout does not leak into stderr"
like "$out" "carried $$" "a file of the carried directory holding the command arrives"
like "$out" 'joined 4' "dynamically linked four_threads runs (4 threads joined)"
is "$(grep -c '^thread [0-3] tid' "$work/out1")" 4 "each of the 4 threads printed"
like "$out" "argument file $$" "an argument naming a host file is carried"
is "$(grep '^PWD=' "$work/out1")" "PWD=$(pwd)" "the guest starts in the host's working directory"
like "$out" 'SELF: concsched [0-9]' "concsched itself is carried and runs with its libraries"
like "$out" 'SCHED-EXT-PRESENT' "/sys/kernel/sched_ext exists in the guest"
like "$out" 'BTF-PRESENT' "/sys/kernel/btf/vmlinux exists in the guest"
like "$out" 'env=v1' "--env reaches the command"
is "$(cat "$work/out/result.txt" 2>/dev/null)" payload "/out file comes back"
is "$(cat "$work/out/nested/n.txt" 2>/dev/null)" deep "/out subdirectory comes back"
ok "$([ -s "$work/console.log" ]; echo $?)" "--keep-log saves the kernel log"
timing=$(grep 'boot-to-command' "$work/err1")
like "$timing" 'tcg|kvm' "--verbose reports the emulation mode and timings"
diag "boot 1: $timing; measured by the test: $(awk "BEGIN{print $t1 - $t0}") s"

# ---- boot 2: timeout ----
t0=$(date +%s)
"$CS" vm --timeout 5 --out "$work/out2" -- sh -c \
	'echo early >/out/early.txt; echo "<4>WARNING: vm-runner-test" >/dev/kmsg; sleep 100' \
	>/dev/null 2>"$work/err2"
rc=$?
t1=$(date +%s)
is "$rc" 124 "--timeout 5 on sleep 100 exits 124"
ok "$([ $((t1 - t0)) -lt 90 ]; echo $?)" "timeout returns in bounded time ($((t1 - t0)) s)"
like "$(cat "$work/err2")" 'longer than 5 s' "timeout: one-line error"
is "$(cat "$work/out2/early.txt" 2>/dev/null)" early "/out written before the timeout comes back"
like "$(cat "$work/err2")" 'guest kernel: .*WARNING: vm-runner-test' "guest kernel warnings are surfaced"
ok "$(pgrep -f "$TMPDIR" >/dev/null; [ $? -ne 0 ]; echo $?)" "no qemu process left behind"
is "$(ls -A "$TMPDIR")" "" "temporary files removed"

# ---- boot 3: the guest kernel panics under the command ----
"$CS" vm -- sh -c 'echo 1 >/proc/sys/kernel/sysrq; echo c >/proc/sysrq-trigger' \
	>/dev/null 2>"$work/err3"
is "$?" 125 "guest panic: exit 125"
like "$(grep '^concsched: vm:' "$work/err3")" 'guest kernel died: Kernel panic' \
	"guest panic: one-line reason from the kernel log"
like "$(cat "$work/err3")" 'guest kernel log' "guest panic: the kernel log tail is shown"
ok "$(pgrep -f "$TMPDIR" >/dev/null; [ $? -ne 0 ]; echo $?)" "guest panic: no qemu left behind"

# ---- boots 4-6: a boot that never reaches the command is tried again ----
# A TCG boot reaches the command after several seconds (tools/test-speed's
# reference for a whole cycle is 5 s), so with a 1 s limit every boot stalls.
"$CS" vm --boot-limit 1 -- /bin/true >/dev/null 2>"$work/err4"
is "$?" 125 "every boot stalled: exit 125"
is "$(grep -c 'booting again (attempt [23] of 3)' "$work/err4")" 2 \
	"a stalled boot is tried again, 3 boots in all"
like "$(grep '^concsched: vm:' "$work/err4" | tail -1)" 'did not start the command within 1 s' \
	"all stalled: one-line reason"
ok "$(pgrep -f "$TMPDIR" >/dev/null; [ $? -ne 0 ]; echo $?)" "stalled boots: no qemu left behind"
is "$(ls -A "$TMPDIR")" "" "stalled boots: temporary files removed"
# The tests' CONCSCHED_VM_BOOT_LIMIT (tests/lib.sh) sets the same limit.
CONCSCHED_VM_BOOT_LIMIT=1 "$CS" vm -- /bin/true >/dev/null 2>"$work/err5"
is "$?" 125 "CONCSCHED_VM_BOOT_LIMIT=1: every boot stalled, exit 125"
like "$(grep '^concsched: vm:' "$work/err5" | tail -1)" 'did not start the command within 1 s' \
	"CONCSCHED_VM_BOOT_LIMIT=1: the limit was 1 s"
done_testing
