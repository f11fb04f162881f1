// SPDX-License-Identifier: MIT
/* The thread model as seed 000's model (tsa_model.h). */
#include <limits.h>

#include "strategies/tsa_model.h"

static uint32_t action_site(const struct site_resolver *res, const struct tm_thread *t,
			    uint64_t addr, tsa_site_of_fn site_of, void *ctx)
{
	struct site_ref s;
	char key[PATH_MAX + 32];
	int64_t id;

	if (syncov_resolve(res, t->tgid, t->gen, addr, &s) || !s.object)
		return 0;
	id = site_of(ctx, syncov_site_key(&s, key, sizeof(key)));
	return id > 0 && id <= UINT32_MAX ? (uint32_t)id : 0;
}

/* Lock acquisitions of every thread, with the locks held when each began
 * and the creation precedence. Thread i of the model is thread i of tm. */
static int model_from_run(const struct thread_model *tm, const struct site_resolver *res,
			  tsa_site_of_fn site_of, void *ctx, struct tsa_model *m)
{
	uint64_t set[CS_LOCKSET_MAX];
	size_t i, a;
	int err;

	for (i = 0; i < tm->nthreads; i++) {
		const struct tm_thread *t = &tm->threads[i];
		int32_t creator = t->creator >= 0 && (size_t)t->creator < i ? t->creator : -1;

		err = tsa_estimate_model_add_thread(m, creator, creator >= 0 ? t->create_pos : 0);
		if (err < 0)
			return err;
		for (a = 0; a < t->nactions; a++) {
			const struct tm_action *x = &t->actions[a];
			uint64_t lock;
			uint32_t site, n = 0, j;

			if (!thread_model_op_is_acquire(x->op))
				continue;
			site = action_site(res, t, x->site, site_of, ctx);
			if (!site)
				continue;
			lock = thread_model_action_lock(x->op, x->obj, x->arg);
			for (j = 0; j < x->nlockset && j < CS_LOCKSET_MAX; j++)
				if (x->lockset[j] != lock)
					set[n++] = x->lockset[j];
			err = tsa_estimate_model_add_lock(m, (uint32_t)i, site, lock, set, n);
			if (err)
				return err;
		}
	}
	return 0;
}

static void stats_add(struct tsa_estimate_stats *to, const struct tsa_estimate_stats *s)
{
	to->lock_actions += s->lock_actions;
	to->classes += s->classes;
	to->candidates += s->candidates;
	to->accepted_ac1 += s->accepted_ac1;
	to->rejected_ac2 += s->rejected_ac2;
	to->rejected_ac3 += s->rejected_ac3;
	to->rejected_ac4 += s->rejected_ac4;
}

int tsa_model_estimate(const struct thread_model *tm, const struct site_resolver *res,
		       tsa_site_of_fn site_of, void *ctx, struct tsa_pairset *out,
		       struct tsa_estimate_stats *st)
{
	struct tsa_estimate_stats one = { 0 };
	struct tsa_model m;
	int err;

	tsa_estimate_model_init(&m);
	err = model_from_run(tm, res, site_of, ctx, &m);
	if (!err)
		err = tsa_estimate(&m, out, &one);
	stats_add(st, &one);
	tsa_estimate_model_free(&m);
	return err;
}
