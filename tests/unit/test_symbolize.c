// SPDX-License-Identifier: MIT
/*
 * Symbolizer on live fixture processes: build/tests/programs/symfixture and
 * its -nopie, -static, -stripped variants print the runtime addresses and
 * source line ranges of their own functions and variables; every address
 * must resolve to its own name, symfixture.c and a line in range, and the
 * (object, offset) site must resolve the same way with no process.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel/symbolize.h"
#include "tap.h"
#include "lib/self.h"

#define NFIX 4

struct fixture_sym {
	char name[32];
	uint64_t addr;
	int first, last;
};

struct fixture {
	pid_t pid;
	int in_fd;
	struct fixture_sym syms[4];
	int nsyms;
};

static int fixture_start(const char *path, struct fixture *fx)
{
	int in[2], out[2];
	char line[256];
	FILE *f;

	memset(fx, 0, sizeof(*fx));
	if (pipe(in) || pipe(out))
		return -errno;
	fx->pid = fork();
	if (fx->pid < 0)
		return -errno;
	if (fx->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(path, path, "--addrs", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	fx->in_fd = in[1];
	f = fdopen(out[0], "r");
	while (fgets(line, sizeof(line), f) && strncmp(line, "end", 3) && fx->nsyms < 4) {
		struct fixture_sym *s = &fx->syms[fx->nsyms];
		unsigned long long a;

		if (sscanf(line, "%31s %llx %d %d", s->name, &a, &s->first, &s->last) == 4) {
			s->addr = a;
			fx->nsyms++;
		}
	}
	fclose(f);
	return fx->nsyms == 4 ? 0 : -EIO;
}

static void fixture_stop(struct fixture *fx)
{
	int st;

	close(fx->in_fd);
	waitpid(fx->pid, &st, 0);
}

static const char *base(const char *p)
{
	const char *b = p ? strrchr(p, '/') : NULL;

	return b ? b + 1 : p;
}

/* 12 checks per variant. alpha_off: offset of sym_alpha in the plain PIE
 * build, which strip must not move. */
