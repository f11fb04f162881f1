# SPDX-License-Identifier: MIT
# TAP helpers for shell tests: source it, call plan N, then ok/is/skip.
# ROOT is the repository, B the build directory, CS the concsched binary.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B=${BUILD:-$ROOT/build}
case "$B" in /*) ;; *) B=$ROOT/$B ;; esac
CS=$B/concsched
PROGS=$B/tests/programs
# The machine's speed scale (tools/test-speed; tools/run-test exports it):
# limits a test passes to concsched or waits for grow with it.
CS_TEST_SCALE=${CS_TEST_SCALE:-$(cat "$B/test-scale" 2>/dev/null || echo 1)}
scaled() { # scaled SECONDS: SECONDS times the scale, rounded up
	awk -v l="$1" -v s="$CS_TEST_SCALE" 'BEGIN { printf "%d", l * s + 0.999 }'
}
# A VM boot that has not started its command after this many seconds is
# killed and booted again, 3 boots in all (concsched vm --boot-limit,
# docs/vm.md). A TCG boot takes 4-9 s here, 20 s at load average 11
# (2026-11-29); the default limit, 120 s, is most likely what made
# 10-sched-load take 139 s in a CI on 2026-11-29 (19 s alone: a stalled
# boot, 120 s, and its own time). The tests use 60 s times the scale.
export CONCSCHED_VM_BOOT_LIMIT=${CONCSCHED_VM_BOOT_LIMIT:-$(scaled 60)}
_tap_n=0
_tap_fail=0

plan() { echo "TAP version 13"; echo "1..$1"; }
diag() { # diag LINE... (or, with no argument, the lines on stdin)
	if [ $# -eq 0 ]; then sed 's/^/# /' >&2; else printf '%s\n' "$@" | sed 's/^/# /' >&2; fi
}
ok() { # ok COND-EXIT-STATUS DESCRIPTION
	_tap_n=$((_tap_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $_tap_n - $2"
	else echo "not ok $_tap_n - $2"; _tap_fail=$((_tap_fail + 1)); fi
}
is() { # is GOT WANT DESCRIPTION
	_tap_n=$((_tap_n + 1))
	if [ "$1" = "$2" ]; then echo "ok $_tap_n - $3"
	else echo "not ok $_tap_n - $3"; diag "got '$1', want '$2'"; _tap_fail=$((_tap_fail + 1)); fi
}
like() { # like GOT REGEX DESCRIPTION
	_tap_n=$((_tap_n + 1))
	if printf '%s' "$1" | grep -Eq -- "$2"; then echo "ok $_tap_n - $3"
	else echo "not ok $_tap_n - $3"; diag "got '$1', want match /$2/"; _tap_fail=$((_tap_fail + 1)); fi
}
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $2 # SKIP $1"; }
skip_all() { echo "TAP version 13"; echo "1..0 # SKIP $1"; exit 0; }
done_testing() { exit $((_tap_fail > 0)); }

# concsched as the commands it prints name it (self_command) when run
# from the current directory as root without SUDO_USER: "concsched" when
# PATH finds this binary, else its path, relative to the cwd under it.
cs_printed() {
	local self on cwd
	self=$(realpath "$CS")
	cwd=$(pwd -P)
	on=$(command -v concsched 2>/dev/null)
	if [ -n "$on" ] && [ "$(realpath "$on")" = "$self" ]; then echo concsched; return; fi
	case "${self#"$cwd"/}" in
	"$self") echo "$self" ;;
	*/*) echo "${self#"$cwd"/}" ;;
	*) echo "./${self#"$cwd"/}" ;;
	esac
}

# Render the page HTML to the PNG in headless Chromium (1200 x 2600 pixels);
# tests/png_pixels.py counts what it shows.
screenshot() { # screenshot HTML PNG
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,2600 \
		--screenshot="$2" "file://$1" >/dev/null 2>&1
}

# gone_within SECONDS CMD...: wait until CMD finds nothing (exits non-zero),
# polling every 0.1 s for at most SECONDS; 0 when it did. For what the
# kernel tears down after a process dies (its children, its links).
gone_within() {
	local deadline=$(($(date +%s) + $1))
	shift
	while "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.1
	done
	return 0
}

