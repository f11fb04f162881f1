// SPDX-License-Identifier: MIT
/*
 * The policy interface's fake backend: site hit counting (skip/count/tid,
 * the op wildcard) mirrors bpf/sched_point.bpf.h, one-shot actions, the
 * all-parked notification with the parked set, release, delays and the
 * watchdog in simulated time, serial mode and priorities, and the call log.
 * A small TSA-like release loop (release the oldest parked thread whenever
 * all are parked) runs on top, the way strategies use it.
 */
#include <errno.h>
#include <string.h>

#include "kernel/policy.h"
#include "tap.h"

struct seen {
	int notes;
	uint32_t last_parked;
	uint32_t tids[CS_NOTE_MAX_TIDS];
};

static void on_all_parked(struct policy *p, const struct policy_note *n, void *ctx)
{
	struct seen *s = ctx;

	s->notes++;
	s->last_parked = n->nr_parked;
	memcpy(s->tids, n->tids, sizeof(s->tids));
}

static void test_site_counting(void)
{
	struct policy *p = policy_new_fake();
	int acts[6], i;

	policy_fake_thread(p, 10);
	tap_is_int(policy_park_site(p, 0x1000, 0, 2, 1), 0, "park_site accepted");
	/* hits 1,2 pass (skip), hit 3 parks (count 1), later hits pass */
	for (i = 0; i < 3; i++) {
		acts[i] = policy_fake_point(p, 10, 0x1000, CS_OP_LOCK_REQ);
		if (acts[i] == CS_ACT_PARK)
			policy_release(p, 10);
	}
	acts[3] = policy_fake_point(p, 10, 0x1000, CS_OP_LOCK_REQ);
	tap_ok(acts[0] == CS_ACT_NONE && acts[1] == CS_ACT_NONE, "first skip hits run on");
	tap_is_int(acts[2], CS_ACT_PARK, "hit skip+1 parks");
	tap_is_int(acts[3], CS_ACT_NONE, "hits after skip+count run on");
	tap_is_int(policy_fake_point(p, 10, 0x2000, CS_OP_LOCK_REQ), CS_ACT_NONE,
		   "another site is untouched");
	policy_free(p);
}

static void test_tid_filter_and_op_wildcard(void)
{
	struct policy *p = policy_new_fake();

	policy_fake_thread(p, 1);
	policy_fake_thread(p, 2);
	policy_delay_site(p, CS_SITE_OP_KEY(CS_OP_UNLOCK), 2, 500, 0, 0);
	tap_is_int(policy_fake_point(p, 1, 0x77, CS_OP_UNLOCK), CS_ACT_NONE,
		   "tid filter: other thread runs on");
	tap_is_int(policy_fake_point(p, 2, 0x77, CS_OP_UNLOCK), CS_ACT_DELAY,
		   "op wildcard delays the named thread at any unlock site");
	tap_is_int(policy_fake_state(p, 2), CS_TS_DELAYED, "thread 2 is delayed");
	tap_is_int(policy_fake_advance(p, 499), 0, "delay not over after 499 us");
	tap_is_int(policy_fake_advance(p, 1), 1, "delay over after 500 us");
	tap_is_int(policy_fake_state(p, 2), CS_TS_RUN, "thread 2 runs again");
	policy_yield_site(p, 0x88, 0, 0, 0);
	tap_is_int(policy_fake_point(p, 1, 0x88, CS_OP_LOCK), CS_ACT_YIELD, "yield site");
	tap_is_int(policy_fake_state(p, 1), CS_TS_RUN, "a yield does not park");
	policy_free(p);
}

static void test_all_parked(void)
{
	struct policy *p = policy_new_fake();
	struct seen s = { 0 };
	uint32_t tids[4];

	policy_on_all_parked(p, on_all_parked, &s);
	policy_fake_thread(p, 1);
	policy_fake_thread(p, 2);
	policy_fake_thread(p, 3);
	policy_park_next(p, 1);
	policy_park_next(p, 2);
	tap_is_int(policy_fake_point(p, 1, 0x10, CS_OP_LOCK_REQ), CS_ACT_PARK, "park_next parks 1");
	tap_is_int(policy_fake_point(p, 2, 0x20, CS_OP_LOCK_REQ), CS_ACT_PARK, "park_next parks 2");
	tap_is_int(policy_poll(p, 0), 0, "no note while thread 3 can run");
	tap_is_int(policy_fake_point(p, 1, 0x10, 0), -EBUSY, "a parked thread reaches no point");
	policy_fake_block(p, 3, true);
	tap_is_int(policy_poll(p, 0), 1, "note once 3 blocks");
	tap_is_int(s.last_parked, 2, "note carries two parked threads");
	tap_ok(s.tids[0] == 1 && s.tids[1] == 2, "parked set is {1, 2}");
	tap_is_int(policy_parked(p, tids, 4), 2, "policy_parked agrees");
	tap_is_int(policy_release(p, 2), 1, "release 2");
	tap_is_int(policy_release(p, 2), 0, "releasing it again does nothing");
	tap_is_int(policy_fake_state(p, 2), CS_TS_RUN, "2 runs");
	tap_is_int(policy_release(p, 0), 1, "release all frees the last one");
	tap_is_int(policy_parked(p, tids, 4), 0, "nobody parked");
	policy_free(p);
}

