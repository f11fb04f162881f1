#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 2400
# Test suites as experiment programs (docs/experiment.md "Test suites") on
# our own CMake + GoogleTest project (tests/gtest, built by make into
# build/tests/gtest): the program list comes from the suite's own listing,
# --gtest_list_tests or ctest --show-only=json-v1, one cell per test case;
# in the VM the racy case (Account.WithdrawNeverOverdraws) is a failing
# cell and the correct ones pass; one CTest test's command runs as a
# program; report --junit gives a testsuite per test case.
source "$(dirname "$0")/../lib.sh"
need_vm
GT=$B/tests/gtest
[ -x "$GT/account_test" ] || skip_all "build first: make (needs cmake, libgtest-dev: sudo make deps)"
command -v ctest >/dev/null || skip_all "ctest missing (run: sudo make deps)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 missing (run: sudo make deps)"
plan 12
T=$(mktemp -d /tmp/cs-gtest.XXXXXX)
trap 'rm -rf "$T"' EXIT

# pct:2 finds a depth-2 bug with probability >= 1/(n k^(d-1)) per run
# (Burckhardt et al.): n = 3 threads (main and two tellers), k = 4 steps
# (report --schedule: the tellers' 4 lock calls before main's), so >= 1/12
# a run, and 160 runs all miss with probability <= (11/12)^160 = 9.1e-7.
# (Measured: 8 failing runs of 40, tests/vm/61's campaign by hand.)
cat >"$T/gtest.json" <<EOF2
{ "programs": [ { "gtest": "$GT/account_test", "run_timeout": $(scaled 30) } ],
  "strategies": [ "pct:2" ], "seeds": [1], "budget": { "runs": 160 },
  "where": { "vm": true } }
EOF2
cat >"$T/ctest.json" <<EOF2
{ "programs": [ { "ctest": "$GT", "name": "ct" } ],
  "strategies": [ "pct:2" ], "seeds": [1], "budget": { "runs": 160 },
  "where": { "vm": true } }
EOF2

"$CS" experiment run --list "$T/gtest.json" -o "$T/g" >"$T/glist" 2>&1
is "$?" 0 "gtest spec: run --list"
is "$(grep -c '^cell ' "$T/glist")" 3 "gtest spec: one cell per test case (3)"
like "$(cat "$T/glist")" "cell 2 Account.WithdrawNeverOverdraws-pct_2-1: .* -- $GT/account_test --gtest_filter=Account.WithdrawNeverOverdraws" \
	"gtest spec: a case runs as the binary with --gtest_filter"
"$CS" experiment run --list "$T/ctest.json" >"$T/clist" 2>&1
is "$?" 0 "ctest spec: run --list"
is "$(grep -c '^cell ' "$T/clist")" 3 "ctest spec: one cell per CTest test (3)"
like "$(cat "$T/clist")" "cell 0 ct.Account.DepositsAddUp-pct_2-1: .* -- $GT/account_test --gtest_filter=Account.DepositsAddUp --gtest_also_run_disabled_tests" \
	"ctest spec: a test runs as the command CTest runs, named after the test"

cmd=$(ctest --test-dir "$GT" --show-only=json-v1 | python3 -c '
import json, shlex, sys
t = [t for t in json.load(sys.stdin)["tests"] if t["name"] == "Account.AtomicWithdrawNeverOverdraws"][0]
print(shlex.join(t["command"]))')
eval "set -- $cmd"
"$CS" run --vm -s pct:2 -n 3 -o "$T/one" -- "$@" >/dev/null 2>"$T/one.err"
is "$?" 0 "one CTest test's command runs as a program (a correct case: 3 runs pass)"

"$CS" experiment run "$T/gtest.json" -o "$T/g" >"$T/gout" 2>&1
ok $? "the gtest experiment runs in the VM"
cells=$(sqlite3 "$T/g/experiment.db" "SELECT program, status, ifnull(first_failure_run, 'censored') FROM cells ORDER BY idx")
diag "$cells"
like "$(echo "$cells" | sed -n 3p)" '^Account.WithdrawNeverOverdraws\|done\|[0-9]+$' \
	"the racy test case is a failing cell"
is "$(echo "$cells" | sed -n '1,2p' | tr '\n' ' ')" \
	"Account.DepositsAddUp|done|censored Account.AtomicWithdrawNeverOverdraws|done|censored " \
	"the correct test cases pass 160 steered runs"
"$CS" report "$T/g" --junit "$T/g.xml" >/dev/null 2>&1
is "$?" 1 "report --junit of the experiment: exit 1 (a failing cell)"
like "$(python3 -c '
import sys, xml.etree.ElementTree as ET
for s in ET.parse(sys.argv[1]).getroot().findall("testsuite"):
    print(s.get("name"), s.get("failures"), end=" ")' "$T/g.xml")" \
	'^Account.AtomicWithdrawNeverOverdraws-pct_2-1 0 Account.DepositsAddUp-pct_2-1 0 Account.WithdrawNeverOverdraws-pct_2-1 1 $' \
	"JUnit: a testsuite per test case, the racy one failed"
done_testing
