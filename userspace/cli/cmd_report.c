// SPDX-License-Identifier: MIT
/* concsched report: options and --help; the report is results/report.c. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/report.h"
#include "results/schedule.h"
#include "results/store.h"
#include "cli/commands.h"
#include "experiment/exp_ci.h"
#include "results/report_ci_write.h"
#include "lib/log.h"
#include "lib/parse.h"

static void report_usage(FILE *f)
{
	fprintf(f,
		"Usage: concsched report DIR [--json] [--html FILE] [--junit FILE] [--sarif FILE]\n"
		"                        [--saturation W,T]\n"
		"       concsched report EXPERIMENT_DIR [--junit FILE] [--sarif FILE]\n"
		"       concsched report DIR --tasks METRIC [--json]\n"
		"       concsched report DIR --schedule N [--json]\n\n"
		"Summarise a campaign directory written by `concsched run` (also one whose\n"
		"run was interrupted or killed: every committed run is reported): program,\n"
		"runs and outcomes, coverage per metric with saturation, failures with\n"
		"their sites and replay commands, race warnings.\n\n"
		"Options:\n"
		"  --json             JSON on stdout instead of text (docs/report.md)\n"
		"  --html FILE        also write a self-contained HTML page with a\n"
		"                     coverage chart (SVG) per metric\n"
		"  --junit FILE       also write JUnit XML for CI dashboards: a testsuite per\n"
		"                     campaign (per cell of an experiment directory), a\n"
		"                     testcase per failing run with its kind, summary, sites\n"
		"                     and replay command (docs/ci.md)\n"
		"  --sarif FILE       also write SARIF 2.1.0 for code scanning: a rule per\n"
		"                     finding kind, a result per failure and warning at its\n"
		"                     source lines, the failing run's schedule as a code flow\n"
		"  --saturation W,T   judge saturation over the last W runs (or Ws seconds)\n"
		"                     with slope threshold T (default: the campaign's, else "
		"50,0.1)\n"
		"  --schedule N       show run N's schedule instead: one column per thread,\n"
		"                     the points in the order the threads passed them\n"
		"                     (function file:line), preemptions marked, the end\n"
		"  --tasks METRIC     list the covered tasks of one metric instead: first\n"
		"                     run, hits, and the task with its sites resolved\n"
		"  -h, --help         this text\n\n"
		"Examples:\n"
		"  concsched report camp\n"
		"  concsched report camp --json | jq '.metrics[] | {name, covered}'\n"
		"  concsched report camp --html camp.html\n"
		"  concsched report camp --junit junit.xml --sarif concsched.sarif\n"
		"  concsched report exp --junit junit.xml    (an experiment: a suite per cell)\n"
		"  concsched report camp --tasks map\n"
		"  concsched report camp --schedule 4\n\n"
		"Exit status: 0 no failure recorded, 1 the campaign has failures,\n"
		"2 not a campaign directory, unwritable output or usage error.\n"
		"For an experiment directory: 1 when a cell found a failure.\n");
}

static int write_html_file(const struct report *r, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		log_err("cannot write %s: %s", path, strerror(errno));
		return -errno;
	}
	report_html_write(r, f);
	if (ferror(f) | fclose(f)) {
		log_err("cannot write %s: %s", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* report DIR --schedule N */
