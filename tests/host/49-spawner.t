#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 200
# The launcher's spawner (issue 18, kernel/launcher.h, docs/run.md "The
# spawner"): with -j N each worker's targets are forked by a small process
# of its own (cs-spawner), not by the controller; with -j 1 the controller
# forks them. What the target sees must not change either way: its parent
# is concsched (CLONE_PARENT), it leads its own process group, and it
# starts with no signal blocked (a -j worker blocks SIGINT/SIGTERM/SIGHUP,
# and its forks used to pass that on). One spawner per worker; a spawner
# killed mid-campaign is started again and no run is lost (one that dies
# twice in a row makes its worker fork, said once); none is left
# after the campaign, nor after kill -9 of concsched (it and the target go
# with it).
source "$(dirname "$0")/../lib.sh"
need_root
[ -x "$PROGS/launched" ] || skip_all "build first: make"
command -v sqlite3 >/dev/null || skip_all "sqlite3 missing (run: sudo make deps)"
plan 28
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
q() { sqlite3 "$1/campaign.db" "$2"; }
alive() { # alive PID: a process, not a zombie
	local s
	s=$(ps -o stat= -p "$1" 2>/dev/null)
	[ -n "$s" ] && [ "${s#Z}" = "$s" ]
}
check="cat \"\$CONCSCHED_OUT_FILE\" >>$T/out"

for j in 1 2; do
	: >"$T/out"
	"$CS" run -s none -n 6 -j $j --check "$check" -o "$T/j$j" -- "$PROGS/launched" >/dev/null 2>"$T/err$j"
	is "$?" 0 "-j $j: 6 passing runs, exit 0"
	is "$(grep -c '^parent concsched$' "$T/out")" 6 "-j $j: each target's parent is concsched"
	is "$(grep -c '^group own$' "$T/out")" 6 "-j $j: each target leads its own process group"
	is "$(grep -c '^blocked 0000000000000000$' "$T/out")" 6 "-j $j: each target starts with no signal blocked"
	n=$(sed -n 's/^spawner //p' "$T/out" | sort -u | wc -l)
	want=$j
	[ "$j" = 1 ] && want=0
	is "$n" "$want" "-j $j: $want spawner(s) (one per -j worker; with -j 1 the controller forks)"
	left=0
	for p in $(sed -n 's/^spawner //p' "$T/out" | sort -u); do alive "$p" && left=$((left + 1)); done
	is "$left" 0 "-j $j: no spawner is left after the campaign"
done
like "$(q "$T/j2" "select count(*) || ' ' || sum(outcome = 'pass') from runs")" "^6 6$" \
	"-j 2: every run stored, all passing"

