// SPDX-License-Identifier: MIT
/* Experiment SPEC parsing (exp_spec.h); the format is docs/experiment.md. */
#include <errno.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiment/exp_spec.h"
#include "experiment/suite.h"
#include "lib/fnv1a64.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "strategies/strategy_registry.h"

/* The file being parsed, for error lines. */
struct spec_ctx {
	const char *file;
	char *dir; /* the spec's folder: relative program paths start there */
};

/* Unknown keys are errors: a typo ("budjet") must not silently drop a limit. */
static int check_keys(const struct spec_ctx *x, json_t *obj, const char *where,
		      const char *const *known)
{
	const char *key, *const *k;
	json_t *v;

	json_object_foreach(obj, key, v)
	{
		for (k = known; *k; k++)
			if (!strcmp(*k, key))
				break;
		if (!*k) {
			log_err("%s: %s: unknown key \"%s\"", x->file, where, key);
			return -EINVAL;
		}
	}
	return 0;
}

static int get_strings(const struct spec_ctx *x, json_t *obj, const char *key, const char *where,
		       char ***out, size_t *n)
{
	json_t *a = json_object_get(obj, key), *v;
	size_t i;

	*out = NULL;
	*n = 0;
	if (!a)
		return 0;
	if (!json_is_array(a)) {
		log_err("%s: %s: \"%s\" must be an array of strings", x->file, where, key);
		return -EINVAL;
	}
	*out = xcalloc(json_array_size(a) + 1, sizeof(char *));
	json_array_foreach(a, i, v)
	{
		if (!json_is_string(v)) {
			log_err("%s: %s: \"%s\"[%zu] must be a string", x->file, where, key, i);
			return -EINVAL;
		}
		(*out)[(*n)++] = xstrdup(json_string_value(v));
	}
	return 0;
}

static int get_number(const struct spec_ctx *x, json_t *obj, const char *key, const char *where,
		      double *out)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return 0;
	if (!json_is_number(v) || json_number_value(v) < 0) {
		log_err("%s: %s: \"%s\" must be a number >= 0", x->file, where, key);
		return -EINVAL;
	}
	*out = json_number_value(v);
	return 0;
}

/* A cell directory name component: letters, digits, '.', '_' kept; the rest '_'. */
static char *safe_name(const char *s)
{
	char *r = xstrdup(s), *p;

	for (p = r; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && *p != '.' && *p != '_' && *p != '-')
			*p = '_';
	return r;
}

/* The folder resolved (no "..") but not the file itself: a program that is a
 * symlink (a busybox applet) must keep the name it is run by. */
static char *absolute_program(const char *path)
{
	char *d = xstrdup(path), *b = xstrdup(path), *real = realpath(dirname(d), NULL), *out;

	out = real ? xasprintf("%s/%s", real, basename(b)) : NULL;
	free(real);
	free(d);
	free(b);
	return out;
}

