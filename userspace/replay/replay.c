// SPDX-License-Identifier: MIT
/*
 * concsched replay: re-execute a recorded run with its seed, strategy
 * configuration and decision log, the way the recorded strategy's ops say
 * (strategies/strategy_replay.h); the campaign is not modified.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "run/access.h"
#include "run/onerun.h"
#include "results/oracle.h"
#include "replay/replay.h"
#include "results/schedule.h"
#include "results/run_steering.h"
#include "results/store.h"
#include "results/stream.h"
#include "run/vm_campaign.h"
#include "kernel/launcher.h"
#include "kernel/target.h"
#include "lib/declog.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/self.h"
#include "lib/shell.h"
#include "lib/xalloc.h"
#include "strategies/strategy_registry.h"
#include "strategies/strategy_replay.h"
#include "strategies/serial.h"

/* Keep what `replay --times K` found in the campaign, for report's
 * "replayed k/K", when the campaign can be written (else it is only
 * printed). */
static void record_replays(const char *dir, int64_t run, uint64_t times, uint64_t same,
			   const char *order)
{
	char *db = xasprintf("%s/%s", dir, STORE_DB_NAME);
	struct store *st = NULL;
	bool rw = access(dir, W_OK) == 0 && access(db, W_OK) == 0;

	free(db);
	if (!rw || !times)
		return;
	if (store_open(dir, false, &st))
		return;
	if (store_add_replay(st, run, times, same, order))
		log_warn("cannot note the replays in %s: %s", dir, store_errmsg(st));
	store_close(st);
}

/* The guest's result ('R' record on the stream): noted on the host. */
static int replayed_record(char kind, const void *data, size_t len, void *arg)
{
	const char *dir = arg;
	long long run;
	unsigned long long times, same;
	char text[128], order[16];

	if (kind != STREAM_REPLAYED || len >= sizeof(text))
		return 0;
	memcpy(text, data, len);
	text[len] = 0;
	if (sscanf(text, "%lld %llu %llu %15s", &run, &times, &same, order) == 4)
		record_replays(dir, run, times, same, order);
	return 0;
}

/* In the VM: say the result on the stream. */
static void stream_replays(int64_t run, uint64_t times, uint64_t same, const char *order)
{
	const char *port = getenv("CONCSCHED_STREAM");
	char text[128];
	int fd;

	if (!port || !*port || (fd = open(port, O_WRONLY | O_CLOEXEC)) < 0)
		return;
	snprintf(text, sizeof(text), "%lld %llu %llu %s", (long long)run, (unsigned long long)times,
		 (unsigned long long)same, order);
	stream_write(fd, STREAM_REPLAYED, text, strlen(text));
	close(fd);
}

/* The guest needs the campaign, the program, and the files its arguments
 * name (a target that forks and execs the program it is given). */
static int replay_in_vm(const struct replay_opts *ro, int argc, char **argv,
			const struct store_campaign *camp)
{
	char **args = NULL, **gargv = xcalloc((size_t)argc + 2, sizeof(*gargv));
	size_t nargs = 0, nc = 0, k;
	const char **carry;
	int i, n = 0, ret;

	if (json_parse_string_array(camp->args_json ? camp->args_json : "[]", &args, &nargs))
		nargs = 0;
	carry = xcalloc(nargs + 3, sizeof(*carry));
	carry[nc++] = ro->dir;
	carry[nc++] = camp->program;
	for (k = 0; k < nargs; k++) {
		struct stat sb;

		if (strchr(args[k], '/') && !stat(args[k], &sb) && S_ISREG(sb.st_mode))
			carry[nc++] = args[k];
	}
	gargv[n++] = "concsched";
	for (i = 0; i < argc; i++)
		if (strcmp(argv[i], "--vm"))
			gargv[n++] = argv[i];
	fprintf(stderr, "concsched: replaying in the sched_ext VM\n");
	ret = vm_campaign_run_records(gargv, ro->dir, NULL, carry, 0, 2, replayed_record,
				      (void *)ro->dir);
	for (k = 0; k < nargs; k++)
		free(args[k]);
	free(args);
	free(carry);
	free(gargv);
	return ret;
}

