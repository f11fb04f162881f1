// SPDX-License-Identifier: MIT
/*
 * `run --access` (access.c): what the estimation runs found. The shared
 * variables and the sites that touched them, the sites later runs probe,
 * the MAP domain estimate stored as the campaign's "map" requirements, the
 * variables written by one thread and read by another (strat_point.cross:
 * where pct --access draws its change points), and what an exploration
 * run (a run probing every candidate) adds.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "run/access.h"
#include "run/access_state.h"
#include "coverage/map_patterns.h"
#include "results/store.h"
#include "lib/log.h"
#include "lib/xalloc.h"

/* Did two threads execute this access site (estimation)? */
static bool site_multi(const struct access_campaign *ac, uint32_t site)
{
	const uint64_t *slot = cov_event_u64map_get(&ac->site_threads, site);

	return slot && (*slot >> 32);
}

static bool precedes(void *order, uint32_t s, uint32_t t)
{
	return map_patterns_site_order_precedes(order, s, t);
}

/* The locks held at every estimation access of a site (NULL: not seen). */
static const struct cov_lockset *site_held(const struct access_campaign *ac, uint32_t site)
{
	const uint64_t *slot = cov_event_u64map_get(&ac->site_held, site);

	return slot ? &ac->site_locks[*slot] : NULL;
}

/* May a write at site w and a read at site r be made by two threads, in
 * no fork/join order, with no lock in common? A site the estimation runs
 * did not execute (a static site) may be any thread's, under no lock. */
