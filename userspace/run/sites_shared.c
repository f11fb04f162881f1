// SPDX-License-Identifier: MIT
/*
 * concsched sites --shared (see sites_shared.h).
 */
#include "run/sites_shared.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/access_probes.h"
#include "kernel/launcher.h"
#include "kernel/symbolize.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/self.h"
#include "lib/xalloc.h"

struct at_exec {
	struct access_probes *ap;
	uint64_t stack_top;
	int err;
};

/* At the target's exec: main's stack as the exec made it, and the probes
 * for its process (before its exec it shares our memory, and the
 * breakpoints of a filter on its pid would go into ours). */
static void attach_at_exec(pid_t pid, void *arg)
{
	struct at_exec *a = arg;

	a->stack_top = access_probes_main_stack_top(pid);
	a->err = access_probes_attach(a->ap, pid, NULL);
}

static void sv_var_name(const struct shared_var *v, const struct site_set *set, char *buf,
			size_t len)
{
	char where[384];

	if (v->symbol && v->sym_offset)
		snprintf(buf, len, "%s+0x%" PRIx64, v->symbol, v->sym_offset);
	else if (v->symbol)
		snprintf(buf, len, "%s", v->symbol);
	else if (v->object)
		snprintf(buf, len, "%s@0x%" PRIx64, strrchr(v->object, '/') + 1, v->addr);
	else if (v->has_alloc) {
		symbolize_site_format(&v->alloc_site, where, sizeof(where));
		snprintf(buf, len, "heap block of %" PRIu64 " bytes allocated at %s", v->alloc_size,
			 where);
	} else {
		site_finder_site_text(&set->sites[v->first_site], where, sizeof(where));
		snprintf(buf, len, "heap (first access %s)", where);
	}
}

static void sv_print_text(struct access_probes *ap, const struct shared_var *vars, size_t nv,
			  size_t nshared_sites)
{
	const struct site_set *set = ap->set;
	char name[512], where[384];
	size_t i, k;

	printf("access sites: %zu candidates, %zu attached in %.1f ms; %zu accesses recorded "
	       "(%" PRIu64 " dropped)\n",
	       ap->candidates, ap->attached, ap->attach_ns / 1e6, ap->nevents,
	       access_probes_stat(ap, CS_ASTAT_DROPPED));
	printf("shared variables: %zu; sites on shared variables: %zu of %zu\n", nv, nshared_sites,
	       set->n);
	for (i = 0; i < nv; i++) {
		sv_var_name(&vars[i], set, name, sizeof(name));
		printf("  %-24s at 0x%-14" PRIx64 " %u threads  reads %" PRIu64 "  writes %" PRIu64
		       "\n",
		       name, vars[i].addr, vars[i].nthreads, vars[i].reads, vars[i].writes);
		for (k = 0; k < vars[i].nsites; k++) {
			const struct mem_site *s = &set->sites[vars[i].sites[k]];

			site_finder_site_text(s, where, sizeof(where));
			printf("      %-2s %-44s %s+0x%" PRIx64 "\n",
			       site_finder_access_str(s->decode.flags), where,
			       strrchr(s->object, '/') + 1, s->offset);
		}
	}
}