void replay_close(struct replayer *p)
{
	size_t i;

	run_session_close(&p->c.sess);
	access_campaign_end(&p->c);
	for (i = 0; i < p->nargs; i++)
		free(p->args[i]);
	free(p->args);
	free(p->o.argv);
	free(p->serial);
	declog_free(&p->dl);
	store_run_clear(&p->sr);
	store_campaign_free(&p->camp);
	store_close(p->st);
	memset(p, 0, sizeof(*p));
}

#define REPLAY_WATCHDOG_MS 5000

/* The ops the run was made by: a run of a wrapper that picks a
 * sub-strategy per run (the portfolio) names it in its configuration
 * ("arm_strategy", and "arm_access": whether it steered at accesses),
 * and replay re-makes it with that one's flags and replay mode; else the
 * campaign's strategy. */
static const struct strategy_ops *replayer_ops(struct replayer *p)
{
	const char *cfg = p->sr.strategy_config_json ? p->sr.strategy_config_json : "{}";
	char *arm = json_get_string(cfg, "arm_strategy");
	const struct strategy_ops *ops = strategy_lookup(arm ? arm : p->camp.strategy);
	bool access = true;

	if (!arm || !ops) {
		free(arm);
		return ops;
	}
	free(arm);
	p->arm_ops = *ops;
	if (!json_get_bool(cfg, "arm_access", &access) && !access) {
		p->arm_ops.flags &= ~(unsigned)(STRAT_F_ACCESS_POINTS | STRAT_F_ACCESS);
		p->arm_unprobed = true;
	}
	return &p->arm_ops;
}

