// SPDX-License-Identifier: MIT
/*
 * MAP patterns (seed 001, ALGORITHMS.md section 2): for each of the 17
 * patterns a tiny trace that plays exactly its steps, with the complete set
 * of instances it contains worked out by hand (longer patterns necessarily
 * contain shorter ones); a mixed trace; exact matcher vs a brute-force
 * oracle and vs the online matcher on random traces that fit the window; a
 * case outside the window where they legitimately differ; the domain
 * formula and its happens-before pruning on hand-computed examples.
 */
#include <stdarg.h>

#include "coverage/map_patterns.h"
#include "lib/rng.h"
#include "tap_taskset.h"
#include "lib/array_size.h"

#define TA 1
#define TB 2
#define VX 1
#define VY 2

static struct cov_event acc(uint32_t thread, unsigned op, uint32_t site, uint32_t var)
{
	struct cov_event ev = { .thread = thread, .op = op, .site = site, .obj = var };

	return ev;
}

static int set_is(const struct cov_taskset *ts, const char *const *want, size_t n, const char *fmt,
		  ...) __attribute__((format(printf, 4, 5)));

static int set_is(const struct cov_taskset *ts, const char *const *want, size_t n, const char *fmt,
		  ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return tap_taskset_is(ts, want, n, what);
}

/* The trace of pattern id: step j by thread a/b on x/y at site j+1. */
static size_t pattern_trace(unsigned id, struct cov_event *out)
{
	const struct map_pattern *p = map_patterns_get(id);

	for (unsigned j = 0; j < p->nsteps; j++) {
		const struct map_step *s = &p->step[j];

		out[j] = acc(s->role == MAP_ROLE_A ? TA : TB, s->write ? CS_OP_WRITE : CS_OP_READ,
			     j + 1, s->var == MAP_VAR_X ? VX : VY);
	}
	return p->nsteps;
}

/* Worked out by hand: every instance in the trace of each pattern. */
static const char *const expected[MAP_NPATTERNS + 1][4] = {
	[1] = { "p1 v1 s1 s2" },
	[2] = { "p2 v1 s1 s2" },
	[3] = { "p3 v1 s1 s2" },
	[4] = { "p4 v1 s1 s2 s3", "p1 v1 s1 s2", "p2 v1 s2 s3" },
	[5] = { "p5 v1 s1 s2 s3", "p3 v1 s1 s2", "p2 v1 s2 s3" },
	[6] = { "p6 v1 s1 s2 s3", "p2 v1 s1 s2", "p1 v1 s2 s3" },
	[7] = { "p7 v1 s1 s2 s3", "p1 v1 s1 s2", "p3 v1 s2 s3" },
	[8] = { "p8 v1 s1 s2 s3", "p3 v1 s1 s2", "p3 v1 s2 s3" },
	[9] = { "p9 v1 v2 s1 s2 s3 s4", "p3 v1 s1 s2", "p3 v2 s3 s4" },
	[10] = { "p10 v1 v2 s1 s2 s3 s4", "p3 v1 s1 s3", "p3 v2 s2 s4" },
	[11] = { "p11 v1 v2 s1 s2 s3 s4", "p3 v1 s1 s4", "p3 v2 s2 s3" },
	[12] = { "p12 v1 v2 s1 s2 s3 s4", "p2 v1 s1 s2", "p1 v2 s3 s4" },
	[13] = { "p13 v1 v2 s1 s2 s3 s4", "p2 v1 s1 s3", "p1 v2 s2 s4" },
	[14] = { "p14 v1 v2 s1 s2 s3 s4", "p1 v1 s1 s2", "p2 v2 s3 s4" },
	[15] = { "p15 v1 v2 s1 s2 s3 s4", "p1 v1 s1 s3", "p2 v2 s2 s4" },
	[16] = { "p16 v1 v2 s1 s2 s3 s4", "p1 v1 s1 s4", "p2 v2 s2 s3" },
	[17] = { "p17 v1 v2 s1 s2 s3 s4", "p2 v1 s1 s4", "p1 v2 s2 s3" },
};

