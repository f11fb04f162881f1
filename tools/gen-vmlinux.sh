#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Generate vmlinux.h: from the running kernel's BTF when it has sched_ext,
# otherwise from the BTF inside the cached VM kernel (sid's), extracted by
# vm-kernel.sh vmlinux.
#   gen-vmlinux.sh OUT.h
set -euo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
bpftool=${BPFTOOL:-bpftool}

if [ -d /sys/kernel/sched_ext ] && [ -r /sys/kernel/btf/vmlinux ] && [ -z "${CONCSCHED_VMLINUX_FROM_VM:-}" ]; then
	src=/sys/kernel/btf/vmlinux
else
	src=$("$here/vm-kernel.sh" vmlinux sid) || {
		echo "gen-vmlinux: running kernel has no sched_ext and no VM kernel is cached (run: sudo make deps)" >&2
		exit 1
	}
fi
"$bpftool" btf dump file "$src" format c >"$out.tmp"
mv "$out.tmp" "$out"
