// SPDX-License-Identifier: MIT
/*
 * `run --access` (access.c): a run's commit. Every metric's tasks go to
 * the store with ids written as store references, the race and lock-order
 * warnings become warnings (named by their variables, sites and locksets,
 * minus the suppressed), and the campaign's end prints its summary.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "run/access.h"
#include "run/access_state.h"
#include "lib/json.h"
#include "coverage/races.h"
#include "results/store.h"
#include "lib/log.h"
#include "lib/xalloc.h"

/* "name (file:line)" of a store site for warnings. */
static void site_text(struct store *st, int64_t id, char *buf, size_t len)
{
	struct store_site s;

	if (store_get_site(st, id, &s)) {
		snprintf(buf, len, "@%" PRId64, id);
		return;
	}
	if (s.function && s.file)
		snprintf(buf, len, "%s (%s:%d)", s.function,
			 strrchr(s.file, '/') ? strrchr(s.file, '/') + 1 : s.file, s.line);
	else if (s.function)
		snprintf(buf, len, "%s", s.function);
	else
		snprintf(buf, len, "%s+0x%" PRIx64,
			 strrchr(s.object, '/') ? strrchr(s.object, '/') + 1 : s.object, s.offset);
}

static void var_name(struct access_campaign *ac, struct store *st, uint32_t id, char *buf,
		     size_t len)
{
	const struct acc_var *v = access_var_find(ac, id);

	if (v && v->name)
		snprintf(buf, len, "%s", v->name);
	else
		site_text(st, id, buf, len);
}

/* The variable of a race and the element the racing access touched, by
 * its byte offset (the element size of an array of structs is not known
 * without its type): "counter", "acc_array+0x18", "heap block allocated
 * at f+0x1d (x.c:10) +0x18". */
static void race_var_text(struct access_campaign *ac, struct store *st, uint32_t id,
			  const struct race_access *a, char *buf, size_t len)
{
	const struct acc_var *v = access_var_find(ac, id);
	size_t n;

	var_name(ac, st, id, buf, len);
	n = strlen(buf);
	if (v && a->var_off && n + 24 < len)
		snprintf(buf + n, len - n, "%s+0x%x", v->heap ? " " : "", a->var_off);
}

/* One warning per pair of sites in a campaign: later runs name the
 * variable as the first warning did, so the report counts them as one. */
static const char *race_pair_text(struct access_campaign *ac, uint32_t s1, uint32_t s2,
				  const char *text)
{
	bool created;
	uint64_t *slot =
		cov_event_u64map_put(&ac->race_pairs, (uint64_t)s1 << 32 | s2, 0, &created);

	if (created) {
		ac->race_names =
			xrealloc(ac->race_names, (ac->nrace_names + 1) * sizeof(*ac->race_names));
		ac->race_names[ac->nrace_names++] = xstrdup(text);
		*slot = ac->nrace_names;
	}
	return ac->race_names[*slot - 1];
}

/* Does a suppression (the defaults, --suppressions) match either site? */
static bool race_suppressed(struct access_campaign *ac, struct store *st, int64_t s1, int64_t s2)
{
	struct store_site a = { 0 }, b = { 0 };
	struct suppress_frame fa = { 0 };
	const char *by = NULL;

	/* store_get_site's strings last until its next call: a's are copied. */
	if (!ac->supp || store_get_site(st, s1, &a))
		return false;
	fa.function = a.function ? xstrdup(a.function) : NULL;
	fa.file = a.file ? xstrdup(a.file) : NULL;
	fa.object = a.object ? xstrdup(a.object) : NULL;
	if (!store_get_site(st, s2, &b))
		by = suppress_race(ac->supp, &fa,
				   &(struct suppress_frame){ b.function, b.file, b.object });
	free((char *)fa.function);
	free((char *)fa.file);
	free((char *)fa.object);
	if (!by)
		return false;
	log_debug("race between @%" PRId64 " and @%" PRId64 " suppressed by %s", s1, s2, by);
	ac->suppressed++;
	return true;
}

static void lockset_text(struct store *st, const struct cov_lockset *ls, char *buf, size_t len)
{
	size_t off = 0;
	char name[512];

	off += snprintf(buf + off, len - off, "{");
	for (uint32_t i = 0; i < ls->n && off < len; i++) {
		site_text(st, ls->id[i], name, sizeof(name));
		off += snprintf(buf + off, len - off, "%s%s", i ? ", " : "", name);
	}
	if (off < len)
		snprintf(buf + off, len - off, "}");
}

/* ", N of M synchronization events lost (...)", or "" */
static const char *sync_lost_text(const struct access_campaign *ac)
{
	static char buf[160];

	if (!ac->sync_lost)
		return "";
	snprintf(buf, sizeof(buf),
		 ", %" PRIu64 " of %" PRIu64 " synchronization events lost (the race analysis "
		 "forgot the accesses before each loss)",
		 ac->sync_lost, ac->sync_events);
	return buf;
}

