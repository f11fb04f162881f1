// SPDX-License-Identifier: MIT
/*
 * Strategy pct[:DEPTH] (Burckhardt et al., ASPLOS'10; ALGORITHMS.md §10) on
 * the contract, around the plain-C engine of pct.c.
 *
 * Serial mode with priorities: the scheduler runs the highest-priority
 * runnable target thread (CS_SERIAL_PRIO), and every synchronization point
 * is a step. A thread at a point is kept (parked by our scheduler) and
 * waits; at each all-parked note pct_pick chooses among the waiting threads
 * (the engine's thread ids are the loop's thread-table indexes), the chosen
 * one is released (logged, arg: its priority) and the step counted. Each
 * thread's engine priority goes to the scheduler (policy_set_prio) when it
 * appears and whenever it changes: a new thread shifts the ranks of the
 * others, a change point demotes the thread it falls on.
 *
 * DEPTH-1 change points are drawn over k steps: k is the number of decision
 * points of the previous run; before the first run, the synchronization
 * actions of the observed runs at the ops that are decision points (the
 * largest over the observed runs: PCT's k bounds the run length), at least
 * DEPTH-1 and 1. The engine is seeded with the run's seed, so a run is
 * deterministic from it; "pct": {"depth", "k"} in the run's configuration
 * records what it used. docs/strategies.md "pct".
 *
 * With --access the probed accesses to the variables the access estimation
 * found shared are steps too (STRAT_F_ACCESS_POINTS): a thread waits for
 * its turn before the load or store, so a change point can fall between
 * two plain stores of one thread, where no synchronization point is. The
 * first run's k then adds the accesses of an estimation run (every probed
 * candidate site: an upper bound of the shared ones); later runs use the
 * previous run's count of steps, accesses included - the previous run's
 * with the same probe set, when the probe rotation probes a hot variable
 * in some runs only (PCT_PROBE_SETS below).
 *
 * Split focus (issue 30): when the access estimation found variables
 * written by one thread and read by another (strat_campaign.cross_vars,
 * strat_point.cross), the change points are drawn over two pools of steps
 * (pct_init_split): one change point over the synchronization points
 * (every step that is not an access) and the other DEPTH-2 over the
 * accesses to those variables; at depth 2 the seed's coin picks the one
 * change point's pool. The accesses to the other shared variables, and a
 * thread's start, get none. Each pool's k is its count: for the first run
 * the observed runs' synchronization points and an estimation run's
 * accesses to the cross-thread variables, then the previous run's. A bug
 * that needs one thread of N preempted between two such accesses gets
 * (DEPTH-2)/kcross whatever the synchronization points of the N threads
 * (depth 2: 1/(2 kcross)), and a synchronization bug (a lock order, a
 * split critical section) 1/ksync at one of them (depth 2: 1/(2 ksync)):
 * neither pool's size dilutes the other's change points. With no such
 * variable (or without --access) every step counts, as PCT has it, and
 * the campaign's pct line says so. "pct": {"focus", "k_sync", "k_cross"}
 * records which.
 *
 * A thread that spins yields (pct_yield). Serial mode runs one thread at a
 * time, so a thread that, released again and again with no other thread
 * run in between, reads the same address at the same site twice with no
 * probed write of its own between the two, waits for what only another
 * thread can do (a flag, a lock word, a deque that is empty for now).
 * Left at the top, it would spin until a change point or the steering cap
 * (a step per hit, a round trip each); PCT proper assumes such a loop
 * yields. It drops below every other thread, without a change point.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coverage/thread_model.h"
#include "kernel/policy.h"
#include "lib/json.h"
#include "lib/array_size.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/xalloc.h"
#include "strategies/pct.h"
#include "strategies/strategy.h"

#define PCT_DEFAULT_DEPTH 3

/* A run's step counts, the next run's k (split: its pools). */
struct pct_counts {
	uint64_t k;	 /* steps; 0: not known yet */
	uint64_t ksync;	 /* split: synchronization points */
	uint64_t kcross; /* split: cross-thread accesses */
};

/* The probe rotation (run/access_rotate.c) probes a hot variable in one
 * run of several: its runs count many more accesses than the others, and
 * a k taken from the run before would put every change point of a run
 * with it in its first accesses, or most of a run without it past its
 * end. So the counts are kept per probe set (strat_run.probe_set) too: a
 * run takes those of the last run with its set, the last run's when its
 * set is new. */
