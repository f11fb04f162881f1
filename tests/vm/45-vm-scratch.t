#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 600
# Where VM campaign commands keep their scratch directory (issue 15 item 4):
# replay --vm works on a campaign it cannot write (a read-only mount);
# run --vm -o D killed with SIGKILL leaves nothing next to D but the runs
# it streamed into D (a readable campaign), and its
# scratch directory under $TMPDIR (named after its pid) is removed by the
# next run, while a live process's is kept; an empty D.vm-XXXXXX of an
# older concsched is removed too; a campaign that comes back across
# filesystems ($TMPDIR on tmpfs) is copied into place.
source "$(dirname "$0")/../lib.sh"
need_vm
[ -x "$PROGS/fig2" ] || skip_all "build first: make"
command -v python3 >/dev/null || skip_all "python3 missing (run: sudo make deps)"
plan 16
T=$(mktemp -d /tmp/cs-vmscratch-XXXXXX)
SHM=
cleanup() {
	mountpoint -q "$T/ro" 2>/dev/null && umount "$T/ro"
	[ -n "$SHM" ] && rm -rf "$SHM"
	rm -rf "$T"
}
trap cleanup EXIT

# --- replay --vm of a campaign on a read-only mount -----------------------
"$CS" run -s none -n 1 -o "$T/src/camp" -- /bin/false >/dev/null 2>&1
is "$?" 1 "a campaign with a failing run (native, strategy none)"
mkdir "$T/ro"
mount --bind "$T/src" "$T/ro" && mount -o remount,bind,ro "$T/ro"
touch "$T/ro/probe" 2>/dev/null
is "$?" 1 "the campaign's directory is mounted read-only"
"$CS" replay "$T/ro/camp" --run 1 --vm >"$T/rep" 2>&1
is "$?" 1 "replay --vm of the read-only campaign runs (failed again: exit 1)"
like "$(cat "$T/rep")" 'failed again in 1 of 1' "the replay counted its reproduction"
is "$(ls -A "$T/src")" "camp" "nothing was created next to the campaign"

# --- run --vm killed with SIGKILL -----------------------------------------
mkdir -p "$T/tmp" "$T/k"
exec 4>&2 2>"$T/reaped" # bash's "Killed" line when it reaps the campaign
TMPDIR="$T/tmp" "$CS" run --vm -s none -n 500 --keep-going -o "$T/k/camp" -- "$PROGS/fig2" \
	>/dev/null 2>&1 &
pid=$!
# runs committed in the host's copy so far
nruns() {
	"$CS" report "$1" --json 2>/dev/null |
		python3 -c 'import json, sys; print(len(json.load(sys.stdin)["runs"]["list"]))' 2>/dev/null
}
before=0
deadline=$(($(date +%s) + $(scaled 120)))
while [ "$(date +%s)" -lt "$deadline" ]; do
	before=$(nruns "$T/k/camp")
	[ "${before:-0}" -ge 3 ] && break
	sleep 0.2
done
kill -9 "$pid"
wait "$pid"
exec 2>&4 4>&-
compgen -G "$T/tmp/concsched-out.$pid.*" >/dev/null
ok $? "the scratch directory was under \$TMPDIR, named after the pid"
is "$(ls -A "$T/k")" "camp" "nothing left next to the campaign (no camp.vm-*)"
after=$(nruns "$T/k/camp")
ok "$([ "${before:-0}" -ge 3 ] && [ "${after:-0}" -ge "$before" ]; echo $?)" \
	"the campaign streamed so far survives kill -9: $after runs ($before seen before)"
gone_within "$(scaled 10)" pgrep -f "concsched-vm.$pid."
is "$?" 0 "its qemu died with it"

# A live process's scratch directory and an empty one an older concsched
# left next to a campaign.
live=$(mktemp -d "$T/tmp/concsched-out.$$.XXXXXX")
mkdir "$T/k/next.vm-Ab12Cd"
TMPDIR="$T/tmp" "$CS" run -s none -n 1 -o "$T/k/next" -- "$PROGS/fig2" >/dev/null 2>&1
is "$?" 0 "the next run"
compgen -G "$T/tmp/concsched-out.$pid.*" >/dev/null
is "$?" 1 "it removed the scratch directory of the killed campaign"
[ -d "$live" ]
ok $? "it kept the scratch directory of a live process"
[ -e "$T/k/next.vm-Ab12Cd" ]
is "$?" 1 "it removed the empty next.vm-XXXXXX an older concsched left"

# --- the campaign comes back across filesystems ---------------------------
if [ "$(stat -fc %T /dev/shm 2>/dev/null)" = tmpfs ] && [ "$(stat -fc %T "$T")" != tmpfs ]; then
	SHM=$(mktemp -d /dev/shm/cs-vmscratch-XXXXXX)
	# Without the stream: the campaign comes back through the scratch
	# directory at the end (what happens when a stream breaks).
	CONCSCHED_VM_NO_STREAM=1 TMPDIR="$SHM" "$CS" run --vm -s none -n 2 -o "$T/x/camp" -- \
		"$PROGS/fig2" >/dev/null 2>"$T/xerr"
	is "$?" 0 "run --vm with \$TMPDIR on tmpfs (campaign on $(stat -fc %T "$T"))"
	"$CS" report "$T/x/camp" --json 2>/dev/null | grep -q '"total": 2'
	ok $? "the campaign was copied into place: its 2 runs are there"
	[ -z "$(ls -A "$SHM")" ]
	ok $? "and the scratch directory is gone"
else
	for i in 1 2 3; do skip "/dev/shm is not a tmpfs apart from $T" "cross-filesystem move $i"; done
fi
done_testing
