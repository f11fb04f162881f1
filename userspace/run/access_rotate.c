// SPDX-License-Identifier: MIT
/*
 * `run --access` (access.c): the probe rotation. A test run leaves out the
 * sites of a shared variable the estimation found hot (more accesses an
 * estimation run than a share of the probe budget) except in one run of
 * every few (access.h: ACCESS_ROTATE_SHARE, ACCESS_ROTATE_MAX), which runs
 * from the campaign seed and the variable: each hit at a probed site is a
 * trap, and one hot variable spent a run's budget (lbzip2's work block,
 * docs/studies/probe-budget-2026-11-29.md). All of a variable's sites go
 * together, so a racing pair stays probed; the run's "sites" records the
 * set, and a replay probes it again.
 */
#include <inttypes.h>

#include "run/access.h"
#include "run/access_state.h"
#include "lib/log.h"
#include "lib/rng.h"
#include "lib/xalloc.h"

unsigned access_rotate_period(uint64_t accesses, uint64_t share)
{
	uint64_t p;

	if (!share || accesses <= share)
		return 1;
	p = (accesses + share - 1) / share;
	return p > ACCESS_ROTATE_MAX ? ACCESS_ROTATE_MAX : (unsigned)p;
}

bool access_rotate_chosen(uint64_t seed, uint64_t var, uint64_t run, unsigned period)
{
	if (period <= 1)
		return true;
	return (run + rng_derive(seed, var) % period) % period == 0;
}

/* A variable's sites' hits in the estimation runs (the trap count of each
 * of its sites, whatever variable it touched: a site is probed whole). */
static uint64_t var_hits(const struct acc_var *v, const struct cov_u64map *hits)
{
	uint64_t n = 0;

	for (uint32_t q = 0; q < v->nreads + v->nwrites; q++) {
		const uint64_t *h = cov_event_u64map_get(
			hits, q < v->nreads ? v->reads[q] : v->writes[q - v->nreads]);

		n += h ? *h : 0;
	}
	return n;
}

bool *access_rotate_mask(const struct campaign *c, uint64_t run, bool explore, size_t *out)
{
	const struct access_campaign *ac = c->acc;
	uint64_t share = c->o->probe_cap ? c->o->probe_budget / ACCESS_ROTATE_SHARE : 0;
	struct cov_u64map keep, drop, hits;
	bool *mask = NULL;
	size_t i;

	*out = 0;
	if (!share || !ac->est_runs || !ac->nshared_sites)
		return NULL;
	cov_event_u64map_init(&keep);
	cov_event_u64map_init(&drop);
	cov_event_u64map_init(&hits);
	for (i = 0; ac->est_site_hits && i < ac->set.n; i++)
		if (ac->site_id[i] > 0)
			*cov_event_u64map_put(&hits, (uint64_t)ac->site_id[i], 0, NULL) +=
				ac->est_site_hits[i];
	for (i = 0; i < ac->nvars; i++) {
		const struct acc_var *v = &ac->vars[i];
		uint64_t n = var_hits(v, &hits) / ac->est_runs;
		struct cov_u64map *m;
		unsigned period;
		bool chosen;

		if (!v->shared)
			continue;
		if (n < v->est_accesses / ac->est_runs)
			n = v->est_accesses / ac->est_runs;
		period = access_rotate_period(n, share);
		chosen = access_rotate_chosen(c->o->seed, (uint64_t)v->id, run, period);
		m = chosen ? &keep : &drop;
		*out += !chosen;
		if (!chosen)
			log_debug("access: run %" PRIu64 " leaves variable %s (v%" PRId64
				  ", %" PRIu64 " hits an estimation run) unprobed: "
				  "probed in one run of %u",
				  run, v->name, v->id, n, period);
		for (uint32_t q = 0; q < v->nreads + v->nwrites; q++)
			cov_event_u64map_put(
				m, q < v->nreads ? v->reads[q] : v->writes[q - v->nreads], 1, NULL);
	}
	if (*out) {
		mask = xcalloc(ac->set.n, sizeof(*mask));
		for (i = 0; i < ac->set.n; i++) {
			uint64_t id = ac->site_id[i] > 0 ? (uint64_t)ac->site_id[i] : 0;

			mask[i] = (explore || ac->shared_site[i]) &&
				  (!id || cov_event_u64map_get(&keep, id) ||
				   !cov_event_u64map_get(&drop, id));
		}
	}
	cov_event_u64map_free(&keep);
	cov_event_u64map_free(&drop);
	cov_event_u64map_free(&hits);
	return mask;
}
