// SPDX-License-Identifier: MIT
/* ga.c: each operator on hand-checked inputs and its statistics with a
 * fixed seed, elitism, the fitness formula, genome <-> noise mapping. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "strategies/ga.h"
#include "tap.h"

static const struct ga_gene_spec bits[10] = {
	{ "b0", 0, 1, false }, { "b1", 0, 1, false }, { "b2", 0, 1, false }, { "b3", 0, 1, false },
	{ "b4", 0, 1, false }, { "b5", 0, 1, false }, { "b6", 0, 1, false }, { "b7", 0, 1, false },
	{ "b8", 0, 1, false }, { "b9", 0, 1, false },
};

static const struct ga_gene_spec ordinals[4] = {
	{ "o0", 0, 1000, true },
	{ "o1", 0, 1000, true },
	{ "o2", 0, 1000, true },
	{ "n3", 0, 5, false },
};

static void test_defaults_and_init(void)
{
	struct ga_params p, bad;
	static struct ga g;
	const struct ga_gene_spec inverted = { "x", 5, 1, true };

	ga_params_default(&p);
	tap_ok(p.pop_size == 20 && p.tournament == 4 && p.elites == 2 && p.crossover_p == 0.25 &&
		       p.mutation_p == 0.01,
	       "defaults are seed 004's: 20, tournament 4, 2 elites, crossover .25, mutation .01");
	bad = p;
	bad.elites = 21;
	tap_ok(ga_init(&g, bits, 10, &bad, 1) == -EINVAL &&
		       ga_init(&g, &inverted, 1, &p, 1) == -EINVAL &&
		       ga_init(&g, bits, 0, &p, 1) == -EINVAL,
	       "more elites than individuals, an empty range, no genes: -EINVAL");
	tap_ok(!ga_init(&g, bits, 10, &p, 1) && g.pop[19].needs_eval,
	       "a valid population of 20 waits for evaluation");
}

static void test_selection(void)
{
	static struct ga g;
	struct ga_params p;
	uint32_t cand[4] = { 3, 7, 1, 7 };
	int counts[20] = { 0 };
	double worst = 0;
	const int N = 200000;

	ga_params_default(&p);
	ga_init(&g, bits, 10, &p, 5);
	for (uint32_t i = 0; i < 20; i++)
		g.pop[i].fitness = i;
	g.pop[3].fitness = 50;
	g.pop[7].fitness = 90;
	g.pop[1].fitness = 90;
	tap_is_int(ga_fittest_of(&g, cand, 4), 7,
		   "fittest of {3:50, 7:90, 1:90, 7:90} is 7 (ties: first drawn)");

	for (uint32_t i = 0; i < 20; i++)
		g.pop[i].fitness = i;
	for (int k = 0; k < N; k++)
		counts[ga_select_tournament(&g)]++;
	/* Max of 4 uniform draws: P(k) = ((k+1)^4 - k^4) / 20^4. */
	for (int k = 0; k < 20; k++) {
		double want = (pow(k + 1, 4) - pow(k, 4)) / pow(20, 4);
		double d = fabs((double)counts[k] / N - want);

		worst = d > worst ? d : worst;
	}
	tap_ok(worst < 0.004 && counts[19] > counts[18],
	       "tournament of 4 picks the best of 4 draws (max deviation %.4f)", worst);

	memset(counts, 0, sizeof(counts));
	worst = 0;
	for (int k = 0; k < N; k++)
		counts[ga_select_proportional(&g)]++;
	for (int k = 0; k < 20; k++) {
		double d = fabs((double)counts[k] / N - k / 190.0);

		worst = d > worst ? d : worst;
	}
	tap_ok(worst < 0.004 && counts[0] == 0,
	       "proportional selection: P(i) = f_i / sum f, zero fitness never (max dev %.4f)",
	       worst);

	for (uint32_t i = 0; i < 20; i++)
		g.pop[i].fitness = 0;
	memset(counts, 0, sizeof(counts));
	for (int k = 0; k < 20000; k++)
		counts[ga_select_proportional(&g)]++;
	int zero_slots = 0;

	for (int k = 0; k < 20; k++)
		zero_slots += counts[k] < 800;
	tap_is_int(zero_slots, 0, "all fitness 0: proportional selection is uniform");
}

