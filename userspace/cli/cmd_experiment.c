// SPDX-License-Identifier: MIT
/*
 * concsched experiment run|report|merge: options and --help. The spec is
 * experiment/exp_spec.c, the cells experiment/exp_cell.c, the index
 * experiment/exp_index.c, the statistics and pages experiment/stats.c and
 * experiment/exp_report.c; docs/experiment.md is the user's guide.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "experiment/exp_cell.h"
#include "experiment/exp_index.h"
#include "experiment/exp_merge.h"
#include "experiment/exp_report.h"
#include "experiment/exp_spec.h"
#include "lib/log.h"
#include "lib/xalloc.h"

static void experiment_usage(FILE *f)
{
	fprintf(f,
		"Usage: concsched experiment run SPEC -o DIR [--shard I/N] [--quiet]\n"
		"       concsched experiment run --list SPEC [-o DIR] [--shard I/N]\n"
		"       concsched experiment report DIR [--csv FILE] [--comparisons-csv FILE]\n"
		"                                       [--json FILE] [--html FILE]\n"
		"       concsched experiment merge SHARD_DIR... -o DIR\n\n"
		"An experiment runs every program x strategy x seed of a JSON SPEC\n"
		"(docs/experiment.md) as one campaign each (a cell: `concsched run` with the\n"
		"spec's options, stopping at the first failure), stored under DIR/cells/ with\n"
		"one index, DIR/experiment.db. Run again, it resumes: cells already done are\n"
		"skipped, a cell that was interrupted is redone. A program entry\n"
		"{\"gtest\": BINARY} or {\"ctest\": BUILD_DIR} is one program per test case of\n"
		"the suite's own listing (--gtest_list_tests, ctest --show-only=json-v1).\n\n"
		"run options:\n"
		"  -o, --out DIR     experiment directory (required)\n"
		"      --shard I/N   run only the cells whose index %% N == I-1 (I = 1..N),\n"
		"                    e.g. one Slurm array task or CI matrix job each\n"
		"  -q, --quiet       no line per cell\n"
		"  -l, --list        check the SPEC and print its cells (of the shard) with\n"
		"                    their `concsched run` command lines; runs nothing\n"
		"report options (text summary on stdout either way):\n"
		"      --csv FILE    one row per program x strategy (FILE - is stdout)\n"
		"      --comparisons-csv FILE  one row per program x pair of strategies and\n"
		"                    measure: runs to the first failure (fewer is better) and\n"
		"                    coverage of the stopping metric at the budget (more is\n"
		"                    better); Mann-Whitney U, A12, Wilcoxon when seeds pair\n"
		"      --json FILE   cells, groups, comparisons (failure and coverage) and curves\n"
		"      --html FILE   a page with found-by-budget and coverage curves (SVG) and\n"
		"                    the coverage comparisons\n"
		"merge: combine shard directories of one spec (same hash) into DIR.\n\n"
		"Examples:\n"
		"  sudo concsched experiment run docs/examples/experiment.json -o exp\n"
		"  sudo concsched experiment run spec.json -o exp-1 --shard 1/2   # machine 1\n"
		"  sudo concsched experiment run spec.json -o exp-2 --shard 2/2   # machine 2\n"
		"  concsched experiment merge exp-1 exp-2 -o exp\n"
		"  concsched experiment report exp --csv exp.csv --html exp.html\n"
		"  concsched report exp --junit junit.xml      # a JUnit testsuite per cell\n\n"
		"Exit status: 0 done, 2 usage error, bad spec or a cell could not run,\n"
		"130 interrupted (run again to resume).\n");
}

static int bad_usage(const char *what)
{
	log_err("%s (see concsched experiment --help)", what);
	return EXIT_USAGE;
}

/* Print s for a shell: as is when safe, else in single quotes. */
static void shell_word(const char *s, FILE *f)
{
	const char *c;

	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
			    "_-+=/.,:@%") == strlen(s)) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (c = s; *c; c++)
		if (*c == '\'')
			fputs("'\\''", f);
		else
			fputc(*c, f);
	fputc('\'', f);
}

/* experiment run --list: each cell of the shard and its command line. */
static int list_cells(const struct exp_spec *s, const struct exp_run_options *o)
{
	const char *dir = o->dir ? o->dir : "DIR";
	size_t i, n = exp_spec_ncells(s), shown = 0;
	struct exp_cell c;
	char **argv, **a, *name, *out;

	printf("spec %s: %zu program%s x %zu strateg%s x %zu seed%s = %zu cells\n", s->hash,
	       s->nprograms, s->nprograms == 1 ? "" : "s", s->nstrategies,
	       s->nstrategies == 1 ? "y" : "ies", s->nseeds, s->nseeds == 1 ? "" : "s", n);
	for (i = 0; i < n; i++) {
		if (!exp_shard_has(o->shard_i, o->shard_n, i))
			continue;
		exp_spec_cell(s, i, &c);
		name = exp_spec_cell_name(s, &c);
		out = xasprintf("%s/cells/%s", dir, name);
		argv = exp_cell_argv(s, &c, "concsched", out);
		printf("cell %zu %s:", i, name);
		for (a = argv; *a; a++) {
			fputc(' ', stdout);
			shell_word(*a, stdout);
		}
		fputc('\n', stdout);
		exp_cell_argv_free(argv);
		free(out);
		free(name);
		shown++;
	}
	if (o->shard_n > 1)
		printf("shard %u/%u: %zu cells\n", o->shard_i, o->shard_n, shown);
	return 0;
}

