// SPDX-License-Identifier: MIT
/*
 * clean_pipeline_ledger — race_pipeline_ledger with its missing lock
 * added: a producer/consumer pipeline of two streams (about 1.8 million
 * shared accesses per run) whose every ledger update is under
 * ledger_lock (pipeline_ledger.h has the program). No bug: correct under
 * every interleaving; exits 0, or aborts (assert) / exits 1.
 */
#define PROG	      "clean_pipeline_ledger"
#define FINISH_LOCKED 1
#include "pipeline_ledger.h"
