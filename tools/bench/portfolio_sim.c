// SPDX-License-Identifier: MIT
/*
 * The portfolio's choices offline (docs/studies/portfolio-sim-2026-11-29.md):
 * campaigns of at most --max runs on measured per-run failure probabilities
 * of the arms, the arms chosen by the real policy code
 * (strat_portfolio_choose and strat_portfolio_reward of
 * strategies/strat_portfolio.c, on a struct portfolio as
 * tests/unit/test_portfolio.c builds it) or by a copy of it with its
 * constants as options, each run failing with its arm's probability, its
 * reward drawn from a model of what real runs add (below). Nothing runs a
 * program: it answers "how many runs to the first failure would this
 * policy need, if each arm failed as measured", in seconds, for many
 * seeds.
 *
 * Rates come from tools/bench/portfolio_rates.py (the bench's raw lines:
 * the geometric MLE per program and strategy). An arm with no line for a
 * program fails with p = 0.
 *
 * Reward models (--reward), what a run of arm a adds per second:
 *   coverage  each arm's metric (sp for random and pct:3, concurpairs for
 *             the two --access arms, map, fpair) a pool of tasks, task i
 *             met by a run of arm a with probability min(1, c_a / (i + 1))
 *             (a long tail: each run meets the common tasks and, more and
 *             more rarely, a new rare one, so what a run adds falls off
 *             like 1 / runs); the estimation run has met every sp task and
 *             the concurpairs tasks of c = 1; a shared metric's tasks count
 *             once, for the first arm to meet them. Race warnings: a pool of
 *             4, warning i met by an access arm's run with probability
 *             0.5 / (i + 1), worth 10 tasks. The reward is new tasks plus
 *             10 x new warnings over the arm's measured seconds per run on
 *             the program (--equal-time: 1 s for all). c: random --access 6,
 *             pct:3 --access 2, map 1.5, fpair 1.5, random and pct:3 1
 *             (random --access keeps adding longest: the VM's allocations,
 *             docs/studies/portfolio-2026-11-29.md).
 *   flat      every run's reward an exponential draw of mean 1, whatever the
 *             arm: the rewards say nothing.
 *   bug       the arm's hazard -ln(1 - p) times an exponential draw: the
 *             reward points at the arm that finds the bug (optimistic).
 * A failure ends the campaign, so the failure's own reward never counts.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rng.h"
#include "lib/xalloc.h"
#include "strategies/strat_portfolio.h"

/* The arms by their bench names (tools/bench/bugs/run), and the
 * portfolio's names for them (strat_portfolio_arms[].name): the six of
 * every campaign (tsa, on only after a lock-order cycle, is not
 * simulated: its arm stays off, as with no estimation run). */
#define SIM_ARMS PF_NARMS_EVERY
static const char *const arm_names[SIM_ARMS] = {
	"pcta", "randoma", "map", "fpair", "random", "pct"
};
static const char *const arm_spec_names[SIM_ARMS] = {
	"pct:3 --access", "random --access", "map", "fpair", "random", "pct:3"
};
static const int arm_metric[SIM_ARMS] = { 1, 1, 2, 3, 0, 0 };
static const double arm_reach[SIM_ARMS] = { 2, 6, 1.5, 1.5, 1, 1 };
static const size_t metric_tasks[4] = { 30, 300, 50, 50 };
#define SIM_WARNINGS 4
#define SIM_PROGS    64
#define SIM_BEST_MAX 16

struct sim_prog {
	char name[64];
	double p[SIM_ARMS], secs[SIM_ARMS];
	char best[16];	    /* the best single strategy measured (any, the table maker's rule) */
	double best_median; /* its measured median runs */
};

enum sim_reward { REWARD_COVERAGE, REWARD_FLAT, REWARD_BUG };
enum sim_policy { POLICY_REAL, POLICY_MODEL, POLICY_SEQUENCE };

