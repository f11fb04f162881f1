#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# docs/experiment.md's Slurm recipe on a single-node Slurm brought up here
# from Debian's packages (munge, slurmctld, slurmd, slurm-client): its own
# munge key and slurm.conf in a temp dir, the daemons in the foreground as
# children of this test, a 2-task job array (sbatch --array=1-2 --wait) in
# which task I runs `experiment run SPEC --shard I/2`, then `experiment
# merge` of the two shard directories, compared with the unsharded run.
# Every daemon is stopped on exit (trap). Needs root (uprobes; the daemons
# run as root).
# timeout: 240
source "$(dirname "$0")/../lib.sh"

need_root
[ -x "$CS" ] && [ -x "$PROGS/counter" ] || skip_all "build first (make)"
for p in munged mungekey slurmctld slurmd sbatch sinfo sqlite3; do
	command -v "$p" >/dev/null || PATH=$PATH:/usr/sbin command -v "$p" >/dev/null ||
		skip_all "$p missing (run: sudo make deps)"
done
PATH=$PATH:/usr/sbin
T=$(mktemp -d /tmp/cs-slurm-t.XXXXXX)
chmod 711 "$T"
pids=()
teardown() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$T"
}
trap teardown EXIT
plan 9

# Ports of their own, so a Slurm on this machine is not disturbed.
# Below the ephemeral range: a port a client socket of an earlier step
# holds in TIME_WAIT cannot be bound (seen: "Address already in use").
lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
port=$((10000 + $$ % (lo - 10016)))
host=$(hostname -s)
mkdir -p "$T/state" "$T/spool" "$T/out"
cat >"$T/slurm.conf" <<CONF
ClusterName=concsched-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge.sock
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$T/slurm.conf

mungekey -c -k "$T/munge.key" 2>"$T/mungekey.err"
ok $? "munge key generated"
munged -F -f --key-file="$T/munge.key" --socket="$T/munge.sock" --log-file="$T/munged.log" \
	--pid-file="$T/munged.pid" --seed-file="$T/munged.seed" >"$T/munged.out" 2>&1 &
pids+=($!)
gone_within "$(scaled 10)" test ! -S "$T/munge.sock"
munge -S "$T/munge.sock" -n 2>/dev/null | unmunge -S "$T/munge.sock" >/dev/null 2>&1
ok $? "munged up (a credential round trip)" || diag "$(cat "$T/munged.out")"

slurmctld -D -i >"$T/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N "$host" >"$T/slurmd.out" 2>&1 &
pids+=($!)
up=1
for _ in $(seq "$(scaled 100)"); do
	state=$(sinfo -h -N -o %t 2>/dev/null)
	case "$state" in idle*|mix*|alloc*) up=0; break ;; esac
	sleep 0.2
done
ok $up "slurmctld and slurmd up: the node is idle" ||
	diag "state '$state'" "$(tail -5 "$T/slurmctld.log" "$T/slurmd.log" 2>&1)"

# The recipe of docs/experiment.md, on the example SPEC.
SPEC=$ROOT/docs/examples/experiment.json
cat >"$T/job.sh" <<JOB
#!/bin/sh
#SBATCH --job-name=concsched-experiment
#SBATCH --output=$T/out/%A_%a.out
exec "$CS" experiment run "$SPEC" -o "$T/shard-\$SLURM_ARRAY_TASK_ID" \\
	--shard "\$SLURM_ARRAY_TASK_ID/\$SLURM_ARRAY_TASK_COUNT"
JOB
timeout 150 sbatch --array=1-2 --wait --chdir="$T" "$T/job.sh" >"$T/sbatch.out" 2>&1
ok $? "sbatch --array=1-2 --wait: both tasks succeeded" ||
	diag "$(cat "$T/sbatch.out" "$T"/out/*.out 2>/dev/null)"

q() { sqlite3 "$1/experiment.db" "$2"; }
cells() { q "$1" "SELECT idx, program, strategy, seed, status, runs,
	ifnull(first_failure_run, 'censored') FROM cells ORDER BY idx"; }
is "$(q "$T/shard-1" "SELECT group_concat(shard || ':' || idx) FROM cells")" "1/2:0,1/2:2" \
	"array task 1 ran shard 1/2 (cells 0 and 2)"
is "$(q "$T/shard-2" "SELECT group_concat(shard || ':' || idx) FROM cells")" "2/2:1,2/2:3" \
	"array task 2 ran shard 2/2 (cells 1 and 3)"
"$CS" experiment merge "$T/shard-1" "$T/shard-2" -o "$T/merged" >/dev/null
ok $? "experiment merge of the two shards"
"$CS" experiment run "$SPEC" -o "$T/whole" -q
ok $? "the unsharded run"
is "$(cells "$T/merged")" "$(cells "$T/whole")" "merged shards equal the unsharded run's cells"

done_testing