# This test's processes carry CS_TEST_TAG in their environment (what they
# start inherits it); another concsched on the machine (a user's campaign,
# a parallel test, an attach left running) does not.
export CS_TEST_TAG=${CS_TEST_TAG:-$$.$RANDOM}
# bpf_held link|prog REGEX: how many BPF links whose type (uprobe_multi)
# or programs whose name (access_hit) matches REGEX are held by this
# test's processes or by no process at all (pinned, or kept by the
# kernel: a leak). Holders come from /proc/PID/fdinfo (link_id:, prog_id:)
# as bpftool's pids column would; objects only other processes hold are
# not this test's and are not counted.
bpf_held() {
	bpftool -j "$1" show 2>/dev/null | python3 -c '
import json, os, re, sys
kind, pat, tag = sys.argv[1], re.compile(sys.argv[2]), b"CS_TEST_TAG=" + sys.argv[3].encode()
only_ours = sys.argv[4] == "1"
key = "link_id" if kind == "link" else "prog_id"
holders = {}
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        fds = os.listdir("/proc/%s/fdinfo" % pid)
    except OSError:
        continue
    for fd in fds:
        try:
            info = open("/proc/%s/fdinfo/%s" % (pid, fd)).read()
        except OSError:
            continue
        for m in re.finditer(r"^%s:\s*(\d+)" % key, info, re.M):
            holders.setdefault(int(m.group(1)), set()).add(pid)
def ours(pid):
    try:
        return tag in open("/proc/%s/environ" % pid, "rb").read().split(b"\0")
    except OSError:
        return False
n = 0
for x in json.loads(sys.stdin.read() or "[]"):
    if not pat.search(x.get("type" if kind == "link" else "name", "")):
        continue
    pids = holders.get(x["id"], set())
    n += (not pids and not only_ours) or any(ours(p) for p in pids)
print(n)' "$1" "$2" "$CS_TEST_TAG" "${BPF_HELD_OURS:-}"
}
# bpf_ours link|prog REGEX: as bpf_held, held by this test's processes
# only. Another campaign on the machine drops links all the time, and a
# dropped link is held by no process until the kernel frees it: "a new
# link of ours" is told by this count, not by bpf_held's.
bpf_ours() { BPF_HELD_OURS=1 bpf_held "$@"; }
# no_link_of_ours: true while this test's processes hold no uprobe_multi
# link (gone_within polls it to wait for a tool's probes to be in).
no_link_of_ours() { [ "$(bpf_ours link uprobe_multi)" -eq 0 ]; }
# bpf_settled link|prog REGEX MAX SECONDS: bpf_held's count, polled until
# it is MAX or less (another process's dropped links pass), for at most
# SECONDS; prints the last count. A leak of this test's stays above MAX.
bpf_settled() {
	local deadline=$(($(date +%s) + $4)) n
	while :; do
		n=$(bpf_held "$1" "$2")
		[ "$n" -le "$3" ] || [ "$(date +%s)" -ge "$deadline" ] && break
		sleep 0.1
	done
	echo "$n"
}

# runs_ended DIR: how many runs DIR's campaign has stored as ended, 0 until
# its database is there. Read-only: sqlite3 on a missing path creates an
# empty file, which the campaign then refuses as "not a campaign database"
# (a loaded machine's 45-run-jobs: the poll came before the campaign).
runs_ended() {
	[ -s "$1/campaign.db" ] || { echo 0; return; }
	sqlite3 -readonly "$1/campaign.db" "SELECT count(*) FROM runs WHERE outcome != 'running'" \
		2>/dev/null || echo 0
}
# runs_below DIR N: true while DIR's campaign has fewer than N ended runs
# (gone_within polls it).
runs_below() { [ "$(runs_ended "$1")" -lt "$2" ]; }