# A spawner's child shares its memory until its exec, on a stack the
# spawner maps for it and unmaps once the child has exec'd: 40 launches
# leave a spawner's mappings where they were (a block kept per launch
# adds two, its stack and its guard page).
: >"$T/out"
"$CS" run -s none -n 40 -j 2 --check "$check" -o "$T/maps" -- "$PROGS/launched" >/dev/null 2>&1
grow=$(awk '$1 == "spawner-maps" { n[$2]++; if (!($2 in lo) || $3 < lo[$2]) lo[$2] = $3; if ($3 > hi[$2]) hi[$2] = $3 }
	END { m = 0; for (p in lo) if (hi[p] - lo[p] > m) m = hi[p] - lo[p]; print m }' "$T/out")
ok "$([ -n "$grow" ] && [ "$grow" -le 6 ]; echo $?)" \
	"40 launches at -j 2: a spawner's mappings grew by $grow at most (its children's stacks are unmapped)"

# With -j 1 the controller's own children share its memory the same way.
: >"$T/out"
"$CS" run -s none -n 40 -j 1 --check "$check" -o "$T/maps1" -- "$PROGS/launched" >/dev/null 2>&1
grow=$(awk '$1 == "parent-maps" { if (lo == "" || $2 < lo) lo = $2; if ($2 > hi) hi = $2 } END { print hi - lo }' "$T/out")
ok "$([ -n "$grow" ] && [ "$grow" -le 6 ]; echo $?)" \
	"40 launches at -j 1: the controller's mappings grew by $grow at most (its children's stacks are unmapped)"

# A spawner killed: the next launch starts a new one, no run lost, no
# warning. The first run kills the spawners it sees (one or both workers').
: >"$T/out"
"$CS" run -s none -n 8 -j 2 --check "$check" -o "$T/kill" -- "$PROGS/launched" \
	kill-spawner-once "$T/marker" >/dev/null 2>"$T/err"
is "$?" 0 "spawners killed by the first run: exit 0"
is "$(q "$T/kill" "select count(*) || ' ' || sum(outcome = 'pass') from runs")" "8 8" \
	"... all 8 runs stored and passing"
sed -n 's/^killed spawner //p' "$T/out" | sort -u >"$T/killed"
k=$(wc -l <"$T/killed")
ok "$([ "$k" -ge 1 ]; echo $?)" "... the first run killed $k spawner(s)"
sed -n 's/^spawner //p' "$T/out" | sort -u >"$T/seen"
n=$(comm -23 "$T/seen" "$T/killed" | wc -l)
ok "$([ "$n" -ge 1 ]; echo $?)" "... later runs came from new spawners ($n)"
is "$(grep -c "launcher's spawner" "$T/err")" 0 "... a restarted spawner is not worth a warning"

# Every run kills the spawners it sees, even while the other worker waits
# for its own: a worker whose spawner dies twice in a row forks the
# targets itself (said once); no run is lost or fails either way.
"$CS" run -s none -n 8 -j 2 -o "$T/killall" -- "$PROGS/launched" kill-spawner >/dev/null 2>"$T/err"
is "$?" 0 "spawners killed by every run: exit 0"
is "$(q "$T/killall" "select count(*) || ' ' || sum(outcome = 'pass') from runs")" "8 8" \
	"... all 8 runs stored and passing"
w=$(grep -c "launcher's spawner" "$T/err")
ok "$([ "$w" -le 2 ] && [ "$w" = "$(grep -c "launcher's spawner died twice in a row" "$T/err")" ]; echo $?)" \
	"... the only warnings ($w) are a worker's 'died twice in a row', once each"

# kill -9 of concsched: the spawner and the target go with it.
: >"$T/out9"
"$CS" run -s none -n 2 -j 2 --run-timeout 60 -o "$T/k9" -- "$PROGS/launched" sleep >/dev/null 2>&1 &
cs=$!
tgt= sp=
for _ in $(seq 100); do
	tgt=$(pgrep -P "$cs" -x launched | head -1)
	sp=$(pgrep -P "$cs" -x cs-spawner | head -1)
	[ -n "$tgt" ] && [ -n "$sp" ] && break
	sleep 0.1
done
ok "$([ -n "$tgt" ] && [ -n "$sp" ]; echo $?)" "kill -9: the target (${tgt:-none}) and the spawner (${sp:-none}) are concsched's children"
kill -9 "$cs"
wait "$cs" 2>/dev/null
gone=1
for _ in $(seq 50); do
	if ! alive "${sp:-0}" && ! alive "${tgt:-0}"; then gone=0; break; fi
	sleep 0.1
done
ok "$gone" "kill -9 of concsched: neither the spawner nor the target is left"

# The spawner's name is not a way in: argv[0] alone does not make one.
out=$(exec -a concsched-spawner "$CS" 2>&1 </dev/null)
rc=$?
is "$rc" 2 "argv[0] concsched-spawner without its socket: the usage, exit 2"
like "$out" "usage|Usage" "... and it prints the usage, not a spawner's silence"
out=$(exec -a concsched-spawner "$CS" 3</dev/null 2>&1 </dev/null)
is "$?" 2 "... nor with a file (not a socket) on descriptor 3"
done_testing
