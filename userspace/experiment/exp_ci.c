// SPDX-License-Identifier: MIT
/*
 * The CI files of an experiment directory (exp_ci.h): one suite, one SARIF
 * run, per cell (DIR/cells/NAME).
 */
#include "experiment/exp_ci.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiment/exp_index.h"
#include "results/report_ci.h"
#include "results/store.h"
#include "lib/log.h"
#include "lib/xalloc.h"

bool exp_ci_is_experiment(const char *dir)
{
	char *exp = xasprintf("%s/%s", dir, EXP_DB_NAME),
	     *camp = xasprintf("%s/%s", dir, STORE_DB_NAME);
	bool yes = access(exp, F_OK) == 0 && access(camp, F_OK) != 0;

	free(exp);
	free(camp);
	return yes;
}

/* Cell NAME of the experiment in DIR as a suite; 0, or -errno when the cell
 * holds no readable campaign (a cell not run yet: skipped). */
static int load_cell(const char *dir, const char *name, bool replay_vm,
		     struct report_ci_suite *suite)
{
	char *cdir = xasprintf("%s/cells/%s", dir, name);
	struct report_options ro = { .dir = cdir, .replay_vm = replay_vm };
	struct report *r = NULL;
	int err;

	memset(suite, 0, sizeof(*suite));
	err = store_open(cdir, true, &suite->store);
	if (!err)
		err = report_load(suite->store, &ro, &r);
	if (!err)
		suite->model = report_ci_model(r);
	if (!err && !suite->model)
		err = -EINVAL;
	report_free(r);
	if (err) {
		store_close(suite->store);
		suite->store = NULL;
		free(cdir);
		return err;
	}
	suite->name = xstrdup(name);
	free(cdir);
	return 0;
}

static int has_campaign(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

int exp_ci_write(const char *dir, const struct report_ci_files *out, bool replay_vm)
{
	char *cells = xasprintf("%s/cells", dir);
	struct report_ci_suite *suites;
	struct dirent **ents = NULL;
	size_t n = 0, failures = 0, i;
	int nents, k, ret;

	nents = scandir(cells, &ents, has_campaign, alphasort);
	if (nents < 0) {
		log_err("%s has no cells yet (%s: %s)", dir, cells, strerror(errno));
		free(cells);
		return EXIT_USAGE;
	}
	suites = xcalloc(nents ? nents : 1, sizeof(*suites));
	for (k = 0; k < nents; k++) {
		if (load_cell(dir, ents[k]->d_name, replay_vm, &suites[n]) == 0)
			failures += json_array_size(report_ci_array(suites[n++].model, "failures"));
		free(ents[k]);
	}
	free(ents);
	ret = report_ci_write(suites, n, out);
	if (!ret) {
		if (out->junit)
			printf("junit:     %s (%zu cells)\n", out->junit, n);
		if (out->sarif)
			printf("sarif:     %s (%zu cells)\n", out->sarif, n);
		ret = failures ? 1 : 0;
	}
	for (i = 0; i < n; i++) {
		json_decref(suites[i].model);
		store_close(suites[i].store);
		free((char *)suites[i].name);
	}
	free(suites);
	free(cells);
	return ret;
}