static void test_crossover(void)
{
	static struct ga g;
	struct ga_params p;
	long swapped = 0, lost = 0;
	const int N = 20000;

	ga_params_default(&p);
	ga_init(&g, bits, 10, &p, 9);
	for (int k = 0; k < N; k++) {
		int32_t a[10] = { 0 }, b[10] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };

		ga_crossover_uniform(&g, a, b);
		for (int i = 0; i < 10; i++) {
			swapped += a[i];
			lost += a[i] + b[i] != 1;
		}
	}
	tap_is_dbl((double)swapped / (N * 10), 0.25, 0.005,
		   "uniform crossover swaps each gene with p = 0.25");
	tap_is_int(lost, 0, "crossover exchanges genes, never invents or drops one");
}

static void test_mutation(void)
{
	static struct ga g;
	struct ga_params p;
	long changed = 0, out = 0, n = 0, seen_nominal[6] = { 0 };
	double sum = 0, sum2 = 0;
	const int N = 100000;

	ga_params_default(&p);
	ga_init(&g, ordinals, 3, &p, 3); /* ordinal genes only */
	for (int k = 0; k < N; k++) {
		int32_t x[3] = { 500, 500, 500 };

		ga_mutate(&g, x);
		for (int i = 0; i < 3; i++)
			changed += x[i] != 500;
	}
	/* A Gaussian step of sigma 100 rounds to 0 with p ~ 0.004. */
	tap_is_dbl((double)changed / (N * 3), 0.01, 0.001, "mutation hits a gene with p = 0.01");

	p.mutation_p = 1.0;
	ga_init(&g, ordinals, 4, &p, 4);
	for (int k = 0; k < N; k++) {
		int32_t x[4] = { 500, k % 2 ? 0 : 1000, 1000, 2 };

		ga_mutate(&g, x);
		sum += x[0] - 500;
		sum2 += (double)(x[0] - 500) * (x[0] - 500);
		n++;
		for (int i = 0; i < 3; i++)
			out += x[i] < 0 || x[i] > 1000;
		out += x[3] < 0 || x[3] > 5;
		if (x[3] >= 0 && x[3] <= 5)
			seen_nominal[x[3]]++;
	}
	double sd = sqrt(sum2 / n - (sum / n) * (sum / n));

	tap_is_int(out, 0, "mutated genes stay in range, also from the range's edges");
	tap_ok(sd > 95 && sd < 105 && fabs(sum / n) < 2,
	       "ordinal mutation is Gaussian with sigma = 10%% of the range (sd %.1f)", sd);
	int uniform = 1;

	for (int v = 0; v < 6; v++)
		uniform &= seen_nominal[v] > N / 6 - 1500 && seen_nominal[v] < N / 6 + 1500;
	tap_ok(uniform, "non-ordinal mutation redraws uniformly, current value included");
}

static void test_elites(void)
{
	static struct ga g;
	struct ga_params p;
	int32_t best[2][GA_MAX_GENES];
	int range_bad = 0, fresh_bad = 0;

	ga_params_default(&p);
	ga_init(&g, ordinals, 4, &p, 21);
	tap_is_int(ga_next_generation(&g), -EAGAIN,
		   "no breeding before every individual is evaluated");
	for (uint32_t i = 0; i < 20; i++)
		ga_set_fitness(&g, i, (double)((i * 7) % 20)); /* best: i=17 (19), i=14 (18) */
	memcpy(best[0], g.pop[17].genes, sizeof(best[0]));
	memcpy(best[1], g.pop[14].genes, sizeof(best[1]));
	tap_is_int(ga_next_generation(&g), 0, "next generation bred");
	tap_ok(!memcmp(g.pop[0].genes, best[0], 4 * sizeof(int32_t)) &&
		       !memcmp(g.pop[1].genes, best[1], 4 * sizeof(int32_t)),
	       "the 2 fittest are carried over unchanged as elites");
	tap_ok(g.pop[0].needs_eval && g.pop[1].needs_eval && g.pop[0].evals == 1 &&
		       g.pop[0].fitness == 19,
	       "elites keep their evaluation and are re-evaluated");
	ga_set_fitness(&g, 0, 9);
	tap_is_dbl(g.pop[0].fitness, 14, 1e-9, "an elite's fitness is the mean of its evaluations");
	for (uint32_t i = 2; i < 20; i++) {
		fresh_bad += !g.pop[i].needs_eval || g.pop[i].evals;
		for (int k = 0; k < 4; k++)
			range_bad += g.pop[i].genes[k] < ordinals[k].min ||
				     g.pop[i].genes[k] > ordinals[k].max;
	}
	tap_ok(!fresh_bad && !range_bad && g.generation == 1,
	       "18 children, unevaluated, every gene in range");
}

