// SPDX-License-Identifier: MIT
/*
 * concsched run: a campaign of repeated runs (DESIGN.md "One run, step by
 * step"; docs/run.md). Estimation runs first when --access or the strategy
 * asks for them; then each run gets its seed, its strategy configuration
 * and its decision log, goes through onerun.c, the oracles classify it,
 * and its coverage, failures and log go into the store in one transaction;
 * saturation of the chosen metric decides when the campaign has seen
 * enough. The strategy is reached only through its ops.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "run/access.h"
#include "campaign/campaign.h"
#include "run/onerun.h"
#include "results/oracle.h"
#include "replay/replay.h"
#include "results/report.h"
#include "run/run_sites.h"
#include "results/saturation.h"
#include "results/store.h"
#include "results/stream.h"
#include "coverage/syncov.h"
#include "coverage/metrics.h"
#include "kernel/launcher.h"
#include "kernel/symbolize.h"
#include "kernel/target.h"
#include "lib/declog.h"
#include "lib/json.h"
#include "lib/array_size.h"
#include "lib/crash.h"
#include "lib/fnv1a64.h"
#include "lib/futex_lock.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/xalloc.h"
#include "strategies/serial.h"

static const char *const metric_names[] = { "sp", "goodlock", "hbpair", "sync" };

/* The run's concrete configuration: stored with the run and in its log. */
static char *run_config_json(const struct campaign *c, struct onerun *r)
{
	const struct run_opts *o = c->o;
	struct strategy *s = o->strat;
	struct json_mem m;

	json_mem_open(&m);
	json_obj_begin(&m.j, NULL);
	json_kv_str(&m.j, "strategy", o->strategy);
	strategy_config_json(s, &r->sr, &m.j);
	json_kv_str(&m.j, "serial", serial_mode_name(r->sr.sched_serial));
	json_kv_uint(&m.j, "seed", r->seed);
	/* the timeout and grace this run had (adaptive): its replays get
	 * the same */
	json_kv_dbl(&m.j, "run_timeout_s", r->timeout_s);
	json_kv_dbl(&m.j, "run_grace_s", r->grace_s);
	access_run_config_json(c, r, &m.j);
	json_obj_end(&m.j);
	return json_mem_close(&m);
}

static int run_check(const struct run_opts *o, int64_t run, int status, uid_t uid, gid_t gid,
		     bool drop, int out_fd, const cpu_set_t *cpus)
{
	char runs[64], st[64], outf[96];
	char *argv[] = { "/bin/sh", "-c", (char *)o->check, NULL };
	struct launch_opts lo = { 0 };
	struct launch l;
	char **envp;
	size_t n = 0, i, k = 0;
	int err, w;

	snprintf(runs, sizeof(runs), "CONCSCHED_RUN=%" PRId64, run);
	snprintf(st, sizeof(st), "CONCSCHED_EXIT=%d",
		 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	snprintf(outf, sizeof(outf), "CONCSCHED_OUT_FILE=/proc/%d/fd/%d", (int)getpid(), out_fd);
	/* The check's own environment, not setenv: with -j N another worker
	 * reads the controller's (getenv, a target's exec) outside our lock,
	 * and setenv may free the array under it. */
	while (environ[n])
		n++;
	envp = xcalloc(n + 4, sizeof(*envp));
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "CONCSCHED_RUN=", 14) &&
		    strncmp(environ[i], "CONCSCHED_EXIT=", 15) &&
		    strncmp(environ[i], "CONCSCHED_OUT_FILE=", 19))
			envp[k++] = environ[i];
	envp[k++] = runs;
	envp[k++] = st;
	envp[k++] = outf;
	lo.argv = argv;
	lo.envp = envp;
	lo.drop_privs = drop;
	lo.uid = uid;
	lo.gid = gid;
	lo.stdin_fd = -1;
	lo.stdout_fd = lo.stderr_fd = STDERR_FILENO;
	lo.cpus = cpus;
	err = launcher_prepare(&lo, &l);
	if (!err)
		err = launcher_release(&l, "/bin/sh");
	if (err) {
		launcher_kill(&l);
		free(envp);
		return err;
	}
	free(envp); /* released: the child has exec'd */
	w = launcher_wait(&l, (unsigned)(o->run_timeout_s * 1000));
	if (w != 1) {
		launcher_kill(&l);
		return 0x7f00; /* exit 127: it hung */
	}
	return l.status;
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
		syncov_resolve(&r->res, t->tgid, t->gen, t->actions[a - 1].site, &s);
		if (!s.object)
			continue;
		id = run_sites_store_site(st, syncov_site_key(&s, key, sizeof(key)));
		for (j = 0; j < n && ids[j] != id; j++)
			;
		if (id > 0 && j == n)
			ids[n++] = id;
	}
	return n;
}

