// SPDX-License-Identifier: MIT
/* Merging experiment directories (exp_merge.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiment/exp_merge.h"
#include "lib/log.h"
#include "lib/tree.h"
#include "lib/xalloc.h"

static int copy_cell(const char *dst_dir, const char *src_dir, const struct exp_cell_row *r)
{
	char *from = xasprintf("%s/%s", src_dir, r->dir), *to = xasprintf("%s/%s", dst_dir, r->dir);
	const char *name = strrchr(r->dir, '/') ? strrchr(r->dir, '/') + 1 : r->dir;
	char *lfrom = xasprintf("%s/logs/%s.log", src_dir, name);
	char *lto = xasprintf("%s/logs/%s.log", dst_dir, name), *parent;
	int err;

	parent = xasprintf("%s/cells", dst_dir);
	tree_mkdir_p(parent, 0755);
	free(parent);
	parent = xasprintf("%s/logs", dst_dir);
	tree_mkdir_p(parent, 0755);
	free(parent);
	/* A partial copy of an earlier merge, or a cell this directory had
	 * started itself and not finished: the done one replaces it. */
	tree_remove(to);
	err = tree_copy(from, to);
	if (err)
		log_err("cannot copy cell %s to %s: %s", from, to, strerror(-err));
	if (!err && access(lfrom, F_OK) == 0) {
		tree_remove(lto);
		tree_copy(lfrom, lto);
	}
	free(from);
	free(to);
	free(lfrom);
	free(lto);
	return err;
}

int exp_merge(struct exp_index *dst, const char *dst_dir, struct exp_index *src,
	      const char *src_dir)
{
	char *hd = exp_index_meta(dst, "spec_hash"), *hs = exp_index_meta(src, "spec_hash");
	struct exp_cell_row *rows = NULL;
	size_t n = 0, i;
	int err = 0, added = 0;

	if (!hd || !hs || strcmp(hd, hs)) {
		log_err("cannot merge %s into %s: they ran different specs (hash %s vs %s)",
			src_dir, dst_dir, hs ? hs : "none", hd ? hd : "none");
		err = -EXDEV;
		goto out;
	}
	if ((err = exp_index_cells(src, &rows, &n))) {
		log_err("cannot read the experiment index of %s", src_dir);
		goto out;
	}
	for (i = 0; i < n && !err; i++) {
		if (strcmp(rows[i].status, "done") || exp_index_cell_done(dst, rows[i].idx))
			continue;
		err = copy_cell(dst_dir, src_dir, &rows[i]);
		if (!err)
			err = exp_index_put(dst, &rows[i]);
		added += !err;
	}
out:
	exp_index_cell_rows_free(rows, n);
	free(hd);
	free(hs);
	return err ? err : added;
}