#define PCT_PROBE_SETS 16

struct pct_strat {
	uint32_t depth;
	struct pct_counts last; /* the last run's; the campaign's begin */
	struct {
		uint64_t key;
		struct pct_counts n;
	} sets[PCT_PROBE_SETS];
	unsigned nsets, next_set; /* used; the one a new key replaces */
	unsigned observed;	  /* estimation runs seen */
	bool split;		  /* change points split over sync points and cross accesses */
};

/* A thread's reads since its last write or synchronization point, while
 * no other thread ran (epoch): a read seen again is a spin. */
#define PCT_SPIN_READS 16

struct pct_spin {
	uint64_t epoch;
	uint64_t site[PCT_SPIN_READS], addr[PCT_SPIN_READS];
	uint32_t n;
	bool pending; /* the last read is the one it waits to make */
	bool spun;    /* yields at the next pick */
};

struct pct_strat_run {
	struct pct eng;
	uint64_t k;		/* the k this run's change points were drawn over */
	uint64_t ksync, kcross; /* split: its pools' */
	uint32_t *waiting;	/* thread-table indexes of the kept threads */
	size_t nwaiting;
	uint32_t *prio; /* per thread index: last priority given to the policy */
	bool *exited;
	bool *starting; /* kept at its start (CS_OP_START): no step */
	struct pct_spin *spin;
	size_t cap;	       /* of prio, exited, starting and spin */
	uint64_t points;       /* decision points reached in this run */
	uint64_t sync_points;  /* of them, synchronization points */
	uint64_t cross_points; /* of them, accesses to cross-thread variables */
	uint64_t last_release_ns;
	uint64_t epoch;	 /* bumped whenever a thread other than last ran */
	uint32_t last;	 /* the thread released last (UINT32_MAX: none yet) */
	uint64_t yields; /* spins seen in this run */
};

/* One action per decision point of STRAT_F_SYNC_POINTS (strategy.h) in an
 * observed run's thread model: an unsteered run records a lock or sem_wait
 * request only when it blocked, so a lock request counts by its outcome
 * (acquired, or a try/timed request that failed) and a sem_wait by its
 * success; cond wait/signal/broadcast, sem_post and barrier are recorded at
 * their entry, the point itself. */
static const uint16_t step_ops[] = {
	CS_OP_LOCK,	      CS_OP_TRYLOCK_OK, CS_OP_TRYLOCK_FAIL, CS_OP_RDLOCK,
	CS_OP_WRLOCK,	      CS_OP_SPIN_LOCK,	CS_OP_COND_WAIT,    CS_OP_COND_SIGNAL,
	CS_OP_COND_BROADCAST, CS_OP_SEM_WAIT,	CS_OP_SEM_POST,	    CS_OP_BARRIER,
};

static bool is_step_op(unsigned op)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(step_ops); i++)
		if (step_ops[i] == op)
			return true;
	return false;
}

static int pct_strat_init(struct strategy *s, const char *opts, char *err, size_t errlen)
{
	struct pct_strat *ps;
	unsigned long d = PCT_DEFAULT_DEPTH;
	char *end = NULL;

	if (opts) {
		errno = 0;
		if (opts[0] >= '0' && opts[0] <= '9')
			d = strtoul(opts, &end, 10);
		if (!end || *end || errno || d < 1 || d > PCT_MAX_DEPTH) {
			snprintf(err, errlen, "pct:DEPTH: depth 1-%d", PCT_MAX_DEPTH);
			return -EINVAL;
		}
	}
	ps = xcalloc(1, sizeof(*ps));
	ps->depth = (uint32_t)d;
	s->priv = ps;
	s->sched_serial = CS_SERIAL_PRIO;
	return 0;
}

static void pct_strat_destroy(struct strategy *s)
{
	free(s->priv);
	s->priv = NULL;
}

/* An observed run: its synchronization actions, one per decision point. */
static int pct_strat_estimate(struct strategy *s, struct strat_campaign *c,
			      const struct strat_observation *obs)
{
	struct pct_strat *ps = s->priv;
	const struct thread_model *tm = obs->tm;
	uint64_t n = 0;
	size_t i, j;

	for (i = 0; i < tm->nthreads; i++)
		for (j = 0; j < tm->threads[i].nactions; j++)
			n += is_step_op(tm->threads[i].actions[j].op);
	if (tm->truncated) /* more actions than the model keeps: count them all */
		for (i = 0, n = 0; i < ARRAY_SIZE(step_ops); i++)
			n += tm->by_op[step_ops[i]];
	if (n > ps->last.k)
		ps->last.k = n;
	ps->observed++;
	return 0;
}

