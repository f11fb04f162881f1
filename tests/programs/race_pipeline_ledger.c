// SPDX-License-Identifier: MIT
/*
 * race_pipeline_ledger — a producer/consumer pipeline with about 1.8
 * million shared accesses per run whose bug is one missing lock on the
 * shared bookkeeping (pipeline_ledger.h has the program). Each consumer
 * adds its blocks to the ledger in batches under ledger_lock, except for
 * the last batch of its stream: consumer_finish() adds it without the
 * lock. The short stream's consumer finishes while the long stream's
 * consumer is still adding batches, and its unlocked load and store of
 * blocks_out must straddle the other's locked update for a batch to be
 * lost (main then exits 1). Natively the two updates are a few nanoseconds
 * each, a batch apart (8 blocks, tens of microseconds): a plain run
 * practically always exits 0. A pause of the finishing consumer between
 * its load and its store while the other flushes opens the window.
 * clean_pipeline_ledger is the same program with the lock.
 */
#define PROG	      "race_pipeline_ledger"
#define FINISH_LOCKED 0
#include "pipeline_ledger.h"