/* ---- campaign ------------------------------------------------------------------------------ */

int campaign_metric_index(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(metric_names); i++)
		if (!strcmp(metric_names[i], name))
			return (int)i;
	if (metrics_metric_parse(name) >= 0)
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
	char sat[48];
	struct json_mem m;
	struct json *j = &m.j;

	json_mem_open(&m);
	json_obj_begin(j, NULL);
	json_kv_str(j, "strategy", o->strategy);
	json_kv_str(j, "serial", serial_mode_name(o->serial));
	json_kv_uint(j, "slice_us", o->sched_slice_us ? o->sched_slice_us : RUN_SLICE_DFL_US);
	json_kv_uint(j, "runs", o->runs);
	json_kv_dbl(j, "time_s", o->time_s);
	json_kv_dbl(j, "run_timeout_s", o->run_timeout_s);
	json_kv_bool(j, "keep_going", o->keep_going);
	json_kv_uint(j, "max_failures", o->max_failures);
	json_kv_str(j, "metric", o->metric);
	json_kv_str(j, "saturation", saturation_format(&o->sat, sat, sizeof(sat)));
	json_kv_bool(j, "access", o->access);
	json_kv_bool(j, "follow_forks", !o->no_follow_forks);
	json_kv_uint(j, "jobs", o->jobs > 1 ? o->jobs : 1);
	if (o->access)
		json_kv_uint(j, "estimate_runs", o->estimate_runs);
	if (o->expect_exit_set)
		json_kv_int(j, "expect_exit", o->expect_exit);
	json_kv_str(j, "check", o->check);
	json_obj_end(j);
	return json_mem_close(&m);
}

#define PROGRESS_ADD(buf, len, ...)                                                                \
	do {                                                                                       \
		if ((len) < sizeof(buf))                                                           \
			(len) +=                                                                   \
				(size_t)snprintf((buf) + (len), sizeof(buf) - (len), __VA_ARGS__); \
	} while (0)

/* The progress line: on a terminal, and for run --vm on the stream, whose
 * host end shows it on its terminal (an empty line clears it). */
static void progress(struct campaign *c, bool final)
{
	const struct run_opts *o = c->o;
	double el = (now_ns() - c->t0) / 1e9, eta = -1;
	char line[512];
	size_t m, n = 0;

	if (!c->tty && c->stream_fd < 0)
		return;
	line[0] = '\0';
	if (!final) {
		if (o->runs)
			PROGRESS_ADD(line, n, "run %" PRId64 "/%" PRIu64, c->nruns, o->runs);
		else
			PROGRESS_ADD(line, n, "run %" PRId64, c->nruns);
		for (m = 0; m < SYNCOV__COUNT; m++)
			PROGRESS_ADD(line, n, "  %s %.0f", metric_names[m],
				     c->npts ? c->y[m][c->npts - 1] : 0.0);
		if (c->sat.enough)
			PROGRESS_ADD(line, n, "  %s slope %.2f%s", o->metric, c->sat.slope,
				     c->sat.saturated ? " saturated" : "");
		else
			PROGRESS_ADD(line, n, "  %s saturation: %zu/%.0f runs", o->metric, c->npts,
				     o->sat.window);
		PROGRESS_ADD(line, n, "  failures %zu", c->failures);
		if (c->last_arm[0])
			PROGRESS_ADD(line, n, "  arm %s", c->last_arm);
		if (o->runs && c->nruns)
			eta = el / (double)c->nruns * (double)(o->runs - (uint64_t)c->nruns);
		if (o->time_s > 0 && (eta < 0 || o->time_s - el < eta))
			eta = o->time_s - el;
		if (eta >= 0)
			PROGRESS_ADD(line, n, "  ETA %.0fs", eta);
	}
	if (c->tty) {
		fprintf(stderr, "\r\033[K%s", line);
		fflush(stderr);
	}
	if (c->stream_fd >= 0)
		stream_write(c->stream_fd, STREAM_PROGRESS, line, strlen(line));
}

/* run --vm: the store's records go to the port the host reads. */
static int campaign_stream_record(char kind, const void *data, size_t len, void *arg)
{
	struct campaign *c = arg;

	return stream_write(c->stream_fd, kind, data, len);
}