/* The counts a run with probe set key starts from. */
static const struct pct_counts *counts_of(const struct pct_strat *ps, uint64_t key)
{
	for (unsigned i = 0; i < ps->nsets; i++)
		if (ps->sets[i].key == key)
			return &ps->sets[i].n;
	return &ps->last;
}

/* A run with probe set key counted n. */
static void counts_keep(struct pct_strat *ps, uint64_t key, const struct pct_counts *n)
{
	unsigned i;

	ps->last = *n;
	for (i = 0; i < ps->nsets && ps->sets[i].key != key; i++)
		;
	if (i == ps->nsets) {
		if (ps->nsets < PCT_PROBE_SETS)
			ps->nsets++;
		else
			i = ps->next_set++ % PCT_PROBE_SETS;
	}
	ps->sets[i].key = key;
	ps->sets[i].n = *n;
}

/* The k of a run: the engine needs DEPTH-1 distinct change points among
 * k >= 1 steps. */
static uint64_t next_k(const struct pct_strat *ps, const struct pct_counts *n)
{
	uint64_t k = n->k ? n->k : 1;

	return k < ps->depth - 1 ? ps->depth - 1 : k;
}

/* Split: a run's pools, the cross one filled up to the DEPTH-1 (at least
 * 1) steps the engine needs in all. */
static void next_pools(const struct pct_strat *ps, const struct pct_counts *n, uint64_t *ksync,
		       uint64_t *kcross)
{
	uint64_t need = ps->depth > 2 ? ps->depth - 1 : 1;

	*ksync = n->ksync;
	*kcross = n->ksync + n->kcross < need ? need - n->ksync : n->kcross;
}

static const char *plural(uint64_t n, const char *many)
{
	return n == 1 ? "" : many;
}

/* The campaign's pct line when the change points are split. */
static void split_line(const struct pct_strat *ps, const struct strat_campaign *c)
{
	uint64_t ks, kc;

	next_pools(ps, &ps->last, &ks, &kc);
	fprintf(stderr, "concsched: pct: depth %u, %u change point%s", ps->depth, ps->depth - 1,
		plural(ps->depth - 1, "s"));
	if (ps->depth < 2) {
		fprintf(stderr, "\n");
		return;
	}
	fprintf(stderr,
		": %s over the %llu synchronization point%s of %u observed run%s%s%u over the %llu "
		"access%s of an estimation run to the %zu variable%s written by one thread "
		"and read by another (the other accesses get none)\n",
		ps->depth == 2 ? "by the seed's coin, 1" : "1", (unsigned long long)ks,
		plural(ks, "s"), ps->observed, plural(ps->observed, "s"),
		ps->depth == 2 ? " or " : ", ", ps->depth == 2 ? 1 : ps->depth - 2,
		(unsigned long long)kc, plural(kc, "es"), c->cross_vars,
		plural(c->cross_vars, "s"));
}

static int pct_strat_campaign_begin(struct strategy *s, struct strat_campaign *c)
{
	struct pct_strat *ps = s->priv;

	ps->last.ksync = ps->last.k; /* the observed runs' synchronization points */
	ps->last.kcross = c->est_cross_accesses;
	ps->last.k += c->est_accesses;
	ps->split = c->cross_vars > 0;
	if (c->quiet)
		return 0;
	if (ps->split)
		split_line(ps, c);
	else
		fprintf(stderr,
			"concsched: pct: depth %u, %u change point%s over k = %llu steps (the "
			"synchronization points of %u observed run%s%s)\n",
			ps->depth, ps->depth - 1, plural(ps->depth - 1, "s"),
			(unsigned long long)next_k(ps, &ps->last), ps->observed,
			plural(ps->observed, "s"),
			c->est_accesses ? ", and the accesses of an estimation run: no variable "
					  "written by one thread and read by another, every step "
					  "counts"
					: "");
	return 0;
}

