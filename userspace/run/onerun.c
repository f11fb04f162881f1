// SPDX-License-Identifier: MIT
/*
 * One run of a campaign (DESIGN.md "One run, step by step"): launch the
 * target under the sync probes (and the access probes with --access) and,
 * when the strategy steers, under the scx_concsched scheduler, which parks
 * each thread at its decision points. The event loop reads the probes'
 * ring buffer: it keeps the thread table (creation paths, point indexes),
 * feeds the thread model and the access metrics, and hands every parked
 * point and every all-parked note to the strategy (strategies/strategy.h),
 * applying and logging what it answers: proceed, release, delay, yield,
 * halt until alone, or keep. The loop knows no strategy by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "run/access.h"
#include "run/onerun.h"
#include "results/oracle.h"
#include "results/run_steering.h"
#include "run/run_session.h"
#include "run/run_sites.h"
#include "run/run_timeout.h"
#include "coverage/cov_event.h"
#include "coverage/syncov.h"
#include "coverage/thread_model.h"
#include "kernel/launcher.h"
#include "kernel/policy.h"
#include "kernel/sync.h"
#include "kernel/scx_concsched.h"
#include "kernel/symbolize.h"
#include "lib/declog.h"
#include "lib/array_size.h"
#include "lib/fnv1a64.h"
#include "lib/futex_lock.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/self.h"
#include "lib/xalloc.h"

#include "access.skel.h"
#include "sync.skel.h"

volatile sig_atomic_t onerun_stop;

void onerun_on_signal(int sig)
{
	onerun_stop = sig;
}

bool onerun_sched_ext_supported(void)
{
	return access("/sys/kernel/sched_ext/state", R_OK) == 0;
}

static const char *kernel_release(void)
{
	static struct utsname u;

	uname(&u);
	return u.release;
}

int onerun_check_environment(const struct campaign *c)
{
	if (geteuid() != 0) {
		log_err("run needs root to load BPF probes and the scheduler (try: %s run ...)",
			self_command(true));
		return -EPERM;
	}
	if (c->steer && !onerun_sched_ext_supported()) {
		log_err("this kernel (%s) has no sched_ext, which --strategy %s needs: add --vm to "
			"run the campaign in the sched_ext VM (or use --strategy none)",
			kernel_release(), c->o->strategy);
		return -ENOTSUP;
	}
	return 0;
}

/* ---- threads and decisions -------------------------------------------------------------- */

/* The synchronization decision points: operations whose entry probe
 * emits the event that says "parked here" (pthread_create/join park at
 * entry but report only on return, so they are not steered). */
static const uint16_t park_ops[] = {
	CS_OP_LOCK_REQ,	   CS_OP_RDLOCK_REQ,	 CS_OP_WRLOCK_REQ,   CS_OP_COND_WAIT,
	CS_OP_COND_SIGNAL, CS_OP_COND_BROADCAST, CS_OP_SEM_WAIT_REQ, CS_OP_SEM_POST,
	CS_OP_BARRIER,	   CS_OP_PROC_EXIT,	 CS_OP_START,	     CS_OP_STDIO,
};

static const uint16_t access_ops[] = { CS_OP_READ, CS_OP_WRITE, CS_OP_RW };

static bool is_park_op(uint16_t op)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(park_ops); i++)
		if (park_ops[i] == op)
			return true;
	return false;
}

/* What a run of -j N touches of the campaign's (its store, and with
 * --access the ids, variables and sites: in the access hooks, and where a
 * steered run keeps or lets go an access point) is touched under the
 * campaign's lock (struct onerun camp_lock). Taken again by the thread
 * that holds it (a hook that drains events, a strategy's release from
 * inside an access it is fed), it is held once. */
static __thread unsigned camp_lock_depth;

static void camp_lock(struct onerun *r)
{
	if (r->camp_lock && camp_lock_depth++ == 0)
		futex_lock_acquire(r->camp_lock);
}

static void camp_unlock(struct onerun *r)
{
	if (r->camp_lock && --camp_lock_depth == 0)
		futex_lock_release(r->camp_lock);
}

/* The store's id of the site of e (0: none), under the campaign's lock:
 * the store is one for the campaign, and -j N's runs name sites at once. */
static int64_t event_site_id(struct onerun *r, const struct cs_event *e)
{
	int64_t id;

	camp_lock(r);
	id = run_sites_id(r->st, r, e->pid, e->gen, e->site);
	if (id <= 0) {
		/* The mapping may be new: learn it and try once more. */
		run_sites_refresh_vmas(r);
		id = run_sites_id(r->st, r, e->pid, e->gen, e->site);
	}
	camp_unlock(r);
	return id;
}

#define ACCESS_HOOK(r, call)                                                                       \
	do {                                                                                       \
		camp_lock(r);                                                                      \
		call;                                                                              \
		camp_unlock(r);                                                                    \
	} while (0)

/* strat_host hook: a new thread, named in the log, before the strategy
 * sees it. */
static void thread_born(void *ctx, struct strat_thread *t)
{
	struct onerun *r = ctx;

	declog_name_thread(&r->log, t->id, t->path);
	if (r->acc)
		ACCESS_HOOK(r, access_hook_thread(r, t));
}

static struct strat_thread *thread_add(struct onerun *r, uint32_t tid, const char *path)
{
	return strat_host_thread_add(&r->host, tid, path);
}

