// SPDX-License-Identifier: MIT
/*
 * Noise configurations and per-visit decisions: seed 004 section 4
 * (placement x seeding x frequency x strength) and seed 000's RND-y /
 * RND-s10 / RND-s100 baselines. See noise.h for the string grammar and
 * docs/strategies.md for the choices the papers leave open.
 */
#include "strategies/noise.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/json.h"
#include "lib/array_size.h"
#include "lib/parse.h"
#include "lib/xalloc.h"

/* haltOneThread as an advanced option "occasionally" stops a thread
 * (seed 004 §4.2); we make it 1 injection in 10. */
#define HALT_ONE_PERMILLE 100
/* Strength of +tt: up to half of each timeout is cut. */
#define TAMPER_DEFAULT_PCT 50
/* mixed noise turns its µs strength into yields at one yield per 100 µs. */
#define MIXED_US_PER_YIELD 100

static const char *const placement_names[NOISE_PLACE__COUNT] = {
	[NOISE_PLACE_RANDOM_ALL] = "random-all",
	[NOISE_PLACE_SHAREDVAR_ALL] = "sharedVar-all",
	[NOISE_PLACE_SHAREDVAR_ONE] = "sharedVar-one",
	[NOISE_PLACE_READ_WRITE] = "read-write",
	[NOISE_PLACE_PATTERN] = "pattern",
	[NOISE_PLACE_COVERAGE] = "coverage",
};

static const char *const seeding_names[NOISE_SEED__COUNT] = {
	[NOISE_SEED_YIELD] = "yield",
	[NOISE_SEED_SLEEP] = "sleep",
	[NOISE_SEED_BUSYWAIT] = "busyWait",
	[NOISE_SEED_WAIT] = "wait",
	[NOISE_SEED_HALT_ONE] = "haltOneThread",
	[NOISE_SEED_INVERSE] = "inverseNoise",
	[NOISE_SEED_PRIORITY] = "priority",
	[NOISE_SEED_TIMEOUT] = "timeoutTamper",
	[NOISE_SEED_MIXED] = "mixed",
};

static const char *const act_names[NOISE_ACT__COUNT] = {
	[NOISE_ACT_NONE] = "none",	 [NOISE_ACT_YIELD] = "yield",
	[NOISE_ACT_SLEEP] = "sleep",	 [NOISE_ACT_BUSYWAIT] = "busywait",
	[NOISE_ACT_WAIT] = "wait",	 [NOISE_ACT_HALT] = "halt",
	[NOISE_ACT_INVERSE] = "inverse", [NOISE_ACT_PRIORITY] = "priority",
};

/* Seed 004's reference strengths (yield 10/100, sleep and busyWait 2/20 ms,
 * inverseNoise 2/20 actions): the low one is the default, and random
 * configurations draw between low and high. */
struct strength_ref {
	uint32_t min, max, low, high;
};

static const struct strength_ref strength_refs[NOISE_SEED__COUNT] = {
	[NOISE_SEED_YIELD] = { 1, 1000, 10, 100 },
	[NOISE_SEED_SLEEP] = { 0, 1000000, 2000, 20000 },
	[NOISE_SEED_BUSYWAIT] = { 0, 1000000, 2000, 20000 },
	[NOISE_SEED_WAIT] = { 0, 1000000, 2000, 20000 },
	[NOISE_SEED_HALT_ONE] = { 0, 0, 0, 0 },
	[NOISE_SEED_INVERSE] = { 1, 1000, 2, 20 },
	[NOISE_SEED_PRIORITY] = { 1, 99, 1, 10 },
	[NOISE_SEED_TIMEOUT] = { 1, 100, 10, 90 },
	[NOISE_SEED_MIXED] = { 0, 1000000, 2000, 20000 },
};

void noise_strength_range(enum noise_seeding kind, uint32_t *min, uint32_t *max)
{
	*min = strength_refs[kind].min;
	*max = strength_refs[kind].max;
}

