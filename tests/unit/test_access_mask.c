// SPDX-License-Identifier: MIT
/*
 * The sites a run probes (access.c access_run_begin, access_run_mask) and the "sites" its
 * configuration records for replay (access_commit.c access_run_config_json)
 * are one choice: every candidate in an estimation or exploration run, the
 * rotation's set when it left a variable out, else the shared sites.
 *
 * A hand-built campaign (it needs run/access_state.h): 6 candidates, site
 * ids 100..105; shared variable v7 (sites 1 and 2) with 400 accesses an
 * estimation run, v9 (site 4) with 10. Seed 42, --probe-budget 400 with a
 * probe cap: share 100, so v7 is probed in one run of 4, runs 3 and 7
 * (test_access_rotate.c works the runs out), and v9 in every run. Run 4 is
 * an exploration run (access.h: every ACCESS_EXPLORE_EARLY-th up to
 * ACCESS_EXPLORE_FIRST).
 */
#include <stdlib.h>
#include <string.h>

#include "run/access.h"
#include "run/access_state.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "tap.h"

#define NCAND 6

static struct access_campaign ac;
static struct run_opts o;
static struct campaign c;

static void campaign_make(void)
{
	static const bool shared[NCAND] = { false, true, true, false, true, false };
	static uint32_t v7_reads[] = { 101 }, v7_writes[] = { 102 }, v9_reads[] = { 104 };
	static int64_t site_id[NCAND];
	static bool shared_site[NCAND];
	static struct acc_var vars[2];

	for (int i = 0; i < NCAND; i++) {
		site_id[i] = 100 + i;
		shared_site[i] = shared[i];
	}
	vars[0] = (struct acc_var){ .id = 7, .name = "v7", .shared = true, .est_accesses = 400 };
	vars[0].reads = v7_reads;
	vars[0].nreads = 1;
	vars[0].writes = v7_writes;
	vars[0].nwrites = 1;
	vars[1] = (struct acc_var){ .id = 9, .name = "v9", .shared = true, .est_accesses = 10 };
	vars[1].reads = v9_reads;
	vars[1].nreads = 1;
	ac.set.n = NCAND;
	ac.site_id = site_id;
	ac.shared_site = shared_site;
	ac.nshared_sites = 3;
	ac.vars = vars;
	ac.nvars = 2;
	ac.est_runs = 1;
	o.seed = 42;
	o.probe_cap = 1000;
	o.probe_budget = 400;
	c.o = &o;
	c.acc = &ac;
}

/* The "sites" of the run's configuration (the "access" object's). */
static char *config_sites(struct onerun *r)
{
	struct json_mem m;
	char *cfg, *sites;
	const char *obj;

	json_mem_open(&m);
	json_obj_begin(&m.j, NULL);
	access_run_config_json(&c, r, &m.j);
	json_obj_end(&m.j);
	cfg = json_mem_close(&m);
	obj = strstr(cfg, "\"access\":");
	obj = obj ? strchr(obj, '{') : NULL;
	sites = obj ? json_get_string(obj, "sites") : NULL;
	free(cfg);
	return sites;
}

/* Run number run (estimate: an estimation run) begins: the mask it probes
 * is want (NULL: every candidate) and its "sites" is want_sites, which
 * reads back (access_replay.c) as the same mask. */
static void check_run(int64_t run, bool estimate, const bool *want, const char *want_sites,
		      const char *what)
{
	struct onerun *r = xcalloc(1, sizeof(*r));
	bool back[NCAND];
	char *sites;
	int same = 1;

	c.nstarted = run;
	access_run_begin(&c, r, estimate);
	for (int i = 0; i < NCAND; i++)
		same &= (r->access_mask ? r->access_mask[i] : true) == (want ? want[i] : true);
	tap_ok(r->access_on && same && !r->access_mask == !want, "%s: the probed mask", what);
	sites = config_sites(r);
	tap_is_str(sites, want_sites, "%s: its \"sites\"", what);
	same = sites && !access_mask_parse(sites, back, NCAND);
	for (int i = 0; same && i < NCAND; i++)
		same &= back[i] == (r->access_mask ? r->access_mask[i] : true);
	tap_ok(same, "%s: \"sites\" reads back as the probed mask", what);
	free(sites);
	access_run_free(r);
	free(r);
}

int main(void)
{
	static const bool plain[NCAND] = { false, true, true, false, true, false };
	static const bool rotated[NCAND] = { false, false, false, false, true, false };
	static const bool explore_rotated[NCAND] = { true, false, false, true, true, true };

	tap_plan(19);
	campaign_make();
	check_run(0, true, NULL, "0-5", "estimation run: every candidate");
	check_run(3, false, plain, "1-2,4", "run 3 (v7's turn): the shared sites");
	check_run(5, false, rotated, "4", "run 5 (v7 rotated out): v9's site only");
	check_run(4, false, explore_rotated, "0,3-5",
		  "run 4 (exploration, v7 rotated out): every candidate but v7's");
	o.probe_cap = 0; /* no probe cap: no budget, no rotation */
	check_run(5, false, plain, "1-2,4", "run 5, no rotation: the shared sites");
	check_run(8, false, NULL, "0-5", "run 8 (exploration), no rotation: every candidate");
	/* A run without access probes (a portfolio synchronization arm's:
	 * access_run_begin not called) probed none, and says so. */
	{
		struct onerun *r = xcalloc(1, sizeof(*r));
		char *sites = config_sites(r);

		tap_is_str(sites, "", "a run without access probes: its \"sites\" is empty");
		free(sites);
		free(r);
	}
	return tap_done();
}