struct sim_opts {
	enum sim_policy policy;
	enum sim_reward reward;
	bool equal_time, check;
	unsigned seeds, max;
	size_t order[SIM_ARMS]; /* warm-up slot -> arm */
	size_t narms;
	double floor, explore, alpha; /* the model policy's constants */
	bool second_run;	      /* an arm with one run ended scores as the top */
	size_t seq[256], nseq;	      /* --sequence: the arms' runs, then a cycle */
	size_t seq_prefix;	      /* the runs before the cycle (PREFIX|CYCLE) */
	bool prior;		      /* --prior: prior-1129's rule on the corpus's facts */
	double sync_weight;	      /* (model) the synchronization arms' values times this */
	double weight[SIM_ARMS];      /* each arm's share of the runs, by arm */
	/* The real code's table as the options make it: slot i is arm
	 * order[i] with share weight[order[i]]. */
	struct pf_arm_spec spec[SIM_ARMS];
	const char *only;
	const char *row; /* --row LABEL: one table row of ratios */
	unsigned group;	 /* the bench's seeds per median (the range's) */
	double p_scale;	 /* every arm's p times this */
};

/* ---- the model policy: strat_portfolio_choose with its constants as options ----------- */

static double model_index(const struct sim_opts *o, const struct portfolio *pf,
			  const struct pf_arm *a, uint64_t n)
{
	uint64_t na = a->ended + a->inflight;
	double top = 0, v;
	size_t i;

	for (i = 0; i < SIM_ARMS; i++)
		if (pf->arm[i].on && pf->arm[i].ended >= 2 && pf->arm[i].value > top)
			top = pf->arm[i].value;
	v = o->second_run && a->ended < 2 ? 1 : top > 0 ? a->value / top : 0;
	if (o->order[a - pf->arm] >= 4) /* random, pct:3: the synchronization arms */
		v *= o->sync_weight;
	if (!na)
		return INFINITY;
	return v + o->explore * sqrt(2.0 * log((double)(n > 1 ? n : 1)) / (double)na);
}

static size_t model_choose(const struct sim_opts *o, struct portfolio *pf)
{
	size_t i, starved = SIM_ARMS, on = 0;
	double x[PF_NARMS], floor_runs = 0;
	uint64_t n = 0, na;

	for (i = 0; i < SIM_ARMS; i++)
		if (pf->arm[i].on && !pf->arm[i].begun)
			return i;
	for (i = 0; i < SIM_ARMS; i++)
		if (pf->arm[i].on) {
			n += pf->arm[i].ended + pf->arm[i].inflight;
			on++;
		}
	double wsum = 0, below = 0;

	for (i = 0; i < SIM_ARMS; i++)
		if (pf->arm[i].on)
			wsum += o->weight[o->order[i]];
	/* The floor: an arm below n x weight / (floor x the weights' sum) runs
	 * (today's rule; before 2026-11-29's shares, equal weights and floor
	 * 2), the one furthest below in runs, the first in order on a tie. */
	for (i = 0; i < SIM_ARMS && o->floor > 0; i++) {
		if (!pf->arm[i].on)
			continue;
		floor_runs = floor((double)n * o->weight[o->order[i]] / (o->floor * wsum));
		na = pf->arm[i].ended + pf->arm[i].inflight;
		if ((double)na < floor_runs && floor_runs - (double)na > below) {
			below = floor_runs - (double)na;
			starved = i;
		}
	}
	if (starved < SIM_ARMS)
		return starved;
	for (i = 0; i < PF_NARMS; i++)
		x[i] = i < SIM_ARMS && pf->arm[i].on ? model_index(o, pf, &pf->arm[i], n)
						     : -INFINITY;
	return strat_portfolio_argmax(pf, x);
}

static void model_reward(const struct sim_opts *o, struct portfolio *pf, struct pf_arm *a, double x)
{
	/* strat_portfolio_reward: the second reward replaces the warm-up run's */
	uint64_t from = o->second_run ? 1 : 0;

	a->value = a->ended > from ? a->value + o->alpha * (x - a->value) : x;
	a->ended++;
	pf->ended++;
}