static void campaign_stream_start(struct campaign *c)
{
	const char *port = getenv("CONCSCHED_STREAM");
	int err;

	if (!port || !*port)
		return;
	c->stream_fd = open(port, O_WRONLY | O_CLOEXEC);
	if (c->stream_fd < 0) {
		log_warn("cannot open %s to stream the campaign: %s", port, strerror(errno));
		return;
	}
	err = store_replicate(c->st, campaign_stream_record, c);
	if (err) {
		log_warn("cannot stream the campaign: %s", strerror(-err));
		close(c->stream_fd);
		c->stream_fd = -1;
	}
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

	out = onerun_read_capture(r->out_fd, &out_len);
	err = onerun_read_capture(r->err_fd, &err_len);
	if (c->o->check && !r->timed_out)
		check_status = run_check(c->o, index, r->l.status, c->uid, c->gid, c->drop,
					 r->out_fd, r->sess->pinned ? &r->sess->cpus : NULL);
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
	in.timeout_s = r->timeout_s;
	in.grace_s = r->graced ? r->grace_used_s : 0;
	in.grace_stop = !r->steer_stopped   ? "its access probes stopped"
			: r->probes_stopped ? "every thread was let go and steering and the access "
					      "probes stopped"
					    : NULL;
	in.found_s = r->dl_found_s;
	in.confirm_s = r->dl_confirm_s;
	oracle_classify(&in, &v);
	if (r->slow && !outcome_is_failure(v.outcome)) {
		/* Not the program's: it ended once we stopped steering, or
		 * stopped probing its accesses. */
		if (r->steer_stopped)
			snprintf(v.summary, sizeof(v.summary),
				 "slow under steering: past the %.3g s run timeout while steered "
				 "(%" PRIu64 " parks, %" PRIu64 " ended by the watchdog, %" PRIu64
				 " delays%s); ended %.3g s after steering stopped",
				 r->timeout_s, r->parks_at_timeout, r->watchdog_at_timeout,
				 r->delays_at_timeout, r->probes_stopped ? ", accesses probed" : "",
				 r->grace_used_s);
		else
			snprintf(v.summary, sizeof(v.summary),
				 "slow under the access probes: past the %.3g s run timeout with "
				 "its accesses probed (%" PRIu64
				 " seen); ended %.3g s after the probes stopped",
				 r->timeout_s, r->accesses_at_timeout, r->grace_used_s);
		store_record_warning(c->st, "slow",
				     "runs that ended only once steering or the access probes "
				     "stopped",
				     NULL, 0, NULL, NULL);
		c->slow++;
	}

	for (i = 0; i < r->cov.tasks.n; i++) {
		const struct syncov_task *t = &r->cov.tasks.tasks[i];
		char *k = run_sites_store_key(c->st, t->key);

		store_cover_task(c->st, syncov_metric_name(t->metric), k, t->hits);
		free(k);
	}
	access_run_commit(c, r);
	if (outcome_is_failure(v.outcome)) {
		size_t ns = failure_sites(c->st, r, sites, ARRAY_SIZE(sites));

		store_record_failure(c->st, oracle_outcome_name(v.outcome), v.summary,
				     v.detail[0] ? v.detail : NULL, sites, ns);
	}
	r->log.seed = r->seed;
	declog_encode(&r->log, &blob, &blob_len);
	res.outcome = oracle_outcome_name(v.outcome);
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
		log_err("cannot commit run %" PRId64 ": %s", index, store_errmsg(c->st));
	free(blob);
	free(out);
	free(err);
	if (ret)
		return -EIO;
	if (r->slow && !outcome_is_failure(v.outcome)) {
		if (c->tty)
			progress(c, true);
		fprintf(stderr, "concsched: run %" PRId64 ": %s (not a failure)\n", index,
			v.summary);
	} else if (!outcome_is_failure(v.outcome)) {
		double d = (r->t1 - r->t0) / 1e9;

		/* The adaptive run timeout follows the slowest clean run. */
		if (d > c->slowest_clean_s)
			c->slowest_clean_s = d;
	}
	if (outcome_is_failure(v.outcome)) {
		c->failures++;
		if (c->tty)
			progress(c, true);
		if (c->last_arm[0]) /* a portfolio's: the sub-strategy that found it */
			fprintf(stderr, "concsched: run %" PRId64 ": %s (arm %s)\n", index,
				v.summary, c->last_arm);
		else
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
	saturation_evaluate(c->x[c->metric], c->y[c->metric], c->npts, &c->o->sat, &c->sat);
	c->saturated = c->sat.saturated;
}

/* --run-timeout, or adaptive: RUN_TIMEOUT_FACTOR x the slowest clean run
 * of the campaign so far, at least RUN_MIN_TIMEOUT; the default until a
 * run has ended cleanly. Estimation runs do not count: they are not
 * steered, and a steered run may well take 20 times longer. */
static double campaign_run_timeout(const struct campaign *c)
{
	double t = c->slowest_clean_s * RUN_TIMEOUT_FACTOR;

	if (c->o->run_timeout_set || c->slowest_clean_s <= 0)
		return c->o->run_timeout_s;
	return t > RUN_MIN_TIMEOUT ? t : RUN_MIN_TIMEOUT;
}

/* The strategy's view of the run's end. */
static void run_ended(struct campaign *c, struct onerun *r, bool ran, bool failed)
{
	struct strategy *s = c->o->strat;
	struct strat_outcome out = { .ran = ran, .failed = failed, .timed_out = r->timed_out };

	out.slow = r->slow;
	out.parks = r->parks_at_timeout;
	out.watchdog_releases = r->watchdog_at_timeout;
	out.duration_ns = r->t1 > r->t0 ? r->t1 - r->t0 : 0;
	out.cov = &r->cov;
	access_run_fitness(r, &out.wgoldilock_sc, &out.warnings);
	c->sc.nruns = (uint64_t)c->nruns;
	strategy_run_end(s, &r->sr, &c->sc, &out);
}

/* A run's start: its seed (from the count of runs started), the
 * strategy's begin, its configuration and decision log. */
static char *run_prepare(struct campaign *c, struct onerun *r)
{
	struct run_opts *o = c->o;
	struct strategy *s = o->strat;
	char *cfg;

	c->nstarted++;
	onerun_init(r, c, s, rng_derive(o->seed, (uint64_t)c->nstarted), c->steer);
	r->timeout_s = campaign_run_timeout(c);
	r->grace_s = onerun_grace_s(r->timeout_s, c->unsteered_s);
	r->sr.probe_set = access_run_probe_key(c);
	strategy_run_begin(s, &r->sr);
	if (c->acc && !r->sr.no_access_probes)
		access_run_begin(c, r, false);
	cfg = run_config_json(c, r);
	declog_init(&r->log, r->seed, cfg);
	return cfg;
}

/* The sub-strategy a wrapper ran this run with (its configuration's
 * "arm", e.g. the portfolio's), for the progress and failure lines. */
static void run_arm(struct campaign *c, const char *cfg)
{
	char *arm = json_get_string(cfg, "arm");

	snprintf(c->last_arm, sizeof(c->last_arm), "%s", arm ? arm : "");
	free(arm);
}

/* A run's end: into the store, to the strategy, the oracles' verdict.
 * err: onerun_do's. Returns 1 for a failure, 0, or a negative errno. */
static int run_finish(struct campaign *c, struct onerun *r, char *cfg, int err)
{
	struct store_run_info ri = { 0 };
	int64_t index;

	if (err) {
		run_ended(c, r, false, false);
		onerun_cleanup(r);
		free(cfg);
		return err;
	}
	ri.seed = r->seed;
	cfg = onerun_config_steering(r, access_run_config_counted(r, cfg));
	ri.strategy_config_json = cfg;
	ri.started_ns = r->started_ns;
	err = store_begin_run(c->st, &ri, &index);
	if (err) {
		log_err("cannot record run: %s", store_errmsg(c->st));
		run_ended(c, r, false, false);
		onerun_cleanup(r);
		free(cfg);
		return -EIO;
	}
	c->nruns = index;
	run_arm(c, cfg);
	err = commit_run(c, r, index);
	run_ended(c, r, err >= 0, err == 1);
	onerun_cleanup(r);
	free(cfg);
	if (err < 0)
		return err;
	series_add(c);
	progress(c, false);
	return err;
}

static int campaign_run_one(struct campaign *c)
{
	struct onerun r;
	char *cfg = run_prepare(c, &r);
	int err = run_finish(c, &r, cfg, onerun_do(&r, c->uid, c->gid, c->drop));

	if (err == 1 && !onerun_stop)
		replay_check_failure(c, c->nruns);
	return err;
}

/* ---- -j N: runs at once ---------------------------------------------------------------- */

/* Each worker runs campaign runs one after the other with a session of its
 * own (probe object, event ring buffer, epoll set: its maps and events are
 * its run's alone). The campaign (its store, strategy, counters, progress)
 * is touched under c->lock: a run's start and its end, and with --access
 * each access hook of the run (its ids, variables and sites are the
 * campaign's); the rest of the run goes without it (what else the runs
 * share has a lock of its own: the symbolizer's caches, the launcher's
 * clone, the cgroup root). A steering campaign's workers share its
 * scheduler, each steering its runs' targets as one target of it (its own
 * serial token, queue, all-parked notes, site policies: scx_concsched.h), for
 * strategies whose in-run decisions use their run's state, or shared state
 * under a lock of their own (STRAT_F_JOBS; docs/run.md, "Steered runs at
 * once"). */
struct run_worker {
	struct campaign *c;
	struct run_session sess;
	pthread_t th;
	bool started;
	int cpu; /* the one it keeps to, or -1 */
};

/* With two workers or more, each keeps to a CPU of the campaign's (the
 * i-th, round the set): free, the wake-ups of a run's hand-overs (clone,
 * gate, exec, exit) kept drawing both onto one CPU, where the targets
 * waited behind them (docs/run.md, "Each worker on a CPU of its own").
 * Their targets take the whole set back before their exec
 * (launch_opts.cpus). Not when steering: there the scheduler places the
 * targets, and pinned workers gained nothing in the VM. -1 where the
 * campaign has one CPU. */
static int worker_cpu(const cpu_set_t *cpus, unsigned i)
{
	int n = CPU_COUNT(cpus), cpu;

	if (n < 2)
		return -1;
	i %= (unsigned)n;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, cpus) && i-- == 0)
			return cpu;
	return -1;
}

