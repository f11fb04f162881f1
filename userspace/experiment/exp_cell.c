// SPDX-License-Identifier: MIT
/* Running an experiment's cells (exp_cell.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "results/saturation.h"
#include "results/store.h"
#include "experiment/exp_cell.h"
#include "lib/log.h"
#include "lib/tree.h"
#include "lib/xalloc.h"

static volatile sig_atomic_t exp_stop;

static void on_stop(int sig)
{
	exp_stop = sig;
}

struct argv_buf {
	char **v;
	size_t n, cap;
};

static void push(struct argv_buf *a, char *s)
{
	if (a->n + 2 > a->cap)
		a->v = xrealloc(a->v, (a->cap = a->cap ? 2 * a->cap : 32) * sizeof(char *));
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

char **exp_cell_argv(const struct exp_spec *s, const struct exp_cell *c, const char *exe,
		     const char *out)
{
	const struct exp_program *p = &s->programs[c->program];
	const struct exp_strategy *st = &s->strategies[c->strategy];
	struct argv_buf a = { 0 };
	size_t i;

	push(&a, xstrdup(exe));
	push(&a, xstrdup("run"));
	push(&a, xasprintf("--strategy=%s", st->spec));
	for (i = 0; i < st->noptions; i++)
		push(&a, xstrdup(st->options[i]));
	if (s->budget_runs)
		push(&a, xasprintf("--runs=%llu", (unsigned long long)s->budget_runs));
	if (s->budget_s > 0)
		push(&a, xasprintf("--time=%g", s->budget_s));
	push(&a, xasprintf("--seed=%llu", (unsigned long long)s->seeds[c->seed]));
	push(&a, xasprintf("--expect-exit=%d", p->expect_exit));
	if (p->run_timeout > 0)
		push(&a, xasprintf("--run-timeout=%g", p->run_timeout));
	if (p->access)
		push(&a, xstrdup("--access"));
	for (i = 0; i < p->nsites_include; i++)
		push(&a, xasprintf("--sites-include=%s", p->sites_include[i]));
	if (s->vm)
		push(&a, xstrdup("--vm"));
	if (s->vm && s->vm_cpus > 0)
		push(&a, xasprintf("--vm-cpus=%d", s->vm_cpus));
	push(&a, xasprintf("--out=%s", out));
	push(&a, xstrdup("--"));
	push(&a, xstrdup(p->path));
	for (i = 0; i < p->nargs; i++)
		push(&a, xstrdup(p->args[i]));
	return a.v;
}

void exp_cell_argv_free(char **argv)
{
	char **p;

	for (p = argv; p && *p; p++)
		free(*p);
	free(argv);
}

/* Saturation run of the campaign's stopping metric, as `report` finds it. */
static int64_t saturated_at(struct store *st, const struct store_campaign *c)
{
	struct store_series_point *pts = NULL;
	struct sat_config cfg;
	size_t n = 0, i;
	double *x, *y;
	long at;

	if (!c->saturation || saturation_parse(c->saturation, &cfg))
		saturation_config_default(&cfg);
	if (!c->metric || store_coverage_series(st, c->metric, &pts, &n) || !n) {
		free(pts);
		return -1;
	}
	x = xcalloc(n, sizeof(*x));
	y = xcalloc(n, sizeof(*y));
	for (i = 0; i < n; i++) {
		x[i] = cfg.by_time ? pts[i].t_s : (double)(i + 1);
		y[i] = pts[i].covered;
	}
	at = saturation_first_saturated(x, y, n, &cfg);
	at = at >= 0 ? (long)pts[at].run : -1;
	free(x);
	free(y);
	free(pts);
	return at;
}

static char *coverage_json(struct store *st)
{
	char **names = NULL, *out, *tmp;
	size_t n = 0, i;

	if (store_metrics(st, &names, &n))
		return xstrdup("{}");
	out = xstrdup("{");
	for (i = 0; i < n; i++) {
		tmp = xasprintf("%s%s\"%s\":%lld", out, i ? "," : "", names[i],
				(long long)store_count_tasks(st, names[i]));
		free(out);
		out = tmp;
	}
	tmp = xasprintf("%s}", out);
	free(out);
	store_strings_free(names, n);
	return tmp;
}