/* " (N race warnings suppressed)", or "" */
static const char *suppressed_text(const struct access_campaign *ac)
{
	static char buf[64];

	if (!ac->suppressed)
		return "";
	snprintf(buf, sizeof(buf), " (%" PRIu64 " race warning%s suppressed)", ac->suppressed,
		 ac->suppressed == 1 ? "" : "s");
	return buf;
}

void access_campaign_end(struct campaign *c)
{
	struct access_campaign *ac = c->acc;
	size_t i;

	if (!ac)
		return;
	if (ac->nshared_sites && (!c->o->json || c->tty) && c->nruns)
		fprintf(stderr,
			"concsched: access: %zu sites attached per run (%.2f ms on average), "
			"%" PRIu64 " accesses (%" PRIu64 " dropped), %" PRIu64
			" race/lock-order warnings%s%s\n",
			ac->attached_last, ac->attach_ns_total / 1e6 / (double)c->nruns,
			ac->accesses, ac->dropped, ac->warnings, suppressed_text(ac),
			sync_lost_text(ac));
	if (ac->explored && (!c->o->json || c->tty))
		fprintf(stderr,
			"concsched: access: %u exploration run%s (every candidate probed), %u "
			"found more shared variables; %zu shared variables, %zu sites probed at "
			"the end\n",
			ac->explored, ac->explored == 1 ? "" : "s", ac->explored_new,
			ac->nshared_vars, ac->nshared_sites);
	if (ac->unsteered && (!c->o->json || c->tty))
		fprintf(stderr,
			"concsched: access: %" PRIu64
			" hits went on unsteered past the steering cap "
			"(%" PRIu64 " per site and run, then 1 in %u; --steer-cap; the report's "
			"unsteered warnings name the sites)\n",
			ac->unsteered, c->o->steer_cap, STEER_SAMPLE);
	if (ac->capped && (!c->o->json || c->tty))
		fprintf(stderr,
			"concsched: access: sites went past the probe cap %" PRIu64
			" time%s in %" PRIu64 " run%s (%" PRIu64
			" hits probed per thread, site and run, later ones not seen; a site's "
			"uprobe goes once it is closed; --probe-cap; the report's unprobed "
			"warnings name the sites)\n",
			ac->capped, ac->capped == 1 ? "" : "s", ac->capped_runs,
			ac->capped_runs == 1 ? "" : "s", c->o->probe_cap);
	if (ac->budget_runs && (!c->o->json || c->tty))
		fprintf(stderr,
			"concsched: access: the probe budget (%" PRIu64
			" hits a run) was spent in %" PRIu64 " run%s, which closed %" PRIu64
			" hot sites at once (--probe-budget)\n",
			c->o->probe_budget, ac->budget_runs, ac->budget_runs == 1 ? "" : "s",
			ac->budget_closed);
	for (i = 0; i < ac->nvars; i++) {
		free(ac->vars[i].reads);
		free(ac->vars[i].writes);
		free(ac->vars[i].name);
	}
	free(ac->vars);
	cov_event_u64map_free(&ac->var_index);
	cov_event_u64map_free(&ac->site_threads);
	cov_event_u64map_free(&ac->site_held);
	free(ac->site_locks);
	free(ac->cross_ids);
	cov_event_u64map_free(&ac->race_pairs);
	suppress_free(ac->supp);
	for (i = 0; i < ac->nrace_names; i++)
		free(ac->race_names[i]);
	free(ac->race_names);
	for (i = 0; i < ac->npaths; i++)
		free(ac->paths[i]);
	free(ac->paths);
	free(ac->order_events);
	free(ac->site_id);
	free(ac->est_site_hits);
	free(ac->func_id);
	free(ac->shared_site);
	site_finder_set_free(&ac->set);
	for (i = 0; i < ac->ninc; i++)
		free(ac->inc[i]);
	for (i = 0; i < ac->nexc; i++)
		free(ac->exc[i]);
	for (i = 0; i < ac->nobjs; i++)
		free(ac->objs[i]);
	free(ac->inc);
	free(ac->exc);
	free(ac->objs);
	free(ac);
	c->acc = NULL;
	c->sess.aset = NULL;
}

/* The sites whose hits went past the steering cap in this run: an
 * "unsteered" warning each, so the report says what was not steered. */
