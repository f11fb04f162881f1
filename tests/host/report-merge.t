#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `concsched report` and `concsched merge` on campaigns built by the store
# API (build/tests/unit/test_report.t --make-campaign): no root, no kernel.
# timeout: 120
source "$(dirname "$0")/../lib.sh"

FIX=$B/tests/unit/test_report.t
[ -x "$CS" ] && [ -x "$FIX" ] || skip_all "build first (make)"
T=$(mktemp -d /tmp/cs-report-t.XXXXXX)
trap 'rm -rf "$T"' EXIT
plan 58

have_python() { command -v python3 >/dev/null; }
# json_get FILE EXPR: evaluate a python expression on the parsed document j.
json_get() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
# one_line CMD...: run, capture stderr, say how many lines it had.
errlines() { wc -l <"$T/err" | tr -d ' '; }

# a: random, seed 1234, on fixture-host natively; b: tsa, seed 99, in the
# VM of vmhost; m: map, seed 7, natively on h3.
"$FIX" --make-campaign "$T/a" h1 && "$FIX" --make-campaign "$T/b" h1 tsa 99 vm vmhost &&
	"$FIX" --make-campaign "$T/m" h1 map 7 native h3 &&
	"$FIX" --make-campaign "$T/x" other && "$FIX" --make-killed "$T/k" h1
ok $? "fixture campaigns built"

# Printed commands run as printed: concsched as this shell finds it (the
# build's path, relative to the cwd under it, unless PATH finds this very
# binary), "sudo " only for a user who is not root.
vm=""; [ -d /sys/kernel/sched_ext ] || vm=" --vm"
sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo "
self=$(realpath "$CS")
root=$(realpath "$ROOT")
replay_line() { sed -n 's/^ *replay: //p' | head -1; }
out=$(cd "$root" && env -u SUDO_USER PATH=/usr/bin:/bin "$CS" report "$T/a" 2>"$T/err"); rc=$?
is "$rc" 1 "report: exit 1 when the campaign has failures"
is "$(printf '%s\n' "$out" | replay_line)" "${sudo}${self#"$root"/} replay $T/a --run 30$vm" \
	"report: exact replay command, the binary relative to the cwd"
out=$(cd / && env -u SUDO_USER PATH=/usr/bin:/bin "$CS" report "$T/a" 2>/dev/null)
is "$(printf '%s\n' "$out" | replay_line)" "${sudo}$self replay $T/a --run 30$vm" \
	"replay command from outside the tree: the absolute path"
out=$(cd "$(dirname "$self")" && env -u SUDO_USER PATH=/usr/bin:/bin "$CS" report "$T/a" 2>/dev/null)
is "$(printf '%s\n' "$out" | replay_line)" "${sudo}./concsched replay $T/a --run 30$vm" \
	"replay command from the binary's directory: ./concsched"
out=$(cd / && env -u SUDO_USER PATH="$(dirname "$self"):/usr/bin:/bin" "$CS" report "$T/a" 2>/dev/null)
is "$(printf '%s\n' "$out" | replay_line)" "${sudo}concsched replay $T/a --run 30$vm" \
	"PATH finds this binary: plain concsched"
out=$(cd / && SUDO_USER=cs-nobody PATH=/usr/bin:/bin "$CS" report "$T/a" 2>/dev/null)
is "$(printf '%s\n' "$out" | replay_line)" "sudo $self replay $T/a --run 30$vm" \
	"run through sudo (SUDO_USER): the command starts with sudo"
mkdir -p "$T/sp ace"
cp -r "$T/a" "$T/sp ace/a'b"
out=$(cd / && env -u SUDO_USER PATH=/usr/bin:/bin "$CS" report "$T/sp ace/a'b" 2>/dev/null)
is "$(printf '%s\n' "$out" | replay_line)" "${sudo}$self replay '$T/sp ace/a'\\''b' --run 30$vm" \
	"a directory with a space and a quote is shell-quoted"
like "$out" "sp +50 tasks of 100 estimated \(50\.0%\), saturated at run 9" "report: coverage and saturation"
like "$out" "sites:  transfer bank\.c:42, audit bank\.c:77" "report: failure sites"

(cd / && env -u SUDO_USER PATH=/usr/bin:/bin "$CS" report "$T/a" --json >"$T/a.json" 2>"$T/err")
is "$?" 1 "report --json: exit 1 with failures"
if have_python; then
	is "$(json_get "$T/a.json" 'j["schema"]')" "concsched-report/1" "json: schema"
	is "$(json_get "$T/a.json" 'j["runs"]["total"]')" 40 "json: 40 runs"
	is "$(json_get "$T/a.json" '[m["saturation"]["saturated_at_run"] for m in j["metrics"]]')" "[None, 9]" "json: saturation per metric"
	# A steered campaign replays in the VM where this kernel lacks sched_ext.
	is "$(json_get "$T/a.json" 'j["failures"][0]["replay"]')" "${sudo}$self replay $T/a --run 30$vm" "json: replay"
	is "$(json_get "$T/a.json" 'len(j["metrics"][1]["series"])')" 40 "json: one series point per run"
