// SPDX-License-Identifier: MIT
/*
 * Shared-variable discovery on a synthetic access trace over the real sites
 * of build/tests/programs/accesses (no probes, no root): which addresses
 * count as shared, how they map to variables (global symbol through the
 * load bias seen in the events, heap otherwise), and that thread stacks —
 * main's and a worker's — never do.
 */
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "kernel/access_probes.h"
#include "kernel/symbolize.h"
#include "tap.h"
#include "lib/self.h"

#define BIAS	  0x555500000000ULL
#define SP_T1	  0x7f0000100000ULL
#define SP_T2	  0x7f0000300000ULL
#define STACK_TOP 0x7ffd00000000ULL
#define HEAP	  0x560000001000ULL

static char prog[PATH_MAX + 64];
static struct site_set set;

static size_t site_of(const char *fn)
{
	size_t i;

	for (i = 0; i < set.n; i++)
		if (set.sites[i].function && !strcmp(set.sites[i].function, fn))
			return i;
	return SIZE_MAX;
}

static uint64_t var(const char *name)
{
	uint64_t v = 0;

	symbolize_lookup_variable(prog, name, &v, NULL);
	return BIAS + v;
}

static struct cs_access_event ev(uint32_t tid, size_t site, uint64_t addr)
{
	const struct mem_site *s = &set.sites[site];

	return (struct cs_access_event){
		.tid = tid,
		.pid = 100,
		.site = (uint32_t)site,
		.addr = addr,
		.ip = BIAS + s->vaddr - (s->offset - s->probe_offset),
		.sp = tid == 1 ? SP_T1 : SP_T2,
		.flags = s->decode.flags,
		.size = s->decode.size,
	};
}

