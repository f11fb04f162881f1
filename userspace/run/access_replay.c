// SPDX-License-Identifier: MIT
/*
 * `run --access` (access.c) on replay: the filters and the probed-site mask
 * of a stored run, read back from its JSON configuration.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "run/access.h"
#include "run/access_state.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/xalloc.h"

/* The array "key" inside the JSON object text obj (flat arrays only). */
static int json_sub_array(const char *obj, const char *key, char ***out, size_t *n)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(obj, pat);
	if (!p) {
		*out = NULL;
		*n = 0;
		return 0;
	}
	return json_parse_string_array(p + strlen(pat), out, n);
}

int access_replay_setup(struct campaign *c, const char *cfg)
{
	const char *obj = cfg ? strstr(cfg, "\"access\":") : NULL;
	struct access_campaign *ac;
	struct run_opts *o = c->o;
	char *sites = NULL;
	int64_t cand = -1, cap = 0;
	int err;

	if (!obj)
		return 0;
	obj = strchr(obj, '{');
	if (!obj)
		return -EINVAL;
	ac = xcalloc(1, sizeof(*ac));
	c->acc = ac;
	cov_event_u64map_init(&ac->var_index);
	if (json_sub_array(obj, "include", &ac->inc, &ac->ninc) ||
	    json_sub_array(obj, "exclude", &ac->exc, &ac->nexc) ||
	    json_sub_array(obj, "objects", &ac->objs, &ac->nobjs) ||
	    json_get_int(obj, "candidates", &cand) || !(sites = json_get_string(obj, "sites"))) {
		log_err("the run's access configuration is unreadable");
		return -EINVAL;
	}
	o->sites.include = (const char **)ac->inc;
	o->sites.ninclude = ac->ninc;
	o->sites.exclude = (const char **)ac->exc;
	o->sites.nexclude = ac->nexc;
	o->site_objects = (const char **)ac->objs;
	o->nsite_objects = ac->nobjs;
	o->access = true;
	/* The run's steering cap (runs from before it had none). */
	o->steer_cap = json_get_int(obj, "steer_cap", &cap) || cap < 0 ? 0 : (uint64_t)cap;
	/* And its probe cap (runs from before it had none). */
	o->probe_cap = json_get_int(obj, "probe_cap", &cap) || cap < 0 ? 0 : (uint64_t)cap;
	/* And its probe budget (runs from before it had none). */
	o->probe_budget = json_get_int(obj, "probe_budget", &cap) || cap < 0 ? 0 : (uint64_t)cap;
	err = access_collect_sites(c, ac);
	if (!err && (int64_t)ac->set.n != cand) {
		log_err("the program now has %zu candidate access sites, the run had %" PRId64
			": cannot probe the same sites (the program changed, or this concsched "
			"finds sites otherwise than the one that made the run)",
			ac->set.n, cand);
		err = -ESTALE;
	}
	if (!err) {
		ac->site_id = xcalloc(ac->set.n, sizeof(*ac->site_id));
		ac->shared_site = xcalloc(ac->set.n, sizeof(*ac->shared_site));
		err = access_mask_parse(sites, ac->shared_site, ac->set.n);
		if (err)
			log_err("the run's access site list is unreadable");
	}
	free(sites);
	if (err)
		return err;
	for (size_t i = 0; i < ac->set.n; i++)
		ac->nshared_sites += ac->shared_site[i];
	c->sess.aset = &ac->set;
	c->sess.aprog = c->ti.path;
	c->sess.steer_cap = o->steer_cap;
	c->sess.probe_cap = o->probe_cap;
	c->sess.probe_budget = o->probe_budget;
	return 0;
}

const bool *access_replay_mask(const struct campaign *c)
{
	return c->acc && c->acc->nshared_sites ? c->acc->shared_site : NULL;
}