static bool cross_pair(const struct access_campaign *ac, struct map_site_order *order, uint32_t w,
		       uint32_t r)
{
	const uint64_t *tw = cov_event_u64map_get(&ac->site_threads, w);
	const uint64_t *tr = cov_event_u64map_get(&ac->site_threads, r);
	const struct cov_lockset *lw = site_held(ac, w), *lr = site_held(ac, r);

	if (w == r && !site_multi(ac, w))
		return false;
	if (w != r && tw && tr && !(*tw >> 32) && !(*tr >> 32) && (uint32_t)*tw == (uint32_t)*tr)
		return false; /* one thread made both */
	if (order && (precedes(order, w, r) || precedes(order, r, w)))
		return false;
	return !lw || !lr || !cov_event_lockset_meets(lw, lr);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The shared variables written by one thread and read by another (pairs
 * of sites as cross_pair says), their ids and their accesses per
 * estimation run: the strategies' strat_point.cross and
 * strat_campaign.cross_vars, cross_var_ids (ascending, so that a choice
 * among them depends on the seed, not on the order the estimation met
 * them). */
static void mark_cross_vars(struct campaign *c, struct access_campaign *ac)
{
	struct map_site_order *order = NULL;
	uint64_t accesses = 0;
	size_t i;

	if (ac->norder)
		order = map_patterns_site_order_build(ac->order_events, ac->norder);
	ac->ncross_vars = 0;
	for (i = 0; i < ac->nvars; i++) {
		struct acc_var *v = &ac->vars[i];

		for (uint32_t w = 0; v->shared && !v->cross && w < v->nwrites; w++)
			for (uint32_t q = 0; !v->cross && q < v->nreads; q++)
				v->cross = cross_pair(ac, order, v->writes[w], v->reads[q]);
		if (!v->cross)
			continue;
		ac->cross_ids = xrealloc(ac->cross_ids, (ac->ncross_vars + 1) * sizeof(uint32_t));
		ac->cross_ids[ac->ncross_vars++] = (uint32_t)v->id;
		accesses += v->est_accesses;
		log_debug("access: variable %s (v%" PRId64
			  ") is written by one thread and read by another (%" PRIu64
			  " accesses in the estimation runs)",
			  v->name, v->id, v->est_accesses);
	}
	map_patterns_site_order_free(order);
	if (ac->ncross_vars)
		qsort(ac->cross_ids, ac->ncross_vars, sizeof(uint32_t), cmp_u32);
	c->sc.cross_vars = ac->ncross_vars;
	c->sc.cross_var_ids = ac->cross_ids;
	c->sc.est_cross_accesses = ac->est_runs ? accesses / ac->est_runs : 0;
}

static void estimate_domain(struct campaign *c, struct access_campaign *ac)
{
	struct map_var_sites *vs = xcalloc(ac->nvars ? ac->nvars : 1, sizeof(*vs));
	struct map_site_order *order = NULL;
	struct cov_taskset keys;
	size_t n = 0, i;

	for (i = 0; i < ac->nvars; i++) {
		const struct acc_var *v = &ac->vars[i];

		if (!v->shared)
			continue;
		vs[n++] = (struct map_var_sites){ .var = (uint32_t)v->id,
						  .reads = v->reads,
						  .nreads = v->nreads,
						  .writes = v->writes,
						  .nwrites = v->nwrites };
	}
	ac->domain = map_patterns_domain_formula(vs, n);
	if (ac->norder)
		order = map_patterns_site_order_build(ac->order_events, ac->norder);
	/* Every pattern has a write step and one of another thread: a
	 * variable whose writes are all ordered (program order, create,
	 * join) with all its other accesses can complete none. */
	for (i = 0; i < ac->nvars; i++) {
		struct acc_var *v = &ac->vars[i];

		for (uint32_t w = 0; v->shared && !v->steer && w < v->nwrites; w++) {
			for (uint32_t q = 0; !v->steer && q < v->nreads + v->nwrites; q++) {
				uint32_t o = q < v->nreads ? v->reads[q] : v->writes[q - v->nreads];

				if (o == v->writes[w]) /* two threads at one site */
					v->steer = site_multi(ac, o);
				else
					v->steer = !order || (!map_patterns_site_order_precedes(
								      order, v->writes[w], o) &&
							      !map_patterns_site_order_precedes(
								      order, o, v->writes[w]));
			}
		}
		ac->nsteer += v->steer;
		if (v->shared)
			log_debug(
				"map: variable %s (v%" PRId64 "): %u read sites, %u write sites%s",
				v->name, v->id, v->nreads, v->nwrites, v->steer ? ", steered" : "");
	}
	cov_event_taskset_init(&keys);
	if (ac->domain <= ACCESS_MAX_REQUIREMENTS * 4ULL) {
		ac->domain_hb =
			map_patterns_domain_estimate(vs, n, order ? precedes : NULL, order, &keys);
		if (keys.count <= ACCESS_MAX_REQUIREMENTS)
			for (i = 0; i < keys.count; i++) {
				char *k = access_stable_key(ac, keys.keys[i]);

				if (store_add_requirement(c->st, "map", k, "map-estimate") == 0)
					ac->requirements++;
				free(k);
			}
	} else {
		ac->domain_hb = ac->domain;
	}
	cov_event_taskset_free(&keys);
	map_patterns_site_order_free(order);
	free(vs);
}

/* Sites whose operand names a global statically (rip-relative: the
 * address is in the instruction) join the variable's sites even when the
 * estimation runs did not execute them: a branch they skipped. */
static void static_sites(struct campaign *c, struct access_campaign *ac)
{
	size_t i;

	for (i = 0; i < ac->set.n; i++) {
		const struct mem_site *s = &ac->set.sites[i];
		uint64_t ea = s->vaddr - (s->offset - s->probe_offset) + (uint64_t)s->decode.disp;
		struct sym_site ss;
		struct acc_var *v;
		int64_t id;
		uint32_t site;

		if (!(s->decode.flags & CS_ACC_RIP) ||
		    symbolize_resolve_vaddr(s->object, ea, &ss) || !ss.object || !ss.symbol ||
		    ss.is_func)
			continue;
		id = access_key_site(c, ss.object, ss.offset - ss.sym_offset);
		v = id > 0 && id <= UINT32_MAX ? access_var_find(ac, (uint32_t)id) : NULL;
		if (!v || !v->shared)
			continue;
		site = access_cand_site(ac, c, (uint32_t)i);
		if (!site)
			continue;
		if (s->decode.flags & CS_ACC_READ)
			access_add_site(&v->reads, &v->nreads, site);
		if (s->decode.flags & CS_ACC_WRITE)
			access_add_site(&v->writes, &v->nwrites, site);
	}
}

/* The sites that touch a shared variable join the probed set (and never
 * leave it); how many joined. */
static size_t mark_shared_sites(struct access_campaign *ac)
{
	size_t i, j, added = 0;

	ac->nshared_vars = 0;
	for (j = 0; j < ac->nvars; j++)
		ac->nshared_vars += ac->vars[j].shared;
	for (i = 0; i < ac->set.n; i++) {
		uint32_t id = ac->site_id[i] > 0 ? (uint32_t)ac->site_id[i] : 0;

		if (ac->shared_site[i])
			continue;
		for (j = 0; id && j < ac->nvars && !ac->shared_site[i]; j++) {
			const struct acc_var *v = &ac->vars[j];

			if (!v->shared)
				continue;
			for (uint32_t q = 0; q < v->nreads && !ac->shared_site[i]; q++)
				ac->shared_site[i] = v->reads[q] == id;
			for (uint32_t q = 0; q < v->nwrites && !ac->shared_site[i]; q++)
				ac->shared_site[i] = v->writes[q] == id;
		}
		added += ac->shared_site[i];
	}
	ac->nshared_sites += added;
	return added;
}

/* Every estimation run has ended: the shared variables, the sites later
 * runs probe, the MAP domain. */
void access_campaign_estimated(struct campaign *c)
{
	struct access_campaign *ac = c->acc;

	static_sites(c, ac);
	mark_shared_sites(ac);
	estimate_domain(c, ac);
	mark_cross_vars(c, ac);
	if (!c->o->json || c->tty) {
		fprintf(stderr,
			"concsched: access: %zu candidate sites, %zu attached in %.1f ms; %" PRIu64
			" accesses in %u estimation run%s (%" PRIu64
			" dropped); %zu shared variable%s, "
			"%zu site%s on them (probed from now on), %zu written by one thread and "
			"read by another\n",
			ac->set.n, ac->est_attached, ac->est_attach_ns / 1e6 / ac->est_runs,
			ac->est_accesses, ac->est_runs, ac->est_runs == 1 ? "" : "s",
			ac->est_dropped, ac->nshared_vars, ac->nshared_vars == 1 ? "" : "s",
			ac->nshared_sites, ac->nshared_sites == 1 ? "" : "s", ac->ncross_vars);
		fprintf(stderr,
			"concsched: map: domain estimate %" PRIu64 " (%" PRIu64
			" after happens-before pruning), %zu stored as requirements\n",
			ac->domain, ac->domain_hb, ac->requirements);
	}
	if (!ac->nshared_sites)
		log_warn("--access: no shared variable found: the runs probe no access%s until an "
			 "exploration run (every candidate probed, runs 4, 8, ... 32, then every "
			 "%u) finds one",
			 strategy_has(c->o->strat, STRAT_F_ACCESS_POINTS) ? " and steer none" : "",
			 ACCESS_EXPLORE_LATER);
	if (!ac->nshared_sites && ac->est_cut_s > 0)
		log_warn("--access: the estimation run reached the %g s run timeout, where its "
			 "access probes stopped: the threads may not have shared anything yet (a "
			 "longer --run-timeout lets it see more)",
			 ac->est_cut_s);
	c->sc.contended_vars = ac->nsteer;
	c->sc.est_accesses = ac->est_runs ? ac->est_accesses / ac->est_runs : 0;
	c->sc.est_dropped = ac->est_runs ? ac->est_dropped / ac->est_runs : 0;
}

/* An exploration run has ended (in its transaction): what it found shared
 * is probed from now on. */
void access_estimate_explored(struct campaign *c, struct access_campaign *ac)
{
	size_t vars = ac->nshared_vars, added;

	static_sites(c, ac);
	added = mark_shared_sites(ac);
	ac->explored++;
	if (!added)
		return;
	mark_cross_vars(c, ac);
	ac->explored_new++;
	if (!c->o->json || c->tty)
		fprintf(stderr,
			"concsched: access: exploration run %" PRId64
			" (every candidate probed) found %zu more shared variable%s, %zu more "
			"site%s on them (probed from now on)\n",
			c->nruns, ac->nshared_vars - vars, ac->nshared_vars - vars == 1 ? "" : "s",
			added, added == 1 ? "" : "s");
}
