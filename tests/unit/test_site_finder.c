// SPDX-License-Identifier: MIT
/*
 * Site finder on build/tests/programs/accesses: each acc_* function holds
 * one known kind of access (see tests/programs/accesses.c); check that it is
 * found, classified (R/W/RW, lock, size), decoded (base, index, scale,
 * rip-relative displacement that lands on the variable) and that stack
 * accesses are not sites. Plus the include/exclude globs and the variants.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "kernel/site_finder.h"
#include "kernel/symbolize.h"
#include "tap.h"
#include "lib/self.h"

static char prog[PATH_MAX + 64];

static const struct mem_site *only_site(const struct site_set *set, const char *fn, int *count)
{
	const struct mem_site *found = NULL;
	size_t i;

	*count = 0;
	for (i = 0; i < set->n; i++)
		if (set->sites[i].function && !strcmp(set->sites[i].function, fn)) {
			found = &set->sites[i];
			(*count)++;
		}
	return found;
}

/* A rip-relative site's effective address is the named variable. */
static bool rip_hits(const struct mem_site *s, const char *var)
{
	uint64_t vaddr = 0;

	if (!s || !(s->decode.flags & CS_ACC_RIP) ||
	    symbolize_lookup_variable(prog, var, &vaddr, NULL))
		return false;
	/* decode is relative to the probe address (see probe_offset). */
	return s->vaddr - (s->offset - s->probe_offset) + (uint64_t)s->decode.disp == vaddr;
}

static void check_one(const struct site_set *set, const char *fn, uint8_t acc, int size,
		      const char *var)
{
	const struct mem_site *s;
	int n;

	s = only_site(set, fn, &n);
	tap_ok(n == 1 && s &&
		       (s->decode.flags & (CS_ACC_READ | CS_ACC_WRITE | CS_ACC_LOCK)) == acc &&
		       s->decode.size == size && (!var || rip_hits(s, var)),
	       "%s: one %s%s site of %d bytes%s%s (%s)", fn, site_finder_access_str(acc),
	       acc & CS_ACC_LOCK ? " locked" : "", size, var ? " on " : "", var ? var : "",
	       s ? s->insn : "none");
}

