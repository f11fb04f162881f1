#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 400
# Timed delay, yield, serial mode, the all-parked notification and the
# watchdog (issue 4, step c), one VM boot:
#  - --delay-at marker:1000: 50 delays, each ended by its timer, never
#    before 1 ms from the probe (the bpf_timer deadline is absolute, probe
#    timestamp + 1 ms); how late is a measurement, not a check: printed
#    here, benchmarked in docs/perf.md (tools/bench/sched_latency.sh);
#  - --yield-at: every call yields, the program finishes;
#  - --serial fifo: workers start in creation order and never overlap
#    (serial mode also switches at a slice's end, by design: each worker
#    works 2 ms of wall time, and the slice is 2 s, so a stall of the TCG
#    guest's vCPU cannot end one mid-work: a charge of 50 ms or more is
#    not counted as the owner's run: docs/sched.md);
#  - --serial fifo with main busy 30 ms after each start, 6 runs: no
#    worker starts before main has started all four. main was running
#    when it entered SCHED_EXT; it must run on the configured 2 s slice,
#    not the core's default 20 ms. With the default, main lost the token
#    mid-start in every plain serial_order run under TCG (unless it slept
#    first, e.g. in its exec), and in 1 run of 60-200 while holding a
#    lock (most likely its mm's): the workers that waited on it slept,
#    the token passed, and two overlapped (a CI failure of this test).
#    With the default, a worker started early in 7 of these runs in 20;
#    --serial random and --serial pct: the same seed gives the same order,
#    (random) seeds differ, never overlap; without serial mode the same
#    workers do overlap, and start while main still starts others (8 runs
#    spread over the script, at least one of each: below);
#  - two threads parked at every marker(): released one at a time, only
#    when the all-parked note says every runnable thread is parked;
#  - --release never --watchdog-ms 300: each park ends by the watchdog,
#    counted, never before 300 ms, and the parked worker ran no iteration
#    before it, checked on the rounds whose read came sooner than 300 ms
#    after the worker's announcement (gap's LATE_MS: until 2026-12-02 the
#    check took every read for one 20 ms after the park, which a loaded
#    host can hold main past, as it did 11-sched-park's in ci97);
#  - a run that times out with a thread parked (up to 4 tries until one
#    parks, below): teardown releases it before the scheduler unloads.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/sched-lib.sh"
need_vm
plan 34