static int parse_program(const struct spec_ctx *x, json_t *o, size_t i, struct exp_program *p)
{
	static const char *const known[] = { "name",	      "path",	     "args",
					     "expect_exit",   "run_timeout", "access",
					     "sites_include", NULL };
	char where[48], *path, *tmp;
	json_t *v;
	double d = 0;
	int err;

	snprintf(where, sizeof(where), "programs[%zu]", i);
	if (!json_is_object(o)) {
		log_err("%s: %s must be an object", x->file, where);
		return -EINVAL;
	}
	if ((err = check_keys(x, o, where, known)))
		return err;
	v = json_object_get(o, "path");
	if (!json_is_string(v)) {
		log_err("%s: %s: \"path\" (a string) is required", x->file, where);
		return -EINVAL;
	}
	path = json_string_value(v)[0] == '/' ? xstrdup(json_string_value(v))
					      : xasprintf("%s/%s", x->dir, json_string_value(v));
	p->path = absolute_program(path);
	if (!p->path || access(p->path, X_OK)) {
		log_err("%s: %s: program %s: %s", x->file, where, path, strerror(errno));
		free(path);
		return -ENOENT;
	}
	free(path);
	v = json_object_get(o, "name");
	if (v && !json_is_string(v)) {
		log_err("%s: %s: \"name\" must be a string", x->file, where);
		return -EINVAL;
	}
	tmp = xstrdup(p->path);
	p->name = safe_name(v ? json_string_value(v) : basename(tmp));
	free(tmp);
	if ((err = get_strings(x, o, "args", where, &p->args, &p->nargs)) ||
	    (err = get_strings(x, o, "sites_include", where, &p->sites_include,
			       &p->nsites_include)))
		return err;
	if ((err = get_number(x, o, "expect_exit", where, &d)))
		return err;
	p->expect_exit = (int)d;
	if ((err = get_number(x, o, "run_timeout", where, &p->run_timeout)))
		return err;
	v = json_object_get(o, "access");
	if (v && !json_is_boolean(v)) {
		log_err("%s: %s: \"access\" must be true or false", x->file, where);
		return -EINVAL;
	}
	p->access = v && json_is_true(v);
	return 0;
}

/* A strategy is "spec" or {"strategy": spec, "name": label, "options": [...]}.
 * The spec is checked by the registry now, not in the first cell's run. */
static int parse_strategy(const struct spec_ctx *x, json_t *o, size_t i, struct exp_strategy *s)
{
	static const char *const known[] = { "name", "strategy", "options", NULL };
	char where[48], msg[256] = "";
	struct strategy *st = NULL;
	json_t *v = o, *name = NULL;
	int err;

	snprintf(where, sizeof(where), "strategies[%zu]", i);
	if (json_is_object(o)) {
		if ((err = check_keys(x, o, where, known)))
			return err;
		v = json_object_get(o, "strategy");
		name = json_object_get(o, "name");
		if ((err = get_strings(x, o, "options", where, &s->options, &s->noptions)))
			return err;
	}
	if (!json_is_string(v) || (name && !json_is_string(name))) {
		log_err("%s: %s: a strategy is a string or an object with \"strategy\" (a string)",
			x->file, where);
		return -EINVAL;
	}
	s->spec = xstrdup(json_string_value(v));
	s->name = safe_name(name ? json_string_value(name) : s->spec);
	if (strategy_new(s->spec, &st, msg, sizeof(msg))) {
		log_err("%s: %s: unknown strategy '%s'%s%s", x->file, where, s->spec,
			msg[0] ? ": " : "", msg);
		return -EINVAL;
	}
	strategy_free(st);
	return 0;
}

static int parse_seeds(const struct spec_ctx *x, json_t *root, struct exp_spec *s)
{
	json_t *seeds = json_object_get(root, "seeds"), *rep = json_object_get(root, "repetitions");
	json_t *v;
	size_t i;

	if (!seeds == !rep) {
		log_err("%s: give either \"seeds\" (an array) or \"repetitions\" (seeds 1..N)",
			x->file);
		return -EINVAL;
	}
	if (rep) {
		if (!json_is_integer(rep) || json_integer_value(rep) < 1) {
			log_err("%s: \"repetitions\" must be an integer >= 1", x->file);
			return -EINVAL;
		}
		s->nseeds = json_integer_value(rep);
		s->seeds = xcalloc(s->nseeds, sizeof(*s->seeds));
		for (i = 0; i < s->nseeds; i++)
			s->seeds[i] = i + 1;
		return 0;
	}
	if (!json_is_array(seeds) || !json_array_size(seeds)) {
		log_err("%s: \"seeds\" must be a non-empty array of integers", x->file);
		return -EINVAL;
	}
	s->seeds = xcalloc(json_array_size(seeds), sizeof(*s->seeds));
	json_array_foreach(seeds, i, v)
	{
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			log_err("%s: seeds[%zu] must be an integer >= 0", x->file, i);
			return -EINVAL;
		}
		s->seeds[s->nseeds++] = json_integer_value(v);
	}
	return 0;
}

