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
# sched` runs whose checks say no park needed the watchdog. A loaded
# machine's guest can answer an all-parked note later than the default 1 s
# (seen: 2 watchdog releases in a serial run with the host's load at 17),
# so the watchdog grows with the speed scale (tests/lib.sh), at most 10 s,
# and the stall timeout stays at least twice it (at least the default 5 s,
# within sched_ext's 30 s). At scale 1 these are the defaults.
sched_wd=$(($(scaled 1000) < 10000 ? $(scaled 1000) : 10000))
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
