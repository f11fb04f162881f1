/* SPDX-License-Identifier: MIT */
/*
 * Replay of a recorded run from its decision log, the way the recorded
 * strategy's ops say (enum strat_replay): the logged decision at the logged
 * point (noise), the logged releases in logged order at all-parked notes
 * (tsa, and every run recorded with --serial, where every point waits), or
 * the logged points one at a time, each once the one before ran (map).
 */
#ifndef CONCSCHED_REPLAY_STRATEGY_H
#define CONCSCHED_REPLAY_STRATEGY_H

#include "lib/declog.h"
#include "strategies/strategy.h"

/* The log must outlive the strategy. */
struct strategy *strategy_replay_new(const struct strategy_ops *recorded,
				     enum cs_serial_mode serial, struct declog *log);

#endif