static int parse_budget_where(const struct spec_ctx *x, json_t *root, struct exp_spec *s)
{
	static const char *const kb[] = { "runs", "seconds", NULL }, *const kw[] = { "vm", "cpus",
										     NULL };
	json_t *b = json_object_get(root, "budget"), *w = json_object_get(root, "where"), *v;
	double runs = 0, cpus = 0;
	int err;

	if (!json_is_object(b)) {
		log_err("%s: \"budget\" (an object with \"runs\" and/or \"seconds\") is required",
			x->file);
		return -EINVAL;
	}
	if ((err = check_keys(x, b, "budget", kb)) ||
	    (err = get_number(x, b, "runs", "budget", &runs)) ||
	    (err = get_number(x, b, "seconds", "budget", &s->budget_s)))
		return err;
	s->budget_runs = (uint64_t)runs;
	if (!s->budget_runs && s->budget_s <= 0) {
		log_err("%s: budget: give \"runs\" and/or \"seconds\" (> 0)", x->file);
		return -EINVAL;
	}
	if (!w)
		return 0;
	if (!json_is_object(w)) {
		log_err("%s: \"where\" must be an object", x->file);
		return -EINVAL;
	}
	if ((err = check_keys(x, w, "where", kw)) ||
	    (err = get_number(x, w, "cpus", "where", &cpus)))
		return err;
	v = json_object_get(w, "vm");
	if (v && !json_is_boolean(v)) {
		log_err("%s: where: \"vm\" must be true or false", x->file);
		return -EINVAL;
	}
	s->vm = v && json_is_true(v);
	s->vm_cpus = (int)cpus;
	return 0;
}

static int parse_array(const struct spec_ctx *x, json_t *root, const char *key, size_t *n)
{
	json_t *a = json_object_get(root, key);

	if (!json_is_array(a) || !json_array_size(a)) {
		log_err("%s: \"%s\" must be a non-empty array", x->file, key);
		return -EINVAL;
	}
	*n = json_array_size(a);
	return 0;
}

static bool has_suite(json_t *programs)
{
	json_t *o;
	size_t i;

	json_array_foreach(programs, i, o) if (suite_entry(o)) return true;
	return false;
}

/* The programs, a suite entry (suite.h) standing for one per test case. */
static int parse_programs(const struct spec_ctx *x, json_t *a, struct exp_spec *s)
{
	size_t i, k, cap = json_array_size(a) + 1;
	json_t *o, *cases, *c;
	char where[48];
	int err = 0;

	s->programs = xcalloc(cap, sizeof(*s->programs));
	json_array_foreach(a, i, o)
	{
		snprintf(where, sizeof(where), "programs[%zu]", i);
		cases = suite_entry(o) ? suite_expand(o, x->dir, x->file, where)
				       : json_pack("[O]", o);
		if (!cases)
			return -EINVAL;
		json_array_foreach(cases, k, c)
		{
			if (s->nprograms + 1 >= cap) {
				s->programs = xrealloc(s->programs, 2 * cap * sizeof(*s->programs));
				memset(s->programs + cap, 0, cap * sizeof(*s->programs));
				cap *= 2;
			}
			err = parse_program(x, c, i, &s->programs[s->nprograms++]);
			if (err)
				break;
		}
		json_decref(cases);
		if (err)
			return err;
	}
	return 0;
}

