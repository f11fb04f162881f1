#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 400
# Synchronous park and release (issue 4, step b), one VM boot:
#  - lock-order flip: lockorder's thread A wins its mutex 100/100 rounds
#    unperturbed (>= 90 here: TCG may preempt); parked at a_lock() and
#    released from userspace when every runnable thread is parked (the
#    all-parked note), B wins 100/100; released in BPF when B reaches
#    b_unlock() (a release-at point, another thread's event), 100/100;
#  - gap test (KERNEL.md): a worker parked at marker() has executed 0
#    loop iterations when main reads its count 20 ms later, in 20/20
#    rounds, and its user IP while parked is marker's address: no
#    instruction past the probe. Unparked, the same program counts
#    millions. main's read_done() (after the read) releases it, in BPF:
#    until 2026-12-02 a timer rule released it 50 ms after its park, and
#    a main held past those 50 ms by a loaded host read a count the
#    worker had started (ci97, beside two busy VMs at speed scale 3.8:
#    17 of 20 rounds at 0);
#  - a park released by a userspace timer rule (release after:USEC):
#    never before its time, and by the rule, not the watchdog.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/sched-lib.sh"
need_vm
plan 26

work=$(mktemp -d /tmp/sched-park.XXXXXX)
trap 'rm -rf "$work"' EXIT

cat >"$work/guest.sh" <<EOF
#!/bin/sh
echo "== baseline"
"$CS" sched -- "$PROGS/lockorder" 100 2>&1
echo "== flip"
"$CS" sched $SCHED_LIMITS --park-at a_lock -- "$PROGS/lockorder" 100 2>&1
echo "== eventflip"
"$CS" sched $SCHED_LIMITS --park-at a_lock --release-at b_unlock --release never -- "$PROGS/lockorder" 100 2>&1
echo "== gap"
"$CS" sched $SCHED_LIMITS --park-at marker --release-at read_done --release never -- "$PROGS/gap" 20 20 2>&1
echo "== gaptimer"
"$CS" sched $SCHED_LIMITS --park-at marker --release after:50000 -- "$PROGS/gap" 20 20 2>&1
echo "== gapcontrol"
"$CS" sched -- "$PROGS/gap" 3 20 2>&1
EOF
chmod +x "$work/guest.sh"
sched_vm "$work/guest.sh" "$work/out" "$work/err"
is "$?" 0 "guest script ran"
o=$work/out

base=$(section "$o" baseline | sed -n 's/^A-first \([0-9]*\) B-first \([0-9]*\)$/\1 \2/p')
# The program's own bias, the contrast to the parks' 0/100: A first in
# 99-100 of 100 rounds on an idle machine; a loaded host can hold A's vCPU
# past B's 3 ms head start now and then, so the check is "in most rounds"
# (>= 50), not the idle figure.
diag "unperturbed: A first in ${base%% *} of 100 rounds"
ok "$([ "${base%% *}" -ge 50 ] 2>/dev/null; echo $?)" "unperturbed: A first in most rounds (${base%% *}/100)"
j=$(json_of "$o" baseline)
is "$(jget "$j" parks)" 0 "unperturbed: no parks"

like "$(section "$o" flip)" "^A-first 0 B-first 100$" "parked at a_lock: B first 100/100"
j=$(json_of "$o" flip)
is "$(jget "$j" parks)" 100 "100 parks"
is "$(jget "$j" kicks)" 100 "100 fexit kicks"
is "$(jget "$j" user_releases)" 100 "all 100 released from userspace"
is "$(jget "$j" watchdog_releases)" 0 "none needed the watchdog"
ok "$([ "$(jget "$j" all_parked_notes)" -ge 100 ]; echo $?)" "an all-parked note per round"
is "$(jsub "$j" release_to_run_us n)" 100 "release-to-run latency measured 100 times"
diag "flip: release->run us p50 $(jsub "$j" release_to_run_us p50) p90 $(jsub "$j" release_to_run_us p90) max $(jsub "$j" release_to_run_us max)"
is "$(jget "$j" exit_code)" 0 "lockorder exits 0"

