#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 300
# The test-program corpus run natively, without concsched
# (tests/programs/clean_*, bad_*, race_*). Each clean_ program is correct
# under every interleaving: 100 runs, no failure allowed. Each bad_ (hang)
# and race_ (assertion, exit 1) program fails only under a rare
# interleaving that concsched has to produce: a native run shows the bug
# at most once in 500 runs (the corpus's rule); 500 runs, at most 9 failures.
# Every run has a 2 s timeout; a timeout counts as a failure. The failure
# counts are printed as diagnostics. CORPUS_JOBS programs run at a time
# (default: the number of CPUs). No root needed.
source "$(dirname "$0")/../lib.sh"

CLEAN="clean_lockwrap clean_condhandoff clean_spinflag clean_barrier clean_manythreads
	clean_recursive clean_rwlock clean_trylock_wrap clean_pipeline_ledger clean_once
	clean_exit_unjoined clean_uaf_printf clean_relock_step"
BAD="bad_lockorder bad_selfdeadlock bad_lostwakeup"
RACE="race_torn_pair race_split_cs race_wrong_lock race_no_lock race_ws_deque race_uaf
	race_flag_token race_exit_unjoined race_one_of_10 race_one_of_20 race_one_of_100
	race_uaf_stdio race_trylock_wrap race_recursive_wrap race_pipeline_ledger race_start_order
	race_uaf_printf"
CLEAN_RUNS=100
BAD_RUNS=500
# The corpus's rule is a rate: at most 1 failure in 500 plain runs. Its
# rarest windows open natively when the kernel preempts a thread inside
# them, so a count in 500 runs varies with load: bad_selfdeadlock failed 2
# of 500 in one CI run, 2 of 2000 beside race_one_of_100, 0 of 3000 and 0
# of 1500 beside two busy loops (2026-11-28, 2 CPUs, two programs at a time
# as here); every other program 0 of 3000. At exactly the rule's rate
# (Poisson mean 1 in 500 runs) more than 9 failures come with probability
# 1.1e-7; at the measured 1 in 1000, below 1e-9. A program whose bug shows
# in one plain run of 50 fails the check.
BAD_MAX=9
LIMIT=$(scaled 2) # seconds a run, times the machine's speed scale

built=0
for p in $CLEAN $BAD $RACE; do
	[ -x "$PROGS/$p" ] && built=$((built + 1))
done
[ "$built" -gt 0 ] || skip_all "build first: make"
command -v python3 >/dev/null || command -v timeout >/dev/null ||
	skip_all "neither python3 nor timeout (coreutils)"

set -- $CLEAN $BAD $RACE
plan $#
T=$(mktemp -d /tmp/cs-corpus-XXXXXX)
trap 'rm -rf "$T"' EXIT
ulimit -c 0 # the race_ programs abort: no core files

# python3 starts each run itself: one process per run instead of two with
# timeout(1), which halves the cost where process start-up dominates.
cat >"$T/count.py" <<'PY'
import subprocess, sys
prog, runs, limit = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
fails = 0
for _ in range(runs):
    try:
        r = subprocess.run([prog], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=limit)
        fails += r.returncode != 0
    except subprocess.TimeoutExpired:
        fails += 1
print(fails)
PY

# failures PROG RUNS: how many of RUNS native runs of PROG failed (a
# nonzero exit, a signal or a timeout), or "missing".
failures() {
	local f=0 i
	[ -x "$PROGS/$1" ] || { echo missing; return; }
	if command -v python3 >/dev/null; then
		python3 "$T/count.py" "$PROGS/$1" "$2" "$LIMIT" || echo error
		return
	fi
	for ((i = 0; i < $2; i++)); do
		timeout -k 1 "$LIMIT" "$PROGS/$1" >/dev/null 2>&1 || f=$((f + 1))
	done
	echo "$f"
}

jobs_max=${CORPUS_JOBS:-$(nproc 2>/dev/null || echo 2)}
start=$(date +%s)
running=0
for p in "$@"; do
	case $p in clean_*) n=$CLEAN_RUNS ;; *) n=$BAD_RUNS ;; esac
	failures "$p" "$n" >"$T/$p" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs_max" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

for p in "$@"; do
	f=$(tail -n 1 "$T/$p")
	case $p in
	clean_*) n=$CLEAN_RUNS max=0 ;;
	*) n=$BAD_RUNS max=$BAD_MAX ;;
	esac
	case $f in
	missing)
		ok 1 "$p: built ($PROGS/$p missing)"
		continue
		;;
	'' | *[!0-9]*)
		ok 1 "$p: counting its runs failed (got '$f')"
		continue
		;;
	esac
	diag "$p: $f of $n native runs failed"
	ok $([ "$f" -le "$max" ]; echo $?) "$p: at most $max failures in $n native runs (got $f)"
done
diag "corpus runs took $(($(date +%s) - start)) s with $jobs_max at a time"
done_testing
