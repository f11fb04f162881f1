// SPDX-License-Identifier: MIT
/*
 * Experiment SPEC (experiment/exp_spec.c) and the `run` command line of a cell
 * (experiment/exp_cell.c): parsing, defaults, cell order, shards, and bad specs.
 * No root, no kernel: the program is a shell script that is never run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "experiment/exp_cell.h"
#include "experiment/exp_spec.h"
#include "lib/xalloc.h"
#include "tap.h"

static char dir[] = "/tmp/cs-expspec-XXXXXX", *realdir;

static const char *write_spec(const char *name, const char *json)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	fputs(json, f);
	fclose(f);
	return path;
}

static const char full[] =
	"{\"programs\": [{\"path\": \"sub/../prog\", \"name\": \"t\", \"args\": [\"a\", \"b c\"],"
	"  \"expect_exit\": 3, \"run_timeout\": 7.5, \"access\": true,"
	"  \"sites_include\": [\"worker*\"]},"
	" {\"path\": \"prog\"}],"
	" \"strategies\": [\"pct:3\", {\"strategy\": \"none\", \"name\": \"plain\","
	"  \"options\": [\"--estimate-runs\", \"2\"]}],"
	" \"repetitions\": 3, \"budget\": {\"runs\": 50, \"seconds\": 30},"
	" \"where\": {\"vm\": true, \"cpus\": 4}}";

static char *joined(char **argv)
{
	static char buf[1024];
	size_t i;

	buf[0] = 0;
	for (i = 0; argv[i]; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? " " : "",
			 argv[i]);
	return buf;
}

static void test_full(void)
{
	struct exp_spec s;
	struct exp_cell c;
	char *name, **argv, *want;

	tap_is_int(exp_spec_load(write_spec("full.json", full), &s), 0, "full spec parses");
	tap_ok(s.nprograms == 2 && s.nstrategies == 2 && s.nseeds == 3,
	       "2 programs, 2 strategies, 3 seeds");
	tap_is_str(s.programs[1].name, "prog", "a program's name defaults to its file name");
	tap_is_str(s.strategies[0].name, "pct_3",
		   "a strategy's name defaults to its spec, made safe");
	tap_ok(s.seeds[0] == 1 && s.seeds[2] == 3, "repetitions 3: seeds 1..3");
	tap_is_int(exp_spec_ncells(&s), 12, "12 cells");
	exp_spec_cell(&s, 7, &c);
	/* 7 = program 1 (6 cells each), strategy 0 (3 each), seed index 1 */
	tap_ok(c.program == 1 && c.strategy == 0 && c.seed == 1,
	       "cell 7: program 1, strategy 0, seed 2");
	name = exp_spec_cell_name(&s, &c);
	tap_is_str(name, "prog-pct_3-2", "cell name program-strategy-seed");
	free(name);
	exp_spec_cell(&s, 4, &c);
	argv = exp_cell_argv(&s, &c, "/cs", "/x/cells/t-plain-2");
	want = xasprintf("/cs run --strategy=none --estimate-runs 2 --runs=50 --time=30 --seed=2 "
			 "--expect-exit=3 --run-timeout=7.5 --access --sites-include=worker* --vm "
			 "--vm-cpus=4 --out=/x/cells/t-plain-2 -- %s/prog a b c",
			 realdir);
	tap_is_str(joined(argv), want,
		   "cell 4's run command line (the program's path resolved "
		   "against the spec's folder)");
	free(want);
	exp_cell_argv_free(argv);
	tap_is_int(strlen(s.hash), 16, "spec hash: 16 hex digits");
	exp_spec_free(&s);
}

