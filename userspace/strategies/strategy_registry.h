/* SPDX-License-Identifier: MIT */
/*
 * The strategy registry: names (`none`, `random`, `tsa`, `tsa-h`, `map`, a
 * noise configuration string...) to ops (strategies/strategy.h), and the
 * wrappers the campaign puts around a strategy: --serial and replay.
 */
#ifndef CONCSCHED_STRATEGY_REGISTRY_H
#define CONCSCHED_STRATEGY_REGISTRY_H

#include <stddef.h>
#include <stdio.h>

#include "strategies/strategy.h"

/* The ops a strategy string names ("tsa", "rnd-y:0.3", "pct:3"): an exact
 * name before any ':', else the catch-all (STRAT_F_ANY_NAME). NULL when
 * nothing takes it. */
const struct strategy_ops *strategy_lookup(const char *spec);
/* Every registered ops, in registry order. */
size_t strategy_list(const struct strategy_ops *const **out);
/* The registry as `run --help` shows it: a line per strategy, its synopsis
 * and its summary wrapped to 80 columns, dflt marked "(default)". */
void strategy_list_print(FILE *f, const char *dflt);

/* A strategy from a --strategy string: 0, or -EINVAL with a one-line
 * reason in err; a name that nothing takes gets the registry's names. */
int strategy_new(const char *spec, struct strategy **out, char *err, size_t errlen);

#endif
