// SPDX-License-Identifier: MIT
/*
 * Minimizing a failing schedule (minimize.h). The schedule is the run's
 * pass order (DECLOG_PASS entries). A candidate undoes one preemption: the
 * thread switched away from runs on instead, its next steps moved up. A
 * candidate is kept when it fails with the recorded kind of failure in
 * every one of `times` replays in its order; the search starts again from
 * it, until no single preemption can be undone (a 1-minimal schedule, as
 * delta debugging over the switch points gives) or max_tries is spent.
 */
#include "replay/minimize.h"

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

#include "run/onerun.h"
#include "replay/replay.h"
#include "results/store.h"
#include "results/run_steering.h"
#include "run/vm_campaign.h"
#include "lib/json.h"
#include "lib/file.h"
#include "lib/log.h"
#include "lib/self.h"
#include "lib/shell.h"
#include "lib/tree.h"
#include "lib/xalloc.h"
#include "strategies/strategy_registry.h"
#include "strategies/strategy_replay.h"

size_t minimize_preemptions(const struct declog_entry *v, size_t n)
{
	size_t i, k, count = 0;

	for (i = 1; i < n; i++) {
		if (v[i].thread == v[i - 1].thread)
			continue;
		for (k = i + 1; k < n; k++)
			if (v[k].thread == v[i - 1].thread) {
				count++;
				break;
			}
	}
	return count;
}

bool minimize_unpreempt(const struct declog_entry *v, size_t n, size_t i, struct declog_entry *out)
{
	size_t j, end, o = 0, k;
	uint64_t x;

	if (i == 0 || i >= n || v[i].thread == v[i - 1].thread)
		return false;
	x = v[i - 1].thread;
	for (j = i + 1; j < n && v[j].thread != x; j++)
		;
	if (j == n)
		return false;
	for (end = j; end < n && v[end].thread == x; end++)
		;
	/* v[0..i) + v[j..end) + v[i..j) + v[end..n) */
	for (k = 0; k < i; k++)
		out[o++] = v[k];
	for (k = j; k < end; k++)
		out[o++] = v[k];
	for (k = i; k < j; k++)
		out[o++] = v[k];
	for (k = end; k < n; k++)
		out[o++] = v[k];
	return true;
}

/* What minimize found: stored as a new run, or emitted from the VM. */
struct min_result {
	int64_t from_run;
	size_t before, after, tries;
	char outcome[32], summary[320], detail[2048];
	uint64_t seed;
	char *config_json;
	uint8_t *blob;
	size_t blob_len;
};

/* The run's config with serial off (its order is in the log now) and where
 * it came from. */
static char *minimized_config(const char *cfg, int64_t from)
{
	const char *ser = cfg ? strstr(cfg, "\"serial\":\"") : NULL;
	char *out, *tail;

	if (!cfg || cfg[0] != '{')
		return xasprintf("{\"serial\":\"off\",\"minimized_from\":%" PRId64 "}", from);
	if (ser) {
		const char *end = strchr(ser + 10, '"');

		out = xasprintf("%.*s\"serial\":\"off\"%s", (int)(ser - cfg), cfg,
				end ? end + 1 : "}");
	} else {
		out = xstrdup(cfg);
	}
	/* The recording's "steering" is not the minimized schedule's. */
	out = run_steering_strip(out);
	tail = strrchr(out, '}');
	if (tail) {
		char *res;

		*tail = 0;
		res = xasprintf("%s%s\"minimized_from\":%" PRId64 "}", out,
				strlen(out) > 1 ? "," : "", from);
		free(out);
		out = res;
	}
	return out;
}

static int store_result(struct store *st, const struct min_result *m, int64_t *idx)
{
	struct store_run_info ri = { .seed = m->seed, .strategy_config_json = m->config_json };
	struct store_run_result res = { .outcome = m->outcome,
					.summary = m->summary,
					.declog = m->blob,
					.declog_len = m->blob_len };
	int err = store_begin_run(st, &ri, idx);

	if (err)
		return err;
	if (store_record_failure(st, m->outcome, m->summary, m->detail, NULL, 0) < 0) {
		store_abort_run(st);
		return -EIO;
	}
	return store_end_run(st, &res);
}

static int write_file(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), err;

	if (fd < 0)
		return -errno;
	err = file_write_all(fd, p, n);
	if (close(fd) && !err)
		err = -errno;
	return err;
}