int exp_cell_read_campaign(const char *dir, struct exp_cell_row *r)
{
	struct store_campaign c = { 0 };
	struct store_run *runs = NULL;
	struct store *st;
	size_t n = 0, i;
	int64_t t0;
	int err;

	if ((err = store_open(dir, true, &st)))
		return err;
	if ((err = store_get_campaign(st, &c)) || (err = store_load_runs(st, &runs, &n)))
		goto out;
	r->runs = n;
	r->first_failure_run = -1;
	r->first_failure_s = -1;
	r->seconds = 0;
	t0 = n ? runs[0].started_ns : 0;
	for (i = 0; i < n; i++) {
		double end_s = (double)(runs[i].started_ns + runs[i].duration_ns - t0) / 1e9;

		r->seconds = end_s;
		if (r->first_failure_run < 0 && strcmp(runs[i].outcome, "pass")) {
			r->first_failure_run = runs[i].index;
			r->first_failure_s = end_s;
		}
	}
	r->saturated_at_run = saturated_at(st, &c);
	r->coverage = coverage_json(st);
out:
	store_runs_free(runs, n);
	store_campaign_free(&c);
	store_close(st);
	return err;
}

/* Run argv with stdout and stderr to log; returns its wait status or -errno. */
static int spawn_logged(char **argv, const char *log)
{
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), status;
	pid_t pid;

	if (fd < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(fd);
		return -errno;
	}
	if (!pid) {
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return status;
}

static int run_one(const struct exp_spec *s, struct exp_index *x, const struct exp_run_options *o,
		   const struct exp_cell *c, const char *exe)
{
	char *name = exp_spec_cell_name(s, c), *rel = xasprintf("cells/%s", name);
	char *out = xasprintf("%s/%s", o->dir, rel),
	     *log = xasprintf("%s/logs/%s.log", o->dir, name);
	char *shard = xasprintf("%u/%u", o->shard_i, o->shard_n), **argv = NULL;
	struct exp_cell_row r = {
		.idx = (int64_t)c->index,
		.program = s->programs[c->program].name,
		.strategy = s->strategies[c->strategy].name,
		.seed = s->seeds[c->seed],
		.shard = shard,
		.status = "running",
		.first_failure_run = -1,
		.first_failure_s = -1,
		.saturated_at_run = -1,
		.dir = rel,
	};
	int status, err;

	/* A cell interrupted midway left a partial campaign: start it afresh. */
	tree_remove(out);
	if ((err = exp_index_put(x, &r)))
		goto out;
	argv = exp_cell_argv(s, c, exe, out);
	status = spawn_logged(argv, log);
	if (exp_stop || (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 130)) {
		err = 130;
		goto out;
	}
	if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) > 1) {
		log_err("cell %s: concsched run failed (%s; see %s)", name,
			status < 0 ? strerror(-status) : "exit status", log);
		r.status = "error";
		exp_index_put(x, &r);
		err = -EIO;
		goto out;
	}
	if ((err = exp_cell_read_campaign(out, &r))) {
		log_err("cell %s: cannot read its campaign %s", name, out);
		goto out;
	}
	r.status = "done";
	err = exp_index_put(x, &r);
	if (!err && !o->quiet)
		printf("cell %zu %s: %lld runs, %s\n", c->index, name, (long long)r.runs,
		       r.first_failure_run > 0 ? "failure found" : "no failure");
	free(r.coverage);
out:
	exp_cell_argv_free(argv);
	free(name);
	free(rel);
	free(out);
	free(log);
	free(shard);
	return err;
}

int exp_cell_run(const struct exp_spec *s, struct exp_index *x, const struct exp_run_options *o)
{
	struct sigaction sa = { .sa_handler = on_stop }, old_int, old_term;
	char *exe = realpath("/proc/self/exe", NULL), *logs = xasprintf("%s/logs", o->dir);
	struct exp_cell c;
	size_t i, n = exp_spec_ncells(s);
	int err = 0;

	tree_mkdir_p(logs, 0755);
	free(logs);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	for (i = 0; i < n && !err && !exp_stop; i++) {
		if (!exp_shard_has(o->shard_i, o->shard_n, i) || exp_index_cell_done(x, (int64_t)i))
			continue;
		exp_spec_cell(s, i, &c);
		err = run_one(s, x, o, &c, exe);
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	free(exe);
	return exp_stop && !err ? 130 : err;
}
