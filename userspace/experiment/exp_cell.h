/* SPDX-License-Identifier: MIT */
/*
 * Running an experiment's cells. Each cell is one campaign made by this
 * very binary (/proc/self/exe run ...), so every `run` option behaves as it
 * does on the command line; its campaign.db is then read to fill the cell's
 * row of the experiment index. The campaign stops at its first failure
 * (no --keep-going): runs and seconds to the first failure are what the
 * report compares.
 */
#ifndef CONCSCHED_EXP_CELL_H
#define CONCSCHED_EXP_CELL_H

#include "experiment/exp_index.h"
#include "experiment/exp_spec.h"

struct exp_run_options {
	const char *dir; /* experiment directory */
	unsigned shard_i, shard_n;
	bool quiet;
};

/* Run every cell of the shard that is not done yet. Returns 0 when all
 * are done, 130 when interrupted (SIGINT/SIGTERM; the cell in flight is
 * redone on resume), -errno on an error (one line printed). */
int exp_cell_run(const struct exp_spec *s, struct exp_index *x, const struct exp_run_options *o);
/* The `concsched run` arguments of a cell (NULL-terminated, argv[0] is
 * exe); free with exp_cell_argv_free. */
char **exp_cell_argv(const struct exp_spec *s, const struct exp_cell *c, const char *exe,
		     const char *out);
void exp_cell_argv_free(char **argv);
/* Fill r's results from the campaign in dir (read-only). */
int exp_cell_read_campaign(const char *dir, struct exp_cell_row *r);

#endif
