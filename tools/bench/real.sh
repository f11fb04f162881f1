#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The real-software corpus (make bench-real; issue 32 item 3).
# Compressors: pigz, pbzip2, lbzip2, xz and zstd with two threads each on
# 2 MB of generated text (a fixed word list, seeded). For each: the native
# time; `concsched run -s none` and `run -s none --access` (one test run
# each, N campaigns, default 1) with their time, failures and race
# warnings, every run checked by a round trip (--check: the output
# decompressed must equal the input; a crash or a hang fails the run too);
# and Helgrind on the same command (its "Possible data race" contexts).
# Servers: memcached (2 worker threads) under memcaslap (Debian's name for
# memaslap) and redis-server (--io-threads 2) under redis-benchmark, on
# loopback: the client's throughput without attach, then with
# `concsched attach -p PID -s none --access` for the client's run (race
# warnings; a failure is the server crashing or not answering after, or
# the client failing), and under Helgrind (its data-race contexts and the
# client's throughput). sqlite3: Debian's libsqlite3 driven by
# build/bench/sqlite_threads (tools/bench/sqlite_threads.c: writers on a
# shared serialized connection and on connections of their own, two
# readers, WAL; a run fails when the table does not hold exactly what was
# written) under the same three columns and Helgrind. Prints markdown
# tables (docs/perf.md). These parts run on the host (strategy none needs
# no sched_ext). Steered (PARTS=steered, in the VM; issue 32's 20x cost
# bound): one VM boot; per compressor, on the first ST_KB KB of the same
# text, three native runs (their median), then a campaign of ST_RUNS runs of
# ST_STRATEGY with the same round-trip check and --keep-going: its
# failures, race warnings, the median and largest run time, and the median
# steered run against the native median (tools/bench/steer_row.py); the
# same for sqlite_threads (ST_PROGS "sqlite"; SQ_THREADS, SQ_ROWS), whose
# own check of its table is the oracle.
# Servers steered (PARTS=servers_steered, in the VM: a steering strategy
# needs sched_ext): one VM boot; per server, started on loopback as above
# (memcached as nobody), the client's rate natively in the VM (memcaslap
# SECS s, redis-benchmark SV_NAT_N requests), then under `concsched attach
# -p PID SV_STRATEGY` (attach refuses pct and the other strategies that
# need whole runs; default random) with fewer requests (SV_ATT_N, TCG is
# slow): the rates and their ratio, failures (attach exit 1, the server
# not answering after, the client getting no result), race warnings (the
# attach's store, reported on the host) and the attach's time.
# Needs root (uprobes) and the packages of make deps.
#   tools/bench/real.sh          N=3 tools/bench/real.sh
#   PARTS=servers SECS=10 SERVERS=memcached tools/bench/real.sh
#   PARTS=sqlite SQ_THREADS=4 SQ_ROWS=500 tools/bench/real.sh
#   PARTS=steered ST_RUNS=20 ST_STRATEGY="-s pct:3 --access" tools/bench/real.sh
#   PARTS=steered ST_PROGS="pigz xz" tools/bench/real.sh   (some compressors only)
#   PARTS=servers_steered tools/bench/real.sh
#   PARTS=servers_steered SERVERS=redis SV_ATT_N=50 SV_KEEP=/tmp/sv tools/bench/real.sh
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
CS=${CONCSCHED:-$here/build/concsched}
N=${N:-1}
PARTS=${PARTS:-compressors sqlite servers}
SQ_THREADS=${SQ_THREADS:-4} # sqlite_threads writers
SQ_ROWS=${SQ_ROWS:-500}     # rows each writer inserts
SECS=${SECS:-10} # each server client run, in seconds (memcaslap -t)
SERVERS=${SERVERS:-memcached redis}
ST_RUNS=${ST_RUNS:-20}                        # steered: runs per campaign
ST_STRATEGY=${ST_STRATEGY:--s pct:3 --access} # steered: run's options
ST_KB=${ST_KB:-512}                           # steered: KB of the text
ST_TIMEOUT=${ST_TIMEOUT:-7200}                # steered: the VM's limit, s
ST_PROGS=${ST_PROGS:-pigz pbzip2 lbzip2 xz zstd sqlite} # steered: the compressors, sqlite_threads
ST_KEEP=${ST_KEEP:-}                          # steered: keep the stores in this dir
SV_STRATEGY=${SV_STRATEGY:--s random --seed 1 --access} # servers_steered: attach's options
SV_NAT_N=${SV_NAT_N:-2000}      # servers_steered: redis-benchmark -n, native
SV_ATT_N=${SV_ATT_N:-100}       # servers_steered: redis-benchmark -n, under attach
SV_CLIENT_LIMIT=${SV_CLIENT_LIMIT:-900} # servers_steered: a client run's limit, s
SV_TIMEOUT=${SV_TIMEOUT:-3600}  # servers_steered: the VM's limit, s
SV_KEEP=${SV_KEEP:-}            # servers_steered: keep the stores and logs in this dir
[ "$(id -u)" = 0 ] || { echo "real: needs root (uprobes)" >&2; exit 2; }
[ -x "$CS" ] || { echo "real: build first: make" >&2; exit 2; }
SQ=$here/build/bench/sqlite_threads
[ -x "$SQ" ] || { echo "real: build first: make (no $SQ)" >&2; exit 2; }
for t in pigz pbzip2 lbzip2 xz zstd valgrind python3 memcached memcaslap redis-server \
	redis-benchmark redis-cli; do
	command -v $t >/dev/null || { echo "real: no $t (make deps installs it)" >&2; exit 2; }