const char *noise_placement_name(enum noise_placement p)
{
	return (unsigned)p < NOISE_PLACE__COUNT ? placement_names[p] : "?";
}

const char *noise_seeding_name(enum noise_seeding s)
{
	return (unsigned)s < NOISE_SEED__COUNT ? seeding_names[s] : "?";
}

const char *noise_act_name(enum noise_act a)
{
	return (unsigned)a < NOISE_ACT__COUNT ? act_names[a] : "?";
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static void seed_default(struct noise_seed_cfg *s, enum noise_seeding kind)
{
	s->kind = kind;
	s->lo = s->hi = strength_refs[kind].low;
}

static int seed_validate(const struct noise_seed_cfg *s, const char *what, char *err, size_t errlen)
{
	const struct strength_ref *ref;

	if ((unsigned)s->kind >= NOISE_SEED__COUNT)
		return fail(err, errlen, "%s: unknown seeding %d", what, (int)s->kind);
	ref = &strength_refs[s->kind];
	if (s->lo > s->hi)
		return fail(err, errlen, "%s: strength range %u-%u is empty", what, s->lo, s->hi);
	if (s->lo < ref->min || s->hi > ref->max)
		return fail(err, errlen, "%s: %s strength must be in %u-%u, got %u-%u", what,
			    seeding_names[s->kind], ref->min, ref->max, s->lo, s->hi);
	return 0;
}

int noise_config_validate(const struct noise_config *c, char *err, size_t errlen)
{
	int rc;

	if ((unsigned)c->placement >= NOISE_PLACE__COUNT)
		return fail(err, errlen, "unknown placement %d", (int)c->placement);
	if (c->freq > 1000)
		return fail(err, errlen, "frequency %u is over 1000 per mille", c->freq);
	rc = seed_validate(&c->seed, "seeding", err, errlen);
	if (rc || c->placement != NOISE_PLACE_READ_WRITE)
		return rc;
	rc = seed_validate(&c->read, "read seeding", err, errlen);
	return rc ? rc : seed_validate(&c->write, "write seeding", err, errlen);
}

int noise_config_rnd(enum noise_rnd kind, double p, struct noise_config *c)
{
	long freq = lround(p * 1000.0);

	if (!(p > 0 && p <= 1) || freq < 1)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->rnd = kind;
	c->placement = NOISE_PLACE_RANDOM_ALL;
	c->freq = (uint32_t)freq;
	switch (kind) {
	case NOISE_RND_Y:
		c->seed = (struct noise_seed_cfg){ NOISE_SEED_YIELD, 1, 1 };
		break;
	case NOISE_RND_S10:
		c->seed = (struct noise_seed_cfg){ NOISE_SEED_SLEEP, 0, 10000 };
		break;
	case NOISE_RND_S100:
		c->seed = (struct noise_seed_cfg){ NOISE_SEED_SLEEP, 0, 100000 };
		break;
	default:
		return -EINVAL;
	}
	c->read = c->write = c->seed;
	return 0;
}

/* ---- parsing -------------------------------------------------------------- */

static int parse_rnd(const char *s, struct noise_config *c, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		enum noise_rnd kind;
	} kinds[] = { { "rnd-y", NOISE_RND_Y },
		      { "rnd-s10", NOISE_RND_S10 },
		      { "rnd-s100", NOISE_RND_S100 } };
	const char *colon = strchr(s, ':');
	size_t namelen = colon ? (size_t)(colon - s) : strlen(s);
	double p;

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		if (strlen(kinds[i].name) != namelen || strncasecmp(s, kinds[i].name, namelen))
			continue;
		if (!colon)
			return fail(err, errlen, "'%s' needs a probability, e.g. %s:0.3", s,
				    kinds[i].name);
		if (parse_double(colon + 1, &p) || !(p > 0 && p <= 1))
			return fail(err, errlen,
				    "'%s': probability must be a number in (0, 1], e.g. 0.3", s);
		if (noise_config_rnd(kinds[i].kind, p, c))
			return fail(err, errlen, "'%s': probability below 0.001", s);
		return 0;
	}
	return fail(err, errlen, "unknown baseline '%.*s' (rnd-y, rnd-s10, rnd-s100)", (int)namelen,
		    s);
}

