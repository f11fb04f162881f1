#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Generate vmlinux.h: from the running kernel's BTF when it has sched_ext,
# otherwise from the BTF inside the cached VM kernel image (KERNEL.md:
# Debian's bzImage is zstd; the payload starts at the first zstd magic).
#   gen-vmlinux.sh OUT.h
set -euo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
bpftool=${BPFTOOL:-bpftool}

if [ -d /sys/kernel/sched_ext ] && [ -r /sys/kernel/btf/vmlinux ] && [ -z "${CONCSCHED_VMLINUX_FROM_VM:-}" ]; then
	src=/sys/kernel/btf/vmlinux
else
	kdir=$("$here/vm-kernel.sh" path) || {
		echo "gen-vmlinux: running kernel has no sched_ext and no VM kernel is cached (run: sudo make deps)" >&2
		exit 1
	}
	src=$kdir/vmlinux
	if [ ! -s "$src" ]; then
		off=$(LC_ALL=C grep -obUaP -m1 '\x28\xb5\x2f\xfd' "$kdir/vmlinuz" | head -1 | cut -d: -f1 || true)
		[ -n "$off" ] || { echo "gen-vmlinux: no zstd payload in $kdir/vmlinuz" >&2; exit 1; }
		# zstd complains about the trailing data after the frame: harmless.
		tail -c +$((off + 1)) "$kdir/vmlinuz" | zstd -dcq >"$src.tmp" 2>/dev/null || true
		# No grep -q: under pipefail an early grep exit SIGPIPEs readelf.
		readelf -S "$src.tmp" 2>/dev/null | grep '\.BTF' >/dev/null ||
			{ echo "gen-vmlinux: extracted kernel has no .BTF section" >&2; rm -f "$src.tmp"; exit 1; }
		mv "$src.tmp" "$src"
	fi
fi
"$bpftool" btf dump file "$src" format c >"$out.tmp"
mv "$out.tmp" "$out"