/* The thread of an event: the main thread is "0", a thread created by P
 * is P's path plus its creation ordinal. Threads whose creation we did not
 * see (created by libc internals) get "?N" in order of appearance. */
static struct strat_thread *thread_of(struct onerun *r, uint32_t tid, uint32_t pid)
{
	struct strat_thread *t = run_sites_thread_find(r, tid);
	char path[48];

	if (t)
		return t;
	if (tid == pid && !r->sr.nthreads)
		return thread_add(r, tid, "0");
	snprintf(path, sizeof(path), "?%zu", r->sr.nthreads);
	return thread_add(r, tid, path);
}

static void thread_created(struct onerun *r, const struct cs_event *e)
{
	struct strat_thread *parent = thread_of(r, e->tid, e->pid);
	char path[80];

	if (!parent || run_sites_thread_find(r, (uint32_t)e->obj))
		return;
	snprintf(path, sizeof(path), "%s.%u", parent->path, ++parent->ncreated);
	/* Deep creation trees: the path's hash stands for its prefix. */
	if (strlen(path) >= sizeof(parent->path))
		snprintf(path, sizeof(path), "#%016" PRIx64 ".%u",
			 fnv1a64(parent->path, strlen(parent->path), FNV1A64_INIT),
			 parent->ncreated);
	thread_add(r, (uint32_t)e->obj, path);
}

/* A followed child process: its main thread is the forking thread's path
 * plus "f" and its fork ordinal, so its threads' names (and the coverage
 * keys built on them) do not depend on pids. */
static void process_forked(struct onerun *r, const struct cs_event *e)
{
	struct strat_thread *parent = thread_of(r, e->tid, e->pid);
	char path[80];

	if (!parent || run_sites_thread_find(r, (uint32_t)e->obj))
		return;
	snprintf(path, sizeof(path), "%s.f%u", parent->path, ++parent->nforked);
	if (strlen(path) >= sizeof(parent->path))
		snprintf(path, sizeof(path), "#%016" PRIx64 ".f%u",
			 fnv1a64(parent->path, strlen(parent->path), FNV1A64_INIT),
			 parent->nforked);
	thread_add(r, (uint32_t)e->obj, path);
}

/*
 * The observed schedule (issue 14): the order in which threads went on
 * from their points. A point's pass is pending from the moment its thread
 * parks there, however it is let go (by the strategy, the watchdog, or the
 * release of every park when steering stops), and is dated by when the
 * thread ran again: the scheduler's resume note (the thread is on a CPU),
 * or, when that note has not come yet, the thread's next event (a later
 * note dates it better). Not the order of the releases (a released thread
 * may reach its CPU after one released later) and not that of the next
 * events (a thread may run long before its next point, and what it did
 * meanwhile, seen by others, must come after its pass). At the end of the
 * run the passes go into the log in that order; an enforced replay
 * follows it.
 */
static void pass_log(struct onerun *r, struct strat_thread *t, uint64_t ts, bool provisional)
{
	struct pass_rec *p;

	if (!t->pass_pending)
		return;
	if (r->npasses == r->passes_cap) {
		r->passes_cap = r->passes_cap ? 2 * r->passes_cap : 256;
		r->passes = xrealloc(r->passes, r->passes_cap * sizeof(*r->passes));
	}
	p = &r->passes[r->npasses++];
	p->ts = ts;
	p->park_ts = t->park_ts;
	p->seq = r->npasses;
	p->thread = t->id;
	p->event = t->pass_pending - 1;
	p->site = t->pass_site;
	p->provisional = provisional;
	if (log_verbose > 1)
		log_debug("pass: thread %s point %" PRIu64 " at %" PRIu64 "%s", t->path, p->event,
			  ts, provisional ? " (its next event)" : "");
	t->pass_rec = provisional ? r->npasses : 0;
	t->pass_pending = 0;
	t->let_go = false;
}

/* What the schedule names t's last point by: its store site, or -(op + 1)
 * when it has none or is an exit (a thread's, or the program's: exit()'s
 * call site is libc's own when main returns), so that report --schedule
 * can say which point it was. Replay takes a negative pass site as an
 * unknown one (strategy_replay.c at_pass). */
static int64_t pass_site_of(const struct strat_thread *t)
{
	if (t->site && t->op != CS_OP_EXIT && t->op != CS_OP_PROC_EXIT)
		return t->site;
	return -(int64_t)t->op - 1;
}

/* Thread t is let go from its last point now (by the strategy). */
static void passed(struct onerun *r, struct strat_thread *t)
{
	if (!t || !t->points)
		return;
	if (t->pass_pending && t->pass_pending != t->points)
		pass_log(r, t, r->last_ev_ts, true);
	t->pass_pending = t->points;
	t->pass_site = pass_site_of(t);
	t->let_go = true;
}

/* A lock request: what others see of it is the acquisition. */
static bool is_acquire_request(uint16_t op)
{
	return op == CS_OP_LOCK_REQ || op == CS_OP_RDLOCK_REQ || op == CS_OP_WRLOCK_REQ ||
	       op == CS_OP_SEM_WAIT_REQ;
}

/* Thread t stops at its point (the probe's event e). */
static void pass_from_park(struct strat_thread *t, const struct cs_event *e)
{
	t->pass_pending = t->points;
	t->pass_site = pass_site_of(t);
	t->park_ts = e->ts_ns;
	t->let_go = false;
	t->pass_acquire = is_acquire_request(e->op);
}

