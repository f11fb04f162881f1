// SPDX-License-Identifier: MIT
/* Decision log: encode/decode round trip, compactness, corrupt input,
 * lookup by (abstract thread, instance, event index). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/declog.h"
#include "tap.h"

static int same_entries(const struct declog *a, const struct declog *b)
{
	size_t i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++) {
		const struct declog_entry *x = &a->entries[i], *y = &b->entries[i];

		if (x->thread != y->thread || x->instance != y->instance || x->event != y->event ||
		    x->action != y->action || x->arg != y->arg)
			return 0;
	}
	return 1;
}

static void test_round_trip(void)
{
	const uint64_t ta = 0x9e3779b97f4a7c15ULL, tb = 0x00000000000000ffULL;
	struct declog dl, back;
	const struct declog_entry *e;
	uint8_t *buf;
	size_t len, i;

	declog_init(&dl, 0xdeadbeefcafef00dULL, "{\"strategy\":\"random\",\"p\":0.3}");
	tap_is_int(declog_add(&dl, ta, 0, 3, DECLOG_PARK, 0), 0, "add park");
	declog_add(&dl, tb, 0, 1, DECLOG_DELAY_US, 100000);
	declog_add(&dl, ta, 1, 2, DECLOG_YIELD, 10);
	declog_add(&dl, ta, 0, 3, DECLOG_RELEASE, 2);
	declog_add(&dl, tb, 0, 1000000, DECLOG_PRIORITY, -20);
	declog_add(&dl, ta, 0, 1ULL << 40, DECLOG_DELAY_US, INT64_MAX);
	declog_add(&dl, tb, 0, 1000001, DECLOG_PRIORITY, INT64_MIN);
	tap_is_int(declog_add(&dl, ta, 0, 2, DECLOG_PARK, 0), -EINVAL,
		   "event index going backwards refused");
	tap_is_int(declog_add(&dl, ta, 0, 5, (enum declog_action)0, 0), -EINVAL,
		   "unknown action refused");
	tap_is_int(declog_encode(&dl, &buf, &len), 0, "encode");
	tap_is_int(declog_decode(buf, len, &back), 0, "decode");
	tap_ok(back.seed == dl.seed, "seed round trip");
	tap_is_str(back.config_json, dl.config_json, "config round trip");
	tap_ok(same_entries(&dl, &back), "entries round trip (order, ids, deltas, signed args)");
	tap_is_int(declog_lookup(&back, ta, 0, 3, &e), 2, "two decisions at thread a event 3");
	tap_ok(e && e[0].action == DECLOG_PARK && e[1].action == DECLOG_RELEASE,
	       "lookup keeps decision order");
	tap_is_int(declog_lookup(&back, ta, 1, 2, &e), 1, "instance 1 is a different thread");
	tap_is_int(declog_lookup(&back, ta, 0, 4, &e), 0, "no decision at event 4");
	tap_is_int(declog_lookup(&back, 12345, 0, 3, &e), 0, "unknown thread");
	declog_free(&back);

	/* Every truncation is detected; none crashes. */
	for (i = 0; i < len; i++) {
		struct declog t;

		if (declog_decode(buf, i, &t) != -EBADMSG)
			break;
	}
	tap_is_int(i, len, "every truncated prefix -> -EBADMSG");
	buf[0] = 'X';
	tap_is_int(declog_decode(buf, len, &back), -EBADMSG, "bad magic");
	buf[0] = 'C';
	buf[4] = DECLOG_VERSION + 1;
	tap_is_int(declog_decode(buf, len, &back), -EPROTONOSUPPORT, "newer version");
	free(buf);
	declog_free(&dl);
}

/* A realistic log: 4 threads, 10000 noise decisions at growing events. */
static void test_compact(void)
{
	struct declog dl, back;
	uint64_t ev[4] = { 0 };
	uint8_t *buf;
	size_t len, i;

	declog_init(&dl, 1, NULL);
	srand(7);
	for (i = 0; i < 10000; i++) {
		size_t t = (size_t)rand() % 4;

		ev[t] += 1 + (uint64_t)(rand() % 50);
		declog_add(&dl, 0x1000 + t, 0, ev[t], DECLOG_DELAY_US, rand() % 100);
	}
	declog_encode(&dl, &buf, &len);
	tap_diag("10000 decisions encode to %zu bytes", len);
	tap_ok(len < 10000 * 5, "under 5 bytes per decision");
	tap_ok(!declog_decode(buf, len, &back) && same_entries(&dl, &back), "large log round trip");
	free(buf);
	declog_free(&back);
	declog_free(&dl);
	declog_init(&dl, 0, NULL);
	tap_ok(!declog_encode(&dl, &buf, &len) && !declog_decode(buf, len, &back) && back.n == 0 &&
		       !back.config_json,
	       "empty log round trip");
	free(buf);
	declog_free(&back);
	tap_is_str(declog_action_name(DECLOG_DELAY_US), "delay", "action names");
}

