#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fetch a sched_ext-capable kernel (Debian sid's linux-image-amd64) into the
# cache without touching the system's apt sources: a private apt
# configuration (own sources, lists and cache; the system's dpkg status).
#
#   vm-kernel.sh fetch   download once (cached), print the kernel directory
#   vm-kernel.sh path    print the cached kernel directory, exit 1 if none
#
# Cache layout: $CONCSCHED_CACHE (default $XDG_CACHE_HOME/concsched or
# ~/.cache/concsched)/kernel/<ver>/{vmlinuz,config,vmlinux}
# and kernel/current -> <ver>.
set -euo pipefail

cache=${CONCSCHED_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/concsched}
kdir=$cache/kernel
log() { printf 'vm-kernel: %s\n' "$*" >&2; }

cached() {
	[ -L "$kdir/current" ] && [ -s "$kdir/current/vmlinuz" ] && [ -s "$kdir/current/config" ]
}

case "${1:-fetch}" in
path)
	cached || { log "no VM kernel cached in $kdir (run: sudo make deps)"; exit 1; }
	readlink -f "$kdir/current"
	exit 0 ;;
fetch) ;;
*) echo "usage: vm-kernel.sh fetch|path" >&2; exit 2 ;;
esac

if cached && [ -z "${CONCSCHED_REFETCH:-}" ]; then
	readlink -f "$kdir/current"
	exit 0
fi

apt_root=$cache/apt
mkdir -p "$apt_root/etc/sources.list.d" "$apt_root/etc/preferences.d" \
	"$apt_root/lists/partial" "$apt_root/cache/archives/partial" "$kdir"
cat >"$apt_root/etc/sources.list" <<'SRC'
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main
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

log "updating private apt lists for sid"
apt-get "${opts[@]}" update -qq

# linux-image-amd64 -> linux-image-<ver>-amd64 (-> linux-binary-<ver>-amd64
# on kernels that split the image; resolve, never hard-code the version).
dep_of() { # package regex -> first matching dependency name
	apt-cache "${opts[@]}" depends "$1" 2>/dev/null |
		awk -v re="$2" '$1 ~ /Depends:/ && $2 ~ re {print $2; exit}'
}
img=$(dep_of linux-image-amd64 '^linux-image-[0-9]')
[ -n "$img" ] || { log "cannot resolve linux-image-amd64 in sid"; exit 1; }
ver=${img#linux-image-}
bin=$(dep_of "$img" '^linux-binary-') || true
base=$(dep_of "$img" '^linux-base-') || true
[ -n "$bin" ] || bin=$img
log "sid kernel: $ver (packages: $bin ${base:-})"

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
	{ log "sid kernel $ver lacks CONFIG_SCHED_CLASS_EXT=y"; exit 1; }

dest=$kdir/$ver
rm -rf "$dest.tmp"; mkdir -p "$dest.tmp"
cp "$vmlinuz" "$dest.tmp/vmlinuz"
cp "$config" "$dest.tmp/config"
echo "$ver" >"$dest.tmp/version"
rm -rf "$dest"; mv "$dest.tmp" "$dest"
ln -sfn "$ver" "$kdir/current"
log "cached $dest"
echo "$dest"