/* An event of t: it runs, so a pass still pending was let go before. The
 * next event after a lock request is its acquisition: that dates the pass
 * for good (a resume note would date it before a lock it then waited
 * for: bank's passing run replayed as its failure, 10 of 10). */
static void pass_seen(struct onerun *r, struct strat_thread *t, uint64_t ts)
{
	if (t && t->pass_pending)
		pass_log(r, t, ts, !t->pass_acquire);
}

/* The scheduler's note: tid ran again at ts after a release. A note dates
 * the pending pass only once that point was let go (by us, or by the
 * scheduler itself): a release that came before its thread really stopped
 * leaves the thread running, and its note comes at the thread's next
 * schedule-in, perhaps while it waits at its next point. */
static void on_resumed(struct policy *pol, uint32_t tid, uint64_t ts, uint32_t reason, void *ctx)
{
	struct onerun *r = ctx;
	struct strat_thread *t = run_sites_thread_find(r, tid);
	struct pass_rec *p;
	bool by_sched =
		reason == CS_REL_WATCHDOG || reason == CS_REL_TEARDOWN || reason == CS_REL_EVENT;

	if (!t)
		return;
	if (t->pass_pending && t->pass_acquire)
		return; /* dated by its acquisition (pass_seen) */
	if (t->pass_pending && ts >= t->park_ts && (t->let_go || by_sched)) {
		pass_log(r, t, ts, false);
		return;
	}
	/* Late: the thread's next event logged the pass already. */
	if (t->pass_rec) {
		p = &r->passes[t->pass_rec - 1];
		if (p->provisional && ts >= p->park_ts && ts <= p->ts) {
			p->ts = ts;
			p->provisional = false;
		}
		t->pass_rec = 0;
	}
}