static void pct_strat_run_begin(struct strategy *s, struct strat_run *r)
{
	struct pct_strat *ps = s->priv;
	struct pct_strat_run *pr = xcalloc(1, sizeof(*pr));

	pr->last = UINT32_MAX;
	if (ps->split) {
		next_pools(ps, counts_of(ps, r->probe_set), &pr->ksync, &pr->kcross);
		pr->k = pr->ksync + pr->kcross;
		pct_init_split(&pr->eng, ps->depth, pr->ksync, pr->kcross, r->seed);
	} else {
		pr->k = next_k(ps, counts_of(ps, r->probe_set));
		pct_init(&pr->eng, ps->depth, pr->k, r->seed);
	}
	r->priv = pr;
}

static void pct_strat_config(struct strategy *s, struct strat_run *r, struct json *j)
{
	struct pct_strat *ps = s->priv;
	struct pct_strat_run *pr = r->priv;

	uint64_t ks, kc;

	json_obj_begin(j, "pct");
	json_kv_uint(j, "depth", ps->depth);
	if (!ps->split) {
		json_kv_uint(j, "k", pr ? pr->k : next_k(ps, counts_of(ps, r->probe_set)));
		json_kv_str(j, "focus", "every step");
		json_obj_end(j);
		return;
	}
	next_pools(ps, counts_of(ps, r->probe_set), &ks, &kc);
	json_kv_uint(j, "k", pr ? pr->k : ks + kc);
	json_kv_str(j, "focus", "split: sync points, cross-thread accesses");
	json_kv_uint(j, "k_sync", pr ? pr->ksync : ks);
	json_kv_uint(j, "k_cross", pr ? pr->kcross : kc);
	json_obj_end(j);
}

static void pct_strat_run_end(struct strategy *s, struct strat_run *r, struct strat_campaign *c,
			      const struct strat_outcome *o)
{
	struct pct_strat *ps = s->priv;
	struct pct_strat_run *pr = r->priv;
	struct pct_counts n;

	if (!pr)
		return;
	n = *counts_of(ps, r->probe_set);
	if (o->ran && pr->points)
		n.k = pr->points;
	if (o->ran && pr->sync_points)
		n.ksync = pr->sync_points;
	if (o->ran && pr->cross_points)
		n.kcross = pr->cross_points;
	if (o->ran)
		counts_keep(ps, r->probe_set, &n);
	if (pr->yields)
		log_debug("pct: %llu spin%s yielded", (unsigned long long)pr->yields,
			  pr->yields == 1 ? "" : "s");
	pct_free(&pr->eng);
	free(pr->waiting);
	free(pr->prio);
	free(pr->exited);
	free(pr->starting);
	free(pr->spin);
	free(pr);
	r->priv = NULL;
}

static uint32_t thread_index(struct strat_run *r, const struct strat_thread *t)
{
	return (uint32_t)(t - r->threads);
}

static void grow(struct pct_strat_run *pr, size_t ti)
{
	size_t n;

	if (ti < pr->cap)
		return;
	n = ti + 1 > 2 * pr->cap ? ti + 1 : 2 * pr->cap;
	pr->prio = xrealloc(pr->prio, n * sizeof(*pr->prio));
	pr->exited = xrealloc(pr->exited, n * sizeof(*pr->exited));
	pr->starting = xrealloc(pr->starting, n * sizeof(*pr->starting));
	pr->spin = xrealloc(pr->spin, n * sizeof(*pr->spin));
	memset(pr->prio + pr->cap, 0, (n - pr->cap) * sizeof(*pr->prio));
	memset(pr->exited + pr->cap, 0, (n - pr->cap) * sizeof(*pr->exited));
	memset(pr->starting + pr->cap, 0, (n - pr->cap) * sizeof(*pr->starting));
	memset(pr->spin + pr->cap, 0, (n - pr->cap) * sizeof(*pr->spin));
	pr->cap = n;
}

/* Give the scheduler every live thread's engine priority that changed. */
static void prio_sync(struct pct_strat_run *pr, struct strat_run *r)
{
	size_t i;

	for (i = 0; i < r->nthreads && i < pr->cap; i++) {
		uint32_t p;

		if (pr->exited[i])
			continue;
		p = pct_priority(&pr->eng, (uint32_t)i);
		if (!p || p == pr->prio[i])
			continue;
		pr->prio[i] = p;
		if (policy_set_prio(r->pol, r->threads[i].tid, p))
			log_debug("pct: cannot set the priority of thread %s", r->threads[i].path);
	}
}

static void pct_strat_thread(struct strategy *s, struct strat_run *r, struct strat_thread *t)
{
	struct pct_strat_run *pr = r->priv;
	uint32_t ti = thread_index(r, t);

	grow(pr, ti);
	pr->epoch++; /* it may run before its first point */
	pct_thread_add(&pr->eng, ti);
	prio_sync(pr, r);
}

