#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One row of tools/bench/real.sh's steered table.
Usage: steer_row.py NAME GUEST-OUT CAMPAIGN-DIR CONCSCHED
GUEST-OUT holds the guest's lines "NAME native T0 T1" (three),
"NAME roundtrip ok|FAILED" and "NAME campaign EXIT T0 T1" (guest uptime
seconds); the campaign's report gives its runs, failures, race warnings
and each run's duration."""
import json
import statistics
import subprocess
import sys

name, out, camp, cs = sys.argv[1:5]
lines = [l.split() for l in open(out) if l.startswith(name + " ")]
nat = [float(l[3]) - float(l[2]) for l in lines if l[1] == "native"]
rt = [l[2] for l in lines if l[1] == "roundtrip"]
c = [l for l in lines if l[1] == "campaign"]
if not nat or not rt or not c:
    print("| %s | the guest did not finish it | | | | | |" % name)
    sys.exit(0)
nat = statistics.median(nat)
total = float(c[0][4]) - float(c[0][3])
rep = subprocess.run([cs, "report", camp, "--json"], capture_output=True, text=True)
if rep.returncode not in (0, 1):  # report: 1 = the campaign has failures
    try:
        err = open(camp + ".err").read().strip().splitlines()
    except OSError:
        err = []
    print("| %s | %.2f s | %s | campaign exit %s: %s | | | %.0f s |"
          % (name, nat, rt[0], c[0][2], err[-1] if err else rep.stderr.strip(), total))
    sys.exit(0)
d = json.loads(rep.stdout)
secs = [r["duration_s"] for r in d["runs"]["list"]]
warn = sum(w["kind"] == "race" for w in d["warnings"])
med = statistics.median(secs)
print("| %s | %.2f s | %s | %d / %d / %d | %.2f s / %.2f s | %.1fx | %.0f s |"
      % (name, nat, rt[0], len(secs), len(d["failures"]), warn, med, max(secs), med / nat, total))
