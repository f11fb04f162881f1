// SPDX-License-Identifier: MIT
/*
 * concsched estimate: the SP requirements seed 000 would steer towards,
 * from observed runs (no scheduler): strategies/tsa_model.h.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "campaign/campaign.h"
#include "run/onerun.h"
#include "cli/commands.h"
#include "coverage/syncov.h"
#include "kernel/launcher.h"
#include "kernel/symbolize.h"
#include "kernel/target.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/self.h"
#include "lib/xalloc.h"
#include "strategies/tsa_model.h"

/* ---- concsched estimate ---------------------------------------------------------------------- */

struct site_table {
	char **keys;
	size_t n;
};

static int64_t table_site_of(void *ctx, const char *key)
{
	struct site_table *t = ctx;
	size_t i;

	if (!strchr(key, '+'))
		return 0;
	for (i = 0; i < t->n; i++)
		if (!strcmp(t->keys[i], key))
			return (int64_t)i + 1;
	t->keys = xrealloc(t->keys, (t->n + 1) * sizeof(*t->keys));
	t->keys[t->n++] = xstrdup(key);
	return (int64_t)t->n;
}

static void estimate_usage(FILE *f)
{
	fprintf(f, "Usage: concsched estimate [OPTIONS] -- PROG [ARGS...]\n\n"
		   "Run PROG under the synchronization probes (no scheduling: any kernel with\n"
		   "uprobes) and estimate its synchronization-pair (SP) requirements as seed 000\n"
		   "does: from the thread model of the observed run(s), every pair of lock sites\n"
		   "<p, q> that AC1 (same thread, q right after p) or AC2-AC4 (different threads,\n"
		   "not protected by a common lock, not ordered by thread creation) allows.\n"
		   "This is what `run --strategy tsa` steers towards.\n\n"
		   "Options:\n"
		   "      --estimate-runs K  observed runs whose estimates are united (default 1)\n"
		   "      --run-timeout SEC  per-run timeout (default 30)\n"
		   "      --json             machine-readable output\n"
		   "  -h, --help             this text\n\n"
		   "Examples:\n"
		   "  sudo concsched estimate -- ./mytest\n"
		   "  sudo concsched estimate --estimate-runs 5 --json -- ./mytest 4\n\n"
		   "Exit status: 0, or 2 on a usage or environment error.\n");
}

static void describe(const char *key, char *buf, size_t len)
{
	struct sym_site ss;

	syncov_site_describe(key, &ss, buf, len);
}