static int pass_cmp(const void *a, const void *b)
{
	const struct pass_rec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* At the end of the run: passes of threads not seen again go last; the
 * schedule goes into the log in the order the threads went on. */
static void passes_flush(struct onerun *r)
{
	size_t i;

	for (i = 0; i < r->sr.nthreads; i++)
		if (r->sr.threads[i].pass_pending)
			pass_log(r, &r->sr.threads[i], UINT64_MAX, false);
	qsort(r->passes, r->npasses, sizeof(*r->passes), pass_cmp);
	for (i = 0; i < r->npasses; i++)
		if (declog_add(&r->log, r->passes[i].thread, 0, r->passes[i].event, DECLOG_PASS,
			       r->passes[i].site))
			log_debug("pass of point %" PRIu64 " out of its thread's order: dropped",
				  r->passes[i].event);
	r->npasses = 0;
}

/* The store site of an event's address, for the schedule (cached: a
 * point's site is looked up once per run, not symbolized at each hit). */
static int64_t point_site(struct onerun *r, const struct cs_event *e)
{
	uint64_t key = e->site ^ ((uint64_t)e->pid << 48) ^ ((uint64_t)e->gen << 40);
	struct point_site *ps = &r->point_sites[fnv1a64(&key, sizeof(key), FNV1A64_INIT) %
						ARRAY_SIZE(r->point_sites)];

	if (!r->st)
		return 0;
	if (ps->key == key && ps->id > 0)
		return ps->id;
	ps->key = key;
	ps->id = event_site_id(r, e);
	return ps->id > 0 ? ps->id : 0;
}

static void passed_tid(struct onerun *r, uint32_t tid)
{
	passed(r, run_sites_thread_find(r, tid));
}

/* strat_host hook: a delayed or halted thread goes on (delayq_due, a
 * full queue, all parked). */
static void delay_over(void *ctx, uint32_t tid)
{
	struct onerun *r = ctx;

	passed_tid(r, tid);
	policy_release(r->pol, tid);
}

/* strat_host hook: a thread goes on from its point: a kept access has
 * executed. */
static void go_on(void *ctx, struct strat_thread *t)
{
	struct onerun *r = ctx;

	passed(r, t);
	ACCESS_HOOK(r, access_pass(r, t));
	policy_release(r->pol, t->tid);
}

/* strat_host hook: a delayed thread's kept access executes now. */
static void delay_begin(void *ctx, struct strat_thread *t)
{
	struct onerun *r = ctx;

	ACCESS_HOOK(r, access_pass(r, t));
}

/* strat_run service: a kept thread is let go (logged). */
static void svc_release(struct strat_run *sr, struct strat_thread *t, int64_t arg)
{
	struct onerun *r = sr->ctx;

	strat_host_release(&r->host, t, arg);
}

static void svc_drain(struct strat_run *sr)
{
	struct onerun *r = sr->ctx;

	if (r->rb)
		run_session_consume(r);
}

static uint32_t svc_site_id(struct strat_run *sr, const struct cs_event *e)
{
	struct onerun *r = sr->ctx;
	int64_t id = event_site_id(r, e);

	return id <= 0 || id > UINT32_MAX ? 0 : (uint32_t)id;
}

/* A thread is parked at a decision point: the strategy decides. */
static void on_parked(struct onerun *r, const struct cs_event *e)
{
	struct strat_thread *t = thread_of(r, e->tid, e->pid);
	struct strat_point p = { 0 };
	struct cov_event ev;

	if (!t) {
		policy_release(r->pol, e->tid);
		return;
	}
	p.t = t;
	p.k = t->points++;
	/* The schedule names an access point by its instruction's site (as
	 * access_point does), in the recording and in a replay alike; a
	 * synchronization point by its call site. */
	t->site = 0;
	t->op = e->op;
	if (cov_event_op_is_access(e->op))
		ACCESS_HOOK(r, t->site = access_point_site(r->camp, e));
	if (!t->site)
		t->site = point_site(r, e);
	p.e = e;
	r->decisions++;
	if (cov_event_op_is_access(e->op)) {
		bool kept;

		ACCESS_HOOK(r, kept = access_point(r, e, t, &ev, &p.split, &p.contended, &p.cross));
		if (kept)
			p.access = &ev;
	}
	pass_from_park(t, e);
	if (log_verbose > 1)
		log_debug("parked: op %u tid %u thread %s point %" PRIu64, e->op, e->tid, t->path,
			  p.k);
	strat_host_decide(&r->host, &p);
}

static void on_all_parked(struct policy *pol, const struct policy_note *n, void *ctx)
{
	struct onerun *r = ctx;

	strat_host_all_parked(&r->host, n);
}

void onerun_init(struct onerun *r, struct campaign *c, struct strategy *strat, uint64_t seed,
		 bool steer)
{
	memset(r, 0, sizeof(*r));
	r->o = c->o;
	r->ti = &c->ti;
	r->rt = &c->rt;
	r->sess = &c->sess;
	r->st = c->st;
	r->camp = c;
	r->steer = steer;
	r->seed = seed;
	r->strat = strat;
	r->sr.seed = seed;
	/* Known before run_begin: the campaign probes accesses (--access,
	 * or a replay of a run that did). */
	r->sr.access_points =
		strat && strategy_has(strat, STRAT_F_ACCESS_POINTS) && (c->o->access || c->acc);
	r->sr.serial = c->o->serial;
	r->sr.flags = strat ? strat->flags : 0;
	r->sr.sched_serial = strat ? strat->sched_serial : CS_SERIAL_OFF;
	r->sr.log = &r->log;
	r->sr.ctx = r;
	r->sr.release = svc_release;
	r->sr.drain = svc_drain;
	r->sr.site_id = svc_site_id;
	r->host = (struct strat_host){ .strat = strat,
				       .sr = &r->sr,
				       .log = &r->log,
				       .max_delays = RUN_MAX_DELAYS,
				       .max_threads = RUN_MAX_THREADS,
				       .ctx = r,
				       .born = thread_born,
				       .go = go_on,
				       .delayed = delay_begin,
				       .resume = delay_over };
	r->timeout_s = c->o->run_timeout_s;
	r->grace_s = onerun_grace_s(r->timeout_s, c->unsteered_s);
	r->forks_noted = &c->forks_noted;
	r->tty = c->tty;
}

/*
 * What is left of a run when steering (or the access probes) stops runs
 * unsteered, so it needs at most about a whole unsteered run: a program
 * whose unsteered run takes longer than the run timeout's grace (steered
 * sqlite_threads in the loaded VM, its readers kept ahead of its writers
 * until the timeout, then every pthread call still a trap) would be called
 * hung while it was only slow. The grace is therefore at least twice the
 * campaign's longest estimation run that ended by itself: a measure of the
 * program with the probes on and no steering, taken once, so unlike a
 * timeout that followed slow runs it cannot compound (a slow run's time is
 * the steering's, and a longer limit only lets the steering go on longer).
 */
char *onerun_config_steering(const struct onerun *r, char *cfg)
{
	struct run_steering st = { r->watchdog_run, r->rescued_run, r->serial_preempts_run };

	return run_steering_append(cfg, &st);
}

double onerun_grace_s(double timeout_s, double unsteered_s)
{
	double g = timeout_s < RUN_MAX_GRACE ? timeout_s : RUN_MAX_GRACE;
	double u = unsteered_s * RUN_GRACE_FACTOR;

	if (u > RUN_MAX_GRACE_UNSTEERED)
		u = RUN_MAX_GRACE_UNSTEERED;
	return u > g ? u : g;
}

/* ---- event loop ------------------------------------------------------------------------- */

static bool seen_pid(struct onerun *r, uint32_t pid)
{
	size_t i;

	for (i = 0; i < r->nseen; i++)
		if (r->seen[i] == pid)
			return true;
	if (r->nseen < ARRAY_SIZE(r->seen))
		r->seen[r->nseen++] = pid;
	return false;
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct onerun *r = ctx;
	const struct cs_event *e = data;
	struct strat_thread *t;
	bool fresh;
	size_t i;

	if (len < sizeof(*e))
		return 0;
	if (cov_event_op_is_access(e->op)) {
		/* From the access probes (probes/access.bpf.c): not part of
		 * the thread model, a decision point when parked. */
		t = thread_of(r, e->tid, e->pid);
		r->last_ev_ts = e->ts_ns;
		pass_seen(r, t, e->ts_ns);
		if (t)
			strategy_event(r->strat, &r->sr, e, t);
		if (r->acc && t)
			ACCESS_HOOK(r, access_hook_event(r, e, t));
		if (r->steer && (e->flags & CS_EV_PARKED))
			on_parked(r, e);
		return 0;
	}
	fresh = !seen_pid(r, e->pid);
	if (e->flags & CS_EV_NEWFILE) {
		/* A mapping of a file without a path here: read the maps of
		 * the run's processes while they live (the flag rides the
		 * next event of the CPU that met the file, most often the
		 * same thread's). */
		for (i = 0; i < r->nseen; i++)
			syncov_resolver_scan_pid(&r->res, r->seen[i]);
		syncov_resolver_tell(&r->res, r->sp, &r->nknown);
	} else if (fresh || e->op == CS_OP_EXEC) {
		syncov_resolver_scan_pid(&r->res, e->pid);
		syncov_resolver_tell(&r->res, r->sp, &r->nknown);
	}
	thread_model_add_event(&r->tm, e);
	if (e->op == CS_OP_CREATE)
		thread_created(r, e);
	else if (e->op == CS_OP_FORK)
		process_forked(r, e);
	t = thread_of(r, e->tid, e->pid);
	r->last_ev_ts = e->ts_ns;
	pass_seen(r, t, e->ts_ns);
	if (t)
		strategy_event(r->strat, &r->sr, e, t);
	if (r->acc && t)
		ACCESS_HOOK(r, access_hook_event(r, e, t));
	/* Return events repeat the entry's flags: react to the entry only. */
	if (r->steer && (e->flags & CS_EV_PARKED) && is_park_op(e->op))
		on_parked(r, e);
	return 0;
}

/* The session's ring buffer: records go to the run in flight. */
static int session_event(void *ctx, void *data, size_t len)
{
	struct run_session *s = ctx;
	int err = s->cur ? on_event(s->cur, data, len) : 0;

	/* This record is consumed either way (libbpf advances past it
	 * before the call); a negative return only ends the read. */
	if (!err && s->consume_until && !(++s->consume_n & 255) && now_ns() >= s->consume_until)
		return -EAGAIN;
	return err;
}

/* The session's event ring buffer, and the epoll set a run waits on. */
static int session_ring(struct run_session *s, struct sync_probes *sp)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int err;

	s->rb = ring_buffer__new(sync_probes_map_fd(sp, "cs_sync_events"), session_event, s, NULL);
	s->dontfork = false;
	if (!s->rb)
		return -errno;
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	if (s->ep < 0 || epoll_ctl(s->ep, EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->rb), &ev)) {
		err = -errno;
		if (s->ep >= 0)
			close(s->ep);
		ring_buffer__free(s->rb);
		s->rb = NULL;
		return err;
	}
	return 0;
}