done
T=$(mktemp -d /tmp/cs-real-XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir "$T/lib"
# Helgrind runs against a private copy of libc: another concsched's
# uprobes on libc would stop valgrind on their breakpoints.
cp "$(ldd "$(command -v pigz)" | awk '/libc.so/ { print $3 }')" "$T/lib/"
cp "$(ldd "$SQ" | awk '/libsqlite3.so/ { print $3 }')" "$T/lib/"
"$here/tools/bench/gen_text.py" "$T/text"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# campaign RUN-OPTS... -- CMD...: "failures / race warnings / seconds"
campaign() {
	local t0 out
	rm -rf "$T/camp"
	t0=$(now)
	"$CS" run -o "$T/camp" "$@" >/dev/null 2>"$T/err"
	out=$("$CS" report "$T/camp" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(len(d["failures"]), sum(w["kind"] == "race" for w in d["warnings"]))') ||
		{ echo "error: $(tail -1 "$T/err")"; return; }
	echo "${out% *} / ${out#* } / $(secs "$t0") s"
}

row() { # DECOMPRESS CMD...
	local dec=$1 t0 hg
	shift
	local chk="$dec <\"\$CONCSCHED_OUT_FILE\" | cmp -s - $T/text"
	t0=$(now)
	"$@" "$T/text" >"$T/native.out"
	local nat
	nat=$(secs "$t0")
	$dec <"$T/native.out" | cmp -s - "$T/text" || nat="$nat (round trip FAILED)"
	for ((i = 1; i <= N; i++)); do
		t0=$(now)
		LD_LIBRARY_PATH=$T/lib valgrind --tool=helgrind "$@" "$T/text" >/dev/null 2>"$T/hg"
		hg="$(grep -c 'Possible data race' "$T/hg") / $(secs "$t0") s"
		echo "| \`$* FILE\` | $i | $nat s | $(campaign -s none -n 1 --check "$chk" -- "$@" "$T/text") | $(campaign -s none --access -n 1 --check "$chk" -- "$@" "$T/text") | $hg |"
	done
}

compressors() {
	echo "| command | campaign | native | run -s none: failures / warnings / time | run -s none --access: failures / race warnings / time | Helgrind: races / time |"
	echo "|---|---|---|---|---|---|"
	row "pigz -dc" pigz -p 2 -c
	row "pbzip2 -dc" pbzip2 -p2 -c
	row "lbzip2 -dc" lbzip2 -n 2 -c
	row "xz -dc" xz -T2 -c
	row "zstd -dc" zstd -T2 -c
}

# ---- sqlite3 ----------------------------------------------------------------

sqlite() {
	local t0 nat hg i rc cmd=("$SQ" "$T/sq.db" "$SQ_THREADS" "$SQ_ROWS")
	echo "| command | campaign | native | run -s none: failures / warnings / time | run -s none --access: failures / race warnings / time | Helgrind: races / time |"
	echo "|---|---|---|---|---|---|"
	t0=$(now)
	"${cmd[@]}" >/dev/null
	rc=$?
	nat="$(secs "$t0") s"
	[ $rc -eq 0 ] || nat="$nat (FAILED: exit $rc)"
	for ((i = 1; i <= N; i++)); do
		t0=$(now)
		LD_LIBRARY_PATH=$T/lib valgrind --tool=helgrind "${cmd[@]}" >/dev/null 2>"$T/hg"
		hg="$(grep -c 'Possible data race' "$T/hg") / $(secs "$t0") s"
		echo "| \`sqlite_threads DB $SQ_THREADS $SQ_ROWS\` | $i | $nat | $(campaign -s none -n 1 -- "${cmd[@]}") | $(campaign -s none --access -n 1 -- "${cmd[@]}") | $hg |"
	done
}

# ---- servers under attach ----------------------------------------------------

PORT=${PORT:-17311}
# The client's throughput (operations or requests per second) against
# the server on PORT: memcaslap runs SECS seconds; redis-benchmark, which
# has no time limit, COUNT requests of SET and GET each (its mean rps).
client() { # memcached|redis COUNT
	case $1 in
	memcached)
		timeout $((SECS * 4 + 30)) memcaslap -s 127.0.0.1:$PORT -T 2 -c 16 -t "${SECS}s" \
			2>/dev/null | sed -n 's/.*TPS: \([0-9]*\).*/\1/p' | tail -1 ;;
	redis)
		timeout $((SECS * 4 + 30)) redis-benchmark -p $PORT -c 16 -t set,get -n "$2" --csv \
			2>/dev/null | awk -F'"' '/^"(SET|GET)"/ { s += $4; n++ }
				END { if (n == 2) printf "%.0f", s / 2 }' ;;
	esac
}
alive() { # memcached|redis: does the server answer?
	case $1 in
	memcached) printf 'version\r\nquit\r\n' |
		timeout 5 bash -c "cat >/dev/tcp/127.0.0.1/$PORT" 2>/dev/null ;;
	redis) [ "$(timeout 5 redis-cli -p $PORT ping 2>/dev/null)" = PONG ] ;;
	esac
}
start_server() { # memcached|redis [PREFIX...]: starts it on PORT, sets spid
	local s=$1
	shift
	case $s in
	# -c: memcached sets both descriptor limits to its connection
	# limit, and valgrind refuses any hard limit but its own (MC_CONNS).
	memcached) "$@" memcached -u nobody -t 2 -c "${MC_CONNS:-1024}" -l 127.0.0.1 -p $PORT \
		-U 0 2>"$T/srv.err" & ;;
	redis) "$@" redis-server --port $PORT --bind 127.0.0.1 --save '' --appendonly no \
		--io-threads 2 --dir "$T" >"$T/srv.err" 2>&1 & ;;
	esac
	spid=$!
	for _ in $(seq 600); do
		alive "$s" && return 0
		sleep 0.1
	done
	return 1
}
stop_server() {
	kill -TERM "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
}
server_row() { # memcached|redis NATIVE-COUNT ATTACHED-COUNT
	local s=$1 nat att hg fails=0 warns t0 dt rc
	start_server "$s" || { echo "| $s | server did not start: $(tail -1 "$T/srv.err") |"; return; }
	nat=$(client "$s" "$2")
	# attach for the client's run, which waits until the probes are in.
	rm -rf "$T/att"
	t0=$(now)
	"$CS" attach -p "$spid" -s none --access --allow-other-users --duration $((SECS * 4 + 60)) \
		-o "$T/att" >"$T/att.out" 2>"$T/att.err" &
	local apid=$!
	for _ in $(seq 600); do
		grep -q "attached to pid" "$T/att.err" && break
		sleep 0.1
	done
	att=$(client "$s" "$3")
	[ -n "$att" ] || fails=$((fails + 1))
	kill -TERM $apid 2>/dev/null
	wait $apid
	rc=$?
	dt=$(secs "$t0")
	[ $rc -eq 1 ] && fails=$((fails + 1))
	alive "$s" || fails=$((fails + 1))
	warns=$("$CS" report "$T/att" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(w["kind"] == "race" for w in d["warnings"]))' || echo "error: $(tail -1 "$T/att.err")")
	stop_server
	# Helgrind: the server under valgrind, the same client run, then
	# SIGTERM (both servers exit cleanly on it, valgrind prints its summary).
	hg="-"
	if MC_CONNS=$(valgrind -q bash -c 'ulimit -Hn') start_server "$s" \
		env LD_LIBRARY_PATH="$T/lib" valgrind --tool=helgrind --log-file="$T/hg"; then
		local hrate
		hrate=$(client "$s" "$3")
		stop_server
		sleep 1
		hg="$(grep -c 'Possible data race' "$T/hg") / ${hrate:-client failed}${hrate:+ ops/s}"
	else
		stop_server
		hg="did not start: $(tail -1 "$T/srv.err")"
	fi
	echo "| $s | ${nat:-client failed}${nat:+ ops/s} | ${att:-client failed}${att:+ ops/s} | $(awk -v a="$nat" -v b="$att" 'BEGIN { if (a > 0 && b > 0) printf "%.0f", a / b; else print "-" }') | $fails | $warns | $dt s | $hg |"
}