static int emit_result(const char *dir, const struct min_result *m)
{
	struct json_mem jm;
	char *path, *text;
	int err = tree_mkdir_p(dir, 0755);

	if (err)
		return err;
	json_mem_open(&jm);
	json_obj_begin(&jm.j, NULL);
	json_kv_int(&jm.j, "from_run", m->from_run);
	json_kv_uint(&jm.j, "before", m->before);
	json_kv_uint(&jm.j, "after", m->after);
	json_kv_uint(&jm.j, "tries", m->tries);
	json_kv_str(&jm.j, "outcome", m->outcome);
	json_kv_str(&jm.j, "summary", m->summary);
	json_kv_str(&jm.j, "detail", m->detail);
	json_kv_uint(&jm.j, "seed", m->seed);
	json_kv_str(&jm.j, "config", m->config_json);
	json_obj_end(&jm.j);
	text = json_mem_close(&jm);
	path = xasprintf("%s/result.json", dir);
	err = write_file(path, text, strlen(text));
	free(path);
	free(text);
	path = xasprintf("%s/declog.bin", dir);
	if (!err)
		err = write_file(path, m->blob, m->blob_len);
	free(path);
	return err;
}

static int load_result(const char *dir, struct min_result *m)
{
	char *path = xasprintf("%s/result.json", dir), *text = file_read(path, NULL), *s;
	int64_t v;
	int err = text ? 0 : -ENOENT;

	free(path);
	if (err)
		return err;
	memset(m, 0, sizeof(*m));
	if (json_get_int(text, "from_run", &m->from_run))
		err = -EBADMSG;
	if (!json_get_int(text, "before", &v))
		m->before = (size_t)v;
	if (!json_get_int(text, "after", &v))
		m->after = (size_t)v;
	if (!json_get_int(text, "tries", &v))
		m->tries = (size_t)v;
	if (!json_get_int(text, "seed", &v))
		m->seed = (uint64_t)v;
#define GET_STR(field, key)                                                                        \
	do {                                                                                       \
		s = json_get_string(text, key);                                                    \
		snprintf(m->field, sizeof(m->field), "%s", s ? s : "");                            \
		free(s);                                                                           \
	} while (0)
	GET_STR(outcome, "outcome");
	GET_STR(summary, "summary");
	GET_STR(detail, "detail");
#undef GET_STR
	m->config_json = json_get_string(text, "config");
	free(text);
	path = xasprintf("%s/declog.bin", dir);
	m->blob = (uint8_t *)file_read(path, &m->blob_len);
	free(path);
	if (!m->blob || !m->config_json || !m->outcome[0])
		err = -EBADMSG;
	return err;
}

static void report_result(const struct minimize_opts *mo, const struct min_result *m, int64_t idx)
{
	char q[PATH_MAX];

	shell_quote(mo->dir, q, sizeof(q));
	if (m->after == m->before) {
		printf("run %" PRId64 ": %zu preemptions, none can be undone and still fail "
		       "(%zu candidates tried); stored as run %" PRId64 "\n",
		       m->from_run, m->before, m->tries, idx);
	} else {
		printf("run %" PRId64
		       ": %zu preemptions -> %zu (%zu candidates tried); the minimal "
		       "schedule is run %" PRId64 "\n",
		       m->from_run, m->before, m->after, m->tries, idx);
	}
	printf("  see it:    %s report %s --schedule %" PRId64 "\n", self_command(false), q, idx);
	printf("  replay it: %s replay %s --run %" PRId64 "%s\n", self_command(true), q, idx,
	       mo->vm ? " --vm" : "");
}

static int minimize_in_vm(const struct minimize_opts *mo, struct replayer *p, int argc, char **argv)
{
	char *tmp = xasprintf("%s/concsched-min.%d.XXXXXX",
			      getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			      (int)getpid()),
	     *host_out = NULL;
	char **gargv = xcalloc((size_t)argc + 4, sizeof(*gargv));
	const char **carry = xcalloc(p->nargs + 3, sizeof(*carry));
	struct min_result m = { 0 };
	size_t nc = 0, k;
	int64_t idx = 0;
	int i, n = 0, ret = EXIT_USAGE;

	if (!mkdtemp(tmp)) {
		log_err("cannot create a scratch directory %s: %s", tmp, strerror(errno));
		goto out;
	}
	host_out = xasprintf("%s/min", tmp);
	carry[nc++] = mo->dir;
	carry[nc++] = p->camp.program;
	for (k = 0; k < p->nargs; k++) {
		struct stat sb;

		if (strchr(p->args[k], '/') && !stat(p->args[k], &sb) && S_ISREG(sb.st_mode))
			carry[nc++] = p->args[k];
	}
	gargv[n++] = "concsched";
	for (i = 0; i < argc; i++)
		if (strcmp(argv[i], "--vm"))
			gargv[n++] = argv[i];
	gargv[n++] = "--emit";
	gargv[n++] = "/out/min";
	fprintf(stderr, "concsched: minimizing in the sched_ext VM\n");
	ret = vm_campaign_run(gargv, host_out, "min", carry, 0, 2);
	if (ret)
		goto out;
	if (load_result(host_out, &m)) {
		log_err("the VM's minimize left no readable result");
		ret = EXIT_USAGE;
		goto out;
	}
	if (store_result(p->st, &m, &idx)) {
		log_err("cannot store the minimal schedule in %s: %s", mo->dir,
			store_errmsg(p->st));
		ret = EXIT_USAGE;
		goto out;
	}
	report_result(mo, &m, idx);
out:
	if (host_out)
		tree_remove(tmp);
	free(m.config_json);
	free(m.blob);
	free(host_out);
	free(tmp);
	free(gargv);
	free(carry);
	return ret;
}

