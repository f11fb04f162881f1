#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/study/replay_corpus.sh — replay fidelity and minimization on the
# bug corpus (issue 14; docs/run.md "Replay on the corpus"). For each
# program and strategy, in one VM boot: a campaign of RUNS runs with
# --keep-going, then for up to TAKE failing runs `replay --times 10` (in the
# recorded order for parallel strategies, serially for pct and --serial) and
# `minimize --times 3`; prints one line per failure:
#
#   PROG STRATEGY run N: KIND replayed K/10, preemptions P -> Q
#
#   tools/study/replay_corpus.sh [PROGRAMS]
#
# Environment: CONCSCHED (default build/concsched), RC_RUNS (default 30),
# RC_TAKE (default 2), RC_STRATEGIES (default "random tsa pct:2 pcta map
# serial svall"; pcta = pct:2 --access, serial = random --serial random,
# svall = noise at accesses: sharedVar-all@500/sleep:200 --access), RC_SEED
# (default 1), RC_TIMEOUT (the VM's limit in seconds, default 3000),
# RC_OPTS (more `run` options, e.g. "--run-timeout 3": a hang's first run
# otherwise waits the default 30 s, and so does each replay of it), RC_KEEP
# (a host folder: the campaign of every failure that replayed less than
# 10/10 is copied there, for a look).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cs=${CONCSCHED:-$root/build/concsched}
b=$root/build
progs=${1:-"$b/examples/bank $b/tests/programs/bad_lockorder $b/tests/programs/bad_selfdeadlock
$b/tests/programs/bad_lostwakeup $b/tests/programs/race_torn_pair $b/tests/programs/race_split_cs
$b/tests/programs/race_wrong_lock $b/tests/programs/race_no_lock $b/tests/programs/race_ws_deque
$b/tests/programs/race_uaf $b/tests/programs/race_flag_token"}
progs=$(echo $progs)
runs=${RC_RUNS:-30}
take=${RC_TAKE:-2}
strategies=${RC_STRATEGIES:-random tsa pct:2 pcta map serial svall}
seed=${RC_SEED:-1}
out=$(mktemp -d /tmp/cs-rc-XXXXXX)
trap 'rm -rf "$out"' EXIT
carry=
for p in $progs; do carry="$carry -C $p"; done
# shellcheck disable=SC2086
"$cs" vm -t "${RC_TIMEOUT:-3000}" $carry -o "$out" -- sh -c "
cd /out
for p in $progs; do
	n=\${p##*/}
	for s in $strategies; do
		opt=\"-s \$s\"
		[ \$s = serial ] && opt='-s random --serial random'
		[ \$s = svall ] && opt='-s sharedVar-all@500/sleep:200 --access'
		[ \$s = pcta ] && opt='-s pct:2 --access'
		c=/out/\$n-\$(echo \$s | tr -d :)
		$cs run \$opt ${RC_OPTS:-} -n $runs --keep-going --seed $seed -o \$c -- \$p >/dev/null 2>&1
		fails=\$($cs report \$c 2>/dev/null | sed -n 's/^  run \\([0-9]*\\): .*/\\1/p' | head -$take)
		[ -z \"\$fails\" ] && echo \"\$n \$s: no failure in $runs runs\"
		for r in \$fails; do
			k=\$($cs replay \$c --run \$r --times 10 2>/dev/null | sed -n 's/.*failed again in \\([0-9]*\\) of 10.*/\\1/p')
			kind=\$($cs report \$c --schedule \$r 2>/dev/null | sed -n '1s/^run [0-9]* (\\([a-z-]*\\)).*/\\1/p')
			pre=\$($cs report \$c --schedule \$r 2>/dev/null | sed -n '1s/.* \\([0-9]*\\) preemptions\$/\\1/p')
			m=\$($cs minimize \$c --run \$r --times 3 2>/dev/null | sed -n '1s/.* run \\([0-9]*\\)\$/\\1/p')
			after=-
			[ -n \"\$m\" ] && after=\$($cs report \$c --schedule \$m 2>/dev/null | sed -n '1s/.* \\([0-9]*\\) preemptions\$/\\1/p')
			echo \"\$n \$s run \$r: \${kind:-?} replayed \${k:-?}/10, preemptions \${pre:-?} -> \$after\"
			[ \"\${k:-0}\" = 10 ] || cp -r \$c /out/keep-\$n-\$(echo \$s | tr -d :)-\$r
		done
	done
done" 2>"$out/vm.err" || { echo "VM: $(tail -3 "$out/vm.err")" >&2; exit 1; }
if [ -n "${RC_KEEP:-}" ]; then
	mkdir -p "$RC_KEEP"
	for k in "$out"/keep-*; do [ -e "$k" ] && cp -r "$k" "$RC_KEEP/"; done
fi