like "$(section "$o" eventflip)" "^A-first 0 B-first 100$" \
	"released from BPF when B unlocks (--release-at b_unlock): B first 100/100"
j=$(json_of "$o" eventflip)
ev=$(jget "$j" event_releases)
wd=$(jget "$j" watchdog_releases)
# Under TCG, A's vCPU may reach its park after B's unlock already fired
# (nothing to release yet): then only the watchdog lets A go.
ok "$([ "$ev" -ge 90 ]; echo $?)" "releases by B's event, in BPF: $ev/100 (the rest: A parked too late)"
is "$((ev + wd))" 100 "every park released, by the event or the watchdog"
is "$(jget "$j" user_releases)" 0 "none from userspace"

# The worker counts only once marker() returns: after main's read_done()
# (after the read) or the watchdog (5 s times the speed scale after the
# park, SCHED_LIMITS). 0 in every round, unless a read came that late.
g=$(section "$o" gap)
like "$g" "rounds 20 zero 20 max 0" "parked at marker: 0 loop iterations in 20/20 rounds"
j=$(json_of "$o" gap)
# A read_done() that comes between the worker's probe hit and its park
# (the worker's vCPU held HOLD = 20 ms there by a loaded host) cancels the
# park: the worker runs on unparked after the read, and the scheduler
# counts a park_cancel, not a park (hunt AI, 2026-12-02: 19 parks of 20
# in 1 of 41 runs beside ci106, 20 rounds at 0). Each round parks or is
# cancelled; 10 cancels of 20 need ten such 20 ms stalls in one run (seen
# once in 820 rounds: ~1e-24 if rounds were independent).
parks=$(jget "$j" parks)
cancels=$(jget "$j" park_cancels)
is "$((parks + cancels))" 20 "20 rounds parked or cancelled by a read that came first ($parks parks, $cancels cancels)"
ok "$([ "$parks" -ge 10 ]; echo $?)" "most rounds parked at marker ($parks of 20)"
marker=$(printf '%s\n' "$g" | sed -n 's/^marker \(0x[0-9a-f]*\)$/\1/p' | head -1)
ok "$([ -n "$marker" ]; echo $?)" "gap printed marker's address"
is "$(printf '%s' "$j" | grep -o '"park_ips":\[[^]]*\]')" "\"park_ips\":[\"$marker\"]" \
	"every park had user IP == marker (nothing executed past the probe)"
# A worker whose vCPU reaches marker() after main's read_done() of its
# round (held 20 ms between its flag and the call, as eventflip's A) has
# nothing to release it but the watchdog: most rounds end by the event.
ev=$(jget "$j" event_releases)
wd=$(jget "$j" watchdog_releases)
ok "$([ "$ev" -ge 10 ] && [ $((ev + wd)) -eq 20 ]; echo $?)" \
	"released by main's read_done(), in BPF: $ev of 20 (the rest, the watchdog: $wd)"
j=$(json_of "$o" gaptimer)
is "$(jget "$j" parks)/$(jget "$j" user_releases)" 20/20 "timer rule: 20 parks, released by the after:50000 rule"
min=$(jsub "$j" stopped_us min)
ok "$(float_le 50000 "$min"; echo $?)" "timer rule: no release before 50 ms (min stopped $min us)"
is "$(jget "$j" watchdog_releases)" 0 "timer rule: no watchdog release"

c=$(section "$o" gapcontrol)
like "$c" "rounds 3 zero 0 " "control: unparked worker runs on (counts > 0 in 3/3)"
is "$(jget "$(json_of "$o" gapcontrol)" parks)" 0 "control: no parks"
[ "$_tap_fail" -gt 0 ] && diag "guest stdout:" "$(cat "$o")" "guest stderr:" "$(tail -20 "$work/err")"
done_testing
