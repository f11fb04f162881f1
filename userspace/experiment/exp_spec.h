/* SPDX-License-Identifier: MIT */
/*
 * Experiment SPEC (docs/experiment.md): programs x strategies x seeds, a
 * budget per campaign and where to run, read from JSON with jansson. The
 * cells are enumerated in spec order (programs, then strategies, then
 * seeds), which is what makes --shard I/N deterministic: shard I takes the
 * cells whose index % N == I-1.
 */
#ifndef CONCSCHED_EXP_SPEC_H
#define CONCSCHED_EXP_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct exp_program {
	char *name; /* cell directory component; defaults to the path's basename */
	char *path; /* absolute (relative paths are resolved against the spec's folder) */
	char **args;
	size_t nargs;
	int expect_exit;
	double run_timeout; /* seconds, 0: run's default */
	bool access;
	char **sites_include; /* --sites-include GLOB each */
	size_t nsites_include;
};

struct exp_strategy {
	char *name;	/* label in reports; defaults to spec */
	char *spec;	/* the -s value */
	char **options; /* extra `concsched run` options, verbatim */
	size_t noptions;
};

struct exp_spec {
	struct exp_program *programs;
	size_t nprograms;
	struct exp_strategy *strategies;
	size_t nstrategies;
	uint64_t *seeds;
	size_t nseeds;
	uint64_t budget_runs; /* -n; 0: not limited by runs */
	double budget_s;      /* --time; 0: not limited by time */
	bool vm;
	int vm_cpus;	 /* 0: default */
	char *canonical; /* the spec as compact JSON with sorted keys */
	char hash[17];	 /* FNV-1a of canonical: shards of one experiment share it */
};

/* One cell: indices into the spec's arrays. */
struct exp_cell {
	size_t index; /* position in spec order */
	size_t program, strategy, seed;
};

/* Parse SPEC file `path`. On error prints one line (log_err: file, and for
 * invalid JSON jansson's line and column) and returns -EINVAL / -errno. */
int exp_spec_load(const char *path, struct exp_spec *out);
void exp_spec_free(struct exp_spec *s);
size_t exp_spec_ncells(const struct exp_spec *s);
void exp_spec_cell(const struct exp_spec *s, size_t index, struct exp_cell *c);
/* "program-strategy-seed", safe as a directory name; malloc'd. */
char *exp_spec_cell_name(const struct exp_spec *s, const struct exp_cell *c);
/* Parse "I/N" (1 <= I <= N). */
int exp_spec_shard_parse(const char *arg, unsigned *i, unsigned *n);
static inline bool exp_shard_has(unsigned i, unsigned n, size_t index)
{
	return n <= 1 || index % n == i - 1;
}

#endif
