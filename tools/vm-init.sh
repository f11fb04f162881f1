#!/.concsched/busybox sh
# SPDX-License-Identifier: MIT
# /init of the concsched VM (userspace/vm/vm.c puts it in the initramfs with a
# static busybox; docs/vm.md). It mounts the kernel filesystems, runs the
# command from /.concsched/run/cmd.sh with its stdout and stderr on the
# virtio-serial ports cs.stdout/cs.stderr, enforces the time limit itself
# (so /out still comes back after a timeout), reports on cs.ctl, sends /out
# as a tar on cs.out, and powers off. Protocol on cs.ctl, one line each:
#   boot UPTIME | notfound | start UPTIME | exit STATUS UPTIME |
#   timeout UPTIME | outdone TAR_STATUS | halt
# Anything that goes wrong here is printed on the console (the kernel log
# the host keeps) and ends in poweroff: the host notices the missing lines.
bb=/.concsched/busybox
run=/.concsched/run

$bb mount -t proc proc /proc
$bb mount -t sysfs sysfs /sys
$bb mount -t devtmpfs devtmpfs /dev
$bb mkdir -p /bin /sbin /usr/bin /usr/sbin
# Applets as /bin/sh, /bin/sleep...; files carried from the host win
# (symlink() does not replace them).
$bb --install -s 2>/dev/null
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
exec </dev/console >/dev/console 2>&1

mkdir -p /dev/pts /dev/shm /tmp /run /root /sys/fs/bpf /out
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
# The initramfs root is already a tmpfs; /tmp stays on it so that files
# carried from the host's /tmp remain visible.
chmod 1777 /tmp
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
mount -t bpf bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
ip link set lo up 2>/dev/null
hostname concsched-vm

uptime_s() { read -r u _ </proc/uptime; echo "$u"; }
halt_now() { echo halt >&3; poweroff -f; sleep 10; }

# virtio-serial ports appear asynchronously (the host announces them on the
# control queue): wait until all four are named, and cs.stream when the
# host asked for it (CS_STREAM in env.sh).
. $run/env.sh
port() {
	for p in /sys/class/virtio-ports/vport*; do
		[ "$(cat "$p/name" 2>/dev/null)" = "$1" ] && { echo "/dev/${p##*/}"; return 0; }
	done
	return 1
}
i=0
while :; do
	ctl=$(port cs.ctl) && out=$(port cs.stdout) && err=$(port cs.stderr) &&
		tarp=$(port cs.out) && [ -c "$ctl" ] && [ -c "$out" ] && [ -c "$err" ] &&
		[ -c "$tarp" ] &&
		{ [ "$CS_STREAM" != 1 ] || { stream=$(port cs.stream) && [ -c "$stream" ]; }; } &&
		break
	i=$((i + 1))
	if [ $i -gt 600 ]; then
		echo "concsched-vm: virtio-serial ports cs.* never appeared"
		poweroff -f
	fi
	usleep 50000
done
exec 3>"$ctl"
echo "boot $(uptime_s)" >&3

# The campaign streams its committed runs there (userspace/results/stream.h).
[ "$CS_STREAM" = 1 ] && export CONCSCHED_STREAM="$stream"
cd "$CS_CWD" 2>/dev/null || cd /
if ! command -v "$CS_ARGV0" >/dev/null 2>&1; then
	echo "concsched-vm: $CS_ARGV0: command not found in the guest"
	echo notfound >&3
	halt_now
fi

echo "start $(uptime_s)" >&3
# setsid: the command leads its own process group, so the watchdog can kill
# everything it started.
setsid sh $run/cmd.sh </dev/null >"$out" 2>"$err" &
pid=$!
wd=
if [ "$CS_TIMEOUT" -gt 0 ]; then
	(sleep "$CS_TIMEOUT"; : >/run/.timed-out; kill -KILL -"$pid" 2>/dev/null) &
	wd=$!
fi
wait "$pid"
rc=$?
end=$(uptime_s)
[ -n "$wd" ] && kill "$wd" 2>/dev/null
# Stragglers the command left behind would keep writing to the ports.
kill -KILL -"$pid" 2>/dev/null
if [ -e /run/.timed-out ]; then
	echo "timeout $end" >&3
else
	echo "exit $rc $end" >&3
fi

if [ "$CS_OUT" = 1 ]; then
	tar -c -f "$tarp" -C /out .
	echo "outdone $?" >&3
fi
halt_now
