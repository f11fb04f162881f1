/* SPDX-License-Identifier: MIT */
/*
 * Replay of a recorded run from its decision log, the way the recorded
 * strategy's ops say (enum strat_replay): the logged decision at the logged
 * point (noise), the logged releases in logged order at all-parked notes
 * (tsa, and every run recorded with --serial, where every point waits), or
 * the logged points one at a time, each once the one before ran (map).
 * A parallel noise run whose log holds its observed schedule (the
 * DECLOG_PASS entries: the order in which threads went on from their
 * points) is replayed in that order instead, in serial mode: every point
 * waits, and at each all-parked note the thread whose pass comes next goes
 * (issue 14); decisions_only keeps the old way (the logged decisions only,
 * the order left to timing).
 */
#ifndef CONCSCHED_STRATEGY_REPLAY_H
#define CONCSCHED_STRATEGY_REPLAY_H

#include "lib/declog.h"
#include "strategies/strategy.h"

/* The log must outlive the strategy. */
struct strategy *strategy_replay_new(const struct strategy_ops *recorded,
				     enum cs_serial_mode serial, struct declog *log,
				     bool decisions_only);
/* How many points the replay follows in the recorded order; 0 when it
 * does not (the enforced order is off). */
size_t strategy_replay_enforced(const struct strategy *s);

#endif