int main(void)
{
	const char *inc[] = { "acc_*" };
	struct site_filter f = { .include = inc, .ninclude = 1 };
	struct cs_access_event e[16];
	struct access_trace tr = { 0 };
	struct shared_var *v;
	bool shared[64] = { 0 };
	size_t n = 0, nv = 0, s_inc, s_deref, s_arr, s_load;
	int i;

	tap_plan(13);
	snprintf(prog, sizeof(prog), "%s/../programs/accesses", self_dir());
	tap_is_int(site_finder_find(prog, &f, &set), 0, "sites of %s", prog);
	s_inc = site_of("acc_inc_global");
	s_deref = site_of("acc_deref");
	s_arr = site_of("acc_array_store");
	s_load = site_of("acc_load_global");
	if (s_inc == SIZE_MAX || s_deref == SIZE_MAX || s_arr == SIZE_MAX || s_load == SIZE_MAX ||
	    set.n > 64) {
		tap_ok(0, "fixture sites present");
		return tap_done();
	}
	/* acc_counter: both threads (shared). */
	e[n++] = ev(1, s_inc, var("acc_counter"));
	e[n++] = ev(2, s_inc, var("acc_counter"));
	/* acc_read: one thread only (not shared). */
	e[n++] = ev(1, s_load, var("acc_read"));
	/* acc_array: two elements, each by both threads: one variable. */
	e[n++] = ev(1, s_arr, var("acc_array") + 16);
	e[n++] = ev(2, s_arr, var("acc_array") + 16);
	e[n++] = ev(2, s_arr, var("acc_array") + 8);
	e[n++] = ev(1, s_arr, var("acc_array") + 8);
	/* A heap block both threads read. */
	e[n++] = ev(2, s_deref, HEAP);
	e[n++] = ev(1, s_deref, HEAP);
	/* Thread 1's stack, read by both: a stack, not a variable. */
	e[n++] = ev(1, s_deref, SP_T1 + 0x40);
	e[n++] = ev(2, s_deref, SP_T1 + 0x40);
	/* Main's stack, read by both workers. */
	e[n++] = ev(1, s_deref, STACK_TOP - 0x1000);
	e[n++] = ev(2, s_deref, STACK_TOP - 0x1000);
	for (i = 0; i < (int)n; i++)
		e[i].ts_ns = (uint64_t)i;

	tr.events = e;
	tr.nevents = n;
	tr.stack_top = STACK_TOP;
	v = access_probes_shared_vars(&tr, &set, NULL, &nv, shared);
	tap_is_int(nv, 3, "three shared variables (counter, array, heap block)");
	for (i = 0; i < (int)nv; i++)
		if (v[i].symbol && !strcmp(v[i].symbol, "acc_counter"))
			break;
	tap_ok(i < (int)nv && v[i].nthreads == 2 && v[i].reads == 2 && v[i].writes == 2 &&
		       v[i].nsites == 1 && v[i].sites[0] == s_inc,
	       "acc_counter: 2 threads, RMW counted as 2 reads + 2 writes, its one site");
	for (i = 0; i < (int)nv; i++)
		if (v[i].symbol && !strcmp(v[i].symbol, "acc_array"))
			break;
	tap_ok(i < (int)nv && v[i].sym_offset == 8 && v[i].writes == 4,
	       "acc_array: elements merge into the variable, lowest shared element first");
	for (i = 0; i < (int)nv; i++)
		if (v[i].heap)
			break;
	tap_ok(i < (int)nv && v[i].addr == HEAP && !v[i].object && v[i].first_site == s_deref,
	       "heap block: reported as heap with the site of its first access");
	tap_ok(v && v[0].addr < v[nv - 1].addr, "sorted by address");
	tap_ok(shared[s_inc] && shared[s_arr] && shared[s_deref],
	       "sites on shared variables marked");
	tap_ok(!shared[s_load], "site touching a one-thread variable not marked");
	access_probes_shared_vars_free(v, nv);

	/* Without the main stack bound, main's local would be reported. */
	tr.stack_top = 0;
	v = access_probes_shared_vars(&tr, &set, NULL, &nv, NULL);
	tap_is_int(nv, 4, "stack_top unknown: main's stack address is not recognised (4)");
	access_probes_shared_vars_free(v, nv);

	/* A worker's stack is recognised from its sampled sp alone. */
	tr.events = e + 9;
	tr.nevents = 2;
	v = access_probes_shared_vars(&tr, &set, NULL, &nv, NULL);
	tap_is_int(nv, 0, "a worker's stack is never a shared variable");
	access_probes_shared_vars_free(v, nv);
	tr.nevents = 0;
	v = access_probes_shared_vars(&tr, &set, NULL, &nv, NULL);
	tap_ok(!v && nv == 0, "no events, no variables");

	/* Two heap blocks from one malloc call site are one variable, named
	 * by that site; a block from another site is another variable. */
	{
		uint64_t caller = BIAS + set.sites[s_inc].vaddr; /* any code address */
		struct cs_alloc_event al[3] = {
			{ .ts_ns = 0, .addr = HEAP, .size = 16, .caller = caller },
			{ .ts_ns = 0, .addr = HEAP + 0x100, .size = 16, .caller = caller },
			{ .ts_ns = 0, .addr = HEAP + 0x200, .size = 16, .caller = caller + 4 },
		};
		struct cs_access_event h[6] = {
			ev(1, s_deref, HEAP + 4),     ev(2, s_deref, HEAP + 4),
			ev(1, s_deref, HEAP + 0x108), ev(2, s_deref, HEAP + 0x108),
			ev(1, s_deref, HEAP + 0x200), ev(2, s_deref, HEAP + 0x200),
		};

		for (i = 0; i < 6; i++)
			h[i].ts_ns = 10 + (uint64_t)i;
		tr = (struct access_trace){ .events = h, .nevents = 6, .allocs = al, .nallocs = 3 };
		v = access_probes_shared_vars(&tr, &set, NULL, &nv, NULL);
		tap_ok(nv == 2 && v[0].has_alloc && v[0].addr == HEAP + 4 && v[0].reads == 4 &&
			       v[0].alloc_size == 16 && v[0].alloc_site.symbol &&
			       !strcmp(v[0].alloc_site.symbol, "acc_inc_global") &&
			       v[1].has_alloc && v[1].addr == HEAP + 0x200,
		       "heap blocks keyed by allocation site (%zu variables)", nv);
		access_probes_shared_vars_free(v, nv);
	}
	tap_ok(access_probes_main_stack_top(getpid()) > (uintptr_t)&nv,
	       "own [stack] end is above a local");

	site_finder_set_free(&set);
	symbolize_cache_flush();
	return tap_done();
}
