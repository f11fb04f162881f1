/* SPDX-License-Identifier: MIT */
/*
 * Experiment index: DIR/experiment.db, one SQLite database (WAL) per
 * experiment directory. Table meta holds the spec (canonical JSON) and its
 * hash; table cells one row per cell this directory ran or merged:
 *   idx (position in spec order), program, strategy, seed, shard ("I/N" that
 *   ran it), status (running | done | error), runs (committed runs),
 *   first_failure_run and first_failure_s (NULL: censored, no failure within
 *   the budget), seconds (target time of the campaign: first run's start to
 *   last run's end), saturated_at_run (stopping metric; NULL none),
 *   coverage (JSON object metric -> covered tasks), dir (cells/NAME).
 * A cell is "running" from before its campaign starts until its row is
 * filled in; resume redoes every cell that is not "done".
 */
#ifndef CONCSCHED_EXP_INDEX_H
#define CONCSCHED_EXP_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#define EXP_DB_NAME "experiment.db"

struct exp_index;

struct exp_cell_row {
	int64_t idx;
	char *program, *strategy;
	uint64_t seed;
	char *shard;
	char *status;
	int64_t runs;
	int64_t first_failure_run; /* -1: censored */
	double first_failure_s;	   /* < 0: censored */
	double seconds;
	int64_t saturated_at_run; /* -1: never */
	char *coverage;		  /* JSON object */
	char *dir;
};

/* Create DIR/experiment.db for a spec, or open it; an existing index of
 * another spec (hash) is refused with one line (-EEXIST). */
int exp_index_open(const char *dir, const char *spec_hash, const char *spec_json,
		   struct exp_index **out);
/* An existing index (report, merge); read_only for report. -ENOENT when
 * DIR has no experiment.db (one line). */
int exp_index_open_existing(const char *dir, bool read_only, struct exp_index **out);
void exp_index_close(struct exp_index *x);
/* Malloc'd meta value, NULL when unset. */
char *exp_index_meta(struct exp_index *x, const char *key);
/* Is cell idx done? */
bool exp_index_cell_done(struct exp_index *x, int64_t idx);
/* Insert or replace the cell's row. */
int exp_index_put(struct exp_index *x, const struct exp_cell_row *r);
/* Every cell in idx order; free with exp_index_cell_rows_free. */
int exp_index_cells(struct exp_index *x, struct exp_cell_row **rows, size_t *n);
void exp_index_cell_rows_free(struct exp_cell_row *rows, size_t n);

#endif
