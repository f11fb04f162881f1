// SPDX-License-Identifier: MIT
/*
 * concsched sites: list the memory-access sites of a program (site finder),
 * or with --shared run it once with access probes on every site and report
 * the variables two or more threads touched, with their sites.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "run/sites_shared.h"
#include "cli/commands.h"
#include "lib/json.h"
#include "kernel/site_finder.h"
#include "kernel/symbolize.h"
#include "kernel/target.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/xalloc.h"

struct sites_opts {
	bool json, list, shared;
	struct site_filter filter;
	const char **objects;
	size_t nobjects;
	unsigned timeout_ms;
};

static void sites_usage(FILE *f)
{
	fprintf(f, "Usage: concsched sites [OPTIONS] PROG\n"
		   "       concsched sites --shared [OPTIONS] -- PROG [ARGS...]\n\n"
		   "List the instructions of PROG that load or store memory other than the\n"
		   "stack (candidate access sites for MAP/race metrics), with counts per\n"
		   "function. With --shared, run PROG once with an access probe on every\n"
		   "site (root) and report the variables that two or more threads touched.\n\n"
		   "Options:\n"
		   "  --json                 machine-readable output\n"
		   "  --list                 print every site, not only the per-function counts\n"
		   "  --sites-include GLOB   keep functions or source files matching GLOB "
		   "(repeatable)\n"
		   "  --sites-exclude GLOB   drop functions or source files matching GLOB "
		   "(repeatable)\n"
		   "  --sites-object LIB     also scan shared object LIB (path or name: libfoo,\n"
		   "                         libc) (repeatable)\n"
		   "  --shared               run PROG and find shared variables (needs root)\n"
		   "  --timeout SEC          --shared: kill PROG after SEC seconds (default 60)\n\n"
		   "Examples:\n"
		   "  concsched sites ./bank\n"
		   "  concsched sites --list --sites-include 'transfer*' ./bank\n"
		   "  concsched sites --json --sites-object libfoo.so ./app\n"
		   "  sudo concsched sites --shared -- ./bank 4\n\n"
		   "Sites are OBJECT+0xOFFSET (file offsets: stable across runs and ASLR)\n"
		   "and function+0xoff (file:line). See docs/sites.md.\n");
}

static void sites_push(const char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = s;
}

struct fn_count {
	const char *object, *function, *file;
	size_t sites, reads, writes, rmw, locked;
};

/* Per-function counts; sites come sorted by address per object. */
static struct fn_count *sites_count(const struct site_set *set, size_t *nfn)
{
	struct fn_count *fc = NULL;
	size_t i, n = 0;

	for (i = 0; i < set->n; i++) {
		const struct mem_site *s = &set->sites[i];
		uint8_t rw = s->decode.flags & (CS_ACC_READ | CS_ACC_WRITE);
		struct fn_count *c = n ? &fc[n - 1] : NULL;

		/* Names point into the symbol cache: one pointer per symbol, so
		 * two static functions of the same name stay apart. */
		if (!c || c->object != s->object || c->function != s->function) {
			fc = xrealloc(fc, (n + 1) * sizeof(*fc));
			c = &fc[n++];
			*c = (struct fn_count){ .object = s->object,
						.function = s->function,
						.file = s->file };
		}
		c->sites++;
		c->reads += rw == CS_ACC_READ;
		c->writes += rw == CS_ACC_WRITE;
		c->rmw += rw == (CS_ACC_READ | CS_ACC_WRITE);
		c->locked += !!(s->decode.flags & CS_ACC_LOCK);
	}
	*nfn = n;
	return fc;
}

static void sites_print_text(const struct site_set *set, bool list)
{
	size_t nfn, i, j = 0;
	struct fn_count *fc = sites_count(set, &nfn);
	char where[512];

	for (i = 0; i < nfn; i++) {
		const char *fb = fc[i].file ? strrchr(fc[i].file, '/') : NULL;

		printf("%-32s %-24s %5zu sites  R %zu  W %zu  RW %zu  locked %zu\n",
		       fc[i].function ? fc[i].function : "?",
		       fc[i].file ? (fb ? fb + 1 : fc[i].file) : strrchr(fc[i].object, '/') + 1,
		       fc[i].sites, fc[i].reads, fc[i].writes, fc[i].rmw, fc[i].locked);
		for (; list && j < set->n; j++) {
			const struct mem_site *s = &set->sites[j];

			if (s->object != fc[i].object || s->function != fc[i].function)
				break;
			site_finder_site_text(s, where, sizeof(where));
			printf("    0x%-8" PRIx64 " %-2s %2u  %-40s %s\n", s->offset,
			       site_finder_access_str(s->decode.flags), s->decode.size, where,
			       s->insn);
		}
	}
	printf("%zu sites in %zu functions (%zu instructions decoded; skipped: %zu stack, "
	       "%zu thread-local, %zu branch, %zu no-access, %zu unprobeable lock, %zu other, "
	       "%zu filtered)\n",
	       set->n, nfn, set->insns, set->skipped_stack, set->skipped_tls, set->skipped_branch,
	       set->skipped_noaccess, set->skipped_lock, set->skipped_multi + set->skipped_reg,
	       set->skipped_filter);
	free(fc);
}