else
	for i in 1 2 3 4 5; do skip "python3 missing" "json check $i"; done
fi

# The machine and where the runs ran are separate fields (a host may be
# called "vm").
field() { printf '%s\n' "$1" | grep "^$2:"; }
out=$("$CS" report "$T/a" 2>/dev/null)
is "$(field "$out" host)" "host:      fixture-host" "text: host: the machine alone"
is "$(field "$out" where)" "where:     native, kernel 7.2.0" "text: where: native, with the kernel"
is "$(field "$out" created)" "created:   2023-11-14 22:13:20 UTC, concsched 0.1.0" \
	"text: created: the time and the concsched version"
out=$("$CS" report "$T/b" 2>/dev/null)
is "$(field "$out" host): $(field "$out" where)" "host:      vmhost: where:     VM, kernel 7.2.0" \
	"text: a campaign of the VM: the host machine, where: VM"
"$CS" report "$T/b" --json >"$T/b.json" 2>/dev/null
"$CS" report "$T/b" --html "$T/b.html" >/dev/null 2>&1
if have_python; then
	is "$(json_get "$T/a.json" '(j["campaign"]["host"], j["campaign"]["where"])'):$(json_get "$T/b.json" '(j["campaign"]["host"], j["campaign"]["where"])')" \
		"('fixture-host', 'native'):('vmhost', 'vm')" "json: host and where"
else
	skip "python3 missing" "json: host and where"
fi
grep -q '<tr><th>host</th><td>vmhost</td></tr>' "$T/b.html" &&
	grep -q '<tr><th>where</th><td>VM, kernel 7.2.0</td></tr>' "$T/b.html"
ok $? "html: host and where rows"

"$CS" report "$T/a" --html "$T/a.html" >/dev/null 2>&1
is "$?" 1 "report --html: written"
is "$(grep -o '<svg' "$T/a.html" | wc -l | tr -d ' ')" 2 "html: one <svg> per metric"
grep -q 'saturated at run 9' "$T/a.html"; ok $? "html: saturation point"

"$CS" report "$T/a" --html "$T/nodir/x.html" >/dev/null 2>"$T/err"
is "$?" 2 "unwritable --html: exit 2"
like "$(cat "$T/err")" "^concsched: cannot write $T/nodir/x.html: No such file or directory$" "unwritable --html: one-line error"
"$CS" report "$T/missing" >/dev/null 2>"$T/err"
is "$?:$(errlines)" "2:1" "missing dir: exit 2, one line"
mkdir "$T/plain"
"$CS" report "$T/plain" >/dev/null 2>"$T/err"
like "$?:$(cat "$T/err")" "^2:concsched: .*/plain is not a concsched campaign directory" "not a campaign: exit 2, says so"
"$CS" report >/dev/null 2>"$T/err"
is "$?:$(errlines)" "2:1" "report without DIR: exit 2, one line"
"$CS" report "$T/a" "$T/b" >/dev/null 2>"$T/err"
is "$?:$(errlines)" "2:1" "report with two dirs: exit 2"
"$CS" report "$T/a" --saturation 1,x >/dev/null 2>"$T/err"
is "$?:$(errlines)" "2:1" "bad --saturation: exit 2"
"$CS" report --help | grep -q 'concsched report camp --html'; ok $? "report --help has examples"

out=$("$CS" report "$T/k" 2>&1)
like "$out" "runs: +40 \(pass 39, deadlock 1\)" "campaign killed mid-run: report shows committed runs"

out=$("$CS" merge "$T/a" "$T/b" -o "$T/c" 2>&1)
is "$?" 0 "merge A B -o C"
like "$out" "b: 40 new runs" "merge: B's runs appended"
"$CS" report "$T/c" --json >"$T/c.json" 2>/dev/null
if have_python; then
	is "$(json_get "$T/c.json" 'j["runs"]["total"]')" 80 "merged: 80 runs"
	is "$(json_get "$T/c.json" '[m["covered"] for m in j["metrics"]]')" "[40, 50]" "merged: tasks unioned, not duplicated"
	is "$(json_get "$T/c.json" 'len(j["failures"])')" 2 "merged: failures of both"
	is "$(json_get "$T/c.json" '[len(f["sites"]) for f in j["failures"]]')" "[2, 2]" \
		"merged: each failure keeps its sites"
	is "$(json_get "$T/c.json" '[(w["variable"], w["runs"], len(w["sites"])) for w in j["warnings"]]')" \
		"[('balance', 4, 2), ('audit_count', 2, 1), ('L1', 4, 0), ('L1', 2, 0)]" \
		"merged: warnings of both, with their sites; two lock-order pairs on L1, runs counted once each"
	is "$(json_get "$T/c.json" 'j["runs"]["overlapped"]')" 0 \
		"merged: the two campaigns' runs at the same wall times are not 'beside' each other"