/* Wake the run's loop at its target's exit (on), or stop (off). Without a
 * pidfd (Linux before 5.3) the loop looks for the exit every 2 ms. */
static void watch_exit(struct onerun *r, bool on)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (on) {
		r->pidfd = -1;
#ifdef SYS_pidfd_open
		r->pidfd = (int)syscall(SYS_pidfd_open, r->l.pid, 0);
#endif
		if (r->pidfd >= 0 && epoll_ctl(r->sess->ep, EPOLL_CTL_ADD, r->pidfd, &ev)) {
			close(r->pidfd);
			r->pidfd = -1;
		}
		return;
	}
	if (r->pidfd >= 0) {
		epoll_ctl(r->sess->ep, EPOLL_CTL_DEL, r->pidfd, NULL);
		close(r->pidfd);
		r->pidfd = -1;
	}
}

/* Wait up to ms for events, the target's exit or the next due delay. */
static void run_wait(struct onerun *r, int ms)
{
	struct epoll_event evs[2];

	if (r->pidfd < 0 && ms > 2)
		ms = 2;
	epoll_wait(r->sess->ep, evs, ARRAY_SIZE(evs), ms);
}

/* How long to wait for events: until the next delay is due, or less when
 * the strategy waits for something. */
static int poll_ms(struct onerun *r)
{
	int ms = r->steer ? strat_host_next_delay_ms(&r->host) : 20;

	if (r->steer)
		ms = strategy_poll_ms(r->strat, &r->sr, ms);
	return ms;
}

/* The run's probes. The sync probes: for every process, attached by the
 * campaign's first run and kept (they act for the tracked processes:
 * followed children have their own mm, which only an unfiltered attach
 * reaches), or with --no-follow-forks for the target's only. The access
 * probes act for the target's process alone (access_tgids), so their links
 * are always its own: a link for one process has the kernel put its
 * breakpoints in no other process's memory (the uprobe consumer's
 * filter), and the others do not trap on them (docs/run.md "Probe
 * scope"). */
static int onerun_attach_probes(struct onerun *r)
{
	pid_t filter = r->o->no_follow_forks ? r->l.pid : -1;
	int err;

	r->tm_attach = now_ns();
	err = sync_probes_attach(r->sp, r->rt, filter);
	r->tm_attach = now_ns() - r->tm_attach;
	if (err)
		return err;
	if (r->access_on && r->sess->ap_open) {
		err = access_probes_attach(&r->sess->ap, r->l.pid, r->access_mask);
		if (err)
			return err;
		if (r->steer && !r->sess->ap_kicked) {
			err = scx_concsched_attach_kick(r->ctl,
							r->sess->ap.skel->progs.access_commit);
			if (err)
				return err;
			r->sess->ap_kicked = true;
		}
		if (r->ctl)
			scx_concsched_guard(r->ctl);
	}
	return 0;
}