static bool campaign_done(struct campaign *c);

/* May another run start? Not past -n, nor past the cap without one. */
static bool runs_left(const struct campaign *c)
{
	const struct run_opts *o = c->o;

	if (o->runs)
		return (uint64_t)c->nstarted < o->runs;
	if (o->time_s <= 0)
		return c->nstarted < RUN_DEFAULT_CAP;
	return true;
}

static void *run_worker_main(void *arg)
{
	struct run_worker *w = arg;
	struct campaign *c = w->c;
	sigset_t set;

	/* Signals go to the main thread, which waits in pthread_join: its
	 * handler sets onerun_stop, which every run's loop reads. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (w->cpu >= 0) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(w->cpu, &one);
		w->sess.pinned = !pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	}
	w->sess.aset = c->sess.aset;
	w->sess.aprog = c->sess.aprog;
	w->sess.steer_cap = c->sess.steer_cap;
	w->sess.probe_cap = c->sess.probe_cap;
	w->sess.probe_budget = c->sess.probe_budget;
	futex_lock_acquire(&c->lock);
	while (!c->jobs_err && !campaign_done(c) && runs_left(c)) {
		struct onerun r;
		char *cfg = run_prepare(c, &r);
		int err;

		r.sess = &w->sess;
		r.camp_lock = &c->lock;
		futex_lock_release(&c->lock);
		err = onerun_do(&r, c->uid, c->gid, c->drop);
		futex_lock_acquire(&c->lock);
		err = run_finish(c, &r, cfg, err);
		if (err < 0 && !c->jobs_err)
			c->jobs_err = err;
		/* Checked once the workers are done (campaign_jobs). */
		if (err == 1 && c->steer && c->o->replay_check) {
			c->recheck = xrealloc(c->recheck, (c->nrecheck + 1) * sizeof(*c->recheck));
			c->recheck[c->nrecheck++] = c->nruns;
		}
	}
	futex_lock_release(&c->lock);
	run_session_close(&w->sess); /* its links take grace periods: unlocked */
	return NULL;
}