static double toy_fitness(const int32_t *x)
{
	return x[0] + x[1] + x[2];
}

static void test_search_and_determinism(void)
{
	static struct ga a, b;
	struct ga_params p;
	double best_prev = -1, first_best = 0;
	int monotone = 1, same = 1;

	ga_params_default(&p);
	ga_init(&a, ordinals, 4, &p, 77);
	ga_init(&b, ordinals, 4, &p, 77);
	for (int gen = 0; gen < 30; gen++) {
		double best = -1;

		for (uint32_t i = 0; i < 20; i++) {
			ga_set_fitness(&a, i, toy_fitness(a.pop[i].genes));
			ga_set_fitness(&b, i, toy_fitness(b.pop[i].genes));
			best = a.pop[i].fitness > best ? a.pop[i].fitness : best;
		}
		if (!gen)
			first_best = best;
		monotone &= best >= best_prev;
		best_prev = best;
		ga_next_generation(&a);
		ga_next_generation(&b);
		for (uint32_t i = 0; i < 20; i++)
			same &= !memcmp(a.pop[i].genes, b.pop[i].genes, sizeof(a.pop[i].genes));
	}
	tap_ok(same, "same seed, same fitness: identical populations for 30 generations");
	tap_ok(monotone && best_prev > first_best,
	       "with elites the best fitness never drops (%.0f -> %.0f)", first_best, best_prev);
}

static void test_fitness(void)
{
	tap_is_dbl(ga_fitness(120, 1, 0, 1000), 1.12, 1e-12, "(120 + 1000*1) / 1000 ms = 1.12");
	tap_is_dbl(ga_fitness(50, 0, 2, 500), 40.1, 1e-12, "(50 + 10000*2) / 500 ms = 40.1");
	tap_is_dbl(ga_fitness(7, 0, 0, 0), 7, 1e-12, "time 0 counts as 1 ms");
}

static void test_noise_genome(void)
{
	static struct ga g;
	struct ga_params p;
	int invalid = 0;
	char err[256];

	ga_params_default(&p);
	ga_init(&g, ga_noise_spec, GA_NOISE_GENES, &p, 8);
	for (int k = 0; k < 2000; k++) {
		int32_t x[GA_NOISE_GENES];
		struct noise_config c;

		ga_random_genome(&g, x);
		ga_genome_to_noise(x, &c);
		if (noise_config_validate(&c, err, sizeof(err)) && !invalid++)
			tap_diag("%s", err);
	}
	tap_is_int(invalid, 0, "2000 random genomes all decode to valid noise configurations");

	static const char *const refs[] = {
		"sharedVar-one@150/sleep:2000,ht",
		"read-write@300/yield:10,read=sleep:2000,write=busyWait:20000,tt",
		"coverage@50/inverseNoise:20",
		"random-all@1000/yield:100",
	};
	int drift = 0;

	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
		struct noise_config c, d;
		int32_t x[GA_NOISE_GENES];

		noise_config_parse(refs[i], &c, NULL, 0);
		ga_noise_to_genome(&c, x);
		ga_genome_to_noise(x, &d);
		drift += c.placement != d.placement || c.freq != d.freq ||
			 c.seed.kind != d.seed.kind || c.halt_one != d.halt_one ||
			 c.timeout_tamper != d.timeout_tamper || c.read.kind != d.read.kind ||
			 c.write.kind != d.write.kind ||
			 fabs((double)d.seed.lo - c.seed.lo) > 0.01 * c.seed.lo + 1 ||
			 fabs((double)d.write.lo - c.write.lo) > 0.01 * c.write.lo + 1;
	}
	tap_is_int(drift, 0, "noise -> genome -> noise keeps every choice, strength within 1%%");

	int32_t lo[GA_NOISE_GENES] = { 0 }, hi[GA_NOISE_GENES] = { 0 };
	struct noise_config c0, c1;

	lo[GA_G_SEEDING] = hi[GA_G_SEEDING] = NOISE_SEED_SLEEP;
	hi[GA_G_STRENGTH] = 1000;
	ga_genome_to_noise(lo, &c0);
	ga_genome_to_noise(hi, &c1);
	tap_ok(c0.seed.lo == 0 && c1.seed.lo == 1000000,
	       "strength level 0..1000 spans the seeding's whole range (sleep 0..1 s)");
}

int main(void)
{
	tap_plan(27);
	test_defaults_and_init();
	test_selection();
	test_crossover();
	test_mutation();
	test_elites();
	test_search_and_determinism();
	test_fitness();
	test_noise_genome();
	return tap_done();
}
