// SPDX-License-Identifier: MIT
/*
 * concsched replay: re-execute a recorded run with its seed, strategy
 * configuration and decision log, the way the recorded strategy's ops say
 * (strategies/replay.h); the campaign is not modified.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <bpf/libbpf.h>

#include "campaign/access.h"
#include "campaign/onerun.h"
#include "campaign/oracle.h"
#include "campaign/replay.h"
#include "campaign/store.h"
#include "campaign/vm_campaign.h"
#include "kernel/launcher.h"
#include "kernel/target.h"
#include "lib/declog.h"
#include "lib/json.h"
#include "lib/util.h"
#include "strategies/registry.h"
#include "strategies/replay.h"
#include "strategies/serial.h"

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
	ret = run_in_vm(gargv, ro->dir, NULL, carry, 0, 2);
	for (k = 0; k < nargs; k++)
		free(args[k]);
	free(args);
	free(carry);
	free(gargv);
	return ret;
}

int replay_run(const struct replay_opts *opts, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = run_on_signal };
	struct replay_opts ro = *opts;
	const struct strategy_ops *ops;
	struct strategy *strat = NULL;
	struct store_campaign camp = { 0 };
	struct store_run sr = { 0 };
	struct store *st = NULL;
	struct run_opts o = { 0 };
	struct campaign c = { .o = &o };
	struct declog dl = { 0 };
	void *blob = NULL;
	size_t blob_len = 0, nargs = 0, i;
	char **args = NULL, *out = NULL, *err_text = NULL, *serial = NULL;
	uint64_t k, failed = 0, same = 0;
	double rt_s = 0;
	struct json j;
	int err, ret = EXIT_USAGE;

	if (store_open(ro.dir, true, &st))
		return EXIT_USAGE;
	if (store_get_campaign(st, &camp) || store_load_run(st, ro.run, &sr)) {
		char q[PATH_MAX];

		cs_err("%s has no run %" PRId64 " (%s report %s lists its runs)", ro.dir, ro.run,
		       cs_self_command(false), cs_shell_quote(ro.dir, q, sizeof(q)));
		goto out;
	}
	if (ro.vm) {
		ret = replay_in_vm(&ro, argc, argv, &camp);
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
	ops = strategy_lookup(camp.strategy);
	if (!ops) {
		cs_err("campaign %s: unknown strategy %s", ro.dir, camp.strategy);
		goto out;
	}
	serial =
		json_get_string(sr.strategy_config_json ? sr.strategy_config_json : "{}", "serial");
	if (serial && serial_mode_parse(serial, &o.serial))
		o.serial = CS_SERIAL_OFF;
	strat = strategy_replay_new(ops, o.serial, &dl, ro.decisions_only);
	o.strat = strat;
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
	/* The processes the run followed (campaigns before follow_forks
	 * existed followed none). */
	o.no_follow_forks = !camp.config_json || !strstr(camp.config_json, "\"follow_forks\":true");
	c.steer = strategy_has(strat, STRAT_F_STEERS);
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
		json_kv_str(&j, "order", strategy_replay_enforced(strat) ? "recorded" : "timing");
		json_arr_begin(&j, "replays");
	} else if (strategy_replay_enforced(strat)) {
		printf("replaying run %" PRId64 " in its recorded order (%zu points, one thread at "
		       "a time)\n",
		       ro.run, strategy_replay_enforced(strat));
	}
	for (k = 0; k < ro.times && !run_stop; k++) {
		struct onerun r = { 0 };
		struct oracle_input in = { 0 };
		struct oracle_verdict v;
		char *ro_out, *ro_err;
		size_t ol, el;

		onerun_init(&r, &c, strat, dl.seed, c.steer);
		if (strat->ops->run_begin)
			strat->ops->run_begin(strat, &r.sr);
		if (c.acc) {
			r.access_on = true;
			r.access_mask = access_replay_mask(&c);
		}
		declog_init(&r.log, dl.seed, dl.config_json);
		err = onerun_do(&r, c.uid, c.gid, c.drop);
		if (strat->ops->run_end) {
			struct strat_outcome so = { .ran = !err, .timed_out = r.timed_out };

			strat->ops->run_end(strat, &r.sr, &c.sc, &so);
		}
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
		in.timeout_s = r.timeout_s;
		in.grace_s = r.graced ? r.grace_used_s : 0;
		oracle_classify(&in, &v);
		/* Reproduced: the recorded kind of failure, not just any (an
		 * exit 127 is no replay of an assertion). */
		if (outcome_is_failure(v.outcome))
			failed++;
		if (outcome_is_failure(v.outcome) && sr.outcome &&
		    !strcmp(outcome_name(v.outcome), sr.outcome))
			same++;
		if (ro.json) {
			json_obj_begin(&j, NULL);
			json_kv_str(&j, "outcome", outcome_name(v.outcome));
			json_kv_str(&j, "summary", v.summary);
			json_kv_uint(&j, "decisions_applied", declog_decisions(&r.log));
			json_kv_dbl(&j, "duration_s", (r.t1 - r.t0) / 1e9);
			json_obj_end(&j);
		} else {
			printf("replay %" PRIu64 "/%" PRIu64 ": %s: %s (%zu recorded decisions "
			       "applied)\n",
			       k + 1, ro.times, outcome_name(v.outcome), v.summary,
			       declog_decisions(&r.log));
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
		json_kv_uint(&j, "reproduced", same);
		json_kv_uint(&j, "replays", k);
		json_obj_end(&j);
		json_end(&j);
	} else if (ret != EXIT_USAGE) {
		printf("run %" PRId64 " (recorded: %s) failed again in %" PRIu64 " of %" PRIu64
		       " replays",
		       ro.run, sr.outcome, same, k);
		if (failed > same)
			printf("; %" PRIu64 " failed otherwise (see above)", failed - same);
		putchar('\n');
	}
out:
	run_session_close(&c.sess);
	strategy_free(strat);
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
