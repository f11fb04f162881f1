// SPDX-License-Identifier: MIT
/*
 * concsched attach: its options and --help (issue 17, docs/attach.md); the
 * window itself is run/attach.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "run/attach.h"
#include "run/run_types.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/parse.h"
#include "lib/xalloc.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: concsched attach (-p PID | --comm NAME | --cgroup PATH) [OPTIONS]\n\n"
		"Perturb and observe processes that are already running: their threads (and\n"
		"the threads they create) are switched into the concsched scheduler (partial\n"
		"switch: nothing else on the machine changes class), a noise strategy acts at\n"
		"their synchronization points, and the window's concurrency coverage is\n"
		"printed. The window ends at --duration, on Ctrl-C or SIGTERM, when the target\n"
		"exits or crashes, or when --check fails; then every thread goes back to the\n"
		"policy it had, every park is released and the probes go. Needs root, and\n"
		"sched_ext for a steering strategy (-s none only observes).\n\n"
		"Options:\n"
		"  -p, --pid PID          the process to attach to\n"
		"  --comm NAME            every process named NAME, also those starting later\n"
		"  --cgroup PATH          every process in this cgroup (v2) or below, also later\n"
		"  -s, --strategy S       random (default), a noise configuration (rnd-y:0.3,\n"
		"                         ...) or none; see docs/strategies.md\n"
		"  --seed N               the strategy's seed (default: from the clock)\n"
		"  --epoch SEC            a new configuration every SEC seconds (default 2)\n"
		"  --duration SEC         end the window after SEC seconds (default: Ctrl-C)\n"
		"  --check CMD            run `/bin/sh -c CMD` every --check-every seconds; a\n"
		"                         non-zero exit ends the window (e.g. a health probe)\n"
		"  --check-every SEC      (default 5)\n"
		"  --access               also probe the memory accesses of the program the\n"
		"                         (first) process runs: race warnings for the window,\n"
		"                         and each access a decision point of the strategy\n"
		"  --sites-include GLOB   --access: only sites in matching functions or files\n"
		"  --sites-exclude GLOB   --access: not these (both repeatable)\n"
		"  --steer-cap N          --access: each site's first N hits in the window are\n"
		"                         decision points, then 1 in 64 (default 500; 0: all)\n"
		"  --allow-other-users    also processes of other users than the invoking one\n"
		"  --json                 machine-readable output (docs/attach.md)\n"
		"  -o, --out DIR          also store the window as a campaign of one run in DIR\n"
		"                         (concsched report DIR)\n"
		"  -h, --help             this text\n\n"
		"Refused, one line each: PID 1, kernel threads, concsched itself, processes of\n"
		"other users (without --allow-other-users).\n\n"
		"Examples:\n"
		"  sudo concsched attach -p $(pidof mysrv) -s random --duration 30\n"
		"  sudo concsched attach --comm mysrv --duration 60 --check 'curl -sf "
		"localhost:8080/health'\n"
		"  sudo concsched attach --cgroup /sys/fs/cgroup/system.slice/mysrv.service\n"
		"  sudo concsched attach -p $(pidof mysrv) --access --sites-include 'conn_*' "
		"--duration 30\n\n"
		"Exit status: 0 the window ended (duration, signal, target exited), 1 the target\n"
		"crashed or --check failed, 2 usage or environment error.\n");
}

static int parse_args(struct attach_opts *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "comm", required_argument, NULL, 'c' },
		{ "cgroup", required_argument, NULL, 'g' },
		{ "strategy", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },
		{ "epoch", required_argument, NULL, 'E' },
		{ "duration", required_argument, NULL, 'd' },
		{ "check", required_argument, NULL, 'k' },
		{ "check-every", required_argument, NULL, 'K' },
		{ "allow-other-users", no_argument, NULL, 'u' },
		{ "access", no_argument, NULL, 'A' },
		{ "sites-include", required_argument, NULL, 'I' },
		{ "sites-exclude", required_argument, NULL, 'X' },
		{ "steer-cap", required_argument, NULL, 'C' },
		{ "json", no_argument, NULL, 'j' },
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool seed_set = false, every_set = false, cap_set = false;
	int c, nsel = 0;
	uint64_t v;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:s:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_u64(optarg, &v) || v == 0 || v > 0x7fffffff) {
				log_err("--pid %s: not a process id", optarg);
				return -EINVAL;
			}
			a->pid = (pid_t)v;
			nsel++;
			break;
		case 'c':
			if (!*optarg) {
				log_err("--comm: empty name");
				return -EINVAL;
			}
			a->comm = optarg;
			nsel++;
			break;
		case 'g':
			a->cgroup = optarg;
			nsel++;
			break;
		case 's':
			a->spec = optarg;
			break;
		case 'S':
			if (parse_u64(optarg, &a->seed)) {
				log_err("--seed %s: not a number", optarg);
				return -EINVAL;
			}
			seed_set = true;
			break;
		case 'E':
			if (parse_double(optarg, &a->epoch_s) || a->epoch_s < 0) {
				log_err("--epoch %s: not a number of seconds", optarg);
				return -EINVAL;
			}
			break;
		case 'd':
			if (parse_double(optarg, &a->duration_s) || a->duration_s <= 0) {
				log_err("--duration %s: not a positive number of seconds", optarg);
				return -EINVAL;
			}
			break;
		case 'k':
			a->check = optarg;
			break;
		case 'K':
			if (parse_double(optarg, &a->check_every_s) || a->check_every_s <= 0) {
				log_err("--check-every %s: not a positive number of seconds",
					optarg);
				return -EINVAL;
			}
			every_set = true;
			break;
		case 'u':
			a->allow_other = true;
			break;
		case 'A':
			a->access = true;
			break;
		case 'I':
			a->inc = xrealloc(a->inc, (a->ninc + 1) * sizeof(*a->inc));
			a->inc[a->ninc++] = optarg;
			break;
		case 'X':
			a->exc = xrealloc(a->exc, (a->nexc + 1) * sizeof(*a->exc));
			a->exc[a->nexc++] = optarg;
			break;
		case 'C':
			if (parse_u64(optarg, &a->steer_cap)) {
				log_err("--steer-cap %s: a number of hits (0: no cap)", optarg);
				return -EINVAL;
			}
			cap_set = true;
			break;
		case 'j':
			a->json = true;
			break;
		case 'o':
			a->dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		log_err("attach: unexpected argument '%s' (attach takes -p, --comm or --cgroup, "
			"not a program)",
			argv[optind]);
		return -EINVAL;
	}
	if (nsel != 1) {
		log_err("attach: give one of -p PID, --comm NAME or --cgroup PATH");
		return -EINVAL;
	}
	if (every_set && !a->check) {
		log_err("attach: --check-every goes with --check");
		return -EINVAL;
	}
	if ((a->ninc || a->nexc || cap_set) && !a->access) {
		log_err("attach: --sites-include, --sites-exclude and --steer-cap go with "
			"--access");
		return -EINVAL;
	}
	if (!seed_set)
		a->seed = now_realtime_ns();
	return 0;
}

int cmd_attach(int argc, char **argv)
{
	struct attach_opts o = {
		.spec = "random", .epoch_s = 2, .check_every_s = 5, .steer_cap = STEER_DEFAULT_CAP
	};
	int err = parse_args(&o, argc, argv), ret;

	if (err)
		ret = err > 0 ? 0 : EXIT_USAGE;
	else
		ret = attach_run(&o);
	free(o.inc);
	free(o.exc);
	return ret;
}