static int lookup_name(const char *const *names, int n, const char *s, size_t len)
{
	for (int i = 0; i < n; i++)
		if (strlen(names[i]) == len && !strncasecmp(names[i], s, len))
			return i;
	return -1;
}

static int parse_u32_range(const char *s, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (parse_u64(s, &v) || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* KIND[:N | :LO-HI] */
static int parse_seeding(const char *s, struct noise_seed_cfg *out, char *err, size_t errlen)
{
	const char *colon = strchr(s, ':');
	size_t len = colon ? (size_t)(colon - s) : strlen(s);
	int kind = lookup_name(seeding_names, NOISE_SEED__COUNT, s, len);
	char buf[32], *dash;

	if (kind < 0)
		return fail(err, errlen,
			    "unknown seeding '%.*s' (yield, sleep, busyWait, wait, haltOneThread, "
			    "inverseNoise, priority, timeoutTamper, mixed)",
			    (int)len, s);
	seed_default(out, kind);
	if (!colon)
		return seed_validate(out, "seeding", err, errlen);
	if (strlen(colon + 1) >= sizeof(buf))
		return fail(err, errlen, "strength '%s' is too long", colon + 1);
	strcpy(buf, colon + 1);
	dash = strchr(buf, '-');
	if (dash)
		*dash = 0;
	if (parse_u32_range(buf, UINT32_MAX, &out->lo) ||
	    parse_u32_range(dash ? dash + 1 : buf, UINT32_MAX, &out->hi))
		return fail(err, errlen, "strength '%s' is not N or LO-HI", colon + 1);
	return seed_validate(out, seeding_names[kind], err, errlen);
}

static int parse_option(char *item, struct noise_config *c, bool *rd, bool *wr, char *err,
			size_t errlen)
{
	if (!strcasecmp(item, "ht")) {
		c->halt_one = true;
		return 0;
	}
	if (!strcasecmp(item, "tt")) {
		c->timeout_tamper = true;
		return 0;
	}
	if (!strcasecmp(item, "xh")) {
		c->exit_hold = true;
		return 0;
	}
	if (!strncasecmp(item, "read=", 5) || !strncasecmp(item, "write=", 6)) {
		bool is_read = item[0] == 'r' || item[0] == 'R';

		if (c->placement != NOISE_PLACE_READ_WRITE)
			return fail(err, errlen, "'%s' needs placement read-write", item);
		*(is_read ? rd : wr) = true;
		return parse_seeding(strchr(item, '=') + 1, is_read ? &c->read : &c->write, err,
				     errlen);
	}
	return fail(err, errlen, "unknown option '%s' (read=, write=, ht, tt, xh)", item);
}

static int parse_compact(char *s, struct noise_config *c, char *err, size_t errlen)
{
	char *at = strchr(s, '@'), *slash, *item, *save = NULL;
	bool rd = false, wr = false;
	int p, rc;

	if (!at)
		return fail(err, errlen,
			    "'%s' is not PLACEMENT@FREQ/SEEDING (e.g. random-all@150/sleep:2000)",
			    s);
	p = lookup_name(placement_names, NOISE_PLACE__COUNT, s, (size_t)(at - s));
	if (p < 0)
		return fail(err, errlen,
			    "unknown placement '%.*s' (random-all, sharedVar-all, sharedVar-one, "
			    "read-write, pattern, coverage)",
			    (int)(at - s), s);
	c->placement = p;
	slash = strchr(at, '/');
	if (!slash)
		return fail(err, errlen, "missing '/SEEDING' after the frequency");
	*slash = 0;
	if (parse_u32_range(at + 1, 1000, &c->freq))
		return fail(err, errlen, "frequency '%s' must be 0-1000 (per mille)", at + 1);
	item = strtok_r(slash + 1, ",", &save);
	if (!item)
		return fail(err, errlen, "missing seeding after '/'");
	rc = parse_seeding(item, &c->seed, err, errlen);
	while (!rc && (item = strtok_r(NULL, ",", &save)))
		rc = parse_option(item, c, &rd, &wr, err, errlen);
	if (rc)
		return rc;
	if (!rd)
		c->read = c->seed;
	if (!wr)
		c->write = c->seed;
	return noise_config_validate(c, err, errlen);
}

int noise_config_parse(const char *s, struct noise_config *c, char *err, size_t errlen)
{
	char *copy;
	int rc;

	if (err && errlen)
		err[0] = 0;
	if (!s || !*s)
		return fail(err, errlen, "empty noise configuration");
	if (!strncasecmp(s, "noise:", 6))
		s += 6;
	memset(c, 0, sizeof(*c));
	if (!strncasecmp(s, "rnd-", 4))
		return parse_rnd(s, c, err, errlen);
	copy = xstrdup(s);
	rc = parse_compact(copy, c, err, errlen);
	free(copy);
	return rc;
}

/* ---- formatting ----------------------------------------------------------- */

static int format_seeding(const struct noise_seed_cfg *s, char *buf, size_t len)
{
	if (s->kind == NOISE_SEED_HALT_ONE)
		return snprintf(buf, len, "%s", seeding_names[s->kind]);
	if (s->lo == s->hi)
		return snprintf(buf, len, "%s:%u", seeding_names[s->kind], s->lo);
	return snprintf(buf, len, "%s:%u-%u", seeding_names[s->kind], s->lo, s->hi);
}

static const char *rnd_name(enum noise_rnd r)
{
	switch (r) {
	case NOISE_RND_Y:
		return "rnd-y";
	case NOISE_RND_S10:
		return "rnd-s10";
	case NOISE_RND_S100:
		return "rnd-s100";
	default:
		return NULL;
	}
}

int noise_config_format(const struct noise_config *c, char *buf, size_t len)
{
	char seed[48], rd[48], wr[48];

	if (rnd_name(c->rnd))
		return snprintf(buf, len, "%s:%g", rnd_name(c->rnd), c->freq / 1000.0);
	format_seeding(&c->seed, seed, sizeof(seed));
	rd[0] = wr[0] = 0;
	if (c->placement == NOISE_PLACE_READ_WRITE) {
		strcpy(rd, ",read=");
		format_seeding(&c->read, rd + 6, sizeof(rd) - 6);
		strcpy(wr, ",write=");
		format_seeding(&c->write, wr + 7, sizeof(wr) - 7);
	}
	return snprintf(buf, len, "%s@%u/%s%s%s%s%s%s", noise_placement_name(c->placement), c->freq,
			seed, rd, wr, c->halt_one ? ",ht" : "", c->timeout_tamper ? ",tt" : "",
			c->exit_hold ? ",xh" : "");
}

static void json_seeding(struct json *j, const char *key, const struct noise_seed_cfg *s)
{
	json_obj_begin(j, key);
	json_kv_str(j, "kind", noise_seeding_name(s->kind));
	json_kv_uint(j, "strength_min", s->lo);
	json_kv_uint(j, "strength_max", s->hi);
	json_obj_end(j);
}

void noise_config_json(struct json *j, const char *key, const struct noise_config *c)
{
	char buf[160];

	noise_config_format(c, buf, sizeof(buf));
	json_obj_begin(j, key);
	json_kv_str(j, "string", buf);
	json_kv_str(j, "baseline", rnd_name(c->rnd));
	json_kv_str(j, "placement", noise_placement_name(c->placement));
	json_kv_uint(j, "freq_permille", c->freq);
	json_seeding(j, "seeding", &c->seed);
	if (c->placement == NOISE_PLACE_READ_WRITE) {
		json_seeding(j, "read", &c->read);
		json_seeding(j, "write", &c->write);
	}
	json_kv_bool(j, "halt_one", c->halt_one);
	json_kv_bool(j, "timeout_tamper", c->timeout_tamper);
	json_kv_bool(j, "exit_hold", c->exit_hold);
	json_obj_end(j);
}

/* ---- random configurations ------------------------------------------------ */

static void random_seeding(struct cs_rng *r, struct noise_seed_cfg *s, enum noise_seeding kind)
{
	const struct strength_ref *ref = &strength_refs[kind];

	s->kind = kind;
	s->lo = s->hi = (uint32_t)rng_range(r, ref->low, ref->high);
}

void noise_config_random(struct cs_rng *r, struct noise_config *c)
{
	static const enum noise_seeding basic[] = { NOISE_SEED_YIELD, NOISE_SEED_SLEEP,
						    NOISE_SEED_BUSYWAIT, NOISE_SEED_WAIT };

	memset(c, 0, sizeof(*c));
	c->placement = (enum noise_placement)rng_below(r, NOISE_PLACE__COUNT);
	/* seed 004: useful frequencies are 5-50 %. */
	c->freq = (uint32_t)rng_range(r, 50, 500);
	random_seeding(r, &c->seed, (enum noise_seeding)rng_below(r, NOISE_SEED__COUNT));
	random_seeding(r, &c->read, basic[rng_below(r, ARRAY_SIZE(basic))]);
	random_seeding(r, &c->write, basic[rng_below(r, ARRAY_SIZE(basic))]);
	if (c->placement != NOISE_PLACE_READ_WRITE)
		c->read = c->write = c->seed;
	c->halt_one = rng_chance(r, 0.25);
	c->timeout_tamper = rng_chance(r, 0.25);
}

/* ---- decisions ------------------------------------------------------------ */

void noise_run_begin(struct noise_run *r, const struct noise_config *c, uint64_t seed)
{
	memset(r, 0, sizeof(*r));
	r->cfg = *c;
	rng_seed(&r->rng, seed);
}

void noise_run_choose_var(struct noise_run *r, const uint64_t *vars, size_t n)
{
	if (!n)
		return;
	r->var = vars[rng_below(&r->rng, n)];
	r->var_chosen = true;
}

void noise_run_focus(struct noise_run *r, const uint64_t *vars, size_t n)
{
	if (!n || r->cfg.placement != NOISE_PLACE_SHAREDVAR_ONE)
		return;
	noise_run_choose_var(r, vars, n);
	r->focus = true;
}

/* Placement: may this visit get noise at all? */
static bool placement_eligible(struct noise_run *r, const struct noise_point *pt)
{
	bool access = pt->kind != NOISE_PT_SYNC;

	switch (r->cfg.placement) {
	case NOISE_PLACE_RANDOM_ALL:
	case NOISE_PLACE_READ_WRITE:
		return true;
	case NOISE_PLACE_SHAREDVAR_ALL:
		return access && pt->shared;
	case NOISE_PLACE_SHAREDVAR_ONE:
		if (!access || !pt->shared)
			return false;
		if (!r->var_chosen) {
			r->var = pt->var;
			r->var_chosen = true;
		}
		return pt->var == r->var;
	case NOISE_PLACE_PATTERN:
		return access && pt->repeat_in_function;
	case NOISE_PLACE_COVERAGE:
		return pt->coverage_target;
	default:
		return false;
	}
}

/* Frequency, per mille. The coverage placement lowers it as the site gets
 * hot (seed 004: "the more often a program location is executed, the lower
 * the probability"): freq / (1 + log2(1 + hits)). */
static bool frequency_fires(struct noise_run *r, const struct noise_point *pt)
{
	double p = r->cfg.freq / 1000.0;

	if (r->cfg.placement == NOISE_PLACE_COVERAGE)
		p /= 1.0 + log2(1.0 + (double)pt->site_hits);
	return rng_chance(&r->rng, p);
}

static const struct noise_seed_cfg *seeding_for(const struct noise_run *r,
						const struct noise_point *pt)
{
	if (r->cfg.placement != NOISE_PLACE_READ_WRITE)
		return &r->cfg.seed;
	if (pt->kind == NOISE_PT_READ)
		return &r->cfg.read;
	if (pt->kind == NOISE_PT_WRITE)
		return &r->cfg.write;
	return &r->cfg.seed;
}

static struct noise_decision seeding_action(struct noise_run *r, const struct noise_seed_cfg *s)
{
	static const enum noise_act mixed[] = { NOISE_ACT_YIELD, NOISE_ACT_SLEEP,
						NOISE_ACT_BUSYWAIT, NOISE_ACT_WAIT };
	int64_t n = rng_range(&r->rng, s->lo, s->hi);
	struct noise_decision d = { NOISE_ACT_NONE, n };

	switch (s->kind) {
	case NOISE_SEED_YIELD:
		d.act = NOISE_ACT_YIELD;
		break;
	case NOISE_SEED_SLEEP:
		d.act = NOISE_ACT_SLEEP;
		break;
	case NOISE_SEED_BUSYWAIT:
		d.act = NOISE_ACT_BUSYWAIT;
		break;
	case NOISE_SEED_WAIT:
		d.act = NOISE_ACT_WAIT;
		break;
	case NOISE_SEED_HALT_ONE:
		d.act = NOISE_ACT_HALT;
		d.n = 0;
		break;
	case NOISE_SEED_INVERSE:
		d.act = NOISE_ACT_INVERSE;
		break;
	case NOISE_SEED_PRIORITY:
		d.act = NOISE_ACT_PRIORITY;
		d.n = rng_chance(&r->rng, 0.5) ? n : -n;
		break;
	case NOISE_SEED_MIXED:
		d.act = mixed[rng_below(&r->rng, ARRAY_SIZE(mixed))];
		if (d.act == NOISE_ACT_YIELD)
			d.n = n / MIXED_US_PER_YIELD > 0 ? n / MIXED_US_PER_YIELD : 1;
		break;
	default: /* timeoutTamper: no noise at points */
		d.n = 0;
		break;
	}
	return d;
}

struct noise_decision noise_decide(struct noise_run *r, const struct noise_point *pt)
{
	struct noise_decision d = { NOISE_ACT_NONE, 0 };

	r->visits++;
	if (pt->exit && r->cfg.exit_hold) {
		/* The end of the process waits for every other thread: the
		 * workers a main that does not join them leaves behind run
		 * before the exit ends them. No draw: the rest of the run's
		 * decisions stay what they were without the hold. */
		d.act = NOISE_ACT_HALT;
		r->injected[d.act]++;
		return d;
	}
	if (!placement_eligible(r, pt))
		return d;
	r->eligible++;
	if (!frequency_fires(r, pt))
		return d;
	if (r->cfg.halt_one && rng_permille(&r->rng, HALT_ONE_PERMILLE))
		d.act = NOISE_ACT_HALT;
	else
		d = seeding_action(r, seeding_for(r, pt));
	r->injected[d.act]++;
	return d;
}

uint64_t noise_tamper_timeout(struct noise_run *r, uint64_t timeout_ns)
{
	uint32_t pct;

	if (r->cfg.seed.kind == NOISE_SEED_TIMEOUT)
		pct = (uint32_t)rng_range(&r->rng, r->cfg.seed.lo, r->cfg.seed.hi);
	else if (r->cfg.timeout_tamper)
		pct = TAMPER_DEFAULT_PCT;
	else
		return timeout_ns;
	/* Cut a uniform share of up to pct % off the program's timeout. */
	return timeout_ns - rng_below(&r->rng, timeout_ns / 100 * pct + 1);
}