/* ---- one campaign ------------------------------------------------------------------------ */

struct sim_cov {
	bool *met[4];
	bool warned[SIM_WARNINGS];
};

static void cov_begin(struct sim_cov *cv)
{
	size_t m, i;

	for (m = 0; m < 4; m++) {
		memset(cv->met[m], 0, metric_tasks[m]);
		for (i = 0; i < metric_tasks[m]; i++)
			cv->met[m][i] = m == 0 || (m == 1 && i == 0); /* the estimation's */
	}
	memset(cv->warned, 0, sizeof(cv->warned));
}

/* What a run of arm a adds (tasks + 10 x warnings), drawn from rng. */
static double cov_run(struct sim_cov *cv, size_t a, struct cs_rng *rng)
{
	int m = arm_metric[a];
	double added = 0;
	size_t i;

	for (i = 0; i < metric_tasks[m]; i++) {
		double h = arm_reach[a] / (double)(i + 1);

		if (!cv->met[m][i] && rng_chance(rng, h > 1 ? 1 : h)) {
			cv->met[m][i] = true;
			added += 1;
		}
	}
	if (m)
		for (i = 0; i < SIM_WARNINGS; i++)
			if (!cv->warned[i] && rng_chance(rng, 0.5 / (double)(i + 1))) {
				cv->warned[i] = true;
				added += 10;
			}
	return added;
}

static double exp_draw(struct cs_rng *rng)
{
	return -log(1.0 - rng_double(rng));
}

static double run_reward(const struct sim_opts *o, const struct sim_prog *p, struct sim_cov *cv,
			 size_t a, struct cs_rng *rng)
{
	double secs = o->equal_time || p->secs[a] <= 0 ? 1.0 : p->secs[a];

	switch (o->reward) {
	case REWARD_FLAT:
		return exp_draw(rng);
	case REWARD_BUG:
		return -log(1.0 - (p->p[a] < 0.999 ? p->p[a] : 0.999)) * exp_draw(rng);
	default:
		return cov_run(cv, a, rng) / secs;
	}
}

/* The campaign of seed `seed`: the run of its first failure (0: none
 * within o->max); runs[a] counts arm a's runs. With o->check the model
 * policy runs beside the real one on the same rewards and *mismatch
 * counts the runs where they chose otherwise. */
static unsigned campaign(const struct sim_opts *o, const struct sim_prog *p, struct sim_cov *cv,
			 uint64_t seed, unsigned runs[SIM_ARMS], unsigned *mismatch)
{
	struct portfolio pf, twin;
	struct cs_rng draw;
	size_t i;
	unsigned n;

	memset(&pf, 0, sizeof(pf));
	rng_seed(&pf.rng, seed ^ 0x706f7274666fULL);
	rng_seed(&draw, seed * 0x9e3779b97f4a7c15ULL + 1);
	for (i = 0; i < o->narms; i++) {
		pf.arm[i].spec = &o->spec[i];
		pf.arm[i].on = true;
	}
	twin = pf;
	cov_begin(cv);
	memset(runs, 0, sizeof(unsigned) * SIM_ARMS);
	for (n = 1; n <= o->max; n++) {
		size_t slot, a;
		double x;

		if (o->policy == POLICY_SEQUENCE)
			slot = n <= o->seq_prefix
				       ? o->seq[n - 1]
				       : o->seq[o->seq_prefix + (n - 1 - o->seq_prefix) %
									(o->nseq - o->seq_prefix)];
		else if (o->policy == POLICY_REAL)
			slot = strat_portfolio_choose(&pf);
		else
			slot = model_choose(o, &pf);
		if (o->check && model_choose(o, &twin) != slot)
			(*mismatch)++;
		a = o->policy == POLICY_SEQUENCE ? slot : o->order[slot];
		runs[a]++;
		if (rng_chance(&draw, p->p[a] * o->p_scale))
			return n;
		if (o->policy == POLICY_SEQUENCE)
			continue;
		x = run_reward(o, p, cv, a, &draw);
		pf.arm[slot].begun++;
		if (o->policy == POLICY_REAL)
			strat_portfolio_reward(&pf, &pf.arm[slot], x);
		else
			model_reward(o, &pf, &pf.arm[slot], x);
		if (o->check) {
			twin.arm[slot].begun++;
			model_reward(o, &twin, &twin.arm[slot], x);
		}
	}
	return 0;
}

