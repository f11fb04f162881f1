#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The CLI surface: help, version, unknown commands, the strategy list, doctor.
# timeout: 60
source "$(dirname "$0")/../lib.sh"
plan 17

out=$("$CS" --help); ok $? "--help exits 0"
like "$out" "Examples:" "--help shows examples"
like "$("$CS" --version)" "^concsched [0-9]+\.[0-9]+\.[0-9]+$" "--version prints the version"
"$CS" no-such-command 2>/tmp/cs-cli-err; is $? 2 "unknown command exits 2"
like "$(cat /tmp/cs-cli-err)" "^concsched: unknown command 'no-such-command'" "one-line error names the command"
is "$(wc -l </tmp/cs-cli-err)" 1 "the error is one line"
"$CS" >/dev/null 2>&1; is $? 2 "no command exits 2"

# run --help lists the strategies from the registry; the unknown-strategy
# error, the man page and docs/strategies.md name each of them.
names=$("$CS" run --help | sed -n '/^Strategies/,/^$/p' | awk '/^  [a-z]/ { sub(/\[.*/, "", $1); print $1 }')
like "$(echo $names)" "^none random tsa tsa-h map pct ga fpair portfolio" "run --help lists the strategies"
"$CS" run -s no-such-strategy -- /bin/true 2>/tmp/cs-cli-err; is $? 2 "an unknown strategy exits 2"
err=$(cat /tmp/cs-cli-err)
missing=
for n in $names; do
	case $err in *" $n,"* | *" $n "*) ;; *) missing="$missing $n" ;; esac
done
is "$missing" "" "the unknown-strategy error names every listed strategy"
man_missing=
doc_missing=
man_run=$(sed -n '/^\.SS run$/,/^\.SS /p' "$ROOT/man/concsched.1")
for n in $names; do
	printf '%s\n' "$man_run" | grep -Eq "^\.BR? $(printf '%s' "$n" | sed 's/-/\\\\-/g')( |$)" ||
		man_missing="$man_missing $n"
	grep -Eq "^## .*\b$n\b" "$ROOT/docs/strategies.md" || doc_missing="$doc_missing $n"
done
is "$man_missing" "" "the man page's run section describes every listed strategy"
is "$doc_missing" "" "docs/strategies.md has a section for every listed strategy"

if [ "$(id -u)" = 0 ]; then
	json=$("$CS" doctor --json); rc=$?
	like "$json" '"kernel": "'"$(uname -r)"'"' "doctor --json reports the running kernel"
	# exit 0 exactly when run works natively or with the VM
	want=1; printf '%s' "$json" | grep -Eq '"run_(native|vm)": true' && want=0
	is $rc $want "doctor exit status agrees with its verdict"
	like "$("$CS" doctor)" "^kernel +ok" "doctor text output starts with the kernel line"
	# A Debian 13 host without sched_ext is told about trixie-backports' kernel.
	printf 'PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nNAME="Debian GNU/Linux"\nVERSION_ID="13"\nID=debian\n' \
		>/tmp/cs-cli-os
	if printf '%s' "$json" | grep -q '"sched_ext": false'; then
		like "$(CONCSCHED_OS_RELEASE=/tmp/cs-cli-os "$CS" doctor | tr "\n" " ")" \
			"advice: Debian 13 .*trixie-backports.*apt-get install -t trixie-backports linux-image-amd64" \
			"doctor on Debian 13 without sched_ext: how to get trixie-backports' kernel"
		sed -i 's/VERSION_ID="13"/VERSION_ID="12"/' /tmp/cs-cli-os
		is "$(CONCSCHED_OS_RELEASE=/tmp/cs-cli-os "$CS" doctor | grep -c '^advice: Debian 13')" 0 \
			"no such advice on Debian 12"
	else
		skip "this kernel has sched_ext" "doctor's Debian 13 advice"
		skip "this kernel has sched_ext" "no Debian 13 advice on Debian 12"
	fi
else
	skip "needs root" "doctor --json"; skip "needs root" "doctor exit"; skip "needs root" "doctor text"
	skip "needs root" "doctor's Debian 13 advice"; skip "needs root" "no Debian 13 advice on Debian 12"
fi
rm -f /tmp/cs-cli-err /tmp/cs-cli-os
done_testing
