#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fetch a sched_ext-capable kernel into the cache without touching the
# system's apt sources: a private apt configuration (own sources, lists and
# cache; the system's dpkg status). Two kernels (docs/vm.md "Kernels"):
#   sid               Debian sid's linux-image-amd64 (the default VM kernel)
#   trixie-backports  Debian 13's backported kernel, what a Debian 13 host
#                     installs to get sched_ext (`make test-kernels`)
#
#   vm-kernel.sh fetch [NAME]  download once (cached), print its directory
#   vm-kernel.sh path [NAME]   print the cached directory, exit 1 if none
#   vm-kernel.sh vmlinux [NAME]  extract (once) and print the uncompressed
#                              vmlinux: it boots through PVH (docs/vm.md) and
#                              its BTF makes build/vmlinux.h
#
# NAME defaults to $CONCSCHED_VM_KERNEL, else sid. Cache layout:
# $CONCSCHED_CACHE (default $XDG_CACHE_HOME/concsched or
# ~/.cache/concsched)/kernel/<ver>/{vmlinuz,config,vmlinux}, kernel/NAME ->
# <ver>, and kernel/current -> sid's <ver> (what concsched boots unless
# CONCSCHED_VM_KERNEL names another).
set -euo pipefail

cache=${CONCSCHED_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/concsched}
kdir=$cache/kernel
log() { printf 'vm-kernel: %s\n' "$*" >&2; }

name=${2:-${CONCSCHED_VM_KERNEL:-sid}}
[ "$name" = current ] && name=sid
case "$name" in
sid) suite=sid apt_root=$cache/apt ;;
trixie-backports) suite=trixie-backports apt_root=$cache/apt-$name ;;
*) echo "vm-kernel: unknown kernel '$name' (sid or trixie-backports)" >&2; exit 2 ;;
esac
# sid's kernel was cached as kernel/current alone before there were two.
link=$kdir/$name
[ "$name" = sid ] && [ ! -L "$link" ] && [ -L "$kdir/current" ] && ln -sfn "$(readlink "$kdir/current")" "$link"

cached() {
	[ -L "$link" ] && [ -s "$link/vmlinuz" ] && [ -s "$link/config" ]
}

# Debian's bzImage is zstd (KERNEL.md): the payload starts at the first
# zstd magic; zstd complains about the trailing data after the frame.
extract_vmlinux() { # DIR: DIR/vmlinux from DIR/vmlinuz, unless there
	local d=$1 off
	[ -s "$d/vmlinux" ] && return 0
	off=$(LC_ALL=C grep -obUaP -m1 '\x28\xb5\x2f\xfd' "$d/vmlinuz" | head -1 | cut -d: -f1 || true)
	[ -n "$off" ] || { log "no zstd payload in $d/vmlinuz"; return 1; }
	tail -c +$((off + 1)) "$d/vmlinuz" | zstd -dcq >"$d/vmlinux.tmp" 2>/dev/null || true
	# No grep -q: under pipefail an early grep exit SIGPIPEs readelf.
	readelf -S "$d/vmlinux.tmp" 2>/dev/null | grep '\.BTF' >/dev/null ||
		{ log "extracted kernel has no .BTF section"; rm -f "$d/vmlinux.tmp"; return 1; }
	mv "$d/vmlinux.tmp" "$d/vmlinux"
}

case "${1:-fetch}" in
path)
	cached || { log "no $name VM kernel cached in $kdir (run: sudo make deps)"; exit 1; }
	readlink -f "$link"
	exit 0 ;;
vmlinux)
	cached || { log "no $name VM kernel cached in $kdir (run: sudo make deps)"; exit 1; }
	extract_vmlinux "$(readlink -f "$link")"
	echo "$(readlink -f "$link")/vmlinux"
	exit 0 ;;
fetch) ;;
*) echo "usage: vm-kernel.sh fetch|path|vmlinux [sid|trixie-backports]" >&2; exit 2 ;;
esac

if cached && [ -z "${CONCSCHED_REFETCH:-}" ]; then
	extract_vmlinux "$(readlink -f "$link")"
	readlink -f "$link"
	exit 0
fi

mkdir -p "$apt_root/etc/sources.list.d" "$apt_root/etc/preferences.d" \
	"$apt_root/lists/partial" "$apt_root/cache/archives/partial" "$kdir"
cat >"$apt_root/etc/sources.list" <<SRC
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main
SRC
opts=(-o "Dir::Etc=$apt_root/etc"
      -o "Dir::Etc::sourcelist=$apt_root/etc/sources.list"
      -o "Dir::Etc::sourceparts=$apt_root/etc/sources.list.d"
      -o "Dir::Etc::preferencesparts=$apt_root/etc/preferences.d"
      -o "Dir::State::Lists=$apt_root/lists"
      -o "Dir::Cache=$apt_root/cache"
      -o "Dir::State::status=/var/lib/dpkg/status"
      -o "APT::Architecture=amd64"
      -o "APT::Sandbox::User=root"
      -o "Debug::NoLocking=1")

log "updating private apt lists for $suite"
apt-get "${opts[@]}" update -qq

# linux-image-amd64 -> linux-image-<ver>-amd64 (-> linux-binary-<ver>-amd64
# on kernels that split the image; resolve, never hard-code the version).
dep_of() { # package regex -> first matching dependency name
	apt-cache "${opts[@]}" depends "$1" 2>/dev/null |
		awk -v re="$2" '$1 ~ /Depends:/ && $2 ~ re {print $2; exit}'
}
img=$(dep_of linux-image-amd64 '^linux-image-[0-9]')
[ -n "$img" ] || { log "cannot resolve linux-image-amd64 in $suite"; exit 1; }
ver=${img#linux-image-}
bin=$(dep_of "$img" '^linux-binary-') || true
base=$(dep_of "$img" '^linux-base-') || true
[ -n "$bin" ] || bin=$img
log "$suite kernel: $ver (packages: $bin ${base:-})"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
( cd "$work" && apt-get "${opts[@]}" download -qq "$bin" ${base:+"$base"} )
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/x"; done

vmlinuz=$(find "$work/x" -name vmlinuz -path "*$ver*" | head -1)
[ -n "$vmlinuz" ] || vmlinuz=$(find "$work/x" -name "vmlinuz-$ver" | head -1)
config=$(find "$work/x" \( -name "config-$ver" -o -name config \) -path "*$ver*" | head -1)
[ -n "$vmlinuz" ] || { log "no vmlinuz in $bin"; exit 1; }
[ -n "$config" ] || { log "no kernel config in $bin ${base:-}"; exit 1; }
grep -q '^CONFIG_SCHED_CLASS_EXT=y' "$config" ||
	{ log "$suite kernel $ver lacks CONFIG_SCHED_CLASS_EXT=y"; exit 1; }

dest=$kdir/$ver
rm -rf "$dest.tmp"; mkdir -p "$dest.tmp"
cp "$vmlinuz" "$dest.tmp/vmlinuz"
cp "$config" "$dest.tmp/config"
echo "$ver" >"$dest.tmp/version"
extract_vmlinux "$dest.tmp"
rm -rf "$dest"; mv "$dest.tmp" "$dest"
ln -sfn "$ver" "$link"
[ "$name" = sid ] && ln -sfn "$ver" "$kdir/current"
log "cached $dest"
echo "$dest"
