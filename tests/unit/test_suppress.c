// SPDX-License-Identifier: MIT
/*
 * Race-warning suppressions (lib/suppress.h): the defaults (the C
 * runtime), TSan race: patterns with anchors and wildcards, Helgrind
 * entries (first frame, "..." then any frame, other kinds ignored), a
 * malformed file refused with its line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/suppress.h"
#include "tap.h"

static char path[64];

static int load_text(struct suppressions *s, const char *text)
{
	int fd;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/cs-supp-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	fd = suppress_load(s, path);
	unlink(path);
	return fd;
}

static const struct suppress_frame app_inc = { "increment", "/src/app/count.c", "/usr/bin/app" };
static const struct suppress_frame app_main = { "main", "/src/app/main.c", "/usr/bin/app" };
static const struct suppress_frame libc_mem = { "__memcpy_avx", NULL,
						"/usr/lib/x86_64-linux-gnu/libc.so.6" };
static const struct suppress_frame pool_get = { "pool_get", "/src/pool.c",
						"/usr/lib/libpool.so.1" };
static const struct suppress_frame unknown = { NULL, NULL, NULL };

int main(void)
{
	struct suppressions *s = suppress_new();

	tap_plan(12);
	tap_ok(suppress_race(s, &libc_mem, &app_main) != NULL,
	       "default: an access inside libc is suppressed");
	tap_ok(!suppress_race(s, &app_inc, &app_main), "default: the program's own race is not");
	tap_ok(!suppress_race(s, &unknown, &unknown), "an unnamed site matches nothing");

	tap_is_int(load_text(s, "# tsan\nrace:^incr*t$\nthread:whatever\ncalled_from_lib:x\n"), 0,
		   "a TSan file loads (other types read, unused)");
	tap_ok(suppress_race(s, &app_main, &app_inc) != NULL,
	       "race:^incr*t$ suppresses increment (either access)");
	tap_ok(!suppress_race(s, &app_main, &app_main), "... not main");
	tap_is_int(load_text(s, "{\n  pool\n  Helgrind:Race\n  fun:pool_*\n  fun:caller\n}\n"
				"{\n  leak\n  Memcheck:Leak\n  fun:main\n}\n"
				"{\n  deep\n  Helgrind:Race\n  ...\n  src:*/main.c\n}\n"),
		   0, "a Helgrind file loads");
	tap_ok(suppress_race(s, &pool_get, &unknown) != NULL, "fun:pool_* on the first frame");
	tap_ok(suppress_race(s, &app_main, &unknown) != NULL,
	       "... then src:*/main.c after \"...\" matches any frame");
	suppress_free(s);
	s = suppress_new();
	tap_is_int(load_text(s, "{\n  leak\n  Memcheck:Leak\n  fun:main\n}\n"), 0,
		   "a Memcheck entry alone");
	tap_ok(!suppress_race(s, &app_main, &app_inc), "... suppresses no race");
	tap_is_int(load_text(s, "{\n  bad\n  Helgrind:Race\n  bogus:1\n}\n"), -EINVAL,
		   "a malformed entry: -EINVAL");
	suppress_free(s);
	return tap_done();
}
