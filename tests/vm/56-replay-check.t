#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 600
# A failure we report must replay (issue 14): a campaign replays each
# failing steered run in its recorded order before it goes on
# (--replay-check K, default 1), the first of each failure (kind and
# sites), notes it in table replays and says so; report shows "replayed
# k/K". On examples/bank under random the first failure replays and later
# ones of the same kind and sites are not checked again; K replays with
# --replay-check K; none with --replay-check 0, and none for a run that
# was not steered (-s none: nothing to re-make). tests/programs/fails_once
# fails only in the first run of its guest (a marker file): its replay
# passes, so the campaign warns that the failure needed what it did not
# record and the report says "replayed 0/1". A correct program is never
# checked: it never fails. --verbose goes into the VM with the campaign.
source "$(dirname "$0")/../lib.sh"
need_vm
BANK=$B/examples/bank
ONCE=$PROGS/fails_once
[ -x "$BANK" ] && [ -x "$ONCE" ] && [ -x "$PROGS/counter" ] || skip_all "build first: make"
command -v sqlite3 >/dev/null || skip_all "sqlite3 missing (run: sudo make deps)"
plan 16
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
q() { sqlite3 "$1/campaign.db" "$2"; }

"$CS" run --vm -s random -n 20 --keep-going --seed 5 -o "$T/b" -- "$BANK" >/dev/null 2>"$T/b.err"
fails=$(q "$T/b" "SELECT count(*) FROM failures")
checked=$(q "$T/b" "SELECT group_concat(run || ':' || reproduced || '/' || times, ' ') FROM replays")
diag "bank under random: failing runs $(q "$T/b" "SELECT group_concat(run) FROM failures"); checked $checked"
ok "$([ "${fails:-0}" -ge 1 ]; echo $?)" "bank fails under random ($fails of 20 runs)"
first=$(q "$T/b" "SELECT min(run) FROM failures")
is "$(q "$T/b" "SELECT count(*) FROM replays WHERE run = $first AND times = 1 AND reproduced = 1")" 1 \
	"its first failure (run $first) replayed once, as recorded, before the campaign went on"
# The next line after the failure's that is not a warning (a failure whose
# steering was not kept throughout warns so before its replay).
like "$(sed -n "/^concsched: run $first: assertion/,\$p" "$T/b.err" | grep -v '^concsched: warning: ' | sed -n 2p)" \
	"^concsched: run $first: replayed: assertion again \\(1 of 1\\)$" "the campaign says so right after the failure"
is "$(q "$T/b" "SELECT count(*) FROM replays")" \
	"$(q "$T/b" "SELECT count(DISTINCT kind || (SELECT group_concat(site) FROM (SELECT site FROM failure_sites WHERE failure = failures.id ORDER BY site))) FROM failures")" \
	"one check per failure (kind and sites): later runs with the same failure are not replayed again"
like "$("$CS" report "$T/b")" "replay: .* --run $first --vm  \\(replayed 1/1\\)" \
	"the report shows it next to the replay command"

"$CS" run --vm -s random -n 30 --seed 5 --replay-check 3 -o "$T/b3" -- "$BANK" \
	>/dev/null 2>"$T/b3.err"
first=$(q "$T/b3" "SELECT min(run) FROM failures")
is "$(q "$T/b3" "SELECT times || '/' || reproduced FROM replays WHERE run = ${first:-0}")" "3/3" \
	"--replay-check 3: three replays, each failed again (run ${first:-none})"
"$CS" run --vm -s random -n 30 --seed 5 --replay-check 0 -o "$T/b0" -- "$BANK" \
	>/dev/null 2>"$T/b0.err"
is "$(q "$T/b0" "SELECT count(*) FROM failures") $(q "$T/b0" "SELECT count(*) FROM replays")" \
	"1 0" "--replay-check 0: the first failure, and no check"
ok "$(grep -q "replayed:" "$T/b0.err"; [ $? = 1 ]; echo $?)" "... and nothing said of one"

"$CS" --verbose run --vm -s random -n 4 --keep-going --seed 1 -o "$T/o" -- "$ONCE" \
	/tmp/fails-once.marker >/dev/null 2>"$T/o.err"
like "$(cat "$T/o.err")" "concsched: debug: run: [0-9.]+ s, [0-9]+ decisions" \
	"--verbose reaches the concsched in the VM (its runs' debug lines)"
is "$(q "$T/o" "SELECT group_concat(run) FROM failures")" 1 "fails_once: only its first run fails"
is "$(q "$T/o" "SELECT run || ':' || reproduced || '/' || times FROM replays")" "1:0/1" \
	"its check did not reproduce it (0 of 1)"
like "$(cat "$T/o.err")" "warning: run 1 did not fail again when replayed in its recorded order.* \\(last replay: exited with status 0\\): its failure depended on something concsched did not record" \
	"the campaign warns that replay reproduces it only by chance"
like "$("$CS" report "$T/o")" "replayed 0/1" "the report says it did not replay"

"$CS" run --vm -s none -n 2 --keep-going -o "$T/n" -- "$ONCE" /tmp/fails-once.marker \
	>/dev/null 2>"$T/n.err"
is "$(q "$T/n" "SELECT count(*) FROM failures") $(q "$T/n" "SELECT count(*) FROM replays")" "1 0" \
	"-s none: its failure is not checked (no steering to re-make)"

"$CS" run --vm -s random -n 10 --seed 3 -o "$T/c" -- "$PROGS/counter" locked 20 >/dev/null 2>"$T/c.err"
is "$?" 0 "a correct program (a locked counter) under random: exit 0"
is "$(q "$T/c" "SELECT count(*) FROM failures") $(q "$T/c" "SELECT count(*) FROM replays")" "0 0" \
	"... no failure, nothing checked"
done_testing
