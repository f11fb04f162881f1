#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 60
# tools/run-test's host lock: a host test (a file under tests/host/) runs
# only while it holds one lock of the machine, so two `make test` runs on
# one machine, or a flake hunt beside one, take turns file by file instead
# of counting each other's probe hits (ci29, 2026-11-30: 54-probe-scope's
# bystander checks beside another clone's host campaigns). Checked with a
# lock file of the test's own (CS_HOST_TEST_LOCK) and holders that let go
# only after they mark it: no check depends on how fast anything runs.
source "$(dirname "$0")/../lib.sh"
plan 6
T=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
mkdir -p "$T/tests/host" "$T/tests/vm"
export CS_HOST_TEST_LOCK=$T/lock CS_TEST_SCALE=1
# A test file that says whether the holder had let go when it started.
for f in tests/host/a.t tests/vm/b.t; do
	printf '%s\n' '#!/bin/sh' 'echo "1..1"' \
		"if [ -e '$T/released' ]; then echo 'ok 1 - after the holder'; else echo 'ok 1 - before the holder'; fi" \
		>"$T/$f"
	chmod +x "$T/$f"
done
# hold: take the lock, say so, keep it until $T/go exists, mark the
# release, exit (which releases it).
hold() {
	rm -f "$T/held" "$T/released"
	flock "$T/lock" sh -c "touch '$T/held'; while [ ! -e '$T/go' ]; do sleep 0.05; done; touch '$T/released'" &
	for _ in $(seq 400); do [ -e "$T/held" ] && break; sleep 0.05; done
}
hold
[ -e "$T/held" ]
ok $? "the holder took the lock"
like "$("$ROOT/tools/run-test" "$T/tests/vm/b.t")" "ok 1 - before the holder" \
	"a file outside tests/host/ does not wait for the lock"
# The host file waits: started before the go, it runs after the release.
"$ROOT/tools/run-test" "$T/tests/host/a.t" >"$T/a.out" &
waiter=$!
sleep 1 # without the lock it would have printed by now
already=$(cat "$T/a.out")
touch "$T/go"
wait "$waiter"
is "$already" "" "a host file waits while another holds the lock"
like "$(cat "$T/a.out")" "ok 1 - after the holder" "... and runs once it is released"
wait

# A process the test leaves behind does not keep the lock.
printf '%s\n' '#!/bin/sh' 'sleep 30 >/dev/null 2>&1 &' "echo \$! >'$T/stray.pid'" \
	'echo "1..1"' 'echo "ok 1 - left a sleep behind"' >"$T/tests/host/stray.t"
chmod +x "$T/tests/host/stray.t"
"$ROOT/tools/run-test" "$T/tests/host/stray.t" >/dev/null
alive=$(kill -0 "$(cat "$T/stray.pid")" 2>/dev/null && echo alive)
free=$(flock -n "$T/lock" true && echo free)
kill "$(cat "$T/stray.pid")" 2>/dev/null
is "$alive $free" "alive free" "the lock is free once the file ends, though its sleep lives on"

# Under CI=true (the output goes through the skip filter) too.
rm -f "$T/go"
hold
( sleep 1; touch "$T/go" ) &
like "$(CI=true "$ROOT/tools/run-test" "$T/tests/host/a.t")" "ok 1 - after the holder" \
	"under CI=true a host file waits for the lock too"
wait
done_testing
