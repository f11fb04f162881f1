// SPDX-License-Identifier: MIT
/* `concsched report DIR --junit FILE --sarif FILE` (report_ci.h). */
#include "cli/cmd_report_ci.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/report_junit.h"
#include "results/report_sarif.h"
#include "experiment/exp_index.h"
#include "lib/util.h"

int report_ci_open(const char *dir, struct store **s)
{
	char *db = xasprintf("%s/%s", dir, STORE_DB_NAME);
	bool rw = access(dir, W_OK) == 0 && access(db, W_OK) == 0;

	free(db);
	return store_open(dir, !rw, s);
}

bool report_ci_is_experiment(const char *dir)
{
	char *exp = xasprintf("%s/%s", dir, EXP_DB_NAME),
	     *camp = xasprintf("%s/%s", dir, STORE_DB_NAME);
	bool yes = access(exp, F_OK) == 0 && access(camp, F_OK) != 0;

	free(exp);
	free(camp);
	return yes;
}

static int write_ci_file(const char *path, const struct report_ci_suite *suites, size_t n,
			 bool sarif)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f) {
		cs_err("cannot write %s: %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	if (sarif)
		err = report_write_sarif(suites, n, f);
	else
		report_write_junit(suites, n, f);
	if (ferror(f) | fclose(f) || err) {
		cs_err("cannot write %s: %s", path, strerror(errno ? errno : EIO));
		return EXIT_USAGE;
	}
	return 0;
}

static int write_ci_files(const struct report_ci_suite *suites, size_t n,
			  const struct report_ci_files *out)
{
	if (out->junit && write_ci_file(out->junit, suites, n, false))
		return EXIT_USAGE;
	if (out->sarif && write_ci_file(out->sarif, suites, n, true))
		return EXIT_USAGE;
	return 0;
}

int report_ci_campaign(const char *dir, struct store *s, const struct report *r,
		       const struct report_ci_files *out)
{
	struct report_ci_suite suite = { .name = dir, .store = s, .model = report_ci_model(r) };
	int ret;

	if (!suite.model)
		return EXIT_USAGE;
	ret = write_ci_files(&suite, 1, out);
	json_decref(suite.model);
	return ret;
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

int report_ci_experiment(const char *dir, const struct report_ci_files *out, bool replay_vm)
{
	char *cells = xasprintf("%s/cells", dir);
	struct report_ci_suite *suites;
	struct dirent **ents = NULL;
	size_t n = 0, failures = 0, i;
	int nents, k, ret;

	nents = scandir(cells, &ents, has_campaign, alphasort);
	if (nents < 0) {
		cs_err("%s has no cells yet (%s: %s)", dir, cells, strerror(errno));
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
	ret = write_ci_files(suites, n, out);
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