static void check_variant(const char *dir, const char *variant, uint64_t *alpha_off)
{
	bool stripped = strstr(variant, "stripped") != NULL;
	char path[PATH_MAX + 64], buf[256];
	struct fixture fx;
	struct symbolizer *sz;
	struct sym_site site, off_site;
	int i, ok_lines = 1, ok_names = 1;

	snprintf(path, sizeof(path), "%s/%s", dir, variant);
	if (fixture_start(path, &fx)) {
		for (i = 0; i < 12; i++)
			tap_ok(0, "%s: fixture starts (%s)", variant, path);
		return;
	}
	sz = symbolize_new(fx.pid);
	tap_ok(sz != NULL, "%s: symbolizer reads maps", variant);
	if (!sz) {
		fixture_stop(&fx);
		for (i = 0; i < 11; i++)
			tap_ok(0, "%s: (no symbolizer)", variant);
		return;
	}
	/* Functions: own name at +0, symfixture.c, line within the function. */
	for (i = 0; i < 2; i++) {
		struct fixture_sym *fs = &fx.syms[i];

		if (symbolize_resolve(sz, fs->addr + 4, &site)) {
			ok_names = ok_lines = 0;
			continue;
		}
		if (stripped) {
			ok_names &= site.symbol == NULL;
			ok_lines &= site.line == 0;
			continue;
		}
		ok_names &= site.symbol && !strcmp(site.symbol, fs->name) && site.sym_offset == 4 &&
			    site.is_func;
		ok_lines &= site.file && !strcmp(base(site.file), "symfixture.c") &&
			    site.line >= fs->first && site.line <= fs->last;
		if (!ok_lines)
			tap_diag("%s: %s -> %s:%d, want %d..%d", variant, fs->name, site.file,
				 site.line, fs->first, fs->last);
	}
	tap_ok(ok_names, "%s: function addresses resolve to their own names%s", variant,
	       stripped ? " (none: stripped)" : "");
	tap_ok(ok_lines, "%s: file:line is symfixture.c within the function%s", variant,
	       stripped ? " (none: stripped)" : "");

	/* Variables: .data and .bss (&sym_table[10] = sym_table+80). */
	symbolize_resolve(sz, fx.syms[2].addr, &site);
	tap_ok(stripped ? !site.symbol && site.object
			: site.symbol && !strcmp(site.symbol, "sym_counter") && !site.is_func,
	       "%s: .data variable resolves (%s)", variant, site.symbol);
	symbolize_resolve(sz, fx.syms[3].addr, &site);
	tap_ok(stripped ? !site.symbol && site.object
			: site.symbol && !strcmp(site.symbol, "sym_table") && site.sym_offset == 80,
	       "%s: .bss variable resolves with offset (%s+%" PRIu64 ")", variant, site.symbol,
	       site.sym_offset);
	{ /* A stored .bss site (object, made-up file offset) resolves back. */
		struct sym_site back = { 0 };
		int rc = site.object ? symbolize_resolve_offset(site.object, site.offset, &back)
				     : -1;

		tap_ok(rc == 0 && back.vaddr == site.vaddr &&
			       (stripped || (back.symbol && !strcmp(back.symbol, "sym_table"))),
		       "%s: .bss (object, offset) resolves back to the variable (%s)", variant,
		       back.symbol ? back.symbol : "no symbol");
	}

	/* The site key: object is the fixture, offset round-trips. */
	symbolize_site(sz, fx.syms[0].addr, &site);
	tap_is_str(base(site.object), variant, "%s: site object is the executable", variant);
	tap_ok(symbolize_runtime_addr(sz, site.object, site.offset) == fx.syms[0].addr,
	       "%s: (object, offset) maps back to the runtime address", variant);
	if (!strcmp(variant, "symfixture"))
		*alpha_off = site.offset;
	if (stripped)
		tap_ok(site.offset == *alpha_off,
		       "%s: stripping keeps the offset (0x%" PRIx64 " == 0x%" PRIx64 ")", variant,
		       site.offset, *alpha_off);
	else {
		uint64_t lookup_off = 0;
		int err = symbolize_lookup_function(path, "sym_alpha", &lookup_off, NULL);

		tap_ok(!err && lookup_off == site.offset,
		       "%s: symbol-table lookup gives the same offset (0x%" PRIx64 ")", variant,
		       lookup_off);
	}

	/* No process: (object, offset) -> same symbol and line. */
	tap_ok(symbolize_resolve_offset(site.object, site.offset + 4, &off_site) == 0 &&
		       (stripped ? !off_site.symbol
				 : off_site.symbol && !strcmp(off_site.symbol, "sym_alpha") &&
					   off_site.line >= fx.syms[0].first &&
					   off_site.line <= fx.syms[0].last),
	       "%s: offline resolution of the site agrees", variant);

	symbolize_site_format(&off_site, buf, sizeof(buf));
	if (stripped) {
		char want[64];

		snprintf(want, sizeof(want), "%s+0x%" PRIx64, variant, site.offset + 4);
		tap_is_str(buf, want, "%s: format without symbols is object+offset", variant);
	} else {
		tap_ok(!strncmp(buf, "sym_alpha+0x4 (symfixture.c:", 28), "%s: format '%s'",
		       variant, buf);
	}

	/* After exit, addresses seen while it lived still resolve. */
	fixture_stop(&fx);
	tap_ok(symbolize_refresh(sz) == -ESRCH, "%s: refresh after exit reports -ESRCH", variant);
	tap_ok(symbolize_resolve(sz, fx.syms[1].addr, &site) == 0 && site.object &&
		       (stripped || (site.symbol && !strcmp(site.symbol, "sym_beta"))),
	       "%s: mappings are kept after the process exits", variant);
	symbolize_free(sz);
}

