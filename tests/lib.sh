# SPDX-License-Identifier: MIT
# TAP helpers for shell tests: source it, call plan N, then ok/is/skip.
# ROOT is the repository, B the build directory, CS the concsched binary.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B=${BUILD:-$ROOT/build}
case "$B" in /*) ;; *) B=$ROOT/$B ;; esac
CS=$B/concsched
PROGS=$B/tests/programs
_tap_n=0
_tap_fail=0

plan() { echo "TAP version 13"; echo "1..$1"; }
diag() { printf '%s\n' "$@" | sed 's/^/# /' >&2; }
ok() { # ok COND-EXIT-STATUS DESCRIPTION
	_tap_n=$((_tap_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $_tap_n - $2"
	else echo "not ok $_tap_n - $2"; _tap_fail=$((_tap_fail + 1)); fi
}
is() { # is GOT WANT DESCRIPTION
	_tap_n=$((_tap_n + 1))
	if [ "$1" = "$2" ]; then echo "ok $_tap_n - $3"
	else echo "not ok $_tap_n - $3"; diag "got '$1', want '$2'"; _tap_fail=$((_tap_fail + 1)); fi
}
like() { # like GOT REGEX DESCRIPTION
	_tap_n=$((_tap_n + 1))
	if printf '%s' "$1" | grep -Eq -- "$2"; then echo "ok $_tap_n - $3"
	else echo "not ok $_tap_n - $3"; diag "got '$1', want match /$2/"; _tap_fail=$((_tap_fail + 1)); fi
}
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $2 # SKIP $1"; }
skip_all() { echo "TAP version 13"; echo "1..0 # SKIP $1"; exit 0; }
done_testing() { exit $((_tap_fail > 0)); }

# concsched as the commands it prints name it (cs_self_command) when run
# from the current directory as root without SUDO_USER: "concsched" when
# PATH finds this binary, else its path, relative to the cwd under it.
cs_printed() {
	local self on cwd
	self=$(realpath "$CS")
	cwd=$(pwd -P)
	on=$(command -v concsched 2>/dev/null)
	if [ -n "$on" ] && [ "$(realpath "$on")" = "$self" ]; then echo concsched; return; fi
	case "${self#"$cwd"/}" in
	"$self") echo "$self" ;;
	*/*) echo "${self#"$cwd"/}" ;;
	*) echo "./${self#"$cwd"/}" ;;
	esac
}

# Render the page HTML to the PNG in headless Chromium (1200 x 2600 pixels);
# tests/png_pixels.py counts what it shows.
screenshot() { # screenshot HTML PNG
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,2600 \
		--screenshot="$2" "file://$1" >/dev/null 2>&1
}

need_root() { [ "$(id -u)" = 0 ] || skip_all "needs root"; }
need_vm() {
	need_root
	"$ROOT/tools/vm-kernel.sh" path >/dev/null 2>&1 || skip_all "no VM kernel cached (run: sudo make deps)"
	command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 missing (run: sudo make deps)"
}
