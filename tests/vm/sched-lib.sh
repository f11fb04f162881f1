# SPDX-License-Identifier: MIT
# Helpers for the scheduler VM tests (tests/vm/1*-sched-*.t, 2*-sched-*.t):
# run one guest script per boot through `concsched vm`, then pick values
# out of the `concsched sched` JSON lines it printed.

# sched_vm SCRIPT OUT ERR: boot once, run SCRIPT (carried with the test
# programs), stdout to OUT, stderr to ERR. Returns the guest status.
sched_vm() {
	"$CS" vm --timeout "$(scaled "${SCHED_VM_TIMEOUT:-400}")" --carry "$PROGS" -- "$1" >"$2" 2>"$3"
}

# SCHED_LIMITS: the park watchdog and the stall timeout for `concsched
# sched` runs whose checks say no park needed the watchdog. Those checks
# are about the scheduler's notes and the controller's answers, not about
# how fast the answer comes: the guest's controller can answer an
# all-parked note later than the default 1 s (seen: 2 watchdog releases in
# a serial run with the host's load at 17; on 2026-11-28, 1 of 100 parks
# of 11-sched-park's flip on an idle host, at scale 1, while a second VM
# booted beside it: the scheduler had sent all 100 notes). So the watchdog
# is 5 s times the speed scale (tests/lib.sh), at most 10 s, and the stall
# timeout twice it plus 1 s (within sched_ext's 30 s). A park that only
# the watchdog ends then costs 5 s instead of 1, and still fails the check.
sched_wd=$(($(scaled 5000) < 10000 ? $(scaled 5000) : 10000))
sched_stall=$((sched_wd * 2 + 1000 > 5000 ? sched_wd * 2 + 1000 : 5000))
SCHED_LIMITS="--watchdog-ms $sched_wd --timeout-ms $sched_stall"

# jget JSON KEY: the scalar value of "KEY" in a one-line JSON document.
jget() {
	printf '%s' "$1" | grep -o "\"$2\":[^,}]*" | head -1 | cut -d: -f2- | tr -d '"'
}

# jsub JSON OBJ KEY: KEY inside the nested object "OBJ":{...}.
jsub() {
	printf '%s' "$1" | grep -o "\"$2\":{[^}]*}" | head -1 | grep -o "\"$3\":[^,}]*" | cut -d: -f2-
}

# section FILE NAME: the lines between "== NAME" and the next "== ".
section() {
	awk -v n="== $2" '$0 == n { on = 1; next } /^== / { on = 0 } on' "$1"
}

# json_of FILE NAME: the JSON summary line of section NAME.
json_of() {
	section "$1" "$2" | grep '^{' | head -1
}

# float_le A B: A <= B for decimal numbers.
float_le() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'
}