/* The test process itself: libc (a shared object without .symtab). */
static void check_self_libc(void)
{
	struct symbolizer *sz = symbolize_new(0);
	struct sym_site site;
	uint64_t off = 0;
	const char *libc;
	char buf[256];

	symbolize_resolve(sz, (uintptr_t)&pthread_mutex_lock, &site);
	tap_ok(site.object && !strncmp(base(site.object), "libc.so", 7),
	       "self: pthread_mutex_lock is in libc (%s)", site.object);
	tap_is_str(site.symbol, "pthread_mutex_lock",
		   "self: libc symbol (.dynsym, or .symtab of libc6-dbg)");
	libc = symbolize_find_object(sz, "libc.so");
	if (libc)
		symbolize_lookup_function(libc, "pthread_mutex_lock", &off, NULL);
	tap_ok(off && off == site.offset,
	       "self: symbolize_lookup_function(libc) = resolved offset 0x%" PRIx64, off);
	symbolize_resolve(sz, (uintptr_t)&check_self_libc + 1, &site);
	symbolize_site_format(&site, buf, sizeof(buf));
	tap_ok(site.symbol && !strcmp(site.symbol, "check_self_libc") && site.file &&
		       !strcmp(base(site.file), "test_symbolize.c"),
	       "self: own static function '%s'", buf);
	tap_ok(symbolize_resolve(sz, 16, &site) == -ENOENT && !site.object,
	       "self: unmapped address does not resolve");
	symbolize_site_format(&site, buf, sizeof(buf));
	tap_is_str(buf, "0x10", "self: unmapped address formats as hex");
	symbolize_free(sz);
}

/* Where separate debug files are looked for (gdb's order). 6 checks. */
static void check_debug_paths(void)
{
	static const uint8_t id[] = { 0xab, 0xcd, 0xef, 0x01 };
	char p[4][PATH_MAX];
	int n;

	n = symbolize_debug_file_paths("/usr/bin/pigz", id, sizeof(id), "pigz.debug", "/R", p, 4);
	tap_ok(n == 4, "debug paths: build ID and 3 debuglink places (%d)", n);
	tap_is_str(p[0], "/R/.build-id/ab/cdef01.debug", "debug paths: build-id path first");
	tap_ok(n == 4 && !strcmp(p[1], "/usr/bin/pigz.debug") &&
		       !strcmp(p[2], "/usr/bin/.debug/pigz.debug") &&
		       !strcmp(p[3], "/R/usr/bin/pigz.debug"),
	       "debug paths: next to the object, in .debug/, under the root");
	n = symbolize_debug_file_paths("/a/x", NULL, 0, "x.dbg", "/usr/lib/debug", p, 4);
	tap_ok(n == 3 && !strcmp(p[0], "/a/x.dbg") && !strcmp(p[2], "/usr/lib/debug/a/x.dbg"),
	       "debug paths: no build ID, debuglink only (%d)", n);
	n = symbolize_debug_file_paths("/a/x", id, 1, NULL, "/R", p, 4);
	tap_ok(n == 0, "debug paths: a 1-byte build ID and no debuglink give none (%d)", n);
	n = symbolize_debug_file_paths("/a/x", id, sizeof(id), "../evil", "/R", p, 2);
	tap_ok(n == 1, "debug paths: a debuglink with a '/' is ignored (%d)", n);
}

/* SCRIPT's exit status, run by sh -c with $1 = FIXTURE, $2 = T. */
static int sh(const char *script, const char *fixture, const char *t)
{
	char cmd[4 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "set -e; set -- '%s' '%s'; %s", fixture, t, script);
	return system(cmd);
}

/* Does OBJECT's sym_alpha (at alpha_off) resolve to its name and line? */
static bool resolves_alpha(const char *object, uint64_t alpha_off)
{
	struct sym_site site;

	symbolize_cache_flush();
	return symbolize_resolve_offset(object, alpha_off + 4, &site) == 0 && site.symbol &&
	       !strcmp(site.symbol, "sym_alpha") && site.file &&
	       !strcmp(base(site.file), "symfixture.c") && site.line > 0;
}

/* Stripped copies of symfixture with a separate debug file: by build ID
 * under $CONCSCHED_DEBUG_ROOT, by .gnu_debuglink in .debug/ (build IDs
 * equal), by debuglink without build IDs (CRC), and a debug file whose
 * CRC is wrong, which must not be used. 7 checks. */