static void attach_at_exec(pid_t pid, void *arg)
{
	struct onerun *r = arg;

	(void)pid;
	r->at_exec_err = onerun_attach_probes(r);
}

static int run_loop(struct onerun *r)
{
	/* Serial mode waits on the scheduler's notes (the decisions happen
	 * there), the others on events and delays. */
	bool serial = r->steer && strat_run_has(&r->sr, STRAT_F_SERIAL);
	bool steered = r->steer;
	struct ring_buffer *rb;
	uint64_t deadline, grace_t0 = 0;
	int err;

	if (!r->sess->rb) {
		err = session_ring(r->sess, r->sp);
		if (err) {
			log_err("cannot open the event ring buffer: %s", strerror(-err));
			return err;
		}
	}
	/* What a run before left unread (its events after its harvest) is
	 * not this run's. */
	r->sess->cur = NULL;
	ring_buffer__consume(r->sess->rb);
	r->sess->cur = r;
	rb = r->sess->rb;
	r->rb = rb;
	if (steered) {
		struct cs_sched_stats ss0 = { 0 };

		scx_concsched_stats(r->ctl, &ss0);
		r->sched_at_start = ss0;
		r->parks_at_start = ss0.parks;
		r->watchdog_at_start = ss0.watchdog;
	}
	err = launcher_release(&r->l, r->ti->path);
	if (!err && r->attach_at_exec) {
		err = launcher_at_exec(&r->l, attach_at_exec, r);
		if (!err)
			err = r->at_exec_err;
		if (err) {
			log_err("cannot attach the probes to %s at its exec: %s", r->ti->path,
				strerror(-err));
			launcher_kill(&r->l);
		}
	}
	if (err) {
		r->sess->cur = NULL;
		r->rb = NULL;
		return err;
	}
	ACCESS_HOOK(r, access_hook_launched(r));
	watch_exit(r, true);
	/* The run's span (duration from t0) starts at its target's launch:
	 * the report's overlaps of -j N (report.c find_overlaps). */
	r->started_ns = (int64_t)now_realtime_ns();
	r->t0 = now_ns();
	deadline = r->t0 + (uint64_t)(r->timeout_s * 1e9);
	for (;;) {
		int w = launcher_reap(&r->l);

		if (w == 1 || w < 0)
			break;
		if (onerun_stop) {
			r->interrupted = true;
			break;
		}
		if (now_ns() >= deadline) {
			bool probed = r->access_on && r->sess->ap.pid && !r->probes_stopped;

			if (!r->graced && r->grace_s > 0 && (r->steer || probed)) {
				if (r->steer)
					run_timeout_steering_off(r);
				if (probed)
					run_timeout_probes_off(r);
				serial = false;
				grace_t0 = now_ns();
				deadline = grace_t0 + (uint64_t)(r->grace_s * 1e9);
				continue;
			}
			r->timed_out = true;
			break;
		}
		if (serial)
			policy_poll(r->pol, 5);
		else
			run_wait(r, poll_ms(r));
		/* Most events come without a wakeup (the probe batches them). */
		err = run_session_consume(r);
		if (err < 0 && err != -EINTR) {
			log_err("reading events: %s", strerror(-err));
			break;
		}
		ACCESS_HOOK(r, access_hook_tick(r));
		switch (run_timeout_lock_cycle_watch(r, now_ns())) {
		case DL_STEERING_OFF: { /* as at the timeout: a grace period at least,
					 * and the time to confirm the cycle */
			uint64_t g = (uint64_t)(r->grace_s * 1e9);

			if (g < DL_CONFIRM_NS + 2 * DL_CHECK_NS)
				g = DL_CONFIRM_NS + 2 * DL_CHECK_NS;
			serial = false;
			grace_t0 = now_ns();
			if (deadline < grace_t0 + g)
				deadline = grace_t0 + g;
			break;
		}
		case DL_CONFIRMED:
			r->timed_out = true; /* ended like a hang: a deadlock */
			break;
		case DL_NONE:
			break;
		}
		if (r->timed_out)
			break;
		/* The threads let go at the timeout (or by the watch) have gone
		 * into their requests a quarter of the grace period later (a
		 * loaded machine runs one let go seconds late): the CPU
		 * evidence's mark. */
		if (r->graced && !r->cpu_mark_ns &&
		    now_ns() >= grace_t0 + run_timeout_mark_after_ns(r->grace_s))
			run_timeout_cpu_mark(r, now_ns());
		if (r->steer)
			strategy_tick(r->strat, &r->sr);
		if (r->steer) {
			strat_host_delays_due(&r->host, false);
			policy_poll(r->pol, 0);
			if (scx_concsched_exited(r->ctl)) {
				scx_concsched_print_exit(r->ctl, stderr);
				r->steer = false;
			}
		}
	}
	watch_exit(r, false);
	run_session_consume(r); /* its target may still run: a hang */
	if (r->graced)
		r->grace_used_s = (now_ns() - grace_t0) / 1e9;
	if (r->graced && !r->timed_out && r->l.reaped && !onerun_stop)
		r->slow = true;
	if (r->timed_out && !r->dl_found_s)
		run_timeout_analyze_deadlock(r);
	if (!r->l.reaped)
		launcher_kill(&r->l);
	r->t1 = now_ns();
	if (steered) {
		struct cs_sched_stats ss;

		strat_host_delays_due(&r->host, true);
		scx_concsched_stats(r->ctl, &ss);
		r->watchdog_run = ss.watchdog - r->watchdog_at_start;
		r->rescued_run = ss.rescued - r->sched_at_start.rescued;
		r->serial_preempts_run = ss.serial_preempts - r->sched_at_start.serial_preempts;
		/* The run's own: its target's counters since it started (a -j
		 * worker's target is its runs' alone). */
		log_debug("run: %.3f s, %" PRIu64 " decisions, %" PRIu64 " injected; scheduler: "
			  "%llu parks, %llu releases, %llu delays, %llu watchdog, %llu notes, "
			  "%llu rekicks",
			  (r->t1 - r->t0) / 1e9, r->decisions, r->host.injected,
			  (unsigned long long)(ss.parks - r->sched_at_start.parks),
			  (unsigned long long)(ss.releases - r->sched_at_start.releases),
			  (unsigned long long)(ss.delays - r->sched_at_start.delays),
			  (unsigned long long)(ss.watchdog - r->sched_at_start.watchdog),
			  (unsigned long long)(ss.notes - r->sched_at_start.notes),
			  (unsigned long long)(ss.release_rekicks -
					       r->sched_at_start.release_rekicks));
		if (r->rescued_run) {
			uint64_t n = r->rescued_run;

			if (!r->sess->rescue_told)
				log_warn("%" PRIu64
					 " thread(s) of this run waited over %u ms for a CPU "
					 "that other work held, and left the scheduler "
					 "(unsteered from then on, instead of the kernel "
					 "ejecting it): is the machine busy? (said once)",
					 n, scx_concsched_rescue_ms(r->ctl));
			else
				log_debug("run: %" PRIu64 " starved thread(s) left the scheduler",
					  n);
			r->sess->rescue_told = true;
		}
		scx_concsched_quiesce(r->ctl);
	}
	ring_buffer__consume(rb);
	if (r->consume_cut)
		log_debug("run: %u reads of its events cut at %llu ms (the probes outpaced the "
			  "controller)",
			  r->consume_cut, (unsigned long long)(RUN_CONSUME_NS / 1000000));
	r->sess->cur = NULL;
	r->rb = NULL;
	/* Stopped by ^C with its target still going: killed by us, not a
	 * run of the program to judge (it was once stored as a failure,
	 * "killed by SIGKILL"). */
	return r->interrupted ? -EINTR : 0;
}

