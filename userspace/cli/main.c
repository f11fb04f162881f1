// SPDX-License-Identifier: MIT
/*
 * concsched — find concurrency bugs in uninstrumented multithreaded programs
 * by steering their thread interleavings from the kernel (uprobes measure
 * concurrency coverage, a sched_ext scheduler pauses/resumes/delays threads).
 * This file only dispatches subcommands; see DESIGN.md in docs/.
 */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "lib/array_size.h"
#include "lib/crash.h"
#include "lib/log.h"

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{ "run", cmd_run, "find concurrency bugs: repeat a program under steered interleavings" },
	{ "replay", cmd_replay, "re-execute a recorded run of a campaign: replay DIR --run N" },
	{ "minimize", cmd_minimize,
	  "shrink a failing run to its fewest preemptions: minimize DIR --run N" },
	{ "estimate", cmd_estimate,
	  "estimate a program's synchronization-pair requirements (seed 000)" },
	{ "doctor", cmd_doctor, "check whether this machine can run concsched (or needs --vm)" },
	{ "observe", cmd_observe,
	  "run a program once under the sync probes: coverage + thread model" },
	{ "attach", cmd_attach,
	  "perturb and observe running processes: attach -p PID -s random --duration 20" },
	{ "report", cmd_report, "summarise a campaign directory (text, --json, --html FILE)" },
	{ "merge", cmd_merge, "combine campaigns of the same program: merge A B -o C" },
	{ "experiment", cmd_experiment,
	  "strategies x programs x seeds with statistics: experiment run SPEC -o DIR" },
	{ "sites", cmd_sites,
	  "list memory-access sites of a program; --shared: find shared variables" },
	{ "vm", cmd_vm, "run a command in a qemu VM with a sched_ext kernel" },
	{ "sched", cmd_sched,
	  "run a program once under the scheduler with a manual park/delay policy" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: concsched [--verbose] COMMAND [OPTIONS] [-- PROG ARGS...]\n\n"
		   "Find concurrency bugs in uninstrumented multithreaded programs by steering\n"
		   "their thread interleavings from the kernel (BPF uprobes + sched_ext).\n\n"
		   "Commands:\n");
	for (i = 0; i < ARRAY_SIZE(subcommands); i++)
		fprintf(f, "  %-10s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(f,
		"\nExamples:\n"
		"  sudo concsched run -- ./prog        # a campaign until coverage saturates\n"
		"  sudo concsched run --vm -- ./prog   # the same on a kernel without sched_ext\n"
		"  sudo concsched replay camp --run 7  # re-execute a failing run\n"
		"  sudo concsched doctor              # what works on this machine\n"
		"  sudo concsched observe -- ./prog    # locks, pairs and threads of one run\n"
		"  sudo concsched attach -p $(pidof srv) --duration 20   # steer a live service\n"
		"  concsched report camp --html camp.html   # campaign summary + charts\n"
		"  concsched merge host1/camp host2/camp -o all   # pool campaigns\n"
		"  sudo concsched experiment run spec.json -o exp   # then experiment report exp\n"
		"  concsched sites ./prog             # load/store sites per function\n"
		"  concsched vm -- uname -r           # a command under the sched_ext VM kernel\n"
		"  sudo concsched sched --park-at f -- ./prog   # park threads at f()\n"
		"\n'concsched COMMAND --help' describes each command; man concsched has the "
		"rest.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	crash_report_install();
	while (argc > 1 && argv[1][0] == '-') {
		if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
			printf("concsched %s\n", CONCSCHED_VERSION);
			return 0;
		}
		if (!strcmp(argv[1], "--verbose") || !strcmp(argv[1], "-v")) {
			log_verbose++;
			argc--;
			argv++;
			continue;
		}
		log_err("unknown option '%s' (see concsched --help)", argv[1]);
		return EXIT_USAGE;
	}
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "version")) {
		printf("concsched %s\n", CONCSCHED_VERSION);
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(subcommands); i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].fn(argc - 1, argv + 1);
	log_err("unknown command '%s' (see concsched --help)", argv[1]);
	return EXIT_USAGE;
}