static void unsteered_sites(struct campaign *c, struct onerun *r, struct access_campaign *ac)
{
	uint64_t cap = c->o->steer_cap, n = access_probes_stat(&r->sess->ap, CS_ASTAT_UNSTEERED);
	char what[160];
	size_t i;

	if (!n || !cap || !r->steer)
		return;
	ac->unsteered += n;
	snprintf(what, sizeof(what),
		 "hits past the steering cap (%" PRIu64 " steered per run, then 1 in %u)", cap,
		 STEER_SAMPLE);
	for (i = 0; i < ac->set.n; i++) {
		int64_t site;

		if (!ac->shared_site[i] || access_probes_site_hits(&r->sess->ap, i) <= cap)
			continue;
		site = access_cand_site(ac, c, (uint32_t)i);
		store_record_warning(c->st, "unsteered", what, site ? &site : NULL, site ? 1 : 0,
				     NULL, NULL);
	}
}

/* The sites where a thread went past the probe cap in this run: an
 * "unprobed" warning each, so the report says what was not seen. */
static void unprobed_sites(struct campaign *c, struct onerun *r, struct access_campaign *ac)
{
	uint64_t cap = r->sess->probe_cap, n = 0, budget;
	char what[200];
	size_t i;

	if (!cap || !access_probes_stat(&r->sess->ap, CS_ASTAT_UNPROBED))
		return;
	snprintf(what, sizeof(what),
		 "hits past the probe cap (%" PRIu64
		 " probed per thread and run; then its uprobe is taken away): not seen, not "
		 "steered",
		 cap);
	for (i = 0; i < ac->set.n; i++) {
		int64_t site;

		if (access_probes_site_cap(&r->sess->ap, i) == ACCESS_CAP_NONE)
			continue;
		n++;
		site = access_cand_site(ac, c, (uint32_t)i);
		store_record_warning(c->st, "unprobed", what, site ? &site : NULL, site ? 1 : 0,
				     NULL, NULL);
	}
	budget = access_probes_stat(&r->sess->ap, CS_ASTAT_BUDGET);
	log_debug("run: %" PRIu64 " access sites past the probe cap, %" PRIu64 " closed (%" PRIu64
		  " by the probe budget); %" PRIu64
		  " hits past it trapped before their uprobes went, of %" PRIu64 " hits",
		  n, access_probes_stat(&r->sess->ap, CS_ASTAT_CAPPED), budget,
		  access_probes_stat(&r->sess->ap, CS_ASTAT_UNPROBED),
		  access_probes_stat(&r->sess->ap, CS_ASTAT_HITS));
	ac->capped += n;
	ac->capped_runs += n > 0;
	ac->budget_closed += budget;
	ac->budget_runs += budget > 0;
}

/* Store the run's tasks and warnings (inside the run's transaction). */
void access_run_commit(struct campaign *c, struct onerun *r)
{
	struct access_run *ar = r->acc;
	struct access_campaign *ac;
	struct race_detector *rd;
	const struct cov_taskset *dl;
	size_t i, m;

	if (!ar)
		return;
	ac = ar->ac;
	ac->accesses += ar->accesses;
	ac->dropped += access_probes_stat(&r->sess->ap, CS_ASTAT_DROPPED);
	ac->sync_lost += ar->sync_lost;
	ac->sync_events += r->tm.events + ar->sync_lost;
	unsteered_sites(c, r, ac);
	unprobed_sites(c, r, ac);
	ac->attach_ns_total += r->sess->ap.attach_ns;
	ac->attached_last = r->sess->ap.attached;
	for (m = 0; m < COV__COUNT; m++) {
		const struct cov_taskset *ts;

		/* The sync probes' own "sync" metric is stored already. */
		if (m == COV_SYNC)
			continue;
		ts = metrics_tasks(ar->m, (enum cov_metric)m);
		for (i = 0; i < ts->count; i++) {
			char *k = access_stable_key(ac, ts->keys[i]);

			store_cover_task(c->st, metrics_metric_name((enum cov_metric)m), k,
					 ts->hits[i]);
			free(k);
		}
	}
	rd = metrics_races(ar->m);
	for (i = 0; i < races_warning_count(rd); i++) {
		const struct race_warning *w = races_warning_get(rd, i);
		/* The pair in site order: one warning whichever came first. */
		bool swap = w->second.site < w->first.site;
		const struct race_access *a = swap ? &w->second : &w->first;
		const struct race_access *b = swap ? &w->first : &w->second;
		int64_t sites[2] = { a->site, b->site };
		char var[600], threads[256], l1[512], l2[512], locks[1100];

		if (race_suppressed(ac, c->st, a->site, b->site))
			continue;
		race_var_text(ac, c->st, w->var, &w->second, var, sizeof(var));
		snprintf(threads, sizeof(threads), "%s %s, %s %s",
			 a->thread < ac->npaths ? ac->paths[a->thread] : "?",
			 cov_event_op_writes(a->op) ? "writes" : "reads",
			 b->thread < ac->npaths ? ac->paths[b->thread] : "?",
			 cov_event_op_writes(b->op) ? "writes" : "reads");
		lockset_text(c->st, &a->held, l1, sizeof(l1));
		lockset_text(c->st, &b->held, l2, sizeof(l2));
		snprintf(locks, sizeof(locks), "%s, %s", l1, l2);
		store_record_warning(c->st, "race", race_pair_text(ac, a->site, b->site, var),
				     sites, 2, threads, locks);
		ac->warnings++;
	}
	dl = metrics_deadlocks(ar->m);
	for (i = 0; i < dl->count; i++) {
		unsigned a, b;
		char n1[512], n2[512], locks[1100];

		if (sscanf(dl->keys[i], "deadlock l%u l%u", &a, &b) != 2)
			continue;
		site_text(c->st, a, n1, sizeof(n1));
		site_text(c->st, b, n2, sizeof(n2));
		snprintf(locks, sizeof(locks), "%s, %s (taken in both orders)", n1, n2);
		store_record_warning(c->st, "lock-order", n1, NULL, 0, NULL, locks);
		ac->warnings++;
	}
	if (ar->explore)
		access_estimate_explored(c, ac);
}

