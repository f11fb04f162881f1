#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/check-layout: the real tree holds the userspace/ layout rule, and a
# fake tree with an upward include, an include cycle, a call cycle and an
# upward call (objects built with cc), a stray file, an unknown folder, a
# kernel -> vm include, a file name two folders hold, a comment naming a
# path that does not exist and a strategy callback called outside
# strategies/ is rejected with one line per problem; --prefixes lists and
# counts the exports off their file's name (or, for a file split out of a
# module, the module's), and the check fails on each of them (lib/xalloc's
# x prefix the one exception).
# timeout: 60
source "$(dirname "$0")/../lib.sh"
plan 38

CL=$ROOT/tools/check-layout
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
lines() { while IFS= read -r l; do diag "$l"; done <"$1"; }

out=$("$CL" --help); ok $? "--help exits 0"
like "$out" "--root" "--help documents --root"

"$CL" --root "$ROOT" --build "$B" >"$T/out" 2>"$T/err"; rc=$?
is $rc 0 "the real tree passes"
lines "$T/err"
grep -Eq "^check-layout: [0-9]+ modules in 11 folders, no cycle, no upward include" "$T/out"
ok $? "the real tree: summary line"

U=$T/userspace
mkdir -p "$U/lib" "$U/coverage"
printf '#pragma once\nint a(void);\n' >"$U/lib/a.h"
printf '#include "lib/a.h"\nint a(void) { return 1; }\n' >"$U/lib/a.c"
printf '#pragma once\n#include "concsched_abi.h"\nint b(void);\n' >"$U/coverage/b.h"
printf '#include "coverage/b.h"\n#include "lib/a.h"\n#include "x.skel.h"\nint b(void) { return a(); }\n' >"$U/coverage/b.c"

out=$("$CL" --root "$T" 2>&1); rc=$?
is $rc 0 "fake tree, coverage -> lib: passes"
like "$out" "^check-layout: no .*/obj/, symbol check skipped" "no build/obj: the symbol check is skipped with a note"
like "$out" "check-layout: 2 modules in 2 folders, no cycle, no upward include" "fake tree: summary line"

# lib/a.h now includes coverage/b.h: an upward include and a cycle.
printf '#pragma once\n#include "coverage/b.h"\nint a(void);\n' >"$U/lib/a.h"
"$CL" --root "$T" >/dev/null 2>"$T/err"; rc=$?
err=$(cat "$T/err")
is $rc 1 "upward include: exit 1"
like "$err" "userspace/lib/a\.h: upward include of coverage/b\.h" "the upward include names the file and the header"
like "$err" "include cycle among coverage/b, lib/a: .*userspace/coverage/b\.c includes lib/a\.h.*userspace/lib/a\.h includes coverage/b\.h" "the cycle names its modules and files"
is "$(wc -l <"$T/err")" 2 "one line per problem"

# Clean includes again, but lib/a.c calls b() from coverage: with objects in
# BUILD/obj/<folder>/ that is an upward call and a call cycle.
printf '#pragma once\nint a(void);\n' >"$U/lib/a.h"
printf '#include "lib/a.h"\nint b(void);\nint a(void) { return b(); }\n' >"$U/lib/a.c"
mkdir -p "$T/inc" "$T/build/obj/lib" "$T/build/obj/coverage"
touch "$T/inc/concsched_abi.h" "$T/inc/x.skel.h"
for m in lib/a coverage/b; do
	${CC:-cc} -c -I"$U" -I"$T/inc" "$U/$m.c" -o "$T/build/obj/$m.o" || diag "cc $m.c failed"
done
"$CL" --root "$T" >/dev/null 2>"$T/err"; rc=$?
err=$(cat "$T/err")
is $rc 1 "upward call: exit 1"
like "$err" "upward call: .*/build/obj/lib/a\.o uses b from coverage/b: lib \(rank 1\) may not reach up to coverage" "the upward call names the object and the symbol"
like "$err" "call cycle among coverage/b, lib/a: " "the call cycle names its modules"
is "$(wc -l <"$T/err")" 2 "one line per problem"
"$CL" --root "$T" --build "$T/nowhere" >/dev/null 2>&1
ok $? "--build elsewhere: no objects, no symbol check"
rm -rf "$T/build"

# Back to a clean tree, then a stray file, an unknown folder, kernel -> vm.
printf '#pragma once\nint a(void);\n' >"$U/lib/a.h"
printf 'int stray;\n' >"$U/stray.c"
mkdir -p "$U/misc" "$U/kernel" "$U/vm"
printf 'int m;\n' >"$U/misc/m.c"
printf '#pragma once\n' >"$U/vm/v.h"
printf '#include "vm/v.h"\n' >"$U/kernel/k.c"
"$CL" --root "$T" >/dev/null 2>"$T/err"; rc=$?
err=$(cat "$T/err")
is $rc 1 "stray file, unknown folder: exit 1"
like "$err" "userspace/stray\.c: file directly in userspace/" "a file directly in userspace/ is reported"
like "$err" "userspace/misc/: folder not in the layout" "an unknown folder is reported"
like "$err" "userspace/kernel/k\.c: upward include of vm/v\.h: kernel and vm have the same rank" "kernel -> vm is reported"
is "$(wc -l <"$T/err")" 3 "exactly those three problems"

