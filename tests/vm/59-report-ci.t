#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 900
# Issue 34's acceptance on the bundled example: a failing campaign of
# examples/bank in the VM gives JUnit XML and SARIF files that the
# validators accept (xmllint against Jenkins' and Ant's JUnit XSDs,
# python3-jsonschema against the SARIF 2.1.0 schema) and that name
# examples/bank.c and its lines: the overdrawn assertion's line 57 where
# the program stopped, the sites, and the schedule as a SARIF code flow.
source "$(dirname "$0")/../lib.sh"
need_vm
BANK=$B/examples/bank
[ -x "$BANK" ] || skip_all "build first: make"
command -v xmllint >/dev/null || skip_all "xmllint missing (run: sudo make deps)"
python3 -c 'import jsonschema' 2>/dev/null || skip_all "python3-jsonschema missing (run: sudo make deps)"
SCH=$("$ROOT/tools/ci-schemas.sh" path 2>/dev/null) || skip_all "schemas not fetched (run: sudo make deps)"
plan 9
T=$(mktemp -d /tmp/cs-report-ci-vm.XXXXXX)
trap 'rm -rf "$T"' EXIT

# pct:2 finds a depth-2 bug with probability >= 1/(n k^(d-1)) per run
# (Burckhardt et al.): n = 3 threads (main and two tellers), k = 4 steps
# (bank's lock calls; report --schedule shows them and the tellers' two
# starts, which are no pct steps), so >= 1/12 a run,
# and 160 runs all miss with probability <= (11/12)^160 = 9.1e-7. The run
# stops at the first failure (run 1 here, idle or loaded).
"$CS" run --vm -s pct:2 -n 160 -o "$T/bank" -- "$BANK" >/dev/null 2>"$T/run.err"
is "$?" 1 "pct:2 on bank finds the overdrawn assertion: exit 1"
"$CS" report "$T/bank" --junit "$T/bank.xml" --sarif "$T/bank.sarif" >/dev/null 2>&1
is "$?" 1 "report --junit --sarif: exit 1 (a failure)"
xmllint --noout --schema "$SCH/jenkins-junit.xsd" "$T/bank.xml" 2>"$T/x1" &&
	xmllint --noout --schema "$SCH/JUnit.xsd" "$T/bank.xml" 2>"$T/x2"
ok $? "JUnit XML valid against Jenkins' and Ant's XSDs"
python3 - "$SCH/sarif-2.1.0-rtm.5.json" "$T/bank.sarif" <<'PY' 2>"$T/s1"
import json, sys, jsonschema
schema, doc = (json.load(open(p)) for p in sys.argv[1:3])
jsonschema.Draft4Validator(schema).validate(doc)
PY
ok $? "SARIF valid against the SARIF 2.1.0 schema"
[ -s "$T/s1" ] && diag "$(tail -5 "$T/s1")"

j=$(python3 - "$T/bank.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
for c in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    f = c.find("failure")
    if f is not None:
        print(c.get("name"), "|", f.get("type"), "|", f.get("message"))
        print(f.text)
PY
)
diag "$(echo "$j" | head -12)"
like "$j" '^run [0-9]+: assertion \| assertion \| .*overdrawn.* at examples/bank.c:57' \
	"JUnit: the failing run's testcase, an assertion failure at examples/bank.c:57"
like "$(echo "$j" | tr '\n' ' ')" 'sites: +(teller|main) examples/bank.c:[0-9]+' "JUnit: the sites name examples/bank.c and a line"
like "$j" 'replay: .*replay .*/bank --run [0-9]+ --vm' "JUnit: the replay command"
s=$(python3 - "$T/bank.sarif" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["runs"][0]["results"][0]
print(res["ruleId"], " ".join("%s:%d" % (l["physicalLocation"]["artifactLocation"]["uri"],
      l["physicalLocation"]["region"]["startLine"]) for l in res["locations"]))
for cf in res.get("codeFlows", []):
    steps = [(t["executionOrder"], t["location"]["physicalLocation"]["artifactLocation"]["uri"])
             for tf in cf["threadFlows"] for t in tf["locations"]]
    print("flow", len(cf["threadFlows"]), "threads", len(steps), "steps",
          "bank.c" if all(u == "examples/bank.c" for _, u in steps) else "elsewhere",
          "ordered" if sorted(o for o, _ in steps) == list(range(1, len(steps) + 1)) else "unordered")
print(res["message"]["text"])
PY
)
diag "$s"
like "$s" '^assertion examples/bank.c:57( examples/bank.c:[0-9]+)+' \
	"SARIF: an assertion result at examples/bank.c:57, then the sites in examples/bank.c"
like "$s" 'flow 2 threads [0-9]+ steps bank.c ordered' \
	"SARIF: the schedule as a code flow, a thread flow per thread, steps in examples/bank.c in order"