/* ---- one run ------------------------------------------------------------------------------ */

static int capture_fd(const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		log_err("memfd_create: %s", strerror(errno));
	return fd;
}

/* Read a captured stream, keeping its last RUN_OUTPUT_MAX bytes. */
char *onerun_read_capture(int fd, size_t *len)
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

/* How r's target is launched (its capture files aside); stdin_fd is
 * opened here, the caller closes it. */
static void launch_opts_fill(struct onerun *r, struct launch_opts *lo, uid_t uid, gid_t gid,
			     bool drop)
{
	memset(lo, 0, sizeof(*lo));
	lo->argv = r->o->argv;
	lo->sched_ext = r->steer;
	/* Probes for its pid only are attached after its exec: before it,
	 * the child shares the controller's memory (launcher.h). */
	lo->stop_at_exec = r->attach_at_exec;
	lo->drop_privs = drop;
	lo->uid = uid;
	lo->gid = gid;
	lo->stdin_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	lo->own_cgroup = true;
	lo->keep_cg = &r->sess->cg;
	lo->cpus = r->sess->pinned ? &r->sess->cpus : NULL;
}

static int onerun_start(struct onerun *r, uid_t uid, gid_t gid, bool drop)
{
	struct launch_opts lo = { 0 };
	int err;

	syncov_resolver_init(&r->res);
	thread_model_init(&r->tm, RUN_MAX_ACTIONS);
	r->nseen = 0;
	r->nknown = 0;
	err = run_session_prepare(r->sess, r);
	if (err)
		return err;
	r->sp = &r->sess->sp;
	r->ctl = r->sess->ctl;
	r->pol = r->sess->pol;
	if (r->pol) {
		policy_on_all_parked(r->pol, on_all_parked, r);
		policy_on_resumed(r->pol, on_resumed, r);
	}
	r->sr.pol = r->pol;
	memset(&r->l, 0, sizeof(r->l));
	r->out_fd = capture_fd("concsched-stdout");
	r->err_fd = capture_fd("concsched-stderr");
	if (r->out_fd < 0 || r->err_fd < 0)
		return -EIO;
	r->attach_at_exec = r->o->no_follow_forks || (r->access_on && r->sess->ap_open);
	launch_opts_fill(r, &lo, uid, gid, drop);
	lo.stdout_fd = r->out_fd;
	lo.stderr_fd = r->err_fd;
	if (!r->sess->dontfork) {
		launcher_dontfork_bpf_maps();
		r->sess->dontfork = true;
	}
	err = launcher_prepare(&lo, &r->l);
	if (lo.stdin_fd >= 0)
		close(lo.stdin_fd);
	if (err) {
		log_err("cannot start %s: %s", r->ti->path, strerror(-err));
		return err;
	}
	r->launched = true;
	/* Its target's before it enters SCHED_EXT (at its gate): its threads
	 * and what it forks are steered as its run's. */
	if (r->ctl && r->steer && (err = scx_concsched_own(r->ctl, r->l.pid))) {
		log_err("cannot give %s's process to its run's scheduler target: %s", r->ti->path,
			strerror(-err));
		return err;
	}
	err = sync_probes_track(r->sp, r->l.pid);
	if (err)
		return err;
	if (!r->sess->paths_ready) {
		syncov_resolver_add_path(&r->sess->paths, r->rt->object);
		syncov_resolver_add_path(&r->sess->paths, r->rt->ldso);
		syncov_resolver_add_path(&r->sess->paths, r->ti->path);
		syncov_resolver_add_paths(&r->sess->paths, r->rt->libs);
		r->sess->paths_ready = true;
	}
	syncov_resolver_copy_paths(&r->res, &r->sess->paths);
	syncov_resolver_tell(&r->res, r->sp, &r->nknown);
	if (!r->attach_at_exec) {
		err = onerun_attach_probes(r);
		if (err)
			return err;
	}
	if (r->steer) {
		size_t i;

		if (!r->sess->kicked) {
			err = scx_concsched_attach_kick(r->ctl, r->sp->skel->progs.cs_sync_commit);
			if (!err)
				err = scx_concsched_guard(r->ctl);
			if (err)
				return err;
			r->sess->kicked = true;
		}
		/* Every decision point the strategy asks for parks; it
		 * decides and the loop releases (on_parked). */
		if (strat_run_has(&r->sr, STRAT_F_ACCESS_POINTS) && r->access_on)
			for (i = 0; i < ARRAY_SIZE(access_ops) && !err; i++)
				err = policy_park_site(r->pol, CS_SITE_OP_KEY(access_ops[i]), 0, 0,
						       0);
		if (strat_run_has(&r->sr, STRAT_F_SYNC_POINTS))
			for (i = 0; i < ARRAY_SIZE(park_ops) && !err; i++)
				err = policy_park_site(r->pol, CS_SITE_OP_KEY(park_ops[i]), 0, 0,
						       0);
		if (!err)
			err = policy_serialize(r->pol, r->sr.sched_serial, r->seed);
		if (!err)
			err = scx_concsched_set_active(r->ctl, true);
		if (err) {
			log_err("cannot set the scheduler's policy: %s", strerror(-err));
			return err;
		}
	}
	return 0;
}