else
	for i in 1 2 3 4 5 6; do skip "python3 missing" "merge json check $i"; done
fi
out=$("$CS" merge "$T/a" "$T/b" -o "$T/c" 2>&1)
like "$(echo $out)" "a: 0 new runs .*b: 0 new runs" "merge again: idempotent"
"$CS" report "$T/c" --json 2>/dev/null | grep -q '"total": 80'; ok $? "merge again: still 80 runs"

# The merged header: every input's strategy, seed, runs, machine and where.
out=$("$CS" report "$T/c" 2>/dev/null)
is "$(field "$out" strategy)" "strategy:  merged from 2 campaigns, binary h1" "merged text: merged from 2"
is "$(field "$out" input)" "input:     $T/a: random, seed 1234, 40 runs; host fixture-host, native, kernel 7.2.0
input:     $T/b: tsa, seed 99, 40 runs; host vmhost, VM, kernel 7.2.0" \
	"merged text: one line per input with its strategy and seed"
"$CS" report "$T/c" --json >"$T/c.json" 2>/dev/null
"$CS" report "$T/c" --html "$T/c.html" >/dev/null 2>&1
grep -q 'random, seed 1234, 40 runs' "$T/c.html" && grep -q 'tsa, seed 99, 40 runs' "$T/c.html"
ok $? "merged html: both inputs"
"$CS" merge "$T/c" "$T/m" -o "$T/e" >/dev/null 2>&1
cp -r "$T/a" "$T/a2"
"$CS" merge "$T/m" -o "$T/a2" >/dev/null 2>&1
if have_python; then
	is "$(json_get "$T/c.json" '[(i["strategy"], i["seed"], i["runs"], i["host"], i["where"]) for i in j["campaign"]["inputs"]]')" \
		"[('random', 1234, 40, 'fixture-host', 'native'), ('tsa', 99, 40, 'vmhost', 'vm')]" \
		"merged json: inputs with strategy, seed, runs, host, where"
	"$CS" report "$T/e" --json >"$T/e.json" 2>/dev/null
	is "$(json_get "$T/e.json" '[(i["strategy"], i["seed"], i["runs"]) for i in j["campaign"]["inputs"]]')" \
		"[('random', 1234, 40), ('tsa', 99, 40), ('map', 7, 40)]" \
		"a merge of a merge lists the original inputs"
	"$CS" report "$T/a2" --json >"$T/a2.json" 2>/dev/null
	is "$(json_get "$T/a2.json" '[(i["dir"], i["strategy"], i["runs"]) for i in j["campaign"]["inputs"]]')" \
		"[('$T/a2', 'random', 40), ('$T/m', 'map', 40)]" \
		"merged into a campaign with runs of its own: it is an input too"
	is "$(json_get "$T/a.json" 'j["campaign"]["inputs"]')" "[]" "json: a campaign that is not merged has no inputs"
	# A campaign of an older concsched: no where column, the guest's hostname.
	cp -r "$T/a" "$T/old"
	python3 -c 'import sqlite3,sys
db = sqlite3.connect(sys.argv[1])
db.execute("ALTER TABLE campaign DROP COLUMN where_ran")
db.execute("DROP TABLE inputs")
db.execute("UPDATE campaign SET host = ?", ("concsched-vm",))
db.commit()' "$T/old/campaign.db"
	is "$(field "$("$CS" report "$T/old" 2>/dev/null)" where)" "where:     VM, kernel 7.2.0" \
		"an older campaign without the field: its VM is known by the guest's hostname"
else
	for i in 1 2 3 4 5; do skip "python3 missing" "merged inputs json $i"; done
fi

"$CS" merge "$T/a" "$T/x" -o "$T/d" >/dev/null 2>"$T/err"
is "$?:$(errlines)" "2:1" "merge of different binaries: exit 2, one line"
like "$(cat "$T/err")" "different binaries \(hash h1 vs other\)" "merge: names both hashes"
[ ! -e "$T/d" ]; ok $? "merge of different binaries creates nothing"
"$CS" merge "$T/a" "$T/b" >/dev/null 2>"$T/err"
is "$?:$(errlines)" "2:1" "merge without -o: exit 2"
"$CS" merge "$T/a" -o /proc/nope/c >/dev/null 2>"$T/err"
like "$?:$(cat "$T/err")" "^2:concsched: cannot create campaign directory /proc/nope/c" "merge to unwritable -o: exit 2"
"$CS" merge --help | grep -q 'concsched merge host1/camp'; ok $? "merge --help has examples"
done_testing
