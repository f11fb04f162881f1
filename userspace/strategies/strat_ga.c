// SPDX-License-Identifier: MIT
/*
 * Strategy ga[:RUNS[,POP]]: seed 004's search over noise configurations
 * (TNCS, ALGORITHMS.md section 7) on the contract, around the engine of
 * ga.c.
 *
 * An individual is a noise configuration as a genome (ga_noise_spec). The
 * campaign evaluates the population one individual at a time: each is run
 * RUNS times (default 5, the paper's) as a plain noise configuration (the
 * noise strategy inside does the steering, at synchronization points and
 * at the probed accesses), and its fitness is the mean over those runs of
 * seed 004's (WGoldiLockSC + 1000 warnings + 10000 failures) / time_ms.
 * Once every individual of a generation has its fitness, ga_next_generation
 * breeds the next (elites re-evaluated). WGoldiLockSC and the race warnings
 * come from the access probes, and most placements act at accesses, so ga
 * implies --access.
 *
 * The search covers what run can apply: the seedings yield, sleep,
 * busyWait, wait and haltOneThread (inverseNoise, priority and
 * timeoutTamper need thread priorities or the program's own timeouts, and
 * mixed is left out), over every placement. The engine is seeded with the
 * campaign seed and each run's noise with the run's seed, so a campaign is
 * deterministic from its seed up to what the program's timing changes in
 * the fitness. Each run's configuration records "noise" and "ga":
 * {"generation", "individual", "run"}; its note (strategy_notes) the run's
 * fitness, and the run that completes a generation the generation's best
 * and mean fitness and the best configuration so far, which the report
 * prints. docs/strategies.md "ga".
 *
 * Runs at once (run -j, STRAT_F_JOBS): each run keeps which individual of
 * which generation it evaluates (struct ga_run, around the inner noise
 * strategy's per-run state), and its end credits its fitness to that
 * individual. A run begins on the first individual whose evaluation still
 * lacks runs, counting those in flight; when every remaining one has its
 * runs in flight, on the one with the fewest (it stands in for a run that
 * does not run). The first RUNS runs of an individual to end make its
 * evaluation; a run that ends after that, or after its generation was
 * bred, is left out ("discarded" in its note). One run at a time, the runs
 * and their fitness are the ones of an evaluation at a time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "strategies/ga.h"
#include "strategies/noise.h"
#include "strategies/strat_noise.h"
#include "strategies/strategy.h"

#define GA_DEFAULT_RUNS 5
#define GA_MAX_RUNS	100

struct ga_strat {
	struct ga g;
	struct ga_gene_spec spec[GA_NOISE_GENES]; /* ga_noise_spec, run's seedings */
	struct ga_params par;
	uint32_t runs; /* per evaluation */
	struct strategy *inner;
	/* The generation's evaluations, per individual: its runs that ended
	 * having run, the sum of their fitness, its runs in flight. */
	uint32_t done[GA_MAX_POP];
	double sum[GA_MAX_POP];
	uint32_t flying[GA_MAX_POP];
	uint64_t discarded; /* runs that ran but were left out */
	/* the best evaluation so far */
	bool have_best;
	double best;
	uint32_t best_gen;
	char best_noise[160];
};

/* A run: what it evaluates, around the inner noise strategy's state. */
struct ga_run {
	uint32_t generation;
	uint32_t ind;		 /* individual */
	uint32_t run;		 /* of its evaluation, from 1 */
	struct noise_config cfg; /* the individual's configuration */
	void *inner;		 /* the inner strategy's r->priv */
};

static int ga_strat_init(struct strategy *s, const char *opts, char *err, size_t errlen)
{
	struct ga_strat *gs = xcalloc(1, sizeof(*gs));
	unsigned long runs = GA_DEFAULT_RUNS, pop;
	char *end = NULL;

	s->priv = gs;
	ga_params_default(&gs->par);
	pop = gs->par.pop_size;
	if (opts) {
		errno = 0;
		runs = strtoul(opts, &end, 10);
		if (end != opts && *end == ',' && !errno)
			pop = strtoul(end + 1, &end, 10);
		if (end == opts || *end || errno || runs < 1 || runs > GA_MAX_RUNS || pop < 3 ||
		    pop > GA_MAX_POP) {
			snprintf(err, errlen,
				 "ga:RUNS[,POP]: RUNS per evaluation 1-%d, POP individuals 3-%d",
				 GA_MAX_RUNS, GA_MAX_POP);
			return -EINVAL;
		}
	}
	gs->runs = (uint32_t)runs;
	gs->par.pop_size = (uint32_t)pop;
	memcpy(gs->spec, ga_noise_spec, sizeof(gs->spec));
	/* Seedings run applies: yield, sleep, busyWait, wait, haltOneThread
	 * (the first five of enum noise_seeding); no timeoutTamper. */
	gs->spec[GA_G_SEEDING].max = NOISE_SEED_HALT_ONE;
	gs->spec[GA_G_TIMEOUT].max = 0;
	{
		struct noise_config none = { 0 };

		gs->inner = strat_noise_new(&none);
	}
	return 0;
}