void onerun_cleanup(struct onerun *r)
{
	if (r->pol) /* the session's: its notes are no longer this run's */
		policy_on_resumed(r->pol, NULL, NULL);
	if (r->launched)
		launcher_end(&r->l);
	if (r->ctl)
		scx_concsched_quiesce(r->ctl);
	if (r->sess && r->sess->ap_open)
		access_probes_reset(&r->sess->ap);
	if (r->sp)
		sync_probes_end_run(r->sp);
	access_run_free(r);
	syncov_run_free(&r->cov);
	thread_model_free(&r->tm);
	free(r->cpu_mark);
	r->cpu_mark = NULL;
	r->ncpu_mark = 0;
	r->cpu_mark_ns = 0;
	syncov_resolver_free(&r->res);
	declog_free(&r->log);
	free(r->passes);
	free(r->sr.threads);
	if (r->out_fd >= 0)
		close(r->out_fd);
	if (r->err_fd >= 0)
		close(r->err_fd);
}

/* With --no-follow-forks the probes follow the target's own process only:
 * say once per campaign that it forked. */
static void note_forks(struct onerun *r)
{
	uint64_t st[CS_SSTAT__COUNT];
	const char *base = strrchr(r->ti->path, '/');

	if (sync_probes_stats(r->sp, st))
		return;
	r->forks = st[CS_SSTAT_FORKS];
	/* Once per campaign, whichever run of -j N sees it first. */
	if (!r->forks || __atomic_exchange_n(r->forks_noted, true, __ATOMIC_RELAXED))
		return;
	base = base ? base + 1 : r->ti->path;
	fprintf(stderr,
		"%sconcsched: %s forked; its children's threads are not steered "
		"(--no-follow-forks: only %s's own threads; the children are killed when the "
		"run ends; see docs/run.md)\n",
		r->tty ? "\r\033[K" : "", base, base);
}

/* Run the target once; fills r (caller cleans up with onerun_cleanup). */
int onerun_do(struct onerun *r, uid_t uid, gid_t gid, bool drop)
{
	int err;

	r->out_fd = r->err_fd = -1;
	r->started_ns = (int64_t)now_realtime_ns();
	err = onerun_start(r, uid, gid, drop);
	if (err)
		return err;
	err = run_loop(r);
	passes_flush(r);
	if (err)
		return err;
	note_forks(r);
	r->tm_harvest = now_ns();
	if (r->sess->ap_open) /* not reset: its counters are read at commit */
		access_probes_detach(&r->sess->ap);
	/* Nothing of this run emits from here on; the campaign's links
	 * stay for the next run. */
	sync_probes_end_run(r->sp);
	run_sites_refresh_vmas(r);
	syncov_harvest(r->sp, &r->res, r->rt->is_static ? r->rt->object : NULL, true, &r->cov);
	r->tm_harvest = now_ns() - r->tm_harvest;
	log_debug("run setup: scheduler %.3f s, probes %.3f s, attach %.3f s; harvest %.3f s",
		  r->tm_sched / 1e9, r->tm_probes / 1e9, r->tm_attach / 1e9, r->tm_harvest / 1e9);
	return 0;
}
