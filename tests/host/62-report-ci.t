#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# concsched report --junit / --sarif (docs/ci.md, docs/report.md) on the
# host with strategy none: a failing campaign (fails_once: exit status 1 at
# run 1, sites with file:line), a passing one, and the example experiment
# (2 of its 4 cells fail). Every file is checked by real validators:
# xmllint against Jenkins' and Ant's JUnit XSDs, python3-jsonschema against
# the SARIF 2.1.0 schema (tools/ci-schemas.sh, fetched by make deps), and
# read back with a real XML / JSON parser for what it must say.
# timeout: 300
source "$(dirname "$0")/../lib.sh"

need_root
[ -x "$CS" ] && [ -x "$PROGS/fails_once" ] || skip_all "build first (make)"
command -v xmllint >/dev/null || skip_all "xmllint missing (run: sudo make deps)"
python3 -c 'import jsonschema' 2>/dev/null || skip_all "python3-jsonschema missing (run: sudo make deps)"
SCH=$("$ROOT/tools/ci-schemas.sh" path 2>/dev/null) || skip_all "schemas not fetched (run: sudo make deps)"
T=$(mktemp -d /tmp/cs-report-ci.XXXXXX)
trap 'rm -rf "$T"' EXIT
plan 26

junit_valid() { # FILE: valid against both XSDs
	xmllint --noout --schema "$SCH/jenkins-junit.xsd" "$1" 2>"$T/xl1" &&
		xmllint --noout --schema "$SCH/JUnit.xsd" "$1" 2>"$T/xl2"
	local rc=$?
	[ $rc = 0 ] || diag "$(cat "$T/xl1" "$T/xl2" 2>/dev/null)"
	return $rc
}
sarif_valid() { # FILE: valid against the SARIF 2.1.0 schema
	python3 - "$SCH/sarif-2.1.0-rtm.5.json" "$1" <<'PY'
import json, sys, jsonschema
schema, doc = (json.load(open(p)) for p in sys.argv[1:3])
errors = list(jsonschema.Draft4Validator(schema).iter_errors(doc))
for e in errors[:5]:
    print("#", e.message, list(e.path), file=sys.stderr)
sys.exit(1 if errors else 0)
PY
}
junit_summary() { # FILE: one line per testsuite, then per testcase and failure
	python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
for s in root.findall("testsuite"):
    print("suite %s tests=%s failures=%s" % (s.get("name"), s.get("tests"), s.get("failures")))
    for c in s.findall("testcase"):
        f = c.find("failure")
        print("case %s/%s%s" % (c.get("classname"), c.get("name"),
              "" if f is None else " FAIL %s: %s" % (f.get("type"), f.get("message"))))
        if f is not None:
            for line in f.text.splitlines():
                print("  " + line)
PY
}
sarif_summary() { # FILE: per run its id and per result rule, locations, flows
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("version", d["version"], "runs", len(d["runs"]))
for r in d["runs"]:
    rules = [x["id"] for x in r["tool"]["driver"]["rules"]]
    print("run", r["automationDetails"]["id"], "rules", " ".join(rules))
    for res in r["results"]:
        assert rules[res["ruleIndex"]] == res["ruleId"]
        locs = ["%s:%d" % (l["physicalLocation"]["artifactLocation"]["uri"],
                           l["physicalLocation"]["region"]["startLine"])
                for l in res["locations"] if "physicalLocation" in l]
        print("result", res["ruleId"], res["level"], " ".join(locs))
        print("message", res["message"]["text"])
        for cf in res.get("codeFlows", []):
            order = sorted((t["executionOrder"], tf["id"]) for tf in cf["threadFlows"]
                           for t in tf["locations"])
            print("flow", len(cf["threadFlows"]), "threads", len(order), "steps",
                  "ordered" if [o for o, _ in order] == list(range(1, len(order) + 1)) else "unordered")
PY
}