static size_t nexpected(unsigned id)
{
	size_t n = 0;

	while (n < 4 && expected[id][n])
		n++;
	return n;
}

static void test_each_pattern(void)
{
	for (unsigned id = 1; id <= MAP_NPATTERNS; id++) {
		struct cov_event tr[4];
		size_t n = pattern_trace(id, tr);
		struct cov_taskset exact, online;
		struct map_online *mo = map_patterns_online_new(0);
		char fmt[96];

		cov_event_taskset_init(&exact);
		cov_event_taskset_init(&online);
		map_patterns_exact_match(tr, n, &exact);
		for (size_t i = 0; i < n; i++)
			map_patterns_online_feed(mo, &tr[i], &online);
		set_is(&exact, expected[id], nexpected(id), "exact: trace of pattern %u (%s)", id,
		       map_patterns_fmt(map_patterns_get(id), fmt, sizeof(fmt)));
		set_is(&online, expected[id], nexpected(id), "online: trace of pattern %u", id);
		cov_event_taskset_free(&exact);
		cov_event_taskset_free(&online);
		map_patterns_online_free(mo);
	}
}

/* T1 W x s1; T2 R x s2; T2 W x s3; T1 R x s4 (worked out by hand). */
static void test_mixed_trace(void)
{
	struct cov_event tr[] = {
		acc(TA, CS_OP_WRITE, 1, VX),
		acc(TB, CS_OP_READ, 2, VX),
		acc(TB, CS_OP_WRITE, 3, VX),
		acc(TA, CS_OP_READ, 4, VX),
	};
	static const char *const want[] = { "p2 v1 s1 s2", "p3 v1 s1 s3", "p2 v1 s3 s4",
					    "p5 v1 s1 s3 s4" };
	struct cov_taskset ts;

	cov_event_taskset_init(&ts);
	map_patterns_exact_match(tr, ARRAY_SIZE(tr), &ts);
	set_is(&ts, want, ARRAY_SIZE(want), "mixed trace: exactly p2 x2, p3, p5");
	cov_event_taskset_free(&ts);

	/* A lock-prefixed RMW may play a read step or a write step. */
	struct cov_event rmw[] = { acc(TA, CS_OP_RW, 7, VX), acc(TB, CS_OP_RW, 8, VX) };
	static const char *const want_rmw[] = { "p1 v1 s7 s8", "p2 v1 s7 s8", "p3 v1 s7 s8" };

	cov_event_taskset_init(&ts);
	map_patterns_exact_match(rmw, 2, &ts);
	set_is(&ts, want_rmw, 3, "RW then RW from two threads: p1, p2, p3");
	cov_event_taskset_free(&ts);

	/* Same thread only: no pattern at all. */
	struct cov_event one[] = { acc(TA, CS_OP_WRITE, 1, VX), acc(TA, CS_OP_READ, 2, VX),
				   acc(TA, CS_OP_WRITE, 3, VY) };

	cov_event_taskset_init(&ts);
	map_patterns_exact_match(one, 3, &ts);
	tap_is_int(ts.count, 0, "one thread: no instances");
	cov_event_taskset_free(&ts);
}

/* Brute force over every subsequence: a third, independent reading of the
 * definition. */
static bool instance_ok(const struct map_pattern *p, const struct cov_event *const *e)
{
	uint32_t a = e[0]->thread, x = e[0]->obj, b = 0, y = 0;
	bool has_b = false, has_y = false;

	for (unsigned j = 0; j < p->nsteps; j++) {
		const struct map_step *s = &p->step[j];
		uint32_t var = s->var == MAP_VAR_X ? x : y;

		if (!map_patterns_step_accepts(s, e[j]->op))
			return false;
		if (s->var == MAP_VAR_Y && !has_y) {
			if (e[j]->obj == x)
				return false;
			y = var = e[j]->obj;
			has_y = true;
		}
		if (e[j]->obj != var)
			return false;
		if (s->role == MAP_ROLE_A && e[j]->thread != a)
			return false;
		if (s->role == MAP_ROLE_B) {
			if (!has_b) {
				if (e[j]->thread == a)
					return false;
				b = e[j]->thread;
				has_b = true;
			}
			if (e[j]->thread != b)
				return false;
		}
	}
	return true;
}

