#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Access probes on the host kernel (uprobe.multi, root): run
# tests/programs/accesses under `concsched sites --shared` and check that the
# effective addresses the probes computed are the variables' real addresses
# (the program prints them), reads/writes are classified right, shared
# variables are found with all their sites, main's stack is not a shared
# variable, and no probe is left behind.
# timeout: 120
source "$(dirname "$0")/../lib.sh"
need_root
command -v bpftool >/dev/null || skip_all "bpftool missing (run: sudo make deps)"
[ -x "$PROGS/accesses" ] || skip_all "build first: make"

plan 28
log=$(mktemp)
trap 'rm -f "$log"' EXIT

"$CS" sites --shared --sites-include 'acc_*' -- "$PROGS/accesses" 50 >"$log" 2>&1
ok $? "sites --shared runs accesses"

# The program's own view: "NAME 0xADDR" lines.
addr_of() { awk -v n="$1" '$1 == n { print $2; exit }' "$log"; }
# Ours: "  NAME at 0xADDR  N threads  reads R  writes W".
var_line() { grep -E "^  $1 +at 0x" "$log" | head -1; }
var_addr() { var_line "$1" | sed -E 's/.* at (0x[0-9a-f]+).*/\1/'; }
rw() { var_line "$1" | sed -E 's/.*reads ([0-9]+)  writes ([0-9]+).*/\1 \2/'; }

for v in acc_written acc_read acc_counter acc_array acc_atomic acc_swapped acc_cas_word; do
	is "$(var_addr "$v")" "$(addr_of "$v")" "$v: recorded effective address = &$v"
done
is "$(rw acc_written)" "0 100" "acc_written: 2 threads x 50 writes, no reads"
is "$(rw acc_read)" "200 0" "acc_read: 200 reads (two sites), no writes"
is "$(rw acc_counter)" "100 100" "acc_counter++: read-modify-write counted as both"
is "$(rw acc_atomic)" "100 100" "lock add (probed beside the lock prefix) seen 100 times"
is "$(rw acc_cas_word)" "100 100" "lock cmpxchg: read-modify-write, 100 times"

sites=$(awk '/^  acc_read +at/ { f = 1; next } /^  [^ ]/ { f = 0 } f' "$log")
like "$sites" "acc_load_global\+0x0 \(accesses\.c:[0-9]+\)" "acc_read: site in acc_load_global"
like "$sites" "acc_deref\+0x0 \(accesses\.c:[0-9]+\)" "acc_read: site in acc_deref"

heap=$(grep -E '^  heap block of 4 bytes allocated at main\+0x[0-9a-f]+ \(accesses\.c:[0-9]+\) at ' "$log" |
	sed -E 's/.* at (0x[0-9a-f]+) .*/\1/')
is "$heap" "$(addr_of heap_int)" "heap block shared by both threads: its address and malloc call site"
stack=$(addr_of main_stack_int)
grep -q " at $stack " "$log"
ok $((! $?)) "main's stack local read by both threads is not a shared variable"
like "$(grep '^access sites:' "$log")" "attached in .* \(0 dropped\)" "attach time reported, no drops"

is "$(bpf_settled prog '^access_hit$' 0 "$(scaled 10)")" 0 "no access probe program left after exit"

"$CS" sites --shared --json --sites-include 'acc_*' -- "$PROGS/accesses" 5 >"$log" 2>/dev/null
ok $? "sites --shared --json runs"
like "$(tr -d '\n ' <"$log")" '"attached":[0-9]+.*"shared_variables":\[\{' "JSON has attach count and shared variables"
out=$("$CS" sites --shared -- /nonexistent 2>&1)
like "$out" "nonexistent" "missing program: one-line error"

# Non-PIE and static builds: same addresses, same counts.
for variant in accesses-nopie accesses-static; do
	"$CS" sites --shared --sites-include 'acc_*' -- "$PROGS/$variant" 20 >"$log" 2>&1
	is "$(var_addr acc_counter)" "$(addr_of acc_counter)" "$variant: &acc_counter recorded"
	is "$(rw acc_atomic)" "40 40" "$variant: locked add counted"
	like "$(grep '^  heap block' "$log")" "allocated at main\+0x[0-9a-f]+ \(accesses\.c" \
		"$variant: malloc followed (heap block named by allocation site)"
done

done_testing
