#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The CLI surface: help, version, unknown commands, doctor.
# timeout: 60
source "$(dirname "$0")/../lib.sh"
plan 10

out=$("$CS" --help); ok $? "--help exits 0"
like "$out" "Examples:" "--help shows examples"
like "$("$CS" --version)" "^concsched [0-9]+\.[0-9]+\.[0-9]+$" "--version prints the version"
"$CS" no-such-command 2>/tmp/cs-cli-err; is $? 2 "unknown command exits 2"
like "$(cat /tmp/cs-cli-err)" "^concsched: unknown command 'no-such-command'" "one-line error names the command"
is "$(wc -l </tmp/cs-cli-err)" 1 "the error is one line"
"$CS" >/dev/null 2>&1; is $? 2 "no command exits 2"

if [ "$(id -u)" = 0 ]; then
	json=$("$CS" doctor --json); rc=$?
	like "$json" '"kernel": "'"$(uname -r)"'"' "doctor --json reports the running kernel"
	# exit 0 exactly when run works natively or with the VM
	want=1; printf '%s' "$json" | grep -Eq '"run_(native|vm)": true' && want=0
	is $rc $want "doctor exit status agrees with its verdict"
	like "$("$CS" doctor)" "^kernel +ok" "doctor text output starts with the kernel line"
else
	skip "needs root" "doctor --json"; skip "needs root" "doctor exit"; skip "needs root" "doctor text"
fi
rm -f /tmp/cs-cli-err
done_testing
