#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `concsched sites` (site finder CLI, no root): per-function counts, --list,
# --json, globs, --sites-object, stripped and static programs, and the
# one-line errors with exit status 2.
# timeout: 60
source "$(dirname "$0")/../lib.sh"
[ -x "$PROGS/accesses" ] || skip_all "build first: make"

plan 15
acc=$PROGS/accesses

out=$("$CS" sites "$acc" 2>&1)
ok $? "sites PROG exits 0"
like "$out" "acc_inc_global +accesses\.c +1 sites +R 0 +W 0 +RW 1" "counter++ is one RW site"
like "$out" "acc_atomic_add .* locked 1" "lock add counted as locked"
like "$out" "sites in [0-9]+ functions .*skipped: [1-9][0-9]* stack" "summary counts skipped stack accesses"
[[ "$out" != *acc_stack_local* ]]
ok $? "a function with only stack accesses has no sites"

out=$("$CS" sites --list --sites-include 'acc_*' --sites-exclude 'acc_x*' "$acc")
like "$out" "0x[0-9a-f]+ +W +4 +acc_store_global\+0x0 \(accesses\.c:[0-9]+\) +mov dword ptr \[rip" "--list shows offset, access, size, site, instruction"
[[ "$out" != *acc_xchg* && "$out" != *main* ]]
ok $? "--sites-include/--sites-exclude globs"

json=$("$CS" sites --json --sites-include 'accesses.c' "$acc")
like "$(printf '%s' "$json" | tr -d ' \n')" '^\{"sites_total":[0-9]+,.*"functions":\[.*"sites":\[\{"object":' "--json document"
if command -v jq >/dev/null; then
	is "$(printf '%s' "$json" | jq -r '[.sites[] | select(.function == "acc_xchg")][0].access')" "RW" "--json parses; xchg is RW"
else
	skip "jq not installed" "--json parses"
fi

out=$("$CS" sites "$PROGS/accesses-stripped" 2>&1)
like "$out" "warning: .*stripped" "stripped program: warning, sites still listed"
out=$("$CS" sites --sites-include 'acc_*' "$PROGS/accesses-static")
like "$out" "acc_inc_global" "static program"
out=$("$CS" sites --sites-object libc --sites-include 'pthread_mutex_lock' "$acc")
# The file column: libc.so.6 without line info, pthread_mutex_lock.c with
# libc6-dbg's separate debug file installed.
like "$out" "pthread_mutex_lock +(libc\.so\.6|pthread_mutex_lock\.c) +[0-9]+ sites" \
	"--sites-object libc adds libc's sites"

"$CS" sites >/dev/null 2>&1
is $? 2 "no PROG: exit 2"
like "$("$CS" sites --help)" "Examples:" "sites --help has examples"
err=$("$CS" sites --sites-object nosuchlib "$acc" 2>&1 >/dev/null)
rc=$?
like "$err rc=$rc" "^concsched: --sites-object nosuchlib: no such shared object.* rc=2$" \
	"unknown --sites-object: one line, exit 2"

done_testing