servers() {
	echo "| server | client native | client under attach --access | cost ratio | failures | race warnings | attach time | Helgrind: races / client |"
	echo "|---|---|---|---|---|---|---|---|"
	local s
	for s in $SERVERS; do
		case $s in
		memcached) server_row memcached 0 0 ;;
		redis) server_row redis 20000 500 ;;
		esac
	done
}

# ---- steered campaigns in the VM ---------------------------------------------

# in_vm PART TIMEOUT DIR GUEST [VM ARGS...]: one VM boot running the guest
# script GUEST (carried), its /out into DIR, its stdout and stderr in
# DIR.out and DIR.err. Past TIMEOUT the guest is killed and /out still
# comes back (vm exit 124; not on ^C, which stops qemu).
in_vm() {
	local part=$1 timeout=$2 dir=$3 guest=$4
	shift 4
	"$CS" vm -t "$timeout" "$@" -C "$guest" -o "$dir" -- "$guest" >"$dir.out" 2>"$dir.err" ||
		echo "$part: the VM ended early: $(tail -1 "$dir.err")"
}


steered() {
	local c carry=() g=$T/steer.sh
	head -c "${ST_KB}K" "$T/text" >"$T/st.txt"
	for c in pigz pbzip2 lbzip2 xz zstd; do
		carry+=(-C "$(command -v $c)")
	done
	carry+=(-C "$SQ")
	{
		echo "#!/bin/sh"
		echo "CS=$CS TXT=$T/st.txt RUNS=$ST_RUNS PROGS='$ST_PROGS'"
		echo "OPTS='$ST_STRATEGY' SQ='$SQ /tmp/sq.db $SQ_THREADS $SQ_ROWS'"
		cat <<'EOF'
up() { cut -d' ' -f1 /proc/uptime; }
# one NAME DECOMPRESS CMD...: native runs, then the campaign in /out/NAME
# (a compressor not in PROGS: nothing)
one() {
	n=$1 dec=$2
	shift 2
	case " $PROGS " in *" $n "*) ;; *) return 0 ;; esac
	for i in 1 2 3; do
		t0=$(up)
		"$@" "$TXT" >/tmp/n.out
		echo "$n native $t0 $(up)"
	done
	$dec </tmp/n.out | cmp -s - "$TXT" && echo "$n roundtrip ok" || echo "$n roundtrip FAILED"
	t0=$(up)
	$CS run $OPTS -n $RUNS --seed 1 --keep-going -o /out/$n \
		--check "$dec <\"\$CONCSCHED_OUT_FILE\" | cmp -s - $TXT" -- "$@" "$TXT" \
		>/dev/null 2>/out/$n.err </dev/null
	echo "$n campaign $? $t0 $(up)"
}
one pigz "/usr/bin/pigz -dc" /usr/bin/pigz -p 2 -c
one pbzip2 "/usr/bin/pbzip2 -dc" /usr/bin/pbzip2 -p2 -c
one lbzip2 "/usr/bin/lbzip2 -dc" /usr/bin/lbzip2 -n 2 -c
one xz "/usr/bin/xz -dc" /usr/bin/xz -T2 -c
one zstd "/usr/bin/zstd -dc" /usr/bin/zstd -T2 -c
# sqlite: the driver checks its own table (exit 1 when it differs), so
# the campaign's oracle is the exit status, and its "round trip" is that
# check on the native runs
case " $PROGS " in *" sqlite "*)
	ok=ok
	for i in 1 2 3; do
		t0=$(up)
		$SQ >/dev/null 2>&1 || ok=FAILED
		echo "sqlite native $t0 $(up)"
	done
	echo "sqlite roundtrip $ok"
	t0=$(up)
	$CS run $OPTS -n $RUNS --seed 1 --keep-going -o /out/sqlite -- $SQ \
		>/dev/null 2>/out/sqlite.err </dev/null
	echo "sqlite campaign $? $t0 $(up)"