static int experiment_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' }, { "shard", required_argument, NULL, 'S' },
		{ "quiet", no_argument, NULL, 'q' },	 { "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },	 { 0 },
	};
	struct exp_run_options o = { .shard_i = 1, .shard_n = 1 };
	bool list = false;
	struct exp_index *x = NULL;
	struct exp_spec s;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qlh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o.dir = optarg;
			break;
		case 'l':
			list = true;
			break;
		case 'S':
			if (exp_spec_shard_parse(optarg, &o.shard_i, &o.shard_n))
				return bad_usage("--shard wants I/N with 1 <= I <= N");
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'h':
			experiment_usage(stdout);
			return 0;
		default:
			return bad_usage("bad option");
		}
	}
	if (optind != argc - 1)
		return bad_usage("experiment run needs one SPEC file");
	if (!o.dir && !list)
		return bad_usage("experiment run needs -o DIR");
	if (exp_spec_load(argv[optind], &s))
		return EXIT_USAGE;
	if (list) {
		err = list_cells(&s, &o);
		exp_spec_free(&s);
		return err;
	}
	err = exp_index_open(o.dir, s.hash, s.canonical, &x);
	if (!err)
		err = exp_cell_run(&s, x, &o);
	exp_index_close(x);
	exp_spec_free(&s);
	if (err == 130)
		log_err("interrupted: run the same command again to resume");
	else if (!err && !o.quiet)
		printf("experiment %s: done (concsched experiment report %s)\n", o.dir, o.dir);
	return err == 130 ? 130 : err ? EXIT_USAGE : 0;
}

/* Write one output of the report to path ("-": stdout). */
static int write_output(const struct exp_report *r, const char *path,
			void (*fn)(const struct exp_report *, FILE *))
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f) {
		log_err("cannot write %s: %s", path, strerror(errno));
		return -errno;
	}
	fn(r, f);
	if (f != stdout && fclose(f)) {
		log_err("cannot write %s: %s", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

static int experiment_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "csv", required_argument, NULL, 'c' },
		{ "comparisons-csv", required_argument, NULL, 'C' },
		{ "json", required_argument, NULL, 'j' },
		{ "html", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *csv = NULL, *ccsv = NULL, *json = NULL, *html = NULL;
	struct exp_index *x = NULL;
	struct exp_report *r = NULL;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			csv = optarg;
			break;
		case 'C':
			ccsv = optarg;
			break;
		case 'j':
			json = optarg;
			break;
		case 'H':
			html = optarg;
			break;
		case 'h':
			experiment_usage(stdout);
			return 0;
		default:
			return bad_usage("bad option");
		}
	}
	if (optind != argc - 1)
		return bad_usage("experiment report needs one experiment directory");
	if (exp_index_open_existing(argv[optind], true, &x))
		return EXIT_USAGE;
	err = exp_report_load(x, argv[optind], &r);
	if (err)
		log_err("cannot read the experiment index of %s", argv[optind]);
	/* The text goes to stdout unless a file output went there. */
	if (!err && !(csv && !strcmp(csv, "-")) && !(ccsv && !strcmp(ccsv, "-")) &&
	    !(json && !strcmp(json, "-")))
		exp_report_text(r, stdout);
	if (!err && csv)
		err = write_output(r, csv, exp_report_csv);
	if (!err && ccsv)
		err = write_output(r, ccsv, exp_report_comparisons_csv);
	if (!err && json)
		err = write_output(r, json, exp_report_json);
	if (!err && html)
		err = write_output(r, html, exp_report_html);
	exp_report_free(r);
	exp_index_close(x);
	return err ? EXIT_USAGE : 0;
}

/* The destination takes the first input's spec (hash and text). */
static int open_merge_destination(const char *dir, struct exp_index *first, struct exp_index **out)
{
	char *hash = exp_index_meta(first, "spec_hash"), *spec = exp_index_meta(first, "spec");
	int err;

	if (!hash || !spec) {
		log_err("the first input has no spec recorded");
		err = -EINVAL;
	} else {
		err = exp_index_open(dir, hash, spec, out);
	}
	free(hash);
	free(spec);
	return err;
}

static int experiment_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct exp_index *src = NULL, *dst = NULL;
	const char *out = NULL;
	int c, i, added, ret = EXIT_USAGE;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'h':
			experiment_usage(stdout);
			return 0;
		default:
			return bad_usage("bad option");
		}
	}
	if (optind >= argc || !out)
		return bad_usage("experiment merge needs shard directories and -o DIR");
	for (i = optind; i < argc; i++) {
		if (exp_index_open_existing(argv[i], true, &src))
			goto out;
		if (!dst && open_merge_destination(out, src, &dst))
			goto out;
		added = exp_merge(dst, out, src, argv[i]);
		exp_index_close(src);
		src = NULL;
		if (added < 0)
			goto out;
		printf("%s: %d new cell%s\n", argv[i], added, added == 1 ? "" : "s");
	}
	printf("merged into %s\n", out);
	ret = 0;
out:
	exp_index_close(src);
	exp_index_close(dst);
	return ret;
}

int cmd_experiment(int argc, char **argv)
{
	if (argc < 2)
		return bad_usage("experiment needs run, report or merge");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		experiment_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "run"))
		return experiment_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "merge"))
		return experiment_merge(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return experiment_report(argc - 1, argv + 1);
	log_err("unknown experiment command '%s' (run, report or merge)", argv[1]);
	return EXIT_USAGE;
}