void access_run_fitness(const struct onerun *r, double *wgoldilock_sc, uint64_t *warnings)
{
	const struct access_run *ar = r->acc;

	*wgoldilock_sc = 0;
	*warnings = 0;
	if (!ar || ar->estimate)
		return;
	*wgoldilock_sc = (double)metrics_wgoldilock(ar->m);
	*warnings = races_warning_count(metrics_races(ar->m)) + metrics_deadlocks(ar->m)->count;
}

char *access_run_config_counted(const struct onerun *r, char *cfg)
{
	struct access_probes *ap = r->sess ? &r->sess->ap : NULL;
	const char *end = cfg ? strrchr(cfg, '}') : NULL;
	struct json_mem m;
	char *counts, *out;

	if (!r->acc || !ap || !r->sess->ap_open || !end)
		return cfg;
	json_mem_open(&m);
	json_obj_begin(&m.j, NULL);
	json_kv_uint(&m.j, "hits", access_probes_stat(ap, CS_ASTAT_HITS));
	json_kv_uint(&m.j, "events", access_probes_stat(ap, CS_ASTAT_EVENTS));
	json_kv_uint(&m.j, "unprobed", access_probes_stat(ap, CS_ASTAT_UNPROBED));
	json_kv_uint(&m.j, "closed", access_probes_stat(ap, CS_ASTAT_CAPPED));
	json_kv_uint(&m.j, "budget_closed", access_probes_stat(ap, CS_ASTAT_BUDGET));
	json_obj_end(&m.j);
	counts = json_mem_close(&m);
	out = xasprintf("%.*s,\"access_probes\":%s}", (int)(end - cfg), cfg, counts);
	free(counts);
	free(cfg);
	return out;
}

/* The run's access configuration, for its strategy JSON (replay). */
void access_run_config_json(const struct campaign *c, const struct onerun *r, struct json *j)
{
	const struct run_opts *o = c->o;
	const struct access_campaign *ac = c->acc;
	char *mask;
	size_t i;

	if (!ac)
		return;
	json_obj_begin(j, "access");
	json_arr_begin(j, "include");
	for (i = 0; i < o->sites.ninclude; i++)
		json_kv_str(j, NULL, o->sites.include[i]);
	json_arr_end(j);
	json_arr_begin(j, "exclude");
	for (i = 0; i < o->sites.nexclude; i++)
		json_kv_str(j, NULL, o->sites.exclude[i]);
	json_arr_end(j);
	json_arr_begin(j, "objects");
	for (i = 0; i < o->nsite_objects; i++)
		json_kv_str(j, NULL, o->site_objects[i]);
	json_arr_end(j);
	json_kv_uint(j, "candidates", ac->set.n);
	json_kv_uint(j, "steer_cap", o->steer_cap);
	json_kv_uint(j, "probe_cap", o->probe_cap);
	json_kv_uint(j, "probe_budget", o->probe_budget);
	if (r->acc && r->acc->explore)
		json_kv_bool(j, "explore", true);
	if (r->acc && r->acc->mask)
		json_kv_uint(j, "rotated_out", r->acc->rotated_out);
	/*
	 * What the run probed (access_run_mask). An estimation run never
	 * gets here (campaign/campaign.c run_observe_access makes it no
	 * configuration and stores no run), but would record every
	 * candidate, as it probes ("0-N"), for a replay to probe. A run with
	 * no access probes (r->acc NULL: a portfolio synchronization arm's,
	 * or a test run while no site is shared) records none (""), and its
	 * replay probes none.
	 */
	mask = r->acc ? access_mask_format(access_run_mask(r->acc), ac->set.n) : xstrdup("");
	json_kv_str(j, "sites", mask);
	free(mask);
	json_obj_end(j);
}
