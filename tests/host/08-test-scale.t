#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 60
# tools/run-test's speed scale (docs/testing.md "Speed calibration"): the
# calibrated scale (BUILD/test-scale) times how much the load has risen
# since the calibration (BUILD/test-load) over the CPUs, at most 10; a
# scale given in CS_TEST_SCALE is used as it is. Checked on a build
# directory and a loadavg file of the test's own (CS_TEST_LOADAVG).
source "$(dirname "$0")/../lib.sh"
plan 6
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=$(getconf _NPROCESSORS_ONLN)
cat >"$T/show.t" <<'EOF'
#!/bin/sh
echo "1..1"
echo "ok 1 - scale $CS_TEST_SCALE"
EOF
chmod +x "$T/show.t"
# scale_with CALIBRATED LOAD_THEN LOAD_NOW: the scale run-test gives a file
scale_with() {
	printf '%s\n' "$1" >"$T/test-scale"
	printf '%s\n' "$2" >"$T/test-load"
	printf '%s 0.00 0.00 1/100 1\n' "$3" >"$T/loadavg"
	env -u CS_TEST_SCALE BUILD="$T" CS_TEST_LOADAVG="$T/loadavg" "$ROOT/tools/run-test" "$T/show.t" |
		sed -n 's/^ok 1 - scale //p'
}
is "$(scale_with 1.5 0.00 0.00)" 1.5 "an idle machine: the calibrated scale"
is "$(scale_with 1.5 0.00 "$n")" 1.5 "one runnable task per CPU, as at the calibration plus its lanes: unchanged"
is "$(scale_with 1.5 0.00 "$((3 * n))")" 4.5 "three times as many runnable tasks as CPUs since: three times the scale"
is "$(scale_with 1.6 "$n" "$((3 * n))")" 2.4 "... measured with one per CPU then: 1.6 x 3n / 2n"
is "$(scale_with 2.0 0.00 "$((100 * n))")" 10.0 "at most 10"
is "$(CS_TEST_SCALE=3 BUILD="$T" CS_TEST_LOADAVG="$T/loadavg" "$ROOT/tools/run-test" "$T/show.t" |
	sed -n 's/^ok 1 - scale //p')" 3 "CS_TEST_SCALE given: used as it is"
done_testing