static int write_schedule(struct store *s, const char *dir, int64_t run, bool json)
{
	struct sched_view v;
	struct json j;
	int err = schedule_load(s, run, &v);

	if (err == -ENOENT) {
		log_err("%s has no run %lld (concsched report %s lists its runs)", dir,
			(long long)run, dir);
		return EXIT_USAGE;
	}
	if (err) {
		log_err("run %lld of %s has no schedule (only steered runs record one, since "
			"this version)",
			(long long)run, dir);
		schedule_free(&v);
		return EXIT_USAGE;
	}
	if (json) {
		json_init(&j, stdout, true);
		schedule_write_json(&v, &j, NULL);
		json_end(&j);
	} else {
		schedule_write_text(&v, stdout);
	}
	schedule_free(&v);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "html", required_argument, NULL, 'H' },
		{ "saturation", required_argument, NULL, 'S' },
		{ "tasks", required_argument, NULL, 'T' },
		{ "schedule", required_argument, NULL, 'C' },
		{ "junit", required_argument, NULL, 'U' },
		{ "sarif", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct report_options ro = { 0 };
	struct report_ci_files ci = { 0 };
	struct sat_config sat;
	const char *html = NULL, *tasks = NULL;
	struct report *r = NULL;
	struct store *s = NULL;
	bool json = false;
	uint64_t sched_run = 0;
	int c, ret = EXIT_USAGE;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'H':
			html = optarg;
			break;
		case 'T':
			tasks = optarg;
			break;
		case 'U':
			ci.junit = optarg;
			break;
		case 'F':
			ci.sarif = optarg;
			break;
		case 'C':
			if (parse_u64(optarg, &sched_run) || !sched_run) {
				log_err("--schedule %s: a run number (1, 2, ...)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'S':
			if (saturation_parse(optarg, &sat)) {
				log_err("bad --saturation '%s' (expected WINDOW,THRESHOLD like "
					"50,0.1 "
					"or 120s,0.1)",
					optarg);
				return EXIT_USAGE;
			}
			ro.sat = &sat;
			break;
		case 'h':
			report_usage(stdout);
			return 0;
		default:
			log_err("see concsched report --help");
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		log_err(argc - optind
				? "report takes one campaign directory (see concsched report "
				  "--help)"
				: "report needs a campaign directory (e.g. concsched report camp)");
		return EXIT_USAGE;
	}
	ro.dir = argv[optind];
	ro.replay_vm = access("/sys/kernel/sched_ext", F_OK) != 0;
	if ((tasks || sched_run) && html) {
		log_err("--tasks and --schedule print to the terminal; they do not combine with "
			"--html");
		return EXIT_USAGE;
	}
	if (tasks && sched_run) {
		log_err("--tasks or --schedule: one at a time");
		return EXIT_USAGE;
	}
	if ((tasks || sched_run) && (ci.junit || ci.sarif)) {
		log_err("--tasks and --schedule print to the terminal; they do not combine with "
			"--junit or --sarif");
		return EXIT_USAGE;
	}
	if (exp_ci_is_experiment(ro.dir)) {
		if (!ci.junit && !ci.sarif) {
			log_err("%s is an experiment: concsched experiment report %s (or report "
				"--junit/--sarif FILE)",
				ro.dir, ro.dir);
			return EXIT_USAGE;
		}
		if (html || json || ro.sat) {
			log_err("for an experiment directory report writes --junit and --sarif "
				"only");
			return EXIT_USAGE;
		}
		return exp_ci_write(ro.dir, &ci, ro.replay_vm);
	}
	if (store_open_best(ro.dir, &s))
		return EXIT_USAGE;
	if (sched_run) {
		ret = write_schedule(s, ro.dir, (int64_t)sched_run, json);
		goto cleanup;
	}
	if (tasks) {
		if (report_tasks_write(s, tasks, json, stdout)) {
			ret = EXIT_USAGE;
			goto cleanup;
		}
		ret = 0;
		goto cleanup;
	}
	if (report_load(s, &ro, &r)) {
		log_err("cannot read campaign %s: %s", ro.dir, store_errmsg(s));
		goto cleanup;
	}
	if (html && write_html_file(r, html))
		goto cleanup;
	if ((ci.junit || ci.sarif) && report_ci_write_campaign(ro.dir, s, r, &ci))
		goto cleanup;
	if (json)
		report_write_json(r, stdout);
	else
		report_write_text(r, stdout);
	if (html && !json)
		printf("html:      %s\n", html);
	if (ci.junit && !json)
		printf("junit:     %s\n", ci.junit);
	if (ci.sarif && !json)
		printf("sarif:     %s\n", ci.sarif);
	ret = report_model_failure_count(r) ? 1 : 0;
cleanup:
	report_free(r);
	store_close(s);
	return ret;
}
