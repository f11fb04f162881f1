#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 1500
# The CI recipes of docs/ci.md run on this machine as a script: every `run`
# step of docs/examples/github-actions.yml in order (GitHub's rules: after a
# failed step only `if: always()` steps run; the `uses` steps are actions,
# whose input files are checked to exist instead), then the `script` of
# docs/examples/gitlab-ci.yml, each in a copy of the work tree (symlinks:
# the build is reused). Not run: the container's bootstrap (`apt-get` of
# make, git, sudo: this machine has them, and the test must not upgrade its
# packages); `make deps` runs, and checks them. On the bundled example (a bug) each must build,
# run the campaign in the VM, write valid HTML/JUnit/SARIF reports and
# fail the job on the found bug (the recipes' pct:2 -n 160 campaign misses
# bank's bug with probability <= (11/12)^160 = 9.1e-7: 59-report-ci.t).
source "$(dirname "$0")/../lib.sh"
need_vm
[ -x "$CS" ] && [ -x "$B/examples/bank" ] || skip_all "build first: make"
python3 -c 'import yaml' 2>/dev/null || skip_all "python3-yaml missing (run: sudo make deps)"
SCH=$("$ROOT/tools/ci-schemas.sh" path 2>/dev/null) || skip_all "schemas not fetched (run: sudo make deps)"
plan 15
T=$(mktemp -d /tmp/cs-ci-recipes.XXXXXX)
trap 'rm -rf "$T"' EXIT

worktree() { # DIR: a copy of the work tree whose files are symlinks
	mkdir -p "$1" && cp -as "$ROOT/." "$1/" &&
		rm -rf "$1"/concsched-campaign "$1"/concsched.* "$1"/concsched-junit.xml "$1"/campaign.status
}

# github-actions.yml: one "step NAME rc=N" or "uses ACTION files=ok|missing"
# line per step, then "job rc=N".
worktree "$T/gh"
python3 - "$ROOT/docs/examples/github-actions.yml" "$T/gh" >"$T/gh.out" 2>"$T/gh.err" <<'PY'
import os, subprocess, sys, yaml
wf = yaml.safe_load(open(sys.argv[1]))
(job,) = wf["jobs"].values()
env = dict(os.environ, **{k: str(v) for k, v in job.get("env", {}).items()})
failed = False
for step in job["steps"]:
    if failed and step.get("if") != "always()":
        continue
    if "uses" in step:
        w = step.get("with", {})
        files = [f for k in ("path", "sarif_file", "report_paths") for f in str(w.get(k, "")).split()]
        ok = all(os.path.exists(os.path.join(sys.argv[2], f)) for f in files)
        print("uses %s files=%s" % (step["uses"].split("@")[0],
              "none" if not files else "ok" if ok else "missing"))
        continue
    if step["run"].lstrip().startswith("apt-get"):
        print("skip %s" % step["name"])
        continue
    rc = subprocess.run(["sh", "-e", "-c", step["run"]], cwd=sys.argv[2], env=env,
                        stdout=sys.stderr, stderr=sys.stderr).returncode
    print("step %s rc=%d" % (step["name"], rc))
    failed = failed or rc != 0
print("job rc=%d" % (1 if failed else 0))
PY
out=$(cat "$T/gh.out")
diag "$out"
[ "$(grep -c 'rc=[1-9]' "$T/gh.out")" -gt 2 ] && diag "$(tail -20 "$T/gh.err")"
is "$(grep '^skip' "$T/gh.out")" "skip Tools to build with" "GitHub: only the container's apt-get bootstrap is skipped"
like "$out" 'step Packages, the VM kernel, the schemas rc=0' "GitHub: make deps passes"
like "$out" 'step Build rc=0' "GitHub: the build passes"
like "$out" 'step Campaign in the sched_ext VM rc=0' "GitHub: the campaign runs in the VM (its bug noted, not an error)"
is "$(cat "$T/gh/campaign.status" 2>/dev/null)" 1 "GitHub: the campaign found the bank example's bug (status 1)"
like "$out" 'step Reports rc=0' "GitHub: the reports are written"
is "$(grep -c 'files=ok' "$T/gh.out")" 3 "GitHub: the files of the upload, SARIF and JUnit steps exist"
like "$out" 'step Fail on a found bug rc=1' "GitHub: the last step fails on the found bug"
like "$out" 'job rc=1$' "GitHub: the job fails"
xmllint --noout --schema "$SCH/jenkins-junit.xsd" "$T/gh/concsched-junit.xml" 2>/dev/null
ok $? "GitHub: the JUnit file is valid"
like "$(grep -o 'examples/bank.c:57' "$T/gh/concsched.sarif" "$T/gh/concsched-junit.xml" | sort -u | wc -l)" '^2$' \
	"GitHub: JUnit and SARIF name examples/bank.c:57"

# gitlab-ci.yml: the job's script lines in one shell that stops at an error.
worktree "$T/gl"
python3 - "$ROOT/docs/examples/gitlab-ci.yml" >"$T/gl.sh" <<'PY'
import sys, yaml
(job,) = yaml.safe_load(open(sys.argv[1])).values()
for k, v in job.get("variables", {}).items():
    print("export %s=%s" % (k, v))
print("\n".join(l for l in job["script"] if not l.startswith("apt-get")))
for p in job["artifacts"]["paths"] + [job["artifacts"]["reports"]["junit"]]:
    print("# artifact " + p)
PY
(cd "$T/gl" && sh -e "$T/gl.sh") >"$T/gl.out" 2>&1
is "$?" 1 "GitLab: the job's script fails on the found bug"
like "$(tail -3 "$T/gl.out")" 'concsched found a bug' "GitLab: with its message"
missing=0
for a in $(sed -n 's/^# artifact //p' "$T/gl.sh"); do [ -s "$T/gl/$a" ] || missing=$((missing + 1)); done
is "$missing" 0 "GitLab: every artifact and the JUnit report exist"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d["version"] != "2.1.0")' \
	"$T/gl/concsched.sarif"
ok $? "GitLab: the SARIF file is SARIF 2.1.0"
done_testing