static void test_watchdog(void)
{
	struct policy *p = policy_new_fake();

	policy_fake_thread(p, 5);
	policy_fake_watchdog(p, 1000);
	policy_park_site(p, 0x5, 0, 0, 0);
	policy_fake_point(p, 5, 0x5, 0);
	/* a delay longer than the watchdog is cut at the watchdog */
	policy_fake_thread(p, 6);
	policy_delay_next(p, 6, 5000);
	policy_fake_point(p, 6, 0x9, 0);
	tap_is_int(policy_fake_advance(p, 999), 0, "parks hold until the watchdog");
	tap_is_int(policy_fake_advance(p, 1), 2, "watchdog releases both");
	tap_is_int((int)policy_fake_watchdog_releases(p), 2, "and counts them");
	policy_free(p);
}

static void test_serial_prio_log(void)
{
	struct policy *p = policy_new_fake();

	policy_fake_thread(p, 7);
	tap_is_int(policy_serialize(p, CS_SERIAL_PRIO, 42), 0, "serialize pct");
	tap_is_int(policy_fake_serial(p), CS_SERIAL_PRIO, "serial mode recorded");
	tap_is_int(policy_serialize(p, 99, 0), -EINVAL, "unknown serial mode rejected");
	tap_is_int(policy_set_prio(p, 7, 3), 0, "set prio");
	tap_is_int(policy_fake_prio(p, 7), 3, "prio recorded");
	tap_is_int(policy_set_prio(p, 8, 3), -ENOENT, "prio of unknown thread");
	tap_is_str(policy_fake_log(p), "serialize 3 seed=42\nprio 7 3\nprio 8 3\n",
		   "call log in order");
	policy_fake_clear_log(p);
	policy_park_site(p, 0x4011a6, 0, 0, 1);
	tap_is_str(policy_fake_log(p), "park_site 0x4011a6 tid=0 delay_us=0 skip=0 count=1\n",
		   "site call logged");
	policy_free(p);
}

/* Strategy-shaped use: two threads race for a lock; park whoever asks
 * first, release the oldest when all are parked: the other one wins. */
struct race {
	struct policy *p;
	uint32_t order[4];
	int n;
};

static void race_release(struct policy *p, const struct policy_note *n, void *ctx)
{
	struct race *r = ctx;

	policy_release(p, n->tids[0]);
	r->order[r->n++] = n->tids[0];
}

static void test_strategy_loop(void)
{
	struct race r = { .p = policy_new_fake() };
	struct policy *p = r.p;

	policy_on_all_parked(p, race_release, &r);
	policy_fake_thread(p, 100);
	policy_fake_thread(p, 200);
	policy_park_site(p, 0xa, 100, 0, 1);
	tap_is_int(policy_fake_point(p, 100, 0xa, CS_OP_LOCK_REQ), CS_ACT_PARK, "A parked at lock");
	tap_is_int(policy_fake_point(p, 200, 0xb, CS_OP_LOCK_REQ), CS_ACT_NONE, "B takes the lock");
	policy_fake_exit(p, 200);
	tap_is_int(policy_poll(p, 0), 1, "B gone: A is the only one and parked");
	tap_ok(r.n == 1 && r.order[0] == 100, "the rule released A");
	tap_is_int(policy_fake_point(p, 100, 0xa, CS_OP_LOCK_REQ), CS_ACT_NONE,
		   "count 1: A runs on next time");
	policy_free(p);
}

static void tap_like_log(struct policy *p)
{
	tap_ok(strstr(policy_fake_log(p), "release_site 0xb tid=2 release=1 skip=0 count=0\n") !=
		       NULL,
	       "release site logged");
}

/* A release driven by another thread's event: B's unlock site lets A go. */
static void test_release_at_site(void)
{
	struct policy *p = policy_new_fake();

	policy_fake_thread(p, 1);
	policy_fake_thread(p, 2);
	policy_fake_thread(p, 3);
	policy_park_site(p, 0xa, 0, 0, 0);
	policy_release_at_site(p, 0xb, 2, 1, 0, 0);
	policy_fake_point(p, 1, 0xa, CS_OP_LOCK_REQ);
	policy_fake_point(p, 3, 0xa, CS_OP_LOCK_REQ);
	tap_is_int(policy_fake_point(p, 3, 0xb, CS_OP_UNLOCK), -EBUSY, "parked 3 reaches nothing");
	tap_is_int(policy_fake_point(p, 2, 0xb, CS_OP_UNLOCK), CS_ACT_RELEASE,
		   "2 at the release site runs on");
	tap_ok(policy_fake_state(p, 1) == CS_TS_RUN && policy_fake_state(p, 3) == CS_TS_PARKED,
	       "it released thread 1 only");
	policy_release_at_site(p, 0xc, 0, 0, 0, 0);
	tap_is_int(policy_fake_point(p, 1, 0xc, CS_OP_UNLOCK), CS_ACT_RELEASE, "release-all site");
	tap_is_int(policy_fake_state(p, 3), CS_TS_RUN, "released every parked thread");
	tap_like_log(p);
	policy_free(p);
}

int main(void)
{
	tap_plan(48);
	test_site_counting();
	test_tid_filter_and_op_wildcard();
	test_all_parked();
	test_watchdog();
	test_serial_prio_log();
	test_strategy_loop();
	test_release_at_site();
	return tap_done();
}
