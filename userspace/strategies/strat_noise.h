/* SPDX-License-Identifier: MIT */
/*
 * The noise strategy (strat_noise.c) as a building block: a strategy that
 * searches over noise configurations (strat_ga.c) runs each one through a
 * noise strategy instance it configures before each run.
 */
#ifndef CONCSCHED_STRAT_NOISE_H
#define CONCSCHED_STRAT_NOISE_H

#include "strategies/noise.h"
#include "strategies/strategy.h"

/* The configuration s (a noise strategy instance) runs from its next
 * run_begin on. */
void strat_noise_configure(struct strategy *s, const struct noise_config *c);

/* A noise strategy instance running c, for a strategy to hold inside;
 * strat_noise_free releases it. */
struct strategy *strat_noise_new(const struct noise_config *c);
void strat_noise_free(struct strategy *s);

#endif
