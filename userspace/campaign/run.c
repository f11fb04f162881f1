// SPDX-License-Identifier: MIT
/*
 * concsched run / replay: campaigns of repeated runs (DESIGN.md "One run,
 * step by step"; issue 5). Each run launches the target under the sync
 * probes and, when the strategy steers, the scx_concsched scheduler: every
 * synchronization decision point parks its thread, the controller decides
 * (noise: nothing, yield, sleep n µs, halt until alone) and releases it,
 * logging each decision by abstract thread and per-thread point index so
 * `replay` makes the same ones at the same program points. The run's
 * outcome goes through the oracles, its coverage, failures and decision
 * log into the store in one transaction, and saturation of the chosen
 * metric decides when the campaign has seen enough. docs/run.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "cli/commands.h"
#include "coverage/coverage.h"
#include "lib/declog.h"
#include "lib/json.h"
#include "kernel/launcher.h"
#include "coverage/metrics.h"
#include "strategies/noise.h"
#include "campaign/oracle.h"
#include "kernel/policy.h"
#include "kernel/probes.h"
#include "campaign/report.h"
#include "lib/rng.h"
#include "campaign/saturation.h"
#include "kernel/sched_ctl.h"
#include "campaign/store.h"
#include "kernel/symbolize.h"
#include "kernel/target.h"
#include "coverage/thread_model.h"
#include "lib/util.h"
#include "vm/vm.h"
#include "campaign/run_int.h"

#include "access.skel.h"
#include "sync.skel.h"

static const char *const metric_names[] = { "sp", "goodlock", "hbpair", "sync" };

static volatile sig_atomic_t run_stop;

static void on_signal(int sig)
{
	run_stop = sig;
}

static bool sched_ext_supported(void)
{
	return access("/sys/kernel/sched_ext/state", R_OK) == 0;
}

/* ---- usage ----------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: concsched run [OPTIONS] -- PROG [ARGS...]\n\n"
		"Run PROG again and again under BPF probes on its pthread synchronization and,\n"
		"with a steering strategy, under concsched's sched_ext scheduler, which stops\n"
		"threads at lock/condvar/create/join points and delays or reorders them. Every\n"
		"run is checked by the oracles (exit status, fatal signal, hang, deadlock,\n"
		"sanitizer/assertion output, --check) and stored with its coverage and its\n"
		"decisions in the campaign directory; a failing run can be replayed.\n\n"
		"Options:\n"
		"  -s, --strategy NAME   random (default) | tsa | tsa-h | map | rnd-y:P |\n"
		"                        rnd-s10:P | rnd-s100:P | a noise configuration\n"
		"                        (docs/strategies.md) | none (plain reruns under the\n"
		"                        probes, any kernel)\n"
		"      --estimate-runs K tsa, --access: observed runs before the campaign that\n"
		"                        estimate the SP requirements / find shared variables (1)\n"
		"      --access          also probe memory accesses: the estimation runs probe "
		"every\n"
		"                        candidate site, later runs only the sites that touched\n"
		"                        variables two threads share; adds the lp, concurpairs,\n"
		"                        avio*, hbpair*, goodlock*, eraser*, goldilock-sc, fpair\n"
		"                        and map metrics and race warnings (map implies it)\n"
		"      --sites-include GLOB  candidate access sites: functions or source files\n"
		"                        matching GLOB (repeatable; default all)\n"
		"      --sites-exclude GLOB  drop functions or source files matching GLOB\n"
		"      --sites-object LIB    also probe the accesses of shared object LIB\n"
		"  -n, --runs N          exactly N runs (default: until the metric saturates,\n"
		"                        at most %d)\n"
		"      --time SEC        stop after SEC seconds\n"
		"      --run-timeout SEC a run longer than this is a hang (default %g)\n"
		"      --seed N          campaign seed (default: random, recorded)\n"
		"      --serial MODE     off (default) | fifo | random: one target thread at a\n"
		"                        time; at each point where all are parked the oldest\n"
		"                        (fifo) or a seeded random one (random) goes on\n"
		"      --keep-going      do not stop at the first failure\n"
		"  -o, --out DIR         campaign directory (default: concsched-PROG-DATE-TIME)\n"
		"      --json            final summary as JSON on stdout (concsched-report/1)\n"
		"      --metric NAME     metric whose saturation ends the campaign: sp (default),\n"
		"                        goodlock, hbpair, sync; with --access also lp,\n"
		"                        concurpairs, avio*, hbpair*, goodlock*, eraser*,\n"
		"                        goldilock-sc, fpair, map\n"
		"      --saturation W,T  window and slope threshold (default 50,0.1; 120s,0.1)\n"
		"      --expect-exit N   the exit status of a good run (default 0)\n"
		"      --check CMD       shell command after each run; non-zero means failure\n"
		"                        (env: CONCSCHED_RUN, CONCSCHED_EXIT, CONCSCHED_OUT_FILE)\n"
		"      --user USER       run PROG as USER (default: the sudo caller)\n"
		"      --vm              run the whole campaign in the sched_ext VM (for kernels\n"
		"                        without sched_ext; see concsched doctor)\n"
		"      --vm-cpus N       virtual CPUs of that VM (default 2)\n"
		"  -h, --help            this text\n\n"
		"Examples:\n"
		"  sudo concsched run -- ./mytest                  # random noise until "
		"saturation\n"
		"  sudo concsched run --vm -o camp -- ./mytest      # host without sched_ext\n"
		"  sudo concsched run -s rnd-s10:0.3 -n 200 --keep-going -o camp -- ./mytest\n"
		"  sudo concsched run -s none -n 100 -- ./mytest    # plain reruns (baseline)\n"
		"  sudo concsched run -s tsa -n 200 -o camp -- ./mytest  # SP-directed (seed 000)\n"
		"  sudo concsched run -s map -n 100 --vm -- ./mytest      # MAP-directed (seed "
		"001)\n"
		"  sudo concsched run -s none -n 20 --access --sites-include 'worker*' -- "
		"./mytest\n"
		"  sudo concsched run --serial random --check './verify out.txt' -- ./mytest\n"
		"  concsched report camp --html camp.html\n"
		"  sudo concsched replay camp --run 17\n\n"
		"Exit status: 0 no failure, 1 a failure was found, 2 usage or environment error,\n"
		"130 interrupted.\n",
		RUN_DEFAULT_CAP, RUN_DEFAULT_TIMEOUT);
}

static void replay_usage(FILE *f)
{
	fprintf(f,
		"Usage: concsched replay DIR --run N [--times K] [--vm] [--run-timeout SEC]\n\n"
		"Re-execute run N of campaign DIR with its recorded seed, strategy configuration\n"
		"and decision log (decisions are keyed by abstract thread and per-thread point\n"
		"index, so they apply at the same program points). Prints the outcome of each\n"
		"replay; the campaign is not modified.\n\n"
		"Options:\n"
		"  -r, --run N           the run to replay (concsched report DIR lists them)\n"
		"  -t, --times K         replay K times and count how often it fails (default 1)\n"
		"      --run-timeout SEC per-replay timeout (default: the campaign's)\n"
		"      --json            one JSON object with every replay's outcome\n"
		"      --vm              replay inside the sched_ext VM\n"
		"  -h, --help            this text\n\n"
		"Examples:\n"
		"  sudo concsched replay camp --run 17\n"
		"  sudo concsched replay camp --run 17 --times 10 --vm\n\n"
		"Exit status: 1 the run failed again (at least once), 0 it passed every time,\n"
		"2 usage or environment error.\n");
}

/* ---- strategies --------------------------------------------------------------------- */

/* The decision points are synchronization calls; placements and seedings
 * that only make sense at memory accesses (or need access probes) are
 * redrawn for `random`. */
static bool noise_fits_sync(const struct noise_config *c)
{
	switch (c->placement) {
	case NOISE_PLACE_RANDOM_ALL:
	case NOISE_PLACE_READ_WRITE:
	case NOISE_PLACE_COVERAGE:
		break;
	default:
		return false;
	}
	switch (c->seed.kind) {
	case NOISE_SEED_INVERSE:
	case NOISE_SEED_PRIORITY:
	case NOISE_SEED_TIMEOUT:
		return false;
	default:
		return true;
	}
}

static int parse_strategy(struct run_opts *o)
{
	char err[160] = "";

	if (!strcmp(o->strategy, "none")) {
		o->kind = STRAT_NONE;
		return 0;
	}
	if (!strcmp(o->strategy, "random")) {
		o->kind = STRAT_RANDOM;
		return 0;
	}
	if (!strcmp(o->strategy, "tsa") || !strcmp(o->strategy, "tsa-h")) {
		o->kind = o->strategy[3] ? STRAT_TSA_H : STRAT_TSA;
		return 0;
	}
	if (!strcmp(o->strategy, "map")) {
		o->kind = STRAT_MAP;
		o->access = true;
		return 0;
	}
	if (!strcmp(o->strategy, "pct") || !strcmp(o->strategy, "ga")) {
		cs_err("--strategy %s: not in this version of run (use none, random, tsa, tsa-h, "
		       "map, rnd-y:P, rnd-s10:P, rnd-s100:P or a noise configuration)",
		       o->strategy);
		return -EINVAL;
	}
	if (noise_config_parse(o->strategy, &o->noise, err, sizeof(err))) {
		cs_err("--strategy %s: %s (see concsched run --help)", o->strategy, err);
		return -EINVAL;
	}
	if (!noise_fits_sync(&o->noise)) {
		cs_err("--strategy %s: this placement/seeding needs memory-access points; run "
		       "steers at synchronization points (use random-all, read-write or coverage "
		       "with yield, sleep, busywait, wait or haltOne)",
		       o->strategy);
		return -EINVAL;
	}
	o->kind = STRAT_NOISE;
	return 0;
}

/* The run's concrete configuration: stored with the run and in its log. */
static char *run_config_json(const struct campaign *c, const struct noise_config *nc, uint64_t seed)
{
	const struct run_opts *o = c->o;
	static const char *const serial[] = { "off", "fifo", "random", "prio" };
	char buf[256];
	struct json_mem m;

	json_mem_open(&m);
	json_obj_begin(&m.j, NULL);
	json_kv_str(&m.j, "strategy", o->strategy);
	if (nc) {
		noise_config_format(nc, buf, sizeof(buf));
		json_kv_str(&m.j, "noise", buf);
	}
	json_kv_str(&m.j, "serial", serial[o->serial]);
	json_kv_uint(&m.j, "seed", seed);
	access_run_config_json(c, &m.j);
	json_obj_end(&m.j);
	return json_mem_close(&m);
}

static int parse_serial(const char *s, enum cs_serial_mode *m)
{
	if (!strcmp(s, "off"))
		*m = CS_SERIAL_OFF;
	else if (!strcmp(s, "fifo"))
		*m = CS_SERIAL_FIFO;
	else if (!strcmp(s, "random"))
		*m = CS_SERIAL_RANDOM;
	else if (!strcmp(s, "prio"))
		*m = CS_SERIAL_PRIO;
	else
		return -EINVAL;
	return 0;
}

/* ---- threads and decisions -------------------------------------------------------------- */

/* The decision points: operations whose entry probe emits the event that
 * says "parked here" (pthread_create/join park at entry but report only on
 * return, so they are not steered). */
