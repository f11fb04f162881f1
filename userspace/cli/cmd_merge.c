// SPDX-License-Identifier: MIT
/* concsched merge: options and --help; the merge is store_merge (results/store_merge.c). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/store.h"
#include "cli/commands.h"
#include "lib/log.h"
#include "lib/xalloc.h"

static void merge_usage(FILE *f)
{
	fprintf(f,
		"Usage: concsched merge A B [MORE...] -o C\n\n"
		"Combine campaigns of the same program (same binary hash), e.g. run on\n"
		"different machines, into campaign directory C. C is created from A's\n"
		"configuration when it does not exist; an existing campaign C is extended.\n"
		"Runs are identified by a uuid, so merging a campaign twice adds nothing.\n\n"
		"Options:\n"
		"  -o, --out DIR   destination campaign directory (required)\n"
		"  -h, --help      this text\n\n"
		"Examples:\n"
		"  concsched merge host1/camp host2/camp -o all/camp\n"
		"  concsched merge all/camp host3/camp -o all/camp   # add one more machine\n"
		"  concsched report all/camp\n\n"
		"Exit status: 0 merged, 2 usage error, different binaries or unreadable input.\n");
}

/* Destination: existing campaign, or a new one with A's configuration. */
static int open_destination(const char *dir, struct store *first, struct store **out)
{
	struct store_campaign c;
	char *db = xasprintf("%s/%s", dir, STORE_DB_NAME);
	bool exists = access(db, F_OK) == 0;
	int err;

	free(db);
	if (exists)
		return store_open(dir, false, out);
	err = store_get_campaign(first, &c);
	if (err) {
		log_err("cannot read the configuration of %s", store_dir(first));
		return err;
	}
	free(c.uuid);
	c.uuid = NULL;
	free(c.host);
	c.host = NULL;
	/* Where each input ran is in its inputs row (store_list_inputs). */
	free(c.where);
	c.where = NULL;
	c.created_ns = 0;
	err = store_create(dir, &c, out);
	store_campaign_free(&c);
	return err;
}

int cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct store **srcs = NULL, *dst = NULL;
	const char *out = NULL;
	int c, i, nsrc, ret = EXIT_USAGE, added;
	char *ha, *hb;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'h':
			merge_usage(stdout);
			return 0;
		default:
			log_err("see concsched merge --help");
			return EXIT_USAGE;
		}
	}
	nsrc = argc - optind;
	if (nsrc < 1 || !out) {
		log_err("merge needs campaign directories and -o DIR (e.g. concsched merge A B -o "
			"C)");
		return EXIT_USAGE;
	}
	srcs = xcalloc(nsrc, sizeof(*srcs));
	for (i = 0; i < nsrc; i++)
		if (store_open(argv[optind + i], true, &srcs[i]))
			goto cleanup;
	for (i = 1; i < nsrc; i++) {
		if (!store_same_binary(srcs[0], srcs[i], &ha, &hb)) {
			log_err("cannot merge %s and %s: they test different binaries (hash %s vs "
				"%s)",
				argv[optind], argv[optind + i], ha, hb);
			free(ha);
			free(hb);
			goto cleanup;
		}
		free(ha);
		free(hb);
	}
	if (open_destination(out, srcs[0], &dst))
		goto cleanup;
	for (i = 0; i < nsrc; i++) {
		added = store_merge(dst, srcs[i]);
		if (added == -EXDEV) {
			log_err("cannot merge %s into %s: they test different binaries",
				argv[optind + i], out);
			goto cleanup;
		}
		if (added < 0) {
			log_err("merging %s into %s failed: %s (%s)", argv[optind + i], out,
				strerror(-added), store_errmsg(dst));
			goto cleanup;
		}
		printf("%s: %d new run%s\n", argv[optind + i], added, added == 1 ? "" : "s");
	}
	printf("merged into %s\n", out);
	ret = 0;
cleanup:
	for (i = 0; i < nsrc; i++)
		store_close(srcs[i]);
	free(srcs);
	store_close(dst);
	return ret;
}
