#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 300
# The probes ignore the calls libc and ld.so make themselves (here ld.so's
# TLS lock in every pthread_create) even while the target's address space
# is busy: mmap_churn starts 300 threads one at a time beside a thread that
# maps and unmaps a page without a pause, so bpf_find_vma often finds the
# mapping lock taken. Before 2026-12-01 a failed lookup marked the
# thread's cached mapping (ld.so's code) as the program's, and a lookup
# that failed had no other way to decide: the campaign held ld.so's
# _dl_allocate_tls_init as a site with SP pairs and visits of its own.
# This file failed on that code, and with either half of the fix alone
# (docs/observe.md, "libc-internal calls"). A forked and exec'd fig2
# under -j 2 beside busy VMs (45-run-jobs, ci78) held such a pair.
# Strategy none: no sched_ext needed.
source "$(dirname "$0")/../lib.sh"
need_root
[ -x "$PROGS/mmap_churn" ] || skip_all "build first: make"
plan 5
T="${TMPDIR:-/tmp}/cs-internal-$$"
rm -rf "$T" && mkdir -m 700 "$T" || { echo "Bail out! cannot make $T"; exit 1; }
trap 'rm -rf "$T"' EXIT

# The run timeout is one only a hang would reach: mmap_churn's time is the
# machine's (natively 15 ms to 2.7 s a run at load average 8 on 2 CPUs,
# 2026-12-01: its thread starts wait for the address space's lock that the
# churn thread keeps taking), and the adaptive one, 20 times the slowest
# clean run and at least 2 s, called run 7 of 8 a hang in ci88 (run 1
# took 0.065 s).
"$CS" run -s none -n 8 --run-timeout "$(scaled 60)" -o "$T/mc" -- "$PROGS/mmap_churn" >/dev/null 2>"$T/err"
is "$?" 0 "8 runs of mmap_churn (300 thread starts beside an mmap loop): exit 0"
db="$T/mc/campaign.db"
is "$(sqlite3 -readonly "$db" "SELECT count(*) FROM runs WHERE outcome = 'pass'")" 8 \
	"... every run passed and is stored"
is "$(sqlite3 -readonly "$db" "SELECT group_concat(DISTINCT object) FROM sites WHERE object NOT LIKE '%/mmap_churn'")" "" \
	"no site in libc or ld.so: their own calls are ignored however busy the address space"
foreign=$(sqlite3 -readonly "$db" "SELECT key FROM tasks" | grep -o '@[0-9]*' | tr -d @ | sort -u |
	while read -r id; do
		sqlite3 -readonly "$db" "SELECT object FROM sites WHERE id = $id"
	done | grep -vc '/mmap_churn$')
is "$foreign" 0 "every coverage task's sites are the program's"
like "$(sqlite3 -readonly "$db" "SELECT group_concat(function, ' ') FROM sites")" "worker" \
	"the program's own lock calls are sites (worker's)"