/* The campaign's runs, o->jobs at once. Returns the first error, or 0. */
static int campaign_jobs(struct campaign *c)
{
	struct run_worker *w = xcalloc(c->o->jobs, sizeof(*w));
	cpu_set_t cpus;
	bool have_cpus;
	unsigned i;
	int err = 0;

	memset(&c->lock, 0, sizeof(c->lock));
	/* One scheduler for the campaign (its session's), a target of it
	 * for each worker. */
	if (c->steer) {
		err = run_session_sched(&c->sess, c->o, c->o->strat->sched_serial, c->o->seed);
		for (i = 0; i < c->o->jobs && !err; i++)
			err = run_session_target(&w[i].sess, &c->sess);
		if (err) {
			log_err("cannot steer %u runs at once: %s", c->o->jobs, strerror(-err));
			for (i = 0; i < c->o->jobs; i++)
				run_session_close(&w[i].sess);
			free(w);
			return err;
		}
	}
	symbolize_set_threaded(true);
	have_cpus = !sched_getaffinity(0, sizeof(cpus), &cpus);
	for (i = 0; i < c->o->jobs; i++) {
		w[i].c = c;
		w[i].cpu = have_cpus && !c->steer ? worker_cpu(&cpus, i) : -1;
		if (w[i].cpu >= 0)
			w[i].sess.cpus = cpus;
		err = pthread_create(&w[i].th, NULL, run_worker_main, &w[i]);
		if (err) {
			log_err("cannot start run worker %u: %s", i + 1, strerror(err));
			futex_lock_acquire(&c->lock);
			c->jobs_err = -err;
			futex_lock_release(&c->lock);
			break;
		}
		w[i].started = true;
	}
	for (i = 0; i < c->o->jobs; i++) {
		if (w[i].started)
			pthread_join(w[i].th, NULL);
		else
			run_session_close(&w[i].sess);
	}
	symbolize_set_threaded(false);
	err = c->jobs_err;
	free(w);
	for (size_t k = 0; k < c->nrecheck && !onerun_stop; k++)
		replay_check_failure(c, c->recheck[k]);
	free(c->recheck);
	c->recheck = NULL;
	c->nrecheck = 0;
	return err;
}

