/* SPDX-License-Identifier: MIT */
/* concsched replay (replay.c). */
#ifndef CONCSCHED_CAMPAIGN_REPLAY_H
#define CONCSCHED_CAMPAIGN_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

struct replay_opts {
	const char *dir;
	int64_t run;
	uint64_t times;
	double run_timeout_s;
	bool json, vm;
	bool decisions_only; /* --decisions: not the recorded order */
};

/* Replay run ro->run of campaign ro->dir ro->times times; argv: the
 * command line, passed on to the VM with --vm. The exit status: 1 it
 * failed again at least once, 0 it passed every time, 2 an error. */
int replay_run(const struct replay_opts *ro, int argc, char **argv);

#endif