static void brute(const struct cov_event *tr, size_t n, const struct map_pattern *p, unsigned j,
		  size_t from, const struct cov_event **pick, struct cov_taskset *out)
{
	if (j == p->nsteps) {
		struct map_instance in = { .pattern = p->id, .x = pick[0]->obj };
		char key[160];

		if (!instance_ok(p, pick))
			return;
		for (unsigned k = 0; k < p->nsteps; k++) {
			in.site[k] = pick[k]->site;
			if (p->step[k].var == MAP_VAR_Y)
				in.y = pick[k]->obj;
		}
		cov_event_taskset_add(out, map_patterns_instance_key(&in, key, sizeof(key)), 1);
		return;
	}
	for (size_t i = from; i < n; i++) {
		pick[j] = &tr[i];
		brute(tr, n, p, j + 1, i + 1, pick, out);
	}
}

static bool same_set(const struct cov_taskset *a, const struct cov_taskset *b)
{
	if (a->count != b->count)
		return false;
	for (size_t i = 0; i < a->count; i++)
		if (!cov_event_taskset_has(b, a->keys[i]))
			return false;
	return true;
}

/* Does the trace fit the online window (map_patterns.h)? */
static bool fits_window(const struct cov_event *tr, size_t n, unsigned w)
{
	for (uint32_t t = 1; t <= 3; t++) {
		unsigned nvars = 0;

		for (uint32_t v = 1; v <= 3; v++) {
			unsigned cnt = 0;

			for (size_t i = 0; i < n; i++)
				cnt += tr[i].thread == t && tr[i].obj == v;
			if (cnt > w)
				return false;
			nvars += cnt > 0;
		}
		if (nvars > w)
			return false;
	}
	return true;
}

static void random_trace(struct cs_rng *r, struct cov_event *tr, size_t n)
{
	static const unsigned ops[] = { CS_OP_READ, CS_OP_WRITE, CS_OP_READ, CS_OP_WRITE,
					CS_OP_RW };

	for (size_t i = 0; i < n; i++)
		tr[i] = acc(1 + rng_below(r, 3), ops[rng_below(r, ARRAY_SIZE(ops))],
			    1 + rng_below(r, 6), 1 + rng_below(r, 3));
}

static void test_random_agreement(void)
{
	struct cs_rng r;
	unsigned brute_ok = 0, online_ok = 0, full_ok = 0, fitting = 0, total = 300;
	size_t instances = 0;

	rng_seed(&r, 42);
	for (unsigned k = 0; k < total; k++) {
		struct cov_event tr[10];
		const struct cov_event *pick[MAP_MAX_STEPS];
		struct cov_taskset ex, bf, on, full;
		struct map_online *mo = map_patterns_online_new(4),
				  *big = map_patterns_online_new(ARRAY_SIZE(tr));

		random_trace(&r, tr, ARRAY_SIZE(tr));
		cov_event_taskset_init(&ex);
		cov_event_taskset_init(&bf);
		cov_event_taskset_init(&on);
		cov_event_taskset_init(&full);
		map_patterns_exact_match(tr, ARRAY_SIZE(tr), &ex);
		for (unsigned id = 1; id <= MAP_NPATTERNS; id++)
			brute(tr, ARRAY_SIZE(tr), map_patterns_get(id), 0, 0, pick, &bf);
		for (size_t i = 0; i < ARRAY_SIZE(tr); i++) {
			map_patterns_online_feed(mo, &tr[i], &on);
			map_patterns_online_feed(big, &tr[i], &full);
		}
		brute_ok += same_set(&ex, &bf);
		full_ok += same_set(&ex, &full);
		instances += ex.count;
		if (fits_window(tr, ARRAY_SIZE(tr), 4)) {
			fitting++;
			online_ok += same_set(&ex, &on);
		}
		cov_event_taskset_free(&ex);
		cov_event_taskset_free(&bf);
		cov_event_taskset_free(&on);
		cov_event_taskset_free(&full);
		map_patterns_online_free(mo);
		map_patterns_online_free(big);
	}
	tap_is_int(brute_ok, total,
		   "exact matcher == brute force on %u random traces (%zu instances)", total,
		   instances);
	tap_is_int(full_ok, total, "online with W = trace length == exact on every trace");
	tap_ok(fitting >= 20, "enough random traces fit the window W=4 (%u)", fitting);
	tap_is_int(online_ok, fitting, "online (W=4) == exact on every trace that fits the window");
}