/* ---- rates ----------------------------------------------------------------------------- */

static int arm_of(const char *name)
{
	size_t i;

	for (i = 0; i < SIM_ARMS; i++)
		if (!strcmp(arm_names[i], name))
			return (int)i;
	return -1;
}

static int arm_of_spec(const char *name)
{
	size_t i;

	for (i = 0; i < SIM_ARMS; i++)
		if (!strcmp(arm_spec_names[i], name))
			return (int)i;
	fprintf(stderr, "portfolio_sim: the portfolio's arm %s has no bench name\n", name);
	exit(2);
}

/* The real code's table for o's order and weights. */
static void make_specs(struct sim_opts *o)
{
	size_t i, k;

	for (i = 0; i < o->narms; i++)
		for (k = 0; k < SIM_ARMS; k++)
			if (arm_of_spec(strat_portfolio_arms[k].name) == (int)o->order[i]) {
				o->spec[i] = strat_portfolio_arms[k];
				o->spec[i].share = (unsigned)lround(o->weight[o->order[i]]);
			}
}

static size_t read_rates(const char *path, struct sim_prog *progs)
{
	char line[512], prog[64], strat[16], med[16];
	size_t n = 0, i;
	double prob, secs;
	unsigned found, camps, runs;
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "portfolio_sim: cannot open %s: %s\n", path, strerror(errno));
		exit(2);
	}
	while (fgets(line, sizeof(line), f)) {
		int a;

		if (sscanf(line, "%63s %15s %lf %u %u %u %lf %15s", prog, strat, &prob, &found,
			   &camps, &runs, &secs, med) != 8)
			continue;
		for (i = 0; i < n && strcmp(progs[i].name, prog); i++)
			;
		if (i == n) {
			if (n == SIM_PROGS)
				continue;
			memset(&progs[n], 0, sizeof(progs[n]));
			snprintf(progs[n].name, sizeof(progs[n].name), "%s", prog);
			n++;
		}
		a = arm_of(strat);
		if (a >= 0) {
			progs[i].p[a] = prob;
			progs[i].secs[a] = secs;
		}
		/* The table maker's best single: found in all campaigns but one. */
		if (strcmp(med, "-") && found >= (camps > 1 ? camps - 1 : 1) &&
		    (!progs[i].best[0] || atof(med) < progs[i].best_median)) {
			snprintf(progs[i].best, sizeof(progs[i].best), "%s", strat);
			progs[i].best_median = atof(med);
		}
	}
	fclose(f);
	return n;
}

