#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 240
# concsched observe: exact tasks for programs with known lock structure —
# nested locks in both orders (two GoodLock tasks forming a cycle), a
# condvar handoff (one signal->wakeup HBPair), a failing trylock (not a
# lock action), a reader then a writer on one rwlock, spin locks (glibc's
# pthread_spin_lock is probed on its success return).
source "$(dirname "$0")/../lib.sh"
need_root
Q=$ROOT/tests/host/observe_tasks.py
for p in nested condvar trylock rwlock spin; do
	[ -x "$PROGS/$p" ] || skip_all "build first: make"
done
plan 21

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
line() { grep -n "/\* $2 \*/" "$ROOT/tests/programs/$1.c" | head -1 | cut -d: -f1; }
# tasks of the given metrics, without the Sync ones (join blocking varies)
tasks() { "$Q" "$tmp/$1.json" tasks | grep -E "^($2) " | grep -v '^sync'; }
observe() {
	"$CS" observe --json -o "$tmp/$1.json" -- "$PROGS/$1" 2>"$tmp/$1.err"
	is "$?" 0 "$1: observe exits 0"
}

observe nested
is "$(tasks nested 'sp|goodlock')" "$(sort <<EOT
goodlock L$(line nested t1-outer)->L$(line nested t1-inner)
goodlock L$(line nested t2-outer)->L$(line nested t2-inner)
sp L$(line nested t1-outer)->L$(line nested t2-inner)
sp L$(line nested t1-inner)->L$(line nested t2-outer)
EOT
)" "nested: GoodLock a->b and b->a, SP pairs per lock"
cycle=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
e = [tuple(t["detail"].split(" -> ")) for t in d["metrics"]["goodlock"]["tasks"]]
print(len(e) == 2 and e[0] == e[1][::-1] and e[0][0] != e[0][1])' "$tmp/nested.json")
is "$cycle" True "nested: the two GoodLock tasks name the same two locks in opposite orders"
is "$(tasks nested 'hbpair' | grep -c unlock)" 2 "nested: two unlock->lock HBPairs"

observe condvar
is "$(tasks condvar 'hbpair' | grep signal)" \
	"hbpair signal->wakeup L$(line condvar signal)->L$(line condvar wait)" \
	"condvar: one signal->wakeup HBPair from the signal to the wait"
is "$(tasks condvar 'sp')" "$(sort <<EOT
sp L$(line condvar consumer-lock)->L$(line condvar producer-lock)
sp L$(line condvar producer-lock)->L$(line condvar wait)
EOT
)" "condvar: cond_wait's reacquisition is a lock action at the wait site"
is "$("$Q" "$tmp/condvar.json" get events.by_kind.cond_wait)/$("$Q" "$tmp/condvar.json" get events.by_kind.cond_wake)/$("$Q" "$tmp/condvar.json" get events.by_kind.cond_signal)" \
	"1/1/1" "condvar: cond_wait, cond_wake, cond_signal events"

observe trylock
is "$("$Q" "$tmp/trylock.json" get events.by_kind.trylock_fail)/$("$Q" "$tmp/trylock.json" get events.by_kind.trylock_ok)" \
	"1/1" "trylock: one failed, one successful trylock"
is "$(tasks trylock 'sp')" "sp L$(line trylock main-lock)->L$(line trylock try-ok)" \
	"trylock: the failed attempt is not a lock action (one SP pair)"
is "$("$Q" "$tmp/trylock.json" tasks | grep -c "blocked L$(line trylock try-fail)")" 0 \
	"trylock: a failing trylock is not 'blocked'"

observe rwlock
is "$(tasks rwlock 'sp')" "sp L$(line rwlock rd)->L$(line rwlock wr)" "rwlock: SP pair <rdlock, wrlock>"
is "$(tasks rwlock 'hbpair' | grep unlock)" "hbpair unlock->lock L$(line rwlock rd-unlock)->L$(line rwlock wr)" \
	"rwlock: unlock->lock from the reader's unlock to the writer"
is "$("$Q" "$tmp/rwlock.json" get events.by_kind.rdlock)/$("$Q" "$tmp/rwlock.json" get events.by_kind.wrlock)/$("$Q" "$tmp/rwlock.json" get events.by_kind.rwunlock)" \
	"1/1/2" "rwlock: rdlock, wrlock and two unlock events"
observe spin
is "$(tasks spin 'sp')" "sp L$(line spin spin1)->L$(line spin spin2)" "spin: SP pair <spin1, spin2> at the call sites"
is "$(tasks spin 'hbpair' | grep unlock)" "hbpair unlock->lock L$(line spin unlock1)->L$(line spin spin2)" \
	"spin: one unlock->lock HBPair (pthread_spin_init, an alias of unlock, is not one)"
is "$("$Q" "$tmp/spin.json" get events.by_kind.spin_lock)/$("$Q" "$tmp/spin.json" get events.by_kind.spin_unlock)" \
	"2/2" "spin: two spin_lock and two spin_unlock events"

is "$(cat "$tmp"/*.err)" "" "no warnings on stderr"
done_testing