/* Did thread ti, at an access step, read again what it read before with
 * nothing written since (by it, or by another thread: none ran)? Its reads
 * since its last write or synchronization point are kept while the epoch
 * stays; the read it waits to make joins them (pending: it is made once
 * the thread is released, and stays when another thread ran before). */
static bool spins(struct pct_strat_run *pr, uint32_t ti, const struct strat_point *p)
{
	bool write = !p->access || p->split || cov_event_op_writes(p->access->op);
	struct pct_spin *sp;
	uint32_t i;

	grow(pr, ti);
	sp = &pr->spin[ti];
	if (ti != pr->last)
		pr->epoch++; /* a thread nobody released ran (it had not parked yet) */
	sp->pending = false;
	if (sp->epoch != pr->epoch || write) {
		sp->epoch = pr->epoch;
		sp->n = 0;
		if (write)
			return false;
	}
	for (i = 0; i < sp->n; i++)
		if (sp->site[i] == p->e->site && sp->addr[i] == p->e->obj) {
			sp->n = 0;
			return true;
		}
	if (sp->n == PCT_SPIN_READS)
		sp->n = 0;
	sp->site[sp->n] = p->e->site;
	sp->addr[sp->n++] = p->e->obj;
	sp->pending = true;
	return false;
}

/* Thread ti is released after another thread ran: of its reads, only the
 * one it is about to make counts from now on. */
static void spin_restart(struct pct_strat_run *pr, uint32_t ti)
{
	struct pct_spin *sp = &pr->spin[ti];

	if (sp->pending && sp->n) {
		sp->site[0] = sp->site[sp->n - 1];
		sp->addr[0] = sp->addr[sp->n - 1];
		sp->n = 1;
	} else {
		sp->n = 0;
	}
	sp->epoch = pr->epoch;
}

static void pct_strat_event(struct strategy *s, struct strat_run *r, const struct cs_event *e,
			    struct strat_thread *t)
{
	struct pct_strat_run *pr = r->priv;
	uint32_t ti = thread_index(r, t);

	if (e->op == CS_OP_EXIT && ti < pr->cap)
		pr->exited[ti] = true;
	if (ti != pr->last)
		pr->epoch++; /* another thread did something */
}

/* Thread ti waits (an earlier wait of it was never parked: forgotten). */
static void waiting_add(struct pct_strat_run *pr, uint32_t ti)
{
	size_t i;

	for (i = 0; i < pr->nwaiting; i++)
		if (pr->waiting[i] == ti)
			pr->waiting[i--] = pr->waiting[--pr->nwaiting];
	if (pr->nwaiting % 16 == 0)
		pr->waiting = xrealloc(pr->waiting, (pr->nwaiting + 16) * sizeof(*pr->waiting));
	pr->waiting[pr->nwaiting++] = ti;
}

static void waiting_remove(struct pct_strat_run *pr, uint32_t ti)
{
	size_t i;

	for (i = 0; i < pr->nwaiting; i++)
		if (pr->waiting[i] == ti)
			pr->waiting[i--] = pr->waiting[--pr->nwaiting];
}

/* Every synchronization point is a step, and with --access every access
 * to a shared variable: the thread waits for its turn. For a split
 * campaign's change points a step is in the synchronization pool (any step
 * but an access), the cross pool (an access to a variable written by one
 * thread and read by another) or none (another shared variable's). An
 * access to a variable the campaign does not follow goes on. The end of
 * the process (exit() while other threads live) is a step whose thread
 * yields (pct_yield): it drops below every other thread, demoted ones
 * too, so it is picked only when no other thread waits for its turn, as
 * PCT's program ends once its threads have run. A new thread's start
 * waits for its turn too, but is no step: PCT's initial priorities order
 * the threads' starts, no change point falls there, and k (the run's
 * points) does not count it, so the bound 1/(n k^(d-1)) keeps its k. */
static void pct_strat_point(struct strategy *s, struct strat_run *r, const struct strat_point *p,
			    struct strat_decision *d)
{
	struct pct_strat_run *pr = r->priv;
	bool step = p->e->op != CS_OP_START; /* a thread's start is none */
	enum pct_pool pool = !step	  ? PCT_POOL_NONE
			     : !p->access ? PCT_POOL_SYNC
			     : p->cross	  ? PCT_POOL_CROSS
					  : PCT_POOL_NONE;