# campaign_mixed DIR SEED RUN-ARGS...: a campaign that holds both a failing
# and a passing run, for checks about what is done with them (replay,
# minimize, schedules), never about how often a bug shows. Runs
# `concsched run --keep-going --seed S -o DIR RUN-ARGS` for S = SEED,
# SEED+1, ... until DIR holds both, at most 8 campaigns; 0 when it does.
# With K runs a campaign and a failure rate r a run, one campaign misses
# with r^K + (1-r)^K: for random on examples/bank (r about 1/3 in the VM,
# 1/10 beside busy VMs) and K = 20, 3e-4 (0.12 at r = 1/10), so 8 of them
# miss with below 1e-7 even at 1 in 10.
campaign_mixed() {
	local dir=$1 seed=$2 try got
	shift 2
	for try in 0 1 2 3 4 5 6 7; do
		rm -rf "$dir"
		"$CS" run --keep-going --seed $((seed + try)) -o "$dir" "$@" >/dev/null 2>"$dir.err"
		if [ $? -gt 1 ]; then # usage or environment: another seed would not help
			diag "campaign_mixed: concsched run failed: $(tail -3 "$dir.err")"
			return 1
		fi
		got=$("$CS" report "$dir" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
out = set(r["outcome"] for r in d["runs"]["list"])
print("both" if "pass" in out and len(out - {"pass"}) > 0 else "not")' 2>/dev/null)
		[ "$got" = both ] && return 0
		diag "campaign_mixed: seed $((seed + try)) gave ${got:-no campaign}; next seed"
	done
	return 1
}

# campaign_summary DIR: "R runs, F failures, first K, S slow" (K the first
# run that did not pass, "-" for none; S the runs slow under steering),
# then the first failure's summary line. Needs python3.
campaign_summary() {
	"$CS" report "$1" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
runs = d["runs"]["list"]
bad = [r["run"] for r in runs if r["outcome"] != "pass"]
slow = sum(1 for r in runs if r["summary"].startswith("slow under steering"))
print("%d runs, %d failures, first %s, %d slow" % (len(runs), len(d["failures"]),
      bad[0] if bad else "-", slow))
for f in d["failures"][:1]:
    print(f["summary"])'
}

# summary_first SUMMARY: the first failing run that campaign_summary's
# first line names ("" when none failed).
summary_first() {
	printf '%s\n' "$1" | sed -n 's/.*first \([0-9]*\),.*/\1/p' | head -1
}

# replay_fails_again DIR RUN: two checks, RUN of DIR replayed 12 times in
# the VM exits 1 and fails again at least once; the lines of replays that
# passed (and the warnings) go to the diagnostics. An order replay of a
# failure that depends only on the order fails again every time when the
# recorded parks hold; 63's exit-point run failed again in 7 of 8 replays
# (2026-11-30, most waiting for the 5 s park watchdog: fixed since in
# strategy_replay.c, serial_unheld_go), and one single replay passed beside
# three to four other VMs; after the fix 11 of 12, the one that passed
# beside four VMs had a thread wait over 7.5 s for a CPU, which the
# starvation rescue takes out of the scheduler (unsteered, the order no
# longer kept). All 12 passing: (1/8)^12 = 7e-12 at 1 in 8, 6e-8 if a
# loaded machine made it 1 in 4.
replay_fails_again() {
	"$CS" replay "$1" --run "$2" --times 12 --vm >"$1.rep" 2>&1
	is "$?" 1 "the failing run $2 replays: exit 1"
	like "$(cat "$1.rep")" 'failed again in ([1-9]|1[0-2]) of 12 replays' \
		"it fails again ($(grep -oE 'in [0-9]+ of 12' "$1.rep"))"
	diag "$(grep -i -e 'warning' -e ': pass' "$1.rep" | head -5)"
}

# first_like N REGEX CMD...: runs CMD up to N times until its output
# matches REGEX (grep -E); prints that output, or the last one. For a
# check on what one run must show when a preempted thread can skip an
# access now and then (race_uaf's user finds current already cleared and
# never reads the session: ci55, 2026-11-30, beside two VMs); the caller
# says the miss rate and N's arithmetic.
first_like() {
	local n=$1 re=$2 i out
	shift 2
	for ((i = 1; i <= n; i++)); do
		out=$("$@")
		printf '%s' "$out" | grep -Eq -- "$re" && break
	done
	printf '%s\n' "$out"
}

need_root() { [ "$(id -u)" = 0 ] || skip_all "needs root"; }
need_vm() {
	need_root
	# CONCSCHED_VM_KERNEL (make test-kernels) names the kernel the VMs boot.
	"$ROOT/tools/vm-kernel.sh" path >/dev/null 2>&1 ||
		skip_all "no ${CONCSCHED_VM_KERNEL:-sid} VM kernel cached (run: sudo make deps)"
	command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 missing (run: sudo make deps)"
}
