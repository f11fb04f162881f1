// SPDX-License-Identifier: MIT
/* A strategy instance from its ops (strategy.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/xalloc.h"
#include "strategies/strategy.h"

int strategy_make(const struct strategy_ops *ops, const char *spec, const char *opts,
		  struct strategy **out, char *err, size_t errlen)
{
	struct strategy *s = xcalloc(1, sizeof(*s));
	int ret = 0;

	*out = NULL;
	s->ops = ops;
	s->spec = xstrdup(spec);
	s->flags = ops->flags;
	s->replay = ops->replay;
	if (ops->init)
		ret = ops->init(s, opts, err, errlen);
	else if (opts) {
		snprintf(err, errlen, "%s takes no options", ops->name);
		ret = -EINVAL;
	}
	if (ret) {
		strategy_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

void strategy_free(struct strategy *s)
{
	if (!s)
		return;
	if (s->ops->destroy)
		s->ops->destroy(s);
	free(s->spec);
	free(s);
}