/* Outside the window: T1 reads x three times, then T2 writes x. With W=2
 * the online matcher has forgotten the first read when the write comes,
 * so it misses p1 v1 s1 s4; the exact matcher finds it. */
static void test_outside_window(void)
{
	struct cov_event tr[] = {
		acc(TA, CS_OP_READ, 1, VX),
		acc(TA, CS_OP_READ, 2, VX),
		acc(TA, CS_OP_READ, 3, VX),
		acc(TB, CS_OP_WRITE, 4, VX),
	};
	static const char *const want_exact[] = { "p1 v1 s1 s4", "p1 v1 s2 s4", "p1 v1 s3 s4" };
	static const char *const want_online[] = { "p1 v1 s2 s4", "p1 v1 s3 s4" };
	struct cov_taskset ex, on;
	struct map_online *mo = map_patterns_online_new(2);

	cov_event_taskset_init(&ex);
	cov_event_taskset_init(&on);
	map_patterns_exact_match(tr, ARRAY_SIZE(tr), &ex);
	for (size_t i = 0; i < ARRAY_SIZE(tr); i++)
		map_patterns_online_feed(mo, &tr[i], &on);
	set_is(&ex, want_exact, 3, "outside the window: exact finds all three p1");
	set_is(&on, want_online, 2, "outside the window: online W=2 misses p1 v1 s1 s4");
	cov_event_taskset_free(&ex);
	cov_event_taskset_free(&on);
	map_patterns_online_free(mo);
}

/* x: R {11,12}, W {21}; y: R {}, W {22}. By hand: x 4+1+4+6+1 = 16,
 * y 0+1+0+0+1 = 2, (x,y) 3*1*1 + 6*1*2*1*0 = 3, (y,x) 3 + 0 = 3: 24. */
static const uint32_t xr[] = { 11, 12 }, xw[] = { 21 }, yw[] = { 22 };
static const struct map_var_sites dom[] = {
	{ .var = 1, .reads = xr, .nreads = 2, .writes = xw, .nwrites = 1 },
	{ .var = 2, .reads = NULL, .nreads = 0, .writes = yw, .nwrites = 1 },
};

/* Test order: site 11 (r1) can only happen before site 21 (w1). */
static bool r1_before_w1(void *ctx, uint32_t s, uint32_t t)
{
	(void)ctx;
	return s == 11 && t == 21;
}