int replay_open(struct replayer *p, const struct replay_opts *ro, bool writable)
{
	void *blob = NULL;
	size_t blob_len = 0, i;
	char *out = NULL, *err_text = NULL, q[PATH_MAX];
	double rt_s = 0;
	int64_t slice_us;
	int err;

	memset(p, 0, sizeof(*p));
	p->c.o = &p->o;
	p->dir = ro->dir;
	p->run = ro->run;
	if (store_open(ro->dir, !writable, &p->st))
		return -ENOENT;
	/* Points are named by the recording's site ids (the schedule's
	 * passes carry them): look them up in the campaign's store. */
	p->c.st = p->st;
	if (store_get_campaign(p->st, &p->camp) || store_load_run(p->st, ro->run, &p->sr)) {
		log_err("%s has no run %" PRId64 " (%s report %s lists its runs)", ro->dir, ro->run,
			self_command(false), shell_quote(ro->dir, q, sizeof(q)));
		return -ENOENT;
	}
	p->ops = replayer_ops(p);
	if (!p->ops) {
		log_err("campaign %s: unknown strategy %s", ro->dir, p->camp.strategy);
		return -EINVAL;
	}
	if (json_parse_string_array(p->camp.args_json ? p->camp.args_json : "[]", &p->args,
				    &p->nargs)) {
		log_err("campaign %s: unreadable program arguments", ro->dir);
		return -EBADMSG;
	}
	if (ro->vm)
		return 0;
	{
		struct run_steering st;
		char why[256];

		run_steering_read(p->sr.strategy_config_json, &st);
		if (!run_steering_kept(&st)) {
			run_steering_describe(&st, why, sizeof(why));
			log_warn("run %" PRId64
				 "'s steering was %s: its failure may not follow from "
				 "its schedule, and a replay may pass",
				 ro->run, why);
		}
	}
	err = store_load_run_blobs(p->st, ro->run, &blob, &blob_len, &out, &err_text);
	if (err || !blob || declog_decode(blob, blob_len, &p->dl)) {
		log_err("run %" PRId64 " of %s has no readable decision log", ro->run, ro->dir);
		err = -EBADMSG;
	}
	free(blob);
	free(out);
	free(err_text);
	if (err)
		return err;
	p->o.argv = xcalloc(p->nargs + 2, sizeof(*p->o.argv));
	p->o.argv[0] = p->camp.program;
	for (i = 0; i < p->nargs; i++)
		p->o.argv[i + 1] = p->args[i];
	p->o.argc = (int)p->nargs + 1;
	p->o.strategy = p->camp.strategy;
	p->serial = json_get_string(p->sr.strategy_config_json ? p->sr.strategy_config_json : "{}",
				    "serial");
	if (p->serial && serial_mode_parse(p->serial, &p->o.serial))
		p->o.serial = CS_SERIAL_OFF;
	/* The run's own timeout (adaptive in its campaign), else the
	 * campaign's --run-timeout (runs recorded before runs kept theirs). */
	p->o.run_timeout_s = RUN_DEFAULT_TIMEOUT;
	for (i = 0; i < 2; i++) {
		const char *cfg = i ? p->camp.config_json : p->sr.strategy_config_json;
		const char *at = cfg ? strstr(cfg, "\"run_timeout_s\":") : NULL;

		rt_s = at ? strtod(at + 16, NULL) : 0;
		if (rt_s > 0) {
			p->o.run_timeout_s = rt_s;
			break;
		}
	}
	if (ro->run_timeout_s > 0)
		p->o.run_timeout_s = ro->run_timeout_s;
	/* And its grace period (runs recorded before it was kept: the run
	 * timeout's): onerun_grace_s gives it back from the measure. */
	{
		const char *cfg = p->sr.strategy_config_json;
		const char *at = cfg ? strstr(cfg, "\"run_grace_s\":") : NULL;
		double g = at ? strtod(at + 14, NULL) : 0;

		if (g > 0)
			p->c.unsteered_s = g / RUN_GRACE_FACTOR;
	}
	/* A thread the scheduler lets go on its own (its park outlived the
	 * watchdog: the controller answered late, on a loaded machine or a
	 * descheduled TCG vCPU) breaks the recorded order: wait longer. */
	p->o.sched_watchdog_ms = REPLAY_WATCHDOG_MS;
	p->o.sched_rescue_ms = REPLAY_WATCHDOG_MS * 3 / 2; /* the kernel's timeout: 30 s */
	/* The campaign's time slices (--slice-us): a serial run's thread
	 * yields at its slice's end too (campaigns before slice_us was
	 * recorded ran on the default). */
	if (p->camp.config_json && !json_get_int(p->camp.config_json, "slice_us", &slice_us) &&
	    slice_us >= RUN_SLICE_MIN_US && slice_us <= RUN_SLICE_MAX_US)
		p->o.sched_slice_us = (unsigned)slice_us;
	/* The processes the run followed (campaigns before follow_forks
	 * existed followed none). */
	p->o.no_follow_forks =
		!p->camp.config_json || !strstr(p->camp.config_json, "\"follow_forks\":true");
	if (target_inspect(p->o.argv[0], &p->c.ti) || onerun_check_environment(&p->c) ||
	    sync_runtime_for_exec(&p->c.ti, &p->c.rt) ||
	    launcher_resolve_user(NULL, &p->c.uid, &p->c.gid, &p->c.drop))
		return -EINVAL;
	if (p->camp.binary_hash && strcmp(p->camp.binary_hash, p->c.ti.hash))
		log_warn("%s changed since the campaign ran (hash %s, was %s): the replay may "
			 "differ",
			 p->c.ti.path, p->c.ti.hash, p->camp.binary_hash);
	p->o.argv[0] = p->c.ti.path;
	/* The access sites the run probed (--access, map): none for a
	 * portfolio arm that probed no accesses (runs recorded before such a
	 * run's "sites" was empty name the campaign's shared sites). */
	if (!p->arm_unprobed && access_replay_setup(&p->c, p->sr.strategy_config_json))
		return -EINVAL;
	libbpf_set_print(NULL);
	return 0;
}

int replay_once(struct replayer *p, struct strategy *strat, struct oracle_verdict *v,
		struct declog *log, double *secs)
{
	struct oracle_input in = { 0 };
	struct onerun r = { 0 };
	char *ro_out, *ro_err;
	size_t ol, el;
	int err;