static void sites_json_site(struct json *j, const struct mem_site *s)
{
	json_obj_begin(j, NULL);
	json_kv_str(j, "object", s->object);
	json_kv_uint(j, "offset", s->offset);
	json_kv_uint(j, "probe_offset", s->probe_offset);
	json_kv_str(j, "access", site_finder_access_str(s->decode.flags));
	json_kv_int(j, "size", s->decode.size);
	json_kv_bool(j, "locked", s->decode.flags & CS_ACC_LOCK);
	json_kv_str(j, "function", s->function);
	json_kv_uint(j, "function_offset", s->func_offset);
	json_kv_str(j, "file", s->file);
	json_kv_int(j, "line", s->line);
	json_kv_str(j, "insn", s->insn);
	json_obj_end(j);
}

static void sites_print_json(const struct site_set *set)
{
	size_t nfn, i;
	struct fn_count *fc = sites_count(set, &nfn);
	struct json j;

	json_init(&j, stdout, true);
	json_obj_begin(&j, NULL);
	json_kv_uint(&j, "sites_total", set->n);
	json_kv_uint(&j, "instructions", set->insns);
	json_obj_begin(&j, "skipped");
	json_kv_uint(&j, "stack", set->skipped_stack);
	json_kv_uint(&j, "thread_local", set->skipped_tls);
	json_kv_uint(&j, "branch", set->skipped_branch);
	json_kv_uint(&j, "no_access", set->skipped_noaccess);
	json_kv_uint(&j, "lock_unprobeable", set->skipped_lock);
	json_kv_uint(&j, "other", set->skipped_multi + set->skipped_reg);
	json_kv_uint(&j, "filtered", set->skipped_filter);
	json_obj_end(&j);
	json_arr_begin(&j, "functions");
	for (i = 0; i < nfn; i++) {
		json_obj_begin(&j, NULL);
		json_kv_str(&j, "object", fc[i].object);
		json_kv_str(&j, "function", fc[i].function);
		json_kv_str(&j, "file", fc[i].file);
		json_kv_uint(&j, "sites", fc[i].sites);
		json_kv_uint(&j, "reads", fc[i].reads);
		json_kv_uint(&j, "writes", fc[i].writes);
		json_kv_uint(&j, "rmw", fc[i].rmw);
		json_kv_uint(&j, "locked", fc[i].locked);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr_begin(&j, "sites");
	for (i = 0; i < set->n; i++)
		sites_json_site(&j, &set->sites[i]);
	json_arr_end(&j);
	json_obj_end(&j);
	json_end(&j);
	free(fc);
}

/* Scan the program and each --sites-object. 0 or exit status. */
static int sites_collect(const struct sites_opts *o, const char *prog, struct site_set *set)
{
	size_t i;
	int err;

	err = site_finder_find(prog, &o->filter, set);
	if (err) {
		log_err("%s: cannot decode .text: %s", prog, strerror(-err));
		return EXIT_USAGE;
	}
	for (i = 0; i < o->nobjects; i++) {
		char *lib = site_finder_resolve_object(prog, o->objects[i]);

		if (!lib) {
			log_err("--sites-object %s: no such shared object (give a path, or a name "
				"found in the library path, e.g. libc)",
				o->objects[i]);
			return EXIT_USAGE;
		}
		err = site_finder_find(lib, &o->filter, set);
		if (err) {
			log_err("%s: cannot decode .text: %s", lib, strerror(-err));
			free(lib);
			return EXIT_USAGE;
		}
		free(lib);
	}
	return 0;
}

int cmd_sites(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "list", no_argument, NULL, 'l' },
		{ "shared", no_argument, NULL, 's' },
		{ "sites-include", required_argument, NULL, 'i' },
		{ "sites-exclude", required_argument, NULL, 'x' },
		{ "sites-object", required_argument, NULL, 'o' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct sites_opts o = { .timeout_ms = 60000 };
	struct site_set set = { 0 };
	struct target_info ti;
	uint64_t v;
	int c, rc = EXIT_USAGE;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o.json = true;
			break;
		case 'l':
			o.list = true;
			break;
		case 's':
			o.shared = true;
			break;
		case 'i':
			sites_push(&o.filter.include, &o.filter.ninclude, optarg);
			break;
		case 'x':
			sites_push(&o.filter.exclude, &o.filter.nexclude, optarg);
			break;
		case 'o':
			sites_push(&o.objects, &o.nobjects, optarg);
			break;
		case 't':
			if (parse_u64(optarg, &v) || !v || v > 86400) {
				log_err("--timeout %s: want seconds, 1..86400", optarg);
				goto cleanup;
			}
			o.timeout_ms = (unsigned)v * 1000;
			break;
		case 'h':
			sites_usage(stdout);
			rc = 0;
			goto cleanup;
		default:
			sites_usage(stderr);
			goto cleanup;
		}
	}
	if (optind >= argc || (!o.shared && optind + 1 != argc)) {
		log_err("sites: need exactly one PROG (see concsched sites --help)");
		goto cleanup;
	}
	if (target_inspect(argv[optind], &ti))
		goto cleanup;
	if (!ti.has_symtab)
		log_warn("%s is stripped: sites are reported as object+offset", ti.path);
	rc = sites_collect(&o, ti.path, &set);
	if (rc)
		goto cleanup;
	if (o.shared) {
		rc = sites_shared_run(&set, ti.path, argv + optind, o.timeout_ms, o.json);
		goto cleanup;
	}
	if (o.json)
		sites_print_json(&set);
	else
		sites_print_text(&set, o.list);
	rc = 0;
cleanup:
	site_finder_set_free(&set);
	free(o.filter.include);
	free(o.filter.exclude);
	free(o.objects);
	symbolize_cache_flush();
	return rc;
}
