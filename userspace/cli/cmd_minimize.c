// SPDX-License-Identifier: MIT
/* concsched minimize: options and --help; the search is replay/minimize.c. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "replay/minimize.h"
#include "run/vm_campaign.h"
#include "cli/commands.h"
#include "lib/log.h"
#include "lib/parse.h"

static void minimize_usage(FILE *f)
{
	fprintf(f,
		"Usage: concsched minimize DIR --run N [--times K] [--max-tries M] [--vm]\n\n"
		"Shrink failing run N of campaign DIR to a schedule with fewer preemptions\n"
		"(switches away from a thread that goes on later) that still fails the same\n"
		"way: each candidate undoes one preemption of the recorded schedule and is\n"
		"replayed in its order; one that fails in all K replays is kept and the search\n"
		"goes on from it. The smallest is stored as a new run of DIR, which report\n"
		"--schedule shows and replay re-makes like any other.\n\n"
		"Options:\n"
		"  -r, --run N           the failing run (concsched report DIR lists them)\n"
		"  -t, --times K         replays a candidate must fail in, every one (default 3)\n"
		"      --max-tries M     candidates replayed at most (default 60)\n"
		"      --run-timeout SEC per-replay timeout (default: the run's own)\n"
		"      --vm              minimize inside the sched_ext VM\n"
		"  -h, --help            this text\n\n"
		"Examples:\n"
		"  sudo concsched minimize camp --run 4\n"
		"  sudo concsched minimize camp --run 4 --vm && concsched report camp --schedule "
		"9\n\n"
		"Exit status: 0 the minimal schedule was stored, 2 usage or environment error\n"
		"(the run passed, has no schedule, or does not fail again in its recorded "
		"order).\n");
}

int cmd_minimize(int argc, char **argv)
{
	enum { O_TRIES = 256, O_RUN_TIMEOUT, O_VM, O_EMIT };
	static const struct option opts[] = {
		{ "run", required_argument, NULL, 'r' },
		{ "times", required_argument, NULL, 't' },
		{ "max-tries", required_argument, NULL, O_TRIES },
		{ "run-timeout", required_argument, NULL, O_RUN_TIMEOUT },
		{ "vm", no_argument, NULL, O_VM },
		{ "emit", required_argument, NULL, O_EMIT }, /* the VM's side of --vm */
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct minimize_opts mo = { .times = 3, .max_tries = 60 };
	uint64_t v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "r:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (parse_u64(optarg, &v) || !v) {
				log_err("--run %s: a run number (1, 2, ...)", optarg);
				return EXIT_USAGE;
			}
			mo.run = (int64_t)v;
			break;
		case 't':
			if (parse_u64(optarg, &v) || !v || v > 1000) {
				log_err("--times %s: 1-1000", optarg);
				return EXIT_USAGE;
			}
			mo.times = (unsigned)v;
			break;
		case O_TRIES:
			if (parse_u64(optarg, &v) || !v || v > 100000) {
				log_err("--max-tries %s: 1-100000", optarg);
				return EXIT_USAGE;
			}
			mo.max_tries = (unsigned)v;
			break;
		case O_RUN_TIMEOUT:
			if (parse_double(optarg, &mo.run_timeout_s) || mo.run_timeout_s <= 0) {
				log_err("--run-timeout %s: not a positive number of seconds",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case O_VM:
			mo.vm = true;
			break;
		case O_EMIT:
			mo.emit = optarg;
			break;
		case 'h':
			minimize_usage(stdout);
			return 0;
		default:
			fprintf(stderr, "(see concsched minimize --help)\n");
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		log_err("minimize: give one campaign directory (concsched minimize DIR --run N)");
		return EXIT_USAGE;
	}
	mo.dir = argv[optind];
	if (!mo.run) {
		log_err("minimize: which run? (--run N; concsched report %s lists them)", mo.dir);
		return EXIT_USAGE;
	}
	vm_campaign_scratch_sweep(NULL);
	return minimize_run(&mo, argc, argv);
}