	p->graced = false;
	p->o.strat = strat;
	p->c.steer = strategy_has(strat, STRAT_F_STEERS);
	onerun_init(&r, &p->c, strat, p->dl.seed, p->c.steer);
	strategy_run_begin(strat, &r.sr);
	r.access_mask = access_replay_mask(&p->c);
	r.access_on = r.access_mask != NULL;
	declog_init(&r.log, p->dl.seed, p->dl.config_json);
	err = onerun_do(&r, p->c.uid, p->c.gid, p->c.drop);
	if (!err && r.watchdog_run)
		log_warn("the scheduler let %" PRIu64
			 " parked thread%s go on its own after %u ms (the "
			 "controller answered late: a loaded machine?): this replay may not have "
			 "followed the recorded order",
			 r.watchdog_run, r.watchdog_run == 1 ? "" : "s", REPLAY_WATCHDOG_MS);
	strategy_run_end(strat, &r.sr, &p->c.sc,
			 &(struct strat_outcome){ .ran = !err, .timed_out = r.timed_out });
	if (err) {
		onerun_cleanup(&r);
		return err;
	}
	ro_out = onerun_read_capture(r.out_fd, &ol);
	ro_err = onerun_read_capture(r.err_fd, &el);
	in.wait_status = r.l.status;
	in.timed_out = r.timed_out;
	in.out = ro_out;
	in.out_len = ol;
	in.err = ro_err;
	in.err_len = el;
	in.deadlock_report = r.has_deadlock ? r.deadlock : NULL;
	in.timeout_s = r.timeout_s;
	in.grace_s = r.graced ? r.grace_used_s : 0;
	in.found_s = r.dl_found_s;
	in.confirm_s = r.dl_confirm_s;
	oracle_classify(&in, v);
	p->graced = r.graced;
	if (secs)
		*secs = (r.t1 - r.t0) / 1e9;
	if (log) {
		*log = r.log;
		memset(&r.log, 0, sizeof(r.log));
	}
	free(ro_out);
	free(ro_err);
	onerun_cleanup(&r);
	return 0;
}

bool replay_reproduced(const struct replayer *p, const struct oracle_verdict *v)
{
	/* The recorded kind of failure, not just any (an exit 127 is no
	 * replay of an assertion). */
	return outcome_is_failure(v->outcome) && p->sr.outcome &&
	       !strcmp(oracle_outcome_name(v->outcome), p->sr.outcome);
}

void replay_order_log(const struct replayer *p, const struct declog_entry *v, size_t n,
		      bool decisions, struct declog *out)
{
	size_t i;

	declog_init(out, p->dl.seed, p->dl.config_json);
	for (i = 0; i < p->dl.nnames; i++)
		declog_name_thread(out, p->dl.names[i].id, p->dl.names[i].path);
	for (i = 0; decisions && i < p->dl.n; i++) {
		const struct declog_entry *e = &p->dl.entries[i];

		if (e->action != DECLOG_PASS)
			declog_add(out, e->thread, e->instance, e->event, e->action, e->arg);
	}
	for (i = 0; i < n; i++)
		declog_add(out, v[i].thread, v[i].instance, v[i].event, DECLOG_PASS, v[i].arg);
}

bool replay_again(bool failed, bool graced, unsigned *again)
{
	if (failed || !graced || *again >= REPLAY_GRACED_AGAIN)
		return false;
	(*again)++;
	return true;
}

bool replay_fails_every_time(struct replayer *p, enum cs_serial_mode serial, bool decisions,
			     const struct declog_entry *v, size_t n, unsigned times,
			     struct oracle_verdict *last)
{
	unsigned k, again = 0;
	struct declog log;
	struct strategy *s;
	bool all = true;

	replay_order_log(p, v, n, decisions, &log);
	s = strategy_replay_new(p->ops, serial, &log, false);
	for (k = 0; k < times && all && !onerun_stop;) {
		bool failed = !replay_once(p, s, last, NULL, NULL) && replay_reproduced(p, last);

		/* A replay that passed after its steering ended at the run
		 * timeout did not go through the order: it says nothing of
		 * it. Seen in the VM: a released thread waited for the end of
		 * the steering behind a thread spinning on sched_yield
		 * (docs/sched.md), and a campaign's check could reject an
		 * order that replays 12 of 12 so. Replayed again, at most
		 * REPLAY_GRACED_AGAIN times in all. */
		if (replay_again(failed, p->graced, &again)) {
			log_debug("replay %u of %u passed after its steering ended at the run "
				  "timeout: it did not go through the order; once more",
				  k + 1, times);
			continue;
		}
		all = failed;
		k++;
	}
	strategy_free(s);
	declog_free(&log);
	return all && !onerun_stop;
}

