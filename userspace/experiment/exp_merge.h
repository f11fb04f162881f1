/* SPDX-License-Identifier: MIT */
/*
 * Merging experiment directories: shards of one spec (same hash), each
 * run with --shard I/N somewhere, become one directory whose index and
 * cells/ hold every done cell, as if it had run unsharded.
 */
#ifndef CONCSCHED_EXP_MERGE_H
#define CONCSCHED_EXP_MERGE_H

#include "experiment/exp_index.h"

/* Copy src's done cells (rows, campaign directories, logs) that dst lacks
 * as done. Returns the number of cells added, -EXDEV when the spec hashes
 * differ (one line), -errno otherwise (one line). */
int exp_merge(struct exp_index *dst, const char *dst_dir, struct exp_index *src,
	      const char *src_dir);

#endif
