#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 120
# tools/test-lanes, make test's runner, on files of its own: the files
# before "--" run one after another, each beside a file after it (the
# lanes meet: each side waits for the other, so a runner that ran the
# chain last, as prove --rules does, fails here); two files at a time
# with -j 2; a failing file fails the run and its failing check's line is
# in the output (a CI log names it); bad usage exits 2.
source "$(dirname "$0")/../lib.sh"
plan 10
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/s" "$T/p" "$T/m" "$T/now"
WAIT=$(($(scaled 20) * 10))
# mk FILE BODY: a test file that marks its start and end in $T/m, is in
# $T/now while it runs, and runs BODY (its check) between. In BODY,
# meet OTHER waits up to 20 s (times the speed scale) for the file OTHER
# to start, counts the files running now (OTHER still is: it waits for
# this count too) and waits for OTHER's count.
mk() {
	cat >"$1" <<GEN
#!/usr/bin/env bash
n=\$(basename "$1" .t)
wait_mark() {
	for _ in \$(seq $WAIT); do [ -e "$T/m/\$1" ] && return 0; sleep 0.1; done
	return 1
}
meet() {
	wait_mark \$1.start || return 1
	ls "$T/now" | wc -l >"$T/m/\$n.max"
	touch "$T/m/\$n.counted"
	wait_mark \$1.counted
}
touch "$T/m/\$n.start" "$T/now/\$n"
echo 1..1
$2
rm -f "$T/now/\$n"
touch "$T/m/\$n.end"
GEN
	chmod +x "$1"
}
# Each of the chain's files must meet a parallel file: s1 meets p1, s2 p2.
mk "$T/s/s1.t" 'meet p1 && echo "ok 1" || echo "not ok 1 - s1 met no parallel file"'
mk "$T/s/s2.t" 'meet p2 && echo "ok 1" || echo "not ok 1 - s2 met no parallel file"'
mk "$T/p/p1.t" 'meet s1 && echo "ok 1" || echo "not ok 1 - p1 met no chain file"'
mk "$T/p/p2.t" 'meet s2 && echo "ok 1" || echo "not ok 1 - p2 met no chain file"'
mk "$T/p/p3.t" 'echo "ok 1"'

"$ROOT/tools/test-lanes" -j 2 "$T/s/s1.t" "$T/s/s2.t" -- "$T/p/p1.t" "$T/p/p2.t" "$T/p/p3.t" \
	>"$T/out" 2>&1
rc=$?
is "$rc" 0 "two lanes: every file passes (exit 0)"
[ "$rc" = 0 ] || diag "$(cat "$T/out")"
like "$(cat "$T/out")" "Files=5, Tests=5" "... all five files ran"
is "$(cat "$T"/m/*.max | sort -u | tr '\n' ' ')" "2 " \
	"two files at a time, a chain file beside a parallel one"
ok "$([ -e "$T/m/s1.end" ] && [ ! "$T/m/s1.end" -nt "$T/m/s2.start" ]; echo $?)" \
	"the chain's files one after another (s2 began once s1 ended)"

# A failing file fails the run, with prove's summary.
mk "$T/p/bad.t" 'echo "not ok 1 - meant to fail"'
"$ROOT/tools/test-lanes" -j 2 "$T/p/p3.t" -- "$T/p/bad.t" >"$T/out" 2>&1
is "$?" 1 "a failing file: exit 1"
like "$(cat "$T/out")" "Result: FAIL" "... and the summary says FAIL"
like "$(cat "$T/out")" "^not ok 1 - meant to fail$" "... and the failing check's line is in the output"

"$ROOT/tools/test-lanes" -j 2 "$T/nofile.t" -- "$T/p/p3.t" >/dev/null 2>"$T/err"
is "$?" 2 "a missing file: exit 2"
like "$(cat "$T/err")" "^test-lanes: no test file $T/nofile.t$" "... in one line naming it"
"$ROOT/tools/test-lanes" --help | grep -q "tools/test-lanes -j 2"
ok $? "--help exits 0 with an example"
done_testing