/* The observed schedule rides in the same log: passes round-trip, and
 * lookups and the decision count see decisions only. */
static void test_passes(void)
{
	struct declog dl, back;
	const struct declog_entry *e;
	uint8_t *buf = NULL;
	size_t len = 0;

	declog_init(&dl, 3, "{}");
	declog_add(&dl, 7, 0, 0, DECLOG_DELAY_US, 50);
	declog_add(&dl, 7, 0, 0, DECLOG_PASS, 0);
	declog_add(&dl, 9, 0, 0, DECLOG_PASS, 0);
	declog_add(&dl, 9, 0, 1, DECLOG_PASS, 0);
	tap_is_int(declog_decisions(&dl), 1, "one decision among four entries");
	tap_ok(declog_lookup(&dl, 7, 0, 0, &e) == 1 && e->action == DECLOG_DELAY_US,
	       "lookup at a point with a decision and a pass: the decision only");
	tap_is_int(declog_lookup(&dl, 9, 0, 1, &e), 0, "lookup at a point with a pass only: none");
	tap_is_int(declog_encode(&dl, &buf, &len), 0, "encode with passes");
	tap_ok(declog_decode(buf, len, &back) == 0 && back.n == 4 &&
		       back.entries[3].action == DECLOG_PASS && back.entries[3].thread == 9 &&
		       back.entries[3].event == 1,
	       "decode: the passes in order");
	tap_is_str(declog_action_name(DECLOG_PASS), "pass", "its name");
	free(buf);
	declog_free(&back);
	declog_free(&dl);

	/* Version 3: passes and decisions are two chains per thread, so the
	 * observed schedule can be appended after the run's decisions. */
	declog_init(&dl, 3, "{}");
	declog_add(&dl, 7, 0, 5, DECLOG_RELEASE, 1);
	tap_is_int(declog_add(&dl, 7, 0, 2, DECLOG_PASS, 0), 0,
		   "a pass at point 2 after a decision at point 5 of the same thread");
	tap_is_int(declog_add(&dl, 7, 0, 1, DECLOG_PASS, 0), -EINVAL,
		   "passes still go forward within the thread");
	tap_is_int(declog_add(&dl, 7, 0, 4, DECLOG_RELEASE, 0), -EINVAL, "so do decisions");
	declog_add(&dl, 7, 0, 6, DECLOG_PASS, 0);
	buf = NULL;
	tap_ok(declog_encode(&dl, &buf, &len) == 0 && declog_decode(buf, len, &back) == 0 &&
		       same_entries(&dl, &back),
	       "version 3 round trip: release @5, pass @2, pass @6");
	free(buf);
	declog_free(&back);
	declog_free(&dl);
	{
		/* A version 2 log (one chain): a pass then a release of one
		 * thread, deltas 1 and 1, decode at events 1 and 2. */
		static const uint8_t v2[] = { 'C',	   'S', 'D', 'L', 2,
					      3,	   0,	1,   7,	  0,
					      0,	   0,	0,   0,	  0,
					      0,	   0,	2,   0,	  1,
					      DECLOG_PASS, 0,	0,   1,	  DECLOG_RELEASE,
					      2,	   0 };

		tap_ok(declog_decode(v2, sizeof(v2), &back) == 0 && back.n == 2 &&
			       back.entries[0].event == 1 && back.entries[1].event == 2 &&
			       back.entries[1].action == DECLOG_RELEASE && back.entries[1].arg == 1,
		       "a version 2 log still decodes with its single chain");
		declog_free(&back);
	}
}

int main(void)
{
	tap_plan(31);
	test_round_trip();
	test_compact();
	test_passes();
	return tap_done();
}