static void ga_strat_destroy(struct strategy *s)
{
	struct ga_strat *gs = s->priv;

	if (gs)
		strat_noise_free(gs->inner);
	free(gs);
	s->priv = NULL;
}

static int ga_strat_campaign_begin(struct strategy *s, struct strat_campaign *c)
{
	struct ga_strat *gs = s->priv;

	if (ga_init(&gs->g, gs->spec, GA_NOISE_GENES, &gs->par, c->seed ^ 0x6761ULL))
		return -EINVAL;
	memset(gs->done, 0, sizeof(gs->done));
	memset(gs->sum, 0, sizeof(gs->sum));
	memset(gs->flying, 0, sizeof(gs->flying));
	gs->discarded = 0;
	if (!c->quiet)
		fprintf(stderr,
			"concsched: ga: %u individuals per generation, %u run%s each "
			"(%u runs a generation)\n",
			gs->par.pop_size, gs->runs, gs->runs == 1 ? "" : "s",
			gs->par.pop_size * gs->runs);
	return 0;
}

static void ga_strat_campaign_end(struct strategy *s, struct strat_campaign *c)
{
	struct ga_strat *gs = s->priv;

	if (!c->quiet && gs->discarded)
		fprintf(stderr,
			"concsched: ga: %" PRIu64 " of the runs at once left out: each ended "
			"after its individual was evaluated or its generation bred\n",
			gs->discarded);
}

/* The individual the next run evaluates: the first whose evaluation lacks
 * runs, counting those in flight; else (every remaining one has its runs
 * in flight, runs at once) the one with the fewest; 0 when none needs one
 * (the population was bred when none was left). */
static uint32_t next_individual(struct ga_strat *gs)
{
	uint32_t i, best = UINT32_MAX;

	for (i = 0; i < gs->par.pop_size; i++) {
		if (!gs->g.pop[i].needs_eval)
			continue;
		if (gs->done[i] + gs->flying[i] < gs->runs)
			return i;
		if (best == UINT32_MAX ||
		    gs->done[i] + gs->flying[i] < gs->done[best] + gs->flying[best])
			best = i;
	}
	return best == UINT32_MAX ? 0 : best;
}

static void ga_strat_run_begin(struct strategy *s, struct strat_run *r)
{
	struct ga_strat *gs = s->priv;
	struct ga_run *gr = xcalloc(1, sizeof(*gr));

	gr->generation = gs->g.generation;
	gr->ind = next_individual(gs);
	gr->run = gs->done[gr->ind] + gs->flying[gr->ind] + 1;
	gs->flying[gr->ind]++;
	ga_genome_to_noise(gs->g.pop[gr->ind].genes, &gr->cfg);
	/* The inner strategy copies the configuration into its run's state:
	 * later runs configuring it again do not change this one. */
	strat_noise_configure(gs->inner, &gr->cfg);
	gs->inner->ops->run_begin(gs->inner, r);
	gr->inner = r->priv;
	r->priv = gr;
}

/* The inner strategy sees its own per-run state in r->priv while it runs:
 * a run's ops come from one thread at a time (its worker), so swapping it
 * in and out of r is safe. */
static struct ga_run *inner_in(struct strat_run *r)
{
	struct ga_run *gr = r->priv;

	r->priv = gr->inner;
	return gr;
}

static void inner_out(struct strat_run *r, struct ga_run *gr)
{
	gr->inner = r->priv;
	r->priv = gr;
}

static void ga_strat_config(struct strategy *s, struct strat_run *r, struct json *j)
{
	struct ga_strat *gs = s->priv;
	struct ga_run *gr = r->priv;

	if (!gr)
		return;
	inner_in(r);
	gs->inner->ops->config_json(gs->inner, r, j);
	inner_out(r, gr);
	json_obj_begin(j, "ga");
	json_kv_uint(j, "generation", gr->generation);
	json_kv_uint(j, "individual", gr->ind);
	json_kv_uint(j, "run", gr->run);
	json_obj_end(j);
}

static void note_generation(struct json *j, struct ga_strat *gs)
{
	double best = 0, mean = 0;
	uint32_t i, bi = 0;
	char noise[160];
	char line[640];

	for (i = 0; i < gs->par.pop_size; i++) {
		const struct ga_individual *ind = &gs->g.pop[i];

		mean += ind->fitness;
		if (!i || ind->fitness > best) {
			best = ind->fitness;
			bi = i;
		}
	}
	mean /= gs->par.pop_size;
	{
		struct noise_config c;

		ga_genome_to_noise(gs->g.pop[bi].genes, &c);
		noise_config_format(&c, noise, sizeof(noise));
	}
	json_obj_begin(j, "generation");
	json_kv_uint(j, "index", gs->g.generation);
	json_kv_dbl(j, "best", best);
	json_kv_dbl(j, "mean", mean);
	json_kv_str(j, "best_noise", noise);
	json_obj_end(j);
	snprintf(line, sizeof(line),
		 "ga generation %u: best fitness %.4g (%s), mean %.4g; best so far %.4g (%s, "
		 "generation %u)",
		 gs->g.generation, best, noise, mean, gs->best, gs->best_noise, gs->best_gen);
	json_kv_str(j, "summary", line);
}