int main(void)
{
	const char *inc_acc[] = { "acc_*" }, *exc[] = { "acc_x*", "acc_atomic*" },
		   *inc_file[] = { "accesses.c" };
	struct site_filter only_acc = { .include = inc_acc, .ninclude = 1 };
	struct site_filter no_x = {
		.include = inc_acc, .ninclude = 1, .exclude = exc, .nexclude = 2
	};
	struct site_filter by_file = { .include = inc_file, .ninclude = 1 };
	struct site_set set = { 0 }, all = { 0 }, fset = { 0 }, st = { 0 };
	const struct mem_site *s;
	char *libc;
	size_t i;
	int n, err;
	bool lines_ok = true;

	tap_plan(30);
	snprintf(prog, sizeof(prog), "%s/../programs/accesses", self_dir());

	err = site_finder_find(prog, &only_acc, &set);
	tap_is_int(err, 0, "site_finder_find on %s", prog);
	check_one(&set, "acc_store_global", CS_ACC_WRITE, 4, "acc_written");
	check_one(&set, "acc_load_global", CS_ACC_READ, 4, "acc_read");
	check_one(&set, "acc_inc_global", CS_ACC_READ | CS_ACC_WRITE, 4, "acc_counter");
	check_one(&set, "acc_atomic_add", CS_ACC_READ | CS_ACC_WRITE | CS_ACC_LOCK, 8,
		  "acc_atomic");
	check_one(&set, "acc_xchg", CS_ACC_READ | CS_ACC_WRITE | CS_ACC_LOCK, 8, "acc_swapped");
	check_one(&set, "acc_cas", CS_ACC_READ | CS_ACC_WRITE | CS_ACC_LOCK, 4, "acc_cas_word");
	check_one(&set, "acc_deref", CS_ACC_READ, 4, NULL);
	check_one(&set, "acc_test_flag", CS_ACC_READ, 1, "acc_flags");
	s = only_site(&set, "acc_deref", &n);
	tap_ok(s && s->decode.base == CS_REG_DI && s->decode.index == CS_REG_NONE &&
		       s->decode.disp == 0 && !(s->decode.flags & CS_ACC_RIP),
	       "acc_deref: base rdi, no index, no displacement");
	check_one(&set, "acc_array_store", CS_ACC_WRITE, 8, NULL);
	s = only_site(&set, "acc_array_store", &n);
	tap_ok(s && s->decode.index != CS_REG_NONE && s->decode.scale == 8,
	       "acc_array_store: index register scaled by 8 (%s)", s ? s->insn : "none");
	only_site(&set, "acc_stack_local", &n);
	tap_is_int(n, 0, "acc_stack_local: stack accesses are not sites");
	tap_ok(set.skipped_stack >= 4, "stack accesses counted as skipped (%zu)",
	       set.skipped_stack);
	for (i = 0; i < set.n; i++)
		lines_ok &= set.sites[i].file && strstr(set.sites[i].file, "accesses.c") &&
			    set.sites[i].line > 0;
	tap_ok(set.n > 0 && lines_ok, "every acc_* site has accesses.c:line");
	s = only_site(&set, "acc_atomic_add", &n);
	tap_ok(s && s->probe_offset == s->offset + s->len,
	       "lock add at function entry (after a ret) is probed at the next instruction");
	s = only_site(&set, "acc_inc_global", &n);
	tap_ok(s && s->probe_offset == s->offset, "unlocked site is probed in place");
	{
		const struct mem_site *st_s = NULL, *lk_s = NULL;

		for (i = 0; i < set.n; i++)
			if (set.sites[i].function &&
			    !strcmp(set.sites[i].function, "acc_pair_store_lock"))
				*(set.sites[i].decode.flags & CS_ACC_LOCK ? &lk_s : &st_s) =
					&set.sites[i];
		tap_ok(st_s && lk_s && st_s->probe_offset == st_s->offset &&
			       lk_s->probe_offset == lk_s->offset + lk_s->len,
		       "store then lock add: the store probed in place, the lock add after "
		       "itself, not on the store's probe");
	}
	check_one(&set, "acc_pair_lock_load", CS_ACC_READ, 4, "acc_pair_flag");
	tap_ok(set.skipped_lock >= 1,
	       "lock add whose only place is the next access's probe: skipped (%zu)",
	       set.skipped_lock);
	s = only_site(&set, "acc_store_global", &n);
	tap_ok(s && s->offset == s->vaddr,
	       "PIE: file offset of .text site equals vaddr here (0x%" PRIx64 ")",
	       s ? s->offset : 0);

	site_finder_find(prog, &no_x, &fset);
	only_site(&fset, "acc_xchg", &n);
	tap_ok(n == 0 && fset.n == set.n - 2 && fset.skipped_filter > 0,
	       "--sites-exclude removes acc_xchg and acc_atomic_add (%zu of %zu)", fset.n, set.n);
	site_finder_set_free(&fset);

	site_finder_find(prog, &by_file, &fset);
	site_finder_find(prog, NULL, &all);
	tap_ok(fset.n >= set.n && fset.n < all.n,
	       "file glob keeps accesses.c sites only (%zu < %zu)", fset.n, all.n);
	tap_ok(!site_finder_filter_match(&only_acc, "main", "/x/accesses.c") &&
		       site_finder_filter_match(&by_file, "main", "/x/accesses.c") &&
		       site_finder_filter_match(NULL, NULL, NULL),
	       "filter matches function, file basename, and NULL filter");
	site_finder_set_free(&fset);
	site_finder_set_free(&all);

	snprintf(prog, sizeof(prog), "%s/../programs/accesses-stripped", self_dir());
	site_finder_find(prog, NULL, &st);
	tap_ok(st.n > 0 && !st.sites[0].function, "stripped: sites found, no function names (%zu)",
	       st.n);
	site_finder_set_free(&st);

	libc = site_finder_resolve_object(NULL, "libc");
	tap_ok(libc && strstr(libc, "libc.so"), "--sites-object libc resolves to %s", libc);
	{
		const char *inc_lock[] = { "pthread_mutex_lock" };
		struct site_filter f = { .include = inc_lock, .ninclude = 1 };

		err = libc ? site_finder_find(libc, &f, &st) : -1;
		tap_ok(!err && st.n > 0, "libc: pthread_mutex_lock has memory sites (%zu)", st.n);
		site_finder_set_free(&st);
	}
	{
		/* One trap, one access point: no two sites share a probe. */
		struct site_set ls = { 0 };
		size_t shared_p = 0, shared_l = 0, j;

		site_finder_find(prog, NULL, &all);
		for (i = 1; i < all.n; i++)
			for (j = 0; j < i; j++)
				shared_p += all.sites[i].probe_offset == all.sites[j].probe_offset;
		err = libc ? site_finder_find(libc, NULL, &ls) : -1;
		for (i = 1; !err && i < ls.n; i++)
			shared_l +=
				ls.sites[i].probe_offset == ls.sites[i - 1].probe_offset ||
				(i > 1 && ls.sites[i].probe_offset == ls.sites[i - 2].probe_offset);
		tap_ok(all.n && !shared_p, "accesses: no two of %zu sites share a probe (%zu do)",
		       all.n, shared_p);
		tap_ok(!err && ls.n > 1000 && !shared_l,
		       "libc: no two of %zu sites share a probe (%zu do)", ls.n, shared_l);
		site_finder_set_free(&all);
		site_finder_set_free(&ls);
	}
	free(libc);
	tap_ok(site_finder_find("/nonexistent", NULL, &st) == -ENOENT, "missing object: -ENOENT");

	site_finder_set_free(&set);
	symbolize_cache_flush();
	return tap_done();
}