static const uint16_t park_ops[] = {
	CS_OP_LOCK_REQ,	    CS_OP_RDLOCK_REQ,  CS_OP_WRLOCK_REQ,
	CS_OP_COND_WAIT,    CS_OP_COND_SIGNAL, CS_OP_COND_BROADCAST,
	CS_OP_SEM_WAIT_REQ, CS_OP_SEM_POST,    CS_OP_BARRIER,
};

static bool is_park_op(uint16_t op)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(park_ops); i++)
		if (park_ops[i] == op)
			return true;
	return false;
}

static struct rthread *thread_find(struct onerun *r, uint32_t tid)
{
	size_t i;

	for (i = r->nthreads; i-- > 0;)
		if (r->threads[i].tid == tid)
			return &r->threads[i];
	return NULL;
}

static struct rthread *thread_add(struct onerun *r, uint32_t tid, const char *path)
{
	struct rthread *t;

	if (r->nthreads >= RUN_MAX_THREADS)
		return NULL;
	if (r->nthreads % 64 == 0)
		r->threads = xrealloc(r->threads, (r->nthreads + 64) * sizeof(*r->threads));
	t = &r->threads[r->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	snprintf(t->path, sizeof(t->path), "%s", path);
	t->id = fnv1a64(t->path, strlen(t->path), FNV1A64_INIT);
	if (r->tsa)
		tsa_hook_thread(r, t);
	if (r->acc)
		access_hook_thread(r, t);
	return t;
}

struct rthread *run_thread_find(struct onerun *r, uint32_t tid)
{
	return thread_find(r, tid);
}

/* The thread of an event: the main thread is "0", a thread created by P
 * is P's path plus its creation ordinal. Threads whose creation we did not
 * see (created by libc internals) get "?N" in order of appearance. */
static struct rthread *thread_of(struct onerun *r, uint32_t tid, uint32_t pid)
{
	struct rthread *t = thread_find(r, tid);
	char path[48];