/*
 * A failing steered run, just stored, replayed as `concsched replay` will
 * (its recorded order, one thread at a time) before the campaign goes on:
 * a failure we report must replay. A thread let go from its point is
 * dated by when it ran again, and two threads let go at nearly the same
 * time (both running, on a CPU that stalls: a TCG vCPU the host
 * descheduled) may have made their next accesses in the other order; so a
 * schedule that does not fail again is tried with one pair of adjacent
 * steps of two threads swapped, from the last pair back (REPLAY_CHECK_SWAPS
 * pairs), and the first order that fails again every time becomes the
 * run's schedule. The replays table says how it went (report: "replayed
 * k/K"). A failure the same as one that replayed already (its kind and
 * sites) is not checked again. The scheduler of the campaign's session is unloaded for it (a
 * replay loads its own, one thread at a time); the next run loads it
 * again.
 */
#define REPLAY_CHECK_SWAPS 3

void replay_check_failure(struct campaign *c, int64_t run)
{
	struct replay_opts ro = { .dir = c->o->out, .run = run };
	unsigned times = c->o->replay_check;
	struct declog_entry *v = NULL, *w = NULL;
	struct oracle_verdict last = { 0 };
	size_t n = 0, i, tries = 0, swapped = 0;
	int64_t same = 0;
	struct strategy *s;
	struct replayer p;
	bool ok = false, enforced;

	if (!times || !c->steer || !c->o->out)
		return;
	if ((same = store_replayed_like(c->st, run))) {
		/* The same failure replayed already: one check per failure
		 * (a check costs two scheduler loads, seconds under TCG). */
		log_debug("run %" PRId64 ": the same failure as run %" PRId64
			  ", which replayed: not checked again",
			  run, same);
		return;
	}
	run_session_close(&c->sess);
	if (replay_open(&p, &ro, false))
		goto out;
	/* Only what replay re-makes: its recorded order, or its decisions. */
	s = strategy_replay_new(p.ops, p.o.serial, &p.dl, false);
	enforced = strategy_replay_enforced(s);
	strategy_free(s);
	if (!enforced && !declog_decisions(&p.dl))
		goto out;
	v = xcalloc(p.dl.n + 1, sizeof(*v));
	w = xcalloc(p.dl.n + 1, sizeof(*w));
	for (i = 0; i < p.dl.n; i++)
		if (p.dl.entries[i].action == DECLOG_PASS)
			v[n++] = p.dl.entries[i];
	ok = replay_fails_every_time(&p, p.o.serial, true, v, n, times, &last);
	for (i = n; !ok && enforced && tries < REPLAY_CHECK_SWAPS && !onerun_stop &&
		    (i = schedule_swap_before(v, n, i, w));) {
		tries++;
		if (replay_fails_every_time(&p, p.o.serial, true, w, n, times, &last)) {
			struct declog log;
			uint8_t *blob = NULL;
			size_t len = 0;

			replay_order_log(&p, w, n, true, &log);
			ok = true;
			swapped = i;
			if (declog_encode(&log, &blob, &len) ||
			    store_set_declog(c->st, run, blob, len))
				log_warn("run %" PRId64
					 ": cannot store its schedule with steps %zu "
					 "and %zu swapped: %s",
					 run, i, i + 1, store_errmsg(c->st));
			free(blob);
			declog_free(&log);
			break;
		}
	}
	if (onerun_stop)
		goto out;
	store_add_replay(c->st, run, times, ok ? times : 0, "recorded");
	if (ok && swapped)
		fprintf(stderr,
			"concsched: run %" PRId64 ": did not fail again in its recorded order, but "
			"does with steps %zu and %zu swapped (their threads ran at once): that "
			"order is its schedule now (%u of %u replays)\n",
			run, swapped, swapped + 1, times, times);
	else if (ok)
		fprintf(stderr, "concsched: run %" PRId64 ": replayed: %s again (%u of %u)\n", run,
			p.sr.outcome, times, times);
	else
		log_warn("run %" PRId64 " did not fail again when replayed %s%s (last replay: %s): "
			 "its failure depended on something concsched did not record (timing, or "
			 "state outside the program), and `replay` reproduces it only by chance",
			 run, enforced ? "in its recorded order" : "by its decisions",
			 tries ? ", nor with two adjacent steps swapped" : "", last.summary);
out:
	free(v);
	free(w);
	replay_close(&p);
}

