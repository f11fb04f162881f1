#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 900
# concsched run under the sched_ext scheduler (in the VM): the bundled
# example's bug is found by the default strategy (the portfolio), the seed
# 000 baselines run, results land in the host's campaign directory, and a
# failure found in serial mode (without -s: random, the portfolio does not
# combine with --serial) fails again in at least 9 of 10 replays; -s none
# -j 2 there too.
source "$(dirname "$0")/../lib.sh"
need_vm
BANK=$B/examples/bank
[ -x "$BANK" ] || skip_all "build first: make"
command -v python3 >/dev/null || skip_all "python3 missing (run: sudo make deps)"
plan 19
T=$(mktemp -d /tmp/cs-runvm-XXXXXX)
trap 'rm -rf "$T"' EXIT
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# --- the README's campaign: default strategy finds the bank bug -----------
# The default is the portfolio: each run is one of its arms, and after
# the warm-up no arm falls below its share (PF_FLOOR: pct:3 --access 4 of
# 10, random --access 2, the others 1; checked by
# tests/unit/test_portfolio.c), so of 300 runs each of its six arms gets
# at least 300 / 10 - 3 = 27, more than the 24 used below. On bank in the VM (2 vCPUs, loaded by a CI
# beside it; docs/studies/portfolio-default-2026-11-28.md) the arms failed
# pct:3 --access 5/17, fpair 23/29, random 9/20, pct:3 9/20 runs, and
# random --access (with random's configuration at the synchronization
# points since 14d511f) 35/60 (seeds 1-2, 2026-11-30, beside a make test;
# docs/studies/random-access-split-2026-11-30.md); map counted as 0;
# one-sided 95 % lower bounds 0.124, 0.632, 0.259, 0.259, 0.469. Runs
# fail independently given their arm, so 24 runs of each miss with at
# most (0.876 x 0.368 x 0.741 x 0.741 x 0.531)^24 = 0.094^24 = 2e-25
# (without random --access's: 0.177^24 = 9e-19). The campaign stops at
# its first failure.
SUDO_USER=cs-nobody "$CS" run --vm -n 300 -o "$T/bank" -- "$BANK" >"$T/out" 2>"$T/err"
is "$?" 1 "run --vm on examples/bank finds a failure (exit 1)"
like "$(cat "$T/err")" "assertion .*overdrawn.* failed in main at examples/bank.c:[0-9]+" \
	"the failure is the bank's overdraft assertion, with its site"
like "$(cat "$T/err")" "replay: sudo $(cs_printed) replay $T/bank --run [0-9]+ --vm" \
	"the replay command names the host's binary, sudo (SUDO_USER), the host directory and --vm"
"$CS" report "$T/bank" --json >"$T/bank.json"
is "$?" 1 "the campaign came back to the host (report exits 1: it has a failure)"
is "$(jget "$T/bank.json" 'd["failures"][0]["kind"]')" assertion "stored failure kind"
is "$(jget "$T/bank.json" 'd["campaign"]["strategy"]')" portfolio "without -s the strategy is the portfolio"
like "$(jget "$T/bank.json" 'd["failures"][0]["arm"]')" '^(pct:3|random)( --access)?$|^(fpair|map)$' \
	"the failure names the portfolio's arm that ran it"
like "$(jget "$T/bank.json" 'd["campaign"]["kernel"]')" '\+deb' "it ran on the VM's sched_ext kernel"
is "$(jget "$T/bank.json" '(d["campaign"]["host"], d["campaign"]["where"])')" "('$(hostname)', 'vm')" \
	"the campaign records this host as its machine and the VM as where it ran"

# --- the seed 000 baselines, in one VM ------------------------------------
"$CS" vm -t "$(scaled 400)" -C "$BANK" -- sh -c "
for s in rnd-y:0.5 rnd-s10:0.2 rnd-s100:0.1 none; do
	$CS run -s \$s -n 3 --keep-going -o /tmp/b-\$s -- $BANK >/dev/null 2>&1
	echo \"\$s exit \$? runs \$($CS report /tmp/b-\$s --json 2>/dev/null | grep -c '\"seed\"')\"
done
$CS run -s none -j 2 -n 6 --keep-going -o /tmp/b-j2 -- $BANK >/dev/null 2>&1
echo \"j2 exit \$? \$($CS report /tmp/b-j2 2>/dev/null | grep -E '^(runs|at once):' | tr '\n' ' ')\"" >"$T/baselines" 2>"$T/baselines.err"
for s in rnd-y:0.5 rnd-s10:0.2 rnd-s100:0.1 none; do
	like "$(grep "^$s " "$T/baselines")" "^$s exit [01] runs [1-9]" "baseline $s runs (exit 0 or 1)"
done
like "$(grep "^j2 " "$T/baselines")" "^j2 exit [01] runs: +6 .* at once: +[0-9]+ of 6 runs ran beside another \(-j 2\)" \
	"-s none -j 2 in the VM: 6 runs, two at a time"

# --- replay: a failure found by random in serial mode ---------------------
# No -s: the portfolio does not combine with --serial, so the default is
# random: serial random failed bank in 20 of 30 runs (docs/perf.md), 1 in
# 10 on a loaded machine (docs/testing.md); 200 runs miss with at most
# 0.9^200 = 7e-10. The campaign stops at its first failure.
"$CS" run --vm --serial random -n 200 -o "$T/serial" -- "$BANK" >/dev/null 2>"$T/serr"
is "$?" 1 "random in serial mode finds the bug"
is "$("$CS" report "$T/serial" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["campaign"]["strategy"])')" random \
	"without -s, --serial runs random (the previous default), no error"
run=$("$CS" report "$T/serial" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["failures"][0]["run"])')
"$CS" replay "$T/serial" --run "$run" --times 10 --vm >"$T/replay" 2>&1
is "$?" 1 "replay exits 1: the failure came back"
n=$(sed -n 's/.*failed again in \([0-9]*\) of 10 replays.*/\1/p' "$T/replay")
diag "run $run failed again in ${n:-?} of 10 replays"
ok $([ "${n:-0}" -ge 9 ]; echo $?) "failed again in at least 9 of 10 replays (${n:-?})"
"$CS" replay "$T/serial" --run 999 --vm >/dev/null 2>"$T/err"
is "$?" 2 "replay of a run that does not exist: exit 2"
done_testing