/* The median runs to the first failure of a geometric law of p. */
static double geo_median(double p)
{
	if (p <= 0)
		return INFINITY;
	if (p >= 0.5)
		return 1;
	return ceil(log(0.5) / log(1 - p) - 1e-9);
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/* The median of n campaigns' runs (0: none, counted as more than any). */
static double median_runs(unsigned *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!v[i])
			v[i] = UINT32_MAX;
	qsort(v, n, sizeof(*v), cmp_unsigned);
	if (v[(n - 1) / 2] == UINT32_MAX || v[n / 2] == UINT32_MAX)
		return INFINITY;
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* The bench's median of `group` seeds (over the seeds that found it) as a
 * range: its 5th and 95th percentiles over groups of campaigns drawn from v. */
static void group_range(const unsigned *v, size_t n, unsigned group, uint64_t seed, double *lo,
			double *hi)
{
	enum { GROUPS = 2000 };
	static double med[GROUPS];
	struct cs_rng r;
	size_t g, k, m;
	unsigned five[64];

	rng_seed(&r, seed);
	for (g = 0; g < GROUPS; g++) {
		for (k = m = 0; k < group && k < 64; k++) {
			unsigned x = v[rng_below(&r, n)];

			if (x != UINT32_MAX)
				five[m++] = x;
		}
		qsort(five, m, sizeof(*five), cmp_unsigned);
		med[g] = !m	 ? INFINITY
			 : m % 2 ? five[m / 2]
				 : (five[m / 2 - 1] + five[m / 2]) / 2.0;
	}
	for (g = 1; g < GROUPS; g++) /* insertion sort of doubles */
		for (k = g; k > 0 && med[k - 1] > med[k]; k--) {
			double t = med[k];

			med[k] = med[k - 1];
			med[k - 1] = t;
		}
	*lo = med[GROUPS / 20];
	*hi = med[GROUPS - GROUPS / 20 - 1];
}

/* prior-1129's rule (docs/studies/portfolio-prior-2026-11-29.md) on the
 * facts its study's table gives: every corpus program has a cross-thread
 * variable (the access arms' weight 3); a lock-order cycle (bad_lockorder)
 * or a wait (bad_lostwakeup) gives the synchronization arms 3 too, and the
 * warm-up runs them first; elsewhere they weigh 1, a third of the top. The
 * programs its table lacks are taken to have no lock or wait fact. */
static void prior_of(const char *prog, struct sim_opts *o)
{
	static const size_t sync_first[SIM_ARMS] = { 4, 5, 0, 1, 2, 3 };

	o->sync_weight = 1.0 / 3;
	if (strcmp(prog, "bad_lockorder") && strcmp(prog, "bad_lostwakeup"))
		return;
	o->sync_weight = 1;
	memcpy(o->order, sync_first, sizeof(sync_first));
	o->narms = SIM_ARMS;
	make_specs(o);
}

/* ---- options ----------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: portfolio_sim [OPTIONS] RATES\n"
		"Simulates the portfolio's campaigns on per-arm failure rates (RATES: the output "
		"of\n"
		"tools/bench/portfolio_rates.py) and prints, per program, the median runs to the\n"
		"first failure over the seeds, the best single arm's (geometric median of its "
		"rate)\n"
		"and the ratio. docs/studies/portfolio-sim-2026-11-29.md.\n\n"
		"  --seeds N          campaigns per program (1000)\n"
		"  --max N            runs per campaign at most (200)\n"
		"  --policy P         real: strat_portfolio_choose (today's code, the default);\n"
		"                     model: a copy with the constants below as options\n"
		"  --order A,B,...    the warm-up order (bench names: pcta randoma map fpair "
		"random\n"
		"                     pct; default the code's: "
		"pcta,randoma,map,fpair,random,pct);\n"
		"                     fewer names: only those arms\n"
		"  --floor F          (model) an arm below n / (F x arms) runs next; 0: no floor "
		"(2)\n"
		"  --explore E        (model) the UCB1 bonus's factor (0.5)\n"
		"  --alpha A          (model) the weight of the newest reward (0.3)\n"
		"  --no-second-run    (model) an arm with one run ended scores its value, not the "
		"top\n"
		"  --weights A=W,...  the arms' shares: an arm below n x W / (F x the weights'\n"
		"                     sum) runs (the arms not named 1; default the code's table)\n"
		"  --sync-weight W    (model) random's and pct:3's values count W times (1)\n"
		"  --prior            (model) prior-1129's rule: on bad_lockorder and "
		"bad_lostwakeup\n"
		"                     random and pct:3 first, elsewhere their values count a "
		"third\n"
		"  --sequence P|C     no bandit: the runs go to the arms of P (A,B,...) in order,\n"
		"                     then cycle through those of C (a fixed allocation; no P|: C "
		"only)\n"
		"  --reward R         coverage (default), flat, bug: the reward model (above)\n"
		"  --equal-time       every arm's run takes 1 s in the reward\n"
		"  --check            run the model policy beside the real one on the same "
		"rewards\n"
		"                     and count the choices that differ (defaults: must be 0)\n"
		"  --program NAME     only this program\n"
		"  --group N          the range column: the median of N seeds, as the bench's (5)\n"
		"  --p-scale K        every arm fails with K times its rate (calibration)\n"
		"  --row LABEL        print one markdown row instead: LABEL, each program's\n"
		"                     simulated median and ratio, the programs within 2x, the\n"
		"                     geometric mean and the largest of the ratios (--row-head:\n"
		"                     the header row)\n\n"
		"Example:\n"
		"  S=docs/studies\n"
		"  tools/bench/portfolio_rates.py $S/bench-bugs-2026-11-26.txt \\\n"
		"      $S/bench-bugs-explore-2026-11-26.txt "
		"$S/bench-bugs-pcta-6121a00-2026-11-26.txt \\\n"
		"      $S/bench-bugs-issue30-2026-11-27.txt | sort > /tmp/rates.txt\n"
		"  build/bench/portfolio_sim --check /tmp/rates.txt      # the code's policy\n"
		"  build/bench/portfolio_sim --policy model --order "
		"pcta,randoma,map,fpair,random,pct \\\n"
		"      --weights pcta=1 --floor 2 /tmp/rates.txt       # the policy before the "
		"shares\n");
}

static size_t parse_arms(const char *list, size_t *out, size_t max)
{
	char buf[512], *tok, *save = NULL;
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save)) {
		int a = arm_of(tok);

		if (a < 0) {
			fprintf(stderr,
				"portfolio_sim: no arm %s (pcta randoma map fpair random pct)\n",
				tok);
			exit(2);
		}
		out[n++] = (size_t)a;
	}
	return n;
}

/* "pcta=3,randoma=3,...": the arms not named keep weight 1. */
static void parse_weights(const char *list, double *w)
{
	char buf[512], *tok, *save = NULL, *eq;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int a;

		eq = strchr(tok, '=');
		if (eq)
			*eq = 0;
		a = arm_of(tok);
		if (a < 0 || !eq || atof(eq + 1) <= 0) {
			fprintf(stderr, "portfolio_sim: --weights ARM=W,... (W > 0)\n");
			exit(2);
		}
		w[a] = atof(eq + 1);
	}
}

