#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 240
# concsched observe on seed 000's Figure 2 (tests/programs/fig2.c): the
# exact SP pairs one run shows (<2a,4a> <4a,2b> <2b,4b>), the HBPairs, the
# Sync sites and the thread model — for the PIE, non-PIE and static builds;
# the stripped build gives the same tasks as object+offset; two runs give
# identical task keys (run-comparable).
source "$(dirname "$0")/../lib.sh"
need_root
Q=$ROOT/tests/host/observe_tasks.py
SRC=$ROOT/tests/programs/fig2.c
[ -x "$PROGS/fig2" ] || skip_all "build first: make"
plan 28

line() { grep -n "/\* $1 \*/" "$SRC" | cut -d: -f1; }
L2a=$(line 2a) L3a=$(line 3a) L4a=$(line 4a) L5a=$(line 5a)
L2b=$(line 2b) L3b=$(line 3b) L4b=$(line 4b) L5b=$(line 5b)
Lc1=$(line create1) Lc2=$(line create2) Lj1=$(line join1) Lj2=$(line join2)

expected=$(sort <<EOT
sp L$L2a->L$L4a
sp L$L4a->L$L2b
sp L$L2b->L$L4b
hbpair unlock->lock L$L5a->L$L2b
hbpair create->start L$Lc1->fn:thread1
hbpair create->start L$Lc2->fn:thread2
hbpair exit->join fn:thread1->L$Lj1
hbpair exit->join fn:thread2->L$Lj2
$(for l in $L2a $L3a $L4a $L5a $L2b $L3b $L4b $L5b $Lc1 $Lc2 $Lj1 $Lj2; do echo "sync visited L$l"; done)
EOT
)
expected_threads=$(sort <<EOT
main
created L$Lc1 fn:thread1
created L$Lc2 fn:thread2
EOT
)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for v in fig2 fig2-nopie fig2-static; do
	"$CS" observe --json -o "$tmp/$v.json" -- "$PROGS/$v" 2>"$tmp/$v.err"
	is "$?" 0 "$v: observe exits 0"
	is "$("$Q" "$tmp/$v.json" tasks)" "$expected" "$v: exactly the SP, HBPair and Sync tasks of Figure 2"
	is "$("$Q" "$tmp/$v.json" threads)" "$expected_threads" "$v: thread model: main + two threads with creation sites and start routines"
	is "$("$Q" "$tmp/$v.json" get events.by_kind.lock)/$("$Q" "$tmp/$v.json" get events.by_kind.unlock)" "4/4" "$v: 4 lock and 4 unlock events"
	is "$("$Q" "$tmp/$v.json" get events.by_kind.create)/$("$Q" "$tmp/$v.json" get events.by_kind.join)/$("$Q" "$tmp/$v.json" get events.by_kind.exit)" "2/2/3" "$v: create/join/exit events"
	is "$("$Q" "$tmp/$v.json" get drops.ring_buffer)$("$Q" "$tmp/$v.json" get drops.lost_per_thread)$("$Q" "$tmp/$v.json" get drops.map_full)" "000" "$v: nothing dropped"
	is "$("$Q" "$tmp/$v.json" get metrics.goodlock.count)" 0 "$v: no nested locking, no GoodLock task"
done
is "$("$Q" "$tmp/fig2-static.json" get probes.static)" True "static build: probes sit in the binary itself"
like "$("$Q" "$tmp/fig2.json" get probes.object)" 'libc\.so' "dynamic build: probes sit in the libc it maps"

# Stripped: same structure, sites as object+offset.
"$CS" observe --json -o "$tmp/s.json" -- "$PROGS/fig2-stripped" 2>/dev/null
is "$("$Q" "$tmp/s.json" get metrics.sp.count)/$("$Q" "$tmp/s.json" get metrics.hbpair.count)/$("$Q" "$tmp/s.json" get metrics.sync.count)" "3/5/12" "stripped: 3 SP, 5 HBPair, 12 Sync tasks"
like "$("$Q" "$tmp/s.json" tasks | sed -n 1p)" 'fig2-stripped\+0x[0-9a-f]+' "stripped: sites are object+offset"

# Run-comparable: a second run has the same task keys and thread ids.
"$CS" observe --json -o "$tmp/again.json" -- "$PROGS/fig2" 2>/dev/null
keys() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sorted(t["key"] for m in d["metrics"].values() for t in m["tasks"])); print(sorted(t["id"] for t in d["threads"]))' "$1"; }
is "$(keys "$tmp/again.json")" "$(keys "$tmp/fig2.json")" "two runs: identical task keys and abstract thread ids"

# Text output carries the same numbers.
out=$("$CS" observe -- "$PROGS/fig2" 2>/dev/null)
like "$out" 'sp tasks: 3' "text report: SP count"
like "$out" "thread1\\+0x[0-9a-f]+ \\(fig2\\.c:$L2a\\) -> thread1\\+0x[0-9a-f]+ \\(fig2\\.c:$L4a\\)" "text report: sites as function+off (file:line)"
done_testing