static int parse_root(const struct spec_ctx *x, json_t *root, struct exp_spec *s)
{
	static const char *const known[] = { "programs", "strategies", "seeds",	  "repetitions",
					     "budget",	 "where",      "comment", NULL };
	size_t i, n;
	uint64_t h;
	int err;

	if (!json_is_object(root)) {
		log_err("%s: the spec must be a JSON object", x->file);
		return -EINVAL;
	}
	if ((err = check_keys(x, root, "spec", known)))
		return err;
	if ((err = parse_array(x, root, "programs", &n)))
		return err;
	if ((err = parse_programs(x, json_object_get(root, "programs"), s)))
		return err;
	if ((err = parse_array(x, root, "strategies", &n)))
		return err;
	s->strategies = xcalloc(n + 1, sizeof(*s->strategies));
	for (i = 0; i < n; i++, s->nstrategies++)
		if ((err = parse_strategy(x, json_array_get(json_object_get(root, "strategies"), i),
					  i, &s->strategies[i])))
			return err;
	if ((err = parse_seeds(x, root, s)) || (err = parse_budget_where(x, root, s)))
		return err;
	s->canonical = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
	h = fnv1a64(s->canonical, strlen(s->canonical), FNV1A64_INIT);
	/* A suite's cases come from its listing: they are part of the spec
	 * (a spec without suites keeps the hash it always had). */
	for (i = 0; has_suite(json_object_get(root, "programs")) && i < s->nprograms; i++)
		h = fnv1a64(s->programs[i].name, strlen(s->programs[i].name) + 1, h);
	snprintf(s->hash, sizeof(s->hash), "%016llx", (unsigned long long)h);
	return 0;
}

int exp_spec_load(const char *path, struct exp_spec *out)
{
	struct spec_ctx x = { .file = path };
	json_error_t jerr;
	json_t *root;
	char *tmp;
	int err;

	memset(out, 0, sizeof(*out));
	if (access(path, R_OK)) {
		err = -errno;
		log_err("experiment spec %s: %s", path, strerror(errno));
		return err;
	}
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		log_err("%s:%d:%d: invalid JSON: %s", path, jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	tmp = xstrdup(path);
	x.dir = realpath(dirname(tmp), NULL);
	free(tmp);
	err = parse_root(&x, root, out);
	json_decref(root);
	free(x.dir);
	if (err)
		exp_spec_free(out);
	return err;
}

static void free_strings(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void exp_spec_free(struct exp_spec *s)
{
	size_t i;

	/* Arrays have one spare zeroed entry: the one that failed halfway. */
	for (i = 0; s->programs && i <= s->nprograms; i++) {
		free(s->programs[i].name);
		free(s->programs[i].path);
		free_strings(s->programs[i].args, s->programs[i].nargs);
		free_strings(s->programs[i].sites_include, s->programs[i].nsites_include);
	}
	for (i = 0; s->strategies && i <= s->nstrategies; i++) {
		free(s->strategies[i].name);
		free(s->strategies[i].spec);
		free_strings(s->strategies[i].options, s->strategies[i].noptions);
	}
	free(s->programs);
	free(s->strategies);
	free(s->seeds);
	free(s->canonical);
	memset(s, 0, sizeof(*s));
}

size_t exp_spec_ncells(const struct exp_spec *s)
{
	return s->nprograms * s->nstrategies * s->nseeds;
}

void exp_spec_cell(const struct exp_spec *s, size_t index, struct exp_cell *c)
{
	c->index = index;
	c->seed = index % s->nseeds;
	c->strategy = index / s->nseeds % s->nstrategies;
	c->program = index / s->nseeds / s->nstrategies;
}

char *exp_spec_cell_name(const struct exp_spec *s, const struct exp_cell *c)
{
	return xasprintf("%s-%s-%llu", s->programs[c->program].name,
			 s->strategies[c->strategy].name, (unsigned long long)s->seeds[c->seed]);
}

int exp_spec_shard_parse(const char *arg, unsigned *i, unsigned *n)
{
	char end;

	if (sscanf(arg, "%u/%u%c", i, n, &end) != 2 || *i < 1 || *n < 1 || *i > *n)
		return -EINVAL;
	return 0;
}
