// SPDX-License-Identifier: MIT
/* Sites of the run in flight as the store names them (run_sites.h). */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run_sites.h"
#include "results/store.h"
#include "coverage/syncov.h"
#include "kernel/sync.h"
#include "kernel/symbolize.h"
#include "lib/xalloc.h"

static int64_t store_site_of(struct store *st, const char *key, bool insn)
{
	const char *plus = strrchr(key, '+');
	struct store_site ss = { 0 };
	struct sym_site sym;
	char text[1024], obj[PATH_MAX];
	int64_t id;

	if (!plus || plus == key || strncmp(plus, "+0x", 3) || (size_t)(plus - key) >= sizeof(obj))
		return 0;
	memcpy(obj, key, plus - key);
	obj[plus - key] = 0;
	ss.object = obj;
	ss.insn = insn;
	ss.offset = strtoull(plus + 3, NULL, 16);
	/* A known site is not symbolized again (DWARF lookups cost, and
	 * libdw's locks hit our own probes). */
	id = store_find_site(st, &ss);
	if (id)
		return id;
	if (insn)
		syncov_insn_describe(key, &sym, text, sizeof(text));
	else
		syncov_site_describe(key, &sym, text, sizeof(text));
	ss.function = sym.symbol;
	ss.file = sym.file;
	ss.line = sym.line;
	return store_add_site(st, &ss);
}

int64_t run_sites_store_site(struct store *st, const char *key)
{
	return store_site_of(st, key, false);
}

int64_t run_sites_store_insn_site(struct store *st, const char *key)
{
	return store_site_of(st, key, true);
}

int64_t run_sites_id(struct store *st, struct onerun *r, uint32_t tgid, uint32_t gen, uint64_t addr)
{
	struct site_ref s;
	char key[PATH_MAX + 32];

	if (syncov_resolve(&r->res, tgid, gen, addr, &s) || !s.object)
		return 0;
	return run_sites_store_site(st, syncov_site_key(&s, key, sizeof(key)));
}

char *run_sites_store_key(struct store *st, const char *key)
{
	size_t cap = strlen(key) * 2 + 64, n = 0;
	char *out = xcalloc(1, cap), *dup = xstrdup(key), *save = NULL, *tok;

	for (tok = strtok_r(dup, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *at = strchr(tok, '@'), ref[24], *site = at ? at + 1 : tok;
		int64_t id = run_sites_store_site(st, site);
		char piece[PATH_MAX + 64];

		if (id > 0 && at) {
			*at = 0;
			snprintf(piece, sizeof(piece), "%s:%s", tok, store_site_ref(ref, id));
		} else if (id > 0) {
			snprintf(piece, sizeof(piece), "%s", store_site_ref(ref, id));
		} else {
			snprintf(piece, sizeof(piece), "%s", tok);
			for (at = piece; (at = strchr(at, '@'));)
				*at = ':';
		}
		if (n + strlen(piece) + 2 > cap) {
			cap = (n + strlen(piece) + 2) * 2;
			out = xrealloc(out, cap);
		}
		n += (size_t)sprintf(out + n, "%s%s", n ? " " : "", piece);
	}
	free(dup);
	return out;
}

void run_sites_refresh_vmas(struct onerun *r)
{
	r->res.nvmas = 0;
	syncov_resolver_load_vmas(&r->res, sync_probes_map_fd(r->sp, "cs_sync_vmas"),
				  sync_probes_map_fd(r->sp, "cs_sync_execs"));
}

struct strat_thread *run_sites_thread_find(struct onerun *r, uint32_t tid)
{
	size_t i;

	for (i = r->sr.nthreads; i-- > 0;)
		if (r->sr.threads[i].tid == tid)
			return &r->sr.threads[i];
	return NULL;
}