	if (cov_event_op_is_access(p->e->op) && !p->access) {
		d->v = STRAT_PROCEED;
		return;
	}
	grow(pr, thread_index(r, p->t));
	pr->starting[thread_index(r, p->t)] = !step;
	pr->points += step;
	pr->sync_points += pool == PCT_POOL_SYNC;
	pr->cross_points += pool == PCT_POOL_CROSS;
	pct_thread_pool(&pr->eng, thread_index(r, p->t), pool);
	if (p->e->op == CS_OP_PROC_EXIT) {
		pct_yield(&pr->eng, thread_index(r, p->t));
		prio_sync(pr, r);
	}
	if (spins(pr, thread_index(r, p->t), p))
		pr->spin[thread_index(r, p->t)].spun = true;
	waiting_add(pr, thread_index(r, p->t));
	d->v = STRAT_PARK;
}

/* The waiting threads seen spinning yield before the pick. */
static void yield_spinners(struct pct_strat_run *pr, struct strat_run *r)
{
	bool any = false;
	size_t i;

	for (i = 0; i < pr->nwaiting; i++) {
		struct pct_spin *sp = &pr->spin[pr->waiting[i]];

		if (!sp->spun)
			continue;
		sp->spun = false;
		pct_yield(&pr->eng, pr->waiting[i]);
		pr->yields++;
		any = true;
	}
	if (any)
		prio_sync(pr, r);
}

static void pct_strat_all_parked(struct strategy *s, struct strat_run *r,
				 const struct policy_note *n)
{
	struct pct_strat_run *pr = r->priv;
	uint32_t changes = pr->eng.next_change;
	int64_t pick;
	bool start;

	if (n->ts_ns <= pr->last_release_ns)
		return; /* a note from before our last release */
	r->drain(r);
	yield_spinners(pr, r);
	/* The top thread kept at its start begins without a step. */
	pick = pct_highest(&pr->eng, pr->waiting, pr->nwaiting);
	start = pick >= 0 && (size_t)pick < pr->cap && pr->starting[pick];
	if (!start)
		pick = pct_pick(&pr->eng, pr->waiting, pr->nwaiting);
	if (pick < 0 || (size_t)pick >= r->nthreads)
		return;
	pr->starting[pick] = false;
	if (pr->eng.next_change != changes) /* a change point demoted a thread */
		prio_sync(pr, r);
	waiting_remove(pr, (uint32_t)pick);
	if ((uint32_t)pick != pr->last) {
		pr->epoch++;
		grow(pr, (size_t)pick);
		spin_restart(pr, (uint32_t)pick);
	}
	pr->last = (uint32_t)pick;
	pr->last_release_ns = now_ns();
	r->release(r, &r->threads[pick], pct_priority(&pr->eng, (uint32_t)pick));
	if (!start)
		pct_step(&pr->eng);
}

#define TEXT_(x) #x
#define TEXT(x)	 TEXT_(x) /* a macro's value in a string */

const struct strategy_ops strat_pct_ops = {
	.name = "pct",
	.synopsis = "pct[:DEPTH]",
	.summary = "PCT (Burckhardt et al.): one thread at a time by random priorities, DEPTH-1 "
		   "priority change points (DEPTH 1-" TEXT(
			   PCT_MAX_DEPTH) ", default 3); a step is a "
					  "synchronization point (with --access: and an access to "
					  "a shared variable; the change points are then split: "
					  "one on a synchronization point, the rest on accesses "
					  "to variables one thread writes and another reads)",
	.flags = STRAT_F_STEERS | STRAT_F_SYNC_POINTS | STRAT_F_ACCESS_POINTS | STRAT_F_ESTIMATE |
		 STRAT_F_SERIAL | STRAT_F_PICKS | STRAT_F_JOBS,
	.replay = STRAT_REPLAY_ORDER,
	.init = pct_strat_init,
	.destroy = pct_strat_destroy,
	.estimate = pct_strat_estimate,
	.campaign_begin = pct_strat_campaign_begin,
	.run_begin = pct_strat_run_begin,
	.config_json = pct_strat_config,
	.run_end = pct_strat_run_end,
	.thread_start = pct_strat_thread,
	.event = pct_strat_event,
	.point = pct_strat_point,
	.all_parked = pct_strat_all_parked,
};