int replay_run(const struct replay_opts *opts, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = onerun_on_signal };
	struct replay_opts ro = *opts;
	struct strategy *strat = NULL;
	struct replayer p;
	uint64_t k, failed = 0, same = 0;
	struct json j;
	int ret = EXIT_USAGE;

	if (replay_open(&p, &ro, false))
		goto out;
	if (ro.vm) {
		ret = replay_in_vm(&ro, argc, argv, &p.camp);
		goto out;
	}
	strat = strategy_replay_new(p.ops, p.o.serial, &p.dl, ro.decisions_only);
	/* Nothing to re-make (fpair's profiling run, -s none, a run whose
	 * strategy never decided): say so, not "did not replay" later. */
	if (!declog_decisions(&p.dl) && !ro.json)
		fprintf(stderr,
			"concsched: note: run %" PRId64 " has no scheduling decision to replay: "
			"its failure came from an interleaving concsched did not make, so a "
			"replay reproduces it only as often as the program fails by itself\n",
			ro.run);
	onerun_stop = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (ro.json) {
		json_init(&j, stdout, false);
		json_obj_begin(&j, NULL);
		json_kv_str(&j, "campaign", ro.dir);
		json_kv_int(&j, "run", ro.run);
		json_kv_str(&j, "recorded_outcome", p.sr.outcome);
		json_kv_str(&j, "order", strategy_replay_enforced(strat) ? "recorded" : "timing");
		json_kv_uint(&j, "decisions_recorded", declog_decisions(&p.dl));
		json_kv_dbl(&j, "run_timeout_s", p.o.run_timeout_s);
		json_kv_dbl(&j, "run_grace_s", onerun_grace_s(p.o.run_timeout_s, p.c.unsteered_s));
		json_arr_begin(&j, "replays");
	} else if (strategy_replay_enforced(strat)) {
		printf("replaying run %" PRId64 " in its recorded order (%zu points, one thread at "
		       "a time)\n",
		       ro.run, strategy_replay_enforced(strat));
	}
	for (k = 0; k < ro.times && !onerun_stop; k++) {
		struct oracle_verdict v;
		struct declog log = { 0 };
		double secs = 0;
		int err;

		err = replay_once(&p, strat, &v, &log, &secs);
		if (err == -EINTR)
			break; /* ^C: the replays done so far count */
		if (err)
			goto out_json;
		failed += outcome_is_failure(v.outcome);
		same += replay_reproduced(&p, &v);
		if (ro.json) {
			json_obj_begin(&j, NULL);
			json_kv_str(&j, "outcome", oracle_outcome_name(v.outcome));
			json_kv_str(&j, "summary", v.summary);
			json_kv_uint(&j, "decisions_applied", declog_decisions(&log));
			json_kv_dbl(&j, "duration_s", secs);
			json_obj_end(&j);
		} else {
			printf("replay %" PRIu64 "/%" PRIu64 ": %s: %s (%zu recorded decisions "
			       "applied)\n",
			       k + 1, ro.times, oracle_outcome_name(v.outcome), v.summary,
			       declog_decisions(&log));
			fflush(stdout);
		}
		declog_free(&log);
	}
	ret = failed ? 1 : onerun_stop ? 128 + onerun_stop : 0;
	if (getenv("CONCSCHED_STREAM"))
		stream_replays(ro.run, k, same,
			       strategy_replay_enforced(strat) ? "recorded" : "timing");
	else
		record_replays(ro.dir, ro.run, k, same,
			       strategy_replay_enforced(strat) ? "recorded" : "timing");
out_json:
	if (ro.json) {
		json_arr_end(&j);
		json_kv_uint(&j, "failed", failed);
		json_kv_uint(&j, "reproduced", same);
		json_kv_uint(&j, "replays", k);
		json_obj_end(&j);
		json_end(&j);
	} else if (ret != EXIT_USAGE) {
		printf("run %" PRId64 " (recorded: %s) failed again in %" PRIu64 " of %" PRIu64
		       " replays",
		       ro.run, p.sr.outcome, same, k);
		if (failed > same)
			printf("; %" PRIu64 " failed otherwise (see above)", failed - same);
		putchar('\n');
	}
out:
	strategy_free(strat);
	replay_close(&p);
	return ret;
}
