#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Flatten a `concsched observe --json` report for exact comparisons in the
host tests: one line per covered task, sites as L<line> (call sites) or
fn:<name> (function entries, e.g. start routines), sorted.

  observe_tasks.py REPORT.json tasks      -> "sp L17->L19", "hbpair unlock->lock L20->L29", ...
  observe_tasks.py REPORT.json get PATH   -> a value, PATH like events.by_kind.lock
  observe_tasks.py REPORT.json threads    -> "main" / "created L41 fn:thread1" per thread
"""
import json
import sys


def site(s):
    if s.get("function") is not None and s.get("function_offset") == 0:
        return "fn:" + s["function"]
    if s.get("line"):
        return "L%d" % s["line"]
    return s["key"].rsplit("/", 1)[-1]


def tasks(d):
    out = []
    for metric, m in d["metrics"].items():
        for t in m["tasks"]:
            sites = "->".join(site(s) for s in t["sites"])
            detail = t.get("detail")
            if metric == "goodlock" or not detail:
                out.append("%s %s" % (metric, sites))
            else:
                out.append("%s %s %s" % (metric, detail, sites))
    return sorted(out)


def threads(d):
    out = []
    for t in d["threads"]:
        if t["main"]:
            out.append("main")
        else:
            out.append("created %s %s" % (site(t.get("creation_site", {"key": "?"})),
                                          site(t.get("start_routine", {"key": "?"}))))
    return sorted(out)


def get(d, path):
    for p in path.split("."):
        if isinstance(d, dict):
            d = d.get(p, 0)
        else:
            return 0
    return d


def main():
    d = json.load(open(sys.argv[1]))
    what = sys.argv[2]
    if what == "tasks":
        print("\n".join(tasks(d)))
    elif what == "threads":
        print("\n".join(threads(d)))
    elif what == "get":
        print(get(d, sys.argv[3]))
    else:
        sys.exit("unknown query " + what)


main()
