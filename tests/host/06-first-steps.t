#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 120
# What a new user meets first (issue 15 items 7 and 8): README's command
# table lists every command `concsched --help` lists; the campaign
# directory a run without -o leaves in the repository
# (concsched-PROG-DATE-TIME, as README's first command does) is ignored by
# git; `-s none` is described as reruns under the probes that differ from
# native reruns in run --help, the man page and the docs, and nothing calls
# it "plain reruns" any more.
source "$(dirname "$0")/../lib.sh"
[ -x "$CS" ] || skip_all "build first: make"
plan 11
T=$(mktemp -d /tmp/cs-first-XXXXXX)
made=()
cleanup() {
	local d
	for d in "${made[@]}"; do rm -rf "$d"; done
	rm -rf "$T"
}
trap cleanup EXIT
flat() { tr '\n' ' ' | tr -s ' '; }

# --- README's command table ----------------------------------------------
cmds=$("$CS" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF && $1 != "Commands:" { print $1 }')
n=$(echo $cmds | wc -w)
ok $([ "$n" -ge 10 ]; echo $?) "concsched --help lists its commands ($n)"
missing=
for c in $cmds; do
	grep -q "^| \`concsched $c[ \`]" "$ROOT/README.md" || missing="$missing $c"
done
is "${missing# }" "" "README's command table has a row for every command"

# --- campaign directories in the checkout are ignored ----------------------
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
	d=$ROOT/concsched-bank-20260101-120000
	made+=("$d")
	mkdir "$d" && : >"$d/campaign.db"
	git -C "$ROOT" check-ignore -q "$d/campaign.db"
	ok $? "git ignores concsched-bank-DATE-TIME/ in the repository root"
	if [ "$(id -u)" = 0 ] && [ -x "$PROGS/fig2" ]; then
		before=$(ls -d "$ROOT"/concsched-fig2-* 2>/dev/null)
		(cd "$ROOT" && "$CS" run -s none -n 1 -- "$PROGS/fig2" >/dev/null 2>&1)
		new=$(ls -d "$ROOT"/concsched-fig2-* 2>/dev/null | grep -vxF "$before" | head -1)
		[ -n "$new" ] && made+=("$new")
		ok $([ -n "$new" ]; echo $?) "run without -o in the root creates ${new##*/}"
		is "$(git -C "$ROOT" status --porcelain --untracked-files=all -- "${new:-/nonexistent}")" "" \
			"git status does not show it"
	else
		skip "needs root and a build" "run without -o in the root"
		skip "needs root and a build" "git status does not show it"
	fi
else
	for i in 1 2 3; do skip "not a git checkout" ".gitignore check $i"; done
fi

# --- -s none is not the native baseline ------------------------------------
help=$("$CS" run --help | flat)
like "$help" "none +no steering, any kernel; not native reruns: the probes alone change the timing" \
	"run --help: none is not native reruns, the probes change the timing"
like "$(man -l "$ROOT/man/concsched.1" 2>/dev/null | flat)" \
	"none \(no steering: reruns under the probes, on any kernel; not the same as native reruns" \
	"man page: the same"
grep -q '^## none: no steering, but not native reruns' "$ROOT/docs/strategies.md"
ok $? "docs/strategies.md has a section on none against native reruns"
like "$(flat <"$ROOT/docs/strategies.md")" "compare strategies against \*\*native reruns\*\*" \
	"docs/strategies.md: native reruns are the baseline"
grep -q '| `none` | no steering: .*not the native baseline' "$ROOT/docs/run.md"
ok $? "docs/run.md's strategy table says so"
hits=$(cd "$ROOT" && grep -rIln "plain rerun" README.md docs man userspace examples tests 2>/dev/null |
	grep -v '^tests/host/06-first-steps.t$' | tr '\n' ' ')
is "$hits" "" "nothing calls -s none (or native reruns) \"plain reruns\""
done_testing
