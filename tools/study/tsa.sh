#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/study/tsa.sh — the seed 000 comparison study (docs/studies/tsa.md):
# for every subject, strategy and repetition, one campaign
#   concsched run -s STRATEGY -n N --keep-going --seed REP -o DIR -- SUBJECT
# all of a subject's campaigns inside one VM boot (the host has no
# sched_ext), then tools/study/tsa_analyze.py reads every campaign with
# `concsched report DIR --json` and writes the tables. `make study-tsa`
# runs it with the defaults (about 40 minutes on the 2-core TCG host).
#
#   tools/study/tsa.sh [OUTDIR]          (default build/study-tsa)
#
# Environment (all optional):
#   STUDY_N           runs per campaign (default 12)
#   STUDY_R           repetitions per subject and strategy (default 2)
#   STUDY_R_BEST      stage 2: tsa and the best random configuration of each
#                     subject are repeated up to this many times (default 6;
#                     <= STUDY_R: no stage 2)
#   STUDY_SUBJECTS    subjects, names of build/tests/programs/study_* without
#                     the prefix (default "list hashset hashtable pool")
#   STUDY_STRATEGIES  strategies (default "tsa tsa-h" and rnd-y, rnd-s10,
#                     rnd-s100 at every STUDY_PS)
#   STUDY_PS          probabilities of the rnd-* baselines (default
#                     "0.1 0.2 0.3 0.4 0.5")
#   STUDY_ARGS_<subj> the subject's arguments (default none: its defaults)
#   STUDY_VM_TIMEOUT  seconds per VM boot (default: estimated from N, R and
#                     the strategies, at most 3000)
#   STUDY_CAMPAIGN_TIMEOUT  seconds one campaign may take in the guest
#                     (default 60 + 20 N); then it is interrupted and keeps
#                     the runs it finished
#   STUDY_RETRIES     VM boots per subject after a guest crash (default 30;
#                     two boots in a row that bring nothing back end it)
#   STUDY_RESUME=1    keep campaigns already in OUTDIR and run only the rest
#   CONCSCHED         the concsched binary (default build/concsched)
#
# Campaigns stream back out of the guest one by one (tar | gzip | base64 on
# the VM's stdout, framed by @@BEGIN/@@END lines), so a guest that dies in
# the middle loses only the campaign in flight; the subject's VM is booted
# again for the campaigns still missing (at most STUDY_RETRIES more times).
# Layout: OUTDIR/SUBJECT/STRATEGY_r<REP>/ (':' in a strategy becomes '_'),
# OUTDIR/log/ (VM stdout/stderr per boot), OUTDIR/study.log, and the
# analysis: OUTDIR/tables.md, OUTDIR/results.json.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/build/study-tsa}
mkdir -p "$out" && out=$(cd "$out" && pwd)
cs=${CONCSCHED:-$root/build/concsched}
case $cs in /*) ;; *) cs=$(cd "$(dirname "$cs")" && pwd)/$(basename "$cs") ;; esac
N=${STUDY_N:-12}
R=${STUDY_R:-2}
RB=${STUDY_R_BEST:-6}
subjects=${STUDY_SUBJECTS:-list hashset hashtable pool}
ps=${STUDY_PS:-0.1 0.2 0.3 0.4 0.5}
if [ -n "${STUDY_STRATEGIES:-}" ]; then
	strategies=$STUDY_STRATEGIES
else
	strategies="tsa tsa-h"
	for k in y s10 s100; do
		for p in $ps; do
			strategies="$strategies rnd-$k:$p"
		done
	done
fi
retries=${STUDY_RETRIES:-30}

log() {
	printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$out/study.log" >&2
}

[ -x "$cs" ] || {
	echo "tsa.sh: no concsched binary at $cs (run make)" >&2
	exit 2
}
mkdir -p "$out/log" "$out/bin"
# A private copy of the binary: others may rebuild build/concsched while the
# study runs; every boot and the analysis use the same one.
if [ "$cs" != "$out/bin/concsched" ]; then
	cp "$cs" "$out/bin/concsched.tmp" && mv "$out/bin/concsched.tmp" "$out/bin/concsched"
	cs=$out/bin/concsched
fi
export CONCSCHED_LIBDIR="$root/tools"
[ "${STUDY_RESUME:-0}" = 1 ] || : >"$out/study.log"
log "study: N=$N R=$R R_BEST=$RB subjects: $subjects"
log "strategies: $strategies"
log "concsched: $cs ($("$cs" --version 2>/dev/null | head -1); tree $(git -C "$root" describe --always --dirty 2>/dev/null); host $(nproc) CPUs, load $(cut -d" " -f1-3 /proc/loadavg))"

# Rough guest seconds per run and strategy, measured under TCG
# (docs/studies/tsa.md); only used for the VM time limit.
run_cost() {
	case $1 in
	rnd-s100:*) echo 6 ;;
	rnd-s10:*) echo 3 ;;
	*) echo 2 ;;
	esac
}

study_start=$(date +%s)
# Run the campaigns "STRATEGY,REP ..." of one subject that are not in
# $out/$subj yet: one VM boot for all of them, booted again (at most
# STUDY_RETRIES more times) for those a dying guest did not send back.
run_subject() { # SUBJECT LIST
	subj=$1
	prog=$root/build/tests/programs/study_$subj
	[ -x "$prog" ] || {
		log "$subj: no $prog (run make); skipped"
		return
	}
	eval "args=\${STUDY_ARGS_$subj:-}"
	mkdir -p "$out/$subj"
	attempt=0
	dry=0
	while :; do
		todo=
		budget=60
		for t in $2; do
			s=${t%,*}
			rep=${t##*,}
			name=$(printf '%s' "$s" | tr ':' '_')_r$rep
			if [ ! -f "$out/$subj/$name/campaign.db" ]; then
				rm -rf "${out:?}/$subj/$name" "$out/$subj/$name.err"
				todo="$todo $s,$rep,$name"
				budget=$((budget + 10 + N * $(run_cost "$s")))
			fi
		done
		[ -n "$todo" ] || break
		if [ "$attempt" -gt "$retries" ] || [ "$dry" -ge 2 ]; then
			log "$subj: giving up after $attempt boots; missing:$todo"
			break
		fi
		[ "$budget" -gt 3000 ] && budget=3000
		ct=${STUDY_CAMPAIGN_TIMEOUT:-$((60 + N * 20))}
		timeout=${STUDY_VM_TIMEOUT:-$budget}
		attempt=$((attempt + 1))
		boot=$(($(ls "$out/log" | grep -c "^$subj\..*\.sh$") + 1))
		script=$out/log/$subj.$boot.sh
		{
			echo '#!/bin/sh'
			echo "# generated by tools/study/tsa.sh: $subj, boot $boot"
			echo "cs='$cs'; prog='$prog'; N=$N; ARGS='$args'; CT=$ct"
			cat <<'EOF'
one() { # STRATEGY REP NAME
	t0=$(date +%s)
	# A campaign that outlives its limit is interrupted (SIGINT: concsched
	# stops and keeps the runs it committed), then killed.
	timeout -s KILL $((CT + 30)) timeout -s INT "$CT" \
		"$cs" run -s "$1" -n "$N" --keep-going --seed "$2" -o "/out/$3" -- "$prog" $ARGS \
		>/dev/null 2>"/out/$3.err"
	rc=$?
	echo "@@BEGIN $3 $rc $(($(date +%s) - t0))"
	tar -c -C /out "$3" "$3.err" | gzip -1 | base64
	echo "@@END $3"
	rm -rf "/out/$3" "/out/$3.err"
}
EOF
			for t in $todo; do
				echo "$t" | awk -F, '{ printf "one \047%s\047 %s \047%s\047\n", $1, $2, $3 }'
			done
		} >"$script"
		ncamp=$(echo $todo | wc -w)
		log "$subj: boot $boot: $ncamp campaigns, VM limit ${timeout}s"
		t0=$(date +%s)
		"$cs" vm -t "$timeout" -m 2048 -C "$prog" -C "$script" -- sh "$script" \
			>"$out/log/$subj.$boot.stdout" 2>"$out/log/$subj.$boot.stderr"
		vrc=$?
		got=$(python3 "$here/tsa_analyze.py" unpack "$out/log/$subj.$boot.stdout" "$out/$subj")
		log "$subj: boot $boot: vm exit $vrc after $(($(date +%s) - t0))s, $got of $ncamp campaigns back"
		if [ "${got:-0}" -gt 0 ]; then dry=0; else dry=$((dry + 1)); fi
		if [ "$vrc" != 0 ]; then
			grep -m1 'concsched: vm:' "$out/log/$subj.$boot.stderr" |
				sed "s/^/$(date -u +%H:%M:%S) $subj: /" | tee -a "$out/study.log" >&2
		fi
	done
}

# Stage 1: every strategy, repetitions 1..R.
for subj in $subjects; do
	[ "${STUDY_RESUME:-0}" = 1 ] || rm -rf "${out:?}/$subj"
	list=
	for s in $strategies; do
		rep=1
		while [ "$rep" -le "$R" ]; do
			list="$list $s,$rep"
			rep=$((rep + 1))
		done
	done
	run_subject "$subj" "$list"
done
# Stage 2: tsa and the best random configuration of each subject (most SP
# requirements after N runs in stage 1) get repetitions R+1..R_BEST, so the
# Wilcoxon signed-rank test has enough pairs.
if [ "$RB" -gt "$R" ]; then
	python3 "$here/tsa_analyze.py" best --concsched "$cs" --subjects "$subjects" \
		--strategies "$strategies" "$out" | while read -r subj best; do
		list=
		rep=$((R + 1))
		while [ "$rep" -le "$RB" ]; do
			list="$list tsa,$rep $best,$rep"
			rep=$((rep + 1))
		done
		log "$subj: stage 2: tsa and $best, repetitions $((R + 1))..$RB"
		run_subject "$subj" "$list"
	done
fi
log "campaigns done in $(($(date +%s) - study_start))s; analysing"
python3 "$here/tsa_analyze.py" analyze --concsched "$cs" --runs "$N" \
	--subjects "$subjects" --strategies "$strategies" "$out" >/dev/null &&
	log "tables: $out/tables.md, $out/results.json"
