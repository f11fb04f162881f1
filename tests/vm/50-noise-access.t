#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 600
# Noise at memory-access points (issue 12 item 2): with --access a noise
# configuration over accesses (sharedVar-all) delays threads at the probed
# accesses to shared variables, which opens race_torn_pair's window (two
# plain stores, no lock: never between synchronization points) — it fails
# with its assertion, which native reruns practically never show
# (tests/host/50-corpus-native.t); sharedVar-all acts at every shared
# access even where the estimation found variables one thread writes and
# another reads; random --access runs, its sharedVar-one runs on one of
# those variables (issue 30); a correct program under the same noise never
# fails; without --access the configuration is refused in one line.
source "$(dirname "$0")/../lib.sh"
need_vm
P=$PROGS/race_torn_pair
[ -x "$P" ] && [ -x "$PROGS/clean_lockwrap" ] || skip_all "build first: make"
command -v python3 >/dev/null && command -v sqlite3 >/dev/null || skip_all "python3 or sqlite3 missing (run: sudo make deps)"
plan 10
T=$(mktemp -d /tmp/cs-noiseacc-XXXXXX)
trap 'rm -rf "$T"' EXIT
kinds() {
	"$CS" report "$1" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(len(d["runs"]["list"]), sum(1 for f in d["failures"] if f["kind"] == "assertion"), len(d["failures"]))'
}

"$CS" run -s 'sharedVar-all@500/sleep:2000' -n 1 -o "$T/x" -- "$P" >/dev/null 2>"$T/err"
is "$?" 2 "an access placement without --access: exit 2"
like "$(cat "$T/err")" "acts at memory accesses: add --access" "... with one line saying what to add"

# Until the first failure, at most 1000 runs: how many runs that takes is a
# measurement (diag), what fails is the check. Measured 3 failures in 37,
# 67 and 78 runs (2026-11-29, three repetitions, about 1 in 20); even at 1
# failing run in 40, no failure in 1000 runs is (39/40)^1000 = 1e-11.
# (Until the third failure, as until 2026-11-29, took three times as
# many runs and checked nothing more.)
"$CS" run --vm -s 'sharedVar-all@500/sleep:2000' --access -n 1000 --max-failures 1 --seed 1 -o "$T/sv" \
	-- "$P" >/dev/null 2>&1
read -r n a f <<<"$(kinds "$T/sv")"
diag "sharedVar-all@500/sleep:2000 --access: $a assertions in $n runs"
ok "$([ "${a:-0}" = 1 ] && [ "$a" = "$f" ]; echo $?)" \
	"race_torn_pair fails with its assertion under noise at accesses ($a of $n)"
is "$(sqlite3 "$T/sv/campaign.db" "SELECT DISTINCT json_extract(strategy_config, '$.noise') FROM runs")" \
	"sharedVar-all@500/sleep:2000" "every run records the configuration"
is "$(sqlite3 "$T/sv/campaign.db" "SELECT count(*) FROM runs WHERE json_extract(strategy_config, '$.focus') IS NOT NULL")" \
	0 "... and no focus: sharedVar-all acts at every shared access"

"$CS" run --vm -s random --access -n 20 --keep-going --seed 1 -o "$T/rnd" -- "$P" >/dev/null 2>"$T/rnd.err"
read -r n a f <<<"$(kinds "$T/rnd")"
diag "random --access: $a assertions in $n runs"
is "$n" 20 "random --access: 20 runs"
# The torn pair's fields are written by one thread and read by another:
# sharedVar-one draws its variable among them, and its runs (4 of seed 1's
# first 20, a draw from the seed; the accesses' configuration,
# "noise_access", apart from the synchronization points') record it.
like "$(cat "$T/rnd.err")" \
	"random: sharedVar-one picks its variable among the [1-9][0-9]* written by one thread and read by another" \
	"random --access: one line says where sharedVar-one draws its variable"
read -r one focused <<<"$(sqlite3 -separator ' ' "$T/rnd/campaign.db" "SELECT count(*),
	sum(json_extract(strategy_config, '$.focus') = 'cross-thread variable' AND
	    json_extract(strategy_config, '$.var') IS NOT NULL)
	FROM runs WHERE json_extract(strategy_config, '$.noise_access') LIKE 'sharedVar-one@%'")"
ok "$([ "${one:-0}" -gt 0 ] && [ "$one" = "$focused" ]; echo $?)" \
	"... every sharedVar-one run records a cross-thread variable ($focused of $one)"
# 4 runs: each is 10-25 s in the VM under this noise (10 runs were most
# of this file's time, docs/testing.md); the clean corpus's study runs
# the correct programs at length (tests/vm/44-clean-corpus.t).
"$CS" run --vm -s 'sharedVar-all@500/sleep:2000' --access -n 4 --keep-going --seed 1 -o "$T/clean" \
	-- "$PROGS/clean_lockwrap" >/dev/null 2>&1
is "$?" 0 "a correct program under noise at accesses: exit 0"
is "$(kinds "$T/clean")" "4 0 0" "... 4 runs, no failure"
done_testing