# Back to a clean tree, then the same file name in two folders, comments
# naming paths (one missing, the others there, or the kernel's, or a built
# program's stem, or a placeholder) and a strategy callback called directly.
rm -rf "$U/stray.c" "$U/misc" "$U/kernel/k.c"
printf '#pragma once\n' >"$U/coverage/a.h"
mkdir -p "$T/docs" "$T/tests/programs"
touch "$T/docs/real.md" "$T/tests/programs/fig2.c"
printf '/* See docs/real.md and lib/a.c; Linux'"'"'s tools/sched_ext.\n * docs/gone.md */\nint x;\n' >"$U/lib/x.c"
printf '# tests/programs/fig2 (built), tests/programs/lib/NAME.c\n# tools/nothing-here\n' >"$T/Makefile"
printf 'struct s;\nvoid f(struct s *s) { s->ops->point(s); }\n' >"$U/coverage/c.c"
"$CL" --root "$T" >/dev/null 2>"$T/err"; rc=$?
err=$(cat "$T/err")
is $rc 1 "duplicate name, missing paths: exit 1"
like "$err" "a\.h: the same file name in userspace/coverage/a\.h, userspace/lib/a\.h" "a file name two folders hold is reported with both paths"
like "$err" "userspace/lib/x\.c:2: a comment names docs/gone\.md, which does not exist" "a C comment's missing path is reported at its line"
like "$err" "Makefile:2: a comment names tools/nothing-here, which does not exist" "a Makefile comment's missing path is reported"
like "$err" "userspace/coverage/c\.c:2: a strategy's ops called directly" "a strategy callback called outside strategies/ is reported"
is "$(wc -l <"$T/err")" 4 "exactly those four problems"

# --prefixes: an object's exports off its file's name, listed and counted.
P=$T/prefixes
mkdir -p "$P/userspace/lib" "$P/build/obj/lib"
printf 'int p_one(void) { return 1; }\nint other(void) { return 2; }\n' >"$P/userspace/lib/p.c"
${CC:-cc} -c "$P/userspace/lib/p.c" -o "$P/build/obj/lib/p.o" || diag "cc p.c failed"
# A file split out of p.c (p_q.c, p_r.c) may carry p_, but not another
# file's longer stem (p_r.c exporting p_q_z leads to p_q.c); lone_w.c has
# no lone.c, so lone_a is off.
printf 'int p_x(void) { return 1; }\nint p_q_y(void) { return 2; }\nint zz(void) { return 3; }\n' >"$P/userspace/lib/p_q.c"
printf 'int p_r_a(void) { return 1; }\nint p_q_z(void) { return 2; }\n' >"$P/userspace/lib/p_r.c"
printf 'int lone_w_a(void) { return 1; }\nint lone_a(void) { return 2; }\n' >"$P/userspace/lib/lone_w.c"
for f in p_q p_r lone_w; do
	${CC:-cc} -c "$P/userspace/lib/$f.c" -o "$P/build/obj/lib/$f.o" || diag "cc $f.c failed"
done
out=$("$CL" --root "$P" --prefixes); rc=$?
is $rc 0 "--prefixes: exit 0"
like "$out" "^lib/p: 1 of 2 exports off the prefix p_: other$" "--prefixes names the export off its file's prefix"
like "$out" "^lib/p_q: 1 of 3 exports off the prefix p_q_ or p_: zz$" "a file split out of p.c may carry p_"
like "$out" "^lib/p_r: 1 of 2 exports off the prefix p_r_ or p_: p_q_z$" "but not another file's longer stem"
like "$out" "^lib/lone_w: 1 of 2 exports off the prefix lone_w_: lone_a$" "no lone.c: lone_ is not a prefix of lone_w.c"
like "$out" "^check-layout: 4 of 9 exported symbols in 4 objects off their file's prefix$" "--prefixes counts them"

# The check itself fails on each export off its prefix, one line each;
# lib/xalloc.c may export x* (xcalloc), nothing else.
printf 'int xone(void) { return 1; }\nint yone(void) { return 2; }\n' >"$P/userspace/lib/xalloc.c"
${CC:-cc} -c "$P/userspace/lib/xalloc.c" -o "$P/build/obj/lib/xalloc.o" || diag "cc xalloc.c failed"
out=$("$CL" --root "$P" --prefixes)
like "$out" "^lib/xalloc: 1 of 2 exports off the prefix x: yone$" "lib/xalloc.c: x* is its prefix"
"$CL" --root "$P" >/dev/null 2>"$T/err"; rc=$?
err=$(cat "$T/err")
is $rc 1 "exports off their file's prefix: exit 1"
like "$err" "build/obj/lib/p\.o exports other, off its file's prefix p_ " "the check names the object and the export"
like "$err" "build/obj/lib/xalloc\.o exports yone, off its file's prefix x " "lib/xalloc.c exporting a name without x"
is "$(wc -l <"$T/err")" 5 "one line per export off its prefix"
done_testing