int campaign_observe_once(struct campaign *c, struct onerun *r)
{
	onerun_init(r, c, NULL, 0, false);
	declog_init(&r->log, 0, NULL);
	return onerun_do(r, c->uid, c->gid, c->drop);
}

static int run_observe_access(struct campaign *c, struct onerun *r)
{
	onerun_init(r, c, NULL, rng_derive(c->o->seed, 0), false);
	declog_init(&r->log, 0, NULL);
	access_run_begin(c, r, true);
	return onerun_do(r, c->uid, c->gid, c->drop);
}

/* An estimation run that ended by itself (not a hang, not ^C): the
 * longest is the grace period's measure (onerun_grace_s). */
static void unsteered_add(struct campaign *c, const struct onerun *r)
{
	double d = (r->t1 - r->t0) / 1e9;

	if (r->l.reaped && !r->timed_out && !r->interrupted && d > c->unsteered_s)
		c->unsteered_s = d;
}

/* --access: the candidate sites, the estimation runs, the shared ones. */
static int access_estimate(struct campaign *c)
{
	unsigned k, runs = c->o->estimate_runs ? c->o->estimate_runs : 1;
	int err = access_campaign_begin(c);

	for (k = 0; k < runs && !err; k++) {
		struct onerun r;

		err = run_observe_access(c, &r);
		if (!err) {
			access_estimation_add(c, &r);
			c->sc.est_access_ns += (r.t1 - r.t0) / runs;
			unsteered_add(c, &r);
		}
		onerun_cleanup(&r);
		if (err)
			log_err("--access: the estimation run failed: %s", strerror(-err));
	}
	if (!err)
		access_campaign_estimated(c);
	return err;
}

/* The strategy's estimation runs (STRAT_F_ESTIMATE): observed, unsteered. */
static int campaign_estimate(struct campaign *c)
{
	struct strategy *s = c->o->strat;
	unsigned k;
	int err = 0;

	for (k = 0; k < c->o->estimate_runs && !err; k++) {
		struct strat_observation obs;
		struct onerun r;

		err = campaign_observe_once(c, &r);
		if (!err) {
			obs.tm = &r.tm;
			obs.res = &r.res;
			obs.duration_ns = r.t1 - r.t0;
			unsteered_add(c, &r);
			err = strategy_estimate(s, &c->sc, &obs);
		}
		onerun_cleanup(&r);
		if (err)
			log_err("%s: the estimation run failed: %s", c->o->strategy,
				strerror(-err));
	}
	return err;
}

/* strat_campaign services over the store. */
static int64_t sc_site_of(void *ctx, const char *key)
{
	struct campaign *c = ctx;

	return run_sites_store_site(c->st, key);
}

static int sc_add_requirement(void *ctx, const char *metric, const char *key, const char *source)
{
	struct campaign *c = ctx;

	return store_add_requirement(c->st, metric, key, source);
}

static int sc_note(void *ctx, const char *json)
{
	struct campaign *c = ctx;

	return c->nruns > 0 ? store_add_strategy_note(c->st, c->nruns, json) : -ENOENT;
}