esac
EOF
	} >"$g"
	chmod +x "$g"
	# the rows of the compressors the guest finished are printed, the
	# others say so
	in_vm steered "$ST_TIMEOUT" "$T/st" "$g" "${carry[@]}" -C "$T/st.txt"
	echo "Steered in the VM: \`run $ST_STRATEGY -n $ST_RUNS --seed 1 --keep-going --check ROUNDTRIP\` on ${ST_KB} KB of text"
	echo
	echo "| command | native (median of 3) | round trip | campaign: runs / failures / race warnings | steered run: median / max | median / native | campaign time |"
	echo "|---|---:|---|---|---:|---:|---:|"
	for c in $ST_PROGS; do
		python3 "$here/tools/bench/steer_row.py" "$c" "$T/st.out" "$T/st/$c" "$CS"
	done
	# ST_KEEP=DIR: the campaigns' stores and logs are kept there
	[ -z "${ST_KEEP:-}" ] || cp -r "$T/st" "$ST_KEEP"
}

# ---- servers under steered attach in the VM ------------------------------------

# The guest script: for each server of SERVERS, started on loopback with
# the host part's options, the client's rate natively, then under
# `attach -p PID SV_STRATEGY` (from "attached to pid" on), the attach's
# exit status, whether the server still answers. Lines "NAME native
# RATE", "NAME steered RATE", "NAME probes T0 T1", "NAME attach RC T0 T1",
# "NAME alive yes|no" (guest uptime seconds); "NAME start failed".
sv_guest() {
	echo "#!/bin/sh"
	echo "CS=$CS PORT=$PORT SECS=$SECS NAT_N=$SV_NAT_N ATT_N=$SV_ATT_N CL=$SV_CLIENT_LIMIT"
	echo "SERVERS='$SERVERS' OPTS='$SV_STRATEGY'"
	cat <<'EOF'
O=${CONCSCHED_OUT:-/out}
up() { cut -d' ' -f1 /proc/uptime; }
# memcached -u nobody: the guest's /etc/passwd knows only root
grep -q '^nobody:' /etc/passwd ||
	echo 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >>/etc/passwd
grep -q '^nogroup:' /etc/group 2>/dev/null || echo 'nogroup:x:65534:' >>/etc/group
# the client's rate as on the host (no bash here: busybox nc, redis-cli)
client() { # NAME COUNT
	case $1 in
	memcached)
		timeout $CL memcaslap -s 127.0.0.1:$PORT -T 2 -c 16 -t "${SECS}s" 2>/dev/null |
			sed -n 's/.*TPS: \([0-9]*\).*/\1/p' | tail -1 ;;
	redis)
		timeout $CL redis-benchmark -p $PORT -c 16 -t set,get -n "$2" --csv 2>/dev/null |
			awk -F'"' '/^"(SET|GET)"/ { s += $4; n++ }
				END { if (n == 2) printf "%.1f", s / 2 }' ;;
	esac
}
alive() {
	case $1 in
	memcached) printf 'version\r\nquit\r\n' | timeout 5 nc 127.0.0.1 $PORT 2>/dev/null |
		grep -q '^VERSION' ;;
	redis) [ "$(timeout 5 redis-cli -p $PORT ping 2>/dev/null)" = PONG ] ;;
	esac
}
start() { # NAME: sets spid; fails when it does not answer within 60 s
	case $1 in
	memcached) memcached -u nobody -t 2 -c 1024 -l 127.0.0.1 -p $PORT -U 0 \
		2>$O/$1.srv.err & ;;
	redis) redis-server --port $PORT --bind 127.0.0.1 --save '' --appendonly no \
		--io-threads 2 --dir /tmp >$O/$1.srv.err 2>&1 & ;;
	esac
	spid=$!
	i=0
	while [ $i -lt 600 ]; do
		alive $1 && return 0
		kill -0 $spid 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
