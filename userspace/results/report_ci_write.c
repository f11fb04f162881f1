// SPDX-License-Identifier: MIT
/* The CI files of a report (report_ci_write.h): JUnit XML, SARIF. */
#include "results/report_ci_write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "results/report_junit.h"
#include "results/report_sarif.h"
#include "lib/log.h"

static int write_ci_file(const char *path, const struct report_ci_suite *suites, size_t n,
			 bool sarif)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f) {
		log_err("cannot write %s: %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	if (sarif)
		err = report_write_sarif(suites, n, f);
	else
		report_write_junit(suites, n, f);
	if (ferror(f) | fclose(f) || err) {
		log_err("cannot write %s: %s", path, strerror(errno ? errno : EIO));
		return EXIT_USAGE;
	}
	return 0;
}

int report_ci_write(const struct report_ci_suite *suites, size_t n,
		    const struct report_ci_files *out)
{
	if (out->junit && write_ci_file(out->junit, suites, n, false))
		return EXIT_USAGE;
	if (out->sarif && write_ci_file(out->sarif, suites, n, true))
		return EXIT_USAGE;
	return 0;
}

int report_ci_write_campaign(const char *dir, struct store *s, const struct report *r,
			     const struct report_ci_files *out)
{
	struct report_ci_suite suite = { .name = dir, .store = s, .model = report_ci_model(r) };
	int ret;

	if (!suite.model)
		return EXIT_USAGE;
	ret = report_ci_write(&suite, 1, out);
	json_decref(suite.model);
	return ret;
}
