#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 120
# When concsched itself crashes (lib/crash.h): one line naming the signal
# and the build, the backtrace as "concsched(+OFFSET)" frames that
# addr2line resolves on the same binary, the campaign's directory, and
# then the signal's default action (exit status 128 + signal). Nothing is
# lost or left: the runs stored before the crash are read back, the
# target goes with its controller, no probe link stays. The crash is
# sent (kill), once to a -j 1 campaign (SIGSEGV) and once to a -j 2 one
# (SIGBUS); a fault in the code takes the same handler.
source "$(dirname "$0")/../lib.sh"
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 missing (run: sudo make deps)"
command -v addr2line >/dev/null || skip_all "addr2line missing (run: sudo make deps)"
plan 16
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# A target that lives long enough to be there at the crash, told apart by
# its argument from any other sleep on the machine.
nap=0.$((300 + RANDOM % 600))
targets() { pgrep -x -f "/bin/sleep $nap" >/dev/null; }

crash() { # crash J SIGNAL
	local j=$1 sig=$2 pid rc
	"$CS" run -s none -n 100000 -j "$j" -o "$T/c$j" -- /bin/sleep "$nap" >/dev/null 2>"$T/err$j" &
	pid=$!
	gone_within "$(scaled 60)" runs_below "$T/c$j" 2
	# At the controller's main thread (tgkill), as a fault there would
	# come: kill(1) is process-directed, and the kernel may hand it to
	# any thread, e.g. one destroying links, whose stack holds one or two
	# frames of concsched (ci29, 2026-11-30: check 10, -j 2's SIGBUS).
	python3 -c 'import ctypes, sys; p = int(sys.argv[1]); sys.exit(ctypes.CDLL(None, use_errno=True).syscall(234, p, p, int(sys.argv[2])))' \
		"$pid" "$(kill -l "$sig")"
	wait "$pid" 2>/dev/null # not bash's "Segmentation fault" line
	rc=$?
	is "$rc" "$((128 + $(kill -l "$sig")))" "-j $j: killed by SIG$sig, the controller exits with its status"
	like "$(grep 'internal error' "$T/err$j")" \
		"^concsched: internal error: SIG$sig sent by pid [0-9]+ in thread $pid of concsched [^ ]+; please report it" \
		"-j $j: one line names the signal, who sent it, the thread and the build"
	[ "$(grep -c 'concsched(+0x[0-9a-f]*)\[0x' "$T/err$j")" -ge 3 ]
	ok $? "-j $j: the backtrace, at least 3 frames of concsched"
	is "$(tail -1 "$T/err$j")" "concsched: the runs stored before the crash are in $T/c$j" \
		"-j $j: the last line says where the campaign's runs are"
	[ "$(runs_ended "$T/c$j")" -ge 2 ]
	ok $? "-j $j: the runs stored before the crash are read back"
	gone_within "$(scaled 10)" targets
	ok $? "-j $j: no target left running"
	gone_within "$(scaled 10)" eval '! no_link_of_ours'
	ok $? "-j $j: no probe link left"
}
crash 1 SEGV
crash 2 BUS
# The frames name concsched's own functions on this binary: the deepest
# frame of concsched below main's caller is cmd_run's campaign.
offs=$(sed -n 's/.*concsched(+\(0x[0-9a-f]*\)).*/\1/p' "$T/err1")
funcs=$(addr2line -f -e "$CS" $offs | sed -n '1~2p')
like "$funcs" "campaign_run" "the frames resolve (addr2line -f) to concsched's functions: campaign_run"
like "$funcs" "cmd_run" "... and cmd_run"
done_testing