int minimize_run(const struct minimize_opts *mo, int argc, char **argv)
{
	struct replay_opts ro = {
		.dir = mo->dir, .run = mo->run, .run_timeout_s = mo->run_timeout_s, .vm = mo->vm
	};
	struct sigaction sa = { .sa_handler = onerun_on_signal };
	struct declog_entry *cur = NULL, *cand = NULL;
	struct oracle_verdict v = { 0 }, best = { 0 };
	struct min_result m = { 0 };
	struct declog out_log;
	struct replayer p;
	size_t n = 0, i, pre;
	int64_t idx = 0;
	int ret = EXIT_USAGE;
	bool again;

	if (replay_open(&p, &ro, !mo->emit))
		goto out;
	if (!p.sr.outcome || !strcmp(p.sr.outcome, "pass")) {
		log_err("run %" PRId64 " of %s passed: only a failing run has a schedule to "
			"minimize",
			mo->run, mo->dir);
		goto out;
	}
	if (mo->vm) {
		ret = minimize_in_vm(mo, &p, argc, argv);
		goto out;
	}
	cur = xcalloc(p.dl.n + 1, sizeof(*cur));
	cand = xcalloc(p.dl.n + 1, sizeof(*cand));
	for (i = 0; i < p.dl.n; i++)
		if (p.dl.entries[i].action == DECLOG_PASS)
			cur[n++] = p.dl.entries[i];
	if (!n) {
		log_err("run %" PRId64 " of %s has no recorded schedule (not steered, or recorded "
			"before schedules were)",
			mo->run, mo->dir);
		goto out;
	}
	onerun_stop = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	m.from_run = mo->run;
	m.before = minimize_preemptions(cur, n);
	fprintf(stderr, "concsched: run %" PRId64 ": %zu points, %zu preemptions\n", mo->run, n,
		m.before);
	if (!replay_fails_every_time(&p, CS_SERIAL_OFF, false, cur, n, mo->times, &best)) {
		log_err("run %" PRId64 " does not fail as recorded (%s) in every one of %u replays "
			"in its recorded order (last: %s): nothing to minimize",
			mo->run, p.sr.outcome, mo->times, oracle_outcome_name(best.outcome));
		goto out;
	}
	do {
		again = false;
		pre = minimize_preemptions(cur, n);
		for (i = 1; i < n && pre && m.tries < mo->max_tries && !onerun_stop; i++) {
			if (!minimize_unpreempt(cur, n, i, cand) ||
			    minimize_preemptions(cand, n) >= pre)
				continue;
			m.tries++;
			if (replay_fails_every_time(&p, CS_SERIAL_OFF, false, cand, n, mo->times,
						    &v)) {
				memcpy(cur, cand, n * sizeof(*cur));
				best = v;
				fprintf(stderr,
					"concsched: %zu preemptions still fail (%zu tried)\n",
					minimize_preemptions(cur, n), m.tries);
				again = true;
				break;
			}
		}
	} while (again);
	if (onerun_stop) {
		fprintf(stderr, "concsched: interrupted; nothing stored\n");
		ret = 128 + onerun_stop;
		goto out;
	}
	m.after = minimize_preemptions(cur, n);
	snprintf(m.outcome, sizeof(m.outcome), "%s", oracle_outcome_name(best.outcome));
	snprintf(m.summary, sizeof(m.summary), "%s", best.summary);
	snprintf(m.detail, sizeof(m.detail), "%s", best.detail);
	m.seed = p.dl.seed;
	m.config_json = minimized_config(p.sr.strategy_config_json, mo->run);
	replay_order_log(&p, cur, n, false, &out_log);
	if (declog_encode(&out_log, &m.blob, &m.blob_len)) {
		declog_free(&out_log);
		goto out;
	}
	declog_free(&out_log);
	if (mo->emit) {
		if (emit_result(mo->emit, &m)) {
			log_err("cannot write %s", mo->emit);
			goto out;
		}
		ret = 0;
		goto out;
	}
	if (store_result(p.st, &m, &idx)) {
		log_err("cannot store the minimal schedule in %s: %s", mo->dir, store_errmsg(p.st));
		goto out;
	}
	report_result(mo, &m, idx);
	ret = 0;
out:
	free(cur);
	free(cand);
	free(m.config_json);
	free(m.blob);
	replay_close(&p);
	return ret;
}