static void test_shards(void)
{
	unsigned i, n, k, count[3] = { 0 };
	size_t idx;

	tap_ok(!exp_spec_shard_parse("2/3", &i, &n) && i == 2 && n == 3, "shard 2/3");
	tap_is_int(exp_spec_shard_parse("0/3", &i, &n) + exp_spec_shard_parse("4/3", &i, &n) +
			   exp_spec_shard_parse("1/0", &i, &n) +
			   exp_spec_shard_parse("1/2x", &i, &n) + exp_spec_shard_parse("1", &i, &n),
		   -5 * EINVAL, "bad shards 0/3 4/3 1/0 1/2x 1 rejected");
	for (idx = 0; idx < 10; idx++)
		for (k = 1; k <= 3; k++)
			count[k - 1] += exp_shard_has(k, 3, idx);
	tap_ok(count[0] == 4 && count[1] == 3 && count[2] == 3,
	       "3 shards of 10 cells: 4 + 3 + 3, each cell once");
	tap_ok(exp_shard_has(2, 3, 4) && !exp_shard_has(1, 3, 4),
	       "cell 4 is in shard 2/3 (4 %% 3 == 1)");
}

/* Each bad spec is refused with -EINVAL (or -ENOENT for a missing file or program). */
static void test_bad(void)
{
	static const struct {
		const char *json, *what;
	} bad[] = {
		{ "{\"programs\": [", "invalid JSON" },
		{ "[]", "not an object" },
		{ "{\"programs\": [{\"path\": \"prog\"}], \"strategies\": [\"none\"],"
		  " \"seeds\": [1], \"budget\": {\"runs\": 1}, \"typo\": 1}",
		  "unknown key" },
		{ "{\"programs\": [{\"path\": \"prog\"}], \"strategies\": [\"bogus:1\"],"
		  " \"seeds\": [1], \"budget\": {\"runs\": 1}}",
		  "unknown strategy" },
		{ "{\"programs\": [{\"path\": \"prog\"}], \"strategies\": [\"none\"],"
		  " \"seeds\": [1], \"budget\": {}}",
		  "empty budget" },
		{ "{\"programs\": [{\"path\": \"prog\"}], \"strategies\": [\"none\"],"
		  " \"seeds\": [1], \"repetitions\": 2, \"budget\": {\"runs\": 1}}",
		  "seeds and repetitions" },
		{ "{\"programs\": [], \"strategies\": [\"none\"],"
		  " \"seeds\": [1], \"budget\": {\"runs\": 1}}",
		  "no programs" },
		{ "{\"programs\": [{\"path\": \"prog\", \"args\": [1]}], \"strategies\": "
		  "[\"none\"], \"seeds\": [1], \"budget\": {\"runs\": 1}}",
		  "a non-string argument" },
	};
	struct exp_spec s;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		tap_is_int(exp_spec_load(write_spec("bad.json", bad[i].json), &s), -EINVAL, "%s",
			   bad[i].what);
	tap_is_int(
		exp_spec_load(write_spec("nop.json",
					 "{\"programs\": [{\"path\": \"nope\"}], \"strategies\": "
					 "[\"none\"], \"seeds\": [1], \"budget\": {\"runs\": 1}}"),
			      &s),
		-ENOENT, "missing program: -ENOENT");
	tap_is_int(exp_spec_load("/nonexistent/spec.json", &s), -ENOENT, "missing spec: -ENOENT");
}

int main(void)
{
	char *prog, *sub;

	if (!mkdtemp(dir))
		return 1;
	realdir = realpath(dir, NULL);
	prog = xasprintf("%s/prog", dir);
	sub = xasprintf("%s/sub", dir);
	write_spec("prog", "#!/bin/sh\n");
	chmod(prog, 0755);
	mkdir(sub, 0755);
	tap_plan(24);
	test_full();
	test_shards();
	test_bad();
	unlink(write_spec("full.json", ""));
	unlink(write_spec("bad.json", ""));
	unlink(write_spec("nop.json", ""));
	unlink(prog);
	rmdir(sub);
	rmdir(dir);
	free(prog);
	free(sub);
	free(realdir);
	return tap_done();
}