static void parse(int argc, char **argv, struct sim_opts *o, const char **rates)
{
	int i;

	*o = (struct sim_opts){ .seeds = 1000,
				.max = 200,
				.narms = SIM_ARMS,
				.floor = PF_FLOOR,
				.explore = 0.5,
				.alpha = 0.3,
				.second_run = true,
				.sync_weight = 1,
				.group = 5,
				.p_scale = 1 };
	/* Today's code: its table's order and shares. */
	for (i = 0; i < SIM_ARMS; i++) {
		int a = arm_of_spec(strat_portfolio_arms[i].name);

		o->order[i] = (size_t)a;
		o->weight[a] = strat_portfolio_arms[i].share;
	}
	*rates = NULL;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "--equal-time")) {
			o->equal_time = true;
		} else if (!strcmp(a, "--check")) {
			o->check = true; /* the real policy runs, the model beside it */
		} else if (!strcmp(a, "--prior")) {
			o->prior = true;
			o->policy = POLICY_MODEL;
		} else if (!strcmp(a, "--no-second-run")) {
			o->second_run = false;
		} else if (a[0] == '-' && a[1] == '-' && !v) {
			break;
		} else if (!strcmp(a, "--seeds")) {
			o->seeds = (unsigned)atoi(argv[++i]);
		} else if (!strcmp(a, "--max")) {
			o->max = (unsigned)atoi(argv[++i]);
		} else if (!strcmp(a, "--policy")) {
			o->policy = !strcmp(v, "model") ? POLICY_MODEL : POLICY_REAL;
			i++;
		} else if (!strcmp(a, "--order")) {
			o->narms = parse_arms(argv[++i], o->order, SIM_ARMS);
		} else if (!strcmp(a, "--floor")) {
			o->floor = atof(argv[++i]);
		} else if (!strcmp(a, "--explore")) {
			o->explore = atof(argv[++i]);
		} else if (!strcmp(a, "--alpha")) {
			o->alpha = atof(argv[++i]);
		} else if (!strcmp(a, "--sequence")) {
			const char *bar = strchr(argv[++i], '|');

			if (!bar) {
				o->nseq = parse_arms(argv[i], o->seq, 256);
			} else {
				char pre[512];

				snprintf(pre, sizeof(pre), "%.*s", (int)(bar - argv[i]), argv[i]);
				o->seq_prefix = parse_arms(pre, o->seq, 256);
				o->nseq =
					o->seq_prefix + parse_arms(bar + 1, o->seq + o->seq_prefix,
								   256 - o->seq_prefix);
			}
			o->policy = POLICY_SEQUENCE;
		} else if (!strcmp(a, "--weights")) {
			size_t k;

			for (k = 0; k < SIM_ARMS; k++)
				o->weight[k] = 1;
			parse_weights(argv[++i], o->weight);
			o->policy = POLICY_MODEL;
		} else if (!strcmp(a, "--sync-weight")) {
			o->sync_weight = atof(argv[++i]);
		} else if (!strcmp(a, "--reward")) {
			o->reward = !strcmp(v, "flat")	? REWARD_FLAT
				    : !strcmp(v, "bug") ? REWARD_BUG
							: REWARD_COVERAGE;
			i++;
		} else if (!strcmp(a, "--group")) {
			o->group = (unsigned)atoi(argv[++i]);
		} else if (!strcmp(a, "--p-scale")) {
			o->p_scale = atof(argv[++i]);
		} else if (!strcmp(a, "--row")) {
			o->row = argv[++i];
		} else if (!strcmp(a, "--program")) {
			o->only = argv[++i];
		} else if (a[0] != '-' && !*rates) {
			*rates = a;
		} else {
			break;
		}
		if (i >= argc)
			break;
	}
	if (i < argc || !*rates || !o->seeds || !o->max || (o->nseq && o->nseq <= o->seq_prefix)) {
		usage(stderr);
		exit(2);
	}
	if (o->check)
		o->policy = POLICY_REAL;
	make_specs(o);
}