int cmd_estimate(int argc, char **argv)
{
	enum { O_EST = 256, O_JSON, O_TIMEOUT };
	static const struct option opts[] = {
		{ "estimate-runs", required_argument, NULL, O_EST },
		{ "json", no_argument, NULL, O_JSON },
		{ "run-timeout", required_argument, NULL, O_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct run_opts o = { .strategy = "none", .run_timeout_s = 30, .estimate_runs = 1 };
	struct campaign c = { .o = &o };
	struct tsa_estimate_stats st = { 0 };
	struct site_table tab = { 0 };
	struct tsa_pairset est;
	char a[1024], b[1024];
	bool json = false;
	uint32_t x, y;
	unsigned flags;
	size_t pos = 0, i;
	uint64_t v;
	int ch, err = 0, ret = EXIT_USAGE;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (ch) {
		case O_EST:
			if (parse_u64(optarg, &v) || !v || v > 1000) {
				log_err("--estimate-runs %s: 1-1000", optarg);
				return EXIT_USAGE;
			}
			o.estimate_runs = (unsigned)v;
			break;
		case O_JSON:
			json = true;
			break;
		case O_TIMEOUT:
			if (parse_double(optarg, &o.run_timeout_s) || o.run_timeout_s <= 0) {
				log_err("--run-timeout %s: not a positive number of seconds",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			estimate_usage(stdout);
			return 0;
		default:
			fprintf(stderr, "(see concsched estimate --help)\n");
			return EXIT_USAGE;
		}
	}
	o.argv = argv + optind;
	o.argc = argc - optind;
	if (!o.argc) {
		log_err("estimate: no program given (concsched estimate -- PROG ARGS)");
		return EXIT_USAGE;
	}
	if (geteuid() != 0) {
		log_err("estimate needs root to load BPF probes (try: %s estimate ...)",
			self_command(true));
		return EXIT_USAGE;
	}
	if (target_inspect(o.argv[0], &c.ti) || sync_runtime_for_exec(&c.ti, &c.rt) ||
	    launcher_resolve_user(NULL, &c.uid, &c.gid, &c.drop))
		return EXIT_USAGE;
	o.argv[0] = c.ti.path;
	libbpf_set_print(NULL);
	tsa_pairset_init(&est);
	for (i = 0; i < o.estimate_runs && !err; i++) {
		struct onerun r;

		err = campaign_observe_once(&c, &r);
		if (!err)
			err = tsa_model_estimate(&r.tm, &r.res, table_site_of, &tab, &est, &st);
		onerun_cleanup(&r);
	}
	st.requirements = est.count;
	if (err) {
		log_err("estimate: the observed run failed: %s", strerror(-err));
		goto out;
	}
	if (json) {
		struct json j;

		json_init(&j, stdout, true);
		json_obj_begin(&j, NULL);
		json_kv_str(&j, "schema", "concsched.estimate/1");
		json_kv_str(&j, "program", c.ti.path);
		json_kv_uint(&j, "runs", o.estimate_runs);
		json_obj_begin(&j, "stats");
		json_kv_uint(&j, "lock_actions", st.lock_actions);
		json_kv_uint(&j, "candidates", st.candidates);
		json_kv_uint(&j, "accepted_ac1", st.accepted_ac1);
		json_kv_uint(&j, "rejected_ac2", st.rejected_ac2);
		json_kv_uint(&j, "rejected_ac3", st.rejected_ac3);
		json_kv_uint(&j, "rejected_ac4", st.rejected_ac4);
		json_kv_uint(&j, "requirements", st.requirements);
		json_obj_end(&j);
		json_arr_begin(&j, "requirements");
		while (tsa_pairset_next(&est, &pos, &x, &y, &flags)) {
			describe(tab.keys[x - 1], a, sizeof(a));
			describe(tab.keys[y - 1], b, sizeof(b));
			json_obj_begin(&j, NULL);
			json_kv_str(&j, "first", tab.keys[x - 1]);
			json_kv_str(&j, "first_text", a);
			json_kv_str(&j, "second", tab.keys[y - 1]);
			json_kv_str(&j, "second_text", b);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_obj_end(&j);
		json_end(&j);
	} else {
		printf("%s: %" PRIu64 " SP requirements from %u observed run%s\n", c.ti.path,
		       st.requirements, o.estimate_runs, o.estimate_runs == 1 ? "" : "s");
		printf("  %" PRIu64 " lock actions, %" PRIu64 " candidate pairs; AC1 kept %" PRIu64
		       "; rejected by AC2 %" PRIu64 ", AC3 %" PRIu64 ", AC4 %" PRIu64 "\n",
		       st.lock_actions, st.candidates, st.accepted_ac1, st.rejected_ac2,
		       st.rejected_ac3, st.rejected_ac4);
		while (tsa_pairset_next(&est, &pos, &x, &y, &flags)) {
			describe(tab.keys[x - 1], a, sizeof(a));
			describe(tab.keys[y - 1], b, sizeof(b));
			printf("  %s -> %s\n", a, b);
		}
	}
	ret = 0;
out:
	run_session_close(&c.sess);
	tsa_pairset_free(&est);
	for (i = 0; i < tab.n; i++)
		free(tab.keys[i]);
	free(tab.keys);
	return ret;
}
