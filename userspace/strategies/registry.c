// SPDX-License-Identifier: MIT
/*
 * The strategy registry (registry.h). Adding a strategy: its file in
 * strategies/ defines `const struct strategy_ops strat_NAME_ops`, and one
 * line below names it (docs/DESIGN.md "Adding a strategy"). The catch-all
 * (STRAT_F_ANY_NAME) is tried after every exact name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "strategies/registry.h"

#define CS_STRATEGIES(X)                                                                           \
	X(strat_none_ops)                                                                          \
	X(strat_random_ops)                                                                        \
	X(strat_tsa_ops)                                                                           \
	X(strat_tsa_h_ops)                                                                         \
	X(strat_map_ops)                                                                           \
	X(strat_pct_ops)                                                                           \
	X(strat_ga_ops)                                                                            \
	X(strat_fpair_ops)                                                                         \
	X(strat_portfolio_ops)                                                                     \
	X(strat_noise_ops)

#define DECLARE(ops) extern const struct strategy_ops ops;
#define ENTRY(ops)   &ops,
CS_STRATEGIES(DECLARE)
static const struct strategy_ops *const registry[] = { CS_STRATEGIES(ENTRY) };

size_t strategy_list(const struct strategy_ops *const **out)
{
	*out = registry;
	return ARRAY_SIZE(registry);
}

/* The name part of "NAME:OPTIONS" matches exactly. */
static bool name_matches(const char *name, const char *spec)
{
	size_t n = strlen(name);

	return !strncmp(spec, name, n) && (spec[n] == 0 || spec[n] == ':');
}

const struct strategy_ops *strategy_lookup(const char *spec)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(registry); i++)
		if (!(registry[i]->flags & STRAT_F_ANY_NAME) &&
		    name_matches(registry[i]->name, spec))
			return registry[i];
	for (i = 0; i < ARRAY_SIZE(registry); i++)
		if (registry[i]->flags & STRAT_F_ANY_NAME)
			return registry[i];
	return NULL;
}

int strategy_new(const char *spec, struct strategy **out, char *err, size_t errlen)
{
	const struct strategy_ops *ops = strategy_lookup(spec);
	const char *opts = NULL;

	*out = NULL;
	if (!ops) {
		snprintf(err, errlen, "no such strategy");
		return -EINVAL;
	}
	if (ops->flags & STRAT_F_ANY_NAME)
		opts = spec;
	else if (spec[strlen(ops->name)] == ':')
		opts = spec + strlen(ops->name) + 1;
	return strategy_make(ops, spec, opts, out, err, errlen);
}