stop() {
	kill -TERM $spid 2>/dev/null
	wait $spid 2>/dev/null
}
one() {
	n=$1
	start $n || { echo "$n start failed"; stop; return 0; }
	echo "$n native $(client $n $NAT_N)"
	t0=$(up)
	$CS attach -p $spid $OPTS --allow-other-users --duration $((CL * 2)) -o $O/$n \
		>$O/$n.att.out 2>$O/$n.att.err </dev/null &
	apid=$!
	while ! grep -q "attached to pid" $O/$n.att.err && kill -0 $apid 2>/dev/null; do
		sleep 0.1
	done
	echo "$n probes $t0 $(up)"
	echo "$n steered $(client $n $ATT_N)"
	kill -TERM $apid 2>/dev/null
	wait $apid
	echo "$n attach $? $t0 $(up)"
	alive $n && echo "$n alive yes" || echo "$n alive no"
	stop
}
for s in $SERVERS; do
	one $s
done
EOF
}

# One row of the steered servers' table from the guest's lines ($T/sv.out)
# and the attach's store ($T/sv/NAME).
sv_row() { # NAME
	local s=$1 o=$T/sv.out nat att rc t0 t1 p1 fails=0 warns note=""
	if grep -q "^$s start failed" "$o"; then
		echo "| $s | did not start in the VM: $(tail -1 "$T/sv/$s.srv.err" 2>/dev/null) | | | | | |"
		return
	fi
	if ! grep -q "^$s alive " "$o"; then
		echo "| $s | the guest did not finish it | | | | | |"
		return
	fi
	nat=$(awk -v s="$s" '$1 == s && $2 == "native" { print $3 }' "$o")
	att=$(awk -v s="$s" '$1 == s && $2 == "steered" { print $3 }' "$o")
	read -r rc t0 t1 < <(awk -v s="$s" '$1 == s && $2 == "attach" { print $3, $4, $5 }' "$o")
	p1=$(awk -v s="$s" '$1 == s && $2 == "probes" { print $4 }' "$o")
	[ -n "$att" ] || fails=$((fails + 1))
	case $rc in
	0) ;;
	1) fails=$((fails + 1)) note=" (attach exit 1: $(tail -1 "$T/sv/$s.att.err"))" ;;
	*) note=" (attach exit $rc: $(tail -1 "$T/sv/$s.att.err"))" ;;
	esac
	grep -q "^$s alive yes" "$o" || { fails=$((fails + 1)) note="$note (no answer after)"; }
	warns=$("$CS" report "$T/sv/$s" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(w["kind"] == "race" for w in d["warnings"]))' || echo "error: $(tail -1 "$T/sv/$s.att.err")")
	echo "| $s | ${nat:-client failed}${nat:+ ops/s} | ${att:-client failed}${att:+ ops/s} | $(awk -v a="$nat" -v b="$att" 'BEGIN { if (a > 0 && b > 0) printf "%.0fx", a / b; else print "-" }') | $fails$note | $warns | $(awk -v a="$t0" -v b="$t1" -v p="$p1" 'BEGIN { printf "%.1f s (probes in after %.1f s)", b - a, p - a }') |"
}