struct task_walk {
	int (*fn)(const char *key, void *arg);
	void *arg;
};

static int task_walk_one(const struct store_task *t, void *arg)
{
	struct task_walk *w = arg;

	return w->fn(t->key, w->arg);
}

static int sc_for_each_task(void *ctx, const char *metric, int (*fn)(const char *key, void *arg),
			    void *arg)
{
	struct campaign *c = ctx;
	struct task_walk w = { fn, arg };

	return store_for_each_task(c->st, metric, task_walk_one, &w);
}

static int64_t sc_count_tasks(void *ctx, const char *metric)
{
	struct campaign *c = ctx;

	return store_count_tasks(c->st, metric);
}

/* Distinct race and lock-order warnings (the store keeps one row per run
 * that saw one): their (kind, variable, sites) hashed, sorted, counted. */
struct warning_keys {
	uint64_t *h;
	size_t n;
};

static int warning_key(const struct store_warning *w, void *arg)
{
	struct warning_keys *k = arg;
	uint64_t h;

	if (strcmp(w->kind, "race") && strcmp(w->kind, "lock-order"))
		return 0;
	h = fnv1a64(w->kind, strlen(w->kind), FNV1A64_INIT);
	if (w->variable)
		h = fnv1a64(w->variable, strlen(w->variable), h);
	h = fnv1a64(w->sites, w->nsites * sizeof(*w->sites), h);
	if (k->n % 64 == 0)
		k->h = xrealloc(k->h, (k->n + 64) * sizeof(*k->h));
	k->h[k->n++] = h;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int64_t sc_count_warnings(void *ctx)
{
	struct campaign *c = ctx;
	struct warning_keys k = { 0 };
	int64_t n = 0;
	size_t i;

	if (!store_for_each_warning(c->st, warning_key, &k)) {
		qsort(k.h, k.n, sizeof(*k.h), cmp_u64);
		for (i = 0; i < k.n; i++)
			n += !i || k.h[i] != k.h[i - 1];
	}
	free(k.h);
	return n;
}

static bool campaign_done(struct campaign *c)
{
	const struct run_opts *o = c->o;

	if (onerun_stop)
		return true;
	if (c->failures && !o->keep_going)
		return true;
	if (o->max_failures && c->failures >= o->max_failures)
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

char *campaign_default_out(const char *prog)
{
	char stamp[32];
	time_t now = time(NULL);
	const char *base = strrchr(prog, '/');

	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime(&now));
	return xasprintf("concsched-%s-%s", base ? base + 1 : prog, stamp);
}

static int final_report(struct campaign *c)
{
	const char *host_dir = getenv("CONCSCHED_HOST_DIR");
	struct report_options ro = { .dir = host_dir ? host_dir : c->o->out };
	struct report *rep;
	int err;

	ro.replay_vm = getenv("CONCSCHED_HOST_NO_SCHED_EXT") || !onerun_sched_ext_supported();
	err = report_load(c->st, &ro, &rep);
	if (err) {
		log_err("cannot summarise the campaign: %s", strerror(-err));
		return err;
	}
	if (c->o->json)
		report_write_json(rep, stdout);
	else
		report_write_text(rep, stderr);
	report_free(rep);
	return 0;
}

int campaign_run(struct run_opts *o)
{
	struct sigaction sa = { .sa_handler = onerun_on_signal };
	struct store_campaign info = { 0 };
	struct campaign c = { .o = o, .stream_fd = -1 };
	char *out_alloc = NULL;
	const char *shown;
	int err, ret = EXIT_USAGE;
	size_t m;

	c.steer = strategy_has(o->strat, STRAT_F_STEERS);
	c.sess.want_sched = c.steer;
	c.metric = campaign_metric_index(o->metric);
	c.tty = isatty(STDERR_FILENO) && !getenv("CONCSCHED_VM");
	err = target_inspect(o->argv[0], &c.ti);
	if (err)
		return EXIT_USAGE;
	if (onerun_check_environment(&c))
		return EXIT_USAGE;
	err = sync_runtime_for_exec(&c.ti, &c.rt);
	if (err)
		return EXIT_USAGE;
	err = launcher_resolve_user(o->user, &c.uid, &c.gid, &c.drop);
	if (err)
		return EXIT_USAGE;
	o->argv[0] = c.ti.path;
	if (!o->out)
		o->out = out_alloc = campaign_default_out(c.ti.path);
	if (!o->seed_set) {
		uint64_t s = now_realtime_ns() ^ ((uint64_t)getpid() << 32);

		o->seed = rng_splitmix64(&s);
	}
	info.program = c.ti.path;
	info.binary_hash = c.ti.hash;
	info.args_json = args_json(o->argv, o->argc);
	info.strategy = (char *)o->strategy;
	info.config_json = campaign_config_json(o);
	info.metric = (char *)o->metric;
	info.saturation = (char *)o->sat_spec;
	info.seed = o->seed;
	/* In the VM (run --vm), the machine is the host that started it. */
	info.where = getenv("CONCSCHED_VM") ? "vm" : "native";
	if (getenv("CONCSCHED_VM") && getenv("CONCSCHED_HOST_NAME"))
		info.host = getenv("CONCSCHED_HOST_NAME");
	err = store_create(o->out, &info, &c.st);
	free(info.args_json);
	free(info.config_json);
	if (err)
		goto out;
	campaign_stream_start(&c);
	libbpf_set_print(NULL);
	onerun_stop = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* The directory as the user names it (the host's, from a VM). */
	shown = getenv("CONCSCHED_HOST_DIR") ? getenv("CONCSCHED_HOST_DIR") : o->out;
	if (!o->json || c.tty)
		fprintf(stderr, "concsched: campaign %s: %s, strategy %s, seed %" PRIu64 "%s\n",
			shown, c.ti.path, o->strategy, o->seed,
			o->serial != CS_SERIAL_OFF ? ", serial" : "");
	crash_report_note("the runs stored before the crash are in %s", shown);
	c.sc.seed = o->seed;
	c.sc.quiet = o->json && !c.tty;
	c.sc.estimate_runs = o->estimate_runs;
	c.sc.ctx = &c;
	c.sc.site_of = sc_site_of;
	c.sc.add_requirement = sc_add_requirement;
	c.sc.note = sc_note;
	c.sc.for_each_task = sc_for_each_task;
	c.sc.count_tasks = sc_count_tasks;
	c.sc.count_warnings = sc_count_warnings;
	c.sc.access_asked = o->access_asked || c.metric == SYNCOV__COUNT;
	if (o->access && access_estimate(&c)) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (strategy_has(o->strat, STRAT_F_ESTIMATE) && campaign_estimate(&c)) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (strategy_campaign_begin(o->strat, &c.sc)) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (onerun_grace_s(o->run_timeout_s, c.unsteered_s) > onerun_grace_s(o->run_timeout_s, 0))
		log_debug("campaign: a run past its run timeout gets %.3g s of grace: twice the "
			  "estimation "
			  "run's %.3g s (what is left of a run once steering stops runs unsteered)",
			  onerun_grace_s(o->run_timeout_s, c.unsteered_s), c.unsteered_s);
	if (c.sc.access_off && !c.sc.access_asked && c.acc) {
		/* The strategy found access probing too dear (it said why):
		 * the test runs probe no access. The session's access probes
		 * were loaded over the campaign's site set: they go first. */
		run_session_close(&c.sess);
		access_campaign_end(&c);
		o->access = false;
	}
	c.t0 = now_ns();
	c.nstarted = c.nruns;
	if (o->jobs > 1) {
		err = campaign_jobs(&c);
	} else {
		while (!campaign_done(&c)) {
			err = campaign_run_one(&c);
			if (err < 0)
				break;
		}
	}
	progress(&c, true);
	if (err < 0 && err != -EINTR) {
		ret = EXIT_USAGE;
		fprintf(stderr,
			"concsched: campaign stopped by an error after %" PRId64
			" runs; what ran is in %s\n",
			c.nruns, o->out);
	} else {
		if (onerun_stop)
			fprintf(stderr, "concsched: interrupted after %" PRId64 " runs\n", c.nruns);
		else if (c.saturated && !o->runs && o->time_s <= 0)
			fprintf(stderr, "concsched: %s coverage saturated after %" PRId64 " runs\n",
				o->metric, c.nruns);
		final_report(&c);
		ret = c.failures ? 1 : onerun_stop ? 128 + onerun_stop : 0;
	}
out:
	c.sc.nruns = (uint64_t)c.nruns;
	strategy_campaign_end(o->strat, &c.sc);
	run_session_close(&c.sess);
	access_campaign_end(&c);
	store_close(c.st);
	crash_report_note(NULL);
	if (c.stream_fd >= 0)
		close(c.stream_fd);
	for (m = 0; m <= SYNCOV__COUNT; m++) {
		free(c.x[m]);
		free(c.y[m]);
	}
	free(out_alloc);
	return ret;
}