	if (t)
		return t;
	if (tid == pid && !r->nthreads)
		return thread_add(r, tid, "0");
	snprintf(path, sizeof(path), "?%zu", r->nthreads);
	return thread_add(r, tid, path);
}

static void thread_created(struct onerun *r, const struct cs_event *e)
{
	struct rthread *parent = thread_of(r, e->tid, e->pid);
	char path[80];

	if (!parent || thread_find(r, (uint32_t)e->obj))
		return;
	snprintf(path, sizeof(path), "%s.%u", parent->path, ++parent->ncreated);
	/* Deep creation trees: the path's hash stands for its prefix. */
	if (strlen(path) >= sizeof(parent->path))
		snprintf(path, sizeof(path), "#%016" PRIx64 ".%u",
			 fnv1a64(parent->path, strlen(parent->path), FNV1A64_INIT),
			 parent->ncreated);
	thread_add(r, (uint32_t)e->obj, path);
}

static void delay_add(struct onerun *r, uint32_t tid, uint64_t us)
{
	if (r->ndelays == RUN_MAX_DELAYS) {
		policy_release(r->pol, tid);
		return;
	}
	r->delays[r->ndelays].tid = tid;
	r->delays[r->ndelays].due_ns = now_ns() + us * 1000;
	r->ndelays++;
}

static void delays_due(struct onerun *r, bool all)
{
	uint64_t now = now_ns();
	size_t i = 0;

	while (i < r->ndelays) {
		if (all || r->delays[i].due_ns <= now) {
			policy_release(r->pol, r->delays[i].tid);
			r->delays[i] = r->delays[--r->ndelays];
			continue;
		}
		i++;
	}
}

static int next_delay_ms(struct onerun *r)
{
	uint64_t now = now_ns(), best = UINT64_MAX;
	size_t i;

	for (i = 0; i < r->ndelays; i++)
		if (r->delays[i].due_ns < best)
			best = r->delays[i].due_ns;
	if (best == UINT64_MAX)
		return 20;
	if (best <= now)
		return 0;
	return (int)((best - now) / 1000000 + 1 < 20 ? (best - now) / 1000000 + 1 : 20);
}

/* A lock seen from two threads is a shared variable for the placements:
 * pairs (obj, first tid), the tid becoming UINT32_MAX once shared. */
static bool lock_shared(struct onerun *r, uint64_t obj, uint32_t tid)
{
	size_t i;

	for (i = 0; i < r->nlock_threads; i += 2) {
		if (r->lock_threads[i] != obj)
			continue;
		if (r->lock_threads[i + 1] != tid)
			r->lock_threads[i + 1] = UINT32_MAX;
		return r->lock_threads[i + 1] == UINT32_MAX;
	}
	if (r->nlock_threads % 128 == 0)
		r->lock_threads =
			xrealloc(r->lock_threads, (r->nlock_threads + 128) * sizeof(uint64_t));
	r->lock_threads[r->nlock_threads++] = obj;
	r->lock_threads[r->nlock_threads++] = tid;
	return false;
}

static void apply(struct onerun *r, struct rthread *t, enum declog_action act, int64_t arg)
{
	switch (act) {
	case DECLOG_DELAY_US:
		r->injected++;
		delay_add(r, t->tid, arg > 0 ? (uint64_t)arg : 0);
		return;
	case DECLOG_PARK: /* halt: until every other runnable thread is parked */
		r->injected++;
		if (r->nhalted < ARRAY_SIZE(r->halted)) {
			r->halted[r->nhalted++] = t->tid;
			return;
		}
		break;
	case DECLOG_YIELD:
		r->injected++;
		break;
	default:
		break;
	}
	/* Released now: a yield, because the released thread goes to the back
	 * of its CPU's queue. */
	policy_release(r->pol, t->tid);
}

void run_release(struct onerun *r, struct rthread *t, enum declog_action why, int64_t arg)
{
	declog_add(&r->log, t->id, 0, t->points ? t->points - 1 : 0, why, arg);
	policy_release(r->pol, t->tid);
}

static bool is_lock_request(uint16_t op)
{
	return op == CS_OP_LOCK_REQ || op == CS_OP_RDLOCK_REQ || op == CS_OP_WRLOCK_REQ;
}

static bool tsa_kind(enum strategy_kind k)
{
	return k == STRAT_TSA || k == STRAT_TSA_H;
}

/* A thread is parked at a decision point: decide and (later) release. */
static void on_parked(struct onerun *r, const struct cs_event *e)
{
	struct rthread *t = thread_of(r, e->tid, e->pid);
	const struct declog_entry *d;
	struct noise_point pt = { 0 };
	struct noise_decision nd;
	uint64_t k;
	size_t n;

	if (!t) {
		policy_release(r->pol, e->tid);
		return;
	}
	k = t->points++;
	r->decisions++;
	if (r->replay && r->o->kind == STRAT_MAP) {
		map_replay_parked(r, t, k);
		return;
	}
	if (r->replay && tsa_kind(r->o->kind)) {
		/* A point the engine paused at has its release logged: wait
		 * for the all-parked note; any other point proceeded. */
		if (declog_lookup(r->replay, t->id, 0, k, &d)) {
			r->waiting = xrealloc(r->waiting, (r->nwaiting + 1) * sizeof(*r->waiting));
			r->waiting[r->nwaiting].t = t;
			r->waiting[r->nwaiting].k = k;
			r->nwaiting++;
		} else {
			policy_release(r->pol, t->tid);
		}
		return;
	}
	if (r->tsa) {
		if (!is_lock_request(e->op) || !tsa_hook_parked(r, e, t))
			policy_release(r->pol, t->tid);
		return;
	}
	if (r->o->kind == STRAT_MAP) {
		switch (cov_op_is_access(e->op) ? map_hook_parked(r, e, t) : MAP_HOOK_PASS) {
		case MAP_HOOK_KEEP:
			break;
		case MAP_HOOK_PROCEED: /* logged: replay keeps the order of decisions */
			run_release(r, t, DECLOG_RELEASE, MAP_REL_PROCEED);
			break;
		default:
			policy_release(r->pol, t->tid);
			break;
		}
		return;
	}
	if (cs_verbose > 1)
		cs_debug("parked: op %u tid %u thread %s point %" PRIu64, e->op, e->tid, t->path,
			 k);
	if (r->serial_ctl) {
		size_t i;

		/* A thread already waiting at an earlier point was never
		 * parked there (the park was cancelled): forget that point. */
		for (i = 0; i < r->nwaiting; i++)
			if (r->waiting[i].t == t)
				r->waiting[i--] = r->waiting[--r->nwaiting];
		/* Wait for the all-parked note: who goes next is the decision. */
		r->waiting = xrealloc(r->waiting, (r->nwaiting + 1) * sizeof(*r->waiting));
		r->waiting[r->nwaiting].t = t;
		r->waiting[r->nwaiting].k = k;
		r->nwaiting++;
		return;
	}
	if (r->replay) {
		n = declog_lookup(r->replay, t->id, 0, k, &d);
		if (!n) {
			policy_release(r->pol, t->tid);
			return;
		}
		declog_add(&r->log, t->id, 0, k, d->action, d->arg);
		apply(r, t, d->action, d->arg);
		return;
	}
	if (!r->noise_on) {
		policy_release(r->pol, t->tid);
		return;
	}

	pt.kind = NOISE_PT_SYNC;
	pt.thread = (uint32_t)t->id;
	pt.site = (uint32_t)e->site;
	pt.var = e->obj;
	pt.shared = e->obj && lock_shared(r, e->obj, e->tid);
	pt.site_hits = k;
	pt.coverage_target = k == 0;
	nd = noise_decide(&r->noise, &pt);
	switch (nd.act) {
	case NOISE_ACT_SLEEP:
	case NOISE_ACT_BUSYWAIT:
	case NOISE_ACT_WAIT:
		declog_add(&r->log, t->id, 0, k, DECLOG_DELAY_US, nd.n);
		apply(r, t, DECLOG_DELAY_US, nd.n);
		break;
	case NOISE_ACT_YIELD:
		declog_add(&r->log, t->id, 0, k, DECLOG_YIELD, nd.n);
		apply(r, t, DECLOG_YIELD, nd.n);
		break;
	case NOISE_ACT_HALT:
		declog_add(&r->log, t->id, 0, k, DECLOG_PARK, 0);
		apply(r, t, DECLOG_PARK, 0);
		break;
	default:
		policy_release(r->pol, t->tid);
		break;
	}
}

static int cmp_waiting_path(const void *a, const void *b)
{
	const struct rthread *const *x = a, *const *y = b;

	return strcmp((*x)->path, (*y)->path);
}

/* Serial mode: every runnable thread is parked; release one: with fifo the
 * first waiting thread in creation-path order, with random a seeded choice
 * among them in that order, so it does not depend on tids or timing; a
 * replay releases the thread the log names at the point the log names. */
static void serial_pick(struct onerun *r, const struct policy_note *n)
{
	const struct declog_entry *want = NULL;
	size_t i, pick = SIZE_MAX;

	if (n->ts_ns <= r->last_pick_ns)
		return; /* a note from before our last release */
	ring_buffer__consume(r->rb);
	if (cs_verbose > 1) {
		size_t q;

		for (q = 0; q < r->nwaiting; q++) {
			struct cs_thread_ctl tc = { 0 };

			sched_ctl_thread(r->ctl, r->waiting[q].t->tid, &tc);
			cs_debug("note (%u parked): thread %s point %" PRIu64 " tid %u state %llu",
				 n->nr_parked, r->waiting[q].t->path, r->waiting[q].k,
				 r->waiting[q].t->tid, (unsigned long long)tc.state);
		}
	}
	if (!r->nwaiting)
		return;
	if (r->replay && r->cursor < r->replay->n) {
		want = &r->replay->entries[r->cursor];
		for (i = 0; i < r->nwaiting; i++)
			if (r->waiting[i].t->id == want->thread && r->waiting[i].k == want->event)
				pick = i;
		if (pick != SIZE_MAX)
			r->cursor++;
	}
	if (pick == SIZE_MAX) {
		struct rthread **order = xcalloc(r->nwaiting, sizeof(*order));
		struct rthread *chosen;

		for (i = 0; i < r->nwaiting; i++)
			order[i] = r->waiting[i].t;
		qsort(order, r->nwaiting, sizeof(*order), cmp_waiting_path);
		/* fifo: the oldest thread (first in creation-path order) runs
		 * until it blocks, ends or waits for a younger one; random: a
		 * seeded choice. Either way no tid or timing enters. */
		chosen = order[r->o->serial == CS_SERIAL_FIFO ? 0
							      : cs_rng_below(&r->rng, r->nwaiting)];
		for (i = 0; i < r->nwaiting; i++)
			if (r->waiting[i].t == chosen)
				pick = i;
		free(order);
	}
	declog_add(&r->log, r->waiting[pick].t->id, 0, r->waiting[pick].k, DECLOG_RELEASE, 0);
	r->last_pick_ns = now_ns();
	policy_release(r->pol, r->waiting[pick].t->tid);
	r->waiting[pick] = r->waiting[--r->nwaiting];
}

/* Replay of a map run. Every decision at an access was logged in the
 * order it was made; the replay lets each logged point go in that order,
 * one at a time: the next one only once the thread released before it
 * has shown another event (its access executed), 2 ms have passed, or
 * every runnable thread is parked. A point the log does not know goes at
 * once; when the run diverges (the next logged point never comes), an
 * all-parked note skips ahead to the first logged point a thread waits at. */
#define MAP_REPLAY_CONFIRM_NS 2000000ULL

static void map_replay_release(struct onerun *r, size_t i)
{
	struct rthread *t = r->waiting[i].t;

	declog_add(&r->log, t->id, 0, r->waiting[i].k, DECLOG_RELEASE, 0);
	r->rp_inflight = t->tid;
	r->last_pick_ns = now_ns();
	policy_release(r->pol, t->tid);
	r->waiting[i] = r->waiting[--r->nwaiting];
}

void map_replay_advance(struct onerun *r)
{
	size_t i;

	while (r->cursor < r->replay->n) {
		const struct declog_entry *want = &r->replay->entries[r->cursor];

		if (r->rp_inflight && now_ns() - r->last_pick_ns < MAP_REPLAY_CONFIRM_NS)
			return;
		r->rp_inflight = 0;
		for (i = 0; i < r->nwaiting; i++)
			if (r->waiting[i].t->id == want->thread && r->waiting[i].k == want->event)
				break;
		if (i == r->nwaiting)
			return;
		r->cursor++;
		map_replay_release(r, i);
	}
}

void map_replay_parked(struct onerun *r, struct rthread *t, uint64_t k)
{
	const struct declog_entry *d;

	if (!declog_lookup(r->replay, t->id, 0, k, &d)) {
		policy_release(r->pol, t->tid);
		return;
	}
	r->waiting = xrealloc(r->waiting, (r->nwaiting + 1) * sizeof(*r->waiting));
	r->waiting[r->nwaiting].t = t;
	r->waiting[r->nwaiting].k = k;
	r->nwaiting++;
	map_replay_advance(r);
}

static void map_replay_all_parked(struct onerun *r, const struct policy_note *n)
{
	size_t i, e;

	if (n->ts_ns <= r->last_pick_ns)
		return;
	ring_buffer__consume(r->rb);
	r->rp_inflight = 0;
	map_replay_advance(r);
	if (!r->nwaiting || n->ts_ns <= r->last_pick_ns)
		return;
	/* Stuck: the next logged point is not coming. */
	for (e = r->cursor; e < r->replay->n; e++)
		for (i = 0; i < r->nwaiting; i++)
			if (r->waiting[i].t->id == r->replay->entries[e].thread &&
			    r->waiting[i].k == r->replay->entries[e].event) {
				r->cursor = e + 1;
				map_replay_release(r, i);
				map_replay_advance(r);
				return;
			}
	map_replay_release(r, 0);
}

static void on_all_parked(struct policy *p, const struct policy_note *n, void *ctx)
{
	struct onerun *r = ctx;
	size_t i;

	if (r->replay && r->o->kind == STRAT_MAP) {
		map_replay_all_parked(r, n);
		return;
	}
	if (r->serial_ctl || (r->replay && tsa_kind(r->o->kind))) {
		serial_pick(r, n);
		return;
	}
	if (r->tsa) {
		tsa_hook_all_parked(r, n);
		return;
	}
	if (r->o->kind == STRAT_MAP) {
		map_hook_all_parked(r, n);
		return;
	}
	/* Every runnable thread is stopped: the halted ones have waited until
	 * they were alone; let them go first. */
	for (i = 0; i < r->nhalted; i++)
		policy_release(p, r->halted[i]);
	r->nhalted = 0;
	(void)n;
}

/* ---- event loop ------------------------------------------------------------------------- */

static bool seen_pid(struct onerun *r, uint32_t pid)
{
	static uint32_t seen[64];
	static size_t nseen;
	size_t i;

	if (!r) {
		nseen = 0;
		return false;
	}
	for (i = 0; i < nseen; i++)
		if (seen[i] == pid)
			return true;
	if (nseen < ARRAY_SIZE(seen))
		seen[nseen++] = pid;
	return false;
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct onerun *r = ctx;
	const struct cs_event *e = data;
	struct rthread *t;

	if (len < sizeof(*e))
		return 0;
	if (r->rp_inflight && e->tid == r->rp_inflight) {
		/* Replay of map: the thread released last has moved on. */
		r->rp_inflight = 0;
		if (r->nwaiting)
			map_replay_advance(r);
	}
	if (cov_op_is_access(e->op)) {
		/* From the access probes (probes/access.bpf.c): not part of
		 * the thread model, a decision point when parked. */
		t = thread_of(r, e->tid, e->pid);
		if (r->acc && t)
			access_hook_event(r, e, t);
		if (r->steer && (e->flags & CS_EV_PARKED))
			on_parked(r, e);
		return 0;
	}
	if (!seen_pid(r, e->pid) || e->op == CS_OP_EXEC)
		site_resolver_scan_pid(&r->res, e->pid);
	tmodel_add_event(&r->tm, e);
	if (e->op == CS_OP_CREATE)
		thread_created(r, e);
	t = thread_of(r, e->tid, e->pid);
	if (r->tsa && t)
		tsa_hook_event(r, e, t);
	if (r->acc && t)
		access_hook_event(r, e, t);
	/* Return events repeat the entry's flags: react to the entry only. */
	if (r->steer && (e->flags & CS_EV_PARKED) && is_park_op(e->op))
		on_parked(r, e);
	return 0;
}

void run_refresh_vmas(struct onerun *r)
{
	r->res.nvmas = 0;
	site_resolver_load_vmas(&r->res, sync_probes_map_fd(r->sp, "cs_sync_vmas"));
}

/* The deadlock report at a timeout: who holds what, who waits where. */
static const char *action_site(struct onerun *r, const struct tm_thread *t, uint64_t addr,
			       char *buf, size_t len)
{
	struct site_ref s;
	struct sym_site ss;
	char key[PATH_MAX + 32];

	site_resolve(&r->res, t->tgid, t->gen, addr, &s);
	syncov_site_describe(site_key(&s, key, sizeof(key)), &ss, buf, len);
	return buf;
}

/* "first (0x4040a0)" for a lock in a global, else its address. */
static const char *lock_text(struct onerun *r, const struct tm_thread *t, uint64_t lock, char *buf,
			     size_t len)
{
	struct site_ref s;
	struct sym_site ss;
	char key[PATH_MAX + 32], text[1024];

	site_resolve(&r->res, t->tgid, t->gen, lock, &s);
	if (s.object) {
		syncov_site_describe(site_key(&s, key, sizeof(key)), &ss, text, sizeof(text));
		if (ss.symbol && !ss.is_func) {
			if (ss.sym_offset)
				snprintf(buf, len, "%s+%" PRIu64 " (0x%" PRIx64 ")", ss.symbol,
					 ss.sym_offset, lock);
			else
				snprintf(buf, len, "%s (0x%" PRIx64 ")", ss.symbol, lock);
			return buf;
		}
	}
	snprintf(buf, len, "0x%" PRIx64, lock);
	return buf;
}

static void analyze_deadlock(struct onerun *r)
{
	struct dl_thread *dt;
	struct dl_held *held;
	char(*names)[64], (*texts)[512];
	size_t i, j, n = r->tm.nthreads, nh = 0, nt = 0, blocked = 0;

	if (!n)
		return;
	ring_buffer__consume(r->rb);
	run_refresh_vmas(r);
	dt = xcalloc(n, sizeof(*dt));
	held = xcalloc(n * CS_LOCKSET_MAX, sizeof(*held));
	names = xcalloc(n, sizeof(*names));
	texts = xcalloc(n * (2 * CS_LOCKSET_MAX + 2), sizeof(*texts));
	for (i = 0; i < n; i++) {
		const struct tm_thread *t = &r->tm.threads[i];
		const struct tm_action *last = t->nactions ? &t->actions[t->nactions - 1] : NULL;
		struct rthread *rt = thread_find(r, t->tid);

		snprintf(names[i], sizeof(names[i]), "%s (tid %u)", rt ? rt->path : "?", t->tid);
		dt[i].name = names[i];
		dt[i].held = &held[nh];
		for (j = 0; j < t->nheld && j < CS_LOCKSET_MAX; j++) {
			size_t a;

			held[nh].lock = t->held[j];
			held[nh].lock_name =
				lock_text(r, t, t->held[j], texts[nt++], sizeof(texts[0]));
			held[nh].site = NULL;
			for (a = t->nactions; a-- > 0;) {
				const struct tm_action *x = &t->actions[a];

				if (tm_op_is_acquire(x->op) &&
				    tm_action_lock(x->op, x->obj, x->arg) == t->held[j]) {
					held[nh].site = action_site(r, t, x->site, texts[nt++],
								    sizeof(texts[0]));
					break;
				}
			}
			nh++;
			dt[i].nheld++;
		}
		if (last && !t->exited &&
		    (last->op == CS_OP_LOCK_REQ || last->op == CS_OP_RDLOCK_REQ ||
		     last->op == CS_OP_WRLOCK_REQ)) {
			dt[i].blocked = true;
			dt[i].waits_for = last->obj;
			dt[i].waits_name =
				lock_text(r, t, last->obj, texts[nt++], sizeof(texts[0]));
			dt[i].wait_site =
				action_site(r, t, last->site, texts[nt++], sizeof(texts[0]));
			blocked++;
		}
	}
	if (blocked && deadlock_analyze(dt, n, NULL, r->deadlock, sizeof(r->deadlock)) > 0)
		r->has_deadlock = true;
	free(dt);
	free(held);
	free(names);
	free(texts);
}

static int run_loop(struct onerun *r)
{
	struct ring_buffer *rb;
	uint64_t deadline = r->t0 + (uint64_t)(r->o->run_timeout_s * 1e9);
	int err;

	rb = ring_buffer__new(sync_probes_map_fd(r->sp, "cs_sync_events"), on_event, r, NULL);
	if (!rb) {
		err = -errno;
		cs_err("cannot open the event ring buffer: %s", strerror(-err));
		return err;
	}
	r->rb = rb;
	err = launch_release(&r->l, r->ti->path);
	if (err) {
		ring_buffer__free(rb);
		return err;
	}
	access_hook_launched(r);
	r->t0 = now_ns();
	deadline = r->t0 + (uint64_t)(r->o->run_timeout_s * 1e9);
	for (;;) {
		int w = launch_wait(&r->l, 1);

		if (w == 1 || w < 0)
			break;
		if (run_stop)
			break;
		if (now_ns() >= deadline) {
			r->timed_out = true;
			break;
		}
		/* Serial mode waits on the scheduler's notes (the decisions
		 * happen there), the others on events and delays. */
		if (r->serial_ctl)
			policy_poll(r->pol, 5);
		err = ring_buffer__poll(
			rb, r->serial_ctl ? 0
			    : r->replay && r->nwaiting
				    ? 1
				    : access_poll_ms(r, r->steer ? next_delay_ms(r) : 20));
		/* Most events come without a wakeup (the probe batches them). */
		if (err >= 0)
			err = ring_buffer__consume(rb);
		if (err < 0 && err != -EINTR) {
			cs_err("reading events: %s", strerror(-err));
			break;
		}
		access_hook_tick(r);
		if (r->replay && r->o->kind == STRAT_MAP && r->nwaiting)
			map_replay_advance(r);
		if (r->steer) {
			delays_due(r, false);
			policy_poll(r->pol, 0);
			if (sched_ctl_exited(r->ctl)) {
				sched_ctl_print_exit(r->ctl, stderr);
				r->steer = false;
			}
		}
	}
	ring_buffer__consume(rb);
	if (r->timed_out)
		analyze_deadlock(r);
	if (!r->l.reaped)
		launch_kill(&r->l);
	r->t1 = now_ns();
	if (r->steer) {
		struct cs_sched_stats ss;

		delays_due(r, true);
		sched_ctl_stats(r->ctl, &ss);
		cs_debug("run: %.3f s, %" PRIu64 " decisions, %" PRIu64 " injected; scheduler: "
			 "%llu parks, %llu releases, %llu delays, %llu watchdog, %llu notes, "
			 "%llu rekicks",
			 (r->t1 - r->t0) / 1e9, r->decisions, r->injected,
			 (unsigned long long)ss.parks, (unsigned long long)ss.releases,
			 (unsigned long long)ss.delays, (unsigned long long)ss.watchdog,
			 (unsigned long long)ss.notes, (unsigned long long)ss.release_rekicks);
		sched_ctl_quiesce(r->ctl);
	}
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	r->rb = NULL;
	return 0;
}

/* ---- one run ------------------------------------------------------------------------------ */

static int share_maps(struct bpf_object *obj, void *arg)
{
	return sched_ctl_share_maps(arg, obj);
}

void run_session_close(struct run_session *s)
{
	const struct site_set *aset = s->aset;
	const char *aprog = s->aprog;

	if (s->ctl)
		sched_ctl_quiesce(s->ctl);
	if (s->ap_open)
		access_probes_close(&s->ap);
	if (s->sp_open)
		sync_probes_close(&s->sp);
	policy_free(s->pol);
	sched_ctl_close(s->ctl);
	memset(s, 0, sizeof(*s));
	s->aset = aset;
	s->aprog = aprog;
}

static int share_maps_ap(struct bpf_object *obj, void *arg)
{
	struct run_session *s = arg;

	return s->ctl ? sched_ctl_share_maps(s->ctl, obj) : 0;
}

/* The access probe object, loaded once with the whole candidate table,
 * writing into the sync probes' ring buffer. */
static int session_access(struct run_session *s)
{
	struct access_probes_opts ao = { .run_events = true };
	char *alloc;
	int err;

	if (s->ap_open || !s->aset)
		return 0;
	alloc = access_alloc_object(s->aprog);
	ao.alloc_object = alloc;
	ao.sync_events_fd = sync_probes_map_fd(&s->sp, "cs_sync_events");
	ao.before_load = share_maps_ap;
	ao.before_load_arg = s;
	err = access_probes_load(&s->ap, s->aset, &ao);
	free(alloc);
	if (err)
		return err;
	s->ap_open = true;
	s->ap_kicked = false;
	return 0;
}

/* The scheduler and the probe object stay loaded for the whole campaign
 * (loading them costs ~1.5 s per run under TCG); each run gets fresh maps,
 * its own uprobe links and its own site policy. */
static int session_prepare(struct run_session *s, struct onerun *r)
{
	struct sync_probe_opts po = { .scope = CS_SCOPE_TRACKED };
	struct sched_ctl_opts so = { 0 };
	int err;

	if (s->ctl && sched_ctl_exited(s->ctl)) {
		/* The kernel ejected it (printed): start over. */
		sched_ctl_print_exit(s->ctl, stderr);
		run_session_close(s);
	}
	if ((r->steer || s->want_sched) && !s->ctl) {
		so.serial = r->o->serial;
		so.seed = r->seed;
		r->tm_sched = now_ns();
		err = sched_ctl_open(&s->ctl, &so);
		r->tm_sched = now_ns() - r->tm_sched;
		if (err)
			return err;
		s->pol = policy_new_sched(s->ctl);
		if (s->ap_open) { /* loaded without the scheduler's maps */
			access_probes_close(&s->ap);
			s->ap_open = false;
		}
		if (s->sp_open) {
			sync_probes_close(&s->sp);
			s->sp_open = false;
		}
	}
	if (s->ctl)
		sched_ctl_reset(s->ctl);
	if (s->ap_open)
		access_probes_reset(&s->ap);
	if (s->sp_open) {
		err = sync_probes_reset(&s->sp);
		return err ? err : session_access(s);
	}
	if (s->ctl) {
		po.before_load = share_maps;
		po.before_load_arg = s->ctl;
		po.commit = true;
	}
	r->tm_probes = now_ns();
	err = sync_probes_open(&s->sp, &po);
	if (!err) {
		s->sp_open = true;
		s->kicked = false;
		err = session_access(s);
	}
	r->tm_probes = now_ns() - r->tm_probes;
	return err;
}

static int capture_fd(const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		cs_err("memfd_create: %s", strerror(errno));
	return fd;
}

/* Read a captured stream, keeping its last RUN_OUTPUT_MAX bytes. */
static char *read_capture(int fd, size_t *len)
{
	off_t end = lseek(fd, 0, SEEK_END), start = 0;
	char *buf;
	ssize_t n;
	size_t got = 0;

	*len = 0;
	if (end <= 0)
		return xcalloc(1, 1);
	if (end > (off_t)RUN_OUTPUT_MAX)
		start = end - RUN_OUTPUT_MAX;
	buf = xcalloc(1, (size_t)(end - start) + 1);
	while (got < (size_t)(end - start)) {
		n = pread(fd, buf + got, (size_t)(end - start) - got, start + (off_t)got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = 0;
	*len = got;
	return buf;
}

static int onerun_start(struct onerun *r, uid_t uid, gid_t gid, bool drop)
{
	struct launch_opts lo = { 0 };
	int err;

	site_resolver_init(&r->res);
	tmodel_init(&r->tm, RUN_MAX_ACTIONS);
	seen_pid(NULL, 0);
	r->serial_ctl = r->steer && r->o->serial != CS_SERIAL_OFF;
	cs_rng_seed(&r->rng, r->seed ^ 0x73657269616cULL);
	err = session_prepare(r->sess, r);
	if (err)
		return err;
	r->sp = &r->sess->sp;
	r->ctl = r->sess->ctl;
	r->pol = r->sess->pol;
	if (r->pol)
		policy_on_all_parked(r->pol, on_all_parked, r);
	r->out_fd = capture_fd("concsched-stdout");
	r->err_fd = capture_fd("concsched-stderr");
	if (r->out_fd < 0 || r->err_fd < 0)
		return -EIO;
	lo.argv = r->o->argv;
	lo.sched_ext = r->steer;
	lo.drop_privs = drop;
	lo.uid = uid;
	lo.gid = gid;
	lo.stdin_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	lo.stdout_fd = r->out_fd;
	lo.stderr_fd = r->err_fd;
	err = launch_prepare(&lo, &r->l);
	if (lo.stdin_fd >= 0)
		close(lo.stdin_fd);
	if (err) {
		cs_err("cannot start %s: %s", r->ti->path, strerror(-err));
		return err;
	}
	r->launched = true;
	r->tm_attach = now_ns();
	err = sync_probes_track(r->sp, r->l.pid);
	if (!err)
		err = sync_probes_attach(r->sp, r->rt, r->l.pid);
	r->tm_attach = now_ns() - r->tm_attach;
	if (err)
		return err;
	site_resolver_add_path(&r->res, r->rt->object);
	site_resolver_add_path(&r->res, r->rt->ldso);
	site_resolver_add_path(&r->res, r->ti->path);
	if (r->access_on && r->sess->ap_open) {
		err = access_probes_attach(&r->sess->ap, r->l.pid, r->access_mask);
		if (err)
			return err;
		if (r->steer && !r->sess->ap_kicked) {
			err = sched_ctl_attach_kick(r->ctl, r->sess->ap.skel->progs.access_commit);
			if (err)
				return err;
			r->sess->ap_kicked = true;
		}
		if (r->ctl)
			sched_ctl_guard(r->ctl);
	}
	if (r->steer) {
		static const uint16_t access_ops[] = { CS_OP_READ, CS_OP_WRITE, CS_OP_RW };
		size_t i;

		if (!r->sess->kicked) {
			err = sched_ctl_attach_kick(r->ctl, r->sp->skel->progs.cs_sync_commit);
			if (!err)
				err = sched_ctl_guard(r->ctl);
			if (err)
				return err;
			r->sess->kicked = true;
		}
		/* Every decision point parks; the controller decides and
		 * releases (on_parked). Under map the decision points are
		 * the accesses (run_map.c). */
		if (r->o->kind == STRAT_MAP)
			for (i = 0; i < ARRAY_SIZE(access_ops) && !err && r->access_on; i++)
				err = policy_park_site(r->pol, CS_SITE_OP_KEY(access_ops[i]), 0, 0,
						       0);
		else
			for (i = 0; i < ARRAY_SIZE(park_ops) && !err; i++)
				err = policy_park_site(r->pol, CS_SITE_OP_KEY(park_ops[i]), 0, 0,
						       0);
		if (!err)
			err = policy_serialize(r->pol, r->o->serial, r->seed);
		if (!err)
			err = sched_ctl_set_active(r->ctl, true);
		if (err) {
			cs_err("cannot set the scheduler's policy: %s", strerror(-err));
			return err;
		}
	}
	return 0;
}

void onerun_cleanup(struct onerun *r)
{
	if (r->launched && !r->l.reaped)
		launch_kill(&r->l);
	if (r->ctl)
		sched_ctl_quiesce(r->ctl);
	if (r->sess && r->sess->ap_open)
		access_probes_reset(&r->sess->ap);
	if (r->sp)
		sync_probes_detach(r->sp);
	access_run_free(r);
	syncov_run_free(&r->cov);
	tmodel_free(&r->tm);
	site_resolver_free(&r->res);
	declog_free(&r->log);
	free(r->threads);
	free(r->lock_threads);
	free(r->waiting);
	if (r->out_fd >= 0)
		close(r->out_fd);
	if (r->err_fd >= 0)
		close(r->err_fd);
}

/* Run the target once; fills r (caller cleans up with onerun_cleanup). */
static int onerun_do(struct onerun *r, uid_t uid, gid_t gid, bool drop)
{
	int err;

	r->out_fd = r->err_fd = -1;
	r->started_ns = (int64_t)now_realtime_ns();
	err = onerun_start(r, uid, gid, drop);
	if (err)
		return err;
	err = run_loop(r);
	if (err)
		return err;
	r->tm_harvest = now_ns();
	if (r->sess->ap_open) /* not reset: its counters are read at commit */
		access_probes_detach(&r->sess->ap);
	sync_probes_detach(r->sp);
	run_refresh_vmas(r);
	syncov_harvest(r->sp, &r->res, r->rt->is_static ? r->rt->object : NULL, &r->cov);
	r->tm_harvest = now_ns() - r->tm_harvest;
	cs_debug("run setup: scheduler %.3f s, probes %.3f s, attach %.3f s; harvest %.3f s",
		 r->tm_sched / 1e9, r->tm_probes / 1e9, r->tm_attach / 1e9, r->tm_harvest / 1e9);
	return 0;
}

/* The user's --check command, as the target's user. */
static int run_check(const struct run_opts *o, int64_t run, int status, uid_t uid, gid_t gid,
		     bool drop, int out_fd)
{
	char runs[32], st[32], outf[64];
	char *argv[] = { "/bin/sh", "-c", (char *)o->check, NULL };
	struct launch_opts lo = { 0 };
	struct launch l;
	int err, w;

	snprintf(runs, sizeof(runs), "%" PRId64, run);
	snprintf(st, sizeof(st), "%d",
		 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	snprintf(outf, sizeof(outf), "/proc/%d/fd/%d", (int)getpid(), out_fd);
	setenv("CONCSCHED_RUN", runs, 1);
	setenv("CONCSCHED_EXIT", st, 1);
	setenv("CONCSCHED_OUT_FILE", outf, 1);
	lo.argv = argv;
	lo.drop_privs = drop;
	lo.uid = uid;
	lo.gid = gid;
	lo.stdin_fd = -1;
	lo.stdout_fd = lo.stderr_fd = STDERR_FILENO;
	err = launch_prepare(&lo, &l);
	if (!err)
		err = launch_release(&l, "/bin/sh");
	if (err) {
		launch_kill(&l);
		return err;
	}
	w = launch_wait(&l, (unsigned)(o->run_timeout_s * 1000));
	if (w != 1) {
		launch_kill(&l);
		return 0x7f00; /* exit 127: it hung */
	}
	return l.status;
}

/* ---- store ----------------------------------------------------------------------------------- */

/* Site id of "OBJECT+0xOFF" (a code or data location), 0 when the token
 * is not a site. */
static int64_t site_id(struct store *st, const char *key)
{
	const char *plus = strrchr(key, '+');
	struct store_site ss = { 0 };
	struct sym_site sym;
	char text[1024], obj[PATH_MAX];

	if (!plus || plus == key || strncmp(plus, "+0x", 3) || (size_t)(plus - key) >= sizeof(obj))
		return 0;
	memcpy(obj, key, plus - key);
	obj[plus - key] = 0;
	syncov_site_describe(key, &sym, text, sizeof(text));
	ss.object = obj;
	ss.offset = strtoull(plus + 3, NULL, 16);
	ss.function = sym.symbol;
	ss.file = sym.file;
	ss.line = sym.line;
	return store_add_site(st, &ss);
}

int64_t run_store_site(struct store *st, const char *key)
{
	return site_id(st, key);
}

int64_t run_site_id(struct campaign *c, struct onerun *r, uint32_t tgid, uint32_t gen,
		    uint64_t addr)
{
	struct site_ref s;
	char key[PATH_MAX + 32];

	if (site_resolve(&r->res, tgid, gen, addr, &s) || !s.object)
		return 0;
	return site_id(c->st, site_key(&s, key, sizeof(key)));
}

/* A coverage key with every site replaced by its "@N" reference; a lock
 * identity "KIND@SITE" becomes "KIND:@N" ('@' is reserved for refs). */
static char *store_key(struct store *st, const char *key)
{
	size_t cap = strlen(key) * 2 + 64, n = 0;
	char *out = xcalloc(1, cap), *dup = xstrdup(key), *save = NULL, *tok;

	for (tok = strtok_r(dup, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *at = strchr(tok, '@'), ref[24], *site = at ? at + 1 : tok;
		int64_t id = site_id(st, site);
		char piece[PATH_MAX + 64];

		if (id > 0 && at) {
			*at = 0;
			snprintf(piece, sizeof(piece), "%s:%s", tok, store_site_ref(ref, id));
		} else if (id > 0) {
			snprintf(piece, sizeof(piece), "%s", store_site_ref(ref, id));
		} else {
			snprintf(piece, sizeof(piece), "%s", tok);
			for (at = piece; (at = strchr(at, '@'));)
				*at = ':';
		}
		if (n + strlen(piece) + 2 > cap) {
			cap = (n + strlen(piece) + 2) * 2;
			out = xrealloc(out, cap);
		}
		n += (size_t)sprintf(out + n, "%s%s", n ? " " : "", piece);
	}
	free(dup);
	return out;
}

/* Sites a failure is named by: where each thread last synchronized. */
static size_t failure_sites(struct store *st, struct onerun *r, int64_t *ids, size_t max)
{
	size_t i, j, n = 0;

	for (i = 0; i < r->tm.nthreads && n < max; i++) {
		const struct tm_thread *t = &r->tm.threads[i];
		struct site_ref s;
		char key[PATH_MAX + 32];
		int64_t id;

		size_t a = t->nactions;

		/* Its last synchronization with a site (exit has none). */
		while (a > 0 && (!t->actions[a - 1].site || t->actions[a - 1].op == CS_OP_EXIT))
			a--;
		if (!a)
			continue;
		site_resolve(&r->res, t->tgid, t->gen, t->actions[a - 1].site, &s);
		if (!s.object)
			continue;
		id = site_id(st, site_key(&s, key, sizeof(key)));
		for (j = 0; j < n && ids[j] != id; j++)
			;
		if (id > 0 && j == n)
			ids[n++] = id;
	}
	return n;
}

/* ---- campaign ----------------------------------------------------------------------------------
 */

/* 0..3: a sync probe metric; SYNCOV__COUNT: a metric of --access. */
static int metric_index(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(metric_names); i++)
		if (!strcmp(metric_names[i], name))
			return (int)i;
	if (cov_metric_parse(name) >= 0)
		return SYNCOV__COUNT;
	return -1;
}

static char *args_json(char **argv, int argc)
{
	struct json_mem m;
	int i;

	json_mem_open(&m);
	json_arr_begin(&m.j, NULL);
	for (i = 1; i < argc; i++)
		json_kv_str(&m.j, NULL, argv[i]);
	json_arr_end(&m.j);
	return json_mem_close(&m);
}

static char *campaign_config_json(const struct run_opts *o)
{
	static const char *const serial[] = { "off", "fifo", "random", "prio" };
	char sat[48];
	struct json_mem m;
	struct json *j = &m.j;

	json_mem_open(&m);
	json_obj_begin(j, NULL);
	json_kv_str(j, "strategy", o->strategy);
	json_kv_str(j, "serial", serial[o->serial]);
	json_kv_uint(j, "runs", o->runs);
	json_kv_dbl(j, "time_s", o->time_s);
	json_kv_dbl(j, "run_timeout_s", o->run_timeout_s);
	json_kv_bool(j, "keep_going", o->keep_going);
	json_kv_str(j, "metric", o->metric);
	json_kv_str(j, "saturation", sat_format(&o->sat, sat, sizeof(sat)));
	json_kv_bool(j, "access", o->access);
	if (o->access)
		json_kv_uint(j, "estimate_runs", o->estimate_runs);
	if (o->expect_exit_set)
		json_kv_int(j, "expect_exit", o->expect_exit);
	json_kv_str(j, "check", o->check);
	json_obj_end(j);
	return json_mem_close(&m);
}

static void progress(struct campaign *c, bool final)
{
	const struct run_opts *o = c->o;
	double el = (now_ns() - c->t0) / 1e9, eta = -1;
	size_t m;

	if (!c->tty)
		return;
	fprintf(stderr, "\r\033[K");
	if (final)
		return;
	if (o->runs)
		fprintf(stderr, "run %" PRId64 "/%" PRIu64, c->nruns, o->runs);
	else
		fprintf(stderr, "run %" PRId64, c->nruns);
	for (m = 0; m < SYNCOV__COUNT; m++)
		fprintf(stderr, "  %s %.0f", metric_names[m], c->npts ? c->y[m][c->npts - 1] : 0.0);
	if (c->sat.enough)
		fprintf(stderr, "  %s slope %.2f%s", o->metric, c->sat.slope,
			c->sat.saturated ? " saturated" : "");
	else
		fprintf(stderr, "  %s saturation: %zu/%.0f runs", o->metric, c->npts,
			o->sat.window);
	fprintf(stderr, "  failures %zu", c->failures);
	if (o->runs && c->nruns)
		eta = el / (double)c->nruns * (double)(o->runs - (uint64_t)c->nruns);
	if (o->time_s > 0 && (eta < 0 || o->time_s - el < eta))
		eta = o->time_s - el;
	if (eta >= 0)
		fprintf(stderr, "  ETA %.0fs", eta);
	fflush(stderr);
}

/* Record one finished run; returns 1 when it failed. */
static int commit_run(struct campaign *c, struct onerun *r, int64_t index)
{
	struct oracle_input in = { 0 };
	struct oracle_verdict v;
	struct store_run_result res = { 0 };
	char *out, *err;
	size_t out_len, err_len, i;
	int check_status = 0;
	uint8_t *blob = NULL;
	size_t blob_len = 0;
	int64_t sites[16];
	int ret;

	out = read_capture(r->out_fd, &out_len);
	err = read_capture(r->err_fd, &err_len);
	if (c->o->check && !r->timed_out)
		check_status =
			run_check(c->o, index, r->l.status, c->uid, c->gid, c->drop, r->out_fd);
	in.wait_status = r->l.status;
	in.timed_out = r->timed_out;
	in.expect_exit_set = c->o->expect_exit_set;
	in.expect_exit = c->o->expect_exit;
	in.out = out;
	in.out_len = out_len;
	in.err = err;
	in.err_len = err_len;
	in.check_ran = c->o->check && !r->timed_out;
	in.check_status = check_status;
	in.deadlock_report = r->has_deadlock ? r->deadlock : NULL;
	oracle_classify(&in, &v);

	for (i = 0; i < r->cov.tasks.n; i++) {
		const struct syncov_task *t = &r->cov.tasks.tasks[i];
		char *k = store_key(c->st, t->key);

		store_cover_task(c->st, syncov_metric_name(t->metric), k, t->hits);
		free(k);
	}
	access_run_commit(c, r);
	if (outcome_is_failure(v.outcome)) {
		size_t ns = failure_sites(c->st, r, sites, ARRAY_SIZE(sites));

		store_record_failure(c->st, outcome_name(v.outcome), v.summary,
				     v.detail[0] ? v.detail : NULL, sites, ns);
	}
	r->log.seed = r->seed;
	declog_encode(&r->log, &blob, &blob_len);
	res.outcome = outcome_name(v.outcome);
	res.summary = v.summary;
	res.exit_status = r->timed_out		   ? -1
			  : WIFEXITED(r->l.status) ? WEXITSTATUS(r->l.status)
						   : -1;
	res.signal = !r->timed_out && WIFSIGNALED(r->l.status) ? WTERMSIG(r->l.status) : 0;
	res.duration_ns = (int64_t)(r->t1 - r->t0);
	res.declog = blob;
	res.declog_len = blob_len;
	res.out = out;
	res.out_len = out_len;
	res.err = err;
	res.err_len = err_len;
	ret = store_end_run(c->st, &res);
	if (ret)
		cs_err("cannot commit run %" PRId64 ": %s", index, store_errmsg(c->st));
	free(blob);
	free(out);
	free(err);
	if (ret)
		return -EIO;
	if (outcome_is_failure(v.outcome)) {
		c->failures++;
		if (c->tty)
			progress(c, true);
		fprintf(stderr, "concsched: run %" PRId64 ": %s\n", index, v.summary);
		return 1;
	}
	return 0;
}

static void series_add(struct campaign *c)
{
	size_t m;

	for (m = 0; m <= SYNCOV__COUNT; m++) {
		if (m == SYNCOV__COUNT && c->metric != SYNCOV__COUNT)
			break;
		c->x[m] = xrealloc(c->x[m], (c->npts + 1) * sizeof(double));
		c->y[m] = xrealloc(c->y[m], (c->npts + 1) * sizeof(double));
		c->x[m][c->npts] = c->o->sat.by_time ? (now_ns() - c->t0) / 1e9 : (double)c->nruns;
		c->y[m][c->npts] = (double)store_count_tasks(
			c->st, m < SYNCOV__COUNT ? metric_names[m] : c->o->metric);
	}
	c->npts++;
	sat_evaluate(c->x[c->metric], c->y[c->metric], c->npts, &c->o->sat, &c->sat);
	c->saturated = c->sat.saturated;
}

static int campaign_run_one(struct campaign *c)
{
	struct run_opts *o = c->o;
	struct onerun r = { 0 };
	struct store_run_info ri = { 0 };
	struct noise_config nc;
	struct cs_rng rng;
	char *cfg;
	int64_t index;
	int err;

	r.o = o;
	r.ti = &c->ti;
	r.rt = &c->rt;
	r.sess = &c->sess;
	r.steer = c->steer;
	r.seed = cs_rng_derive(o->seed, (uint64_t)c->nruns + 1);
	if (o->kind == STRAT_RANDOM) {
		cs_rng_seed(&rng, r.seed ^ 0x6e6f697365ULL);
		do
			noise_config_random(&rng, &nc);
		while (!noise_fits_sync(&nc));
	} else {
		nc = o->noise;
	}
	r.noise_on = o->kind == STRAT_NOISE || o->kind == STRAT_RANDOM;
	if (r.noise_on)
		noise_run_begin(&r.noise, &nc, r.seed);
	cfg = run_config_json(c, r.noise_on ? &nc : NULL, r.seed);
	declog_init(&r.log, r.seed, cfg);
	ri.seed = r.seed;
	ri.strategy_config_json = cfg;
	if (c->tsa)
		tsa_strat_run_begin(c, &r);
	if (c->acc)
		access_run_begin(c, &r, false);
	err = onerun_do(&r, c->uid, c->gid, c->drop);
	if (c->tsa)
		tsa_strat_run_end(c, &r);
	if (err) {
		onerun_cleanup(&r);
		free(cfg);
		return err;
	}
	if (run_stop && !r.l.reaped) {
		onerun_cleanup(&r);
		free(cfg);
		return -EINTR;
	}
	ri.started_ns = r.started_ns;
	err = store_begin_run(c->st, &ri, &index);
	if (err) {
		cs_err("cannot record run: %s", store_errmsg(c->st));
		onerun_cleanup(&r);
		free(cfg);
		return -EIO;
	}
	c->nruns = index;
	err = commit_run(c, &r, index);
	onerun_cleanup(&r);
	free(cfg);
	if (err < 0)
		return err;
	series_add(c);
	progress(c, false);
	return err;
}

int run_observe_once(struct campaign *c, struct onerun *r)
{
	memset(r, 0, sizeof(*r));
	r->o = c->o;
	r->ti = &c->ti;
	r->rt = &c->rt;
	r->sess = &c->sess;
	r->steer = false;
	declog_init(&r->log, 0, NULL);
	return onerun_do(r, c->uid, c->gid, c->drop);
}

int run_observe_access(struct campaign *c, struct onerun *r)
{
	memset(r, 0, sizeof(*r));
	r->o = c->o;
	r->ti = &c->ti;
	r->rt = &c->rt;
	r->sess = &c->sess;
	r->steer = false;
	r->seed = cs_rng_derive(c->o->seed, 0);
	declog_init(&r->log, 0, NULL);
	access_run_begin(c, r, true);
	return onerun_do(r, c->uid, c->gid, c->drop);
}

static bool campaign_done(struct campaign *c)
{
	const struct run_opts *o = c->o;

	if (run_stop)
		return true;
	if (c->failures && !o->keep_going)
		return true;
	if (o->runs && (uint64_t)c->nruns >= o->runs)
		return true;
	if (o->time_s > 0 && (now_ns() - c->t0) / 1e9 >= o->time_s)
		return true;
	if (!o->runs && o->time_s <= 0) {
		if (c->saturated)
			return true;
		if (c->nruns >= RUN_DEFAULT_CAP)
			return true;
	}
	return false;
}

static char *default_out_dir(const char *prog)
{
	char stamp[32];
	time_t now = time(NULL);
	const char *base = strrchr(prog, '/');

	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime(&now));
	return xasprintf("concsched-%s-%s", base ? base + 1 : prog, stamp);
}

static const char *kernel_release(void)
{
	static struct utsname u;

	uname(&u);
	return u.release;
}

static int check_environment(struct campaign *c)
{
	if (geteuid() != 0) {
		cs_err("run needs root to load BPF probes and the scheduler (try: sudo concsched "
		       "run ...)");
		return -EPERM;
	}
	if (c->steer && !sched_ext_supported()) {
		cs_err("this kernel (%s) has no sched_ext, which --strategy %s needs: add --vm to "
		       "run the campaign in the sched_ext VM (or use --strategy none)",
		       kernel_release(), c->o->strategy);
		return -ENOTSUP;
	}
	return 0;
}

static int final_report(struct campaign *c)
{
	const char *host_dir = getenv("CONCSCHED_HOST_DIR");
	struct report_options ro = { .dir = host_dir ? host_dir : c->o->out };
	struct report *rep;
	int err;

	ro.replay_vm = getenv("CONCSCHED_HOST_NO_SCHED_EXT") || !sched_ext_supported();
	err = report_load(c->st, &ro, &rep);
	if (err) {
		cs_err("cannot summarise the campaign: %s", strerror(-err));
		return err;
	}
	if (c->o->json)
		report_write_json(rep, stdout);
	else
		report_write_text(rep, stderr);
	report_free(rep);
	return 0;
}

static int run_campaign(struct run_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct store_campaign info = { 0 };
	struct campaign c = { .o = o };
	char *out_alloc = NULL;
	int err, ret = EXIT_USAGE;
	size_t m;

	/* none + serial: the serial schedule (fixed or seeded) alone steers */
	c.steer = o->kind != STRAT_NONE || o->serial != CS_SERIAL_OFF;
	c.sess.want_sched = c.steer;
	c.metric = metric_index(o->metric);
	c.tty = isatty(STDERR_FILENO) && !getenv("CONCSCHED_VM");
	err = target_inspect(o->argv[0], &c.ti);
	if (err)
		return EXIT_USAGE;
	if (check_environment(&c))
		return EXIT_USAGE;
	err = sync_runtime_for_exec(&c.ti, &c.rt);
	if (err)
		return EXIT_USAGE;
	err = launch_resolve_user(o->user, &c.uid, &c.gid, &c.drop);
	if (err)
		return EXIT_USAGE;
	o->argv[0] = c.ti.path;
	if (!o->out)
		o->out = out_alloc = default_out_dir(c.ti.path);
	if (!o->seed_set) {
		uint64_t s = now_realtime_ns() ^ ((uint64_t)getpid() << 32);

		o->seed = cs_splitmix64(&s);
	}
	info.program = c.ti.path;
	info.binary_hash = c.ti.hash;
	info.args_json = args_json(o->argv, o->argc);
	info.strategy = (char *)o->strategy;
	info.config_json = campaign_config_json(o);
	info.metric = (char *)o->metric;
	info.saturation = (char *)o->sat_spec;
	info.seed = o->seed;
	err = store_create(o->out, &info, &c.st);
	free(info.args_json);
	free(info.config_json);
	if (err)
		goto out;
	libbpf_set_print(NULL);
	run_stop = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (!o->json || c.tty)
		fprintf(stderr, "concsched: campaign %s: %s, strategy %s, seed %" PRIu64 "%s\n",
			getenv("CONCSCHED_HOST_DIR") ? getenv("CONCSCHED_HOST_DIR") : o->out,
			c.ti.path, o->strategy, o->seed,
			o->serial != CS_SERIAL_OFF ? ", serial" : "");
	if (o->access) {
		err = access_campaign_begin(&c);
		if (err) {
			ret = EXIT_USAGE;
			goto out;
		}
	}
	if (c.o->kind == STRAT_TSA || c.o->kind == STRAT_TSA_H) {
		err = tsa_strat_campaign_begin(&c);
		if (err) {
			ret = EXIT_USAGE;
			goto out;
		}
	}
	c.t0 = now_ns();
	while (!campaign_done(&c)) {
		err = campaign_run_one(&c);
		if (err < 0)
			break;
	}
	progress(&c, true);
	if (err < 0 && err != -EINTR) {
		ret = EXIT_USAGE;
		fprintf(stderr,
			"concsched: campaign stopped by an error after %" PRId64
			" runs; what ran is in %s\n",
			c.nruns, o->out);
	} else {
		if (run_stop)
			fprintf(stderr, "concsched: interrupted after %" PRId64 " runs\n", c.nruns);
		else if (c.saturated && !o->runs && o->time_s <= 0)
			fprintf(stderr, "concsched: %s coverage saturated after %" PRId64 " runs\n",
				o->metric, c.nruns);
		final_report(&c);
		ret = c.failures ? 1 : run_stop ? 128 + run_stop : 0;
	}
out:
	if (c.tsa)
		tsa_strat_campaign_end(&c);
	run_session_close(&c.sess);
	access_campaign_end(&c);
	store_close(c.st);
	for (m = 0; m <= SYNCOV__COUNT; m++) {
		free(c.x[m]);
		free(c.y[m]);
	}
	free(out_alloc);
	return ret;
}

/* ---- --vm -------------------------------------------------------------------------------------
 */

/* Run `concsched ARGV...` in the VM with the guest's /out received into
 * a temporary directory next to host_out, then move /out/SUB there. */
static int run_in_vm(char **guest_argv, const char *host_out, const char *sub,
		     const char *const *carry, unsigned timeout_s, unsigned cpus)
{
	char *env_dir = xasprintf("CONCSCHED_HOST_DIR=%s", host_out);
	const char *env[] = { env_dir, NULL, NULL };
	struct vm_opts vo = { 0 };
	struct vm_result vr;
	char *tmp, *from;
	int err, ret;

	tmp = xasprintf("%s.vm-XXXXXX", host_out);
	if (!mkdtemp(tmp)) {
		cs_err("cannot create %s: %s", tmp, strerror(errno));
		free(tmp);
		free(env_dir);
		return EXIT_USAGE;
	}
	if (!sched_ext_supported())
		env[1] = "CONCSCHED_HOST_NO_SCHED_EXT=1";
	vo.env = env;
	vo.argv = guest_argv;
	vo.timeout_s = timeout_s;
	vo.cpus = cpus;
	vo.mem_mb = 2048;
	vo.carry = carry;
	vo.out_dir = tmp;
	vo.stdout_fd = vo.stderr_fd = -1;
	err = vm_run(&vo, &vr);
	if (err) {
		rmdir(tmp);
		free(tmp);
		free(env_dir);
		return EXIT_USAGE;
	}
	ret = vr.outcome == VM_EXITED ? vr.exit_code : EXIT_USAGE;
	if (vr.outcome == VM_DIED)
		cs_err("the VM died during the campaign: %s", vr.reason);
	else if (vr.outcome == VM_TIMEOUT)
		cs_err("the VM campaign ran past its time limit: %s", vr.reason);
	else if (vr.outcome == VM_INTERRUPTED)
		ret = 128 + vr.signal;
	from = sub ? xasprintf("%s/%s", tmp, sub) : NULL;
	if (from && access(from, F_OK) == 0) {
		if (rename(from, host_out)) {
			cs_err("cannot move the campaign to %s: %s (it is in %s)", host_out,
			       strerror(errno), from);
			ret = EXIT_USAGE;
		} else {
			rmdir(tmp);
		}
		if (getenv("SUDO_UID")) {
			char *cmd =
				xasprintf("chown -R %s:%s '%s'", getenv("SUDO_UID"),
					  getenv("SUDO_GID") ? getenv("SUDO_GID") : "", host_out);
			if (system(cmd))
				cs_warn("cannot hand %s to the sudo user", host_out);
			free(cmd);
		}
	} else if (from) {
		if (!vr.out_complete)
			cs_err("no campaign came back from the VM (see the messages above)");
		rmdir(tmp);
		if (ret == 0 || ret == 1)
			ret = EXIT_USAGE;
	} else {
		rmdir(tmp);
	}
	free(from);
	free(tmp);
	free(env_dir);
	return ret;
}

static int run_vm(struct run_opts *o, int argc, char **argv)
{
	struct target_info ti;
	char **gargv;
	char *out_alloc = NULL;
	const char **carry;
	size_t k, nc = 1;
	int i, n = 0, ret;
	unsigned timeout = 0;

	if (target_inspect(o->argv[0], &ti))
		return EXIT_USAGE;
	if (!o->out)
		o->out = out_alloc = default_out_dir(ti.path);
	if (access(o->out, F_OK) == 0) {
		cs_err("%s already exists (choose another --out, or remove it)", o->out);
		free(out_alloc);
		return EXIT_USAGE;
	}
	/* concsched run <options without --vm/-o> -o /out/campaign -- PROG... */
	gargv = xcalloc((size_t)argc + 8, sizeof(*gargv));
	gargv[n++] = "concsched";
	gargv[n++] = "run";
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--vm"))
			continue;
		if (!strncmp(argv[i], "--vm-cpus", 9)) {
			if (!strchr(argv[i], '='))
				i++;
			continue;
		}
		if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--out")) {
			i++;
			continue;
		}
		if (!strncmp(argv[i], "--out=", 6) || (!strncmp(argv[i], "-o", 2) && argv[i][2]))
			continue;
		gargv[n++] = argv[i];
	}
	gargv[n++] = "-o";
	gargv[n++] = VM_GUEST_OUT "/campaign";
	gargv[n++] = "--";
	gargv[n++] = ti.path;
	for (i = 1; i < o->argc; i++)
		gargv[n++] = o->argv[i];
	carry = xcalloc(o->nsite_objects + 2, sizeof(*carry));
	carry[0] = ti.path;
	/* --sites-object given as a path must exist in the guest too. */
	for (k = 0; k < o->nsite_objects; k++)
		if (strchr(o->site_objects[k], '/'))
			carry[nc++] = o->site_objects[k];
	if (o->time_s > 0)
		timeout = (unsigned)(o->time_s + o->run_timeout_s * 2 + 60);
	fprintf(stderr, "concsched: running the campaign in the sched_ext VM (%s)\n",
		vm_kvm_usable() ? "KVM" : "TCG emulation: slower");
	ret = run_in_vm(gargv, o->out, "campaign", carry, timeout, o->vm_cpus);
	if ((ret == 0 || ret == 1) && !o->json)
		fprintf(stderr, "concsched: campaign stored in %s (concsched report %s)\n", o->out,
			o->out);
	free(gargv);
	free(carry);
	free(out_alloc);
	return ret;
}

/* ---- options -----------------------------------------------------------------------------------
 */

static int parse_seconds(const char *opt, const char *s, double *out)
{
	if (parse_double(s, out) || *out <= 0) {
		cs_err("%s %s: not a positive number of seconds", opt, s);
		return -EINVAL;
	}
	return 0;
}

static void push_str(const char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = s;
}

static int parse_run_args(struct run_opts *o, int argc, char **argv)
{
	enum {
		O_TIME = 256,
		O_RUN_TIMEOUT,
		O_SEED,
		O_SERIAL,
		O_KEEP,
		O_JSON,
		O_METRIC,
		O_SAT,
		O_EXPECT,
		O_CHECK,
		O_USER,
		O_VM,
		O_VM_CPUS,
		O_EST,
		O_ACCESS,
		O_SINC,
		O_SEXC,
		O_SOBJ
	};
	static const struct option opts[] = {
		{ "strategy", required_argument, NULL, 's' },
		{ "runs", required_argument, NULL, 'n' },
		{ "time", required_argument, NULL, O_TIME },
		{ "run-timeout", required_argument, NULL, O_RUN_TIMEOUT },
		{ "seed", required_argument, NULL, O_SEED },
		{ "serial", required_argument, NULL, O_SERIAL },
		{ "keep-going", no_argument, NULL, O_KEEP },
		{ "out", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, O_JSON },
		{ "metric", required_argument, NULL, O_METRIC },
		{ "saturation", required_argument, NULL, O_SAT },
		{ "expect-exit", required_argument, NULL, O_EXPECT },
		{ "check", required_argument, NULL, O_CHECK },
		{ "user", required_argument, NULL, O_USER },
		{ "vm", no_argument, NULL, O_VM },
		{ "vm-cpus", required_argument, NULL, O_VM_CPUS },
		{ "estimate-runs", required_argument, NULL, O_EST },
		{ "access", no_argument, NULL, O_ACCESS },
		{ "sites-include", required_argument, NULL, O_SINC },
		{ "sites-exclude", required_argument, NULL, O_SEXC },
		{ "sites-object", required_argument, NULL, O_SOBJ },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c, err;

	o->strategy = "random";
	o->metric = "sp";
	o->run_timeout_s = RUN_DEFAULT_TIMEOUT;
	o->vm_cpus = 2;
	o->estimate_runs = 1;
	sat_config_default(&o->sat);
	optind = 1;
	while ((c = getopt_long(argc, argv, "+s:n:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->strategy = optarg;
			break;
		case 'n':
			if (parse_u64(optarg, &o->runs) || !o->runs) {
				cs_err("--runs %s: not a positive number", optarg);
				return -EINVAL;
			}
			break;
		case O_TIME:
			if (parse_seconds("--time", optarg, &o->time_s))
				return -EINVAL;
			break;
		case O_RUN_TIMEOUT:
			if (parse_seconds("--run-timeout", optarg, &o->run_timeout_s))
				return -EINVAL;
			break;
		case O_SEED:
			if (parse_u64(optarg, &o->seed)) {
				cs_err("--seed %s: not a number", optarg);
				return -EINVAL;
			}
			o->seed_set = true;
			break;
		case O_SERIAL:
			if (parse_serial(optarg, &o->serial)) {
				cs_err("--serial %s: use off, fifo or random", optarg);
				return -EINVAL;
			}
			break;
		case O_KEEP:
			o->keep_going = true;
			break;
		case 'o':
			o->out = optarg;
			break;
		case O_JSON:
			o->json = true;
			break;
		case O_METRIC:
			if (metric_index(optarg) < 0) {
				cs_err("--metric %s: use sp, goodlock, hbpair or sync (with "
				       "--access "
				       "also lp, concurpairs, avio*, hbpair*, goodlock*, eraser*, "
				       "goldilock-sc, fpair, map)",
				       optarg);
				return -EINVAL;
			}
			o->metric = optarg;
			break;
		case O_ACCESS:
			o->access = true;
			break;
		case O_SINC:
			push_str(&o->sites.include, &o->sites.ninclude, optarg);
			break;
		case O_SEXC:
			push_str(&o->sites.exclude, &o->sites.nexclude, optarg);
			break;
		case O_SOBJ:
			push_str(&o->site_objects, &o->nsite_objects, optarg);
			break;
		case O_SAT:
			if (sat_parse(optarg, &o->sat)) {
				cs_err("--saturation %s: expected WINDOW,THRESHOLD like 50,0.1 or "
				       "120s,0.1",
				       optarg);
				return -EINVAL;
			}
			o->sat_spec = optarg;
			break;
		case O_EXPECT:
			if (parse_u64(optarg, &v) || v > 255) {
				cs_err("--expect-exit %s: an exit status is 0-255", optarg);
				return -EINVAL;
			}
			o->expect_exit_set = true;
			o->expect_exit = (int)v;
			break;
		case O_CHECK:
			o->check = optarg;
			break;
		case O_USER:
			o->user = optarg;
			break;
		case O_VM:
			o->vm = true;
			break;
		case O_VM_CPUS:
			if (parse_u64(optarg, &v) || !v || v > 64) {
				cs_err("--vm-cpus %s: 1-64", optarg);
				return -EINVAL;
			}
			o->vm_cpus = (unsigned)v;
			break;
		case O_EST:
			if (parse_u64(optarg, &v) || !v || v > 1000) {
				cs_err("--estimate-runs %s: 1-1000", optarg);
				return -EINVAL;
			}
			o->estimate_runs = (unsigned)v;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			fprintf(stderr, "(see concsched run --help)\n");
			return -EINVAL;
		}
	}
	o->argv = argv + optind;
	o->argc = argc - optind;
	if (!o->argc) {
		cs_err("run: no program given (concsched run [OPTIONS] -- PROG ARGS)");
		return -EINVAL;
	}
	if (!o->sat_spec) {
		static char def[48];

		o->sat_spec = sat_format(&o->sat, def, sizeof(def));
	}
	err = parse_strategy(o);
	if (err)
		return err;
	if ((o->sites.ninclude || o->sites.nexclude || o->nsite_objects) && !o->access) {
		cs_err("--sites-include/--sites-exclude/--sites-object choose access sites: add "
		       "--access (or --strategy map)");
		return -EINVAL;
	}
	if (metric_index(o->metric) == SYNCOV__COUNT && !o->access) {
		cs_err("--metric %s is a metric of memory accesses: add --access", o->metric);
		return -EINVAL;
	}
	if (o->kind == STRAT_MAP && o->serial != CS_SERIAL_OFF) {
		cs_err("--serial does not combine with --strategy map (map picks who runs)");
		return -EINVAL;
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o = { 0 };
	int err;

	err = parse_run_args(&o, argc, argv);
	if (!err)
		err = o.vm ? run_vm(&o, argc, argv) : run_campaign(&o);
	else
		err = err > 0 ? 0 : EXIT_USAGE;
	free(o.sites.include);
	free(o.sites.exclude);
	free(o.site_objects);
	return err;
}

/* ---- replay
 * ---------------------------------------------------------------------------------------- */

struct replay_opts {
	const char *dir;
	int64_t run;
	uint64_t times;
	double run_timeout_s;
	bool json, vm;
};

static int replay_in_vm(const struct replay_opts *ro, int argc, char **argv, const char *program)
{
	const char *carry[3] = { ro->dir, program, NULL };
	char **gargv = xcalloc((size_t)argc + 2, sizeof(*gargv));
	int i, n = 0, ret;

	gargv[n++] = "concsched";
	for (i = 0; i < argc; i++)
		if (strcmp(argv[i], "--vm"))
			gargv[n++] = argv[i];
	fprintf(stderr, "concsched: replaying in the sched_ext VM\n");
	ret = run_in_vm(gargv, ro->dir, NULL, carry, 0, 2);
	free(gargv);
	return ret;
}

static int parse_replay_args(struct replay_opts *ro, int argc, char **argv)
{
	enum { O_RUN_TIMEOUT = 256, O_JSON, O_VM };
	static const struct option opts[] = {
		{ "run", required_argument, NULL, 'r' },
		{ "times", required_argument, NULL, 't' },
		{ "run-timeout", required_argument, NULL, O_RUN_TIMEOUT },
		{ "json", no_argument, NULL, O_JSON },
		{ "vm", no_argument, NULL, O_VM },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	ro->times = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "r:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (parse_u64(optarg, &v) || !v) {
				cs_err("--run %s: a run number (1, 2, ...)", optarg);
				return -EINVAL;
			}
			ro->run = (int64_t)v;
			break;
		case 't':
			if (parse_u64(optarg, &ro->times) || !ro->times) {
				cs_err("--times %s: a positive number", optarg);
				return -EINVAL;
			}
			break;
		case O_RUN_TIMEOUT:
			if (parse_seconds("--run-timeout", optarg, &ro->run_timeout_s))
				return -EINVAL;
			break;
		case O_JSON:
			ro->json = true;
			break;
		case O_VM:
			ro->vm = true;
			break;
		case 'h':
			replay_usage(stdout);
			return 1;
		default:
			fprintf(stderr, "(see concsched replay --help)\n");
			return -EINVAL;
		}
	}
	if (optind != argc - 1) {
		cs_err("replay: give one campaign directory (concsched replay DIR --run N)");
		return -EINVAL;
	}
	ro->dir = argv[optind];
	if (!ro->run) {
		cs_err("replay: which run? (--run N; concsched report %s lists them)", ro->dir);
		return -EINVAL;
	}
	return 0;
}

int cmd_replay(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct replay_opts ro = { 0 };
	struct store_campaign camp = { 0 };
	struct store_run sr = { 0 };
	struct store *st = NULL;
	struct run_opts o = { 0 };
	struct campaign c = { .o = &o };
	struct declog dl = { 0 };
	void *blob = NULL;
	size_t blob_len = 0, nargs = 0, i;
	char **args = NULL, *out = NULL, *err_text = NULL, *serial = NULL;
	uint64_t k, failed = 0;
	double rt_s = 0;
	struct json j;
	int err, ret = EXIT_USAGE;

	err = parse_replay_args(&ro, argc, argv);
	if (err)
		return err > 0 ? 0 : EXIT_USAGE;
	if (store_open(ro.dir, true, &st))
		return EXIT_USAGE;
	if (store_get_campaign(st, &camp) || store_load_run(st, ro.run, &sr)) {
		cs_err("%s has no run %" PRId64 " (concsched report %s lists its runs)", ro.dir,
		       ro.run, ro.dir);
		goto out;
	}
	if (ro.vm) {
		ret = replay_in_vm(&ro, argc, argv, camp.program);
		goto out;
	}
	if (store_load_run_blobs(st, ro.run, &blob, &blob_len, &out, &err_text) || !blob ||
	    declog_decode(blob, blob_len, &dl)) {
		cs_err("run %" PRId64 " of %s has no readable decision log", ro.run, ro.dir);
		goto out;
	}
	if (json_parse_string_array(camp.args_json ? camp.args_json : "[]", &args, &nargs)) {
		cs_err("campaign %s: unreadable program arguments", ro.dir);
		goto out;
	}
	o.argv = xcalloc(nargs + 2, sizeof(*o.argv));
	o.argv[0] = camp.program;
	for (i = 0; i < nargs; i++)
		o.argv[i + 1] = args[i];
	o.argc = (int)nargs + 1;
	o.strategy = camp.strategy;
	o.kind = !strcmp(camp.strategy, "none")	     ? STRAT_NONE
		 : !strncmp(camp.strategy, "tsa", 3) ? STRAT_TSA
		 : !strcmp(camp.strategy, "map")     ? STRAT_MAP
						     : STRAT_NOISE;
	serial =
		json_get_string(sr.strategy_config_json ? sr.strategy_config_json : "{}", "serial");
	if (serial && parse_serial(serial, &o.serial))
		o.serial = CS_SERIAL_OFF;
	o.run_timeout_s = RUN_DEFAULT_TIMEOUT;
	if (camp.config_json) {
		char *cfg = camp.config_json, *p = strstr(cfg, "\"run_timeout_s\":");

		if (p)
			rt_s = strtod(p + 16, NULL);
		if (rt_s > 0)
			o.run_timeout_s = rt_s;
	}
	if (ro.run_timeout_s > 0)
		o.run_timeout_s = ro.run_timeout_s;
	c.steer = o.kind != STRAT_NONE || o.serial != CS_SERIAL_OFF;
	if (target_inspect(o.argv[0], &c.ti) || check_environment(&c) ||
	    sync_runtime_for_exec(&c.ti, &c.rt) ||
	    launch_resolve_user(NULL, &c.uid, &c.gid, &c.drop))
		goto out;
	if (camp.binary_hash && strcmp(camp.binary_hash, c.ti.hash))
		cs_warn("%s changed since the campaign ran (hash %s, was %s): the replay may "
			"differ",
			c.ti.path, c.ti.hash, camp.binary_hash);
	o.argv[0] = c.ti.path;
	/* The access sites the run probed (--access, map). */
	if (access_replay_setup(&c, sr.strategy_config_json))
		goto out;
	libbpf_set_print(NULL);
	run_stop = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (ro.json) {
		json_init(&j, stdout, false);
		json_obj_begin(&j, NULL);
		json_kv_str(&j, "campaign", ro.dir);
		json_kv_int(&j, "run", ro.run);
		json_kv_str(&j, "recorded_outcome", sr.outcome);
		json_arr_begin(&j, "replays");
	}
	for (k = 0; k < ro.times && !run_stop; k++) {
		struct onerun r = { 0 };
		struct oracle_input in = { 0 };
		struct oracle_verdict v;
		char *ro_out, *ro_err;
		size_t ol, el;

		r.o = &o;
		r.ti = &c.ti;
		r.rt = &c.rt;
		r.sess = &c.sess;
		r.steer = c.steer;
		r.seed = dl.seed;
		r.replay = &dl;
		if (c.acc) {
			r.access_on = true;
			r.access_mask = access_replay_mask(&c);
		}
		declog_init(&r.log, dl.seed, dl.config_json);
		err = onerun_do(&r, c.uid, c.gid, c.drop);
		if (err) {
			onerun_cleanup(&r);
			goto out_json;
		}
		ro_out = read_capture(r.out_fd, &ol);
		ro_err = read_capture(r.err_fd, &el);
		in.wait_status = r.l.status;
		in.timed_out = r.timed_out;
		in.out = ro_out;
		in.out_len = ol;
		in.err = ro_err;
		in.err_len = el;
		in.deadlock_report = r.has_deadlock ? r.deadlock : NULL;
		oracle_classify(&in, &v);
		if (outcome_is_failure(v.outcome))
			failed++;
		if (ro.json) {
			json_obj_begin(&j, NULL);
			json_kv_str(&j, "outcome", outcome_name(v.outcome));
			json_kv_str(&j, "summary", v.summary);
			json_kv_uint(&j, "decisions_applied", r.log.n);
			json_kv_dbl(&j, "duration_s", (r.t1 - r.t0) / 1e9);
			json_obj_end(&j);
		} else {
			printf("replay %" PRIu64 "/%" PRIu64 ": %s: %s (%zu recorded decisions "
			       "applied)\n",
			       k + 1, ro.times, outcome_name(v.outcome), v.summary, r.log.n);
			fflush(stdout);
		}
		free(ro_out);
		free(ro_err);
		onerun_cleanup(&r);
	}
	ret = failed ? 1 : run_stop ? 128 + run_stop : 0;
out_json:
	if (ro.json) {
		json_arr_end(&j);
		json_kv_uint(&j, "failed", failed);
		json_kv_uint(&j, "replays", k);
		json_obj_end(&j);
		json_end(&j);
	} else if (ret != EXIT_USAGE) {
		printf("run %" PRId64 " (recorded: %s) failed again in %" PRIu64 " of %" PRIu64
		       " replays\n",
		       ro.run, sr.outcome, failed, k);
	}
out:
	run_session_close(&c.sess);
	access_campaign_end(&c);
	for (i = 0; i < nargs; i++)
		free(args[i]);
	free(args);
	free(o.argv);
	free(serial);
	free(blob);
	free(out);
	free(err_text);
	declog_free(&dl);
	store_run_clear(&sr);
	store_campaign_free(&camp);
	store_close(st);
	return ret;
}
