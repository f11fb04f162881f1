// SPDX-License-Identifier: MIT
/* concsched replay: options and --help; the replay is replay/replay.c. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "replay/replay.h"
#include "run/vm_campaign.h"
#include "cli/commands.h"
#include "lib/log.h"
#include "lib/parse.h"

static void replay_usage(FILE *f)
{
	fprintf(f,
		"Usage: concsched replay DIR --run N [--times K] [--vm] [--run-timeout SEC]\n\n"
		"Re-execute run N of campaign DIR with its recorded seed, strategy configuration\n"
		"and decision log (decisions are keyed by abstract thread and per-thread point\n"
		"index, so they apply at the same program points). A run, steered in parallel\n"
		"(random, noise, tsa, map) or serially (pct, --serial), is replayed in the order\n"
		"its threads went on from their points, one thread at a time: a failure that\n"
		"depends only on that order happens again every time (points are matched by\n"
		"index and site: a spin loop that goes round more or fewer times than recorded\n"
		"does not shift the rest; concsched -v replay prints each wait and pass).\n"
		"Prints the outcome of each replay, and notes how many failed again in the\n"
		"campaign (when it is writable) so that report shows \"replayed k/K\"; nothing\n"
		"else in the campaign changes.\n\n"
		"Options:\n"
		"  -r, --run N           the run to replay (concsched report DIR lists them)\n"
		"  -t, --times K         replay K times and count how often it fails (default 1)\n"
		"      --run-timeout SEC per-replay timeout (default: the run's own)\n"
		"      --json            one JSON object with every replay's outcome\n"
		"      --decisions       re-apply only the recorded decisions, not the recorded\n"
		"                        order: in parallel (the order left to timing), or a\n"
		"                        serial run's logged releases in order\n"
		"      --vm              replay inside the sched_ext VM\n"
		"  -h, --help            this text\n\n"
		"Examples:\n"
		"  sudo concsched replay camp --run 17\n"
		"  sudo concsched replay camp --run 17 --times 10 --vm\n\n"
		"Exit status: 1 the run failed again (at least once), 0 it passed every time,\n"
		"2 usage or environment error.\n");
}

static int parse_seconds(const char *opt, const char *s, double *out)
{
	if (parse_double(s, out) || *out <= 0) {
		log_err("%s %s: not a positive number of seconds", opt, s);
		return -EINVAL;
	}
	return 0;
}

static int parse_replay_args(struct replay_opts *ro, int argc, char **argv)
{
	enum { O_RUN_TIMEOUT = 256, O_JSON, O_VM, O_DECISIONS };
	static const struct option opts[] = {
		{ "run", required_argument, NULL, 'r' },
		{ "times", required_argument, NULL, 't' },
		{ "run-timeout", required_argument, NULL, O_RUN_TIMEOUT },
		{ "json", no_argument, NULL, O_JSON },
		{ "vm", no_argument, NULL, O_VM },
		{ "decisions", no_argument, NULL, O_DECISIONS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	ro->times = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "r:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (parse_u64(optarg, &v) || !v) {
				log_err("--run %s: a run number (1, 2, ...)", optarg);
				return -EINVAL;
			}
			ro->run = (int64_t)v;
			break;
		case 't':
			if (parse_u64(optarg, &ro->times) || !ro->times) {
				log_err("--times %s: a positive number", optarg);
				return -EINVAL;
			}
			break;
		case O_RUN_TIMEOUT:
			if (parse_seconds("--run-timeout", optarg, &ro->run_timeout_s))
				return -EINVAL;
			break;
		case O_JSON:
			ro->json = true;
			break;
		case O_VM:
			ro->vm = true;
			break;
		case O_DECISIONS:
			ro->decisions_only = true;
			break;
		case 'h':
			replay_usage(stdout);
			return 1;
		default:
			fprintf(stderr, "(see concsched replay --help)\n");
			return -EINVAL;
		}
	}
	if (optind != argc - 1) {
		log_err("replay: give one campaign directory (concsched replay DIR --run N)");
		return -EINVAL;
	}
	ro->dir = argv[optind];
	if (!ro->run) {
		log_err("replay: which run? (--run N; concsched report %s lists them)", ro->dir);
		return -EINVAL;
	}
	return 0;
}

int cmd_replay(int argc, char **argv)
{
	struct replay_opts ro = { 0 };
	int err = parse_replay_args(&ro, argc, argv);

	if (err)
		return err > 0 ? 0 : EXIT_USAGE;
	vm_campaign_scratch_sweep(ro.dir);
	return replay_run(&ro, argc, argv);
}