work=$(mktemp -d /tmp/sched-delay.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The teardown run must time out after its thread parked and before the
# watchdog lets it go: 600 ms for the program to reach its marker, which a
# loaded machine's guest can miss, so the three limits grow with the speed
# scale (tests/lib.sh), keeping run < watchdog <= stall timeout / 2 and the
# stall timeout within sched_ext's 30 s.
td_run=$(($(scaled 600) < 4000 ? $(scaled 600) : 4000))
td_watchdog=$((td_run * 10 / 3))
td_stall=$((td_watchdog * 2 + 1000))
cat >"$work/guest.sh" <<EOF
#!/bin/sh
par() {
	echo "== parallel"
	"$CS" sched -- "$PROGS/serial_order" 4 20000 5000 2>&1
}
par
echo "== delay"
"$CS" sched $SCHED_LIMITS --delay-at marker:1000 -- "$PROGS/marker_loop" 50 1 200 2>&1
par
echo "== yield"
"$CS" sched --yield-at marker -- "$PROGS/marker_loop" 20 2 200 2>&1
par
echo "== fifo"
"$CS" sched --serial fifo --slice-us 2000000 -- "$PROGS/serial_order" 4 2>&1
par
echo "== fifomain"
for i in 1 2 3 4 5 6; do
	"$CS" sched --serial fifo --slice-us 2000000 -- "$PROGS/serial_order" 4 2000 30000 2>&1
done
par
for s in 1 1 2 3 4; do
	echo "== random\$s"
	"$CS" sched --serial random --seed \$s --slice-us 2000000 -- "$PROGS/serial_order" 4 2>&1
done
par
for s in 5 5 6; do
	echo "== pct\$s"
	"$CS" sched --serial pct --seed \$s --slice-us 2000000 -- "$PROGS/serial_order" 4 2>&1
done
par
echo "== allparked"
"$CS" sched $SCHED_LIMITS --park-at marker -- "$PROGS/marker_loop" 10 2 200 2>&1
par
# The run must time out with its thread parked. On a loaded host its limit
# can end before gap reaches its marker (parks 0: 2 of 41 repetitions in
# hunt AI, 2026-12-02, beside a busy make test), so up to 4 tries, and the
# first that parked is checked: at 5 % a try all 4 miss with p = 6e-6.
t=1
while :; do
	out=\$("$CS" sched --park-at marker --release never --watchdog-ms $td_watchdog --timeout-ms $td_stall --run-timeout-ms $td_run -- "$PROGS/gap" 1 20 2>&1)
	rc=\$?
	printf '%s\n' "\$out" | grep -q '"parks":[1-9]' && break
	[ \$t -ge 4 ] && break
	echo "== teardown_missed\$t"
	printf '%s\n' "\$out"
	t=\$((t + 1))
done
echo "== teardown"
printf '%s\n' "\$out"
echo "rc=\$rc"
echo "== watchdog"
"$CS" sched --park-at marker --release never --watchdog-ms 300 -- "$PROGS/gap" 4 20 300 2>&1
EOF
chmod +x "$work/guest.sh"
sched_vm "$work/guest.sh" "$work/out" "$work/err"
is "$?" 0 "guest script ran"
o=$work/out

j=$(json_of "$o" delay)
is "$(jget "$j" delays)" 50 "50 delays"
is "$(jsub "$j" delay_late_us n)" 50 "50 delays ended by their timer"
is "$(jget "$j" watchdog_releases)" 0 "no delay hit the watchdog"
ok "$(float_le 1000 "$(jsub "$j" stopped_us min)"; echo $?)" \
	"no delay shorter than 1 ms (min $(jsub "$j" stopped_us min) us)"
ok "$(float_le 0 "$(jsub "$j" delay_late_us min)"; echo $?)" "never early (min late $(jsub "$j" delay_late_us min) us)"
diag "delay 1 ms: late us p50 $(jsub "$j" delay_late_us p50) p90 $(jsub "$j" delay_late_us p90) max $(jsub "$j" delay_late_us max)"

j=$(json_of "$o" yield)
is "$(jget "$j" yields)" 40 "40 yields (2 threads x 20 calls)"
is "$(jget "$j" exit_code)" 0 "yielding program exits 0"

like "$(section "$o" fifo)" "^order 1,2,3,4 overlap 0 early 0$" "serial fifo: creation order, no overlap"
is "$(jget "$(json_of "$o" fifo)" exit_code)" 0 "serial fifo: exit 0"
is "$(section "$o" fifomain | grep -c '^order 1,2,3,4 overlap 0 early 0$')" 6 \
	"serial fifo: main keeps the token for its 120 ms of starts in 6 runs (the 2 s slice, not the default 20 ms)"
overlaps=$(for s in 1 2 3 4; do section "$o" "random$s"; done | grep '^order' | grep -vc ' overlap 0 ')
seeds1=$(awk '$0 == "== random1" { on = 1; next } /^== / { on = 0 } on && /^order/ { print $2 }' "$o")
is "$(printf '%s\n' "$seeds1" | sort -u | wc -l)" 1 "serial random: seed 1 twice gives the same order ($(echo $seeds1))"
is "$(printf '%s\n' "$seeds1" | wc -l)" 2 "both seed-1 runs reported"
distinct=$(for s in 1 2 3 4; do awk -v n="== random$s" '$0 == n { on = 1; next } /^== / { on = 0 } on && /^order/ { print $2; exit }' "$o"; done | sort -u | wc -l)
ok "$([ "$distinct" -ge 2 ]; echo $?)" "serial random: seeds 1-4 give $distinct distinct orders"
is "$overlaps" 0 "serial random: no overlap"
pct5=$(awk '$0 == "== pct5" { on = 1; next } /^== / { on = 0 } on && /^order/ { print $2 }' "$o")
is "$(printf '%s\n' "$pct5" | sort -u | wc -l) $(printf '%s\n' "$pct5" | wc -l)" "1 2" \
	"serial pct: seed 5 twice gives the same order ($(echo $pct5))"
is "$(for s in 5 6; do section "$o" "pct$s"; done | grep '^order' | grep -vc ' overlap 0 ')" 0 \
	"serial pct: no overlap"
# Without serial mode: 8 runs of the same program, spread over the
# script (a load spike on the host stalls a run, not all eight). Whether
# a worker starts within main's 20 ms of starts, or two work at once,
# is up to the guest's timing: ci71 (2026-12-01, beside two busy VMs)
# had one run where every worker started after main had started them
# all. At a miss rate as high as 1 in 6 per run, all 8 miss with
# (1/6)^8 = 6e-7; each check wants one run that shows it.
par=$(section "$o" parallel | sed -n 's/^order [0-9,]* overlap \([0-9]*\) early [0-9]*$/\1/p')
early=$(section "$o" parallel | sed -n 's/^order [0-9,]* overlap [0-9]* early \([0-9]*\)$/\1/p')
diag "without serial mode, 8 runs: overlap $(echo $par), early $(echo $early)"
is "$(printf '%s\n' "$par" | grep -c .)" 8 "without serial mode: 8 runs reported"
ok "$([ "$(printf '%s\n' "$par" | sort -n | tail -1)" -ge 1 ] 2>/dev/null; echo $?)" \
	"without serial mode the workers overlap (in at least one of the 8 runs)"
ok "$([ "$(printf '%s\n' "$early" | sort -n | tail -1)" -ge 1 ] 2>/dev/null; echo $?)" \
	"without serial mode workers start while main still starts others (in at least one of the 8 runs)"

j=$(json_of "$o" allparked)
is "$(jget "$j" parks)" 20 "two threads parked at each of 10 markers"
is "$(jget "$j" user_releases)" 20 "each released by the all-parked rule"
ok "$([ "$(jget "$j" all_parked_notes)" -ge 10 ]; echo $?)" \
	"all-parked notes arrived ($(jget "$j" all_parked_notes))"
is "$(jget "$j" watchdog_releases)" 0 "no watchdog needed"
is "$(jget "$j" exit_code)" 0 "exit 0"

j=$(json_of "$o" teardown)
diag "teardown: $(grep -c '^== teardown_missed' "$o") missed tries before one parked"
is "$(jget "$j" timed_out)" true "teardown: the run timed out with a thread parked"
is "$(jget "$j" releases) $(jget "$j" watchdog_releases)" "1 0" \
	"teardown released the parked thread before unloading (not the watchdog)"
like "$(section "$o" teardown)" "rc=1" "teardown: exit 1 (timeout)"
is "$(jget "$j" sched_ext_state_after)" disabled "teardown: disabled after"

j=$(json_of "$o" watchdog)
is "$(jget "$j" parks)" 4 "watchdog: 4 parks"
is "$(jget "$j" watchdog_releases)" 4 "all released by the watchdog"
ok "$(float_le 300000 "$(jsub "$j" stopped_us min)"; echo $?)" "not before 300 ms ($(jsub "$j" stopped_us min) us)"
diag "watchdog 300 ms: stopped us min $(jsub "$j" stopped_us min) max $(jsub "$j" stopped_us max)"
# A round whose read came 300 ms or more after the announcement is late
# (the watchdog may have let the worker go before it): it says nothing.
# Every other round must read 0; all four late would take four reads each
# held 280 ms past main's 20 ms sleep.
w=$(section "$o" watchdog | sed -n 's/^rounds 4 zero \([0-9]*\) max 0 late \([0-9]*\)$/\1 \2/p')
ok "$([ -n "$w" ] && [ "${w% *}" -ge 1 ] && [ $((${w% *} + ${w#* })) -eq 4 ]; echo $?)" \
	"the parked worker ran no iteration before the watchdog (rounds read in time at 0, late: ${w:-none})"
is "$(jget "$j" exit_code)" 0 "exit 0"
[ "$_tap_fail" -gt 0 ] && diag "guest stdout:" "$(cat "$o")" "guest stderr:" "$(tail -20 "$work/err")"
done_testing