# ---- a failing campaign: fails_once exits 1 at its first run ----
"$CS" run -s none -n 2 -o "$T/fail" -- "$PROGS/fails_once" "$T/marker" >/dev/null 2>&1
is "$?" 1 "fails_once: the campaign fails"
"$CS" report "$T/fail" --junit "$T/fail.xml" --sarif "$T/fail.sarif" >"$T/out" 2>"$T/err"
is "$?" 1 "report --junit --sarif of a failing campaign: exit 1"
like "$(cat "$T/out")" "junit: +$T/fail.xml" "the text report names the JUnit file"
junit_valid "$T/fail.xml"
ok $? "JUnit XML valid against Jenkins' and Ant's XSDs"
j=$(junit_summary "$T/fail.xml")
diag "$j"
like "$j" "^suite $T/fail tests=1 failures=1" "one testsuite for the campaign, 1 failure"
like "$j" 'case fails_once/run 1: exit-code FAIL exit-code: exited with status 1' \
	"a testcase for the failing run, its failure with kind and message"
like "$j" 'main tests/programs/fails_once.c:[0-9]+' "the failure lists the sites with file:line"
like "$j" "replay: .*replay $T/fail --run 1" "the failure has the replay command"
sarif_valid "$T/fail.sarif"
ok $? "SARIF valid against the SARIF 2.1.0 schema"
s=$(sarif_summary "$T/fail.sarif")
diag "$s"
like "$s" "rules assertion crash deadlock hang sanitizer exit-status check-failed data-race lock-order-inversion" \
	"a rule per finding kind"
like "$s" 'result exit-status error tests/programs/fails_once.c:[0-9]+' \
	"the failure is a result at the sites' file:line"
like "$s" "message exited with status 1 .*Replay: .*replay $T/fail --run 1" \
	"the replay command is in the message"

# ---- a passing campaign ----
"$CS" run -s none -n 2 -o "$T/pass" -- "$PROGS/fails_once" "$T/marker" >/dev/null 2>&1
is "$?" 0 "fails_once with its marker present: the campaign passes"
"$CS" report "$T/pass" --junit "$T/pass.xml" --sarif "$T/pass.sarif" >/dev/null 2>&1
is "$?" 0 "report of a passing campaign: exit 0"
junit_valid "$T/pass.xml"
ok $? "passing campaign: JUnit valid"
like "$(junit_summary "$T/pass.xml" | tr '\n' ' ')" "^suite $T/pass tests=1 failures=0 case fails_once/fails_once under none $" \
	"passing campaign: one passing testcase for the program"
sarif_valid "$T/pass.sarif"
ok $? "passing campaign: SARIF valid"
is "$(sarif_summary "$T/pass.sarif" | grep -c '^result')" 0 "passing campaign: no SARIF result"

# ---- an experiment directory: a suite per cell ----
"$CS" experiment run "$ROOT/docs/examples/experiment.json" -o "$T/ex" >/dev/null 2>&1
ok $? "the example experiment runs"
"$CS" report "$T/ex" --junit "$T/ex.xml" --sarif "$T/ex.sarif" >"$T/out" 2>&1
is "$?" 1 "report --junit --sarif of an experiment with failing cells: exit 1"
junit_valid "$T/ex.xml"
ok $? "experiment: JUnit valid"
j=$(junit_summary "$T/ex.xml")
is "$(echo "$j" | grep '^suite' | tr '\n' ' ')" \
	"suite counter-exit1-none-1 tests=1 failures=1 suite counter-exit1-none-2 tests=1 failures=1 suite counter-none-1 tests=1 failures=0 suite counter-none-2 tests=1 failures=0 " \
	"experiment: one testsuite per cell, the failing cells failed"
like "$j" "replay: .*replay $T/ex/cells/counter-exit1-none-1 --run 1" \
	"experiment: the replay command names the cell's campaign"
sarif_valid "$T/ex.sarif"
ok $? "experiment: SARIF valid"
is "$(sarif_summary "$T/ex.sarif" | grep -c '^run concsched/counter')" 4 \
	"experiment: one SARIF run per cell, each its own category"

"$CS" report "$T/ex" >/dev/null 2>"$T/err"
is "$?" 2 "an experiment directory without --junit/--sarif: exit 2"
done_testing