int main(int argc, char **argv)
{
	static struct sim_prog progs[SIM_PROGS];
	struct sim_opts o, po;
	struct sim_cov cv;
	const char *path;
	size_t np, i, m;
	unsigned *res, mismatch = 0, within2 = 0, rated = 0;
	double logsum = 0, worst = 0;

	parse(argc, argv, &o, &path);
	np = read_rates(path, progs);
	for (m = 0; m < 4; m++)
		cv.met[m] = xcalloc(metric_tasks[m], 1);
	res = xcalloc(o.seeds, sizeof(*res));
	if (o.row)
		goto rows;
	printf("| program | best single measured | best arm (p, median) | simulated median "
	       "(found) | ratio | %u-seed median, 90%% range | runs per arm "
	       "(pcta randoma map fpair random pct, mean) |\n",
	       o.group);
	printf("|---|---|---|---:|---:|---|---|\n");
	for (i = 0; i < np; i++) {
		const struct sim_prog *p = &progs[i];
		double share[SIM_ARMS] = { 0 }, bestp = 0, med, lo, hi, ratio;
		size_t a, s, best = 0;
		unsigned found = 0, runs[SIM_ARMS];

		if (o.only && strcmp(o.only, p->name))
			continue;
		for (a = 0; a < SIM_ARMS; a++)
			if (p->p[a] > bestp) {
				bestp = p->p[a];
				best = a;
			}
		if (bestp <= 0)
			continue;
		po = o;
		if (o.prior)
			prior_of(p->name, &po);
		for (s = 0; s < o.seeds; s++) {
			res[s] = campaign(&po, p, &cv, s + 1, runs, &mismatch);
			found += res[s] != 0;
			for (a = 0; a < SIM_ARMS; a++)
				share[a] += runs[a];
		}
		med = median_runs(res, o.seeds);
		group_range(res, o.seeds, o.group, 7, &lo, &hi);
		ratio = med / geo_median(bestp);
		rated++;
		within2 += ratio <= 2.0 + 1e-9;
		logsum += log(ratio);
		worst = ratio > worst ? ratio : worst;
		printf("| %s | %s %g | %s %.3f, %g | %g (%u/%u) | %s%.1fx%s | %g-%g | "
		       "%.1f %.1f %.1f %.1f %.1f %.1f |\n",
		       p->name, p->best[0] ? p->best : "-", p->best_median, arm_names[best], bestp,
		       geo_median(bestp), med, found, o.seeds, ratio > 2 ? "**" : "", ratio,
		       ratio > 2 ? "**" : "", lo, hi, share[0] / o.seeds, share[1] / o.seeds,
		       share[2] / o.seeds, share[3] / o.seeds, share[4] / o.seeds,
		       share[5] / o.seeds);
	}
	printf("\nwithin 2x of the best arm: %u of %u programs; ratios' geometric mean %.2f, "
	       "largest %.1f\n",
	       within2, rated, exp(logsum / rated), worst);
	goto out;
rows:
	if (!strcmp(o.row, "--row-head")) {
		size_t cols = 0, a;

		printf("| policy |");
		for (i = 0; i < np; i++) {
			double bestp = 0;

			for (a = 0; a < SIM_ARMS; a++)
				bestp = progs[i].p[a] > bestp ? progs[i].p[a] : bestp;
			if (bestp > 0 && (!o.only || !strcmp(o.only, progs[i].name))) {
				printf(" %s |", progs[i].name);
				cols++;
			}
		}
		printf(" within 2x | mean ratio | largest |\n|---|");
		for (i = 0; i < cols + 3; i++)
			printf("---:|");
		printf("\n");
		goto out;
	}
	printf("| %s |", o.row);
	for (i = 0; i < np; i++) {
		const struct sim_prog *p = &progs[i];
		double bestp = 0, med, ratio;
		size_t a, s;
		unsigned runs[SIM_ARMS];

		if (o.only && strcmp(o.only, p->name))
			continue;
		for (a = 0; a < SIM_ARMS; a++)
			bestp = p->p[a] > bestp ? p->p[a] : bestp;
		if (bestp <= 0)
			continue;
		po = o;
		if (o.prior)
			prior_of(p->name, &po);
		for (s = 0; s < o.seeds; s++)
			res[s] = campaign(&po, p, &cv, s + 1, runs, &mismatch);
		med = median_runs(res, o.seeds);
		ratio = med / geo_median(bestp);
		rated++;
		within2 += ratio <= 2.0 + 1e-9;
		logsum += log(ratio);
		worst = ratio > worst ? ratio : worst;
		printf(" %g: %s%.1f%s |", med, ratio > 2 ? "**" : "", ratio, ratio > 2 ? "**" : "");
	}
	printf(" %u/%u | %.2f | %.1f |\n", within2, rated, exp(logsum / rated), worst);
out:
	if (o.check)
		fprintf(stderr,
			"check: the model policy chose otherwise than the real one in %u runs\n",
			mismatch);
	free(res);
	for (m = 0; m < 4; m++)
		free(cv.met[m]);
	return o.check && mismatch ? 1 : 0;
}
