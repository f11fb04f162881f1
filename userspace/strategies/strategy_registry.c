// SPDX-License-Identifier: MIT
/*
 * The strategy registry (strategy_registry.h). Adding a strategy: its file in
 * strategies/ defines `const struct strategy_ops strat_NAME_ops`, and one
 * line below names it (docs/DESIGN.md "Adding a strategy"). The catch-all
 * (STRAT_F_ANY_NAME) is tried after every exact name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/array_size.h"
#include "strategies/strategy_registry.h"

#define CS_STRATEGIES(X)                                                                           \
	X(strat_noise_none_ops)                                                                    \
	X(strat_noise_random_ops)                                                                  \
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

#define LIST_INDENT 24 /* the column of `run --help`'s option texts */
#define LIST_WIDTH  80

/* text from column col on, wrapped at word boundaries to LIST_WIDTH, the
 * continuation lines at LIST_INDENT. */
static void print_wrapped(FILE *f, const char *text, int col)
{
	while (*text) {
		int room = LIST_WIDTH - col, n = (int)strlen(text), cut = n;

		if (n > room) {
			for (cut = room; cut > 0 && text[cut] != ' '; cut--)
				;
			if (cut == 0) /* one word longer than the line */
				for (cut = room; text[cut] && text[cut] != ' '; cut++)
					;
		}
		fprintf(f, "%.*s\n", cut, text);
		text += cut;
		while (*text == ' ')
			text++;
		if (*text)
			fprintf(f, "%*s", LIST_INDENT, "");
		col = LIST_INDENT;
	}
}

void strategy_list_print(FILE *f, const char *dflt)
{
	char head[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(registry); i++) {
		const struct strategy_ops *ops = registry[i];
		const char *syn = ops->synopsis ? ops->synopsis : ops->name;
		int col;

		snprintf(head, sizeof(head), "  %s%s", syn,
			 dflt && !strcmp(dflt, ops->name) ? " (default)" : "");
		col = fprintf(f, "%s", head);
		if (col + 2 > LIST_INDENT) {
			fprintf(f, "\n%*s", LIST_INDENT, "");
			col = LIST_INDENT;
		} else {
			col += fprintf(f, "%*s", LIST_INDENT - col, "");
		}
		print_wrapped(f, ops->summary, col);
	}
}

/* "none, random, ..., or NOISE-SYNOPSIS": the names an unknown one gets. */
static void registry_names(char *buf, size_t len)
{
	const char *catch_all = NULL;
	size_t i, used = 0;

	buf[0] = 0;
	for (i = 0; i < ARRAY_SIZE(registry) && used < len; i++) {
		if (registry[i]->flags & STRAT_F_ANY_NAME) {
			catch_all = registry[i]->synopsis;
			continue;
		}
		used += snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
				 registry[i]->name);
	}
	if (catch_all && used < len)
		snprintf(buf + used, len - used, ", or a noise configuration %s", catch_all);
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

	char names[400];
	int rc;

	*out = NULL;
	if (ops && (ops->flags & STRAT_F_ANY_NAME))
		opts = spec;
	else if (ops && spec[strlen(ops->name)] == ':')
		opts = spec + strlen(ops->name) + 1;
	rc = ops ? strategy_make(ops, spec, opts, out, err, errlen) : -EINVAL;
	/* Not a name and not shaped like a noise configuration (PLACEMENT@...
	 * or rnd-...): the user wants the list, not the noise parser's view. */
	if (rc && (!ops || ((ops->flags & STRAT_F_ANY_NAME) && !strchr(spec, '@') &&
			    strncasecmp(spec, "rnd-", 4)))) {
		registry_names(names, sizeof(names));
		snprintf(err, errlen, "no such strategy; one of %s", names);
	}
	return rc;
}