static void sv_print_json(struct access_probes *ap, const struct shared_var *vars, size_t nv,
			  const bool *site_shared, int exit_status)
{
	const struct site_set *set = ap->set;
	char name[512], where[384];
	struct json j;
	size_t i, k;

	json_init(&j, stdout, true);
	json_obj_begin(&j, NULL);
	json_kv_uint(&j, "candidates", ap->candidates);
	json_kv_uint(&j, "attached", ap->attached);
	json_kv_dbl(&j, "attach_ms", ap->attach_ns / 1e6);
	json_kv_uint(&j, "accesses", ap->nevents);
	json_kv_uint(&j, "dropped", access_probes_stat(ap, CS_ASTAT_DROPPED));
	json_kv_int(&j, "exit_status", exit_status);
	json_arr_begin(&j, "shared_variables");
	for (i = 0; i < nv; i++) {
		sv_var_name(&vars[i], set, name, sizeof(name));
		json_obj_begin(&j, NULL);
		json_kv_str(&j, "name", name);
		json_kv_str(&j, "symbol", vars[i].symbol);
		json_kv_str(&j, "object", vars[i].object);
		json_kv_bool(&j, "heap", vars[i].heap);
		if (vars[i].has_alloc) {
			symbolize_site_format(&vars[i].alloc_site, where, sizeof(where));
			json_kv_str(&j, "alloc_site", where);
			json_kv_str(&j, "alloc_object", vars[i].alloc_site.object);
			json_kv_uint(&j, "alloc_offset", vars[i].alloc_site.offset);
			json_kv_uint(&j, "alloc_size", vars[i].alloc_size);
		}
		json_kv_uint(&j, "address", vars[i].addr);
		json_kv_uint(&j, "threads", vars[i].nthreads);
		json_kv_uint(&j, "reads", vars[i].reads);
		json_kv_uint(&j, "writes", vars[i].writes);
		json_arr_begin(&j, "sites");
		for (k = 0; k < vars[i].nsites; k++) {
			const struct mem_site *s = &set->sites[vars[i].sites[k]];

			site_finder_site_text(s, where, sizeof(where));
			json_obj_begin(&j, NULL);
			json_kv_str(&j, "object", s->object);
			json_kv_uint(&j, "offset", s->offset);
			json_kv_str(&j, "access", site_finder_access_str(s->decode.flags));
			json_kv_str(&j, "where", where);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr_begin(&j, "shared_sites");
	for (i = 0; i < set->n; i++) {
		if (!site_shared[i])
			continue;
		json_obj_begin(&j, NULL);
		json_kv_str(&j, "object", set->sites[i].object);
		json_kv_uint(&j, "offset", set->sites[i].offset);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_end(&j);
}

int sites_shared_run(const struct site_set *set, const char *prog, char **argv, unsigned timeout_ms,
		     bool json)
{
	struct access_probes_opts po = { .record_events = true };
	struct access_trace trace = { 0 };
	char *alloc_object = access_probes_alloc_object(prog);
	struct at_exec ax = { 0 };
	struct access_probes ap = { 0 };
	struct launch_opts lo = { .stdin_fd = -1, .stdout_fd = json ? 2 : -1, .stderr_fd = -1 };
	struct launch l = { .pid = -1, .gate_fd = -1, .err_fd = -1 };
	struct symbolizer *sz = NULL;
	struct shared_var *vars = NULL;
	bool *site_shared = NULL, drop;
	char **av = NULL;
	size_t nv = 0, i, nshared = 0, argc = 0;
	uint64_t deadline, stack_top = 0;
	int rc = EXIT_FAILURE, err, done = 0;

	if (geteuid() != 0) {
		log_err("sites --shared attaches uprobes: run as root (%s sites --shared ...)",
			self_command(true));
		return 2;
	}
	while (argv[argc])
		argc++;
	av = xcalloc(argc + 1, sizeof(*av));
	av[0] = (char *)prog;
	for (i = 1; i < argc; i++)
		av[i] = argv[i];
	lo.argv = av;
	po.alloc_object = alloc_object;
	if (launcher_resolve_user(NULL, &lo.uid, &lo.gid, &drop)) {
		rc = 2;
		goto cleanup;
	}
	lo.drop_privs = drop;
	lo.stop_at_exec = true;
	if (launcher_prepare(&lo, &l)) {
		rc = 2;
		goto cleanup;
	}
	if (access_probes_load(&ap, set, &po)) {
		launcher_kill(&l);
		rc = 2;
		goto cleanup;
	}
	if (launcher_release(&l, prog)) {
		launcher_kill(&l);
		rc = 2;
		goto cleanup;
	}
	/* Main's stack as the exec made it, the target stopped there: a short
	 * program would be gone, with its maps, before a later read (main's
	 * stack locals then passed for shared). */
	ax.ap = &ap;
	if (launcher_at_exec(&l, attach_at_exec, &ax) || ax.err) {
		if (!ax.err)
			log_err("%s: could not stop it at its exec to read its stack", prog);
		launcher_kill(&l);
		rc = 2;
		goto cleanup;
	}
	stack_top = ax.stack_top;
	sz = symbolize_new(l.pid);
	deadline = now_ns() + (uint64_t)timeout_ms * 1000000ULL;
	while (!done) {
		access_probes_poll(&ap, 10);
		/* Keep the maps current while the target lives (dlopen). */
		if (sz)
			symbolize_refresh(sz);
		err = launcher_wait(&l, 1);
		if (err != 0)
			done = 1;
		else if (now_ns() > deadline) {
			log_warn("%s did not exit within %u s: killed", prog, timeout_ms / 1000);
			launcher_kill(&l);
			done = 1;
		}
	}
	while (access_probes_poll(&ap, 0) > 0)
		;
	site_shared = xcalloc(set->n, sizeof(*site_shared));
	trace = (struct access_trace){ .events = ap.events,
				       .nevents = ap.nevents,
				       .allocs = ap.allocs,
				       .nallocs = ap.nallocs,
				       .stack_top = stack_top };
	vars = access_probes_shared_vars(&trace, set, sz, &nv, site_shared);
	for (i = 0; i < set->n; i++)
		nshared += site_shared[i];
	if (json)
		sv_print_json(&ap, vars, nv, site_shared, l.reaped ? l.status : -1);
	else
		sv_print_text(&ap, vars, nv, nshared);
	rc = 0;
cleanup:
	access_probes_shared_vars_free(vars, nv);
	free(site_shared);
	symbolize_free(sz);
	access_probes_close(&ap);
	free(alloc_object);
	free(av);
	return rc;
}
