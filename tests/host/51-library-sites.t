#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeout: 120
# Sites in a shared library of the program's own are named by the
# library's path, function and line (kernel/sync.h struct sync_runtime
# libs, CS_EV_NEWFILE). The probes' mapping table knows a mapping's inode
# and file name, not its path; the controller learns paths from the
# dynamic linker's list of the program's libraries and from the process's
# maps, read while it lives. A library ld.so maps after the exec
# (in_library links lib/libsharedsync.so) was once stored by its file
# name alone, without function or line, because the maps were read at the
# exec; so was one the program dlopens (dlopen_library), which no list
# names: its first site wakes the controller to read the maps.
source "$(dirname "$0")/../lib.sh"
need_root
LIB=$PROGS/lib/libsharedsync.so
for p in in_library dlopen_library; do
	[ -x "$PROGS/$p" ] || skip_all "build first: make"
done
[ -f "$LIB" ] || skip_all "build first: make"
command -v sqlite3 >/dev/null || skip_all "sqlite3 missing (run: sudo make deps)"
plan 12
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
lib=$(realpath "$LIB")

for p in in_library dlopen_library; do
	"$CS" observe --json -o "$T/$p.json" -- "$PROGS/$p" 2>"$T/$p.err"
	is "$?" 0 "$p: observe exits 0"
	is "$(grep -oE '"text": "shared_worker\+0x[0-9a-f]+ \(sharedsync\.c:[0-9]+\)"' "$T/$p.json" | sort -u | wc -l)" 3 \
		"$p: observe names the library's three sites (the thread start, lock, unlock) by function and line"
	is "$(grep -cE '("|[ >])libsharedsync\.so\+0x' "$T/$p.json")" 0 \
		"$p: ... and none by the library's file name alone"

	"$CS" run -s none -n 2 -o "$T/c-$p" -- "$PROGS/$p" >/dev/null 2>"$T/run-$p.err"
	is "$?" 0 "$p: run -s none, 2 passing runs"
	is "$(sqlite3 "$T/c-$p/campaign.db" "select count(distinct function) from sites where object = '$lib' and function in ('shared_worker', 'shared_lock')")" 2 \
		"$p: the store names the library's sites and lock by its path: shared_worker, shared_lock"
	is "$(sqlite3 "$T/c-$p/campaign.db" "select count(*) from sites where object not like '/%'")" 0 \
		"$p: ... and no site by a file name alone"
done
done_testing