static void ga_strat_run_end(struct strategy *s, struct strat_run *r, struct strat_campaign *c,
			     const struct strat_outcome *o)
{
	struct ga_strat *gs = s->priv;
	struct ga_run *gr = r->priv, run;
	struct json_mem m;
	double f;
	char *text, noise[160];
	bool current, credit, generation_done = false;

	if (!gr)
		return;
	inner_in(r);
	gs->inner->ops->run_end(gs->inner, r, c, o); /* frees its state */
	r->priv = NULL;
	run = *gr;
	free(gr);
	current = run.generation == gs->g.generation;
	if (current && gs->flying[run.ind])
		gs->flying[run.ind]--;
	if (!o->ran)
		return; /* not evaluated: the same individual runs again */
	f = ga_fitness(o->wgoldilock_sc, o->warnings, o->failed ? 1 : 0, o->duration_ns / 1e6);
	/* A run of a past generation, or one past its individual's RUNS:
	 * the individual it ran is bred over, or evaluated already. */
	credit = current && gs->g.pop[run.ind].needs_eval;
	if (credit) {
		gs->sum[run.ind] += f;
		gs->done[run.ind]++;
	} else {
		gs->discarded++;
	}
	noise_config_format(&run.cfg, noise, sizeof(noise));
	json_mem_open(&m);
	json_obj_begin(&m.j, NULL);
	json_kv_uint(&m.j, "generation", run.generation);
	json_kv_uint(&m.j, "individual", run.ind);
	json_kv_str(&m.j, "noise", noise);
	json_kv_dbl(&m.j, "fitness", f);
	json_kv_dbl(&m.j, "wgoldilock_sc", o->wgoldilock_sc);
	json_kv_uint(&m.j, "warnings", o->warnings);
	if (!credit)
		json_kv_bool(&m.j, "discarded", true);
	if (credit && gs->done[run.ind] == gs->runs) {
		double mean = gs->sum[run.ind] / gs->runs;

		ga_set_fitness(&gs->g, run.ind, mean);
		json_kv_dbl(&m.j, "evaluation", mean);
		if (!gs->have_best || mean > gs->best) {
			gs->have_best = true;
			gs->best = mean;
			gs->best_gen = gs->g.generation;
			snprintf(gs->best_noise, sizeof(gs->best_noise), "%s", noise);
		}
		generation_done = true;
		for (uint32_t i = 0; i < gs->par.pop_size; i++)
			generation_done &= !gs->g.pop[i].needs_eval;
		if (generation_done)
			note_generation(&m.j, gs);
	}
	json_obj_end(&m.j);
	text = json_mem_close(&m);
	if (text && c->note)
		c->note(c->ctx, text);
	free(text);
	if (!generation_done)
		return;
	if (ga_next_generation(&gs->g)) {
		log_debug("ga: the next generation cannot be bred");
		return;
	}
	/* The new generation's evaluations start from nothing; runs of the
	 * past one still in flight are left out at their end. */
	memset(gs->done, 0, sizeof(gs->done));
	memset(gs->sum, 0, sizeof(gs->sum));
	memset(gs->flying, 0, sizeof(gs->flying));
}

static void ga_strat_point(struct strategy *s, struct strat_run *r, const struct strat_point *p,
			   struct strat_decision *d)
{
	struct ga_strat *gs = s->priv;
	struct ga_run *gr = inner_in(r);

	gs->inner->ops->point(gs->inner, r, p, d);
	inner_out(r, gr);
}

const struct strategy_ops strat_ga_ops = {
	.name = "ga",
	.synopsis = "ga[:RUNS[,POP]]",
	.summary = "seed 004's genetic search over noise configurations: POP (20) individuals "
		   "of RUNS (5) runs each, fitness (WGoldiLockSC + 1000 warnings + 10000 "
		   "failures) / ms; implies --access",
	.flags = STRAT_F_STEERS | STRAT_F_SYNC_POINTS | STRAT_F_ACCESS_POINTS | STRAT_F_ACCESS |
		 STRAT_F_JOBS,
	.replay = STRAT_REPLAY_DECISIONS,
	.init = ga_strat_init,
	.destroy = ga_strat_destroy,
	.campaign_begin = ga_strat_campaign_begin,
	.campaign_end = ga_strat_campaign_end,
	.run_begin = ga_strat_run_begin,
	.config_json = ga_strat_config,
	.run_end = ga_strat_run_end,
	.point = ga_strat_point,
};