servers_steered() {
	local c carry=() g=$T/sv.sh
	for c in memcached memcaslap redis-server redis-benchmark redis-cli; do
		carry+=(-C "$(command -v $c)")
	done
	sv_guest >"$g"
	chmod +x "$g"
	# the servers the guest finished get their row, the others say so
	in_vm servers_steered "$SV_TIMEOUT" "$T/sv" "$g" "${carry[@]}"
	echo "Steered attach in the VM: \`attach -p PID $SV_STRATEGY --allow-other-users\` for the client's run; client natively: memcaslap ${SECS} s, redis-benchmark $SV_NAT_N requests of SET and GET; under attach: memcaslap ${SECS} s, redis-benchmark $SV_ATT_N"
	echo
	echo "| server | client native (VM) | client under steered attach | cost ratio | failures | race warnings | attach time |"
	echo "|---|---:|---:|---:|---|---:|---|"
	for c in $SERVERS; do
		sv_row "$c"
	done
	# SV_KEEP=DIR: the attach stores, its and the servers' stderr, the
	# guest's output are kept there
	[ -z "${SV_KEEP:-}" ] || { cp "$T/sv.out" "$T/sv.err" "$T/sv/" && cp -r "$T/sv" "$SV_KEEP"; }
}

for part in $PARTS; do
	$part
done
