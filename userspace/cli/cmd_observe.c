// SPDX-License-Identifier: MIT
/*
 * concsched observe: run a program once (or watch a running process, or
 * the whole system) under the synchronization probes, with no scheduling
 * control, and report the concurrency coverage it showed — SP pairs,
 * GoodLock, HBPair, Sync — with sites, plus the thread model summary.
 * docs/observe.md describes the output and its JSON schema.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "cli/commands.h"
#include "run/observe.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/self.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: concsched observe [OPTIONS] -- PROG [ARGS...]\n"
		"       concsched observe [OPTIONS] -p PID\n"
		"       concsched observe [OPTIONS] --all [--comm NAME] [--cgroup PATH]\n\n"
		"Record the synchronization of a program with BPF uprobes on its pthread calls\n"
		"(mutex, rwlock, spinlock, condvar, semaphore, barrier, create/join/exit), with\n"
		"no scheduling control, and print the concurrency coverage it showed: SP pairs,\n"
		"GoodLock, HBPair and Sync tasks with their sites, and the thread model.\n"
		"Works on any kernel with uprobe_multi (no sched_ext needed). Needs root.\n\n"
		"Options:\n"
		"  --json             machine-readable output (schema: docs/observe.md)\n"
		"  -o, --output FILE  write the report to FILE instead of stdout\n"
		"  --follow-forks     also observe child processes of the target\n"
		"  -p, --pid PID      attach to a running process until it exits or Ctrl-C\n"
		"  --all              every process using this system's libc, until Ctrl-C\n"
		"  --comm NAME        with --all: only processes whose name is NAME\n"
		"  --cgroup PATH      with --all: only processes in this cgroup (v2) or below\n"
		"  --duration SEC     stop after SEC seconds (a launched target is killed)\n"
		"  -h, --help         this text\n\n"
		"Examples:\n"
		"  sudo concsched observe -- ./mytest --threads 4\n"
		"  sudo concsched observe --json -o cov.json -- ./mytest\n"
		"  sudo concsched observe -p $(pidof myservice)\n"
		"  sudo concsched observe --all --comm myservice --duration 10\n\n"
		"Exit status: 0 observed (whatever the target's own status), 2 usage or\n"
		"environment error.\n");
}

static int parse_args(struct observe *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "follow-forks", no_argument, NULL, 'f' },
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "comm", required_argument, NULL, 'c' },
		{ "cgroup", required_argument, NULL, 'g' },
		{ "duration", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->json = true;
			break;
		case 'o':
			o->out_path = optarg;
			break;
		case 'f':
			o->follow_forks = true;
			break;
		case 'a':
			o->mode = OBS_ALL;
			break;
		case 'c':
			o->comm = optarg;
			break;
		case 'g':
			o->cgroup = optarg;
			break;
		case 'p':
			if (parse_u64(optarg, &v) || v == 0 || v > 0x7fffffff) {
				log_err("--pid %s: not a process id", optarg);
				return -EINVAL;
			}
			o->mode = OBS_PID;
			o->pid = (pid_t)v;
			break;
		case 'd':
			if (parse_double(optarg, &o->duration_s) || o->duration_s <= 0) {
				log_err("--duration %s: not a positive number of seconds", optarg);
				return -EINVAL;
			}
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	o->argv = argv + optind;
	o->argc = argc - optind;
	if (o->mode == OBS_LAUNCH && o->argc == 0) {
		log_err("observe: no program given (concsched observe -- PROG ARGS, -p PID or "
			"--all)");
		return -EINVAL;
	}
	if (o->mode != OBS_LAUNCH && o->argc) {
		log_err("observe: give a program, -p PID or --all, not several");
		return -EINVAL;
	}
	if ((o->comm || o->cgroup) && o->mode != OBS_ALL) {
		log_err("observe: --comm and --cgroup go with --all");
		return -EINVAL;
	}
	if (o->mode == OBS_PID && !observe_pid_alive(o->pid)) {
		log_err("pid %d: no such process", (int)o->pid);
		return -ESRCH;
	}
	return 0;
}

int cmd_observe(int argc, char **argv)
{
	struct observe o = { .exit_status = -1 };
	int err;

	err = parse_args(&o, argc, argv);
	if (err)
		return err > 0 ? 0 : EXIT_USAGE;
	if (geteuid() != 0) {
		log_err("observe needs root to load BPF probes (try: %s observe ...)",
			self_command(true));
		return EXIT_USAGE;
	}
	return observe_run(&o);
}
