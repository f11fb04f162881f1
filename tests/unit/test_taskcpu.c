// SPDX-License-Identifier: MIT
/* Whether a thread ran (lib/taskcpu.h), from hand-written /proc lines:
 * the evidence that disproves a deadlock verdict (issue 32). */
#include <string.h>
#include <unistd.h>

#include "lib/taskcpu.h"
#include "tap.h"

/* A writer of tools/bench/sqlite_threads asleep in a futex: state S,
 * utime 6, stime 13; a comm with a space and a ')' in it. */
static const char stat_s[] = "458 (sq lite) x) S 455 455 1 0 -1 4194368 15082 0 1 0 6 13 0 0 20 "
			     "0 7 0 8531729 5251072 986 18446744073709551615 1 1 0 0 0 0 0 4 0\n";
static const char sched_s[] = "205895364 263450823 469\n";

static void test_parse(void)
{
	struct taskcpu c;

	tap_ok(taskcpu_parse(stat_s, sched_s, &c), "stat and schedstat parse");
	tap_is_int(c.state, 'S', "state after the last ')' of the comm");
	tap_is_int((int)c.ticks, 19, "utime + stime");
	tap_ok(c.run_ns == 205895364 && c.slices == 469,
	       "schedstat: ns on a CPU, times put on one");
	tap_ok(taskcpu_parse(stat_s, NULL, &c) && c.slices == 0 && c.ticks == 19,
	       "no schedstat: ticks only");
	tap_ok(!taskcpu_parse("458 (x S 1 2", NULL, &c), "a stat without ')' does not parse");
	tap_ok(!taskcpu_parse(NULL, sched_s, &c), "nor a missing one");
}

static void test_ran(void)
{
	struct taskcpu a = { .ticks = 19, .run_ns = 1000, .slices = 469, .state = 'S' }, b = a;

	tap_ok(!taskcpu_ran(&a, &b), "asleep, nothing gained: did not run (a blocked thread)");
	b.slices++;
	tap_ok(taskcpu_ran(&a, &b), "put on a CPU once: ran");
	b = a;
	b.run_ns += 5000;
	tap_ok(taskcpu_ran(&a, &b), "CPU time gained: ran");
	b = a;
	b.run_ns = b.slices = a.run_ns = a.slices = 0; /* no schedstat */
	b.ticks++;
	tap_ok(taskcpu_ran(&a, &b), "without schedstat, a tick gained: ran");
	b = a;
	b.state = 'R';
	tap_ok(taskcpu_ran(&a, &b), "runnable now: not blocked");
}

static void test_self(void)
{
	struct taskcpu a, b;
	volatile unsigned long x = 0;

	tap_ok(taskcpu_read(getpid(), getpid(), &a), "reads this thread");
	for (unsigned long i = 0; i < 50000000UL; i++)
		x += i;
	tap_ok(taskcpu_read(getpid(), getpid(), &b) && taskcpu_ran(&a, &b),
	       "... which ran in between");
	tap_ok(!taskcpu_read(getpid(), 0x7ffffff0, &a), "a thread that is not there: false");
}

int main(void)
{
	tap_plan(15);
	test_parse();
	test_ran();
	test_self();
	return tap_done();
}