static void check_debug_files(const char *dir, uint64_t alpha_off)
{
	char t[] = "/tmp/cs-symdebug-XXXXXX", fixture[PATH_MAX + 16], obj[PATH_MAX + 32];
	uint64_t vaddr = 0;
	struct sym_site site;
	int rc;

	snprintf(fixture, sizeof(fixture), "%s/symfixture", dir);
	if (!mkdtemp(t)) {
		tap_ok(0, "debug files: mkdtemp");
		return;
	}
	rc = sh("id=$(readelf -n \"$1\" | sed -n 's/.*Build ID: //p');"
		"mkdir -p \"$2/root/.build-id/${id%${id#??}}\" \"$2/.debug\" \"$2/empty\";"
		"objcopy --only-keep-debug \"$1\" "
		"\"$2/root/.build-id/${id%${id#??}}/${id#??}.debug\";"
		"strip --strip-all \"$1\" -o \"$2/by-id\";"
		"objcopy --only-keep-debug \"$1\" \"$2/.debug/linked.debug\";"
		"strip --strip-debug \"$1\" -o \"$2/linked\";"
		"objcopy --add-gnu-debuglink=\"$2/.debug/linked.debug\" \"$2/linked\";"
		"objcopy --remove-section=.note.gnu.build-id \"$1\" \"$2/nobid\";"
		"objcopy --only-keep-debug \"$2/nobid\" \"$2/nobid.debug\" 2>/dev/null;"
		"strip --strip-all \"$2/nobid\";"
		"objcopy --add-gnu-debuglink=\"$2/nobid.debug\" \"$2/nobid\";"
		"cp \"$2/nobid.debug\" \"$2/badcrc.debug\";"
		"objcopy --remove-section=.gnu_debuglink \"$2/nobid\" \"$2/badcrc\";"
		"objcopy --add-gnu-debuglink=\"$2/badcrc.debug\" \"$2/badcrc\";"
		"printf x >>\"$2/badcrc.debug\"",
		fixture, t);
	tap_ok(rc == 0, "debug files: stripped copies and debug files made (objcopy, strip)");
	setenv("CONCSCHED_DEBUG_ROOT", t, 1);
	snprintf(obj, sizeof(obj), "%s/by-id", t);
	tap_ok(!resolves_alpha(obj, alpha_off), "debug files: a root without the build ID: none");
	snprintf(obj, sizeof(obj), "%s/root", t);
	setenv("CONCSCHED_DEBUG_ROOT", obj, 1);
	snprintf(obj, sizeof(obj), "%s/by-id", t);
	tap_ok(resolves_alpha(obj, alpha_off),
	       "debug files: --strip-all, found by build ID under $CONCSCHED_DEBUG_ROOT");
	tap_ok(symbolize_lookup_variable(obj, "sym_counter", &vaddr, NULL) == 0 && vaddr &&
		       symbolize_resolve_vaddr(obj, vaddr, &site) == 0 && site.symbol &&
		       !strcmp(site.symbol, "sym_counter"),
	       "debug files: variables named from the debug file's .symtab");
	snprintf(obj, sizeof(obj), "%s/linked", t);
	tap_ok(resolves_alpha(obj, alpha_off), "debug files: --strip-debug, debuglink in .debug/");
	snprintf(obj, sizeof(obj), "%s/nobid", t);
	tap_ok(resolves_alpha(obj, alpha_off), "debug files: no build ID, debuglink CRC matches");
	snprintf(obj, sizeof(obj), "%s/badcrc", t);
	tap_ok(!resolves_alpha(obj, alpha_off), "debug files: a debug file with another CRC: none");
	unsetenv("CONCSCHED_DEBUG_ROOT");
	symbolize_cache_flush();
	snprintf(obj, sizeof(obj), "rm -rf '%s'", t);
	if (system(obj))
		tap_diag("could not remove %s", t);
}

int main(void)
{
	static const char *const variants[NFIX] = {
		"symfixture",
		"symfixture-nopie",
		"symfixture-static",
		"symfixture-stripped",
	};
	char dir[PATH_MAX];
	uint64_t alpha_off = 0;
	struct sym_site s;
	int i;

	tap_plan(NFIX * 13 + 6 + 2 + 6 + 7);
	snprintf(dir, sizeof(dir), "%s/../programs", self_dir());
	for (i = 0; i < NFIX; i++)
		check_variant(dir, variants[i], &alpha_off);
	check_self_libc();
	check_debug_paths();
	check_debug_files(dir, alpha_off);
	tap_ok(symbolize_resolve_offset("/nonexistent/x", 0, &s) == -ENOENT,
	       "missing object: -ENOENT");
	tap_ok(symbolize_resolve_offset("/proc/self/status", 0, &s) == -ENOEXEC,
	       "non-ELF: -ENOEXEC");
	symbolize_cache_flush();
	return tap_done();
}