static void test_domain(void)
{
	struct cov_taskset keys;
	uint64_t n;

	tap_is_int(map_patterns_domain_formula(dom, 2), 24, "domain formula: hand-computed 24");
	cov_event_taskset_init(&keys);
	n = map_patterns_domain_estimate(dom, 2, NULL, NULL, &keys);
	tap_is_int(n, 24, "domain enumeration without pruning equals the formula");
	tap_is_int(keys.count, 24, "24 distinct instance keys");
	tap_ok(cov_event_taskset_has(&keys, "p8 v1 s21 s21 s21") &&
		       cov_event_taskset_has(&keys, "p9 v2 v1 s22 s22 s21 s21"),
	       "domain keys include p8 v1 s21 s21 s21 and p9 on (y, x)");
	cov_event_taskset_free(&keys);
	/* r1 before w1 prunes p2 (w1,r1), p4 (*,w1,r1) x2, p5 (w1,w1,r1),
	 * p6 (w1,r1,w1): 24 - 5 = 19. */
	cov_event_taskset_init(&keys);
	n = map_patterns_domain_estimate(dom, 2, r1_before_w1, NULL, &keys);
	tap_is_int(n, 19, "happens-before pruning: hand-computed 19");
	tap_ok(!cov_event_taskset_has(&keys, "p2 v1 s21 s11") &&
		       cov_event_taskset_has(&keys, "p2 v1 s21 s12") &&
		       cov_event_taskset_has(&keys, "p1 v1 s11 s21"),
	       "pruned p2 v1 s21 s11, kept p2 v1 s21 s12 and p1 v1 s11 s21");
	cov_event_taskset_free(&keys);
}

/* main (t0): W x s1; create t1 (s2); create t2 (s3); t1: R x s4;
 * t2: W x s5; main: join t1 (s6); join t2 (s7); R x s8. */
static void test_site_order(void)
{
	struct cov_event tr[] = {
		acc(0, CS_OP_WRITE, 1, VX),
		{ .thread = 0, .op = CS_OP_CREATE, .site = 2, .obj = 1 },
		{ .thread = 0, .op = CS_OP_CREATE, .site = 3, .obj = 2 },
		acc(1, CS_OP_READ, 4, VX),
		acc(2, CS_OP_WRITE, 5, VX),
		{ .thread = 0, .op = CS_OP_JOIN, .site = 6, .obj = 1 },
		{ .thread = 0, .op = CS_OP_JOIN, .site = 7, .obj = 2 },
		acc(0, CS_OP_READ, 8, VX),
	};
	struct map_site_order *o = map_patterns_site_order_build(tr, ARRAY_SIZE(tr));

	tap_ok(map_patterns_site_order_precedes(o, 1, 4) &&
		       map_patterns_site_order_precedes(o, 1, 5) &&
		       map_patterns_site_order_precedes(o, 4, 8) &&
		       map_patterns_site_order_precedes(o, 5, 8),
	       "fork/join order: init before both workers, workers before the final read");
	tap_ok(!map_patterns_site_order_precedes(o, 4, 5) &&
		       !map_patterns_site_order_precedes(o, 5, 4) &&
		       !map_patterns_site_order_precedes(o, 4, 1) &&
		       !map_patterns_site_order_precedes(o, 4, 4),
	       "the two workers are unordered; no reverse or reflexive order");
	map_patterns_site_order_free(o);
}

static void test_keys(void)
{
	struct map_instance in;
	char buf[160];

	tap_ok(!map_patterns_instance_parse("p12 v3 v4 s1 s2 s3 s4", &in) && in.pattern == 12 &&
		       in.x == 3 && in.y == 4 && in.site[3] == 4,
	       "key parses back");
	tap_is_str(map_patterns_instance_key(&in, buf, sizeof(buf)), "p12 v3 v4 s1 s2 s3 s4",
		   "key round trip");
	tap_ok(map_patterns_instance_parse("p3 v1 s1", &in) &&
		       map_patterns_instance_parse("p18 v1 s1 s2", &in),
	       "malformed keys are rejected");
	tap_is_str(map_patterns_fmt(map_patterns_get(17), buf, sizeof(buf)),
		   "a:W x, b:R y, a:W y, b:R x", "pattern 17 as in ALGORITHMS.md");
}

int main(void)
{
	tap_plan(2 * MAP_NPATTERNS + 4 + 4 + 2 + 5 + 2 + 4);
	test_each_pattern();
	test_mixed_trace();
	test_random_agreement();
	test_outside_window();
	test_domain();
	test_site_order();
	test_keys();
	return tap_done();
}
